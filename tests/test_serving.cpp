// Serving under load: the simulator's rules on hand-made traces, its agreement with exact queueing
// formulas, determinism, the seed's online observation (guide §6), the analytic approximation,
// capacity and cards, the Chrome-trace timeline and the card-model adapter.
//
// Run lengths are chosen so that the whole file takes about a second in a Debug build; each
// statistical check says how large the simulation's noise is at that length.
#include <doctest/doctest.h>

#include "support.hpp"

#include <perfcast/io/chrome_trace.hpp>
#include <perfcast/io/histogram.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_serving {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;
using perfcast_test::json_checker;
using perfcast_test::message_of;
using namespace perfcast::literals;

namespace {

double ms(duration t) { return t.in(units::ms); }

batch_distribution seed_hist() {
    return io::read_bs_histogram_file(PERFCAST_SOURCE_DIR "/tests/data/bs_hist_seed.csv");
}

// guide §6's split: 12 cube / 24 vector cores per stream, the A2 card's 24 / 48 (guide §12).
constexpr core_sharing seed_sharing{core_count{12}, core_count{24}, core_count{24},
                                    core_count{48}, 1.0};

template <class F>
server_config seed_server(int max_gear, const F& service, int max_requests = 0) {
    return make_server({.gears = gear_set::every(max_gear),
                        .max_requests_per_batch = max_requests,
                        .streams = 3,
                        .stream_cube = core_count{12},
                        .stream_vector = core_count{24},
                        .card_cube = core_count{24},
                        .card_vector = core_count{48}},
                       service);
}

template <class F>
server_config streams_of(int streams, gear_set gears, duration window, const F& service) {
    return make_server({.gears = gears,
                        .window = window,
                        .streams = streams,
                        .stream_cube = core_count{1},
                        .stream_vector = core_count{1},
                        .card_cube = core_count{streams},
                        .card_vector = core_count{streams}},
                       service);
}

serving_result replay(const server_config& c, const std::vector<arrival>& trace,
                      sim_options o = {}) {
    o.keep_latencies = true;
    trace_arrivals src(trace);
    return simulate(c, src, o);
}

// FNV-1a over the bits of every kept latency: a fingerprint of a whole run.
std::uint64_t fingerprint(const serving_result& r) {
    std::uint64_t h = 0xCBF29CE484222325ULL;
    for (duration l : r.latencies) {
        const auto bits = std::bit_cast<std::uint64_t>(l.in(units::s));
        for (int k = 0; k < 8; ++k) {
            h ^= (bits >> (8 * k)) & 0xFF;
            h *= 0x100000001B3ULL;
        }
    }
    return h;
}

}  // namespace

// ---- random numbers -----------------------------------------------------------------------

// splitmix64's published outputs: seed 0 (Vigna's reference code) and seed 1234567 (the
// Rosetta Code task).
static_assert([] {
    std::uint64_t s = 0;
    return detail::splitmix64(s) == 0xE220A8397B1DCDAFULL &&
           detail::splitmix64(s) == 0x6E789E6AA1B965F4ULL &&
           detail::splitmix64(s) == 0x06C45D188009454FULL;
}());
static_assert([] {
    std::uint64_t s = 1234567;
    return detail::splitmix64(s) == 6457827717110365317ULL &&
           detail::splitmix64(s) == 3203168211198807973ULL;
}());
// xoshiro256**'s first output is rotl(s1 x 5, 7) x 9, s1 the second splitmix64 output.
static_assert(random_stream(0).next() == std::rotl(0x6E789E6AA1B965F4ULL * 5, 7) * 9);
// ln is usable at compile time (so is every draw).
static_assert(detail::ln(1.0) == 0.0);
static_assert(random_stream(7).exponential() > 0.0);

TEST_CASE("ln: within 2 ulp of std::log over (0, 1] and beyond") {
    // 2 ulp (4.4e-16 relative): the series and the split ln 2 lose at most about one rounding
    // each; any more would mean a wrong coefficient.
    double worst = 0;
    for (int i = 1; i <= 100000; ++i) {
        const double x = i / 100000.0;
        const double ref = std::log(x);
        if (ref != 0) worst = std::max(worst, std::abs(detail::ln(x) - ref) / std::abs(ref));
    }
    for (double x : {1e-300, 2.2250738585072014e-308, 4.9e-324, 0x1.0p-53, 1.5, 1e10, 1e300}) {
        const double ref = std::log(x);
        worst = std::max(worst, std::abs(detail::ln(x) - ref) / std::abs(ref));
    }
    CHECK(worst <= 4.5e-16);
}

