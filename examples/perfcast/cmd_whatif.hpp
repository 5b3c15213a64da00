// examples/perfcast/cmd_whatif.hpp: `perfcast whatif`, the main job.
//
//   perfcast whatif [--model FILE] [--chip C] [--batch B[,B..]] [--streams 1-6]
//                   [--cube 6,8,12,24] [--vector 10,12,24,48] [--latency-ms X]
//                   [--rank qps|throughput] [--top N] [--format table|csv|json] [--svg FILE]
//
// Sweeps streams x cube limit x vector limit x batch for a model (the built-in scenario when no
// --model is given), ranks the deployments by QPS (ties by latency), marks the Pareto front of
// QPS against latency and the best deployment under the latency target. Lists accept ranges:
// "1-6", "6,8,12,24", "1-3,8".
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/io/csv.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/svg.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/whatif.hpp>

#include "cli.hpp"

namespace perfcast::cli {

namespace whatif_detail {

inline constexpr std::array<option, 11> options{{
    {"model", "FILE", "model file (docs/model-file.md); default: the built-in CTR scenario"},
    {"chip", "C", "chip preset (perfcast chips); default: ascend910b1"},
    {"batch", "LIST", "batch sizes, e.g. 16,64 or 16-20; default 16,32,64,128,256"},
    {"streams", "LIST", "streams (instances) per card; default 1-6"},
    {"cube", "LIST", "cube-core limits per instance; default 6,8,12,24"},
    {"vector", "LIST", "vector-core limits per instance; default 10,12,24,48"},
    {"latency-ms", "X", "latency target in ms: mark the best deployment within it"},
    {"rank", "BY", "qps (default) or throughput (samples/s)"},
    {"top", "N", "table rows to print (default 20; 0: all)"},
    {"format", "FORMAT", "table (default), csv or json (csv and json list every candidate)"},
    {"svg", "FILE", "write QPS against latency, with the Pareto front, as SVG"},
}};

/// Parses "1-6", "6,8,12,24", "1-3,8" into values >= 1 (in the order given, duplicates removed).
[[nodiscard]] inline std::vector<std::int64_t> parse_list(std::string_view flag,
                                                          std::string_view text) {
    auto bad = [&](std::string_view part, std::string_view why) -> usage_error {
        return usage_error("option '--" + std::string(flag) + "': '" + std::string(part) + "' " +
                           std::string(why) + " (lists look like 1-6, 6,8,12,24 or 1-3,8)");
    };
    auto number = [&](std::string_view part, std::string_view whole) {
        std::int64_t v = 0;
        auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc{} || p != part.data() + part.size()) {
            throw bad(whole, "is not a number or a range");
        }
        if (v < 1) throw bad(whole, "is below 1; every value must be >= 1");
        return v;
    };
    std::vector<std::int64_t> out;
    auto add = [&](std::int64_t v) {
        for (std::int64_t x : out) {
            if (x == v) return;
        }
        out.push_back(v);
    };
    if (text.empty()) throw bad(text, "is empty");
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = text.find(',', pos);
        const std::string_view part =
            text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        const std::size_t dash = part.find('-', 1);
        if (dash == std::string_view::npos) {
            add(number(part, part));
        } else {
            const std::int64_t lo = number(part.substr(0, dash), part);
            const std::int64_t hi = number(part.substr(dash + 1), part);
            if (hi < lo) throw bad(part, "is a range that runs backwards");
            if (hi - lo > 100000) throw bad(part, "is a range of more than 100000 values");
            for (std::int64_t v = lo; v <= hi; ++v) add(v);
        }
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

[[nodiscard]] inline std::vector<int> as_ints(std::string_view flag,
                                              const std::vector<std::int64_t>& v) {
    std::vector<int> out;
    for (std::int64_t x : v) {
        if (x > 1000000) {
            throw usage_error("option '--" + std::string(flag) + "': " + std::to_string(x) +
                              " is too large");
        }
        out.push_back(static_cast<int>(x));
    }
    return out;
}

/// Core limits above the chip's: an error naming the flag, the value and the chip.
inline void check_limits(std::string_view flag, const std::vector<int>& v, int cores,
                         std::string_view engine_name, std::string_view chip_name) {
    for (int k : v) {
        if (k > cores) {
            ::perfcast::detail::precondition_failed(
                "whatif", "--" + std::string(flag), static_cast<double>(k),
                "at most " + std::to_string(cores) + " (the " + std::string(engine_name) +
                    " cores of " + std::string(chip_name) + ")");
        }
    }
}

[[nodiscard]] inline std::string split_text(const candidate& c) {
    return std::to_string(c.split.cube.value) + "/" + std::to_string(c.split.vector.value);
}

[[nodiscard]] inline std::string describe(const candidate& c) {
    return std::to_string(c.streams) + " stream(s) x " + std::to_string(c.split.cube.value) +
           " cube / " + std::to_string(c.split.vector.value) + " vector cores, batch " +
           std::to_string(c.batch) + ": " + io::format_fixed(c.qps, 0) + " QPS, " +
           io::format_fixed(c.throughput, 0) + " samples/s at " +
           io::format_fixed(c.latency.in(units::ms), 3) + " ms";
}

inline void write_candidate_json(io::json_writer& j, const candidate& c) {
    j.begin_object()
        .member("streams", c.streams)
        .member("cube", c.split.cube.value)
        .member("vector", c.split.vector.value)
        .member("batch", static_cast<double>(c.batch))
        .member("latency_ms", c.latency.in(units::ms))
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
        .end_object();
}

inline void write_svg(const std::string& path, const whatif_result& r,
                      const std::optional<selection>& pick, std::string_view title) {
    io::svg_plot p(std::string(title), "latency under load (ms)", "QPS per card");
    io::svg_series all{.name = "candidates", .points = {}, .color = "#adb5bd"};
    for (const candidate& c : r.ranked) all.points.push_back({c.latency.in(units::ms), c.qps});
    io::svg_series front{.name = "Pareto front",
                         .points = {},
                         .color = "#d9480f",
                         .style = io::svg_style::line_markers,
                         .radius = 4};
    for (std::size_t i : r.pareto) {
        front.points.push_back({r.ranked[i].latency.in(units::ms), r.ranked[i].qps});
    }
    p.add(std::move(all)).add(std::move(front));
    if (pick) {
        p.add_vline(pick->target().in(units::ms),
                    "target " + io::format_shortest(pick->target().in(units::ms)) + " ms");
        const candidate& c = pick->closest();
        p.add_label({c.latency.in(units::ms), c.qps},
                    (pick->has_value() ? "best: " : "closest: ") + std::to_string(c.streams) +
                        " x " + split_text(c) + ", batch " + std::to_string(c.batch));
    }
    std::ofstream out(path, std::ios::binary);
    if (!out) {
        ::perfcast::detail::precondition_failed("whatif", "--svg", path, "a writable file path");
    }
    p.write(out);
}

}  // namespace whatif_detail

[[nodiscard]] inline std::string whatif_usage() {
    return "Usage: perfcast whatif [--model FILE] [--chip C] [--batch LIST] [--streams LIST]\n"
           "                       [--cube LIST] [--vector LIST] [--latency-ms X] [--rank BY]\n"
           "                       [--top N] [--format table|csv|json] [--svg FILE]\n\n"
           "Rank deployments (streams per card x cube / vector cores per instance x batch) by\n"
           "QPS = 1000 / mean latency (ms) x streams, ties by latency; mark the Pareto front of\n"
           "QPS against latency and the best deployment within --latency-ms. Without --model it\n"
           "runs the built-in CTR ranking scenario (docs/scenario.md) on ascend910b1.\n\n" +
           options_text(whatif_detail::options);
}

inline int run_whatif(std::span<const std::string_view> args, std::ostream& out,
                      std::ostream& /*err*/) {
    using namespace whatif_detail;
    const parsed_args a = parse_args(args, options);
    if (a.has("help")) {
        out << whatif_usage();
        return exit_ok;
    }
    if (!a.positional.empty()) {
        throw usage_error("unexpected argument '" + a.positional.front() +
                          "' (a model file goes after --model)");
    }
    const std::string format = choice(a, "format", {"table", "csv", "json"}, "table");
    const std::string rank = choice(a, "rank", {"qps", "throughput"}, "qps");

    // The model and the chip.
    model m = a.has("model") ? io::read_model_file(*a.get("model")) : scenario::ctr_ranking_model();
    const std::string chip_name =
        a.value_or("chip", std::string(scenario::default_chip.name.view()));
    const chip c = chips::get_chip(chip_name);

    // The grid.
    auto list_or = [&](std::string_view flag, std::string_view fallback) {
        return parse_list(flag, a.value_or(flag, fallback));
    };
    whatif_grid g;
    g.streams = as_ints("streams", list_or("streams", "1-6"));
    g.cube = as_ints("cube", list_or("cube", "6,8,12,24"));
    g.vector = as_ints("vector", list_or("vector", "10,12,24,48"));
    g.batches = list_or("batch", "16,32,64,128,256");
    check_limits("cube", g.cube, c.cube.cores, "cube", c.name.view());
    check_limits("vector", g.vector, c.vector.cores, "vector", c.name.view());

    std::optional<duration> target;
    if (auto t = a.get("latency-ms")) {
        double v = 0;
        auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
        if (t->empty() || ec != std::errc{} || p != t->data() + t->size() || !(v > 0) ||
            v > 1e9) {
            throw usage_error("option '--latency-ms': '" + *t +
                              "' is not a latency in ms > 0 (e.g. 1.5)");
        }
        target = duration{v, units::ms};
    }
    std::size_t top = 20;
    if (auto t = a.get("top")) {
        auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), top);
        if (t->empty() || ec != std::errc{} || p != t->data() + t->size()) {
            throw usage_error("option '--top': '" + *t + "' is not a row count (0: all rows)");
        }
    }

    const whatif_result r =
        sweep(c, m, g, {}, rank == "throughput" ? rank_by::throughput : rank_by::qps);
    std::optional<selection> pick;
    if (target) pick = r.best_under(*target);
    std::vector<bool> on_front(r.ranked.size(), false);
    for (std::size_t i : r.pareto) on_front[i] = true;
    auto is_pick = [&](const candidate& x) {
        return pick && pick->has_value() && x == pick->closest();
    };

    if (format == "table") {
        out << "model " << m.name << " (" << m.nodes.size() << " nodes) on " << c.name.view()
            << ": " << r.ranked.size() << " deployments, ranked by "
            << (rank == "qps" ? "QPS" : "samples/s") << "\n";
        if (pick) {
            if (pick->has_value()) {
                out << "best within " << io::format_shortest(target->in(units::ms))
                    << " ms: " << describe(pick->closest()) << "\n";
            } else {
                out << pick->why() << "\n";
            }
        }
        out << "\n";
        io::text_table t({"#", "streams", "cube/vec", "batch", "latency ms", "QPS", "samples/s",
                          "cube %", "vec %", "L2 miss %", "bound", "shared", "front", "note"});
        const std::size_t rows = top == 0 || top > r.ranked.size() ? r.ranked.size() : top;
        bool pick_shown = false;
        auto add = [&](std::size_t i) {
            const candidate& x = r.ranked[i];
            std::string note;
            if (is_pick(x)) {
                note = "<- best within " + io::format_shortest(target->in(units::ms)) + " ms";
                pick_shown = true;
            }
            t.add_row({std::to_string(i + 1), std::to_string(x.streams), split_text(x),
                       std::to_string(x.batch), io::format_fixed(x.latency.in(units::ms), 3),
                       io::format_fixed(x.qps, 0), io::format_fixed(x.throughput, 0),
                       io::format_fixed(100 * x.cube_utilization, 1),
                       io::format_fixed(100 * x.vector_utilization, 1),
                       io::format_fixed(100 * x.l2_miss, 1), std::string(name_of(x.bound)),
                       x.cores_shared ? "yes" : "", on_front[i] ? "*" : "", note});
        };
        for (std::size_t i = 0; i < rows; ++i) add(i);
        if (pick && pick->has_value() && !pick_shown) {
            for (std::size_t i = rows; i < r.ranked.size(); ++i) {
                if (is_pick(r.ranked[i])) {
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
        out << "latency: one inference with every stream busy; QPS = 1000 / latency ms x streams;\n"
               "samples/s = QPS x batch; shared: the splits add up to more cores than the chip\n"
               "has, so cores are time-shared; front: on the Pareto front of QPS against latency\n"
               "(" << r.pareto.size() << " deployments).\n";
    } else if (format == "csv") {
        io::csv_writer w(out);
        w.row({"rank", "streams", "cube", "vector", "batch", "latency_ms", "qps", "samples_per_s",
               "cube_utilization", "vector_utilization", "hbm_utilization", "l2_miss",
               "bubbles_ms", "transfer_ms", "bound", "cores_shared", "pareto", "best"});
        for (std::size_t i = 0; i < r.ranked.size(); ++i) {
            const candidate& x = r.ranked[i];
            using io::format_shortest;
            w.row({std::to_string(i + 1), std::to_string(x.streams),
                   std::to_string(x.split.cube.value), std::to_string(x.split.vector.value),
                   std::to_string(x.batch), format_shortest(x.latency.in(units::ms)),
                   format_shortest(x.qps), format_shortest(x.throughput),
                   format_shortest(x.cube_utilization), format_shortest(x.vector_utilization),
                   format_shortest(x.hbm_utilization), format_shortest(x.l2_miss),
                   format_shortest(x.bubbles.in(units::ms)),
                   format_shortest(x.transfer.in(units::ms)), std::string(name_of(x.bound)),
                   x.cores_shared ? "1" : "0", on_front[i] ? "1" : "0", is_pick(x) ? "1" : "0"});
        }
    } else {
        io::json_writer j(out);
        j.begin_object().member("model", m.name).member("chip", c.name.view());
        j.key("target_ms");
        if (target) {
            j.value(target->in(units::ms));
        } else {
            j.null();
        }
        j.member("met", pick.has_value() && pick->has_value());
        j.key("best");
        if (pick && pick->has_value()) {
            write_candidate_json(j, pick->closest());
        } else {
            j.null();
        }
        j.key("closest");
        if (pick) {
            write_candidate_json(j, pick->closest());
        } else {
            j.null();
        }
        j.key("pareto").begin_array();
        for (std::size_t i : r.pareto) j.value(static_cast<double>(i + 1));
        j.end_array();
        j.key("candidates").begin_array();
        for (const candidate& x : r.ranked) write_candidate_json(j, x);
        j.end_array();
        j.end_object();
        out << '\n';
    }
    if (auto path = a.get("svg")) {
        write_svg(*path, r, pick, "perfcast whatif: " + m.name + " on " + std::string(c.name.view()));
    }
    return exit_ok;
}

/// The dispatch-table entry for main.cpp.
inline constexpr command whatif_command{
    "whatif", "rank deployments (streams x core split x batch) by QPS under a latency target",
    run_whatif, whatif_usage};

}  // namespace perfcast::cli
