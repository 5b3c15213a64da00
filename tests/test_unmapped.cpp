// The rows the model cannot predict, each with why (profile/ops.hpp unmapped_of), in the library
// and in `perfcast validate --unmapped`: a user whose profile scores 449 rows of 533 can see which
// 84 were left and what to mend (the file, the vocabulary or the chip preset).
#include <doctest/doctest.h>

#include <cstddef>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include <perfcast/chips.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_unmapped {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;
using perfcast_test::cli_run;
using perfcast_test::run_command;

namespace {

using perfcast_test::has;

// One row of each reason, one that maps (line 8), a GEMM of a byte dtype perfcast does not know
// and an fp8 GEMM. Lines are the file's (header = 1).
constexpr std::string_view rows_csv =
    "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
    "Output Shapes,Output Data Types\n"
    "add_zero,Add,AI_VECTOR_CORE,0,8,\"64;64\",FLOAT16;FLOAT16,64,FLOAT16\n"
    "allreduce,hcom_allReduce_,HCCL,120.0,1,,,,\n"
    "add_odd_dtype,Add,AI_VECTOR_CORE,3.0,8,\"64;64\",QINT77;QINT77,64,QINT77\n"
    "mm_conflict,MatMul,AI_CORE,9.0,8,\"16,32;64,8\",FLOAT16;FLOAT16,\"16,8\",FLOAT16\n"
    "add_no_shapes,Add,AI_VECTOR_CORE,3.0,8,,FLOAT16;FLOAT16,,FLOAT16\n"
    "norm_fp32,LayerNormV3,AI_VECTOR_CORE,9.0,8,\"8,1024;1024;1024\",FLOAT16;FLOAT16;FLOAT16,"
    "\"8,1024;8,1;8,1\",FLOAT16;FLOAT;FLOAT\n"
    "add_ok,Add,AI_VECTOR_CORE,3.0,8,\"64;64\",FLOAT16;FLOAT16,64,FLOAT16\n"
    // A GEMM of an unknown dtype writing bf16 (an fp8 GEMM, before perfcast knew FP8, was once
    // priced as a bf16 GEMM by its output's dtype): Ascend's HiFloat8.
    "mm_hif8,MatMul,AI_CORE,9.0,20,\"64,64;64,64\",HIFLOAT8;HIFLOAT8,\"64,64\",BF16\n"
    // An fp8 GEMM on a chip whose cube has no FP8 path.
    "mm_fp8,MatMul,AI_CORE,9.0,20,\"64,64;64,64\",FLOAT8_E4M3FN;FLOAT8_E4M3FN,\"64,64\",BF16\n";

}  // namespace

TEST_CASE("unmapped_of: each row the model cannot map says why; a mapped row has no reason") {
    const auto t = profile::parse_kernel_details(rows_csv);
    REQUIRE(t.rows.size() == 9);
    // A chip whose vector unit has no fp32 rate: the fp16 LayerNormV3, which the model widens
    // to fp32 arithmetic, has no rate to be priced at.
    chip c = chips::ascend910b1;
    c.vector.ops_per_cycle[index_of(dtype::fp32)] = 0;
    std::map<std::size_t, profile::unmapped_row> why;
    for (const profile::kernel_row& r : t.rows) {
        if (const auto u = profile::unmapped_of(c, r)) why.emplace(r.line, *u);
    }
    REQUIRE(why.size() == 8);
    CHECK(why.at(2).reason == profile::unmapped_reason::no_duration);
    CHECK(has(why.at(2).detail, "a duration of 0 us, under the least scored (0.001 us)"));
    CHECK(why.at(3).reason == profile::unmapped_reason::not_compute);
    CHECK(has(why.at(3).detail, "task 'HCCL' (HCCL): runs on none of"));
    CHECK(why.at(3).name == "allreduce");
    CHECK(why.at(3).type == "hcom_allReduce_");
    CHECK(why.at(4).reason == profile::unmapped_reason::no_dtype);
    CHECK(has(why.at(4).detail, "a dtype perfcast does not know: QINT77"));
    CHECK(why.at(5).reason == profile::unmapped_reason::shape_conflict);
    CHECK(has(why.at(5).detail, "cannot give [16,8]"));
    // Empty shape fields read as scalars: nothing an elementwise Add of 64 elements reads.
    CHECK(why.at(6).reason == profile::unmapped_reason::shapes);
    CHECK(has(why.at(6).detail, "inputs [] -> outputs []: not shapes an elementwise"));
    CHECK(why.at(7).reason == profile::unmapped_reason::no_rate);
    CHECK(has(why.at(7).detail, "no vector rate for fp32"));
    CHECK_FALSE(why.contains(8));
    CHECK(why.at(9).reason == profile::unmapped_reason::no_dtype);
    CHECK(has(why.at(9).detail, "a dtype perfcast does not know: HIFLOAT8"));
    CHECK(why.at(10).reason == profile::unmapped_reason::no_rate);
    CHECK(has(why.at(10).detail, "fp8_e4m3"));
    // A row without a duration (the CSV reader skips such a row as damaged; a row built in code
    // or read from a database may have none).
    profile::kernel_row timeless = t.rows[6];  // add_ok
    timeless.task_duration.reset();
    const auto none = profile::unmapped_of(c, timeless);
    REQUIRE(none.has_value());
    CHECK(none->reason == profile::unmapped_reason::no_duration);
    CHECK(none->detail == "no duration recorded");
    // On the preset, which has the fp32 rate, the norm maps.
    CHECK_FALSE(profile::unmapped_of(chips::ascend910b1, t.rows[5]).has_value());

    // score_rows keeps them, in file order, and counts them as skipped.
    const auto rep = profile::score_rows(c, t.rows);
    CHECK(rep.overall.rows == 1);
    REQUIRE(rep.unmapped.size() == 8);
    CHECK(rep.skipped == 8);
    CHECK(rep.unmapped.front().line == 2);
    CHECK(rep.unmapped.back().line == 10);
}

