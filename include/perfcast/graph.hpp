// perfcast/graph.hpp: a model = ops in order on one stream, sized by the batch.
//
// One description serves every batch size: each dimension is `a x B + c` (`batch_dim`), so a node
// stores its shapes symbolically and `instantiate(node, batch)` builds the op.hpp op for one batch.
// Nodes also say how they reach the device:
//   dispatch::graph      part of a sunk (static, compiled) graph: no per-op host work;
//   dispatch::host       launched by the host one op at a time (single-op mode, guide §3);
//   dispatch::host_sync  as host, and the host must read this op's output shape before it can
//                        prepare the next op (dynamic shape, guide §7: Where -> task_wait).
// and transfers over the host link (model inputs and outputs, guide §4) are nodes too.
//
// Serial latency of one inference at batch b under a core split (c cube, v vector cores):
//   latency = device + bubbles + aicpu + transfer                      (exactly, by definition)
// device = AI Core op latencies (cube on c cores, vector on v), aicpu = AI CPU op latencies,
// transfer = link time of the transfer nodes, bubbles = device idle time waiting for the host.
// The host runs ahead of the device: it prepares host-dispatched ops back to back, each taking
// host_time (default chip.overhead.host_dispatch); an op starts when the device is free and, if
// host-dispatched, when the host has launched it. So the device idles whenever the host needs
// longer for an op than the device needed for the previous one (guide §3). A host_sync op stops
// the host until it has finished on the device. A sunk graph is launched once, asynchronously,
// while the inputs are copied: that launch is not on the critical path and not counted.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "chip.hpp"
#include "cost.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "link.hpp"
#include "op.hpp"
#include "runtime.hpp"
#include "shape.hpp"
#include "units.hpp"

namespace perfcast {

// ---------------------------------------------------------------------------------------------
// Dimensions that depend on the batch size.

/// `per_batch x B + fixed`. A plain number converts to a fixed dimension. Valid dimensions have
/// per_batch >= 0 and a value >= 1 at B = 1 (so at every B >= 1).
struct batch_dim {
    std::int64_t per_batch = 0;
    std::int64_t fixed = 0;

    constexpr batch_dim() noexcept = default;
    constexpr batch_dim(std::int64_t n) noexcept : fixed(n) {}  // NOLINT: 32 is a fixed dim
    constexpr batch_dim(std::int64_t a, std::int64_t c) noexcept : per_batch(a), fixed(c) {}

    [[nodiscard]] constexpr bool depends_on_batch() const noexcept { return per_batch != 0; }
    [[nodiscard]] constexpr bool valid() const noexcept {
        return per_batch >= 0 && fixed <= std::numeric_limits<std::int64_t>::max() - per_batch &&
               per_batch + fixed >= 1;
    }
    /// The value at batch `batch` (>= 1); overflow is an error naming `field`.
    [[nodiscard]] constexpr std::int64_t at(std::int64_t batch,
                                            std::string_view field = "dimension") const {
        const std::int64_t scaled = checked_product(per_batch, batch, "batch_dim::at", field);
        PERFCAST_EXPECTS(fixed < 0 || scaled <= std::numeric_limits<std::int64_t>::max() - fixed,
                         "batch_dim::at", field,
                         static_cast<double>(scaled) + static_cast<double>(fixed),
                         "a dimension that fits in 63 bits");
        return scaled + fixed;
    }

    [[nodiscard]] friend constexpr batch_dim operator*(batch_dim d, std::int64_t s) noexcept {
        return {d.per_batch * s, d.fixed * s};
    }
    [[nodiscard]] friend constexpr batch_dim operator*(std::int64_t s, batch_dim d) noexcept {
        return d * s;
    }
    [[nodiscard]] friend constexpr batch_dim operator+(batch_dim a, batch_dim b) noexcept {
        return {a.per_batch + b.per_batch, a.fixed + b.fixed};
    }
    [[nodiscard]] friend constexpr bool operator==(batch_dim, batch_dim) noexcept = default;
};

/// The batch symbol: `B * 8` is 8 per sample, `B * 26 + 1` one more. In its own namespace
/// because `units::B` is the byte: `using perfcast::batch_symbol::B;` where you describe models.
namespace batch_symbol {
inline constexpr batch_dim B{1, 0};
}  // namespace batch_symbol

/// A shape whose dimensions are batch_dims.
struct batched_shape {
    std::array<batch_dim, shape::max_rank> dims{};
    std::size_t rank = 0;

