// profile/transfer.hpp: a calibration carried to another chip keeps what belongs to the kernels'
// code and leaves what belongs to the chip at the defaults; validate --transfer-from scores it.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/transfer.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/perfcast/commands.hpp"
#include "../examples/perfcast/common.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <cstddef>
#include <fstream>
#include <string>
#include <string_view>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_transfer {

using namespace perfcast;

TEST_CASE(
    "transferred: factors and their vector efficiency kept, fixed times and times per core as "
    "cycles, the rest reset") {
    profile::calibration from;
    from.work_factor = {{"LayerNormV3", 2.5}, {"Gelu", 0.75}};
    from.unseen_heavy_factor = 6.0;
    from.fixed_time = {{"LayerNormV3", duration{3.0, units::us}}};
    from.per_core_time = {{"ApplyAdamW", duration{0.25, units::us}}};
    from.params.vector_efficiency = 0.55;
    from.params.hbm_efficiency = 1.3;
    from.params.cube_efficiency = 0.7;
    from.params.l2_efficiency = 1.5;
    from.params.head[1] = {true, duration{2.0, units::us}, duration{0.5, units::us}};
    from.params.first_run_launch = duration{2.0, units::us};
    from.runtime.push_back({"buffer_us", "12", "test"});
    const chip& a = chips::ascend910b1;
    const chip& g = chips::a100_80gb_sxm;
    const profile::calibration to = profile::transferred(from, a, g);
    CHECK(to.work_factor == from.work_factor);
    CHECK(to.unseen_heavy_factor == 6.0);
    // 3 us of the 910B1's vector clock is the same cycles on the A100's: 3 x f_910B1 / f_A100.
    const double expected = 3.0 * a.vector.clock.in(units::Hz) / g.vector.clock.in(units::Hz);
    REQUIRE(to.fixed_time.size() == 1);
    // Tolerance: one division and one multiplication in another order, 1e-12.
    CHECK(to.fixed_time.at("LayerNormV3").in(units::us) ==
          doctest::Approx(expected).epsilon(1e-12));
    REQUIRE(to.per_core_time.size() == 1);
    CHECK(to.per_core_time.at("ApplyAdamW").in(units::us) ==
          doctest::Approx(expected / 12.0).epsilon(1e-12));  // 0.25 us = 3 us / 12
    CHECK(a.vector.clock != g.vector.clock);  // else the scaling above would prove nothing
    // The vector efficiency the factors were fitted against goes with them (for the ops they
    // scale: params_for, below); everything bound to the chip is back at the defaults.
    CHECK(to.factor_vector_efficiency == 0.55);
    CHECK(to.params == model_params{});
    CHECK(to.runtime.empty());
    // Carried again, the factors keep the efficiency of their first fit, not the defaults'.
    CHECK(profile::transferred(to, g, a).factor_vector_efficiency == 0.55);
    // The same chip: the fixed times unchanged.
    CHECK(profile::transferred(from, a, a).fixed_time.at("LayerNormV3") ==
          from.fixed_time.at("LayerNormV3"));
}

TEST_CASE("params_for: the factors' vector efficiency for the vector ops a factor scales, only") {
    profile::calibration cal;
    cal.work_factor = {{"RmsNorm", 0.99}, {"Add[same,same|fp16;fp16]", 3.0}};
    cal.unseen_heavy_factor = 0.9;
    cal.factor_vector_efficiency = 0.07;
    op vec;
    vec.eng = engine::vector;
    op cube = vec;
    cube.eng = engine::cube;
    const double start = model_params{}.vector_efficiency;
    REQUIRE(start != 0.07);
    CHECK(cal.params_for(vec, "RmsNorm").vector_efficiency == 0.07);  // its own factor
    CHECK(cal.params_for(vec, "Add", "Add[same,same|fp16;fp16]").vector_efficiency == 0.07);
    CHECK(cal.params_for(vec, "Add", "Add[same,same|fp32;fp32]").vector_efficiency == start);
    CHECK(cal.params_for(vec, "Add").vector_efficiency == start);
    CHECK(cal.params_for(vec, "Gelu").vector_efficiency == 0.07);       // heavy: the unseen factor
    CHECK(cal.params_for(vec, "Cast").vector_efficiency == start);      // no factor scales it
    CHECK(cal.params_for(cube, "RmsNorm").vector_efficiency == start);  // applied() skips cube ops
    // Heavy types without a factor of their own take none when the fit had no heavy types.
    cal.unseen_heavy_factor = 1;
    CHECK(cal.params_for(vec, "Gelu").vector_efficiency == start);
    // Not set (every calibration but a transferred one): params' own, whatever the op.
    cal.factor_vector_efficiency = 0;
    cal.params.vector_efficiency = 0.3;
    CHECK(cal.params_for(vec, "RmsNorm").vector_efficiency == 0.3);
    CHECK(cal.params_for(vec, "Cast").vector_efficiency == 0.3);
}