TEST_CASE("unmapped_of on the 910B1 profile: each reason borne out by the row itself") {
    const std::string path =
        PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";
    const auto t = profile::read_kernel_details_file(path);
    const chip& c = chips::ascend910b1;
    std::map<profile::unmapped_reason, std::size_t> count;
    std::size_t hccl = 0;
    for (const profile::kernel_row& r : t.rows) {
        const auto u = profile::unmapped_of(c, r);
        if (!u) continue;
        ++count[u->reason];
        CAPTURE(r.line);
        CHECK_FALSE(u->detail.empty());
        // Each reason checked against the row by other means than unmapped_of's own.
        switch (u->reason) {
            case profile::unmapped_reason::not_compute:
                CHECK_FALSE(profile::engine_of(r.task).has_value());
                hccl += r.task == profile::task_type::hccl ? 1 : 0;
                break;
            case profile::unmapped_reason::no_dtype:
                CHECK_FALSE(profile::dtype_of(r).has_value());
                CHECK(r.op_type == "MemSet");  // the profile's rows of no recorded dtype
                break;
            default: FAIL("a reason this profile has no row of: ", name_of(u->reason));
        }
    }
    // The file's 19 HCCL and 7 DSA tasks, and its 84 MemSet rows (docs/validation.md).
    CHECK(hccl == 19);
    CHECK(count[profile::unmapped_reason::not_compute] == 26);
    CHECK(count[profile::unmapped_reason::no_dtype] == 84);
    const auto rep = profile::score_rows(c, t.rows);
    CHECK(rep.unmapped.size() == 110);
    CHECK(rep.overall.rows + 110 == t.rows.size());
}

TEST_CASE("validate --unmapped lists the rows not scored and why; nothing scored says why") {
    namespace cli = perfcast::cli;
    const std::string b1 =
        PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";
    auto r = run_command(cli::validate_command, {"--chip", "910B1", "--test", b1, "--unmapped"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "\nnot mappable: "));
    CHECK(has(r.out, "not_compute"));
    CHECK(has(r.out, "line  name"));
    // Without the flag, no list.
    r = run_command(cli::validate_command, {"--chip", "910B1", "--test", b1});
    CHECK_FALSE(has(r.out, "\nnot mappable: "));
    // JSON: one object per row, with its reason's name.
    r = run_command(cli::validate_command,
                    {"--chip", "910B1", "--test", b1, "--unmapped", "--format", "json"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "\"unmapped\": ["));
    CHECK(has(r.out, "\"reason\": \"not_compute\""));
    // Nothing scored: the count by reason and the first row's why, in the error itself.
    r = run_command(cli::validate_command, {"--chip", "910B1", "--test", b1, "--tasks", "HCCL"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "maps none of them to an op (19 not_compute; line "));
    CHECK(has(r.err, "runs on none of the cube, vector or AI CPU engines"));
    // A study pools its seeds: the list is one draw's.
    r = run_command(cli::validate_command,
                    {"--chip", "910B1", b1, "--holdout", "0.3", "--seeds", "1-2", "--unmapped"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "--unmapped lists one draw's (--seed N)"));
}

