// The model against measured GPU operators: vidur's A100 profile of Llama-2-7B layers
// (tests/data/gpu/vidur_a100_llama2-7b_mlp.csv, origin in tests/data/README.md), converted by
// examples/vidur.hpp into the minimal kernel_details subset, calibrated on the fit split
// (tensor-parallel degree 1, <= 1024 tokens) and scored on the rest; and its attention profile
// (tests/data/gpu/vidur_a100_llama2-7b_attention.csv), fitted on degrees 1 and 2, scored on 4 and
// 8. docs/validation.md has the figures; here only what is structural or has a margin that does
// not depend on tuning.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/profile/validate.hpp>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "../examples/vidur.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_gpu_validation {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;

namespace {

const std::string vidur_csv = PERFCAST_SOURCE_DIR "/tests/data/gpu/vidur_a100_llama2-7b_mlp.csv";

std::vector<vidur::mlp_row> read_vidur(vidur::statistic stat = vidur::statistic::median) {
    std::ifstream f(vidur_csv, std::ios::binary);
    REQUIRE(f.good());
    return vidur::read_mlp(f, vidur_csv, stat);
}

/// The rows (mlp or attention measurements) as the converter writes them, read back by the
/// profile reader.
template <class Row>
std::vector<profile::kernel_row> as_profile(const std::vector<Row>& rows, const std::string& name,
                                            int block_dim = vidur::a100_sms) {
    std::ostringstream out;
    (void)vidur::write_profile(out, rows, block_dim);
    return profile::parse_kernel_details(out.str(), name).rows;
}

/// Token count and tensor-parallel degree from a converted row's name
/// ("attn_pre_proj T=4096 tp=1 line=2").
struct row_key {
    std::string op;
    long tokens = 0;
    long tp = 0;
};
row_key key_of(const std::string& name) {
    row_key k;
    std::istringstream in(name);
    std::string t, tp;
    in >> k.op >> t >> tp;
    k.tokens = std::stol(t.substr(2));
    k.tp = std::stol(tp.substr(3));
    return k;
}

/// The split used everywhere below, built once (the conversion and the fit take a while in a
/// Debug build).
struct a100_data {
    std::vector<profile::kernel_row> fit;
    std::vector<profile::kernel_row> test;
    profile::calibration_result calibrated;
};
const a100_data& data() {
    static const a100_data d = [] {
        const auto s = vidur::split(read_vidur());
        a100_data r;
        r.fit = as_profile(s.fit, "fit.csv");
        r.test = as_profile(s.test, "test.csv");
        // Vector efficiency fitted: what the default cross-validated choice picks on these
        // rows (docs/validation.md), without its six extra fits.
        profile::calibration_options opt;
        opt.vector_efficiency = profile::vector_efficiency_fit::fit;
        r.calibrated = profile::calibrate(
            chips::a100_80gb_sxm, profile::measured_ops(chips::a100_80gb_sxm, r.fit), {}, opt);
        return r;
    }();
    return d;
}

bool large_gemm(const profile::kernel_row& r) {
    return profile::is_gemm_type(r.op_type) && key_of(r.name).tokens >= 2048;
}

}  // namespace

TEST_CASE("vidur A100 profile: 1044 measurements, 10 timed operators each, ms read as us") {
    const auto rows = read_vidur();
    REQUIRE(rows.size() == 1044);
    // First data row of the file (line 2): 4096 tokens, tp 1, Llama-2-7B dimensions.
    const auto& m = rows.front();
    CHECK(m.line == 2);
    CHECK(m.num_tokens == 4096);
    CHECK(m.tp == 1);
    CHECK(m.n_head == 32);
    CHECK(m.n_kv_head == 32);
    CHECK(m.n_embd == 4096);
    CHECK(m.n_expanded_embd == 11008);
    CHECK(m.vocab_size == 32768);
    CHECK(m.gated);
    for (const auto& t : m.us) CHECK(t.has_value());
    // time_stats.attn_pre_proj.median = 1.911 ms, .mean = 1.85735 ms.
    CHECK(*m.us[2] == doctest::Approx(1911.0));
    CHECK(*read_vidur(vidur::statistic::mean).front().us[2] == doctest::Approx(1857.35));

    const auto s = vidur::split(rows);
    CHECK(s.fit.size() == 131);  // tp 1 and at most 1024 tokens
    CHECK(s.test.size() == 913);
    for (const auto& r : s.fit) CHECK((r.tp == 1 && r.num_tokens <= 1024));

    // The embedding as the kernel torch 2.2's F.embedding ran: indexSelectLargeIndex past 16
    // tokens, indexSelectSmallIndex up to 16 (examples/vidur.hpp).
    const auto emb_type = [](const vidur::mlp_row& r) {
        for (const auto& k : vidur::kernels_of(r, 108))
            if (k.name.starts_with("emb ")) return k.type;
        return std::string{};
    };
    CHECK(emb_type(m) == "indexSelectLargeIndex");
    vidur::mlp_row few = m;
    few.num_tokens = 16;
    CHECK(emb_type(few) == "indexSelectSmallIndex");
    few.num_tokens = 17;
    CHECK(emb_type(few) == "indexSelectLargeIndex");
}

