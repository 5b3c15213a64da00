// Core scaling t(k) = a + c*k + W/k fitted from measured (cores, latency) points.
#include <doctest/doctest.h>

#include <array>
#include <limits>
#include <span>

#include <perfcast/fit.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_fit {

using namespace perfcast::literals;
namespace u = perfcast::units;
using perfcast::core_count;
using perfcast::core_point;
using perfcast::duration;
using perfcast::scaling_form;

namespace {

bool near(double actual, double expected, double rel) {
    return perfcast::approx_equal(actual, expected, rel);
}

// guide §12: a cube op takes 100 us on 24 cores and 150 us on 12 (a hypothetical in the source).
constexpr std::array<core_point, 2> seed_points{{{core_count{24}, 100_us},
                                                 {core_count{12}, 150_us}}};

}  // namespace

TEST_CASE("fit: the seed's core-split example (guide §12)") {
    const auto s = perfcast::fit_core_scaling(seed_points);
    // Two core counts: t = a + W/k; W/12 - W/24 = 50 us -> W = 1200 core-us, a = 50 us. Two
    // equations, two unknowns: exact up to rounding, so 1e-12.
    CHECK(s.form == scaling_form::amdahl);
    CHECK(near(s.work.in(u::us), 1200.0, 1e-12));
    CHECK(near(s.fixed.in(u::us), 50.0, 1e-12));
    CHECK(s.per_core.in(u::us) == 0.0);
    // Core-time: 100 us x 24 = 2400 core-us; 150 us x 12 = 1800 core-us.
    CHECK(near(s.core_time(core_count{24}).in(u::us), 2400.0, 1e-12));
    CHECK(near(s.core_time(core_count{12}).in(u::us), 1800.0, 1e-12));
    // Two 12-core instances side by side on the A2's 24 cube cores: 75 us per op on average.
    CHECK(perfcast::instances_side_by_side(core_count{12}, core_count{24}) == 2);
    CHECK(near(s.amortized_latency(core_count{12}, core_count{24}).in(u::us), 75.0, 1e-12));
    // On all 24 cores one instance runs: the amortized latency is the latency, 100 us.
    CHECK(near(s.amortized_latency(core_count{24}, core_count{24}).in(u::us), 100.0, 1e-12));
    // Prediction for 8 cores: 50 + 1200 / 8 = 200 us; three instances fit -> 66.7 us per op.
    CHECK(near(s.latency(core_count{8}).in(u::us), 200.0, 1e-12));
    CHECK(near(s.amortized_latency(core_count{8}, core_count{24}).in(u::us), 200.0 / 3, 1e-12));
    // The fit passes through both points.
    CHECK(s.points == 2);
    CHECK(s.distinct_cores == 2);
    CHECK(s.max_abs_residual.in(u::us) < 1e-9);
    CHECK(s.max_rel_residual < 1e-12);
}

TEST_CASE("fit: one point gives pure W/k") {
    const std::array<core_point, 1> one{{{core_count{24}, 100_us}}};
    const auto s = perfcast::fit_core_scaling(one);
    CHECK(s.form == scaling_form::parallel);
    CHECK(near(s.work.in(u::us), 2400.0, 1e-12));
    CHECK(s.fixed.in(u::us) == 0.0);
    // Halving the cores doubles the time under W/k (the pessimistic extreme of guide §12's 150).
    CHECK(near(s.latency(core_count{12}).in(u::us), 200.0, 1e-12));
    CHECK(near(s.core_time(core_count{12}).in(u::us), 2400.0, 1e-12));
}

