// whatif.hpp: sweeps, ranking, Pareto front, best under a latency target; the `perfcast whatif`
// command (examples/perfcast/cmd_whatif.cpp) and its SVG plot (written by
// io/whatif_report.hpp, whose writers tests/test_whatif_report.cpp tests on the library).
#include <doctest/doctest.h>

#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/io/svg.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/whatif.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_whatif {

using namespace perfcast;
using namespace perfcast::literals;

namespace {
constexpr const chip& b1 = chips::ascend910b1;

whatif_grid small_grid() {
    return {.streams = counts<stream_count>({1, 2, 3, 4}),
            .cube = counts<core_count>({6, 12, 24}),
            .vector = counts<core_count>({12, 24, 48}),
            .batches = counts<batch_size>({16, 128})};
}

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return "(no error)";
}
using perfcast_test::has;
bool dominates(const candidate& a, const candidate& b) {
    return a.qps >= b.qps && a.latency <= b.latency && (a.qps > b.qps || a.latency < b.latency);
}

using perfcast_test::cli_run;
cli_run run_cli(std::vector<std::string_view> args) {
    return perfcast_test::run_command(cli::whatif_command, std::move(args));
}
}  // namespace

TEST_CASE("sweep: every configuration, ranked by QPS then latency, equal to evaluate_card") {
    const whatif_grid g = small_grid();
    const whatif_result r = sweep(b1, scenario::ctr_ranking, g);
    REQUIRE(r.ranked.size() == g.size());
    CHECK(r.ranked.size() == 4 * 3 * 3 * 2);
    for (std::size_t i = 1; i < r.ranked.size(); ++i) {
        const candidate& a = r.ranked[i - 1];
        const candidate& b = r.ranked[i];
        CHECK((a.qps > b.qps || (a.qps == b.qps && a.latency <= b.latency)));
    }
    // The per-node cache changes nothing: each candidate is the card model's answer, exactly.
    for (const candidate& c : r.ranked) {
        const card_result full = evaluate_card(b1, scenario::ctr_ranking, batch_size{c.batch},
                                               stream_count{c.streams}, c.split);
        CHECK(c.latency == full.avg_latency);
        CHECK(c.qps == full.qps);
        CHECK(c.throughput == full.throughput);
        CHECK(c.qps == 1000.0 / c.latency.in(units::ms) * c.streams);  // guide §1, exactly
        CHECK(c.throughput == c.qps * static_cast<double>(c.batch));
    }
}

TEST_CASE("sweep ranked by throughput puts samples/s first") {
    const whatif_result r = sweep(b1, scenario::ctr_ranking, small_grid(), {}, rank_by::throughput);
    for (std::size_t i = 1; i < r.ranked.size(); ++i) {
        CHECK(r.ranked[i - 1].throughput >= r.ranked[i].throughput);
    }
    CHECK(r.ranked.front().batch == 128);  // more samples per inference
}

TEST_CASE("Pareto front: nothing beats a front member on both QPS and latency") {
    const whatif_result r = sweep(b1, scenario::ctr_ranking, small_grid());
    REQUIRE(!r.pareto.empty());
    std::vector<bool> on(r.ranked.size(), false);
    for (std::size_t i : r.pareto) on[i] = true;
    for (std::size_t i : r.pareto) {
        for (const candidate& c : r.ranked) CHECK_FALSE(dominates(c, r.ranked[i]));
    }
    // Every other candidate is dominated by (or ties with) a front member.
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
        if (on[i]) continue;
        bool covered = false;
        for (std::size_t j : r.pareto) {
            const candidate& f = r.ranked[j];
            covered = covered || (f.qps >= r.ranked[i].qps && f.latency <= r.ranked[i].latency);
        }
        CHECK(covered);
    }
    // Ordered by latency, QPS rising along it; the best-QPS candidate ends it.
    for (std::size_t k = 1; k < r.pareto.size(); ++k) {
        CHECK(r.ranked[r.pareto[k]].latency >= r.ranked[r.pareto[k - 1]].latency);
        CHECK(r.ranked[r.pareto[k]].qps > r.ranked[r.pareto[k - 1]].qps);
    }
    CHECK(r.pareto.back() == 0);
}

