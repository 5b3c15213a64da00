// A raw number where a time is expected must not compile: 1.0 of what, seconds or microseconds?
// Negative test; see cmake/PerfcastCompileFail.cmake for the PERFCAST_COMPILE_FAIL guard.
#include <perfcast/units.hpp>

namespace {
[[nodiscard]] double microseconds(perfcast::duration t) { return t.in(perfcast::units::us); }
}  // namespace

int main() {
    [[maybe_unused]] const double ok = microseconds(perfcast::duration{1.0, perfcast::units::ms});
#if PERFCAST_COMPILE_FAIL
    [[maybe_unused]] const double bad = microseconds(1.0);
#endif
}
