// The command's ONNX reader (examples/perfcast/onnx_source.cpp, over the system's ONNX library)
// on graphs not written for perfcast: Debian's libonnx-testdata operator tests, and the DLRM and
// DeepFM graphs rebuilt from their published architectures by tests/data/onnx/make_models.py
// (sources cited there), checked against a hand count. Built without ONNX, the same commands
// must fail naming the Debian package libonnx-dev.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/onnx_graph.hpp>
#include <perfcast/scenario.hpp>

#include "../examples/perfcast/commands.hpp"
#include "../examples/perfcast/onnx_source.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_onnx_import {

using namespace perfcast;

namespace {

const std::string onnx_dir = PERFCAST_SOURCE_DIR "/tests/data/onnx/";

using perfcast_test::has;

}  // namespace

#if PERFCAST_HAVE_ONNX

namespace {

/// Cube FLOPs (the matmuls) and the count of lines of `kind` at `batch`.
double cube_flops(const model& m, std::int64_t batch) {
    double total = 0;
    for (const node& n : m.nodes) {
        if (n.kind == op_kind::matmul || n.kind == op_kind::batch_matmul) {
            total += instantiate(n, batch).flops().in(units::flop);
        }
    }
    return total;
}
using perfcast_test::count;
using perfcast_test::named;

/// tests/data/onnx/`file` imported with its QDQ GEMMs folded (m, its report r) and with every
/// node as written (w, its report u).
struct qdq_imports {
    io::onnx_import r, u;
    model m, w;
};
qdq_imports import_both(const std::string& file) {
    qdq_imports x;
    x.m = cli::import_onnx(onnx_dir + file, "", x.r);
    x.w = cli::import_onnx(onnx_dir + file, "", x.u, nullptr, {.fuse_qdq = false});
    return x;
}

/// The one node of kind `k` in `m` (an import adds transfer lines for the graph's inputs and
/// outputs).
const node& only(const model& m, op_kind k) {
    const node* found = nullptr;
    for (const node& n : m.nodes) {
        if (n.kind != k) continue;
        REQUIRE(found == nullptr);
        found = &n;
    }
    REQUIRE(found != nullptr);
    return *found;
}

/// Whether an approximation `r` lists holds both `node` and `what`.
bool approximated(const io::onnx_import& r, std::string_view node, std::string_view what) {
    return std::any_of(r.approximations.begin(), r.approximations.end(),
                       [&](const std::string& a) { return has(a, node) && has(a, what); });
}

std::string import_error(const std::string& file) {
    try {
        io::onnx_import r;
        (void)cli::import_onnx(onnx_dir + file, "", r);
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return "(no error)";
}

const std::string testdata = "/usr/share/libonnx-testdata/data/node/";

}  // namespace

TEST_CASE("onnx: DLRM (Criteo Kaggle configuration) against a hand count") {
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "dlrm.onnx", "", r);
    CHECK(m.name == "dlrm_kaggle");
    // make_models.py: 7 Gemm layers (bottom 13-512-256-64-16, top 367-512-256-1), 26 embedding
    // bags (Gather + ReduceSum), the dot interaction (Concat, Reshape, Transpose, MatMul,
    // Reshape, Gather of the 351 pairs), the concat before the top MLP.
    CHECK(r.mapped.at("Gemm") == 7);
    CHECK(r.mapped.at("Gather") == 27);
    CHECK(r.mapped.at("ReduceSum") == 26);
    CHECK(r.mapped.at("Relu") == 6);
    CHECK(r.mapped.at("Sigmoid") == 1);
    CHECK(r.mapped.at("MatMul") == 1);
    CHECK(r.dropped.at("Reshape") == 2);
    CHECK(r.generic.empty());
    CHECK(count(m, op_kind::transfer) == 28);  // dense_x, 26 sparse inputs, the output
    CHECK(count(m, op_kind::gather) == 26);    // the embedding lookups; the 27th is a copy
    CHECK(count(m, op_kind::matmul) == 8);     // 7 Gemm + the interaction's batched MatMul
    // Cube FLOPs at batch 64: 2 x B x (sum of the MLP layers' K x N) + the interaction's
    // B x [27,16] x [16,27]. Integers far below 2^53: exact.
    const double mlp = 13.0 * 512 + 512 * 256 + 256 * 64 + 64 * 16 + 367 * 512 + 512 * 256 + 256;
    const double by_hand = 2 * 64 * mlp + 2 * 64 * 27.0 * 16 * 27;
    CHECK(cube_flops(m, 64) == by_hand);
    CHECK(cube_flops(m, 1024) == by_hand * 16);  // one import serves every batch
}

TEST_CASE("onnx: DeepFM (39 fields, embedding 10, deep 400-400-400) against a hand count") {
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "deepfm.onnx", "", r);
    CHECK(r.mapped.at("Gemm") == 4);
    CHECK(r.mapped.at("Gather") == 2);
    CHECK(r.mapped.at("ReduceSum") == 4);
    CHECK(r.mapped.at("Mul") == 3);
    CHECK(r.dropped.at("Reshape") == 1);
    CHECK(r.generic.empty());
    CHECK(count(m, op_kind::gather) == 2);
    CHECK(count(m, op_kind::transfer) == 2);
    // 2 x B x (390 x 400 + 400 x 400 + 400 x 400 + 400 x 1), exact in doubles.
    const double by_hand = 2.0 * 32 * (390.0 * 400 + 400 * 400 + 400 * 400 + 400);
    CHECK(cube_flops(m, 32) == by_hand);
    // The embedding lookup: B x 39 indices into the 1,000,000 x 10 table.
    CHECK(has(r.text, "gather B*39;1000000,10 fp32 index=int64 name=embedding"));
}

