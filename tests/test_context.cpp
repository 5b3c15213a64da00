// Sequence context of profile rows (profile/context.hpp) and what cost() makes of it.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/op.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/validate.hpp>

#include <string>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_context {

using namespace perfcast;

namespace {

const std::string profile_910b1 =
    std::string(PERFCAST_SOURCE_DIR) + "/tests/data/profiles/kernel_details_910B1_train.csv";

// The columns every hand-written sequence below has.
constexpr std::string_view header =
    "Name,Type,Accelerator Core,Start Time(us),Duration(us),Block Dim,Input Shapes,"
    "Input Data Types,Output Shapes,Output Data Types\n";

// `body` under `header`, read and annotated on the 910B1.
std::vector<profile::kernel_row> in_context(std::string_view body) {
    auto rows = profile::parse_kernel_details(std::string(header) + std::string(body)).rows;
    profile::annotate_context(rows, chips::ascend910b1);
    return rows;
}

// Rows in launch order on the 910B1 (L2 192 MiB; 0.9 of it resident = 181,193,932.8 B):
//  2: Add writes [1024,512] fp16 (1 MiB)
//  3: Cast reads [512,1024] fp16 (the same 1 MiB under another shape): in L2
//  4: Cast again: same kernel, not a first run
//  5: an HCCL row: skipped
//  6: Mul reads and writes 3 x 100 MiB (more than the resident L2)
//  7: Cast reads 1 MiB again: 300 MiB of traffic since, no longer in L2
//  8: Exp reads [524288] fp16 (1 MiB, as the Cast before it read) and [4] fp32 (16 B, touched
//     by nothing before): 1 MiB of its 1 MiB + 16 B in L2
//  9: a row without a start time: left unannotated
constexpr std::string_view sequence_csv =
    "a,Add,AI_VECTOR_CORE,1,2,48,\"1024,512;1024,512\",FLOAT16;FLOAT16,\"1024,512\",FLOAT16\n"
    "c,Cast,AI_VECTOR_CORE,5,2,48,\"512,1024\",FLOAT16,\"512,1024\",FLOAT\n"
    "c2,Cast,AI_VECTOR_CORE,9,2,48,\"512,1024\",FLOAT16,\"512,1024\",FLOAT\n"
    "h,hcom_allReduce_,HCCL,12,50,0,N/A,N/A,N/A,N/A\n"
    "m,Mul,AI_VECTOR_CORE,70,200,48,\"52428800;52428800\",FLOAT16;FLOAT16,\"52428800\","
    "FLOAT16\n"
    "c3,Cast,AI_VECTOR_CORE,300,2,48,\"512,1024\",FLOAT16,\"512,1024\",FLOAT\n"
    "e,Exp,AI_VECTOR_CORE,310,2,48,\"524288;4\",FLOAT16;FLOAT,\"524288\",FLOAT16\n"
    "n,Exp,AI_VECTOR_CORE,,2,48,\"524288\",FLOAT16,\"524288\",FLOAT16\n";

}  // namespace

TEST_CASE("annotate_context: L2 share from recent producers, first runs, skipped rows") {
    auto rows = in_context(sequence_csv);
    REQUIRE(rows.size() == 8);
    // The first Add has no producer in the file.
    REQUIRE(rows[0].context.l2_input_share);
    CHECK(*rows[0].context.l2_input_share == 0.0);
    CHECK(rows[0].context.first_run);
    // Cast reads the Add's output (matched by bytes across shapes).
    REQUIRE(rows[1].context.l2_input_share);
    CHECK(*rows[1].context.l2_input_share == 1.0);
    CHECK(rows[1].context.first_run);
    CHECK_FALSE(rows[2].context.first_run);
    // HCCL rows are not annotated.
    CHECK_FALSE(rows[3].context.l2_input_share);
    // After 300 MiB of traffic the 1 MiB tensor is out of L2; the Cast kernel is not new.
    REQUIRE(rows[5].context.l2_input_share);
    CHECK(*rows[5].context.l2_input_share == 0.0);
    CHECK_FALSE(rows[5].context.first_run);
    // Exp: 1 MiB of its 1 MiB + 16 B inputs was touched by the Cast just before.
    REQUIRE(rows[6].context.l2_input_share);
    CHECK(*rows[6].context.l2_input_share == doctest::Approx(1048576.0 / 1048592.0).epsilon(1e-12));
    // No start time: not a launch sequence.
    CHECK_FALSE(rows[7].context.l2_input_share);
    CHECK_FALSE(rows[7].context.first_run);

    // The context reaches the op.
    const auto m = profile::measured_op_of(chips::ascend910b1, rows[5]);
    REQUIRE(m);
    CHECK(m->o.l2_input_share == 0.0);
    CHECK_FALSE(m->o.first_run);
    const auto first = profile::measured_op_of(chips::ascend910b1, rows[1]);
    REQUIRE(first);
    CHECK(first->o.first_run);
    CHECK(profile::measured_op_of(chips::ascend910b1, rows[7])->o.l2_input_share < 0);
}

