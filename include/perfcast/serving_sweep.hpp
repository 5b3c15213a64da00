// perfcast/serving_sweep.hpp: serving configurations of a model on a card, swept and ranked
// under load (what `perfcast whatif --qps / --p99-ms` runs).
//
//   using perfcast::counts;
//   perfcast::serving_grid g{.streams = counts<perfcast::stream_count>({1, 2, 3}),
//                            .cube = counts<perfcast::core_count>({12, 24}),
//                            .vector = counts<perfcast::core_count>({24, 48}),
//                            .max_gears = {16, 20}, .windows = {0_ms, 1_ms}};
//   perfcast::serving_sweeper s(chip, model, g, dist);     // dist: batch_distribution
//   perfcast::serving_sweep_options o;
//   o.target = 1_ms;                  // capacity mode: highest QPS whose TP99 meets 1 ms
//   // or o.loads = {5000_qps};       // load mode: latency percentiles at fixed loads
//   const perfcast::serving_sweep_result r = s.run(o);
//   r.ranked.front().capacity;         // the best simulated configuration
//
// A configuration is streams x core split x max gear (every batch size 1..max is a gear,
// guide §6) x batching window. Each one is a server_config with the card model's service times
// (make_card_server); the card model is evaluated once per (split, batch, concurrency) for the
// whole grid, not once per configuration (card_service_cache).
//
// Ranking in two steps, because simulating every configuration is too slow for a sweep and the
// analytic model is too rough to trust alone (docs/serving.md: its P99 is off by -32 .. +40 %
// where requests merge and batches contend):
//   1. every configuration is ranked by serving.hpp's analytic M/G/c model (Allen-Cunneen):
//      load mode by its TP99 at the highest load (unstable ones last, by utilization);
//      capacity mode by its analytic capacity (find_capacity, method analytic);
//   2. the first `simulate_top` of that order (the leaders) are simulated (same seed, same
//      arrivals for all) and ranked by the simulation: load mode by TP99 at the highest load,
//      capacity mode by the highest QPS whose simulated TP99 meets the target.
// Every simulated leader's saturation throughput is measured (serving.hpp's saturation()) and
// every simulated load classified against it (load_state): a saturated point, or one whose
// queue grew, keeps its figures but is no steady state; writers show it as such, and load mode
// ranks it after the stable ones.
// The low-load TP99 (no queueing) is exact and cheap, so "no configuration meets the target"
// and the closest configuration are decided over the whole grid, not only over the leaders.
//
// Past 500 lines on purpose: one sweep: serving_sweeper (about 560 lines) ranks, simulates,
// replays and searches the grid through one cache of service tables.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "batching.hpp"
#include "card.hpp"
#include "chip.hpp"
#include "counts.hpp"
#include "device_memory.hpp"
#include "distribution.hpp"
#include "error.hpp"
#include "graph.hpp"
#include "progress.hpp"
#include "serving.hpp"
#include "units.hpp"
#include "whatif.hpp"

namespace perfcast {

/// Largest max gear a sweep accepts: the card model is evaluated at every gear 1..max for every
/// concurrency, so the bound keeps a sweep's tables (and its time) finite. The seed's largest
/// batch is 512 (guide §13).
inline constexpr int max_sweep_gear = 4096;
// Most streams per card: max_sweep_streams (whatif.hpp), the same bound as a card sweep's.

/// The axes of a serving sweep; every value of every axis is combined with every other.
struct serving_grid {
    std::vector<stream_count> streams;
    std::vector<core_count> cube;    // cube-core limit per stream
    std::vector<core_count> vector;  // vector-core limit per stream
    std::vector<int> max_gears;      // every batch size 1..max is a gear
    std::vector<duration> windows{duration{}};

    [[nodiscard]] std::size_t size() const noexcept {
        return streams.size() * cube.size() * vector.size() * max_gears.size() * windows.size();
    }
};

/// Rejects empty axes and values the card or the simulation cannot take, naming the axis.
inline const serving_grid& validate(const serving_grid& g, const chip& c) {
    constexpr std::string_view where = "validate(serving_grid)";
    auto need = [&](bool ok, std::string_view field, double v, const std::string& expected) {
        if (!ok) detail::precondition_failed(where, field, v, expected);
    };
    detail::validate_card_axes(where, g.streams, g.cube, g.vector, c, max_sweep_streams);
    need(!g.max_gears.empty(), "max_gears", 0, "at least one max gear");
    need(!g.windows.empty(), "windows", 0, "at least one batching window");
    for (int m : g.max_gears) {
        need(m >= 1 && m <= max_sweep_gear, "max_gear", m, "a largest gear in 1..4096");
    }
    for (duration w : g.windows) {
        need(w.in(units::s) >= 0 && is_finite(w), "window (ms)", w.in(units::ms),
             "a finite batching window >= 0 ms");
    }
    return g;
}

/// One configuration of a serving grid.
struct serving_config {
    int streams = 1;
    core_split split{};
    int max_gear = 16;
    duration window{};
    [[nodiscard]] friend bool operator==(const serving_config&, const serving_config&) = default;
};

/// "3 stream(s) x 12 cube / 24 vector cores, max gear 20, window 0 ms".
[[nodiscard]] inline std::string describe(const serving_config& k) {
    return std::to_string(k.streams) + " stream(s) x " + std::to_string(k.split.cube.value) +
           " cube / " + std::to_string(k.split.vector.value) + " vector cores, max gear " +
           std::to_string(k.max_gear) + ", window " + detail::number_text(k.window.in(units::ms)) +
           " ms";
}

/// The card model's service times for every split of a grid, at every batch 1..max_gear and
/// every concurrency 1..max_streams, each from one card_service call (evaluate_card). server()
/// then builds exactly what make_card_server(chip, model, streams, split,
/// gear_set::every(max_gear), window, params) builds (the same calls, made once per grid
/// instead of once per configuration: a default sweep has 16 splits but 384 configurations).
class card_service_cache {
public:
    /// Most service times one cache holds: 1e8 doubles, 800 MB. The default grid needs 16
    /// splits x 32 gears x 6 streams = 3072; the largest gear and stream counts a sweep takes
    /// (4096, 64) with 16 splits need 4.2 million, and take about 6 minutes to cost (Release,
    /// one core), so the bound is about memory, not time (docs/whatif-serving.md, "Memory,
    /// time and progress").
    static constexpr double max_service_entries = 1e8;

