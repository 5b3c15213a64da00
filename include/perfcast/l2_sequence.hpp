// perfcast/l2_sequence.hpp: what the order of a model's nodes says about L2, inference after
// inference.
//
// cost.hpp alone prices an op by its size: inputs that fit in the resident part of L2 are there,
// writes that fit stay there and are never paid for. In a deployment neither holds by size
// alone: a lookup's rows come from an embedding table in HBM however few they are, and a byte
// written reaches HBM when later traffic evicts its dirty line. A profile tells cost.hpp the
// truth from its order (profile/context.hpp); a model's nodes have an order too, run again and
// again. walk_l2_sequence() walks it twice (the first pass is the inference before, so the second
// starts from steady state) with L2 as the last `capacity` bytes of traffic (an LRU cache;
// capacity = l2_resident_size x l2_resident_share, cost.hpp's resident part), and gives each
// device node of the second pass an l2_context, which node_eval_of (graph.hpp) hands to its op
// (op::l2_input_share, op::writes_reach_hbm):
//  - An inference whose working set fits in L2 (card.hpp's test: the buffers it writes and the
//    inputs that outlive it, against the resident L2, l2_resident_size) keeps them there from one
//    inference to the next: its ops get no context, cost.hpp's size rule prices them as before
//    (it honours l2_resident_share and reads that are not in the working set, such as model
//    inputs with no copy); only a lookup gets one (below). The test is a cliff: a batch whose
//    working set just passes L2 pays for every write (as an LRU cache does on a cyclic stream
//    larger than itself).
//  - A working set past L2: a model file names no edges, so a node is taken to read the most
//    recent outputs before it (the data flows along the sequence), newest first, up to its reads
//    other than persistent ones; such an output is found when the traffic since it was written
//    plus all of the node's reads fit in the window (profile/context.hpp's test). Persistent
//    reads (inputs whose shape does not scale with the batch, in a node with one that does:
//    weights, biases, a matmul's shared B) were read an inference ago, more than the window
//    since: not found. Every byte written reaches HBM once (the writer pays: where a profile's
//    order is known the evicting op pays, profile/context.hpp, but the total is what a
//    deployment needs, and charging the writer keeps it monotone: a larger L2 never charges
//    more).
//  - A lookup's rows: its hot rows (`hot`) are found (a few rows, touched all the time) when they
//    fit in the window; the others only when the whole table fits in L2 beside the working set
//    and the tables found before it (a lookup draws new rows each time).
//  - Host copies to the device write their bytes through L2 (an output like any other; an
//    assumption: PCIe writes into device memory pass the L2 on both vendors' cards), copies to
//    the host read theirs; AI CPU ops move their bytes through the window too but keep cost.hpp's
//    size rule (their own path to memory is not modelled). Neither gets a context.
// The window keeps the newest `l2_window::slots` outputs: older ones count as evicted (their
// reads miss).
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
#include "counts.hpp"
#include "error.hpp"
#include "node.hpp"
#include "op.hpp"
#include "units.hpp"

namespace perfcast {

/// What a node's place in the inference says about its L2 traffic (walk_l2_sequence). The
/// default (share < 0) leaves the op to cost.hpp's size rule.
struct l2_context {
    double input_share = -1;        // share of its reads found in L2; < 0: unknown (size rule)
    bool writes_reach_hbm = false;  // every byte it writes reaches HBM (written back later)
    [[nodiscard]] friend constexpr bool operator==(const l2_context&, const l2_context&) = default;
};

namespace detail {

/// Adds which node (and its model file's line, if it was read from one) and batch to an
/// error's message, unless it names them already (instantiate's broadcast check ends with
/// "(node 'x': ... at batch 2)"): then rethrows it as it is. Called from a handler of `e`.
[[noreturn]] inline void rethrow_for_node(const error& e, const node& n, std::int64_t batch) {
    const std::string what = e.what();
    const std::string label = node_label(n);
    const std::string at = " at batch " + std::to_string(batch);
    if (what.find("(" + label) != std::string::npos && what.ends_with(at + ")")) throw;
    throw error(what + " (in " + label + (n.line.value > 0 ? "," : "") + at + ")");
}

/// L2 as the last `capacity` bytes of traffic: the recent outputs, in a ring of the newest
/// `slots`.
class l2_window {
public:
    /// Outputs remembered: an assumption that bounds the work on models of many tiny nodes (a
    /// node reads at most a few recent outputs; 256 of them span a whole inference of the
    /// shipped models). Older outputs count as evicted.
    static constexpr std::size_t slots = 256;

