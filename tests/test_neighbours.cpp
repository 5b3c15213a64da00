// profile/neighbours.hpp: near-measurement interpolation on known answers. The references are
// real rows of the shipped 910B1 profile (one vector op type at three sizes) whose measured
// times are set by the test, so the answer is known in closed form.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/profile/neighbours.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_neighbours {

using namespace perfcast;

namespace {

const std::string profile_910b1 =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";

double model_us(const chip& c, const profile::kernel_row& r) {
    const auto p = profile::predict_row(c, r);
    REQUIRE(p.has_value());
    return p->predicted.in(units::us);
}

/// The profile's rows of `type` on the vector cores with fp32 inputs, one per distinct model
/// time, sorted by model time.
std::vector<profile::kernel_row> rows_of(const chip& c, const std::vector<profile::kernel_row>& all,
                                         const std::string& type) {
    std::vector<profile::kernel_row> out;
    for (const auto& r : all) {
        if (r.op_type != type || r.task_text != "AI_VECTOR_CORE" || r.input_types.empty() ||
            r.input_types.front().text != "FLOAT")
            continue;
        if (!profile::predict_row(c, r)) continue;
        const double m = model_us(c, r);
        const bool seen =
            std::any_of(out.begin(), out.end(), [&](const auto& x) { return model_us(c, x) == m; });
        if (!seen) out.push_back(r);
    }
    std::sort(out.begin(), out.end(),
              [&](const auto& a, const auto& b) { return model_us(c, a) < model_us(c, b); });
    return out;
}

void set_measured(profile::kernel_row& r, double us) { r.task_duration = duration{us, units::us}; }

}  // namespace

TEST_CASE("near-measurement interpolation: known answers") {
    const chip& c = chips::ascend910b1;
    const auto all = profile::read_kernel_details_file(profile_910b1).rows;
    // Three rows of one type whose model times are within 4x of each other, so that the middle
    // one has a neighbour on each side (found in the profile, not assumed: the test fails if
    // none of these types has them).
    std::vector<profile::kernel_row> adds;
    std::size_t i = 0;
    bool found = false;
    for (const char* type : {"Add", "Mul", "Cast", "ReduceSumD", "StridedSliceD", "Square"}) {
        adds = rows_of(c, all, type);
        for (i = 0; i + 2 < adds.size() && !found; ++i) {
            const double lo = model_us(c, adds[i]), hi = model_us(c, adds[i + 2]);
            found = hi / lo < profile::default_near_window;
        }
        if (found) {
            --i;
            break;
        }
    }
    REQUIRE(found);
    CAPTURE(adds[i].op_type);
    auto below = adds[i];
    const auto query = adds[i + 1];
    auto above = adds[i + 2];
    const double m_lo = model_us(c, below), m_q = model_us(c, query), m_hi = model_us(c, above);
    // The references measured at 2x and 8x their model times.
    set_measured(below, 2 * m_lo);
    set_measured(above, 8 * m_hi);

    SUBCASE("between two neighbours: the ratio interpolated in log model time") {
        const profile::measured_neighbours near(c, {below, above}, {});
        CHECK(near.size() == 2);
        const auto e = near.estimate(query, duration{m_q, units::us});
        CHECK(e.source == profile::estimate_source::two_neighbours);
        // log ratio from log 2 to log 8 as log m goes from m_lo to m_hi: 2 x 4^t.
        const double t = std::log(m_q / m_lo) / std::log(m_hi / m_lo);
        const double expected = m_q * 2 * std::pow(4.0, t);
        // Tolerance: the same closed form reached by another order of operations, 1e-12.
        CHECK(e.predicted.in(units::us) == doctest::Approx(expected).epsilon(1e-12));
    }
    SUBCASE("one neighbour: its ratio; a measured shape: its measurement") {
        const profile::measured_neighbours near(c, {above}, {});
        const auto e = near.estimate(query, duration{m_q, units::us});
        CHECK(e.source == profile::estimate_source::one_neighbour);
        CHECK(e.predicted.in(units::us) == doctest::Approx(8 * m_q).epsilon(1e-12));
        const auto same = near.estimate(above, duration{m_hi, units::us});
        CHECK(same.predicted.in(units::us) == doctest::Approx(8 * m_hi).epsilon(1e-12));
        // The same shape measured twice, at 2x and 8x: their geometric mean, 4x.
        auto again = above;
        set_measured(again, 2 * m_hi);
        const profile::measured_neighbours twice(c, {above, again}, {});
        CHECK(twice.estimate(above, duration{m_hi, units::us}).predicted.in(units::us) ==
              doctest::Approx(4 * m_hi).epsilon(1e-12));
    }
    SUBCASE("outside the window, or another key: the model") {
        // A window just below the distance to the nearer neighbour leaves none.
        const double nearest = std::min(m_q / m_lo, m_hi / m_q);
        const profile::measured_neighbours narrow(c, {below, above}, {}, nearest * 0.999);
        const auto e = narrow.estimate(query, duration{m_q, units::us});
        CHECK(e.source == profile::estimate_source::model);
        CHECK(e.predicted.in(units::us) == m_q);
        // Another op type is not a neighbour, whatever its size.
        auto other = query;
        other.op_type = "NotAnOpType";
        const profile::measured_neighbours near(c, {below, above}, {});
        CHECK(near.estimate(other, duration{m_q, units::us}).source ==
              profile::estimate_source::model);
        CHECK_THROWS_AS(profile::measured_neighbours(c, {below}, {}, 0.5), perfcast::error);
    }
    SUBCASE("validate's predictions say where they came from") {
        const profile::measured_neighbours near(c, {below, above}, {});
        const auto rep = profile::score_rows(c, {query}, {}, profile::all_rows, &near);
        REQUIRE(rep.rows.size() == 1);
        CHECK(rep.rows[0].source == profile::estimate_source::two_neighbours);
        const auto plain = profile::score_rows(c, {query}, {});
        CHECK(plain.rows[0].source == profile::estimate_source::model);
        CHECK(plain.rows[0].predicted.in(units::us) == doctest::Approx(m_q).epsilon(1e-12));
    }
}