    card_service_cache(const chip& c, std::span<const node> model,
                       std::span<const core_split> splits, int max_gear, stream_count max_streams,
                       const card_params& params = {}, const progress_fn& progress = {})
        : card_cube_(c.cube.cores * validate(params).chips),
          card_vector_(c.vector.cores * params.chips),
          max_gear_(max_gear),
          max_streams_(max_streams.value),
          splits_(splits.begin(), splits.end()) {
        constexpr std::string_view where = "card_service_cache";
        PERFCAST_EXPECTS(max_gear >= 1 && max_gear <= max_sweep_gear, where, "max_gear",
                         static_cast<double>(max_gear), "a largest gear in 1..4096");
        PERFCAST_EXPECTS(max_streams_ >= 1 && max_streams_ <= max_sweep_streams, where,
                         "max_streams", static_cast<double>(max_streams_), "1 to 64 streams");
        const std::size_t per_split =
            static_cast<std::size_t>(max_gear) * static_cast<std::size_t>(max_streams_);
        const double entries = static_cast<double>(splits_.size()) * static_cast<double>(per_split);
        PERFCAST_EXPECTS(entries <= max_service_entries, where, "splits x max gear x streams",
                         entries,
                         "at most 1e8 service times (800 MB): fewer core limits, a smaller "
                         "max gear or fewer streams");
        seconds_.resize(splits_.size() * per_split);
        for (std::size_t s = 0; s < splits_.size(); ++s) {
            const card_service svc(c, model, splits_[s], params);
            for (int b = 1; b <= max_gear; ++b) {
                for (int n = 1; n <= max_streams_; ++n) {
                    seconds_[slot(s, b, n)] = svc(b, n).in(units::s);
                }
                detail::report_progress(progress, "costing service times",
                                        s * per_split + static_cast<std::size_t>(b) *
                                                            static_cast<std::size_t>(max_streams_),
                                        seconds_.size(), "card evaluations");
            }
        }
    }

    /// The latency of a batch of `batch` samples with `split` while `concurrent` batches run
    /// (card_service's value).
    [[nodiscard]] duration service(const core_split& split, int batch, int concurrent) const {
        PERFCAST_EXPECTS(batch >= 1 && batch <= max_gear_, "card_service_cache::service",
                         "batch", static_cast<double>(batch), "a batch the cache was built for");
        PERFCAST_EXPECTS(concurrent >= 1 && concurrent <= max_streams_,
                         "card_service_cache::service", "concurrent",
                         static_cast<double>(concurrent), "a concurrency the cache was built for");
        return duration{seconds_[slot(index_of(split), batch, concurrent)], units::s};
    }

    /// The server of configuration `k` (make_card_server's, from the cache).
    [[nodiscard]] server_config server(const serving_config& k) const {
        PERFCAST_EXPECTS(k.max_gear >= 1 && k.max_gear <= max_gear_, "card_service_cache::server",
                         "max_gear", static_cast<double>(k.max_gear),
                         "a max gear the cache was built for");
        PERFCAST_EXPECTS(k.streams >= 1 && k.streams <= max_streams_,
                         "card_service_cache::server", "streams", static_cast<double>(k.streams),
                         "a stream count the cache was built for");
        const std::size_t s = index_of(k.split);
        uniform_server u;
        u.gears = gear_set::every(k.max_gear);
        u.window = k.window;
        u.streams = k.streams;
        u.stream_cube = k.split.cube;
        u.stream_vector = k.split.vector;
        u.card_cube = core_count{card_cube_};
        u.card_vector = core_count{card_vector_};
        return make_server(u, [this, s](int batch, int concurrent) {
            return duration{seconds_[slot(s, batch, concurrent)], units::s};
        });
    }

private:
    [[nodiscard]] std::size_t index_of(const core_split& split) const {
        for (std::size_t i = 0; i < splits_.size(); ++i) {
            if (splits_[i] == split) return i;
        }
        detail::precondition_failed("card_service_cache", "split",
                                    std::to_string(split.cube.value) + " cube / " +
                                        std::to_string(split.vector.value) + " vector cores",
                                    "a split the cache was built for");
    }
    [[nodiscard]] std::size_t slot(std::size_t s, int batch, int concurrent) const noexcept {
        const auto g = static_cast<std::size_t>(max_gear_);
        const auto n = static_cast<std::size_t>(max_streams_);
        return (s * g + static_cast<std::size_t>(batch - 1)) * n +
               static_cast<std::size_t>(concurrent - 1);
    }

