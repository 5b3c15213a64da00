// perfcast/node.hpp: one step of a model, sized by the batch, and the op vocabulary.
//
// A node stores its shapes symbolically (batched_shape.hpp) and `instantiate(node, batch)` builds
// the op.hpp op for one batch. Nodes also say how they reach the device:
//   dispatch::graph      part of a sunk (static, compiled) graph: no per-op host work;
//   dispatch::host       launched by the host one op at a time (single-op mode, guide §3);
//   dispatch::host_sync  as host, and the host must read this op's output shape before it can
//                        prepare the next op (dynamic shape, guide §7: Where -> task_wait).
// and transfers over the host link (model inputs and outputs, guide §4) are nodes too.
// Build nodes with the factories of nodes.hpp.
//
// THE OP VOCABULARY. `op_kinds` has one row per op kind: its name, the words a model file writes
// it with, its engine, its traits, its shapes in a model file, the profiler op types that map to
// it, and its cost function (the op of a node at one batch). Everything else derives from it:
// name_of(op_kind), engine_of(node), instantiate(), the model-file reader (io/model_file.hpp),
// the profile mapping (profile/ops.hpp) and `perfcast op --line`. Adding a kind is its enumerator
// (op.hpp), its row and cost function here, and its tests: docs/contributing.md.
//
// An extension (a test, a tool built on perfcast) adds kinds without editing perfcast: an op_kind
// from first_extension_kind up, its row, and a vocabulary `with_rows(op_kinds, row)` handed to the
// readers (io::parse_model, profile::op_of, the op command). Nodes made from such a row point at
// it (node::row), so evaluating them needs no table (tests/made_up_op.hpp does this).
//
// Past 500 lines on purpose: the node, the cost function of each kind and the vocabulary's rows
// read the same fields; split, each kind's rules would sit apart from its row.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "batched_shape.hpp"
#include "chip.hpp"
#include "dtype.hpp"
#include "enum_table.hpp"
#include "error.hpp"
#include "op.hpp"
#include "op_vocabulary.hpp"
#include "shape.hpp"
#include "units.hpp"

namespace perfcast {

// ---------------------------------------------------------------------------------------------
// Nodes.

/// A node's kind is an op kind (op.hpp): `matmul` also covers batch matmuls (the batch is the
/// product of A's leading dimensions) and `transfer` is a host-link copy, not a device op.
using node_kind = op_kind;

enum class dispatch : unsigned char {
    graph,      // sunk with the graph
    host,       // the host launches it on its own (single-op / dynamic-graph mode)
    host_sync,  // host-launched, and the host waits for its output shape (dynamic shape)
};

inline constexpr std::array<enum_entry<dispatch>, 3> dispatch_names{
    {{dispatch::graph, "graph"}, {dispatch::host, "host"}, {dispatch::host_sync, "host_sync"}}};
static_assert(covers_enum<dispatch_names>());

[[nodiscard]] constexpr std::string_view name_of(dispatch d) noexcept {
    return name_in(dispatch_names, d);
}

enum class transfer_dir : unsigned char { to_device, to_host };

/// As a model file writes them (`dir=in`, `dir=out`).
inline constexpr std::array<enum_entry<transfer_dir>, 2> transfer_dir_names{
    {{transfer_dir::to_device, "in"}, {transfer_dir::to_host, "out"}}};
static_assert(covers_enum<transfer_dir_names>());

[[nodiscard]] constexpr std::string_view name_of(transfer_dir d) noexcept {
    return name_in(transfer_dir_names, d);
}

/// One step of a model. Build nodes with the factories in `perfcast::nodes`; the fields that do
/// not apply to the kind keep their defaults. A plain aggregate: models can be constexpr arrays.
struct node {
    static constexpr std::size_t max_shapes = 8;

    fixed_name name{};
    op_kind kind = op_kind::generic;
    /// The row of a kind outside op_kinds (an extension's, see the file header); null for the
    /// library's kinds, whose rows are found by `kind`. Set by nodes::of_row.
    const op_row* row = nullptr;
    dtype type = dtype::fp16;      // input dtype (cast: from)
    dtype out_type = dtype::fp16;  // output dtype (cast: to; matmul output)
    std::array<batched_shape, max_shapes> shapes{};
    std::size_t shape_count = 0;

