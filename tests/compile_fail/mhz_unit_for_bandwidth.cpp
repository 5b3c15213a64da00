// Naming the wrong unit when building a quantity must not compile: a bandwidth in MHz.
// Negative test; see cmake/PerfcastCompileFail.cmake for the PERFCAST_COMPILE_FAIL guard.
#include <perfcast/units.hpp>

int main() {
    [[maybe_unused]] const perfcast::bandwidth ok{1.6, perfcast::units::TBps};
#if PERFCAST_COMPILE_FAIL
    [[maybe_unused]] const perfcast::bandwidth bad{1650, perfcast::units::MHz};
#endif
}