TEST_CASE("annotate_context: an op pays for the dirty lines its traffic evicts") {
    // On the 910B1 the window is 0.9 x 192 MiB = 181,193,932.8 B of traffic.
    //  a: reads 16 B, writes 100 MiB (104,857,600 B): nothing written before it, nothing to evict;
    //     its 104,857,616 B of traffic are dirty in the share 104,857,600 / 104,857,616
    //  b: reads 1 MiB it did not write, writes 100 MiB: its 101 MiB of traffic push the window
    //     past the first 29,569,859.2 B of a's traffic (104,857,616 + 105,906,176 -
    //     181,193,932.8), dirty in a's share
    //  c: reads 16 B (4 fp32) and writes a 4 B scalar: its 20 B of traffic evict 20 more bytes
    //     of a's, dirty in the same share
    constexpr std::string_view csv =
        "a,Fill,AI_VECTOR_CORE,1,50,48,\"4\",FLOAT,\"52428800\",FLOAT16\n"
        "b,Cast,AI_VECTOR_CORE,60,50,48,\"524288\",FLOAT16,\"52428800\",FLOAT16\n"
        "c,ReduceSumD,AI_VECTOR_CORE,120,5,48,\"4\",FLOAT,\"\",FLOAT\n";
    auto rows = in_context(csv);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].context.writeback == data_size{});
    // 1e-9 relative: sums and differences of byte counts near 2^28 in doubles.
    const double a_dirty = 104857600.0 / 104857616.0;
    CHECK(rows[1].context.writeback.in(units::B) ==
          doctest::Approx((104857616.0 + 105906176.0 - 181193932.8) * a_dirty).epsilon(1e-9));
    CHECK(rows[2].context.writeback.in(units::B) == doctest::Approx(20.0 * a_dirty).epsilon(1e-6));
    // The write-back is HBM traffic of the op that evicts: b is slower with it than without.
    const auto b = profile::measured_op_of(chips::ascend910b1, rows[1]);
    REQUIRE(b);
    CHECK(b->o.writeback == rows[1].context.writeback);
    op without = b->o;
    without.writeback = data_size{};
    CHECK(cost(chips::ascend910b1, b->o, core_count{48}).memory >
          cost(chips::ascend910b1, without, core_count{48}).memory);
}

TEST_CASE("annotate_context: a kernel's reads and writes share the lines it leaves in L2") {
    // a: a Cast reads 100 MiB and writes 100 MiB (fp16 -> fp16 [52428800]): its 209,715,200 B
    //    of traffic stream reads and writes together, so the window it leaves is dirty in half.
    // b: a reduction reads 100 MiB (fp32 [26214400]) and writes a 4 B scalar: its 104,857,604 B
    //    evict the window's oldest part, [209,715,200 - 181,193,932.8, + 104,857,604), all of it
    //    a's traffic: half of it dirty, 52,428,802 B. (Were a's output one block after its
    //    input, the range would hold 28,521,271.2 B of it.)
    constexpr std::string_view csv =
        "a,Cast,AI_VECTOR_CORE,1,120,48,\"52428800\",FLOAT16,\"52428800\",FLOAT16\n"
        "b,ReduceSumD,AI_VECTOR_CORE,200,60,48,\"26214400\",FLOAT,\"\",FLOAT\n";
    auto rows = in_context(csv);
    REQUIRE(rows.size() == 2);
    // 1e-9 relative: sums and differences of byte counts near 2^28 in doubles.
    CHECK(rows[1].context.writeback.in(units::B) ==
          doctest::Approx(104857604.0 * 0.5).epsilon(1e-9));
}