    int card_cube_;
    int card_vector_;
    int max_gear_;
    int max_streams_;
    std::vector<core_split> splits_;
    std::vector<double> seconds_;  // [split][batch - 1][concurrent - 1]
};

// ---- options and results ------------------------------------------------------------------

/// What a sweep computes: latency at fixed loads (`loads`), or the capacity under a TP99
/// target (`target`). Exactly one of the two.
/// What `perfcast whatif` serves when not told otherwise (docs/whatif-serving.md, "Flags"); the
/// card grid is whatif_defaults' (whatif.hpp).
struct serving_defaults {
    /// Max gears: the seed's stress tests tried max gear 16 and 20 (guide §6); 8 and 32 bracket
    /// them (an assumption).
    static constexpr std::string_view max_gears = "8,16,20,32";
    /// Batching windows (ms): no waiting to fill a batch.
    static constexpr std::string_view windows = "0";
    /// Every request's batch size without a histogram (--batch B): the card grid's smallest
    /// batch (whatif_defaults::batches).
    static constexpr std::string_view batch = "16";
    /// Leaders simulated: with 8 the simulation's best was the analytic top 8's in both checks
    /// of all 384 default configurations (docs/whatif-serving.md, "How a sweep runs").
    static constexpr std::size_t simulate_top = 8;
    /// Requests per simulation, the first 10 % warm-up: the capacity at saturation came out the
    /// same with 10000, 20000 and 40000 (docs/whatif-serving.md).
    static constexpr std::uint64_t requests = 20000;
    static constexpr std::uint64_t seed = 1;
};

struct serving_sweep_options {
    std::vector<request_rate> loads;
    std::optional<duration> target;
    /// Leaders simulated, in the analytic order (0: every configuration).
    std::size_t simulate_top = serving_defaults::simulate_top;
    /// Per simulation: requests (after `warmup` uncounted ones), seed, service noise.
    std::uint64_t requests = serving_defaults::requests;
    std::uint64_t warmup = serving_defaults::requests / 10;
    std::uint64_t seed = serving_defaults::seed;
    double service_cv = 0;
    /// Capacity bisection stops when its bracket is narrower than this share (find_capacity).
    double rel_tolerance = 0.01;
    /// Hears of the analytic pass ("analysing configurations") and of every simulation
    /// ("simulating leader 3 of 8", its requests served of the run's requests).
    progress_fn progress{};
};

/// One simulated load.
struct serving_point {
    request_rate qps{};  // the offered load
    duration mean{};
    duration p50{};
    duration p99{};
    duration p999{};
    double utilization = 0;       // streams busy
    double core_utilization = 0;  // card cube cores held
    double padding_share = 0;     // padding samples / gear samples
    double mean_batch = 0;        // samples per batch (merging shows here)
    /// stable, or why the percentiles above are no steady-state figures (classify()): a
    /// writer shows a saturated or growing point as such, not as its percentiles.
    load_state state = load_state::stable;
};

/// A recorded trace replayed on one configuration (serving_sweeper::replay).
struct trace_replay {
    serving_config config{};
    std::size_t requests = 0;      // the trace's, the first tenth of them warm-up
    request_rate recorded_rate{};  // the trace's mean rate (mean_rate)
    serving_point recorded{};      // at the trace's own pace
    /// With a target: the highest mean rate at which the trace, its gaps scaled alike and its
    /// batch sizes kept, meets it (find_capacity on the trace: its bursts stay bursts).
    std::optional<serving_capacity> capacity{};
    std::string none_why{};  // with a target that no rate meets: why (no_capacity::why)
};

/// One configuration: its analytic figures and, for a leader, its simulation.
struct serving_row {
    serving_config config{};
    std::size_t analytic_rank = 0;  // 1-based place in the analytic order
    duration low_load_p99{};        // exact TP99 on an idle card (no queueing)
    duration low_load_mean{};
    /// TP99 no load goes below (service_floor: low_load_p99 without a batching window's wait;
    /// with a window, loads that fill gears can go under low_load_p99).
    duration floor_p99{};
    /// Load mode: the analytic TP99 at the highest load (infinite when it saturates).
    duration analytic_p99{};
    double analytic_utilization = 0;  // at the highest load (>= 1: saturated)
    /// Capacity mode: the analytic capacity (none when even low load misses the target).
    std::optional<request_rate> analytic_capacity;
    /// Load mode: one per load, in the order given. Capacity mode: one, at the capacity.
    std::vector<serving_point> points;
    /// Capacity mode: the highest simulated QPS per card whose TP99 meets the target.
    std::optional<request_rate> capacity;
    /// Capacity mode: whether the target or the saturation cap decided `capacity`.
    capacity_limit limit = capacity_limit::latency;
    /// A simulated row: its saturation throughput (saturation()), which every load is
    /// checked against.
    std::optional<saturation_result> saturation;
    int evaluations = 0;  // capacity mode: simulations the bisection spent
    /// Whether it was simulated: every leader in load mode; in capacity mode a leader whose
    /// low-load TP99 meets the target (the others miss it under any load: nothing to search).
    bool simulated = false;
};

/// No configuration meets the target: the one with the lowest low-load TP99 and why.
struct serving_none {
    serving_config closest{};
    duration closest_p99{};        // its TP99 at low load
    duration closest_floor_p99{};  // its TP99 no load goes below (serving_row::floor_p99)
    duration target{};
    std::string why;
};

struct serving_sweep_result {
    std::size_t configurations = 0;  // analysed: the grid's configurations that fit the memory
    /// The grid's configurations left out because their instances do not fit the card's memory,
    /// and what the sweeper knew of the memory (serving_sweeper::memory and the rest).
    std::size_t unfit = 0;
    std::vector<memory_need> memory;
    memory_rule rule{};
    data_size capacity{};
    data_size largest{};
    /// The simulated leaders, best first (see serving_sweeper::run for the order).
    std::vector<serving_row> ranked;
    std::optional<duration> target;
    /// Capacity mode when no simulated leader meets the target.
    std::optional<serving_none> none;
    /// Index into `ranked.front().points` of the highest load (load mode).
    std::size_t peak = 0;
    /// Capacity mode: the analytic capacity of the best configuration left unsimulated (the
    /// first after the leaders in the analytic order), if any has one.
    std::optional<request_rate> unsimulated_analytic;
    /// Capacity mode: a leader meets the target (ranked.front() is the best).
    [[nodiscard]] bool met() const noexcept {
        return target.has_value() && !none.has_value() && !ranked.empty() &&
               ranked.front().capacity.has_value();
    }
    /// How far above the simulated best an unsimulated configuration's analytic capacity must be
    /// for leaders_in_doubt: past the seed-to-seed spread of a simulated capacity (+-4 % measured,
    /// serving_report_table.hpp near_capacity) and the bisection's 1 %. An assumption.
    static constexpr double doubt_margin = 1.05;
    /// Capacity mode: the analytic model puts a configuration it left unsimulated above the
    /// simulated best (by doubt_margin), or gives one a capacity where no simulated leader met
    /// the target. Its estimates run high here (the simulation found less than it said), so its
    /// order may not be the simulation's and the best may lie outside the leaders
    /// (serving_sweep_options::simulate_top = 0 simulates every configuration).
    [[nodiscard]] bool leaders_in_doubt() const noexcept {
        if (!target || !unsimulated_analytic) return false;
        return !met() || *unsimulated_analytic > *ranked.front().capacity * doubt_margin;
    }
};

// ---- the sweeper --------------------------------------------------------------------------

/// A grid of serving configurations of one model on one chip, with one batch-size
/// distribution. Holds the service-time cache; the model's nodes need not outlive it.
class serving_sweeper {
public:
    /// `progress` hears of the service-time table as it is built (card_service_cache).
    serving_sweeper(const chip& c, std::span<const node> model, serving_grid grid,
                    batch_distribution dist, const card_params& params = {},
                    const progress_fn& progress = {})
        : grid_(std::move(grid)),
          dist_(std::move(dist)),
          rule_(params.memory),
          chips_(validate(params).chips),
          capacity_(c.memory.hbm_size),
          memory_(fitting_needs(c, model, grid_, rule_, chips_)),
          cache_(make_cache(c, model, grid_, params, progress)) {
        // A configuration whose instances do not fit the card's memory (device_memory.hpp, at
        // its largest gear) is left out, counted in unfit(); fitting_needs has checked that one
        // fits, before the service times were built.
        for (const stream_count s : grid_.streams) {
            for (const core_count k : grid_.cube) {
                for (const core_count v : grid_.vector) {
                    for (std::size_t gi = 0; gi < grid_.max_gears.size(); ++gi) {
                        const data_size held = memory_[gi].on_card(s, rule_, chips_);
                        for (duration w : grid_.windows) {
                            if (!fits(c, memory_[gi], s, rule_, chips_)) {
                                ++unfit_;
                                continue;
                            }
                            largest_ = held > largest_ ? held : largest_;
                            configs_.push_back({s.value, core_split{k, v}, grid_.max_gears[gi], w});
                        }
                    }
                }
            }
        }
    }

