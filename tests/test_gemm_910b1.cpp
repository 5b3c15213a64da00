// The uncalibrated model against the real GEMMs of a 910B1 training profile (issue 3).
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/profile/validate.hpp>

#include <string>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_gemm_910b1 {

using namespace perfcast;

namespace {
const std::string profile_910b1 =
    std::string(PERFCAST_SOURCE_DIR) + "/tests/data/profiles/kernel_details_910B1_train.csv";
}

TEST_CASE("profile rows map to GEMMs: MatMul is A[M,K] x B[N,K]^T in this file") {
    const auto table = profile::read_kernel_details_file(profile_910b1);
    int gemms = 0;
    for (const auto& r : table.rows) {
        if (!profile::is_gemm_type(r.op_type)) continue;
        ++gemms;
        const auto g = profile::gemm_of(r);
        REQUIRE(g.has_value());
        if (r.op_type == "MatMul") {
            // e.g. 4096,12288;4608,12288 -> 4096,4608: M = 4096, K = 12288, N = 4608
            CHECK(g->m == r.input_shapes[0].dims[0]);
            CHECK(g->k == r.input_shapes[0].dims[1]);
            CHECK(g->n == r.input_shapes[1].dims[0]);
        } else {
            CHECK(g->batch == r.output_shapes[0].dims[0]);
        }
    }
    CHECK(gemms == 13);
}

TEST_CASE("uncalibrated 910B1 preset predicts each of the 13 real GEMMs within 30 %") {
    // Tolerance 30 % per row is the acceptance bound for an uncalibrated model.
    const auto table = profile::read_kernel_details_file(profile_910b1);
    const auto rep = profile::score_rows(
        chips::ascend910b1, table.rows, profile::calibration{},
        [](const profile::kernel_row& r) { return profile::is_gemm_type(r.op_type); });
    CHECK(rep.skipped == 0);
    REQUIRE(rep.rows.size() == 13);
    for (const auto& p : rep.rows) {
        INFO(p.name << " line " << p.line << ": predicted " << p.predicted.in(units::us)
                    << " us, measured " << p.measured.in(units::us) << " us");
        CHECK(p.cores == 24);  // block dim 24 in the file
        CHECK(p.ape < 0.30);
    }
    CHECK(rep.overall.rows == 13);
    CHECK(rep.overall.max_ape < 0.30);
}

TEST_CASE("the 910B3 fixture's MatMul shapes contradict their outputs and are not predicted") {
    const auto table = profile::read_kernel_details_file(
        std::string(PERFCAST_SOURCE_DIR) + "/tests/data/profiles/kernel_details_910B3_matmul.csv");
    int matmuls = 0;
    for (const auto& r : table.rows) {
        if (!profile::is_gemm_type(r.op_type)) continue;
        ++matmuls;
        CHECK_FALSE(profile::gemm_of(r).has_value());
        CHECK_FALSE(profile::op_of(r).has_value());
    }
    CHECK(matmuls > 0);
}

TEST_CASE("quantile and error statistics") {
    CHECK(profile::quantile({1.0, 2.0, 3.0, 4.0, 5.0}, 0.5) == 3.0);
    CHECK(profile::quantile({0.0, 10.0}, 0.9) == doctest::Approx(9.0));
    const auto s = profile::stats_of({0.1, 0.2, 0.3});
    CHECK(s.mape == doctest::Approx(0.2));
    CHECK(s.median_ape == doctest::Approx(0.2));
    CHECK(s.max_ape == doctest::Approx(0.3));
    CHECK_THROWS_AS((void)profile::quantile({}, 0.5), perfcast::error);
}

}  // namespace test_gemm_910b1
