// Calibration, hold-out split, validation report, the parameters file, and the op / validate /
// calibrate commands.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_calibration {

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

TEST_CASE("calibration lowers the fit error and keeps the GEMMs right" *
          doctest::test_suite("heavy")) {
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
    const auto before = profile::score_rows(c, split.test, profile::calibration{}, ai);
    const auto after = profile::score_rows(c, split.test, res.fitted, ai);
    CHECK(after.overall.rows == before.overall.rows);
    CHECK(after.overall.mape < before.overall.mape);
    // Fitted on every row, the 13 GEMMs stay within 10 % (uncalibrated: within 8 %).
    const auto all = profile::calibrate(c, profile::measured_ops(c, rows), {}, opt);
    const auto gemms = profile::score_rows(c, rows, all.fitted, [](const profile::kernel_row& r) {
        return profile::is_gemm_type(r.op_type);
    });
    CHECK(gemms.overall.rows == 13);
    CHECK(gemms.overall.max_ape < 0.10);
}

TEST_CASE("op::extra_head adds to the head, op::extra_per_core per core held; bad ones named") {
    const chip& c = chips::ascend910b1;
    const op plain_op = elementwise(1 << 20, dtype::fp16);
    for (const int k : {1, 5, 12, 48}) {
        op o = plain_op;
        o.extra_head = duration{3, units::us};
        o.extra_per_core = duration{0.25, units::us};
        const auto plain = cost(c, plain_op, core_count{k});
        const auto with = cost(c, o, core_count{k});
        REQUIRE(with.cores == k);  // 2^20 elements fill every core: b = k
        // Tolerance: the head is a sum of a few terms in another order, 1e-12.
        CHECK((with.head - plain.head).in(units::us) ==
              doctest::Approx(3.0 + 0.25 * k).epsilon(1e-12));
        CHECK((with.latency - plain.latency).in(units::us) ==
              doctest::Approx(3.0 + 0.25 * k).epsilon(1e-12));
        CHECK(with.compute == plain.compute);
        CHECK(with.memory == plain.memory);
    }
    op bad = plain_op;
    bad.extra_head = duration{-1, units::us};
    CHECK_THROWS_WITH_AS((void)cost(c, bad, core_count{48}), doctest::Contains("op.extra_head"),
                         perfcast::error);
    bad = plain_op;
    bad.extra_per_core = duration{-0.1, units::us};
    CHECK_THROWS_WITH_AS((void)cost(c, bad, core_count{48}), doctest::Contains("op.extra_per_core"),
                         perfcast::error);
    // cost() refuses parameters validate() refuses: an efficiency of 0 once priced an op at inf
    // and an overlap of 3 below its own compute term.
    model_params zero;
    zero.cube_efficiency = 0;
    CHECK_THROWS_WITH_AS((void)cost(c, plain_op, core_count{48}, zero),
                         doctest::Contains("cube_efficiency = 0"), perfcast::error);
    // cost()'s branch-free guard agrees with validate() field by field (each set out of range,
    // then NaN): the guard only decides whether validate() runs.
    CHECK(perfcast::detail::in_range(model_params{}));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (double model_params::*f :
         {&model_params::cube_efficiency, &model_params::vector_efficiency,
          &model_params::hbm_efficiency, &model_params::l2_efficiency, &model_params::hbm_mix_cost,
          &model_params::overlap, &model_params::misaligned_efficiency,
          &model_params::l2_resident_share, &model_params::contention_per_core}) {
        for (const double v : {-1.0, 5e-5, 3.0, 5.0, 2e6, nan}) {
            model_params q;
            q.*f = v;
            bool refused = false;
            try {
                (void)validate(q);
            } catch (const perfcast::error&) {
                refused = true;
            }
            CAPTURE(v);
            CHECK(perfcast::detail::in_range(q) == !refused);
        }
    }
    model_params late_head;
    late_head.head[1] = {true, duration{-1, units::us}, duration{}};
    CHECK_FALSE(perfcast::detail::in_range(late_head));
    model_params wide;
    wide.overlap = 3;
    CHECK_THROWS_WITH_AS((void)cost(c, plain_op, core_count{48}, wide),
                         doctest::Contains("overlap = 3, expected a share in [0, 1]"),
                         perfcast::error);
    // Through a graph node: instantiate() carries both to the op.
    node n = nodes::elementwise(batched_shape{1 << 20}, dtype::fp16);
    n.extra_head = duration{2, units::us};
    n.extra_per_core = duration{0.5, units::us};
    CHECK(instantiate(n, 1).extra_head == duration{2, units::us});
    CHECK(instantiate(n, 1).extra_per_core == duration{0.5, units::us});
}

namespace {
// Rows the model "measured" of `type` at (elements, cores) pairs, with the calibration `truth`
// applied on top of the default parameters. 16 vector operations an element (ApplyAdamW's in the
// traits table): compute-bound on the 910B1 at factor 1 and above, so the factor shows.
std::vector<profile::measured_op> rows_under(
    const std::string& type, const std::vector<std::pair<std::int64_t, int>>& shapes,
    const profile::calibration& truth) {
    std::vector<profile::measured_op> out;
    for (const auto& [n, cores] : shapes) {
        const op o = elementwise(n, dtype::fp16, {.ops_per_element = 16});
        const duration t =
            cost(chips::ascend910b1, truth.applied(o, type), core_count{cores}).latency;
        out.push_back({o, cores, t, type});
    }
    return out;
}

// `type`'s ops of the given element counts on `cores` vector cores of the 910B1, with work factor
// `f` and fixed time `fixed_us` (rows_under).
std::vector<profile::measured_op> synthetic_rows(const std::string& type,
                                                 const std::vector<std::int64_t>& elements,
                                                 int cores, double f, double fixed_us) {
    std::vector<std::pair<std::int64_t, int>> shapes;
    for (const std::int64_t n : elements) shapes.emplace_back(n, cores);
    profile::calibration truth;
    truth.work_factor[type] = f;
    truth.fixed_time[type] = duration{fixed_us, units::us};
    return rows_under(type, shapes, truth);
}
}  // namespace

