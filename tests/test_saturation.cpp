// Stability first (issue 16): every load is checked against the configuration's saturation
// throughput before a percentile is reported, and the capacity search never leaves the stable
// loads. A finite simulation of an overloaded queue meets any loose TP99 target (its queue has
// only so long to grow), so without these checks the capacity grew with the target and with
// --requests (7.6e9 QPS per card at 500 ms with 10000 requests, 64638 with 40000).
//
// Runs are short where the answer does not depend on the length; the convergence cases use the
// lengths the issue names (10000, 20000, 40000), on one configuration, not a grid.
#include <doctest/doctest.h>

#include "support.hpp"

#include <perfcast/io/histogram.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving.hpp>
#include <perfcast/serving_sweep.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_saturation {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;
using namespace perfcast::literals;
using perfcast_test::json_checker;
using perfcast_test::json_number;

namespace {

// One stream, gears 1..4, every batch 1 ms whatever its size: saturation is whatever packing
// reaches, at most 4 samples per ms.
server_config one_stream_4() {
    return make_server({.gears = gear_set::every(4),
                        .streams = 1,
                        .stream_cube = core_count{1},
                        .stream_vector = core_count{1},
                        .card_cube = core_count{1},
                        .card_vector = core_count{1}},
                       [](int, int) { return 1_ms; });
}

// The built-in scenario's best serving configuration for its default requests (16 samples
// each, `perfcast whatif --p99-ms X` picks it at every target): 6 streams x 12 cube / 10
// vector cores, max gear 32 (two requests per batch), window 0.
server_config builtin_best() {
    return make_card_server(scenario::default_chip, scenario::ctr_ranking, stream_count{6},
                            core_split{core_count{12}, core_count{10}}, gear_set::every(32));
}

using perfcast_test::has;

}  // namespace

// ---- the saturation throughput ------------------------------------------------------------

TEST_CASE("saturation: exact where packing is exact, below the bound where it is not") {
    const server_config c = one_stream_4();
    // Every request 4 samples: one per batch, one batch per ms: 1000 requests/s, both ways.
    const saturation_result four = saturation(c, batch_distribution::fixed(4));
    CHECK(four.bound.in(units::qps) == doctest::Approx(1000).epsilon(1e-12));
    CHECK(four.throughput.in(units::qps) == doctest::Approx(1000).epsilon(1e-9));
    // Every request 2 samples: two merge into each batch: 2000 requests/s (above the no-merging
    // bound low_load().capacity, 1000).
    const saturation_result two = saturation(c, batch_distribution::fixed(2));
    CHECK(two.throughput.in(units::qps) == doctest::Approx(2000).epsilon(1e-9));
    CHECK(low_load(c, batch_distribution::fixed(2)).capacity.in(units::qps) ==
          doctest::Approx(1000).epsilon(1e-12));
    // Sizes 1 and 3 in random order: FIFO packing leaves gaps (1+3, but 3 then 3 cannot share),
    // so the card does less than the bound of 4 samples per ms over 2 samples per request, and
    // more than one request per batch.
    const batch_distribution mix({{1, 1.0}, {3, 1.0}});
    const saturation_result m = saturation(c, mix);
    CHECK(m.bound.in(units::qps) == doctest::Approx(2000).epsilon(1e-12));
    CHECK(m.throughput < m.bound);
    CHECK(m.throughput.in(units::qps) > 1000);
}

TEST_CASE("a load above saturation is saturated; its queue grows; below it, stable") {
    const server_config c = one_stream_4();
    const batch_distribution mix({{1, 1.0}, {3, 1.0}});
    const saturation_result sat = saturation(c, mix);
    sim_options so;
    so.warmup = 200;
    const serving_result over = simulate(c, mix, sat.throughput * 1.2, 2000, so);
    const serving_result under = simulate(c, mix, sat.throughput * 0.8, 2000, so);
    // Overloaded: the wait grows through the run, 20 % of the load piling up.
    CHECK(over.queue_grew());
    CHECK(over.wait_last_quarter > 2.0 * over.wait_first_quarter);
    CHECK(classify(sat.throughput * 1.2, over, sat) == load_state::saturated);
    // The queue's growth alone marks a run, whatever the saturation estimate says: the same
    // run judged against a (wrong) saturation twice as high is still no steady state.
    const saturation_result optimistic{sat.bound * 2, sat.throughput * 2};
    CHECK(classify(sat.throughput * 1.2, over, optimistic) == load_state::growing);
    // At 80 % the queue comes and goes.
    CHECK_FALSE(under.queue_grew());
    CHECK(classify(sat.throughput * 0.8, under, sat) == load_state::stable);
    CHECK(name_of(load_state::saturated) == "saturated");
    CHECK(name_of(load_state::growing) == "queue-growing");
}

