// perfcast/io/onnx_attention.hpp: attention-shaped subgraphs of an ONNX graph, found so that the
// importer writes each as one fused `attention` line (op.hpp's attention()).
//
// A model exported without a fused attention op (opset < 23, tf2onnx, torch.onnx's
// scaled_dot_product_attention before opset 23) spells it out as
//
//   S = MatMul(Q, K^T) -> [Mul | Div by the scale, Add | Sub | Where of a mask, Cast]*
//     -> Softmax over the last axis -> [Dropout | Identity | Cast]* -> O = MatMul(S', V)
//
// (the scaled dot-product attention of Vaswani et al. 2017, "Attention Is All You Need", eq. 1).
// A graph compiler for the NPU or the GPU runs such a chain as one kernel (FlashAttention, Ascend
// FlashAttentionScore) that never writes the score matrix out; node by node it would be two
// GEMMs and a softmax kernel over Lq x Lk scores per head. The chain is recognised only when
// it is unambiguous:
//  - every tensor inside it has exactly one consumer and is not a graph output (a score matrix
//    that something else reads must be written out: no fusion);
//  - Q is [..., Lq, D], K^T [..., D, Lk], V [..., Lk, D], with the same leading dimensions
//    (batch, heads) in all three, D and the lengths fixed, the value head size equal to D;
//  - the Softmax is over the last axis.
// Anything else stays node by node. The K transpose and the head split / merge around the chain
// (Transpose, Reshape, Split, Concat) are not part of the match: they stay their own lines.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onnx_types.hpp"