TEST_CASE("exponential draws: mean 1 and P(X > 1) = 1/e within 5 standard errors") {
    random_stream r(42);
    constexpr int n = 400000;
    double sum = 0;
    int above = 0;
    for (int i = 0; i < n; ++i) {
        const double x = r.exponential();
        sum += x;
        above += x > 1.0 ? 1 : 0;
    }
    // SE of the mean: 1 / sqrt(n) = 0.0016; of the share: sqrt(p (1 - p) / n) = 0.00076.
    CHECK(std::abs(sum / n - 1.0) <= 5 * 0.0016);
    CHECK(std::abs(static_cast<double>(above) / n - std::exp(-1.0)) <= 5 * 0.00076);
}

// ---- the simulator's rules on hand-made traces (exact: tolerance 1e-9 relative) ----------

TEST_CASE("window and gears: merge until the window ends or the gear fills; splits run at once") {
    // One stream, t(b) = (5 + b) ms, gears 1..16, window 2 ms.
    const auto t = [](int b, int) { return duration{5.0 + b, units::ms}; };
    const server_config c = streams_of(1, gear_set::every(16), 2_ms, t);
    sim_options o;
    o.timeline = timeline_options{.from = 0_ms, .to = 1_s};
    const serving_result r = replay(c, {{0_ms, 4}, {1_ms, 4}, {10_ms, 16}, {10.5_ms, 20}}, o);
    // t=0, t=1: bs 4 + 4 wait for the window (2 ms after the first) and run as one batch of 8,
    //           2 .. 15 ms.
    // t=10:     bs 16 fills the largest gear but the stream is busy; it runs 15 .. 36.
    // t=10.5:   bs 20 is split into 10 + 10 (max gear 16); the first chunk runs 36 .. 51 (the
    //           next chunk does not fit beside it), the second at once at 51 .. 66 (a chunk of
    //           a split request does not wait for the window).
    REQUIRE(r.requests == 4);
    const std::vector<double> want{14, 15, 26, 55.5};  // sorted latencies, ms
    for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(ms(r.latencies[i]) == doctest::Approx(want[i]).epsilon(1e-9));
    }
    CHECK(r.batches == 4);
    CHECK(r.mean_batch == doctest::Approx(11.0).epsilon(1e-12));  // (8 + 16 + 10 + 10) / 4
    REQUIRE(r.timeline.batches.size() == 4);
    const std::vector<double> starts{2, 15, 36, 51};
    for (std::size_t i = 0; i < starts.size(); ++i) {
        CHECK(ms(r.timeline.batches[i].start) == doctest::Approx(starts[i]).epsilon(1e-9));
    }
    CHECK(r.timeline.batches[0].requests == 2);
    CHECK(r.timeline.batches[0].samples == 8);
    // The split request waited from 10.5 ms until its last chunk started at 51 ms.
    CHECK(ms(r.timeline.requests[3].start - r.timeline.requests[3].arrival) ==
          doctest::Approx(40.5).epsilon(1e-9));
}

TEST_CASE("window: a batch leaves as soon as the next request would not fit") {
    const auto t = [](int, int) { return 10_ms; };
    const server_config c = streams_of(2, gear_set::every(16), 100_ms, t);
    // 8 + 8 fill gear 16 at t = 1: both run at once, the window (100 ms) never ends.
    serving_result r = replay(c, {{0_ms, 8}, {1_ms, 8}});
    CHECK(ms(r.latencies[0]) == doctest::Approx(10.0).epsilon(1e-9));
    CHECK(ms(r.latencies[1]) == doctest::Approx(11.0).epsilon(1e-9));
    // 10 then 10: at t = 1 the first cannot grow (10 + 10 > 16) and leaves; the second waits
    // for more requests until its own window ends at 101 ms (greedy FIFO batching).
    r = replay(c, {{0_ms, 10}, {1_ms, 10}});
    CHECK(ms(r.latencies[0]) == doctest::Approx(11.0).epsilon(1e-9));
    CHECK(ms(r.latencies[1]) == doctest::Approx(110.0).epsilon(1e-9));
    // max_requests_per_batch = 1: nothing is merged, so nothing waits for the window.
    server_config single = c;
    single.max_requests_per_batch = 1;
    r = replay(single, {{0_ms, 10}, {1_ms, 10}});
    CHECK(ms(r.latencies[0]) == doctest::Approx(10.0).epsilon(1e-9));
    CHECK(ms(r.latencies[1]) == doctest::Approx(10.0).epsilon(1e-9));
}

TEST_CASE("contention: running batches are re-timed when another starts or ends") {
    // t(b, n) = 10 ms x n on two streams. A starts alone at 0 (10 ms). B starts at 5: both now
    // take 20 ms for their whole work; A has half left -> ends at 15. Then B runs alone with
    // half its work left (10 of 20 ms done) -> 5 more ms, ends at 20.
    const auto t = [](int, int n) { return duration{10.0 * n, units::ms}; };
    const server_config c = streams_of(2, gear_set::every(1), 0_ms, t);
    const serving_result r = replay(c, {{0_ms, 1}, {5_ms, 1}});
    CHECK(ms(r.latencies[0]) == doctest::Approx(15.0).epsilon(1e-9));
    CHECK(ms(r.latencies[1]) == doctest::Approx(15.0).epsilon(1e-9));
}

