// io/onnx_graph.hpp: an ONNX graph as plain data mapped to model-file lines, without the ONNX
// library (the command's reader, examples/perfcast/onnx_source.cpp, is tested in
// test_onnx_import.cpp when the build has ONNX).
#include <doctest/doctest.h>

#include <perfcast/graph.hpp>
#include <perfcast/io/onnx_graph.hpp>

#include "support.hpp"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_onnx_graph {

using namespace perfcast;
using io::onnx_dim;
using io::onnx_node;
using io::onnx_tensor;

namespace {

constexpr int f32 = 1;
constexpr int i64 = 7;

onnx_tensor tensor(std::string name, std::vector<onnx_dim> dims, int type = f32,
                   bool weight = false) {
    return {std::move(name), type, true, std::move(dims), weight};
}
onnx_tensor weight(std::string name, std::vector<onnx_dim> dims, int type = f32) {
    return tensor(std::move(name), std::move(dims), type, true);
}
onnx_node op_node(std::string op, std::string name, std::vector<onnx_tensor> in,
                  std::vector<onnx_tensor> out, std::vector<io::onnx_attribute> attrs = {}) {
    return {std::move(op), std::move(name), {}, std::move(in), std::move(out), std::move(attrs)};
}

/// x[B,13] -> Gemm(W 13x64, bias 64) -> Relu -> Reshape -> MatMul(64x1) -> Sigmoid -> y[B,1]
io::onnx_graph mlp() {
    const onnx_dim b = onnx_dim::batch();
    io::onnx_graph g;
    g.name = "mlp";
    g.source = "mlp.onnx";
    g.batch_symbol = "batch";
    g.opset = 13;
    g.inputs = {tensor("x", {b, onnx_dim::of(13)})};
    g.outputs = {tensor("y", {b, onnx_dim::of(1)})};
    const auto h = [&](const char* n) { return tensor(n, {b, onnx_dim::of(64)}); };
    g.nodes = {
        op_node("Gemm", "fc1",
                {g.inputs[0], weight("W1", {onnx_dim::of(13), onnx_dim::of(64)}),
                 weight("b1", {onnx_dim::of(64)})},
                {h("h1")}),
        op_node("Relu", "relu1", {h("h1")}, {h("r1")}),
        op_node("Reshape", "view", {h("r1"), weight("shape", {onnx_dim::of(2)}, i64)}, {h("r2")}),
        op_node("MatMul", "fc2", {h("r2"), weight("W2", {onnx_dim::of(64), onnx_dim::of(1)})},
                {tensor("z", {b, onnx_dim::of(1)})}),
        op_node("Sigmoid", "out", {tensor("z", {b, onnx_dim::of(1)})}, {g.outputs[0]}),
    };
    return g;
}

double flops_at(const model& m, std::int64_t batch) {
    double total = 0;
    for (const perfcast::node& n : m.nodes) {
        if (n.kind == op_kind::transfer) continue;
        total += instantiate(n, batch).flops().in(units::flop);
    }
    return total;
}

std::string error_of(const io::onnx_graph& g) {
    try {
        (void)io::model_of(g);
    } catch (const io::onnx_import_error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("linear_dim: a x B + c from the probe batches, and nothing else") {
    // Probes 2, 3, 5: B*26 takes 52, 78, 130; 8 stays 8; B+1 takes 3, 4, 6.
    const auto d = io::linear_dim({52, 78, 130});
    REQUIRE(d.has_value());
    CHECK(d->per_batch == 26);
    CHECK(d->fixed == 0);
    const auto f = io::linear_dim({8, 8, 8});
    REQUIRE(f.has_value());
    CHECK(f->per_batch == 0);
    CHECK(f->fixed == 8);
    const auto s = io::linear_dim({3, 4, 6});
    REQUIRE(s.has_value());
    CHECK(s->per_batch == 1);
    CHECK(s->fixed == 1);
    // B^2 (4, 9, 25) is not linear: the third probe catches it.
    CHECK_FALSE(io::linear_dim({4, 9, 25}).has_value());
}

TEST_CASE("onnx graph: a small MLP maps to transfers, matmuls, element-wise ops, counted") {
    io::onnx_import r;
    const model m = io::model_of(mlp(), &r);
    // x in, fc1 + its bias, relu, fc2, sigmoid, y out; the Reshape dropped.
    CHECK(r.lines == 7);
    REQUIRE(m.nodes.size() == 7);
    CHECK(m.name == "mlp");
    CHECK(m.nodes[0].kind == op_kind::transfer);
    CHECK(m.nodes[1].kind == op_kind::matmul);
    CHECK(m.nodes[2].kind == op_kind::elementwise);
    CHECK(m.nodes[6].kind == op_kind::transfer);
    CHECK(r.dropped.at("Reshape") == 1);
    CHECK(r.mapped.at("Gemm") == 1);
    CHECK(r.mapped.at("MatMul") == 1);
    CHECK(r.generic.empty());
    // Every op line names its ONNX node in a comment.
    CHECK(r.text.find("matmul B,13;13,64 fp32 name=fc1  # onnx Gemm 'fc1'") != std::string::npos);
    CHECK(r.text.find("transfer B,1 fp32 dir=out name=y") != std::string::npos);
    // FLOPs at batch 8, by hand: the matmuls 2*8*13*64 + 2*8*64*1; the bias add and the ReLU
    // one operation per element (8*64 each); the sigmoid 4 per element (8*1). Exact: integers.
    const double by_hand = 2.0 * 8 * 13 * 64 + 2.0 * 8 * 64 * 1 + 8 * 64 + 8 * 64 + 4.0 * 8;
    CHECK(flops_at(m, 8) == by_hand);
}

TEST_CASE("onnx graph: a Reshape to the exported batch is said, not passed over") {
    // The MLP's Reshape written as torch.onnx writes x.view(64, 64) at batch 64: its output no
    // longer follows the batch, nor does fc2 after it.
    io::onnx_graph g = mlp();
    const std::vector<onnx_dim> pinned{onnx_dim::of(64), onnx_dim::of(64)};
    g.nodes[2].outputs[0].dims = pinned;
    g.nodes[3].inputs[0].dims = pinned;
    g.nodes[3].outputs[0].dims = {onnx_dim::of(64), onnx_dim::of(1)};
    g.nodes[4].inputs[0].dims = {onnx_dim::of(64), onnx_dim::of(1)};
    io::onnx_import r;
    (void)io::model_of(g, &r);
    CHECK(r.dropped.at("Reshape") == 1);
    REQUIRE(r.approximations.size() == 1);
    CHECK(r.approximations[0] ==
          "node 'view' (Reshape) pins the batch: its input B,64 grows with it, its output 64,64 "
          "does not (a shape written at the exported batch), so what follows it is read at that "
          "size at every batch; export the shape with -1 or the batch dimension (torch.onnx: "
          "x.reshape(-1, ...) and dynamic_axes)");
    CHECK(io::import_summary(r).find("pins the batch") != std::string::npos);
    // The MLP as written (B,64 to B,64) says nothing; nor does a Shape of a batched tensor (its
    // output is the input's rank, 2, at every batch).
    io::onnx_graph shaped = mlp();
    shaped.nodes.insert(shaped.nodes.begin() + 2,
                        op_node("Shape", "dims", {shaped.nodes[1].outputs[0]},
                                {tensor("d", {onnx_dim::of(2)}, i64)}));
    io::onnx_import plain;
    (void)io::model_of(shaped, &plain);
    CHECK(plain.dropped.at("Shape") == 1);
    CHECK(plain.approximations.empty());
}

TEST_CASE("onnx graph: the written text reads back to the same model") {
    io::onnx_import r;
    const model m = io::model_of(mlp(), &r);
    const model again = io::parse_model(r.text, "mlp.model");
    REQUIRE(again.nodes.size() == m.nodes.size());
    for (std::size_t i = 0; i < m.nodes.size(); ++i) CHECK(again.nodes[i] == m.nodes[i]);
}

TEST_CASE("onnx graph: ops outside the table are generic with their bytes, and listed") {
    io::onnx_graph g = mlp();
    const onnx_dim b = onnx_dim::batch();
    // A made-up op reading [B,64] fp32 and writing [B,64] fp32: 4 bytes in and out per element.
    g.nodes.insert(g.nodes.begin() + 2,
                   op_node("MadeUpOp", "odd", {tensor("r1", {b, onnx_dim::of(64)})},
                           {tensor("r1b", {b, onnx_dim::of(64)})}));
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    CHECK(r.generic.at("MadeUpOp") == 1);
    CHECK(r.text.find("generic B,64 fp32 in=4 out=4 name=odd") != std::string::npos);
    const std::string s = io::import_summary(r);
    CHECK(s.find("generic, costed by bytes (1): MadeUpOp x1") != std::string::npos);
    CHECK(s.find("dropped, layout only (1): Reshape x1") != std::string::npos);
    CHECK(m.nodes.size() == 8);
}

TEST_CASE("onnx graph: a Softmax before opset 13 normalizes every dimension from its axis") {
    const onnx_dim b = onnx_dim::batch();
    const auto d = [](std::int64_t n) { return onnx_dim::of(n); };
    io::onnx_graph g;
    g.source = "old.onnx";
    g.batch_symbol = "batch";
    g.opset = 11;
    g.inputs = {tensor("x", {b, d(8), d(32)})};
    g.outputs = {tensor("p", {b, d(8), d(32)})};
    // Default axis 1 at opset 11: the input flattened to [B, 8 x 32], one row a sample; the
    // last axis in memory, so no approximation. At opset 13 the same node is axis -1: B x 8 rows.
    g.nodes = {op_node("Softmax", "sm", {g.inputs[0]}, {g.outputs[0]})};
    io::onnx_import r;
    (void)io::model_of(g, &r);
    CHECK(r.text.find("softmax B,256 fp32 name=sm") != std::string::npos);
    CHECK(r.approximations.empty());
    g.opset = 13;
    io::onnx_import r13;
    (void)io::model_of(g, &r13);
    CHECK(r13.text.find("softmax B*8,32 fp32 name=sm") != std::string::npos);
    CHECK(r13.approximations.empty());
    // Axis 1 at opset 13 over [B, 8, 1]: only a 1 after it, still the last axis in memory.
    g.inputs = {tensor("x", {b, d(8), d(1)})};
    g.outputs = {tensor("p", {b, d(8), d(1)})};
    g.nodes = {op_node("Softmax", "sm", {g.inputs[0]}, {g.outputs[0]}, {{"axis", {1}, 0, {}}})};
    io::onnx_import one;
    (void)io::model_of(g, &one);
    CHECK(one.text.find("softmax B,8 fp32 name=sm") != std::string::npos);
    CHECK(one.approximations.empty());
}

TEST_CASE("onnx graph: RMSNormalization and ONNX Runtime's fused norms are one norm line each") {
    const onnx_dim b = onnx_dim::batch();
    const auto d = [](std::int64_t n) { return onnx_dim::of(n); };
    const onnx_tensor x = tensor("x", {b, d(16), d(64)});
    const onnx_tensor gamma = weight("gamma", {d(64)});
    const auto ort = [](onnx_node n) {
        n.domain = "com.microsoft";
        return n;
    };
    io::onnx_graph g;
    g.source = "norms.onnx";
    g.batch_symbol = "batch";
    g.opset = 23;
    g.inputs = {x, tensor("skip", {b, d(16), d(64)})};
    g.outputs = {tensor("y5", {b, d(16), d(64)})};
    g.nodes = {
        op_node("RMSNormalization", "rms", {x, gamma}, {tensor("y1", {b, d(16), d(64)})}),
        ort(op_node("SimplifiedLayerNormalization", "simplified", {x, gamma},
                    {tensor("y2", {b, d(16), d(64)})})),
        ort(op_node("SkipLayerNormalization", "skip_ln", {x, g.inputs[1], gamma, gamma},
                    {tensor("y3", {b, d(16), d(64)})})),
        ort(op_node("SkipSimplifiedLayerNormalization", "skip_rms", {x, g.inputs[1], gamma},
                    {tensor("y4", {b, d(16), d(64)})})),
        // Another of ONNX Runtime's ops: not mapped, costed by its bytes.
        ort(op_node("FastGelu", "gelu", {x}, {tensor("y5", {b, d(16), d(64)})})),
    };
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    const auto has = [&](std::string_view line) { return r.text.find(line) != std::string::npos; };
    // The rows are every dimension before the last (B x 16), the width the last (64); the RMS
    // forms 6 operations an element, the layer norm 8, a Skip form one more (the add) and the
    // skip as a second full-size input.
    CHECK(has("norm B*16,64 fp32 ops=6 reduce=1 name=rms"));
    CHECK(has("norm B*16,64 fp32 ops=6 reduce=1 name=simplified"));
    CHECK(has("norm B*16,64 fp32 ops=9 inputs=2 reduce=1 name=skip_ln"));
    CHECK(has("norm B*16,64 fp32 ops=7 inputs=2 reduce=1 name=skip_rms"));
    CHECK(r.mapped.at("SkipLayerNormalization") == 1);
    CHECK(r.generic.at("FastGelu") == 1);
    // At batch 2: 32 rows of 64, reading the input and the skip (2 x 32 x 64 elements).
    std::vector<op> norms;
    for (const node& n : m.nodes)
        if (n.kind == op_kind::rowwise) norms.push_back(instantiate(n, 2));
    REQUIRE(norms.size() == 4);
    CHECK(norms[2] == rowwise(32, 64, dtype::fp32,
                              {.ops_per_element = layer_norm_ops_per_element + 1,
                               .read_elements = 2 * 32 * 64,
                               .row_threads = 64}));
    CHECK(norms[0] == rowwise(32, 64, dtype::fp32,
                              {.ops_per_element = rms_norm_ops_per_element, .row_threads = 64}));
}

TEST_CASE("onnx graph: softmax, layer norm, gather, concat, topk, tile, cast, transpose") {
    const onnx_dim b = onnx_dim::batch();
    const auto d = [](std::int64_t n) { return onnx_dim::of(n); };
    io::onnx_graph g;
    g.source = "ops.onnx";
    g.batch_symbol = "batch";
    g.opset = 17;
    g.inputs = {tensor("ids", {b, d(26)}, i64), tensor("q", {b, d(8), d(32)})};
    g.outputs = {tensor("top", {b, d(10)})};
    g.nodes = {
        op_node("Gather", "emb", {weight("table", {d(1000), d(32)}), g.inputs[0]},
                {tensor("e", {b, d(26), d(32)})}),
        op_node("Softmax", "sm", {g.inputs[1]}, {tensor("p", {b, d(8), d(32)})}),
        op_node("LayerNormalization", "ln", {tensor("p", {b, d(8), d(32)})},
                {tensor("l", {b, d(8), d(32)})}),
        op_node("Concat", "cat", {tensor("e", {b, d(26), d(32)}), tensor("l", {b, d(8), d(32)})},
                {tensor("c", {b, d(34), d(32)})}, {{"axis", {1}, 0, {}}}),
        op_node("Transpose", "tr", {tensor("c", {b, d(34), d(32)})},
                {tensor("t", {b, d(32), d(34)})}, {{"perm", {0, 2, 1}, 0, {}}}),
        op_node("Tile", "tile", {weight("w", {d(1), d(300)}), weight("reps", {d(2)}, i64)},
                {tensor("tt", {onnx_dim::batch(8), d(300)})}),
        op_node("Cast", "cast", {tensor("tt", {onnx_dim::batch(8), d(300)})},
                {tensor("tc", {onnx_dim::batch(8), d(300)}, 10)}),
        op_node("TopK", "topk",
                {tensor("tt", {onnx_dim::batch(8), d(300)}), weight("k", {d(1)}, i64)},
                {tensor("top", {onnx_dim::batch(8), d(10)}),
                 tensor("topi", {onnx_dim::batch(8), d(10)}, i64)}),
        op_node("ReduceSum", "rs", {tensor("c", {b, d(34), d(32)})}, {tensor("s", {b, d(32)})}),
    };
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    const std::string& t = r.text;
    CHECK(t.find("gather B*26;1000,32 fp32 index=int64 name=emb") != std::string::npos);
    CHECK(t.find("softmax B*8,32 fp32 name=sm") != std::string::npos);
    CHECK(t.find("norm B*8,32 fp32 ops=8 reduce=1 name=ln") != std::string::npos);
    CHECK(t.find("concat B,26,32;B,8,32 fp32 inner=1088 name=cat") != std::string::npos);
    CHECK(t.find("transpose B,34,32 fp32 name=tr") != std::string::npos);
    CHECK(t.find("tile 1,300;B*8,1 fp32 name=tile") != std::string::npos);
    CHECK(t.find("cast B*8,300 fp32 to=fp16 name=cast") != std::string::npos);
    CHECK(t.find("topk B*8,300 fp32 k=10 name=topk") != std::string::npos);
    CHECK(t.find("reduce B*32,34 fp32 name=rs") != std::string::npos);
    // Softmax and LayerNormalization are one line each: 2 inputs + 9 nodes + 1 output.
    CHECK(m.nodes.size() == 12);
    CHECK(r.approximations.empty());  // the Softmax is over the last axis
}

TEST_CASE("onnx graph: Conv of one group is the conv line; grouped ones stay generic") {
    const onnx_dim b = onnx_dim::batch();
    const auto d = [](std::int64_t n) { return onnx_dim::of(n); };
    const onnx_tensor x = tensor("x", {b, d(3), d(32), d(32)});
    const onnx_tensor y = tensor("y", {b, d(16), d(32), d(32)});
    const onnx_tensor z = tensor("z", {b, d(16), d(16), d(16)});
    const io::onnx_graph g{
        .name = "",
        .source = "conv.onnx",
        .batch_symbol = "batch",
        .opset = 17,
        .inputs = {x},
        .outputs = {z},
        .nodes = {
            // 3 -> 16 channels, 3 x 3, same padding (pads 1): Y keeps 32 x 32.
            op_node("Conv", "c1",
                    {x, weight("w1", {d(16), d(3), d(3), d(3)}), weight("b1", {d(16)})}, {y},
                    {{"pads", {1, 1, 1, 1}, 0, {}}, {"kernel_shape", {3, 3}, 0, {}}}),
            // Depthwise 3 x 3 stride 2 (group 16, W 16,1,3,3): not a one-group convolution.
            op_node("Conv", "dw", {y, weight("w2", {d(16), d(1), d(3), d(3)})}, {z},
                    {{"group", {16}, 0, {}}, {"strides", {2, 2}, 0, {}}}),
        }};
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    CHECK(r.text.find("conv B,3,32,32;16,3,3,3;B,16,32,32 fp32 name=c1") != std::string::npos);
    CHECK(r.mapped.at("Conv") == 1);
    CHECK(r.generic.at("Conv") == 1);
    // At batch 2: N x HO x WO = 2048 output pixels x 16 channels x CIN x KH x KW = 27 taps,
    // 884,736 multiply-adds, 1,769,472 FLOPs; no bias line (the kernel's epilogue adds it).
    double conv_flops = 0;
    int convs = 0;
    for (const perfcast::node& n : m.nodes) {
        if (n.kind != op_kind::conv) continue;
        ++convs;
        conv_flops += instantiate(n, 2).flops().in(units::flop);
    }
    CHECK(convs == 1);
    CHECK(conv_flops == 2.0 * 2048 * 16 * 27);
}

TEST_CASE("onnx graph: bad graphs are errors naming the file, node, field and value") {
    io::onnx_graph g = mlp();
    g.nodes[1].outputs[0].dims[1] = onnx_dim::symbolic("seq");
    std::string e = error_of(g);
    CHECK(e.find("mlp.onnx: node 'relu1' (Relu): output 'r1' dimension 1 = \"seq\"") !=
          std::string::npos);
    CHECK(e.find("dynamic dimension other than the batch") != std::string::npos);

    g = mlp();
    g.nodes[3].inputs[0].has_shape = false;
    e = error_of(g);
    CHECK(e.find("node 'fc2' (MatMul): input 'r2' shape = \"unknown\"") != std::string::npos);

    g = mlp();
    g.nodes[1].inputs[0].elem_type = 8;  // string
    e = error_of(g);
    CHECK(e.find("tensor 'h1' element type = \"8\", expected a numeric ONNX type") !=
          std::string::npos);

    g = mlp();
    g.nodes.clear();
    e = error_of(g);
    CHECK(e.find("mlp.onnx: graph nodes = 0") != std::string::npos);

    // A dimension that shrinks with the batch (B - 1 at B = 1 is 0).
    g = mlp();
    g.nodes[1].outputs[0].dims[1] = onnx_dim::batch(1, -1);
    e = error_of(g);
    CHECK(e.find("dimension a x B + c with a, c >= 0") != std::string::npos);
}

TEST_CASE("onnx graph: without a batch every line is fixed=1") {
    io::onnx_graph g;
    g.source = "fixed.onnx";
    g.inputs = {tensor("x", {onnx_dim::of(3), onnx_dim::of(4)})};
    g.outputs = {tensor("y", {onnx_dim::of(3), onnx_dim::of(4)})};
    g.nodes = {op_node("Abs", "", {g.inputs[0]}, {g.outputs[0]})};
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    CHECK(m.nodes.size() == 3);
    CHECK(r.text.find("elementwise 3,4 fp32 inputs=1 fixed=1 name=Abs_1") != std::string::npos);
    CHECK(flops_at(m, 1) == 12);  // 3 x 4 elements, one operation each: exact
    CHECK(flops_at(m, 64) == 12);
}

namespace {

/// One head-split self-attention as torch.onnx exports scaled dot-product attention without a
/// fused op: q, k, v [B,4,10,16] (graph inputs), S = q x k^T / sqrt(16) + mask, softmax over the
/// keys, P x v, the heads merged back to [B,10,64].
io::onnx_graph attention_graph() {
    const onnx_dim b = onnx_dim::batch();
    const auto d = [](std::int64_t n) { return onnx_dim::of(n); };
    const auto bhld = [&](const char* n, std::int64_t l, std::int64_t e) {
        return tensor(n, {b, d(4), d(l), d(e)});
    };
    io::onnx_graph g;
    g.name = "attn";
    g.source = "attn.onnx";
    g.batch_symbol = "batch";
    g.opset = 17;
    g.inputs = {bhld("q", 10, 16), bhld("k", 10, 16), bhld("v", 10, 16),
                tensor("mask", {b, d(1), d(1), d(10)})};
    g.outputs = {tensor("y", {b, d(10), d(64)})};
    g.nodes = {
        op_node("Transpose", "kt", {g.inputs[1]}, {bhld("k_t", 16, 10)},
                {{"perm", {0, 1, 3, 2}, 0, {}}}),
        op_node("MatMul", "qk", {g.inputs[0], bhld("k_t", 16, 10)}, {bhld("s", 10, 10)}),
        op_node("Div", "scale", {bhld("s", 10, 10), weight("sqrt_d", {})}, {bhld("s2", 10, 10)}),
        op_node("Add", "masked", {bhld("s2", 10, 10), g.inputs[3]}, {bhld("s3", 10, 10)}),
        op_node("Softmax", "sm", {bhld("s3", 10, 10)}, {bhld("p", 10, 10)},
                {{"axis", {-1}, 0, {}}}),
        op_node("Dropout", "drop", {bhld("p", 10, 10)}, {bhld("p2", 10, 10)}),
        op_node("MatMul", "pv", {bhld("p2", 10, 10), g.inputs[2]}, {bhld("o", 10, 16)}),
        op_node("Transpose", "merge", {bhld("o", 10, 16)}, {tensor("o2", {b, d(10), d(4), d(16)})},
                {{"perm", {0, 2, 1, 3}, 0, {}}}),
        op_node("Reshape", "view",
                {tensor("o2", {b, d(10), d(4), d(16)}), weight("shape", {d(3)}, i64)},
                {g.outputs[0]}),
    };
    return g;
}

double cube_flops(const model& m, std::int64_t batch) {
    double total = 0;
    for (const perfcast::node& n : m.nodes) {
        if (n.kind == op_kind::matmul || n.kind == op_kind::batch_matmul ||
            n.kind == op_kind::attention) {
            total += instantiate(n, batch).flops().in(units::flop);
        }
    }
    return total;
}

}  // namespace

TEST_CASE("onnx graph: an attention subgraph becomes one fused attention line") {
    const io::onnx_graph g = attention_graph();
    const auto found = io::find_attention(g);
    REQUIRE(found.size() == 1);
    CHECK(found[0].qk == 1);
    CHECK(found[0].softmax == 4);
    CHECK(found[0].pv == 6);
    CHECK(found[0].nodes == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});
    REQUIRE(found[0].mask.has_value());
    CHECK(*found[0].mask == 3);

    io::onnx_import r;
    const model m = io::model_of(g, &r);
    CHECK(r.attention == 1);
    CHECK(r.fused == std::map<std::string, int>{
                         {"Add", 1}, {"Div", 1}, {"Dropout", 1}, {"MatMul", 2}, {"Softmax", 1}});
    CHECK(r.text.find("attention B,4,10,16;B,4,10,16 fp32 name=sm  # onnx attention: MatMul "
                      "'qk', Softmax 'sm', MatMul 'pv' (6 nodes)") != std::string::npos);
    // The K transpose and the head merge stay their own lines; the Reshape is dropped.
    CHECK(r.text.find("name=kt") != std::string::npos);
    CHECK(r.text.find("name=merge") != std::string::npos);
    CHECK(r.dropped.at("Reshape") == 1);
    REQUIRE(r.approximations.size() == 1);
    CHECK(r.approximations[0].find("its mask (Add 'masked') is priced as every query-key pair") !=
          std::string::npos);
    const std::string s = io::import_summary(r);
    CHECK(s.find("imported: 8 model lines from 9 ONNX nodes") != std::string::npos);
    CHECK(s.find("fused into 1 attention line (6): Add x1, Div x1, Dropout x1, MatMul x2, "
                 "Softmax x1") != std::string::npos);

    // Node by node: the same two GEMMs' FLOPs, QK^T and PV at 2 x B x 4 x 10 x 10 x 16 each
    // (integers: exact), and the softmax as one softmax line.
    io::onnx_import u;
    const model unfused = io::model_of(g, &u, {.fuse_attention = false});
    CHECK(u.attention == 0);
    CHECK(u.fused.empty());
    CHECK(u.mapped.at("MatMul") == 2);
    CHECK(u.mapped.at("Softmax") == 1);
    const double by_hand = 2 * (2.0 * 8 * 4 * 10 * 10 * 16);
    CHECK(cube_flops(unfused, 8) == by_hand);
    CHECK(cube_flops(m, 8) == by_hand);
    // The fused line reads back to the same node.
    const model again = io::parse_model(r.text, "attn.model");
    REQUIRE(again.nodes.size() == m.nodes.size());
    for (std::size_t i = 0; i < m.nodes.size(); ++i) CHECK(again.nodes[i] == m.nodes[i]);
}

TEST_CASE("onnx graph: attention-like chains that are not one attention stay node by node") {
    SUBCASE("the scores are read twice (written out: no fusion)") {
        io::onnx_graph g = attention_graph();
        g.outputs.push_back(g.nodes[2].outputs[0]);  // s2 also a graph output
        CHECK(io::find_attention(g).empty());
    }
    SUBCASE("softmax over the query axis") {
        io::onnx_graph g = attention_graph();
        g.nodes[4].attributes = {{"axis", {2}, 0, {}}};
        CHECK(io::find_attention(g).empty());
    }
    SUBCASE("a value head size other than the key's") {
        io::onnx_graph g = attention_graph();
        const onnx_dim b = onnx_dim::batch();
        g.nodes[6].inputs[1].dims = {b, onnx_dim::of(4), onnx_dim::of(10), onnx_dim::of(32)};
        CHECK(io::find_attention(g).empty());
    }
    SUBCASE("an op between the softmax and P x V that is not an identity") {
        io::onnx_graph g = attention_graph();
        g.nodes[5].op_type = "Relu";
        CHECK(io::find_attention(g).empty());
        io::onnx_import r;
        (void)io::model_of(g, &r);
        CHECK(r.attention == 0);
        CHECK(r.mapped.at("Softmax") == 1);
    }
    SUBCASE("heads folded into the batch: [B*2, L, D] is batch B*2, one head") {
        io::onnx_graph g = attention_graph();
        for (io::onnx_node& n : g.nodes) {
            for (auto* ts : {&n.inputs, &n.outputs}) {
                for (onnx_tensor& t : *ts) {
                    if (t.dims.size() == 4 && t.dims[1] == onnx_dim::of(4)) {
                        t.dims = {onnx_dim::batch(2), t.dims[2], t.dims[3]};
                    }
                }
            }
        }
        const auto found = io::find_attention(g);
        REQUIRE(found.size() == 1);
        CHECK(found[0].q == std::vector<onnx_dim>{onnx_dim::batch(2), onnx_dim::of(1),
                                                  onnx_dim::of(10), onnx_dim::of(16)});
    }
}

namespace {

constexpr int u8 = 2;
constexpr int i8 = 3;
constexpr int i32 = 6;

/// An empty graph named `name` (its source `name`.onnx), opset 13, the batch `batch_symbol`.
io::onnx_graph empty_graph(const std::string& name, std::string batch_symbol = "batch") {
    io::onnx_graph g;
    g.name = name;
    g.source = name + ".onnx";
    g.batch_symbol = std::move(batch_symbol);
    g.opset = 13;
    return g;
}

/// x[B,64] -> QuantizeLinear -> DequantizeLinear -+
///                                                MatMul 'mm' -> h[B,32] -> QuantizeLinear -> hq
/// W int8 [64,32] -> DequantizeLinear ------------+
/// (the QDQ format of ONNX's quantization tools). `w_type`: the weight's element type.
io::onnx_graph qdq_graph(int w_type = i8) {
    const onnx_dim b = onnx_dim::batch();
    const auto act = [&](const char* n, int t) { return tensor(n, {b, onnx_dim::of(64)}, t); };
    const auto out = [&](const char* n, int t) { return tensor(n, {b, onnx_dim::of(32)}, t); };
    const auto w = [](const char* n, int t) {
        return weight(n, {onnx_dim::of(64), onnx_dim::of(32)}, t);
    };
    const onnx_tensor s = weight("s", {}), zp = weight("zp", {}, u8);
    io::onnx_graph g = empty_graph("qdq");
    g.inputs = {act("x", f32)};
    g.outputs = {out("hq", u8)};
    g.nodes = {
        op_node("QuantizeLinear", "x_q", {act("x", f32), s, zp}, {act("xq", u8)}),
        op_node("DequantizeLinear", "x_dq", {act("xq", u8), s, zp}, {act("xd", f32)}),
        op_node("DequantizeLinear", "w_dq", {w("wq", w_type), s}, {w("wd", f32)}),
        op_node("MatMul", "mm", {act("xd", f32), w("wd", f32)}, {out("h", f32)}),
        op_node("QuantizeLinear", "h_q", {out("h", f32), s, zp}, {out("hq", u8)}),
    };
    return g;
}

using perfcast_test::named;

bool said(const io::onnx_import& r, std::string_view what) {
    for (const std::string& a : r.approximations) {
        if (a.find(what) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("onnx graph: a GEMM between QDQ nodes is one integer GEMM") {
    io::onnx_import r;
    const model m = io::model_of(qdq_graph(), &r);
    // x in, its QuantizeLinear, the integer GEMM, hq out: the two DequantizeLinear and the
    // QuantizeLinear after the GEMM folded into it.
    CHECK(r.lines == 4);
    CHECK(r.qdq_gemms == 1);
    CHECK(r.qdq.at("DequantizeLinear") == 2);
    CHECK(r.qdq.at("QuantizeLinear") == 1);
    CHECK(r.mapped.at("MatMul") == 1);
    CHECK(r.mapped.at("QuantizeLinear") == 1);  // x_q: the input's, priced as written
    CHECK(r.text.find("matmul B,64;64,32 uint8 name=mm  # onnx MatMul 'mm': integer, folds "
                      "'x_dq', 'w_dq', 'h_q'") != std::string::npos);
    CHECK(io::import_summary(r).find("imported: 4 model lines from 5 ONNX nodes") !=
          std::string::npos);
    CHECK(io::import_summary(r).find(
              "folded into 1 integer GEMM (3): DequantizeLinear x2, QuantizeLinear x1") !=
          std::string::npos);
    CHECK(said(r, "node 'mm' (MatMul) and every other GEMM between DequantizeLinear inputs"));
    CHECK(said(r, "node 'mm' (MatMul): B (int8) priced in A's dtype (uint8)"));
    CHECK(said(r,
               "node 'x_q' (QuantizeLinear) and every other QuantizeLinear / "
               "DequantizeLinear not folded into an integer GEMM: priced as written"));
    // The same GEMM as the float one, reading and writing one byte an element.
    io::onnx_import u;
    const model f = io::model_of(qdq_graph(), &u, {.fuse_qdq = false});
    const op q = instantiate(named(m, "mm"), 8);
    const op p = instantiate(named(f, "mm"), 8);
    CHECK(q.type == dtype::uint8);
    CHECK(q.out_type == dtype::uint8);
    CHECK(p.type == dtype::fp32);
    CHECK(q.flops() == p.flops());
    CHECK(q.bytes_read.in(units::B) == 8.0 * 64 + 64.0 * 32);
    CHECK(q.bytes_written.in(units::B) == 8.0 * 32);
    CHECK(p.bytes_read.in(units::B) == 4 * (8.0 * 64 + 64.0 * 32));
    // Unfused: every node its line (x in, five nodes, hq out), said to be as written.
    CHECK(u.lines == 7);
    CHECK(u.qdq_gemms == 0);
    CHECK(u.qdq.empty());
    CHECK(perfcast_test::count(f, op_kind::elementwise) == 4);
    CHECK(said(u,
               "every other QuantizeLinear / DequantizeLinear (fuse_qdq = false, "
               "--unfused-qdq): priced as written"));
    // Unnamed nodes keep the names they have unfused (node_name's index counts folded nodes).
    io::onnx_graph unnamed = qdq_graph();
    for (onnx_node& n : unnamed.nodes) n.name.clear();
    io::onnx_import fn, un;
    const model folded = io::model_of(unnamed, &fn);
    const model written = io::model_of(unnamed, &un, {.fuse_qdq = false});
    CHECK(named(folded, "MatMul_4").kind == op_kind::matmul);
    CHECK(named(written, "MatMul_4").kind == op_kind::matmul);
    CHECK(named(folded, "QuantizeLinear_1").kind == op_kind::elementwise);
    CHECK(fn.text.find("# onnx MatMul '': integer, folds (unnamed), (unnamed), (unnamed)") !=
          std::string::npos);
}

TEST_CASE("onnx graph: QDQ nodes that something else reads are not folded") {
    const onnx_dim b = onnx_dim::batch();
    SUBCASE("a DequantizeLinear output read by another node: priced, the GEMM integer") {
        io::onnx_graph g = qdq_graph();
        const onnx_tensor xd = tensor("xd", {b, onnx_dim::of(64)});
        g.nodes.push_back(op_node("Relu", "side", {xd}, {tensor("r", {b, onnx_dim::of(64)})}));
        g.outputs.push_back(tensor("r", {b, onnx_dim::of(64)}));
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq_gemms == 1);
        CHECK(r.qdq.at("DequantizeLinear") == 1);  // w_dq only
        CHECK(named(m, "x_dq").kind == op_kind::elementwise);
        CHECK(instantiate(named(m, "mm"), 8).type == dtype::uint8);
    }
    SUBCASE("a DequantizeLinear that is a graph output: priced") {
        io::onnx_graph g = qdq_graph();
        g.outputs.push_back(tensor("xd", {b, onnx_dim::of(64)}));
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq.at("DequantizeLinear") == 1);
        CHECK(named(m, "x_dq").kind == op_kind::elementwise);
    }
    SUBCASE("the GEMM's output read twice: the QuantizeLinear priced, the GEMM writes fp32") {
        io::onnx_graph g = qdq_graph();
        g.outputs.push_back(tensor("h", {b, onnx_dim::of(32)}));
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq_gemms == 1);
        CHECK_FALSE(r.qdq.contains("QuantizeLinear"));
        const op q = instantiate(named(m, "mm"), 8);
        CHECK(q.type == dtype::uint8);
        CHECK(q.out_type == dtype::fp32);
        CHECK(named(m, "h_q").kind == op_kind::elementwise);
    }
    SUBCASE("a weight dequantized from int32: a float GEMM, every node as written") {
        io::onnx_import r;
        const model m = io::model_of(qdq_graph(i32), &r);
        CHECK(r.qdq_gemms == 0);
        CHECK(r.qdq.empty());
        CHECK(instantiate(named(m, "mm"), 8).type == dtype::fp32);
        CHECK(perfcast_test::count(m, op_kind::elementwise) == 4);
    }
    SUBCASE("a QuantizeLinear writing another dtype than A's: priced, the GEMM writes fp32") {
        io::onnx_graph g = qdq_graph();
        g.nodes[4].outputs[0].elem_type = i8;
        g.outputs[0].elem_type = i8;
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq_gemms == 1);
        CHECK_FALSE(r.qdq.contains("QuantizeLinear"));
        CHECK(instantiate(named(m, "mm"), 8).out_type == dtype::fp32);
    }
    SUBCASE("FP8 activations and weights: an FP8 GEMM, its FP8 QuantizeLinear folded") {
        constexpr int float8e4m3fn = 17;
        io::onnx_graph g = qdq_graph(float8e4m3fn);
        g.nodes[0].outputs[0].elem_type = float8e4m3fn;
        g.nodes[1].inputs[0].elem_type = float8e4m3fn;
        g.nodes[4].outputs[0].elem_type = float8e4m3fn;
        g.outputs[0].elem_type = float8e4m3fn;
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq_gemms == 1);
        CHECK(r.qdq.at("QuantizeLinear") == 1);
        const op q = instantiate(named(m, "mm"), 8);
        CHECK(q.type == dtype::fp8_e4m3);
        CHECK(q.out_type == dtype::fp8_e4m3);
    }
    SUBCASE("uint8 activations against an FP8 weight: no integer GEMM") {
        constexpr int float8e4m3fn = 17;
        io::onnx_import r;
        const model m = io::model_of(qdq_graph(float8e4m3fn), &r);
        CHECK(r.qdq_gemms == 0);
        CHECK(instantiate(named(m, "mm"), 8).type == dtype::fp32);
    }
    SUBCASE("a graph with control flow folds nothing: its subgraphs may read the tensors") {
        io::onnx_graph g = qdq_graph();
        g.nodes[0].subgraph_nodes = 2;  // as if x_q held a subgraph (an If's branches)
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq_gemms == 1);
        CHECK(r.qdq.empty());
        const op q = instantiate(named(m, "mm"), 8);
        CHECK(q.type == dtype::uint8);
        CHECK(q.out_type == dtype::fp32);
        CHECK(named(m, "x_dq").kind == op_kind::elementwise);
    }
    SUBCASE("a GEMM with one float input stays float") {
        io::onnx_graph g = qdq_graph();
        g.nodes[3].inputs[1] = weight("wf", {onnx_dim::of(64), onnx_dim::of(32)});
        g.nodes.erase(g.nodes.begin() + 2);  // w_dq
        io::onnx_import r;
        const model m = io::model_of(g, &r);
        CHECK(r.qdq_gemms == 0);
        CHECK(instantiate(named(m, "mm"), 8).type == dtype::fp32);
    }
}

