// A clock (MHz) where a memory bandwidth is expected must not compile: the classic mix-up of
// "1650" in a chip sheet's clock column with a rate.
// Negative test; see cmake/PerfcastCompileFail.cmake for the PERFCAST_COMPILE_FAIL guard.
#include <perfcast/units.hpp>

namespace {
[[nodiscard]] double gigabytes_per_second(perfcast::bandwidth bw) {
    return bw.in(perfcast::units::GBps);
}
}  // namespace

int main() {
    [[maybe_unused]] const double ok =
        gigabytes_per_second(perfcast::bandwidth{1.6, perfcast::units::TBps});
#if PERFCAST_COMPILE_FAIL
    [[maybe_unused]] const double bad =
        gigabytes_per_second(perfcast::frequency{1650, perfcast::units::MHz});
#endif
}