    constexpr batched_shape() noexcept = default;
    constexpr batched_shape(std::initializer_list<batch_dim> d,
                            std::string_view field = "shape") {
        PERFCAST_EXPECTS(d.size() <= shape::max_rank, "batched_shape", field,
                         static_cast<double>(d.size()), "at most 8 dimensions");
        for (batch_dim x : d) push_back(x, field);
    }
    constexpr void push_back(batch_dim x, std::string_view field = "shape") {
        PERFCAST_EXPECTS(rank < shape::max_rank, "batched_shape", field,
                         static_cast<double>(rank + 1), "at most 8 dimensions");
        PERFCAST_EXPECTS(x.valid(), "batched_shape", field,
                         static_cast<double>(x.per_batch + x.fixed),
                         "a dimension a x B + c with a >= 0 and a + c >= 1");
        dims[rank++] = x;
    }
    [[nodiscard]] constexpr bool depends_on_batch() const noexcept {
        for (std::size_t i = 0; i < rank; ++i) {
            if (dims[i].depends_on_batch()) return true;
        }
        return false;
    }
    [[nodiscard]] constexpr batch_dim operator[](std::size_t i) const noexcept { return dims[i]; }
    [[nodiscard]] constexpr batch_dim inner() const noexcept {
        return rank == 0 ? batch_dim{1} : dims[rank - 1];
    }
    /// The concrete shape at batch `batch`.
    [[nodiscard]] constexpr shape at(std::int64_t batch, std::string_view field = "shape") const {
        shape s;
        for (std::size_t i = 0; i < rank; ++i) {
            s.dims_[i] = dims[i].at(batch, field);
            PERFCAST_EXPECTS(s.dims_[i] >= 1, "batched_shape::at", field,
                             static_cast<double>(s.dims_[i]), "every dimension >= 1");
        }
        s.rank_ = rank;
        (void)s.elements(field);  // overflow check
        return s;
    }
    [[nodiscard]] friend constexpr bool operator==(const batched_shape&,
                                                   const batched_shape&) = default;
};

// ---------------------------------------------------------------------------------------------
// Nodes.

enum class node_kind : unsigned char {
    matmul,  // also batch matmul: batch = product of A's leading dimensions
    elementwise,
    reduce,
    gather,
    topk,
    cast,
    tile,
    concat,
    broadcast,
    transpose,
    generic,
    transfer,  // host link copy, not a device op
};

[[nodiscard]] constexpr std::string_view name_of(node_kind k) noexcept {
    switch (k) {
        case node_kind::matmul: return "matmul";
        case node_kind::elementwise: return "elementwise";
        case node_kind::reduce: return "reduce";
        case node_kind::gather: return "gather";
        case node_kind::topk: return "topk";
        case node_kind::cast: return "cast";
        case node_kind::tile: return "tile";
        case node_kind::concat: return "concat";
        case node_kind::broadcast: return "broadcast";
        case node_kind::transpose: return "transpose";
        case node_kind::generic: return "generic";
        case node_kind::transfer: return "transfer";
    }
    return "?";
}

enum class dispatch : unsigned char {
    graph,      // sunk with the graph
    host,       // the host launches it on its own (single-op / dynamic-graph mode)
    host_sync,  // host-launched, and the host waits for its output shape (dynamic shape)
};

[[nodiscard]] constexpr std::string_view name_of(dispatch d) noexcept {
    switch (d) {
        case dispatch::graph: return "graph";
        case dispatch::host: return "host";
        case dispatch::host_sync: return "host_sync";
    }
    return "?";
}

enum class transfer_dir : unsigned char { to_device, to_host };

/// One step of a model. Build nodes with the factories in `perfcast::nodes`; the fields that do
/// not apply to the kind keep their defaults. A plain aggregate: models can be constexpr arrays.
struct node {
    static constexpr std::size_t max_shapes = 8;

    fixed_name name{};
    node_kind kind = node_kind::generic;
    dtype type = dtype::fp16;      // input dtype (cast: from)
    dtype out_type = dtype::fp16;  // output dtype (cast: to; matmul output)
    std::array<batched_shape, max_shapes> shapes{};
    std::size_t shape_count = 0;

    // Kind parameters.
    bool broadcast_b = false;           // matmul: B shared by every batch (guide §9)
    bool out_same_as_in = true;         // elementwise
    int inputs = 0;                     // elementwise: input tensors (0: 2, or 1 for cast)
    int outputs = 1;                    // elementwise
    double ops_per_element = 1;         // elementwise
    std::int64_t inner = 0;             // elementwise / concat: contiguous run (0: default)
    bool inner_axis_moves = true;       // transpose
    double hot_fraction = 0;            // gather
    dtype index_type = dtype::int32;    // gather
    std::int64_t table_rows = 1;        // gather
    std::int64_t row_elements = 1;      // gather: elements per row
    std::int64_t k = 1;                 // topk
    std::int64_t valid = 0;             // topk: valid length (0: all)
    engine eng = engine::vector;        // generic; any vector op placed on the AI CPU
    double flops_per_element = 0;       // generic, per element of shapes[0]
    double in_bytes_per_element = 0;    // generic
    double out_bytes_per_element = 0;   // generic
    std::int64_t work_units = 0;        // generic (0: one per 32-byte block of the output)
    transfer_dir direction = transfer_dir::to_device;  // transfer

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