TEST_CASE("calibration: a work factor and a fixed time per op type") {
    const chip& c = chips::ascend910b1;
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    // Sizes from head-dominated (4 Ki elements) to body-dominated (64 Mi): the rows tell the
    // factor (3) and the fixed time (2 us) apart. A plain type with neither, and more rows of
    // small sizes (where the shared head shows), keeps the shared parameters where they were.
    auto rows = synthetic_rows("Heavy", {4096, 65536, 1 << 20, 1 << 24, 1 << 26}, 48, 3.0, 2.0);
    const auto plain = synthetic_rows(
        "Plain", {512, 1024, 2048, 4096, 8192, 32768, 1 << 19, 1 << 23, 1 << 25}, 48, 1.0, 0.0);
    rows.insert(rows.end(), plain.begin(), plain.end());
    const auto res = profile::calibrate(c, rows, {}, opt);
    // Tolerances: the searches stop within about 1e-8 of log f and of log(1 + t / 1 us); the
    // shared head is searched too and may trade a few ns with the fixed time.
    CHECK(res.fitted.factor_of("Heavy") == doctest::Approx(3.0).epsilon(0.01));
    CHECK(res.fitted.fixed_time_of("Heavy").in(units::us) == doctest::Approx(2.0).epsilon(0.02));
    CHECK(res.fitted.factor_of("Plain") == doctest::Approx(1.0).epsilon(0.01));
    CHECK(res.fitted.fixed_time_of("Plain").in(units::us) < 0.05);
    CHECK(res.log_error_after < 0.01);
    CHECK(res.fitted.chip == "ascend910b1");  // written as the file's `chip` key

    // Small rows 3 us above the model, whose bodies (well under 0.1 us) no factor within
    // [1/16, 16] can stretch that far: a fixed time; the factor's penalty keeps it near 1.
    // (Same cores as the plain rows: on other core counts the shared head's per-core term
    // could absorb it.)
    auto small = synthetic_rows("Small", {4096, 4096, 6144}, 48, 1.0, 3.0);
    small.insert(small.end(), plain.begin(), plain.end());
    const auto s = profile::calibrate(c, small, {}, opt);
    CHECK(s.fitted.factor_of("Small") < 1.5);
    CHECK(s.fitted.fixed_time_of("Small").in(units::us) == doctest::Approx(3.0).epsilon(0.1));

    // Without fixed times the factor is all there is.
    opt.fit_fixed_time = false;
    const auto no_fixed = profile::calibrate(c, rows, {}, opt);
    CHECK(no_fixed.fitted.fixed_time.empty());
    CHECK(no_fixed.log_error_after > res.log_error_after);
}

TEST_CASE("calibration: the L2 rate, fitted when the rows inform it" *
          doctest::test_suite("heavy")) {
    // GEMMs on the H100 "measured" by the model with the L2 loads at 0.6 of the preset's rate:
    // most shapes from 256 tokens up are then bound by their tile loads (up to 1.44x slower),
    // the 16-token ones are not (their time does not depend on the rate).
    const chip& c = chips::h100_sxm;
    model_params truth;
    truth.l2_efficiency = 0.6;
    const auto gemms = [&](std::initializer_list<std::int64_t> ms) {
        std::vector<profile::measured_op> rows;
        for (const std::int64_t m : ms)
            for (const std::int64_t n : {1024, 4096, 12288})
                for (const std::int64_t k : {1024, 4096}) {
                    const op o = matmul(m, n, k, dtype::fp16);
                    rows.push_back({o, c.cube.cores, cost(c, o, truth).latency, "MatMul"});
                }
        return rows;
    };
    const auto rows = gemms({16, 64, 256, 1024, 4096});
    const auto fitted = profile::calibrate(c, rows);
    CHECK(fitted.l2_efficiency_fitted);
    // Rows that move by more than 1 % at +-10 % of the preset's rate: some (8 of the 30 here),
    // never the 16-token ones.
    CHECK(fitted.l2_rows >= 3);
    CHECK(fitted.l2_rows <= rows.size() - 6);
    // Tolerance 2 %: Nelder-Mead stops within about 1e-4 of the objective, and the cube head
    // and efficiency are searched with it.
    CHECK(fitted.fitted.params.l2_efficiency == doctest::Approx(0.6).epsilon(0.02));
    CHECK(fitted.fitted.params.cube_efficiency == doctest::Approx(0.9).epsilon(0.02));
    CHECK(fitted.log_error_after < 0.01);

    // Kept on request: the rate stays the preset's and the fit is worse.
    profile::calibration_options keep;
    keep.fit_l2_efficiency = false;
    const auto kept = profile::calibrate(c, rows, {}, keep);
    CHECK_FALSE(kept.l2_efficiency_fitted);
    CHECK(kept.fitted.params.l2_efficiency == 1.0);
    CHECK(kept.log_error_after > 5 * fitted.log_error_after);

    // Rows the rate does not move say nothing about it: the start's value is kept exactly.
    model_params start;
    start.l2_efficiency = 0.7;
    const auto small = profile::calibrate(c, gemms({16}), start);
    CHECK(small.l2_rows == 0);
    CHECK_FALSE(small.l2_efficiency_fitted);
    CHECK(small.fitted.params.l2_efficiency == 0.7);
}

TEST_CASE("calibration: the HBM mix cost, fitted when the rows inform it" *
          doctest::test_suite("heavy")) {
    // 910B1 vector rows "measured" by the model with HBM traffic that mixes reads and writes
    // costing up to 1.5x, in a known order (l2_input_share 0: every read from HBM): elementwise
    // ops reading and writing 100-200 MiB each, too large for L2, whose writes go partly to HBM
    // (written through), beside reductions that only read (their time does not depend on it).
    const chip& c = chips::ascend910b1;
    model_params truth;
    truth.hbm_mix_cost = 1.5;
    std::vector<profile::measured_op> rows;
    for (const std::int64_t n : {52428800, 78643200, 104857600}) {
        op e = elementwise(n, dtype::fp16, {.inputs = 1});
        e.l2_input_share = 0.0;
        op r = reduce(n / 1024, 1024, dtype::fp16);
        r.l2_input_share = 0.0;
        for (op* o : {&e, &r})
            rows.push_back(
                {*o, 48, cost(c, *o, core_count{48}, truth).latency, o == &e ? "Writes" : "Reads"});
    }
    const auto fitted = profile::calibrate(c, rows);
    CHECK(fitted.hbm_mix_cost_fitted);
    CHECK(fitted.mix_rows == 3);  // the three elementwise rows, not the reductions
    // Tolerance 2 %: Nelder-Mead stops within about 1e-4 of the objective, and the HBM
    // efficiency and the vector head are searched with it.
    CHECK(fitted.fitted.params.hbm_mix_cost == doctest::Approx(1.5).epsilon(0.02));
    CHECK(fitted.fitted.params.hbm_efficiency == doctest::Approx(0.8).epsilon(0.02));

    // Kept on request: the cost stays the start's (1) and the fit is worse.
    profile::calibration_options keep;
    keep.fit_hbm_mix_cost = false;
    const auto kept = profile::calibrate(c, rows, {}, keep);
    CHECK_FALSE(kept.hbm_mix_cost_fitted);
    CHECK(kept.fitted.params.hbm_mix_cost == 1.0);
    CHECK(kept.log_error_after > fitted.log_error_after);
}

