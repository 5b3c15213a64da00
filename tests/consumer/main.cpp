// What a user writes: include the headers, compute with units, check at compile time.
#include <perfcast/chip.hpp>
#include <perfcast/units.hpp>

namespace {
using namespace perfcast::literals;

// 1 MB over 1 GB/s is 1 ms; 1650 cycles at 1650 MHz are 1 us.
constexpr perfcast::duration copy_time = 1_MB / 1_GBps;
constexpr perfcast::duration clock_time = 1650_cycles / 1650_MHz;
static_assert(perfcast::approx_equal(copy_time, 1_ms, 1e-12));
static_assert(perfcast::approx_equal(clock_time, 1_us, 1e-12));
static_assert(perfcast::name_of(perfcast::engine::cube) == "cube");
}  // namespace

int main() {
    // Also at run time, so that running the program proves something.
    return perfcast::approx_equal(copy_time + clock_time, 1001_us, 1e-12) ? 0 : 1;
}