TEST_CASE("waits, queue length, utilization and warm-up on a hand-made trace") {
    // One stream of 10 ms; three requests at 0, one at 40 ms. Waits 0, 10, 20, 0.
    const auto t = [](int, int) { return 10_ms; };
    const server_config c = streams_of(1, gear_set::every(1), 0_ms, t);
    const std::vector<arrival> trace{{0_ms, 1}, {0_ms, 1}, {0_ms, 1}, {40_ms, 1}};
    serving_result r = replay(c, trace);
    CHECK(ms(r.mean_wait) == doctest::Approx(7.5).epsilon(1e-9));  // (0 + 10 + 20 + 0) / 4
    CHECK(r.wait_share == 0.5);
    CHECK(r.max_queue == 2);  // after the stream took the first one at t = 0
    // Over [0, 40] ms: 2 waiting for 10 ms, 1 for 10 ms -> 30 / 40; busy 30 of 40 ms.
    CHECK(r.mean_queue == doctest::Approx(0.75).epsilon(1e-9));
    CHECK(r.utilization == doctest::Approx(0.75).epsilon(1e-9));
    CHECK(r.qps.in(units::qps) == doctest::Approx(75.0).epsilon(1e-9));  // 3 gaps in 40 ms
    CHECK(ms(r.p50) == doctest::Approx(10.0).epsilon(1e-9));
    CHECK(ms(r.max) == doctest::Approx(30.0).epsilon(1e-9));
    // Warm-up 2: the first two requests are not counted.
    sim_options o;
    o.warmup = 2;
    r = replay(c, trace, o);
    CHECK(r.requests == 2);
    CHECK(ms(r.mean) == doctest::Approx(20.0).epsilon(1e-9));  // (30 + 10) / 2
}

// ---- exact queueing results ---------------------------------------------------------------

