// perfcast/io/whatif_report.hpp: a card sweep's result (whatif.hpp) as a table, CSV, JSON and
// SVG: what `perfcast whatif` prints without serving flags.
//
//   const perfcast::whatif_result r = perfcast::sweep(chip, m.nodes, grid);
//   perfcast::io::whatif_report rep{.model_name = m.name, .model_nodes = m.nodes.size(),
//                                   .chip_name = "ascend910b1"};
//   rep.pick = r.best_under(1_ms);                        // a latency target, optional
//   perfcast::io::write_whatif_table(std::cout, rep, r);   // or _csv, _json, _svg
//
// The table shows the first `top` candidates (and the pick, when it ranks below them) and says
// what each column means; CSV and JSON list every candidate with every figure; the SVG plots QPS
// against latency with the Pareto front and the target.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../runtime.hpp"
#include "../units.hpp"
#include "../whatif.hpp"
#include "csv.hpp"
#include "json.hpp"
#include "memory_report.hpp"
#include "svg.hpp"
#include "table.hpp"

namespace perfcast::io {

/// What the writers say about a model anchored on a profile (profile/anchored.hpp's
/// anchored_profile and profiled_time), besides the sweep.
struct anchored_summary {
    std::size_t anchored = 0;         // measured ops anchored
    std::size_t unmapped = 0;         // of them kept at their measured time
    std::size_t batch_dependent = 0;  // of them scaling with the batch
    std::size_t skipped = 0;          // rows skipped (communication, DSA, no duration)
    std::size_t damaged = 0;          // damaged rows the reader skipped (listed on stderr)
    std::int64_t batch = 1;           // the profiled batch
    duration measured{};              // the anchors' measured op time
    duration model_at_profile{};      // the model at the profiled configuration
};

/// Everything the card-sweep writers need besides the whatif_result.
struct whatif_report {
    std::string model_name{};
    std::size_t model_nodes = 0;
    std::string chip_name{};
    std::string rank_label = "QPS";             // what the ranking is by: "QPS" or "samples/s"
    std::optional<anchored_summary> profile{};  // a model anchored on a profile
    std::optional<selection> pick{};            // best_under(target): with a latency target
    std::optional<runtime_path> runtime{};      // the runtime path the sweep ran (card_params)
    int host_threads = 0;                       // card_params::host_threads
    int chips = 1;                              // card_params::chips
    std::size_t top = whatif_defaults::top;     // table rows (0: all)
};

/// "12/24": a candidate's cube / vector cores per instance.
[[nodiscard]] inline std::string split_text(const candidate& c) {
    return std::to_string(c.split.cube.value) + "/" + std::to_string(c.split.vector.value);
}

/// "2 stream(s) x 12 cube / 24 vector cores, batch 64: 5632 QPS, 360448 samples/s at 0.355 ms".
[[nodiscard]] inline std::string describe(const candidate& c) {
    return std::to_string(c.streams) + " stream(s) x " + std::to_string(c.split.cube.value) +
           " cube / " + std::to_string(c.split.vector.value) + " vector cores, batch " +
           std::to_string(c.batch) + ": " + throughput_text(c.qps) + " QPS, " +
           throughput_text(c.throughput) + " samples/s at " +
           format_fixed(c.latency.in(units::ms), 3) + " ms";
}

/// The runtime path as JSON: every key's value, as the params file writes it.
inline void write_runtime_json(json_writer& j, const runtime_path& r) {
    j.begin_object();
    for (const runtime_key& k : runtime_keys) j.member(k.key, k.get(r));
    j.end_object();
}

/// "ascend310p3", or on a card of several chips (card_params::chips) "a card of 2 x ascend310p3".
[[nodiscard]] inline std::string card_text(std::string_view chip_name, int chips) {
    if (chips <= 1) return std::string(chip_name);
    return "a card of " + std::to_string(chips) + " x " + std::string(chip_name);
}

/// Members "runtime" (write_runtime_json, or null without a runtime path), "host_threads" and
/// "chips_per_card" (card_params::chips).
inline void write_runtime_members(json_writer& j, const std::optional<runtime_path>& r,
                                  int host_threads, int chips) {
    j.key("runtime");
    if (r) {
        write_runtime_json(j, *r);
    } else {
        j.null();
    }
    j.member("host_threads", host_threads);
    j.member("chips_per_card", chips);
}

namespace whatif_report_detail {

/// Whether each ranked candidate is on the Pareto front.
[[nodiscard]] inline std::vector<bool> on_front(const whatif_result& r) {
    std::vector<bool> out(r.ranked.size(), false);
    for (std::size_t i : r.pareto) out[i] = true;
    return out;
}

/// Whether `x` is the candidate chosen under the target (a met one only).
[[nodiscard]] inline bool is_pick(const whatif_report& rep, const candidate& x) {
    return rep.pick && rep.pick->has_value() && x == rep.pick->closest();
}

/// Candidate `c` of rank `rank` (1-based, as in the table and csv) as JSON; on the front or not.
inline void write_candidate_json(json_writer& j, const candidate& c, std::size_t rank,
                                 bool on_front) {
    j.begin_object()
        .member("rank", static_cast<double>(rank))
        .member("pareto", on_front)
        .member("streams", c.streams)
        .member("cube", c.split.cube.value)
        .member("vector", c.split.vector.value)
        .member("batch", static_cast<double>(c.batch))
        .member("latency_ms", c.latency.in(units::ms))
        .member("stress_window_ms", c.window.in(units::ms))
        .member("cycle_ms", c.cycle.in(units::ms))
        .member("qps", c.qps)
        .member("samples_per_s", c.throughput)
        .member("cube_utilization", c.cube_utilization)
        .member("vector_utilization", c.vector_utilization)
        .member("hbm_utilization", c.hbm_utilization)
        .member("l2_miss", c.l2_miss)
        .member("bubbles_ms", c.bubbles.in(units::ms))
        .member("transfer_ms", c.transfer.in(units::ms))
        .member("bound", name_of(c.bound))
        .member("cores_shared", c.cores_shared)
        .member("memory_gib", c.memory.in(units::GiB))
        .member("fits", c.fits)
        .end_object();
}

/// What the deployments hold of the card's memory (of a chip's on a card of `chips` chips):
/// memory_need_line, then memory_fit_line.
[[nodiscard]] inline std::string memory_line(const whatif_result& r, int chips = 1) {
    if (r.memory.empty() || r.ranked.empty()) return {};
    data_size largest{};
    for (const candidate& x : r.ranked) largest = x.memory > largest ? x.memory : largest;
    return memory_need_line(r.memory, r.rule) + "\n" +
           memory_fit_line(largest, r.capacity, r.unfit(), r.ranked.size(), "deployments",
                           "ranked last, on no front, never the pick", chips);
}

/// The head of the table: the model, the memory, the anchored profile, the pick.
inline void write_table_head(std::ostream& out, const whatif_report& rep, const whatif_result& r) {
    out << "model " << rep.model_name << " (" << rep.model_nodes << " nodes) on "
        << card_text(rep.chip_name, rep.chips) << ": " << r.ranked.size()
        << " deployments, ranked by " << rep.rank_label << "\n";
    if (const std::string m = memory_line(r, rep.chips); !m.empty()) out << m << "\n";
    if (rep.profile) {
        const anchored_summary& p = *rep.profile;
        const std::size_t mapped = p.anchored - p.unmapped;
        out << "profile: " << p.anchored << " measured ops anchored (" << mapped
            << " mapped to ops, " << p.batch_dependent << " scaling with the batch; " << p.unmapped
            << " unmapped, kept at their measured time), " << p.skipped + p.damaged
            << " rows skipped (communication, DSA, no duration"
            << (p.damaged > 0
                    ? "; " + std::to_string(p.damaged) + " of them damaged, listed on stderr"
                    : std::string{})
            << ")\n"
            << "measured " << format_fixed(p.measured.in(units::ms), 3)
            << " ms of op time; the model at the profiled configuration (batch " << p.batch
            << ", each op's block dim): " << format_fixed(p.model_at_profile.in(units::ms), 3)
            << " ms\n";
    }
    if (rep.pick) {
        if (rep.pick->has_value()) {
            out << "best within " << format_shortest(rep.pick->target().in(units::ms))
                << " ms: " << describe(rep.pick->closest()) << "\n";
        } else {
            out << rep.pick->why() << "\n";
        }
    }
    out << "\n";
}

}  // namespace whatif_report_detail

/// The table: the first rep.top candidates (the pick too when it ranks below them), then what
/// the columns mean.
inline void write_whatif_table(std::ostream& out, const whatif_report& rep,
                               const whatif_result& r) {
    using whatif_report_detail::is_pick;
    whatif_report_detail::write_table_head(out, rep, r);
    const std::vector<bool> on_front = whatif_report_detail::on_front(r);
    const bool with_path = rep.runtime.has_value();
    std::vector<std::string> header{"#", "streams", "cube/vec", "batch", "latency ms"};
    if (with_path) header.insert(header.end(), {"window ms", "cycle ms"});
    header.insert(header.end(), {"QPS", "samples/s", "cube %", "vec %", "L2 miss %", "bound",
                                 "shared", "front", "note"});
    text_table t(std::move(header));
    const std::size_t rows = rep.top == 0 || rep.top > r.ranked.size() ? r.ranked.size() : rep.top;
    bool pick_shown = false;
    auto add = [&](std::size_t i) {
        const candidate& x = r.ranked[i];
        std::string note;
        if (is_pick(rep, x)) {
            note = "<- best within " + format_shortest(rep.pick->target().in(units::ms)) + " ms";
            pick_shown = true;
        } else if (!x.fits) {
            note = "does not fit: " + size_over(x.memory, r.capacity);
        }
        std::vector<std::string> row{std::to_string(i + 1), std::to_string(x.streams),
                                     split_text(x), std::to_string(x.batch),
                                     format_fixed(x.latency.in(units::ms), 3)};
        if (with_path) {
            row.insert(row.end(), {format_fixed(x.window.in(units::ms), 3),
                                   format_fixed(x.cycle.in(units::ms), 3)});
        }
        row.insert(row.end(), {throughput_text(x.qps), throughput_text(x.throughput),
                               format_fixed(100 * x.cube_utilization, 1),
                               format_fixed(100 * x.vector_utilization, 1),
                               format_fixed(100 * x.l2_miss, 1), std::string(name_of(x.bound)),
                               x.cores_shared ? "yes" : "", on_front[i] ? "*" : "", note});
        t.add_row(std::move(row));
    };
    for (std::size_t i = 0; i < rows; ++i) add(i);
    if (rep.pick && rep.pick->has_value() && !pick_shown) {
        for (std::size_t i = rows; i < r.ranked.size(); ++i) {
            if (is_pick(rep, r.ranked[i])) {
                add(i);
                break;
            }
        }
    }
    t.write(out);
    if (rows < r.ranked.size()) {
        out << "(" << r.ranked.size() - rows
            << " more; --top 0 lists all, --format csv|json gives every column)\n";
    }
    if (with_path) {
        out << "runtime path: " << runtime_summary(*rep.runtime) << "\n"
            << "latency: one task, prepare .. post, every stream busy; window: what a stress\n"
               "test times ("
            << name_of(rep.runtime->window)
            << "); cycle: task + host work between tasks; QPS = 1000 / cycle\n"
               "ms x streams (closed loop, tasks back to back); samples/s = QPS x batch;\n";
    } else {
        out << "latency: one inference with every stream busy; QPS = 1000 / latency ms x "
               "streams;\nsamples/s = QPS x batch;\n";
    }
    out << "L2 miss: the share of warm L2 traffic that misses because the instances\n"
           "share the L2 (0 with one: its own misses are in its latency); shared: the\n"
           "splits add up to more cores than a chip has, so cores are time-shared;\n"
           "front: on the Pareto front of QPS against latency ("
        << r.pareto.size() << " deployments)"
        << (r.by == rank_by::throughput
                ? "; ranked by samples/s, a larger batch can lead\nwithout being on that front"
                : "")
        << ".\n";
}

/// Every candidate, one row each, in rank order (pareto and best as 0 / 1).
inline void write_whatif_csv(std::ostream& out, const whatif_report& rep, const whatif_result& r) {
    const std::vector<bool> on_front = whatif_report_detail::on_front(r);
    csv_writer w(out);
    w.row({"rank",
           "streams",
           "cube",
           "vector",
           "batch",
           "latency_ms",
           "qps",
           "samples_per_s",
           "cube_utilization",
           "vector_utilization",
           "hbm_utilization",
           "l2_miss",
           "bubbles_ms",
           "transfer_ms",
           "bound",
           "cores_shared",
           "pareto",
           "best",
           "stress_window_ms",
           "cycle_ms",
           "memory_gib",
           "fits"});
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
        const candidate& x = r.ranked[i];
        w.row({std::to_string(i + 1),
               std::to_string(x.streams),
               std::to_string(x.split.cube.value),
               std::to_string(x.split.vector.value),
               std::to_string(x.batch),
               format_shortest(x.latency.in(units::ms)),
               format_shortest(x.qps),
               format_shortest(x.throughput),
               format_shortest(x.cube_utilization),
               format_shortest(x.vector_utilization),
               format_shortest(x.hbm_utilization),
               format_shortest(x.l2_miss),
               format_shortest(x.bubbles.in(units::ms)),
               format_shortest(x.transfer.in(units::ms)),
               std::string(name_of(x.bound)),
               x.cores_shared ? "1" : "0",
               on_front[i] ? "1" : "0",
               whatif_report_detail::is_pick(rep, x) ? "1" : "0",
               format_shortest(x.window.in(units::ms)),
               format_shortest(x.cycle.in(units::ms)),
               format_shortest(x.memory.in(units::GiB)),
               x.fits ? "1" : "0"});
    }
}