TEST_CASE("perfcast calibrate on GPU GEMM rows: the L2 efficiency fitted, reported, written" *
          doctest::test_suite("heavy")) {
    // The rows of the test above (H100 GEMMs "measured" by the model with the L2 loads at 0.6
    // of the preset's rate) as a kernel_details file in the columns vidur_to_kernel_details
    // writes, calibrated by the command. The 16- and 64-token rows, which the rate does not
    // move, pin the cube efficiency: without them the two trade off (the fit gave 0.92).
    const chip& c = chips::h100_sxm;
    model_params truth;
    truth.l2_efficiency = 0.6;
    const perfcast_test::scratch_dir dir("calibrate_l2");
    const std::string csv = (dir.path / "gemms.csv").string();
    const std::string params = (dir.path / "p.params").string();
    {
        std::ofstream f(csv);
        f << "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data "
             "Types,Output Shapes,Output Data Types\n";
        for (const std::int64_t m : {16, 64, 256, 1024, 4096})
            for (const std::int64_t n : {1024, 4096, 12288})
                for (const std::int64_t k : {1024, 4096}) {
                    const duration t = cost(c, matmul(m, n, k, dtype::fp16), truth).latency;
                    char us[32];
                    std::snprintf(us, sizeof us, "%.6f", t.in(units::us));
                    f << "g,MatMul,AI_CORE," << us << ",132,\"" << m << ',' << k << ';' << n << ','
                      << k << "\",fp16;fp16,\"" << m << ',' << n << "\",fp16\n";
                }
    }
    std::string out, err;
    REQUIRE(run(cli::calibrate_command, {csv, "--chip", "h100-sxm", "-o", params, "--quiet"}, out,
                err) == 0);
    CHECK(out.find("; L2 efficiency 0.") != std::string::npos);
    // Tolerance 2 %, as in the test above (the durations are written to 1e-6 us).
    CHECK(io::read_params_file(params).params.l2_efficiency == doctest::Approx(0.6).epsilon(0.02));
    REQUIRE(run(cli::calibrate_command,
                {csv, "--chip", "h100-sxm", "-o", params, "--quiet", "--l2-efficiency", "keep"},
                out, err) == 0);
    CHECK(out.find("L2 efficiency") == std::string::npos);
    CHECK(io::read_params_file(params).params.l2_efficiency == 1.0);
}

TEST_CASE("repeated hold-out: each seed as a hold-out of its own, their mean, pooled rows" *
          doctest::test_suite("heavy")) {
    const chip& c = chips::ascend910b1;
    auto rows = profile::read_kernel_details_file(profile_910b1).rows;
    profile::annotate_context(rows, c);
    const auto ai = [](const profile::kernel_row& r) {
        return r.task == profile::task_type::ai_core ||
               r.task == profile::task_type::ai_vector_core;
    };
    // The vector efficiency kept, a quarter of the search budget and the first 300 rows: the
    // test checks the bookkeeping, not the fit's quality.
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    opt.max_evaluations = 1500;
    rows.resize(300);
    const auto study = profile::repeated_holdout(c, rows, 0.3, 2, 3, ai, {}, opt);
    REQUIRE(study.runs.size() == 2);
    CHECK(study.runs[0].seed == 2);
    CHECK(study.runs[1].seed == 3);
    // Seed 3 by hand: the same split, fit and score (deterministic, so exactly equal).
    const auto split = profile::split_holdout(rows, 0.3, 3);
    const auto fit = profile::calibrate(c, profile::measured_ops(c, split.fit), {}, opt);
    const auto rep = profile::score_rows(c, split.test, fit.fitted, ai);
    CHECK(study.runs[1].fit_rows == fit.rows);
    CHECK(study.runs[1].stats.rows == rep.overall.rows);
    CHECK(study.runs[1].stats.mape == rep.overall.mape);
    CHECK(study.runs[1].stats.p90_ape == rep.overall.p90_ape);
    CHECK(study.mean_mape ==
          doctest::Approx((study.runs[0].stats.mape + study.runs[1].stats.mape) / 2).epsilon(1e-12));
    CHECK(study.pooled.overall.rows == study.runs[0].stats.rows + study.runs[1].stats.rows);
    std::size_t typed = 0;
    for (const auto& t : study.pooled.by_type) typed += t.stats.rows;
    CHECK(typed == study.pooled.overall.rows);
    CHECK_THROWS_WITH_AS((void)profile::repeated_holdout(c, rows, 0.3, 5, 4, ai),
                         doctest::Contains("seeds"), perfcast::error);
    // Seeds whose held-out rows the filter rejects are listed, not averaged in as 0 %. On the
    // first 150 rows of the profile (fast fits), the ScaledMaskedSoftmax rows are held out under
    // some seeds only.
    const std::vector<profile::kernel_row> head(rows.begin(), rows.begin() + 150);
    const auto softmax = [](const profile::kernel_row& r) {
        return r.op_type == "ScaledMaskedSoftmax";
    };
    const auto some = profile::repeated_holdout(c, head, 0.3, 1, 6, softmax, {}, opt);
    std::size_t scored = 0;
    double sum = 0;
    for (const auto& r : some.runs) {
        if (r.stats.rows == 0) continue;
        ++scored;
        sum += r.stats.mape;
    }
    CHECK(some.scored_runs == scored);
    CHECK(scored > 0);
    CHECK(scored < some.runs.size());
    CHECK(some.mean_mape == doctest::Approx(sum / static_cast<double>(scored)).epsilon(1e-12));
    const auto none = profile::repeated_holdout(
        c, head, 0.3, 1, 1, [](const profile::kernel_row&) { return false; }, {}, opt);
    CHECK(none.scored_runs == 0);
    CHECK(none.mean_mape == 0.0);
    CHECK(none.pooled.overall.rows == 0);
}

