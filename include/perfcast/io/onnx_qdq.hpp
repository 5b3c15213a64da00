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
//    as A or B (or a layout op, below), and the output is not a graph output (otherwise the float
//    tensor is written, and the node is priced as written; the GEMM still reads the 8-bit input);
//  - the QuantizeLinear is folded when it is the only reader of the GEMM's output (or of its
//    epilogue's, below), which is not a graph output, and writes A's dtype; otherwise the GEMM
//    writes its float output;
//  - a Gemm's bias C (a Conv's B) is added in the epilogue: no pass of its own, its bytes not
//    counted; a DequantizeLinear writing it (int32 in ONNX Runtime's format) that only the GEMM
//    reads is folded;
//  - a QuantizeLinear of initializers only (TensorRT's format: float weights quantized in the
//    graph) whose output only folded DequantizeLinear nodes read is computed once, when the
//    runtime builds its engine: folded;
//  - a graph with control flow (If, Loop, Scan) folds nothing: its subgraphs may read a tensor
//    the index does not list.
//  - a DequantizeLinear may reach the GEMM through a chain of up to max_layout_chain layout ops
//    (layout_ops: a Transpose or a view, Reshape, Squeeze, Unsqueeze, Flatten; pytorch-
//    quantization exports a Linear layer as W -> QuantizeLinear -> DequantizeLinear ->
//    Transpose -> MatMul, DLRM's interaction reads Z and its Transpose, a head split is a
//    Reshape and a Transpose): runtimes move the DequantizeLinear past them (ONNX Runtime's
//    QDQPropagationTransformer, onnxruntime/core/optimizer/qdq_transformer/qdq_propagation.h:
//    "Propagate Q backward, DQ forward", through Transpose, Reshape, Squeeze and Unsqueeze;
//    OpenVINO's low-precision TransposeTransformation and ReshapeTransformation; Flatten is a
//    Reshape), so the GEMM reads the 8-bit tensor in the layout's shape. A layout op every
//    reader of which is such a GEMM or such a layout op, of a constant (a weight), is applied
//    to the 8-bit data once, when the model loads: folded. Of an activation it runs on the 8-bit
//    data: a Transpose stays a line moving 8-bit elements (onnx_qdq::moved), a view stays none. The
//    DequantizeLinear folds when each reader of its output is a matched GEMM reading it as A
//    or B, or such a layout op; read elsewhere too, it stays a line (the runtime gives each
//    consumer its own copy: ONNX Runtime's EnsureUniqueDQForNodeUnit);
//  - between a MatMul or Gemm and its QuantizeLinear, a bias Add of a constant with one value
//    per output column ([N], [1, N], ...: the Add's output the GEMM's shape), then a Relu or a
//    Clip (its bounds constants), each the only reader of the tensor before it, are
//    the GEMM's epilogue: folded with the QuantizeLinear (TensorRT fuses them into the GEMM;
//    ONNX Runtime drops a Relu / Clip before a QuantizeLinear, its ReluQuantTransformer and
//    ClipQuantFusion in the same folder). Without a QuantizeLinear the bias Add still folds
//    (ONNX Runtime's com.microsoft MatMulIntegerToFloat takes a bias input) and the GEMM writes
//    its float sum; a Relu or Clip then stays a node priced as written.
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
    /// The layout ops (onnx_qdq_detail::layout_ops) between input k's DequantizeLinear and the
    /// GEMM, the GEMM's side first (empty: the GEMM reads the DequantizeLinear's output).
    std::array<std::vector<std::size_t>, 2> layouts{};
    /// The bias Add and the Relu / Clip between the GEMM and its QuantizeLinear, in order, folded
    /// (without a QuantizeLinear: a bias Add alone).
    std::vector<std::size_t> epilogue{};
    std::optional<std::size_t> quantize{};
    std::optional<std::size_t> bias{};

    /// The node writing the GEMM's input k (0: A, 1: B): the layout op nearest the GEMM
    /// (layouts[k].front()), else its DequantizeLinear.
    [[nodiscard]] std::size_t source(std::size_t k) const {
        return layouts[k].empty() ? dequantize[k] : layouts[k].front();
    }
};