TEST_CASE("onnx graph: QDQ Gemms, shared dequantized inputs and weights quantized in the graph") {
    const onnx_dim b = onnx_dim::batch();
    const auto act = [&](const char* n, int t) { return tensor(n, {b, onnx_dim::of(64)}, t); };
    const auto square = [](const char* n, int t) {  // [64, 64], written by a node
        return tensor(n, {onnx_dim::of(64), onnx_dim::of(64)}, t);
    };
    const onnx_tensor s = weight("s", {}), zp = weight("zp", {}, u8);
    const onnx_tensor bias = tensor("bd", {onnx_dim::of(64)});
    io::onnx_graph g = empty_graph("qdq_gemm");
    g.inputs = {act("xq", u8)};
    g.outputs = {act("y1", f32), act("y2", f32)};
    g.nodes = {
        // One DequantizeLinear read by two GEMMs (A of both): folded once.
        op_node("DequantizeLinear", "x_dq", {act("xq", u8), s, zp}, {act("xd", f32)}),
        // TensorRT's form: a float weight quantized in the graph, then dequantized.
        op_node("QuantizeLinear", "w_q", {weight("wf", {onnx_dim::of(64), onnx_dim::of(64)}), s},
                {square("wq", i8)}),
        op_node("DequantizeLinear", "w_dq", {square("wq", i8), s}, {square("wd", f32)}),
        // A Gemm with transB and a dequantized int32 bias (ONNX Runtime's form).
        op_node("DequantizeLinear", "b_dq", {weight("bq", {onnx_dim::of(64)}, i32), s}, {bias}),
        op_node("Gemm", "g1", {act("xd", f32), square("wd", f32), bias}, {act("y1", f32)},
                {io::onnx_attribute{"transB", {1}}}),
        op_node("MatMul", "m2", {act("xd", f32), square("wd", f32)}, {act("y2", f32)}),
    };
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    CHECK(r.qdq_gemms == 2);
    CHECK(r.qdq.at("DequantizeLinear") == 3);  // x_dq and w_dq once each, b_dq
    CHECK(r.qdq.at("QuantizeLinear") == 1);    // w_q, computed when the engine is built
    // xq in, two GEMMs, two outputs: no bias line, no line quantizing the weight.
    CHECK(r.lines == 5);
    CHECK(perfcast_test::count(m, op_kind::elementwise) == 0);
    const op g1 = instantiate(named(m, "g1"), 8);
    CHECK(g1.type == dtype::uint8);
    CHECK(g1.out_type == dtype::fp32);
    CHECK(g1.k_depth == 64);
    CHECK(g1.gemm.b.in(units::B) == 64.0 * 64);
    CHECK(r.text.find("matmul B,64;64,64 uint8 out=fp32 name=g1") != std::string::npos);
    // Unfused: the weight's quantization is a line of its own, the bias a pass.
    io::onnx_import u;
    const model f = io::model_of(g, &u, {.fuse_qdq = false});
    CHECK(perfcast_test::count(f, op_kind::elementwise) == 5);  // x_dq, w_q, w_dq, b_dq, g1's bias
    CHECK(r.text.find("# onnx Gemm 'g1': integer, folds 'x_dq', 'w_dq', 'b_dq'\n") !=
          std::string::npos);
    // The weight's QuantizeLinear stays a line when its output is read elsewhere (a graph
    // output here), or when its scale is computed (not a constant).
    io::onnx_graph seen = g;
    seen.outputs.push_back(square("wq", i8));
    io::onnx_import sr0;
    const model sm0 = io::model_of(seen, &sr0);
    CHECK_FALSE(sr0.qdq.contains("QuantizeLinear"));
    CHECK(named(sm0, "w_q").kind == op_kind::elementwise);
    io::onnx_graph computed = g;
    computed.nodes[1].inputs[1] = tensor("s_live", {});
    io::onnx_import cr;
    (void)io::model_of(computed, &cr);
    CHECK_FALSE(cr.qdq.contains("QuantizeLinear"));
    CHECK(cr.qdq.at("DequantizeLinear") == 3);
    // The same DequantizeLinear read as A and B: folded, named once in the comment.
    io::onnx_graph sq = empty_graph("square", "");
    sq.inputs = {square("aq", u8)};
    sq.outputs = {square("p", f32)};
    sq.nodes = {
        op_node("DequantizeLinear", "a_dq", {square("aq", u8), s, zp}, {square("ad", f32)}),
        op_node("MatMul", "aa", {square("ad", f32), square("ad", f32)}, {square("p", f32)}),
    };
    io::onnx_import sr;
    const model sm = io::model_of(sq, &sr);
    CHECK(sr.qdq_gemms == 1);
    CHECK(sr.qdq.at("DequantizeLinear") == 1);
    CHECK(instantiate(named(sm, "aa"), 1).type == dtype::uint8);
    CHECK(sr.text.find("# onnx MatMul 'aa': integer, folds 'a_dq'\n") != std::string::npos);
}