TEST_CASE("calibration: a heavy type the rows lack gets the factor of least percentage error") {
    CHECK(profile::is_heavy_type("Exp"));         // 4 operations an element in the traits table
    CHECK(profile::is_heavy_type("ApplyAdamW"));  // 16
    CHECK_FALSE(profile::is_heavy_type("ZerosLike"));  // 1
    CHECK_FALSE(profile::is_heavy_type("Add"));        // not in the table
    profile::calibration cal;
    cal.unseen_heavy_factor = 5;
    cal.work_factor["Exp"] = 2;
    CHECK(cal.factor_of("Exp") == 2.0);           // its own
    CHECK(cal.factor_of("LayerNormV3") == 5.0);   // heavy, none of its own
    CHECK(cal.factor_of("Add") == 1.0);           // not heavy
    CHECK(cal.factor_of("ZerosLike") == 1.0);
    static_assert(profile::is_heavy_type("LayerNormV3") && !profile::is_heavy_type("Fill"));
    // A bad factor set by hand is an error naming it, not a zero-time op.
    cal.unseen_heavy_factor = 0;
    CHECK_THROWS_WITH_AS((void)cal.applied(elementwise(64, dtype::fp16), "Tanh"),
                         doctest::Contains("unseen_heavy_factor (for Tanh) = 0"), perfcast::error);
    cal.work_factor["Exp"] = -2;
    CHECK_THROWS_WITH_AS((void)cal.applied(elementwise(64, dtype::fp16), "Exp"),
                         doctest::Contains("work factor of Exp = -2"), perfcast::error);

    // Heavy types with factors 1, 4 and 6 (and a plain type): the type at 1 is fitted at none and
    // keeps 1 explicitly (it does not take the unseen types' factor), and it does not count: its
    // rows fix no factor. An unseen heavy type gets the factor of least mean percentage error
    // over 4 and 6, the median weighted by 1 / factor: the weights 1/4 and 1/6 pass half their
    // sum at 4. With 3, 4, 6 and 8 the weights 1/3 and 1/4 pass half at 4, where the plain median
    // would be sqrt(24) = 4.9; with one heavy type there is none to take.
    // Tolerance: the golden-section searches stop within about 1e-8 of log f; 1 % leaves room
    // for the shared parameters' search.
    const chip& c = chips::ascend910b1;
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    const auto plain = synthetic_rows("Plain", {512, 4096, 32768, 1 << 19, 1 << 23}, 48, 1.0, 0.0);
    const auto fit_types = [&](std::vector<std::pair<std::string, double>> types) {
        std::vector<profile::measured_op> rows = plain;
        for (const auto& [type, f] : types) {
            const auto r = synthetic_rows(type, {1 << 16, 1 << 20, 1 << 24}, 48, f, 0.0);
            rows.insert(rows.end(), r.begin(), r.end());
        }
        return profile::calibrate(c, rows, {}, opt).fitted;
    };
    const auto three = fit_types({{"Exp", 1.0}, {"Log", 4.0}, {"Sqrt", 6.0}});
    CHECK(three.factor_of("Log") == doctest::Approx(4.0).epsilon(0.01));
    CHECK(three.factor_of("Exp") == doctest::Approx(1.0).epsilon(0.01));
    CHECK(three.work_factor.count("Exp") == 1);
    CHECK(three.unseen_heavy_factor == doctest::Approx(4.0).epsilon(0.01));
    CHECK(three.factor_of("Tanh") == doctest::Approx(4.0).epsilon(0.01));
    CHECK(three.factor_of("Unknown") == 1.0);
    const auto four = fit_types({{"Exp", 3.0}, {"Log", 4.0}, {"Sqrt", 6.0}, {"Rsqrt", 8.0}});
    CHECK(four.unseen_heavy_factor == doctest::Approx(4.0).epsilon(0.01));
    CHECK(fit_types({{"Log", 4.0}}).unseen_heavy_factor == 1.0);
    opt.fit_unseen_heavy_factor = false;
    const auto off = fit_types({{"Exp", 1.0}, {"Log", 4.0}, {"Sqrt", 6.0}});
    CHECK(off.unseen_heavy_factor == 1.0);
    CHECK(off.factor_of("Tanh") == 1.0);

    // Options out of range are errors naming them.
    const auto rejects = [&](auto set, const char* field) {
        profile::calibration_options bad;
        set(bad);
        CHECK_THROWS_WITH_AS((void)profile::calibrate(c, plain, {}, bad),
                             doctest::Contains(field), perfcast::error);
    };
    rejects([](auto& o) { o.cv_margin = 1.0; }, "cv_margin");
    rejects([](auto& o) { o.fixed_penalty = -1.0; }, "fixed_penalty");
    rejects([](auto& o) { o.factor_penalty = std::nan(""); }, "factor_penalty");
    rejects([](auto& o) { o.max_work_factor = 0.5; }, "max_work_factor");
}

TEST_CASE("least_relative_error_factor: the median weighted by 1 / factor, checked on a grid") {
    using profile::detail::least_relative_error_factor;
    // Mean |g / f - 1| over the factors, the quantity the choice minimizes.
    const auto mean_ape = [](const std::vector<double>& factors, double g) {
        double sum = 0;
        for (double f : factors) sum += std::abs(g / f - 1);
        return sum / static_cast<double>(factors.size());
    };
    const auto logs = [](const std::vector<double>& factors) {
        std::vector<double> out;
        for (double f : factors) out.push_back(std::log(f));
        return out;
    };
    // By hand: weights 1/2, 1/4, 1/8 (sum 7/8): the first passes half, 2. 1, 2, 2: weights 1,
    // 1/2, 1/2 reach exactly half at 1, and every g in [1, 2] costs the same (a mean of 1/3):
    // the geometric mean, sqrt(2). Tolerance 1e-12: exp and log round in the last bits.
    CHECK(least_relative_error_factor(logs({8, 2, 4})) == doctest::Approx(2.0).epsilon(1e-12));
    CHECK(least_relative_error_factor(logs({1, 2, 2})) ==
          doctest::Approx(std::sqrt(2.0)).epsilon(1e-12));
    CHECK(least_relative_error_factor(logs({5})) == doctest::Approx(5.0).epsilon(1e-12));
    CHECK(least_relative_error_factor({}) == 1.0);
    // Pseudo-random sets of 2 to 9 factors in [0.1, 20]: no g on a fine grid (steps of 0.1 %
    // over [0.05, 40]) has a lower mean error than the answer (1e-12: rounding of the sums).
    std::uint64_t state = 12345;
    const auto next = [&] {  // splitmix64
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1p-53;
    };
    for (int set = 0; set < 50; ++set) {
        std::vector<double> factors;
        const int n = 2 + static_cast<int>(next() * 8);
        for (int i = 0; i < n; ++i) factors.push_back(0.1 * std::pow(200.0, next()));
        const double g = least_relative_error_factor(logs(factors));
        double grid_best = mean_ape(factors, 0.05);
        for (double x = 0.05; x < 40; x *= 1.001)
            grid_best = std::min(grid_best, mean_ape(factors, x));
        CHECK(mean_ape(factors, g) <= grid_best + 1e-12);
    }
}

