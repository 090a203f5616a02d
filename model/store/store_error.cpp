#include "model/store/store_error.h"

namespace relaysim {

std::string_view to_string(StoreFailure f) {
  switch (f) {
    case StoreFailure::busy: return "busy";
    case StoreFailure::full: return "full";
    case StoreFailure::io: return "io";
    case StoreFailure::other: return "other";
  }
  return "?";
}

}  // namespace relaysim