    [[nodiscard]] const serving_grid& grid() const noexcept { return grid_; }
    [[nodiscard]] const batch_distribution& distribution() const noexcept { return dist_; }
    /// Every configuration that fits the card's memory, streams outermost, windows innermost.
    [[nodiscard]] std::span<const serving_config> configurations() const& noexcept {
        return configs_;
    }
    /// Not of a temporary sweeper: `for (auto& k : serving_sweeper(...).configurations())` would
    /// walk freed memory.
    std::span<const serving_config> configurations() const&& = delete;
    /// Configurations of the grid left out: their instances need more than the card's memory.
    [[nodiscard]] std::size_t unfit() const noexcept { return unfit_; }
    /// What one instance holds at each largest gear (in the grid's order), the rule the card's
    /// total followed, the card's memory and the most a configuration kept holds.
    [[nodiscard]] std::span<const memory_need> memory() const noexcept { return memory_; }
    [[nodiscard]] const memory_rule& rule() const noexcept { return rule_; }
    [[nodiscard]] data_size capacity() const noexcept { return capacity_; }
    [[nodiscard]] data_size largest() const noexcept { return largest_; }
    [[nodiscard]] const card_service_cache& cache() const noexcept { return cache_; }
    [[nodiscard]] server_config server(const serving_config& k) const { return cache_.server(k); }

    /// Ranks the grid analytically, simulates the leaders, ranks them by the simulation.
    ///  load mode:     TP99 at the highest load, then mean there, then the analytic order;
    ///  capacity mode: capacity (highest first), then TP99 at it, then the analytic order; the
    ///                 leaders that meet nothing after, by low-load TP99.
    [[nodiscard]] serving_sweep_result run(const serving_sweep_options& o) const {
        check(o);
        const bool capacity_mode = o.target.has_value();
        serving_sweep_result r;
        r.configurations = configs_.size();
        r.unfit = unfit_;
        r.memory = memory_;
        r.rule = rule_;
        r.capacity = capacity_;
        r.largest = largest_;
        r.target = o.target;
        std::size_t peak = 0;
        for (std::size_t i = 1; i < o.loads.size(); ++i) {
            if (o.loads[i] > o.loads[peak]) peak = i;
        }
        r.peak = peak;

        // 1. Every configuration, analytically.
        std::vector<serving_row> rows(configs_.size());
        capacity_options ao;
        if (capacity_mode) {
            ao.target = *o.target;
            ao.method = capacity_method::analytic;
            ao.service_cv = o.service_cv;
            ao.rel_tolerance = o.rel_tolerance;
        }
        for (std::size_t i = 0; i < configs_.size(); ++i) {
            serving_row& row = rows[i];
            row.config = configs_[i];
            const server_config srv = server(configs_[i]);
            const low_load_result low = low_load(srv, dist_);
            row.low_load_p99 = low.p99;
            row.low_load_mean = low.mean;
            row.floor_p99 =
                srv.window > duration{} ? service_floor(srv, dist_).p99 : row.low_load_p99;
            if (capacity_mode) {
                const capacity_result c = find_capacity(srv, dist_, ao);
                if (c) row.analytic_capacity = c->qps;
            } else {
                const analytic_result a = analyze(srv, dist_, o.loads[peak], o.service_cv);
                row.analytic_p99 = a.p99;
                row.analytic_utilization = a.utilization;
            }
            detail::report_progress(o.progress, "analysing configurations", i + 1, configs_.size(),
                                    "configurations");
        }
        std::vector<std::size_t> order(rows.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const serving_row& x = rows[a];
            const serving_row& y = rows[b];
            if (capacity_mode) {
                if (x.analytic_capacity.has_value() != y.analytic_capacity.has_value()) {
                    return x.analytic_capacity.has_value();
                }
                if (x.analytic_capacity && *x.analytic_capacity != *y.analytic_capacity) {
                    return *x.analytic_capacity > *y.analytic_capacity;
                }
                return x.floor_p99 < y.floor_p99;
            }
            if (x.analytic_p99 != y.analytic_p99) return x.analytic_p99 < y.analytic_p99;
            return x.analytic_utilization < y.analytic_utilization;  // both saturated
        });
        for (std::size_t k = 0; k < order.size(); ++k) rows[order[k]].analytic_rank = k + 1;

