// perfcast/whatif.hpp: sweeps of deployments (streams x cube limit x vector limit x batch),
// ranked, with the Pareto front of QPS against latency and the best one under a latency target.
//
//   using perfcast::counts;  // an axis is a list of one kind of count (counts.hpp)
//   perfcast::whatif_grid g{.streams = counts<perfcast::stream_count>({1, 2, 3, 4}),
//                           .cube = counts<perfcast::core_count>({6, 12, 24}),
//                           .vector = counts<perfcast::core_count>({12, 24, 48}),
//                           .batches = counts<perfcast::batch_size>({16, 128})};
//   auto r = perfcast::sweep(chip, model, g);               // r.ranked: best first
//   auto pick = perfcast::best_under(r.ranked, 1_ms);       // expected-like: has_value() or not
//   if (pick) use(*pick); else report(pick.closest(), pick.excess());
//
// Every configuration is evaluated with card.hpp (identical instances). Per-node costs do not
// depend on the stream count, so they are computed once per (node, core limit, batch) and
// shared by the whole grid.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "card.hpp"
#include "chip.hpp"
#include "counts.hpp"
#include "device_memory.hpp"
#include "error.hpp"
#include "graph.hpp"
#include "progress.hpp"
#include "units.hpp"

namespace perfcast {

/// The axes of a sweep. Every value of every axis is combined with every other.
struct whatif_grid {
    std::vector<stream_count> streams;
    std::vector<core_count> cube;    // cube-core limit per instance
    std::vector<core_count> vector;  // vector-core limit per instance
    std::vector<batch_size> batches;