    [[nodiscard]] constexpr bool is_transfer() const noexcept {
        return kind == node_kind::transfer;
    }
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
    [[nodiscard]] constexpr node on_aicpu() const {
        PERFCAST_EXPECTS(kind != node_kind::matmul && kind != node_kind::transfer, "node::on_aicpu",
                         "kind", name_of(kind), "a vector op (not a matmul or a transfer)");
        node n = *this;
        n.eng = engine::aicpu;
        return n;
    }
    /// A copy whose device-op time terms are multiplied by `s` (> 0, finite; see `scale`).
    [[nodiscard]] constexpr node scaled(double s) const {
        PERFCAST_EXPECTS(s > 0 && s < 1e300, "node::scaled", "scale", s, "a finite factor > 0");
        PERFCAST_EXPECTS(kind != node_kind::transfer, "node::scaled", "kind", name_of(kind),
                         "a device op (not a transfer)");
        node n = *this;
        n.scale = s;
        return n;
    }
    [[nodiscard]] constexpr node named(std::string_view s) const {
        node n = *this;
        n.name = fixed_name(s);
        return n;
    }

    [[nodiscard]] friend constexpr bool operator==(const node&, const node&) = default;
};

/// Factories: the symbolic counterparts of op.hpp's op factories (same argument order).
namespace nodes {

namespace detail {
constexpr node make(node_kind k, dtype t, std::initializer_list<batched_shape> shapes,
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
}  // namespace detail

/// batch x ([M, K] x [K, N]). With `broadcast_b` the B operand is one [K, N] shared by all.
[[nodiscard]] constexpr node batch_matmul(batch_dim batch, batch_dim m, batch_dim n, batch_dim k,
                                          dtype t, matmul_options o = {}) {
    constexpr std::string_view where = "nodes::batch_matmul";
    detail::expect_dim(batch, where, "batch");
    detail::expect_dim(m, where, "m");
    detail::expect_dim(n, where, "n");
    detail::expect_dim(k, where, "k");
    node r = detail::make(node_kind::matmul, t,
                          {batched_shape{batch, m, k},
                           o.broadcast_b ? batched_shape{k, n} : batched_shape{batch, k, n}},
                          where);
    r.broadcast_b = o.broadcast_b;
    r.out_type = o.out_type;
    return r;
}

/// [M, K] x [K, N].
[[nodiscard]] constexpr node matmul(batch_dim m, batch_dim n, batch_dim k, dtype t,
                                    matmul_options o = {}) {
    constexpr std::string_view where = "nodes::matmul";
    detail::expect_dim(m, where, "m");
    detail::expect_dim(n, where, "n");
    detail::expect_dim(k, where, "k");
    node r = detail::make(node_kind::matmul, t, {batched_shape{m, k}, batched_shape{k, n}}, where);
    r.broadcast_b = true;  // one weight matrix
    r.out_type = o.out_type;
    return r;
}

/// Matrix multiply from operand shapes: A [..., M, K] and B [..., K, N] (or [K, N] with
/// broadcast_b). The batch is the product of A's leading dimensions.
[[nodiscard]] constexpr node matmul_shapes(const batched_shape& a, const batched_shape& b,
                                           dtype t, matmul_options o = {}) {
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
    node r = detail::make(node_kind::matmul, t, {a, b}, where);
    r.broadcast_b = o.broadcast_b || b.rank == 2;
    if (!r.broadcast_b) {
        bool all_one = true;
        for (std::size_t i = 0; i + 2 < b.rank; ++i) all_one = all_one && b[i] == batch_dim{1};
        r.broadcast_b = all_one;
    }
    r.out_type = o.out_type;
    return r;
}

/// An elementwise op producing the elements of `s`.
[[nodiscard]] constexpr node elementwise(const batched_shape& s, dtype t,
                                         elementwise_options o = {}) {
    node r = detail::make(node_kind::elementwise, t, {s}, "nodes::elementwise");
    r.inputs = o.inputs;
    r.outputs = o.outputs;
    r.ops_per_element = o.ops_per_element;
    r.inner = o.inner;
    r.out_same_as_in = o.out_same_as_in;
    r.out_type = o.out_same_as_in ? t : o.out_type;
    return r;
}

/// A binary elementwise op between two broadcast-compatible shapes.
[[nodiscard]] constexpr node elementwise_broadcast(const batched_shape& a,
                                                   const batched_shape& b, dtype t,
                                                   elementwise_options o = {}) {
    node r = elementwise(a, t, o);
    r.shapes[1] = b;
    r.shape_count = 2;
    r.inputs = 2;
    return r;
}

[[nodiscard]] constexpr node cast(const batched_shape& s, dtype from, dtype to) {
    node r = detail::make(node_kind::cast, from, {s}, "nodes::cast");
    r.out_type = to;
    r.inputs = 1;
    return r;
}

/// Reduces `rows` rows of `length` elements each.
[[nodiscard]] constexpr node reduce(batch_dim rows, batch_dim length, dtype t) {
    detail::expect_dim(rows, "nodes::reduce", "rows");
    detail::expect_dim(length, "nodes::reduce", "length");
    return detail::make(node_kind::reduce, t, {batched_shape{rows, length}}, "nodes::reduce");
}

/// Gathers `indices` rows of `row_elements` elements from a table of `table_rows` rows.
[[nodiscard]] constexpr node gather(batch_dim indices, std::int64_t row_elements,
                                    std::int64_t table_rows, dtype t, gather_options o = {}) {
    constexpr std::string_view where = "nodes::gather";
    detail::expect_dim(indices, where, "indices");
    PERFCAST_EXPECTS(row_elements >= 1, where, "row_elements", static_cast<double>(row_elements),
                     ">= 1");
    PERFCAST_EXPECTS(table_rows >= 1, where, "table_rows", static_cast<double>(table_rows),
                     ">= 1");
    PERFCAST_EXPECTS(o.hot_fraction >= 0 && o.hot_fraction <= 1, where, "hot_fraction",
                     o.hot_fraction, "a share in [0, 1]");
    node r = detail::make(node_kind::gather, t, {batched_shape{indices}}, where);
    r.row_elements = row_elements;
    r.table_rows = table_rows;
    r.hot_fraction = o.hot_fraction;
    r.index_type = o.index_type;
    return r;
}

/// TopK over `rows` rows of `length` (of which `valid` are data; 0: all).
[[nodiscard]] constexpr node topk(batch_dim rows, batch_dim length, std::int64_t k, dtype t,
                                  std::int64_t valid = 0) {
    constexpr std::string_view where = "nodes::topk";
    detail::expect_dim(rows, where, "rows");
    detail::expect_dim(length, where, "length");
    PERFCAST_EXPECTS(k >= 1, where, "k", static_cast<double>(k), ">= 1");
    PERFCAST_EXPECTS(valid >= 0, where, "valid", static_cast<double>(valid),
                     ">= 0 (0: the whole length)");
    node r = detail::make(node_kind::topk, t, {batched_shape{rows, length}}, where);
    r.k = k;
    r.valid = valid;
    r.eng = is_integer(t) ? engine::aicpu : engine::vector;  // guide §8
    return r;
}

[[nodiscard]] constexpr node tile(const batched_shape& in, const batched_shape& multiples,
                                  dtype t) {
    PERFCAST_EXPECTS(in.rank == multiples.rank, "nodes::tile", "multiples",
                     static_cast<double>(multiples.rank), "one multiple per input dimension");
    return detail::make(node_kind::tile, t, {in, multiples}, "nodes::tile");
}

/// Concatenates up to 8 tensors; `inner` is the contiguous run written per row (0: the
/// innermost dimension of the first input).
[[nodiscard]] constexpr node concat(std::initializer_list<batched_shape> inputs,
                                    std::int64_t inner, dtype t) {
    constexpr std::string_view where = "nodes::concat";
    PERFCAST_EXPECTS(inputs.size() >= 1, where, "inputs", static_cast<double>(inputs.size()),
                     "at least one input");
    PERFCAST_EXPECTS(inner >= 0, where, "inner", static_cast<double>(inner), ">= 0");
    node r = detail::make(node_kind::concat, t, inputs, where);
    r.inner = inner;
    return r;
}

[[nodiscard]] constexpr node broadcast(const batched_shape& in, const batched_shape& out,
                                       dtype t) {
    return detail::make(node_kind::broadcast, t, {in, out}, "nodes::broadcast");
}

[[nodiscard]] constexpr node transpose(const batched_shape& in, dtype t,
                                       bool inner_axis_moves = true) {
    node r = detail::make(node_kind::transpose, t, {in}, "nodes::transpose");
    r.inner_axis_moves = inner_axis_moves;
    return r;
}

/// Anything else, per element of `s`: flops, bytes read and written; `work_units` 0 means one
/// unit per 32-byte block of the elements.
[[nodiscard]] constexpr node generic(engine e, const batched_shape& s, dtype t,
                                     double flops_per_element, double in_bytes_per_element,
                                     double out_bytes_per_element,
                                     std::int64_t work_units = 0) {
    constexpr std::string_view where = "nodes::generic";
    PERFCAST_EXPECTS(flops_per_element >= 0 && flops_per_element < 1e15, where, "flops",
                     flops_per_element, "a finite value >= 0 per element");
    PERFCAST_EXPECTS(in_bytes_per_element >= 0 && in_bytes_per_element < 1e15, where, "in",
                     in_bytes_per_element, "a finite value >= 0 per element");
    PERFCAST_EXPECTS(out_bytes_per_element >= 0 && out_bytes_per_element < 1e15, where, "out",
                     out_bytes_per_element, "a finite value >= 0 per element");
    PERFCAST_EXPECTS(work_units >= 0, where, "work_units", static_cast<double>(work_units),
                     ">= 0 (0: one per 32-byte block)");
    node r = detail::make(node_kind::generic, t, {s}, where);
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
    node r = detail::make(node_kind::transfer, t, {s}, "nodes::transfer");
    r.direction = d;
    return r;
}

}  // namespace nodes

// ---------------------------------------------------------------------------------------------
// Instantiation at one batch.

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
    PERFCAST_EXPECTS(batch >= 1, where, "batch", static_cast<double>(batch),
                     "a batch size >= 1");
}
}  // namespace detail

