// Progress of long runs (issue 16, item 5): the library reports units of work through a
// progress_fn (include/perfcast/progress.hpp); the command prints them on stderr only, rate
// limited, and --quiet silences them (examples/perfcast/progress.hpp). Here the rate limit is
// set to 0 so that every report prints: the checks do not depend on how fast the machine is.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/progress.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving.hpp>
#include <perfcast/serving_sweep.hpp>
#include <perfcast/whatif.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/commands.hpp"
#include "../examples/perfcast/progress.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_progress {

using namespace perfcast;
using perfcast_test::run_command;

namespace {

using perfcast_test::has;

/// Every report a computation made, copied (the task text may not outlive the call).
struct recorded {
    std::string task;
    std::uint64_t done;
    std::uint64_t total;
    std::string unit;
};

struct recorder {
    std::vector<recorded> steps;
    [[nodiscard]] progress_fn fn() {
        return [this](const progress_step& s) {
            steps.push_back({std::string(s.task), s.done, s.total, std::string(s.unit)});
        };
    }
    [[nodiscard]] std::vector<recorded> of(std::string_view task) const {
        std::vector<recorded> out;
        for (const recorded& r : steps) {
            if (r.task == task) out.push_back(r);
        }
        return out;
    }
};

/// Progress lines for every report while it lives (no 2 s delay, no interval).
struct every_report {
    cli::progress_policy saved = cli::progress_settings;
    every_report() {
        cli::progress_settings.delay = std::chrono::milliseconds{0};
        cli::progress_settings.interval = std::chrono::milliseconds{0};
    }
    ~every_report() { cli::progress_settings = saved; }
    every_report(const every_report&) = delete;
    every_report& operator=(const every_report&) = delete;
};

const std::string profile_910b3 =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B3_matmul.csv";

}  // namespace

TEST_CASE("sweep reports every op cost and every deployment, in order, up to the total") {
    const whatif_grid g{.streams = counts<stream_count>({1, 2}),
                        .cube = counts<core_count>({12, 24}),
                        .vector = counts<core_count>({24, 48}),
                        .batches = counts<batch_size>({16})};
    recorder rec;
    const whatif_result r =
        sweep(scenario::default_chip, scenario::ctr_ranking, g, {}, rank_by::qps, rec.fn());
    const node_eval_table table(scenario::default_chip, scenario::ctr_ranking, g.batches, g.cube,
                                g.vector);
    const auto costs = rec.of("costing ops");
    REQUIRE(costs.size() == scenario::ctr_ranking.size());  // one report per node and batch
    CHECK(costs.back().done == table.entries());
    CHECK(costs.back().total == table.entries());
    const auto deployments = rec.of("evaluating deployments");
    REQUIRE(deployments.size() == g.size());
    for (std::size_t i = 0; i < deployments.size(); ++i) {
        CHECK(deployments[i].done == i + 1);
        CHECK(deployments[i].total == g.size());
        CHECK(deployments[i].unit == "deployments");
    }
    // The same answer as without a progress function.
    CHECK(r.ranked == sweep(scenario::default_chip, scenario::ctr_ranking, g).ranked);
}

TEST_CASE("simulate reports requests served against the run's requests") {
    const server_config srv =
        make_card_server(scenario::default_chip, scenario::ctr_ranking, stream_count{2},
                         core_split{core_count{12}, core_count{24}}, gear_set::every(16));
    recorder rec;
    sim_options o;
    o.progress = rec.fn();
    const auto dist = batch_distribution::fixed(16);
    // 20000 one-batch requests: about 20000 batches, a report every 4096 of them.
    const serving_result with = simulate(srv, dist, request_rate{1000, units::qps}, 20000, o);
    const auto steps = rec.of("simulating");
    REQUIRE(steps.size() >= 3);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        CHECK(steps[i].total == 20000);
        CHECK(steps[i].done <= 20000);
        if (i > 0) CHECK(steps[i].done >= steps[i - 1].done);
    }
    const serving_result without = simulate(srv, dist, request_rate{1000, units::qps}, 20000);
    CHECK(with.p99 == without.p99);
    CHECK(with.mean == without.mean);
}

TEST_CASE("a serving sweep reports its analysis and names the leader it simulates") {
    serving_grid g{.streams = counts<stream_count>({1, 2}),
                   .cube = counts<core_count>({24}),
                   .vector = counts<core_count>({48}),
                   .max_gears = {16}};
    recorder rec;
    const serving_sweeper s(scenario::default_chip, scenario::ctr_ranking, g,
                            batch_distribution::fixed(16), {}, rec.fn());
    CHECK_FALSE(rec.of("costing service times").empty());
    serving_sweep_options o;
    o.loads = {request_rate{2000, units::qps}};
    o.requests = 20000;
    o.simulate_top = 2;
    o.progress = rec.fn();
    (void)s.run(o);
    const auto analysed = rec.of("analysing configurations");
    REQUIRE(analysed.size() == 2);
    CHECK(analysed.back().done == 2);
    CHECK_FALSE(rec.of("simulating leader 1 of 2").empty());
    CHECK_FALSE(rec.of("simulating leader 2 of 2").empty());
    CHECK(rec.of("simulating leader 2 of 2").front().unit == "requests served");
}