namespace {

/// pytorch-quantization's export of a Linear layer and its ReLU:
/// x[B,64] -> QuantizeLinear -> DequantizeLinear ----------------------------+
///                                                                           MatMul 'mm' -+
/// W f32 [32,64] -> QuantizeLinear -> DequantizeLinear -> Transpose 'w_t' ---+            |
///   hq <- QuantizeLinear 'h_q' <- Relu 'relu' <- Add 'bias' (b f32 [32]) <--------------+
io::onnx_graph linear_graph() {
    const onnx_dim b = onnx_dim::batch();
    const auto act = [&](const char* n, int t) { return tensor(n, {b, onnx_dim::of(64)}, t); };
    const auto out = [&](const char* n, int t) { return tensor(n, {b, onnx_dim::of(32)}, t); };
    const auto w = [](const char* n, int t) {  // as the layer holds it: [out, in]
        return weight(n, {onnx_dim::of(32), onnx_dim::of(64)}, t);
    };
    const auto wt = [](const char* n, int t) {
        return tensor(n, {onnx_dim::of(64), onnx_dim::of(32)}, t);
    };
    const auto ww = [](const char* n, int t) {
        return tensor(n, {onnx_dim::of(32), onnx_dim::of(64)}, t);
    };
    const onnx_tensor s = weight("s", {}), zp = weight("zp", {}, u8);
    io::onnx_graph g = empty_graph("linear");
    g.inputs = {act("x", f32)};
    g.outputs = {out("hq", u8)};
    g.nodes = {
        op_node("QuantizeLinear", "x_q", {act("x", f32), s, zp}, {act("xq", u8)}),
        op_node("DequantizeLinear", "x_dq", {act("xq", u8), s, zp}, {act("xd", f32)}),
        op_node("QuantizeLinear", "w_q", {w("wf", f32), s}, {ww("wq", i8)}),
        op_node("DequantizeLinear", "w_dq", {ww("wq", i8), s}, {ww("wd", f32)}),
        op_node("Transpose", "w_t", {ww("wd", f32)}, {wt("wdt", f32)},
                {io::onnx_attribute{"perm", {1, 0}}}),
        op_node("MatMul", "mm", {act("xd", f32), wt("wdt", f32)}, {out("h", f32)}),
        op_node("Add", "bias", {out("h", f32), weight("bb", {onnx_dim::of(32)})}, {out("hb", f32)}),
        op_node("Relu", "relu", {out("hb", f32)}, {out("hr", f32)}),
        op_node("QuantizeLinear", "h_q", {out("hr", f32), s, zp}, {out("hq", u8)}),
    };
    return g;
}

}  // namespace