    // Kind parameters.
    bool broadcast_b = false;          // matmul: B shared by every batch (guide §9)
    bool out_same_as_in = true;        // elementwise
    int inputs = 0;                    // elementwise: input tensors (0: 2, or 1 for cast)
    int outputs = 1;                   // elementwise
    double ops_per_element = 1;        // elementwise
    bool fp32_arithmetic = false;      // elementwise, rowwise: op::fp32_arithmetic
    element_walk walk = element_walk::vector;  // rowwise, gather: op::walk (a model file's walk=)
    bool row_reduction = false;  // rowwise: each row reduced across a GPU thread block (reduce=)
    std::int64_t inner = 0;            // elementwise / concat: contiguous run (0: default)
    bool inner_axis_moves = true;      // transpose
    double hot_fraction = 0;           // gather
    dtype index_type = dtype::int32;   // gather
    std::int64_t table_rows = 1;       // gather
    std::int64_t row_elements = 1;     // gather: elements per row
    std::int64_t k = 1;                // topk
    std::int64_t valid = 0;            // topk: valid length (0: all)
    engine eng = engine::vector;       // generic; any vector op placed on the AI CPU
    double flops_per_element = 0;      // generic, per element of shapes[0]
    double in_bytes_per_element = 0;   // generic
    double out_bytes_per_element = 0;  // generic
    std::int64_t work_units = 0;       // generic (0: one per 32-byte block of the output)
    transfer_dir direction = transfer_dir::to_device;  // transfer
    bool causal = false;                               // attention: a causal mask
    bool backward = false;  // attention: the backward pass (FlashAttentionScoreGrad)
    attention_kernel attn_kernel = attention_kernel::flash_attention;  // attention: kernel=
    std::int64_t kv_chunk_min = flashinfer_kv_chunk_min;               // attention: kv_chunk=

    // Dispatch.
    dispatch mode = dispatch::graph;
    bool host_time_set = false;
    duration host_time{};  // when set: host time to launch this op (else the chip's default)

    /// Anchor factor of a device op: every time term of its cost (latency, head, compute,
    /// memory, core time, streamed memory time) is multiplied by it, at every batch and core
    /// limit. 1 (the default) changes nothing. profile/anchored.hpp sets it to measured time /
    /// modelled time at the profiled configuration, so that the node reproduces its measurement
    /// there and scales as the model does elsewhere. Ignored for transfers.
    double scale = 1;
    /// Fixed time of the kernel beyond the engine's head (op::extra_head; profile/anchored.hpp
    /// sets it to the calibrated fixed time of the row's op type). Ignored for transfers.
    duration extra_head{};
    /// Time per core held beyond the engine's per-core head (op::extra_per_core; set as
    /// extra_head is). Ignored for transfers.
    duration extra_per_core{};
    /// Where a node was read from: the line of its model file (io::read_model_file,
    /// io::parse_model's text; 0: built in code, or imported from ONNX, whose generated text is
    /// no file of the user's), named in an error at run time (a shape too large at some batch).
    /// Not part of what the node computes: any two compare equal, so a node read from a file
    /// equals the same node built in code.
    struct source_line {
        int value = 0;
        [[nodiscard]] friend constexpr bool operator==(source_line, source_line) noexcept {
            return true;
        }
    };
    source_line line{};

    [[nodiscard]] constexpr bool is_transfer() const noexcept { return kind == op_kind::transfer; }
    [[nodiscard]] constexpr bool host_dispatched() const noexcept {
        return mode != dispatch::graph;
    }
    /// Whether any shape of the node depends on the batch.
    [[nodiscard]] constexpr bool depends_on_batch() const noexcept {
        for (std::size_t i = 0; i < shape_count; ++i) {
            if (shapes[i].depends_on_batch()) return true;
        }
        return false;
    }

    /// A copy launched by the host one op at a time; `t` overrides the chip's dispatch time.
    [[nodiscard]] constexpr node host() const {
        node n = *this;
        n.mode = dispatch::host;
        return n;
    }
    [[nodiscard]] constexpr node host(duration t) const {
        PERFCAST_EXPECTS(t.in(units::us) >= 0 && is_finite(t), "node::host", "host_time",
                         t.in(units::us), "a finite time >= 0 (in us)");
        node n = host();
        n.host_time_set = true;
        n.host_time = t;
        return n;
    }
    /// A copy with a data-dependent output shape: host-launched, and the host waits for it.
    [[nodiscard]] constexpr node dynamic() const {
        node n = *this;
        n.mode = dispatch::host_sync;
        return n;
    }
    /// A copy sunk with the graph (no per-op host work).
    [[nodiscard]] constexpr node sunk() const {
        node n = *this;
        n.mode = dispatch::graph;
        return n;
    }
    /// A copy placed on the AI CPU (guide §8: ops without a vector implementation).
    [[nodiscard]] constexpr node on_aicpu() const;
    /// A copy whose device-op time terms are multiplied by `s` (> 0, finite; see `scale`).
    [[nodiscard]] constexpr node scaled(double s) const;
    [[nodiscard]] constexpr node named(std::string_view s) const {
        node n = *this;
        n.name = fixed_name(s);
        return n;
    }