namespace perfcast::io {

/// One attention subgraph: its node indices, and the fused op's Q and K in BNSD order (batch,
/// heads, length, head size), each dimension a x B + c.
struct onnx_attention_match {
    std::size_t qk = 0;               // MatMul(Q, K^T)
    std::size_t softmax = 0;          // the Softmax
    std::size_t pv = 0;               // MatMul(P, V): where the attention line is written
    std::vector<std::size_t> nodes;   // every node of the chain, qk and pv included, sorted
    std::optional<std::size_t> mask;  // the first Add / Sub / Where on the scores, if any
    std::vector<onnx_dim> q;          // batch, heads, Lq, D
    std::vector<onnx_dim> k;          // batch, heads, Lk, D
};

namespace onnx_attention_detail {

/// Ops allowed between the first MatMul and the Softmax: the scale, a mask, a cast to fp32.
inline constexpr std::array<std::string_view, 6> score_ops{"Mul", "Div",   "Add",
                                                           "Sub", "Where", "Cast"};
/// Ops allowed between the Softmax and the second MatMul (identities at inference, a cast).
inline constexpr std::array<std::string_view, 3> passthrough_ops{"Dropout", "Identity", "Cast"};
/// Score ops deep enough for a scale, a mask and two casts, with room to spare.
inline constexpr int max_score_chain = 6;

/// The tensor's dims when every one is known, a x B + c with a, c >= 0 and at least 1 at B = 1.
[[nodiscard]] inline std::optional<std::vector<onnx_dim>> known_dims(const onnx_tensor& t) {
    if (!t.has_shape) return std::nullopt;
    for (const onnx_dim& d : t.dims) {
        if (!d.known || !d.symbol.empty() || d.per_batch < 0 || d.fixed < 0 ||
            d.per_batch + d.fixed < 1) {
            return std::nullopt;
        }
    }
    return t.dims;
}

/// From the scores tensor `t` back through score ops to the MatMul that wrote them.
[[nodiscard]] inline std::optional<std::size_t> back_to_matmul(const onnx_graph& g,
                                                               const onnx_graph_index& ix,
                                                               std::string_view t,
                                                               onnx_attention_match& m, int depth) {
    if (depth > max_score_chain || !ix.internal(t)) return std::nullopt;
    const auto p = ix.producer.find(t);
    if (p == ix.producer.end()) return std::nullopt;
    const onnx_node& n = g.nodes[p->second];
    if (!n.default_domain()) return std::nullopt;
    if (n.op_type == "MatMul") return p->second;
    if (!onnx_detail::listed(score_ops, n.op_type)) return std::nullopt;
    // The scores are one input: Where's second or third, Cast's only, the others' first or
    // second (a scale or a mask is the other one).
    const std::array<std::size_t, 2> candidates =
        n.op_type == "Where" ? std::array<std::size_t, 2>{1, 2} : std::array<std::size_t, 2>{0, 1};
    const std::size_t tried = n.op_type == "Cast" ? 1 : 2;
    for (std::size_t c = 0; c < tried; ++c) {
        const std::size_t i = candidates[c];
        if (i >= n.inputs.size() || n.inputs[i].name.empty()) continue;
        const std::size_t before = m.nodes.size();
        if (auto q = back_to_matmul(g, ix, n.inputs[i].name, m, depth + 1)) {
            m.nodes.push_back(p->second);
            const bool masks = n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Where";
            if (masks && !m.mask) m.mask = p->second;
            return q;
        }
        m.nodes.resize(before);
    }
    return std::nullopt;
}

/// From the Softmax's output forward through identities to the MatMul that reads it as P.
[[nodiscard]] inline std::optional<std::size_t> forward_to_matmul(const onnx_graph& g,
                                                                  const onnx_graph_index& ix,
                                                                  std::string t,
                                                                  onnx_attention_match& m) {
    for (int step = 0; step <= max_score_chain; ++step) {
        if (!ix.internal(t)) return std::nullopt;
        const std::size_t c = ix.consumers.find(t)->second.front();
        const onnx_node& n = g.nodes[c];
        if (!n.default_domain()) return std::nullopt;
        if (n.op_type == "MatMul") {
            if (n.inputs.empty() || n.inputs[0].name != t) return std::nullopt;
            return c;
        }
        if (!onnx_detail::listed(passthrough_ops, n.op_type) || n.outputs.empty())
            return std::nullopt;
        m.nodes.push_back(c);
        t = n.outputs[0].name;
    }
    return std::nullopt;
}

/// Batch and heads from the leading dimensions (at most one of them with B): [] -> 1, 1;
/// [b] -> b, 1; [..., h] -> the product of the rest, h. The one with B is the batch.
[[nodiscard]] inline std::optional<std::pair<onnx_dim, onnx_dim>> batch_heads(
    const std::vector<onnx_dim>& lead) {
    if (lead.empty()) return std::pair{onnx_dim::of(1), onnx_dim::of(1)};
    if (lead.size() == 1) return std::pair{lead[0], onnx_dim::of(1)};
    onnx_dim b = onnx_dim::of(1);
    for (std::size_t i = 0; i + 1 < lead.size(); ++i) {
        const onnx_dim& x = lead[i];
        if (x.per_batch > 0 && b.per_batch > 0) return std::nullopt;
        if (x.per_batch > 0 && x.fixed > 0) return std::nullopt;  // B + c times more: not a product
        if (b.per_batch > 0 && b.fixed > 0) return std::nullopt;
        b = x.per_batch > 0 ? onnx_dim::batch(x.per_batch * b.fixed, 0)
                            : onnx_dim::batch(b.per_batch * x.fixed, b.fixed * x.fixed);
    }
    onnx_dim h = lead.back();
    if (h.per_batch > 0) {
        if (b.per_batch > 0) return std::nullopt;
        std::swap(b, h);  // the batch written after the heads: only batch x heads is costed
    }
    return std::pair{b, h};
}

/// Q, K^T, V and the Softmax fit the attention op: fills m.q and m.k.
[[nodiscard]] inline bool shapes_fit(const onnx_graph& g, const onnx_node& qk,
                                     const onnx_node& softmax, const onnx_node& pv,
                                     onnx_attention_match& m) {
    if (qk.inputs.size() < 2 || pv.inputs.size() < 2 || softmax.inputs.empty()) return false;
    const auto q = known_dims(qk.inputs[0]);
    const auto kt = known_dims(qk.inputs[1]);
    const auto v = known_dims(pv.inputs[1]);
    const auto s = known_dims(softmax.inputs[0]);
    if (!q || !kt || !v || !s) return false;
    const std::size_t r = q->size();
    if (r < 2 || kt->size() != r || v->size() != r || s->size() != r) return false;
    // Softmax over the last axis (opset < 13: from `axis`, default 1, to the end; the last
    // axis only when axis is the last).
    std::int64_t axis = softmax.int_attribute("axis", g.opset != 0 && g.opset < 13 ? 1 : -1);
    if (axis < 0) axis += static_cast<std::int64_t>(r);
    if (axis != static_cast<std::int64_t>(r) - 1) return false;
    const onnx_dim& lq = (*q)[r - 2];
    const onnx_dim& d = (*q)[r - 1];
    const onnx_dim& lk = (*kt)[r - 1];
    if ((*kt)[r - 2] != d || (*v)[r - 2] != lk || (*v)[r - 1] != d) return false;
    if (d.per_batch != 0 || lq.per_batch != 0 || lk.per_batch != 0) return false;
    const std::vector<onnx_dim> lead(q->begin(), q->end() - 2);
    for (std::size_t i = 0; i + 2 < r; ++i) {
        if ((*kt)[i] != lead[i] || (*v)[i] != lead[i]) return false;
    }
    const auto bh = batch_heads(lead);
    if (!bh) return false;
    m.q = {bh->first, bh->second, lq, d};
    m.k = {bh->first, bh->second, lk, d};
    return true;
}

}  // namespace onnx_attention_detail

/// Every attention subgraph of `g` (the header's comment says which), in graph order.
[[nodiscard]] inline std::vector<onnx_attention_match> find_attention(const onnx_graph& g) {
    namespace d = onnx_attention_detail;
    const onnx_graph_index ix(g);
    std::vector<onnx_attention_match> found;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const onnx_node& n = g.nodes[i];
        if (n.op_type != "Softmax" || !n.default_domain() || n.inputs.empty() ||
            n.outputs.empty()) {
            continue;
        }
        onnx_attention_match m;
        m.softmax = i;
        const auto qk = d::back_to_matmul(g, ix, n.inputs[0].name, m, 0);
        if (!qk) continue;
        const auto pv = d::forward_to_matmul(g, ix, n.outputs[0].name, m);
        if (!pv) continue;
        m.qk = *qk;
        m.pv = *pv;
        if (!d::shapes_fit(g, g.nodes[m.qk], n, g.nodes[m.pv], m)) continue;
        m.nodes.push_back(m.qk);
        m.nodes.push_back(m.softmax);
        m.nodes.push_back(m.pv);
        std::sort(m.nodes.begin(), m.nodes.end());
        found.push_back(std::move(m));
    }
    return found;
}

}  // namespace perfcast::io
