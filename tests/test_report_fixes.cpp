// Issue 12 item 6, "report fixes", each shown on the real profiles of tests/data/profiles/real
// (SOURCES.md there) before it is fixed: fills counted by their output alone, bandwidth above
// HBM flagged as L2 or cache (never a share above 100 %), misalignment from the innermost
// dimension larger than 1, the int64 finding without the Cast that leaves int64, a utilization
// above 100 % always with its reason, each row once per finding, validate failing when it scores
// nothing, and `--top 0` / `--worst 0` meaning "every row" in report, validate and whatif.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/profile/report.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_report_fixes {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast::profile;
using perfcast::chip;
using perfcast_test::run_command;
namespace units = perfcast::units;
namespace chips = perfcast::chips;
namespace cli = perfcast::cli;

namespace {

const std::string data_dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/";
const std::string real_dir = data_dir + "real/";
const std::string rank0 =
    real_dir + "torchnpu_2023_cann70_rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
const std::string rank1 =
    real_dir + "torchnpu_2023_cann70_rank1/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
const std::string qwen3 =
    real_dir + "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
const std::string b1_train = data_dir + "kernel_details_910B1_train.csv";
const std::string b3_matmul = data_dir + "kernel_details_910B3_matmul.csv";

/// Every per-op profile shipped: the real kernel_details / op_summary files and the two older
/// fixtures.
const std::vector<std::string> all_profiles = {
    rank0,
    rank1,
    qwen3,
    real_dir + "torchnpu_2025_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    real_dir + "torchnpu_helix_2026_standalone/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    real_dir +
        "msprof_helix_2026_PROF/mindstudio_profiler_output/"
        "op_summary_20260511093035.csv",
    real_dir + "msprof_older_layout_mskpp_ut/op_summary.csv",
    b1_train,
    b3_matmul,
};

/// Chips that match some of the profiles and chips that match none (the 310P3 has 8 cores and
/// 204.8 GB/s: every 910B profile overruns it).
const std::vector<chip> some_chips = {chips::ascend910b2, chips::ascend910b3, chips::ascend310p3};

profile_report every_op(const std::string& path, const chip& c) {
    report_options o;
    o.top_ops = report_options::all;
    return build_report_file(path, c, o);
}

profile_report report_of(const std::string& csv, const chip& c) {
    std::istringstream in(csv);
    report_options o;
    o.top_ops = report_options::all;
    return build_report(in, "t.csv", c, o);
}

const finding* find(const profile_report& r, finding_kind k) {
    for (const auto& f : r.findings)
        if (f.kind == k) return &f;
    return nullptr;
}

const op_entry* op_at(const profile_report& r, std::size_t line) {
    for (const auto& e : r.top_ops)
        if (e.line == line) return &e;
    return nullptr;
}

bool lists_line(const finding* f, std::size_t line) {
    if (f == nullptr) return false;
    return std::any_of(f->examples.begin(), f->examples.end(),
                       [line](const finding_example& x) { return x.line == line; });
}

using perfcast_test::has;

}  // namespace

// ---- 1. write-only ops -------------------------------------------------------------------------

TEST_CASE("report fixes: a fill is counted by its output alone") {
    // rank0 line 2: ZerosLike of 232,138,240 FLOAT in 496.8508 us. Its input is the tensor whose
    // shape it copies; it writes 232138240 x 4 B = 928,552,960 B and reads nothing. Counting the
    // input too gave 3737.8 GB/s, 233.6 % of the 910B2's 1600 GB/s.
    const profile_report r = every_op(rank0, chips::ascend910b2);
    const op_entry* z = op_at(r, 2);
    REQUIRE(z != nullptr);
    REQUIRE(z->op_type == "ZerosLike");
    REQUIRE(z->achieved);
    // One division of exact decimal inputs: 1e-12 relative.
    CHECK(z->achieved->in(units::GBps) ==
          doctest::Approx(928552960.0 / 496.8508e-6 / 1e9).epsilon(1e-12));

    // A fill within HBM: OnesLike [1024,1024] FLOAT in 10 us writes 4,194,304 B: 419.4304 GB/s,
    // 26.2144 % of 1600 GB/s (inputs+outputs would be twice that).
    const profile_report s = report_of(
        "Name,Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
        "Output Data Types,aiv_mte3_ratio\n"
        "ones,OnesLike,AI_VECTOR_CORE,10,\"1024,1024\",FLOAT,\"1024,1024\",FLOAT,0.5\n"
        // Memory bound (mte3 0.9) and slow: 1024 x 4 B in 100 us = 0.041 GB/s.
        "fill,Fill,AI_VECTOR_CORE,100,\"1;\",INT64;FLOAT,\"1024\",FLOAT,0.9\n"
        // MemSet lists no tensors: no bytes, no bandwidth.
        "ms,MemSet,AI_VECTOR_CORE,2,,UNDEFINED,,UNDEFINED,0.1\n",
        chips::ascend910b3);
    const op_entry* ones = op_at(s, 2);
    REQUIRE(ones != nullptr);
    CHECK(ones->achieved->in(units::GBps) == doctest::Approx(419.4304).epsilon(1e-12));
    REQUIRE(ones->hbm_share);
    CHECK(*ones->hbm_share == doctest::Approx(0.262144).epsilon(1e-12));
    CHECK_FALSE(op_at(s, 4)->achieved);
    const finding* low = find(s, finding_kind::low_bandwidth);
    REQUIRE(low != nullptr);
    CHECK(low->examples.front().detail.rfind("outputs once (write-only type): 0.041 GB/s", 0) == 0);
}