TEST_CASE("converted rows read back as the GEMMs and vector ops of the layer" *
          doctest::test_suite("heavy")) {
    const auto& d = data();
    REQUIRE(d.fit.size() == 1310);
    REQUIRE(d.test.size() == 9130);
    int gemms = 0;
    for (const auto* rows : {&d.fit, &d.test}) {
        for (const auto& r : *rows) {
            INFO(r.name);
            CHECK(r.notes.empty());
            REQUIRE(r.block_dim.has_value());
            CHECK(*r.block_dim == 108);
            REQUIRE(profile::op_of(r).has_value());
            if (!profile::is_gemm_type(r.op_type)) {
                CHECK(r.task == profile::task_type::ai_vector_core);
                continue;
            }
            ++gemms;
            CHECK(r.task == profile::task_type::ai_core);
            const auto g = profile::gemm_of(r);
            REQUIRE(g.has_value());
            const row_key k = key_of(r.name);
            CHECK(g->m == k.tokens);
            // Llama-2-7B: E = 4096, I = 11008, 32 q and 32 kv heads of 128, split over tp.
            if (k.op == "attn_pre_proj") {
                CHECK(g->n == 3 * 4096 / k.tp);
                CHECK(g->k == 4096);
            } else if (k.op == "attn_post_proj") {
                CHECK(g->n == 4096);
                CHECK(g->k == 4096 / k.tp);
            } else if (k.op == "mlp_up_proj") {
                CHECK(g->n == 2 * 11008 / k.tp);
                CHECK(g->k == 4096);
            } else {
                CHECK(k.op == "mlp_down_proj");
                CHECK(g->n == 4096);
                CHECK(g->k == 11008 / k.tp);
            }
        }
    }
    CHECK(gemms == 4 * 1044);
    CHECK(profile::measured_ops(chips::a100_80gb_sxm, d.fit).size() == 1310);
}

TEST_CASE("calibrating on the fit split lowers its error; held-out rows are all scored" *
          doctest::test_suite("heavy")) {
    const auto& d = data();
    const auto& fit = d.calibrated;
    CHECK(fit.rows == 1310);
    // The objective the fit minimizes (type-weighted RMS of log(predicted / measured)) must go
    // down; the size of the drop is data, recorded in docs/validation.md (0.804 -> 0.519).
    CHECK(fit.log_error_after < fit.log_error_before);

    const auto before = profile::score_rows(chips::a100_80gb_sxm, d.test);
    const auto after = profile::score_rows(chips::a100_80gb_sxm, d.test, fit.fitted);
    CHECK(before.skipped == 0);
    CHECK(after.skipped == 0);
    CHECK(after.overall.rows == 9130);
    CHECK(std::isfinite(after.overall.mape));
    // No bound on the held-out MAPE here: the figure is data, recorded in docs/validation.md
    // (11.4 % calibrated, 30.9 % uncalibrated; the vector ops are off by factors uncalibrated).
}

TEST_CASE("GEMMs of 2048 tokens and more are predicted within 30 % MAPE on the A100" *
          doctest::test_suite("heavy")) {
    // Large GEMMs are compute-bound, where the preset's datasheet peak decides: the model's
    // home ground. 30 % is the project's acceptance bound for uncalibrated GEMMs (the 910B1
    // GEMMs, tests/test_gemm_910b1.cpp). Measured: 10.8 % uncalibrated, 6.0 % calibrated on the
    // fit split (1072 rows, all tensor-parallel degrees).
    const auto& d = data();
    const auto uncal = profile::score_rows(chips::a100_80gb_sxm, d.test, {}, large_gemm);
    const auto cal =
        profile::score_rows(chips::a100_80gb_sxm, d.test, d.calibrated.fitted, large_gemm);
    REQUIRE(uncal.overall.rows == 1072);  // 268 measurements x 4 GEMMs
    CHECK(uncal.overall.mape < 0.30);
    CHECK(cal.overall.mape < 0.30);
}

TEST_CASE("A100 norms: the row-kernel floor halves the uncalibrated error; calibrated, it yields" *
          doctest::test_suite("heavy")) {
    // RmsNorm rows of the test split (tp 2-8 or > 1024 tokens; the floor's constant was chosen on
    // the fit split). Measured 58.8 % without the floor, 29.1 % with it (docs/validation.md);
    // 40 % sits between the two, so the check fails without the floor.
    const auto& d = data();
    const auto norm = [](const profile::kernel_row& r) { return r.op_type == "RmsNorm"; };
    chip no_floor = chips::a100_80gb_sxm;
    no_floor.overhead.row_trip_cycles = {};
    const auto with = profile::score_rows(chips::a100_80gb_sxm, d.test, {}, norm);
    const auto without = profile::score_rows(no_floor, d.test, {}, norm);
    REQUIRE(with.overall.rows == 1826);
    CHECK(with.overall.mape < 0.40);
    CHECK(without.overall.mape > 0.40);
    // The calibration fitted RmsNorm's work factor without the floor, and with the factor the
    // floor gives way: the calibrated predictions are those of the chip without it.
    REQUIRE(d.calibrated.fitted.work_factor.count("RmsNorm") == 1);
    const auto cal = profile::score_rows(chips::a100_80gb_sxm, d.test, d.calibrated.fitted, norm);
    const auto cal_no = profile::score_rows(no_floor, d.test, d.calibrated.fitted, norm);
    CHECK(cal.overall.mape == cal_no.overall.mape);
}

