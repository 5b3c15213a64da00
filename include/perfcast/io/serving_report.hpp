// perfcast/io/serving_report.hpp: a serving sweep's result (serving_sweep.hpp) as JSON and CSV:
// what `perfcast whatif --qps / --p99-ms` writes with --format json or csv. The table and the
// SVG: io/serving_report_table.hpp (split off to keep each header under 500 lines).
//
//   const perfcast::serving_sweep_result r = sweeper.run(o);
//   perfcast::io::serving_report x{.model_name = m.name, .model_nodes = m.nodes.size(),
//                                  .chip_name = "ascend910b1", .sizes_text = "every request 16",
//                                  .sizes_source = "fixed", .dist = &dist, .options = o};
//   perfcast::io::write_serving_json(std::cout, x, r);    // or write_serving_csv
//
// Latencies appear only at a stable load: past saturation a finite run's percentiles measure how
// long it ran, so JSON has null there, CSV an empty field, and `state` says why.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "../runtime.hpp"
#include "../serving_sweep.hpp"
#include "../units.hpp"
#include "../whatif.hpp"
#include "csv.hpp"
#include "json.hpp"
#include "table.hpp"
#include "whatif_report.hpp"  // write_runtime_members

namespace perfcast::io {

/// Everything the serving writers need besides the sweep's result.
struct serving_report {
    std::string model_name{};
    std::size_t model_nodes = 0;
    std::string chip_name{};
    std::string sizes_text{};                  // "tests/data/x.csv (41 sizes, mean 8.14 samples)"
    std::string sizes_source{};                // JSON's batch_sizes.source: "fixed" or the file
    const batch_distribution* dist = nullptr;  // the sizes the sweep served (not null)
    serving_sweep_options options{};           // the options the sweep ran with
    std::optional<request_rate> traffic{};     // total traffic: cards per configuration
    double headroom = 0;                       // share of each card's capacity kept free
    std::size_t top = whatif_defaults::top;    // table rows (0: all)
    std::optional<runtime_path> runtime{};     // the runtime path served (card_params::runtime;
                                               // between is 0: no stress-test loop)
    int host_threads = 0;                      // card_params::host_threads (0: one per stream)
    int chips = 1;                             // card_params::chips
    /// A recorded trace replayed on the first leaders (serving_sweeper::replay_leaders; whatif
    /// --replay) and its file: replays[i] is leader i + 1's.
    std::string replay_source{};
    std::vector<trace_replay> replays{};
};

namespace serving_report_detail {

[[nodiscard]] inline std::string ms3(duration t) { return format_fixed(t.in(units::ms), 3); }
/// A rate as given: "100000", "2500.5" (no exponent for whole numbers).
[[nodiscard]] inline std::string rate_text(double v) {
    return v == std::floor(v) && v < 1e15 ? format_fixed(v, 0) : format_shortest(v);
}
[[nodiscard]] inline std::string pct(double share) { return format_fixed(100 * share, 1); }
[[nodiscard]] inline std::string split_text(const serving_config& k) {
    return std::to_string(k.split.cube.value) + "/" + std::to_string(k.split.vector.value);
}

[[nodiscard]] inline std::size_t simulated_count(const serving_sweep_result& r) {
    return static_cast<std::size_t>(std::count_if(
        r.ranked.begin(), r.ranked.end(), [](const serving_row& row) { return row.simulated; }));
}

[[nodiscard]] inline std::optional<card_count> cards_of(const serving_report& x,
                                                        const serving_row& r) {
    if (!x.traffic || !r.capacity) return std::nullopt;
    return cards_for(*x.traffic, *r.capacity, x.headroom);
}
/// The cards the traffic needs at a replayed leader's capacity (its trace's bursts kept).
[[nodiscard]] inline std::optional<card_count> cards_of(const serving_report& x,
                                                        const trace_replay& t) {
    if (!x.traffic || !t.capacity) return std::nullopt;
    return cards_for(*x.traffic, t.capacity->qps, x.headroom);
}
/// The replayed leader (an index into x.replays) whose capacity needs the fewest cards for the
/// traffic, the first of a tie; none without traffic or where no leader has a capacity.
[[nodiscard]] inline std::optional<std::size_t> fewest_replayed_cards(const serving_report& x) {
    std::optional<std::size_t> best;
    std::int64_t fewest = 0;
    for (std::size_t i = 0; i < x.replays.size(); ++i) {
        const auto c = cards_of(x, x.replays[i]);
        if (c && (!best || c->cards < fewest)) {
            best = i;
            fewest = c->cards;
        }
    }
    return best;
}

inline void write_config_json(json_writer& j, const serving_config& k) {
    j.member("streams", k.streams)
        .member("cube", k.split.cube.value)
        .member("vector", k.split.vector.value)
        .member("max_gear", k.max_gear)
        .member("window_ms", k.window.in(units::ms));
}

/// Latencies only at a stable load: past saturation a finite run's percentiles measure how long
/// it ran, so they are null there and `state` says why.
inline void write_point_json(json_writer& j, const serving_point& p) {
    const bool steady = p.state == load_state::stable;
    j.begin_object().member("qps", p.qps.in(units::qps)).member("state", name_of(p.state));
    for (const auto& [key, t] : {std::pair{"mean_ms", p.mean}, std::pair{"p50_ms", p.p50},
                                 std::pair{"p99_ms", p.p99}, std::pair{"p999_ms", p.p999}}) {
        j.key(key);
        if (steady) {
            j.value(t.in(units::ms));
        } else {
            j.null();
        }
    }
    j.member("utilization", p.utilization)
        .member("core_utilization", p.core_utilization)
        .member("padding_share", p.padding_share)
        .member("mean_batch", p.mean_batch)
        .end_object();
}

inline void write_row_json(json_writer& j, const serving_report& x, const serving_row& r,
                           std::size_t rank) {
    j.begin_object().member("rank", static_cast<std::uint64_t>(rank));
    write_config_json(j, r.config);
    j.member("analytic_rank", static_cast<std::uint64_t>(r.analytic_rank))
        .member("simulated", r.simulated)
        .member("low_load_mean_ms", r.low_load_mean.in(units::ms))
        .member("low_load_p99_ms", r.low_load_p99.in(units::ms));
    j.member_or_null("saturation_qps", r.saturation,
                     [&] { return r.saturation->throughput.in(units::qps); });
    j.member_or_null("saturation_bound_qps", r.saturation,
                     [&] { return r.saturation->bound.in(units::qps); });
    if (x.options.target) {
        j.member_or_null("analytic_capacity_qps", r.analytic_capacity,
                         [&] { return r.analytic_capacity->in(units::qps); });
        j.member_or_null("capacity_qps", r.capacity, [&] { return r.capacity->in(units::qps); });
        j.member_or_null("capacity_limit", r.capacity, [&] { return name_of(r.limit); });
        if (x.traffic) {
            const auto c = cards_of(x, r);
            j.member_or_null("cards", c, [&] { return c->cards; });
        }
    } else {
        // Saturated in the analytic model: no TP99 (it grows without end), and the state says
        // why it is null.
        const bool stable = is_finite(r.analytic_p99);
        j.member_or_null("analytic_p99_ms", stable, [&] { return r.analytic_p99.in(units::ms); });
        j.member("analytic_state", stable ? "stable" : "saturated")
            .member("analytic_utilization", r.analytic_utilization);
    }
    j.key("points").begin_array();
    for (const serving_point& p : r.points) write_point_json(j, p);
    j.end_array().end_object();
}
}  // namespace serving_report_detail

/// One JSON object: the inputs, the best (or the configuration closest to the target) and every
/// simulated leader with its loads.
inline void write_serving_json(std::ostream& out, const serving_report& x,
                               const serving_sweep_result& r) {
    using namespace serving_report_detail;
    json_writer j(out);
    const bool capacity = x.options.target.has_value();
    j.begin_object()
        .member("mode", capacity ? "capacity" : "load")
        .member("model", x.model_name)
        .member("chip", x.chip_name);
    write_runtime_members(j, x.runtime, x.host_threads, x.chips);
    j.key("batch_sizes")
        .begin_object()
        .member("source", x.sizes_source)
        .member("mean", x.dist->mean())
        .member("max", x.dist->max())
        .end_object();
    j.member("configurations", static_cast<std::uint64_t>(r.configurations))
        .member("unfit_configurations", static_cast<std::uint64_t>(r.unfit))
        .member("capacity_gib", r.capacity.in(units::GiB))
        .member("largest_memory_gib", r.largest.in(units::GiB))
        .member("leaders", static_cast<std::uint64_t>(r.ranked.size()))
        .member("simulated", static_cast<std::uint64_t>(simulated_count(r)))
        .member("requests", x.options.requests)
        .member("warmup", x.options.warmup)
        .member("seed", x.options.seed);
    j.key("loads_qps").begin_array();
    for (request_rate q : x.options.loads) j.value(q.in(units::qps));
    j.end_array();
    j.member_or_null("target_p99_ms", capacity, [&] { return x.options.target->in(units::ms); });
    j.member_or_null("met", capacity, [&] { return r.met(); });
    j.member_or_null("unsimulated_analytic_qps", r.unsimulated_analytic,
                     [&] { return r.unsimulated_analytic->in(units::qps); });
    j.member_or_null("leaders_in_doubt", capacity, [&] { return r.leaders_in_doubt(); });
    j.member_or_null("traffic_qps", x.traffic, [&] { return x.traffic->in(units::qps); });
    j.member("headroom", x.headroom).member("saturation_margin", saturation_margin);
    j.key("best");
    if (!r.ranked.empty() && (!capacity || r.met())) {
        write_row_json(j, x, r.ranked.front(), 1);
    } else {
        j.null();
    }
    j.key("closest");
    if (r.none) {
        j.begin_object();
        write_config_json(j, r.none->closest);
        j.member("low_load_p99_ms", r.none->closest_p99.in(units::ms))
            .member("floor_p99_ms", r.none->closest_floor_p99.in(units::ms))
            .member("why", r.none->why)
            .end_object();
    } else {
        j.null();
    }
    j.key("candidates").begin_array();
    for (std::size_t i = 0; i < r.ranked.size(); ++i) write_row_json(j, x, r.ranked[i], i + 1);
    j.end_array();
    j.key("replay");
    if (x.replays.empty()) {
        j.null();
    } else {
        j.begin_object()
            .member("source", x.replay_source)
            .member("requests", static_cast<std::uint64_t>(x.replays.front().requests))
            .member("mean_qps", x.replays.front().recorded_rate.in(units::qps));
        j.key("leaders").begin_array();
        for (std::size_t i = 0; i < x.replays.size(); ++i) {
            const trace_replay& t = x.replays[i];
            j.begin_object().member("rank", static_cast<std::uint64_t>(i + 1));
            write_config_json(j, t.config);
            j.key("recorded");
            write_point_json(j, t.recorded);
            if (capacity) {
                j.member_or_null("capacity_qps", t.capacity,
                                 [&] { return t.capacity->qps.in(units::qps); });
                j.member_or_null("capacity_limit", t.capacity,
                                 [&] { return name_of(t.capacity->limit); });
                j.member_or_null("none_why", !t.capacity, [&] { return t.none_why; });
                if (x.traffic) {
                    const auto c = cards_of(x, t);
                    j.member_or_null("cards", c, [&] { return c->cards; });
                }
            }
            j.end_object();
        }
        j.end_array().end_object();
    }
    j.end_object();
}

/// Every simulated leader, one row per load (one row without loads: nothing met the target).
inline void write_serving_csv(std::ostream& out, const serving_report& x,
                              const serving_sweep_result& r) {
    using namespace serving_report_detail;
    csv_writer w(out);
    w.row({"rank",
           "streams",
           "cube",
           "vector",
           "max_gear",
           "window_ms",
           "qps",
           "mean_ms",
           "p50_ms",
           "p99_ms",
           "p999_ms",
           "utilization",
           "core_utilization",
           "padding_share",
           "mean_batch",
           "capacity_qps",
           "cards",
           "low_load_p99_ms",
           "analytic_rank",
           "analytic_p99_ms",
           "analytic_capacity_qps",
           "state",
           "saturation_qps",
           "capacity_limit",
           "analytic_state"});
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
        const serving_row& row = r.ranked[i];
        const serving_config& k = row.config;
        std::vector<std::string> head{std::to_string(i + 1),
                                      std::to_string(k.streams),
                                      std::to_string(k.split.cube.value),
                                      std::to_string(k.split.vector.value),
                                      std::to_string(k.max_gear),
                                      format_shortest(k.window.in(units::ms))};
        const auto cards = cards_of(x, row);
        std::vector<std::string> tail{
            row.capacity ? format_shortest(row.capacity->in(units::qps)) : "",
            cards ? std::to_string(cards->cards) : "",
            format_shortest(row.low_load_p99.in(units::ms)),
            std::to_string(row.analytic_rank),
            x.options.target || !is_finite(row.analytic_p99)
                ? ""
                : format_shortest(row.analytic_p99.in(units::ms)),
            row.analytic_capacity ? format_shortest(row.analytic_capacity->in(units::qps)) : ""};
        auto emit = [&](const serving_point* p) {
            std::vector<std::string> f = head;
            if (p != nullptr) {
                const bool steady = p->state == load_state::stable;
                f.push_back(format_shortest(p->qps.in(units::qps)));
                for (duration t : {p->mean, p->p50, p->p99, p->p999}) {
                    f.push_back(steady ? format_shortest(t.in(units::ms)) : "");
                }
                for (double v :
                     {p->utilization, p->core_utilization, p->padding_share, p->mean_batch}) {
                    f.push_back(format_shortest(v));
                }
            } else {
                f.insert(f.end(), 9, "");
            }
            f.insert(f.end(), tail.begin(), tail.end());
            f.push_back(p != nullptr ? std::string(name_of(p->state)) : "");
            f.push_back(row.saturation ? format_shortest(row.saturation->throughput.in(units::qps))
                                       : "");
            f.push_back(row.capacity ? std::string(name_of(row.limit)) : "");
            // Load mode: whether the analytic model saw the highest load as stable (an empty
            // analytic_p99_ms when it did not: that TP99 grows without end).
            f.push_back(x.options.target              ? ""
                        : is_finite(row.analytic_p99) ? "stable"
                                                      : "saturated");
            w.row(f);
        };
        if (row.points.empty()) emit(nullptr);
        for (const serving_point& p : row.points) emit(&p);
    }
}

}  // namespace perfcast::io
