// The deployments end to end through the command: `validate --deployments` and
// `calibrate --deployments` on a published measurement (NVIDIA DeepLearningExamples' DLRM on an
// A100, tests/data/deployments/dlrm_a100), and `whatif --runtime / --runtime-set /
// --host-threads`.
#include <doctest/doctest.h>

#include <perfcast/io/deployments_file.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_cli_deployments {

using namespace perfcast;
using perfcast_test::json_number;

namespace {
const std::string dlrm_dir = std::string(PERFCAST_SOURCE_DIR) + "/tests/data/deployments/dlrm_a100";
const std::string dlrm_rows = dlrm_dir + "/rows.csv";
const std::string dlrm_model = dlrm_dir + "/dlrm.model";

using perfcast_test::has;

}  // namespace

TEST_CASE("validate --deployments: DLRM on an A100, two rows fitted, 28 predicted" *
          doctest::test_suite("heavy")) {
    // Rows 15 (graphs on, batch 32768: device time dominates, fits hbm_efficiency) and 16
    // (graphs off, batch 2: the per-kernel launches dominate, fits op_launch_us), chosen by that
    // rule before the held-out errors were seen. Measured with this command, 2026-12-01:
    // throughput 10.6 %, latency 13.1 % mean absolute error over the 28 other rows.
    auto r =
        perfcast_test::run_command(cli::validate_command, {"--deployments", dlrm_rows, "--knobs",
                                                           "op_launch_us,hbm_efficiency", "--train",
                                                           "15,16", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(perfcast_test::json_checker(r.out).valid());
    CHECK(json_number(r.out, "predicted_rows") == 28);
    // The goal is 15 % mean error on the predicted rows, in throughput and latency; a
    // model change that loses it fails here.
    const double fitted = json_number(r.out, "throughput_mape");
    CHECK(fitted < 0.15);
    CHECK(json_number(r.out, "latency_mape") < 0.15);
    // Launching per kernel costs microseconds each on a GPU (not zero, not milliseconds).
    const double launch = json_number(r.out, "op_launch_us");
    CHECK(launch > 2);
    CHECK(launch < 60);

    // Nothing fitted: the uncalibrated model on every row, the baseline the fit is judged by
    // (46.9 % in throughput on 2026-12-01): two fitted knobs must beat it on held-out rows.
    r = perfcast_test::run_command(
        cli::validate_command, {"--deployments", dlrm_rows, "--knobs", "none", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "\"method\": \"none\""));
    CHECK(json_number(r.out, "predicted_rows") == 30);
    CHECK(json_number(r.out, "throughput_mape") > fitted);
    // Each row's predicted task by step: the DLRM rows run the cuda path (prepare .. post are
    // its window), its kernels on the device.
    const std::size_t row1 = r.out.find("\"steps_ms\": {");
    REQUIRE(row1 != std::string::npos);
    CHECK(json_number(r.out, "device", row1) > 0);
    double task = 0;
    for (const std::string_view step :
         {"prepare", "buffers", "copy_in", "launch", "device", "sync", "copy_out", "post"}) {
        task += json_number(r.out, step, row1);
    }
    CHECK(task ==
          doctest::Approx(json_number(r.out, "predicted_latency_ms", r.out.find("\"rows\": [")))
              .epsilon(1e-9));
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "none", "--train", "1"});
    CHECK(r.status == 2);

    // Whole configurations held out: each batch size (graphs on and off) predicted by a fit on
    // the other 14 (10.2 % in throughput on 2026-12-01).
    r = perfcast_test::run_command(cli::validate_command, {"--deployments", dlrm_rows, "--knobs",
                                                           "op_launch_us,hbm_efficiency", "--by",
                                                           "batch", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "\"method\": \"by-batch\""));
    CHECK(json_number(r.out, "predicted_rows") == 30);
    CHECK(json_number(r.out, "throughput_mape") < 0.15);
    // Holding out every eager row leaves nothing that exercises the per-op launch: said so.
    r = perfcast_test::run_command(
        cli::validate_command,
        {"--deployments", dlrm_rows, "--knobs", "op_launch_us,hbm_efficiency", "--by", "options"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "op_launch_us: no measured figure moves"));
    r = perfcast_test::run_command(cli::validate_command, {"--deployments", dlrm_rows, "--knobs",
                                                           "op_launch_us", "--by", "colour"});
    CHECK(r.status == 2);

    // Leave-one-out: one fit per row, every row predicted.
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "op_launch_us"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "leave-one-out: each row predicted by a fit on the other 29"));
    CHECK(has(r.out, "graphs-off b2"));
    CHECK(has(r.out, "mean absolute error over the 30 predicted rows"));
}

