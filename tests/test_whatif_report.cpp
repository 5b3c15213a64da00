// The result writers of `perfcast whatif`, tested on the library directly: io/whatif_report.hpp
// (card sweeps: table, CSV, JSON, SVG), io/serving_report.hpp and io/serving_report_table.hpp
// (serving sweeps), and the defaults the command takes from whatif.hpp and serving_sweep.hpp.
// The command's own output is tested through its runner (test_whatif_serving.cpp, test_edges.cpp
// and the docs, tests/doc_check.py).
#include <doctest/doctest.h>

#include "support.hpp"

#include <perfcast/chips.hpp>
#include <perfcast/deployment.hpp>
#include <perfcast/deployment_gains.hpp>
#include <perfcast/distribution.hpp>
#include <perfcast/io/gains_report.hpp>
#include <perfcast/io/json_reader.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/serving_report.hpp>
#include <perfcast/io/serving_report_table.hpp>
#include <perfcast/io/whatif_report.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving_sweep.hpp>
#include <perfcast/whatif.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_whatif_report {

using namespace perfcast;
using namespace perfcast::literals;

namespace {

/// The lines of `text` (no trailing empty line).
std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::size_t fields(const std::string& csv_line) {
    return static_cast<std::size_t>(std::count(csv_line.begin(), csv_line.end(), ',')) + 1;
}

using perfcast_test::has;

double number_of(io::json_cursor& c) { return std::stod(std::string(c.number())); }

/// 2 streams x 2 cube limits x 2 vector limits x 1 batch of the built-in scenario.
whatif_result small_sweep() {
    const whatif_grid g{.streams = counts<stream_count>({1, 2}),
                        .cube = counts<core_count>({12, 24}),
                        .vector = counts<core_count>({24, 48}),
                        .batches = counts<batch_size>({16})};
    return sweep(chips::ascend910b1, scenario::ctr_ranking, g);
}

io::whatif_report report_for() {
    return io::whatif_report{.model_name = "ctr_ranking",
                             .model_nodes = scenario::ctr_ranking.size(),
                             .chip_name = "ascend910b1"};
}

/// The target that the lowest-latency candidate meets and no faster one exists for: its pick
/// ranks below the first candidate whenever the first is not also the fastest.
duration fastest_latency(const whatif_result& r) {
    duration best = r.ranked.front().latency;
    for (const candidate& c : r.ranked) best = std::min(best, c.latency);
    return best;
}

/// What a card sweep's JSON says, read back with the project's JSON reader.
struct whatif_json {
    std::string model;
    std::size_t candidates = 0;
    std::vector<double> pareto;
    std::vector<double> ranks;        // each candidate's rank
    std::vector<double> front_ranks;  // the ranks of the candidates marked pareto
    std::optional<bool> met;          // null: no target
    std::optional<double> best_rank;
    std::optional<double> target_ms;
    std::optional<double> best_qps;
    bool profile_null = false;
};

whatif_json read_whatif_json(const std::string& text) {
    io::json_cursor c(text, "whatif.json");
    whatif_json out;
    std::string key;
    std::string inner;
    std::string scratch;
    c.begin_object();
    while (c.next_member(key)) {
        if (key == "model") {
            out.model = std::string(c.string(scratch));
        } else if (key == "candidates") {
            c.begin_array();
            while (c.next_element()) {
                ++out.candidates;
                c.begin_object();
                double rank = 0;
                bool front = false;
                while (c.next_member(inner)) {
                    if (inner == "rank") {
                        rank = number_of(c);
                    } else if (inner == "pareto") {
                        front = c.boolean();
                    } else {
                        c.skip_value();
                    }
                }
                out.ranks.push_back(rank);
                if (front) out.front_ranks.push_back(rank);
            }
        } else if (key == "pareto") {
            c.begin_array();
            while (c.next_element()) out.pareto.push_back(number_of(c));
        } else if (key == "met") {
            if (c.peek() == io::json_cursor::kind::null) {
                c.null();
            } else {
                out.met = c.boolean();
            }
        } else if (key == "target_ms" && c.peek() == io::json_cursor::kind::number) {
            out.target_ms = number_of(c);
        } else if (key == "best" && c.peek() == io::json_cursor::kind::object) {
            c.begin_object();
            while (c.next_member(inner)) {
                if (inner == "qps") {
                    out.best_qps = number_of(c);
                } else if (inner == "rank") {
                    out.best_rank = number_of(c);
                } else {
                    c.skip_value();
                }
            }
        } else if (key == "profile" && c.peek() == io::json_cursor::kind::null) {
            c.null();
            out.profile_null = true;
        } else {
            c.skip_value();
        }
    }
    c.end();
    return out;
}

/// Calls `member(c, key)` for each member of each object of the root object's array `array`;
/// `member` reads or skips the member's value.
template <class Fn>
void each_member_in(const std::string& json, std::string_view array, Fn&& member) {
    io::json_cursor c(json, "report.json");
    std::string key;
    std::string inner;
    c.begin_object();
    while (c.next_member(key)) {
        if (key != array) {
            c.skip_value();
            continue;
        }
        c.begin_array();
        while (c.next_element()) {
            c.begin_object();
            while (c.next_member(inner)) member(c, inner);
        }
    }
    c.end();
}

}  // namespace

