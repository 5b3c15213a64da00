// perfcast/node.hpp: one step of a model, sized by the batch.
//
// A node stores its shapes symbolically (batched_shape.hpp) and `instantiate(node, batch)` builds
// the op.hpp op for one batch. Nodes also say how they reach the device:
//   dispatch::graph      part of a sunk (static, compiled) graph: no per-op host work;
//   dispatch::host       launched by the host one op at a time (single-op mode, guide §3);
//   dispatch::host_sync  as host, and the host must read this op's output shape before it can
//                        prepare the next op (dynamic shape, guide §7: Where -> task_wait).
// and transfers over the host link (model inputs and outputs, guide §4) are nodes too.
// Build nodes with the factories of nodes.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "batched_shape.hpp"
#include "chip.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "op.hpp"
#include "shape.hpp"
#include "units.hpp"

namespace perfcast {

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
    bool broadcast_b = false;          // matmul: B shared by every batch (guide §9)
    bool out_same_as_in = true;        // elementwise
    int inputs = 0;                    // elementwise: input tensors (0: 2, or 1 for cast)
    int outputs = 1;                   // elementwise
    double ops_per_element = 1;        // elementwise
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
    PERFCAST_EXPECTS(batch >= 1, where, "batch", static_cast<double>(batch), "a batch size >= 1");
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
            r = batch_matmul(b, m, nn, kk, n.type,
                             {.broadcast_b = n.broadcast_b, .out_type = n.out_type});
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
        case node_kind::cast: r = cast(s0.elements("cast elements"), n.type, n.out_type); break;
        case node_kind::reduce: {
            const std::int64_t length = s0.inner();
            r = reduce(s0.elements("reduce elements") / length, length, n.type);
            break;
        }
        case node_kind::gather:
            r = gather(s0.elements("gather indices"),
                       static_cast<double>(n.row_elements) * size_of(n.type), n.table_rows, n.type,
                       {.hot_fraction = n.hot_fraction, .index_type = n.index_type});
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
                                 "concat elements",
                                 static_cast<double>(total) + static_cast<double>(e),
                                 "a count that fits in 63 bits");
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
        case node_kind::transpose: r = transpose(s0, n.type, n.inner_axis_moves); break;
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
        case node_kind::transfer: break;  // rejected above
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

/// The engine node `n` runs on (transfers: none; reported as vector and never costed on it).
[[nodiscard]] constexpr engine engine_of(const node& n) noexcept {
    if (n.is_transfer()) return engine::vector;
    if (n.eng == engine::aicpu) return engine::aicpu;
    if (n.kind == node_kind::matmul) return engine::cube;
    if (n.kind == node_kind::topk && is_integer(n.type)) return engine::aicpu;  // guide §8
    if (n.kind == node_kind::generic) return n.eng;
    return engine::vector;
}

}  // namespace perfcast