        // 2. The leaders, simulated.
        const std::size_t n = o.simulate_top == 0 || o.simulate_top > order.size()
                                  ? order.size()
                                  : o.simulate_top;
        sim_options so;
        so.seed = o.seed;
        so.warmup = o.warmup;
        so.service_cv = o.service_cv;
        capacity_options co;
        if (capacity_mode) {
            co.target = *o.target;
            co.requests = o.requests;
            co.warmup = o.warmup;
            co.seed = o.seed;
            co.service_cv = o.service_cv;
            co.rel_tolerance = o.rel_tolerance;
        }
        std::string task;  // "simulating leader 3 of 8": what the simulations' reports say
        if (o.progress) {
            const auto relabel = [&o, &task](const progress_step& p) {
                o.progress({task, p.done, p.total, p.unit});
            };
            so.progress = relabel;
            co.progress = relabel;
        }
        for (std::size_t k = 0; k < n; ++k) {
            task = "simulating leader " + std::to_string(k + 1) + " of " + std::to_string(n);
            serving_row row = rows[order[k]];
            const server_config srv = server(row.config);
            if (capacity_mode) {
                // A configuration whose TP99 misses the target at any load is not searched.
                if (row.floor_p99 <= *o.target) {
                    row.simulated = true;
                    row.saturation = saturation(srv, dist_, o.seed, o.service_cv);
                    const capacity_result c = find_capacity(srv, dist_, co);
                    if (c) {
                        row.capacity = c->qps;
                        row.limit = c->limit;
                        row.evaluations = c->evaluations;
                        // The same seed and length as the bisection's run at that load: the
                        // same arrivals, so its TP99 is the bisection's.
                        row.points.push_back(point_of(simulate(srv, dist_, c->qps, o.requests, so),
                                                      c->qps, *row.saturation));
                    }
                }
            } else {
                row.simulated = true;
                row.saturation = saturation(srv, dist_, o.seed, o.service_cv);
                for (request_rate q : o.loads) {
                    row.points.push_back(
                        point_of(simulate(srv, dist_, q, o.requests, so), q, *row.saturation));
                }
            }
            r.ranked.push_back(std::move(row));
        }
        if (capacity_mode && n < order.size())
            r.unsimulated_analytic = rows[order[n]].analytic_capacity;
        std::stable_sort(r.ranked.begin(), r.ranked.end(),
                         [&](const serving_row& x, const serving_row& y) {
                             if (capacity_mode) {
                                 if (x.capacity.has_value() != y.capacity.has_value()) {
                                     return x.capacity.has_value();
                                 }
                                 if (x.capacity) {
                                     if (*x.capacity != *y.capacity) {
                                         return *x.capacity > *y.capacity;
                                     }
                                     if (x.points[0].p99 != y.points[0].p99) {
                                         return x.points[0].p99 < y.points[0].p99;
                                     }
                                 } else if (x.floor_p99 != y.floor_p99) {
                                     return x.floor_p99 < y.floor_p99;
                                 }
                                 return x.analytic_rank < y.analytic_rank;
                             }
                             const serving_point& a = x.points[peak];
                             const serving_point& b = y.points[peak];
                             // A steady state first; among the others the one further from
                             // saturation (its percentiles mean nothing).
                             if (a.state != b.state) return a.state < b.state;
                             if (a.state != load_state::stable) {
                                 const double ua = a.qps / x.saturation->throughput;
                                 const double ub = b.qps / y.saturation->throughput;
                                 if (ua != ub) return ua < ub;
                             }
                             if (a.p99 != b.p99) return a.p99 < b.p99;
                             if (a.mean != b.mean) return a.mean < b.mean;
                             return x.analytic_rank < y.analytic_rank;
                         });

        if (capacity_mode && !r.met()) {
            // None of the leaders meets it: the closest over the whole grid, by the exact TP99
            // no load can go below (the low-load TP99 without a batching window's wait).
            std::size_t best = 0;
            for (std::size_t i = 1; i < rows.size(); ++i) {
                if (rows[i].floor_p99 < rows[best].floor_p99) best = i;
            }
            serving_none none;
            none.closest = rows[best].config;
            none.closest_p99 = rows[best].low_load_p99;
            none.closest_floor_p99 = rows[best].floor_p99;
            none.target = *o.target;
            const duration over = none.closest_floor_p99 - none.target;
            const bool window = none.closest_floor_p99 < none.closest_p99;
            // Past the floor the whole grid misses it; below, only the simulated were tried.
            const std::string which = over > duration{} || n == configs_.size()
                                          ? std::to_string(configs_.size()) + " configurations"
                                          : "top " + std::to_string(n) + " simulated (of " +
                                                std::to_string(configs_.size()) +
                                                " configurations)";
            none.why = "none of the " + which + " meets TP99 <= " + detail::ms_text(none.target) +
                       "; the closest, " + describe(none.closest) + ", has a TP99 of " +
                       (over > duration{}
                            ? detail::ms_text(none.closest_floor_p99) +
                                  (window ? " at any load (its batches' service alone, without the "
                                            "window's wait: "
                                          : " even at low load (") +
                                  detail::ms_text(over) + " over)"
                            : detail::ms_text(none.closest_p99) +
                                  (none.closest_p99 > none.target
                                       ? " at low load, waiting out its window, and no busier "
                                         "load tried met it"
                                       : " at low load, but no load tried met it under "
                                         "queueing"));
            r.none = std::move(none);
        }
        return r;
    }