/// What find_qdq found: the GEMMs in graph order, and per node of the graph whether it is folded
/// into one of them (no line of its own): a DequantizeLinear or QuantizeLinear, a constant's
/// layout op, an epilogue's bias Add, Relu or Clip.
struct onnx_qdq {
    std::vector<onnx_qdq_match> gemms;
    std::vector<bool> folded;
    /// Per node: for a layout op between a DequantizeLinear of a non-constant and the integer
    /// GEMMs that alone read the layout's output (or layout ops moved with it), that
    /// DequantizeLinear; the layout op then moves its 8-bit data.
    std::vector<std::optional<std::size_t>> moved;
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

/// Whether tensor `t` is a constant: an initializer, or the output of a QuantizeLinear of
/// initializers only (computed when the runtime builds its engine).
[[nodiscard]] inline bool constant(const onnx_graph& g, const onnx_graph_index& ix,
                                   const onnx_tensor& t) {
    if (t.weight) return true;
    const auto p = ix.producer.find(t.name);
    if (p == ix.producer.end()) return false;
    const onnx_node& q = g.nodes[p->second];
    return q.op_type == "QuantizeLinear" && q.default_domain() && !q.inputs.empty() &&
           std::all_of(q.inputs.begin(), q.inputs.end(),
                       [](const onnx_tensor& x) { return x.name.empty() || x.weight; });
}

/// Layout ops a DequantizeLinear commutes with: a Transpose, and views of the same bytes.
inline constexpr std::array<std::string_view, 5> layout_ops{"Transpose", "Reshape", "Squeeze",
                                                            "Unsqueeze", "Flatten"};

/// The most layout ops between a DequantizeLinear and a GEMM that find_qdq follows (a head
/// split is a Reshape and a Transpose): a bound of this importer, not of ONNX.
inline constexpr std::size_t max_layout_chain = 4;

/// The DequantizeLinear whose output reaches tensor `t`: its writer, or through a chain of at
/// most max_layout_chain layout ops (layout_ops: default domain, one output, each reading the
/// one before as its first input), set in `chain` from `t`'s writer down.
[[nodiscard]] inline std::optional<std::size_t> dequantized_through(
    const onnx_graph& g, const onnx_graph_index& ix, std::string_view t,
    std::vector<std::size_t>& chain) {
    chain.clear();
    std::string_view at = t;
    for (std::size_t depth = 0;; ++depth) {
        if (const auto d = dequantized(g, ix, at)) return d;
        const auto p = ix.producer.find(at);
        if (depth == max_layout_chain || p == ix.producer.end()) break;
        const onnx_node& l = g.nodes[p->second];
        if (std::find(layout_ops.begin(), layout_ops.end(), l.op_type) == layout_ops.end() ||
            !l.default_domain() || l.inputs.empty() || l.inputs[0].name.empty() ||
            l.outputs.size() != 1 || l.outputs[0].name != at) {
            break;
        }
        chain.push_back(p->second);
        at = l.inputs[0].name;
    }
    chain.clear();
    return std::nullopt;
}

/// Whether node `x` adds a bias to tensor `t`, the output `y` of a MatMul or Gemm: an Add of `t`
/// and a constant holding one value per column of `y` (its last dimension, known): of shape [N]
/// or [1, ..., 1, N], no longer than y's, the Add's output of y's shape (nothing broadcast
/// past it).
[[nodiscard]] inline bool bias_add(const onnx_node& x, std::string_view t, const onnx_tensor& y) {
    if (x.op_type != "Add" || x.inputs.size() != 2 || !y.has_shape || y.dims.empty() ||
        x.outputs.empty() || !x.outputs[0].has_shape || x.outputs[0].dims != y.dims) {
        return false;
    }
    const onnx_dim& n = y.dims.back();
    if (!n.known || n.per_batch != 0 || !n.symbol.empty()) return false;
    const bool first = x.inputs[0].name == t;
    if (!first && x.inputs[1].name != t) return false;
    const onnx_tensor& b = x.inputs[first ? 1 : 0];
    if (!b.weight || !b.has_shape || b.name == t || b.dims.empty() || b.dims.size() > y.dims.size())
        return false;
    const auto fixed = [](const onnx_dim& v, std::int64_t value) {
        return v.known && v.per_batch == 0 && v.symbol.empty() && v.fixed == value;
    };
    return fixed(b.dims.back(), n.fixed) &&
           std::all_of(b.dims.begin(), b.dims.end() - 1,
                       [&fixed](const onnx_dim& v) { return fixed(v, 1); });
}

/// Whether node `x` is a Relu of tensor `t`, or a Clip of it whose bounds are constants (or
/// absent).
[[nodiscard]] inline bool activation(const onnx_node& x, std::string_view t) {
    if (x.inputs[0].name != t) return false;
    if (x.op_type == "Relu") return true;
    return x.op_type == "Clip" &&
           std::all_of(x.inputs.begin() + 1, x.inputs.end(),
                       [](const onnx_tensor& v) { return v.name.empty() || v.weight; });
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
    r.moved.assign(g.nodes.size(), std::nullopt);
    const auto fold = [&](std::size_t i) { r.folded[i] = !subgraphs; };
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const onnx_node& n = g.nodes[i];
        if (!unclaimed(i) || !n.default_domain() || !d::gemm_like(n) || n.inputs.size() < 2 ||
            n.outputs.empty() || n.outputs[0].name.empty()) {
            continue;
        }
        onnx_qdq_match m{};
        m.gemm = i;
        const auto a = d::dequantized_through(g, ix, n.inputs[0].name, m.layouts[0]);
        const auto b = d::dequantized_through(g, ix, n.inputs[1].name, m.layouts[1]);
        const auto all_unclaimed = [&unclaimed](const std::vector<std::size_t>& v) {
            return std::all_of(v.begin(), v.end(), unclaimed);
        };
        if (!a || !b || !unclaimed(*a) || !unclaimed(*b) || !all_unclaimed(m.layouts[0]) ||
            !all_unclaimed(m.layouts[1])) {
            continue;
        }
        const int family = d::family_of(g.nodes[*a].inputs[0]);
        if (family == 0 || d::family_of(g.nodes[*b].inputs[0]) != family) continue;
        m.dequantize = {*a, *b};
        // The epilogue: a bias Add, then a Relu or Clip, then the QuantizeLinear, each the only
        // reader of the tensor before it; the activation folds with the QuantizeLinear only.
        std::string_view at = n.outputs[0].name;
        std::vector<std::size_t> chain;
        bool biased = false, activated = false;
        while (!subgraphs && ix.internal(at)) {
            const std::size_t c = ix.consumers.find(at)->second.front();
            const onnx_node& x = g.nodes[c];
            if (!unclaimed(c) || !x.default_domain() || x.inputs.empty() || x.outputs.size() != 1 ||
                x.outputs[0].name.empty()) {
                break;
            }
            if (x.op_type == "QuantizeLinear") {
                if (x.inputs[0].name == at &&
                    x.outputs[0].elem_type == g.nodes[*a].inputs[0].elem_type) {
                    m.quantize = c;
                }
                break;
            }
            if (!biased && !activated && n.op_type != "Conv" && d::bias_add(x, at, n.outputs[0])) {
                biased = true;
            } else if (!activated && d::activation(x, at)) {
                activated = true;
            } else {
                break;
            }
            chain.push_back(c);
            at = x.outputs[0].name;
        }
        // Before a QuantizeLinear the whole chain folds; without one a bias Add alone (ONNX
        // Runtime's MatMulIntegerToFloat takes a bias input), the GEMM writing float.
        if (m.quantize) {
            m.epilogue = std::move(chain);
            fold(*m.quantize);
        } else if (!chain.empty() && g.nodes[chain[0]].op_type == "Add") {
            m.epilogue = {chain[0]};
        }
        for (const std::size_t c : m.epilogue) fold(c);
        if (n.op_type != "MatMul" && n.inputs.size() > 2 && !n.inputs[2].name.empty()) {
            const auto c = d::dequantized(g, ix, n.inputs[2].name);
            if (c && !subgraphs && unclaimed(*c) && *c != *a && *c != *b &&
                ix.internal(n.inputs[2].name)) {
                m.bias = *c;
                fold(*c);
            }
        }
        r.gemms.push_back(std::move(m));
    }
    // The layout ops of the matched chains: the node each reads (the next layout op toward its
    // DequantizeLinear, or that DequantizeLinear).
    const std::size_t none = g.nodes.size();
    std::vector<const onnx_qdq_match*> match_of(g.nodes.size(), nullptr);
    std::vector<std::size_t> below(g.nodes.size(), none);
    std::vector<bool> reached(g.nodes.size(), false);  // DQ nodes that a matched GEMM reads
    for (const onnx_qdq_match& m : r.gemms) {
        match_of[m.gemm] = &m;
        for (std::size_t k = 0; k < 2; ++k) {
            const std::vector<std::size_t>& chain = m.layouts[k];
            for (std::size_t j = 0; j < chain.size(); ++j) {
                below[chain[j]] = j + 1 < chain.size() ? chain[j + 1] : m.dequantize[k];
            }
            reached[m.dequantize[k]] = true;
        }
    }
    // A node's output "fuses" when every reader is a matched GEMM reading it as A or B (not also
    // as a Gemm's bias C) through it as its source, or a layout op of a chain reading it whose
    // own output fuses. Readers come after their writer in a graph's order: in reverse order
    // each layout op's readers are settled before it.
    std::vector<bool> fuses(g.nodes.size(), false);
    const auto read_fused = [&](std::size_t i) {
        const std::string_view t = g.nodes[i].outputs[0].name;
        return ix.read_only_by(t, [&](std::size_t reader) {
            if (below[reader] == i) return static_cast<bool>(fuses[reader]);
            const onnx_qdq_match* m = match_of[reader];
            if (m == nullptr || (m->source(0) != i && m->source(1) != i)) return false;
            const std::vector<onnx_tensor>& in = g.nodes[reader].inputs;
            return std::none_of(in.begin() + 2, in.end(),
                                [&t](const onnx_tensor& x) { return x.name == t; });
        });
    };
    for (std::size_t i = g.nodes.size(); i-- > 0;) {
        if (below[i] != none) fuses[i] = read_fused(i);
    }
    // A DequantizeLinear folds when its output fuses. The chains above it fold too where it
    // reads a constant (the runtime lays the 8-bit constant out once), else move its 8-bit data
    // (`moved`), from each fusing layout op that reads it up (everything above a fusing one
    // fuses), whether the DequantizeLinear folds or, read elsewhere too, stays a line: a runtime
    // gives each consumer its own copy of it (ONNX Runtime's EnsureUniqueDQForNodeUnit) and
    // moves that past the layout ops.
    for (std::size_t i = 0; i < g.nodes.size() && !subgraphs; ++i) {
        if (!reached[i]) continue;
        if (read_fused(i)) fold(i);
        const bool constant_input = d::constant(g, ix, g.nodes[i].inputs[0]);
        std::vector<std::size_t> todo{i};
        while (!todo.empty()) {
            const std::size_t at = todo.back();
            todo.pop_back();
            const auto c = ix.consumers.find(g.nodes[at].outputs[0].name);
            if (c == ix.consumers.end()) continue;
            for (const std::size_t reader : c->second) {
                if (below[reader] != at || !fuses[reader] || r.folded[reader] || r.moved[reader])
                    continue;
                if (constant_input) {
                    fold(reader);
                } else {
                    r.moved[reader] = i;
                }
                todo.push_back(reader);
            }
        }
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
