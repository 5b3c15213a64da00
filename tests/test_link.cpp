// Host link (PCIe) model: line rates, the guide §4 figures, a per-transfer cost fitted to a
// measured table, what-ifs and bad input.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <span>

#include <perfcast/link.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_link {

using namespace perfcast::literals;
namespace u = perfcast::units;
using perfcast::bandwidth;
using perfcast::data_size;
using perfcast::duration;
using perfcast::pcie_link;
using perfcast::transfer_point;

namespace {

// Pinned host-to-device cudaMemcpy on a Quadro RTX 6000 (PCIe Gen3 x16), GB/s.
// Source: npho/cse554, assignment1/host_GPU/README.md (also in shared data/README.md).
// "KB" there is 1024 B: the benchmark (main.cu in the same folder) copies 2^exp bytes for
// exp = 0..20 and prints the byte count (1024, 4096, ... 1048576) next to each rate, and it
// divides by 1e9 for GB/s. So sizes are KiB/MiB and rates decimal GB/s.
constexpr std::array<transfer_point, 6> gen3_pinned_h2d{{
    {1_KiB, bandwidth{0.148, u::GBps}},
    {4_KiB, bandwidth{0.522, u::GBps}},
    {16_KiB, bandwidth{1.529, u::GBps}},
    {64_KiB, bandwidth{4.810, u::GBps}},
    {256_KiB, bandwidth{8.875, u::GBps}},
    {1_MiB, bandwidth{11.021, u::GBps}},
}};

// Within `rel` of `expected`, relative to the larger magnitude.
bool near(double actual, double expected, double rel) {
    return perfcast::approx_equal(actual, expected, rel);
}

}  // namespace

TEST_CASE("link: per-lane rates follow the PCI-SIG line codes") {
    // Exact arithmetic on short decimals: tolerance 1e-12 only absorbs double rounding.
    CHECK(near(perfcast::pcie_generation_of(1).per_lane().in(u::GBps), 2.5 * 8 / 10 / 8, 1e-12));
    CHECK(near(perfcast::pcie_generation_of(2).per_lane().in(u::GBps), 5.0 * 8 / 10 / 8, 1e-12));
    CHECK(near(perfcast::pcie_generation_of(3).per_lane().in(u::GBps), 8.0 * 128 / 130 / 8,
               1e-12));
    CHECK(near(perfcast::pcie_generation_of(4).per_lane().in(u::GBps), 16.0 * 128 / 130 / 8,
               1e-12));
    CHECK(near(perfcast::pcie_generation_of(5).per_lane().in(u::GBps), 32.0 * 128 / 130 / 8,
               1e-12));
    CHECK(near(perfcast::pcie_generation_of(6).per_lane().in(u::GBps), 64.0 * 242 / 256 / 8,
               1e-12));
    // Each generation doubles the raw rate; gen 3 also changes the line code, so from 2 to 3
    // the data rate grows by 8/5 x (128/130) / (8/10) = 1.969..., not 2.
    CHECK(near(perfcast::pcie_generation_of(3).per_lane() / perfcast::pcie_generation_of(2).per_lane(),
               1.6 * (128.0 / 130.0) / 0.8, 1e-12));
}

TEST_CASE("link: PCIe 5.0 x4 is about 32 GB/s both ways, about 25.6 at 80 % (guide §4)") {
    constexpr pcie_link x4{5, 4};
    // 128b/130b makes the line rate 15.754 GB/s per direction, 31.51 both: the seed's rounded
    // "about 32" is 1.5 % above, so 2 % is the tightest tolerance that states the same figure.
    CHECK(near(x4.per_direction().in(u::GBps), 16.0, 0.02));
    CHECK(near(x4.both_directions().in(u::GBps), 32.0, 0.02));
    CHECK(near(x4.achievable_both_directions().in(u::GBps), 25.6, 0.02));
    // "about 8 GB/s per lane both directions together": 7.877, 1.5 % below; same 2 %.
    CHECK(near(pcie_link{5, 1}.both_directions().in(u::GBps), 8.0, 0.02));
    // And it is not the uncoded 32 GT/s x 4 / 8 = 16 exactly: the line code is applied.
    CHECK(x4.per_direction().in(u::GBps) < 16.0 * (1 - 0.01));
    // The default efficiency is guide §4's 80 %.
    CHECK(x4.efficiency == 0.8);
    CHECK(near(x4.achievable() / x4.per_direction(), 0.8, 1e-12));
}

