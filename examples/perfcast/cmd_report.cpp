// examples/perfcast/cmd_report.cpp:
//   perfcast report PROFILE [--chip C | --chip-ini FILE [--chip BASE]] [--top N]
//                   [--format table|csv|json]
//
// Reads an msprof op_summary / torch_npu kernel_details CSV (or the minimal format of
// docs/profiles.md, or the profilers' SQLite export: common.hpp read_database) and reports
// utilization (guide §2 formula), time by op type, the top ops with their cube utilization
// recomputed for the chip, pipe bounds, the host-bound signal and the findings with the seed's
// fixes. The chip is a preset (--chip) or the user's own CANN platform_config file (--chip-ini);
// with both, the preset fills what the ini lacks. Output: an aligned table (default), a tidy CSV
// (section,item,metric,value,unit,detail), or JSON. The table rounds for reading; csv and json
// carry full precision.

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/io/csv.hpp>
#include <perfcast/io/ini.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/svg.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/profile/report.hpp>
#include <perfcast/profile/timeline.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace perfcast::cli {

namespace report_detail {

inline constexpr std::array<option, 10> options{{
    chip_option,
    chip_ini_option,
    strict_option,
    device_option,
    step_option,
    rank_option,
    {"each", "",
     "a folder of several op tables (ranks, devices): a report for each, then one line each side "
     "by side"},
    {"top", "N", "ops in the top-ops table (default 10; 0: all)"},
    {"format", "FORMAT", "table (default), csv or json"},
    {"svg", "FILE", "also draw the time by op type as an SVG bar chart"},
}};

using io::format_fixed;
using io::format_shortest;

[[nodiscard]] inline std::string opt_fixed(const std::optional<double>& v, int digits) {
    return v ? format_fixed(*v, digits) : std::string("-");
}
[[nodiscard]] inline std::string opt_shortest(const std::optional<double>& v) {
    return v ? format_shortest(*v) : std::string();
}
[[nodiscard]] inline std::optional<double> pct(const std::optional<double>& v) {
    if (v) return *v * 100.0;
    return std::nullopt;
}

/// The chip with its AI core clock (cube and vector) set to what the timeline measured over the
/// tasks' window, when that differs from the chip's by more than 0.1 %: utilization is cycles
/// over the clock the run had. Said on `err`.
[[nodiscard]] inline chip at_measured_clock(chip c, const profile::timeline_summary& t,
                                            std::ostream& err) {
    if (!t.clock) return c;
    const double measured = t.clock->mean.in(units::MHz);
    const double preset = c.cube.clock.in(units::MHz);
    if (std::abs(measured - preset) <= 0.001 * preset) return c;
    err << "perfcast: the timeline " << t.source << " measured the AI cores at "
        << format_fixed(measured, 0) << " MHz (" << t.clock->samples << " samples"
        << (t.clock->constant() ? "" : ", time-weighted mean") << "); the chip says "
        << format_fixed(preset, 0) << " MHz: utilization uses the measured clock\n";
    c.cube.clock = t.clock->mean;
    c.vector.clock = t.clock->mean;
    return c;
}

/// The timeline's section: host API time by class, the AI core clock.
inline void write_timeline_table(std::ostream& out, const profile::timeline_summary& t) {
    out << "\nTimeline " << t.source << ": " << t.events << " events, " << t.device_tasks
        << " device tasks";
    if (t.skipped_count > 0) out << ", " << t.skipped_count << " events skipped";
    out << "\nhost API (spans nest: a launch inside its op_api call)";
    for (std::size_t k = 0; k < profile::host_api_kind_count; ++k) {
        out << (k == 0 ? ": " : ", ") << profile::host_api_kind_names[k].name << ' '
            << t.host_api[k].calls << " calls " << format_fixed(t.host_api[k].time.in(units::us), 3)
            << " us";
    }
    out << '\n';
    if (t.clock) {
        out << "AI Core clock: " << format_fixed(t.clock->mean.in(units::MHz), 0) << " MHz";
        if (!t.clock->constant())
            out << " (time-weighted mean; " << format_fixed(t.clock->low.in(units::MHz), 0)
                << " to " << format_fixed(t.clock->high.in(units::MHz), 0) << " MHz)";
        out << ", " << t.clock->samples << " samples\n";
    }
}

inline void write_table(std::ostream& out, const profile::profile_report& r, const chip& c) {
    out << "perfcast report: " << r.source << '\n'
        << r.format << ", " << r.rows << " rows, " << format_fixed(r.total_time.in(units::us), 3)
        << " us of device time; chip " << r.chip_name << " (" << c.cube.cores << " cube / "
        << c.vector.cores << " vector cores, " << format_fixed(c.cube.clock.in(units::MHz), 0)
        << " MHz, HBM " << format_fixed(c.memory.hbm_bandwidth.in(units::GBps), 1) << " GB/s)\n";
    if (r.skipped_count > 0) {
        out << r.skipped_count << " damaged rows skipped (listed on stderr; --strict makes the "
            << "first an error)\n";
    }
    if (r.steps.size() > 1) {
        out << "rows of " << r.steps.size() << " steps (Step Id " << r.steps.begin()->first
            << " to " << r.steps.rbegin()->first
            << "): the spans below include the time between steps; --step N reports one\n";
    }
    out << '\n';

    out << "Utilization = sum(cycles) / (span x cores x clock) (guide §2). Span: first start to "
           "last end;\nseed span: last start - first start, as the guide writes it.\n";
    io::text_table u({"engine", "tasks", "task us", "cycles", "cores", "MHz", "span us", "util %",
                      "seed span us", "seed util %"});
    for (const auto& e : r.utilization) {
        u.add_row(
            {e.label, std::to_string(e.tasks), format_fixed(e.task_time.in(units::us), 3),
             format_fixed(e.cycles.in(units::cycle), 0), std::to_string(e.cores),
             format_fixed(e.clock.in(units::MHz), 0), format_fixed(e.full_span.in(units::us), 3),
             opt_fixed(pct(e.full_utilization), 3), format_fixed(e.seed_span.in(units::us), 3),
             opt_fixed(pct(e.seed_utilization), 3)});
    }
    u.write(out);
    for (const auto& e : r.utilization) {
        if (!e.note.empty()) out << "note, " << e.label << ": " << e.note << '\n';
    }

    out << "\nTime by op type\n";
    io::text_table t({"type", "task", "count", "total us", "mean us", "share %"});
    for (const auto& x : r.by_type) {
        const double mean = x.count ? x.total.in(units::us) / static_cast<double>(x.count) : 0.0;
        t.add_row({x.op_type, x.task, std::to_string(x.count),
                   format_fixed(x.total.in(units::us), 3), format_fixed(mean, 3),
                   format_fixed(x.share * 100.0, 2)});
    }
    t.write(out);

    out << "\nTop " << r.top_ops.size()
        << " ops by duration (cube util recomputed for the chip; bound: pipes > threshold; GB/s: "
           "inputs+outputs\nonce / duration, outputs alone for fills; % HBM above 100: "
           "L2/cache)\n";
    io::text_table o({"line", "name", "type", "task", "us", "block", "cube util %", "profiled %",
                      "bound", "GB/s", "% HBM", "notes"});
    for (const auto& x : r.top_ops) {
        o.add_row({std::to_string(x.line), x.name, x.op_type, x.task,
                   format_fixed(x.time.in(units::us), 3),
                   x.block_dim ? std::to_string(*x.block_dim) : std::string("-"),
                   opt_fixed(x.cube_utilization_pct, 3),
                   opt_fixed(x.profiled_cube_utilization_pct, 3), x.bound,
                   x.achieved ? format_fixed(x.achieved->in(units::GBps), 1) : std::string("-"),
                   // Above the compute peak too: no cache explains it (the note says so).
                   x.above_hbm_peak ? std::string(x.above_compute_peak ? "-" : "L2/cache")
                                    : opt_fixed(pct(x.hbm_share), 1),
                   x.notes.empty() ? std::string("-") : x.notes});
    }
    o.write(out);

    const auto& h = r.host;
    out << "\nHost-bound signal (guide §3): " << h.timed_tasks << " timed tasks, window "
        << format_fixed(h.window.in(units::us), 3) << " us, busy "
        << format_fixed(h.busy.in(units::us), 3) << " us, idle "
        << format_fixed(h.idle.in(units::us), 3) << " us (" << opt_fixed(pct(h.idle_share), 2)
        << " %); " << h.gaps << " gaps, " << h.gaps_longer_than_next
        << " longer than the task after them; Wait Time total "
        << format_fixed(h.total_wait.in(units::us), 3) << " us over " << h.wait_rows << " rows\n";

    out << "\nFindings (" << r.findings.size() << ")\n";
    if (r.findings.empty()) out << "  none\n";
    for (const auto& f : r.findings) {
        const auto text = f.text();
        out << "\n[" << profile::name_of(f.kind) << "] " << text.title << " (" << text.source
            << ")\n  " << f.evidence << "\n  fix: " << text.fix << '\n';
        if (!f.examples.empty()) {
            io::text_table e({"  line", "name", "type", "us", "detail"});
            for (const auto& x : f.examples) {
                e.add_row({"  " + std::to_string(x.line), x.name, x.op_type,
                           format_fixed(x.time.in(units::us), 3), x.detail});
            }
            e.set_align(0, io::align::right);
            e.write(out);
        }
    }
}

inline void write_csv(std::ostream& out, const profile::profile_report& r,
                      const profile::timeline_summary* timeline = nullptr) {
    io::csv_writer w(out);
    w.row({"section", "item", "metric", "value", "unit", "detail"});
    const auto num = [&w](std::string_view sect, std::string_view item, std::string_view metric,
                          const std::optional<double>& v, std::string_view unit,
                          std::string_view det = {}) {
        w.row({sect, item, metric, opt_shortest(v), unit, det});
    };
    num("profile", r.source, "rows", static_cast<double>(r.rows), "", r.format);
    num("profile", r.source, "device_time", r.total_time.in(units::us), "us", r.chip_name);
    num("profile", r.source, "skipped_rows", static_cast<double>(r.skipped_count), "");
    // The listed skipped rows (up to the reader's list limit; the count above counts all).
    for (const auto& s : r.skipped) {
        w.row({"skipped_row", s.source + ":" + std::to_string(s.line), "column",
               std::to_string(s.column), "", s.reason});
    }
    for (const auto& [step, rows] : r.steps) {
        num("step", std::to_string(step), "rows", static_cast<double>(rows), "", "Step Id");
    }
    for (const auto& e : r.utilization) {
        num("utilization", e.label, "tasks", static_cast<double>(e.tasks), "");
        num("utilization", e.label, "task_time", e.task_time.in(units::us), "us");
        num("utilization", e.label, "cycles", e.cycles.in(units::cycle), "cycle");
        num("utilization", e.label, "cores", static_cast<double>(e.cores), "");
        num("utilization", e.label, "clock", e.clock.in(units::MHz), "MHz");
        num("utilization", e.label, "seed_span", e.seed_span.in(units::us), "us",
            "last start - first start (guide §2)");
        num("utilization", e.label, "seed_utilization", pct(e.seed_utilization), "%");
        num("utilization", e.label, "full_span", e.full_span.in(units::us), "us",
            "first start .. last end");
        num("utilization", e.label, "full_utilization", pct(e.full_utilization), "%", e.note);
    }
    for (const auto& x : r.by_type) {
        const std::string item = x.op_type + "/" + x.task;
        num("by_type", item, "count", static_cast<double>(x.count), "");
        num("by_type", item, "total", x.total.in(units::us), "us");
        num("by_type", item, "share", x.share * 100.0, "%");
    }
    for (const auto& x : r.top_ops) {
        const std::string item = "line " + std::to_string(x.line) + " " + x.name;
        num("top_op", item, "duration", x.time.in(units::us), "us", x.op_type + "/" + x.task);
        if (x.block_dim) num("top_op", item, "block_dim", static_cast<double>(*x.block_dim), "");
        num("top_op", item, "cube_utilization", x.cube_utilization_pct, "%", "recomputed");
        num("top_op", item, "profiled_cube_utilization", x.profiled_cube_utilization_pct, "%");
        w.row({"top_op", item, "bound", "", "", x.bound});
        if (x.achieved)
            num("top_op", item, "achieved_bandwidth", x.achieved->in(units::GBps), "GB/s");
        if (x.hbm_share) num("top_op", item, "hbm_share", *x.hbm_share * 100.0, "%");
        if (x.above_compute_peak)
            w.row({"top_op", item, "above_compute_peak", "1", "", profile::above_compute_note});
        else if (x.above_hbm_peak)
            w.row({"top_op", item, "above_hbm_peak", "1", "", profile::above_hbm_note});
        if (!x.notes.empty()) w.row({"top_op", item, "notes", "", "", x.notes});
    }
    const auto& h = r.host;
    num("host", "device", "timed_tasks", static_cast<double>(h.timed_tasks), "");
    num("host", "device", "window", h.window.in(units::us), "us");
    num("host", "device", "busy", h.busy.in(units::us), "us");
    num("host", "device", "idle", h.idle.in(units::us), "us");
    num("host", "device", "idle_share", pct(h.idle_share), "%");
    num("host", "device", "gaps", static_cast<double>(h.gaps), "");
    num("host", "device", "gaps_longer_than_next", static_cast<double>(h.gaps_longer_than_next),
        "");
    num("host", "device", "total_wait", h.total_wait.in(units::us), "us");
    for (const auto& f : r.findings) {
        const auto text = f.text();
        const std::string_view k = profile::name_of(f.kind);
        num("finding", k, "rows", static_cast<double>(f.rows), "", f.evidence);
        num("finding", k, "time", f.time.in(units::us), "us", text.title);
        w.row({"finding", k, "fix", "", "",
               std::string(text.fix) + " (" + std::string(text.source) + ")"});
        for (const auto& x : f.examples) {
            num("finding_row", k, "line " + std::to_string(x.line), x.time.in(units::us), "us",
                x.op_type + " " + x.name + ": " + x.detail);
        }
    }
    if (!timeline) return;
    num("timeline", timeline->source, "events", static_cast<double>(timeline->events), "");
    num("timeline", timeline->source, "device_tasks", static_cast<double>(timeline->device_tasks),
        "");
    for (std::size_t k = 0; k < profile::host_api_kind_count; ++k) {
        const std::string_view kind = profile::host_api_kind_names[k].name;
        num("host_api", kind, "calls", static_cast<double>(timeline->host_api[k].calls), "");
        num("host_api", kind, "time", timeline->host_api[k].time.in(units::us), "us");
    }
    if (timeline->clock) {
        num("timeline", timeline->source, "aicore_clock", timeline->clock->mean.in(units::MHz),
            "MHz", timeline->clock->constant() ? "constant" : "time-weighted mean");
    }
}

/// Member `k`: the number, or null when there is none.
inline void number_or_null(io::json_writer& j, std::string_view k, const std::optional<double>& v) {
    j.key(k);
    if (v) {
        j.value(*v);
    } else {
        j.null();
    }
}

/// The report as one JSON object written through `j` (alone, or as an element of --each's array).
inline void write_json(io::json_writer& j, const profile::profile_report& r,
                       const profile::timeline_summary* timeline = nullptr) {
    const auto opt = [&j](std::string_view k, const std::optional<double>& v) {
        number_or_null(j, k, v);
    };
    j.begin_object();
    j.member("source", r.source).member("format", r.format).member("chip", r.chip_name);
    j.member("rows", r.rows).member("device_time_us", r.total_time.in(units::us));
    j.member("skipped_rows", r.skipped_count);
    j.key("steps").begin_array();  // rows per Step Id; empty without the column
    for (const auto& [step, rows] : r.steps) {
        j.begin_object().member("step", step).member("rows", rows).end_object();
    }
    j.end_array();
    j.key("skipped").begin_array();
    for (const auto& s : r.skipped) {
        j.begin_object().member("source", s.source).member("line", s.line);
        j.member("column", s.column);
        j.member("reason", s.reason).member("excerpt", s.excerpt).end_object();
    }
    j.end_array();
    j.key("utilization").begin_array();
    for (const auto& e : r.utilization) {
        j.begin_object().member("engine", e.label).member("tasks", e.tasks);
        j.member("task_time_us", e.task_time.in(units::us));
        j.member("cycles", e.cycles.in(units::cycle)).member("cores", e.cores);
        j.member("clock_mhz", e.clock.in(units::MHz));
        j.member("seed_span_us", e.seed_span.in(units::us));
        opt("seed_utilization_pct", pct(e.seed_utilization));
        j.member("full_span_us", e.full_span.in(units::us));
        opt("full_utilization_pct", pct(e.full_utilization));
        j.member("note", e.note);
        j.end_object();
    }
    j.end_array();
    j.key("by_type").begin_array();
    for (const auto& x : r.by_type) {
        j.begin_object().member("type", x.op_type).member("task", x.task).member("count", x.count);
        j.member("total_us", x.total.in(units::us)).member("share_pct", x.share * 100.0);
        j.end_object();
    }
    j.end_array();
    j.key("top_ops").begin_array();
    for (const auto& x : r.top_ops) {
        j.begin_object().member("line", x.line).member("name", x.name).member("type", x.op_type);
        j.member("task", x.task).member("duration_us", x.time.in(units::us));
        j.key("block_dim");
        if (x.block_dim) {
            j.value(*x.block_dim);
        } else {
            j.null();
        }
        opt("cube_utilization_pct", x.cube_utilization_pct);
        opt("profiled_cube_utilization_pct", x.profiled_cube_utilization_pct);
        j.member("bound", x.bound);
        opt("achieved_gbps",
            x.achieved ? std::optional<double>(x.achieved->in(units::GBps)) : std::nullopt);
        opt("hbm_share_pct", pct(x.hbm_share));
        j.member("above_hbm_peak", x.above_hbm_peak);
        j.member("above_compute_peak", x.above_compute_peak);
        j.member("notes", x.notes);
        j.end_object();
    }
    j.end_array();
    const auto& h = r.host;
    j.key("host").begin_object();
    j.member("timed_tasks", h.timed_tasks).member("window_us", h.window.in(units::us));
    j.member("busy_us", h.busy.in(units::us)).member("idle_us", h.idle.in(units::us));
    opt("idle_share_pct", pct(h.idle_share));
    j.member("gaps", h.gaps).member("gaps_longer_than_next", h.gaps_longer_than_next);
    j.member("total_wait_us", h.total_wait.in(units::us)).member("wait_rows", h.wait_rows);
    j.end_object();
    j.key("findings").begin_array();
    for (const auto& f : r.findings) {
        const auto text = f.text();
        j.begin_object().member("kind", profile::name_of(f.kind)).member("title", text.title);
        j.member("rows", f.rows).member("time_us", f.time.in(units::us));
        j.member("evidence", f.evidence).member("fix", text.fix).member("source", text.source);
        j.key("examples").begin_array();
        for (const auto& x : f.examples) {
            j.begin_object().member("line", x.line).member("name", x.name);
            j.member("type", x.op_type).member("duration_us", x.time.in(units::us));
            j.member("detail", x.detail).end_object();
        }
        j.end_array().end_object();
    }
    j.end_array();
    j.key("timeline");
    if (timeline) {
        j.begin_object().member("source", timeline->source).member("events", timeline->events);
        j.member("device_tasks", timeline->device_tasks);
        j.member("skipped_events", timeline->skipped_count);
        j.key("host_api").begin_array();
        for (std::size_t k = 0; k < profile::host_api_kind_count; ++k) {
            j.begin_object().member("kind", profile::host_api_kind_names[k].name);
            j.member("calls", timeline->host_api[k].calls);
            j.member("time_us", timeline->host_api[k].time.in(units::us)).end_object();
        }
        j.end_array();
        j.key("aicore_clock");
        if (timeline->clock) {
            j.begin_object().member("mean_mhz", timeline->clock->mean.in(units::MHz));
            j.member("low_mhz", timeline->clock->low.in(units::MHz));
            j.member("high_mhz", timeline->clock->high.in(units::MHz));
            j.member("samples", timeline->clock->samples).end_object();
        } else {
            j.null();
        }
        j.end_object();
    } else {
        j.null();
    }
    j.end_object();
}

inline void write_json(std::ostream& out, const profile::profile_report& r,
                       const profile::timeline_summary* timeline = nullptr) {
    io::json_writer j(out);
    write_json(j, r, timeline);
}

/// One op table's report, with the chip it was judged for and the timeline found beside it.
struct table_report {
    profile::profile_report report;
    chip judged_for;
    std::optional<profile::timeline_summary> timeline;
    std::string label;  // "torch_npu, rank 1" ... (source_label), "-" for standard input
};

/// The report's chip note (profile::chip_mismatch) on `err`, for a chip the user gave: one the
/// profile's own data named is theirs, at the preset's clock, whatever clock the run had.
inline void note_chip(const parsed_args& a, const profile::profile_report& r, std::ostream& err) {
    if (!r.chip_note.empty() && (a.has("chip") || a.has("chip-ini")))
        err << "perfcast: note: " << r.source << ": " << r.chip_note << '\n';
}

/// The summary of the timeline at `path`, its skipped events listed on `err` (as warn_skipped
/// lists rows). A timeline that cannot be read (truncated, not JSON) is warned of and left
/// out, since the op table holds the report; with --strict it is the error.
[[nodiscard]] inline std::optional<profile::timeline_summary> read_timeline_or_warn(
    const parsed_args& a, const std::string& path, std::ostream& err) {
    try {
        const profile::timeline t = profile::read_timeline_file(path);
        warn_skipped_items(err, path, t.skipped, t.skipped_count, "event", "events", "",
                           [&path](const profile::skipped_event& e) {
                               return path + ": event " + std::to_string(e.index) + ": " + e.reason;
                           });
        return profile::summarize(t);
    } catch (const perfcast::error& e) {
        if (a.has("strict")) throw;
        err << "perfcast: warning: " << e.what()
            << "; the report goes on without the timeline (no host API times, no measured "
               "clock; --strict makes this an error)\n";
        return std::nullopt;
    }
}

/// The report of one op table (a CSV, its slices, or an SQLite export) found by
/// sources_from_args; skipped rows listed on `err`, a table of damaged rows only an error.
[[nodiscard]] inline table_report report_of(const parsed_args& a, const profile::profile_source& s,
                                            const profile::report_options& ropt,
                                            std::ostream& err) {
    std::optional<chip> c;
    table_report t{.report = {}, .judged_for = {}, .timeline = {}, .label = source_label(s)};
    if (s.format == profile::source_format::sqlite) {
        // A database may name its chip: read it first, then choose.
        if (a.has("chip") || a.has("chip-ini")) (void)chip_from_args(a);  // a bad one fails now
        profile::msprof_db_table db = read_database(s, profile_options_from_args(a), err);
        // A database answers (or says why not) by itself: its rows are never asked.
        c = chip_named_by_profile(a, &s, &db, s.name(), err,
                                  [] { return std::span<const profile::kernel_row>{}; });
        profile::report_builder b(*c, ropt);
        for (const auto& row : db.table.rows) b.add(row);
        t.report = b.finish(s.name(), "msprof SQLite export");
        t.report.skipped = std::move(db.table.skipped);
        t.report.skipped_count = db.table.skipped_count;
    } else {
        // No chip given: msprof's device info file says which, else the rows do (their
        // cube_utilization(%) column), so they are read into memory first; with a chip the
        // report streams them.
        std::optional<profile::kernel_table> rows;
        if (a.has("chip") || a.has("chip-ini")) {
            c = chip_from_args(a);
        } else {
            c = chip_named_by_profile(a, &s, nullptr, s.name(), err, [&] {
                rows = profile::read_profile_source(s, profile_options_from_args(a));
                if (rows->rows.empty()) {  // nothing to tell the chip by: say why, as below
                    warn_skipped(err, s.name(), rows->skipped, rows->skipped_count);
                    require_usable_rows(s.name(), rows->rows.size(), rows->skipped_count);
                }
                return std::span<const profile::kernel_row>(rows->rows);
            });
        }
        if (s.timeline) {
            t.timeline = read_timeline_or_warn(a, s.timeline->generic_string(), err);
            if (t.timeline) c = at_measured_clock(*c, *t.timeline, err);
        }
        if (rows) {
            profile::report_builder b(*c, ropt);
            for (const auto& row : rows->rows) b.add(row);
            t.report = b.finish(s.name(), std::string(profile::name_of(rows->header.format)));
            t.report.skipped = std::move(rows->skipped);
            t.report.skipped_count = rows->skipped_count;
        } else {
            t.report = profile::build_report(s, *c, ropt, profile_options_from_args(a));
        }
    }
    warn_skipped(err, t.report.source, t.report.skipped, t.report.skipped_count);
    require_usable_rows(t.report.source, t.report.rows, t.report.skipped_count);
    note_chip(a, t.report, err);
    t.judged_for = *c;
    return t;
}

/// Full-span utilization of `which` (the AI_CORE + MIX group for the cube), if measured.
[[nodiscard]] inline std::optional<double> full_utilization(const profile::profile_report& r,
                                                            engine which) {
    // utilization: cube AI_CORE tasks, cube AI_CORE + MIX tasks, vector (report_builder's order)
    for (auto it = r.utilization.rbegin(); it != r.utilization.rend(); ++it) {
        if (it->which == which) return it->full_utilization;
    }
    return std::nullopt;
}

/// --each: one line per op table, side by side (a straggling rank or device stands out).
inline void write_side_by_side(std::ostream& out, const std::vector<table_report>& tables,
                               std::string_view format) {
    const std::vector<std::string> header = {
        "table", "what", "rows", "device us", "cube util %", "vector util %", "host idle %"};
    const auto cells = [](const table_report& t) {
        const profile::profile_report& r = t.report;
        return std::vector<std::string>{r.source,
                                        t.label,
                                        std::to_string(r.rows),
                                        format_fixed(r.total_time.in(units::us), 3),
                                        opt_fixed(pct(full_utilization(r, engine::cube)), 3),
                                        opt_fixed(pct(full_utilization(r, engine::vector)), 3),
                                        opt_fixed(pct(r.host.idle_share), 3)};
    };
    if (format == "csv") {
        io::csv_writer w(out);
        w.row(header);
        for (const auto& t : tables) w.row(cells(t));
        return;
    }
    io::text_table side(header);
    for (const auto& t : tables) side.add_row(cells(t));
    for (std::size_t col = 2; col < header.size(); ++col) side.set_align(col, io::align::right);
    side.write(out);
}

}  // namespace report_detail