    /// TP99 (and the rest) of configuration `k` at each of `rates`: serving.hpp's sweep_qps
    /// with the same seed at every rate (common random numbers: smooth curves).
    [[nodiscard]] std::vector<serving_point> curve(const serving_config& k,
                                                   std::span<const request_rate> rates,
                                                   std::uint64_t requests, std::uint64_t warmup,
                                                   std::uint64_t seed = 1,
                                                   double service_cv = 0) const {
        sim_options so;
        so.seed = seed;
        so.warmup = warmup;
        so.service_cv = service_cv;
        const server_config srv = server(k);
        const saturation_result sat = saturation(srv, dist_, seed, service_cv);
        const std::vector<serving_result> runs = sweep_qps(srv, dist_, rates, requests, so);
        std::vector<serving_point> out;
        out.reserve(runs.size());
        for (std::size_t i = 0; i < runs.size(); ++i) {
            out.push_back(point_of(runs[i], rates[i], sat));
        }
        return out;
    }

    /// The fewest requests replay() takes: the first tenth is warm-up, and a capacity needs
    /// at least 100 counted (find_capacity: 111 - 11 = 100).
    static constexpr std::size_t min_replay_requests = 111;

    /// `trace` (arrivals in time order, batch sizes those the grid's gears serve) replayed on
    /// configuration `k`: at its own pace, and with `target` the highest rate at which it
    /// meets that TP99 (find_capacity on the trace, to `rel_tolerance`; `service_cv` as in
    /// serving_sweep_options). Where Poisson arrivals of the same sizes (run()) smooth a
    /// trace's bursts away, the replay keeps them. `progress` hears of each simulation's
    /// requests served, out of the trace's.
    [[nodiscard]] trace_replay replay(const serving_config& k, std::span<const arrival> trace,
                                      std::optional<duration> target, std::uint64_t seed = 1,
                                      double rel_tolerance = 0.01, double service_cv = 0,
                                      const progress_fn& progress = {}) const {
        PERFCAST_EXPECTS(trace.size() >= min_replay_requests, "serving_sweeper::replay",
                         "trace (requests)", static_cast<double>(trace.size()),
                         "at least " + std::to_string(min_replay_requests) +
                             " requests (the first tenth warm-up, 100 counted)");
        trace_replay out;
        out.config = k;
        out.requests = trace.size();
        out.recorded_rate = mean_rate(trace);
        const server_config srv = server(k);
        sim_options so = replay_options(trace, seed, service_cv);
        if (progress) {
            so.progress = [&progress, total = trace.size()](const progress_step& p) {
                progress({p.task, p.done, total, p.unit});
            };
        }
        out.recorded = replayed_at(srv, trace, out.recorded_rate, so,
                                   saturation(srv, batch_sizes_of(trace), seed, service_cv));
        // A queue that grows through the run says a Poisson run was too short for a steady
        // state; a recorded trace at its own pace has none to find (a burst near its end grows
        // the queue there): its percentiles are what it measured. Saturated still says the mean
        // rate is past what the card serves.
        if (out.recorded.state == load_state::growing) out.recorded.state = load_state::stable;
        if (target) {
            capacity_options co;
            co.target = *target;
            co.warmup = so.warmup;
            co.seed = seed;
            co.rel_tolerance = rel_tolerance;
            co.service_cv = service_cv;
            co.progress = so.progress;
            const capacity_result c = find_capacity(srv, trace, co);
            if (c) {
                out.capacity = c.value();
            } else {
                out.none_why = c.error().why;
            }
        }
        return out;
    }

    /// `trace` replayed (replay()) on the first `most` leaders of `r`, a sweep run() ran with
    /// options `o` (its target, seed, tolerance and service variability; its progress hears
    /// "replaying the trace on leader 2 of 3"): whatif --replay.
    [[nodiscard]] std::vector<trace_replay> replay_leaders(const serving_sweep_result& r,
                                                           std::span<const arrival> trace,
                                                           std::size_t most,
                                                           const serving_sweep_options& o) const {
        const std::size_t n = std::min(most, r.ranked.size());
        std::vector<trace_replay> out;
        out.reserve(n);
        std::string task;
        progress_fn relabel;
        if (o.progress) {
            relabel = [&o, &task](const progress_step& p) {
                o.progress({task, p.done, p.total, p.unit});
            };
        }
        for (std::size_t i = 0; i < n; ++i) {
            task = "replaying the trace on leader " + std::to_string(i + 1) + " of " +
                   std::to_string(n);
            out.push_back(replay(r.ranked[i].config, trace, o.target, o.seed, o.rel_tolerance,
                                 o.service_cv, relabel));
        }
        return out;
    }

