// Gears, the split policy, service-time models and one request on an idle card (guide §6).
#include <doctest/doctest.h>

#include "support.hpp"

#include <perfcast/batching.hpp>

#include <cmath>
#include <string>
#include <type_traits>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_batching {

using namespace perfcast;
using perfcast_test::message_of;
using namespace perfcast::literals;

namespace {

// guide §6's two measurements on a 12/24-core split: bs 10 in 7.01 ms, bs 20 in 9.19 ms.
constexpr measured_service seed_service{{10, 7.01_ms}, {20, 9.19_ms}};

// guide §6 / §12: 3 streams of 12 cube / 24 vector cores on the A2 card's 24 / 48.
server_config seed_server(int max_gear, const auto& service) {
    return make_server({.gears = gear_set::every(max_gear),
                        .streams = 3,
                        .stream_cube = core_count{12},
                        .stream_vector = core_count{24},
                        .card_cube = core_count{24},
                        .card_vector = core_count{48}},
                       service);
}

// A constant expression only when the arguments are valid: PERFCAST_EXPECTS does not compile.
template <int M>
concept every_compiles =
    requires { typename std::integral_constant<int, gear_set::every(M).max()>; };
template <int B>
concept plan_compiles = requires {
    typename std::integral_constant<int, plan_request(gear_set::every(16), B).chunks>;
};

}  // namespace

// ---- gears and the split policy, at compile time ------------------------------------------

// guide §6: max gear 16 splits a bs-20 request into two bs-10 chunks (ceil(20/16) = 2, equal).
static_assert(plan_request(gear_set::every(16), 20).chunks == 2);
static_assert(plan_request(gear_set::every(16), 20).large == chunk_group{10, 10, 2});
static_assert(plan_request(gear_set::every(16), 20).small.count == 0);
static_assert(plan_request(gear_set::every(20), 20).chunks == 1);  // max gear 20: one run
// Uneven splits: 17 -> 9 + 8; 33 -> 11 + 11 + 11; 41 -> 14 + 14 + 13.
static_assert(plan_request(gear_set::every(16), 17).large == chunk_group{9, 9, 1});
static_assert(plan_request(gear_set::every(16), 17).small == chunk_group{8, 8, 1});
static_assert(plan_request(gear_set::every(16), 33).large == chunk_group{11, 11, 3});
static_assert(plan_request(gear_set::every(16), 41).chunk(2).samples == 13);
// Every gear 1..max: no padding. A list pads to the next gear: 20 -> 2 x 10 -> 2 x 16.
static_assert(plan_request(gear_set::every(16), 20).padding() == 0);
static_assert(plan_request(gear_set::list({1, 2, 4, 8, 16}), 20).padding() == 12);
static_assert(plan_request(gear_set::list({1, 2, 4, 8, 16}), 5).large.gear == 8);
static_assert(plan_request(gear_set::list({1, 2, 4, 8, 16}), 5).padding_share() == 3.0 / 8.0);
static_assert(gear_set::list({1, 2, 4, 8, 16}).gear_for(16) == 16);
static_assert(gear_set::list({8, 16, 20, 32}).gear_for(17) == 20);
static_assert(gear_set::every(16) == gear_set::every(16));
static_assert(!(gear_set::every(16) == gear_set::list({16})));
// Invalid values are not constant expressions.
static_assert(every_compiles<16> && !every_compiles<0> && !every_compiles<-3>);
static_assert(plan_compiles<20> && !plan_compiles<0>);

// The seed's model: t(b) = a + c b through both points: c = 2.18 ms / 10 = 0.218 ms per sample,
// a = 4.83 ms. Tolerance 1e-12 relative: exact up to double rounding.
static_assert(approx_equal(seed_service.alone(10), 7.01_ms, 1e-12));
static_assert(approx_equal(seed_service.alone(20), 9.19_ms, 1e-12));
static_assert(approx_equal(seed_service.alone(1), 5.048_ms, 1e-12));
static_assert(approx_equal(seed_service.alone(30), 11.37_ms, 1e-12));  // extended linearly
static_assert(seed_service(16, 3) == seed_service(16, 1));  // no contention model given