TEST_CASE("report fixes: the write-only table agrees with the model's vector traits") {
    // profile/ops.hpp's vector_types says which types read no input; every one of them must be
    // write-only for the report too, or the two would count the same row differently.
    std::size_t not_reading = 0;
    for (const vector_type_traits& t : vector_types) {
        if (t.reads_inputs) continue;
        ++not_reading;
        CAPTURE(t.type);
        CHECK(is_write_only_type(t.type));
    }
    CHECK(not_reading == 3);  // ZerosLike, OnesLike, Fill
    CHECK_FALSE(is_write_only_type("Add"));
    CHECK_FALSE(is_write_only_type("zeroslike"));  // profilers write the type as CANN names it
    for (const write_only_type& w : write_only_types) CHECK_FALSE(w.inputs.empty());

    // docs/profiles.md prints the table: every type in it, on a table row ("| ... |").
    std::ifstream doc(PERFCAST_SOURCE_DIR "/docs/profiles.md");
    REQUIRE(doc.good());
    std::set<std::string> listed;  // the first cells of the table's rows, split at ", "
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("  | ", 0) != 0 || has(line, "---") || has(line, "| type |")) continue;
        const std::string cell = line.substr(4, line.find(" |", 4) - 4);
        for (std::size_t b = 0; b <= cell.size();) {
            const std::size_t e = std::min(cell.find(", ", b), cell.size());
            listed.insert(cell.substr(b, e - b));
            b = e + 2;
        }
    }
    std::set<std::string> table;
    for (const write_only_type& w : write_only_types) table.insert(std::string(w.type));
    CHECK(listed == table);
}

// ---- 2. above HBM peak -------------------------------------------------------------------------

TEST_CASE("report fixes: bandwidth above HBM is flagged L2 or cache, never a share above 100 %") {
    std::size_t above = 0;
    for (const std::string& p : all_profiles) {
        for (const chip& c : some_chips) {
            CAPTURE(p);
            CAPTURE(c.name.view());
            const profile_report r = every_op(p, c);
            const perfcast::bandwidth hbm = c.memory.hbm_bandwidth;
            for (const op_entry& e : r.top_ops) {
                CAPTURE(e.line);
                if (e.hbm_share) CHECK(*e.hbm_share <= 1.0);
                const bool faster = e.achieved && *e.achieved > hbm;
                CHECK(e.above_hbm_peak == faster);
                // A GEMM above the chip's compute peak is said so instead (no cache explains it).
                CHECK(has(e.notes, above_hbm_note) == (faster && !e.above_compute_peak));
                if (faster) {
                    CHECK_FALSE(e.hbm_share);
                    ++above;
                }
            }
        }
    }
    // The rank0/rank1 ZerosLike (1868.9 GB/s) passes the 910B2's and 910B3's 1600 GB/s; on the
    // 310P3 (204.8 GB/s) many more do.
    CHECK(above >= 4);

    // The command shows it in the table and the JSON.
    const auto t = run_command(cli::report_command, {rank0, "--chip", "ascend910b2"});
    REQUIRE(t.status == cli::exit_ok);
    CHECK(has(t.out, "L2/cache  engine_from_cycles; above HBM peak: L2 or cache"));
    const auto j =
        run_command(cli::report_command, {rank0, "--chip", "ascend910b2", "--format", "json"});
    REQUIRE(j.status == cli::exit_ok);
    CHECK(has(j.out, "\"hbm_share_pct\": null,\n      \"above_hbm_peak\": true"));
}