TEST_CASE("onnx: AutoInt (39 fields, 3 blocks of 2-head self-attention) against a hand count") {
    // make_models.py: per block, four dense layers (Q, K, V, residual: MatMul + bias + ReLU),
    // the heads stacked on the batch axis, one attention subgraph (MatMul, Div, Softmax,
    // MatMul), the heads merged, residual, ReLU and a layer norm; then the 39 x 64 logit.
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "autoint.onnx", "", r);
    CHECK(m.name == "autoint_criteo");
    CHECK(r.attention == 3);
    CHECK(r.fused == std::map<std::string, int>{{"Div", 3}, {"MatMul", 6}, {"Softmax", 3}});
    CHECK(r.mapped.at("MatMul") == 13);    // 12 dense layers and the prediction
    CHECK(r.mapped.at("Transpose") == 3);  // K^T stays its own line
    CHECK(r.generic.empty());
    CHECK(count(m, op_kind::attention) == 3);
    // Each block's attention: the 2 heads stacked on the batch, 39 fields of 32.
    CHECK(has(r.text, "attention B*2,1,39,32;B*2,1,39,32 fp32 name=block0_softmax"));
    // Cube FLOPs at batch 64: the dense layers 4 x 2 x B x 39 x in x 64 per block (in = 16, then
    // 64), the attention's two GEMMs 2 x 2 x (2B) x 39 x 39 x 32 per block, the logit
    // 2 x B x 2496. Integers far below 2^53: exact.
    const double b = 64;
    const double dense = 4 * 2 * b * 39 * 64 * (16.0 + 64 + 64);
    const double attn = 3 * 2 * (2 * (2 * b) * 39 * 39 * 32);
    const double by_hand = dense + attn + 2 * b * 39 * 64;
    const auto all_cube = [](const model& x, std::int64_t batch) {
        double f = cube_flops(x, batch);
        for (const node& n : x.nodes) {
            if (n.kind == op_kind::attention) f += instantiate(n, batch).flops().in(units::flop);
        }
        return f;
    };
    CHECK(all_cube(m, 64) == by_hand);
    // Node by node the same GEMM FLOPs, with the softmax as its own kernels.
    io::onnx_import u;
    const model unfused =
        cli::import_onnx(onnx_dir + "autoint.onnx", "", u, nullptr, {.fuse_attention = false});
    CHECK(u.attention == 0);
    CHECK(u.mapped.at("Softmax") == 3);
    CHECK(count(unfused, op_kind::attention) == 0);
    CHECK(all_cube(unfused, 64) == by_hand);
}

TEST_CASE("onnx: the built-in CTR scenario exported by make_models.py imports to its own ops") {
    io::onnx_import r;
    const model imported = cli::import_onnx(onnx_dir + "ctr_ranking.onnx", "", r);
    const model scenario = scenario::ctr_ranking_model();
    // Same ops: kind, name, shapes and input dtype line by line (the Softmax node is the
    // scenario's one softmax; the Reshape to the output is dropped).
    REQUIRE(imported.nodes.size() == scenario.nodes.size());
    model reference = scenario;
    for (std::size_t i = 0; i < scenario.nodes.size(); ++i) {
        const node& a = imported.nodes[i];
        node& b = reference.nodes[i];
        const std::string name(b.name.view());
        CAPTURE(name);
        CHECK(a.kind == b.kind);
        CHECK(a.name.view() == b.name.view());
        REQUIRE(a.shape_count == b.shape_count);
        for (std::size_t s = 0; s < a.shape_count; ++s) CHECK(a.shapes[s] == b.shapes[s]);
        // What ONNX cannot say (docs/import.md, "What is approximated"), set in the reference
        // as the import has it: graph dispatch, no hot rows, no HF32, a matmul's output in its
        // input dtype, the AI CPU Where as a vector op costed by bytes.
        b.mode = dispatch::graph;
        b.host_time_set = false;
        b.hot_fraction = 0;
        if (b.type == dtype::hf32) b.type = dtype::fp32;
        if (b.kind == op_kind::matmul) b.out_type = b.type;
        if (b.kind == op_kind::generic) {
            b.eng = engine::vector;
            b.flops_per_element = 0;
        }
        CHECK(a.type == b.type);
        CHECK(a == b);  // every other field too (hand-checked: all 34 equal)
        CHECK(a.line.value == 0);  // no line: the text it was read from is not the user's file
    }
    CHECK(r.mapped.at("Softmax") == 1);
    CHECK(r.generic.at("WhereDefault") == 1);
    // Same prediction within 1 % (the bound): the serial latency at three batches on
    // the 910B1. With the nodes equal the latencies are too; this states the promise.
    for (const std::int64_t batch : {1, 64, 512}) {
        CAPTURE(batch);
        const double a =
            serial_latency(chips::ascend910b1, imported.nodes, batch).latency.in(units::us);
        const double b =
            serial_latency(chips::ascend910b1, reference.nodes, batch).latency.in(units::us);
        CHECK(a == doctest::Approx(b).epsilon(0.01));
    }
}