TEST_CASE("M/M/1 and M/D/1: mean waiting time within 3 % of Pollaczek-Khinchine") {
    // One stream, service 1 ms, rho = 0.5, 200000 Poisson arrivals (the warm-up is not needed:
    // the card starts empty and the bias of that start is O(1/n)).
    // P-K: Wq = rho / (1 - rho) x E[S] x (1 + cs^2) / 2 -> M/M/1 (cs^2 = 1): 1 ms;
    // M/D/1 (cs^2 = 0): 0.5 ms.
    // Noise: for M/M/1 the variance of the mean of n waiting times is about
    // rho (2 + 5 rho - 4 rho^2 + rho^3) / (1 - rho)^4 x E[S]^2 / n (Daley 1968)
    // = 29 / n ms^2 at rho = 0.5: SE = 1.2 % of Wq at n = 200000. 400 seeds of this very run
    // gave a spread (sd) of 1.19 % for M/M/1 (the formula's value) and 0.85 % for M/D/1. 3 % is
    // 2.5 and 3.5 of those: above the noise, and far below what a modelling error would give
    // (a 10 % error in service time moves Wq by about 20 %; serving the M/D/1 queue as M/M/1
    // doubles it).
    const auto one_ms = [](int, int) { return 1_ms; };
    const server_config c = streams_of(1, gear_set::every(1), 0_ms, one_ms);
    const batch_distribution one = batch_distribution::fixed(1);

    sim_options o;
    o.seed = 2024;
    o.service_cv = 1.0;  // exponential service
    const serving_result mm1 = simulate(c, one, 500_qps, 200000, o);
    CHECK(ms(mm1.mean_wait) == doctest::Approx(1.0).epsilon(0.03));
    CHECK(mm1.utilization == doctest::Approx(0.5).epsilon(0.03));
    // Little's law on the simulated path: mean queue = arrival rate x mean wait.
    CHECK(mm1.mean_queue ==
          doctest::Approx(mm1.qps.in(units::qps) * mm1.mean_wait.in(units::s)).epsilon(0.02));

    o.service_cv = 0.0;  // deterministic service
    const serving_result md1 = simulate(c, one, 500_qps, 200000, o);
    CHECK(ms(md1.mean_wait) == doctest::Approx(0.5).epsilon(0.03));
    // The analytic model is exact for both (c = 1: Allen-Cunneen reduces to P-K).
    CHECK(ms(analyze(c, one, 500_qps, 1.0).mean_wait) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(ms(analyze(c, one, 500_qps, 0.0).mean_wait) == doctest::Approx(0.5).epsilon(1e-12));
}

// ---- determinism --------------------------------------------------------------------------

TEST_CASE("same seed, same result to the bit; other seeds agree within the noise") {
    const batch_distribution d = seed_hist();
    const measured_service svc({{10, 7.01_ms}, {20, 9.19_ms}}, seed_sharing);
    const server_config c = seed_server(16, svc);
    sim_options o;
    o.seed = 11;
    o.warmup = 500;
    o.service_cv = 0.5;  // exercises the Erlang noise as well
    o.keep_latencies = true;
    const serving_result a = simulate(c, d, 250_qps, 5000, o);
    const serving_result b = simulate(c, d, 250_qps, 5000, o);
    CHECK(a.latencies == b.latencies);
    CHECK(a.mean == b.mean);
    CHECK(a.p999 == b.p999);
    CHECK(a.utilization == b.utilization);
    CHECK(a.mean_queue == b.mean_queue);
    // Across compilers and standard libraries: the same bits (no std::*_distribution, no libm in
    // the simulation). The constant was produced by GCC 12 / libstdc++ and is checked by every
    // build (Clang, ASan); FMA contraction on other instruction sets may change the last bits.
#if defined(__x86_64__) || defined(_M_X64)
    CHECK(fingerprint(a) == 0xBEC36D88BE8D165FULL);
#endif

    // Different seeds: the means differ by the simulation's noise only. Each run's batch-means
    // standard error covers it; 4 combined SEs leave room for the SE's own uncertainty.
    o.keep_latencies = false;
    const serving_result s1 = simulate(c, d, 250_qps, 10000, {.seed = 1, .warmup = 1000});
    const serving_result s2 = simulate(c, d, 250_qps, 10000, {.seed = 2, .warmup = 1000});
    CHECK(s1.mean != s2.mean);
    const double se = std::hypot(ms(s1.mean_stderr), ms(s2.mean_stderr));
    CHECK(se > 0);
    CHECK(std::abs(ms(s1.mean) - ms(s2.mean)) <= 4 * se);
    // Utilization: across 20 seeds of 20000 requests at 300 QPS its sd was 0.008; the difference
    // of two runs of half that length has an sd of about 0.016: 4 of those.
    CHECK(std::abs(s1.utilization - s2.utilization) <= 0.065);
}

// ---- guide §6 under load ------------------------------------------------------------------

TEST_CASE("guide §6 online: gear 16 vs 20, little change at low load, gear 20 better at peak") {
    // The seed's online observation: with max gear 20 instead of 16 (no split of bs 17..20)
    // "mean latency unchanged, mean NPU utilization -5 %, clearly less peak-hour latency
    // degradation". Service model of the seed's kind: t(b) = 4.83 + 0.218 b ms through its two
    // measurements, 3 streams of 12/24 cores on the 24/48 card (3 x 12 = 36 > 24: when three
    // batches run they time-share the cores, x 1.5), the seed-shaped histogram.
    const batch_distribution d = seed_hist();
    const measured_service svc({{10, 7.01_ms}, {20, 9.19_ms}}, seed_sharing);
    const server_config g16 = seed_server(16, svc);
    const server_config g20 = seed_server(20, svc);

    // Low load, exactly (no queueing): the means differ by 0.5 % (6.277 vs 6.309 ms): splitting
    // bs 17..20 saves 2 ms on 4 % of requests, bs 33..40 as three chunks instead of two costs a
    // little. "Little" here: under 2 %, against the 24 % a single split request gains.
    const low_load_result l16 = low_load(g16, d);
    const low_load_result l20 = low_load(g20, d);
    CHECK(std::abs(l16.mean / l20.mean - 1.0) < 0.02);
    // The simulation agrees at 5 QPS (utilization 1 %): batch-means SE 0.01 ms (0.15 %).
    const serving_result s16 = simulate(g16, d, 5_qps, 10000, {.seed = 5});
    const serving_result s20 = simulate(g20, d, 5_qps, 10000, {.seed = 5});
    CHECK(std::abs(s16.mean / s20.mean - 1.0) < 0.02);
    CHECK(s16.mean.in(units::s) == doctest::Approx(l16.mean.in(units::s)).epsilon(0.02));

    // Peak: 300 QPS puts gear 16 at 83 % of its streams. Same arrivals for both (same seed).
    const serving_result p16 = simulate(g16, d, 300_qps, 20000, {.seed = 1, .warmup = 2000});
    const serving_result p20 = simulate(g20, d, 300_qps, 20000, {.seed = 1, .warmup = 2000});
    INFO("peak TP99 gear 16: ", ms(p16.p99), " ms, gear 20: ", ms(p20.p99),
            " ms; utilization ", p16.utilization, " vs ", p20.utilization);
    // Over 20 seeds at this length gear 16's TP99 was 1.25x .. 1.61x gear 20's and its
    // utilization 4.1 .. 4.7 points higher (the seed: 5 %). The checks ask for 1.1x and 2 points.
    CHECK(p20.p99 * 1.1 < p16.p99);
    CHECK(p20.utilization + 0.02 < p16.utilization);
    CHECK(p20.core_utilization < p16.core_utilization);
    CHECK(p20.mean < p16.mean);
}

// ---- the analytic approximation -----------------------------------------------------------

TEST_CASE("analytic M/G/c vs simulation at light and heavy load, in its own domain") {
    // Allen-Cunneen assumes what this configuration has: each request one job (max gear 64 >
    // every bs, so no splits; no merging), service times independent of concurrency. Service
    // times vary with bs (t = 4.83 + 0.218 bs ms over the seed histogram: cs^2 = 0.05), c = 3.
    const batch_distribution d = seed_hist();
    const measured_service svc{{10, 7.01_ms}, {20, 9.19_ms}};
    const server_config c = seed_server(64, svc, 1);
    const double full = low_load(c, d).stream_bound.in(units::qps);  // 302.9 QPS

    // Light (rho = 0.3): latency is mostly service; 20 seeds at 20000 requests gave gaps within
    // -1.0 .. +0.3 % (mean) and 0 .. +1.7 % (P99). Tolerances 2 % and 3 %.
    const request_rate light{0.3 * full, units::qps};
    const serving_result sl = simulate(c, d, light, 20000, {.seed = 3, .warmup = 2000});
    const analytic_result al = analyze(c, d, light);
    CHECK(al.utilization == doctest::Approx(0.3).epsilon(1e-9));
    CHECK(al.mean.in(units::s) == doctest::Approx(sl.mean.in(units::s)).epsilon(0.02));
    CHECK(al.p99.in(units::s) == doctest::Approx(sl.p99.in(units::s)).epsilon(0.03));

    // Heavy (rho = 0.85): waiting is half the latency and the simulation is noisy (batch-means
    // SE of the mean 2 % at 80000 requests); 20 seeds gave gaps of -6.5 .. +2.7 % (mean) and
    // -11.7 .. +12.0 % (P99). Tolerances 10 % and 20 %.
    const request_rate heavy{0.85 * full, units::qps};
    const serving_result sh = simulate(c, d, heavy, 80000, {.seed = 3, .warmup = 8000});
    const analytic_result ah = analyze(c, d, heavy);
    CHECK(sh.utilization == doctest::Approx(0.85).epsilon(0.02));
    CHECK(ah.mean.in(units::s) == doctest::Approx(sh.mean.in(units::s)).epsilon(0.10));
    CHECK(ah.p99.in(units::s) == doctest::Approx(sh.p99.in(units::s)).epsilon(0.20));
    // Beyond saturation the model says so.
    const analytic_result over = analyze(c, d, request_rate{1.01 * full, units::qps});
    CHECK_FALSE(over.stable);
    CHECK(std::isinf(over.p99.in(units::s)));
}

TEST_CASE("analytic: M/M/c against the exact Erlang C formula") {
    // c = 3, exponential service of 10 ms, a = 2.4 (rho = 0.8): Erlang C = 0.6472, exact
    // Wq = C / (c mu - lambda) = 0.6472 / (300 - 240) s = 10.787 ms.
    const auto ten = [](int, int) { return 10_ms; };
    const server_config c = streams_of(3, gear_set::every(1), 0_ms, ten);
    const analytic_result a = analyze(c, batch_distribution::fixed(1), 240_qps, 1.0);
    CHECK(a.wait_probability == doctest::Approx(0.647191).epsilon(1e-5));
    CHECK(ms(a.mean_wait) == doctest::Approx(0.647191 / 60 * 1000).epsilon(1e-5));
    // Its tail: P(W > t) = C e^(-(c mu - lambda) t) -> P99 of the wait at ln(C / 0.01) / 60 s;
    // the latency adds the 10 ms service (the analytic model keeps service deterministic).
    CHECK(ms(a.p99) == doctest::Approx(10 + std::log(0.647191 / 0.01) / 60 * 1000).epsilon(1e-6));
}

// ---- capacity and cards -------------------------------------------------------------------

TEST_CASE("capacity: the highest QPS meeting a TP99 target, by simulation and analytically") {
    const batch_distribution d = seed_hist();
    const measured_service svc{{10, 7.01_ms}, {20, 9.19_ms}};
    const server_config c = seed_server(64, svc, 1);
    capacity_options o;
    o.target = 20_ms;
    o.requests = 5000;
    o.warmup = 500;
    o.rel_tolerance = 0.02;
    const capacity_result sim = find_capacity(c, d, o);
    REQUIRE(sim.has_value());
    CHECK(sim->latency <= o.target);
    CHECK(sim->evaluations > 3);
    // Just above the answer the target fails (the bisection's bracket is 2 % wide).
    sim_options so;
    so.warmup = o.warmup;
    so.keep_latencies = true;
    const serving_result above =
        simulate(c, d, sim->qps * (1 + 2 * o.rel_tolerance), o.requests, so);
    CHECK(above.at(0.99) > o.target);

    o.method = capacity_method::analytic;
    const capacity_result an = find_capacity(c, d, o);
    REQUIRE(an.has_value());
    // The analytic P99 was within 12 % of the simulation's at heavy load (test above); near
    // this target the latency curve is steep, so capacities agree more closely: 10 %.
    INFO("capacity at TP99 <= 20 ms: simulation ", sim->qps.in(units::qps), " QPS, analytic ",
            an->qps.in(units::qps), " QPS");
    CHECK(an->qps.in(units::qps) == doctest::Approx(sim->qps.in(units::qps)).epsilon(0.10));
}

TEST_CASE("capacity: a target nobody meets gives the closest candidate and why") {
    const batch_distribution d = seed_hist();
    const measured_service svc{{10, 7.01_ms}, {20, 9.19_ms}};
    capacity_options o;
    o.target = 5_ms;  // below the low-load TP99 of every candidate (bs 1 alone takes 5.05 ms)
    o.method = capacity_method::analytic;
    const capacity_result one = find_capacity(seed_server(16, svc), d, o);
    REQUIRE_FALSE(one.has_value());
    CHECK(one.error().why.find("no load meets the target") != std::string::npos);
    CHECK(one.error().closest_latency == low_load(seed_server(16, svc), d).p99);
    CHECK(message_of([&] { (void)one.value(); }) == one.error().why);

    const std::vector<server_config> candidates{seed_server(20, svc), seed_server(8, svc),
                                                seed_server(16, svc)};
    const capacity_result best = best_capacity(candidates, d, o);
    REQUIRE_FALSE(best.has_value());
    // Low-load TP99: gear 20 runs bs 20 whole (9.19 ms); gear 8 needs two waves of chunks on
    // three streams above bs 24 (2 x 6.36 ms); gear 16 never more than 16 samples in one wave
    // (8.32 ms): the closest.
    CHECK(best.error().closest == 2);
    CHECK(best.error().closest_latency == low_load(candidates[2], d).p99);
    CHECK(best.error().why.find("closest is candidate 2") != std::string::npos);

    o.target = 30_ms;
    const capacity_result ok = best_capacity(candidates, d, o);
    REQUIRE(ok.has_value());
    CHECK(ok->index < candidates.size());
}

TEST_CASE("capacity with a batching window: light loads wait it out, busier ones fill gears") {
    // Requests of one sample on 4 streams, gears 1..4, t(b) = 1 + 0.25 b ms, a 10 ms window. At
    // low load every request waits out the window: 10 + 1.25 ms. Under load four requests fill
    // gear 4 and leave at once: the fourth arrival comes 3 exponential gaps after the first
    // (Gamma(3, 1/qps), P99 8.41 / qps), then 2 ms of service: about 4.1 ms at 4000 QPS.
    const batch_distribution d{bs_count{1, 1.0}};
    const auto svc = [](int b, int) { return 1_ms + 0.25_ms * static_cast<double>(b); };
    const server_config c = streams_of(4, gear_set::every(4), 10_ms, svc);
    CHECK(low_load(c, d).p99 == 11.25_ms);
    CHECK(service_floor(c, d).p99 == 1.25_ms);  // the window taken out
    CHECK(c.window == 10_ms);                   // service_floor took a copy

    capacity_options o;
    o.target = 5_ms;  // above the floor, below the low-load TP99: only busier loads meet it
    o.requests = 5000;
    o.warmup = 500;
    o.rel_tolerance = 0.02;
    const capacity_result sim = find_capacity(c, d, o);
    REQUIRE(sim.has_value());
    CHECK(sim->latency <= o.target);
    // Between the light loads that miss it and saturation (16 samples / 8 ms = 8000 QPS): the
    // gathering alone needs 8.41 / qps <= 3 ms, so at least 2800 QPS.
    INFO("capacity ", sim->qps.in(units::qps), " QPS");
    CHECK(sim->qps.in(units::qps) > 2800);
    CHECK(sim->qps.in(units::qps) < 8000);
    // A light load misses the target the capacity meets: latency is not monotone in the load.
    sim_options so;
    so.warmup = o.warmup;
    so.keep_latencies = true;
    CHECK(simulate(c, d, request_rate{100, units::qps}, o.requests, so).at(0.99) > 10_ms);

    // Above the floor but below a full gear's 2 ms of service plus any gathering: no load meets
    // it, found in a bounded search that says why.
    o.target = 2.2_ms;
    const capacity_result none = find_capacity(c, d, o);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().why.find("lighter loads wait out the batching window: 11.25 ms at low "
                                "load") != std::string::npos);
    // The closest: the lowest TP99 a load the search tried gave, above the floor (every batch
    // either waits for its gear to fill or waits out the window).
    CHECK(none.error().closest_latency > 1.25_ms);
    CHECK(is_finite(none.error().closest_latency));
    // The floor itself above the target: said as the latency at any load.
    o.target = 1_ms;
    const capacity_result below = find_capacity(c, d, o);
    REQUIRE_FALSE(below.has_value());
    CHECK(below.error().why.find("is 1.25 ms at any load (the service alone, without the "
                                 "batching window's wait)") != std::string::npos);
}

