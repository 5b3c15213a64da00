// perfcast/l2_sequence.hpp: what the order of a model's nodes says about L2, inference after
// inference.
//
// cost.hpp alone prices an op by its size: inputs that fit in the resident part of L2 are there,
// writes that fit stay there and are never paid for. In a deployment neither holds by size
// alone: a lookup's rows come from an embedding table in HBM however few they are, and every
// byte written reaches HBM sooner or later, when later traffic evicts the dirty line. A profile
// tells cost.hpp the truth from its order (profile/context.hpp); a model's nodes have an order
// too, run again and again. walk_l2_sequence() walks it twice (the first pass is the inference
// before, so the second starts from steady state) with L2 as the last `capacity` bytes of traffic
// (an LRU cache; capacity = l2_resident_size x l2_resident_share, cost.hpp's resident part), and
// gives each device node of the second pass an l2_context, which node_eval_of (graph.hpp) hands
// to the op (op::l2_input_share, op::writeback):
//  - Activations. A model file names no edges, so a node is taken to read the most recent
//    outputs before it (the data flows along the sequence), newest first, up to its reads other
//    than weights and tables; such an output is found in L2 when the traffic since it was written
//    plus all of the node's reads fit in capacity (profile/context.hpp's test).
//  - Weights (a matmul's shared B operand) were read by the same node one inference earlier:
//    found when the rest of an inference's traffic plus the node's reads fit. Hot rows of a
//    lookup (`hot`) are found; its other rows only when the whole table fits beside the rest of
//    an inference (a lookup draws new rows each time).
//  - Writes. Every byte a node writes reaches HBM once an inference, when later traffic evicts
//    the dirty line, if one inference's traffic does not fit in the window; none does when it
//    fits (the next inference rewrites the same buffers while they are in L2: allocators reuse
//    them). The writer pays (op::writeback, at hbm_write_cost): where a profile's order is known
//    the evicting op pays (profile/context.hpp), but the total is what a deployment needs, and
//    charging the writer keeps it monotone: a larger L2 never charges more.
//  - Host copies to the device write their bytes through L2 (an output like any other; an
//    assumption: PCIe writes into device memory pass the L2 on both vendors' cards), copies to
//    the host read theirs; AI CPU ops move their bytes through the window too but keep cost.hpp's
//    size rule (their own path to memory is not modelled).
// The window keeps the newest `l2_window::slots` outputs: older ones count as evicted (their
// reads miss), a bound on the work for models of thousands of tiny nodes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "chip.hpp"
#include "cost.hpp"
#include "error.hpp"
#include "node.hpp"
#include "op.hpp"
#include "units.hpp"

namespace perfcast {

/// What a node's place in the inference says about its L2 traffic (walk_l2_sequence).
struct l2_context {
    double input_share = -1;  // share of its reads found in L2; < 0: unknown (cost.hpp's size rule)
    data_size writeback{};    // dirty lines of earlier writes its own traffic evicts
    [[nodiscard]] friend constexpr bool operator==(const l2_context&, const l2_context&) = default;
};

namespace detail {

/// Adds which node and batch to an error's message.
[[noreturn]] inline void rethrow_for_node(const error& e, const node& n, std::int64_t batch) {
    throw error(std::string(e.what()) + " (in node '" + std::string(n.name.view()) + "' at batch " +
                std::to_string(batch) + ")");
}

/// instantiate(n, batch); at run time an error names the node and the batch.
[[nodiscard]] constexpr op instantiate_named(const node& n, std::int64_t batch) {
    if (std::is_constant_evaluated()) return instantiate(n, batch);
    try {
        return instantiate(n, batch);
    } catch (const error& e) {
        rethrow_for_node(e, n, batch);
    }
}

/// L2 as the last `capacity` bytes of traffic: the recent outputs, in a ring of the newest
/// `slots`.
class l2_window {
public:
    static constexpr std::size_t slots = 256;

    constexpr explicit l2_window(double capacity) noexcept : capacity_(capacity) {}

    [[nodiscard]] constexpr double traffic() const noexcept { return traffic_; }
    [[nodiscard]] constexpr double capacity() const noexcept { return capacity_; }

    /// Bytes of `wanted` found among the recent outputs, newest first, while the traffic since
    /// each was written plus `reads` (all of the reader's reads) fits in the window.
    [[nodiscard]] constexpr double recent_outputs(double wanted, double reads) const noexcept {
        double found = 0;
        for (std::size_t k = 0; k < outputs_.count && found < wanted; ++k) {
            const entry& t = outputs_.newest(k);
            if (traffic_ - t.at + reads > capacity_) break;
            found += t.bytes < wanted - found ? t.bytes : wanted - found;
        }
        return found;
    }