TEST_CASE("onnx: import -o over its own input is refused; a folder is named; .ONNX is ONNX") {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "perfcast_import_slips";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "folder.onnx");
    const std::string copy = (dir / "Model.ONNX").string();
    std::filesystem::copy_file(onnx_dir + "dlrm.onnx", copy);
    const auto size = std::filesystem::file_size(copy);
    // The output is the input, by another spelling of its path: refused, the graph untouched.
    const std::string other = (dir / "." / "Model.ONNX").string();
    const auto same = perfcast_test::run_command(cli::import_command, {copy, "-o", other});
    CHECK(same.status == cli::exit_usage);
    CHECK(has(same.err, "is the input file '" + copy + "'"));
    CHECK(std::filesystem::file_size(copy) == size);
    // An upper-case extension is still ONNX (whatif --model reads it as a graph).
    CHECK(cli::is_onnx_path(copy));
    CHECK(perfcast_test::run_command(cli::import_command, {copy}).status == 0);
    // A folder named like a graph: the reader's error, naming it.
    const auto folder =
        perfcast_test::run_command(cli::import_command, {(dir / "folder.onnx").string()});
    CHECK(folder.status == cli::exit_failure);
    CHECK(has(folder.err, "folder.onnx: is a directory, expected a file"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("onnx: perfcast import -o writes a model file that reads back to the same nodes") {
    const std::string out =
        (std::filesystem::temp_directory_path() / "perfcast_dlrm.model").string();
    const std::string in = onnx_dir + "dlrm.onnx";
    const auto run = perfcast_test::run_command(cli::import_command, {in, "-o", out});
    REQUIRE(run.status == 0);
    CHECK(has(run.err, "mapped (71): Concat x2, Gather x27, Gemm x7"));
    CHECK(has(run.err, "dropped, layout only (2): Reshape x2"));
    io::onnx_import r;
    const model direct = cli::import_onnx(in, "", r);
    const model again = io::read_model_file(out);
    REQUIRE(again.nodes.size() == direct.nodes.size());
    for (std::size_t i = 0; i < direct.nodes.size(); ++i) CHECK(again.nodes[i] == direct.nodes[i]);
    std::filesystem::remove(out);
}

TEST_CASE("onnx: bad input is an error naming the file, node, field and what was expected") {
    CHECK(has(import_error("not_onnx.onnx"), "not_onnx.onnx: contents = \"not a protobuf"));
    CHECK(has(import_error("truncated.onnx"), "truncated.onnx: contents"));
    const std::string seq = import_error("bad_dynamic_seq.onnx");
    CHECK(has(seq, "graph input 'x' dimension 1 = \"seq\""));
    CHECK(has(seq, "a dynamic dimension other than the batch"));
    const std::string unknown = import_error("bad_unknown_op.onnx");
    CHECK(has(unknown, "node 'mystery' (Mystery): output 'y' shape = \"unknown\""));
    CHECK(has(import_error("missing.onnx"), "missing.onnx: cannot open file for reading"));
    // A type perfcast cannot price, by the name ONNX gives it (the number alone once).
    CHECK(has(import_error("bad_string_type.onnx"),
              "bad_string_type.onnx: tensor 'x' element type = \"STRING (8)\", expected a "
              "numeric ONNX type"));
    // Raw bytes that are not the tensor's elements: refused before shape inference, which would
    // copy them past its buffer (libonnx 1.12's ParseData; the fuzzer's finding, kept in
    // tests/fuzz/corpus/onnx/).
    CHECK(has(import_error("bad_raw_data.onnx"),
              "bad_raw_data.onnx: initializer 'axes' raw_data = \"5 bytes\", expected 8 bytes: "
              "dims [1] of 8-byte elements"));
    CHECK(has(import_error("../../fuzz/corpus/onnx/crash_raw_data.onnx"), "raw_data ="));
    // --batch-dim names a dimension the graph does not have.
    try {
        io::onnx_import r;
        (void)cli::import_onnx(onnx_dir + "dlrm.onnx", "seq", r);
        FAIL("no error");
    } catch (const perfcast::error& e) {
        CHECK(has(e.what(),
                  "--batch-dim = \"seq\", expected a symbolic dimension of the graph "
                  "inputs (batch"));
    }
}

TEST_CASE("onnx: Debian's libonnx-testdata operator tests map to their kinds") {
    REQUIRE_MESSAGE(std::filesystem::is_directory(testdata),
                    "install the Debian package libonnx-testdata");
    // One test graph per op family of docs/import.md: the op is mapped (not generic) and
    // the model reads.
    const std::vector<std::pair<std::string, std::string>> cases{
        {"test_matmul_2d", "MatMul"},
        {"test_matmul_3d", "MatMul"},
        {"test_gemm_default_matrix_bias", "Gemm"},
        {"test_softmax_axis_1", "Softmax"},
        {"test_logsoftmax_axis_1", "LogSoftmax"},
        {"test_layer_normalization_2d_axis0", "LayerNormalization"},
        {"test_gather_0", "Gather"},
        {"test_gather_elements_0", "GatherElements"},
        {"test_concat_2d_axis_0", "Concat"},
        {"test_split_equal_parts_1d", "Split"},
        {"test_slice", "Slice"},
        {"test_transpose_default", "Transpose"},
        {"test_expand_dim_changed", "Expand"},
        {"test_tile", "Tile"},
        {"test_cast_FLOAT_to_FLOAT16", "Cast"},
        {"test_top_k", "TopK"},
        {"test_reduce_sum_default_axes_keepdims_example", "ReduceSum"},
        {"test_argmax_default_axis_example", "ArgMax"},
        {"test_relu", "Relu"},
        {"test_sigmoid", "Sigmoid"},
        {"test_add_bcast", "Add"},
        {"test_where_example", "Where"},
        {"test_basic_conv_with_padding", "Conv"},
        {"test_matmulinteger", "MatMulInteger"},
        {"test_qlinearmatmul_2D", "QLinearMatMul"},
        {"test_qlinearmatmul_3D", "QLinearMatMul"},
        {"test_quantizelinear", "QuantizeLinear"},
        {"test_quantizelinear_axis", "QuantizeLinear"},
        {"test_dequantizelinear", "DequantizeLinear"},
        {"test_dequantizelinear_axis", "DequantizeLinear"},
    };
    for (const auto& c : cases) {
        const std::string file = testdata + c.first + "/model.onnx";
        const std::string op = c.second;
        CAPTURE(file);
        io::onnx_import r;
        const model m = cli::import_onnx(file, "", r);
        CHECK(r.generic.empty());
        CHECK(r.mapped.count(op) == 1);
        CHECK(m.nodes.size() >= 3);  // an input copy, the op, an output copy
    }
    // Layout-only ops compile to nothing: dropped and counted.
    for (const std::string op :
         {"reshape_extended_dims", "squeeze", "unsqueeze_axis_0", "flatten_axis0", "identity"}) {
        const std::string file = testdata + "test_" + op + "/model.onnx";
        CAPTURE(file);
        io::onnx_import r;
        (void)cli::import_onnx(file, "", r);
        CHECK(r.mapped.empty());
        CHECK(r.dropped.size() == 1);
    }
}

TEST_CASE("onnx: Softmax, LogSoftmax and LayerNormalization are one kernel each") {
    REQUIRE_MESSAGE(std::filesystem::is_directory(testdata),
                    "install the Debian package libonnx-testdata");
    // x [B, 4, 5] (opset 13: the axis alone is normalized). Along the last axis: B x 4 rows of
    // 5; along axis 1: B x 5 rows of 4, said as an approximation (another kernel runs it).
    const auto one_op = [&](const std::string& test, io::onnx_import& r) {
        const model m = cli::import_onnx(testdata + test + "/model.onnx", "", r);
        std::vector<op> device;
        for (const node& n : m.nodes)
            if (n.kind != op_kind::transfer) device.push_back(instantiate(n, 3));
        REQUIRE(device.size() == 1);
        return device.front();
    };
    io::onnx_import last;
    CHECK(one_op("test_softmax_axis_2", last) == softmax(3 * 4, 5, dtype::fp32));
    CHECK(last.approximations.empty());
    io::onnx_import middle;
    CHECK(one_op("test_softmax_axis_1", middle) == softmax(3 * 5, 4, dtype::fp32));
    REQUIRE(middle.approximations.size() == 1);
    CHECK(has(middle.approximations[0], "an axis other than the last"));
    io::onnx_import log;
    CHECK(one_op("test_logsoftmax_axis_1", log) == softmax(3 * 5, 4, dtype::fp32));
    REQUIRE(log.approximations.size() == 1);
    CHECK(has(log.approximations[0], "LogSoftmax along an axis other than the last"));
    // X [B, 3, 4, 5] normalized over the axes from 2: B x 3 rows of 20, each reduced across one
    // thread block (vLLM's min(20, 1024) threads), layer_norm_ops_per_element an element.
    io::onnx_import ln;
    CHECK(one_op("test_layer_normalization_4d_axis2", ln) ==
          rowwise(3 * 3, 20, dtype::fp32,
                  {.ops_per_element = layer_norm_ops_per_element, .row_threads = 20}));
    CHECK(ln.mapped.at("LayerNormalization") == 1);
}

TEST_CASE("onnx: libonnx-testdata's strided Conv against a hand count") {
    REQUIRE_MESSAGE(std::filesystem::is_directory(testdata),
                    "install the Debian package libonnx-testdata");
    // test_conv_with_strides_padding: X [1,1,7,5], W [1,1,3,3], strides 2, pads 1: Y [1,1,4,3]
    // (floor((7 + 2 - 3) / 2) + 1 = 4, floor((5 + 2 - 3) / 2) + 1 = 3). 12 output pixels x 1
    // channel x 9 taps = 108 multiply-adds, 216 FLOPs; without padding Y is [1,1,3,2]: 54 MACs.
    const auto conv_flops = [&](const std::string& test) {
        io::onnx_import r;
        const model m = cli::import_onnx(testdata + test + "/model.onnx", "", r);
        CHECK(r.generic.empty());
        CHECK(count(m, op_kind::conv) == 1);
        double f = 0;
        for (const node& n : m.nodes)
            if (n.kind == op_kind::conv) f += instantiate(n, 1).flops().in(units::flop);
        return f;
    };
    CHECK(conv_flops("test_conv_with_strides_padding") == 216.0);
    CHECK(conv_flops("test_conv_with_strides_no_padding") == 108.0);
}

TEST_CASE("onnx: every libonnx-testdata node graph imports or fails with a perfcast::error") {
    REQUIRE_MESSAGE(std::filesystem::is_directory(testdata),
                    "install the Debian package libonnx-testdata");
    int imported = 0, refused = 0;
    for (const auto& e : std::filesystem::directory_iterator(testdata)) {
        const std::string file = (e.path() / "model.onnx").string();
        if (!std::filesystem::is_regular_file(file)) continue;
        try {
            io::onnx_import r;
            (void)cli::import_onnx(file, "", r);
            ++imported;
        } catch (const perfcast::error&) {
            ++refused;  // a clear error (string tensors, data-dependent sizes, ...)
        }
    }
    // Debian's libonnx-testdata 1.12.0-2 has 932 node tests; counted when this was written:
    // 838 import, the rest are refused with a message (string tensors, data-dependent sizes,
    // sequences). A drop below 820 is a regression.
    CHECK(imported + refused > 900);
    CHECK(imported >= 820);
}

TEST_CASE(
    "onnx: whatif --model MODEL.onnx takes --batch-dim, --unfused-attention and --unfused-qdq") {
    const std::string autoint = onnx_dir + "autoint.onnx";
    const auto whatif = [](const std::vector<std::string>& a) {
        return perfcast_test::run_command(cli::whatif_command,
                                          std::vector<std::string_view>(a.begin(), a.end()));
    };
    const auto latency_of = [](const perfcast_test::cli_run& run) {
        // The table's one row: "1  2  12/10  256  LATENCY ..."; the fourth number is the latency.
        const std::size_t row = run.out.find("\n1 ");
        if (row == std::string::npos) return -1.0;
        std::istringstream in(run.out.substr(row + 1));
        std::string rank, streams, split, batch;
        double ms = 0;
        in >> rank >> streams >> split >> batch >> ms;
        return ms;
    };
    const std::vector<std::string> grid{"--batch", "256", "--streams", "2",
                                        "--cube",  "12",  "--vector",  "10"};
    auto args = grid;
    args.insert(args.begin(), {"--model", autoint});
    const auto fused = whatif(args);
    REQUIRE(fused.status == 0);
    CHECK(has(fused.err, "fused into 3 attention lines (12): Div x3, MatMul x6, Softmax x3"));
    args.push_back("--unfused-attention");
    const auto unfused = whatif(args);
    REQUIRE(unfused.status == 0);
    CHECK_FALSE(has(unfused.err, "fused into"));
    // Node by node the scores go out to memory and back through a softmax kernel: slower.
    CHECK(latency_of(unfused) > latency_of(fused));
    // --batch-dim picks the batch; a name the graph does not have is an error naming it.
    args = grid;
    args.insert(args.begin(), {"--model", autoint, "--batch-dim", "batch"});
    const auto named = whatif(args);
    REQUIRE(named.status == 0);
    CHECK(named.out == fused.out);
    args[3] = "seq";
    const auto wrong = whatif(args);
    CHECK(wrong.status != 0);
    CHECK(has(wrong.err, "--batch-dim = \"seq\""));
    // Both flags are for ONNX graphs only.
    const auto not_onnx = whatif({"--batch-dim", "batch", "--batch", "64"});
    CHECK(not_onnx.status == 2);
    CHECK(has(not_onnx.err, "option '--batch-dim' applies to an ONNX graph"));
    const auto qdq_not_onnx = whatif({"--unfused-qdq", "--batch", "64"});
    CHECK(qdq_not_onnx.status == 2);
    CHECK(has(qdq_not_onnx.err, "option '--unfused-qdq' applies to an ONNX graph"));
    // --unfused-qdq: the QDQ tower's Q / DQ nodes priced as written, slower than folded.
    args = grid;
    args.insert(args.begin(), {"--model", onnx_dir + "qdq_tower.onnx", "--chip", "h100"});
    const auto folded = whatif(args);
    REQUIRE(folded.status == 0);
    CHECK(
        has(folded.err, "folded into 2 integer GEMMs (6): DequantizeLinear x5, QuantizeLinear x1"));
    args.push_back("--unfused-qdq");
    const auto written = whatif(args);
    REQUIRE(written.status == 0);
    CHECK_FALSE(has(written.err, "folded into"));
    CHECK(latency_of(written) > latency_of(folded));
}

TEST_CASE("onnx: a graph whose batch cannot vary at every line is imported at its own sizes") {
    // pytorch-operator's test_operator_params: x [2, 2] + a weight passed as an input [2, 2].
    // Mapped with the first dimension as B, the Add fails at batch 3: imported fixed instead.
    const std::string file =
        "/usr/share/libonnx-testdata/data/pytorch-operator/"
        "test_operator_params/model.onnx";
    REQUIRE_MESSAGE(std::filesystem::is_regular_file(file),
                    "install the Debian package libonnx-testdata");
    io::onnx_import r;
    const model m = cli::import_onnx(file, "", r);
    REQUIRE(!r.approximations.empty());
    CHECK(has(r.approximations.back(),
              "the batch (first dimension (2)) does not vary in this "
              "graph, imported at its own sizes (every line fixed=1)"));
    CHECK(has(r.approximations.back(), "at batch 3"));
    CHECK(has(r.text, "# B is the graph's (no batch: every line fixed=1)"));
    for (const node& n : m.nodes)
        if (!n.is_transfer()) CHECK_NOTHROW((void)instantiate(n, 16));
    // whatif runs it at any batch, the graph's sizes each time.
    const auto w = perfcast_test::run_command(
        cli::whatif_command,
        {"--model", file, "--batch", "16", "--streams", "1", "--cube", "24", "--vector", "48"});
    CHECK(w.status == 0);
}

TEST_CASE("onnx: the header names a numeric batch plainly; a long path is cut in its middle") {
    namespace fs = std::filesystem;
    const perfcast_test::scratch_dir dir("onnx_header");
    const fs::path deep = dir.path / std::string(70, 'd') / "dlrm_copy.onnx";
    fs::create_directories(deep.parent_path());
    fs::copy_file(onnx_dir + "dlrm.onnx", deep);
    io::onnx_import r;
    (void)cli::import_onnx(deep.string(), "", r);
    const std::string first = r.text.substr(0, r.text.find('\n'));
    CHECK(has(first, "..."));
    CHECK(has(first, "dlrm_copy.onnx by perfcast import"));
    CHECK(first.size() <= std::string("# imported from  by perfcast import").size() + 80);
    // A graph without a symbolic dimension: B is its first dimension, said plainly.
    io::onnx_import relu;
    (void)cli::import_onnx(testdata + "test_relu/model.onnx", "", relu);
    CHECK(has(relu.text, "\n# B is the graph's first dimension (3); docs/import.md"));
    // A --batch-dim the graph lacks lists each of its symbols once (26 inputs share 'batch').
    const auto w = perfcast_test::run_command(
        cli::whatif_command, {"--model", onnx_dir + "dlrm.onnx", "--batch-dim", "nosuch"});
    CHECK(w.status != 0);
    CHECK(has(w.err, "a symbolic dimension of the graph inputs (batch)"));
}

TEST_CASE("onnx: per-head weights are read once each; a weight on the left once in all") {
    // [batch, 32, 1, 128] x [32, 128, 4096] fp16: 32 weight matrices of 128 x 4096, shared by
    // the batch. They were read as one (broadcast_b): 1 MiB where the weights are 32 MiB.
    io::onnx_import r;
    const model heads = cli::import_onnx(onnx_dir + "head_weights.onnx", "", r);
    constexpr double weights = 32.0 * 128 * 4096 * 2;
    for (const std::int64_t b : {1, 4}) {
        const op o = instantiate(only(heads, op_kind::matmul), b);
        CHECK(o.bytes_read == data_size{static_cast<double>(b) * 32 * 128 * 2 + weights, units::B});
        CHECK(o.flops() == flop_count{2.0 * static_cast<double>(b) * 32 * 128 * 4096, units::flop});
    }
    // W [256, 256] x x [batch, 256, 8]: costed as x^T W^T, W read once (not once per batch
    // entry), the same multiply-adds; the summary says so.
    io::onnx_import left_r;
    const model left = cli::import_onnx(onnx_dir + "weight_left.onnx", "", left_r);
    const op o = instantiate(only(left, op_kind::matmul), 2);
    CHECK(o.bytes_read == data_size{2.0 * 8 * 256 * 4 + 256.0 * 256 * 4, units::B});
    CHECK(o.bytes_written == data_size{2.0 * 256 * 8 * 4, units::B});
    CHECK(o.flops() == flop_count{2.0 * 2 * 256 * 256 * 8, units::flop});
    CHECK(approximated(left_r, "", "a weight on the left"));
}

TEST_CASE("onnx: per-head weights and a weight on the left with static shapes") {
    // No symbolic dimension: A [2, 1, 16, 128] over per-head weights [32, 128, 256] (the
    // matrices spread over A's 1, as numpy.matmul does) and W [256, 256] x x [4, 256, 8]. These
    // took none of the branches above once: the first was refused (B's rank is not A's) and the
    // second read W 4 times. The import takes the first input's first dimension (2) as the batch
    // B; x's 4 is fixed.
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "static_shapes.onnx", "", r);
    std::vector<const node*> matmuls;
    for (const node& n : m.nodes)
        if (n.kind == op_kind::matmul) matmuls.push_back(&n);
    REQUIRE(matmuls.size() == 2);
    for (const std::int64_t b : {1, 2, 3}) {
        const op heads = instantiate(*matmuls[0], b);
        // 32 b products of [16, 128] x [128, 256] (64 at the graph's own 2); A once per product
        // (said as an approximation), the 32 weight matrices once each.
        const auto products = 32.0 * static_cast<double>(b);
        CHECK(heads.flops() == flop_count{2.0 * products * 16 * 256 * 128, units::flop});
        CHECK(heads.bytes_read ==
              data_size{products * 16 * 128 * 2 + 32.0 * 128 * 256 * 2, units::B});
        const op left = instantiate(*matmuls[1], b);  // fixed: the same at every b
        CHECK(left.bytes_read == data_size{4.0 * 8 * 256 * 4 + 256.0 * 256 * 4, units::B});
        CHECK(left.bytes_written == data_size{4.0 * 256 * 8 * 4, units::B});
        CHECK(left.flops() == flop_count{2.0 * 4 * 256 * 256 * 8, units::flop});
    }
    CHECK(approximated(r, "head_proj", "A broadcast over B's batch"));
    CHECK(approximated(r, "'left'", "a weight on the left"));
}

TEST_CASE("onnx: A and B each broadcast over the other's leading dimension") {
    // W [2, 16, 128] x x [batch, 1, 128, 64] -> [batch, 2, 16, 64]: 2 x batch products. A took
    // B's leading dimensions whole once, its own 2 overwritten by B's 1: half the products.
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "broadcast_both.onnx", "", r);
    for (const std::int64_t b : {1, 3}) {
        const op o = instantiate(only(m, op_kind::matmul), b);
        CHECK(o.flops() ==
              flop_count{2.0 * 2 * static_cast<double>(b) * 16 * 64 * 128, units::flop});
        CHECK(o.bytes_written == data_size{2.0 * static_cast<double>(b) * 16 * 64 * 4, units::B});
    }
}