TEST_CASE("report fixes: bytes of 2^63 or more feed no bandwidth, and the row says so") {
    // Two inputs and an output of 2^63 - 1 fp16 elements: 5.5e19 bytes in 10 us read as 5.5e15
    // GB/s "above HBM peak: L2 or cache" once. Byte counts reach "too large" at 2^63
    // (docs/profiles.md's limits); 2^61 - 1 int8 elements a tensor (6.9e18 bytes in all) is below.
    const std::string csv =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "Add,AI_VECTOR_CORE,10,48,\"9223372036854775807;9223372036854775807\",fp16;fp16,"
        "\"9223372036854775807\",fp16\n"
        "Add,AI_VECTOR_CORE,10,48,\"2305843009213693951;2305843009213693951\",int8;int8,"
        "\"2305843009213693951\",int8\n"
        "Add,AI_VECTOR_CORE,10,48,\"4096;4096\",fp16;fp16,\"4096\",fp16\n";
    const auto t = parse_kernel_details(csv, "t.csv");
    REQUIRE(t.rows.size() == 3);
    CHECK(bytes_too_large(t.rows[0]));
    CHECK_FALSE(bytes_moved_once(t.rows[0]).has_value());
    CHECK_FALSE(bytes_too_large(t.rows[1]));
    REQUIRE(bytes_moved_once(t.rows[1]).has_value());
    // 3 x (2^61 - 1) bytes, each tensor's count rounded to a double's 53 bits (relative 1e-15).
    CHECK(bytes_moved_once(t.rows[1])->in(units::B) ==
          doctest::Approx(3.0 * 2305843009213693951.0).epsilon(1e-15));
    const chip& c = chips::ascend910b1;
    const profile_report r = report_of(csv, c);
    const op_entry* huge = op_at(r, 2);
    REQUIRE(huge != nullptr);
    CHECK_FALSE(huge->achieved.has_value());
    CHECK_FALSE(huge->above_hbm_peak);
    CHECK(has(huge->notes, too_large_bytes_note));
    CHECK_FALSE(has(huge->notes, above_hbm_note));
    const op_entry* fine = op_at(r, 4);
    REQUIRE(fine != nullptr);
    CHECK(fine->achieved.has_value());
    CHECK_FALSE(has(fine->notes, too_large_bytes_note));
    const std::string path = "perfcast_test_report_fixes_too_large.csv";
    {
        std::ofstream f(path);
        f << csv;
    }
    const auto out = run_command(cli::report_command, {path, "--chip", "910B1", "--format", "csv"});
    std::remove(path.c_str());
    REQUIRE(out.status == cli::exit_ok);
    CHECK(has(out.out, std::string(too_large_bytes_note)));
    CHECK_FALSE(has(out.out, "5534023222112865"));
}

TEST_CASE("report fixes: a GEMM faster than the chip's cube peak is said so, not put on L2") {
    // 4096^3 fp16 GEMMs (2 x 4096^3 = 1.374e11 flop) on the 910B1, whose cube peak is 24 cores
    // x 4096 fp16 multiply-adds a cycle x 2 x 1.85 GHz = 363.7 TFLOP/s: in 8 us (17 PFLOP/s)
    // and 120.5 us (1140 TFLOP/s) no chip of its kind did them; in 1000 us (137 TFLOP/s) it can.
    const std::string csv =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "MatMul,AI_CORE,8.0,24,\"4096,4096;4096,4096\",fp16;fp16,\"4096,4096\",fp16\n"
        "MatMul,AI_CORE,120.5,24,\"4096,4096;4096,4096\",fp16;fp16,\"4096,4096\",fp16\n"
        "MatMul,AI_CORE,1000.0,24,\"4096,4096;4096,4096\",fp16;fp16,\"4096,4096\",fp16\n";
    const chip& c = chips::ascend910b1;
    REQUIRE(c.peak(perfcast::engine::cube, perfcast::dtype::fp16).in(units::flops) ==
            doctest::Approx(363.7e12).epsilon(1e-3));  // the figure the comment works with
    const profile_report r = report_of(csv, c);
    for (const std::size_t line : {2u, 3u}) {
        const op_entry* e = op_at(r, line);
        REQUIRE(e != nullptr);
        CHECK(e->above_compute_peak);
        CHECK(has(e->notes, above_compute_note));
        CHECK_FALSE(has(e->notes, above_hbm_note));
    }
    const op_entry* slow = op_at(r, 4);
    REQUIRE(slow != nullptr);
    CHECK_FALSE(slow->above_compute_peak);
    CHECK_FALSE(has(slow->notes, above_compute_note));
    // The command: the % HBM column says no L2/cache beside that note; json has the flag.
    const std::string path = "perfcast_test_report_fixes_peak.csv";
    {
        std::ofstream f(path);
        f << csv;
    }
    const auto t = run_command(cli::report_command, {path, "--chip", "910B1"});
    const auto j = run_command(cli::report_command, {path, "--chip", "910B1", "--format", "json"});
    std::remove(path.c_str());
    REQUIRE(t.status == cli::exit_ok);
    CHECK(has(t.out, "above the chip's peak FLOP/s"));
    CHECK_FALSE(has(t.out, "L2/cache  above the chip's peak"));
    CHECK(has(j.out, "\"above_compute_peak\": true"));
}