TEST_CASE("fit: repeated measurements at one core count are averaged, not an error") {
    const std::array<core_point, 2> rep{{{core_count{24}, 100_us}, {core_count{24}, 110_us}}};
    const auto abs_fit = perfcast::fit_core_scaling(
        rep, {.weighting = perfcast::fit_weighting::absolute});
    CHECK(abs_fit.form == scaling_form::parallel);
    CHECK(abs_fit.distinct_cores == 1);
    // Absolute least squares: the mean, 105 us -> W = 2520 core-us (1e-12: exact).
    CHECK(near(abs_fit.work.in(u::us), 24 * 105.0, 1e-12));
    // Relative: W/24 = sum(1/t) / sum(1/t^2), the mean weighted towards the faster point.
    const auto rel_fit = perfcast::fit_core_scaling(rep);
    const double expect = (1 / 100.0 + 1 / 110.0) / (1 / 1e4 + 1 / 12100.0);
    CHECK(near(rel_fit.latency(core_count{24}).in(u::us), expect, 1e-12));
    CHECK(rel_fit.latency(core_count{24}).in(u::us) < 105.0);
    CHECK(near(rel_fit.max_abs_residual.in(u::us), 110.0 - expect, 1e-9));
}

TEST_CASE("fit: three or more core counts recover all three terms") {
    // Noise-free data from a = 20 us, c = 2 us per core, W = 3000 core-us.
    std::array<core_point, 4> pts{};
    const std::array<int, 4> ks{4, 8, 12, 24};
    for (std::size_t i = 0; i < ks.size(); ++i) {
        const double k = ks[i];
        pts[i] = {core_count{ks[i]}, duration{20 + 2 * k + 3000 / k, u::us}};
    }
    for (auto w : {perfcast::fit_weighting::relative, perfcast::fit_weighting::absolute}) {
        const auto s = perfcast::fit_core_scaling(pts, {.weighting = w});
        CHECK(s.form == scaling_form::full);
        // Only rounding separates the fit from the truth: 1e-9 relative.
        CHECK(near(s.fixed.in(u::us), 20.0, 1e-9));
        CHECK(near(s.per_core.in(u::us), 2.0, 1e-9));
        CHECK(near(s.work.in(u::us), 3000.0, 1e-9));
        CHECK(s.rms_residual.in(u::us) < 1e-9);
        // The per-core head cost makes the op slower past an optimum, sqrt(W/c) = 38.7 cores.
        CHECK(s.latency(core_count{48}) > s.latency(core_count{39}));
    }
}

TEST_CASE("fit: coefficients stay >= 0 unless asked otherwise") {
    // 100 us on 24 cores, 210 us on 12: more than twice as slow on half the cores, which an
    // unconstrained a + W/k can only explain with a negative fixed time (a = -10 us).
    const std::array<core_point, 2> pts{{{core_count{24}, 100_us}, {core_count{12}, 210_us}}};
    const auto free_fit = perfcast::fit_core_scaling(pts, {.non_negative = false});
    CHECK(near(free_fit.fixed.in(u::us), -10.0, 1e-12));
    CHECK(near(free_fit.work.in(u::us), 2640.0, 1e-12));
    // That law goes negative for k > 264: asking there is an error naming k.
    CHECK_THROWS_WITH_AS((void)free_fit.latency(core_count{300}),
                         doctest::Contains("k = 300, expected a core count where the law "
                                           "predicts a latency > 0"),
                         perfcast::error);
    // The default drops a (a = 0) and fits W alone by relative least squares:
    // W = sum(1/(k t)) / sum(1/(k t)^2).
    const auto s = perfcast::fit_core_scaling(pts);
    CHECK(s.form == scaling_form::amdahl);
    CHECK(s.fixed.in(u::us) == 0.0);
    const double u1 = 1 / (24 * 100.0);
    const double u2 = 1 / (12 * 210.0);
    CHECK(near(s.work.in(u::us), (u1 + u2) / (u1 * u1 + u2 * u2), 1e-12));
    CHECK(s.max_rel_residual > 0.02);  // no longer exact: 2.4 % off at both points
    CHECK(s.max_rel_residual < 0.03);

    // Three points where the exact interpolant needs a negative per-core cost.
    const std::array<core_point, 3> three{
        {{core_count{6}, 250_us}, {core_count{12}, 150_us}, {core_count{24}, 98_us}}};
    const auto f3 = perfcast::fit_core_scaling(three, {.non_negative = false});
    CHECK(f3.per_core.in(u::us) < 0);
    const auto n3 = perfcast::fit_core_scaling(three);
    CHECK(n3.form == scaling_form::full);
    CHECK(n3.per_core.in(u::us) == 0.0);
    CHECK(n3.fixed.in(u::us) >= 0.0);
    CHECK(n3.work.in(u::us) > 0.0);
    // Close to the 50 + 1200/k it was perturbed from (2 us at 24 cores): within 5 %.
    CHECK(near(n3.latency(core_count{8}).in(u::us), 200.0, 0.05));
}