TEST_CASE("onnx: a reduction over axes other than the innermost is said to be approximated") {
    const auto strided = [](const std::string& file) {
        io::onnx_import r;
        (void)cli::import_onnx(onnx_dir + file, "", r);
        std::vector<std::string> out;
        for (const std::string& a : r.approximations)
            if (has(a, "over axes other than the innermost")) out.push_back(a);
        return out;
    };
    // DeepFM's FM part sums its [B, 39, 10] embeddings over the 39 fields (axis 1): strided.
    const std::vector<std::string> fm = strided("deepfm.onnx");
    REQUIRE(fm.size() == 2);
    CHECK(has(fm[0], "node 'fm_sum' (ReduceSum over axes other than the innermost)"));
    // DLRM's embedding bags sum [B, 1, 16] over the axis of 1: nothing strided.
    CHECK(strided("dlrm.onnx").empty());
    // [B, 16, 16] over axis 1 and over axis 2 give the same output shape: the axes tell.
    const std::vector<std::string> axes = strided("reduce_axes.onnx");
    REQUIRE(axes.size() == 1);
    CHECK(has(axes[0], "node 'over_rows' (ReduceSum"));
}

TEST_CASE("onnx: a control-flow node's subgraphs are said to be unpriced") {
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "if_branch.onnx", "", r);
    (void)only(m, op_kind::generic);  // exactly one node costed by its bytes: the If
    CHECK(approximated(r, "node 'branch' (If)", "the 2 node(s) of its subgraphs are not priced"));
}