TEST_CASE("H100 GEMMs, which no fit saw, are predicted within 15 % MAPE uncalibrated") {
    // vidur's profile of the same layer on an H100 (tests/data/gpu/vidur_h100_llama2-7b_mlp.csv),
    // every GEMM row, preset defaults: nothing here was fitted to H100 rows. Measured 12.9 %
    // (docs/validation.md; 9.1 % with the A100's kernel heads, before the Hopper heads fitted on
    // the H200's CUPTI kernel times); 44 % before the tile choice and the whitepaper L2 rate
    // (cost.hpp, chips/nvidia.hpp), so the bound fails on the old model; 15 % is half the
    // project's acceptance bound for uncalibrated GEMMs (30 %).
    const std::string path = PERFCAST_SOURCE_DIR "/tests/data/gpu/vidur_h100_llama2-7b_mlp.csv";
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    const auto mlp = vidur::read_mlp(f, path, vidur::statistic::median);
    std::ostringstream out;
    (void)vidur::write_profile(out, mlp, 132);  // the H100 SXM's SMs
    const auto rows = profile::parse_kernel_details(out.str(), "h100.csv").rows;
    const auto gemm = [](const profile::kernel_row& r) { return profile::is_gemm_type(r.op_type); };
    const auto s = profile::score_rows(chips::h100_sxm, rows, {}, gemm);
    REQUIRE(s.overall.rows == 4 * 1044);
    CHECK(s.overall.mape < 0.15);
    // Every row: 19.5 % (19.2 % before PyTorch's index_select rate was refitted with the Ampere
    // heads and its few-index trip added, 27.3 % before the embedding ran on PyTorch's
    // index_select; 27.2 % before the Hopper heads were refitted with softmax on PyTorch's
    // blocks, 27.4 % before the load latency, 34.6 % before rope and gated activations walked; 31.9
    // % with the A100's heads; docs/validation.md, "Measured on an H200", says why the Hopper
    // presets keep the H200's; 33.6 % before the vector head was refitted with the element
    // walks, 1.40 + 0.001 us per SM -> 1.37 us: vidur sums an operator's kernels at 1 us
    // resolution); the goal is 35 %; the bound is that figure rounded up.
    const auto all = profile::score_rows(chips::h100_sxm, rows, {},
                                         [](const profile::kernel_row&) { return true; });
    CHECK(all.overall.mape <= 0.20);
}

