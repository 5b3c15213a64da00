// perfcast/nodes.hpp: the factories of model nodes (node.hpp), the symbolic counterparts of
// op.hpp's op factories:
//
//   using perfcast::batch_symbol::B;
//   constexpr std::array model{perfcast::nodes::matmul(B, 1024, 512, perfcast::dtype::fp16),
//                              perfcast::nodes::reduce(B, 1024, perfcast::dtype::fp16)};
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "batched_shape.hpp"
#include "chip.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "node.hpp"
#include "op.hpp"
#include "op_vocabulary.hpp"

namespace perfcast {

/// Factories: the symbolic counterparts of op.hpp's op factories (same argument order).
namespace nodes {

namespace detail {
constexpr node make(op_kind k, dtype t, std::initializer_list<batched_shape> shapes,
                    std::string_view where) {
    PERFCAST_EXPECTS(shapes.size() <= node::max_shapes, where, "shapes",
                     static_cast<double>(shapes.size()), "at most 8 shapes");
    node n;
    n.kind = k;
    n.type = t;
    n.out_type = t;
    for (const batched_shape& s : shapes) n.shapes[n.shape_count++] = s;
    n.name = fixed_name(name_of(k));
    return n;
}
constexpr void expect_dim(batch_dim d, std::string_view where, std::string_view field) {
    PERFCAST_EXPECTS(d.valid(), where, field, static_cast<double>(d.per_batch + d.fixed),
                     "a dimension a x B + c with a >= 0 and a + c >= 1");
}
/// The input dimension where broadcasting `in` to `out` fails at every batch (op.hpp's
/// broadcast_fails_at: an input of higher rank, or two sizes without B that differ, the input's
/// not 1), or in.rank when none does.
[[nodiscard]] constexpr std::size_t fixed_broadcast_fails_at(const batched_shape& in,
                                                             const batched_shape& out) noexcept {
    if (in.rank > out.rank) return 0;
    const std::size_t lead = out.rank - in.rank;
    for (std::size_t i = 0; i < in.rank; ++i) {
        const batch_dim a = in[i];
        const batch_dim b = out[lead + i];
        if (!a.depends_on_batch() && !b.depends_on_batch() && a.fixed != 1 && a != b) return i;
    }
    return in.rank;
}
/// Not constexpr: the error of fixed_broadcast_fails_at's dimension `i`.
[[noreturn]] inline void broadcast_failed(std::string_view where, const batched_shape& in,
                                          const batched_shape& out, std::size_t i) {
    std::string field;
    std::string value;
    std::string expected;
    if (in.rank > out.rank) {
        field = "input rank";
        value = std::to_string(in.rank);
        expected = "at most the output's rank, ";
        expected += std::to_string(out.rank);
    } else {
        field = "input dimension ";
        field += std::to_string(i);
        value = std::to_string(in[i].fixed);
        expected = "1 or the output's ";
        expected += std::to_string(out[out.rank - in.rank + i].fixed);
    }
    expected += " (input ";
    expected += ::perfcast::detail::shape_text(in);
    expected += " to output ";
    expected += ::perfcast::detail::shape_text(out);
    expected += ')';
    ::perfcast::detail::precondition_failed(where, field, value, expected);
}
}  // namespace detail

/// batch x ([M, K] x [K, N]). With `broadcast_b` the B operand is one [K, N] shared by all.
[[nodiscard]] constexpr node batch_matmul(batch_dim batch, batch_dim m, batch_dim n, batch_dim k,
                                          dtype t, matmul_options o = {}) {
    constexpr std::string_view where = "nodes::batch_matmul";
    detail::expect_dim(batch, where, "batch");
    detail::expect_dim(m, where, "m");
    detail::expect_dim(n, where, "n");
    detail::expect_dim(k, where, "k");
    node r = detail::make(op_kind::matmul, t,
                          {batched_shape{batch, m, k},
                           o.broadcast_b ? batched_shape{k, n} : batched_shape{batch, k, n}},
                          where);
    r.broadcast_b = o.broadcast_b;
    r.out_type = o.out_type.value_or(t);
    return r;
}

/// [M, K] x [K, N].
[[nodiscard]] constexpr node matmul(batch_dim m, batch_dim n, batch_dim k, dtype t,
                                    matmul_options o = {}) {
    constexpr std::string_view where = "nodes::matmul";
    detail::expect_dim(m, where, "m");
    detail::expect_dim(n, where, "n");
    detail::expect_dim(k, where, "k");
    node r = detail::make(op_kind::matmul, t, {batched_shape{m, k}, batched_shape{k, n}}, where);
    r.broadcast_b = true;  // one weight matrix
    r.out_type = o.out_type.value_or(t);
    return r;
}

/// Matrix multiply from operand shapes: A [..., M, K] and B [..., K, N] (or [K, N] with
/// broadcast_b). The batch is the product of A's leading dimensions.
[[nodiscard]] constexpr node matmul_shapes(const batched_shape& a, const batched_shape& b, dtype t,
                                           matmul_options o = {}) {
    constexpr std::string_view where = "nodes::matmul_shapes";
    PERFCAST_EXPECTS(a.rank >= 2, where, "a.rank", static_cast<double>(a.rank),
                     "at least 2 dimensions [..., M, K]");
    PERFCAST_EXPECTS(b.rank >= 2, where, "b.rank", static_cast<double>(b.rank),
                     "at least 2 dimensions [..., K, N]");
    PERFCAST_EXPECTS(a[a.rank - 1] == b[b.rank - 2], where, "K",
                     static_cast<double>(b[b.rank - 2].fixed),
                     "B's K (second-last dimension) equal to A's K (last dimension)");
    if (!o.broadcast_b) {
        PERFCAST_EXPECTS(b.rank == 2 || b.rank == a.rank, where, "b.rank",
                         static_cast<double>(b.rank),
                         "2 (a shared [K, N]) or A's rank (one B per batch)");
        if (b.rank == a.rank) {
            for (std::size_t i = 0; i + 2 < a.rank; ++i) {
                PERFCAST_EXPECTS(a[i] == b[i] || b[i] == batch_dim{1}, where, "b batch dimension",
                                 static_cast<double>(i), "equal to A's (or 1: broadcast)");
            }
        }
    }
    if (o.broadcast_b && b.rank > 2) {
        // A shared B's own leading dimensions (per-head weights [H, K, N]) are A's last ones,
        // each B matrix shared by the batch entries before them (instantiate: b_matrices).
        PERFCAST_EXPECTS(b.rank <= a.rank, where, "b.rank", static_cast<double>(b.rank),
                         "at most A's rank with broadcast_b");
        for (std::size_t i = 0; i + 2 < b.rank; ++i) {
            const batch_dim& ad = a[a.rank - b.rank + i];
            PERFCAST_EXPECTS(b[i] == batch_dim{1} || b[i] == ad, where, "b batch dimension",
                             static_cast<double>(i),
                             "1 or A's aligned dimension (a shared B's leading dimensions are "
                             "A's last ones)");
        }
    }
    node r = detail::make(op_kind::matmul, t, {a, b}, where);
    r.broadcast_b = o.broadcast_b || b.rank == 2;
    if (!r.broadcast_b) {
        bool all_one = true;
        for (std::size_t i = 0; i + 2 < b.rank; ++i) all_one = all_one && b[i] == batch_dim{1};
        r.broadcast_b = all_one;
    }
    r.out_type = o.out_type.value_or(t);
    return r;
}

/// An elementwise op producing the elements of `s`.
[[nodiscard]] constexpr node elementwise(const batched_shape& s, dtype t,
                                         elementwise_options o = {}) {
    constexpr std::string_view where = "nodes::elementwise";
    // As a model file's line checks its keys: a node's 0 inputs would read as the default 2.
    PERFCAST_EXPECTS(o.inputs >= 1, where, "inputs", static_cast<double>(o.inputs), ">= 1");
    PERFCAST_EXPECTS(o.outputs >= 1, where, "outputs", static_cast<double>(o.outputs), ">= 1");
    PERFCAST_EXPECTS(o.inner >= 0, where, "inner", static_cast<double>(o.inner),
                     ">= 0 (0: all elements)");
    node r = detail::make(op_kind::elementwise, t, {s}, where);
    r.inputs = o.inputs;
    r.outputs = o.outputs;
    r.ops_per_element = o.ops_per_element;
    r.fp32_arithmetic = o.fp32_arithmetic;
    r.inner = o.inner;
    r.out_same_as_in = o.out_same_as_in;
    r.out_type = o.out_same_as_in ? t : o.out_type;
    return r;
}

/// A binary elementwise op between two broadcast-compatible shapes.
[[nodiscard]] constexpr node elementwise_broadcast(const batched_shape& a, const batched_shape& b,
                                                   dtype t, elementwise_options o = {}) {
    node r = elementwise(a, t, o);
    r.shapes[1] = b;
    r.shape_count = 2;
    r.inputs = 2;
    return r;
}

[[nodiscard]] constexpr node cast(const batched_shape& s, dtype from, dtype to) {
    node r = detail::make(op_kind::cast, from, {s}, "nodes::cast");
    r.out_type = to;
    r.inputs = 1;
    return r;
}

/// Reduces `rows` rows of `length` elements each.
[[nodiscard]] constexpr node reduce(batch_dim rows, batch_dim length, dtype t) {
    detail::expect_dim(rows, "nodes::reduce", "rows");
    detail::expect_dim(length, "nodes::reduce", "length");
    return detail::make(op_kind::reduce, t, {batched_shape{rows, length}}, "nodes::reduce");
}

/// Softmax of `rows` rows of `length` elements along the last axis (op.hpp softmax: one kernel).
[[nodiscard]] constexpr node softmax(batch_dim rows, batch_dim length, dtype t) {
    detail::expect_dim(rows, "nodes::softmax", "rows");
    detail::expect_dim(length, "nodes::softmax", "length");
    return detail::make(op_kind::softmax, t, {batched_shape{rows, length}}, "nodes::softmax");
}

/// Gathers `indices` rows of `row_elements` elements from a table of `table_rows` rows.
[[nodiscard]] constexpr node gather(batch_dim indices, std::int64_t row_elements,
                                    std::int64_t table_rows, dtype t, gather_options o = {}) {
    constexpr std::string_view where = "nodes::gather";
    detail::expect_dim(indices, where, "indices");
    PERFCAST_EXPECTS(row_elements >= 1, where, "row_elements", static_cast<double>(row_elements),
                     ">= 1");
    PERFCAST_EXPECTS(table_rows >= 1, where, "table_rows", static_cast<double>(table_rows), ">= 1");
    PERFCAST_EXPECTS(o.hot_fraction >= 0 && o.hot_fraction <= 1, where, "hot_fraction",
                     o.hot_fraction, "a share in [0, 1]");
    node r = detail::make(op_kind::gather, t, {batched_shape{indices}}, where);
    r.row_elements = row_elements;
    r.table_rows = table_rows;
    r.hot_fraction = o.hot_fraction;
    r.index_type = o.index_type;
    return r;
}

/// TopK over `rows` rows of `length` (of which `valid` are data; 0: all), keeping k <= valid.
[[nodiscard]] constexpr node topk(batch_dim rows, batch_dim length, std::int64_t k, dtype t,
                                  std::int64_t valid = 0) {
    constexpr std::string_view where = "nodes::topk";
    detail::expect_dim(rows, where, "rows");
    detail::expect_dim(length, where, "length");
    PERFCAST_EXPECTS(k >= 1, where, "k", static_cast<double>(k), ">= 1");
    PERFCAST_EXPECTS(valid >= 0, where, "valid", static_cast<double>(valid),
                     ">= 0 (0: the whole length)");
    if (valid > 0 && k > valid) {
        ::perfcast::detail::bound_failed(where, "k", k, "k <= valid (", valid,
                                         "): a TopK keeps k of the valid elements");
    }
    node r = detail::make(op_kind::topk, t, {batched_shape{rows, length}}, where);
    r.k = k;
    r.valid = valid;
    r.eng = is_integer(t) ? engine::aicpu : engine::vector;  // guide §8
    return r;
}

[[nodiscard]] constexpr node tile(const batched_shape& in, const batched_shape& multiples,
                                  dtype t) {
    PERFCAST_EXPECTS(in.rank == multiples.rank, "nodes::tile", "multiples",
                     static_cast<double>(multiples.rank), "one multiple per input dimension");
    return detail::make(op_kind::tile, t, {in, multiples}, "nodes::tile");
}

/// Concatenates up to 8 tensors; `inner` is the contiguous run written per row (0: the
/// innermost dimension of the first input).
[[nodiscard]] constexpr node concat(std::initializer_list<batched_shape> inputs, std::int64_t inner,
                                    dtype t) {
    constexpr std::string_view where = "nodes::concat";
    PERFCAST_EXPECTS(inputs.size() >= 1, where, "inputs", static_cast<double>(inputs.size()),
                     "at least one input");
    PERFCAST_EXPECTS(inner >= 0, where, "inner", static_cast<double>(inner), ">= 0");
    node r = detail::make(op_kind::concat, t, inputs, where);
    r.inner = inner;
    return r;
}

/// Broadcasts `in` to `out`: numpy's rules, every input dimension 1 or the output's (the shapes
/// aligned at their last dimensions). What fails at every batch is refused here; a dimension with
/// B is checked at each batch (instantiate: 2 broadcasts to B at B = 2 only).
[[nodiscard]] constexpr node broadcast(const batched_shape& in, const batched_shape& out, dtype t) {
    constexpr std::string_view where = "nodes::broadcast";
    if (const std::size_t i = detail::fixed_broadcast_fails_at(in, out); i < in.rank)
        detail::broadcast_failed(where, in, out, i);
    return detail::make(op_kind::broadcast, t, {in, out}, where);
}

[[nodiscard]] constexpr node transpose(const batched_shape& in, dtype t,
                                       bool inner_axis_moves = true) {
    node r = detail::make(op_kind::transpose, t, {in}, "nodes::transpose");
    r.inner_axis_moves = inner_axis_moves;
    return r;
}

/// Anything else, per element of `s`: flops, bytes read and written; `work_units` 0 means one
/// unit per 32-byte block of the elements.
[[nodiscard]] constexpr node generic(engine e, const batched_shape& s, dtype t,
                                     double flops_per_element, double in_bytes_per_element,
                                     double out_bytes_per_element, std::int64_t work_units = 0) {
    constexpr std::string_view where = "nodes::generic";
    PERFCAST_EXPECTS(flops_per_element >= 0 && flops_per_element < 1e15, where, "flops",
                     flops_per_element, "a value in [0, 1e15) per element");
    PERFCAST_EXPECTS(in_bytes_per_element >= 0 && in_bytes_per_element < 1e15, where, "in",
                     in_bytes_per_element, "a value in [0, 1e15) per element");
    PERFCAST_EXPECTS(out_bytes_per_element >= 0 && out_bytes_per_element < 1e15, where, "out",
                     out_bytes_per_element, "a value in [0, 1e15) per element");
    PERFCAST_EXPECTS(work_units >= 0, where, "work_units", static_cast<double>(work_units),
                     ">= 0 (0: one per 32-byte block)");
    node r = detail::make(op_kind::generic, t, {s}, where);
    r.eng = e;
    r.flops_per_element = flops_per_element;
    r.in_bytes_per_element = in_bytes_per_element;
    r.out_bytes_per_element = out_bytes_per_element;
    r.work_units = work_units;
    return r;
}

/// A copy of the elements of `s` over the host link (inputs to the device, outputs back).
[[nodiscard]] constexpr node transfer(const batched_shape& s, dtype t,
                                      transfer_dir d = transfer_dir::to_device) {
    node r = detail::make(op_kind::transfer, t, {s}, "nodes::transfer");
    r.direction = d;
    return r;
}

/// Options of a row-parallel node (nodes::rowwise): the keys of a model file's `rowwise` /
/// `norm` line (docs/model-file.md).
struct rowwise_node_options {
    double ops_per_element = 1;                // ops=: vector operations per output element
    int inputs = 1;                            // inputs=: full-size inputs read
    bool fp32_arithmetic = false;              // fp32=: 16-bit data widened to fp32 inside
    element_walk walk = element_walk::vector;  // walk=: how the kernel walks a row's elements
    bool row_reduction = false;  // reduce=: each row reduced across one GPU thread block (a norm)
};

/// A row-parallel op (RmsNorm, LayerNorm, rope, SwiGlu) over the rows of `in` [ROWS.., WIDTH],
/// or, with `out` [ROWS.., OUT_WIDTH], writing rows of another width (SwiGlu halves it).
[[nodiscard]] constexpr node rowwise(const batched_shape& in, dtype t,
                                     rowwise_node_options o = {}) {
    constexpr std::string_view where = "nodes::rowwise";
    PERFCAST_EXPECTS(o.ops_per_element > 0 && o.ops_per_element < 1e9, where, "ops_per_element",
                     o.ops_per_element, "a finite value > 0");
    PERFCAST_EXPECTS(o.inputs >= 1, where, "inputs", static_cast<double>(o.inputs), ">= 1");
    node r = detail::make(op_kind::rowwise, t, {in}, where);
    r.ops_per_element = o.ops_per_element;
    if (o.inputs > 1) r.inputs = o.inputs;  // one input: the model file's default (0)
    r.fp32_arithmetic = o.fp32_arithmetic;
    r.walk = o.walk;
    r.row_reduction = o.row_reduction;
    return r;
}
[[nodiscard]] constexpr node rowwise(const batched_shape& in, const batched_shape& out, dtype t,
                                     rowwise_node_options o = {}) {
    node r = rowwise(in, t, o);
    r.shapes[r.shape_count++] = out;
    return r;
}

/// A norm over the rows of `in` [ROWS.., WIDTH]: a row-parallel op whose rows are each reduced
/// across one GPU thread block (nodes::rowwise with row_reduction), `ops_per_element` operations
/// an element (layer_norm_ops_per_element by default, the profile mapping's LayerNorm).
[[nodiscard]] constexpr node norm(const batched_shape& in, dtype t,
                                  double ops_per_element = layer_norm_ops_per_element) {
    return rowwise(in, t, {.ops_per_element = ops_per_element, .row_reduction = true});
}

/// Options of an attention node: the keys of a model file's `attention` line.
struct attention_node_options {
    bool causal = false;    // causal=: keep only the causal query-key pairs
    bool backward = false;  // backward=: the backward pass (FlashAttentionScoreGrad)
    attention_kernel kernel = attention_kernel::flash_attention;  // kernel=: its blocks' layout
    std::int64_t kv_chunk_min = flashinfer_kv_chunk_min;  // kv_chunk=: FlashInfer's fewest keys
};

/// Fused attention (op.hpp attention) of Q `q` [B, Nq, Sq, D] over K `k` [B, Nkv, Skv, D].
[[nodiscard]] constexpr node attention(const batched_shape& q, const batched_shape& k, dtype t,
                                       attention_node_options o = {}) {
    constexpr std::string_view where = "nodes::attention";
    PERFCAST_EXPECTS(q.rank == 4 && k.rank == 4, where, "rank",
                     static_cast<double>(q.rank == 4 ? k.rank : q.rank),
                     "Q B,Nq,Sq,D and K B,Nkv,Skv,D (rank 4)");
    node r = detail::make(op_kind::attention, t, {q, k}, where);
    r.causal = o.causal;
    r.backward = o.backward;
    r.attn_kernel = o.kernel;
    r.kv_chunk_min = o.kv_chunk_min;
    return r;
}

/// Grouped GEMM (MoE) of `x` [T, K] tokens over `w` [E, K, N] experts, the tokens spread evenly.
[[nodiscard]] constexpr node grouped_matmul(const batched_shape& x, const batched_shape& w,
                                            dtype t) {
    constexpr std::string_view where = "nodes::grouped_matmul";
    PERFCAST_EXPECTS(x.rank == 2 && w.rank == 3, where, "rank",
                     static_cast<double>(x.rank == 2 ? w.rank : x.rank), "X T,K and W E,K,N");
    return detail::make(op_kind::grouped_matmul, t, {x, w}, where);
}

/// A fill (or memset) writing the elements of `s`, reading nothing.
[[nodiscard]] constexpr node fill(const batched_shape& s, dtype t) {
    return detail::make(op_kind::fill, t, {s}, "nodes::fill");
}

/// A 2-D convolution of `x` [N, CIN, H, W] by `w` [COUT, CIN, KH, KW], stride 1 and "same"
/// padding; with `y` [N, COUT, HO, WO] another output size (strides and padding through it).
[[nodiscard]] constexpr node conv(const batched_shape& x, const batched_shape& w, dtype t) {
    constexpr std::string_view where = "nodes::conv";
    PERFCAST_EXPECTS(x.rank == 4 && w.rank == 4, where, "rank",
                     static_cast<double>(x.rank == 4 ? w.rank : x.rank),
                     "X N,CIN,H,W and W COUT,CIN,KH,KW (rank 4)");
    return detail::make(op_kind::conv, t, {x, w}, where);
}
[[nodiscard]] constexpr node conv(const batched_shape& x, const batched_shape& w,
                                  const batched_shape& y, dtype t) {
    node r = conv(x, w, t);
    r.shapes[r.shape_count++] = y;
    return r;
}

/// A node of `row`'s kind with `shapes` and dtype `t` and nothing else set: how the model file
/// and `perfcast op --line` make a node of a kind without keys of its own (an extension's). For
/// a kind outside op_kinds the node points at `row`, which must outlive it (a namespace-scope
/// constexpr vocabulary does).
[[nodiscard]] constexpr node of_row(const op_row& row, std::span<const batched_shape> shapes,
                                    dtype t) {
    constexpr std::string_view where = "nodes::of_row";
    PERFCAST_EXPECTS(shapes.size() <= node::max_shapes, where, "shapes",
                     static_cast<double>(shapes.size()), "at most 8 shapes");
    node n;
    n.kind = row.value;
    n.row = is_library_kind(row.value) ? nullptr : &row;
    n.type = t;
    n.out_type = t;
    for (const batched_shape& s : shapes) n.shapes[n.shape_count++] = s;
    n.name = fixed_name(row.name);
    return n;
}

}  // namespace nodes

}  // namespace perfcast