TEST_CASE("onnx: a Reshape to the exported batch is said to pin it") {
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "pinned_reshape.onnx", "", r);
    CHECK(approximated(r, "node 'pin' (Reshape)",
                       "pins the batch: its input B,4,32 grows with it, its output 64,128 does "
                       "not"));
    // What follows is read at the exported size: the product does not follow the batch.
    CHECK(instantiate(only(m, op_kind::matmul), 2) == instantiate(only(m, op_kind::matmul), 7));
}

TEST_CASE("onnx: quantize, dequantize and the quantized GEMMs are priced as what they run") {
    io::onnx_import r;
    const model m = cli::import_onnx(onnx_dir + "quantized.onnx", "", r);
    CHECK(count(m, op_kind::generic) == 0);
    CHECK(count(m, op_kind::matmul) == 3);
    CHECK(count(m, op_kind::elementwise) == 2);
    // QuantizeLinear: fp32 read, uint8 written, 4 operations an element; DequantizeLinear back.
    const op q = instantiate(named(m, "quant"), 8);
    CHECK(q.type == dtype::fp32);
    CHECK(q.out_type == dtype::uint8);
    CHECK(q.bytes_read.in(units::B) == 8.0 * 64 * 4);
    CHECK(q.bytes_written.in(units::B) == 8.0 * 64);
    CHECK(q.useful_ops == 8.0 * 64 * io::onnx_detail::quantize_ops_per_element);
    const op dq = instantiate(named(m, "dequant"), 8);
    CHECK(dq.type == dtype::uint8);
    CHECK(dq.out_type == dtype::fp32);
    // MatMulInteger: a uint8 GEMM writing int32; QLinearMatMul's B is its fourth input (the
    // [64, 32] weight, not its scale), its output uint8.
    const op mi = instantiate(named(m, "int_mm"), 8);
    CHECK(mi.type == dtype::uint8);
    CHECK(mi.out_type == dtype::int32);
    CHECK(mi.k_depth == 64);
    CHECK(mi.gemm.n == 32);
    const op ql = instantiate(named(m, "qlinear_mm"), 8);
    CHECK(ql.type == dtype::uint8);
    CHECK(ql.out_type == dtype::uint8);
    CHECK(ql.k_depth == 64);
    CHECK(ql.gemm.n == 32);
    CHECK(ql.gemm.b.in(units::B) == 64.0 * 32);  // the uint8 weight, not a scalar scale
    CHECK(ql.flops() == instantiate(named(m, "float_mm"), 8).flops());
    CHECK(dq.bytes_written.in(units::B) == 8.0 * 64 * 4);
    CHECK(mi.bytes_written.in(units::B) == 8.0 * 32 * 4);  // int32
    // Said once that the QDQ nodes are priced as written: none is folded (float_mm's weight is
    // float, so it is no integer GEMM).
    CHECK(r.qdq_gemms == 0);
    int qdq = 0;
    for (const std::string& a : r.approximations)
        qdq += has(a,
                   "every other QuantizeLinear / DequantizeLinear not folded into an integer "
                   "GEMM: priced as written")
                   ? 1
                   : 0;
    CHECK(qdq == 1);
    CHECK(approximated(r, "node 'quant' (QuantizeLinear)", "fp32 here"));
}