TEST_CASE("calibration: a time per core held where the rows grow with the cores, else fixed") {
    const chip& c = chips::ascend910b1;
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    // ApplyAdamW's pattern (docs/validation.md): small rows of about 1024 elements a core on 5,
    // 6 and 12 cores and large rows on 48, factor 4, 0.3 us a core beyond the engine's head.
    profile::calibration grows;
    grows.work_factor["Grows"] = 4.0;
    grows.per_core_time["Grows"] = duration{0.3, units::us};
    auto rows = rows_under(
        "Grows", {{5120, 5}, {6144, 6}, {12288, 12}, {12288, 12}, {1 << 24, 48}, {1 << 26, 48}},
        grows);
    // The same shapes with a fixed 2 us instead: the per-core form must not win there.
    profile::calibration fixed;
    fixed.work_factor["Fixed"] = 4.0;
    fixed.fixed_time["Fixed"] = duration{2.0, units::us};
    const auto f = rows_under(
        "Fixed", {{5120, 5}, {6144, 6}, {12288, 12}, {12288, 12}, {1 << 24, 48}, {1 << 26, 48}},
        fixed);
    rows.insert(rows.end(), f.begin(), f.end());
    // Plain rows on every core count above, so the shared head is pinned by rows without terms.
    const auto plain = rows_under("Plain",
                                  {{512, 1},
                                   {4096, 5},
                                   {6144, 6},
                                   {12288, 12},
                                   {8192, 48},
                                   {1 << 19, 48},
                                   {1 << 23, 48},
                                   {1 << 25, 48}},
                                  {});
    rows.insert(rows.end(), plain.begin(), plain.end());
    const auto res = profile::calibrate(c, rows, {}, opt);
    // Tolerances as in the fixed-time case above: the searches stop within about 1e-8 in log
    // space, and the shared head, searched too, may trade a few ns per core with the terms.
    CHECK(res.fitted.per_core_time_of("Grows").in(units::us) == doctest::Approx(0.3).epsilon(0.03));
    CHECK(res.fitted.fixed_time_of("Grows") == duration{});
    CHECK(res.fitted.factor_of("Grows") == doctest::Approx(4.0).epsilon(0.02));
    CHECK(res.fitted.fixed_time_of("Fixed").in(units::us) == doctest::Approx(2.0).epsilon(0.03));
    CHECK(res.fitted.per_core_time_of("Fixed") == duration{});
    CHECK(res.log_error_after < 0.01);

    // Rows on one core count cannot tell the two forms apart: the fixed time is kept.
    const auto one = rows_under("Grows", {{4096, 12}, {12288, 12}, {1 << 22, 12}}, grows);
    auto single = one;
    single.insert(single.end(), plain.begin(), plain.end());
    const auto s = profile::calibrate(c, single, {}, opt);
    CHECK(s.fitted.per_core_time.empty());
    CHECK(s.fitted.fixed_time_of("Grows").in(units::us) == doctest::Approx(0.3 * 12).epsilon(0.05));

    // Without fixed times neither form is fitted.
    opt.fit_fixed_time = false;
    const auto none = profile::calibrate(c, rows, {}, opt);
    CHECK(none.fitted.per_core_time.empty());
    CHECK(none.fitted.fixed_time.empty());
}

TEST_CASE("input_pattern: how each input meets the output, and the dtypes") {
    const auto row = [](std::vector<std::vector<std::int64_t>> in, std::vector<std::int64_t> out,
                        std::vector<std::string> types) {
        profile::kernel_row r;
        r.op_type = "Mul";
        for (auto& d : in) r.input_shapes.push_back({std::move(d)});
        r.output_shapes.push_back({std::move(out)});
        for (auto& t : types) {
            const auto known = try_parse_dtype(t);
            r.input_types.push_back({std::move(t), known});
        }
        return r;
    };
    // Qwen3's two Muls: a broadcast of [4096, 1] by [64], and [4096, 1, 1, 128] by a scalar.
    CHECK(profile::input_pattern(row({{4096, 1}, {64}}, {4096, 64}, {"FLOAT", "FLOAT"})) ==
          "broadcast,broadcast|fp32;fp32");
    CHECK(profile::input_pattern(row({{4096, 1, 1, 128}, {}}, {4096, 1, 1, 128},
                                     {"FLOAT", "FLOAT"})) == "same,scalar|fp32;fp32");
    // Dtypes by perfcast's names, whatever the profiler wrote; an unknown one as written.
    CHECK(profile::input_pattern(row({{1}, {1024, 4}}, {1024, 4}, {"DT_BF16", "BF16"})) ==
          "scalar,same|bf16;bf16");
    CHECK(profile::input_pattern(row({{4}}, {4}, {"DT_FLOAT", "UNDEFINED"})) ==
          "same|fp32;UNDEFINED");
    // A reduction's input is larger than its output.
    CHECK(profile::input_pattern(row({{12288}}, {1}, {"FLOAT"})) == "reduced|fp32");
    // No output shape: nothing to compare with.
    profile::kernel_row r = row({{8, 25}}, {}, {"FLOAT"});
    r.output_shapes.clear();
    CHECK(profile::input_pattern(r) == "?|fp32");
    CHECK(profile::calibration::at_pattern("Mul", "same,scalar|fp32;fp32") ==
          "Mul[same,scalar|fp32;fp32]");
    for (const std::string_view good : {"Mul[same,scalar|fp32;fp32]", "Add", "Range[|fp64]"})
        CHECK_MESSAGE(profile::valid_terms_key(good), good);
    // A misspelt class, no dtypes part, no closing bracket, no type, a stray bracket.
    for (const std::string_view bad :
         {"Mul[same,scaler|fp32]", "Mul[same,scalar]", "Mul[same|fp32", "[same|fp32]", "Mul]"})
        CHECK_MESSAGE(!profile::valid_terms_key(bad), bad);
}