/// One JSON object: the inputs, the pick, the Pareto front (1-based ranks) and every candidate.
inline void write_whatif_json(std::ostream& out, const whatif_report& rep, const whatif_result& r) {
    using whatif_report_detail::write_candidate_json;
    json_writer j(out);
    j.begin_object().member("model", rep.model_name).member("chip", rep.chip_name);
    // What each figure means (latency_ms: the task; window_ms: what a stress test times;
    // cycle_ms: task + between-task host work; qps: closed loop).
    write_runtime_members(j, rep.runtime, rep.host_threads, rep.chips);
    // What one instance holds at each batch, the rule the card's total follows, the capacity.
    j.key("memory")
        .begin_object()
        .member("copies", name_of(r.rule.copies))
        .member("reserve_gib", r.rule.reserve.in(units::GiB))
        .member("capacity_gib", r.capacity.in(units::GiB))
        .member("unfit", static_cast<double>(r.unfit()));
    j.key("batches").begin_array();
    for (const memory_need& m : r.memory) {
        j.begin_object()
            .member("batch", static_cast<double>(m.batch.value))
            .member("weights_gib", m.weights.in(units::GiB))
            .member("tables_gib", m.tables.in(units::GiB))
            .member("working_gib", m.working.in(units::GiB))
            .end_object();
    }
    j.end_array().end_object();
    // What the table mode prints about an anchored profile (null for a model).
    j.key("profile");
    if (rep.profile) {
        const anchored_summary& p = *rep.profile;
        j.begin_object()
            .member("anchored", static_cast<double>(p.anchored))
            .member("mapped", static_cast<double>(p.anchored - p.unmapped))
            .member("batch_dependent", static_cast<double>(p.batch_dependent))
            .member("unmapped", static_cast<double>(p.unmapped))
            .member("skipped", static_cast<double>(p.skipped + p.damaged))
            .member("damaged", static_cast<double>(p.damaged))
            .member("profiled_batch", static_cast<double>(p.batch))
            .member("measured_ms", p.measured.in(units::ms))
            .member("model_at_profile_ms", p.model_at_profile.in(units::ms))
            .end_object();
    } else {
        j.null();
    }
    j.member_or_null("target_ms", rep.pick, [&] { return rep.pick->target().in(units::ms); });
    const std::vector<bool> on_front = whatif_report_detail::on_front(r);
    // A candidate of r.ranked with its rank and whether it is on the front.
    const auto write_ranked = [&](const candidate& x) {
        const auto at = static_cast<std::size_t>(std::find(r.ranked.begin(), r.ranked.end(), x) -
                                                 r.ranked.begin());
        write_candidate_json(j, x, at + 1, at < on_front.size() && on_front[at]);
    };
    // met: null without a target (as serving mode's json).
    j.member_or_null("met", rep.pick, [&] { return rep.pick->has_value(); });
    j.key("best");
    if (rep.pick && rep.pick->has_value()) {
        write_ranked(rep.pick->closest());
    } else {
        j.null();
    }
    j.key("closest");
    if (rep.pick) {
        write_ranked(rep.pick->closest());
    } else {
        j.null();
    }
    // The front's ranks (candidates[rank - 1]), in order of rising latency.
    j.key("pareto").begin_array();
    for (std::size_t i : r.pareto) j.value(static_cast<double>(i + 1));
    j.end_array();
    j.key("candidates").begin_array();
    for (std::size_t i = 0; i < r.ranked.size(); ++i)
        write_candidate_json(j, r.ranked[i], i + 1, on_front[i]);
    j.end_array();
    j.end_object();
    out << '\n';
}