TEST_CASE("onnx graph: a weight's Transpose and the bias and Relu before the QuantizeLinear fold") {
    const onnx_dim b = onnx_dim::batch();
    io::onnx_import r;
    const model m = io::model_of(linear_graph(), &r);
    // x in, x_q, the integer GEMM, hq out: w_q, both DequantizeLinear, the Transpose, the bias
    // Add, the Relu and h_q folded into it.
    CHECK(r.lines == 4);
    CHECK(r.qdq_gemms == 1);
    CHECK(r.qdq.at("DequantizeLinear") == 2);
    CHECK(r.qdq.at("QuantizeLinear") == 2);
    CHECK(r.qdq.at("Transpose") == 1);
    CHECK(r.qdq.at("Add") == 1);
    CHECK(r.qdq.at("Relu") == 1);
    CHECK(r.text.find("matmul B,64;64,32 uint8 name=mm  # onnx MatMul 'mm': integer, folds "
                      "'x_dq', 'w_dq', 'w_t', 'bias', 'relu', 'h_q'") != std::string::npos);
    // The weight read as 8-bit in the Transpose's shape, one byte an element out.
    const op q = instantiate(named(m, "mm"), 8);
    CHECK(q.type == dtype::uint8);
    CHECK(q.out_type == dtype::uint8);
    CHECK(q.k_depth == 64);
    CHECK(q.gemm.b.in(units::B) == 64.0 * 32);
    CHECK(q.bytes_written.in(units::B) == 8.0 * 32);
    // Unfused: every node its line; the Transpose moves the float weight.
    io::onnx_import u;
    const model f = io::model_of(linear_graph(), &u, {.fuse_qdq = false});
    CHECK(u.qdq.empty());
    CHECK(named(f, "w_t").kind == op_kind::transpose);
    CHECK(named(f, "relu").kind == op_kind::elementwise);

    SUBCASE("names past the comment's 80 bytes are counted, not cut") {
        io::onnx_graph g = linear_graph();
        g.nodes[1].name = "a_rather_long_dequantize_name";
        io::onnx_import lr;
        (void)io::model_of(g, &lr);
        CHECK(lr.text.find("# onnx MatMul 'mm': integer, folds 'a_rather_long_dequantize_name', "
                           "+5 more\n") != std::string::npos);
    }
    SUBCASE("a Clip in the Relu's place, a Reshape to a constant shape in the Transpose's") {
        io::onnx_graph g = linear_graph();
        g.nodes[7].op_type = "Clip";
        g.nodes[4] = op_node("Reshape", "w_r",
                             {tensor("wd", {onnx_dim::of(32), onnx_dim::of(64)}),
                              weight("shape", {onnx_dim::of(2)}, i64)},
                             {tensor("wdt", {onnx_dim::of(64), onnx_dim::of(32)})});
        io::onnx_import cr;
        (void)io::model_of(g, &cr);
        CHECK(cr.qdq_gemms == 1);
        CHECK(cr.qdq.at("Clip") == 1);
        CHECK(cr.qdq.at("Reshape") == 1);
        CHECK(cr.text.find("folds 'x_dq', 'w_dq', 'w_r', 'bias', 'relu', 'h_q'") !=
              std::string::npos);
    }
    SUBCASE("a Reshape to a computed shape: a view, folded all the same") {
        io::onnx_graph g = linear_graph();
        g.nodes[4] = op_node("Reshape", "w_r",
                             {tensor("wd", {onnx_dim::of(32), onnx_dim::of(64)}),
                              tensor("shape", {onnx_dim::of(2)}, i64)},
                             {tensor("wdt", {onnx_dim::of(64), onnx_dim::of(32)})});
        io::onnx_import cr;
        const model cm = io::model_of(g, &cr);
        CHECK(cr.qdq_gemms == 1);
        CHECK(cr.qdq.at("Reshape") == 1);
        CHECK(instantiate(named(cm, "mm"), 8).type == dtype::uint8);
    }
    SUBCASE("an activation through a Transpose: the Transpose moves its 8-bit data") {
        io::onnx_graph g = linear_graph();
        g.inputs.push_back(tensor("wlive", {onnx_dim::of(32), onnx_dim::of(64)}));
        g.nodes[2].inputs[0] = g.inputs.back();  // w_q of a graph input: not a constant
        io::onnx_import ar;
        const model am = io::model_of(g, &ar);
        CHECK(ar.qdq_gemms == 1);
        CHECK(ar.qdq.at("DequantizeLinear") == 2);
        CHECK(ar.qdq.at("QuantizeLinear") == 1);  // h_q; w_q of a live input is a pass
        CHECK_FALSE(ar.qdq.contains("Transpose"));
        const op t = instantiate(named(am, "w_t"), 8);
        CHECK(t.kind == op_kind::transpose);
        CHECK(t.type == dtype::int8);
        CHECK(t.bytes_read.in(units::B) == 32.0 * 64);
        CHECK(ar.text.find("transpose 32,64 int8 fixed=1 name=w_t  # onnx Transpose 'w_t': moves "
                           "the 8-bit input of 'w_dq'\n") != std::string::npos);
        CHECK(ar.text.find("'mm': integer, folds 'x_dq', 'w_dq', 'bias', 'relu', 'h_q'\n") !=
              std::string::npos);
        CHECK(said(ar,
                   "node 'w_t' (Transpose) and every other layout op between a "
                   "DequantizeLinear of an activation and integer GEMMs"));
        CHECK(named(am, "w_q").kind == op_kind::elementwise);
    }
    SUBCASE("the Transpose's output read elsewhere: priced with its DequantizeLinear") {
        io::onnx_graph g = linear_graph();
        g.outputs.push_back(tensor("wdt", {onnx_dim::of(64), onnx_dim::of(32)}));
        io::onnx_import tr;
        const model tm = io::model_of(g, &tr);
        CHECK(tr.qdq_gemms == 1);
        CHECK(tr.qdq.at("DequantizeLinear") == 1);  // x_dq
        CHECK_FALSE(tr.qdq.contains("Transpose"));
        CHECK(named(tm, "w_t").kind == op_kind::transpose);
        CHECK(named(tm, "w_dq").kind == op_kind::elementwise);
        CHECK(instantiate(named(tm, "mm"), 8).type == dtype::uint8);
        // The comment names what it folds only: w_dq and w_t are lines of their own.
        CHECK(tr.text.find("'mm': integer, folds 'x_dq', 'bias', 'relu', 'h_q'\n") !=
              std::string::npos);
    }
    SUBCASE("no QuantizeLinear after the Relu: the bias folded, the Relu priced, fp32 out") {
        io::onnx_graph g = linear_graph();
        g.nodes.pop_back();
        g.outputs = {tensor("hr", {b, onnx_dim::of(32)})};
        io::onnx_import nr;
        const model nm = io::model_of(g, &nr);
        CHECK(nr.qdq_gemms == 1);
        CHECK(nr.qdq.at("Add") == 1);
        CHECK_FALSE(nr.qdq.contains("Relu"));
        CHECK(instantiate(named(nm, "mm"), 8).out_type == dtype::fp32);
        CHECK(named(nm, "relu").kind == op_kind::elementwise);
        CHECK(nr.text.find("folds 'x_dq', 'w_dq', 'w_t', 'bias'\n") != std::string::npos);
        CHECK(nr.text.find("name=bias") == std::string::npos);
    }
    SUBCASE("a bias of shape [1, 32] folds; a Clip of computed bounds does not") {
        io::onnx_graph g = linear_graph();
        g.nodes[6].inputs[1] = weight("bb", {onnx_dim::of(1), onnx_dim::of(32)});
        io::onnx_import wr;
        (void)io::model_of(g, &wr);
        CHECK(wr.qdq.at("Add") == 1);
        CHECK(wr.qdq.at("Relu") == 1);
        g.nodes[7].op_type = "Clip";
        g.nodes[7].inputs.push_back(tensor("lo", {}));  // a graph input: not a constant
        g.inputs.push_back(tensor("lo", {}));
        io::onnx_import cr;
        const model cm = io::model_of(g, &cr);
        CHECK(cr.qdq.at("Add") == 1);  // the bias still folds, the GEMM writes its sum
        CHECK_FALSE(cr.qdq.contains("Clip"));
        CHECK(named(cm, "relu").kind == op_kind::elementwise);
        CHECK(instantiate(named(cm, "mm"), 8).out_type == dtype::fp32);
    }
    SUBCASE("an Add that is no bias (one value; 32 rows; after the Relu): not folded") {
        for (const int variant : {0, 1, 2}) {
            io::onnx_graph g = linear_graph();
            if (variant == 2) {
                std::swap(g.nodes[6].op_type, g.nodes[7].op_type);
                g.nodes[7].inputs.push_back(g.nodes[6].inputs[1]);
                g.nodes[6].inputs.pop_back();
            } else {
                g.nodes[6].inputs[1] = variant == 0
                                           ? weight("bb", {onnx_dim::of(1)})
                                           : weight("bb", {onnx_dim::of(32), onnx_dim::of(1)});
            }
            io::onnx_import br;
            const model bm = io::model_of(g, &br);
            CHECK(br.qdq_gemms == 1);
            CHECK_FALSE(br.qdq.contains("Add"));
            CHECK_FALSE(br.qdq.contains("Relu"));
            CHECK(br.qdq.at("QuantizeLinear") == 1);  // w_q only
            CHECK(instantiate(named(bm, "mm"), 8).out_type == dtype::fp32);
        }
    }
}