    [[nodiscard]] std::size_t size() const noexcept {
        return streams.size() * cube.size() * vector.size() * batches.size();
    }
};

namespace detail {
/// Checks the card axes every sweep shares: streams (1..max_streams), cube and vector limits
/// (1..the chip's cores), naming the axis, the value and the chip's core count.
inline void validate_card_axes(std::string_view where, std::span<const stream_count> streams,
                               std::span<const core_count> cube, std::span<const core_count> vector,
                               const chip& c, int max_streams) {
    auto need = [&](bool ok, std::string_view field, double v, const std::string& expected) {
        if (!ok) precondition_failed(where, field, v, expected);
    };
    need(!streams.empty(), "streams", 0, "at least one stream count");
    need(!cube.empty(), "cube", 0, "at least one cube-core limit");
    need(!vector.empty(), "vector", 0, "at least one vector-core limit");
    for (const stream_count n : streams) {
        const int s = n.value;
        need(s >= 1, "streams", s, "at least 1 stream (instance)");
        need(s <= max_streams, "streams", s,
             "at most " + std::to_string(max_streams) + " streams per card");
    }
    const auto limits = [&](std::span<const core_count> ks, std::string_view axis, int cores) {
        for (const core_count n : ks) {
            const int k = n.value;
            need(k >= 1, axis, k, "at least 1 " + std::string(axis) + " core");
            need(k <= cores, axis, k,
                 "at most " + std::to_string(cores) + " (the " + std::string(axis) +
                     " cores of " + std::string(c.name.view()) + ")");
        }
    };
    limits(cube, "cube", c.cube.cores);
    limits(vector, "vector", c.vector.cores);
}
}  // namespace detail

/// Most streams (instances) per card a sweep accepts: the seed's sweeps use 1..6 (guide §11:
/// past a few streams they evict each other's cache); 64 leaves an order of magnitude.
inline constexpr int max_sweep_streams = 64;

/// Most deployments one sweep evaluates: each is a `candidate` in memory (136 bytes on x86-64),
/// so 1e7 of them take about 2 GB with the rest of the run and a minute or so of one core
/// (measured: 1.77 million, the grid --batch 1-256 --streams 1-6 --cube 1-24 --vector 1-48,
/// take 10.6 s and 318 MB in a Release build; docs/whatif-serving.md, "Memory, time and
/// progress").
inline constexpr double max_sweep_deployments = 1e7;

/// What `perfcast whatif` sweeps and shows when not told otherwise: the grid as the list text
/// its flags take ("1-6", "6,8,12,24": io/parse.hpp's lists), the same grid as scenario.hpp's
/// default_streams .. default_batches (tests/test_whatif_report.cpp checks each text gives them).
struct whatif_defaults {
    /// The seed's sweeps use 1..6 streams (guide §11: past a few they evict each other's cache).
    static constexpr std::string_view streams = "1-6";
    /// Core limits per instance: guide §12, limits of 6-12 cores are typical; 24 cube and 48
    /// vector cores are the whole 910B card.
    static constexpr std::string_view cube = "6,8,12,24";
    static constexpr std::string_view vector = "10,12,24,48";
    /// Batch sizes: guide §6 / §13, gears from 16 to 256.
    static constexpr std::string_view batches = "16,32,64,128,256";
    /// Table rows (an assumption: one screen; --top 0 lists all, csv and json list every row).
    static constexpr std::size_t top = 20;
    /// The cores of the chip the core-limit lists above are for (the 910B1's: 24 cube, 48
    /// vector); another chip's defaults are the same shares of its own cores (limits_for).
    static constexpr core_count cube_base_cores{24};
    static constexpr core_count vector_base_cores{48};
};

/// `base`, core limits for an engine of `base_cores` cores, as the same shares of an engine of
/// `cores`: each rounded to the nearest core (at least 1), ascending, each once. The 910B1's
/// defaults 6,8,12,24 cube cores are 5,7,10,20 on a 910B3 (20) and 27,36,54,108 on an A100's
/// 108 SMs; its 10,12,24,48 vector cores are 8,10,20,40 and 23,27,54,108.
[[nodiscard]] constexpr std::vector<int> limits_for(std::span<const int> base,
                                                    core_count base_cores, core_count cores) {
    PERFCAST_EXPECTS(base_cores.value >= 1, "limits_for", "base_cores",
                     static_cast<double>(base_cores.value), "at least 1 core");
    PERFCAST_EXPECTS(cores.value >= 1, "limits_for", "cores", static_cast<double>(cores.value),
                     "at least 1 core");
    std::vector<int> out;
    for (const int b : base) {
        // Nearest whole core of b x cores / base_cores, halves up, in integers.
        const std::int64_t scaled = (2 * std::int64_t{b} * cores.value + base_cores.value) /
                                    (2 * std::int64_t{base_cores.value});
        const int v = static_cast<int>(std::clamp<std::int64_t>(scaled, 1, cores.value));
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// limits_for as the list text `perfcast whatif` takes ("6,8,12,24").
[[nodiscard]] inline std::string limits_text(std::span<const int> base, core_count base_cores,
                                             core_count cores) {
    std::string out;
    for (const int v : limits_for(base, base_cores, cores)) {
        if (!out.empty()) out += ',';
        out += std::to_string(v);
    }
    return out;
}

/// Rejects empty axes, zero or negative values, limits above the chip's cores, more than
/// max_sweep_streams streams and grids of more than max_sweep_deployments deployments, naming
/// the axis (or the grid's size), the value and the bound.
inline const whatif_grid& validate(const whatif_grid& g, const chip& c) {
    constexpr std::string_view where = "validate(whatif_grid)";
    detail::validate_card_axes(where, g.streams, g.cube, g.vector, c, max_sweep_streams);
    PERFCAST_EXPECTS(!g.batches.empty(), where, "batches", 0.0, "at least one batch size");
    for (const batch_size b : g.batches) {
        PERFCAST_EXPECTS(b.value >= 1, where, "batch", static_cast<double>(b.value),
                         "a batch size >= 1");
    }
    // In doubles: four axes of 1e5 values each would overflow a 64-bit product.
    const double deployments =
        static_cast<double>(g.streams.size()) * static_cast<double>(g.cube.size()) *
        static_cast<double>(g.vector.size()) * static_cast<double>(g.batches.size());
    PERFCAST_EXPECTS(deployments <= max_sweep_deployments, where,
                     "deployments (streams x cube x vector x batches)", deployments,
                     "at most 1e7 deployments in one sweep (about 2 GB): fewer values on "
                     "some axis");
    return g;
}

/// One evaluated configuration (identical instances), in compact form.
struct candidate {
    int streams = 0;
    core_split split{};
    std::int64_t batch = 0;
    duration latency{};      // card_result::avg_latency: the task (all streams busy)
    duration window{};       // card_result::avg_window: what a stress test times (= latency
                             // without a runtime path)
    duration cycle{};        // card_result::avg_cycle: task + host work between tasks
    double qps = 0;          // 1000 / cycle.in(ms) x streams (closed loop; = 1000 / latency x
                             // streams when nothing runs between tasks)
    double throughput = 0;   // qps x batch, exactly
    bool runtime_path = false;  // the runtime path was modeled (card_result::runtime_path)
    double cube_utilization = 0;
    double vector_utilization = 0;
    double hbm_utilization = 0;
    double l2_miss = 0;
    duration bubbles{};   // per inference, under load (an instance of the first group: on a
    duration transfer{};  // card of several chips, of the first chip, which runs the most)
    card_bound bound = card_bound::compute;
    bool cores_shared = false;  // a split is time-shared (sum of limits above a chip's cores)
    /// Whether the card's memory holds its instances (device_memory.hpp: `memory` at most the
    /// chip's memory.hbm_size); one that does not ranks after every one that does and is on no
    /// front and no pick.
    bool fits = true;
    data_size memory{};  // what its instances hold on the card, a lower bound (memory_need; on a
                         // card of several chips, the fullest chip's)
    [[nodiscard]] friend bool operator==(const candidate&, const candidate&) = default;
};

[[nodiscard]] inline candidate make_candidate(const card_result& r) {
    candidate c;
    c.streams = r.streams;
    c.split = r.groups[0].split;
    c.batch = r.batch;
    c.latency = r.avg_latency;
    c.window = r.avg_window;
    c.cycle = r.avg_cycle;
    c.runtime_path = r.runtime_path;
    c.qps = r.qps;
    c.throughput = r.throughput;
    c.cube_utilization = r.cube_utilization;
    c.vector_utilization = r.vector_utilization;
    c.hbm_utilization = r.hbm_utilization;
    c.l2_miss = r.l2_miss;
    c.bubbles = r.groups[0].bubbles;
    c.transfer = r.groups[0].transfer;
    c.bound = r.bound;
    c.cores_shared = r.cube_shared || r.vector_shared;
    return c;
}

enum class rank_by : unsigned char {
    qps,         // requests per second (guide §6's figure), ties by latency
    throughput,  // samples per second, ties by latency
};

/// Best first: one that fits the card's memory before one that does not, then higher QPS (or
/// throughput), then lower latency, then fewer streams, cube cores, vector cores and a smaller
/// batch (so that the order is total and repeatable).
[[nodiscard]] inline bool ranks_before(const candidate& a, const candidate& b,
                                       rank_by by = rank_by::qps) noexcept {
    if (a.fits != b.fits) return a.fits;
    const double ka = by == rank_by::qps ? a.qps : a.throughput;
    const double kb = by == rank_by::qps ? b.qps : b.throughput;
    if (ka != kb) return ka > kb;
    if (a.latency != b.latency) return a.latency < b.latency;
    if (a.streams != b.streams) return a.streams < b.streams;
    if (a.split.cube != b.split.cube) return a.split.cube < b.split.cube;
    if (a.split.vector != b.split.vector) return a.split.vector < b.split.vector;
    return a.batch < b.batch;
}

/// Indices of the Pareto front of QPS (higher is better) against latency (lower is better):
/// the candidates that fit the card's memory and no other such candidate beats on both, ordered
/// by latency. Among exact ties the first in `cands` stands for all.
[[nodiscard]] inline std::vector<std::size_t> pareto_front(std::span<const candidate> cands) {
    std::vector<std::size_t> order(cands.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (cands[a].latency != cands[b].latency) return cands[a].latency < cands[b].latency;
        return cands[a].qps > cands[b].qps;
    });
    std::vector<std::size_t> front;
    double best_qps = -1;
    for (std::size_t i : order) {
        if (cands[i].fits && cands[i].qps > best_qps) {
            front.push_back(i);
            best_qps = cands[i].qps;
        }
    }
    return front;
}

/// The answer to "which configuration is best under this latency target": an expected-like
/// result. When some candidate that fits the card's memory meets the target it holds the best of
/// them (in ranking order); when none does it holds no value but still carries the closest
/// candidate (the lowest latency of those that fit; when none fits, the one that needs the least
/// memory) and by how much it misses.
class selection {
public:
    /// `unfit`: the candidates left out because they do not fit the card's memory, of
    /// `capacity` (what why() compares a need with).
    selection(const candidate& c, duration target, bool met, std::size_t unfit = 0,
              data_size capacity = {})
        : chosen_(c), target_(target), met_(met), unfit_(unfit), capacity_(capacity) {}

    [[nodiscard]] bool has_value() const noexcept { return met_; }
    explicit operator bool() const noexcept { return met_; }

    /// The best candidate under the target; perfcast::error when none meets it.
    [[nodiscard]] const candidate& value() const {
        if (!met_) {
            detail::precondition_failed("selection::value", "latency target", why(),
                                        "a target some candidate meets (see closest())");
        }
        return chosen_;
    }
    [[nodiscard]] const candidate& operator*() const { return value(); }
    [[nodiscard]] const candidate* operator->() const { return &value(); }

    /// The chosen candidate when the target is met, else the one closest to it.
    [[nodiscard]] const candidate& closest() const noexcept { return chosen_; }
    [[nodiscard]] duration target() const noexcept { return target_; }
    /// closest().latency - target: <= 0 when met, the miss when not (when no candidate fits the
    /// card's memory, the smallest's, which may be <= 0: why() says what missed).
    [[nodiscard]] duration excess() const noexcept { return chosen_.latency - target_; }

    /// "none of the candidates meets 0.01 ms; the closest, 1 stream(s) of 24 cube / 48 vector
    /// cores at batch 16, takes 0.3581 ms (0.3481 ms over)", or "met" when met.
    /// When no candidate fits the card's memory: "none of the candidates fits the card's
    /// memory; the smallest, 1 stream(s) of 24 cube / 48 vector cores at batch 16, needs at least
    /// 70.5 GiB".
    [[nodiscard]] std::string why() const {
        if (met_) return "met";
        // 4 significant digits: "0.01", "0.3581"
        auto ms = [](duration t) { return detail::significant_text(t.in(units::ms), 4); };
        if (!chosen_.fits) {
            return "none of the candidates fits the card's memory; the smallest, " +
                   std::to_string(chosen_.streams) + " stream(s) of " +
                   std::to_string(chosen_.split.cube.value) + " cube / " +
                   std::to_string(chosen_.split.vector.value) + " vector cores at batch " +
                   std::to_string(chosen_.batch) + ", needs at least " +
                   gib_above(chosen_.memory, capacity_);
        }
        return std::string(unfit_ > 0 ? "none of the candidates that fit the card's memory"
                                      : "none of the candidates") +
               " meets " + ms(target_) + " ms; the closest, " + std::to_string(chosen_.streams) +
               " stream(s) of " + std::to_string(chosen_.split.cube.value) + " cube / " +
               std::to_string(chosen_.split.vector.value) + " vector cores at batch " +
               std::to_string(chosen_.batch) + ", takes " + ms(chosen_.latency) + " ms (" +
               ms(excess()) + " ms over)";
    }

private:
    candidate chosen_;
    duration target_;
    bool met_;
    std::size_t unfit_ = 0;
    data_size capacity_{};
};

/// The first candidate of `ranked` (ordered best first) that fits the card's memory (of
/// `capacity`, for the message) and whose latency is within `target`; or, when none is, the
/// lowest-latency candidate that fits (ties: the earlier one), or when none fits the one needing
/// the least memory, with has_value() false.
[[nodiscard]] inline selection best_under(std::span<const candidate> ranked, duration target,
                                          data_size capacity = {}) {
    PERFCAST_EXPECTS(!ranked.empty(), "best_under", "candidates", 0.0, "at least one candidate");
    PERFCAST_EXPECTS(target.in(units::ms) > 0 && is_finite(target), "best_under", "target",
                     target.in(units::ms), "a finite latency target > 0 (in ms)");
    for (const candidate& c : ranked) {
        if (c.fits && c.latency <= target) return {c, target, true};
    }
    const candidate* closest = nullptr;
    std::size_t unfit = 0;
    for (const candidate& c : ranked) {
        if (!c.fits) ++unfit;
        if (c.fits && (!closest || c.latency < closest->latency)) closest = &c;
    }
    if (!closest) {
        closest = &ranked.front();
        for (const candidate& c : ranked) {
            if (c.memory < closest->memory) closest = &c;
        }
    }
    return {*closest, target, false, unfit, capacity};
}

/// Per-node costs of a model for every (batch, core limit) a grid needs. Costs depend on the
/// core limit of the node's engine only, so one table serves every split and stream count.
/// It holds one entry per batch, node and core limit the grid asks for on that node's engine
/// (one for a transfer or an AI CPU node): batches x (cube nodes x cube limits + vector nodes x
/// vector limits + other nodes), whatever the chip's core count (docs/whatif-serving.md,
/// "Memory, time and progress").
class node_eval_table {
public:
    node_eval_table(const chip& c, std::span<const node> nodes, std::span<const batch_size> batches,
                    std::span<const core_count> cube_limits,
                    std::span<const core_count> vector_limits, const graph_params& p = {},
                    const progress_fn& progress = {})
        : nodes_(nodes.size()),
          batches_(plain(batches)),
          cube_(sorted_limits(cube_limits)),
          vector_(sorted_limits(vector_limits)) {
        axis_.reserve(nodes.size());
        offset_.reserve(nodes.size());
        for (const node& n : nodes) {
            const engine e = engine_on(c, n);
            axis_.push_back(n.is_transfer() || e == engine::aicpu ? limit_axis::none
                            : e == engine::cube                   ? limit_axis::cube
                                                                  : limit_axis::vector);
            offset_.push_back(row_);
            row_ += limits_of(axis_.back()).size();
        }
        table_.resize(checked_entries(batches.size(), nodes_, row_));
        const std::uint64_t total = table_.size();
        std::uint64_t done = 0;
        for (std::size_t bi = 0; bi < batches.size(); ++bi) {
            const std::vector<l2_context> contexts = l2_contexts(c, nodes, batches[bi].value, p);
            for (std::size_t i = 0; i < nodes_; ++i) {
                const node& n = nodes[i];
                const std::size_t base = bi * row_ + offset_[i];
                if (axis_[i] == limit_axis::none) {
                    table_[base] =
                        evaluate_at(c, n, batches[bi], core_count{c.aicpu.cores}, p, contexts[i]);
                } else {
                    const std::vector<int>& ks = limits_of(axis_[i]);
                    for (std::size_t j = 0; j < ks.size(); ++j) {
                        table_[base + j] =
                            evaluate_at(c, n, batches[bi], core_count{ks[j]}, p, contexts[i]);
                    }
                }
                done = (bi * row_ + offset_[i]) + limits_of(axis_[i]).size();
                detail::report_progress(progress, "costing ops", done, total, "op costs");
            }
        }
    }

    [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }
    [[nodiscard]] std::span<const std::int64_t> batches() const noexcept { return batches_; }
    /// Entries held: batches x the (node, core limit) pairs the grid asks for.
    [[nodiscard]] std::size_t entries() const noexcept { return table_.size(); }
    /// Bytes the entries take (the table's memory, less a few per node for its index).
    [[nodiscard]] std::size_t bytes() const noexcept { return table_.size() * sizeof(node_eval); }

    /// Node i at batch index bi under `split` (limits the table was built for; others are an
    /// error naming the limit).
    [[nodiscard]] const node_eval& at(std::size_t bi, std::size_t i,
                                      const core_split& split) const {
        return table_[bi * row_ + offset_[i] + column(i, columns_of(split))];
    }

    /// Card result of `streams` instances with `split` at batch index bi, spread over the card's
    /// chips (spread_over_chips): the same numbers as evaluate_card, without re-costing the nodes.
    [[nodiscard]] card_result card(const chip& c, std::size_t bi, stream_count streams,
                                   const core_split& split, const card_params& p) const {
        const chip_placement g = spread_over_chips(split, streams, p.chips);
        const split_columns cols = columns_of(split);
        return detail::solve_card(c, nodes_, batches_[bi], g.groups(), p,
                                  [&](std::size_t, std::size_t i) -> const node_eval& {
                                      return table_[bi * row_ + offset_[i] + column(i, cols)];
                                  });
    }

private:
    enum class limit_axis : unsigned char { none, cube, vector };
    struct split_columns {
        std::size_t cube = 0;
        std::size_t vector = 0;
    };

    /// Most bytes the table may take: 16 GiB, four times the default grid of a 100k-op model
    /// on a 32-core chip under the old one-entry-per-core layout (about 4 GB); past it the
    /// question is too large for one table, and saying so beats std::bad_alloc.
    static constexpr double max_table_bytes = 16.0 * 1024 * 1024 * 1024;

    [[nodiscard]] static std::vector<std::int64_t> plain(std::span<const batch_size> batches) {
        std::vector<std::int64_t> v;
        v.reserve(batches.size());
        for (const batch_size b : batches) v.push_back(b.value);
        return v;
    }

    [[nodiscard]] static std::vector<int> sorted_limits(std::span<const core_count> limits) {
        std::vector<int> v;
        v.reserve(limits.size());
        for (const core_count k : limits) v.push_back(k.value);
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    }

    /// The limits a node on `axis` is costed at (one slot for a node without a limit).
    [[nodiscard]] const std::vector<int>& limits_of(limit_axis axis) const noexcept {
        return axis == limit_axis::cube ? cube_ : axis == limit_axis::vector ? vector_ : none_;
    }

    [[nodiscard]] static std::size_t index_in(const std::vector<int>& limits, int k,
                                              std::string_view axis) {
        const auto it = std::lower_bound(limits.begin(), limits.end(), k);
        if (it == limits.end() || *it != k) {
            ::perfcast::detail::precondition_failed("node_eval_table", axis, static_cast<double>(k),
                                                    "a core limit the table was built for");
        }
        return static_cast<std::size_t>(it - limits.begin());
    }

    /// The columns of `split`'s limits; a limit of an axis no node uses is not looked up.
    [[nodiscard]] split_columns columns_of(const core_split& split) const {
        split_columns s;
        if (!cube_.empty()) s.cube = index_in(cube_, split.cube.value, "cube limit");
        if (!vector_.empty()) s.vector = index_in(vector_, split.vector.value, "vector limit");
        return s;
    }

    [[nodiscard]] std::size_t column(std::size_t i, const split_columns& s) const noexcept {
        return axis_[i] == limit_axis::cube     ? s.cube
               : axis_[i] == limit_axis::vector ? s.vector
                                                : 0;
    }

    /// batches x row entries, checked against max_table_bytes before allocating.
    [[nodiscard]] static std::size_t checked_entries(std::size_t batches, std::size_t nodes,
                                                     std::size_t row) {
        const double entries = static_cast<double>(batches) * static_cast<double>(row);
        const double bytes = entries * static_cast<double>(sizeof(node_eval));
        if (bytes > max_table_bytes) {
            ::perfcast::detail::precondition_failed(
                "node_eval_table", "batches x (node, core limit) pairs",
                std::to_string(batches) + " x " + std::to_string(row) + " (" +
                    std::to_string(nodes) + " nodes; " + detail::number_text(bytes / 1e9) + " GB)",
                "a table of at most 16 GiB: fewer batches, ops or core limits");
        }
        return batches * row;
    }

    std::size_t nodes_ = 0;
    std::size_t row_ = 0;  // entries per batch: the (node, limit) pairs
    std::vector<std::int64_t> batches_;
    std::vector<int> cube_;     // the grid's cube limits, sorted, unique
    std::vector<int> vector_;   // the grid's vector limits, sorted, unique
    std::vector<int> none_{0};  // the one slot of a node without a core limit
    std::vector<limit_axis> axis_;
    std::vector<std::size_t> offset_;  // node i's first entry in a batch's row
    std::vector<node_eval> table_;
};

/// A sweep's answer: every candidate, best first, and the Pareto front (indices into ranked,
/// by latency).
struct whatif_result {
    std::vector<candidate> ranked;
    /// The Pareto front of QPS against latency (pareto_front), whatever `by` ranked.
    std::vector<std::size_t> pareto;
    rank_by by = rank_by::qps;  // what `ranked` is ordered by
    /// What one instance holds at each of the grid's batches, in the grid's order, and the rule
    /// the card's total followed (device_memory.hpp).
    std::vector<memory_need> memory;
    memory_rule rule{};
    data_size capacity{};  // the chip's memory.hbm_size
    /// Candidates that do not fit the card's memory (ranked last).
    [[nodiscard]] std::size_t unfit() const noexcept {
        return static_cast<std::size_t>(std::count_if(ranked.begin(), ranked.end(),
                                                      [](const candidate& x) { return !x.fits; }));
    }
    /// best_under(ranked, target).
    [[nodiscard]] selection best_under(duration target) const {
        return ::perfcast::best_under(ranked, target, capacity);
    }
};

/// Evaluates every configuration of `grid` for `nodes` on chip `c`. `progress` hears of the op
/// costs (node_eval_table) and then of each deployment evaluated.
[[nodiscard]] inline whatif_result sweep(const chip& c, std::span<const node> nodes,
                                         const whatif_grid& grid, const card_params& p = {},
                                         rank_by by = rank_by::qps,
                                         const progress_fn& progress = {}) {
    validate(grid, c);
    validate(p);
    PERFCAST_EXPECTS(!nodes.empty(), "sweep", "nodes", 0.0, "a model with at least one node");
    const node_eval_table table(c, nodes, grid.batches, grid.cube, grid.vector, p.graph, progress);
    whatif_result r;
    r.rule = p.memory;
    r.capacity = c.memory.hbm_size;
    r.ranked.reserve(grid.size());
    const std::uint64_t total = grid.size();
    for (std::size_t bi = 0; bi < grid.batches.size(); ++bi) {
        const memory_need need = memory_of(c, nodes, grid.batches[bi]);
        r.memory.push_back(need);
        for (const stream_count s : grid.streams) {
            const data_size held = need.on_card(s, p.memory, p.chips);
            for (const core_count k : grid.cube) {
                for (const core_count v : grid.vector) {
                    const core_split split{k, v};
                    candidate x = make_candidate(table.card(c, bi, s, split, p));
                    x.memory = held;
                    x.fits = fits(c, need, s, p.memory, p.chips);
                    r.ranked.push_back(x);
                    detail::report_progress(progress, "evaluating deployments", r.ranked.size(),
                                            total, "deployments");
                }
            }
        }
    }
    std::sort(r.ranked.begin(), r.ranked.end(),
              [by](const candidate& a, const candidate& b) { return ranks_before(a, b, by); });
    r.pareto = pareto_front(r.ranked);
    r.by = by;
    return r;
}

}  // namespace perfcast