TEST_CASE("whatif_defaults and serving_defaults: the texts give scenario.hpp's grid") {
    auto ints = [](std::string_view text) { return io::parse_int_list(text, "default"); };
    auto as64 = [](const auto& a) { return std::vector<std::int64_t>(a.begin(), a.end()); };
    CHECK(ints(whatif_defaults::streams) == as64(scenario::default_streams));
    CHECK(ints(whatif_defaults::cube) == as64(scenario::default_cube));
    CHECK(ints(whatif_defaults::vector) == as64(scenario::default_vector));
    CHECK(ints(whatif_defaults::batches) == as64(scenario::default_batches));
    CHECK(ints(serving_defaults::max_gears) == std::vector<std::int64_t>{8, 16, 20, 32});
    CHECK(ints(serving_defaults::batch) == std::vector<std::int64_t>{16});
    // serving_sweep_options starts from the same values the command prints as defaults.
    const serving_sweep_options o;
    CHECK(o.simulate_top == serving_defaults::simulate_top);
    CHECK(o.requests == serving_defaults::requests);
    CHECK(o.warmup == serving_defaults::requests / 10);
    CHECK(o.seed == serving_defaults::seed);
}

TEST_CASE(
    "write_whatif_csv: a header and one row per candidate, pareto and best as in the result") {
    const whatif_result r = small_sweep();
    REQUIRE(r.ranked.size() == 8);
    io::whatif_report rep = report_for();
    rep.pick = r.best_under(fastest_latency(r));
    REQUIRE(rep.pick->has_value());
    std::ostringstream out;
    io::write_whatif_csv(out, rep, r);
    const std::vector<std::string> lines = lines_of(out.str());
    REQUIRE(lines.size() == 1 + r.ranked.size());
    CHECK(lines[0].starts_with("rank,streams,cube,vector,batch,latency_ms,qps,"));
    CHECK(fields(lines[0]) == 22);
    std::size_t on_front = 0;
    std::size_t best = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        CHECK(fields(lines[i]) == 22);
        CHECK(lines[i].starts_with(std::to_string(i) + "," +
                                   std::to_string(r.ranked[i - 1].streams) + ","));
        const std::vector<std::string_view> f = io::split(lines[i], ',');
        on_front += f[16] == "1" ? 1U : 0U;
        if (f[17] == "1") {
            ++best;
            CHECK(r.ranked[i - 1] == rep.pick->closest());
        }
    }
    CHECK(on_front == r.pareto.size());
    CHECK(best == 1);
}

TEST_CASE("throughput_text: whole from 100 up, three significant digits below, never a bare 0") {
    CHECK(io::throughput_text(5632.4) == "5632");
    CHECK(io::throughput_text(100.0) == "100");
    CHECK(io::throughput_text(12.34) == "12.3");
    CHECK(io::throughput_text(0.309) == "0.309");  // a deployment that does not fit showed "0"
    CHECK(io::throughput_text(0.000123) == "0.000123");
    CHECK(io::throughput_text(0.0) == "0");
}