TEST_CASE("onnx: a QDQ tower's GEMMs are integer GEMMs, and faster than as written") {
    const auto [r, u, m, w] = import_both("qdq_tower.onnx");
    // fc1 between x_dq and w1_dq, its QuantizeLinear h1_q folded: uint8 in and out; fc2 between
    // r1_dq and w2_dq writes its float output, its int32 bias (b2_dq) added in its epilogue.
    // x_q, h1_dq, relu1 and r1_q stay (h1_dq's float output feeds the Relu).
    CHECK(r.qdq_gemms == 2);
    CHECK(r.qdq.at("DequantizeLinear") == 5);
    CHECK(r.qdq.at("QuantizeLinear") == 1);
    CHECK(count(m, op_kind::matmul) == 2);
    CHECK(count(m, op_kind::elementwise) == 4);
    CHECK(count(w, op_kind::elementwise) == 11);  // the 10 Q / DQ / Relu nodes, fc2's bias
    const op fc1 = instantiate(named(m, "fc1"), 256);
    CHECK(fc1.type == dtype::uint8);
    CHECK(fc1.out_type == dtype::uint8);
    CHECK(fc1.gemm.b.in(units::B) == 512.0 * 256);  // the int8 weight, one byte an element
    const op fc2 = instantiate(named(m, "fc2"), 256);
    CHECK(r.text.find("fc2_bias") == std::string::npos);
    CHECK(fc2.type == dtype::uint8);
    CHECK(fc2.out_type == dtype::fp32);
    CHECK(fc2.flops() == instantiate(named(w, "fc2"), 256).flops());
    CHECK(named(m, "h1_dq").kind == op_kind::elementwise);
    // On the H100: the folded tower (int8 GEMMs, four passes) serially faster than as written
    // (fp32 GEMMs, eleven passes), every node's latency added.
    const auto serial = [](const model& x) {
        duration t{};
        for (const node& n : x.nodes) {
            if (n.kind == op_kind::transfer) continue;
            t += cost(chips::h100_sxm, instantiate(n, 256)).latency;
        }
        return t;
    };
    CHECK(serial(m) < serial(w));
    CHECK(approximated(r, "node 'fc1' (MatMul) and every other GEMM between DequantizeLinear",
                       "(fuse_qdq = false, --unfused-qdq) every node is priced as written"));
    // uint8 x int8 said once, the other GEMM counted.
    CHECK(approximated(r, "node 'fc1' (MatMul): B (int8) priced in A's dtype (uint8)",
                       "; so is 1 other GEMM with B in another dtype than A"));
    CHECK_FALSE(approximated(r, "node 'fc2'", "priced in A's dtype"));
    // The command: import folds by default, --unfused-qdq writes every node.
    const std::string tower = onnx_dir + "qdq_tower.onnx";
    const auto folded = perfcast_test::run_command(cli::import_command, {tower});
    REQUIRE(folded.status == 0);
    CHECK(has(folded.out, "matmul B,512;512,256 uint8 name=fc1"));
    CHECK(has(folded.err, "folded into 2 integer GEMMs"));
    const auto written = perfcast_test::run_command(cli::import_command, {tower, "--unfused-qdq"});
    REQUIRE(written.status == 0);
    CHECK(has(written.out, "matmul B,512;512,256 fp32 name=fc1"));
    CHECK(has(written.out, "name=b2_dq"));
    CHECK_FALSE(has(written.err, "folded into"));
}