TEST_CASE(
    "validate --deployments: NCF on an A100, its large batches priced in the inference's "
    "order in L2" *
    doctest::test_suite("heavy")) {
    // Rows 1 and 6 (fp16, the smallest and the largest batch) fitted, the other ten predicted:
    // 6.2 % in throughput and 6.1 % in latency with each op's L2 traffic from its place in the
    // inference (l2_sequence.hpp) and the lookups on PyTorch's index_select; 15.1 / 15.0 % with
    // neither, 10.9 % with the first alone, 7.5 % with the second alone (docs/validation.md,
    // "The inference's order in L2, and NCF's lookups").
    const std::string ncf_rows =
        std::string(PERFCAST_SOURCE_DIR) + "/tests/data/deployments/ncf_a100/rows.csv";
    const auto r = perfcast_test::run_command(
        cli::validate_command, {"--deployments", ncf_rows, "--knobs", "op_launch_us,hbm_efficiency",
                                "--train", "1,6", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(json_number(r.out, "predicted_rows") == 10);
    // Issue 11's goal: under 15 % on the predicted rows, in throughput and latency.
    CHECK(json_number(r.out, "throughput_mape") < 0.15);
    CHECK(json_number(r.out, "latency_mape") < 0.15);
    // fp16 at batch 65536: a working set of about 0.25 GB against the A100's 20 MiB of resident
    // L2, so its lookups and writes reach HBM. Priced by size, its 8-18 MB tensors sat in L2 and
    // the row came out 56 % too fast (27 % with the lookups on index_select alone); now 11 %. 20 %
    // is between the two.
    const std::size_t row4 = r.out.find("\"label\": \"fp16 b65536\"");
    REQUIRE(row4 != std::string::npos);
    const double err = json_number(r.out, "throughput_error", row4);
    CHECK(err > -0.20);
    CHECK(err < 0.20);
    // TF32 at batch 1048576: the lookups walk one element a thread (PyTorch's index_select), at
    // a rate that does not depend on the element's bytes. Priced as streams of rows, fp32 came
    // out twice fp16 and the row 27 % too slow; now 10.5 %. 20 % is between the two.
    const std::size_t row12 = r.out.find("\"label\": \"tf32 b1048576\"");
    REQUIRE(row12 != std::string::npos);
    const double tf32 = json_number(r.out, "throughput_error", row12);
    CHECK(tf32 > -0.20);
    CHECK(tf32 < 0.20);
}

TEST_CASE("calibrate --deployments writes a parameters file whatif reads back") {
    const std::string out_file = "perfcast_test_deployments_params.txt";
    auto r = perfcast_test::run_command(
        cli::calibrate_command,
        {"--deployments", dlrm_rows, "--knobs", "op_launch_us,hbm_efficiency", "-o", out_file});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "fitted 60 measured figures of 30 rows"));
    std::ifstream in(out_file);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(has(text.str(), "runtime.op_launch_us = "));
    CHECK(has(text.str(), "hbm_efficiency = "));

    r = perfcast_test::run_command(
        cli::whatif_command,
        {"--model", dlrm_model, "--chip", "a100-80gb-sxm", "--params", out_file, "--batch", "64",
         "--streams", "1", "--cube", "108", "--vector", "108", "--runtime-set", "launch=per-op",
         "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(perfcast_test::json_checker(r.out).valid());
    // The fitted launch reached the model: per-op launch over 23 kernels is what made the eager
    // rows 0.4-0.5 ms at small batches.
    const double window = json_number(r.out, "stress_window_ms");
    CHECK(window > 0.3);
    CHECK(window < 0.7);
    std::remove(out_file.c_str());
}

TEST_CASE("deployments commands: bad flags name themselves") {
    auto r = perfcast_test::run_command(cli::validate_command, {"--deployments", dlrm_rows});
    CHECK(r.status == 2);
    CHECK(has(r.err, "needs --knobs LIST"));
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "speed_us"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "speed_us"));
    CHECK(has(r.err, "op_launch_us"));  // the known names are listed
    r = perfcast_test::run_command(cli::validate_command, {"--deployments", dlrm_rows, "--knobs",
                                                           "op_launch_us", "--train", "1,31"});
    CHECK(r.status == 2);
    CHECK(has(r.err, "row 31 of 30"));
    // Two graph-launched rows: the graph launch and the synchronisation are each once per task,
    // inside the window and the cycle alike; no pair of such rows tells them apart.
    r = perfcast_test::run_command(cli::validate_command, {"--deployments", dlrm_rows, "--knobs",
                                                           "launch_us,sync_us", "--train", "1,2"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "cannot identify"));
    r = perfcast_test::run_command(cli::calibrate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "op_launch_us"});
    CHECK(r.status == 2);
    CHECK(has(r.err, "-o FILE"));
    r = perfcast_test::run_command(
        cli::validate_command, {"--deployments", "/nonexistent/rows.csv", "--knobs", "sync_us"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "/nonexistent/rows.csv"));
}

