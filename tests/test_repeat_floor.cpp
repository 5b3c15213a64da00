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
#include <string_view>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_repeat_floor {

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
    const auto ref = profile::reference_of(chips::ascend910b1, fit);
    REQUIRE(ref.op_median.size() == 2);
    const profile::error_report rep =
        profile::score_rows(chips::ascend910b1, test, {}, profile::all_rows, nullptr, &ref);
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
    // Without a fit reference no row is compared.
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

TEST_CASE("breakdown: the errors by bound and by whether the fit rows held the op type") {
    // Fit rows: one Add. Scored: a small Add (held; a 4096-element kernel on 8 cores is
    // head-bound on the 910B1: its head, 1.35 + 8 x 0.12 us, dwarfs a body of a few tens of ns),
    // a 64M-element Add on 48 cores (held; memory-bound: 384 MB moved), a small Sub (a type the
    // fit rows lack; head-bound).
    const std::string head =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,Output "
        "Shapes,Output Data Types\n";
    const auto fit =
        profile::parse_kernel_details(
            head + "Add,AI_VECTOR_CORE,2,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n", "fit.csv")
            .rows;
    const auto test =
        profile::parse_kernel_details(
            head +
                "Add,AI_VECTOR_CORE,3,8,\"2048;2048\",FLOAT;FLOAT,\"2048\",FLOAT\n"
                "Add,AI_VECTOR_CORE,300,48,\"67108864;67108864\",FLOAT16;FLOAT16,\"67108864\","
                "FLOAT16\n"
                "Sub,AI_VECTOR_CORE,4,8,\"4096;4096\",FLOAT;FLOAT,\"4096\",FLOAT\n",
            "test.csv")
            .rows;
    const auto ref = profile::reference_of(chips::ascend910b1, fit);
    CHECK(ref.types.size() == 1);
    const auto rep =
        profile::score_rows(chips::ascend910b1, test, {}, profile::all_rows, nullptr, &ref);
    REQUIRE(rep.overall.rows == 3);
    CHECK(rep.rows[0].fit == profile::type_in_fit::held);
    CHECK(rep.rows[1].fit == profile::type_in_fit::held);
    CHECK(rep.rows[2].fit == profile::type_in_fit::lacked);
    CHECK(rep.rows[0].bound == bound_kind::overhead);
    CHECK(rep.rows[1].bound == bound_kind::memory);
    CHECK(rep.rows[2].bound == bound_kind::overhead);
    const auto at = [&](bound_kind b) { return rep.by_bound[static_cast<std::size_t>(b)]; };
    CHECK(at(bound_kind::overhead).rows == 2);
    CHECK(at(bound_kind::memory).rows == 1);
    CHECK(at(bound_kind::compute).rows == 0);
    CHECK(at(bound_kind::overhead).mape ==
          doctest::Approx((rep.rows[0].ape + rep.rows[2].ape) / 2));
    CHECK(rep.type_held.rows == 2);
    CHECK(rep.type_held.mape == doctest::Approx((rep.rows[0].ape + rep.rows[1].ape) / 2));
    CHECK(rep.type_lacked.rows == 1);
    CHECK(rep.type_lacked.mape == doctest::Approx(rep.rows[2].ape));
    // Without a fit reference no row is marked either way.
    const auto alone = profile::score_rows(chips::ascend910b1, test);
    CHECK(alone.type_held.rows + alone.type_lacked.rows == 0);
    CHECK(alone.rows[2].fit == profile::type_in_fit::not_known);
}

TEST_CASE("validate --breakdown: the table, its JSON member, and none without the flag") {
    const std::string dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";
    const std::string k = "/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const std::string fit_path = dir + "torchnpu_2023_cann70_rank0" + k;
    const std::string test_path = dir + "torchnpu_2023_cann70_rank1" + k;
    const std::vector<std::string_view> args{"--chip", "910B1",  "--fit",
                                             fit_path, "--test", test_path};
    auto with = args;
    with.emplace_back("--breakdown");
    const auto table = perfcast_test::run_command(cli::validate_command, with);
    REQUIRE(table.status == 0);
    CHECK(table.out.find("by what bounds the model's prediction (overhead: its head), and by "
                         "whether the fit rows held the row's op type:") != std::string::npos);
    CHECK(table.out.find("overhead-bound ") != std::string::npos);
    CHECK(table.out.find("type in the fit rows ") != std::string::npos);
    CHECK(table.out.find("  bound\n") != std::string::npos);  // the worst rows' column
    const auto plain = perfcast_test::run_command(cli::validate_command, args);
    REQUIRE(plain.status == 0);
    CHECK(plain.out.find("by what bounds") == std::string::npos);
    with.insert(with.end(), {"--format", "json"});
    const auto j = perfcast_test::run_command(cli::validate_command, with);
    REQUIRE(j.status == 0);
    const auto at = j.out.find("\"breakdown\"");
    REQUIRE(at != std::string::npos);
    // The kinds by bound partition the scored rows.
    double by_bound = 0;
    for (const char* kind : {"\"overhead_bound\"", "\"memory_bound\"", "\"compute_bound\""}) {
        const auto k_at = j.out.find(kind, at);
        if (k_at != std::string::npos) by_bound += perfcast_test::json_number(j.out, "rows", k_at);
    }
    CHECK(by_bound == perfcast_test::json_number(j.out, "rows"));
}

}  // namespace test_repeat_floor