TEST_CASE("best under a latency target, or none with the closest candidate") {
    const whatif_result r = sweep(b1, scenario::ctr_ranking, small_grid());
    // Met: the highest-QPS candidate within the target.
    const duration target = 0.5_ms;
    const selection s = r.best_under(target);
    REQUIRE(s.has_value());
    CHECK(static_cast<bool>(s));
    CHECK(s->latency <= target);
    CHECK(s.excess() <= duration{});
    for (const candidate& c : r.ranked) {
        if (c.latency <= target) CHECK(c.qps <= s->qps);
    }
    CHECK(s.why() == "met");

    // None: every candidate is slower than 10 us. The result carries the closest one.
    const selection none = r.best_under(10_us);
    CHECK_FALSE(none.has_value());
    duration fastest = r.ranked.front().latency;
    for (const candidate& c : r.ranked) fastest = c.latency < fastest ? c.latency : fastest;
    CHECK(none.closest().latency == fastest);
    CHECK(none.excess() == fastest - 10_us);
    CHECK(has(none.why(), "none of the candidates meets 0.01 ms"));
    CHECK(has(error_of([&] { (void)none.value(); }), "none of the candidates meets"));
    CHECK(has(error_of([&] { (void)best_under(r.ranked, 0_ms); }), "target = 0"));
    CHECK(has(error_of([] { (void)best_under({}, 1_ms); }), "candidates"));
}

TEST_CASE("grid errors: limits above the chip's cores, zero streams or batch, empty axes") {
    whatif_grid g = small_grid();
    g.cube = counts<core_count>({6, 25});
    CHECK(has(error_of([&] { (void)sweep(b1, scenario::ctr_ranking, g); }),
              "cube = 25, expected at most 24 (the cube cores of ascend910b1)"));
    g = small_grid();
    g.vector = counts<core_count>({49});
    CHECK(has(error_of([&] { (void)sweep(b1, scenario::ctr_ranking, g); }),
              "vector = 49, expected at most 48 (the vector cores of ascend910b1)"));
    g = small_grid();
    g.streams = counts<stream_count>({0, 1});
    CHECK(has(error_of([&] { (void)sweep(b1, scenario::ctr_ranking, g); }), "streams = 0"));
    g = small_grid();
    g.batches = counts<batch_size>({0});
    CHECK(has(error_of([&] { (void)sweep(b1, scenario::ctr_ranking, g); }), "batch = 0"));
    g = small_grid();
    g.cube.clear();
    CHECK(has(error_of([&] { (void)sweep(b1, scenario::ctr_ranking, g); }),
              "at least one cube-core limit"));
    // On a 20-core chip 24 is too many.
    CHECK(has(error_of([] {
                  (void)sweep(chips::ascend910b3, scenario::ctr_ranking,
                              whatif_grid{counts<stream_count>({1}), counts<core_count>({24}),
                                          counts<core_count>({40}), counts<batch_size>({16})});
              }),
              "cube = 24, expected at most 20 (the cube cores of ascend910b3)"));
}

// ---- the command -------------------------------------------------------------------------------
TEST_CASE("perfcast whatif: no arguments runs the built-in scenario's default grid") {
    const cli_run r = run_cli({});
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "model ctr_ranking (34 nodes) on ascend910b1: 480 deployments"));
    CHECK(has(r.out, "latency ms"));
    CHECK(has(r.out, "(460 more;"));
}

TEST_CASE("default core limits: the 910B1's lists at the same shares of another chip's cores") {
    // Known answers by hand: b x cores / base, to the nearest core, halves up.
    using V = std::vector<int>;
    CHECK(limits_for(scenario::default_cube, core_count{24}, core_count{24}) == V{6, 8, 12, 24});
    CHECK(limits_for(scenario::default_vector, core_count{48}, core_count{48}) ==
          V{10, 12, 24, 48});
    CHECK(limits_for(scenario::default_cube, core_count{24}, core_count{20}) ==
          V{5, 7, 10, 20});  // 6.67 -> 7
    CHECK(limits_for(scenario::default_vector, core_count{48}, core_count{40}) ==
          V{8, 10, 20, 40});  // 8.33 -> 8
    CHECK(limits_for(scenario::default_vector, core_count{48}, core_count{108}) ==
          V{23, 27, 54, 108});  // 22.5 -> 23
    // A small engine: the shares round to the same core, listed once, never below 1.
    CHECK(limits_for(scenario::default_cube, core_count{24}, core_count{2}) == V{1, 2});
    CHECK(limits_text(scenario::default_cube, core_count{24}, core_count{8}) == "2,3,4,8");
    CHECK_THROWS_AS((void)limits_for(scenario::default_cube, core_count{24}, core_count{0}),
                    perfcast::error);
    // `perfcast whatif --chip C` on the built-in scenario runs on every preset but the two without
    // an hf32 path for its attention BMMs, which say so: before, only the 910B1, 910B2 and
    // 910_9391 ran (the others' cores were fewer than the default lists, or a GPU's AI CPU op
    // had no cores).
    for (const auto& n : chips::all_presets()) {
        CAPTURE(n.name);
        const cli_run r = run_cli({"--chip", n.name, "--streams", "1", "--batch", "16"});
        if (n.name == "ascend910a" || n.name == "ascend310p3") {
            CHECK(r.status == cli::exit_failure);
            CHECK(has(r.err, "dtype = hf32, expected a dtype the cube of " + std::string(n.name)));
        } else {
            CHECK(r.status == cli::exit_ok);
            CHECK(has(r.out, ": 16 deployments"));
        }
    }
    const cli_run b3 = run_cli({"--chip", "910B3", "--top", "1", "--format", "csv"});
    CHECK(b3.status == cli::exit_ok);
    CHECK(has(b3.out, "\n1,"));
    const cli_run b3_json = run_cli(
        {"--chip", "910B3", "--streams", "1", "--batch", "16", "--format", "json", "--top", "0"});
    REQUIRE(b3_json.status == cli::exit_ok);
    for (const char* split : {"\"cube\": 5,", "\"cube\": 7,", "\"cube\": 10,", "\"cube\": 20,",
                              "\"vector\": 8,", "\"vector\": 40,"})
        CHECK(has(b3_json.out, split));
    CHECK_FALSE(has(b3_json.out, "\"cube\": 24,"));
}