// ---- capacity: only stable loads, the same whatever the run length ------------------------

TEST_CASE("capacity of the built-in scenario: the same at 10k, 20k, 40k requests; capped" *
          doctest::test_suite("heavy")) {
    const server_config c = builtin_best();
    const batch_distribution d = batch_distribution::fixed(16);
    const saturation_result sat = saturation(c, d);
    const double cap = sat.throughput.in(units::qps) * (1 - saturation_margin);
    INFO("saturation ", sat.throughput.in(units::qps), " QPS (bound ", sat.bound.in(units::qps),
         ")");
    // Before: 7.6e9, 350235 and 64638 QPS at 500 ms for 10k, 20k, 40k requests; 1.09e10 at 1e9.
    for (const double target_ms : {5.0, 50.0, 500.0, 1e9}) {
        std::vector<double> found;
        for (const std::uint64_t n : {10000u, 20000u, 40000u}) {
            capacity_options o;
            o.target = duration{target_ms, units::ms};
            o.requests = n;
            o.warmup = n / 10;
            const capacity_result r = find_capacity(c, d, o);
            REQUIRE(r.has_value());
            INFO("TP99 <= ", target_ms, " ms, ", n, " requests: ", r->qps.in(units::qps), " QPS");
            // Never past saturation; every one of these targets is looser than saturation
            // allows (TP99 1.3 to 1.7 ms at the cap), so each is the cap, flagged.
            CHECK(r->qps < sat.throughput);
            CHECK(r->limit == capacity_limit::saturation);
            CHECK(r->qps.in(units::qps) == doctest::Approx(cap).epsilon(1e-12));
            CHECK(r->saturation == sat.throughput);
            CHECK(r->latency <= o.target);
            found.push_back(r->qps.in(units::qps));
        }
        // The stated tolerance: rel_tolerance (1 %). The cap does not depend on --requests at
        // all (the saturation probe has its own fixed length), so here they agree exactly.
        const auto [lo, hi] = std::minmax_element(found.begin(), found.end());
        CHECK(*hi - *lo <= 0.01 * *hi);
    }
}

TEST_CASE("capacity set by the latency target converges with the run length, within 3 %") {
    // Mixed sizes (the seed's histogram) and a 1 ms target: the target, not saturation, decides.
    const server_config c = builtin_best();
    const batch_distribution d =
        io::read_bs_histogram_file(PERFCAST_SOURCE_DIR "/tests/data/bs_hist_seed.csv");
    const saturation_result sat = saturation(c, d);
    // Each length's capacity is the median over seeds 1-3: one run of 10000 requests moves by up
    // to 8 % from seed to seed (25.8k-27.9k QPS since the AI CPU launch became 73 us), and the
    // claim is about the length, not one draw.
    std::vector<double> found;
    for (const std::uint64_t n : {10000u, 40000u}) {
        std::vector<double> by_seed;
        for (const std::uint64_t seed : {1u, 2u, 3u}) {
            capacity_options o;
            o.target = 1_ms;
            o.requests = n;
            o.warmup = n / 10;
            o.seed = seed;
            const capacity_result r = find_capacity(c, d, o);
            REQUIRE(r.has_value());
            CHECK(r->limit == capacity_limit::latency);
            CHECK(r->qps < sat.throughput * (1 - saturation_margin));
            by_seed.push_back(r->qps.in(units::qps));
        }
        std::sort(by_seed.begin(), by_seed.end());
        found.push_back(by_seed[1]);
    }
    // 3 %: the bisection's 1 % bracket plus what is left of the TP99's sampling noise in a
    // median of three runs. One run of 9000 counted requests (90 above the P99) moves the load
    // where the TP99 curve crosses 1 ms by up to 8 % from seed to seed (above); the medians
    // measured 25800 and 26491 QPS, 2.6 % apart.
    INFO("10k: ", found[0], " QPS, 40k: ", found[1], " QPS (medians over 3 seeds)");
    CHECK(found[0] == doctest::Approx(found[1]).epsilon(0.03));
}

TEST_CASE("analytic capacity: capped at the model's own saturation load") {
    const server_config c = one_stream_4();
    const batch_distribution d = batch_distribution::fixed(4);
    capacity_options o;
    o.method = capacity_method::analytic;
    o.target = duration{1e9, units::ms};
    const capacity_result r = find_capacity(c, d, o);
    REQUIRE(r.has_value());
    // One chunk of 1 ms per request on one stream: the model saturates at 1000 requests/s.
    CHECK(r->saturation.in(units::qps) == doctest::Approx(1000).epsilon(1e-12));
    CHECK(r->limit == capacity_limit::saturation);
    CHECK(r->qps.in(units::qps) == doctest::Approx(1000 * (1 - saturation_margin)).epsilon(1e-12));
    CHECK(analyze(c, d, 999_qps).stable);
    CHECK_FALSE(analyze(c, d, 1001_qps).stable);
}

