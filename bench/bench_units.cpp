// Cost of strong units: the same transfer-plus-compute time over 1024 inputs, once with
// perfcast quantities and once with raw doubles. The two should time alike in a Release build
// (a quantity is one double; every conversion factor is folded at compile time). Compare
// BM_units_strong with BM_units_raw; a ratio far from 1 is a regression in units.hpp.
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>

#include <perfcast/units.hpp>

namespace {

constexpr std::size_t n_inputs = 1024;

struct raw_inputs {
    std::array<double, n_inputs> bytes{};       // B
    std::array<double, n_inputs> bandwidth{};   // B/s
    std::array<double, n_inputs> cycles{};      // cycles
    std::array<double, n_inputs> frequency{};   // Hz
};

struct strong_inputs {
    std::array<perfcast::data_size, n_inputs> bytes{};
    std::array<perfcast::bandwidth, n_inputs> bandwidth{};
    std::array<perfcast::cycle_count, n_inputs> cycles{};
    std::array<perfcast::frequency, n_inputs> frequency{};
};

// Deterministic, varied inputs in realistic ranges (KB..MB moves, ~1 TB/s, ~1.5 GHz), the same
// numbers for both benchmarks.
const raw_inputs& raw() {
    static const raw_inputs in = [] {
        raw_inputs r;
        for (std::size_t i = 0; i < n_inputs; ++i) {
            const auto x = static_cast<double>(i);
            r.bytes[i] = 4096.0 + 1024.0 * x;
            r.bandwidth[i] = 0.8e12 + 1e9 * static_cast<double>(i % 97);
            r.cycles[i] = 1000.0 + 3.0 * x;
            r.frequency[i] = 1.5e9 + 1e6 * static_cast<double>(i % 13);
        }
        return r;
    }();
    return in;
}

const strong_inputs& strong() {
    using namespace perfcast::units;
    static const strong_inputs in = [] {
        strong_inputs s;
        const raw_inputs& r = raw();
        for (std::size_t i = 0; i < n_inputs; ++i) {
            s.bytes[i] = perfcast::data_size{r.bytes[i], B};
            s.bandwidth[i] = perfcast::bandwidth{r.bandwidth[i], Bps};
            s.cycles[i] = perfcast::cycle_count{r.cycles[i], cycle};
            s.frequency[i] = perfcast::frequency{r.frequency[i], Hz};
        }
        return s;
    }();
    return in;
}

void BM_units_strong(benchmark::State& state) {
    const strong_inputs& in = strong();
    for (auto _ : state) {
        perfcast::duration total{};
        for (std::size_t i = 0; i < n_inputs; ++i) {
            total += in.bytes[i] / in.bandwidth[i] + in.cycles[i] / in.frequency[i];
        }
        benchmark::DoNotOptimize(total);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<benchmark::IterationCount>(n_inputs));
}
BENCHMARK(BM_units_strong);

void BM_units_raw(benchmark::State& state) {
    const raw_inputs& in = raw();
    for (auto _ : state) {
        double total = 0.0;
        for (std::size_t i = 0; i < n_inputs; ++i) {
            total += in.bytes[i] / in.bandwidth[i] + in.cycles[i] / in.frequency[i];
        }
        benchmark::DoNotOptimize(total);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<benchmark::IterationCount>(n_inputs));
}
BENCHMARK(BM_units_raw);

}  // namespace
