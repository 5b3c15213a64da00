// Strong units: conversions, the types arithmetic produces, the seed's utilization numbers at run
// time, and what must not compile (checked through concepts, so this file still compiles).
#include <doctest/doctest.h>

#include <perfcast/units.hpp>

#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_units {

namespace {

using namespace perfcast;
using namespace perfcast::literals;

// ---- what must not compile ------------------------------------------------------------------
template <class A, class B>
concept addable = requires(A a, B b) { a + b; };
template <class A, class B>
concept subtractable = requires(A a, B b) { a - b; };
template <class A, class B>
concept comparable = requires(A a, B b) { a < b; };
template <class Q, class U>
concept constructible_with_unit = requires(double v, U u) { Q{v, u}; };

static_assert(addable<frequency, frequency>);
static_assert(!addable<frequency, data_size>);         // Hz + bytes
static_assert(!addable<duration, cycle_count>);        // time + cycles
static_assert(!addable<bandwidth, flop_rate>);         // memory rate + compute rate
static_assert(!addable<duration, double>);             // a raw number has no unit
static_assert(!subtractable<data_size, bandwidth>);
static_assert(!comparable<duration, data_size>);
static_assert(!std::convertible_to<frequency, bandwidth>);  // MHz is not a bandwidth
static_assert(!std::constructible_from<bandwidth, frequency>);
static_assert(!std::convertible_to<double, duration>);      // 150.0 is not 150 us
static_assert(!std::convertible_to<duration, double>);      // reading names the unit: t.in(us)
static_assert(constructible_with_unit<duration, unit<time_dim>>);
static_assert(!constructible_with_unit<duration, unit<frequency_dim>>);   // duration{150, MHz}
static_assert(!constructible_with_unit<bandwidth, unit<frequency_dim>>);  // bandwidth{1, MHz}
static_assert(!constructible_with_unit<data_size, unit<bandwidth_dim>>);  // bytes vs bytes/s
static_assert(!addable<core_count, int>);                   // a core count is not an int
static_assert(!std::convertible_to<int, core_count>);

// ---- arithmetic result types ----------------------------------------------------------------
static_assert(std::is_same_v<decltype(1_GiB / 1_GBps), duration>);      // bytes / bandwidth
static_assert(std::is_same_v<decltype(1_cycles / 1_MHz), duration>);    // cycles / frequency
static_assert(std::is_same_v<decltype(1_us * 1_MHz), cycle_count>);     // time x frequency
static_assert(std::is_same_v<decltype(1_MHz * 1_us), cycle_count>);
static_assert(std::is_same_v<decltype(32_GBps * 1_ms), data_size>);
static_assert(std::is_same_v<decltype(1_GiB / 1_GiB), double>);          // dimensionless
static_assert(std::is_same_v<decltype(1_GiB / 1_ms), bandwidth>);
static_assert(std::is_same_v<decltype(bytes_per_cycle{32.0, units::B_per_cycle} * 1_GHz),
                             bandwidth>);                                 // ini rate x clock
static_assert(std::is_same_v<decltype(flop_count{1.0, units::flop} / 1_us), flop_rate>);
static_assert(std::is_same_v<decltype(1.0 / 1_MHz), quantity<dimension<1, 0, -1, 0>>>);
static_assert(std::is_same_v<decltype(2.0 * 1_us), duration>);
static_assert(std::is_same_v<decltype(1_us + 1_ms), duration>);

}  // namespace

TEST_CASE("units: data sizes, decimal and binary prefixes, bits") {
    CHECK((1_GiB).in(units::B) == 1073741824.0);
    CHECK((1_MiB).in(units::B) == 1048576.0);
    CHECK((64_KiB).in(units::B) == 65536.0);
    CHECK((1_GB).in(units::B) == 1e9);
    CHECK((1_KB).in(units::B) == 1000.0);
    CHECK((1_GiB).in(units::GB) == doctest::Approx(1.073741824));
    // bits are an eighth of a byte: 8 bit = 1 B, 8 Gbit/s = 1 GB/s.
    CHECK(data_size{8.0, units::bit} == 1_B);
    CHECK((1_B).in(units::bit) == 8.0);
    CHECK(bandwidth{8.0, units::Gbitps}.in(units::GBps) == doctest::Approx(1.0));
    CHECK(bandwidth{100.0, units::Gbitps}.in(units::GBps) == doctest::Approx(12.5));
}

TEST_CASE("units: time, frequency and cycles") {
    CHECK((1_MHz * 1_us).in(units::cycle) == doctest::Approx(1.0));
    CHECK((1650_MHz * 1000_us).in(units::cycle) == doctest::Approx(1'650'000.0));
    CHECK((1850_MHz).in(units::GHz) == doctest::Approx(1.85));
    CHECK((1_ms).in(units::us) == doctest::Approx(1000.0));
    CHECK((150_us).in(units::ms) == doctest::Approx(0.15));
    CHECK((1800_cycles / 1800_MHz).in(units::us) == doctest::Approx(1.0));
    CHECK(duration{150.0, units::us} == 150_us);
}

TEST_CASE("units: bandwidth and transfers") {
    CHECK((32_GBps * 1_ms).in(units::MB) == doctest::Approx(32.0));
    CHECK((1_GB / 32_GBps).in(units::ms) == doctest::Approx(31.25));
    CHECK((1.6_TBps).in(units::GBps) == doctest::Approx(1600.0));
    // The CANN ini's per-core rate (bytes/cycle) times the clock is a bandwidth:
    // 32 B/cycle x 1.85 GHz = 59.2 GB/s per core.
    const bandwidth per_core = bytes_per_cycle{32.0, units::B_per_cycle} * 1850_MHz;
    CHECK(per_core.in(units::GBps) == doctest::Approx(59.2));
}

TEST_CASE("units: the seed's utilization formula at run time") {
    // guide §2: sum(aic_total_cycles) / (span x cores x clock): 78.9 % on 20 cores at 1650 MHz.
    const cycle_count available = available_cycles(1650_MHz, core_count{20}, 1000_us);
    CHECK(available.in(units::cycle) == doctest::Approx(33'000'000.0));
    const double seed = 100.0 * (26037000_cycles / available);
    CHECK(std::abs(seed - 78.9) <= 0.05);

    // msprof's unit test: 5043798 / (1800 MHz x 20 x 151 us) = 92.785 %.
    const double msprof =
        100.0 * (5043798_cycles / available_cycles(1800_MHz, core_count{20}, 151_us));
    CHECK(std::abs(msprof - 92.785) <= 0.0005);
}

TEST_CASE("units: helpers") {
    CHECK(is_finite(1_us));
    CHECK_FALSE(is_finite(duration{std::numeric_limits<double>::quiet_NaN(), units::us}));
    CHECK_FALSE(is_finite(duration{std::numeric_limits<double>::infinity(), units::us}));
    CHECK(abs(-(3_us)) == 3_us);
    CHECK(approx_equal(1000_us, 1_ms, 1e-12));
    CHECK_FALSE(approx_equal(1001_us, 1_ms, 1e-6));
    CHECK(1_us < 1_ms);
    duration t = 1_us;
    t += 2_us;
    t *= 2.0;
    CHECK(t.in(units::us) == doctest::Approx(6.0));
}

}  // namespace test_units
