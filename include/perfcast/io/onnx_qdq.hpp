// perfcast/io/onnx_qdq.hpp: GEMMs of a QDQ-quantized ONNX graph, found so that the importer
// writes each as the one integer GEMM a runtime runs.
//
// ONNX's quantization tools (onnxruntime.quantization's QDQ format, the default) and
// TensorRT's explicit quantization keep every GEMM a float MatMul, Gemm or Conv and put the
// integers around it:
//
//   Xq -> DequantizeLinear -> X' --+
//                                  MatMul | Gemm | Conv -> Y [-> QuantizeLinear -> Yq]
//   Wq -> DequantizeLinear -> W' --+
//
// A runtime that runs quantized models fuses the pattern into one integer GEMM that reads Xq and
// Wq, adds the bias and applies the scales in its epilogue and, with the QuantizeLinear, writes
// Yq: TensorRT's explicit quantization runs such a GEMM in INT8 (FP8 on Ada and Hopper). ONNX
// Runtime's QDQSelectorActionTransformer (onnxruntime/core/optimizer/qdq_transformer/
// selectors_actions/, on its CPU and DirectML providers; its CUDA provider runs the nodes as
// written) turns DQ, DQ -> MatMul [-> Q] into QLinearMatMul or MatMulIntegerToFloat, DQ, DQ,
// DQ(bias) -> Gemm [-> Q] into com.microsoft's QGemm and DQ, DQ -> Conv -> Q into QLinearConv;
// a Conv without its Q, a Gemm with a float bias or an int8 A against a uint8 B it leaves float,
// which this importer still writes as integer GEMMs (TensorRT's reading). Node by node it would
// be two dequantizing passes, a float GEMM, a bias pass and a quantizing pass. The pattern is
// recognised only where it is unambiguous:
//  - the GEMM is a MatMul, a Gemm or a Conv (2-D, one group: the one the importer writes as a
//    `conv` line) of the default domain, not part of an attention subgraph;
//  - both of its inputs (A and B) are written by a DequantizeLinear of 8-bit data, both integer
//    (int8, uint8) or both FP8: a GEMM with one float input stays float;
//  - a DequantizeLinear is folded only when every reader of its output is such a GEMM reading it
//    as A or B, and the output is not a graph output (otherwise the float tensor is written, and
//    the node is priced as written; the GEMM still reads the 8-bit input);
//  - the QuantizeLinear is folded when it is the only reader of the GEMM's output, which is not a
//    graph output, and writes A's dtype; otherwise the GEMM writes its float output;
//  - a Gemm's bias C (a Conv's B) is added in the epilogue: no pass of its own, its bytes not
//    counted; a DequantizeLinear writing it (int32 in ONNX Runtime's format) that only the GEMM
//    reads is folded;
//  - a QuantizeLinear of initializers only (TensorRT's format: float weights quantized in the
//    graph) whose output only folded DequantizeLinear nodes read is computed once, when the
//    runtime builds its engine: folded;
//  - a graph with control flow (If, Loop, Scan) folds nothing: its subgraphs may read a tensor
//    the index does not list.
// A GEMM whose QuantizeLinear follows a Relu or Clip (ONNX Runtime drops those) writes its float
// output, the Relu and the QuantizeLinear priced as written; a weight dequantized before a
// Transpose or Reshape (DQ -> Transpose -> MatMul) leaves its GEMM float.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../dtype.hpp"
#include "onnx_types.hpp"

