#include "model/core/http.h"

namespace relaysim {

std::string_view to_string(NetError e) {
  switch (e) {
    case NetError::none: return "none";
    case NetError::timeout: return "timeout";
    case NetError::connect_error: return "connect_error";
    case NetError::dns_error: return "dns_error";
    case NetError::forbidden_address: return "forbidden_address";
    case NetError::bad_url: return "bad_url";
  }
  return "?";
}

}  // namespace relaysim