TEST_CASE(
    "calibration: a type seen in one input pattern gets that pattern's terms, not the type's") {
    const chip& c = chips::ascend910b1;
    profile::calibration_options opt;
    opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    const std::string bcast = "One[broadcast,broadcast|fp16;fp16]";
    const std::string scalar = "One[same,scalar|fp16;fp16]";
    // "One": factor 3 and 2 us, every row of the broadcast pattern. "Two": the same terms, its
    // rows in two patterns. Plain rows pin the shared parameters.
    auto one = synthetic_rows("One", {4096, 65536, 1 << 20, 1 << 24, 1 << 26}, 48, 3.0, 2.0);
    for (auto& m : one) m.pattern_key = bcast;
    auto two = synthetic_rows("Two", {4096, 65536, 1 << 20, 1 << 24, 1 << 26}, 48, 3.0, 2.0);
    for (std::size_t i = 0; i < two.size(); ++i)
        two[i].pattern_key = i % 2 == 0 ? "Two[same,same|fp16;fp16]" : "Two[same,scalar|fp16;fp16]";
    const auto plain = synthetic_rows(
        "Plain", {512, 1024, 2048, 4096, 8192, 32768, 1 << 19, 1 << 23, 1 << 25}, 48, 1.0, 0.0);
    std::vector<profile::measured_op> rows = one;
    rows.insert(rows.end(), two.begin(), two.end());
    rows.insert(rows.end(), plain.begin(), plain.end());
    const auto res = profile::calibrate(c, rows, {}, opt);
    const profile::calibration& f = res.fitted;
    // Tolerances as in "a work factor and a fixed time per op type" above.
    CHECK(f.work_factor.contains(bcast));
    CHECK_FALSE(f.work_factor.contains("One"));
    CHECK(f.factor_of("One", bcast) == doctest::Approx(3.0).epsilon(0.01));
    CHECK(f.fixed_time_of("One", bcast).in(units::us) == doctest::Approx(2.0).epsilon(0.02));
    // Another pattern of "One" (and the type without one) keeps the model's own terms.
    CHECK(f.factor_of("One", scalar) == 1.0);
    CHECK(f.factor_of("One") == 1.0);
    CHECK(f.fixed_time_of("One", scalar) == duration{});
    // Rows of two patterns: the type's terms, for any pattern.
    CHECK(f.factor_of("Two") == doctest::Approx(3.0).epsilon(0.01));
    CHECK(f.factor_of("Two", "Two[broadcast,same|fp16;fp16]") ==
          doctest::Approx(3.0).epsilon(0.01));
    CHECK(std::none_of(f.work_factor.begin(), f.work_factor.end(),
                       [](const auto& kv) { return kv.first.starts_with("Two["); }));
    CHECK(res.log_error_after < 0.01);

    // applied(): the pattern's terms where the calibration has any, in place of the type's.
    profile::calibration cal;
    cal.work_factor["Mul"] = 2.0;
    cal.work_factor["Mul[same,scalar|fp32;fp32]"] = 5.0;
    cal.fixed_time["Mul[same,scalar|fp32;fp32]"] = duration{1, units::us};
    cal.fixed_time["Mul"] = duration{0.25, units::us};
    const op o = elementwise(1 << 20, dtype::fp32);
    const op at = cal.applied(o, "Mul", "Mul[same,scalar|fp32;fp32]");
    CHECK(at.useful_ops == doctest::Approx(5.0 * o.useful_ops).epsilon(1e-12));
    CHECK(at.extra_head == duration{1, units::us});
    const op other = cal.applied(o, "Mul", "Mul[broadcast,broadcast|fp32;fp32]");
    CHECK(other.useful_ops == doctest::Approx(2.0 * o.useful_ops).epsilon(1e-12));
    CHECK(other.extra_head == duration{0.25, units::us});
    // A heavy type's other patterns take the unseen heavy factor.
    cal.work_factor["ApplyAdamW[same|fp32]"] = 6.0;
    cal.unseen_heavy_factor = 4.0;
    CHECK(cal.factor_of("ApplyAdamW", "ApplyAdamW[same|fp32]") == 6.0);
    CHECK(cal.factor_of("ApplyAdamW", "ApplyAdamW[same,same|fp32;fp32]") == 4.0);
    CHECK(cal.factor_of("ApplyAdamW") == 4.0);
}