TEST_CASE("onnx graph: DLRM's interaction Z x Z^T between QDQ nodes: one DequantizeLinear, moved") {
    // zq [B,8,16] uint8 -> DequantizeLinear 'z_dq' -> zd -+-------------------- MatMul 'zz'
    //                                                     +-> Transpose 'z_t' -+  -> QuantizeLinear
    const onnx_dim b = onnx_dim::batch();
    const auto z = [&](const char* n, int t) {
        return tensor(n, {b, onnx_dim::of(8), onnx_dim::of(16)}, t);
    };
    const auto zt = [&](const char* n, int t) {
        return tensor(n, {b, onnx_dim::of(16), onnx_dim::of(8)}, t);
    };
    const auto p = [&](const char* n, int t) {
        return tensor(n, {b, onnx_dim::of(8), onnx_dim::of(8)}, t);
    };
    const onnx_tensor s = weight("s", {}), zp = weight("zp", {}, u8);
    io::onnx_graph g = empty_graph("interaction");
    g.inputs = {z("zq", u8)};
    g.outputs = {p("pq", u8)};
    g.nodes = {
        op_node("DequantizeLinear", "z_dq", {z("zq", u8), s, zp}, {z("zd", f32)}),
        op_node("Transpose", "z_t", {z("zd", f32)}, {zt("zdt", f32)},
                {io::onnx_attribute{"perm", {0, 2, 1}}}),
        op_node("MatMul", "zz", {z("zd", f32), zt("zdt", f32)}, {p("pd", f32)}),
        op_node("QuantizeLinear", "p_q", {p("pd", f32), s, zp}, {p("pq", u8)}),
    };
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    CHECK(r.qdq_gemms == 1);
    CHECK(r.qdq.at("DequantizeLinear") == 1);
    CHECK(r.qdq.at("QuantizeLinear") == 1);
    // zq in, the Transpose of the uint8 Z, the integer GEMM, pq out.
    CHECK(r.lines == 4);
    const op moved = instantiate(named(m, "z_t"), 4);
    CHECK(moved.type == dtype::uint8);
    CHECK(moved.bytes_written.in(units::B) == 4.0 * 8 * 16);
    const op zz = instantiate(named(m, "zz"), 4);
    CHECK(zz.type == dtype::uint8);
    CHECK(zz.out_type == dtype::uint8);
    CHECK(zz.flops().in(units::flop) == 2.0 * 4 * 8 * 8 * 16);
    // The DequantizeLinear also read by something else (a graph output): a line of its own,
    // the Transpose still moving the 8-bit Z (each consumer its own copy of the
    // DequantizeLinear), the GEMM integer.
    io::onnx_graph seen = g;
    seen.outputs.push_back(z("zd", f32));
    io::onnx_import sr;
    const model sm = io::model_of(seen, &sr);
    CHECK(sr.qdq_gemms == 1);
    CHECK_FALSE(sr.qdq.contains("DequantizeLinear"));
    CHECK(named(sm, "z_dq").kind == op_kind::elementwise);
    CHECK(instantiate(named(sm, "z_t"), 4).type == dtype::uint8);
    CHECK(instantiate(named(sm, "zz"), 4).type == dtype::uint8);
    // The Transpose's output read by something else: it moves the float Z, priced as written;
    // the DequantizeLinear a line too.
    io::onnx_graph shared = g;
    shared.outputs.push_back(zt("zdt", f32));
    io::onnx_import hr;
    const model hm = io::model_of(shared, &hr);
    CHECK(hr.qdq_gemms == 1);
    CHECK_FALSE(hr.qdq.contains("DequantizeLinear"));
    CHECK(instantiate(named(hm, "z_t"), 4).type == dtype::fp32);
    CHECK_FALSE(said(hr, "every other layout op between a DequantizeLinear"));
    // Control flow: nothing folds, nothing moves.
    io::onnx_graph flow = g;
    flow.nodes[3].subgraph_nodes = 1;
    io::onnx_import fr;
    const model fm = io::model_of(flow, &fr);
    CHECK(fr.qdq.empty());
    CHECK(instantiate(named(fm, "z_t"), 4).type == dtype::fp32);
    // A view of an activation (Flatten before a Gemm): no line either way, nothing said.
    io::onnx_graph flat = empty_graph("flat");
    const auto x4 = [&](const char* n, int t) {
        return tensor(n, {b, onnx_dim::of(4), onnx_dim::of(16)}, t);
    };
    const auto x64 = [&](const char* n, int t) { return tensor(n, {b, onnx_dim::of(64)}, t); };
    const auto w = [](const char* n, int t) {
        return weight(n, {onnx_dim::of(64), onnx_dim::of(8)}, t);
    };
    const onnx_tensor y = tensor("y", {b, onnx_dim::of(8)});
    flat.inputs = {x4("xq", u8)};
    flat.outputs = {y};
    flat.nodes = {
        op_node("DequantizeLinear", "x_dq", {x4("xq", u8), s, zp}, {x4("xd", f32)}),
        op_node("Flatten", "x_f", {x4("xd", f32)}, {x64("xf", f32)}),
        op_node("DequantizeLinear", "w_dq", {w("wq", u8), s, zp}, {w("wd", f32)}),
        op_node("Gemm", "fc", {x64("xf", f32), w("wd", f32)}, {y}),
    };
    io::onnx_import lr;
    const model lm = io::model_of(flat, &lr);
    CHECK(lr.qdq_gemms == 1);
    CHECK(lr.qdq.at("DequantizeLinear") == 2);
    CHECK(lr.lines == 3);  // xq in, the GEMM, y out
    CHECK(instantiate(named(lm, "fc"), 4).type == dtype::uint8);
    CHECK_FALSE(said(lr, "every other layout op between a DequantizeLinear"));
}

