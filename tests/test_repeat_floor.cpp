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