TEST_CASE("guide §6: max gear 16 runs a bs-20 request as 2 x bs 10 in 7.01 ms on 24/48 cores") {
    const server_config g16 = seed_server(16, seed_service);
    const server_config g20 = seed_server(20, seed_service);
    const request_cost split = cost_request(g16, 20);
    const request_cost whole = cost_request(g20, 20);

    CHECK(split.plan.chunks == 2);
    CHECK(whole.plan.chunks == 1);
    // The two chunks run side by side on two streams: 24 cube cores instead of 12.
    CHECK(split.cores_held == 24);
    CHECK(whole.cores_held == 12);
    CHECK(split.waves == 1);
    // Latencies are the seed's measurements themselves (1e-12: double rounding only).
    CHECK(approx_equal(split.latency, 7.01_ms, 1e-12));
    CHECK(approx_equal(whole.latency, 9.19_ms, 1e-12));
    // -24 %: 7.01 / 9.19 - 1 = -0.2372. Tolerance 0.5 percentage points: the seed rounds to
    // whole percent.
    const double latency_change = split.latency / whole.latency - 1.0;
    CHECK(std::abs(latency_change - (-0.24)) <= 0.005);
    CHECK(latency_change == doctest::Approx(7.01 / 9.19 - 1.0).epsilon(1e-12));
    // Core-time +53 %: 2 x 12 x 7.01 / (12 x 9.19) = 1.5256 (the brief's 2 x 7.01 / 9.19).
    const double core_ratio = split.core_time / whole.core_time;
    CHECK(core_ratio == doctest::Approx(2 * 7.01 / 9.19).epsilon(1e-12));
    CHECK(core_ratio == doctest::Approx(1.526).epsilon(0.0005));  // the seed's figure, 3 digits
    CHECK(approx_equal(split.core_time, duration{2 * 12 * 7.01, units::ms}, 1e-12));
    CHECK(approx_equal(split.stream_time, 14.02_ms, 1e-12));
}

TEST_CASE("cost_request: waves when chunks outnumber streams, the window at low load") {
    server_config one = make_server({.gears = gear_set::every(16),
                                     .window = 2_ms,
                                     .streams = 1,
                                     .stream_cube = core_count{12},
                                     .stream_vector = core_count{24},
                                     .card_cube = core_count{24},
                                     .card_vector = core_count{48}},
                                    seed_service);
    // 20 on one stream: two chunks of 10 one after the other, no window (a split request).
    const request_cost r = cost_request(one, 20);
    CHECK(r.waves == 2);
    CHECK(r.window_wait == duration{});
    CHECK(approx_equal(r.latency, 14.02_ms, 1e-12));
    // bs 5 does not fill gear 16: it waits out the 2 ms window first.
    const request_cost small = cost_request(one, 5);
    CHECK(small.window_wait == 2_ms);
    CHECK(approx_equal(small.latency, 2_ms + seed_service.alone(5), 1e-12));
    // bs 16 fills the largest gear: no wait.
    CHECK(cost_request(one, 16).window_wait == duration{});
    // No merging at all: every request is a full batch.
    one.max_requests_per_batch = 1;
    CHECK(cost_request(one, 5).window_wait == duration{});
}

TEST_CASE("core_sharing: slow-down only when the splits oversubscribe the card") {
    const core_sharing full{core_count{12}, core_count{24}, core_count{24}, core_count{48}, 1.0};
    const core_sharing half{core_count{12}, core_count{24}, core_count{24}, core_count{48}, 0.5};
    // Two 12-core batches fit the 24 cores (guide §6's 7.01 ms runs side by side): no change.
    CHECK(full.factor(1) == 1.0);
    CHECK(full.factor(2) == 1.0);
    // Three ask for 36 of 24 cores: fully time-shared 36 / 24 = 1.5; half shared 1.25.
    CHECK(full.factor(3) == doctest::Approx(1.5).epsilon(1e-15));
    CHECK(half.factor(3) == doctest::Approx(1.25).epsilon(1e-15));
    // The vector engine decides when it is the more oversubscribed one.
    const core_sharing vec{core_count{6}, core_count{24}, core_count{24}, core_count{48}, 1.0};
    CHECK(vec.factor(3) == doctest::Approx(1.5).epsilon(1e-15));
    CHECK(core_sharing{}.factor(8) == 1.0);  // no cores given: no contention

    const measured_service shared({{10, 7.01_ms}, {20, 9.19_ms}}, full);
    CHECK(approx_equal(shared(10, 3), 7.01_ms * 1.5, 1e-12));
    CHECK(approx_equal(shared(10, 2), 7.01_ms, 1e-12));
}