TEST_CASE("onnx graph: a head split between a DequantizeLinear and its GEMM moves or folds whole") {
    // qq [B,4,8,16] uint8 -> DequantizeLinear 'q_dq' ------------------------------ MatMul 's'
    // kq [B,8,64] uint8 -> DequantizeLinear 'k_dq' -> Reshape 'k_r' [B,8,4,16]         |
    //                                              -> Transpose 'k_t' [B,4,16,8] -----+
    //                                                 s [B,4,8,8] -> QuantizeLinear 's_q'
    const onnx_dim b = onnx_dim::batch();
    const auto of = [](std::initializer_list<std::int64_t> v) {
        std::vector<onnx_dim> d{onnx_dim::batch()};
        for (const std::int64_t x : v) d.push_back(onnx_dim::of(x));
        return d;
    };
    const onnx_tensor s = weight("s", {}), zp = weight("zp", {}, u8);
    const auto graph = [&](bool constant_k) {
        io::onnx_graph g = empty_graph("heads");
        const onnx_tensor kq =
            constant_k ? weight("kq", {onnx_dim::of(1), onnx_dim::of(8), onnx_dim::of(64)}, u8)
                       : tensor("kq", of({8, 64}), u8);
        g.inputs = {tensor("qq", of({4, 8, 16}), u8)};
        if (!constant_k) g.inputs.push_back(kq);
        g.outputs = {tensor("sq", of({4, 8, 8}), u8)};
        onnx_tensor kd = kq;
        kd.name = "kd";
        kd.elem_type = f32;
        kd.weight = false;
        onnx_tensor kr = tensor("kr", of({8, 4, 16}));
        onnx_tensor kt = tensor("kt", of({4, 16, 8}));
        if (constant_k) {
            kr.dims[0] = kt.dims[0] = onnx_dim::of(1);
        }
        g.nodes = {
            op_node("DequantizeLinear", "q_dq", {tensor("qq", of({4, 8, 16}), u8), s, zp},
                    {tensor("qd", of({4, 8, 16}))}),
            op_node("DequantizeLinear", "k_dq", {kq, s, zp}, {kd}),
            op_node("Reshape", "k_r", {kd, weight("shape", {onnx_dim::of(4)}, i64)}, {kr}),
            op_node("Transpose", "k_t", {kr}, {kt}, {io::onnx_attribute{"perm", {0, 2, 3, 1}}}),
            op_node("MatMul", "s", {tensor("qd", of({4, 8, 16})), kt},
                    {tensor("sd", of({4, 8, 8}))}),
            op_node("QuantizeLinear", "s_q", {tensor("sd", of({4, 8, 8})), s, zp},
                    {tensor("sq", of({4, 8, 8}), u8)}),
        };
        return g;
    };
    // K an activation: the Reshape (a view: no line) and the Transpose move the 8-bit K.
    io::onnx_import r;
    const model m = io::model_of(graph(false), &r);
    CHECK(r.qdq_gemms == 1);
    CHECK(r.qdq.at("DequantizeLinear") == 2);
    CHECK(r.qdq.at("QuantizeLinear") == 1);
    CHECK_FALSE(r.qdq.contains("Transpose"));
    const op kt = instantiate(named(m, "k_t"), 2);
    CHECK(kt.type == dtype::uint8);
    CHECK(kt.bytes_read.in(units::B) == 2.0 * 8 * 64);
    CHECK(instantiate(named(m, "s"), 2).type == dtype::uint8);
    CHECK(r.text.find("# onnx MatMul 's': integer, folds 'q_dq', 'k_dq', 's_q'\n") !=
          std::string::npos);
    CHECK(said(r, "node 'k_t' (Transpose) and every other layout op between a DequantizeLinear"));
    // K a constant: the whole chain folds with its DequantizeLinear.
    io::onnx_import cr;
    const model cm = io::model_of(graph(true), &cr);
    CHECK(cr.qdq_gemms == 1);
    CHECK(cr.qdq.at("Reshape") == 1);
    CHECK(cr.qdq.at("Transpose") == 1);
    CHECK(cr.text.find("folds 'q_dq', 'k_dq', 'k_r', 'k_t', 's_q'\n") != std::string::npos);
    CHECK(perfcast_test::count(cm, op_kind::transpose) == 0);
    // The Reshape's output read by something else too: nothing moves (the Reshape between the
    // Transpose and the DequantizeLinear is read elsewhere) and the DequantizeLinear stays.
    io::onnx_graph shared = graph(false);
    shared.outputs.push_back(tensor("kr", of({8, 4, 16})));
    io::onnx_import sr;
    const model sm = io::model_of(shared, &sr);
    CHECK(sr.qdq_gemms == 1);
    CHECK(sr.qdq.at("DequantizeLinear") == 1);  // q_dq
    CHECK(named(sm, "k_dq").kind == op_kind::elementwise);
    CHECK(instantiate(named(sm, "k_t"), 2).type == dtype::fp32);
    // The DequantizeLinear read by something else: a line of its own, the chain still moving
    // the 8-bit K.
    io::onnx_graph seen = graph(false);
    seen.outputs.push_back(tensor("kd", of({8, 64})));
    io::onnx_import er;
    const model em = io::model_of(seen, &er);
    CHECK(named(em, "k_dq").kind == op_kind::elementwise);
    CHECK(instantiate(named(em, "k_t"), 2).type == dtype::uint8);
    // Four layout ops are followed, five are not: a Squeeze / Unsqueeze pair more (as an
    // exporter may write them) leaves the GEMM float.
    const auto longer = [&](int pairs) {
        io::onnx_graph g = graph(false);
        std::string at = "kd";
        std::vector<onnx_node> extra;
        for (int i = 0; i < pairs; ++i) {
            const std::string u = "ku" + std::to_string(i), q = "kq" + std::to_string(i);
            extra.push_back(
                op_node("Unsqueeze", u, {tensor(at, of({8, 64}))},
                        {tensor(u, {b, onnx_dim::of(1), onnx_dim::of(8), onnx_dim::of(64)})}));
            extra.push_back(op_node(
                "Squeeze", q, {tensor(u, {b, onnx_dim::of(1), onnx_dim::of(8), onnx_dim::of(64)})},
                {tensor(q, of({8, 64}))}));
            at = q;
        }
        g.nodes[2].inputs[0].name = at;  // k_r reads the last Squeeze
        g.nodes.insert(g.nodes.begin() + 2, extra.begin(), extra.end());
        io::onnx_import x;
        (void)io::model_of(g, &x);
        return x.qdq_gemms;
    };
    CHECK(longer(1) == 1);  // Unsqueeze, Squeeze, Reshape, Transpose: four
    CHECK(longer(2) == 0);  // six
}

