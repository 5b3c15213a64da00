// The measurement spread of a scored profile (error_report::repeat_floor): repeats of one op
// (same type, input shapes and dtypes) predicted by their median measurement, the floor under
// any one-number-per-op prediction. Known answers on written rows, then the command's report.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <string>

using namespace perfcast;

TEST_CASE("repeat floor: each row against its group's median measurement") {
    // Three Adds of one shape measured 1, 1 and 2 us (median 1: APEs 0, 0 and |1/2 - 1| = 0.5),
    // one Add of another shape (alone: 0), one Mul of the first shape (another type: alone).
    const std::string text =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,Output "
        "Shapes,Output Data Types\n"
        "Add,AI_VECTOR_CORE,1,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Add,AI_VECTOR_CORE,2,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Add,AI_VECTOR_CORE,1,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Add,AI_VECTOR_CORE,3,8,\"8192;8192\",FLOAT;FLOAT,\"8192\",FLOAT\n"
        "Mul,AI_VECTOR_CORE,5,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n";
    const profile::kernel_table t = profile::parse_kernel_details(text, "k.csv");
    REQUIRE(t.rows.size() == 5);
    const profile::error_report rep = profile::score_rows(chips::ascend910b1, t.rows);
    REQUIRE(rep.overall.rows == 5);
    CHECK(rep.repeated_rows == 3);
    CHECK(rep.rows[0].repeat_ape == 0.0);
    CHECK(rep.rows[1].repeat_ape == 0.5);
    CHECK(rep.rows[2].repeat_ape == 0.0);
    CHECK(!rep.rows[3].repeated);
    CHECK(!rep.rows[4].repeated);
    CHECK(rep.repeat_floor.mape == doctest::Approx(0.5 / 5).epsilon(1e-12));
    CHECK(rep.repeat_floor.median_ape == 0.0);
    CHECK(rep.repeat_floor.max_ape == 0.5);
}

TEST_CASE("validate: the report gives the measurement spread, hold-out studies its mean") {
    const std::string profile =
        PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";
    const auto run = perfcast_test::run_command(cli::validate_command,
                                                {"--chip", "910B1", "--test", profile, "--tasks",
                                                 "AI_CORE,AI_VECTOR_CORE", "--format", "json"});
    REQUIRE(run.status == 0);
    const std::string& j = run.out;
    const auto floor_at = j.find("\"repeat_floor\"");
    REQUIRE(floor_at != std::string::npos);
    const double repeated = perfcast_test::json_number(j, "repeated_rows", floor_at);
    const double floor_mape = perfcast_test::json_number(j, "mape", floor_at);
    // The profile's repeats (390 of its 449 scored rows) spread: a floor above 0, below the
    // model's own error.
    CHECK(repeated > 0);
    CHECK(repeated <= perfcast_test::json_number(j, "rows"));
    CHECK(floor_mape > 0);
    CHECK(floor_mape < perfcast_test::json_number(j, "mape"));

    // A study on the 910B3 fixture (29 rows: a few fits, where the 910B1 profile's took most of
    // this file's time).
    const auto study = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B3",
         PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B3_matmul.csv", "--holdout",
         "0.3", "--seeds", "1-2"});
    REQUIRE(study.status == 0);
    CHECK(study.out.find("measurement spread (each held-out row predicted by its op's median "
                         "measurement): mean MAPE ") != std::string::npos);
}

TEST_CASE("twin floor: scored rows against the fit rows' measurement of the same op") {
    // Fit rows: the Add of 4096 measured 2 and 4 us (median 3), a Mul of 4096 measured 1 us.
    // Scored rows: that Add at 2 us (the fit median 3: APE 0.5) and at 3 us (0), a Mul of 8192
    // (another shape: no twin), an Add of 4096 in FLOAT16 (another dtype: no twin).
    const std::string head =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,Output "
        "Shapes,Output Data Types\n";
    const std::string fit_text =
        head +
        "Add,AI_VECTOR_CORE,2,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Add,AI_VECTOR_CORE,4,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Mul,AI_VECTOR_CORE,1,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n";
    const std::string test_text =
        head +
        "Add,AI_VECTOR_CORE,2,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Add,AI_VECTOR_CORE,3,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n"
        "Mul,AI_VECTOR_CORE,5,8,\"8192;8192\",FLOAT;FLOAT,\"8192\",FLOAT\n"
        "Add,AI_VECTOR_CORE,2,8,\"4096;4096\",FLOAT16;FLOAT16,\"4096\",FLOAT16\n";
    const auto fit = profile::parse_kernel_details(fit_text, "fit.csv").rows;
    const auto test = profile::parse_kernel_details(test_text, "test.csv").rows;
    const auto twins = profile::median_by_op(fit);
    REQUIRE(twins.size() == 2);
    const profile::error_report rep =
        profile::score_rows(chips::ascend910b1, test, {}, profile::all_rows, nullptr, &twins);
    REQUIRE(rep.overall.rows == 4);
    CHECK(rep.twinned_rows == 2);
    CHECK(rep.rows[0].twinned);
    CHECK(rep.rows[0].twin_ape == 0.5);
    CHECK(rep.rows[1].twin_ape == 0.0);
    CHECK(!rep.rows[2].twinned);
    CHECK(!rep.rows[3].twinned);
    CHECK(rep.twin_floor.mape == 0.25);
    CHECK(rep.twin_floor.max_ape == 0.5);
    // The model's own errors on the same two rows, beside it.
    CHECK(rep.twin_model.rows == 2);
    CHECK(rep.twin_model.mape == doctest::Approx((rep.rows[0].ape + rep.rows[1].ape) / 2));
    // Without `twins` no row is compared.
    CHECK(profile::score_rows(chips::ascend910b1, test).twinned_rows == 0);
}

TEST_CASE("validate --fit --test: the rows the fit rows measured too, beside the model") {
    const std::string dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";
    const std::string k = "/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const auto run = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B1", "--fit", dir + "torchnpu_2023_cann70_rank0" + k, "--test",
         dir + "torchnpu_2023_cann70_rank1" + k, "--format", "json"});
    REQUIRE(run.status == 0);
    const std::string& j = run.out;
    const auto at = j.find("\"fit_twins\"");
    REQUIRE(at != std::string::npos);
    // The two ranks of one run share 4 ops (rank 1's Casts and fills of rank 0's shapes): a
    // count above 0 and within the scored rows, a floor below the model's error on them.
    const double rows = perfcast_test::json_number(j, "rows", at);
    CHECK(rows > 0);
    CHECK(rows <= perfcast_test::json_number(j, "rows"));
    CHECK(perfcast_test::json_number(j, "mape", at) <
          perfcast_test::json_number(j, "model_mape", at));
    // Without --fit there is no such member.
    const auto alone = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B1", "--test", dir + "torchnpu_2023_cann70_rank1" + k, "--format", "json"});
    REQUIRE(alone.status == 0);
    CHECK(alone.out.find("fit_twins") == std::string::npos);
}
