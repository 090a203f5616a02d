// Whether this build runs under AddressSanitizer, as GCC (__SANITIZE_ADDRESS__) and clang
// (__has_feature) each tell it: code that takes memory from the kernel itself, and tests too slow
// under the sanitizers, ask here.
#pragma once

namespace relaysim {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace relaysim