/// The op.hpp op of device node `n` at batch `batch`. Transfers are not device ops (error).
[[nodiscard]] constexpr op instantiate(const node& n, std::int64_t batch) {
    constexpr std::string_view where = "instantiate";
    detail::expect_batch(batch, where);
    PERFCAST_EXPECTS(!n.is_transfer(), where, "kind", "transfer",
                     "a device op (a transfer has no op; see transfer_bytes)");
    PERFCAST_EXPECTS(n.shape_count >= 1, where, "shapes", 0.0, "at least one shape");
    const shape s0 = n.shapes[0].at(batch, "shapes[0]");
    op r;
    switch (n.kind) {
        case node_kind::matmul: {
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
            const std::int64_t b = detail::leading_product(s0, 2, where);
            r = batch_matmul(b, m, nn, kk, n.type, {.broadcast_b = n.broadcast_b,
                                                    .out_type = n.out_type});
            break;
        }
        case node_kind::elementwise: {
            elementwise_options o;
            o.inputs = n.inputs > 0 ? n.inputs : 2;
            o.outputs = n.outputs;
            o.ops_per_element = n.ops_per_element;
            o.inner = n.inner;
            o.out_same_as_in = n.out_same_as_in;
            o.out_type = n.out_type;
            if (n.shape_count >= 2) {
                r = elementwise_broadcast(s0, n.shapes[1].at(batch, "shapes[1]"), n.type, o);
            } else {
                r = elementwise(s0.elements("elementwise elements"), n.type, o);
            }
            break;
        }
        case node_kind::cast:
            r = cast(s0.elements("cast elements"), n.type, n.out_type);
            break;
        case node_kind::reduce: {
            const std::int64_t length = s0.inner();
            r = reduce(s0.elements("reduce elements") / length, length, n.type);
            break;
        }
        case node_kind::gather:
            r = gather(s0.elements("gather indices"),
                       static_cast<double>(n.row_elements) * size_of(n.type), n.table_rows,
                       n.type, {.hot_fraction = n.hot_fraction, .index_type = n.index_type});
            break;
        case node_kind::topk: {
            const std::int64_t length = s0.inner();
            r = topk(s0.elements("topk elements") / length, length, n.k, n.type, n.valid);
            break;
        }
        case node_kind::tile:
            PERFCAST_EXPECTS(n.shape_count >= 2, where, "tile shapes",
                             static_cast<double>(n.shape_count), "input and multiples");
            r = tile(s0, n.shapes[1].at(batch, "shapes[1]"), n.type);
            break;
        case node_kind::concat: {
            std::int64_t total = 0;
            for (std::size_t i = 0; i < n.shape_count; ++i) {
                const std::int64_t e = n.shapes[i].at(batch, "concat input").elements();
                PERFCAST_EXPECTS(total <= std::numeric_limits<std::int64_t>::max() - e, where,
                                 "concat elements", static_cast<double>(total) +
                                 static_cast<double>(e), "a count that fits in 63 bits");
                total += e;
            }
            // op.hpp's concat counts only the total and the run: one shape of the total elements.
            shape all;
            all.dims_[0] = total;
            all.rank_ = 1;
            r = concat({all}, n.inner > 0 ? n.inner : s0.inner(), n.type);
            break;
        }
        case node_kind::broadcast:
            PERFCAST_EXPECTS(n.shape_count >= 2, where, "broadcast shapes",
                             static_cast<double>(n.shape_count), "input and output");
            r = broadcast(s0, n.shapes[1].at(batch, "shapes[1]"), n.type);
            break;
        case node_kind::transpose:
            r = transpose(s0, n.type, n.inner_axis_moves);
            break;
        case node_kind::generic: {
            const auto e = static_cast<double>(s0.elements("generic elements"));
            std::int64_t units = n.work_units;
            if (units == 0) {
                units = perfcast::detail::blocks_of(s0.elements(), n.type, "generic");
                if (units < 1) units = 1;
            }
            r = generic(n.eng, flop_count{e * n.flops_per_element, units::flop},
                        data_size{e * n.in_bytes_per_element, units::B},
                        data_size{e * n.out_bytes_per_element, units::B}, units, n.type);
            break;
        }
        case node_kind::transfer:
            break;  // rejected above
    }
    if (n.eng == engine::aicpu) r.eng = engine::aicpu;  // placed on the AI CPU
    r.extra_head = n.extra_head;
    return r;
}