TEST_CASE("an AI CPU op on a chip without an AI CPU runs on the vector engine") {
    // The built-in scenario's where_default is a generic op on the AI CPU (guide §8); the GPU
    // presets have no AI CPU cores, and a limit of 0 cores failed every deployment.
    const auto it = std::find_if(scenario::ctr_ranking.begin(), scenario::ctr_ranking.end(),
                                 [](const node& n) { return n.name.view() == "where_default"; });
    REQUIRE(it != scenario::ctr_ranking.end());
    const node& where = *it;
    CHECK(engine_of(where) == engine::aicpu);
    CHECK(engine_on(b1, where) == engine::aicpu);
    CHECK(engine_on(chips::h100_sxm, where) == engine::vector);
    const core_split split{core_count{33}, core_count{66}};
    const node_eval on_gpu = evaluate_node(chips::h100_sxm, where, batch_size{16}, split);
    CHECK(on_gpu.eng == engine::vector);
    CHECK(on_gpu.cost.cores >= 1);
    CHECK(on_gpu.cost.cores <= 66);  // the split's vector limit
    CHECK(evaluate_node(b1, where, batch_size{16}, split).eng == engine::aicpu);
    // Priced on the vector engine, it adds to the device time, not an AI CPU time.
    const auto r = serial_latency(chips::h100_sxm, scenario::ctr_ranking, 16, split);
    CHECK(r.aicpu == duration{});
    CHECK(r.device > duration{});
    CHECK(serial_latency(b1, scenario::ctr_ranking, 16, core_split{core_count{12}, core_count{24}})
              .aicpu > duration{});
    // The command runs the built-in scenario on a GPU and says what it moved.
    const cli_run gpu = run_cli({"--chip", "h100", "--top", "1"});
    CHECK(gpu.status == cli::exit_ok);
    CHECK(has(gpu.err,
              "h100-sxm has no AI CPU: 1 op of the model placed there (where_default) "
              "runs on its vector engine"));
    CHECK(has(gpu.out, "on h100-sxm: 480 deployments"));
    const cli_run ascend = run_cli({"--top", "1"});
    CHECK_FALSE(has(ascend.err, "no AI CPU"));
}

TEST_CASE("perfcast whatif: lists, ranges, target, formats") {
    const cli_run t = run_cli({"--streams", "1-3", "--cube", "6,12", "--vector=12,24",
                               "--batch", "16,128", "--latency-ms", "0.6", "--top", "0"});
    REQUIRE(t.status == cli::exit_ok);
    CHECK(has(t.out, ": 24 deployments"));
    CHECK(has(t.out, "best within 0.6 ms: "));
    CHECK(has(t.out, "<- best within 0.6 ms"));

    const cli_run none = run_cli({"--streams", "1", "--cube", "24", "--vector", "48",
                                  "--batch", "16", "--latency-ms", "0.01"});
    CHECK(none.status == cli::exit_ok);
    CHECK(has(none.out, "none of the candidates meets 0.01 ms; the closest, 1 stream(s) of 24"));

    const cli_run csv = run_cli({"--streams", "1-2", "--cube", "12", "--vector", "24",
                                 "--batch", "16", "--format", "csv"});
    REQUIRE(csv.status == cli::exit_ok);
    std::istringstream lines(csv.out);
    std::string header, row;
    std::getline(lines, header);
    CHECK(header.rfind("rank,streams,cube,vector,batch,latency_ms,qps,samples_per_s", 0) == 0);
    int rows = 0;
    while (std::getline(lines, row)) ++rows;
    CHECK(rows == 2);

    const cli_run json = run_cli({"--streams", "2", "--cube", "12", "--vector", "24",
                                  "--batch", "16", "--format", "json", "--latency-ms", "5"});
    REQUIRE(json.status == cli::exit_ok);
    CHECK(has(json.out, "\"met\": true"));
    CHECK(has(json.out, "\"candidates\": ["));
    CHECK(has(json.out, "\"qps\": "));
}