// ---- 3. misalignment ---------------------------------------------------------------------------

TEST_CASE("report fixes: a dimension of size 1 does not cut the innermost run") {
    const auto shape = [](std::vector<std::int64_t> d) { return tensor_shape{std::move(d)}; };
    CHECK(innermost_extent(shape({400, 1})) == 400);
    CHECK(innermost_extent(shape({4096, 1, 16, 1})) == 16);
    CHECK(innermost_extent(shape({2, 8192, 1})) == 8192);
    CHECK(innermost_extent(shape({1, 1})) == 1);
    CHECK(innermost_extent(shape({})) == 1);
    CHECK(innermost_extent(shape({4, 0})) == 0);

    // rank1 line 23: LogicalNot on [2,8192,1] BOOL, 8192 contiguous bytes: aligned. Before, the
    // trailing 1 made it a 1-byte run and the finding listed it with Cast (line 5, [2,8193] INT64)
    // and two Slices (lines 6, 7, [2,8193] INT32 -> [2,8192]): 8193 elements are not a multiple
    // of 32 B. The Slices read rows of that view and stay listed; the Cast's input and output
    // have the same shape, so it moves whole contiguous tensors (kernel_row.hpp walks_rows) and
    // is no longer listed.
    const profile_report r1 = every_op(rank1, chips::ascend910b2);
    const finding* m1 = find(r1, finding_kind::misaligned_move);
    REQUIRE(m1 != nullptr);
    CHECK(m1->rows == 2);
    CHECK_FALSE(lists_line(m1, 23));
    CHECK_FALSE(lists_line(m1, 5));
    CHECK(lists_line(m1, 6));
    CHECK(lists_line(m1, 7));

    // qwen3: RmsNorm's second output [4096,1,16,1] FLOAT is 16 x 4 B = 64 B per row (and
    // [4096,1,8,1] 32 B, [4096,1,1] 16 KiB): none of them is misaligned any more.
    const profile_report q = every_op(qwen3, chips::ascend910b3);
    const finding* mq = find(q, finding_kind::misaligned_move);
    if (mq != nullptr) {
        for (const auto& x : mq->examples) {
            CAPTURE(x.line);
            CHECK(x.op_type != "RmsNorm");
        }
    }

    // A run still too short once the 1 is dropped stays flagged: LayerNormV3's [1024,4,1]
    // FLOAT16 mean is 4 x 2 B = 8 B per row (910B1 fixture, line 34).
    const profile_report b1 = every_op(b1_train, chips::ascend910b1);
    const finding* mb = find(b1, finding_kind::misaligned_move);
    REQUIRE(mb != nullptr);
    const auto it = std::find_if(mb->examples.begin(), mb->examples.end(),
                                 [](const finding_example& x) { return x.line == 34; });
    REQUIRE(it != mb->examples.end());
    CHECK(has(it->detail, "[1024,4,1] FLOAT16: innermost run 8.000 B"));
}

// ---- 4. int64 ----------------------------------------------------------------------------------

TEST_CASE("report fixes: the int64 finding leaves out a Cast that leaves int64") {
    // rank0 line 5: Cast [2,8193] INT64 -> INT32, the fix the finding asks for; it was the
    // finding's only row.
    const profile_report r0 = every_op(rank0, chips::ascend910b2);
    CHECK(find(r0, finding_kind::int64_on_vector) == nullptr);

    // 910B1 fixture: line 5 casts [4,1025] INT64 to INT32 (left out); lines 109 and 121 cast
    // to INT64 (32768 B of int64 output: still flagged), line 27 broadcasts INT64 (flagged).
    const profile_report b1 = every_op(b1_train, chips::ascend910b1);
    const finding* f = find(b1, finding_kind::int64_on_vector);
    REQUIRE(f != nullptr);
    CHECK(f->rows == 3);
    CHECK_FALSE(lists_line(f, 5));
    CHECK(lists_line(f, 27));
    CHECK(lists_line(f, 109));
    CHECK(lists_line(f, 121));
}

// ---- 5. utilization above 100 % ----------------------------------------------------------------