TEST_CASE("cards_for: ceil(traffic / (capacity x (1 - headroom)))") {
    CHECK(cards_for(1000_qps, 300_qps).cards == 4);
    CHECK(cards_for(900_qps, 300_qps).cards == 3);  // an exact multiple needs no extra card
    CHECK(cards_for(1000_qps, 300_qps, 0.2).cards == 5);  // 1000 / 240 = 4.17
    CHECK(cards_for(1_qps, 300_qps).cards == 1);
    const card_count c = cards_for(1000_qps, 300_qps);
    CHECK(c.per_card.in(units::qps) == doctest::Approx(250.0).epsilon(1e-12));
    CHECK(c.load == doctest::Approx(250.0 / 300.0).epsilon(1e-12));
    CHECK(message_of([] { (void)cards_for(0_qps, 300_qps); }) ==
          "perfcast::cards_for: traffic = 0, expected a finite rate > 0 requests per second");
    CHECK(message_of([] { (void)cards_for(10_qps, 300_qps, 1.0); }) ==
          "perfcast::cards_for: headroom = 1, expected a share in [0, 1)");
}

// ---- bad input ----------------------------------------------------------------------------

TEST_CASE("bad input: QPS, window, traces out of order, warm-up, service noise") {
    const auto t = [](int, int) { return 1_ms; };
    const server_config c = streams_of(1, gear_set::every(4), 0_ms, t);
    const batch_distribution d = batch_distribution::fixed(1);
    CHECK(message_of([&] { (void)simulate(c, d, 0_qps, 10); }) ==
          "perfcast::poisson_arrivals: qps = 0, expected a finite rate > 0 requests per second");
    CHECK(message_of([&] { (void)simulate(c, d, -5_qps, 10); }).find("qps = -5") !=
          std::string::npos);
    CHECK(message_of([&] { (void)analyze(c, d, 0_qps); }).find("perfcast::analyze: qps = 0") !=
          std::string::npos);
    CHECK(message_of([&] { (void)streams_of(1, gear_set::every(4), -2_ms, t); }) ==
          "perfcast::validate(server_config): window = -2, expected a finite time >= 0 ms");
    const std::vector<arrival> backwards{{0_ms, 1}, {5_ms, 1}, {1_ms, 1}};
    CHECK(message_of([&] { trace_arrivals src(backwards); }) ==
          "perfcast::trace_arrivals: trace[2].time (ms) = 1, expected arrivals in time order "
          "(trace[1] is at 5 ms)");
    CHECK(message_of([&] { (void)simulate(c, d, 10_qps, 10, {.warmup = 10}); })
              .find("warmup = 10") != std::string::npos);
    CHECK(message_of([&] { (void)simulate(c, d, 10_qps, 10, {.service_cv = 2}); }) ==
          "perfcast::simulate: service_cv = 2, expected 0 (deterministic) or a coefficient of "
          "variation in [0.1, 1]");
    // A source of our own that goes back in time is caught by the simulator itself.
    struct bad_source {
        int i = 0;
        std::optional<arrival> next() {
            ++i;
            if (i == 1) return arrival{3_ms, 1};
            if (i == 2) return arrival{2_ms, 1};
            return std::nullopt;
        }
    } src;
    CHECK(message_of([&] { (void)simulate(c, src); }) ==
          "perfcast::simulate: arrival[1].time (ms) = 2, expected arrivals in time order, finite "
          "(the previous is at 3 ms)");
    capacity_options o;
    CHECK(message_of([&] { (void)find_capacity(c, d, o); }) ==
          "perfcast::find_capacity: target (ms) = 0, expected a finite latency > 0 ms");
    // A trace shorter than the warm-up: the trace is named, not `requests` (unused for traces).
    const std::vector<arrival> short_trace(1000, arrival{0_ms, 1});
    o.target = 2_ms;
    CHECK(message_of([&] { (void)find_capacity(c, short_trace, o); }) ==
          "perfcast::find_capacity: trace (requests) = 1000, expected at least 100 more than "
          "capacity_options::warmup (2000): a longer trace or a smaller warmup");
}

