// Adding a frequency to a data size has no meaning: Hz + B must not compile.
// Negative test; see cmake/PerfcastCompileFail.cmake for the PERFCAST_COMPILE_FAIL guard.
#include <perfcast/units.hpp>

int main() {
    [[maybe_unused]] const perfcast::frequency f{1, perfcast::units::Hz};
    [[maybe_unused]] const perfcast::data_size b{1, perfcast::units::B};
#if PERFCAST_COMPILE_FAIL
    [[maybe_unused]] auto x = f + b;
#endif
}