TEST_CASE("report fixes: a utilization above 100 % always says why") {
    // Two AI_CORE tasks 100 us apart, 100 us each at 90 % of the 910B3's cube (3.24e6 cycles
    // each): the seed's span (100 us) gives 180 %, first start to last end (200 us) 90 %.
    const profile_report r = report_of(
        "Type,Accelerator Core,Start Time(us),Duration(us),aic_total_cycles\n"
        "MatMul,AI_CORE,0,100,3240000\nMatMul,AI_CORE,100,100,3240000\n",
        chips::ascend910b3);
    const engine_utilization& u = r.utilization[0];
    CHECK(has(u.note, "seed span above 100 %: it ends at the last start, 100.000 us before"));
    CHECK(has(u.note, "first start to last end: 90.000 %"));
    const finding* f = find(r, finding_kind::compute_bound);
    REQUIRE(f != nullptr);
    CHECK(f->evidence.rfind("cube utilization 90.000 % > 80.000 %", 0) == 0);
    CHECK(has(f->evidence, "last start - first start: 180.000 %"));

    // At 45 % each the seed's span gives 90 % but the profile is not compute bound (45 %).
    const profile_report half = report_of(
        "Type,Accelerator Core,Start Time(us),Duration(us),aic_total_cycles\n"
        "MatMul,AI_CORE,0,100,1620000\nMatMul,AI_CORE,100,100,1620000\n",
        chips::ascend910b3);
    CHECK(*half.utilization[0].seed_utilization == doctest::Approx(0.9).epsilon(1e-12));
    CHECK(find(half, finding_kind::compute_bound) == nullptr);
    CHECK(half.utilization[0].note.empty());

    // rank1 on a 310P3 (8 vector cores at 1060 MHz): 171,892,687 vector cycles over 16420.2 us
    // need 8 x 1060e6 x 16420.2e-6 = 139,246,297.6 available: 123.4 %. The profile is from a
    // 48-core 910B; the note says so.
    const profile_report p = every_op(rank1, chips::ascend310p3);
    const engine_utilization& v = p.utilization[2];
    REQUIRE(v.full_utilization);
    CHECK(*v.full_utilization ==
          doctest::Approx(171892687.0 / (8 * 1060e6 * 16420.2e-6)).epsilon(1e-9));
    CHECK(v.note == chip_mismatch_note);

    // Over every shipped profile and chip: a value above 100 % has a note, one at or below has
    // none; a per-op cube utilization above 100 % names the chip as its reason.
    std::size_t noted = 0;
    for (const std::string& path : all_profiles) {
        for (const chip& c : some_chips) {
            CAPTURE(path);
            CAPTURE(c.name.view());
            const profile_report x = every_op(path, c);
            for (const engine_utilization& e : x.utilization) {
                const bool over = (e.seed_utilization && *e.seed_utilization > 1.0) ||
                                  (e.full_utilization && *e.full_utilization > 1.0);
                CHECK(e.note.empty() == !over);
                noted += over ? 1 : 0;
            }
            for (const op_entry& o : x.top_ops) {
                if (o.cube_utilization_pct && *o.cube_utilization_pct > 100.0)
                    CHECK(has(o.notes, "check --chip"));
            }
        }
    }
    CHECK(noted >= 1);

    // The table prints the note under the utilization table.
    const auto t = run_command(cli::report_command, {rank1, "--chip", "ascend310p3"});
    REQUIRE(t.status == cli::exit_ok);
    CHECK(has(t.out, "note, vector, AI_VECTOR_CORE + MIX tasks: above 100 %: more cycles"));
}

// ---- 6. each row once per finding --------------------------------------------------------------

TEST_CASE("report fixes: a row is listed once per finding") {
    // Row x has two dtypes perfcast does not know: it is one row of unknown_dtype, naming both.
    // Before, it was counted and listed twice (3 rows, 13 us: 162.5 % of the 8 us profile).
    const profile_report r = report_of(
        "Name,Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
        "Output Data Types\n"
        "x,Foo,AI_VECTOR_CORE,5,\"4;4\",WEIRD1;WEIRD2,\"4\",FLOAT\n"
        "y,Foo,AI_VECTOR_CORE,3,\"4\",WEIRD1,\"4\",FLOAT\n",
        chips::ascend910b3);
    const finding* f = find(r, finding_kind::unknown_dtype);
    REQUIRE(f != nullptr);
    CHECK(f->rows == 2);
    CHECK(f->time.in(units::us) == doctest::Approx(8.0).epsilon(1e-12));
    REQUIRE(f->examples.size() == 2);
    CHECK(f->examples[0].line == 2);
    CHECK(f->examples[0].detail == "WEIRD1; WEIRD2");
    CHECK(f->examples[1].line == 3);

    // Every finding of every shipped profile: distinct lines, no more rows than the profile.
    for (const std::string& path : all_profiles) {
        CAPTURE(path);
        const profile_report x = every_op(path, chips::ascend910b2);
        for (const finding& g : x.findings) {
            CAPTURE(name_of(g.kind));
            std::set<std::size_t> lines;
            for (const auto& e : g.examples) CHECK(lines.insert(e.line).second);
            CHECK(g.rows <= std::max<std::size_t>(x.rows, x.host.gaps));
        }
    }
}