TEST_CASE("whatif --runtime, --runtime-set, --host-threads") {
    const std::vector<std::string> base{"--model", dlrm_model, "--chip",    "a100-80gb-sxm",
                                        "--batch", "64",       "--streams", "1",
                                        "--cube",  "108",      "--vector",  "108"};
    auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> all = base;
        all.insert(all.end(), extra.begin(), extra.end());
        std::vector<std::string_view> v(all.begin(), all.end());
        return perfcast_test::run_command(cli::whatif_command, v);
    };
    auto r = run({"--runtime", "cuda"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "window ms"));
    CHECK(has(r.out, "cycle ms"));
    r = run({"--runtime", "cuda", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(perfcast_test::json_checker(r.out).valid());
    CHECK(has(r.out, "\"runtime\": {"));
    const double window = json_number(r.out, "stress_window_ms");
    // A slower graph launch lengthens the timed window by the same amount (the launch is inside
    // it, one per task): +100 us, to within the printing's rounding.
    r = run({"--runtime", "cuda", "--runtime-set", "launch_us=100", "--format", "json"});
    REQUIRE(r.status == 0);
    const double slower = json_number(r.out, "stress_window_ms");
    CHECK(slower - window > 0.05);
    r = run({"--runtime", "cuda", "--host-threads", "1", "--format", "csv"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "stress_window_ms,cycle_ms"));
    r = run({"--runtime", "cuda", "--runtime-set", "speed=3"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "speed"));
    r = run({"--runtime", "cuda", "--runtime-set", "sync_us=5,sync_us=6"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--runtime-set': sync_us is given twice"));
    r = run({"--runtime", "tpu"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "tpu"));
    r = run({"--host-threads", "-1"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "--host-threads"));
}

TEST_CASE("whatif --chips-per-card: the card's streams spread over its chips") {
    auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> all{"--model", dlrm_model, "--chip", "a100-80gb-sxm", "--batch",
                                     "64",      "--cube",   "108",    "--vector",      "108"};
        all.insert(all.end(), extra.begin(), extra.end());
        std::vector<std::string_view> v(all.begin(), all.end());
        return perfcast_test::run_command(cli::whatif_command, v);
    };
    auto r = run({"--streams", "2", "--chips-per-card", "2"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "on a card of 2 x a100-80gb-sxm: 1 deployments"));
    CHECK(has(r.out, "of a chip's 80 GiB"));
    // Two streams, one on each chip, against two time-sharing one chip: more QPS, at most
    // twice one stream's (the link is still shared); the JSON says the card's chips.
    r = run({"--streams", "2", "--chips-per-card", "2", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(perfcast_test::json_checker(r.out).valid());
    CHECK(json_number(r.out, "chips_per_card") == 2.0);
    const double two_chips = json_number(r.out, "qps");
    r = run({"--streams", "2", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(json_number(r.out, "chips_per_card") == 1.0);
    CHECK(two_chips > json_number(r.out, "qps"));
    r = run({"--streams", "1", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(two_chips <= 2 * json_number(r.out, "qps") * (1 + 1e-6));  // 1e-6: JSON's digits
    // Serving on the card: its header says the chips too.
    r = run({"--streams", "2", "--chips-per-card", "2", "--qps", "1000", "--requests", "2000"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "on a card of 2 x a100-80gb-sxm, batch sizes"));
    // --gains: the deployment says its chips.
    r = run({"--streams", "2", "--chips-per-card", "2", "--gains"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "2 x 108/108 b64 on 2 chips"));
    CHECK(has(r.out, "of a chip's 80 GiB"));
    for (const std::string bad : {"0", "9", "two", ""}) {
        r = run({"--chips-per-card", bad});
        CAPTURE(bad);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "option '--chips-per-card': '" + bad +
                             "' is not a chip count in [1, 8] (2 for an Atlas 300I Duo)"));
    }
}

/// A deployments file in the temporary folder, `file`: rows of four instances of the scenario's
/// model at batch 64 on the 910B1 with `split` ("6,12"), measured at 8e5 samples/s, differing in
/// `column`, one row per value of `values` ("" leaves it empty); returns its path.
std::string scenario_rows(std::string_view file, std::string_view split, std::string_view column,
                          const std::vector<std::string_view>& values) {
    const std::string model =
        std::string(PERFCAST_SOURCE_DIR) + "/tests/data/models/ctr_ranking.model";
    const std::string path = (std::filesystem::temp_directory_path() / file).string();
    std::ofstream f(path);
    f << "chip,model,instances,batch,cube,vector," << column << ",samples_per_s\n";
    for (const std::string_view v : values)
        f << "910B1," << model << ",4,64," << split << "," << v << ",8e5\n";
    return path;
}

/// `validate --deployments path --knobs launch_us --by column` holds out each of the file's
/// `configurations` whole.
void check_holdout_by(const std::string& path, std::string_view column, int configurations) {
    const auto r = perfcast_test::run_command(
        cli::validate_command, {"--deployments", path, "--knobs", "launch_us", "--by", column});
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "hold-out by " + std::string(column) + ": each of the " +
                         std::to_string(configurations) +
                         " configurations predicted by a fit on the others"));
}

TEST_CASE("deployments: a chips_per_card column spreads a row's instances over its chips") {
    const std::string path =
        scenario_rows("perfcast_chips_rows.csv", "24,48", "chips_per_card", {"", "2", "9"});
    auto r = perfcast_test::run_command(cli::validate_command,
                                        {"--deployments", path, "--knobs", "none"});
    CHECK(r.status != 0);
    CHECK(has(r.err, "perfcast_chips_rows.csv:4:"));
    CHECK(has(r.err, "chips_per_card is invalid, expected a whole number in 1..8: \"9\""));
    (void)scenario_rows("perfcast_chips_rows.csv", "24,48", "chips_per_card", {"", "2"});
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", path, "--knobs", "none", "--format", "json"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "\"deployment\": \"4 x 24/48 b64\""));
    CHECK(has(r.out, "\"deployment\": \"4 x 24/48 b64 on 2 chips\""));
    // Four full-chip instances time-share one chip; on two chips, two a chip: more throughput.
    const std::size_t second = r.out.find("on 2 chips");
    REQUIRE(second != std::string::npos);
    CHECK(json_number(r.out, "predicted_samples_per_s", second) >
          1.2 * json_number(r.out, "predicted_samples_per_s"));
    check_holdout_by(path, "chips_per_card", 2);
    std::remove(path.c_str());
}

TEST_CASE("whatif --gains: one deployment, each change ranked") {
    auto r = perfcast_test::run_command(
        cli::whatif_command, {"--model", dlrm_model, "--chip", "a100-80gb-sxm", "--batch", "64",
                              "--streams", "1", "--gains"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "deployment: dlrm_dle_pyt on a100-80gb-sxm, 1 x 108/108 b64"));
    CHECK(has(r.out, "copies=aggregated"));
    CHECK(has(r.out, "memory=pinned"));
    CHECK(has(r.out, "instances 1 -> 2"));
    CHECK(has(r.out, "\nsteps of one task: prepare "));
    r = perfcast_test::run_command(
        cli::whatif_command, {"--model", dlrm_model, "--chip", "a100-80gb-sxm", "--batch", "64",
                              "--gains", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "\"change\": \"memory=pinned\""));
    // The steps of one task: prepare .. post are the window the cuda preset times (the task),
    // each written as its shortest round trip: the sum within 1e-9 of it.
    const std::size_t steps = r.out.find("\"steps_ms\": {");
    REQUIRE(steps != std::string::npos);
    double task = 0;
    for (const std::string_view step :
         {"prepare", "buffers", "copy_in", "launch", "device", "sync", "copy_out", "post"}) {
        const double t = perfcast_test::json_number(r.out, step, steps);
        CHECK(t >= 0);
        task += t;
    }
    const double window = perfcast_test::json_number(r.out, "window_ms");
    CHECK(task == doctest::Approx(window).epsilon(1e-9));
    CHECK(perfcast_test::json_number(r.out, "device", steps) > 0);
    CHECK(perfcast_test::json_number(r.out, "copy_in", steps) > 0);  // its input copies
    // Without a runtime path no steps: the kernels alone.
    const auto kernels = perfcast_test::run_command(
        cli::whatif_command, {"--batch", "64", "--streams", "1", "--gains", "--format", "json"});
    REQUIRE(kernels.status == 0);
    CHECK(has(kernels.out, "\"steps_ms\": null"));
    CHECK(has(kernels.out, "\"lock_wait_ms\": null"));
    const auto kernels_table = perfcast_test::run_command(
        cli::whatif_command, {"--batch", "64", "--streams", "1", "--gains"});
    REQUIRE(kernels_table.status == 0);
    CHECK(has(kernels_table.out, "runtime path: none (kernels only)"));
    CHECK_FALSE(has(kernels_table.out, "steps of one task"));
    // The cuda preset already launches a graph: not offered.
    CHECK_FALSE(has(r.out, "\"change\": \"launch=graph\""));
    r = perfcast_test::run_command(
        cli::whatif_command, {"--model", dlrm_model, "--chip", "a100-80gb-sxm", "--batch", "64",
                              "--runtime-set", "launch=per-op", "--gains", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(perfcast_test::json_checker(r.out).valid());
    CHECK(has(r.out, "\"change\": \"launch=graph\""));
    r = perfcast_test::run_command(cli::whatif_command,
                                   {"--model", dlrm_model, "--batch", "16,64", "--gains"});
    CHECK(r.status == 2);
    CHECK(has(r.err, "--gains takes one value"));
    r = perfcast_test::run_command(cli::whatif_command, {"--qps", "100", "--gains"});
    CHECK(r.status == 2);
    CHECK(has(r.err, "'--qps' does not apply to --gains"));
}

TEST_CASE("whatif: a runtime line of settings alone; copy settings for a model that copies none") {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "perfcast_runtime_line";
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& text) {
        const std::string path = (dir / name).string();
        std::ofstream(path) << text;
        return path;
    };
    const std::vector<std::string> flags{"--batch", "16", "--streams", "1", "--format", "json"};
    const auto whatif = [&](std::vector<std::string> args) {
        args.insert(args.end(), flags.begin(), flags.end());
        std::vector<std::string_view> v(args.begin(), args.end());
        return perfcast_test::run_command(cli::whatif_command, v);
    };
    // `runtime sync_us=5` (no preset: settings over none) is the model's runtime, as the
    // deployments rows read it; `runtime` alone is none.
    const auto settings =
        whatif({"--model", write("s.model", "runtime sync_us=5\nmatmul B,64;64,32 fp16\n")});
    REQUIRE(settings.status == 0);
    CHECK(has(settings.out, "\"sync_us\": \"5\""));
    // `runtime` alone is none: the same answer as no runtime line.
    const auto bare = whatif({"--model", write("b.model", "runtime\nmatmul B,64;64,32 fp16\n")});
    const auto without = whatif({"--model", write("b.model", "matmul B,64;64,32 fp16\n")});
    CHECK(bare.status == 0);
    CHECK(bare.out == without.out);
    // Copy settings where nothing is copied: the model's line names its file, line and column
    // (exit 1); the flag is a usage error (exit 2).
    const std::string copies =
        write("c.model", "runtime acl copies=aggregated\nmatmul B,64;64,32 fp16\n");
    const auto line = whatif({"--model", copies});
    CHECK(line.status == cli::exit_failure);
    CHECK(has(line.err, copies + ":1:13: runtime setting = \"copies=aggregated\", expected no "
                                 "copy setting in a model that declares no input or output"));
    // The deployments rows read the model file as whatif does: the same error.
    const std::string rows = write(
        "rows.csv", "chip,model,instances,batch,samples_per_s\n910B1," + copies + ",1,16,7000\n");
    const auto read = perfcast_test::run_command(cli::validate_command,
                                                 {"--deployments", rows, "--knobs", "none"});
    CHECK(read.status == cli::exit_failure);
    CHECK(has(read.err, copies + ":1:13: runtime setting"));
    const auto flag = whatif({"--model", write("n.model", "runtime acl\nmatmul B,64;64,32 fp16\n"),
                              "--runtime-set", "memory=pinned"});
    CHECK(flag.status == cli::exit_usage);
    CHECK(has(flag.err,
              "option '--runtime-set': memory=pinned sets how copies are made, but "
              "'n' has no input or output transfer"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("deployments: a knob fitted to its bound is reported, --knobs errors are usage errors") {
    // Fitted with the per-op launch, the synchronisation goes to its 1e-3 us floor, where it
    // moves no figure: that is the fit's answer ("at its bound"), not rows that fail to
    // exercise it (it moves them at the start).
    auto r = perfcast_test::run_command(
        cli::validate_command,
        {"--deployments", dlrm_rows, "--knobs", "op_launch_us,sync_us", "--train", "1-30"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "(at its bound)"));
    CHECK(has(r.out, "throughput (no row predicted: every row was fitted)"));
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "launchus"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--knobs': 'launchus' is not a knob"));
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "launch_us,launch_us"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "'launch_us' is named twice"));
    r = perfcast_test::run_command(
        cli::validate_command, {"--deployments", dlrm_rows, "--knobs", "none", "--chip", "910B3"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--chip' does not apply with --deployments: each row names its chip"));
    r = perfcast_test::run_command(
        cli::calibrate_command,
        {"--deployments", dlrm_rows, "--knobs", "none", "-o", "/tmp/perfcast_none.txt"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "none fits nothing"));
}

TEST_CASE("whatif --gains refuses the ranking's and serving's flags it would ignore") {
    for (const std::vector<std::string>& extra : {std::vector<std::string>{"--top", "2"},
                                                  {"--rank-by", "throughput"},
                                                  {"--max-batch", "64"},
                                                  {"--seed", "3"},
                                                  {"--replay", "recorded.csv"}}) {
        std::vector<std::string> all{"--model", dlrm_model, "--chip", "a100-80gb-sxm",
                                     "--batch", "64",       "--gains"};
        all.insert(all.end(), extra.begin(), extra.end());
        std::vector<std::string_view> v(all.begin(), all.end());
        const auto r = perfcast_test::run_command(cli::whatif_command, v);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "option '" + extra.front() + "' does not apply to --gains"));
    }
}

TEST_CASE("whatif --gains: a value past the card mode's bounds is a usage error, never narrowed") {
    const auto gains = [](std::string_view flag, std::string_view value) {
        return perfcast_test::run_command(cli::whatif_command,
                                          {"--batch", "64", flag, value, "--gains"});
    };
    // The batch: the card mode's bound (max_batch_size) and message, not a ranking of a
    // 1e11-sample task.
    const std::string batch_error =
        "option '--batch': 99999999999 is not a batch size in [1, 1048576]";
    auto r = perfcast_test::run_command(cli::whatif_command,
                                        {"--batch", "99999999999", "--streams", "1", "--gains"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, batch_error));
    CHECK(r.out.empty());
    r = perfcast_test::run_command(cli::whatif_command, {"--batch", "99999999999"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, batch_error));  // the card mode's, word for word
    // 2^32 + 1 streams once ran as 1, 2^32 as 0 (an internal error, exit 1), 2^32 + 12 cube
    // cores as 12: each value is checked whole, before it narrows to an int.
    struct refused {
        std::string flag;
        std::string value;
        std::string range;
    };
    for (const refused& c : std::vector<refused>{
             {"--streams", "4294967297", "is not a stream count per card in [1, 1024]"},
             {"--streams", "4294967296", "is not a stream count per card in [1, 1024]"},
             {"--streams", "1025", "is not a stream count per card in [1, 1024]"},
             {"--cube", "4294967308", "is not a limit of ascend910b1's cube cores in [1, 24]"},
             {"--cube", "25", "is not a limit of ascend910b1's cube cores in [1, 24]"},
             {"--vector", "4294967344",
              "is not a limit of ascend910b1's vector cores in [1, 48]"}}) {
        CAPTURE(c.flag);
        CAPTURE(c.value);
        r = gains(c.flag, c.value);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "option '" + c.flag + "': " + c.value + " " + c.range));
        CHECK(r.out.empty());
    }
    // At the bounds it runs.
    r = gains("--cube", "24");
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "1 x 24/48 b64"));
}