    /// `trace` (as replay() takes it) replayed on configuration `k` at each of `rates`, its gaps
    /// scaled alike and its batch sizes kept (as replay()'s capacity search runs it): the
    /// trace's TP99 against its mean rate (whatif --replay --svg). A rate whose queue grew
    /// through the run is load_state::growing, as the capacity search judges it.
    [[nodiscard]] std::vector<serving_point> replay_curve(const serving_config& k,
                                                          std::span<const arrival> trace,
                                                          std::span<const request_rate> rates,
                                                          std::uint64_t seed = 1,
                                                          double service_cv = 0) const {
        PERFCAST_EXPECTS(trace.size() >= min_replay_requests, "serving_sweeper::replay_curve",
                         "trace (requests)", static_cast<double>(trace.size()),
                         "at least " + std::to_string(min_replay_requests) + " requests");
        const sim_options so = replay_options(trace, seed, service_cv);
        const server_config srv = server(k);
        const saturation_result sat = saturation(srv, batch_sizes_of(trace), seed, service_cv);
        std::vector<serving_point> out;
        out.reserve(rates.size());
        for (const request_rate q : rates) out.push_back(replayed_at(srv, trace, q, so, sat));
        return out;
    }

    /// `trace` (as replay() takes it) replayed on configuration `k` at its own pace, with its
    /// first `length` from its first arrival recorded as a timeline (io::write_chrome_trace
    /// writes it; whatif --replay --trace): the trace's bursts as the card serves them.
    [[nodiscard]] serving_result replay_timeline(const serving_config& k,
                                                 std::span<const arrival> trace, duration length,
                                                 std::uint64_t seed = 1,
                                                 double service_cv = 0) const {
        constexpr std::string_view where = "serving_sweeper::replay_timeline";
        PERFCAST_EXPECTS(!trace.empty(), where, "trace (requests)", 0.0, "at least one request");
        PERFCAST_EXPECTS(length.in(units::s) > 0 && is_finite(length), where, "length (ms)",
                         length.in(units::ms), "a finite interval > 0 ms");
        sim_options so;
        so.seed = seed;
        so.service_cv = service_cv;
        const duration from = trace.front().time;
        so.timeline = timeline_options{.from = from, .to = from + length};
        trace_arrivals src(trace);
        return simulate(server(k), src, so);
    }

    /// The most requests timeline() simulates.
    static constexpr double max_timeline_requests = 5e7;
    /// Arrivals must continue past a timeline's end: timeline() simulates this many times the
    /// expected count of requests up to it, plus timeline_extra_requests so that a short interval
    /// at a low rate is covered as well: together at least 4.4 standard deviations of a Poisson
    /// count past its mean, whatever the mean (the closest at a mean of 500).
    static constexpr double timeline_margin = 1.1;
    static constexpr double timeline_extra_requests = 50.0;
    /// The requests timeline() simulates to cover up to `until` at `qps`.
    [[nodiscard]] static double timeline_requests(request_rate qps, duration until) {
        return qps.in(units::qps)*until.in(units::s)*timeline_margin + timeline_extra_requests;
    }
    /// The most requests timeline() simulates for configuration `k`: max_timeline_requests, or
    /// fewer where `k`'s gears split the requests into more chunks than one simulation may
    /// queue (max_simulated_chunks: simulate()).
    [[nodiscard]] double timeline_request_cap(const serving_config& k) const {
        const double per_request = mean_chunks(server(k).gears, dist_);
        const double by_chunks =
            per_request > 0 ? max_simulated_chunks / per_request : max_timeline_requests;
        return by_chunks < max_timeline_requests ? by_chunks : max_timeline_requests;
    }
    /// The longest span s, at most `most`, for which timeline(k, qps, s, s) (the interval after
    /// one span of warm-up) stays within timeline_request_cap(k): `most`, or less past about
    /// 2.3e7 QPS for 1 s (less still where requests split into many chunks); 0.1 % short of
    /// the bound, so that rounding never crosses it.
    [[nodiscard]] duration timeline_span(const serving_config& k, request_rate qps,
                                         duration most) const {
        const double q = qps.in(units::qps);
        // timeline_requests(qps, 2 s) at the cap, solved for s.
        const double fits =
            (timeline_request_cap(k) - timeline_extra_requests) / (2 * timeline_margin * q) * 0.999;
        return q > 0 && fits < most.in(units::s) ? duration{fits, units::s} : most;
    }

    /// A simulation of configuration `k` at `qps` long enough to cover [from, from + length),
    /// with that interval recorded as a timeline (io::write_chrome_trace writes it).
    [[nodiscard]] serving_result timeline(const serving_config& k, request_rate qps, duration from,
                                          duration length, std::uint64_t seed = 1,
                                          double service_cv = 0) const {
        constexpr std::string_view where = "serving_sweeper::timeline";
        PERFCAST_EXPECTS(qps.in(units::qps) > 0 && is_finite(qps), where, "qps",
                         qps.in(units::qps), "a finite rate > 0 requests per second");
        PERFCAST_EXPECTS(from.in(units::s) >= 0 && length.in(units::s) > 0 && is_finite(from) &&
                             is_finite(length),
                         where, "length (ms)", length.in(units::ms),
                         "a finite interval > 0 ms starting at >= 0 ms");
        const double need = timeline_requests(qps, from + length);
        PERFCAST_EXPECTS(need <= timeline_request_cap(k), where, "requests", need,
                         "at most " + detail::significant_text(timeline_request_cap(k), 3) +
                             " simulated requests (5e7, fewer where requests split into many "
                             "chunks: a shorter interval or a lower rate, timeline_span)");
        sim_options so;
        so.seed = seed;
        so.service_cv = service_cv;
        so.timeline = timeline_options{.from = from, .to = from + length};
        return simulate(server(k), dist_, qps, static_cast<std::uint64_t>(std::ceil(need)), so);
    }

private:
    /// What an instance holds at each of `g`'s largest gears; an error, before any service
    /// time is computed, when no stream count and gear of the grid fits the card's memory.
    static std::vector<memory_need> fitting_needs(const chip& c, std::span<const node> model,
                                                  const serving_grid& g, const memory_rule& rule,
                                                  int chips) {
        validate(g, c);
        validate(rule);
        PERFCAST_EXPECTS(!model.empty(), "serving_sweeper", "model (nodes)", 0.0,
                         "at least one node");
        std::vector<memory_need> needs;
        for (int m : g.max_gears) needs.push_back(memory_of(c, model, batch_size{m}));
        // The smallest: the fewest streams at the gear needing the least.
        const stream_count fewest = *std::min_element(g.streams.begin(), g.streams.end());
        std::size_t least = 0;
        for (std::size_t gi = 1; gi < needs.size(); ++gi) {
            if (needs[gi].on_card(fewest, rule, chips) < needs[least].on_card(fewest, rule, chips))
                least = gi;
        }
        if (!fits(c, needs[least], fewest, rule, chips)) {
            // What alone would make it fit: one stream, shared weights, gear 1; else a card.
            std::string could;
            if (fewest.value > 1 && fits(c, needs[least], stream_count{1}, rule, chips))
                could += "fewer streams, ";
            memory_rule shared = rule;
            shared.copies = weight_copies::shared;
            if (rule.copies == weight_copies::per_instance &&
                fits(c, needs[least], fewest, shared, chips))
                could += "weights and tables shared between instances, ";
            if (g.max_gears[least] > 1 &&
                fits(c, memory_of(c, model, batch_size{1}), fewest, rule, chips))
                could += "a smaller largest gear, ";
            could += chips > 1 ? "chips with more memory" : "a card with more memory";
            ::perfcast::detail::precondition_failed(
                "serving_sweeper",
                chips > 1 ? "configurations that fit a chip's memory"
                          : "configurations that fit the card's memory",
                0.0,
                "at least one: the smallest, " + std::to_string(fewest.value) +
                    " stream(s) at max gear " + std::to_string(g.max_gears[least]) +
                    ", needs at least " +
                    gib_above(needs[least].on_card(fewest, rule, chips), c.memory.hbm_size) +
                    (chips > 1 ? " of a chip's " : " of the card's ") +
                    detail::number_text(c.memory.hbm_size.in(units::GiB)) + " GiB (" + could + ")");
        }
        return needs;
    }

