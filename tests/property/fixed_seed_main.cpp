// The component properties (stores, breaker, limiter, flat tables) run from a fixed seed unless
// RC_PARAMS says otherwise, so the test suite gives the same verdict every time; `./relaysim soak`
// runs them from other seeds.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // Before RapidCheck reads its configuration (on first use).
  ::setenv("RC_PARAMS", "seed=1", /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