// ---- 7. validate with nothing scored -----------------------------------------------------------

TEST_CASE("report fixes: validate with no scored row is an error that says why") {
    // Filters that keep nothing.
    auto r = run_command(cli::validate_command,
                         {"--chip", "910B1", "--test", b1_train, "--types", "Nope"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "nothing scored"));
    CHECK(has(r.err, "holds 591 rows, none of them kept by --types Nope"));
    CHECK(r.out.empty());

    // Kept rows the model cannot map: the 19 HCCL tasks of the 910B1 fixture.
    r = run_command(cli::validate_command,
                    {"--chip", "910B1", "--test", b1_train, "--tasks", "HCCL", "--format", "json"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "19 kept by --tasks HCCL, and the model maps none of them"));
    CHECK_FALSE(has(r.out, "\"mape\": 0"));

    // A profile with a header and no rows.
    const std::string empty = "perfcast_test_report_fixes_empty.csv";
    {
        std::ofstream f(empty);
        f << "Type,Accelerator Core,Duration(us)\n";
    }
    r = run_command(cli::validate_command, {"--chip", "910B1", "--test", empty});
    std::remove(empty.c_str());
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "holds no row"));

    // A hold-out study whose filters keep nothing, or nothing the model maps: said before any
    // seed's fit runs.
    r = run_command(cli::validate_command, {"--chip", "910B1", b1_train, "--holdout", "0.3",
                                            "--seeds", "1-2", "--types", "Nope"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "holds 591 rows, none of them kept by --types Nope"));
    r = run_command(cli::validate_command, {"--chip", "910B1", b1_train, "--holdout", "0.3",
                                            "--seeds", "1-2", "--tasks", "HCCL"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "19 kept by --tasks HCCL, and the model maps none of them"));

    // A hold-out study whose seeds hold out none of the kept rows: the 910B3 fixture's four
    // FlashAttentionScoreGrad rows at a 5 % share, seeds 1 and 2.
    r = run_command(cli::validate_command,
                    {"--chip", "910B3", b3_matmul, "--holdout", "0.05", "--seeds", "1-2", "--types",
                     "FlashAttentionScoreGrad"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "no seed from 1 to 2 holds out a row"));
}

// ---- 8. --top 0 --------------------------------------------------------------------------------

TEST_CASE("report fixes: --top 0 and --worst 0 list every row in every command") {
    // report: the 910B3 fixture's 29 rows.
    auto r = run_command(cli::report_command, {b3_matmul, "--chip", "910B3", "--top", "0"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "Top 29 ops by duration"));

    // validate: every scored row among the worst.
    r = run_command(cli::validate_command,
                    {"--chip", "910B3", "--test", b3_matmul, "--worst", "0", "--format", "json"});
    REQUIRE(r.status == cli::exit_ok);
    const auto count = [](const std::string& s, std::string_view w) {
        std::size_t n = 0;
        for (auto p = s.find(w); p != std::string::npos; p = s.find(w, p + 1)) ++n;
        return n;
    };
    const std::string rows_key = "\"rows\": ";
    const auto at = r.out.find(rows_key);
    REQUIRE(at != std::string::npos);
    const std::size_t scored = std::stoul(r.out.substr(at + rows_key.size()));
    CHECK(scored > 10);  // more than the default 10
    CHECK(count(r.out, "\"predicted_us\"") == scored);

    // whatif (already so): the built-in scenario's 480 deployments, none left out.
    r = run_command(cli::whatif_command, {"--top", "0"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, ": 480 deployments"));
    CHECK_FALSE(has(r.out, "more;"));

    // The same words for a bad count everywhere.
    const std::vector<std::pair<cli::command, std::vector<std::string_view>>> bad = {
        {cli::report_command, {b3_matmul, "--chip", "910B3", "--top", "-2"}},
        {cli::validate_command, {"--chip", "910B3", "--test", b3_matmul, "--worst", "-2"}},
        {cli::whatif_command, {"--top", "-2"}},
    };
    for (const auto& entry : bad) {
        // Not a structured binding: Clang 14 cannot capture one in CAPTURE's lambda.
        const cli::command& c = entry.first;
        CAPTURE(c.name);
        r = run_command(c, entry.second);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "'-2' is not a row count >= 0 (0: all rows)"));
    }
}