/// Bytes a transfer node moves at batch `batch`.
[[nodiscard]] constexpr data_size transfer_bytes(const node& n, std::int64_t batch) {
    detail::expect_batch(batch, "transfer_bytes");
    PERFCAST_EXPECTS(n.is_transfer(), "transfer_bytes", "kind", name_of(n.kind), "a transfer");
    return static_cast<double>(n.shapes[0].at(batch, "transfer shape").elements()) *
           size_of(n.type);
}

// ---------------------------------------------------------------------------------------------
// Evaluation of one node under a core split.

/// Cores one instance may use: `cube` AI cube cores and `vector` AI vector cores (guide §12).
struct core_split {
    core_count cube{};
    core_count vector{};
    [[nodiscard]] friend constexpr bool operator==(const core_split&, const core_split&) = default;
};

/// The whole chip as one split.
[[nodiscard]] constexpr core_split all_cores(const chip& c) noexcept {
    return {core_count{c.cube.cores}, core_count{c.vector.cores}};
}

/// Checks a split against the chip, naming the engine and its core count.
constexpr const core_split& validate(const core_split& s, const chip& c) {
    constexpr std::string_view where = "validate(core_split)";
    PERFCAST_EXPECTS(s.cube.value >= 1, where, "cube", static_cast<double>(s.cube.value),
                     "at least 1 cube core");
    PERFCAST_EXPECTS(s.vector.value >= 1, where, "vector", static_cast<double>(s.vector.value),
                     "at least 1 vector core");
    PERFCAST_EXPECTS(s.cube.value <= c.cube.cores, where, "cube", static_cast<double>(s.cube.value),
                     "no more than the chip's cube cores");
    PERFCAST_EXPECTS(s.vector.value <= c.vector.cores, where, "vector",
                     static_cast<double>(s.vector.value), "no more than the chip's vector cores");
    return s;
}

