#include "model/core/mutants.h"

namespace relaysim {

#ifdef RELAYSIM_MUTANTS
const Mutant*& mutants::active() {
  static const Mutant* active = nullptr;
  return active;
}
#endif

}  // namespace relaysim
