// perfcast/graph.hpp: a model = nodes (node.hpp) in order on one stream, sized by the batch.
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
#include "counts.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "l2_sequence.hpp"
#include "link.hpp"
#include "node.hpp"
#include "nodes.hpp"
#include "op.hpp"
#include "runtime.hpp"
#include "shape.hpp"
#include "units.hpp"

namespace perfcast {

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
    // The limit and the chip named: a chip of 0 cores (a default-constructed one) is then seen
    // to be the problem, not the split.
    const auto most = [&c](int cores, std::string_view engine) {
        return "no more than the chip's " + std::string(engine) + " cores (" +
               std::to_string(cores) + " on " +
               (c.name.view().empty() ? std::string("an unnamed chip")
                                      : std::string(c.name.view())) +
               ")";
    };
    PERFCAST_EXPECTS(s.cube.value <= c.cube.cores, where, "cube", static_cast<double>(s.cube.value),
                     most(c.cube.cores, "cube"));
    PERFCAST_EXPECTS(s.vector.value <= c.vector.cores, where, "vector",
                     static_cast<double>(s.vector.value), most(c.vector.cores, "vector"));
    return s;
}

/// What a model evaluation needs besides the chip: the op model's parameters and the host link
/// (default: the chip's PCIe generation and lanes with link.hpp's efficiency and per-transfer
/// cost).
struct graph_params {
    model_params model{};
    std::optional<pcie_link> link{};
    /// Whether each device node's L2 traffic follows from its place in the inference
    /// (l2_sequence.hpp: an inference that fits in L2 is found there; otherwise inputs are found
    /// by the traffic since their producer, weights not at all, a lookup's rows when hot, and
    /// every write reaches HBM). false: cost.hpp's size rule for every op alone (inputs that fit
    /// in L2 are there, writes that fit cost no HBM time), as before the sequence.
    bool l2_sequence = true;
    [[nodiscard]] friend constexpr bool operator==(const graph_params&,
                                                   const graph_params&) = default;
};

[[nodiscard]] constexpr pcie_link link_for(const chip& c, const graph_params& p) {
    return p.link ? validate(*p.link) : link_of(c);
}