    [[nodiscard]] friend constexpr bool operator==(const node&, const node&) = default;
};

// ---------------------------------------------------------------------------------------------
// Cost functions: the op of a node at one batch, one per kind (`first` is shapes[0] at that
// batch). Each calls the kind's op.hpp factory; instantiate() adds what every kind shares.

namespace detail {
[[nodiscard]] constexpr std::int64_t leading_product(const shape& s, std::size_t keep,
                                                     std::string_view where) {
    std::int64_t p = 1;
    for (std::size_t i = 0; i + keep < s.rank(); ++i) {
        p = checked_product(p, s[i], where, "batch dimensions");
    }
    return p;
}
constexpr void expect_batch(std::int64_t batch, std::string_view where) {
    PERFCAST_EXPECTS(batch >= 1, where, "batch", static_cast<double>(batch), "a batch size >= 1");
}

inline constexpr std::string_view instantiate_where = "instantiate";

[[nodiscard]] constexpr op matmul_at(const node& n, std::int64_t batch, const shape& s0) {
    constexpr std::string_view where = instantiate_where;
    PERFCAST_EXPECTS(n.shape_count >= 2 && s0.rank() >= 2, where, "matmul shapes",
                     static_cast<double>(n.shape_count), "A [..., M, K] and B [..., K, N]");
    const shape s1 = n.shapes[1].at(batch, "shapes[1]");
    PERFCAST_EXPECTS(s1.rank() >= 2, where, "matmul B rank", static_cast<double>(s1.rank()),
                     "at least 2");
    const std::int64_t m = s0[s0.rank() - 2];
    const std::int64_t kk = s0[s0.rank() - 1];
    const std::int64_t nn = s1[s1.rank() - 1];
    PERFCAST_EXPECTS(s1[s1.rank() - 2] == kk, where, "matmul K",
                     static_cast<double>(s1[s1.rank() - 2]), "B's K equal to A's K");
    const std::int64_t b = leading_product(s0, 2, where);
    // A shared B with leading dimensions of its own (per-head weights [H, K, N]): H matrices.
    const std::int64_t b_matrices = n.broadcast_b ? leading_product(s1, 2, where) : 0;
    return batch_matmul(
        b, m, nn, kk, n.type,
        {.broadcast_b = n.broadcast_b, .out_type = n.out_type, .b_matrices = b_matrices});
}

[[nodiscard]] constexpr op elementwise_at(const node& n, std::int64_t batch, const shape& s0) {
    elementwise_options o;
    o.inputs = n.inputs > 0 ? n.inputs : 2;
    o.outputs = n.outputs;
    o.ops_per_element = n.ops_per_element;
    o.fp32_arithmetic = n.fp32_arithmetic;
    o.inner = n.inner;
    o.out_same_as_in = n.out_same_as_in;
    o.out_type = n.out_type;
    if (n.shape_count >= 2) {
        return elementwise_broadcast(s0, n.shapes[1].at(batch, "shapes[1]"), n.type, o);
    }
    return elementwise(s0.elements("elementwise elements"), n.type, o);
}

[[nodiscard]] constexpr op gather_at(const node& n, std::int64_t, const shape& s0) {
    op g =
        gather(s0.elements("gather indices"), static_cast<double>(n.row_elements) * size_of(n.type),
               n.table_rows, n.type, {.hot_fraction = n.hot_fraction, .index_type = n.index_type});
    g.walk = n.walk;  // a model file's walk=index_select
    return g;
}

[[nodiscard]] constexpr op topk_at(const node& n, std::int64_t, const shape& s0) {
    const std::int64_t length = s0.inner();
    return topk(s0.elements("topk elements") / length, length, n.k, n.type, n.valid);
}

[[nodiscard]] constexpr op cast_at(const node& n, std::int64_t, const shape& s0) {
    return cast(s0.elements("cast elements"), n.type, n.out_type);
}

[[nodiscard]] constexpr op reduce_at(const node& n, std::int64_t, const shape& s0) {
    const std::int64_t length = s0.inner();
    return reduce(s0.elements("reduce elements") / length, length, n.type);
}

[[nodiscard]] constexpr op tile_at(const node& n, std::int64_t batch, const shape& s0) {
    PERFCAST_EXPECTS(n.shape_count >= 2, instantiate_where, "tile shapes",
                     static_cast<double>(n.shape_count), "input and multiples");
    return tile(s0, n.shapes[1].at(batch, "shapes[1]"), n.type);
}

[[nodiscard]] constexpr op concat_at(const node& n, std::int64_t batch, const shape& s0) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < n.shape_count; ++i) {
        const std::int64_t e = n.shapes[i].at(batch, "concat input").elements();
        PERFCAST_EXPECTS(total <= std::numeric_limits<std::int64_t>::max() - e, instantiate_where,
                         "concat elements", static_cast<double>(total) + static_cast<double>(e),
                         "a count that fits in 63 bits");
        total += e;
    }
    // op.hpp's concat counts only the total and the run: one shape of the total elements.
    shape all;
    all.dims_[0] = total;
    all.rank_ = 1;
    return concat({all}, n.inner > 0 ? n.inner : s0.inner(), n.type);
}