TEST_CASE(
    "transferred to the H200: types without a factor priced as uncalibrated, the rest with "
    "their factors' efficiency") {
    // An A100 calibration of vLLM's kernels as calibrate fits vidur's rows (docs/validation.md,
    // "Across chips": vector efficiency 0.068 against factors near 1), carried to the H200's
    // PyTorch kernels: before params_for, attention and every type without a factor ran at the
    // fitted 0.068 and the FlashAttention rows were predicted up to 6x their time.
    profile::calibration from;
    from.params.vector_efficiency = 0.068;
    from.work_factor = {{"RmsNorm", 0.99}};
    from.unseen_heavy_factor = 0.91;
    const chip& h200 = chips::get_chip("H200");
    const profile::calibration to =
        profile::transferred(from, chips::get_chip("a100-80gb-sxm"), h200);
    profile::calibration as_fitted;  // the H200's defaults, the factors at their efficiency
    as_fitted.params.vector_efficiency = 0.068;
    as_fitted.work_factor = from.work_factor;
    as_fitted.unseen_heavy_factor = from.unseen_heavy_factor;
    const auto rows = profile::read_kernel_details_file(PERFCAST_SOURCE_DIR
                                                        "/tests/data/gpu/h200/h200_kernels.csv")
                          .rows;
    std::size_t uncalibrated = 0, factored = 0, attention_slowed = 0;
    for (const profile::kernel_row& r : rows) {
        const auto t = profile::predict_row(h200, r, to);
        REQUIRE(t);
        const std::string_view type = r.op_type;
        if (type == "RmsNorm" || profile::is_heavy_type(type)) {
            const auto f = profile::predict_row(h200, r, as_fitted);
            REQUIRE(f);
            CHECK(t->predicted == f->predicted);
            ++factored;
        } else {
            const auto u = profile::predict_row(h200, r);
            REQUIRE(u);
            CHECK(t->predicted == u->predicted);
            ++uncalibrated;
            if (type == "FlashAttentionScore" &&
                profile::predict_row(h200, r, as_fitted)->predicted > 2.0 * u->predicted)
                ++attention_slowed;  // what the whole efficiency carried did
        }
    }
    CHECK(factored >= 100);      // RmsNorm, Exp, Gelu, Tanh, Sigmoid, Silu, Softmax, LayerNorm
    CHECK(uncalibrated >= 400);  // GEMMs, attention, Add, Mul, Cast, fills, ...
    CHECK(attention_slowed >= 10);
}

TEST_CASE("validate --transfer-from needs --params and scores without a fit") {
    const std::string qwen3 = PERFCAST_SOURCE_DIR
        "/tests/data/profiles/real/torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
        "kernel_details.csv";
    const auto no_params = perfcast_test::run_command(
        cli::validate_command, {"--chip", "910B3", "--test", qwen3, "--transfer-from", "910B1"});
    CHECK(no_params.status == 2);
    CHECK(no_params.err.find("--transfer-from scores a calibration of another chip") !=
          std::string::npos);
    const perfcast_test::scratch_dir dir("transfer");
    const std::string params = (dir.path / "p.params").string();
    std::ofstream(params) << "work.Gelu = 0.75\n";
    const auto unknown = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B3", "--test", qwen3, "--params", params, "--transfer-from", "NoSuchChip"});
    CHECK(unknown.status != 0);
    CHECK(unknown.err.find("NoSuchChip") != std::string::npos);

    // A file that says its chip: --transfer-from naming another is an error, and applied whole
    // on another chip it is applied with a warning (a file without the key, above, has none).
    std::ofstream(params) << "chip = ascend910b1\nwork.Gelu = 0.75\n";
    const auto wrong_from = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B3", "--test", qwen3, "--params", params, "--transfer-from", "h100"});
    CHECK(wrong_from.status == 2);
    CHECK(wrong_from.err.find("--transfer-from h100: " + params +
                              " was fitted for ascend910b1, not h100-sxm") != std::string::npos);
    const auto whole = perfcast_test::run_command(
        cli::validate_command, {"--chip", "910B3", "--test", qwen3, "--params", params});
    CHECK(whole.status == 0);
    CHECK(whole.err.find("perfcast: warning: " + params +
                         " was fitted for ascend910b1, not ascend910b3; applied whole (its "
                         "heads and efficiencies are that chip's") != std::string::npos);
    const auto carried = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B3", "--test", qwen3, "--params", params, "--transfer-from", "910B1"});
    CHECK(carried.status == 0);
    CHECK(carried.err.find("warning") == std::string::npos);
    const auto same = perfcast_test::run_command(
        cli::validate_command, {"--chip", "910B1", "--test", qwen3, "--params", params});
    CHECK(same.err.find("warning") == std::string::npos);
    // The chip by another of its spellings (an alias, an ini's name) is the same chip.
    std::ofstream(params) << "chip = 910B1\nwork.Gelu = 0.75\n";
    const auto alias = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "ascend910b1", "--test", qwen3, "--params", params, "--transfer-from", "910B1"});
    CHECK(alias.status == 0);
    const auto alias_whole = perfcast_test::run_command(
        cli::validate_command, {"--chip", "ascend910b1", "--test", qwen3, "--params", params});
    CHECK(alias_whole.status == 0);
    CHECK(alias_whole.err.find("was fitted for") == std::string::npos);  // warned by case alone
    CHECK(cli::same_chip_name("Ascend910B1", "ascend910b1"));
    CHECK(cli::same_chip_name("a100", "a100-80gb-sxm"));
    CHECK_FALSE(cli::same_chip_name("910B1", "910B3"));
    CHECK(cli::same_chip_name("My-NPU", "my-npu"));  // no preset: the name, case ignored
    CHECK_FALSE(cli::same_chip_name("My-NPU", "ascend910b1"));
    // transferred() says the chip it is for; calibrate says the chip it fitted.
    profile::calibration from;
    from.chip = "ascend910b1";
    CHECK(profile::transferred(from, chips::ascend910b1, chips::ascend910b3).chip == "ascend910b3");
}

}  // namespace test_transfer