/// QPS against latency: every candidate, the Pareto front, and the target with the pick (or
/// the candidate closest to it) labelled.
inline void write_whatif_svg(std::ostream& out, const whatif_report& rep, const whatif_result& r,
                             std::string_view title) {
    svg_plot p(std::string(title), "latency under load (ms)", "QPS per card");
    svg_series all{.name = "candidates", .points = {}, .color = "#adb5bd"};
    svg_series unfit{.name = "does not fit the card's memory", .points = {}, .color = "#e599f7"};
    for (const candidate& c : r.ranked)
        (c.fits ? all : unfit).points.push_back({c.latency.in(units::ms), c.qps});
    svg_series front{.name = "Pareto front",
                     .points = {},
                     .color = "#d9480f",
                     .style = svg_style::line_markers,
                     .radius = 4};
    for (std::size_t i : r.pareto) {
        front.points.push_back({r.ranked[i].latency.in(units::ms), r.ranked[i].qps});
    }
    p.add(std::move(all));
    if (!unfit.points.empty()) p.add(std::move(unfit));
    p.add(std::move(front));
    if (rep.pick) {
        const selection& pick = *rep.pick;
        p.add_vline(pick.target().in(units::ms),
                    "target " + format_shortest(pick.target().in(units::ms)) + " ms");
        const candidate& c = pick.closest();
        p.add_label({c.latency.in(units::ms), c.qps}, (pick.has_value() ? "best: "
                                                       : c.fits         ? "closest: "
                                                                        : "none fits; smallest: ") +
                                                          std::to_string(c.streams) + " x " +
                                                          split_text(c) + ", batch " +
                                                          std::to_string(c.batch));
    }
    p.write(out);
}

}  // namespace perfcast::io