TEST_CASE("onnx: pytorch-quantization's Linear layers: weights transposed, bias and Relu folded") {
    const auto [r, u, m, w] = import_both("qdq_linear.onnx");
    // fc1: x_dq and w1_dq through w1_t, then fc1_bias, relu1 and r1_q; fc2: r1_dq and w2_dq
    // through w2_t, then fc2_bias (no QuantizeLinear: float out). x_q alone stays a pass.
    CHECK(r.qdq_gemms == 2);
    CHECK(r.qdq.at("DequantizeLinear") == 4);
    CHECK(r.qdq.at("QuantizeLinear") == 3);  // w1_q, w2_q: constants; r1_q
    CHECK(r.qdq.at("Transpose") == 2);
    CHECK(r.qdq.at("Add") == 2);
    CHECK(r.qdq.at("Relu") == 1);
    CHECK(count(m, op_kind::matmul) == 2);
    CHECK(count(m, op_kind::elementwise) == 1);
    CHECK(count(m, op_kind::transpose) == 0);
    CHECK(count(w, op_kind::transpose) == 2);
    CHECK(r.text.find("matmul B,512;512,256 int8 name=fc1  # onnx MatMul 'fc1': integer, folds "
                      "'x_dq', 'w1_dq', 'w1_t', 'fc1_bias', +2 more\n") != std::string::npos);
    CHECK(r.text.find("matmul B,256;256,64 int8 out=fp32 name=fc2  # onnx MatMul 'fc2': "
                      "integer, folds 'r1_dq', 'w2_dq', 'w2_t', 'fc2_bias'\n") !=
          std::string::npos);
    const model again = io::parse_model(r.text, "qdq_linear.model");
    REQUIRE(again.nodes.size() == m.nodes.size());
    // The weights one byte an element in the layer's transposed shape: [512, 256], [256, 64].
    const auto gemm_of = [](const model& x, std::string_view name) {
        return instantiate(named(x, name), 256);
    };
    CHECK(gemm_of(m, "fc1").gemm.b.in(units::B) == 512.0 * 256);
    CHECK(gemm_of(m, "fc2").gemm.b.in(units::B) == 256.0 * 64);
    CHECK(gemm_of(w, "fc1").gemm.b.in(units::B) == 4 * 512.0 * 256);
    CHECK(gemm_of(m, "fc1").out_type == dtype::int8);
    CHECK(gemm_of(m, "fc2").out_type == dtype::fp32);
}