// ---- traces from files, timelines ---------------------------------------------------------

TEST_CASE("a trace streamed from CSV gives the same run as the same trace in memory") {
    std::string text = "time_us,bs\n";
    random_stream r(9);
    double t = 0;
    const batch_distribution d = seed_hist();
    for (int i = 0; i < 3000; ++i) {
        t += r.exponential() * 4000.0;  // 250 QPS
        text += std::to_string(static_cast<long long>(t)) + "," +
                std::to_string(d.sample(r.uniform())) + "\n";
    }
    const measured_service svc({{10, 7.01_ms}, {20, 9.19_ms}}, seed_sharing);
    const server_config c = seed_server(16, svc);
    io::trace_reader streamed(text, "trace.csv");
    const serving_result a = simulate(c, streamed, {.keep_latencies = true});
    const std::vector<arrival> mem = io::parse_trace(text);
    const serving_result b = replay(c, mem);
    CHECK(a.latencies == b.latencies);
    CHECK(a.requests == 3000);
    // Replayed twice as fast the same trace waits longer.
    trace_arrivals fast(mem, 2.0);
    CHECK(simulate(c, fast).mean > b.mean);
    CHECK(mean_rate(mem).in(units::qps) == doctest::Approx(250).epsilon(0.1));  // +-5 SE
}

