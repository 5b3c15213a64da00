// The command against the slips a new user makes (found by trying it as one): a model file where
// a profile goes, a chip that did not run the profile, one file as both fit and test, a profile
// of two shapes calibrated, a flag's value out of range, a transfer that is all setup.
#include <doctest/doctest.h>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"

#include <filesystem>
#include <string>
#include <string_view>

using namespace perfcast;
using perfcast_test::run_command;

namespace {

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

const std::string data = PERFCAST_SOURCE_DIR "/tests/data/";
// 20 x 1800 MHz rows (the 910B3): 8 AI_VECTOR_CORE Adds of 2 shapes, 21 rows with cube cycles.
const std::string b3 = data + "profiles/kernel_details_910B3_matmul.csv";

}  // namespace

TEST_CASE("cli slips: whatif with a model file where the profile goes names --model") {
    for (const std::string& m : {data + "models/ctr_ranking.model", data + "onnx/dlrm.ONNX"}) {
        const auto r = run_command(cli::whatif_command, {m});
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "'" + m + "' looks like a model, not a profile: give it as --model " + m));
    }
}

TEST_CASE("cli slips: a --chip that the profile's rows contradict is noted, a right one is not") {
    const auto wrong = run_command(cli::report_command, {b3, "--chip", "h100"});
    CHECK(wrong.status == cli::exit_ok);
    CHECK(has(wrong.err, "perfcast: note: " + b3 +
                             ": the profile's cube_utilization(%) column: "
                             "cube cores x clock = 36000 cycles/us"));
    CHECK(has(wrong.err, "but chip h100-sxm has 132 x 1830 MHz = 241560"));
    // 910B1: 24 x 1850 = 44400, 23 % off; validate says it too.
    const auto b1 = run_command(cli::validate_command, {"--test", b3, "--chip", "910B1"});
    CHECK(has(b1.err, "but chip ascend910b1 has 24 x 1850 MHz = 44400"));
    const auto right = run_command(cli::report_command, {b3, "--chip", "910B3"});
    CHECK(right.status == cli::exit_ok);
    CHECK_FALSE(has(right.err, "note:"));
}

TEST_CASE("cli slips: validate's positional profile without --holdout, one file fit and test") {
    const auto loose = run_command(cli::validate_command, {b3, "--chip", "910B3"});
    CHECK(loose.status == cli::exit_usage);
    CHECK(has(loose.err, "a PROFILE goes with --holdout SHARE"));
    const auto same =
        run_command(cli::validate_command, {"--fit", b3, "--test", b3, "--chip", "910B3"});
    CHECK(same.status == cli::exit_ok);
    CHECK(has(same.err, "warning: --fit and --test name the same file"));
    const auto zero = run_command(cli::validate_command, {b3, "--holdout", "0", "--chip", "910B3"});
    CHECK(zero.status == cli::exit_usage);
    CHECK(has(zero.err, "--holdout 0: expected the share of rows held out, in (0, 1)"));
}

TEST_CASE("cli slips: calibrating on a few distinct ops warns; over its own profile is refused") {
    const std::string out =
        (std::filesystem::temp_directory_path() / "perfcast_slips.params").string();
    const auto few = run_command(cli::calibrate_command,
                                 {b3, "--chip", "910B3", "--tasks", "AI_VECTOR_CORE", "-o", out});
    CHECK(few.status == cli::exit_ok);
    CHECK(has(few.err,
              "warning: the 8 rows fitted hold 2 distinct ops (type, input shapes and dtypes) "
              "for the fit's 14 shared parameters"));
    CHECK(std::filesystem::exists(out));  // written all the same
    std::filesystem::remove(out);
    const std::string copy =
        (std::filesystem::temp_directory_path() / "perfcast_slips_profile.csv").string();
    std::filesystem::copy_file(b3, copy, std::filesystem::copy_options::overwrite_existing);
    const auto over = run_command(cli::calibrate_command, {copy, "--chip", "910B3", "-o", copy});
    CHECK(over.status == cli::exit_usage);
    CHECK(has(over.err, "is the input file '" + copy + "'"));
    CHECK(std::filesystem::file_size(copy) == std::filesystem::file_size(b3));
    std::filesystem::remove(copy);
}

TEST_CASE("cli slips: a transfer that is all setup is overhead-bound; dtypes in any case") {
    const auto none = run_command(cli::op_command, {"--transfer", "0B", "--format", "json"});
    CHECK(has(none.out, "\"bound\": \"overhead\""));
    const auto big = run_command(cli::op_command, {"--transfer", "64MiB", "--format", "json"});
    CHECK(has(big.out, "\"bound\": \"link\""));
    const auto upper = run_command(
        cli::op_command, {"--elementwise", "1000", "--dtype", "FP16", "--format", "json"});
    CHECK(upper.status == cli::exit_ok);
    CHECK(has(upper.out, "\"dtype\": \"fp16\""));
}

TEST_CASE("cli slips: --svg over the profile or the model is refused; counts in exponent form") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "perfcast_slips";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string profile = (dir / "p.csv").string();
    const std::string model = (dir / "m.model").string();
    std::filesystem::copy_file(b3, profile);
    std::filesystem::copy_file(data + "models/ctr_ranking.model", model);
    const auto report =
        run_command(cli::report_command, {profile, "--chip", "910B3", "--svg", profile});
    CHECK(report.status == cli::exit_usage);
    CHECK(has(report.err, "--svg " + profile + " is the input file"));
    const auto whatif = run_command(cli::whatif_command, {"--model", model, "--svg", model});
    CHECK(whatif.status == cli::exit_usage);
    CHECK(std::filesystem::file_size(profile) == std::filesystem::file_size(b3));
    CHECK(std::filesystem::file_size(model) ==
          std::filesystem::file_size(data + "models/ctr_ranking.model"));
    std::filesystem::remove_all(dir);
    // --requests 5e3 is 5000 (a whole number in exponent form); 5.5e0 is no count.
    const auto e5 = run_command(cli::whatif_command,
                                {"--streams", "2", "--cube", "12", "--vector", "24", "--max-batch",
                                 "16", "--qps", "1000", "--requests", "5e3", "--format", "json"});
    CHECK(e5.status == cli::exit_ok);
    const auto frac = run_command(cli::whatif_command,
                                  {"--max-batch", "16", "--qps", "1000", "--requests", "5.5e0"});
    CHECK(frac.status == cli::exit_usage);
    CHECK(has(frac.err, "option '--requests': '5.5e0' is not a whole number"));
}