TEST_CASE("annotate_context: a collective writes back the dirty lines before it") {
    // The sequence of the test above with an all-reduce between the Cast and the reduction: the
    // collective's traffic wrote the Cast's dirty lines back, so the reduction evicts none.
    // Without the collective: 52,428,802 B of write-back (above). What is resident stays: a Mul
    // reading the Cast's 100 MiB output after the collective still finds it in L2 (the
    // collective's tensor is the producer's output, which the window already holds).
    constexpr std::string_view csv =
        "a,Cast,AI_VECTOR_CORE,1,120,48,\"52428800\",FLOAT16,\"52428800\",FLOAT16\n"
        "h,hcom_allReduce_,HCCL,130,500,0,N/A,N/A,N/A,N/A\n"
        "b,ReduceSumD,AI_VECTOR_CORE,700,60,48,\"26214400\",FLOAT,\"\",FLOAT\n";
    auto rows = in_context(csv);
    REQUIRE(rows.size() == 3);
    CHECK(rows[2].context.writeback == data_size{});
    constexpr std::string_view reads_after =
        "a,Cast,AI_VECTOR_CORE,1,120,48,\"52428800\",FLOAT16,\"52428800\",FLOAT16\n"
        "h,hcom_allReduce_,HCCL,130,500,0,N/A,N/A,N/A,N/A\n"
        "m,Mul,AI_VECTOR_CORE,700,60,48,\"52428800\",FLOAT16,\"52428800\",FLOAT16\n";
    auto after = in_context(reads_after);
    REQUIRE(after.size() == 3);
    REQUIRE(after[2].context.l2_input_share);
    CHECK(*after[2].context.l2_input_share == 1.0);
    CHECK(after[2].context.writeback == data_size{});
    // The same Mul without the collective: its 209,715,200 B of traffic evict the window's whole
    // range, from 209,715,200 - 181,193,932.8 B on, all of it the Cast's traffic, dirty in half.
    // 1e-9 relative: byte counts near 2^28 in doubles.
    constexpr std::string_view no_collective =
        "a,Cast,AI_VECTOR_CORE,1,120,48,\"52428800\",FLOAT16,\"52428800\",FLOAT16\n"
        "m,Mul,AI_VECTOR_CORE,700,60,48,\"52428800\",FLOAT16,\"52428800\",FLOAT16\n";
    auto plain = in_context(no_collective);
    REQUIRE(plain.size() == 2);
    CHECK(plain[1].context.writeback.in(units::B) ==
          doctest::Approx(181193932.8 * 0.5).epsilon(1e-9));
}

TEST_CASE("cost: with a known order, a write larger than L2 leaves its last lines there") {
    const chip& c = chips::ascend910b1;
    const model_params p{};
    // Two 100 MiB fp16 inputs, a 100 MiB output: 300 MiB moved, more than the 181,193,932.8 B
    // resident; every read from HBM (l2_input_share 0). The op ends with the last resident
    // bytes of its traffic in L2, a third of them its writes (dirty, charged to whoever evicts
    // them): the HBM takes the reads and 100 MiB x (1 - resident / 300 MiB) of the writes.
    op o = elementwise(52428800, dtype::fp16);
    o.l2_input_share = 0.0;
    const double reads = o.bytes_read.in(units::B);
    const double writes = o.bytes_written.in(units::B);
    const double resident = 0.9 * 201326592.0;
    const double hbm = (c.memory.hbm_bandwidth * p.hbm_efficiency).in(units::Bps);
    const double expected_us = (reads + writes * (1.0 - resident / (reads + writes))) / hbm * 1e6;
    // 1e-9 relative: the same double arithmetic in another order.
    CHECK(cost(c, o, core_count{48}).memory.in(units::us) ==
          doctest::Approx(expected_us).epsilon(1e-9));
    // With traffic that mixes reads and writes costing up to twice (model_params::hbm_mix_cost),
    // every HBM byte weighs 1 + (2 - 1) x twice the lesser direction's share: the written-through
    // bytes are the lesser here.
    model_params twice;
    twice.hbm_mix_cost = 2;
    const double through = writes * (1.0 - resident / (reads + writes));
    const double twice_us =
        (reads + through) * (1.0 + 2.0 * through / (reads + through)) / hbm * 1e6;
    CHECK(cost(c, o, core_count{48}, twice).memory.in(units::us) ==
          doctest::Approx(twice_us).epsilon(1e-9));
    // Without the order nothing charges those lines later: a write too large for L2 goes to HBM
    // whole (here the 100 MiB output fits, so by size it stays and only the reads are charged).
    o.l2_input_share = -1;
    CHECK(cost(c, o, core_count{48}).memory.in(units::us) ==
          doctest::Approx(reads / hbm * 1e6).epsilon(1e-9));
    // An op whose whole traffic fits in the window leaves all its writes in L2: 4 MiB read from
    // HBM, the 2 MiB written stay. Its time is the longest of the HBM reads, the cores' loads
    // (from HBM and from L2) and their stores, each at its rate on 48 cores.
    op small = elementwise(1048576, dtype::fp16);
    small.l2_input_share = 0.0;
    const double r = small.bytes_read.in(units::B);
    const double w = small.bytes_written.in(units::B);
    const double clk48 = c.vector.clock.in(units::Hz)*48.0;
    const double terms[] = {r / hbm, r / (c.memory.core_read_rate.in(units::B_per_cycle)*clk48),
                            r / (c.memory.l2_read_rate.in(units::B_per_cycle)*clk48),
                            w / (c.memory.core_write_rate.in(units::B_per_cycle)*clk48)};
    double longest = 0;
    for (const double t : terms) longest = t > longest ? t : longest;
    CHECK(cost(c, small, core_count{48}).memory.in(units::us) ==
          doctest::Approx(longest * 1e6).epsilon(1e-9));
}

