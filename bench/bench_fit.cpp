// Cost of the fits and of the link model at run time (they also run at compile time).
#include <benchmark/benchmark.h>

#include <array>

#include <perfcast/fit.hpp>
#include <perfcast/link.hpp>

namespace {

using namespace perfcast::literals;
using perfcast::core_count;
using perfcast::core_point;
namespace u = perfcast::units;

void bm_fit_core_scaling_2_points(benchmark::State& state) {
    // guide §12's example: a + W/k, one 2 x 2 solve per subset of terms (3 subsets).
    std::array<core_point, 2> pts{{{core_count{24}, 100_us}, {core_count{12}, 150_us}}};
    for (auto _ : state) {
        benchmark::DoNotOptimize(pts);
        benchmark::DoNotOptimize(perfcast::fit_core_scaling(pts));
    }
}
BENCHMARK(bm_fit_core_scaling_2_points);

void bm_fit_core_scaling_5_points(benchmark::State& state) {
    // a + c*k + W/k: up to 7 subsets of terms, each a 3 x 3 (or smaller) solve.
    std::array<core_point, 5> pts{};
    const std::array<int, 5> ks{4, 6, 8, 12, 24};
    for (std::size_t i = 0; i < ks.size(); ++i) {
        const double k = ks[i];
        pts[i] = {core_count{ks[i]}, perfcast::duration{20 + 2 * k + 3000 / k, u::us}};
    }
    for (auto _ : state) {
        benchmark::DoNotOptimize(pts);
        benchmark::DoNotOptimize(perfcast::fit_core_scaling(pts));
    }
}
BENCHMARK(bm_fit_core_scaling_5_points);

void bm_transfer_time(benchmark::State& state) {
    perfcast::pcie_link link{5, 4};
    perfcast::data_size size = 4_MiB;
    for (auto _ : state) {
        benchmark::DoNotOptimize(link);
        benchmark::DoNotOptimize(size);
        benchmark::DoNotOptimize(link.transfer_time(size));
    }
}
BENCHMARK(bm_transfer_time);

void bm_fit_link_gen3_table(benchmark::State& state) {
    const std::array<perfcast::transfer_point, 6> pts{{
        {1_KiB, perfcast::bandwidth{0.148, u::GBps}},
        {4_KiB, perfcast::bandwidth{0.522, u::GBps}},
        {16_KiB, perfcast::bandwidth{1.529, u::GBps}},
        {64_KiB, perfcast::bandwidth{4.810, u::GBps}},
        {256_KiB, perfcast::bandwidth{8.875, u::GBps}},
        {1_MiB, perfcast::bandwidth{11.021, u::GBps}},
    }};
    for (auto _ : state) {
        benchmark::DoNotOptimize(pts);
        benchmark::DoNotOptimize(
            perfcast::fit_link(perfcast::pcie_link{3, 16}, pts, {.fit_efficiency = true}));
    }
}
BENCHMARK(bm_fit_link_gen3_table);

}  // namespace