    static card_service_cache make_cache(const chip& c, std::span<const node> model,
                                         const serving_grid& g, const card_params& params,
                                         const progress_fn& progress) {
        validate(g, c);
        PERFCAST_EXPECTS(!model.empty(), "serving_sweeper", "model (nodes)", 0.0,
                         "at least one node");
        std::vector<core_split> splits;
        for (const core_count k : g.cube) {
            for (const core_count v : g.vector) splits.push_back({k, v});
        }
        return card_service_cache(
            c, model, splits, *std::max_element(g.max_gears.begin(), g.max_gears.end()),
            *std::max_element(g.streams.begin(), g.streams.end()), params, progress);
    }

    static void check(const serving_sweep_options& o) {
        constexpr std::string_view where = "serving_sweeper::run";
        PERFCAST_EXPECTS(o.loads.empty() != !o.target.has_value(), where, "loads / target",
                         o.target ? "both" : "neither",
                         "either fixed loads (load mode) or a TP99 target (capacity mode)");
        for (std::size_t i = 0; i < o.loads.size(); ++i) {
            PERFCAST_EXPECTS(o.loads[i].in(units::qps) > 0 && is_finite(o.loads[i]), where,
                             "loads[" + std::to_string(i) + "]", o.loads[i].in(units::qps),
                             "a finite rate > 0 requests per second");
        }
        if (o.target) {
            PERFCAST_EXPECTS(o.target->in(units::s) > 0 && is_finite(*o.target), where,
                             "target (ms)", o.target->in(units::ms),
                             "a finite TP99 target > 0 ms");
        }
        PERFCAST_EXPECTS(o.requests > o.warmup && o.requests - o.warmup >= 100, where,
                         "requests", static_cast<double>(o.requests),
                         "at least 100 more than warmup");
        PERFCAST_EXPECTS(o.rel_tolerance >= 1e-6 && o.rel_tolerance < 1, where,
                         "rel_tolerance", o.rel_tolerance, "a share in [1e-6, 1)");
        (void)detail::erlang_shape(o.service_cv);  // rejects a cv outside {0} U [0.1, 1]
    }

    /// The simulation options of a replay of `trace`: its first tenth warm-up.
    [[nodiscard]] static sim_options replay_options(std::span<const arrival> trace,
                                                    std::uint64_t seed, double service_cv) {
        sim_options so;
        so.seed = seed;
        so.warmup = trace.size() / 10;
        so.service_cv = service_cv;
        return so;
    }

    /// `trace` replayed on `srv` at mean rate `q` (its gaps scaled alike) under `so`, classified
    /// against `sat` as a Poisson run is: a queue that grew is no steady state (find_capacity on
    /// a trace refuses such a rate too).
    [[nodiscard]] static serving_point replayed_at(const server_config& srv,
                                                   std::span<const arrival> trace, request_rate q,
                                                   const sim_options& so,
                                                   const saturation_result& sat) {
        trace_arrivals src(trace, q / mean_rate(trace));
        return point_of(simulate(srv, src, so), q, sat);
    }

    static serving_point point_of(const serving_result& s, request_rate offered,
                                  const saturation_result& sat) {
        serving_point p;
        p.state = classify(offered, s, sat);
        p.qps = offered;
        p.mean = s.mean;
        p.p50 = s.p50;
        p.p99 = s.p99;
        p.p999 = s.p999;
        p.utilization = s.utilization;
        p.core_utilization = s.core_utilization;
        p.padding_share = s.padding_share;
        p.mean_batch = s.mean_batch;
        return p;
    }

    serving_grid grid_;
    batch_distribution dist_;
    memory_rule rule_;
    int chips_;  // card_params::chips: memory is checked per chip
    data_size capacity_;
    std::vector<memory_need> memory_;  // one per largest gear, in the grid's order
    card_service_cache cache_;
    std::vector<serving_config> configs_;
    std::size_t unfit_ = 0;
    data_size largest_{};
};

}  // namespace perfcast