TEST_CASE("deployments --by: one configuration however its options or runtime are written") {
    // The same two options in either order are one configuration, as are a number written two
    // ways; a blank runtime cell is the model file's (the scenario's has none: "none").
    const std::string options =
        scenario_rows("perfcast_by_options_rows.csv", "6,12", "options",
                      {"copies=aggregated memory=pinned", "memory=pinned copies=aggregated", "",
                       "sync_us=5", "sync_us=5.0"});
    check_holdout_by(options, "options", 3);
    std::remove(options.c_str());
    const std::string runtime =
        scenario_rows("perfcast_by_runtime_rows.csv", "6,12", "runtime", {"", "none", "acl"});
    check_holdout_by(runtime, "runtime", 2);
    std::remove(runtime.c_str());
}

TEST_CASE("deployments: a fold's fit failure names the configuration it held out") {
    // op_launch_us is identifiable on all 30 DLRM rows (the graphs-off rows launch op by op),
    // not on the graphs-on rows alone: the fold that holds out the 15 graphs-off rows fails,
    // and says so.
    auto r = perfcast_test::run_command(
        cli::validate_command,
        {"--deployments", dlrm_rows, "--knobs", "op_launch_us", "--by", "options"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err,
              "perfcast::validate_deployments_by_group: holding out configuration "
              "'launch=per-op' (15 rows), the fit on the other 15 rows failed: "
              "perfcast::fit_deployments: the rows cannot identify:\n  op_launch_us: no "
              "measured figure moves"));
    r = perfcast_test::run_command(cli::validate_command,
                                   {"--deployments", dlrm_rows, "--knobs", "op_launch_us"});
    CHECK(r.status == cli::exit_ok);  // every leave-one-out fold keeps graphs-off rows
}

