// Batch-size distributions, percentiles, sampling, and latency at low load.
#include <doctest/doctest.h>

#include "support.hpp"

#include <perfcast/distribution.hpp>
#include <perfcast/io/histogram.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_distribution {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;
using perfcast_test::message_of;
using namespace perfcast::literals;

namespace {

batch_distribution seed_hist() {
    return io::read_bs_histogram_file(PERFCAST_SOURCE_DIR "/tests/data/bs_hist_seed.csv");
}

constexpr measured_service seed_service{{10, 7.01_ms}, {20, 9.19_ms}};

server_config seed_server(int max_gear, duration window = {}) {
    return make_server({.gears = gear_set::every(max_gear),
                        .window = window,
                        .streams = 3,
                        .stream_cube = core_count{12},
                        .stream_vector = core_count{24},
                        .card_cube = core_count{24},
                        .card_vector = core_count{48}},
                       seed_service);
}

}  // namespace

// Inline histograms work in constant expressions (transient allocation, C++20).
static_assert(batch_distribution{{1, 3}, {2, 1}}.mean() == 1.25);
static_assert(batch_distribution{{2, 1}, {1, 3}}.min() == 1);  // bins are sorted
static_assert(batch_distribution{{1, 3}, {2, 1}}.percentile(0.75) == 1);
static_assert(batch_distribution{{1, 3}, {2, 1}}.percentile(0.76) == 2);
static_assert(batch_distribution{{1, 3}, {2, 1}}.share_at_most(1) == 0.75);
static_assert(batch_distribution{{1, 3}, {2, 1}}.sample(0.0) == 1);
static_assert(batch_distribution{{1, 3}, {2, 1}}.sample(0.7499) == 1);
static_assert(batch_distribution{{1, 3}, {2, 1}}.sample(0.75) == 2);
static_assert(batch_distribution{{1, 3}, {2, 1}}.sample(0.9999999) == 2);
static_assert(batch_distribution::fixed(7).mean() == 7);
// Counts near the largest double: bs x count overflows, the mean does not (from the shares;
// 1e305 / 2e305 is 0.5 exactly, and 1048577 x 0.5 too).
static_assert(batch_distribution{{1048576, 1e305}, {1, 1e305}}.mean() == 524288.5);

TEST_CASE("the seed histogram: 86 % of requests bs <= 16, 90 % bs <= 20 (guide §6)") {
    const batch_distribution d = seed_hist();
    // Integer counts out of 10000: 8600 / 10000 rounds to the same double as 0.86, so the
    // shares are exact (tolerance 0).
    CHECK(d.total() == 10000);
    CHECK(d.share_at_most(16) == 0.86);
    CHECK(d.share_at_most(20) == 0.90);
    CHECK(d.percentile(0.86) == 16);
    CHECK(d.percentile(0.90) == 20);
    CHECK(d.percentile(0.5) == 5);  // "mostly small"
    CHECK(d.max() == 41);
    CHECK(d.mean() == doctest::Approx(8.1354).epsilon(1e-12));  // the file's stated mean
    // The count never rises with bs (the shape the file's header explains).
    for (std::size_t i = 1; i < d.bins().size(); ++i) {
        CHECK(d.bins()[i].count <= d.bins()[i - 1].count);
    }
}

TEST_CASE("sample: a uniform grid of u reproduces the shares to one grid step") {
    const batch_distribution d = seed_hist();
    constexpr int n = 100000;
    std::vector<int> hits(64, 0);
    for (int i = 0; i < n; ++i) {
        ++hits[static_cast<std::size_t>(d.sample((i + 0.5) / n))];
    }
    // The inverse CDF on a grid of n points puts count/total x n +- 1 points in each bin.
    for (std::size_t i = 0; i < d.bins().size(); ++i) {
        const double want = d.share(i) * n;
        CHECK(std::abs(hits[static_cast<std::size_t>(d.bins()[i].bs)] - want) <= 1.0);
    }
}