    /// Records `reads` bytes read and `writes` bytes written (its output, the newest).
    constexpr void move(double reads, double writes) noexcept {
        traffic_ += reads + writes;
        if (writes > 0) outputs_.push({.bytes = writes, .at = traffic_});
    }

private:
    struct entry {
        double bytes = 0;
        double at = 0;  // traffic just after it was written
    };
    struct ring {
        std::array<entry, slots> items{};
        std::size_t next = 0;
        std::size_t count = 0;
        constexpr void push(const entry& e) noexcept {
            items[next] = e;
            next = (next + 1) % slots;
            if (count < slots) ++count;
        }
        [[nodiscard]] constexpr const entry& newest(std::size_t k) const noexcept {
            return items[(next + slots - 1 - k) % slots];
        }
    };
    double capacity_;
    double traffic_ = 0;
    ring outputs_;
};

/// What the walk needs of one node at one batch: its traffic and what of it outlives the
/// inference.
struct node_traffic {
    double reads = 0;     // bytes read (a copy to the host: its bytes)
    double writes = 0;    // bytes written (a copy to the device: its bytes)
    double kept = 0;      // of the reads, weights (a matmul's shared B) or a lookup's rows
    double table = 0;     // a lookup: its whole table
    double hot = 0;       // a lookup: the share of its rows that are hot
    bool costed = false;  // a device op that cost.hpp prices (not a transfer, not on the AI CPU)
};

[[nodiscard]] constexpr node_traffic traffic_of(const node& n, std::int64_t batch) {
    node_traffic t;
    if (n.is_transfer()) {
        const double bytes = transfer_bytes(n, batch).in(units::B);
        (n.direction == transfer_dir::to_device ? t.writes : t.reads) = bytes;
        return t;
    }
    const op o = instantiate_named(n, batch);
    t.reads = o.bytes_read.in(units::B);
    t.writes = o.bytes_written.in(units::B);
    t.costed = o.eng != engine::aicpu;
    if (n.kind == op_kind::matmul && n.broadcast_b) {
        const shape b = n.shapes[1].at(batch, "shapes[1]");
        t.kept = static_cast<double>(checked_product(b[b.rank() - 2], b[b.rank() - 1], "evaluate",
                                                     "matmul B elements")) *
                 size_of(n.type).in(units::B);
    } else if (n.kind == op_kind::gather) {
        t.kept = t.writes;  // the rows read are the rows written
        t.table = static_cast<double>(n.table_rows) * o.run.in(units::B);
        t.hot = o.hot_fraction;
    }
    return t;
}

/// walk_l2_sequence over `count` nodes whose traffic `traffic(i)` gives.
template <class Traffic, class Sink>
constexpr void walk_traffic(std::size_t count, double capacity, Traffic&& traffic, Sink&& sink) {
    // One inference's traffic, for what a node read an inference ago.
    double per_inference = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const node_traffic t = traffic(i);
        per_inference += t.reads + t.writes;
    }
    l2_window w(capacity);
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < count; ++i) {
            const node_traffic t = traffic(i);
            if (pass == 1 && t.costed) {
                const double rest_of_inference = per_inference - t.reads - t.writes;
                double found = w.recent_outputs(t.reads - t.kept, t.reads);
                if (t.table > 0) {  // a lookup
                    found += rest_of_inference + t.table <= capacity ? t.kept : t.kept * t.hot;
                } else if (rest_of_inference + t.reads <= capacity) {
                    found += t.kept;
                }
                l2_context ctx;
                ctx.input_share = t.reads > 0 ? found / t.reads : 1.0;
                // Its writes reach HBM once an inference when one inference's traffic does not
                // fit (cost.hpp charges the op the part its own traffic pushes out; the rest is
                // its writeback here), none when it fits (the next inference rewrites the same
                // buffers in L2).
                if (per_inference > capacity) {
                    const double moved = t.reads + t.writes;
                    const double through = moved > capacity ? t.writes * (1 - capacity / moved) : 0;
                    ctx.writeback = data_size{t.writes - through, units::B};
                }
                sink(i, ctx);
            }
            w.move(t.reads, t.writes);
        }
    }
}

}  // namespace detail

/// Walks `nodes` at `batch` twice (see the file header) and calls `sink(i, context)` for each
/// device node i (not a transfer, not on the AI CPU) of the second pass, in order. At run time
/// each node is instantiated once; in a constant expression once a pass.
template <class Sink>
constexpr void walk_l2_sequence(const chip& c, std::span<const node> nodes, std::int64_t batch,
                                const model_params& p, Sink&& sink) {
    const double capacity = (l2_resident_size(c.memory) * p.l2_resident_share).in(units::B);
    if (std::is_constant_evaluated()) {
        detail::walk_traffic(
            nodes.size(), capacity,
            [&](std::size_t i) { return detail::traffic_of(nodes[i], batch); }, sink);
        return;
    }
    std::vector<detail::node_traffic> traffic;
    traffic.reserve(nodes.size());
    for (const node& n : nodes) traffic.push_back(detail::traffic_of(n, batch));
    detail::walk_traffic(
        nodes.size(), capacity,
        [&](std::size_t i) -> const detail::node_traffic& { return traffic[i]; }, sink);
}

/// The l2_context of node `i` alone (walk_l2_sequence's, for one node).
[[nodiscard]] constexpr l2_context l2_context_at(const chip& c, std::span<const node> nodes,
                                                 std::int64_t batch, const model_params& p,
                                                 std::size_t i) {
    l2_context r;
    walk_l2_sequence(c, nodes, batch, p, [&](std::size_t j, const l2_context& ctx) {
        if (j == i) r = ctx;
    });
    return r;
}

}  // namespace perfcast