TEST_CASE("onnx: valid graphs the structure checks must not refuse") {
    // An opset-18 ReduceMean (axes an input; libonnx 1.12 knows opset 17) and a node of the
    // default domain spelled "ai.onnx": both imported (onnx.checker's check_node refused both).
    io::onnx_import r;
    const model newer = cli::import_onnx(onnx_dir + "opset18_reduce.onnx", "", r);
    CHECK(count(newer, op_kind::reduce) == 1);
    io::onnx_import d;
    const model spelled = cli::import_onnx(onnx_dir + "ai_onnx_domain.onnx", "", d);
    CHECK(count(spelled, op_kind::elementwise) == 1);
    // A graph of custom-domain ops needs no default-domain opset (onnx.checker agrees).
    io::onnx_import u;
    const model custom = cli::import_onnx(onnx_dir + "custom_only.onnx", "", u);
    CHECK(count(custom, op_kind::generic) == 1);
}

TEST_CASE("onnx: graphs onnx.checker refuses are refused, naming the node and the tensor") {
    CHECK(has(import_error("bad_cycle.onnx"), "node 'add' (Add) input = \"c\""));
    CHECK(has(import_error("bad_order.onnx"), "node 'relu' (Relu) input = \"h\""));
    CHECK(has(import_error("bad_order.onnx"), "nodes in topological order"));
    CHECK(has(import_error("bad_twice.onnx"), "node 'second' (Neg) output = \"h\""));
    CHECK(has(import_error("bad_no_op.onnx"),
              "node 'mystery' (NotARealOp) op_type = \"NotARealOp\", expected an op of the ONNX "
              "default domain at opset 13"));
}

#else

TEST_CASE("onnx: a build without ONNX names the package it needs") {
    const auto run = perfcast_test::run_command(cli::import_command, {onnx_dir + "dlrm.onnx"});
    CHECK(run.status == 1);
    CHECK(has(run.err, "libonnx-dev"));
}

#endif

}  // namespace test_onnx_import