/// What a model evaluation needs besides the chip: the op model's parameters and the host link
/// (default: the chip's PCIe generation and lanes with link.hpp's efficiency and per-transfer
/// cost).
struct graph_params {
    model_params model{};
    std::optional<pcie_link> link{};
    [[nodiscard]] friend constexpr bool operator==(const graph_params&,
                                                   const graph_params&) = default;
};

[[nodiscard]] constexpr pcie_link link_for(const chip& c, const graph_params& p) {
    return p.link ? validate(*p.link) : link_of(c);
}

/// One node at one batch under one split, alone on the chip.
struct node_eval {
    node_kind kind = node_kind::generic;
    engine eng = engine::vector;
    dispatch mode = dispatch::graph;
    duration host_time{};    // host time to launch it (0 for sunk nodes)
    op_cost cost{};          // device ops: as cost.hpp; transfers: latency only
    // Transfers.
    transfer_dir direction = transfer_dir::to_device;
    data_size link_bytes{};  // bytes over the host link
    duration link_fixed{};   // per-transfer cost
    duration link_stream{};  // bytes / achievable link rate
    // Memory traffic for card.hpp (see there).
    data_size cold{};        // bytes that come from HBM even when the working set fits in L2
    data_size warm{};        // bytes L2 serves when it holds the working set
    data_size footprint{};   // this node's share of the instance's working set
    duration memory_streamed{};  // memory time if its inputs had to stream through HBM
    [[nodiscard]] constexpr bool is_transfer() const noexcept {
        return kind == node_kind::transfer;
    }
    [[nodiscard]] friend constexpr bool operator==(const node_eval&, const node_eval&) = default;
};

/// Cores node `n` may use under `split`: the split's cube or vector count, or every AI CPU core.
[[nodiscard]] constexpr core_count limit_for(const chip& c, engine e, const core_split& split) {
    switch (e) {
        case engine::cube: return split.cube;
        case engine::vector: return split.vector;
        case engine::aicpu: return core_count{c.aicpu.cores};
    }
    return split.vector;
}

