// The default heads' fit (profile/head_fit.hpp, examples/fit_heads.cpp) on synthetic rows with a
// known answer, and the uncalibrated presets on the shipped profiles (docs/validation.md,
// "Defaults that hold before calibration").
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/head_fit.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/validate.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_head_fit {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;
using profile::head_row;

namespace {

const std::string data_dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/";
const std::string real_dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";

/// Rows whose measured time is launch + per_core x cores + body exactly.
std::vector<head_row> synthetic(double launch, double per_core, const std::vector<double>& cores,
                                const std::vector<double>& bodies) {
    std::vector<head_row> out;
    for (double b : cores)
        for (double body : bodies) out.push_back({body, b, launch + per_core * b + body});
    return out;
}

/// The AI core rows of the files, in context, mapped as examples/fit_heads.cpp maps them.
std::vector<profile::measured_op> rows_of(const chip& c, const std::vector<std::string>& paths,
                                          bool with_aicpu = false) {
    std::vector<profile::measured_op> out;
    for (const std::string& path : paths) {
        auto ops = profile::core_ops(c, profile::read_kernel_details_file(path).rows, with_aicpu);
        out.insert(out.end(), ops.begin(), ops.end());
    }
    return out;
}

std::string kd(const std::string& dir) {
    return real_dir + dir + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
}

}  // namespace

TEST_CASE("fit_head recovers a known head from exact rows") {
    // Two profiles with the same head and different cores and bodies. The objective is 0 at the
    // truth and positive elsewhere (two or more core counts pin both terms), so the search must
    // land on it to its resolution: the last of six refinements works on a box 0.1^6 of the first
    // (log launch over [0.01, 50] us, per_core over [0, 0.5] us), far below the 1e-4 asked.
    const std::vector<std::vector<head_row>> profiles{
        synthetic(1.7, 0.06, {1, 4, 12, 48}, {0.0, 0.2, 0.9}),
        synthetic(1.7, 0.06, {2, 8, 16}, {0.1, 3.0})};
    const auto f = profile::fit_head(profiles);
    CHECK(f.launch.in(units::us) == doctest::Approx(1.7).epsilon(1e-4));
    CHECK(f.per_core.in(units::us) == doctest::Approx(0.06).epsilon(1e-4));
    CHECK(f.objective < 1e-6);
    CHECK(f.rows == 18);
    CHECK(profile::head_mape(profiles[0], 1.7, 0.06) == doctest::Approx(0.0));
}

TEST_CASE("fit_head weighs every profile alike, not every row") {
    // 40 rows want a head of 1 us (one core, no body), one row wants 3 us. By rows the fit
    // would sit at 1 us; each profile weighing half, any head in [1, 3] us gives the same mean
    // of the two |log| means (log 3 / 2): the objective is flat there, and by rows it would not be.
    const std::vector<head_row> many(40, head_row{0.0, 1.0, 1.0});
    const std::vector<head_row> one{head_row{0.0, 1.0, 3.0}};
    const std::vector<std::vector<head_row>> profiles{many, one};
    const double at1 = profile::head_objective(profiles, 1.0, 0.0);
    const double at2 = profile::head_objective(profiles, 2.0, 0.0);
    CHECK(at1 == doctest::Approx(std::log(3.0) / 2));
    CHECK(at2 == doctest::Approx((std::log(2.0) + std::log(1.5)) / 2));
    CHECK(at2 == doctest::Approx(at1));
    // Outside [1, 3] us it grows.
    CHECK(profile::head_objective(profiles, 0.5, 0.0) > at1 + 0.1);
    CHECK(profile::head_objective(profiles, 6.0, 0.0) > at1 + 0.1);
    // An empty profile is skipped, not counted as a 0.
    const std::vector<std::vector<head_row>> with_empty{many, one, {}};
    CHECK(profile::head_objective(with_empty, 1.0, 0.0) == doctest::Approx(at1));
    CHECK_THROWS_AS((void)profile::fit_head({{}, {}}), error);
}

TEST_CASE("head_rows: the engine's rows, their bodies without the head, long bodies left out") {
    const chip c = *chips::find_chip("910B1");
    const op small = elementwise(1024, dtype::fp16);      // a head-bound vector kernel
    const op large = elementwise(64 << 20, dtype::fp16);  // a streaming one
    const op gemm_op = matmul(4096, 4096, 4096, dtype::fp16);
    const std::vector<profile::measured_op> rows{
        {small, 1, duration{1.3, units::us}, "Add"},
        {large, 48, duration{200, units::us}, "Add"},
        {gemm_op, 24, duration{1500, units::us}, "MatMul"}};
    const auto v = profile::head_rows(c, rows, engine::vector, duration{1.0, units::us});
    REQUIRE(v.size() == 1);
    const op_cost k = cost(c, small, core_count{1});
    CHECK(v[0].body_us == doctest::Approx((k.latency - k.head).in(units::us)));
    CHECK(v[0].cores == 1);
    CHECK(v[0].measured_us == doctest::Approx(1.3));
    CHECK(profile::head_rows(c, rows, engine::vector, duration{1e9, units::us}).size() == 2);
    CHECK(profile::head_rows(c, rows, engine::cube, duration{1e9, units::us}).size() == 1);
    CHECK(profile::head_rows(c, rows, engine::cube, duration{1.0, units::us}).empty());
}

TEST_CASE("load latency: a kernel that reads waits for it, a fill does not") {
    // Worked by hand: the head of an op that reads is the engine's head plus the chip's load
    // latency; a fill (reads nothing) keeps the engine's head alone, calibrated head or not.
    chip c = *chips::find_chip("910B1");
    c.overhead.load_latency = duration{0.5, units::us};
    const op add = elementwise(4096, dtype::fp16);
    const op zeros = fill(4096, dtype::fp16);
    const core_count k{4};
    const duration engine_head = head_time(c, engine::vector, 4);
    CHECK(cost(c, add, k).head.in(units::us) ==
          doctest::Approx((engine_head + duration{0.5, units::us}).in(units::us)));
    CHECK(cost(c, zeros, k).head.in(units::us) == doctest::Approx(engine_head.in(units::us)));
    model_params p;
    p.head[static_cast<std::size_t>(engine::vector)] = {true, duration{0.3, units::us}, {}};
    CHECK(cost(c, add, k, p).head.in(units::us) == doctest::Approx(0.8));
    CHECK(cost(c, zeros, k, p).head.in(units::us) == doctest::Approx(0.3));
    // One predicate says who waits (cost() and the head fits both ask it): an AI CPU op that
    // reads does not, its launch holds its own wait.
    static_assert(waits_for_load(elementwise(4096, dtype::fp16)));
    static_assert(!waits_for_load(fill(4096, dtype::fp16)));
    op on_cpu = add;
    on_cpu.eng = engine::aicpu;
    CHECK(!waits_for_load(on_cpu));
    CHECK(cost(c, on_cpu, core_count{1}).head == head_time(c, engine::aicpu, 1));
    // The Ascend presets fold it into their fitted launch (fit_heads finds 0 us on the three fit
    // profiles); the Hopper presets carry it (tests/test_h200.cpp).
    CHECK(chips::default_ascend_overheads.load_latency == duration{});
    c.overhead.load_latency = duration{-1, units::us};
    CHECK_THROWS_WITH_AS((void)validate(c), doctest::Contains("overhead.load_latency"), error);
}

TEST_CASE("fit_load_latency recovers a known latency from fills and reading kernels") {
    // Synthetic measurements from a chip whose truth is launch 0.6 us, no per-core term and a
    // load latency of 0.4 us: an Add and a fill at a few sizes and core counts, measured as the
    // model prices them with that truth. The search (steps of 0.01 us on [0, 1] us) must find
    // 0.4 us and the launch with it; without fills the latency would not be told from the launch.
    chip truth = *chips::find_chip("910B1");
    truth.overhead.vector_launch = duration{0.6, units::us};
    truth.overhead.vector_per_core = duration{};
    truth.overhead.load_latency = duration{0.4, units::us};
    std::vector<profile::measured_op> rows;
    for (const std::int64_t n : {1024, 4096, 16384}) {
        for (const int b : {1, 4, 8}) {
            for (const op& o : {elementwise(n, dtype::fp16), fill(n, dtype::fp16)}) {
                rows.push_back({o, b, cost(truth, o, core_count{b}).latency,
                                o.kind == op_kind::fill ? "Fill" : "Add"});
            }
        }
    }
    chip start = truth;  // what the search is handed: another launch and no latency
    start.overhead.vector_launch = duration{1.35, units::us};
    start.overhead.load_latency = duration{};
    // Every row is a head row (a body limit of 1 s): the largest Add on one core has a body of
    // over 1 us, which the default limit would leave out.
    const auto f = profile::fit_load_latency({{start, rows}}, duration{1.0, units::us},
                                             duration{1e6, units::us});
    CHECK(f.latency.in(units::us) == doctest::Approx(0.4).epsilon(1e-9));
    CHECK(f.vector.launch.in(units::us) == doctest::Approx(0.6).epsilon(1e-3));
    CHECK(f.vector.objective < 1e-3);
    CHECK(f.vector.rows == rows.size());
    CHECK_THROWS_AS((void)profile::fit_load_latency({{start, rows}}, duration{-1, units::us},
                                                    duration{1.0, units::us}),
                    error);
    // Without a fill the latency trades off with the launch one for one: refused, by name.
    std::vector<profile::measured_op> reading;
    for (const auto& m : rows)
        if (m.o.kind != op_kind::fill) reading.push_back(m);
    CHECK_THROWS_WITH_AS(
        (void)profile::fit_load_latency({{start, reading}}, duration{1.0, units::us},
                                        duration{1e6, units::us}),
        doctest::Contains("head-bound vector rows that read nothing"), error);
}

TEST_CASE("the Ascend vector head is what the fit finds on the three fit profiles") {
    // examples/fit_heads.cpp on the fit profiles of docs/validation.md: the preset's constants
    // are its output rounded to 0.05 us and 0.01 us per core, so they must be within half of
    // that of the fit (a change to the model's bodies or the row mapping that moves the fit
    // shows here, and the constants must be refitted).
    const chip b1 = *chips::find_chip("910B1");
    const chip b3 = *chips::find_chip("910B3");
    const duration max_body{1.0, units::us};
    const std::vector<std::vector<head_row>> profiles{
        profile::head_rows(b1, rows_of(b1, {data_dir + "kernel_details_910B1_train.csv"}),
                           engine::vector, max_body),
        profile::head_rows(
            b1, rows_of(b1, {kd("torchnpu_2023_cann70_rank0"), kd("torchnpu_2023_cann70_rank1")}),
            engine::vector, max_body),
        profile::head_rows(b3, rows_of(b3, {data_dir + "kernel_details_910B3_matmul.csv"}),
                           engine::vector, max_body)};
    const auto f = profile::fit_head(profiles);
    const overhead_spec& o = chips::default_ascend_overheads;
    const double fitted_launch = f.launch.in(units::us);
    const double fitted_per_core = f.per_core.in(units::us);
    const double preset_launch = o.vector_launch.in(units::us);
    const double preset_per_core = o.vector_per_core.in(units::us);
    CHECK(std::abs(fitted_launch - preset_launch) <= 0.025);
    CHECK(std::abs(fitted_per_core - preset_per_core) <= 0.005);
    // The load latency of the same profiles: fit_heads' search (steps of 0.01 us on [0, 1] us)
    // finds 0 (their presets keep none: the reading kernels' head is the launch's). Here steps
    // of 0.1 us and then 0.01 us on [0, 0.02] us (the full search is 101 head fits: too slow for
    // the sanitizer builds) must both find 0, with the same vector head.
    const std::vector<profile::chip_rows> sets{
        {b1, rows_of(b1, {data_dir + "kernel_details_910B1_train.csv"})},
        {b1, rows_of(b1, {kd("torchnpu_2023_cann70_rank0"), kd("torchnpu_2023_cann70_rank1")})},
        {b3, rows_of(b3, {data_dir + "kernel_details_910B3_matmul.csv"})}};
    CHECK(profile::fit_load_latency(sets, duration{1.0, units::us}, max_body, 10).latency ==
          duration{});
    const auto l = profile::fit_load_latency(sets, duration{0.02, units::us}, max_body, 2);
    CHECK(l.latency == duration{});
    CHECK(std::abs(l.vector.launch.in(units::us)-preset_launch) <= 0.025);
}

TEST_CASE("a launch-only fit (per_core box 0) recovers the AI CPU's fixed cost") {
    // Rows of one core each (an AI CPU op's head ignores cores) at 80 us and 120 us in one
    // profile and 100 us in the other: each profile's mean |log| is flat between its own values,
    // and the mean of the two is least at 100 us (the second profile's 0 there; the first's is
    // the same anywhere in [80, 120]).
    const std::vector<std::vector<head_row>> profiles{
        {head_row{0.0, 1.0, 80.0}, head_row{0.0, 1.0, 120.0}}, {head_row{0.0, 1.0, 100.0}}};
    const auto f = profile::fit_head(profiles, {.launch_max_us = 1000, .per_core_max_us = 0});
    CHECK(f.per_core.in(units::us) == 0.0);
    CHECK(f.launch.in(units::us) == doctest::Approx(100.0).epsilon(1e-4));
    CHECK_THROWS_AS((void)profile::fit_head(profiles, {.per_core_max_us = -1}), error);
}

TEST_CASE("the Ascend AI CPU launch is what the fit finds on the profiles' AI CPU rows") {
    // The shipped profiles with AI_CPU rows: the 910B1 training profile (7 scalar Casts) and the
    // torchnpu 2023 rank 0 (2). The preset is the fit on both rounded to 1 us (so within 0.5 us
    // of it); left out, each is predicted by the other's fit within the 40 % docs/validation.md
    // reports (30.5 % and 39.9 % measured: examples/fit_heads.cpp prints both).
    const chip b1 = *chips::find_chip("910B1");
    const auto aicpu_rows = [&](const std::vector<std::string>& paths) {
        return profile::head_rows(b1, rows_of(b1, paths, true), engine::aicpu,
                                  duration{1e300, units::us});
    };
    const std::vector<head_row> train = aicpu_rows({data_dir + "kernel_details_910B1_train.csv"});
    const std::vector<head_row> rank0 = aicpu_rows({kd("torchnpu_2023_cann70_rank0")});
    REQUIRE(train.size() == 7);
    REQUIRE(rank0.size() == 2);
    const profile::head_fit_options opt{.launch_max_us = 1000, .per_core_max_us = 0};
    const auto both = profile::fit_head({train, rank0}, opt);
    CHECK(std::abs(both.launch.in(units::us)-chips::default_ascend_overheads.aicpu_launch.in(
              units::us)) <= 0.5);
    const auto on_train = profile::fit_head({train}, opt);
    const auto on_rank0 = profile::fit_head({rank0}, opt);
    CHECK(profile::head_mape(rank0, on_train.launch.in(units::us), 0) < 0.40);
    CHECK(profile::head_mape(train, on_rank0.launch.in(units::us), 0) < 0.40);
    // The 30 us assumed before missed both by more than half.
    CHECK(profile::head_mape(rank0, 30.0, 0) > 0.5);
    CHECK(profile::head_mape(train, 30.0, 0) > 0.5);
}

namespace {
/// Uncalibrated MAPE (a share) of the file's rows on `chip_name`, as `perfcast validate --test`
/// scores them: rows in their sequence context, then every mappable row (or those of `tasks`).
double uncalibrated_mape(const chip& c, const std::string& path,
                         const std::vector<std::string>& tasks = {}) {
    auto rows = profile::read_kernel_details_file(path).rows;
    profile::annotate_context(rows, c);
    const auto rep = profile::score_rows(c, rows, {}, [&](const profile::kernel_row& r) {
        if (tasks.empty()) return true;
        for (const std::string& t : tasks)
            if (r.task_text == t) return true;
        return false;
    });
    REQUIRE(rep.overall.rows > 0);
    return rep.overall.mape;
}
double uncalibrated_mape(const char* chip_name, const std::string& path,
                         const std::vector<std::string>& tasks = {}) {
    return uncalibrated_mape(*chips::find_chip(chip_name), path, tasks);
}
/// `base` with its vector engine's uncounted_work at `f`.
chip with_uncounted_work(const char* base, double f) {
    chip c = *chips::find_chip(base);
    c.vector.uncounted_work = f;
    return validate(c);
}
}  // namespace

TEST_CASE("uncalibrated presets on the shipped Ascend profiles (docs/validation.md)") {
    // The vector head was fitted on the first three (fit profiles); the last two were held out
    // until it was committed. Each bound is the figure docs/validation.md reports rounded up to
    // the next whole percent, so a model change that moves any of them by more than rounding
    // shows here and the page must be updated. The goal is 35 %; it is met on every
    // profile here. The head is the one refitted after the contiguous runs of profile rows
    // (docs/validation.md, "Layouts and contiguous runs"): 1.35 us + 0.12 us per core; the
    // figures are those since a kernel's L2 lines are dirty in the share it wrote and it writes
    // every output it lists ("Dirty lines in the share a kernel wrote"), and a collective writes
    // back the dirty lines before it ("Collectives write back the dirty lines before them").
    SUBCASE("fit profiles") {
        // 25.3 % (26.3 % before the default for assumed operation counts, in which this
        // profile's six heavy types have a part; 26.7, 28.9 % before that)
        CHECK(uncalibrated_mape("910B1", data_dir + "kernel_details_910B1_train.csv",
                                {"AI_CORE", "AI_VECTOR_CORE"}) <= 0.26);
        // 28.1 %: 50.8 % until a full [S, S] mask was read as the causal band (its three
        // FlashAttention rows were under-predicted already), 37.7 % with NonZero's
        // synchronization, 28.1 % with the fitted AI CPU launch (its two AI CPU Casts are in
        // that fit; left out of it, 34.6 %: docs/validation.md); 25.7 % with the dirty share.
        CHECK(uncalibrated_mape("910B1", kd("torchnpu_2023_cann70_rank0")) <= 0.26);
        // 15.7 %: 13.6 % before a collective wrote back the dirty lines before it (its OnesLike
        // after a broadcast pays for lines the broadcast wrote, which the row does not size);
        // 22.9 % before the dirty share.
        CHECK(uncalibrated_mape("910B1", kd("torchnpu_2023_cann70_rank1")) <= 0.16);
        CHECK(uncalibrated_mape("910B3", data_dir + "kernel_details_910B3_matmul.csv") <=
              0.24);  // 23.2 % (21.8 % before the dirty share, 44.7 % before the causal band,
                      // 22.2 % before bf16 in fp32)
    }
    SUBCASE("held-out profiles") {
        // 29.6 % with the Ascend default for assumed operation counts, whose fit saw this
        // profile's three heavy types (31.4 % from the 910B1 profile's alone: below); 34.7 %
        // before it (37.9 % before the dirty share, 41.4 % before Sin and Cos were counted,
        // 44.8 % before bf16 vector work ran in fp32)
        CHECK(uncalibrated_mape("910B3", kd("torchnpu_cann83_qwen3_rank0_ascend_pt")) <= 0.30);
        CHECK(uncalibrated_mape("910B1", kd("torchnpu_2025_level1_rank0_ascend_pt")) <=
              0.33);  // 32.7 % (33.3 % before collectives wrote back the dirty lines,
                      // 32.4 % before the dirty share; read since, for the convolutions and
                      // the contiguous runs)
    }
    SUBCASE("the 13 GEMMs of the 910B1 profile keep their 3.7 % (the cube head did not move)") {
        const chip c = *chips::find_chip("910B1");
        auto rows =
            profile::read_kernel_details_file(data_dir + "kernel_details_910B1_train.csv").rows;
        profile::annotate_context(rows, c);
        const auto rep = profile::score_rows(c, rows, {}, [](const profile::kernel_row& r) {
            return r.op_type == "MatMul" || r.op_type == "BatchMatMul";
        });
        CHECK(rep.overall.rows == 13);
        CHECK(rep.overall.mape <= 0.038);  // 3.7 %
    }
}

TEST_CASE("the Ascend default for assumed operation counts, each profile scored by the other's") {
    // chips::ascend_uncounted_work is the factor of least mean percentage error over the heavy
    // types' factors two shipped profiles were calibrated to at a factor of 1 (commit 2e4a6c2):
    // the 910B1 training profile's six and the Qwen3 profile's three. Rounded to 2.46.
    using profile::detail::least_relative_error_factor;
    const auto logs = [](std::initializer_list<double> fs) {
        std::vector<double> out;
        for (double f : fs) out.push_back(std::log(f));
        return out;
    };
    const std::initializer_list<double> b1{6.092, 9.067, 3.646, 3.228, 2.321, 6.228};
    const std::initializer_list<double> qwen3{2.456, 4.980, 1.453};
    std::vector<double> both = logs(b1);
    for (double l : logs(qwen3)) both.push_back(l);
    CHECK(least_relative_error_factor(both) == doctest::Approx(2.456).epsilon(1e-9));
    CHECK(chips::ascend_uncounted_work == doctest::Approx(2.456).epsilon(0.002));  // rounding
    const double from_b1 = least_relative_error_factor(logs(b1));                  // 3.228
    const double from_qwen3 = least_relative_error_factor(logs(qwen3));            // 1.453
    CHECK(from_b1 == doctest::Approx(3.228).epsilon(1e-9));
    CHECK(from_qwen3 == doctest::Approx(1.453).epsilon(1e-9));
    static_assert(chips::ascend910b1.vector.uncounted_work == chips::ascend_uncounted_work);
    static_assert(chips::ascend910b3.vector.uncounted_work == chips::ascend_uncounted_work);
    static_assert(chips::a100_80gb_sxm.vector.uncounted_work == 1.0);
    static_assert(chips::ascend910b1.cube.uncounted_work == 1.0);

    // Leave one profile out: each profile uncalibrated with the factor from the other alone
    // beats the factor of 1 (bounds: docs/validation.md's figures rounded up to the next whole
    // percent; without the factor 26.3 % and 34.7 %).
    const std::string train = data_dir + "kernel_details_910B1_train.csv";
    const std::vector<std::string> tasks{"AI_CORE", "AI_VECTOR_CORE"};
    const std::string qwen3_file = kd("torchnpu_cann83_qwen3_rank0_ascend_pt");
    const double b1_none = uncalibrated_mape(with_uncounted_work("910B1", 1.0), train, tasks);
    const double b1_out = uncalibrated_mape(with_uncounted_work("910B1", from_qwen3), train, tasks);
    const double q_none = uncalibrated_mape(with_uncounted_work("910B3", 1.0), qwen3_file);
    const double q_out = uncalibrated_mape(with_uncounted_work("910B3", from_b1), qwen3_file);
    CHECK(b1_none <= 0.27);  // 26.3 %
    CHECK(b1_out <= 0.27);   // 26.0 %
    CHECK(b1_out < b1_none);
    CHECK(q_none <= 0.35);  // 34.7 %
    CHECK(q_out <= 0.32);   // 31.4 %
    CHECK(q_out < q_none);
}

}  // namespace test_head_fit