/// One node at one batch under one split, alone on the chip.
struct node_eval {
    op_kind kind = op_kind::generic;
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
    data_size persistent{};  // of it, inputs that outlive the inference (weights; shared or not)
    duration memory_streamed{};  // memory time if its inputs had to stream through HBM
    [[nodiscard]] constexpr bool is_transfer() const noexcept { return kind == op_kind::transfer; }
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

/// Node `n` at batch `batch` on `limit` cores, in its place in the inference when `ctx` says it
/// (l2_sequence.hpp), else alone (cost.hpp's size rule). Memory classes: cold, what goes to HBM
/// for one instance alone (in the sequence: the reads not found and, when they reach it, the
/// writes; alone: a gather's table rows except the hot share, embedding tables being far larger
/// than L2); everything else an op reads or writes, and its tiling re-reads, is warm.
/// Footprint: the bytes the op writes, plus the inputs that outlive the inference (weights, a
/// shared matmul B: they stay resident; l2_sequence.hpp's persistent_bytes), plus the bytes a
/// transfer brings to the device.
namespace detail {
[[nodiscard]] constexpr node_eval node_eval_of(const chip& c, const node& n, std::int64_t batch,
                                               core_count limit, const graph_params& p,
                                               const l2_context& ctx) {
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
    op o = instantiate(n, batch);
    o.eng = engine_on(c, n);  // an AI CPU op on a chip without one: its vector engine
    const bool sequenced = ctx.input_share >= 0 && o.eng != engine::aicpu;
    if (sequenced) {
        o.l2_input_share = ctx.input_share;
        o.writes_reach_hbm = ctx.writes_reach_hbm;
    }
    r.eng = o.eng;
    r.cost = cost(c, o, limit, p.model);
    model_params streamed = p.model;
    streamed.l2_resident_share = 0;  // cost.hpp's regime for inputs that do not fit in L2
    op streamed_op = o;              // every read from HBM, every write through to it
    if (sequenced) {
        streamed_op.l2_input_share = 0;
        streamed_op.writes_reach_hbm = true;
    }
    // Priced as cost() prices the op (a GEMM in its library tile, split-K, walks): the op as
    // given would leave out a tiling's re-reads and could stream faster than the op runs warm.
    // Clamped as well: cost() chooses the tiling again for the streamed settings.
    const duration streamed_memory = cost(c, streamed_op, limit, streamed).memory;
    r.memory_streamed = streamed_memory < r.cost.memory ? r.cost.memory : streamed_memory;
    if (n.scale != 1.0) {  // an anchored node (see node::scale): every time term, alike
        r.cost.latency = r.cost.latency * n.scale;
        r.cost.core_time = r.cost.core_time * n.scale;
        r.cost.head = r.cost.head * n.scale;
        r.cost.compute = r.cost.compute * n.scale;
        r.cost.memory = r.cost.memory * n.scale;
        r.memory_streamed = r.memory_streamed * n.scale;
        r.cost.utilization = r.cost.utilization / n.scale;
    }
    if (sequenced) {  // what the sequence sends to HBM even for an instance alone
        r.cold = o.bytes_read * (1.0 - ctx.input_share) +
                 (ctx.writes_reach_hbm ? o.bytes_written : data_size{});
    } else {
        r.cold = n.kind == op_kind::gather ? o.bytes_written * (1.0 - o.hot_fraction) : data_size{};
    }
    r.warm = o.bytes() + o.reread - r.cold;
    r.persistent = detail::persistent_bytes(n, batch, o.bytes_read);
    r.footprint = o.bytes_written + r.persistent;
    return r;
}

}  // namespace detail

/// Evaluates node `n` at batch `batch` on at most `limit` cores of its engine (ignored for
/// transfers). At run time an error names the node and the batch.
[[nodiscard]] constexpr node_eval evaluate_at(const chip& c, const node& n, batch_size batch,
                                              core_count limit, const graph_params& p = {},
                                              const l2_context& ctx = {}) {
    if (std::is_constant_evaluated()) return detail::node_eval_of(c, n, batch.value, limit, p, ctx);
    try {
        return detail::node_eval_of(c, n, batch.value, limit, p, ctx);
    } catch (const error& e) {
        detail::rethrow_for_node(e, n, batch.value);
    }
}

/// Evaluates node `n` at batch `batch` under `split`: evaluate_at with the split's limit for the
/// node's engine.
[[nodiscard]] constexpr node_eval evaluate_node(const chip& c, const node& n, batch_size batch,
                                                const core_split& split, const graph_params& p = {},
                                                const l2_context& ctx = {}) {
    return evaluate_at(c, n, batch, limit_for(c, engine_on(c, n), split), p, ctx);
}

/// The l2_context of every node of `nodes` at `batch` (walk_l2_sequence; transfers and AI CPU
/// nodes get none), or none at all when `p.l2_sequence` is false. At run time.
[[nodiscard]] inline std::vector<l2_context> l2_contexts(const chip& c, std::span<const node> nodes,
                                                         std::int64_t batch,
                                                         const graph_params& p) {
    std::vector<l2_context> r(nodes.size());
    if (p.l2_sequence)
        walk_l2_sequence(c, nodes, batch, p.model,
                         [&](std::size_t i, const l2_context& ctx) { r[i] = ctx; });
    return r;
}

namespace detail {
/// Models up to this many nodes keep their contexts in an array when evaluated in a constant
/// expression (where a vector cannot be filled): one walk for them all; a larger model walks
/// once per node evaluated (slow to compile, the same answer).
inline constexpr std::size_t constexpr_contexts = 128;

/// Calls `f` with the contexts of every node of `nodes` at `batch` (l2_contexts; at compile
/// time an array of them, or none past constexpr_contexts) and returns what it returns.
template <class F>
constexpr decltype(auto) with_contexts(const chip& c, std::span<const node> nodes,
                                       std::int64_t batch, const graph_params& p, F&& f) {
    if (std::is_constant_evaluated()) {
        std::array<l2_context, constexpr_contexts> known{};
        std::size_t count = 0;
        if (p.l2_sequence && nodes.size() <= known.size()) {
            walk_l2_sequence(c, nodes, batch, p.model,
                             [&](std::size_t i, const l2_context& x) { known[i] = x; });
            count = nodes.size();
        }
        return f(std::span<const l2_context>(known.data(), count));
    }
    const std::vector<l2_context> known = l2_contexts(c, nodes, batch, p);
    return f(std::span<const l2_context>(known));
}

/// Node i's l2_context: `known[i]` (with_contexts), else (a constant expression past
/// constexpr_contexts) walked for node i alone.
[[nodiscard]] constexpr l2_context context_of(const chip& c, std::span<const node> nodes,
                                              std::int64_t batch, const graph_params& p,
                                              std::span<const l2_context> known, std::size_t i) {
    if (!p.l2_sequence) return {};
    if (i < known.size()) return known[i];
    return l2_context_at(c, nodes, batch_size{batch}, p.model, i);
}
}  // namespace detail

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
    PERFCAST_EXPECTS(!nodes.empty(), "serial_latency", "nodes", 0.0,
                     "a model with at least one node");
    validate(split, c);
    validate(p.model);  // as evaluate_card does: no efficiency of 0, no overlap of 7
    return detail::with_contexts(c, nodes, batch, p, [&](std::span<const l2_context> known) {
        serial_result r;
        r.bubbles = detail::walk_timeline(nodes.size(), [&](std::size_t i) {
            const node& n = nodes[i];
            const node_eval e = evaluate_node(c, n, batch_size{batch}, split, p,
                                              detail::context_of(c, nodes, batch, p, known, i));
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
    });
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
    /// A view for the calls that take nodes. Of a temporary it lives as long as the temporary:
    /// `evaluate_card(c, read_model_file(f), ...)` is safe, `std::span<const node> n =
    /// read_model_file(f);` dangles; card_service, which keeps the view, refuses a temporary
    /// model (make_card_server tabulates before it returns, and takes one).
    operator std::span<const node>() const noexcept { return nodes; }  // NOLINT: a view
};

/// The runtime preset a run of `m` takes: `given` (a flag, a deployment row's column) if any,
/// else the model's `runtime` line's, else "none" (a line of settings alone sets them over none:
/// runtime.hpp resolve_runtime). No model (null): `given`, else "none".
[[nodiscard]] inline std::string runtime_preset_of(const model* m, std::string_view given) {
    if (!given.empty()) return std::string(given);
    if (m && m->runtime && !m->runtime->preset.empty()) return m->runtime->preset;
    return "none";
}

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