TEST_CASE("deployments: a row's ONNX model is imported by the command, refused by the library") {
    const std::string onnx = std::string(PERFCAST_SOURCE_DIR) + "/tests/data/onnx/deepfm.onnx";
    const std::string rows_text =
        "chip,model,instances,batch,samples_per_s\n910B1," + onnx + ",1,16,7000\n";
    // The headers link no ONNX: the default loader names the graph and the way round.
    std::string message;
    try {
        (void)io::parse_deployments(rows_text, ".", "rows.csv");
    } catch (const perfcast::error& e) {
        message = e.what();
    }
    CHECK(has(message, "rows.csv"));
    CHECK(has(message, "an ONNX graph; the library reads model files (import it first"));
    // The command imports it as whatif --model does (or names the missing package).
    const std::string path =
        (std::filesystem::temp_directory_path() / "perfcast_onnx_rows.csv").string();
    std::ofstream(path) << rows_text;
    const auto r = perfcast_test::run_command(cli::validate_command,
                                              {"--deployments", path, "--knobs", "none"});
#if PERFCAST_HAVE_ONNX
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "1 x 24/48 b16"));
#else
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "libonnx-dev"));
#endif
    std::remove(path.c_str());
}

TEST_CASE("deployments: rows that differ in host threads read apart and group by them") {
    const std::string path =
        scenario_rows("perfcast_threads_rows.csv", "6,12", "host_threads", {"", "2", "1"});
    auto r = perfcast_test::run_command(cli::validate_command,
                                        {"--deployments", path, "--knobs", "none"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "4 x 6/12 b64 threads=2"));
    CHECK(has(r.out, "4 x 6/12 b64 threads=1"));
    check_holdout_by(path, "host_threads", 3);
    std::remove(path.c_str());
}