TEST_CASE("a row whose sizes pass 2^63 - 1 is not mappable, and the run goes on without it") {
    namespace cli = perfcast::cli;
    // Two inputs of 2^63 - 1 elements: their read count passes int64 (once an error that stopped
    // validate, calibrate and whatif, naming no file). One input of that many elements and more
    // (its element count alone does not fit) was already not mappable: both are now alike.
    const std::string head =
        "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n";
    const std::string huge =
        "huge,Add,AI_VECTOR_CORE,10,40,\"9223372036854775807;9223372036854775807\",fp16;fp16,"
        "\"9223372036854775807\",fp16\n";
    const std::string good = "ok,Add,AI_VECTOR_CORE,3,40,\"4096;4096\",fp16;fp16,4096,fp16\n";
    const auto t = profile::parse_kernel_details(head + huge + good, "ovf.csv");
    REQUIRE(t.rows.size() == 2);
    CHECK_FALSE(profile::op_of(t.rows[0]).has_value());
    const auto u = profile::unmapped_of(chips::ascend910b3, t.rows[0]);
    REQUIRE(u.has_value());
    CHECK(u->reason == profile::unmapped_reason::shapes);
    CHECK(has(u->detail, "sizes the model cannot hold (perfcast::vector row: read elements"));
    CHECK(has(u->detail, "too large"));
    CHECK_FALSE(profile::unmapped_of(chips::ascend910b3, t.rows[1]).has_value());

    const perfcast_test::scratch_dir d("unmapped_ovf");
    const std::string csv = (d.path / "ovf.csv").string();
    {
        std::ofstream f(csv);
        f << head << huge << good << good;
    }
    auto r =
        run_command(cli::validate_command, {"--chip", "ascend910b3", "--test", csv, "--unmapped"});
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "scored 2 rows (1 not mappable)"));
    CHECK(has(r.out, "huge  Add   AI_VECTOR_CORE  shapes"));
    // With --fit A --test B, each file's rows are read and scored: nothing stops on the row.
    r = run_command(cli::validate_command, {"--chip", "ascend910b3", "--fit", csv, "--test", csv});
    CHECK(r.status == cli::exit_ok);
    const std::string params = (d.path / "fit.params").string();
    r = run_command(cli::calibrate_command, {csv, "--chip", "ascend910b3", "-o", params});
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "fitted on 2 rows"));
    r = run_command(cli::whatif_command, {csv, "--chip", "ascend910b3", "--batch", "1"});
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "profile: 3 measured ops anchored (2 mapped to ops"));
}

TEST_CASE("a Block Dim of 0, none or above 65535 on the AI cores is warned, naming file and line") {
    namespace cli = perfcast::cli;
    const chip& c = chips::ascend910b3;
    const std::string head =
        "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n";
    const std::string mm = ",MatMul,AI_CORE,10,";
    const std::string shapes = ",\"64,64;64,64\",fp16;fp16,\"64,64\",fp16\n";
    const std::string rows = "zero" + mm + "0" + shapes + "none" + mm + shapes + "big" + mm +
                             "100000" + shapes + "ok" + mm + "20" + shapes + "waves" + mm + "48" +
                             shapes +
                             "cpu,TopK,AI_CPU,300,0,\"4000\",int64,\"100;100\","
                             "int64;int32\n";
    const auto t = profile::parse_kernel_details(head + rows, "bd.csv");
    REQUIRE(t.rows.size() == 6);
    CHECK(profile::block_dim_problem(c, t.rows[0]) ==
          "Block Dim 0 (task AI_CORE): expected the blocks it launched, 1 .. 65535; priced on "
          "all 20 cube cores");
    CHECK(has(profile::block_dim_problem(c, t.rows[1]), "no Block Dim (empty or N/A) (task"));
    CHECK(has(profile::block_dim_problem(c, t.rows[2]), "Block Dim 100000 (task AI_CORE)"));
    // Within 1 .. 65535 (48 on 20 cores runs in waves), and an AI CPU task: nothing to say.
    CHECK(profile::block_dim_problem(c, t.rows[3]).empty());
    CHECK(profile::block_dim_problem(c, t.rows[4]).empty());
    CHECK(profile::block_dim_problem(c, t.rows[5]).empty());

    const perfcast_test::scratch_dir d("unmapped_block_dim");
    const std::string csv = (d.path / "bd.csv").string();
    {
        std::ofstream f(csv);
        f << head << rows;
    }
    const auto warned = [&](const cli_run& r) {
        CHECK(has(r.err, "perfcast: warning: " + csv +
                             ":2: zero (MatMul): Block Dim 0 (task "
                             "AI_CORE): expected the blocks it "
                             "launched, 1 .. 65535; priced on all 20 "
                             "cube cores\n"));
        CHECK(has(r.err, csv + ":3: none (MatMul): no Block Dim (empty or N/A)"));
        CHECK(has(r.err, csv + ":4: big (MatMul): Block Dim 100000"));
        CHECK_FALSE(has(r.err, csv + ":5:"));
        CHECK_FALSE(has(r.err, csv + ":6:"));
        CHECK_FALSE(has(r.err, csv + ":7:"));
    };
    const auto v = run_command(cli::validate_command, {"--chip", "910B3", "--test", csv});
    CHECK(v.status == cli::exit_ok);
    warned(v);
    const auto w = run_command(cli::whatif_command, {csv, "--chip", "910B3", "--batch", "1"});
    CHECK(w.status == cli::exit_ok);
    warned(w);
    // A file without the column: one line, not one per row.
    const std::string bare = (d.path / "bare.csv").string();
    {
        std::ofstream f(bare);
        f << "Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
             "Output Data Types\n";
        for (int i = 0; i < 30; ++i)
            f << "MatMul,AI_CORE,10,\"64,64;64,64\",fp16;fp16,\"64,64\",fp16\n";
    }
    const auto b = run_command(cli::validate_command, {"--chip", "910B3", "--test", bare});
    CHECK(b.status == cli::exit_ok);
    CHECK(has(b.err, "perfcast: warning: " + bare +
                         ": none of its 30 rows on the cube or vector cores records a Block Dim: "
                         "each is priced on all of its engine's cores\n"));
    CHECK_FALSE(has(b.err, bare + ":2:"));
}

}  // namespace test_unmapped