TEST_CASE("measured_service: interpolation, extension, the per-sample floor, one point") {
    const measured_service m{{4, 2_ms}, {8, 3_ms}, {16, 7_ms}};
    CHECK(approx_equal(m.alone(6), 2.5_ms, 1e-12));    // between 4 and 8
    CHECK(approx_equal(m.alone(12), 5_ms, 1e-12));     // between 8 and 16
    CHECK(approx_equal(m.alone(20), 9_ms, 1e-12));     // beyond: the last segment extended
    CHECK(approx_equal(m.alone(2), 1.5_ms, 1e-12));    // below: the first segment extended
    // A steep first segment would reach 0 or below at bs 1: the floor is 2 ms x 1 / 4.
    const measured_service steep{{4, 2_ms}, {5, 4_ms}};
    CHECK(approx_equal(steep.alone(1), 0.5_ms, 1e-12));
    const measured_service flat{{8, 3_ms}};
    CHECK(flat.alone(1) == 3_ms);
    CHECK(flat.alone(64) == 3_ms);
}

TEST_CASE("measured_service, gear_set: bad values name the field and the value") {
    CHECK(message_of([] { (void)measured_service({{8, 3_ms}, {4, 2_ms}}); }) ==
          "perfcast::measured_service: point.batch = 4, expected points in strictly increasing "
          "batch order");
    CHECK(message_of([] { (void)measured_service({{8, -3_ms}}); }) ==
          "perfcast::measured_service: point.latency = -3, expected a finite time > 0 ms");
    CHECK(message_of([] { (void)measured_service({{0, 3_ms}}); }).find("point.batch = 0") !=
          std::string::npos);
    CHECK(message_of([] { (void)gear_set::every(0); }) ==
          "perfcast::gear_set::every: max = 0, expected a largest gear in 1..1048576");
    CHECK(message_of([] { (void)gear_set::list({4, 2}); }) ==
          "perfcast::gear_set::list: gear = 2, expected gears in strictly increasing order");
    CHECK(message_of([] { (void)plan_request(gear_set::every(16), -1); }) ==
          "perfcast::plan_request: bs = -1, expected a batch size in 1..1048576");
    CHECK(message_of([] { (void)gear_set::every(16).gear_for(17); }).find("samples = 17") !=
          std::string::npos);
}

TEST_CASE("service_table: one evaluation per gear and concurrency; bad times are errors") {
    int calls = 0;
    const auto f = [&calls](int b, int n) {
        ++calls;
        return duration{static_cast<double>(b) + 0.5 * n, units::ms};
    };
    const service_table t(gear_set::list({1, 4, 16}), 3, f);
    CHECK(calls == 9);
    CHECK(t.at(4, 2) == duration{5.0, units::ms});
    CHECK(t.at(16, 9) == t.at(16, 3));  // above the table: its largest concurrency
    CHECK(t.depends_on_concurrency());
    CHECK(t.seconds_at(std::size_t{1}, 1.5) == doctest::Approx(4.75e-3).epsilon(1e-12));
    CHECK(message_of([&] { (void)t.at(5, 1); }).find("gear = 5") != std::string::npos);
    const auto broken = [](int b, int n) {
        return b == 4 && n == 2 ? duration{0.0, units::ms} : 1_ms;
    };
    CHECK(message_of([&] { (void)service_table(gear_set::every(8), 2, broken); }) ==
          "perfcast::service_table: service_time(batch 4, concurrent 2) = 0, expected a finite "
          "time > 0 ms");
    const service_table flat(gear_set::every(4), 3, [](int, int) { return 1_ms; });
    CHECK_FALSE(flat.depends_on_concurrency());
}

TEST_CASE("validate(server_config): window, streams, splits, tables") {
    server_config c = seed_server(16, seed_service);
    CHECK_NOTHROW(validate(c));
    c.window = -1_ms;
    CHECK(message_of([&] { validate(c); }) ==
          "perfcast::validate(server_config): window = -1, expected a finite time >= 0 ms");
    c = seed_server(16, seed_service);
    c.streams[1].cube = core_count{25};
    CHECK(message_of([&] { validate(c); }) ==
          "perfcast::validate(server_config): streams[1].cube = 25, expected 1 to card_cube "
          "cores");
    c = seed_server(16, seed_service);
    c.gears = gear_set::every(20);  // the tables were built for gears 1..16
    CHECK(message_of([&] { validate(c); }).find("streams[0].service.gears") != std::string::npos);
    c = seed_server(16, seed_service);
    c.streams.clear();
    CHECK(message_of([&] { validate(c); }).find("streams = 0") != std::string::npos);
    CHECK(message_of([] {
              (void)make_server({.streams = 0, .card_cube = core_count{24}}, seed_service);
          }) == "perfcast::make_server: streams = 0, expected 1 to 4096 streams");
}

}  // namespace test_batching