TEST_CASE("deployments: an implausible measured row is warned of, by its line, and still used") {
    const std::string model =
        std::string(PERFCAST_SOURCE_DIR) + "/tests/data/models/ctr_ranking.model";
    const std::string path =
        (std::filesystem::temp_directory_path() / "perfcast_implausible_rows.csv").string();
    // Row 3: 4 loops of batch 64 at 0.5 ms deliver at most 512,000 samples/s; row 4's P99 is
    // below its mean.
    std::ofstream(path) << "chip,model,instances,batch,samples_per_s,latency_ms,p99_ms\n"
                        << "910B1," << model << ",4,64,4e5,0.5,0.9\n"
                        << "910B1," << model << ",4,64,8e5,0.5,0.9\n"
                        << "910B1," << model << ",4,64,4e5,0.5,0.4\n";
    const std::string params =
        (std::filesystem::temp_directory_path() / "perfcast_implausible.params").string();
    for (const auto& r :
         {perfcast_test::run_command(cli::validate_command,
                                     {"--deployments", path, "--knobs", "none"}),
          perfcast_test::run_command(cli::calibrate_command, {"--deployments", path, "--knobs",
                                                              "launch_us", "-o", params})}) {
        CHECK(r.status == cli::exit_ok);
        CHECK(has(r.err, "perfcast: warning: " + path +
                             ":3: samples_per_s 800000 is 1.56x what 4 closed loop(s) of batch 64 "
                             "deliver at latency 0.5 ms"));
        CHECK(has(r.err, "perfcast: warning: " + path + ":4: p99 0.4 ms is below the mean"));
        CHECK(!has(r.err, path + ":2:"));
    }
    std::remove(params.c_str());
    std::remove(path.c_str());
}

}  // namespace test_cli_deployments
