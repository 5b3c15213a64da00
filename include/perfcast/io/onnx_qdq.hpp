// perfcast/io/onnx_qdq.hpp: GEMMs of a QDQ-quantized ONNX graph, found so that the importer
// writes each as the one integer GEMM a runtime runs.
//
// ONNX's quantization tools (onnxruntime.quantization's QDQ format, the default) and
// TensorRT's explicit quantization keep every GEMM a float MatMul or Gemm and put the integers
// around it:
//
//   Xq -> DequantizeLinear -> X' --+
//                                  MatMul | Gemm -> Y [-> QuantizeLinear -> Yq]
//   Wq -> DequantizeLinear -> W' --+
//
// A runtime that runs quantized models fuses the pattern into one integer GEMM that reads Xq and
// Wq, applies the scales in its epilogue and, with the QuantizeLinear, writes Yq (ONNX Runtime's
// QDQSelectorActionTransformer, onnxruntime/core/optimizer/qdq_transformer/selectors_actions/,
// turns DQ, DQ -> MatMul -> Q into QLinearMatMul and DQ, DQ -> MatMul into MatMulIntegerToFloat;
// TensorRT's explicit quantization runs such a GEMM in INT8). Node by node it would be two
// dequantizing passes, a float GEMM and a quantizing pass. The pattern is recognised only where it
// is unambiguous:
//  - the GEMM is a MatMul or Gemm of the default domain, not part of an attention subgraph;
//  - both of its inputs (A and B) are written by a DequantizeLinear whose own input is 8-bit
//    (int8, uint8 or an FP8): a GEMM with one float input stays float;
//  - a DequantizeLinear is fused only when every reader of its output is such a GEMM reading it
//    as A or B, and the output is not a graph output (otherwise the float tensor is written, and
//    the node is priced as written; the GEMM still reads the 8-bit input);
//  - the QuantizeLinear is fused when it is the only reader of the GEMM's output, which is not a
//    graph output; without one the GEMM writes its float output.
// Conv between QDQ nodes is left as written (the model file's conv line has no output dtype).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "../dtype.hpp"
#include "onnx_attention.hpp"
#include "onnx_types.hpp"

namespace perfcast::io {

/// One GEMM between QDQ nodes: the GEMM, the DequantizeLinear of each input, the QuantizeLinear
/// of its output where fused. Node indices of the graph.
struct onnx_qdq_match {
    std::size_t gemm = 0;
    std::array<std::size_t, 2> dequantize{};  // of A, of B
    std::optional<std::size_t> quantize;
};

/// What find_qdq found: the GEMMs in graph order, and per node of the graph whether it is a
/// DequantizeLinear or QuantizeLinear folded into one of them (no line of its own).
struct onnx_qdq {
    std::vector<onnx_qdq_match> gemms;
    std::vector<bool> folded;
};

namespace onnx_qdq_detail {

/// The DequantizeLinear (default domain) writing tensor `t` from 8-bit data, if one does.
[[nodiscard]] inline std::optional<std::size_t> dequantized_8bit(
    const onnx_graph& g, const onnx_attention_detail::graph_index& ix, std::string_view t) {
    const auto p = ix.producer.find(t);
    if (p == ix.producer.end()) return std::nullopt;
    const onnx_node& n = g.nodes[p->second];
    if (n.op_type != "DequantizeLinear" || !n.default_domain() || n.inputs.empty() ||
        n.inputs[0].name.empty() || n.outputs.empty() || n.outputs[0].name != t) {
        return std::nullopt;
    }
    const std::optional<dtype> d = dtype_of_onnx(n.inputs[0].elem_type);
    if (!d || !(*d == dtype::int8 || *d == dtype::uint8 || is_fp8(*d))) return std::nullopt;
    return p->second;
}

}  // namespace onnx_qdq_detail

/// Every GEMM of `g` between QDQ nodes (the header's comment says which), skipping the nodes
/// `taken` marks (an attention subgraph's; empty: none).
[[nodiscard]] inline onnx_qdq find_qdq(const onnx_graph& g, const std::vector<bool>& taken) {
    namespace d = onnx_qdq_detail;
    const onnx_attention_detail::graph_index ix(g);
    const auto free = [&taken](std::size_t i) { return i >= taken.size() || !taken[i]; };
    onnx_qdq r;
    r.folded.assign(g.nodes.size(), false);
    // Readers of each DequantizeLinear's output that are matched GEMMs reading it as A or B.
    std::vector<int> fused_reads(g.nodes.size(), 0);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const onnx_node& n = g.nodes[i];
        if (!free(i) || !n.default_domain() || (n.op_type != "MatMul" && n.op_type != "Gemm") ||
            n.inputs.size() < 2 || n.outputs.empty() || n.outputs[0].name.empty()) {
            continue;
        }
        const auto a = d::dequantized_8bit(g, ix, n.inputs[0].name);
        const auto b = d::dequantized_8bit(g, ix, n.inputs[1].name);
        if (!a || !b || !free(*a) || !free(*b)) continue;
        onnx_qdq_match m{i, {*a, *b}, std::nullopt};
        if (ix.internal(n.outputs[0].name)) {
            const std::size_t c = ix.consumers.find(n.outputs[0].name)->second.front();
            const onnx_node& q = g.nodes[c];
            if (q.op_type == "QuantizeLinear" && q.default_domain() && free(c) &&
                !q.inputs.empty() && q.inputs[0].name == n.outputs[0].name && !q.outputs.empty() &&
                !q.outputs[0].name.empty()) {
                m.quantize = c;
                r.folded[c] = true;
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
        const auto c = ix.consumers.find(t);
        if (c == ix.consumers.end() || ix.outputs.contains(t)) continue;
        bool all = true;
        for (const std::size_t reader : c->second) {
            const onnx_qdq_match* m = match_of[reader];
            bool as_ab = m != nullptr && (m->dequantize[0] == i || m->dequantize[1] == i);
            const onnx_node& x = g.nodes[reader];
            for (std::size_t k = 2; as_ab && k < x.inputs.size(); ++k)
                as_ab = x.inputs[k].name != t;
            all = all && as_ab;
        }
        r.folded[i] = all;
    }
    return r;
}

}  // namespace perfcast::io