std::string report_usage() {
    return "Usage: perfcast report PROFILE [--chip C | --chip-ini FILE [--chip BASE]]\n"
           "                       [--top N] [--each] [--format table|csv|json]\n\n"
           "Report on a measured profile (msprof op_summary_*.csv, torch_npu kernel_details.csv,\n"
           "their SQLite exports msprof_*.db / ascend_pytorch_profiler*.db, or the minimal\n"
           "format of docs/profiles.md; PROFILE may also be the profiler's output folder, or\n"
           "- for standard input): utilization by the seed's formula,\n"
           "time by op type, top ops with cube utilization recomputed for the chip, pipe\n"
           "bounds, host-bound signal, and findings with the seed's fixes. A database that\n"
           "names its chip model (NPU_INFO) needs no --chip.\n\n" +
           options_text(report_detail::options);
}

/// --each: a report for every op table PROFILE holds (after --rank and --device), then one line
/// each side by side; csv: the side-by-side lines alone; json: {"tables": [...], "side_by_side":
/// [...]}.
inline int run_report_each(const parsed_args& a, const std::string& path,
                           const profile::report_options& ropt, const std::string& format,
                           std::ostream& out, std::ostream& err) {
    std::vector<report_detail::table_report> tables;
    for (const auto& s : sources_from_args(a, path)) {
        say_reading(s, err);
        tables.push_back(report_detail::report_of(a, s, ropt, err));
    }
    if (format == "csv") {
        report_detail::write_side_by_side(out, tables, format);
    } else if (format == "json") {
        io::json_writer j(out);
        j.begin_object().key("tables").begin_array();
        for (const auto& t : tables) {
            report_detail::write_json(j, t.report, t.timeline ? &*t.timeline : nullptr);
        }
        j.end_array().key("side_by_side").begin_array();
        for (const auto& t : tables) {
            const auto& r = t.report;
            j.begin_object().member("source", r.source).member("what", t.label);
            j.member("rows", r.rows).member("device_time_us", r.total_time.in(units::us));
            const auto opt = [&j](std::string_view k, const std::optional<double>& v) {
                report_detail::number_or_null(j, k, v);
            };
            opt("cube_utilization_pct",
                report_detail::pct(report_detail::full_utilization(r, engine::cube)));
            opt("vector_utilization_pct",
                report_detail::pct(report_detail::full_utilization(r, engine::vector)));
            opt("host_idle_pct", report_detail::pct(r.host.idle_share));
            j.end_object();
        }
        j.end_array().end_object();
    } else {
        for (const auto& t : tables) {
            report_detail::write_table(out, t.report, t.judged_for);
            if (t.timeline) report_detail::write_timeline_table(out, *t.timeline);
            out << '\n';
        }
        out << "Side by side: " << tables.size() << " op tables (utilization over the full span; "
            << "host idle: the device's idle share of its window)\n";
        report_detail::write_side_by_side(out, tables, format);
    }
    return exit_ok;
}