TEST_CASE("vidur reader: errors name the file, line and column") {
    const auto read = [](const std::string& text) {
        std::istringstream in(text);
        return vidur::read_mlp(in, "x.csv");
    };
    CHECK_THROWS_WITH_AS((void)read(""), doctest::Contains("empty file"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)read("n_head\n1\n"),
                         doctest::Contains("no column 'time_stats.emb.median'"), perfcast::error);

    // A header with every column and one data row; `row` varies the values.
    std::string header;
    for (auto op : vidur::op_names) header += "time_stats." + std::string(op) + ".median,";
    header += "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,"
              "num_tensor_parallel_workers\n";
    const auto row = [&](const std::string& times, const std::string& dims) {
        return header + times + dims + "\n";
    };
    const std::string ok_times = "1,1,1,1,1,1,1,1,1,1,";
    const auto good = read(row(ok_times, "32,32,4096,11008,32768,True,16,2"));
    REQUIRE(good.size() == 1);
    CHECK(good[0].line == 2);
    CHECK(*good[0].us[0] == doctest::Approx(1000.0));
    CHECK(vidur::kernels_of(good[0]).size() == 10);

    // An empty or zero time leaves that operator out.
    const auto partial = read(row(",0,1,1,1,1,1,1,1,1,", "32,32,4096,11008,32768,False,16,2"));
    REQUIRE(partial.size() == 1);
    const auto ks = vidur::kernels_of(partial[0]);
    REQUIRE(ks.size() == 8);
    CHECK(ks[0].type == "MatMul");
    CHECK(ks[0].name == "attn_pre_proj T=16 tp=2 line=2");
    CHECK(ks[4].type == "MatMul");  // mlp_up_proj, not gated: [T, I / tp]
    CHECK(ks[4].output_shapes == "16,5504");
    CHECK(ks[5].type == "Gelu");

    CHECK_THROWS_WITH_AS((void)read(row("1,x,1,1,1,1,1,1,1,1,", "32,32,4096,11008,32768,True,16,2")),
                         doctest::Contains("x.csv:2: time_stats.input_layernorm"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(row(ok_times, "32,32,4096,11008,32768,True,16,3")),
                         doctest::Contains("n_head is not a multiple"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(row(ok_times, "32,32,4096,11008,32768,True,0,1")),
                         doctest::Contains("num_tokens"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(row(ok_times, "32,32,4096,11008,32768,yes,16,1")),
                         doctest::Contains("use_gated_mlp"), perfcast::error);
    CHECK_THROWS_AS((void)read(header + "1,2\n"), perfcast::parse_error);  // field count
}

TEST_CASE("converter output: quoted shapes, durations with 3 decimals") {
    vidur::mlp_row m;
    m.line = 7;
    m.n_head = 32;
    m.n_kv_head = 8;  // grouped-query attention: q + 2 kv heads in the QKV projection
    m.n_embd = 4096;
    m.n_expanded_embd = 14336;
    m.vocab_size = 128256;
    m.gated = true;
    m.num_tokens = 5;
    m.tp = 2;
    m.us[2] = 12.3456;  // attn_pre_proj
    std::ostringstream out;
    CHECK(vidur::write_profile(out, {m}) == 1);
    CHECK(out.str() ==
          "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
          "Output Shapes,Output Data Types\n"
          "attn_pre_proj T=5 tp=2 line=7,MatMul,AI_CORE,12.346,108,\"5,4096;3072,4096\","
          "fp16;fp16,\"5,3072\",fp16\n");
}

namespace {

/// Every row of a vidur file of tests/data/gpu/ (its median columns), converted with the chip's
/// SMs as Block Dim.
std::vector<profile::kernel_row> vidur_rows(const std::string& file, int sms) {
    const std::string path = PERFCAST_SOURCE_DIR "/tests/data/gpu/" + file;
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return as_profile(vidur::read_mlp(f, path, vidur::statistic::median), file, sms);
}

bool any_row(const profile::kernel_row&) { return true; }

/// Each file's every row (10440 each), uncalibrated on `c`, within `bound` MAPE.
void check_uncalibrated(std::initializer_list<const char*> files, const chip& c, double bound) {
    for (const char* file : files) {
        CAPTURE(file);
        const auto rows = vidur_rows(file, c.vector.cores);
        REQUIRE(rows.size() == 10440);
        const auto s = profile::score_rows(c, rows, {}, any_row);
        MESSAGE(std::string(file) << ": MAPE " << 100.0 * s.overall.mape << " %");
        CHECK(s.overall.mape <= bound);
    }
}

}  // namespace

TEST_CASE(
    "vidur's embedding rows: PyTorch's index_select rate, fitted on the A100 fit split, "
    "holds on the held-out split and another GPU") {
    // chips::pytorch_index_select_rate was fitted on the fit split's 131 embedding rows (12.9 %;
    // 68.2 % when they were priced as a memory-bound gather, GatherV2); the test split's 913
    // (10.8 %; 77.1 % before) and the H100's 1044 (4.1 %; 84.7 % before) were held out
    // (docs/validation.md, "Embedding lookups on PyTorch's index_select"). Refitted with the
    // Ampere heads and the few-index trip ("The Ampere heads refitted"): 6.5, 5.3 and 6.3 %.
    // 10, 9 and 8 % bound them with room for the model's other terms to move, under the 68-85 %
    // of before.
    const auto emb = [](const profile::kernel_row& r) { return r.name.starts_with("emb "); };
    const auto& d = data();
    const auto fit = profile::score_rows(chips::a100_80gb_sxm, d.fit, {}, emb);
    const auto test = profile::score_rows(chips::a100_80gb_sxm, d.test, {}, emb);
    const auto h100 = profile::score_rows(
        chips::h100_sxm, vidur_rows("vidur_h100_llama2-7b_mlp.csv", chips::h100_sxm.vector.cores),
        {}, emb);
    MESSAGE("fit ", fit.overall.mape * 100, " %, test ", test.overall.mape * 100, " %, H100 ",
            h100.overall.mape * 100, " %");
    CHECK(fit.overall.rows == 131);
    CHECK(test.overall.rows == 913);
    CHECK(h100.overall.rows == 1044);
    CHECK(fit.overall.mape < 0.10);
    CHECK(test.overall.mape < 0.09);
    CHECK(h100.overall.mape < 0.08);
}

TEST_CASE("the Ampere heads, fitted on the A100 fit split, hold on its test split and the A40" *
          doctest::test_suite("heavy")) {
    // The Ampere kernel heads, the norms' trip and PyTorch's index_select rate and trip were
    // fitted jointly on the fit split's every row, uncalibrated (17.8 -> 11.6 %: chips/nvidia.hpp,
    // docs/validation.md "The Ampere heads refitted"). Held out: the test split's 9130 rows 13.2 %
    // (21.1 % with the constants of before), the A40 Llama-2-7B's 10440 15.6 % (20.6 %). 16 and
    // 18 % lie between, so each check fails with the constants of before.
    const auto as_before = [](chip c) {
        c.overhead.launch = duration{3.0, units::us};
        c.overhead.vector_launch = duration{3.0, units::us};
        c.overhead.row_trip_cycles = cycle_count{3243.0 / 4.0, units::cycle};
        c.vector.index_select_rate = 0.6;
        c.vector.index_select_trip = duration{};
        c.overhead.attention_unit_cycles = cycle_count{5000.0, units::cycle};  // no such rows here
        return c;
    };
    const auto& d = data();
    const auto now = profile::score_rows(chips::a100_80gb_sxm, d.test, {}, any_row);
    const auto before = profile::score_rows(as_before(chips::a100_80gb_sxm), d.test, {}, any_row);
    REQUIRE(now.overall.rows == 9130);
    MESSAGE("test split: " << 100.0 * now.overall.mape << " %, before "
                           << 100.0 * before.overall.mape << " %");
    CHECK(now.overall.mape < 0.16);
    CHECK(before.overall.mape > 0.16);
    const auto a40 = vidur_rows("vidur_a40_llama2-7b_mlp_median.csv", chips::a40_pcie.vector.cores);
    const auto a40_now = profile::score_rows(chips::a40_pcie, a40, {}, any_row);
    const auto a40_before = profile::score_rows(as_before(chips::a40_pcie), a40, {}, any_row);
    MESSAGE("A40 Llama-2-7B: " << 100.0 * a40_now.overall.mape << " %, before "
                               << 100.0 * a40_before.overall.mape << " %");
    CHECK(a40_now.overall.mape < 0.18);
    CHECK(a40_before.overall.mape > 0.18);
}

TEST_CASE("vidur's other models on the H100: each within 35 % uncalibrated" *
          doctest::test_suite("heavy")) {
    // Four models whose measurements were read only after every rule they score was fixed but
    // the rope and gated-activation walks (docs/validation.md, "Unseen models and an unseen GPU"):
    // Llama-2-70B was looked at to choose them, CodeLlama-34B, InternLM-20B and Qwen-72B were
    // scored once before (35.2-37.3 %) and once after (27.3-29.6 %). 35 % is issue 13's goal.
    check_uncalibrated(
        {"vidur_h100_llama2-70b_mlp_median.csv", "vidur_h100_codellama-34b_mlp_median.csv",
         "vidur_h100_internlm-20b_mlp_median.csv", "vidur_h100_qwen-72b_mlp_median.csv"},
        chips::h100_sxm, 0.35);
}

TEST_CASE("GPU norms of 5120 and 8192: the row floor in trips over the row, scored not fitted" *
          doctest::test_suite("heavy")) {
    // The floor's constant was fitted on 4096-wide rows alone (the A100 fit split), where a
    // block of 1024 threads walks its row in 4 trips; priced per trip, rows of 8192 take 8 and
    // rows of 5120 take 5. Measured (docs/validation.md, "Row kernels on a GPU"): the A100's
    // Llama-2-70B RmsNorm rows 45.5 % with one row time whatever the width, 32.0 % per trip;
    // InternLM-20B's 32.9 and 28.4 %; since the Ampere heads were refitted with the trip ("The
    // Ampere heads refitted"), 47.1 and 19.7 %, 23.2 and 17.3 %. The chip below with
    // row_trip_cycles x 4 / trips prices the floor as one row time; the bounds sit between.
    const auto norm = [](const profile::kernel_row& r) { return r.op_type == "RmsNorm"; };
    const struct {
        const char* file;
        double trips, bound;
    } cases[] = {{"vidur_a100_llama2-70b_mlp.csv", 8, 0.30},
                 {"vidur_a100_internlm-20b_mlp_median.csv", 5, 0.20}};
    for (const auto& x : cases) {
        const std::string file = x.file;
        CAPTURE(file);
        const auto rows = vidur_rows(file, chips::a100_80gb_sxm.vector.cores);
        chip flat = chips::a100_80gb_sxm;
        flat.overhead.row_trip_cycles = flat.overhead.row_trip_cycles * (4.0 / x.trips);
        const auto per_trip = profile::score_rows(chips::a100_80gb_sxm, rows, {}, norm);
        const auto one_time = profile::score_rows(flat, rows, {}, norm);
        REQUIRE(per_trip.overall.rows == 2088);
        MESSAGE("per trip " << 100.0 * per_trip.overall.mape << " %, one row time "
                            << 100.0 * one_time.overall.mape << " %");
        CHECK(per_trip.overall.mape < x.bound);
        CHECK(one_time.overall.mape > x.bound);
    }
}

TEST_CASE("GPU rope and gated activations: the element walk takes their error from 50 % to 15 %" *
          doctest::test_suite("heavy")) {
    // sarathi-serve's rope and silu_and_mul kernels walk a row's elements one at a time
    // (profile/ops.hpp); at the Hopper walk rate the H100 Llama-2-70B rows (the file chosen on)
    // score 13.6 % against 52.1 % without the walk; 25 % and 40 % sit between.
    const auto rows =
        vidur_rows("vidur_h100_llama2-70b_mlp_median.csv", chips::h100_sxm.vector.cores);
    const auto walked = [](const profile::kernel_row& r) {
        return r.op_type == "ApplyRotaryPosEmb" || r.op_type == "SwiGlu";
    };
    chip no_walk = chips::h100_sxm;
    no_walk.vector.walk_rate = 0;
    no_walk.vector.transpose_rate = 0;
    const auto with = profile::score_rows(chips::h100_sxm, rows, {}, walked);
    const auto without = profile::score_rows(no_walk, rows, {}, walked);
    REQUIRE(with.overall.rows == 2 * 1044);
    MESSAGE("with the walk " << 100.0 * with.overall.mape << " %, without "
                             << 100.0 * without.overall.mape << " %");
    CHECK(with.overall.mape < 0.25);
    CHECK(without.overall.mape > 0.40);
}

TEST_CASE("the A40, a preset written from its datasheet before any A40 row was read" *
          doctest::test_suite("heavy")) {
    // Five models measured on an A40 (84 SMs); the preset cites datasheet and whitepaper figures
    // only. Measured 17.6-22.0 % before the rope and gated-activation walks, 18.2-23.0 % with them,
    // 11.8-15.6 % since the Ampere heads were refitted on the A100 (docs/validation.md). 17 % is
    // the largest of them with room for noise in the last digit of vidur's times, not a goal:
    // issue 13's uncalibrated goal is 35 %.
    check_uncalibrated(
        {"vidur_a40_llama2-7b_mlp_median.csv", "vidur_a40_llama2-70b_mlp_median.csv",
         "vidur_a40_codellama-34b_mlp_median.csv", "vidur_a40_internlm-20b_mlp_median.csv",
         "vidur_a40_qwen-72b_mlp_median.csv"},
        chips::a40_pcie, 0.17);
}

TEST_CASE("calibrated on Llama-2-7B's small-token rows, other models' A100 rows within 11 %" *
          doctest::test_suite("heavy")) {
    // The fit split (tp 1, <= 1024 tokens of Llama-2-7B) calibrates; five other models, every
    // token count and tensor-parallel degree, are scored: other shapes (widths 4096-8192,
    // expanded widths 13824-28672, grouped KV heads) from other runs. 11 %: issue 13's calibrated
    // goal is 10 %, and Llama-3-8B's rows score about 10 % (docs/validation.md).
    const auto& d = data();
    double sum = 0;
    int files = 0;
    for (const char* file :
         {"vidur_a100_codellama-34b_mlp_median.csv", "vidur_a100_internlm-20b_mlp_median.csv",
          "vidur_a100_qwen-72b_mlp_median.csv", "vidur_a100_llama3-8b_mlp_median.csv",
          "vidur_a100_llama3-70b_mlp_median.csv"}) {
        CAPTURE(file);
        const auto rows = vidur_rows(file, chips::a100_80gb_sxm.vector.cores);
        const auto s =
            profile::score_rows(chips::a100_80gb_sxm, rows, d.calibrated.fitted, any_row);
        MESSAGE(std::string(file) << ": MAPE " << 100.0 * s.overall.mape << " %");
        CHECK(s.overall.mape < 0.11);
        sum += s.overall.mape;
        ++files;
    }
    CHECK(sum / files <= 0.10);
}

namespace {

/// The rows of a vidur attention file of tests/data/gpu/.
std::vector<vidur::attention_row> read_attention_rows(
    const std::string& file = "vidur_a100_llama2-7b_attention.csv") {
    const std::string path = PERFCAST_SOURCE_DIR "/tests/data/gpu/" + file;
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return vidur::read_attention(f, path);
}

}  // namespace

TEST_CASE("vidur A100 attention: 1754 measurements, decode and prefill, ms read as us") {
    const auto rows = read_attention_rows();
    REQUIRE(rows.size() == 1754);
    // Counts per tensor-parallel degree and phase, as tests/data/README.md lists them.
    std::size_t decode[9] = {}, prefill[9] = {};
    for (const auto& a : rows) (a.prefill ? prefill : decode)[a.tp] += 1;
    CHECK(decode[1] == 349);
    CHECK(prefill[1] == 255);
    CHECK(decode[2] == 174);
    CHECK(prefill[2] == 88);
    CHECK(decode[4] == 265);
    CHECK(prefill[4] == 173);
    CHECK(decode[8] == 176);
    CHECK(prefill[8] == 274);
    // The first data row: tp 1, one sequence over 32 cached tokens, 0.009000000000000001 ms.
    CHECK(rows[0].line == 2);
    CHECK_FALSE(rows[0].prefill);
    CHECK(rows[0].batch == 1);
    CHECK(rows[0].kv_cache == 32);
    CHECK(rows[0].us == doctest::Approx(9.0));
    // Its kernel row: Q [1, 32, 1, 128], K and V [1, 32, 33, 128] (the new token's key too).
    const auto k = vidur::kernel_of(rows[0]);
    CHECK(k.type == "FlashAttentionScore");
    CHECK(k.input_shapes == "1,32,1,128;1,32,33,128;1,32,33,128");
    CHECK(k.output_shapes == "1,32,1,128");
    CHECK(k.name == "attn_decode B=1 S=1 kv=32 tp=1 line=2");
    // A prefill row at tp 8 (4 heads): a chunk over its cached tokens, no mask input.
    const auto last = vidur::kernel_of(rows.back());
    REQUIRE(rows.back().prefill);
    CHECK(last.input_shapes == "1,4,4032,128;1,4,4096,128;1,4,4096,128");
    CHECK(last.input_types == "fp16;fp16;fp16");
    // The split: degrees 1 and 2 fit, 4 and 8 held out.
    const auto s = vidur::split(rows);
    CHECK(s.fit.size() == 349 + 255 + 174 + 88);
    CHECK(s.test.size() == 265 + 173 + 176 + 274);
}

TEST_CASE("vidur A100 Llama-3-8B attention (FlashInfer): GQA rows, 585 measurements") {
    const auto rows = read_attention_rows("vidur_a100_llama3-8b_attention.csv");
    REQUIRE(rows.size() == 1154);
    std::size_t decode = 0, prefill = 0, prefill_tp4 = 0, flashinfer = 0;
    for (const auto& a : rows) {
        (a.prefill ? prefill : decode) += 1;
        if (a.prefill && a.tp == 4) ++prefill_tp4;
        if (a.flashinfer) ++flashinfer;
    }
    CHECK(decode == 512);
    CHECK(prefill == 73 + 569);
    CHECK(prefill_tp4 == 569);
    CHECK(flashinfer == rows.size());
    // The first row: a 64-token chunk with nothing cached, 0.011 ms; 32 query over 8 KV heads;
    // FlashInfer's prefill is causal (the mask input).
    REQUIRE(rows[0].prefill);
    CHECK(rows[0].us == doctest::Approx(11.0));
    const auto k = vidur::kernel_of(rows[0]);
    CHECK(k.input_shapes == "1,32,64,128;1,8,64,128;1,8,64,128;2048,2048");
    // FlashInfer's kernel, in the release the profile was measured with (its plan's 512-key
    // chunks: tests/data/README.md), for prefill and decode rows alike.
    CHECK(k.type == "BatchPrefillWithPagedKVCache@0.0.6");
    // A decode step of degree 4: 8 query heads over 2 KV heads per GPU.
    const auto last = vidur::kernel_of(rows.back());
    REQUIRE_FALSE(rows.back().prefill);
    CHECK(rows.back().tp == 4);
    CHECK(last.input_shapes == "101,8,1,128;101,2,9729,128;101,2,9729,128");
    CHECK(last.type == "BatchPrefillWithPagedKVCache@0.0.6");
}

TEST_CASE(
    "A100 Llama-3-8B attention (FlashInfer): its plan's layout, the rows read first fit its "
    "merge, the second held out" *
    doctest::test_suite("heavy")) {
    const auto rows =
        as_profile(read_attention_rows("vidur_a100_llama3-8b_attention.csv"), "l3.csv");
    const auto any = [](const profile::kernel_row&) { return true; };
    // The second set read (tests/data/README.md): the degree-4 prefill rows.
    const auto second = [](const profile::kernel_row& r) {
        return r.name.starts_with("attn_prefill") && r.name.find(" tp=4 ") != std::string::npos;
    };
    const auto first = [&](const profile::kernel_row& r) { return !second(r); };
    chip no_merge = chips::a100_80gb_sxm;
    no_merge.overhead.attention_merge_cycles = {};
    // chip::overhead.attention_merge_cycles, fitted on the first set: 9.3 % with it, 12.2 %
    // without (docs/validation.md, "Attention on the A100: FlashInfer's plan"); 10.7 % lies
    // between. The second set, held out from that fit: 8.7 % with the merge, 21.2 % without;
    // 15 % lies between.
    const auto with_and_without = [&](const auto& which, std::size_t rows_in, double between,
                                      const std::string& set) {
        const auto with = profile::score_rows(chips::a100_80gb_sxm, rows, {}, which);
        const auto without = profile::score_rows(no_merge, rows, {}, which);
        MESSAGE(set, ": ", with.overall.mape * 100, " %, without the merge ",
                without.overall.mape * 100, " %");
        REQUIRE(with.overall.rows == rows_in);
        CHECK(with.overall.mape < between);
        CHECK(without.overall.mape > between);
    };
    with_and_without(first, 585, 0.107, "first set");
    with_and_without(second, 569, 0.15, "second set");
    // Every row: 9.0 % in FlashInfer's layout; 34.7 % when the same rows are read as
    // FlashAttention-2's kernel (their type FlashAttentionScore, that kernel's layout and shares),
    // as before the layout was built (32.4 % then, before a causal mask's heaviest block); 22 %
    // lies between.
    auto as_fa2 = rows;
    for (auto& r : as_fa2) r.op_type = "FlashAttentionScore";
    const auto all = profile::score_rows(chips::a100_80gb_sxm, rows, {}, any);
    const auto all_fa2 = profile::score_rows(chips::a100_80gb_sxm, as_fa2, {}, any);
    REQUIRE(all.overall.rows == 1154);
    MESSAGE("every row: ", all.overall.mape * 100, " %, as FlashAttention-2's ",
            all_fa2.overall.mape * 100, " %");
    CHECK(all.overall.mape < 0.22);
    CHECK(all_fa2.overall.mape > 0.22);
}

namespace {

std::vector<vidur::attention_row> read_a40_attention() {
    return read_attention_rows("vidur_a40_llama2-7b_attention.csv");
}

/// The rows of the A40 file read first (its lines 2-1081: tests/data/README.md); the others,
/// lines 1082-2109, were held out from that reading.
bool read_first(const vidur::attention_row& a) { return a.line <= 1081; }

}  // namespace

TEST_CASE("vidur A40 attention: 2108 measurements, the rows read first and those held out") {
    const auto rows = read_a40_attention();
    REQUIRE(rows.size() == 2108);
    // Counts per set, degree and phase, as tests/data/README.md lists them.
    std::size_t first[9][2] = {}, second[9][2] = {};
    for (const auto& a : rows) {
        REQUIRE(a.tp <= 8);
        (read_first(a) ? first : second)[a.tp][a.prefill ? 1 : 0] += 1;
    }
    const std::size_t first_counts[4][2] = {{261, 78}, {172, 73}, {171, 78}, {176, 71}};
    const std::size_t second_counts[4][2] = {{174, 82}, {175, 77}, {171, 88}, {174, 87}};
    const int degrees[4] = {1, 2, 4, 8};
    for (std::size_t i = 0; i < 4; ++i) {
        CAPTURE(degrees[i]);
        for (std::size_t phase = 0; phase < 2; ++phase) {
            CHECK(first[degrees[i]][phase] == first_counts[i][phase]);
            CHECK(second[degrees[i]][phase] == second_counts[i][phase]);
        }
    }
    std::size_t n_first = 0;
    for (const auto& a : rows) n_first += read_first(a) ? 1U : 0U;
    CHECK(n_first == 1080);
    // The first row held out: tp 1, 44 sequences over 640 cached tokens, 0.788 ms.
    const auto& h = rows[1080];
    CHECK(h.line == 1082);
    CHECK_FALSE(h.prefill);
    CHECK(h.batch == 44);
    CHECK(h.kv_cache == 640);
    CHECK(h.us == doctest::Approx(788.0));
    // FlashAttention-2's kernel, as the A100 Llama-2-7B rows: no mask on a prefill chunk.
    CHECK_FALSE(h.flashinfer);
    const auto k = vidur::kernel_of(rows[1079]);
    REQUIRE(rows[1079].prefill);
    CHECK(k.type == "FlashAttentionScore");
    CHECK(k.input_shapes == "1,4,4032,128;1,4,4096,128;1,4,4096,128");
}

TEST_CASE(
    "A40 attention, held out: uncalibrated within the goal, FlashAttention-2's softmax at the "
    "A100's rate per SM" *
    doctest::test_suite("heavy")) {
    const auto rows = read_a40_attention();
    std::vector<vidur::attention_row> first, second;
    for (const auto& a : rows) (read_first(a) ? first : second).push_back(a);
    const auto first_rows = as_profile(first, "first.csv", chips::a40_pcie.cube.cores);
    const auto second_rows = as_profile(second, "second.csv", chips::a40_pcie.cube.cores);
    // The softmax at the A40's FP32 rate (128 a clock per SM), as before
    // chips::ampere_attention_softmax_rate.
    chip fp32_rate = chips::a40_pcie;
    fp32_rate.vector.attention_softmax_rate = 0;
    // docs/validation.md, "Attention on the A40": the first set 19.3 -> 16.5 %, the second, held
    // out from that reading, 17.3 -> 14.4 %; 17.9 and 15.8 % lie between. Both within the
    // issue's 35 % for an unseen data set.
    const auto scored = [&](const std::vector<profile::kernel_row>& set, double between,
                            const std::string& name) {
        const auto with = profile::score_rows(chips::a40_pcie, set, {}, any_row);
        const auto without = profile::score_rows(fp32_rate, set, {}, any_row);
        MESSAGE(name, ": ", with.overall.mape * 100, " %, the softmax at the FP32 rate ",
                without.overall.mape * 100, " %");
        REQUIRE(with.overall.rows == set.size());
        CHECK(with.overall.mape < between);
        CHECK(without.overall.mape > between);
        CHECK(with.overall.mape <= 0.35);
    };
    scored(first_rows, 0.179, "rows read first");
    scored(second_rows, 0.158, "rows held out");
    // Calibrated on the rows read first, the held-out ones: 10.9 % (docs/validation.md); 12 %
    // bounds it with the margin of a refit's search.
    const auto fitted =
        profile::calibrate(chips::a40_pcie, profile::measured_ops(chips::a40_pcie, first_rows));
    const auto held = profile::score_rows(chips::a40_pcie, second_rows, fitted.fitted, any_row);
    MESSAGE("held out, calibrated on the rows read first: ", held.overall.mape * 100, " %");
    CHECK(held.overall.mape < 0.12);
}

TEST_CASE("vidur attention reader: errors name the file, line and column") {
    const auto read = [](const std::string& text) {
        std::istringstream in(text);
        return vidur::read_attention(in, "a.csv");
    };
    const std::string header =
        "n_embd,n_q_head,n_kv_head,num_tensor_parallel_workers,batch_size,prefill_chunk_size,"
        "kv_cache_size,is_prefill,time_stats.attn_decode.median,time_stats.attn_prefill.median\n";
    CHECK(read(header + "4096,32,32,1,4,0,64,False,0.02,\n").size() == 1);
    CHECK_THROWS_WITH_AS((void)read("n_embd\n1\n"),
                         doctest::Contains("no column 'time_stats.attn_decode.median'"),
                         perfcast::error);
    // A decode row without its time; a prefill row of batch 2; heads that tp does not divide;
    // a phase that is not True/False; a decode row with a chunk.
    CHECK_THROWS_WITH_AS((void)read(header + "4096,32,32,1,4,0,64,False,,0.3\n"),
                         doctest::Contains("a.csv:2: time_stats.attn_decode: no time"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(header + "4096,32,32,1,2,128,0,True,,0.3\n"),
                         doctest::Contains("a.csv:2: a prefill row needs"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(header + "4096,32,32,3,4,0,64,False,0.02,\n"),
                         doctest::Contains("not a multiple of num_tensor_parallel_workers"),
                         perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(header + "4096,32,32,1,4,0,64,maybe,0.02,\n"),
                         doctest::Contains("is_prefill: 'maybe'"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(header + "4096,32,32,1,4,16,64,False,0.02,\n"),
                         doctest::Contains("a decode row needs"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)read(header + "4096,32,32,1,4,0,x,False,0.02,\n"),
                         doctest::Contains("kv_cache_size: 'x'"), perfcast::error);
    // The backend column is optional; FlashInfer's prefill chunks are written causal (a
    // [2048, 2048] mask input), FlashAttention-2's and decode rows without a mask.
    const std::string with_backend =
        "n_embd,n_q_head,n_kv_head,num_tensor_parallel_workers,batch_size,prefill_chunk_size,"
        "kv_cache_size,is_prefill,time_stats.attn_decode.median,time_stats.attn_prefill.median,"
        "attention_backend\n";
    const auto both = read(with_backend +
                           "4096,32,8,4,1,64,0,True,,0.011,AttentionBackend.FLASHINFER\n"
                           "4096,32,8,4,1,64,0,True,,0.011,AttentionBackend.FLASH_ATTENTION\n"
                           "4096,32,8,4,3,0,64,False,0.02,,AttentionBackend.FLASHINFER\n");
    REQUIRE(both.size() == 3);
    CHECK(both[0].flashinfer);
    CHECK_FALSE(both[1].flashinfer);
    CHECK(vidur::kernel_of(both[0]).input_shapes == "1,8,64,128;1,2,64,128;1,2,64,128;2048,2048");
    CHECK(vidur::kernel_of(both[0]).input_types == "fp16;fp16;fp16;bool");
    CHECK(vidur::kernel_of(both[1]).input_shapes == "1,8,64,128;1,2,64,128;1,2,64,128");
    CHECK(vidur::kernel_of(both[2]).input_shapes == "3,8,1,128;3,2,65,128;3,2,65,128");
    CHECK(vidur::kernel_of(both[1]).type == "FlashAttentionScore");
    CHECK(vidur::kernel_of(both[2]).type == "BatchPrefillWithPagedKVCache@0.0.6");
    CHECK_THROWS_WITH_AS(
        (void)read(with_backend + "4096,32,8,4,1,64,0,True,,0.011,AttentionBackend.XFORMERS\n"),
        doctest::Contains("a.csv:2: attention_backend: 'AttentionBackend.XFORMERS'"),
        perfcast::error);
    // The converter tells the two files apart by their headers.
    CHECK(vidur::is_attention_header(header));
    CHECK_FALSE(vidur::is_attention_header("time_stats.emb.median,n_head"));
}

TEST_CASE("A100 attention: the block floor and shares, fitted on degrees 1 and 2, hold on 4 and 8" *
          doctest::test_suite("heavy")) {
    // Decode rows of the held-out degrees (fewer heads: other block counts for the same shapes).
    // Measured 16.1 % without the floor and 7.9 % with it (docs/validation.md, "Attention on the
    // A100: vidur's paged kernels"); with the Ampere heads and the floor refitted ("The Ampere
    // heads refitted") 11.9 and 8.3 %: 10 % lies between, so the check fails without the floor.
    const auto s = vidur::split(read_attention_rows());
    const auto test = as_profile(s.test, "test.csv");
    const auto decode = [](const profile::kernel_row& r) {
        return r.name.starts_with("attn_decode");
    };
    chip no_floor = chips::a100_80gb_sxm;
    no_floor.overhead.attention_unit_cycles = {};
    const auto with = profile::score_rows(chips::a100_80gb_sxm, test, {}, decode);
    const auto without = profile::score_rows(no_floor, test, {}, decode);
    REQUIRE(with.overall.rows == 265 + 176);
    MESSAGE("decode: " << 100.0 * with.overall.mape << " %, without the floor "
                       << 100.0 * without.overall.mape << " %");
    CHECK(with.overall.mape < 0.10);
    CHECK(without.overall.mape > 0.10);
    // Every held-out row, uncalibrated: 14.8 % with the Ampere attention shares (both fitted on
    // degrees 1 and 2 too), 18.7 % without the share of attentions whose units fill no SM twice,
    // 29.3 % without either (docs/validation.md, "Attention on the A100: vidur's paged kernels");
    // with the Ampere heads and the floor refitted, 13.9, 17.2 and 27.0 %: 15.5 % and 24 % lie
    // between, under the 35 % for an unseen data set.
    const auto any = [](const profile::kernel_row&) { return true; };
    chip filled = chips::a100_80gb_sxm;
    filled.cube.attention_unfilled_share = 1.0;
    chip no_share = filled;
    no_share.cube.attention_share = 1.0;
    const auto all = profile::score_rows(chips::a100_80gb_sxm, test, {}, any);
    const auto all_filled = profile::score_rows(filled, test, {}, any);
    const auto all_no_share = profile::score_rows(no_share, test, {}, any);
    REQUIRE(all.overall.rows == 888);
    MESSAGE("every row: " << 100.0 * all.overall.mape << " %, filled "
                          << 100.0 * all_filled.overall.mape << " %, no share "
                          << 100.0 * all_no_share.overall.mape << " %");
    CHECK(all.overall.mape < 0.155);
    CHECK(all_filled.overall.mape > 0.155);
    CHECK(all_filled.overall.mape < 0.24);
    CHECK(all_no_share.overall.mape > 0.24);
}

}  // namespace test_gpu_validation
