#include "model/core/http.h"

namespace relaysim {

}  // namespace relaysim