// ---- 8. --step: one step of a multi-step kernel_details ---------------------------------------
// The helix standalone kernel_details holds ten steps of one matmul each (Step Id 1 to 10).

TEST_CASE("report fixes: --step keeps one step's rows, the reader counts every step") {
    const std::string helix =
        real_dir + "torchnpu_helix_2026_standalone/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    std::ifstream f(helix);
    REQUIRE(f);
    kernel_reader_options o;
    o.step = 4;
    kernel_details_reader reader(f, helix, o);
    std::vector<kernel_row> rows;
    for (kernel_row row; reader.next(row);) rows.push_back(row);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].step == 4);
    CHECK(rows[0].line == 5);  // the header is line 1, step 1 line 2
    REQUIRE(reader.steps().size() == 10);
    CHECK(reader.steps().begin()->first == 1);
    CHECK(reader.steps().rbegin()->first == 10);

    // Every step's rows without --step; the report counts them per step.
    const profile_report all = every_op(helix, chips::ascend910b2);
    CHECK(all.rows == 10);
    CHECK(all.steps.size() == 10);

    // A step no row has: an error listing the steps there are.
    o.step = 11;
    std::ifstream g(helix);
    kernel_details_reader r2(g, helix, o);
    kernel_row row;
    try {
        while (r2.next(row)) {
        }
        FAIL("step 11 of a file of steps 1 to 10 was accepted");
    } catch (const perfcast::parse_error& e) {
        const std::string what = e.what();
        CHECK(has(what, "no row of step 11"));
        CHECK(has(what, "step 1: 1 rows"));
        CHECK(has(what, "step 10: 1 rows"));
        CHECK(has(what, helix));
    }

    // A file without the column (msprof's op_summary): nothing to pick from.
    o.step = 1;
    const std::string summary = real_dir + "msprof_older_layout_mskpp_ut/op_summary.csv";
    std::ifstream h(summary);
    CHECK_THROWS_WITH_AS((void)read_kernel_details(h, summary, o),
                         doctest::Contains("no row has a Step Id"), perfcast::parse_error);
}

TEST_CASE("report fixes: report says when its rows span several steps, --step reports one") {
    const std::string helix =
        real_dir + "torchnpu_helix_2026_standalone/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    auto r = run_command(cli::report_command, {helix, "--chip", "910B2"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "10 rows"));
    CHECK(has(r.out,
              "rows of 10 steps (Step Id 1 to 10): the spans below include the time "
              "between steps; --step N reports one"));

    r = run_command(cli::report_command, {helix, "--chip", "910B2", "--step", "4"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, ", 1 rows,"));
    CHECK_FALSE(has(r.out, "steps (Step Id"));

    r = run_command(cli::report_command, {helix, "--chip", "910B2", "--format", "json"});
    REQUIRE(r.status == cli::exit_ok);
    std::size_t step_objects = 0;  // "step": N, once per Step Id
    for (auto at = r.out.find("\"step\": "); at != std::string::npos;
         at = r.out.find("\"step\": ", at + 1)) {
        ++step_objects;
    }
    CHECK(step_objects == 10);
    CHECK(has(r.out, "\"steps\": ["));
    CHECK(has(r.out, "\"step\": 10,"));

    // One step in the file (rank 0's step 2): --step 2 is the whole file, no steps line.
    const auto whole = run_command(cli::report_command, {rank0, "--chip", "910B2"});
    const auto step2 = run_command(cli::report_command, {rank0, "--chip", "910B2", "--step", "2"});
    REQUIRE(whole.status == cli::exit_ok);
    CHECK(step2.out == whole.out);
    CHECK_FALSE(has(whole.out, "steps (Step Id"));

    // Bad values, named.
    r = run_command(cli::report_command, {helix, "--chip", "910B2", "--step", "x"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err,
              "option '--step': 'x' is not a step id (a non-negative integer, the Step Id "
              "column)"));
    r = run_command(cli::report_command, {helix, "--chip", "910B2", "--step", "99"});
    CHECK(r.status != cli::exit_ok);
    CHECK(has(r.err, "no row of step 99"));
}

// ---- 9. --each: every op table of a folder, then side by side ---------------------------------