/// "node 'bias'", and ", line 3 of its model file" after it for a node read from one
/// (node::line): how a run-time error names the node.
[[nodiscard]] inline std::string node_label(const node& n) {
    std::string s = "node '" + std::string(n.name.view()) + "'";
    if (n.line.value > 0) s += ", line " + std::to_string(n.line.value) + " of its model file";
    return s;
}

/// Not constexpr: broadcast_failed for node `n` at `batch`, naming the node, its shapes as
/// written and the batch.
[[noreturn]] inline void node_broadcast_failed(const node& n, std::int64_t batch, const shape& in,
                                               const shape& out, std::size_t i) {
    std::string shapes = node_label(n);
    shapes += ": input ";
    shapes += shape_text(n.shapes[0]);
    shapes += " to output ";
    shapes += shape_text(n.shapes[1]);
    shapes += " at batch ";
    shapes += std::to_string(batch);
    broadcast_failed(instantiate_where, "broadcast ", in, out, i, shapes);
}

[[nodiscard]] constexpr op broadcast_at(const node& n, std::int64_t batch, const shape& s0) {
    PERFCAST_EXPECTS(n.shape_count >= 2, instantiate_where, "broadcast shapes",
                     static_cast<double>(n.shape_count), "input and output");
    const shape s1 = n.shapes[1].at(batch, "shapes[1]");
    // Checked here, where the batch is known: a dimension with B broadcasts at some batches only
    // (2 to B at B = 2). nodes::broadcast refused what broadcasts at no batch.
    if (const std::size_t i = broadcast_fails_at(s0, s1); i < s0.rank())
        node_broadcast_failed(n, batch, s0, s1, i);
    return broadcast(s0, s1, n.type);
}

[[nodiscard]] constexpr op transpose_at(const node& n, std::int64_t, const shape& s0) {
    return transpose(s0, n.type, n.inner_axis_moves);
}

/// Q [B, Nq, Sq, D]; K [B, Nkv, Skv, D] (BNSD; any layout's sizes written so).
[[nodiscard]] constexpr op attention_at(const node& n, std::int64_t batch, const shape& s0) {
    const shape s1 = n.shapes[1].at(batch, "shapes[1]");
    PERFCAST_EXPECTS(s0.rank() == 4 && s1.rank() == 4, instantiate_where, "attention shapes",
                     static_cast<double>(s0.rank()), "Q B,Nq,Sq,D and K B,Nkv,Skv,D (rank 4)");
    PERFCAST_EXPECTS(s0[0] == s1[0] && s0[3] == s1[3], instantiate_where, "attention K",
                     static_cast<double>(s1[0]), "K with Q's batch and head dim");
    return attention({.batch = s0[0],
                      .q_heads = s0[1],
                      .kv_heads = s1[1],
                      .q_len = s0[2],
                      .kv_len = s1[2],
                      .head_dim = s0[3],
                      .causal = n.causal,
                      .backward = n.backward,
                      .kernel = n.attn_kernel,
                      .kv_chunk_min = n.kv_chunk_min},
                     n.type);
}

