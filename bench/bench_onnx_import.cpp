// Importing a 1,000-node ONNX graph (issue 15: under 100 ms). Two parts:
//   BM_onnx_map_1000_nodes   the dependency-free mapping (io/onnx_graph.hpp) and the model-file
//                            reader, on a graph built in memory (250 x MatMul, Add, Relu,
//                            Reshape, as tests/data/onnx/mlp_1000.onnx);
//   BM_onnx_import_1000_file the whole import of tests/data/onnx/mlp_1000.onnx with the ONNX
//                            library (protobuf read, shape inference at three probe batches,
//                            mapping), in builds that have ONNX.
#include <benchmark/benchmark.h>

#include <perfcast/graph.hpp>
#include <perfcast/io/onnx_graph.hpp>

#include <string>
#include <vector>

#include "../examples/perfcast/onnx_source.hpp"

namespace {
using namespace perfcast;
using io::onnx_dim;
using io::onnx_tensor;

io::onnx_graph mlp_1000() {
    const auto act = [](const std::string& name) {
        return onnx_tensor{name, 1, true, {onnx_dim::batch(), onnx_dim::of(256)}, false};
    };
    const auto w = [](const std::string& name, std::vector<onnx_dim> d) {
        return onnx_tensor{name, 1, true, std::move(d), true};
    };
    io::onnx_graph g;
    g.name = "mlp_1000";
    g.source = "mlp_1000.onnx";
    g.batch_symbol = "'batch'";
    g.opset = 13;
    g.inputs = {act("x")};
    std::string x = "x";
    for (int i = 0; i < 250; ++i) {
        const std::string s = std::to_string(i);
        g.nodes.push_back({"MatMul",
                           "mm" + s,
                           {},
                           {act(x), w("w" + s, {onnx_dim::of(256), onnx_dim::of(256)})},
                           {act("m" + s)},
                           {}});
        g.nodes.push_back({"Add",
                           "bias" + s,
                           {},
                           {act("m" + s), w("b" + s, {onnx_dim::of(256)})},
                           {act("a" + s)},
                           {}});
        g.nodes.push_back({"Relu", "relu" + s, {}, {act("a" + s)}, {act("r" + s)}, {}});
        g.nodes.push_back({"Reshape",
                           "view" + s,
                           {},
                           {act("r" + s), w("flat", {onnx_dim::of(2)})},
                           {act("h" + s)},
                           {}});
        x = "h" + s;
    }
    g.outputs = {act(x)};
    return g;
}

void BM_onnx_map_1000_nodes(benchmark::State& state) {
    const io::onnx_graph g = mlp_1000();
    for (auto _ : state) {
        io::onnx_import r;
        benchmark::DoNotOptimize(io::model_of(g, &r));
    }
    state.SetLabel(std::to_string(g.nodes.size()) + " nodes");
}
BENCHMARK(BM_onnx_map_1000_nodes)->Unit(benchmark::kMillisecond);

#if PERFCAST_HAVE_ONNX
void BM_onnx_import_1000_file(benchmark::State& state) {
    const std::string path = PERFCAST_SOURCE_DIR "/tests/data/onnx/mlp_1000.onnx";
    for (auto _ : state) {
        io::onnx_import r;
        benchmark::DoNotOptimize(cli::import_onnx(path, "", r));
    }
}
BENCHMARK(BM_onnx_import_1000_file)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