TEST_CASE("perfcast whatif: bad input is a clear error") {
    const cli_run big = run_cli({"--cube", "6,30"});
    CHECK(big.status == cli::exit_usage);
    CHECK(has(big.err, "--cube = 30, expected at most 24 (the cube cores of ascend910b1)"));
    const cli_run zero = run_cli({"--streams", "0-2"});
    CHECK(zero.status == cli::exit_usage);
    CHECK(has(zero.err, "option '--streams': '0-2' is below 1"));
    const cli_run zero_batch = run_cli({"--batch", "0"});
    CHECK(zero_batch.status == cli::exit_usage);
    CHECK(has(zero_batch.err, "option '--batch': '0' is below 1"));
    const cli_run junk = run_cli({"--vector", "12,x"});
    CHECK(junk.status == cli::exit_usage);
    CHECK(has(junk.err, "'x' is not a number or a range"));
    const cli_run back = run_cli({"--streams", "6-1"});
    CHECK(has(back.err, "'6-1' is a range that runs backwards"));
    const cli_run chip = run_cli({"--chip", "910Z"});
    CHECK(chip.status == cli::exit_usage);
    CHECK(has(chip.err, "chip = 910Z"));
    const cli_run target = run_cli({"--latency-ms", "-1"});
    CHECK(target.status == cli::exit_usage);
    const cli_run model = run_cli({"--model", PERFCAST_SOURCE_DIR "/tests/data/models/bad_shape.model"});
    CHECK(model.status == cli::exit_failure);
    CHECK(has(model.err, "bad_shape.model:2:15"));
    // The sort key is --rank-by; --rank is a folder's rank, and says so when given a key.
    const cli_run key = run_cli({"--rank", "throughput"});
    CHECK(key.status == cli::exit_usage);
    CHECK(has(key.err,
              "option '--rank' picks the rank of a folder of several ranks' output (a "
              "whole number); the sort key is --rank-by throughput"));
    const cli_run by = run_cli({"--rank-by", "throughput", "--top", "1"});
    CHECK(by.status == cli::exit_ok);
    CHECK(has(by.out, "ranked by samples/s"));
    const cli_run missing = run_cli({"--model", "/nonexistent/x.model"});
    CHECK(missing.status == cli::exit_failure);
    CHECK(has(missing.err, "x.model: cannot open file for reading"));
}

TEST_CASE("perfcast whatif: a model file and an SVG of QPS against latency") {
    const std::string svg_path =
        (std::filesystem::temp_directory_path() / "perfcast_test_whatif.svg").string();
    const cli_run r = run_cli({"--model", PERFCAST_SOURCE_DIR "/tests/data/models/host_bound.model",
                               "--streams", "1-4", "--cube", "4,24", "--vector", "8,48", "--batch",
                               "1,64", "--latency-ms", "0.5", "--svg", std::string_view(svg_path)});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "model host_bound (9 nodes)"));
    std::ifstream in(svg_path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string svg = ss.str();
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(has(svg, "Pareto front"));
    CHECK(has(svg, "<polyline"));
    CHECK(has(svg, "target 0.5 ms"));
    CHECK(svg.size() > 1000);
    CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
    in.close();
    std::remove(svg_path.c_str());
}

TEST_CASE("svg_plot: escapes text, skips non-finite points, draws series and reference lines") {
    io::svg_plot p("a < b & \"c\"", "x", "y");
    p.add({.name = "pts", .points = {{0, 0}, {1, 2}, {std::nan(""), 1}}, .color = "#123456"});
    p.add({.name = "line", .points = {{0, 0}, {1, 2}}, .style = io::svg_style::line});
    p.add_vline(0.5, "t");
    const std::string s = p.str();
    CHECK(has(s, "a &lt; b &amp; &quot;c&quot;"));
    CHECK(has(s, "<polyline"));
    CHECK(has(s, "stroke-dasharray"));
    std::size_t circles = 0;
    for (std::size_t at = s.find("<circle"); at != std::string::npos; at = s.find("<circle", at + 1)) {
        ++circles;
    }
    CHECK(circles == 2);  // the NaN point is skipped; the line series has no markers
}

}  // namespace test_whatif