TEST_CASE("validate --interpolate: the report says which rows came from neighbours") {
    const std::string real = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";
    const std::string rank0 =
        real + "torchnpu_2023_cann70_rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const std::string rank1 =
        real + "torchnpu_2023_cann70_rank1/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const auto run = perfcast_test::run_command(
        cli::validate_command, {"--chip", "910B1", "--fit", rank0, "--test", rank1, "--interpolate",
                                "--worst", "0", "--format", "json"});
    REQUIRE(run.status == 0);
    // Rows measured in the other rank at the same shapes come from them; the rest from the model.
    const std::string& j = run.out;
    const double near_rows = perfcast_test::json_number(j, "rows", j.find("\"from_neighbours\""));
    const double model_rows = perfcast_test::json_number(j, "rows", j.find("\"from_model\""));
    const double rows = perfcast_test::json_number(j, "rows");
    CHECK(near_rows >= 1);
    CHECK(near_rows + model_rows == rows);
    CHECK(j.find("\"source\": \"model\"") != std::string::npos);
    CHECK(j.find("\"source\": \"1 neighbour\"") != std::string::npos);
    // Without rows to interpolate from, or a window without --interpolate: usage errors.
    const auto alone = perfcast_test::run_command(
        cli::validate_command, {"--chip", "910B1", "--test", rank1, "--interpolate"});
    CHECK(alone.status == 2);
    CHECK(alone.err.find("--interpolate needs measured rows") != std::string::npos);
    const auto window = perfcast_test::run_command(
        cli::validate_command,
        {"--chip", "910B1", "--fit", rank0, "--test", rank1, "--near-window", "2"});
    CHECK(window.status == 2);
    const auto small = perfcast_test::run_command(
        cli::validate_command, {"--chip", "910B1", "--fit", rank0, "--test", rank1, "--interpolate",
                                "--near-window", "0.5"});
    CHECK(small.status == 2);
    CHECK(small.err.find("expected a factor >= 1") != std::string::npos);
}

}  // namespace test_neighbours