TEST_CASE("onnx graph: a Conv between QDQ nodes is an integer conv; a grouped one stays float") {
    const onnx_dim b = onnx_dim::batch();
    const auto d = [](std::int64_t n) { return onnx_dim::of(n); };
    const onnx_tensor s = weight("s", {}), zp = weight("zp", {}, u8);
    const onnx_tensor xq = tensor("xq", {b, d(3), d(32), d(32)}, u8);
    const onnx_tensor xd = tensor("xd", {b, d(3), d(32), d(32)});
    const onnx_tensor wq = weight("wq", {d(16), d(3), d(3), d(3)}, i8);
    const onnx_tensor wd = tensor("wd", {d(16), d(3), d(3), d(3)});
    const onnx_tensor bias = tensor("bd", {d(16)});
    const onnx_tensor y = tensor("y", {b, d(16), d(32), d(32)});
    io::onnx_graph g{
        .name = "",
        .source = "qconv.onnx",
        .batch_symbol = "batch",
        .opset = 17,
        .inputs = {xq},
        .outputs = {y},
        .nodes = {
            op_node("DequantizeLinear", "x_dq", {xq, s, zp}, {xd}),
            op_node("DequantizeLinear", "w_dq", {wq, s}, {wd}),
            op_node("DequantizeLinear", "b_dq", {weight("bq", {d(16)}, i32), s}, {bias}),
            op_node("Conv", "c1", {xd, wd, bias}, {y},
                    {{"pads", {1, 1, 1, 1}, 0, {}}, {"kernel_shape", {3, 3}, 0, {}}}),
        }};
    io::onnx_import r;
    const model m = io::model_of(g, &r);
    // No QuantizeLinear after it: 8-bit inputs, the float output; its int32 bias folded.
    CHECK(r.text.find("conv B,3,32,32;16,3,3,3;B,16,32,32 uint8 out=fp32 name=c1  # onnx Conv "
                      "'c1': integer, folds 'x_dq', 'w_dq', 'b_dq'") != std::string::npos);
    CHECK(said(r, "node 'c1' (Conv): B (int8) priced in A's dtype (uint8)"));
    CHECK(r.qdq_gemms == 1);
    CHECK(r.qdq.at("DequantizeLinear") == 3);
    CHECK(perfcast_test::count(m, op_kind::elementwise) == 0);
    const op c = instantiate(named(m, "c1"), 2);
    CHECK(c.type == dtype::uint8);
    CHECK(c.out_type == dtype::fp32);
    CHECK(c.bytes_written.in(units::B) == 2.0 * 16 * 32 * 32 * 4);
    CHECK(c.bytes_read.in(units::B) == 2.0 * 3 * 32 * 32 + 16.0 * 27);
    io::onnx_import u;
    const model f = io::model_of(g, &u, {.fuse_qdq = false});
    CHECK(instantiate(named(f, "c1"), 2).type == dtype::fp32);
    CHECK(c.flops() == instantiate(named(f, "c1"), 2).flops());
    // A depthwise Conv (group 3) is generic in the importer: not taken.
    io::onnx_graph dw = g;
    dw.nodes[1].inputs[0] = weight("wq", {d(3), d(1), d(3), d(3)}, i8);
    dw.nodes[1].outputs[0] = tensor("wd", {d(3), d(1), d(3), d(3)});
    dw.nodes[3].inputs[1] = dw.nodes[1].outputs[0];
    dw.nodes[3].outputs[0] = tensor("y", {b, d(3), d(32), d(32)});
    dw.outputs = {dw.nodes[3].outputs[0]};
    dw.nodes[3].attributes.push_back({"group", {3}, 0, {}});
    io::onnx_import dr;
    (void)io::model_of(dw, &dr);
    CHECK(dr.qdq_gemms == 0);
    CHECK(dr.generic.at("Conv") == 1);
}

}  // namespace test_onnx_graph