// ---- the command --------------------------------------------------------------------------

TEST_CASE("perfcast whatif --qps above saturation: 'saturated' in the table and the JSON") {
    const std::vector<std::string_view> base{"--streams", "6",           "--cube",      "12",
                                             "--vector",  "10",          "--max-batch", "32",
                                             "--qps",     "20000,60000", "--requests",  "2000"};
    const perfcast_test::cli_run t = perfcast_test::run_command(cli::whatif_command, base);
    REQUIRE(t.status == cli::exit_ok);
    INFO(t.out);
    CHECK(has(t.out, "1 of 2 simulated loads saturated or with a growing queue: no percentiles"));
    // The 60000 row: the offered load, no mean or P50, "saturated" where P99 was.
    const std::size_t row = t.out.find(" 60000 ");
    REQUIRE(row != std::string::npos);
    const std::string line = t.out.substr(row, t.out.find('\n', row) - row);
    std::istringstream cells(line);
    std::vector<std::string> c;
    for (std::string w; cells >> w;) c.push_back(w);
    REQUIRE(c.size() >= 5);
    // QPS, mean, P50, P99, P99.9: the load, then no latency at all.
    CHECK(c[0] == "60000");
    CHECK(c[1] == "-");
    CHECK(c[2] == "-");
    CHECK(c[3] == "saturated");
    CHECK(c[4] == "-");
    CHECK(has(t.out, "sat. QPS"));

    std::vector<std::string_view> args = base;
    args.insert(args.end(), {"--format", "json"});
    const perfcast_test::cli_run j = perfcast_test::run_command(cli::whatif_command, args);
    REQUIRE(j.status == cli::exit_ok);
    CHECK(json_checker(j.out).valid());
    const std::size_t low = j.out.find("\"qps\": 20000");
    const std::size_t high = j.out.find("\"qps\": 60000");
    REQUIRE(low != std::string::npos);
    REQUIRE(high != std::string::npos);
    // Each point's members in order: qps, state, mean_ms, p50_ms, p99_ms, ...
    CHECK(j.out.compare(j.out.find("\"state\": ", low), 17, "\"state\": \"stable\"") == 0);
    CHECK(j.out.compare(j.out.find("\"state\": ", high), 20, "\"state\": \"saturated\"") == 0);
    CHECK(j.out.compare(j.out.find("\"p99_ms\": ", high), 14, "\"p99_ms\": null") == 0);
    CHECK(json_number(j.out, "p99_ms", low) > 0);
    const double sat = json_number(j.out, "saturation_qps");
    CHECK(sat > 20000);
    CHECK(sat < 60000);
}

TEST_CASE("perfcast whatif --p99-ms looser than saturation allows: capped and said so") {
    const std::vector<std::string_view> base{
        "--streams", "6",        "--cube", "12",         "--vector", "10",        "--max-batch",
        "32",        "--p99-ms", "1e9",    "--requests", "2000",     "--traffic", "1000000"};
    const perfcast_test::cli_run t = perfcast_test::run_command(cli::whatif_command, base);
    REQUIRE(t.status == cli::exit_ok);
    INFO(t.out);
    CHECK(has(t.out, "capped at saturation: capacity = saturation throughput "));
    CHECK(has(t.out, " x (1 - 0.05); the target is looser than saturation allows"));
    std::vector<std::string_view> args = base;
    args.insert(args.end(), {"--format", "json"});
    const perfcast_test::cli_run j = perfcast_test::run_command(cli::whatif_command, args);
    REQUIRE(j.status == cli::exit_ok);
    CHECK(json_checker(j.out).valid());
    CHECK(has(j.out, "\"capacity_limit\": \"saturation\""));
    CHECK(has(j.out, "\"saturation_margin\": 0.05"));
    const double cap = json_number(j.out, "capacity_qps");
    const double sat = json_number(j.out, "saturation_qps");
    CHECK(cap == doctest::Approx(sat * (1 - saturation_margin)).epsilon(1e-12));
    // Before: 1.09e10 QPS per card and 1 card for a million QPS.
    CHECK(cap < 40000);
    CHECK(json_number(j.out, "cards") == std::ceil(1e6 / cap));
}

}  // namespace test_saturation