namespace perfcast::io {

/// One GEMM between QDQ nodes: the GEMM, the DequantizeLinear of each input, the QuantizeLinear
/// of its output and the DequantizeLinear of a Gemm's bias where folded. Node indices of the
/// graph.
struct onnx_qdq_match {
    std::size_t gemm = 0;
    std::array<std::size_t, 2> dequantize{};  // of A, of B
    std::optional<std::size_t> quantize;
    std::optional<std::size_t> bias;
};

/// What find_qdq found: the GEMMs in graph order, and per node of the graph whether it is a
/// DequantizeLinear or QuantizeLinear folded into one of them (no line of its own).
struct onnx_qdq {
    std::vector<onnx_qdq_match> gemms;
    std::vector<bool> folded;
};

namespace onnx_qdq_detail {

/// The DequantizeLinear (default domain, one output) writing tensor `t`, if one does.
[[nodiscard]] inline std::optional<std::size_t> dequantized(const onnx_graph& g,
                                                            const onnx_graph_index& ix,
                                                            std::string_view t) {
    const auto p = ix.producer.find(t);
    if (p == ix.producer.end()) return std::nullopt;
    const onnx_node& n = g.nodes[p->second];
    if (n.op_type != "DequantizeLinear" || !n.default_domain() || n.inputs.size() < 2 ||
        n.inputs[0].name.empty() || n.outputs.size() != 1 || n.outputs[0].name != t) {
        return std::nullopt;
    }
    return p->second;
}

/// Whether node `n` is a GEMM the pattern takes: a MatMul, a Gemm, or a Conv of one group on
/// 4-D X and W (what onnx_graph.hpp's mapper writes as a `conv` line; others are generic).
[[nodiscard]] inline bool gemm_like(const onnx_node& n) {
    if (n.op_type == "MatMul" || n.op_type == "Gemm") return true;
    return n.op_type == "Conv" && n.inputs.size() >= 2 && n.inputs[0].has_shape &&
           n.inputs[1].has_shape && n.inputs[0].dims.size() == 4 && n.inputs[1].dims.size() == 4 &&
           n.int_attribute("group", 1) == 1;
}

/// 1: int8 or uint8, 2: an FP8, 0: anything else (what a DequantizeLinear reads).
[[nodiscard]] inline int family_of(const onnx_tensor& t) {
    const std::optional<dtype> d = dtype_of_onnx(t.elem_type);
    if (!d) return 0;
    if (*d == dtype::int8 || *d == dtype::uint8) return 1;
    return is_fp8(*d) ? 2 : 0;
}

}  // namespace onnx_qdq_detail

/// Every GEMM of `g` between QDQ nodes (the header's comment says which), skipping the nodes
/// `taken` marks (an attention subgraph's; empty: none).
[[nodiscard]] inline onnx_qdq find_qdq(const onnx_graph& g, const std::vector<bool>& taken) {
    namespace d = onnx_qdq_detail;
    const onnx_graph_index ix(g);
    const auto unclaimed = [&taken](std::size_t i) { return i >= taken.size() || !taken[i]; };
    // Control flow: a node with subgraphs, or an If / Loop / Scan whose body is empty (which may
    // still output an outer tensor).
    bool subgraphs = false;
    for (const onnx_node& n : g.nodes) {
        subgraphs = subgraphs || n.subgraph_nodes > 0 || n.op_type == "If" || n.op_type == "Loop" ||
                    n.op_type == "Scan";
    }
    onnx_qdq r;
    r.folded.assign(g.nodes.size(), false);
    const auto fold = [&](std::size_t i) { r.folded[i] = !subgraphs; };
    // Readers of each DequantizeLinear's output that are matched GEMMs reading it as A or B.
    std::vector<int> fused_reads(g.nodes.size(), 0);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const onnx_node& n = g.nodes[i];
        if (!unclaimed(i) || !n.default_domain() || !d::gemm_like(n) || n.inputs.size() < 2 ||
            n.outputs.empty() || n.outputs[0].name.empty()) {
            continue;
        }
        const auto a = d::dequantized(g, ix, n.inputs[0].name);
        const auto b = d::dequantized(g, ix, n.inputs[1].name);
        if (!a || !b || !unclaimed(*a) || !unclaimed(*b)) continue;
        const int family = d::family_of(g.nodes[*a].inputs[0]);
        if (family == 0 || d::family_of(g.nodes[*b].inputs[0]) != family) continue;
        onnx_qdq_match m{i, {*a, *b}, std::nullopt, std::nullopt};
        const std::string& y = n.outputs[0].name;
        if (!subgraphs && ix.internal(y)) {
            const std::size_t c = ix.consumers.find(y)->second.front();
            const onnx_node& q = g.nodes[c];
            if (q.op_type == "QuantizeLinear" && q.default_domain() && unclaimed(c) &&
                !q.inputs.empty() && q.inputs[0].name == y && q.outputs.size() == 1 &&
                !q.outputs[0].name.empty() &&
                q.outputs[0].elem_type == g.nodes[*a].inputs[0].elem_type) {
                m.quantize = c;
                fold(c);
            }
        }
        if (n.op_type != "MatMul" && n.inputs.size() > 2 && !n.inputs[2].name.empty()) {
            const auto c = d::dequantized(g, ix, n.inputs[2].name);
            if (c && !subgraphs && unclaimed(*c) && *c != *a && *c != *b &&
                ix.internal(n.inputs[2].name)) {
                m.bias = *c;
                fold(*c);
            }
        }
        ++fused_reads[*a];
        if (*b != *a) ++fused_reads[*b];
        r.gemms.push_back(m);
    }
    // A DequantizeLinear folds when every reader is a matched GEMM reading it as A or B only
    // (not also as a Gemm's bias C).
    std::vector<const onnx_qdq_match*> match_of(g.nodes.size(), nullptr);
    for (const onnx_qdq_match& m : r.gemms) match_of[m.gemm] = &m;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (fused_reads[i] == 0) continue;
        const std::string_view t = g.nodes[i].outputs[0].name;
        const bool as_ab = ix.read_only_by(t, [&](std::size_t reader) {
            const onnx_qdq_match* m = match_of[reader];
            if (m == nullptr || (m->dequantize[0] != i && m->dequantize[1] != i)) return false;
            const std::vector<onnx_tensor>& in = g.nodes[reader].inputs;
            return std::none_of(in.begin() + 2, in.end(),
                                [&t](const onnx_tensor& x) { return x.name == t; });
        });
        if (as_ab) fold(i);
    }
    // A QuantizeLinear of initializers only (the weight, its scale and zero point: a constant)
    // whose output only folded DequantizeLinear nodes read: computed when the engine is built.
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const onnx_node& n = g.nodes[i];
        if (n.op_type != "QuantizeLinear" || !n.default_domain() || !unclaimed(i) ||
            n.inputs.empty() || n.outputs.size() != 1 || n.outputs[0].name.empty() ||
            !std::all_of(n.inputs.begin(), n.inputs.end(),
                         [](const onnx_tensor& x) { return x.name.empty() || x.weight; })) {
            continue;
        }
        const std::string_view t = n.outputs[0].name;
        const bool constant_weight = ix.read_only_by(t, [&](std::size_t reader) {
            const onnx_node& x = g.nodes[reader];
            return r.folded[reader] && x.op_type == "DequantizeLinear" && x.inputs[0].name == t;
        });
        if (constant_weight) fold(i);
    }
    return r;
}

}  // namespace perfcast::io