/// X [T, K]; W [E, K, N]: T tokens spread evenly over E experts.
[[nodiscard]] constexpr op grouped_matmul_at(const node& n, std::int64_t batch, const shape& s0) {
    const shape w = n.shapes[1].at(batch, "shapes[1]");
    PERFCAST_EXPECTS(s0.rank() == 2 && w.rank() == 3, instantiate_where, "grouped_matmul shapes",
                     static_cast<double>(w.rank()), "X T,K and W E,K,N");
    PERFCAST_EXPECTS(w[1] == s0[1], instantiate_where, "grouped_matmul K",
                     static_cast<double>(w[1]), "W's K equal to X's K");
    return grouped_matmul_even(s0[0], w[0], w[2], s0[1], n.type, {.out_type = n.out_type});
}

[[nodiscard]] constexpr op fill_at(const node& n, std::int64_t, const shape& s0) {
    return fill(s0.elements("fill elements"), n.type);
}

/// Input [ROWS.., WIDTH]; optional output [ROWS.., OUT_WIDTH] (SwiGlu halves the width).
[[nodiscard]] constexpr op rowwise_at(const node& n, std::int64_t batch, const shape& s0) {
    const std::int64_t width = s0.inner();
    const std::int64_t rows = s0.elements("rowwise elements") / width;
    rowwise_options o;
    o.ops_per_element = n.ops_per_element;
    o.fp32_arithmetic = n.fp32_arithmetic;
    o.walk = n.walk;
    if (n.row_reduction) o.row_threads = row_reduction_threads(width);
    o.out_type = n.out_type;
    o.out_same_as_in = n.out_same_as_in;
    if (n.shape_count >= 2) {
        const shape out = n.shapes[1].at(batch, "shapes[1]");
        PERFCAST_EXPECTS(out.elements("rowwise output") / out.inner() == rows, instantiate_where,
                         "rowwise output rows", static_cast<double>(out.elements() / out.inner()),
                         "the input's rows");
        o.out_width = out.inner();
    }
    if (n.inputs > 1) o.read_elements = checked_product(rows * width, n.inputs, "rowwise", "reads");
    return rowwise(rows, width, n.type, o);
}

/// Softmax along the last axis of one shape ROWS..,WIDTH.
[[nodiscard]] constexpr op softmax_at(const node& n, std::int64_t, const shape& s0) {
    const std::int64_t width = s0.inner();
    return softmax(s0.elements("softmax elements") / width, width, n.type);
}

/// X [N, CIN, H, W]; W [COUT, CIN, KH, KW]; optional Y [N, COUT, HO, WO] (default HO = H, WO =
/// W: stride 1, "same" padding).
[[nodiscard]] constexpr op conv_at(const node& n, std::int64_t batch, const shape& x) {
    const shape w = n.shapes[1].at(batch, "shapes[1]");
    PERFCAST_EXPECTS(x.rank() == 4 && w.rank() == 4, instantiate_where, "conv shapes",
                     static_cast<double>(x.rank() == 4 ? w.rank() : x.rank()),
                     "X N,CIN,H,W and W COUT,CIN,KH,KW (rank 4)");
    PERFCAST_EXPECTS(w[1] == x[1], instantiate_where, "conv W's CIN", static_cast<double>(w[1]),
                     "X's CIN (one group)");
    std::int64_t ho = x[2], wo = x[3];
    if (n.shape_count >= 3) {
        const shape y = n.shapes[2].at(batch, "shapes[2]");
        PERFCAST_EXPECTS(y.rank() == 4 && y[0] == x[0] && y[1] == w[0], instantiate_where,
                         "conv output",
                         y.rank() == 4 ? static_cast<double>(y[1]) : static_cast<double>(y.rank()),
                         "Y N,COUT,HO,WO with X's N and W's COUT");
        ho = y[2];
        wo = y[3];
    }
    return conv({.batch = x[0],
                 .in_channels = x[1],
                 .height = x[2],
                 .width = x[3],
                 .out_channels = w[0],
                 .kernel_h = w[2],
                 .kernel_w = w[3],
                 .out_height = ho,
                 .out_width = wo},
                n.type, conv_pass::forward, n.out_type);
}

