// chip: validation names the bad field; a chip works in constant expressions and as a template
// argument; peak() is cores x ops/cycle x flops/op x clock.
#include <doctest/doctest.h>

#include <perfcast/chip.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_chip {

namespace {

using namespace perfcast;
using namespace perfcast::literals;

/// A small valid chip, independent of the presets.
constexpr chip sample_chip() {
    chip c{};
    c.name = "sample";
    c.cube.cores = 4;
    c.cube.clock = 1000_MHz;
    c.cube.ops_per_cycle[index_of(dtype::fp16)] = 4096.0;
    c.vector.cores = 8;
    c.vector.clock = 1000_MHz;
    c.vector.ops_per_cycle[index_of(dtype::fp32)] = 64.0;
    c.memory.hbm_size = 16_GiB;
    c.memory.hbm_bandwidth = 1.6_TBps;
    c.memory.l2_size = 32_MiB;
    c.memory.core_read_rate = bytes_per_cycle{32.0, units::B_per_cycle};
    c.memory.core_write_rate = bytes_per_cycle{64.0, units::B_per_cycle};
    c.memory.ub_size = 192_KiB;
    c.alignment = 32_B;
    c.link = {.pcie_gen = 4, .lanes = 16};
    c.overhead.launch = 3_us;
    return c;
}

constexpr chip checked = validate(sample_chip());
static_assert(checked.cube.cores == 4);

// A chip is a structural type: usable as a template argument.
template <chip C>
constexpr flop_rate cube_fp16_peak() {
    return C.peak(engine::cube, dtype::fp16);
}
template <chip C>
struct on_chip {
    static constexpr int cube_cores = C.cube.cores;
};
static_assert(on_chip<sample_chip()>::cube_cores == 4);
static_assert(approx_equal(cube_fp16_peak<sample_chip()>(),
                           flop_rate{4.0 * 4096.0 * 2.0 * 1e9, units::flops}, 1e-12));

/// The message validate() throws for `c`, or "" when it accepts it.
std::string rejection(const chip& c) {
    try {
        (void)validate(c);
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return {};
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

}  // namespace

TEST_CASE("chip: a valid chip passes and compares equal to itself") {
    CHECK(rejection(sample_chip()).empty());
    CHECK(validate(sample_chip()) == sample_chip());
    CHECK(sample_chip().name.view() == "sample");
    chip other = sample_chip();
    other.cube.cores = 5;
    CHECK_FALSE(other == sample_chip());
}

TEST_CASE("chip: validate rejects impossible values, naming the field") {
    SUBCASE("0 cube cores") {
        chip c = sample_chip();
        c.cube.cores = 0;
        const std::string m = rejection(c);
        CHECK(contains(m, "cube.cores"));
        CHECK(contains(m, "validate(chip)"));
        CHECK(contains(m, "= 0"));
    }
    SUBCASE("0 vector cores") {
        chip c = sample_chip();
        c.vector.cores = 0;
        CHECK(contains(rejection(c), "vector.cores"));
    }
    SUBCASE("a factor for the assumed operation counts outside [1/64, 64]") {
        for (const double f : {0.0, 65.0, std::nan("")}) {
            chip c = sample_chip();
            c.cube.uncounted_work = f;
            CHECK(contains(rejection(c), "cube.uncounted_work"));
            c.cube.uncounted_work = 1.0;
            c.vector.uncounted_work = f;
            CHECK(contains(rejection(c), "a factor in [1/64, 64]"));
        }
    }
    SUBCASE("0 clock") {
        chip c = sample_chip();
        c.cube.clock = frequency{};
        CHECK(contains(rejection(c), "cube.clock"));
    }
    SUBCASE("negative bandwidth") {
        chip c = sample_chip();
        c.memory.hbm_bandwidth = bandwidth{-1.0, units::GBps};
        const std::string m = rejection(c);
        CHECK(contains(m, "memory.hbm_bandwidth"));
        CHECK(contains(m, "= -1e+09"));  // the value, in B/s
    }
    SUBCASE("NaN rate") {
        chip c = sample_chip();
        c.vector.ops_per_cycle[index_of(dtype::fp16)] = std::numeric_limits<double>::quiet_NaN();
        const std::string m = rejection(c);
        CHECK(contains(m, "vector.ops_per_cycle"));
        CHECK(contains(m, "NaN"));
    }
    SUBCASE("negative rate") {
        chip c = sample_chip();
        c.cube.ops_per_cycle[index_of(dtype::int8)] = -1.0;
        CHECK(contains(rejection(c), "cube.ops_per_cycle"));
    }
    SUBCASE("PCIe generation 7") {
        chip c = sample_chip();
        c.link.pcie_gen = 7;
        const std::string m = rejection(c);
        CHECK(contains(m, "link.pcie_gen"));
        CHECK(contains(m, "7"));
    }
    SUBCASE("3 PCIe lanes") {
        chip c = sample_chip();
        c.link.lanes = 3;
        CHECK(contains(rejection(c), "link.lanes"));
    }
    SUBCASE("0 alignment") {
        chip c = sample_chip();
        c.alignment = data_size{};
        CHECK(contains(rejection(c), "alignment"));
    }
    SUBCASE("0 HBM size") {
        chip c = sample_chip();
        c.memory.hbm_size = data_size{};
        CHECK(contains(rejection(c), "memory.hbm_size"));
    }
    SUBCASE("negative L1") {
        chip c = sample_chip();
        c.memory.l1_size = data_size{-1.0, units::KiB};
        CHECK(contains(rejection(c), "memory.l1_size"));
    }
    SUBCASE("negative overhead") {
        chip c = sample_chip();
        c.overhead.per_core = duration{-0.1, units::us};
        CHECK(contains(rejection(c), "overhead.per_core"));
        chip v = sample_chip();
        v.overhead.vector_launch = duration{-1.0, units::us};
        CHECK(contains(rejection(v), "overhead.vector_launch"));
        v = sample_chip();
        v.overhead.vector_per_core = duration{2e9, units::us};
        CHECK(contains(rejection(v), "overhead.vector_per_core"));
    }
    SUBCASE("AI CPU cores may be 0, but not negative") {
        chip c = sample_chip();
        CHECK(rejection(c).empty());
        c.aicpu.cores = -1;
        CHECK(contains(rejection(c), "aicpu.cores"));
    }
}

TEST_CASE("chip: peak and engine_of") {
    const chip c = sample_chip();
    CHECK(c.peak(engine::cube, dtype::fp16).in(units::TFLOPS) == doctest::Approx(32.768));
    // Vector: one op is one flop: 8 cores x 64 x 1 GHz.
    CHECK(c.peak(engine::vector, dtype::fp32).in(units::GFLOPS) == doctest::Approx(512.0));
    CHECK(c.peak(engine::cube, dtype::int64).in(units::flops) == 0.0);  // no path
    CHECK(&c.engine_of(engine::vector) == &c.vector);
    CHECK(name_of(engine::aicpu) == "aicpu");
}

}  // namespace test_chip