TEST_CASE("write_whatif_json: parses, every candidate, the Pareto front as 1-based ranks") {
    const whatif_result r = small_sweep();
    io::whatif_report rep = report_for();
    SUBCASE("no target") {
        std::ostringstream out;
        io::write_whatif_json(out, rep, r);
        const whatif_json j = read_whatif_json(out.str());
        CHECK(j.model == "ctr_ranking");
        CHECK(j.candidates == r.ranked.size());
        REQUIRE(j.pareto.size() == r.pareto.size());
        for (std::size_t i = 0; i < r.pareto.size(); ++i) {
            CHECK(j.pareto[i] == static_cast<double>(r.pareto[i] + 1));
        }
        // Each candidate's rank is its place, 1-based; those marked pareto are the front's ranks
        // (the list is by latency, the candidates by rank: compared as sets).
        for (std::size_t i = 0; i < j.ranks.size(); ++i)
            CHECK(j.ranks[i] == static_cast<double>(i + 1));
        std::vector<double> listed = j.pareto;
        std::sort(listed.begin(), listed.end());
        CHECK(j.front_ranks == listed);
        CHECK_FALSE(j.met.has_value());  // null: no target to meet
        CHECK_FALSE(j.target_ms.has_value());
        CHECK_FALSE(j.best_qps.has_value());
        CHECK(j.profile_null);
    }
    SUBCASE("a target none meets: met false, no best") {
        rep.pick = r.best_under(fastest_latency(r) * 0.5);
        std::ostringstream out;
        io::write_whatif_json(out, rep, r);
        const whatif_json j = read_whatif_json(out.str());
        CHECK(j.met == false);
        CHECK_FALSE(j.best_qps.has_value());
    }
    SUBCASE("a target met: best is the pick") {
        rep.pick = r.best_under(fastest_latency(r));
        rep.profile = io::anchored_summary{.anchored = 3, .measured = 1_ms};
        std::ostringstream out;
        io::write_whatif_json(out, rep, r);
        const whatif_json j = read_whatif_json(out.str());
        CHECK(j.met == true);
        REQUIRE(j.best_rank.has_value());
        const auto pick_at =
            std::find(r.ranked.begin(), r.ranked.end(), rep.pick->closest()) - r.ranked.begin();
        CHECK(*j.best_rank == static_cast<double>(pick_at + 1));
        REQUIRE(j.target_ms.has_value());
        CHECK(*j.target_ms == doctest::Approx(fastest_latency(r).in(units::ms)));
        REQUIRE(j.best_qps.has_value());
        CHECK(*j.best_qps == doctest::Approx(rep.pick->closest().qps));
        CHECK_FALSE(j.profile_null);
        CHECK(has(out.str(), "\"anchored\": 3"));
    }
}

TEST_CASE("write_whatif_table: the first rows, the pick marked even below them, the front") {
    const whatif_result r = small_sweep();
    io::whatif_report rep = report_for();
    rep.pick = r.best_under(fastest_latency(r));
    const auto pick_at = static_cast<std::size_t>(
        std::find(r.ranked.begin(), r.ranked.end(), rep.pick->closest()) - r.ranked.begin());
    REQUIRE(pick_at > 0);  // else this case would not test a pick below the shown rows
    rep.top = 1;
    std::ostringstream out;
    io::write_whatif_table(out, rep, r);
    const std::string text = out.str();
    CHECK(text.starts_with("model ctr_ranking (" + std::to_string(scenario::ctr_ranking.size()) +
                           " nodes) on ascend910b1: 8 deployments, ranked by QPS\n"));
    CHECK(has(text, "best within " + io::format_shortest(fastest_latency(r).in(units::ms)) +
                        " ms: " + io::describe(rep.pick->closest())));
    std::size_t marked = 0;
    std::size_t rows = 0;
    for (const std::string& line : lines_of(text)) {
        if (line.starts_with("1 ")) ++rows;
        if (line.starts_with(std::to_string(pick_at + 1) + " ")) {
            ++rows;
            CHECK(has(line, "<- best within"));
        }
        if (has(line, "<- best within")) ++marked;
    }
    CHECK(rows == (pick_at == 0 ? 1 : 2));
    CHECK(marked == 1);
    CHECK(has(text, "(7 more; --top 0 lists all"));
    CHECK(has(text, "(" + std::to_string(r.pareto.size()) + " deployments).\n"));

    // Every row, without a pick: one '*' per Pareto candidate, no note.
    rep.pick.reset();
    rep.top = 0;
    std::ostringstream all;
    io::write_whatif_table(all, rep, r);
    std::size_t stars = 0;
    for (const std::string& line : lines_of(all.str())) {
        const bool candidate_row = !line.empty() && line[0] >= '1' && line[0] <= '9';
        if (candidate_row && has(line + " ", " * ")) ++stars;
    }
    CHECK(stars == r.pareto.size());
    CHECK_FALSE(has(all.str(), "<- best"));
    CHECK_FALSE(has(all.str(), "more; --top 0"));
}

TEST_CASE("write_whatif_svg: every candidate, the front and the target") {
    const whatif_result r = small_sweep();
    io::whatif_report rep = report_for();
    rep.pick = r.best_under(fastest_latency(r));
    std::ostringstream out;
    io::write_whatif_svg(out, rep, r, "small sweep");
    const std::string svg = out.str();
    CHECK(has(svg, "<svg"));
    CHECK(has(svg, "small sweep"));
    CHECK(has(svg, "Pareto front"));
    CHECK(has(svg, "target " + io::format_shortest(fastest_latency(r).in(units::ms)) + " ms"));
    CHECK(has(svg, "best: " + std::to_string(rep.pick->closest().streams) + " x " +
                       io::split_text(rep.pick->closest())));
}

