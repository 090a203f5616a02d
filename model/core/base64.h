// Base64 (RFC 4648, the standard alphabet with padding), on OpenSSL: for the webhook signatures'
// keys and MACs, and the bytes etcd's JSON gateway carries (live/etcd_coordinator.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace relaysim {

std::string base64(std::string_view bytes);
// Strict base64 (padding included, nothing else) of at most `longest` characters: the bytes, or
// nothing.
std::optional<std::string> unbase64(std::string_view text, std::size_t longest);

}  // namespace relaysim