TEST_CASE("calibration: terms of one pattern on the Qwen3 profile (seed 8)" *
          doctest::test_suite("heavy")) {
    // Seed 8 of the hold-out holds out the profile's Muls by a scalar ([4096, 1, 1, 128] by [])
    // and fits on its broadcast Muls ([4096, 1] by [64]), which the model under-predicts 2.5x
    // (docs/validation.md, "Terms of one pattern"). Their factor, taken as the type's, priced
    // the held-out Muls at 2.3x: MAPE 153.7 % on them. As the broadcast pattern's, it leaves
    // them at the shared parameters: 23.7 % (the rows' own spread around their median is 22 %
    // over the 16 seeds). Bound 50 %: far from the type-wide 153.7 %, with room for the
    // searches' tolerance.
    const chip c = *chips::find_chip("910B3");
    auto rows = profile::read_kernel_details_file(
                    std::string(PERFCAST_SOURCE_DIR) +
                    "/tests/data/profiles/real/torchnpu_cann83_qwen3_rank0_ascend_pt/"
                    "ASCEND_PROFILER_OUTPUT/kernel_details.csv")
                    .rows;
    profile::annotate_context(rows, c);
    const auto split = profile::split_holdout(rows, 0.3, 8);
    const auto fit = profile::calibrate(c, profile::measured_ops(c, split.fit));
    const std::string bcast = "Mul[broadcast,broadcast|fp32;fp32]";
    // The broadcast Muls' terms are their pattern's (a factor of 13.6 and 10.3 us before the Ascend
    // default for assumed operation counts moved the shared fit; a fixed time of about 10 us
    // since), and the type has none: the Muls by a scalar take the shared parameters.
    CHECK(fit.fitted.key_of("Mul", bcast) == bcast);
    CHECK((fit.fitted.factor_of("Mul", bcast) > 2.0 ||
           fit.fitted.fixed_time_of("Mul", bcast) > duration{2, units::us}));
    CHECK_FALSE(fit.fitted.fixed_time.contains("Mul"));
    CHECK_FALSE(fit.fitted.per_core_time.contains("Mul"));
    CHECK_FALSE(fit.fitted.work_factor.contains("Mul"));
    const auto muls = profile::score_rows(
        c, split.test, fit.fitted, [](const profile::kernel_row& r) { return r.op_type == "Mul"; });
    REQUIRE(muls.rows.size() > 50);
    CHECK(muls.overall.mape < 0.5);
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
    cal.fixed_time["ApplyAdamW"] = duration{3.25, units::us};
    cal.per_core_time["RealDiv"] = duration{0.125, units::us};
    cal.work_factor["Mul[same,scalar|fp32;fp32]"] = 5.5;
    cal.unseen_heavy_factor = 4.5;
    cal.params.first_run_launch = duration{0.25, units::us};
    cal.params.first_run_per_core = duration{0.125, units::us};
    cal.params.l2_efficiency = 1.625;
    cal.params.hbm_mix_cost = 1.375;
    cal.chip = "ascend910b1";
    std::ostringstream out;
    io::write_params(out, cal, "test");
    const auto back = io::parse_params(out.str());
    CHECK(back.params == cal.params);
    CHECK(back.chip == "ascend910b1");
    CHECK(io::parse_params("overlap = 0.5\n").chip.empty());  // a file without the key
    // A chip an ini named with a space or a '#' is not written: it would not read back as itself.
    profile::calibration odd;
    odd.chip = "My NPU #2";
    std::ostringstream odd_out;
    io::write_params(odd_out, odd);
    CHECK(odd_out.str().find("chip =") == std::string::npos);
    CHECK(io::parse_params(odd_out.str()).chip.empty());
    CHECK(back.factor_of("LayerNormV3") == 2.5);
    CHECK(back.factor_of("Add") == 1.0);
    CHECK(back.fixed_time_of("ApplyAdamW") == duration{3.25, units::us});
    CHECK(back.fixed_time_of("Add") == duration{});
    CHECK(back.per_core_time_of("RealDiv") == duration{0.125, units::us});
    CHECK(back.per_core_time_of("ApplyAdamW") == duration{});
    CHECK(back.unseen_heavy_factor == 4.5);
    CHECK(back.factor_of("Tanh") == 4.5);
    CHECK(back.factor_of("Mul", "Mul[same,scalar|fp32;fp32]") == 5.5);
    CHECK(back.factor_of("Mul") == 1.0);

    const auto message = [](std::string_view text) {
        try {
            (void)io::parse_params(text);
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
    CHECK(message("work.Add = -1\n").find("expected a factor in (0, 1e6)") != std::string::npos);
    CHECK(message("fixed_us.Add = -0.5\n").find(":1:16: key 'fixed_us.Add': expected a time") !=
          std::string::npos);
    CHECK(message("fixed_us.Add = inf\n").find("fixed_us.Add") != std::string::npos);
    CHECK(message("per_core_us.Add = -0.5\n")
              .find(":1:19: key 'per_core_us.Add': expected a time in [0, 1e9) us, got -0.5") !=
          std::string::npos);
    CHECK(message("fixed_us.Add = 1e9\n").find("expected a time in [0, 1e9) us, got 1e9") !=
          std::string::npos);
    CHECK(message("unseen_heavy_work = 0\n").find("key 'unseen_heavy_work': expected a factor") !=
          std::string::npos);
    CHECK(message("cube_efficiency = nan\n").find("expected a number") != std::string::npos);
    // Subnormal: once priced an op at inf (model_params::min_efficiency).
    CHECK(message("vector_efficiency = 1e-320\n").find("expected a share in [1e-4, 1]") !=
          std::string::npos);
    CHECK(message("l2_efficiency = 2.5\n")
              .find("l2_efficiency = 2.5, expected a factor in [1e-4, 2]") != std::string::npos);
    CHECK(
        message("hbm_mix_cost = 0.4\n").find("hbm_mix_cost = 0.4, expected a factor in [0.5, 4]") !=
        std::string::npos);
    // A file of the rule before (every byte written weighed against a read): refused, not read
    // as the mix cost.
    CHECK(message("hbm_write_cost = 1.39\n")
              .find("<string>:1:1: key 'hbm_write_cost' was fitted under an HBM rule perfcast no "
                    "longer has") != std::string::npos);
    CHECK(message("# only a comment\n\n") == "no error");
    // The chip is a name, not a number; anything else is refused where it stands.
    CHECK(message("chip = h100 sxm\n")
              .find("<string>:1:8: key 'chip': expected a chip name (letters, digits, '-', '_', "
                    "'.'; at most 64), got 'h100 sxm'") != std::string::npos);
    CHECK(message("chip =\n").find("key 'chip': expected a chip name") != std::string::npos);
    CHECK(message("chip = a\nchip = b\n").find("key 'chip' given twice") != std::string::npos);
    CHECK(message("work.Mul[same,scaler|fp32;fp32] = 2\n")
              .find("<string>:1:1: key 'work.Mul[same,scaler|fp32;fp32]': expected an op type, "
                    "or a type and input pattern") != std::string::npos);
    CHECK(message("fixed_us.Mul[same = 2\n").find("key 'fixed_us.Mul[same'") != std::string::npos);
    // Checked where it is read: the key, its line and the real bound.
    CHECK(message("first_run.per_core_us = -1\n")
              .find("1:25: key 'first_run.per_core_us': expected a time in [0, 1e9) us, got -1") !=
          std::string::npos);
}

TEST_CASE("parameters file: runtime-path settings round trip, checked where written") {
    profile::calibration cal;
    cal.runtime = {{"buffer_us", "12.5", ""}, {"copies", "aggregated", ""}};
    std::ostringstream out;
    io::write_params(out, cal);
    CHECK(out.str().find("runtime.buffer_us = 12.5\nruntime.copies = aggregated\n") !=
          std::string::npos);
    const auto back = io::parse_params(out.str());
    REQUIRE(back.runtime.size() == 2);
    CHECK(back.runtime[0].key == "buffer_us");
    CHECK(back.runtime[1].value == "aggregated");
    runtime_path r;
    apply_runtime_settings(r, back.runtime);
    CHECK(r.buffer == duration{12.5, units::us});
    CHECK(r.copies == copy_policy::aggregated);
    // The origin is where the value starts: line 2, column 18 of a two-line file.
    const auto two = io::parse_params("runtime.buffer_us = 1\nruntime.copies = aggregated\n");
    REQUIRE(two.runtime.size() == 2);
    CHECK(two.runtime[1].origin == "<string>:2:18");

    const auto message = [](std::string_view text) {
        try {
            (void)io::parse_params(text);
        } catch (const perfcast::error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message("\nruntime.sync_us = -4\n").find("<string>:2:19: key 'runtime.sync_us': ") !=
          std::string::npos);
    CHECK(message("runtime.sync_us = -4\n").find("sync_us = -4, expected a time in [0, 6e7] us") !=
          std::string::npos);
    CHECK(message("runtime.speed = 3\n").find("expected one of copies, memory") !=
          std::string::npos);
    CHECK(message("runtime.copies = aggregated\nruntime.copies = per-tensor\n").find("given twice") !=
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
    // guide §7's Equal between broadcast shapes, on the case's 10 vector cores.
    REQUIRE(run(cli::op_command,
                {"--shapes", "1,4000;400,1", "--dtype", "int64", "--out-dtype", "bool",
                 "--vector", "10", "--format", "json"},
                out, err) == 0);
    CHECK(out.find("\"cores\": 10") != std::string::npos);
    CHECK(out.find("\"bytes\": 1635200") != std::string::npos);  // 4400 x 8 B in, 1.6e6 x 1 B out
    CHECK(run(cli::op_command, {"--matmul", "1,2"}, out, err) == 2);
    CHECK(run(cli::op_command, {"--matmul", "0,2,3"}, out, err) == 2);
    CHECK(err.find("m = 0") != std::string::npos);
    CHECK(run(cli::op_command, {"--cube", "25", "--matmul", "64,64,64"}, out, err) == 2);
    CHECK(err.find("perfcast::op: --cube = 25, expected at most 24 (the cube cores of "
                   "ascend910b1)") != std::string::npos);
    CHECK(run(cli::op_command, {"--transfer", "4MiB", "--link", "pcie9x4"}, out, err) == 2);
    CHECK(run(cli::op_command, {"--elementwise", "10", "--dtype", "fp17"}, out, err) == 2);
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

TEST_CASE("perfcast validate and calibrate on the 910B1 profile" * doctest::test_suite("heavy")) {
    std::string out, err;
    REQUIRE(run(cli::validate_command,
                {"--chip", "910B1", "--test", profile_910b1.c_str(), "--types",
                 "MatMul,BatchMatMul", "--format", "json"},
                out, err) == 0);
    for (const char* f : {"\"rows\": 13", "\"mape\"", "\"median_ape\"", "\"p90_ape\"",
                          "\"by_type\"", "\"MatMul\"", "\"BatchMatMul\""})
        CHECK(out.find(f) != std::string::npos);
    // The fits below run on the first 200 rows of the profile: fits of the whole file made this
    // the suite's slowest test (117 s of the ASan run).
    const std::string head = "perfcast_test_head200.csv";
    {
        std::ifstream in(profile_910b1);
        std::ofstream o(head);
        std::string line;
        for (int i = 0; i < 201 && std::getline(in, line); ++i) o << line << '\n';
    }
    REQUIRE(run(cli::validate_command,
                {"--chip", "910B1", head.c_str(), "--holdout", "0.3", "--seed", "2"}, out,
                err) == 0);
    CHECK(out.find("fitted on") != std::string::npos);
    CHECK(out.find("cross-validated MAPE") != std::string::npos);
    CHECK(out.find("MAPE") != std::string::npos);
    // Repeated over seeds: each seed's line, the mean, the pooled rows by type.
    REQUIRE(run(cli::validate_command,
                {"--chip", "910B1", head.c_str(), "--holdout", "0.3", "--seeds", "1-2",
                 "--vector-efficiency", "keep", "--tasks", "AI_CORE,AI_VECTOR_CORE", "--format",
                 "json"},
                out, err) == 0);
    for (const char* f : {"\"holdout\": 0.3", "\"scored_seeds\": 2", "\"mean_mape\"",
                          "\"mean_p90_ape\"", "\"seeds\": [",
                          "\"seed\": 1", "\"seed\": 2", "\"fit_rows\"", "\"pooled\"",
                          "\"by_type\"", "\"vector_efficiency\": \"kept\""})
        CHECK(out.find(f) != std::string::npos);
    CHECK(out.find("\"seed\": 3") == std::string::npos);
    CHECK(perfcast_test::json_checker(out).valid());
    REQUIRE(run(cli::validate_command,
                {"--chip", "910B1", head.c_str(), "--holdout", "0.3", "--seeds", "4",
                 "--vector-efficiency", "keep"},
                out, err) == 0);
    CHECK(out.find("hold-out 0.3 over seeds 4-4: mean MAPE") != std::string::npos);
    CHECK(out.find("every seed's held-out rows together") != std::string::npos);
    for (const std::vector<std::string_view>& bad :
         {std::vector<std::string_view>{"--chip", "910B1", profile_910b1.c_str(), "--holdout",
                                        "0.3", "--seeds", "3-1"},
          {"--chip", "910B1", profile_910b1.c_str(), "--holdout", "0.3", "--seeds", "1-2000"},
          {"--chip", "910B1", profile_910b1.c_str(), "--holdout", "0.3", "--seeds", "1-2",
           "--seed", "3"},
          {"--chip", "910B1", "--test", profile_910b1.c_str(), "--seeds", "1-2"},
          {"--chip", "910B1", profile_910b1.c_str(), "--holdout", "0.3", "--seeds", "x-3"},
          {"--chip", "910B1", profile_910b1.c_str(), "--holdout", "0.3", "--seeds", "1-2",
           "--worst", "3"},
          {"--chip", "910B1", profile_910b1.c_str(), "--holdout", "0.3", "--seed", "-1"}}) {
        CHECK(run(cli::validate_command, bad, out, err) == 2);
        CHECK(err.find("--seed") != std::string::npos);
    }
    CHECK(run(cli::validate_command, {"--chip", "910B1"}, out, err) == 2);
    CHECK(run(cli::validate_command, {"--chip", "nope", "--test", "x.csv"}, out, err) == 2);
    CHECK(err.find("chip = nope") != std::string::npos);
    CHECK(run(cli::validate_command, {"--chip", "910B1", "--test", "/nonexistent.csv"}, out,
              err) == 1);

    const std::string params = "perfcast_test_params.txt";
    REQUIRE(
        run(cli::calibrate_command,
            {head.c_str(), "--chip", "910B1", "-o", params.c_str(), "--vector-efficiency", "keep"},
            out, err) == 0);
    std::remove(head.c_str());
    CHECK(out.find("vector efficiency kept") != std::string::npos);
    CHECK(out.find("L2 efficiency") == std::string::npos);
    CHECK(run(cli::calibrate_command,
              {profile_910b1.c_str(), "--chip", "910B1", "-o", params.c_str(),
               "--vector-efficiency", "sometimes"},
              out, err) == 2);
    CHECK(run(cli::calibrate_command,
              {profile_910b1.c_str(), "--chip", "910B1", "-o", params.c_str(), "--l2-efficiency",
               "sometimes"},
              out, err) == 2);
    CHECK(err.find("--l2-efficiency sometimes: expected fit or keep") != std::string::npos);
    CHECK(run(cli::calibrate_command,
              {profile_910b1.c_str(), "--chip", "910B1", "-o", params.c_str(), "--hbm-mix-cost",
               "twice"},
              out, err) == 2);
    CHECK(err.find("--hbm-mix-cost twice: expected fit or keep") != std::string::npos);
    const auto cal = io::read_params_file(params);
    // No row of the 910B1 profile (nor of its first 200) moves with the L2 rate: it is not
    // fitted, nor reported.
    CHECK(cal.params.l2_efficiency == 1.0);
    CHECK(cal.params.head_of(engine::cube).set);
    CHECK_FALSE(cal.work_factor.empty());
    std::remove(params.c_str());
}

TEST_CASE(
    "measured rows: sizes past int64 are not mappable, saying why; times under 1 ns unscored") {
    const chip& c = chips::ascend910b1;
    const std::string head =
        "Name,Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
        "Output Data Types\n";
    // Two inputs of 2^63 - 1 elements: their sum overflowed (undefined behaviour) to a negative
    // read count once, then stopped the run as an error; now the row is not mappable, its
    // reason the "too large" sum.
    const auto huge = profile::parse_kernel_details(
        head +
            "add1,Add,AI_VECTOR_CORE,5,\"9223372036854775807;9223372036854775807\","
            "FLOAT16;FLOAT16,\"9223372036854775807\",FLOAT16\n",
        "huge.csv");
    REQUIRE(huge.rows.size() == 1);
    CHECK_FALSE(profile::measured_op_of(c, huge.rows[0]).has_value());
    const auto why = profile::unmapped_of(c, huge.rows[0]);
    REQUIRE(why.has_value());
    CHECK(why->line == 2);
    CHECK(why->reason == profile::unmapped_reason::shapes);
    CHECK(why->detail.find("too large") != std::string::npos);
    // A measured time under profile::min_measured_us (0.001 us, the least a profiler writes) is
    // no kernel's: not scored (an error relative to 1e-300 us was 3e302 %).
    const auto times = profile::parse_kernel_details(
        head + "a,Add,AI_VECTOR_CORE,1e-300,\"1024;1024\",FLOAT16;FLOAT16,\"1024\",FLOAT16\n" +
            "b,Add,AI_VECTOR_CORE,0,\"1024;1024\",FLOAT16;FLOAT16,\"1024\",FLOAT16\n" +
            "c,Add,AI_VECTOR_CORE,0.001,\"1024;1024\",FLOAT16;FLOAT16,\"1024\",FLOAT16\n",
        "times.csv");
    REQUIRE(times.rows.size() == 3);
    CHECK(!profile::measured_op_of(c, times.rows[0]));
    CHECK(!profile::measured_op_of(c, times.rows[1]));
    CHECK(profile::measured_op_of(c, times.rows[2]));
}

}  // namespace test_calibration
