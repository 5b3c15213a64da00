// profile/transfer.hpp: a calibration carried to another chip keeps what belongs to the kernels'
// code and leaves what belongs to the chip at the defaults; validate --transfer-from scores it.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/transfer.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <fstream>
#include <string>

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
    // The vector efficiency the factors were fitted against goes with them; everything bound to
    // the chip is back at the defaults.
    CHECK(to.params.vector_efficiency == 0.55);
    model_params defaults;
    defaults.vector_efficiency = 0.55;
    CHECK(to.params == defaults);
    CHECK(to.runtime.empty());
    // The same chip: the fixed times unchanged.
    CHECK(profile::transferred(from, a, a).fixed_time.at("LayerNormV3") ==
          from.fixed_time.at("LayerNormV3"));
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
}