TEST_CASE("link: A100 pinned H2D 25.13 GB/s at 512 MiB checks the 0.8 default") {
    // NVIDIA/nvbandwidth issue 42: A100-SXM4-40GB, PCIe 4.0 x16, 25.13 GB/s at 512 MiB.
    constexpr pcie_link a100{4, 16};
    const double measured = 25.13;
    const double share = measured / a100.per_direction().in(u::GBps);
    // 25.13 / 31.51 = 0.7975: "about 79 %"; 0.5 points either side of 79.75 %.
    CHECK(share > 0.7925);
    CHECK(share < 0.8025);
    // The model at 512 MiB (per-transfer cost 8 us against 21 ms of data) is within 0.5 % of
    // the measurement: the efficiency default explains this point to 0.3 %.
    CHECK(near(a100.effective_bandwidth(512_MiB).in(u::GBps), measured, 0.005));
}

TEST_CASE("link: transfer time = per_transfer + bytes / achievable; rate falls for small sizes") {
    constexpr pcie_link l{3, 16, 0.8, duration{10.0, u::us}};
    // 1 MB at 0.8 x 15.754 GB/s = 79.35 us, plus 10 us. Tolerance 1e-12: exact formula.
    CHECK(near(l.transfer_time(1_MB).in(u::us), 10.0 + 1e6 / (0.8 * 16 * 8e9 * 128 / 130 / 8) * 1e6,
               1e-12));
    CHECK(l.transfer_time(0_B) == duration{10.0, u::us});
    CHECK(l.effective_bandwidth(0_B).in(u::GBps) == 0.0);
    double previous = 0;
    for (double kib = 1; kib <= 1 << 20; kib *= 2) {
        const double r = l.effective_bandwidth(data_size{kib, u::KiB}).in(u::GBps);
        CHECK(r > previous);
        CHECK(r < l.achievable().in(u::GBps));
        previous = r;
    }
    // Half the achievable rate is reached where bytes / rate = per_transfer.
    const data_size half = l.achievable() * l.per_transfer;
    CHECK(near(l.effective_bandwidth(half) / l.achievable(), 0.5, 1e-12));
}

TEST_CASE("link: per-transfer cost fitted to the pinned Gen3 table follows it within 25 %") {
    // Efficiency kept at the 0.8 default, per_transfer fitted (relative least squares).
    const auto fit = perfcast::fit_link(pcie_link{3, 16}, gen3_pinned_h2d);
    const double a = fit.link.per_transfer.in(u::us);
    MESSAGE("Gen3 x16, efficiency 0.8: fitted per_transfer = " << a << " us, max error "
                                                               << fit.max_rel_error * 100
                                                               << " %, rms "
                                                               << fit.rms_rel_error * 100 << " %");
    for (const auto& p : gen3_pinned_h2d) {
        const double model = fit.link.effective_bandwidth(p.size).in(u::GBps);
        MESSAGE("  " << p.size.in(u::KiB) << " KiB: measured " << p.measured.in(u::GBps)
                     << " GB/s, model " << model << " GB/s ("
                     << perfcast::relative_error(fit.link, p) * 100 << " %)");
        // The brief's bar: within 25 % of the measured rate at every size.
        CHECK(std::abs(model / p.measured.in(u::GBps) - 1) <= 0.25);
    }
    CHECK(fit.max_rel_error <= 0.25);
    CHECK(fit.link.efficiency == 0.8);
    // The fitted cost is the origin of default_per_transfer (8 us): within 0.5 us of it.
    CHECK(a > 7.5);
    CHECK(a < 8.5);
    // The 16 KiB point is the worst (the measured curve bends more sharply than a + s/b can):
    // the model is 19 % fast there. Pin that it is the one above 15 %.
    int above_15 = 0;
    for (const auto& p : gen3_pinned_h2d) {
        if (std::abs(perfcast::relative_error(fit.link, p)) > 0.15) ++above_15;
    }
    CHECK(above_15 == 1);
    CHECK(perfcast::relative_error(fit.link, gen3_pinned_h2d[2]) > 0.15);
}