int run_report(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    const parsed_args a = parse_args(args, report_detail::options);
    if (a.has("help")) {
        out << report_usage();
        return exit_ok;
    }
    if (a.positional.size() != 1) {
        throw usage_error(a.positional.empty()
                              ? "needs a PROFILE (a file, a folder or -)"
                              : "expects one PROFILE (a file, a folder or -), got " +
                                    std::to_string(a.positional.size()));
    }
    const std::string format = choice(a, "format", {"table", "csv", "json"}, "table");
    profile::report_options ropt;
    ropt.top_ops = row_count(a, "top", ropt.top_ops);
    const std::optional<io::output_file> svg = output_from_args(a, "svg");
    const std::string& path = a.positional.front();
    if (svg) refuse_output_over_input(*svg, path);
    if (a.has("each")) {
        if (path == "-") throw usage_error("option '--each': needs a folder, not -");
        if (svg)
            throw usage_error("option '--each': not with --svg (one chart per table: --rank N)");
        return run_report_each(a, path, ropt, format, out, err);
    }
    report_detail::table_report one;
    if (path == "-") {
        one.judged_for = chip_from_args(a);
        one.report = profile::build_report(std::cin, "<stdin>", one.judged_for, ropt,
                                           profile_options_from_args(a));
        warn_skipped(err, one.report.source, one.report.skipped, one.report.skipped_count);
        require_usable_rows(one.report.source, one.report.rows, one.report.skipped_count);
        report_detail::note_chip(a, one.report, err);
    } else {
        one = report_detail::report_of(
            a, source_from_args(a, path, err, " (or report each with --each)"), ropt, err);
    }
    const profile::profile_report& r = one.report;
    const chip* c = &one.judged_for;
    const auto& timeline = one.timeline;
    if (svg) {
        std::vector<std::pair<std::string, double>> bars;
        for (const auto& t : r.by_type)
            bars.emplace_back(t.op_type + " (" + t.task + ")", t.total.in(units::us));
        io::write_output(*svg, [&](std::ostream& f) {
            io::write_svg_bars(f, "time by op type: " + a.positional.front(), bars, "us");
        });
    }
    if (format == "table") {
        report_detail::write_table(out, r, *c);
        if (timeline) report_detail::write_timeline_table(out, *timeline);
    } else if (format == "csv") {
        report_detail::write_csv(out, r, timeline ? &*timeline : nullptr);
    } else {
        report_detail::write_json(out, r, timeline ? &*timeline : nullptr);
    }
    return exit_ok;
}

/// The dispatch-table entry for main.cpp.

}  // namespace perfcast::cli
