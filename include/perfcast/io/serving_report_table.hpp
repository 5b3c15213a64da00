// perfcast/io/serving_report_table.hpp: a serving sweep's result as a table and as an SVG plot of
// TP99 against QPS: what `perfcast whatif --qps / --p99-ms` prints (JSON and CSV, and the
// serving_report the writers take: io/serving_report.hpp).
//
//   perfcast::io::write_serving_table(std::cout, x, r);  // x.top rows (0: all)
//   std::ofstream f("serving.svg");
//   perfcast::io::write_serving_svg(f, x, sweeper, r, "perfcast whatif");
//
// The SVG simulates each plotted configuration at 10 more loads (serving_sweeper::curve), so it
// costs more than the table.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../serving_sweep.hpp"
#include "../units.hpp"
#include "memory_report.hpp"
#include "serving_report.hpp"
#include "svg.hpp"
#include "table.hpp"

namespace perfcast::io {

/// A card load, as a share of the capacity, past which the table notes that the capacity is one
/// simulation's. An assumption, set from one spread: tests/data/onnx/mlp_1000.onnx, 6 x 6/10
/// cores, max gear 32, TP99 <= 10 ms, 20000 requests, seeds 1-8 gave 4703-5124 QPS (+-4 %).
inline constexpr double near_capacity = 0.95;

/// The note of serving_sweep_result::leaders_in_doubt, if they are.
inline void write_doubt_note(std::ostream& out, const serving_sweep_result& r) {
    if (!r.leaders_in_doubt()) return;
    out << "note: the analytic model puts a configuration outside its top " << r.ranked.size()
        << " at " << throughput_text(r.unsimulated_analytic->in(units::qps)) << " QPS per card, "
        << (r.met() ? "above the simulated best" : "where no simulated leader met the target")
        << ": its estimates run high here, so a configuration it did not rank among the leaders "
           "may do better (--simulate-top 0 simulates all "
        << r.configurations << ")\n";
}

/// The table: the first x.top leaders, a row per load, then what the columns mean.
inline void write_serving_table(std::ostream& out, const serving_report& x,
                                const serving_sweep_result& r) {
    using namespace serving_report_detail;
    const std::size_t top = x.top;
    const serving_sweep_options& o = x.options;
    const bool capacity = o.target.has_value();
    const std::size_t simulated = simulated_count(r);
    out << "model " << x.model_name << " (" << x.model_nodes << " nodes) on "
        << card_text(x.chip_name, x.chips) << ", batch sizes: " << x.sizes_text << "\n"
        << r.configurations << " configurations ranked by the analytic M/G/c model; ";
    if (simulated < r.ranked.size()) out << "of the top " << r.ranked.size() << ", ";
    out << (simulated < r.ranked.size() ? std::to_string(simulated)
                                        : "the top " + std::to_string(r.ranked.size()))
        << " simulated (" << o.requests << " requests each, the first " << o.warmup
        << " warm-up, seed " << o.seed << ")";
    if (simulated < r.ranked.size()) {
        out << ";\n"
            << r.ranked.size() - simulated
            << " not simulated: their TP99 misses the target even with no queueing";
    }
    out << "\n";
    if (x.runtime) out << "runtime path: " << runtime_summary(*x.runtime) << "\n";
    if (!r.memory.empty()) {
        out << memory_need_line(r.memory, r.rule) << "\n"
            << memory_fit_line(r.largest, r.capacity, r.unfit, r.unfit + r.configurations,
                               "configurations", "left out", x.chips)
            << "\n";
    }
    if (capacity) {
        if (r.met()) {
            const serving_row& b = r.ranked.front();
            out << "best under TP99 <= " << format_shortest(o.target->in(units::ms))
                << " ms: " << describe(b.config) << ": "
                << throughput_text(b.capacity->in(units::qps)) << " QPS per card (TP99 "
                << ms3(b.points.front().p99) << " ms there)\n";
            if (b.limit == capacity_limit::saturation) {
                out << "capped at saturation: capacity = saturation throughput "
                    << throughput_text(b.saturation->throughput.in(units::qps)) << " x (1 - "
                    << format_shortest(saturation_margin)
                    << "); the target is looser than saturation allows (no steady state "
                       "above)\n";
            }
            write_doubt_note(out, r);
            if (const auto c = cards_of(x, b)) {
                out << "traffic " << rate_text(x.traffic->in(units::qps)) << " QPS: " << c->cards
                    << " card(s) = ceil(traffic / (capacity x (1 - " << format_shortest(x.headroom)
                    << "))), " << throughput_text(c->per_card.in(units::qps)) << " QPS per card, "
                    << pct(c->load) << " % of its capacity\n";
                if (c->load > near_capacity) {
                    out << "note: over " << pct(near_capacity)
                        << " % of a simulated capacity, which moves with the simulation's seed "
                           "and length (--seed, --requests): "
                        << (x.headroom > 0 ? "a larger --headroom" : "--headroom")
                        << " keeps a margin\n";
                }
            }
        } else if (r.none) {
            out << r.none->why << "\n";
            write_doubt_note(out, r);
        }
    } else {
        std::size_t points = 0;
        std::size_t unsteady = 0;
        for (const serving_row& row : r.ranked) {
            for (const serving_point& p : row.points) {
                ++points;
                if (p.state != load_state::stable) ++unsteady;
            }
        }
        if (unsteady > 0) {
            out << unsteady << " of " << points
                << " simulated loads saturated or with a growing queue: no percentiles there "
                   "(they would measure the run's length)\n";
        }
    }
    out << "\n";
    std::vector<std::string> header{"#", "streams", "cube/vec", "max gear", "window ms"};
    header.emplace_back(capacity ? "capacity QPS" : "QPS");
    for (const char* h :
         {"mean ms", "P50 ms", "P99 ms", "P99.9 ms", "util %", "cores %", "padding %", "mean bs"}) {
        header.emplace_back(h);
    }
    if (capacity) header.emplace_back("limit");
    if (capacity && x.traffic) header.emplace_back("cards");
    header.emplace_back("sat. QPS");
    if (capacity) {
        header.emplace_back("idle P99 ms");
        header.emplace_back("an. QPS");
    }
    header.emplace_back("an. #");
    text_table t(header);
    // Numbers right-aligned even in columns that hold "none" or "-" for a row that meets nothing.
    for (std::size_t i = 0; i < header.size(); ++i) {
        t.set_align(i, i == 2 ? align::left : align::right);
    }
    const std::size_t rows = top == 0 || top > r.ranked.size() ? r.ranked.size() : top;
    for (std::size_t i = 0; i < rows; ++i) {
        const serving_row& row = r.ranked[i];
        const serving_config& k = row.config;
        auto cells = [&](const serving_point* p, bool first) {
            std::vector<std::string> c;
            if (first) {
                c = {std::to_string(i + 1), std::to_string(k.streams), split_text(k),
                     std::to_string(k.max_gear), format_shortest(k.window.in(units::ms))};
            } else {
                c.assign(5, "");
            }
            if (p != nullptr && p->state != load_state::stable) {
                // No percentiles past saturation: they would measure the run's length.
                c.insert(c.end(), {throughput_text(p->qps.in(units::qps)), "-", "-",
                                   std::string(name_of(p->state)), "-", pct(p->utilization),
                                   pct(p->core_utilization), pct(p->padding_share),
                                   format_fixed(p->mean_batch, 1)});
            } else if (p != nullptr) {
                c.insert(c.end(),
                         {throughput_text(p->qps.in(units::qps)), ms3(p->mean), ms3(p->p50),
                          ms3(p->p99), ms3(p->p999), pct(p->utilization), pct(p->core_utilization),
                          pct(p->padding_share), format_fixed(p->mean_batch, 1)});
            } else {
                c.emplace_back("none");
                c.insert(c.end(), 8, "-");
            }
            if (capacity) {
                c.push_back(!first || !row.capacity ? "" : std::string(name_of(row.limit)));
            }
            if (capacity && x.traffic) {
                const auto cards = cards_of(x, row);
                c.push_back(cards ? std::to_string(cards->cards) : "-");
            }
            c.push_back(first && row.saturation
                            ? throughput_text(row.saturation->throughput.in(units::qps))
                            : (first ? "-" : ""));
            if (capacity) {
                c.push_back(first ? ms3(row.low_load_p99) : "");
                c.push_back(!first ? ""
                            : row.analytic_capacity
                                ? throughput_text(row.analytic_capacity->in(units::qps))
                                : "none");
            }
            c.push_back(first ? std::to_string(row.analytic_rank) : "");
            return c;
        };
        if (row.points.empty()) t.add_row(cells(nullptr, true));
        for (std::size_t p = 0; p < row.points.size(); ++p) {
            t.add_row(cells(&row.points[p], p == 0));
        }
    }
    t.write(out);
    if (rows < r.ranked.size()) {
        out << "(" << r.ranked.size() - rows << " more simulated; --top 0 lists all)\n";
    }
    out << (capacity ? "capacity QPS: the highest Poisson load per card whose simulated TP99 "
                       "meets the target\n(bisection to "
                     : "QPS: the offered Poisson load per card; ")
        << (capacity ? format_shortest(100 * o.rel_tolerance) + " %), at most sat. QPS x (1 - " +
                           format_shortest(saturation_margin) +
                           ") (limit: latency, or saturation\nwhen the target allows more); "
                           "latencies at it: "
                     : "")
        << "arrival to the end of the last chunk;\nsat. QPS: the saturation throughput (every "
           "request queued at once): no steady state at or\nabove it (saturated) nor where the "
           "run's queue grew (queue-growing): no percentiles there;\nutil: streams busy; "
           "cores: the card's cube "
           "cores held; padding: padded / gear samples\n(0 when every bs 1..max is a gear); "
           "mean bs: samples per batch after merging;\n"
        << (capacity ? "idle P99: TP99 with no queueing (exact); an. QPS: the analytic capacity;\n"
                     : "")
        << "an. #: place in the analytic ranking that chose the simulated leaders ("
        << (capacity ? "capacity" : "TP99 at the highest load") << ").\n";
}

/// The replay of a recorded trace on the first leaders (serving_report::replays): at the
/// trace's own pace, and with a target the highest rate at which the trace meets it, beside
/// the leader's capacity under Poisson arrivals of the same sizes.
inline void write_replay_table(std::ostream& out, const serving_report& x,
                               const serving_sweep_result& r) {
    using namespace serving_report_detail;
    if (x.replays.empty()) return;
    const bool capacity = x.options.target.has_value();
    const trace_replay& first = x.replays.front();
    out << "\nreplayed: " << x.replay_source << ": " << first.requests << " requests at "
        << throughput_text(first.recorded_rate.in(units::qps))
        << " QPS on average (the first tenth warm-up), on the first " << x.replays.size()
        << " leader(s)\n";
    std::vector<std::string> header{"#",       "streams", "cube/vec", "max gear", "window ms",
                                    "mean ms", "P99 ms",  "util %",   "mean bs"};
    if (capacity) {
        for (const char* h : {"capacity QPS", "limit", "Poisson QPS"}) header.emplace_back(h);
        if (x.traffic) header.emplace_back("cards");
    }
    text_table t(header);
    for (std::size_t i = 0; i < header.size(); ++i) {
        t.set_align(i, i == 2 ? align::left : align::right);
    }
    for (std::size_t i = 0; i < x.replays.size(); ++i) {
        const trace_replay& p = x.replays[i];
        const serving_config& k = p.config;
        const bool steady = p.recorded.state == load_state::stable;
        std::vector<std::string> c{
            std::to_string(i + 1),
            std::to_string(k.streams),
            split_text(k),
            std::to_string(k.max_gear),
            format_shortest(k.window.in(units::ms)),
            steady ? ms3(p.recorded.mean) : "-",
            steady ? ms3(p.recorded.p99) : std::string(name_of(p.recorded.state)),
            pct(p.recorded.utilization),
            format_fixed(p.recorded.mean_batch, 1)};
        if (capacity) {
            const serving_row& row = r.ranked[i];
            c.push_back(p.capacity ? throughput_text(p.capacity->qps.in(units::qps)) : "none");
            c.push_back(p.capacity ? std::string(name_of(p.capacity->limit)) : "-");
            c.push_back(row.capacity ? throughput_text(row.capacity->in(units::qps)) : "none");
            if (x.traffic) {
                const auto cards = cards_of(x, p);
                c.push_back(cards ? std::to_string(cards->cards) : "-");
            }
        }
        t.add_row(std::move(c));
    }
    t.write(out);
    out << "mean, P99: at the trace's own pace, as it measured (\"saturated\": its mean rate is "
           "past the\nsaturation throughput)";
    if (capacity) {
        out << ";\ncapacity QPS: the highest mean rate at which the trace, its gaps scaled "
               "alike, meets the\ntarget (its bursts kept); Poisson QPS: the leader's capacity "
               "above, the same batch sizes\narriving at random";
    }
    if (capacity && x.traffic) {
        out << "; cards: for the traffic at the capacity QPS";
    }
    out << "\n";
    for (const trace_replay& p : x.replays) {
        if (capacity && !p.capacity) out << describe(p.config) << ": " << p.none_why << "\n";
    }
    if (!capacity || !x.traffic) return;
    // The cards a traffic of such bursts needs: the replayed leader that needs the fewest.
    const std::string traffic = rate_text(x.traffic->in(units::qps));
    const auto best = fewest_replayed_cards(x);
    if (!best) {
        out << "traffic " << traffic
            << " QPS with the trace's bursts: no replayed leader meets the target\n";
        return;
    }
    const trace_replay& p = x.replays[*best];
    const card_count c = *cards_of(x, p);
    out << "traffic " << traffic << " QPS with the trace's bursts: " << c.cards << " card(s) of #"
        << *best + 1 << " = ceil(traffic / (" << throughput_text(p.capacity->qps.in(units::qps))
        << " x (1 - " << format_shortest(x.headroom) << ")))";
    if (const auto poisson = cards_of(x, r.ranked.front())) {
        out << ",\nagainst " << poisson->cards << " for Poisson arrivals (the best above)";
    }
    out << "\n";
}

/// TP99 against QPS for the first few simulated configurations (`s.curve` at 10 loads), with
/// the target and the --qps loads.
/// With a replayed trace (x.replays, `trace` the trace replayed), the first replayed leader's
/// TP99 against the trace's mean rate too (serving_sweeper::replay_curve: its bursts kept).
inline void write_serving_svg(std::ostream& out, const serving_report& x, const serving_sweeper& s,
                              const serving_sweep_result& r, std::string_view title,
                              std::span<const arrival> trace = {}) {
    using serving_report_detail::rate_text;
    using serving_report_detail::split_text;
    constexpr std::size_t most = 5;
    constexpr std::array<std::string_view, most> colors{"#1c7ed6", "#d9480f", "#2b8a3e", "#862e9c",
                                                        "#e67700"};
    const serving_sweep_options& o = x.options;
    std::vector<const serving_row*> rows;
    double hi = 0;
    double floor_p99 = 0;
    for (const serving_row& row : r.ranked) {
        if (rows.size() == most || row.points.empty()) continue;
        rows.push_back(&row);
        if (row.capacity) hi = std::max(hi, 1.25 * row.capacity->in(units::qps));
        floor_p99 = std::max(floor_p99, row.low_load_p99.in(units::ms));
    }
    for (request_rate q : o.loads) hi = std::max(hi, q.in(units::qps));
    // Loads far past what the plotted configurations can serve would leave only saturated
    // points (none drawn): the axis ends a little past the largest saturation throughput.
    double saturated = 0;
    for (const serving_row* row : rows)
        if (row->saturation)
            saturated = std::max(saturated, row->saturation->throughput.in(units::qps));
    if (saturated > 0 && hi > 1.1 * saturated) hi = 1.1 * saturated;
    // Past saturation the TP99 grows with the run's length: such points are left off, and so
    // are points above this, so that the curves stay readable.
    const double y_cap = o.target ? 3 * o.target->in(units::ms) : 5 * floor_p99;
    svg_plot p(std::string(title) + " (loads with no steady state and TP99 above " +
                   format_fixed(y_cap, 3) + " ms left off)",
               "QPS per card", "TP99 (ms)");
    std::vector<request_rate> rates;
    for (int i = 1; i <= 10; ++i) rates.push_back(request_rate{hi * i / 10.0, units::qps});
    // A curve's points drawn: its steady loads at or under the cap.
    const auto drawn = [y_cap](const std::vector<serving_point>& curve) {
        std::vector<svg_point> pts;
        for (const serving_point& pt : curve) {
            if (pt.state == load_state::stable && pt.p99.in(units::ms) <= y_cap) {
                pts.push_back({pt.qps.in(units::qps), pt.p99.in(units::ms)});
            }
        }
        return pts;
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const serving_row& row = *rows[i];
        p.add({.name = "#" + std::to_string(i + 1) + " " + std::to_string(row.config.streams) +
                       " x " + split_text(row.config) + ", gear " +
                       std::to_string(row.config.max_gear) + ", window " +
                       format_shortest(row.config.window.in(units::ms)) + " ms",
               .points =
                   drawn(s.curve(row.config, rates, o.requests, o.warmup, o.seed, o.service_cv)),
               .color = std::string(colors[i]),
               .style = svg_style::line_markers});
    }
    if (!x.replays.empty() && !trace.empty()) {
        const serving_config& k = x.replays.front().config;
        p.add({.name = "#1 replaying " + x.replay_source + " (its bursts kept)",
               .points = drawn(s.replay_curve(k, trace, rates, o.seed, o.service_cv)),
               .color = "#495057",  // grey: not one of the five leaders' colours
               .style = svg_style::line_markers});
    }
    if (o.target) {
        p.add({.name = "TP99 target",
               .points = {{0, o.target->in(units::ms)}, {hi, o.target->in(units::ms)}},
               .color = "#c92a2a",
               .style = svg_style::line});
    }
    for (request_rate q : o.loads) {
        if (q.in(units::qps) <= hi)
            p.add_vline(q.in(units::qps), rate_text(q.in(units::qps)) + " QPS", "#868e96");
    }
    p.write(out);
}

}  // namespace perfcast::io