TEST_CASE("annotate_context: a recent tensor is one input; all the op's inputs fit beside it") {
    // a writes one 1 MiB tensor; b reads two 1 MiB tensors: only one of them can be a's output.
    constexpr std::string_view twice =
        "a,Cast,AI_VECTOR_CORE,1,2,48,\"1024,512\",FLOAT,\"1024,512\",FLOAT16\n"
        "b,Add,AI_VECTOR_CORE,5,2,48,\"1024,512;1024,512\",FLOAT16;FLOAT16,\"1024,512\",FLOAT16\n";
    auto rows = in_context(twice);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[1].context.l2_input_share);
    CHECK(*rows[1].context.l2_input_share == 0.5);

    // a writes 100 MiB (104,857,600 B); b reads it beside a tensor of 80 MiB nothing touched:
    // 180 MiB (188,743,680 B) of inputs do not fit in the 181,193,932.8 B window, so a's output
    // is not counted as resident. With 60 MiB beside it (160 MiB in all) it is: 100 / 160.
    const auto share_beside = [](std::string_view other_elements) {
        const std::string csv =
            "a,Fill,AI_VECTOR_CORE,1,50,48,\"4\",FLOAT,\"52428800\",FLOAT16\n"
            "b,Mul,AI_VECTOR_CORE,60,90,48,\"52428800;" +
            std::string(other_elements) + "\",FLOAT16;FLOAT16,\"52428800\",FLOAT16\n";
        auto seq = in_context(csv);
        REQUIRE(seq.size() == 2);
        REQUIRE(seq[1].context.l2_input_share);
        return *seq[1].context.l2_input_share;
    };
    CHECK(share_beside("41943040") == 0.0);
    CHECK(share_beside("31457280") == doctest::Approx(100.0 / 160.0).epsilon(1e-12));
}

TEST_CASE("cost: reads found in L2 are faster; a first run pays its extra head") {
    const chip& c = chips::ascend910b1;
    // Two 48 MiB inputs, a 48 MiB output on 48 vector cores: 96 MiB fits in the resident L2,
    // so by size all reads hit.
    op o = elementwise(25165824, dtype::fp16);
    const auto by_size = cost(c, o, core_count{48});
    o.l2_input_share = 1.0;
    CHECK(cost(c, o, core_count{48}) == by_size);
    o.l2_input_share = 0.0;
    const auto cold = cost(c, o, core_count{48});
    o.l2_input_share = 0.5;
    const auto half = cost(c, o, core_count{48});
    CHECK(cold.memory > half.memory);
    CHECK(half.memory >= by_size.memory);
    // All reads from HBM: the 96 MiB at HBM x efficiency bound the time (the core-side load
    // and the stores are shorter); 1e-9 relative: the same double arithmetic in another order.
    const model_params p{};
    const double hbm_us =
        (o.bytes_read / (c.memory.hbm_bandwidth * p.hbm_efficiency)).in(units::us);
    CHECK(cold.memory.in(units::us) == doctest::Approx(hbm_us).epsilon(1e-9));

    model_params q;
    q.first_run_launch = duration{0.5, units::us};
    q.first_run_per_core = duration{0.1, units::us};
    o.l2_input_share = -1;
    const auto warm = cost(c, o, core_count{48}, q);
    o.first_run = true;
    const auto first = cost(c, o, core_count{48}, q);
    CHECK((first.head - warm.head).in(units::us) == doctest::Approx(0.5 + 0.1 * 48).epsilon(1e-12));
    CHECK((first.latency - warm.latency).in(units::us) ==
          doctest::Approx(0.5 + 0.1 * 48).epsilon(1e-12));
    q.first_run_per_core = duration{-1, units::us};
    CHECK_THROWS_WITH_AS((void)validate(q), doctest::Contains("first_run_per_core"),
                         perfcast::error);
}

