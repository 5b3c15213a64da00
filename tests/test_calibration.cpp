// Calibration, hold-out split, validation report, the parameters file, and the op / validate /
// calibrate commands.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/perfcast/cmd_op.hpp"
#include "../examples/perfcast/cmd_validate.hpp"
#include "cli_support.hpp"

#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace perfcast;

namespace {
const std::string profile_910b1 =
    std::string(PERFCAST_SOURCE_DIR) + "/tests/data/profiles/kernel_details_910B1_train.csv";

int run(const cli::command& c, std::vector<std::string_view> args, std::string& out,
        std::string& err) {
    auto r = perfcast_test::run_command(c, std::move(args));
    out = std::move(r.out);
    err = std::move(r.err);
    return r.status;
}

std::string key(const profile::kernel_row& r) {
    std::string k = r.op_type + "|";
    for (const auto& s : r.input_shapes) k += profile::to_string(s);
    k += "|";
    for (const auto& t : r.input_types) k += t.text + ";";
    return k;
}
}  // namespace

TEST_CASE("hold-out keeps whole groups on one side and is reproducible") {
    const auto rows = profile::read_kernel_details_file(profile_910b1).rows;
    const auto a = profile::split_holdout(rows, 0.3, 7);
    const auto b = profile::split_holdout(rows, 0.3, 7);
    const auto c = profile::split_holdout(rows, 0.3, 8);
    CHECK(a.fit.size() + a.test.size() == rows.size());
    // About 30 %: whole groups overshoot by at most one group (the largest has < 60 rows).
    CHECK(a.test.size() >= rows.size() * 3 / 10);
    CHECK(a.test.size() < rows.size() * 3 / 10 + 60);
    std::set<std::string> fit_keys;
    for (const auto& r : a.fit) fit_keys.insert(key(r));
    for (const auto& r : a.test) CHECK(fit_keys.count(key(r)) == 0);
    CHECK(a.test.size() == b.test.size());
    for (std::size_t i = 0; i < a.test.size(); ++i) CHECK(a.test[i].line == b.test[i].line);
    bool differs = a.test.size() != c.test.size();
    for (std::size_t i = 0; !differs && i < a.test.size(); ++i)
        differs = a.test[i].line != c.test[i].line;
    CHECK(differs);
    CHECK_THROWS_AS((void)profile::split_holdout(rows, 1.5, 1), perfcast::error);
}

TEST_CASE("calibration lowers the fit error and keeps the GEMMs right") {
    const chip& c = chips::ascend910b1;
    const auto rows = profile::read_kernel_details_file(profile_910b1).rows;
    const auto split = profile::split_holdout(rows, 0.3, 1);
    // The vector efficiency fitted, not chosen: the choice is test_context.cpp's subject, and
    // its cross-validation costs six more fits.
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::fit;
    const auto res = profile::calibrate(c, profile::measured_ops(c, split.fit), {}, opt);
    CHECK(res.rows > 200);
    CHECK(res.log_error_after < res.log_error_before);
    CHECK_NOTHROW((void)validate(res.fitted.params));
    // Held out, calibrated beats uncalibrated on the AI core rows (the figures themselves are in
    // docs/validation.md; they are far from the 15 % target, see there).
    const auto ai = [](const profile::kernel_row& r) {
        return r.task == profile::task_type::ai_core ||
               r.task == profile::task_type::ai_vector_core;
    };
    const auto before = profile::evaluate(c, split.test, profile::calibration{}, ai);
    const auto after = profile::evaluate(c, split.test, res.fitted, ai);
    CHECK(after.overall.rows == before.overall.rows);
    CHECK(after.overall.mape < before.overall.mape);
    // Fitted on every row, the 13 GEMMs stay within 10 % (uncalibrated: within 8 %).
    const auto all = profile::calibrate(c, profile::measured_ops(c, rows), {}, opt);
    const auto gemms = profile::evaluate(c, rows, all.fitted, [](const profile::kernel_row& r) {
        return profile::is_gemm_type(r.op_type);
    });
    CHECK(gemms.overall.rows == 13);
    CHECK(gemms.overall.max_ape < 0.10);
}

TEST_CASE("calibration without mappable rows is an error") {
    CHECK_THROWS_WITH_AS((void)profile::calibrate(chips::ascend910b1, {}),
                         doctest::Contains("rows"), perfcast::error);
}