TEST_CASE("calibrate reports each fit by number") {
    const chip c = chips::ascend910b3;
    const auto rows = profile::read_kernel_details_file(profile_910b3).rows;
    recorder rec;
    profile::calibration_options opt;
    opt.progress = rec.fn();
    const auto fitted = profile::calibrate(c, profile::measured_ops(c, rows), {}, opt);
    REQUIRE_FALSE(rec.steps.empty());
    std::string last_fit;
    for (const recorded& r : rec.steps) {
        CHECK(r.task.starts_with("fit "));
        CHECK(r.unit == "model evaluations");
        CHECK(r.done % profile::progress_every_evaluations == 0);
        last_fit = r.task;
    }
    // The final fit is the last one: "fit N of N".
    const std::string n = last_fit.substr(last_fit.rfind(' ') + 1);
    CHECK(last_fit == "fit " + n + " of " + n);
    // The same fit as without a progress function.
    const auto plain = profile::calibrate(c, profile::measured_ops(c, rows));
    CHECK(fitted.log_error_after == plain.log_error_after);
    CHECK(fitted.evaluations == plain.evaluations);
}

TEST_CASE("progress lines go to stderr only: stdout is the same with, without and --quiet") {
    const every_report all;
    const std::vector<std::string_view> grid{"--streams", "1-2",   "--cube",  "12,24",
                                             "--vector",  "24,48", "--batch", "16,32"};
    for (std::string_view format : {"table", "csv", "json"}) {
        auto run = [&](std::string_view flag) {
            std::vector<std::string_view> a = grid;
            a.insert(a.end(), {"--format", format});
            if (!flag.empty()) a.push_back(flag);
            return run_command(cli::whatif_command, a);
        };
        const auto shown = run("--progress");
        const auto quiet = run("--quiet");
        const auto plain = run("");  // not a terminal (tests): no progress without --progress
        REQUIRE(shown.status == cli::exit_ok);
        CHECK(has(shown.err, "perfcast whatif: evaluating deployments: 16 of 16 deployments"));
        CHECK(has(shown.err, "perfcast whatif: costing ops: "));
        CHECK(quiet.err.empty());
        CHECK(plain.err.empty());
        CHECK(shown.out == quiet.out);
        CHECK(shown.out == plain.out);
        CHECK_FALSE(has(shown.out, "evaluating"));
    }
    const std::vector<std::string_view> serving{
        "--qps", "1000",        "--streams", "1",          "--cube", "24",       "--vector",
        "48",    "--max-batch", "16",        "--requests", "20000",  "--format", "json"};
    auto with = [&](std::string_view flag) {
        std::vector<std::string_view> a = serving;
        a.push_back(flag);
        return run_command(cli::whatif_command, a);
    };
    const auto shown = with("--progress");
    const auto quiet = with("--quiet");
    CHECK(has(shown.err, "perfcast whatif: simulating leader 1 of 1: "));
    CHECK(has(shown.err, " of 20000 requests served ("));
    CHECK(quiet.err.empty());
    CHECK(shown.out == quiet.out);
}

TEST_CASE("--quiet and --progress on calibrate and validate; both at once is a usage error") {
    const every_report all;
    const auto fit = run_command(cli::validate_command, {"--chip", "910B3", profile_910b3,
                                                         "--holdout", "0.5", "--progress"});
    const auto fit_quiet = run_command(
        cli::validate_command, {"--chip", "910B3", profile_910b3, "--holdout", "0.5", "--quiet"});
    REQUIRE(fit.status == cli::exit_ok);
    CHECK(has(fit.err, "perfcast validate: fit 1 of "));
    // --quiet drops the progress lines; the warning that the fit side's few ops cannot
    // determine the shared parameters is no progress line, and stays.
    CHECK_FALSE(has(fit_quiet.err, "perfcast validate: fit "));
    CHECK(fit_quiet.err.rfind("perfcast validate: warning: the ", 0) == 0);
    CHECK(std::count(fit_quiet.err.begin(), fit_quiet.err.end(), '\n') == 1);
    CHECK(fit.out == fit_quiet.out);

    const auto both = run_command(cli::whatif_command, {"--quiet", "--progress"});
    CHECK(both.status == cli::exit_usage);
    CHECK(has(both.err, "give --quiet (no progress lines) or --progress (always), not both"));
    const auto cal = run_command(cli::calibrate_command, {"--help"});
    CHECK(has(cal.out, "--quiet"));
    CHECK(has(cal.out, "--progress"));
}

TEST_CASE("progress_text: a share when the total is known, a count when not") {
    CHECK(cli::progress_text({"x", 812000, 1769472, "deployments"}) ==
          "812000 of 1769472 deployments (45.9 %)");
    CHECK(cli::progress_text({"fit 2 of 7", 2400, 0, "model evaluations"}) ==
          "2400 model evaluations");
}

}  // namespace test_progress
