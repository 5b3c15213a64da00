// Time of one op-cost evaluation per op kind, and of a 100-op sweep over k = 1..24.
// Target (issue 3): under 50 ns per op evaluation.
#include <benchmark/benchmark.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/node.hpp>
#include <perfcast/op.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace {
using namespace perfcast;
using namespace perfcast::literals;

const std::array<op, 8> kinds{
    matmul(4096, 4608, 12288, dtype::fp16),
    batch_matmul(1024, 1, 300, 32, dtype::fp16, {.broadcast_b = true}),
    elementwise(1 << 20, dtype::fp16),
    reduce(4096, 512, dtype::fp32),
    gather(20000, 64_B, 1000000, dtype::fp16, {.hot_fraction = 0.3}),
    topk(400, 4000, 10, dtype::fp32),
    cast(1 << 20, dtype::fp32, dtype::fp16),
    transpose(shape{128, 300, 32}, dtype::fp16),
};

void BM_cost_one(benchmark::State& state) {
    const op& o = kinds[static_cast<std::size_t>(state.range(0))];
    const chip& c = chips::ascend910b1;
    for (auto _ : state) {
        benchmark::DoNotOptimize(cost(c, o));
    }
    state.SetLabel(std::string(name_of(o.kind)));
}
BENCHMARK(BM_cost_one)->DenseRange(0, static_cast<int>(kinds.size()) - 1);

// A GPU GEMM: the tile search over the preset's eight tiles (cost.hpp detail::tiled_for) runs
// in every call. Target (issue 13): under 25 ns. Arg 0: a large GEMM, 1: a skinny one (split-K).
void BM_cost_gpu_gemm(benchmark::State& state) {
    const op o = state.range(0) == 0 ? matmul(4096, 12288, 4096, dtype::fp16)
                                     : matmul(8, 1536, 4096, dtype::fp16);
    const chip& c = chips::h100_sxm;
    for (auto _ : state) {
        benchmark::DoNotOptimize(cost(c, o));
    }
    state.SetLabel(state.range(0) == 0 ? "h100 4096x12288x4096" : "h100 8x1536x4096");
}
BENCHMARK(BM_cost_gpu_gemm)->DenseRange(0, 1);

// The large GPU GEMM's cost() in its two parts: the tile search alone (detail::tiling_for) and
// the cost terms of the tiling it chose (detail::cost_terms); the rest of cost() is its checks.
void BM_cost_gpu_gemm_parts(benchmark::State& state) {
    const op o = matmul(4096, 12288, 4096, dtype::fp16);
    const chip& c = chips::h100_sxm;
    const engine_spec& e = c.engine_of(o.eng);
    const core_count all{e.cores};
    const auto chosen =
        detail::narrowed(detail::tiling_for(c, o, all, default_model_params, e), o, e);
    for (auto _ : state) {
        if (state.range(0) == 0) {
            benchmark::DoNotOptimize(detail::tiling_for(c, o, all, default_model_params, e));
        } else {
            benchmark::DoNotOptimize(
                detail::cost_terms(c, o, chosen, all, default_model_params, e));
        }
    }
    state.SetLabel(state.range(0) == 0 ? "tile search" : "cost terms");
}
BENCHMARK(BM_cost_gpu_gemm_parts)->DenseRange(0, 1);

// 100 ops (the kinds above, repeated) at every limit 1..24: 2400 evaluations per iteration.
void BM_cost_sweep_100_ops(benchmark::State& state) {
    const chip& c = chips::ascend910b1;
    std::vector<op> model;
    for (std::size_t i = 0; i < 100; ++i) model.push_back(kinds[i % kinds.size()]);
    for (auto _ : state) {
        duration total{};
        for (int k = 1; k <= 24; ++k) {
            for (const op& o : model) {
                const int cap = c.engine_of(o.eng).cores;
                total += cost(c, o, core_count{k < cap ? k : cap}).latency;
            }
        }
        benchmark::DoNotOptimize(total);
    }
    state.SetItemsProcessed(state.iterations() * 2400);
}
BENCHMARK(BM_cost_sweep_100_ops);

}  // namespace