TEST_CASE("parameters file: round trip and errors with line, column and key") {
    profile::calibration cal;
    cal.params.cube_efficiency = 0.75;
    cal.params.head[1] = {true, duration{1.25, units::us}, duration{0.05, units::us}};
    cal.work_factor["LayerNormV3"] = 2.5;
    cal.params.first_run_launch = duration{0.25, units::us};
    cal.params.first_run_per_core = duration{0.125, units::us};
    std::ostringstream out;
    io::write_params(out, cal, "test");
    const auto back = io::read_params_string(out.str());
    CHECK(back.params == cal.params);
    CHECK(back.factor_of("LayerNormV3") == 2.5);
    CHECK(back.factor_of("Add") == 1.0);

    const auto message = [](std::string_view text) {
        try {
            (void)io::read_params_string(text);
        } catch (const perfcast::error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message("overlap = 0.5\nbogus = 1\n").find("<string>:2:1: unknown key 'bogus'") !=
          std::string::npos);
    CHECK(message("overlap = abc\n").find(":1:11: key 'overlap': expected a number") !=
          std::string::npos);
    CHECK(message("overlap = 0.5\noverlap = 0.6\n").find("given twice") != std::string::npos);
    CHECK(message("overlap = 1.5\n").find("overlap = 1.5") != std::string::npos);
    CHECK(message("no equals sign\n").find("expected 'key = value'") != std::string::npos);
    CHECK(message("work.Add = -1\n").find("expected a factor > 0") != std::string::npos);
    CHECK(message("cube_efficiency = nan\n").find("expected a number") != std::string::npos);
    CHECK(message("# only a comment\n\n") == "no error");
    CHECK(message("first_run.per_core_us = -1\n").find("first_run_per_core") !=
          std::string::npos);
}

TEST_CASE("perfcast op: json fields, transfer, --params and bad input") {
    std::string out, err;
    REQUIRE(run(cli::op_command,
                {"--chip", "910B1", "--cube", "12", "--matmul", "128,300,32", "--batch", "8",
                 "--dtype", "fp16", "--format", "json"},
                out, err) == 0);
    for (const char* f : {"\"latency_us\"", "\"cores\": 12", "\"core_time_us\"", "\"head_us\"",
                          "\"compute_us\"", "\"memory_us\"", "\"bound\"", "\"utilization\"",
                          "\"bytes\"", "\"flops\""})
        CHECK(out.find(f) != std::string::npos);
    REQUIRE(run(cli::op_command,
                {"--chip", "910B1", "--vector", "24", "--elementwise", "4000", "--inputs", "2",
                 "--dtype", "int64"},
                out, err) == 0);
    CHECK(out.find("int64") != std::string::npos);
    REQUIRE(run(cli::op_command, {"--transfer", "4MiB", "--link", "pcie5x4", "--format", "json"},
                out, err) == 0);
    CHECK(out.find("\"bound\": \"link\"") != std::string::npos);
    // DIGEST G's Equal between broadcast shapes, on the case's 10 vector cores.
    REQUIRE(run(cli::op_command,
                {"--shapes", "1,4000;400,1", "--dtype", "int64", "--out-dtype", "bool",
                 "--vector", "10", "--format", "json"},
                out, err) == 0);
    CHECK(out.find("\"cores\": 10") != std::string::npos);
    CHECK(out.find("\"bytes\": 1635200") != std::string::npos);  // 4400 x 8 B in, 1.6e6 x 1 B out
    CHECK(run(cli::op_command, {"--matmul", "1,2"}, out, err) == 2);
    CHECK(run(cli::op_command, {"--matmul", "0,2,3"}, out, err) == 1);
    CHECK(err.find("m = 0") != std::string::npos);
    CHECK(run(cli::op_command, {"--cube", "25", "--matmul", "64,64,64"}, out, err) == 1);
    CHECK(err.find("limit (cube cores) = 25") != std::string::npos);
    CHECK(run(cli::op_command, {"--transfer", "4MiB", "--link", "pcie9x4"}, out, err) == 1);
    CHECK(run(cli::op_command, {"--elementwise", "10", "--dtype", "fp17"}, out, err) == 1);
    CHECK(err.find("fp17") != std::string::npos);
    CHECK(run(cli::op_command, {"--frobnicate"}, out, err) == 2);

    // --params changes the prediction.
    const std::string path = std::string(PERFCAST_SOURCE_DIR) + "/tests/data/params_slow.txt";
    std::string base, slow;
    REQUIRE(run(cli::op_command, {"--elementwise", "100000", "--format", "json"}, base, err) == 0);
    REQUIRE(run(cli::op_command,
                {"--elementwise", "100000", "--format", "json", "--params", path.c_str()}, slow,
                err) == 0);
    CHECK(base != slow);
}

TEST_CASE("perfcast validate and calibrate on the 910B1 profile") {
    std::string out, err;
    REQUIRE(run(cli::validate_command,
                {"--chip", "910B1", "--test", profile_910b1.c_str(), "--types",
                 "MatMul,BatchMatMul", "--format", "json"},
                out, err) == 0);
    for (const char* f : {"\"rows\": 13", "\"mape\"", "\"median_ape\"", "\"p90_ape\"",
                          "\"by_type\"", "\"MatMul\"", "\"BatchMatMul\""})
        CHECK(out.find(f) != std::string::npos);
    REQUIRE(run(cli::validate_command,
                {"--chip", "910B1", profile_910b1.c_str(), "--holdout", "0.3", "--seed", "2"}, out,
                err) == 0);
    CHECK(out.find("fitted on") != std::string::npos);
    CHECK(out.find("cross-validated MAPE") != std::string::npos);
    CHECK(out.find("MAPE") != std::string::npos);
    CHECK(run(cli::validate_command, {"--chip", "910B1"}, out, err) == 2);
    CHECK(run(cli::validate_command, {"--chip", "nope", "--test", "x.csv"}, out, err) == 1);
    CHECK(err.find("chip = nope") != std::string::npos);
    CHECK(run(cli::validate_command, {"--chip", "910B1", "--test", "/nonexistent.csv"}, out,
              err) == 1);

    const std::string params = "perfcast_test_params.txt";
    REQUIRE(run(cli::calibrate_command,
                {profile_910b1.c_str(), "--chip", "910B1", "-o", params.c_str(),
                 "--vector-efficiency", "keep"},
                out, err) == 0);
    CHECK(out.find("vector efficiency kept") != std::string::npos);
    CHECK(run(cli::calibrate_command,
              {profile_910b1.c_str(), "--chip", "910B1", "-o", params.c_str(),
               "--vector-efficiency", "sometimes"},
              out, err) == 2);
    const auto cal = io::read_params_file(params);
    CHECK(cal.params.head_of(engine::cube).set);
    CHECK_FALSE(cal.work_factor.empty());
    std::remove(params.c_str());
}