namespace {

/// 2 streams x 1 split x 2 gears of the built-in scenario, every request 8 samples.
struct small_serving {
    batch_distribution dist = batch_distribution::fixed(8);
    serving_grid grid{.streams = counts<stream_count>({1, 2}),
                      .cube = counts<core_count>({12}),
                      .vector = counts<core_count>({24}),
                      .max_gears = {8, 16}};
    serving_sweeper sweeper{chips::ascend910b1, scenario::ctr_ranking, grid, dist};

    io::serving_report report(const serving_sweep_options& o) const {
        io::serving_report x;
        x.model_name = "ctr_ranking";
        x.model_nodes = scenario::ctr_ranking.size();
        x.chip_name = "ascend910b1";
        x.sizes_text = "every request 8 samples (--batch)";
        x.sizes_source = "fixed";
        x.dist = &dist;
        x.options = o;
        return x;
    }
};

serving_sweep_options short_runs() {
    serving_sweep_options o;
    o.requests = 2000;
    o.warmup = 200;
    o.simulate_top = 0;  // all four
    return o;
}

}  // namespace

TEST_CASE("serving writers, capacity mode: JSON, CSV and table agree with the result") {
    const small_serving s;
    serving_sweep_options o = short_runs();
    o.target = 1_ms;
    const serving_sweep_result r = s.sweeper.run(o);
    REQUIRE(r.met());
    REQUIRE(r.ranked.size() == 4);
    io::serving_report x = s.report(o);
    x.traffic = request_rate{100000, units::qps};

    std::ostringstream json;
    io::write_serving_json(json, x, r);
    const std::string json_text = json.str();
    CHECK(has(json_text, "\"mode\": \"capacity\""));
    const std::size_t best = json_text.find("\"best\": {");
    REQUIRE(best != std::string::npos);
    CHECK(perfcast_test::json_number(json_text, "rank", best) == 1.0);
    std::size_t candidates = 0;
    std::size_t with_cards = 0;
    each_member_in(json_text, "candidates", [&](io::json_cursor& c, const std::string& key) {
        if (key == "rank") ++candidates;
        if (key == "cards" && c.peek() == io::json_cursor::kind::number) ++with_cards;
        c.skip_value();
    });
    CHECK(candidates == r.ranked.size());
    CHECK(with_cards == r.ranked.size());

    std::ostringstream csv;
    io::write_serving_csv(csv, x, r);
    const std::vector<std::string> lines = lines_of(csv.str());
    std::size_t rows = 0;
    for (const serving_row& row : r.ranked) rows += std::max<std::size_t>(1, row.points.size());
    REQUIRE(lines.size() == 1 + rows);
    CHECK(lines[0].starts_with("rank,streams,cube,vector,max_gear,window_ms,qps,"));
    for (const std::string& line : lines) CHECK(fields(line) == 25);
    const std::vector<std::string_view> first = io::split(lines[1], ',');
    CHECK(first[0] == "1");
    CHECK(first[1] == std::to_string(r.ranked.front().config.streams));
    CHECK(first[16] == std::to_string(cards_for(*x.traffic, *r.ranked.front().capacity).cards));

    x.top = 1;
    std::ostringstream table;
    io::write_serving_table(table, x, r);
    const std::string t = table.str();
    CHECK(t.starts_with("model ctr_ranking (" + std::to_string(scenario::ctr_ranking.size()) +
                        " nodes) on ascend910b1, batch sizes: every request 8 samples"));
    CHECK(has(t, "best under TP99 <= 1 ms: " + describe(r.ranked.front().config)));
    CHECK(has(t, "traffic 100000 QPS: "));
    CHECK(has(t, "(3 more simulated; --top 0 lists all)"));
}