TEST_CASE("link: fitting the efficiency too, and why the fit weights residuals relatively") {
    const auto both = perfcast::fit_link(pcie_link{3, 16}, gen3_pinned_h2d,
                                         {.fit_efficiency = true});
    MESSAGE("Gen3 x16, efficiency fitted: per_transfer = " << both.link.per_transfer.in(u::us)
                                                           << " us, efficiency "
                                                           << both.link.efficiency << ", max error "
                                                           << both.max_rel_error * 100 << " %");
    // The asymptote of the table (11.0 GB/s at 1 MiB and still rising) puts the efficiency of
    // pinned cudaMemcpy on Gen3 in 0.70..0.80, near the 0.8 default; the fit stays within 25 %.
    CHECK(both.link.efficiency > 0.70);
    CHECK(both.link.efficiency < 0.80);
    CHECK(both.max_rel_error <= 0.25);
    // An absolute-time fit lets the 95 us point at 1 MiB pull the intercept up (8.8 us) and
    // misses the 1 KiB point by 22 % instead of 11 %; its worst point is worse too. That is why
    // relative weighting is the default.
    const auto relative = perfcast::fit_link(pcie_link{3, 16}, gen3_pinned_h2d);
    const auto absolute = perfcast::fit_link(pcie_link{3, 16}, gen3_pinned_h2d,
                                             {.weighting = perfcast::fit_weighting::absolute});
    MESSAGE("absolute weighting: per_transfer = " << absolute.link.per_transfer.in(u::us)
                                                  << " us, max error "
                                                  << absolute.max_rel_error * 100 << " %");
    CHECK(absolute.max_rel_error > relative.max_rel_error);
    CHECK(std::abs(perfcast::relative_error(absolute.link, gen3_pinned_h2d[0])) >
          0.2);
    CHECK(absolute.link.per_transfer > relative.link.per_transfer);
}

TEST_CASE("link: a fit recovers the parameters of data it generated") {
    constexpr pcie_link truth{4, 8, 0.7, duration{12.5, u::us}};
    std::array<transfer_point, 5> pts{};
    double kib = 2;
    for (auto& p : pts) {
        p.size = data_size{kib, u::KiB};
        p.measured = truth.effective_bandwidth(p.size);
        kib *= 8;
    }
    const auto f = perfcast::fit_link(pcie_link{4, 8}, pts, {.fit_efficiency = true});
    // Noise-free data: only rounding separates the fit from the truth; 1e-9 is generous.
    CHECK(near(f.link.per_transfer.in(u::us), 12.5, 1e-9));
    CHECK(near(f.link.efficiency, 0.7, 1e-9));
    CHECK(f.max_rel_error < 1e-9);
    // With the efficiency held at the truth, the per-transfer cost alone comes back too.
    const auto g = perfcast::fit_link(pcie_link{4, 8, 0.7}, pts);
    CHECK(near(g.link.per_transfer.in(u::us), 12.5, 1e-9));
}