/// Node `n` alone at batch `batch` on `limit` cores. Memory classes: a gather's table rows are cold except the hot share (embedding
/// tables are far larger than L2); everything else an op reads or writes, and its tiling
/// re-reads, is warm. Footprint: the bytes the op writes, plus a shared matmul B operand
/// (weights stay resident), plus the bytes a transfer brings to the device.
namespace detail {
[[nodiscard]] constexpr node_eval evaluate_node(const chip& c, const node& n, std::int64_t batch,
                                                core_count limit, const graph_params& p) {
    node_eval r;
    r.kind = n.kind;
    r.mode = n.mode;
    if (n.host_dispatched()) r.host_time = n.host_time_set ? n.host_time : c.overhead.host_dispatch;
    if (n.is_transfer()) {
        const pcie_link l = link_for(c, p);
        r.eng = engine::vector;
        r.direction = n.direction;
        r.link_bytes = transfer_bytes(n, batch);
        r.link_fixed = l.per_transfer;
        r.link_stream = r.link_bytes / l.achievable();
        r.cost.latency = r.link_fixed + r.link_stream;
        r.cost.bytes = r.link_bytes;
        r.cost.bound = bound_kind::memory;
        if (n.direction == transfer_dir::to_device) r.footprint = r.link_bytes;
        return r;
    }
    const op o = instantiate(n, batch);
    r.eng = o.eng;
    r.cost = cost(c, o, limit, p.model);
    model_params streamed = p.model;
    streamed.l2_resident_share = 0;  // cost.hpp's regime for inputs that do not fit in L2
    r.memory_streamed = memory_time(c, o, r.cost.cores, streamed);
    if (n.scale != 1.0) {  // an anchored node (see node::scale): every time term, alike
        r.cost.latency = r.cost.latency * n.scale;
        r.cost.core_time = r.cost.core_time * n.scale;
        r.cost.head = r.cost.head * n.scale;
        r.cost.compute = r.cost.compute * n.scale;
        r.cost.memory = r.cost.memory * n.scale;
        r.memory_streamed = r.memory_streamed * n.scale;
        r.cost.utilization = r.cost.utilization / n.scale;
    }
    r.cold = n.kind == node_kind::gather ? o.bytes_written * (1.0 - o.hot_fraction) : data_size{};
    r.warm = o.bytes() + o.reread - r.cold;
    r.footprint = o.bytes_written;
    if (n.kind == node_kind::matmul && n.broadcast_b) {
        const shape b = n.shapes[1].at(batch, "shapes[1]");
        r.footprint += static_cast<double>(checked_product(b[b.rank() - 2], b[b.rank() - 1],
                                                           "evaluate", "matmul B elements")) *
                       size_of(n.type);
    }
    return r;
}

/// Adds which node and batch to an error's message.
[[noreturn]] inline void rethrow_for_node(const error& e, const node& n, std::int64_t batch) {
    throw error(std::string(e.what()) + " (in node '" + std::string(n.name.view()) +
                "' at batch " + std::to_string(batch) + ")");
}
}  // namespace detail

/// Evaluates node `n` at batch `batch` on at most `limit` cores of its engine (ignored for
/// transfers). At run time an error names the node and the batch.
[[nodiscard]] constexpr node_eval evaluate_at(const chip& c, const node& n, std::int64_t batch,
                                              core_count limit, const graph_params& p = {}) {
    if (std::is_constant_evaluated()) return detail::evaluate_node(c, n, batch, limit, p);
    try {
        return detail::evaluate_node(c, n, batch, limit, p);
    } catch (const error& e) {
        detail::rethrow_for_node(e, n, batch);
    }
}

/// The engine node `n` runs on (transfers: none; reported as vector and never costed on it).
[[nodiscard]] constexpr engine engine_of(const node& n) noexcept {
    if (n.is_transfer()) return engine::vector;
    if (n.eng == engine::aicpu) return engine::aicpu;
    if (n.kind == node_kind::matmul) return engine::cube;
    if (n.kind == node_kind::topk && is_integer(n.type)) return engine::aicpu;  // guide §8
    if (n.kind == node_kind::generic) return n.eng;
    return engine::vector;
}

/// Evaluates node `n` at batch `batch` under `split`.
[[nodiscard]] constexpr node_eval evaluate(const chip& c, const node& n, std::int64_t batch,
                                           const core_split& split, const graph_params& p = {}) {
    return evaluate_at(c, n, batch, limit_for(c, engine_of(n), split), p);
}

// ---------------------------------------------------------------------------------------------
// The serial timeline.

/// Serial latency of one inference and its shares. `latency` is, by definition and exactly,
/// device + bubbles + aicpu + transfer.
struct serial_result {
    duration latency{};
    duration device{};    // AI Core (cube + vector) op latencies
    duration bubbles{};   // device idle, waiting for the host (guide §3)
    duration aicpu{};     // AI CPU op latencies (guide §8)
    duration transfer{};  // host link copies (guide §4)
    duration host{};      // host time spent dispatching (runs alongside the device)
    duration cube{};      // latency of the cube ops
    duration vector{};    // latency of the vector ops
    duration cube_core_time{};    // sum of cores x latency, cube ops
    duration vector_core_time{};  // the same, vector ops
    data_size working_set{};      // sum of node footprints
    int device_ops = 0;
    int host_dispatched = 0;
    [[nodiscard]] constexpr double share(duration part) const noexcept {
        return latency > duration{} ? part / latency : 0.0;
    }
    [[nodiscard]] friend constexpr bool operator==(const serial_result&,
                                                   const serial_result&) = default;
};