TEST_CASE("serving writers, load mode: null percentiles only where unsteady, the SVG's curves") {
    const small_serving s;
    serving_sweep_options o = short_runs();
    o.loads = {request_rate{1000, units::qps}, request_rate{2000, units::qps}};
    const serving_sweep_result r = s.sweeper.run(o);
    REQUIRE(r.ranked.size() == 4);
    const io::serving_report x = s.report(o);

    std::ostringstream json;
    io::write_serving_json(json, x, r);
    CHECK(has(json.str(), "\"mode\": \"load\""));
    CHECK(has(json.str(), "\"target_p99_ms\": null"));
    std::size_t points = 0;
    each_member_in(json.str(), "candidates", [&](io::json_cursor& c, const std::string& key) {
        if (key != "points") {
            c.skip_value();
            return;
        }
        c.begin_array();
        while (c.next_element()) {
            ++points;
            c.skip_value();
        }
    });
    CHECK(points == 2 * r.ranked.size());

    std::ostringstream csv;
    io::write_serving_csv(csv, x, r);
    CHECK(lines_of(csv.str()).size() == 1 + 2 * r.ranked.size());

    std::ostringstream table;
    io::write_serving_table(table, x, r);
    CHECK(has(table.str(), "QPS: the offered Poisson load per card"));
    CHECK_FALSE(has(table.str(), "more simulated"));

    std::ostringstream svg;
    io::write_serving_svg(svg, x, s.sweeper, r, "small serving sweep");
    CHECK(has(svg.str(), "small serving sweep"));
    CHECK(has(svg.str(), "#1 " + std::to_string(r.ranked.front().config.streams) + " x 12/24"));
    CHECK(has(svg.str(), "1000 QPS"));
    CHECK_FALSE(has(svg.str(), "TP99 target"));
}

TEST_CASE("gains writers: the deployment, one row or object per change, signed percentages") {
    deployment_case d;
    d.c = chips::ascend910b1;
    d.m = std::make_shared<const model>(scenario::ctr_ranking_model());
    d.instances = stream_count{2};
    d.split = {core_count{12}, core_count{24}};
    d.batch = batch_size{64};
    d.runtime = "acl";
    const deployment_gains g = what_each_change_buys(d);
    REQUIRE_FALSE(g.changes.empty());
    CHECK(io::deployment_text(d) == "2 x 12/24 b64");
    CHECK(io::detail::signed_pct(0.125) == "+12.5");
    CHECK(io::detail::signed_pct(-0.03) == "-3.0");
    CHECK(io::detail::signed_pct(0.00001) == "0.0");  // rounds to zero: no sign

    std::ostringstream table;
    io::write_gains_table(table, d, g);
    const std::vector<std::string> t = lines_of(table.str());
    REQUIRE(t.size() > 4);
    CHECK(t[0].starts_with("deployment: " + d.m->name + " on ascend910b1, 2 x 12/24 b64: "));
    CHECK(t[1].starts_with("runtime path: "));
    REQUIRE(g.base.card.group_count == 1);
    CHECK(t[2] == "steps of one task: " + io::steps_text(g.base.card.groups[0].steps));
    CHECK(t[3].starts_with("memory: weights "));
    CHECK(t[4].starts_with("the deployment holds at least "));
    // Header and rule, then one row per change, numbered from 1 in the given order.
    for (std::size_t i = 0; i < g.changes.size(); ++i) {
        const std::string& row = t.at(8 + i);
        CHECK(row.starts_with(std::to_string(i + 1)));
        CHECK(has(row, g.changes[i].what));
    }

    // The steps in order, each in ms to 3 decimals; the lock's wait only where there is one.
    task_times st;
    st.buffers = duration{55.4, units::us};
    st.device = duration{351.0, units::us};
    st.between = duration{2.0, units::us};
    CHECK(io::steps_text(st) ==
          "prepare 0.000, buffers 0.055, copy_in 0.000, launch 0.000, "
          "device 0.351, sync 0.000, copy_out 0.000, post 0.000, between "
          "0.002 ms");
    st.lock_wait = duration{4.6, units::us};
    CHECK(io::steps_text(st).ends_with("between 0.002 ms; waiting at the device lock 0.005 ms"));

    std::ostringstream json;
    io::write_gains_json(json, d, g);
    std::size_t objects = 0;
    std::vector<std::string> whats;
    std::string scratch;
    each_member_in(json.str(), "changes", [&](io::json_cursor& c, const std::string& key) {
        if (key == "change") {
            whats.emplace_back(c.string(scratch));
            ++objects;
        } else {
            c.skip_value();
        }
    });
    REQUIRE(objects == g.changes.size());
    for (std::size_t i = 0; i < objects; ++i) CHECK(whats[i] == g.changes[i].what);
    CHECK(has(json.str(), "\"deployment\": \"2 x 12/24 b64\""));
    // Two instances with buffers per task: one waits for the other at the device lock.
    CHECK(perfcast_test::json_number(json.str(), "lock_wait_ms") > 0);
    CHECK(perfcast_test::json_number(json.str(), "lock_wait_ms") ==
          doctest::Approx(g.base.card.groups[0].steps.lock_wait.in(units::ms)).epsilon(1e-12));
}

}  // namespace test_whatif_report
