#include "model/core/base64.h"

#include <openssl/evp.h>

#include "model/core/assert.h"

namespace relaysim {

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  RELAYSIM_ASSERT(written >= 0 && static_cast<std::size_t>(written) == out.size(), "base64 of a block fills its length");
  return out;
}

std::optional<std::string> unbase64(std::string_view text, std::size_t longest) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > longest) return std::nullopt;
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
    if (!ok) return std::nullopt;
  }
  const std::size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  if (text.substr(0, text.size() - pad).find('=') != std::string_view::npos) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - pad);  // EVP_DecodeBlock counts the padding as zero bytes
  return out;
}

}  // namespace relaysim