namespace {

std::size_t count(const std::string& s, std::string_view needle) {
    std::size_t n = 0;
    for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("timeline: Chrome trace JSON with a track per stream, batch slices, visible waits") {
    const measured_service svc({{10, 7.01_ms}, {20, 9.19_ms}}, seed_sharing);
    const server_config c = seed_server(16, svc);
    sim_options o;
    o.seed = 4;
    o.timeline = timeline_options{.from = 1_s, .to = 1.5_s};
    const serving_result r = simulate(c, seed_hist(), 300_qps, 1000, o);
    const serving_timeline& tl = r.timeline;
    REQUIRE(tl.streams.size() == 3);
    REQUIRE(!tl.batches.empty());
    REQUIRE(!tl.requests.empty());
    REQUIRE(!tl.queue.empty());
    for (const timeline_batch& b : tl.batches) {
        CHECK(b.start >= 1_s);
        CHECK(b.start < 1.5_s);
        CHECK(b.end > b.start);
        CHECK(b.samples <= b.gear);
        CHECK(b.concurrent >= 1);
    }
    // On one stream, batches never overlap.
    for (std::size_t i = 1; i < tl.batches.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (tl.batches[i].stream == tl.batches[j].stream) {
                CHECK((tl.batches[i].start >= tl.batches[j].end ||
                       tl.batches[j].start >= tl.batches[i].end));
            }
        }
    }
    std::ostringstream os;
    io::chrome_trace_options opt;
    opt.process_name = "card \"A2\"\n24/48";  // escaped in the output
    io::write_chrome_trace(os, tl, opt);
    const std::string json = os.str();
    CHECK(json_checker(json).valid());
    CHECK(count(json, "\"ph\":\"X\"") == tl.batches.size());
    CHECK(count(json, "\"ph\":\"C\"") == tl.queue.size());
    CHECK(count(json, "\"name\":\"thread_name\"") == 3);
    std::size_t waited = 0;
    for (const timeline_request& q : tl.requests) waited += q.start > q.arrival ? 1U : 0U;
    CHECK(waited > 0);
    CHECK(count(json, "\"name\":\"wait\",\"cat\":\"request\",\"ph\":\"b\"") == waited);
    CHECK(count(json, "\"cat\":\"request\",\"ph\":\"b\"") == tl.requests.size() + waited);
    CHECK(json.find("card \\\"A2\\\"\\n24/48") != std::string::npos);
    CHECK(json_checker("{\"a\":[1,2.5e3,\"x\\n\"]}").valid());  // the checker itself
    CHECK_FALSE(json_checker("{\"a\":[1,]}").valid());
    CHECK_FALSE(json_checker("{\"a\":NaN}").valid());
}

// ---- the card model as the service time ---------------------------------------------------

TEST_CASE("card_service: service times from card.hpp, by batch and concurrency") {
    const chip& a2 = scenario::default_chip;
    const core_split split{core_count{12}, core_count{24}};
    const card_service svc(a2, scenario::ctr_ranking, split);
    // The adapter is evaluate_card's per-instance latency, with the running batches as its
    // instances.
    CHECK(svc(16, 2) ==
          evaluate_card(a2, scenario::ctr_ranking, batch_size{16}, stream_count{2}, split)
              .instances()[0]
              .latency);
    CHECK(svc(16, 1) < svc(64, 1));  // more samples, more time
    CHECK(svc(16, 3) >= svc(16, 1));  // company never makes a batch faster
    const server_config c = make_card_server(a2, scenario::ctr_ranking, stream_count{2}, split,
                                             gear_set::list({1, 2, 4, 8, 16, 32}), 1_ms);
    CHECK(c.streams.size() == 2);
    CHECK(c.card_cube.value == a2.cube.cores);
    CHECK(c.streams[1].service.at(8, 2) == svc(8, 2));
    const batch_distribution d = seed_hist();
    const low_load_result low = low_load(c, d);
    const serving_result r =
        simulate(c, d, low.capacity * 0.5, 2000, {.seed = 1, .warmup = 200});
    CHECK(r.requests == 1800);
    CHECK(r.utilization > 0.1);
    CHECK(r.utilization < 1.0);
    CHECK(r.mean >= low.distribution.front().latency);  // no request beats the fastest alone
}

}  // namespace test_serving