TEST_CASE("link: names parse at run time and in constant expressions") {
    static_assert(perfcast::parse_link("pcie5x4") == pcie_link{5, 4});
    static_assert(perfcast::parse_link("gen4x16") == pcie_link{4, 16});
    CHECK(perfcast::parse_link("pcie3x16") == pcie_link{3, 16});
    CHECK(perfcast::parse_link("PCIe4.0x16") == pcie_link{4, 16});
    CHECK(perfcast::parse_link("Gen6X1") == pcie_link{6, 1});
    CHECK(perfcast::link_name(pcie_link{4, 16}).view() == "pcie4x16");
    CHECK(perfcast::parse_link(perfcast::link_name(pcie_link{2, 8}).view()) == pcie_link{2, 8});
    CHECK(!perfcast::try_parse_link("pcie7x4").has_value());
    CHECK(perfcast::try_parse_link("pcie1x2").has_value());
}

TEST_CASE("link: bad names, generations, lanes and sizes are errors naming the field") {
    using doctest::Contains;
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("nvlink4"),
                         Contains("link = nvlink4, expected a link name"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("pcie5x"), Contains("pcie5x4, pcie3x16, gen4x16"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("pcie5x4 "), Contains("link = pcie5x4 ,"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link(""), Contains("link = ,"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("gen0x4"), Contains("gen = 0, expected"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("gen7x16"), Contains("gen = 7, expected"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("pcie5x3"), Contains("lanes = 3, expected"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)perfcast::parse_link("pcie5x32"), Contains("lanes = 32"),
                         perfcast::error);
    // Structs set by hand are checked where they are used.
    CHECK_THROWS_WITH_AS((void)(pcie_link{0, 4}.per_direction()), Contains("gen = 0"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)(pcie_link{7, 4}.transfer_time(1_MB)), Contains("gen = 7"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)(pcie_link{5, 3}.achievable()), Contains("lanes = 3"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)(pcie_link{5, 4, 1.2}.achievable()),
                         Contains("efficiency = 1.2"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)(pcie_link{5, 4, 0.8, duration{-1, u::us}}.achievable()),
                         Contains("per_transfer = -1"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)(pcie_link{5, 4}.transfer_time(data_size{-1, u::B})),
                         Contains("transfer_time: size = -1, expected"), perfcast::error);
    CHECK_THROWS_WITH_AS(
        (void)(pcie_link{5, 4}.transfer_time(
            data_size{std::numeric_limits<double>::quiet_NaN(), u::B})),
        Contains("size = NaN"), perfcast::error);
}

TEST_CASE("link: from a chip's host_link_spec") {
    perfcast::chip c{};
    c.link = perfcast::host_link_spec{4, 16};
    CHECK(perfcast::link_of(c) == pcie_link{4, 16});
    CHECK(perfcast::link_of(perfcast::host_link_spec{5, 4}).per_direction() ==
          pcie_link{5, 4}.per_direction());
    c.link = perfcast::host_link_spec{0, 16};  // a chip whose link was never filled in
    CHECK_THROWS_WITH_AS((void)perfcast::link_of(c), doctest::Contains("gen = 0"), perfcast::error);
}

TEST_CASE("link: gathering small transfers saves (n - 1) per-transfer costs (guide §4)") {
    constexpr pcie_link l{5, 4};
    const auto g = perfcast::gather_transfers(l, 100, 1_KiB);
    // Same bytes either way, so the saving is exactly 99 fixed costs (1e-9: rounding of sums
    // of 100 terms).
    CHECK(near(g.saving.in(u::us), 99 * l.per_transfer.in(u::us), 1e-9));
    CHECK(near(g.separate.in(u::us), 100 * l.transfer_time(1_KiB).in(u::us), 1e-12));
    // 1 KiB at 12.6 GB/s is 0.08 us against 8 us of fixed cost: 100 separate transfers take
    // 808 us, one of 100 KiB 16.1 us, 50x faster (1e-9: the same formula, summed differently).
    const double data_us = (1_KiB / l.achievable()).in(u::us);
    const double a = l.per_transfer.in(u::us);
    CHECK(near(g.speedup(), 100 * (a + data_us) / (a + 100 * data_us), 1e-9));
    CHECK(g.speedup() > 45);
    CHECK(g.speedup() < 55);
    const auto one = perfcast::gather_transfers(l, 1, 1_MiB);
    CHECK(one.saving.in(u::us) == 0.0);
    CHECK_THROWS_WITH_AS((void)perfcast::gather_transfers(l, 0, 1_KiB),
                         doctest::Contains("n = 0, expected at least 1"), perfcast::error);
}

TEST_CASE("link: fp32 -> fp16 halves the bytes and the data part of the time (guide §4)") {
    constexpr pcie_link l{5, 4};
    const auto h = perfcast::halve_precision(l, 4_MiB);
    CHECK(h.bytes_after == 2_MiB);
    CHECK(h.bytes_before == 4_MiB);
    // The fixed cost is paid either way; the saving is the data time of 2 MiB (1e-12: exact).
    CHECK(near(h.saving.in(u::us), (2_MiB / l.achievable()).in(u::us), 1e-12));
    // int64 -> int32 ids: same halving; fp16 -> fp32 costs time instead.
    const auto ids = perfcast::convert_inputs(l, 8_MiB, perfcast::dtype::int64,
                                              perfcast::dtype::int32);
    CHECK(ids.bytes_after == 4_MiB);
    const auto wider = perfcast::convert_inputs(l, 1_MiB, perfcast::dtype::fp16,
                                                perfcast::dtype::fp32);
    CHECK(wider.saving.in(u::us) < 0);
    CHECK_THROWS_WITH_AS((void)perfcast::halve_precision(l, data_size{-4, u::B}),
                         doctest::Contains("convert_inputs: size = -4"), perfcast::error);
}

TEST_CASE("link: fit_link rejects bad points and impossible results, naming them") {
    using doctest::Contains;
    std::array<transfer_point, 2> pts{{{1_MiB, bandwidth{10, u::GBps}},
                                       {data_size{-1, u::B}, bandwidth{1, u::GBps}}}};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_link(pcie_link{3, 16}, pts),
                         Contains("fit_link: points[1].size = -1 B, expected"), perfcast::error);
    pts[1] = {1_KiB, bandwidth{std::numeric_limits<double>::quiet_NaN(), u::GBps}};
    CHECK_THROWS_WITH_AS((void)perfcast::fit_link(pcie_link{3, 16}, pts),
                         Contains("points[1].measured = NaN, expected a finite rate > 0"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS(
        (void)perfcast::fit_link(pcie_link{3, 16}, std::span<const transfer_point>{}),
        Contains("points.size() = 0"), perfcast::error);
    // One size only: the slope cannot be fitted.
    std::array<transfer_point, 2> same{{{1_MiB, bandwidth{10, u::GBps}},
                                        {1_MiB, bandwidth{11, u::GBps}}}};
    CHECK_THROWS_WITH_AS(
        (void)perfcast::fit_link(pcie_link{3, 16}, same, {.fit_efficiency = true}),
        Contains("at least 2 different sizes"), perfcast::error);
    // The Gen3 table is far faster than a Gen1 x1 link (0.25 GB/s) can carry.
    CHECK_THROWS_WITH_AS(
        (void)perfcast::fit_link(pcie_link{1, 1}, gen3_pinned_h2d, {.fit_efficiency = true}),
        Contains("efficiency = "), perfcast::error);
    // Times that shrink with size have no positive slope.
    std::array<transfer_point, 2> shrinking{{{1_KiB, bandwidth{0.001, u::GBps}},
                                             {1_MiB, bandwidth{10, u::GBps}}}};
    CHECK_THROWS_WITH_AS(
        (void)perfcast::fit_link(pcie_link{3, 16}, shrinking, {.fit_efficiency = true}),
        Contains("slope = "), perfcast::error);
}

}  // namespace test_link
