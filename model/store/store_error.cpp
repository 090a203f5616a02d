#include "model/store/store_error.h"

namespace relaysim {

}  // namespace relaysim
