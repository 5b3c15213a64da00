// The what-if main job: latency of a 100-op model at one configuration (serial and on a card),
// and the full default sweep of the built-in scenario: streams 1-8 x cube 1-24 x vector 1-48 x 6
// batch sizes = 55296 configurations. Target (issue "Model, card and core-split what-if"): the
// sweep under 1 s on one core; state.counters["configs/s"] reports the rate.
//
//   ./perfcast_bench --benchmark_filter=whatif    (Release build)
#include <benchmark/benchmark.h>

#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/whatif.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {
using namespace perfcast;
using perfcast::batch_symbol::B;

/// 100 nodes: the built-in scenario's 34 three times, minus the last 2 (a model with the
/// scenario's mix of kinds, transfers, AI CPU and host-launched ops).
std::vector<node> hundred_ops() {
    std::vector<node> m;
    while (m.size() < 100) {
        for (const node& n : scenario::ctr_ranking) {
            if (m.size() == 100) break;
            m.push_back(n);
        }
    }
    return m;
}

void BM_whatif_serial_100_ops(benchmark::State& state) {
    const std::vector<node> m = hundred_ops();
    const core_split split{core_count{12}, core_count{24}};
    for (auto _ : state) {
        benchmark::DoNotOptimize(serial_latency(scenario::default_chip, m, 128, split));
    }
    state.counters["ops/s"] = benchmark::Counter(static_cast<double>(m.size()),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_whatif_serial_100_ops);

void BM_whatif_card_100_ops_4_streams(benchmark::State& state) {
    const std::vector<node> m = hundred_ops();
    const core_split split{core_count{8}, core_count{12}};
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            evaluate_card(scenario::default_chip, m, batch_size{128}, stream_count{4}, split));
    }
}
BENCHMARK(BM_whatif_card_100_ops_4_streams);

whatif_grid default_sweep_grid() {
    whatif_grid g;
    for (int s = 1; s <= 8; ++s) g.streams.push_back(stream_count{s});
    for (int k = 1; k <= 24; ++k) g.cube.push_back(core_count{k});
    for (int k = 1; k <= 48; ++k) g.vector.push_back(core_count{k});
    g.batches = counts<batch_size>({16, 32, 64, 128, 256, 512});
    return g;
}

void BM_whatif_default_sweep(benchmark::State& state) {
    const whatif_grid g = default_sweep_grid();
    for (auto _ : state) {
        benchmark::DoNotOptimize(sweep(scenario::default_chip, scenario::ctr_ranking, g));
    }
    state.counters["configs"] = static_cast<double>(g.size());
    state.counters["configs/s"] = benchmark::Counter(static_cast<double>(g.size()),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_whatif_default_sweep)->Unit(benchmark::kMillisecond);

}  // namespace