TEST_CASE("report fixes: --each reports every table of a folder and lines them up") {
    const std::string real = real_dir.substr(0, real_dir.size() - 1);  // no trailing '/'
    // Without it, several tables are an error that names --each.
    auto r = run_command(cli::report_command, {real, "--chip", "910B2"});
    CHECK(r.status != cli::exit_ok);
    CHECK(has(r.err, "pick one with --rank N or --device N (or report each with --each)"));

#ifdef PERFCAST_HAVE_SQLITE  // two of the nine tables are SQLite exports
    r = run_command(cli::report_command, {real, "--chip", "910B2", "--each"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "Side by side: 9 op tables"));
    // Each table's own report comes first, in full.
    CHECK(has(r.out, "perfcast report: " + rank0 + "\n"));
    CHECK(has(r.out, "perfcast report: " + rank1 + "\n"));

    r = run_command(cli::report_command, {real, "--chip", "910B2", "--each", "--format", "json"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "\"tables\": ["));
    CHECK(has(r.out, "\"side_by_side\": ["));
    CHECK(has(r.out, "\"what\": \"torch_npu, rank 1\""));
#endif

    // The side-by-side numbers are the tables' own: rank 1's device time and rows, as the
    // library reports that file alone.
    r = run_command(cli::report_command,
                    {real, "--chip", "910B2", "--each", "--format", "csv", "--rank", "1"});
    REQUIRE(r.status == cli::exit_ok);
    const profile_report alone = every_op(rank1, chips::ascend910b2);
    const std::string line1 = rank1 + ",\"torch_npu, rank 1\"," + std::to_string(alone.rows) + "," +
                              perfcast::io::format_fixed(alone.total_time.in(units::us), 3) + ",";
    CHECK(has(r.out, "table,what,rows,device us,cube util %,vector util %,host idle %\n"));
    CHECK(has(r.out, line1));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);  // --rank 1: one table

    r = run_command(cli::report_command, {"-", "--chip", "910B2", "--each"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--each': needs a folder, not -"));
}

// ---- 10. no --chip: the rows' cube_utilization(%) column tells it ------------------------------

TEST_CASE("report fixes: without --chip the report takes the chip the rows' column gives") {
    const std::string folder = real_dir + "torchnpu_helix_2026_standalone";
    const auto told = run_command(cli::report_command, {folder});
    REQUIRE(told.status == cli::exit_ok);
    CHECK(has(told.err,
              "cube_utilization(%) column: cube cores x clock = 43200 cycles/us "
              "(median of 10 rows, 10 within 1 %): ascend910b2 (24 x 1800 MHz); chip "
              "ascend910b2 (--chip overrides)"));
    const auto given = run_command(cli::report_command, {folder, "--chip", "ascend910b2"});
    REQUIRE(given.status == cli::exit_ok);
    CHECK(told.out == given.out);

    // A column no preset fits: a usage error that says what it gave.
    const auto qwen =
        run_command(cli::report_command, {real_dir + "torchnpu_cann83_qwen3_rank0_ascend_pt"});
    CHECK(qwen.status == cli::exit_usage);
    CHECK(has(qwen.err,
              "needs --chip C or --chip-ini FILE: the cube_utilization(%) column gives "
              "cube cores x clock = 33000 cycles/us, which no preset has"));
}

// ---- 11. host gaps over times that span more than int64 ----------------------------------------

TEST_CASE("report fixes: busy time over task times that span more than int64 stays right") {
    // fuzz_msprof_db's finding (tests/fuzz/corpus/msprof_db/regression-busy-span-int64-overflow):
    // a task near -9e18 ns and one ending at the int64 maximum made the busy-time sum overflow
    // int64 (undefined behaviour; in practice a negative busy time).
    report_builder b(chips::ascend910b2, {});
    kernel_row r;
    r.task = task_type::ai_core;
    r.op_type = "MatMulV2";
    r.start = timestamp{-9'000'171'072'689'741'512};
    r.task_duration = perfcast::duration{5.0, units::us};
    b.add(r);
    r.start = timestamp{std::numeric_limits<std::int64_t>::max() - 1000};
    r.task_duration = perfcast::duration{1.0, units::us};  // its end saturates at the maximum
    b.add(r);
    const profile_report rep = b.finish("t", "t");
    const auto& h = rep.host;
    CHECK(h.gaps == 1);
    // busy: the two tasks, 5 us + 1000 ns (the second's end is cut at the int64 maximum), within
    // a double's rounding at 1.8e19 ns (about 4 us), which the window's size forces.
    CHECK(h.busy.in(units::us) == doctest::Approx(6.0).epsilon(0.01));
    CHECK(h.window.in(units::ns) > 1.8e19);
    CHECK(h.idle.in(units::ns) > 0.0);
    CHECK(h.idle <= h.window);
}

}  // namespace test_report_fixes