[[nodiscard]] constexpr op generic_at(const node& n, std::int64_t, const shape& s0) {
    const auto e = static_cast<double>(s0.elements("generic elements"));
    std::int64_t units = n.work_units;
    if (units == 0) {
        units = blocks_of(s0.elements(), n.type, "generic");
        if (units < 1) units = 1;
    }
    return generic(n.eng, flop_count{e * n.flops_per_element, units::flop},
                   data_size{e * n.in_bytes_per_element, units::B},
                   data_size{e * n.out_bytes_per_element, units::B}, units, n.type);
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The op vocabulary: one row per op kind (op_vocabulary.hpp says what a row holds).

// The library's kinds, in op_kind order. The model file's "expected ..." lists the keywords in
// this order.
// clang-format off
inline constexpr std::array<op_row, 19> op_kinds{{
    {op_kind::matmul, "matmul", {"matmul", "bmm"}, engine::cube, {},
     {2, 2, "two shapes A;B ([..., M, K];[..., K, N])"},
     {"MatMul", "MatMulV2", "MatMulV3", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"},
     detail::matmul_at},
    // An op's kind only (batch_matmul() with batch > 1): a model's batch matmul is a matmul node.
    {op_kind::batch_matmul, "batch_matmul", {}, engine::cube, {},
     {2, 2, "two shapes A;B ([..., M, K];[..., K, N])"}, {}, detail::matmul_at},
    {op_kind::elementwise, "elementwise", {"elementwise"}, engine::vector, {},
     {1, 2, "one shape, or two broadcast-compatible shapes"}, {}, detail::elementwise_at},
    {op_kind::gather, "gather", {"gather"}, engine::vector, {},
     {2, 2, "two shapes INDICES;ROWS,ROW_ELEMENTS"},
     {"*indexSelectLargeIndex*", "*indexSelectSmallIndex*"}, detail::gather_at},
    {op_kind::topk, "topk", {"topk"}, engine::vector, {.integers_on_aicpu = true},
     {1, 1, "one shape ROWS..,LENGTH"}, {}, detail::topk_at},
    {op_kind::cast, "cast", {"cast"}, engine::vector, {},
     {1, 1, "one shape"}, {"Cast"}, detail::cast_at},
    {op_kind::reduce, "reduce", {"reduce"}, engine::vector, {},
     {1, 1, "one shape ROWS,LENGTH (the last axis is reduced)"}, {"*Reduce*", "ArgM*"},
     detail::reduce_at},
    {op_kind::tile, "tile", {"tile"}, engine::vector, {},
     {2, 2, "two shapes INPUT;MULTIPLES of the same rank"}, {}, detail::tile_at},
    {op_kind::concat, "concat", {"concat"}, engine::vector, {},
     {1, 4096, "1 to 4096 shapes S1;S2;..."}, {}, detail::concat_at},
    {op_kind::broadcast, "broadcast", {"broadcast"}, engine::vector, {},
     {2, 2, "two shapes INPUT;OUTPUT"}, {}, detail::broadcast_at},
    {op_kind::transpose, "transpose", {"transpose"}, engine::vector, {},
     {1, 1, "one shape"}, {}, detail::transpose_at},
    // Not a device op: link.hpp times it; reported on the vector engine and never costed there.
    {op_kind::transfer, "transfer", {"transfer"}, engine::vector, {},
     {1, 1, "one shape (the elements copied)"}, {}, nullptr},
    {op_kind::generic, "generic", {"generic"}, engine::vector, {.engine_from_node = true},
     {1, 1, "one shape (the elements the per-element figures apply to)"}, {}, detail::generic_at},
    {op_kind::attention, "attention", {"attention", "flash_attention"}, engine::cube, {},
     {2, 2, "two shapes Q;K (B,Nq,Sq,D;B,Nkv,Skv,D)"},
     {"FlashAttentionScore*", "PromptFlashAttention*", "IncreFlashAttention*",
      "FusedInferAttentionScore*", "*flash_fwd*", "*flash_bwd*", "*paged_attention*",
      "*BatchPrefillWith*"},
     detail::attention_at},
    {op_kind::grouped_matmul, "grouped_matmul", {"grouped_matmul", "gmm"}, engine::cube, {},
     {2, 2, "two shapes X;W (T,K;E,K,N)"}, {"GroupedMatmul*"}, detail::grouped_matmul_at},
    {op_kind::fill, "fill", {"fill", "memset"}, engine::vector, {},
     {1, 1, "one shape (the elements written)"},
     {"ZerosLike", "OnesLike", "Fill", "FillV2", "MemSet*", "*memset*", "*Memset*"},
     detail::fill_at},
    {op_kind::rowwise, "rowwise", {"rowwise", "norm"}, engine::vector, {},
     {1, 2, "one shape ROWS..,WIDTH, or input;output when the width changes (SwiGlu)"},
     {"*RmsNorm*", "LayerNorm", "LayerNormV3", "LayerNormV4", "*RotaryPos*", "SwiGlu*",
      "*rms_norm*", "*rotary*"},
     detail::rowwise_at},
    {op_kind::conv, "conv", {"conv", "conv2d"}, engine::cube, {},
     {2, 3, "shapes X;W (N,CIN,H,W;COUT,CIN,KH,KW), and the output N,COUT,HO,WO unless stride 1, same padding"},
     {"Conv2D", "Conv2DV2", "Conv2DBackpropInput*", "Conv2DBackpropFilter*"},
     detail::conv_at},
    {op_kind::softmax, "softmax", {"softmax"}, engine::vector, {},
     {1, 1, "one shape ROWS..,WIDTH (the last axis is normalized)"},
     {"Softmax", "LogSoftmax", "*::softmax_warp_forward<*", "softmax_warp_forward*",
      "*cunn_SoftMaxForward*"},
     detail::softmax_at},
}};
// clang-format on
static_assert(covers_enum<op_kinds>(), "perfcast::op_kinds: one row per op_kind, in order");

[[nodiscard]] constexpr std::string_view name_of(op_kind k) noexcept {
    return name_in(op_kinds, k);
}

/// Whether `k` is one of the library's kinds (a row of op_kinds).
[[nodiscard]] constexpr bool is_library_kind(op_kind k) noexcept {
    return row_in(op_kinds, k) != nullptr;
}

namespace detail {
[[nodiscard]] constexpr const op_row* find_row(const node& n) noexcept {
    return n.row != nullptr ? n.row : row_in(op_kinds, n.kind);
}
}  // namespace detail

/// The row of node `n`: its own (an extension's) or op_kinds'.
[[nodiscard]] constexpr const op_row& row_of(const node& n) {
    const op_row* r = detail::find_row(n);
    if (r == nullptr) {
        detail::precondition_failed("row_of", "kind",
                                    static_cast<double>(static_cast<unsigned char>(n.kind)),
                                    "a kind of op_kinds, or a node made by nodes::of_row");
    }
    return *r;
}

/// Checks a vocabulary: distinct kinds, names and model-file words; a cost function for every
/// kind but transfer; 1 <= min <= max shapes. A compile error where it is constant-evaluated.
constexpr op_vocabulary validate(op_vocabulary v) {
    constexpr std::string_view where = "validate(op_vocabulary)";
    for (std::size_t i = 0; i < v.size(); ++i) {
        const op_row& r = v[i];
        PERFCAST_EXPECTS(!r.name.empty(), where, "name", r.name, "a name for every kind");
        PERFCAST_EXPECTS(r.cost != nullptr || r.value == op_kind::transfer, where, "cost", r.name,
                         "a cost function for every kind but transfer");
        PERFCAST_EXPECTS(r.shapes.min >= 1 && r.shapes.min <= r.shapes.max, where, "shapes", r.name,
                         "1 <= min <= max");
        PERFCAST_EXPECTS(
            is_library_kind(r.value) == (static_cast<unsigned char>(r.value) <
                                         static_cast<unsigned char>(first_extension_kind)),
            where, "value", r.name, "a library kind, or one from first_extension_kind up");
        for (std::size_t j = 0; j < i; ++j) {
            const op_row& o = v[j];
            PERFCAST_EXPECTS(o.value != r.value, where, "value", r.name, "each kind once");
            PERFCAST_EXPECTS(row_for_word(v.subspan(j, 1), r.name) == nullptr, where, "name",
                             r.name, "a name no earlier row has as name or keyword");
            for (std::string_view k : r.keywords) {
                PERFCAST_EXPECTS(row_for_word(v.subspan(j, 1), k) == nullptr, where, "keyword", k,
                                 "a keyword no earlier row has as name or keyword");
            }
        }
    }
    return v;
}
// op_kinds itself is checked at compile time in tests/static_counts.cpp, not here: a user's
// GCC build with -fsanitize=undefined (which implies -fno-delete-null-pointer-checks) cannot
// constant-fold a function pointer's comparison with null, and every header that includes this
// one would fail to compile.

/// `base` and then `rows`, checked (validate): the vocabulary of an extension.
///   inline constexpr auto my_ops = perfcast::with_rows(perfcast::op_kinds, scan_row);
template <std::size_t N, std::same_as<op_row>... Rows>
[[nodiscard]] constexpr std::array<op_row, N + sizeof...(Rows)> with_rows(
    const std::array<op_row, N>& base, const Rows&... rows) {
    std::array<op_row, N + sizeof...(Rows)> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = base[i];
    std::size_t i = N;
    ((out[i++] = rows), ...);
    (void)validate(out);
    return out;
}

// ---------------------------------------------------------------------------------------------
// What a node's kind says.

/// The engine node `n` runs on (transfers: none; reported as vector and never costed on it).
[[nodiscard]] constexpr engine engine_of(const node& n) noexcept {
    if (n.is_transfer()) return engine::vector;
    if (n.eng == engine::aicpu) return engine::aicpu;
    const op_row* r = detail::find_row(n);
    if (r == nullptr) return engine::vector;
    if (r->traits.engine_from_node) return n.eng;
    if (r->traits.integers_on_aicpu && is_integer(n.type)) return engine::aicpu;  // guide §8
    return r->eng;
}

/// The engine node `n` runs on on chip `c`: engine_of(n), except that an op engine_of places on
/// the AI CPU (a `generic` op of engine aicpu, a vector op moved there, an integer topk: guide
/// §8) runs on the vector engine of a chip without one (aicpu.cores = 0, the GPU presets, whose
/// frameworks run such an op as a kernel of its own).
[[nodiscard]] constexpr engine engine_on(const chip& c, engine e) noexcept {
    return e == engine::aicpu && c.aicpu.cores < 1 ? engine::vector : e;
}
[[nodiscard]] constexpr engine engine_on(const chip& c, const node& n) noexcept {
    return engine_on(c, engine_of(n));
}

constexpr node node::on_aicpu() const {
    const op_row* r = detail::find_row(*this);
    PERFCAST_EXPECTS(r != nullptr && r->cost != nullptr && r->eng != engine::cube, "node::on_aicpu",
                     "kind", r != nullptr ? r->name : "?",
                     "a vector op (not a matmul or a transfer)");
    node n = *this;
    n.eng = engine::aicpu;
    return n;
}

constexpr node node::scaled(double s) const {
    PERFCAST_EXPECTS(s > 0 && s < 1e300, "node::scaled", "scale", s, "a finite factor > 0");
    PERFCAST_EXPECTS(!is_transfer(), "node::scaled", "kind", name_of(kind),
                     "a device op (not a transfer)");
    node n = *this;
    n.scale = s;
    return n;
}

// ---------------------------------------------------------------------------------------------
// Instantiation at one batch.

/// The op.hpp op of device node `n` at batch `batch`: its kind's cost function, on the engine
/// engine_of(n) gives, with the node's extra head. Transfers are not device ops (error).
[[nodiscard]] constexpr op instantiate(const node& n, std::int64_t batch) {
    constexpr std::string_view where = detail::instantiate_where;
    detail::expect_batch(batch, where);
    PERFCAST_EXPECTS(!n.is_transfer(), where, "kind", "transfer",
                     "a device op (a transfer has no op; see transfer_bytes)");
    PERFCAST_EXPECTS(n.shape_count >= 1, where, "shapes", 0.0, "at least one shape");
    const op_row& row = row_of(n);
    PERFCAST_EXPECTS(row.cost != nullptr, where, "kind", row.name, "a kind with a cost function");
    const shape s0 = n.shapes[0].at(batch, "shapes[0]");
    op r = row.cost(n, batch, s0);
    r.eng = engine_of(n);  // the row's rule (a vector op placed on the AI CPU stays there)
    r.extra_head = n.extra_head;
    r.extra_per_core = n.extra_per_core;
    return r;
}

/// Bytes a transfer node moves at batch `batch`.
[[nodiscard]] constexpr data_size transfer_bytes(const node& n, std::int64_t batch) {
    detail::expect_batch(batch, "transfer_bytes");
    PERFCAST_EXPECTS(n.is_transfer(), "transfer_bytes", "kind", row_of(n).name, "a transfer");
    return static_cast<double>(n.shapes[0].at(batch, "transfer shape").elements()) *
           size_of(n.type);
}

}  // namespace perfcast