TEST_CASE("fit: bad points are errors naming the point, the field and the value") {
    using doctest::Contains;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::array<core_point, 2> pts{{{core_count{24}, 100_us},
                                   {core_count{12}, duration{nan, u::us}}}};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(pts),
                         Contains("fit_core_scaling: points[1].latency = NaN, expected a finite "
                                  "value > 0"),
                         perfcast::error);
    pts[1].latency = duration{-5, u::us};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(pts),
                         Contains("points[1].latency = -5 us"), perfcast::error);
    pts[1].latency = 0_us;
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(pts),
                         Contains("points[1].latency = 0 us"), perfcast::error);
    pts[1].latency = duration{std::numeric_limits<double>::infinity(), u::us};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(pts),
                         Contains("points[1].latency = inf"), perfcast::error);
    pts[1] = {core_count{0}, 150_us};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(pts),
                         Contains("points[1].cores = 0, expected at least 1 core"),
                         perfcast::error);
    pts[0] = {core_count{-3}, 150_us};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(pts),
                         Contains("points[0].cores = -3"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::fit_core_scaling(std::span<const core_point>{}),
                         Contains("points.size() = 0, expected at least 1 point"),
                         perfcast::error);
}

TEST_CASE("fit: a form the data cannot identify is an error (duplicate core counts only)") {
    using doctest::Contains;
    const std::array<core_point, 3> dup{
        {{core_count{12}, 150_us}, {core_count{12}, 152_us}, {core_count{12}, 149_us}}};
    CHECK_THROWS_WITH_AS(
        (void)perfcast::fit_core_scaling(dup, {.form = scaling_form::amdahl}),
        Contains("points.distinct_cores = 1, expected at least 2 distinct core counts"),
        perfcast::error);
    const std::array<core_point, 4> two_ks{{{core_count{12}, 150_us},
                                            {core_count{12}, 151_us},
                                            {core_count{24}, 100_us},
                                            {core_count{24}, 101_us}}};
    CHECK_THROWS_WITH_AS(
        (void)perfcast::fit_core_scaling(two_ks, {.form = scaling_form::full}),
        Contains("points.distinct_cores = 2, expected at least 3 distinct core counts"),
        perfcast::error);
    // Automatic picks the richest identifiable form instead: a + W/k here.
    CHECK(perfcast::fit_core_scaling(two_ks).form == scaling_form::amdahl);
    CHECK(perfcast::fit_core_scaling(dup).form == scaling_form::parallel);
}

TEST_CASE("fit: core counts outside the engine are errors") {
    using doctest::Contains;
    const auto s = perfcast::fit_core_scaling(seed_points);
    CHECK_THROWS_WITH_AS((void)s.latency(core_count{0}), Contains("latency: k = 0"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)s.amortized_latency(core_count{30}, core_count{24}),
                         Contains("engine_cores = 24, expected at least k cores"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::instances_side_by_side(core_count{0}, core_count{24}),
                         Contains("k = 0"), perfcast::error);
    CHECK(perfcast::instances_side_by_side(core_count{7}, core_count{24}) == 3);
}

TEST_CASE("fit: constexpr sqrt used for the rms") {
    // Squares of exactly representable numbers come back exactly or to 1 ulp (1e-15).
    for (double x : {0.0, 1e-150, 0.25, 2.0, 144.0, 1e150}) {
        const double r = perfcast::detail::fit_sqrt(x * x);
        CHECK(near(r, x, 1e-15));
    }
    CHECK(perfcast::detail::fit_sqrt(-1.0) == 0.0);
}

}  // namespace test_fit