TEST_CASE("batch_distribution: bad bins name the bin, the field and the value") {
    CHECK(message_of([] { (void)batch_distribution({{1, 3}, {2, -1}}); }) ==
          "perfcast::batch_distribution: bins[1].count = -1, expected a finite count > 0");
    CHECK(message_of([] { (void)batch_distribution({{1, 0}}); }) ==
          "perfcast::batch_distribution: bins[0].count = 0, expected a finite count > 0");
    CHECK(message_of([] { (void)batch_distribution({{0, 1}}); }) ==
          "perfcast::batch_distribution: bins[0].bs = 0, expected a batch size in 1..1048576");
    CHECK(message_of([] { (void)batch_distribution({{4, 1}, {4, 2}}); }) ==
          "perfcast::batch_distribution: bs = 4, expected each batch size in one bin only");
    CHECK(message_of([] { (void)batch_distribution(std::span<const bs_count>{}); }) ==
          "perfcast::batch_distribution: bins = none, expected at least one {bs, count} bin");
    CHECK(message_of([] { (void)batch_distribution({{1, 1e308}, {2, 1e308}}); }) ==
          "perfcast::batch_distribution: total = inf, expected a finite total count");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK(message_of([&] { (void)batch_distribution({{1, nan}}); }).find("count = NaN") !=
          std::string::npos);
    CHECK(message_of([] { (void)batch_distribution::fixed(4).percentile(0); }) ==
          "perfcast::batch_distribution::percentile: p = 0, expected a share in (0, 1]");
}

TEST_CASE("low_load: one batch size gives that request's cost exactly") {
    const low_load_result r = low_load(seed_server(16), batch_distribution::fixed(20));
    // One class: every statistic is the split bs-20 request of guide §6 (1e-12: rounding).
    CHECK(approx_equal(r.mean, 7.01_ms, 1e-12));
    CHECK(r.p50 == r.p99);
    CHECK(approx_equal(r.core_time, duration{2 * 12 * 7.01, units::ms}, 1e-12));
    CHECK(r.split_share == 1.0);
    CHECK(r.padding_share == 0.0);
    // Capacity: 3 streams / 14.02 ms of stream-time = 214.0 QPS; 24 cube cores / 168.24
    // core-ms = 142.65 QPS. The cores bind.
    CHECK(r.stream_bound.in(units::qps) == doctest::Approx(3 / 14.02e-3).epsilon(1e-12));
    CHECK(r.core_bound.in(units::qps) == doctest::Approx(24 / 168.24e-3).epsilon(1e-12));
    CHECK(r.capacity == r.core_bound);
}

TEST_CASE("low_load: the seed histogram under max gear 16 and 20") {
    const batch_distribution d = seed_hist();
    const low_load_result g16 = low_load(seed_server(16), d);
    const low_load_result g20 = low_load(seed_server(20), d);
    // Shares add to 1 and the distribution is sorted.
    double total = 0;
    for (std::size_t i = 0; i < g16.distribution.size(); ++i) {
        total += g16.distribution[i].share;
        if (i > 0) CHECK(g16.distribution[i - 1].latency <= g16.distribution[i].latency);
    }
    CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    // Percentiles by hand: P50 is bs 5 (t = 4.83 + 0.218 x 5 ms), P99 of gear 20 is a bs-20
    // request or a split of 2 x 20 (9.19 ms). Exact up to rounding (1e-12).
    CHECK(approx_equal(g16.p50, seed_service.alone(5), 1e-12));
    CHECK(approx_equal(g20.p99, 9.19_ms, 1e-12));
    CHECK(g16.max == seed_service.alone(16));  // bs 16, or 31 and 32 as 16 + 16
    // Split shares: gear 16 splits bs 17..41 (14 %), gear 20 bs 21..41 (10 %).
    CHECK(g16.split_share == doctest::Approx(0.14).epsilon(1e-12));
    CHECK(g20.split_share == doctest::Approx(0.10).epsilon(1e-12));
    // Splitting costs core-time: gear 16 needs more per request than gear 20.
    CHECK(g16.core_time > g20.core_time);
    CHECK(g16.capacity < g20.capacity);
    // The window: a 2 ms window adds 2 ms to every request that neither fills a gear nor is
    // split (bs < 16 here), i.e. to 8478 of 10000 requests: +1.6956 ms on the mean.
    const low_load_result w = low_load(seed_server(16, 2_ms), d);
    CHECK((w.mean - g16.mean).in(units::ms) ==
          doctest::Approx(2.0 * (8600 - 122) / 10000.0).epsilon(1e-9));
}

TEST_CASE("quantile: nearest rank on a latency distribution") {
    const std::vector<latency_share> d{{1_ms, 0.5}, {2_ms, 0.4}, {5_ms, 0.1}};
    CHECK(quantile(d, 0.5) == 1_ms);
    CHECK(quantile(d, 0.51) == 2_ms);
    CHECK(quantile(d, 0.9) == 2_ms);  // 0.5 + 0.4 reaches 0.9 within the rank tolerance
    CHECK(quantile(d, 0.99) == 5_ms);
    CHECK(message_of([&] { (void)quantile(d, 1.5); }) ==
          "perfcast::quantile: p = 1.5, expected a share in (0, 1]");
}

}  // namespace test_distribution