    constexpr explicit l2_window(data_size capacity) noexcept : capacity_(capacity) {}

    /// Bytes of `wanted` found among the recent outputs, newest first, while the traffic since
    /// each was written plus `reads` (all of the reader's reads) fits in the window.
    [[nodiscard]] constexpr data_size recent_outputs(data_size wanted,
                                                     data_size reads) const noexcept {
        data_size found{};
        for (std::size_t k = 0; k < count_ && found < wanted; ++k) {
            const output& t = outputs_[(next_ + slots - 1 - k) % slots];
            if (traffic_ - t.at + reads > capacity_) break;
            found += t.bytes < wanted - found ? t.bytes : wanted - found;
        }
        return found;
    }

    /// Records `reads` bytes read and `writes` bytes written (its output, the newest).
    constexpr void move(data_size reads, data_size writes) noexcept {
        traffic_ += reads + writes;
        if (writes <= data_size{}) return;
        outputs_[next_] = {writes, traffic_};
        next_ = (next_ + 1) % slots;
        if (count_ < slots) ++count_;
    }

private:
    struct output {
        data_size bytes{};
        data_size at{};  // the traffic just after it was written
    };
    data_size capacity_;
    data_size traffic_{};
    std::array<output, slots> outputs_{};
    std::size_t next_ = 0;
    std::size_t count_ = 0;
};

/// Bytes of a node's inputs that outlive the inference: those whose shape does not scale with
/// the batch (weights, biases, a matmul's shared B), in a node with one that does (a node none
/// of whose shapes scales cannot tell weights from activations: none), at most `reads`. Not a
/// lookup's table, which it reads a few rows of.
[[nodiscard]] constexpr data_size persistent_bytes(const node& n, std::int64_t batch,
                                                   data_size reads) {
    data_size r{};
    if (n.kind == op_kind::gather || !n.depends_on_batch()) return r;
    // A tile's second shape is its multiples, not a tensor.
    const std::size_t tensors = n.kind == op_kind::tile ? 1 : n.shape_count;
    for (std::size_t i = 0; i < tensors; ++i) {
        if (n.shapes[i].depends_on_batch()) continue;
        r += static_cast<double>(n.shapes[i].at(batch, "shapes").elements("shapes")) *
             size_of(n.type);
    }
    return r < reads ? r : reads;
}

/// What the walk needs of one node at one batch.
struct node_traffic {
    data_size reads{};       // bytes read (a copy to the host: its bytes)
    data_size writes{};      // bytes written (a copy to the device: its bytes)
    data_size persistent{};  // of the reads, inputs whose shape does not scale with the batch
    data_size table{};       // a lookup: its whole table (its rows read are its writes)
    double hot = 0;          // a lookup: the share of its rows on hot rows
    data_size footprint{};   // its share of the working set: writes, persistent reads
    bool costed = false;     // a device op that cost.hpp prices (not a transfer, not on AI CPU)
};

[[nodiscard]] constexpr node_traffic traffic_of_node(const chip& c, const node& n,
                                                     std::int64_t batch) {
    node_traffic t;
    if (n.is_transfer()) {
        (n.direction == transfer_dir::to_device ? t.writes : t.reads) = transfer_bytes(n, batch);
        t.footprint = t.writes;
        return t;
    }
    const op o = instantiate(n, batch);
    t.reads = o.bytes_read;
    t.writes = o.bytes_written;
    t.costed = engine_on(c, n) != engine::aicpu;
    if (n.kind == op_kind::gather) {
        t.table = static_cast<double>(n.table_rows) * o.run;
        t.hot = o.hot_fraction;
        t.footprint = t.writes;
        return t;
    }
    t.persistent = persistent_bytes(n, batch, t.reads);
    t.footprint = t.writes + t.persistent;
    return t;
}

/// traffic_of_node; at run time an error names the node and the batch.
[[nodiscard]] constexpr node_traffic traffic_of(const chip& c, const node& n, std::int64_t batch) {
    if (std::is_constant_evaluated()) return traffic_of_node(c, n, batch);
    try {
        return traffic_of_node(c, n, batch);
    } catch (const error& e) {
        rethrow_for_node(e, n, batch);
    }
}

/// walk_l2_sequence over `count` nodes whose traffic `traffic(i)` gives.
template <class Traffic, class Sink>
constexpr void walk_traffic(std::size_t count, data_size l2, data_size capacity, Traffic&& traffic,
                            Sink&& sink) {
    // The inference's working set (card.hpp's: the buffers it writes, the inputs that outlive
    // it): when it fits in L2, the next inference finds it all there.
    data_size working_set{};
    for (std::size_t i = 0; i < count; ++i) working_set += traffic(i).footprint;
    const bool fits = working_set <= l2;
    // The context of a node that found `found` of its `reads`.
    const auto context = [](data_size found, data_size reads, bool writes_reach_hbm) {
        const double share = reads > data_size{} ? found / reads : 1.0;
        return l2_context{share < 1 ? share : 1.0, writes_reach_hbm};
    };
    l2_window w(capacity);
    for (int pass = 0; pass < 2; ++pass) {
        data_size tables{};  // the tables found so far in this pass, beside the working set
        for (std::size_t i = 0; i < count; ++i) {
            const node_traffic t = traffic(i);
            if (pass == 1 && t.costed) {
                if (t.table > data_size{}) {  // a lookup: its indices, then its rows
                    const data_size rows = t.writes;
                    const data_size hot = rows * t.hot;
                    data_size found =
                        fits ? t.reads - rows : w.recent_outputs(t.reads - rows, t.reads);
                    if (working_set - t.footprint + tables + t.table <= l2) {
                        found += rows;
                        tables += t.table;
                    } else if (hot <= capacity) {
                        found += hot;
                    }
                    sink(i, context(found, t.reads, !fits));
                } else if (fits) {
                    sink(i, l2_context{});  // cost.hpp's size rule, which holds here
                } else {
                    sink(i,
                         context(w.recent_outputs(t.reads - t.persistent, t.reads), t.reads, true));
                }
            }
            w.move(t.reads, t.writes);
        }
    }
}

}  // namespace detail

/// Walks `nodes` at `batch` twice (see the file header) and calls `sink(i, context)` for each
/// device node i (not a transfer, not on the AI CPU) of the second pass, in order. At run time
/// each node is instantiated once; in a constant expression three times (no vector to keep
/// their traffic in).
template <class Sink>
constexpr void walk_l2_sequence(const chip& c, std::span<const node> nodes, std::int64_t batch,
                                const model_params& p, Sink&& sink) {
    const data_size l2 = l2_resident_size(c.memory);
    const data_size capacity = l2 * p.l2_resident_share;
    if (std::is_constant_evaluated()) {
        detail::walk_traffic(
            nodes.size(), l2, capacity,
            [&](std::size_t i) { return detail::traffic_of(c, nodes[i], batch); }, sink);
        return;
    }
    std::vector<detail::node_traffic> traffic;
    traffic.reserve(nodes.size());
    for (const node& n : nodes) traffic.push_back(detail::traffic_of(c, n, batch));
    detail::walk_traffic(
        nodes.size(), l2, capacity,
        [&](std::size_t i) -> const detail::node_traffic& { return traffic[i]; }, sink);
}

/// The l2_context of node `i` of `nodes` alone (walk_l2_sequence's; a walk of its own).
[[nodiscard]] constexpr l2_context l2_context_at(const chip& c, std::span<const node> nodes,
                                                 batch_size batch, const model_params& p,
                                                 std::size_t i) {
    l2_context r;
    walk_l2_sequence(c, nodes, batch.value, p, [&](std::size_t j, const l2_context& ctx) {
        if (j == i) r = ctx;
    });
    return r;
}

}  // namespace perfcast
