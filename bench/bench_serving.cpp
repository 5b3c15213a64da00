// Serving simulation speed and capacity-search time (issue "Batching and serving under load").
// Targets: at least 1 million simulated requests per second on one core; a capacity search
// short enough to run per candidate of a what-if grid.
//
// Counters: requests_per_s = simulated requests per second of wall time; evaluations = loads
// tried by a capacity search. Scenario: guide §6 (3 streams of 12/24 cores on a 24/48 card,
// t(b) = 4.83 + 0.218 b ms, cores time-shared when three batches run) with the seed-shaped
// histogram of tests/data/bs_hist_seed.csv, inlined here so the benchmark needs no files.
#include <benchmark/benchmark.h>

#include <perfcast/serving.hpp>

#include <cstdint>
#include <vector>

namespace {
using namespace perfcast;
using namespace perfcast::literals;

batch_distribution seed_hist() {
    // tests/data/bs_hist_seed.csv: counts for bs 1..41.
    const int counts[41] = {1393, 1184, 1007, 856, 727, 618, 526, 447, 380, 323, 274,
                            233,  198,  169,  143, 122, 106, 102, 98,  94,  91,  86,
                            82,   78,   74,   69,  65,  61,  56,  52,  48,  43,  39,
                            35,   30,   26,   22,  17,  13,  9,   4};
    std::vector<bs_count> bins;
    for (int i = 0; i < 41; ++i) bins.push_back({i + 1, static_cast<double>(counts[i])});
    return batch_distribution(bins);
}

server_config seed_server(int max_gear, double sharing, duration window = {}) {
    const measured_service svc(
        {{10, 7.01_ms}, {20, 9.19_ms}},
        core_sharing{core_count{12}, core_count{24}, core_count{24}, core_count{48}, sharing});
    return make_server({.gears = gear_set::every(max_gear),
                        .window = window,
                        .streams = 3,
                        .stream_cube = core_count{12},
                        .stream_vector = core_count{24},
                        .card_cube = core_count{24},
                        .card_vector = core_count{48}},
                       svc);
}

// One simulation of range(0) requests (100000: large enough to amortize the setup, small
// enough for the Debug smoke run) at 300 QPS (83 % busy streams with gear 16).
// Arg 1: contention on (running batches re-timed at every start and end); 0: off.
void BM_simulate_seed(benchmark::State& state) {
    const auto n = static_cast<std::uint64_t>(state.range(0));
    const server_config c = seed_server(16, state.range(1) != 0 ? 1.0 : 0.0);
    const batch_distribution d = seed_hist();
    std::uint64_t seed = 1;
    for (auto _ : state) {
        const serving_result r = simulate(c, d, 300_qps, n, {.seed = seed++});
        benchmark::DoNotOptimize(r.p99);
    }
    state.counters["requests_per_s"] = benchmark::Counter(
        static_cast<double>(n) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate);
}
BENCHMARK(BM_simulate_seed)
    ->ArgsProduct({{100000}, {0, 1}})
    ->ArgNames({"requests", "contention"})
    ->Unit(benchmark::kMillisecond);

// With a 2 ms batching window: more batches wait, more merging.
void BM_simulate_window(benchmark::State& state) {
    const server_config c = seed_server(16, 1.0, 2_ms);
    const batch_distribution d = seed_hist();
    constexpr std::uint64_t n = 100000;
    for (auto _ : state) {
        const serving_result r = simulate(c, d, 300_qps, n, {.seed = 1});
        benchmark::DoNotOptimize(r.p99);
    }
    state.counters["requests_per_s"] = benchmark::Counter(
        static_cast<double>(n) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate);
}
BENCHMARK(BM_simulate_window)->Unit(benchmark::kMillisecond);

// M/M/1 at rho = 0.5: the simplest path (one stream, no batching), exponential service.
void BM_simulate_mm1(benchmark::State& state) {
    const server_config c = make_server(
        {.gears = gear_set::every(1), .stream_cube = core_count{1}, .card_cube = core_count{1}},
        [](int, int) { return 1_ms; });
    const batch_distribution d = batch_distribution::fixed(1);
    constexpr std::uint64_t n = 100000;
    for (auto _ : state) {
        const serving_result r = simulate(c, d, 500_qps, n, {.seed = 1, .service_cv = 1.0});
        benchmark::DoNotOptimize(r.mean_wait);
    }
    state.counters["requests_per_s"] = benchmark::Counter(
        static_cast<double>(n) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate);
}
BENCHMARK(BM_simulate_mm1)->Unit(benchmark::kMillisecond);

// (No DoNotOptimize on the double results: Debian 12's benchmark 1.7.1 can clobber a double
// passed to it through a general register; the results are read after the loop anyway.)

// Highest QPS with TP99 <= 40 ms, 20000 requests per simulated load, 1 % bracket.
void BM_capacity_search_simulation(benchmark::State& state) {
    const server_config c = seed_server(static_cast<int>(state.range(0)), 1.0);
    const batch_distribution d = seed_hist();
    capacity_options o;
    o.target = 40_ms;
    o.requests = 20000;
    o.warmup = 2000;
    double qps = 0;
    int evals = 0;
    for (auto _ : state) {
        const capacity_result r = find_capacity(c, d, o);
        qps = r->qps.in(units::qps);
        evals = r->evaluations;
    }
    state.counters["capacity_qps"] = qps;
    state.counters["evaluations"] = evals;
}
BENCHMARK(BM_capacity_search_simulation)->Arg(16)->Arg(20)->ArgName("max_gear")
    ->Unit(benchmark::kMillisecond);

void BM_capacity_search_analytic(benchmark::State& state) {
    const server_config c = seed_server(static_cast<int>(state.range(0)), 1.0);
    const batch_distribution d = seed_hist();
    capacity_options o;
    o.target = 40_ms;
    o.method = capacity_method::analytic;
    double qps = 0;
    int evals = 0;
    for (auto _ : state) {
        const capacity_result r = find_capacity(c, d, o);
        qps = r->qps.in(units::qps);
        evals = r->evaluations;
    }
    state.counters["capacity_qps"] = qps;
    state.counters["evaluations"] = evals;
}
BENCHMARK(BM_capacity_search_analytic)->Arg(16)->Arg(20)->ArgName("max_gear")
    ->Unit(benchmark::kMicrosecond);

// One analytic evaluation (a point of a QPS sweep).
void BM_analyze(benchmark::State& state) {
    const server_config c = seed_server(16, 1.0);
    const batch_distribution d = seed_hist();
    for (auto _ : state) benchmark::DoNotOptimize(analyze(c, d, 200_qps).p99);
}
BENCHMARK(BM_analyze)->Unit(benchmark::kMicrosecond);

}  // namespace
