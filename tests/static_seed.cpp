// The seed's numbers as compile-time checks: compiling this file is the test.
//  - guide §2: cube utilization = sum(aic_total_cycles) / (span x cores x clock); the guide's
//    example chip (20 AI cores, 1650 MHz) and profile give 78.9 %.
//  - msprof's unit test: 5043798 cycles / (1800 MHz x 20 cores x 151 us) = 92.785 %.
//  - Every preset validates at compile time; peak cube fp16 = cores x 4096 x 2 x clock, int8 twice.
#include <perfcast/chips.hpp>
#include <perfcast/units.hpp>

#include <type_traits>

namespace {

using namespace perfcast;
using namespace perfcast::literals;

constexpr double abs_diff(double a, double b) { return a > b ? a - b : b - a; }

/// Utilization in percent: measured cycles over available cycles.
constexpr double utilization_percent(cycle_count used, frequency f, core_count n, duration span) {
    return 100.0 * (used / available_cycles(f, n, span));
}

// The unit algebra: duration x frequency x count is a cycle count, and cycles / cycles a number.
static_assert(std::is_same_v<decltype(available_cycles(1650_MHz, core_count{20}, 1000_us)),
                             cycle_count>);
static_assert(std::is_same_v<decltype(26037000_cycles / 26037000_cycles), double>);

// guide §2: 26,037,000 cycles over 20 cores x 1650 MHz x 1000 us = 78.9 % (the seed prints one
// decimal, so the tolerance is 0.05 percentage points).
static_assert(abs_diff(available_cycles(1650_MHz, core_count{20}, 1000_us).in(units::cycle),
                       33'000'000.0) < 1e-3);
static_assert(abs_diff(utilization_percent(26037000_cycles, 1650_MHz, core_count{20}, 1000_us),
                       78.9) <= 0.05);

// msprof: 5,043,798 / (1800 MHz x 20 x 151 us) = 92.785 % (printed with 3 decimals: 0.0005).
static_assert(abs_diff(utilization_percent(5043798_cycles, 1800_MHz, core_count{20}, 151_us),
                       92.785) <= 0.0005);

// Presets: each is a constant expression built through validate(); re-validating here makes the
// requirement explicit (an invalid preset would not compile).
template <const chip& C>
constexpr bool validates = (validate(C), true);
static_assert(validates<chips::ascend910b1> && validates<chips::ascend910b2> &&
              validates<chips::ascend910b3> && validates<chips::ascend910b4> &&
              validates<chips::ascend910_9391> && validates<chips::ascend910a> &&
              validates<chips::ascend310p3> && validates<chips::a100_80gb_sxm> &&
              validates<chips::h100_sxm> && validates<chips::h200_sxm>);

// Peak cube fp16 = cores x 4096 MAC/cycle x 2 flop/MAC x clock, for every Ascend preset; int8 is
// twice fp16 (16x32x16 fractal).
constexpr bool peak_matches_formula(const chip& c) {
    const double expected = static_cast<double>(c.cube.cores) * 4096.0 * 2.0 *
                            c.cube.clock.in(units::Hz);
    const double fp16 = c.peak(engine::cube, dtype::fp16).in(units::flops);
    const double int8 = c.peak(engine::cube, dtype::int8).in(units::flops);
    return approx_equal(fp16, expected, 1e-12) && approx_equal(int8, 2.0 * fp16, 1e-12);
}
static_assert(peak_matches_formula(chips::ascend910b1));
static_assert(peak_matches_formula(chips::ascend910b2));
static_assert(peak_matches_formula(chips::ascend910b3));
static_assert(peak_matches_formula(chips::ascend910b4));
static_assert(peak_matches_formula(chips::ascend910_9391));
static_assert(peak_matches_formula(chips::ascend910a));
static_assert(peak_matches_formula(chips::ascend310p3));

// The task's worked example: 910B1 = 24 x 4096 x 2 x 1.85 GHz = 363.7 TFLOP/s.
static_assert(abs_diff(chips::ascend910b1.peak(engine::cube, dtype::fp16).in(units::TFLOPS),
                       363.7) <= 0.05);
static_assert(abs_diff(chips::ascend910b1.peak(engine::cube, dtype::int8).in(units::TFLOPS),
                       727.4) <= 0.1);

// GPU presets reproduce their datasheets' dense tensor peaks (TFLOP/s, TOP/s).
static_assert(abs_diff(chips::a100_80gb_sxm.peak(engine::cube, dtype::fp16).in(units::TFLOPS),
                       312.0) <= 0.5);
static_assert(abs_diff(chips::a100_80gb_sxm.peak(engine::cube, dtype::int8).in(units::TFLOPS),
                       624.0) <= 0.5);
static_assert(abs_diff(chips::h100_sxm.peak(engine::cube, dtype::bf16).in(units::TFLOPS),
                       989.4) <= 0.1);
static_assert(abs_diff(chips::h100_sxm.peak(engine::cube, dtype::fp64).in(units::TFLOPS),
                       66.9) <= 0.1);
static_assert(abs_diff(chips::h200_sxm.peak(engine::cube, dtype::int8).in(units::TFLOPS),
                       1978.9) <= 0.1);

// Lookup works in constant expressions.
static_assert(chips::get_chip("910B3") == chips::ascend910b3);
static_assert(chips::get_chip("A3") == chips::ascend910_9391);
static_assert(!chips::find_chip("910B").has_value());
// A name read from a CRLF file, or with a newline, still names its chip.
static_assert(chips::get_chip("910B3\r") == chips::ascend910b3);
static_assert(chips::get_chip(" ascend910b3\n") == chips::ascend910b3);

}  // namespace