TEST_CASE("910B1 profile: context and the first-run cost lower the held-out error" *
          doctest::test_suite("heavy")) {
    const chip& c = chips::ascend910b1;
    const auto plain = profile::read_kernel_details_file(profile_910b1).rows;
    auto annotated = plain;
    profile::annotate_context(annotated, c);
    std::size_t first_runs = 0;
    for (const auto& r : annotated) first_runs += r.context.first_run ? 1 : 0;
    // One first run per distinct kernel: far fewer than the 591 rows.
    CHECK(first_runs > 20);
    CHECK(first_runs < 200);

    const auto ai = [](const profile::kernel_row& r) {
        return r.task == profile::task_type::ai_core ||
               r.task == profile::task_type::ai_vector_core;
    };
    // Vector efficiency kept in both: one fit each (the choice is the next test's subject).
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    const auto held_out_mape = [&](const std::vector<profile::kernel_row>& rows) {
        const auto split = profile::split_holdout(rows, 0.3, 1);
        const auto fit = profile::calibrate(c, profile::measured_ops(c, split.fit), {}, opt);
        return std::pair{profile::score_rows(c, split.test, fit.fitted, ai).overall.mape, fit};
    };
    const auto [with_context, fit] = held_out_mape(annotated);
    const auto without = held_out_mape(plain).first;
    CHECK(with_context < without);
    // The fitted first-run cost is what the profile shows: a few us on 48 cores.
    const double extra48 = (fit.fitted.params.first_run_launch +
                            fit.fitted.params.first_run_per_core * 48.0)
                               .in(units::us);
    CHECK(extra48 > 1.0);
    CHECK(extra48 < 10.0);
}

TEST_CASE("calibration: the vector efficiency is kept when asked, chosen by CV otherwise" *
          doctest::test_suite("heavy")) {
    const chip& c = chips::ascend910b1;
    // The profile's first 200 rows and a quarter of the default search budget: the test checks
    // the decision's bookkeeping, not the fit's quality.
    auto first = profile::read_kernel_details_file(profile_910b1).rows;
    first.resize(200);
    auto rows = first;
    profile::annotate_context(rows, c);
    const auto ops = profile::measured_ops(c, rows);
    profile::calibration_options keep;
    keep.max_evaluations = 1500;
    keep.vector_efficiency = profile::vector_efficiency_fit::keep;
    const auto kept = profile::calibrate(c, ops, model_params{}, keep);
    CHECK_FALSE(kept.vector_efficiency_fitted);
    CHECK(kept.fitted.params.vector_efficiency == model_params{}.vector_efficiency);
    CHECK(kept.cv_error_fitted == 0);
    // Rows without context: the first-run cost is not searched and stays at its start (0).
    const auto plain = profile::calibrate(c, profile::measured_ops(c, first), model_params{}, keep);
    CHECK(plain.fitted.params.first_run_launch == duration{});
    CHECK(plain.fitted.params.first_run_per_core == duration{});

    profile::calibration_options choose;
    choose.max_evaluations = 1500;
    const auto chosen = profile::calibrate(c, ops, model_params{}, choose);
    CHECK(chosen.cv_error_fitted > 0);
    CHECK(chosen.cv_error_kept > 0);
    // Fitted only when it cross-validates cv_margin (5 %) better.
    CHECK(chosen.vector_efficiency_fitted ==
          (chosen.cv_error_fitted < (1.0 - choose.cv_margin) * chosen.cv_error_kept));
    profile::calibration_options bad;
    bad.folds = 1;
    CHECK_THROWS_WITH_AS((void)profile::calibrate(c, ops, model_params{}, bad),
                         doctest::Contains("folds"), perfcast::error);
}

}  // namespace test_context