namespace detail {

/// Time of one node on the timeline, as the card model stretches it.
struct timed_node {
    duration device{};  // time the node occupies the stream
    duration host{};    // host time to launch it (0 unless host-dispatched)
    dispatch mode = dispatch::graph;
};

/// Walks the stream and returns the bubbles. `timing(i)` gives node i's timed_node; it is called
/// once per node, in order.
template <class Timing>
[[nodiscard]] constexpr duration walk_timeline(std::size_t count, Timing&& timing) {
    duration host_t{};  // when the host has launched everything so far
    duration dev_t{};   // when the device is free
    duration bubbles{};
    for (std::size_t i = 0; i < count; ++i) {
        const timed_node t = timing(i);
        duration start = dev_t;
        if (t.mode != dispatch::graph) {
            host_t += t.host;
            if (host_t > start) {
                bubbles += host_t - start;
                start = host_t;
            }
        }
        dev_t = start + t.device;
        if (t.mode == dispatch::host_sync && dev_t > host_t) host_t = dev_t;
    }
    return bubbles;
}

}  // namespace detail

/// Serial latency of one inference of `nodes` at batch `batch` under `split` (see file header).
[[nodiscard]] constexpr serial_result serial_latency(const chip& c, std::span<const node> nodes,
                                                     std::int64_t batch, const core_split& split,
                                                     const graph_params& p = {}) {
    detail::expect_batch(batch, "serial_latency");
    validate(split, c);
    serial_result r;
    r.bubbles = detail::walk_timeline(nodes.size(), [&](std::size_t i) {
        const node& n = nodes[i];
        const node_eval e = evaluate(c, n, batch, split, p);
        r.working_set += e.footprint;
        if (n.host_dispatched()) {
            ++r.host_dispatched;
            r.host += e.host_time;
        }
        if (e.is_transfer()) {
            r.transfer += e.cost.latency;
        } else if (e.eng == engine::aicpu) {
            r.aicpu += e.cost.latency;
        } else {
            ++r.device_ops;
            r.device += e.cost.latency;
            if (e.eng == engine::cube) {
                r.cube += e.cost.latency;
                r.cube_core_time += e.cost.core_time;
            } else {
                r.vector += e.cost.latency;
                r.vector_core_time += e.cost.core_time;
            }
        }
        return detail::timed_node{e.cost.latency, e.host_time, e.mode};
    });
    r.latency = r.device + r.aicpu + r.transfer + r.bubbles;
    return r;
}

/// Serial latency on the whole chip.
[[nodiscard]] constexpr serial_result serial_latency(const chip& c, std::span<const node> nodes,
                                                     std::int64_t batch,
                                                     const graph_params& p = {}) {
    return serial_latency(c, nodes, batch, all_cores(c), p);
}

// ---------------------------------------------------------------------------------------------
// Models.

/// A model read at run time (io/model_file.hpp) or built in code.
struct model {
    std::string name;
    std::vector<node> nodes;
    /// The runtime path the model file asks for (its `runtime` line), if any (runtime.hpp).
    std::optional<runtime_spec> runtime{};
    [[nodiscard]] std::span<const node> view() const noexcept { return nodes; }
    operator std::span<const node>() const noexcept { return nodes; }  // NOLINT: a view
};

/// The same nodes with every host-dispatched node sunk with the graph (guide §3: "sink the
/// whole graph, dynamic -> static").
template <std::size_t N>
[[nodiscard]] constexpr std::array<node, N> sink(std::array<node, N> nodes) {
    for (node& n : nodes) n.mode = dispatch::graph;
    return nodes;
}
[[nodiscard]] inline model sink(model m) {
    for (node& n : m.nodes) n.mode = dispatch::graph;
    m.name += " (sunk)";
    return m;
}

/// Every node launched by the host one op at a time (single-op mode).
template <std::size_t N>
[[nodiscard]] constexpr std::array<node, N> single_op_mode(std::array<node, N> nodes) {
    for (node& n : nodes) {
        if (n.mode == dispatch::graph) n.mode = dispatch::host;
    }
    return nodes;
}
[[nodiscard]] inline model single_op_mode(model m) {
    for (node& n : m.nodes) {
        if (n.mode == dispatch::graph) n.mode = dispatch::host;
    }
    m.name += " (single-op)";
    return m;
}

}  // namespace perfcast
