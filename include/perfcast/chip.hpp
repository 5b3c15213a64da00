// perfcast/chip.hpp: what the model knows about an accelerator.
//
// A plain aggregate with public members: usable in constant expressions and as a template
// argument (`template <perfcast::chip C>`). Every preset in chips/ cites where each number comes
// from; `validate` rejects impossible chips, naming the field.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "dtype.hpp"
#include "enum_table.hpp"
#include "error.hpp"
#include "units.hpp"

namespace perfcast {

enum class engine : unsigned char { cube, vector, aicpu };

inline constexpr std::array<enum_entry<engine>, 3> engine_names{
    {{engine::cube, "cube"}, {engine::vector, "vector"}, {engine::aicpu, "aicpu"}}};
static_assert(covers_enum<engine_names>());

[[nodiscard]] constexpr std::string_view name_of(engine e) noexcept {
    return name_in(engine_names, e);
}

/// A short fixed-capacity name, structural so that a chip can be a template argument.
struct fixed_name {
    std::array<char, 32> text{};
    constexpr fixed_name() noexcept = default;
    constexpr explicit fixed_name(std::string_view s) noexcept {
        for (std::size_t i = 0; i < s.size() && i + 1 < text.size(); ++i) text[i] = s[i];
    }
    template <std::size_t N>
    constexpr fixed_name(const char (&s)[N]) noexcept  // NOLINT: implicit from a literal
        : fixed_name(std::string_view(s, N - 1)) {
        static_assert(N <= 32, "perfcast::fixed_name: names are at most 31 characters");
    }
    [[nodiscard]] constexpr std::string_view view() const noexcept {
        std::size_t n = 0;
        while (n < text.size() && text[n] != '\0') ++n;
        return {text.data(), n};
    }
    [[nodiscard]] friend constexpr bool operator==(const fixed_name&, const fixed_name&) = default;
};

/// Per-core throughput of one engine, per dtype: operations per cycle per core. For the cube
/// engine one operation is one multiply-accumulate (2 flops); for the vector engine one element
/// operation (1 flop). 0 means "the engine has no path for this dtype".
using rate_table = std::array<double, dtype_count>;

struct engine_spec {
    int cores = 0;
    frequency clock{};       // clock of this engine's cores
    rate_table ops_per_cycle{};  // per core, by dtype

    [[nodiscard]] friend constexpr bool operator==(const engine_spec&, const engine_spec&) = default;

    [[nodiscard]] constexpr double ops_per_cycle_for(dtype t) const noexcept {
        return ops_per_cycle[index_of(t)];
    }
};

/// Memory hierarchy. Per-core rates are bytes per cycle per core, as the CANN platform_config
/// [AICoreMemoryRates] section lists them (our reading of that unit; no primary source states
/// it, see docs/model.md).
struct memory_spec {
    data_size hbm_size{};
    bandwidth hbm_bandwidth{};
    data_size l2_size{};
    bytes_per_cycle core_read_rate{};   // ddr_read_rate: global memory -> core
    bytes_per_cycle core_write_rate{};  // ub_to_ddr_rate: core -> global memory
    bytes_per_cycle l2_read_rate{};     // l2_read_rate
    data_size ub_size{};
    data_size l1_size{};
    data_size l0a_size{};
    data_size l0b_size{};
    data_size l0c_size{};

    [[nodiscard]] friend constexpr bool operator==(const memory_spec&, const memory_spec&) = default;
};

/// Host link (PCIe). Generation 1..6 and lane count; the model of rates lives in link.hpp.
struct host_link_spec {
    int pcie_gen = 0;
    int lanes = 0;

    [[nodiscard]] friend constexpr bool operator==(const host_link_spec&, const host_link_spec&) = default;
};

/// Fixed costs. All are assumptions to calibrate against a profile (see docs/model.md).
struct overhead_spec {
    duration launch{};         // t0: per-op head cost independent of core count
    duration per_core{};       // t1: added head cost per core used (guide §12)
    duration host_dispatch{};  // host time to launch one op when the graph is not sunk (guide §3)
    duration aicpu_launch{};   // fixed cost of an AI CPU op

    [[nodiscard]] friend constexpr bool operator==(const overhead_spec&, const overhead_spec&) = default;
};

struct chip {
    fixed_name name{};
    engine_spec cube{};
    engine_spec vector{};
    engine_spec aicpu{};
    memory_spec memory{};
    data_size alignment{};  // contiguous-move alignment unit (32 B on Ascend: ubblock_size)
    host_link_spec link{};
    overhead_spec overhead{};

    [[nodiscard]] constexpr const engine_spec& engine_of(engine e) const noexcept {
        switch (e) {
            case engine::cube: return cube;
            case engine::vector: return vector;
            case engine::aicpu: return aicpu;
        }
        return cube;
    }

    /// Peak rate of one engine for a dtype, all cores: cores x ops/cycle x clock x flops/op.
    [[nodiscard]] constexpr flop_rate peak(engine e, dtype t) const noexcept {
        const engine_spec& s = engine_of(e);
        const double flops_per_op = e == engine::cube ? 2.0 : 1.0;
        return flop_rate{static_cast<double>(s.cores) * s.ops_per_cycle_for(t) * flops_per_op *
                             s.clock.in(units::Hz),
                         units::flops};
    }

    [[nodiscard]] friend constexpr bool operator==(const chip&, const chip&) = default;
};

namespace detail {
constexpr void expect_positive(double v, std::string_view where, std::string_view field) {
    PERFCAST_EXPECTS(v > 0 && v <= 1.7976931348623157e308, where, field, v,
                     "a finite value > 0");
}
constexpr void expect_non_negative(double v, std::string_view where, std::string_view field) {
    PERFCAST_EXPECTS(v >= 0 && v <= 1.7976931348623157e308, where, field, v,
                     "a finite value >= 0");
}
/// Most cores one engine may have (see validate_engine).
inline constexpr int max_cores = 65536;
constexpr void validate_engine(const engine_spec& e, std::string_view field_cores,
                               std::string_view field_clock, std::string_view field_rate,
                               bool required) {
    if (required) {
        PERFCAST_EXPECTS(e.cores > 0, "validate(chip)", field_cores,
                         static_cast<double>(e.cores), "at least 1 core");
    } else {
        PERFCAST_EXPECTS(e.cores >= 0, "validate(chip)", field_cores,
                         static_cast<double>(e.cores), "0 or more cores");
    }
    // 65536: two orders of magnitude above the largest chip described (H100/H200: 132 SMs);
    // a bound that keeps per-core tables (whatif's node_eval_table) allocatable.
    PERFCAST_EXPECTS(e.cores <= max_cores, "validate(chip)", field_cores,
                     static_cast<double>(e.cores), "at most 65536 cores");
    if (e.cores > 0) {
        // 1 MHz .. 10 GHz: every accelerator clock sits well inside (Ascend 910B 1.8 GHz,
        // H200 1.98 GHz); outside it is a unit mistake (MHz given as Hz or GHz as MHz).
        const double hz = e.clock.in(units::Hz);
        PERFCAST_EXPECTS(hz >= 1e6 && hz <= 1e10, "validate(chip)", field_clock, hz,
                         "a clock between 1 MHz and 10 GHz (in Hz: 1e6 .. 1e10)");
    }
    for (double r : e.ops_per_cycle) expect_non_negative(r, "validate(chip)", field_rate);
}
}  // namespace detail

/// Rejects impossible chips: 0 cube or vector cores, 0 clock, negative or NaN rates and sizes.
/// Returns the chip so that `constexpr chip c = validate(chip{...});` checks at compile time.
constexpr const chip& validate(const chip& c) {
    constexpr std::string_view where = "validate(chip)";
    detail::validate_engine(c.cube, "cube.cores", "cube.clock", "cube.ops_per_cycle", true);
    detail::validate_engine(c.vector, "vector.cores", "vector.clock", "vector.ops_per_cycle",
                            true);
    detail::validate_engine(c.aicpu, "aicpu.cores", "aicpu.clock", "aicpu.ops_per_cycle", false);
    detail::expect_positive(c.memory.hbm_size.in(units::B), where, "memory.hbm_size");
    detail::expect_positive(c.memory.hbm_bandwidth.in(units::Bps), where,
                            "memory.hbm_bandwidth");
    detail::expect_non_negative(c.memory.l2_size.in(units::B), where, "memory.l2_size");
    detail::expect_positive(c.memory.core_read_rate.in(units::B_per_cycle), where,
                            "memory.core_read_rate");
    detail::expect_positive(c.memory.core_write_rate.in(units::B_per_cycle), where,
                            "memory.core_write_rate");
    detail::expect_non_negative(c.memory.l2_read_rate.in(units::B_per_cycle), where,
                                "memory.l2_read_rate");
    detail::expect_non_negative(c.memory.ub_size.in(units::B), where, "memory.ub_size");
    detail::expect_non_negative(c.memory.l1_size.in(units::B), where, "memory.l1_size");
    detail::expect_non_negative(c.memory.l0a_size.in(units::B), where, "memory.l0a_size");
    detail::expect_non_negative(c.memory.l0b_size.in(units::B), where, "memory.l0b_size");
    detail::expect_non_negative(c.memory.l0c_size.in(units::B), where, "memory.l0c_size");
    detail::expect_positive(c.alignment.in(units::B), where, "alignment");
    PERFCAST_EXPECTS(c.link.pcie_gen >= 1 && c.link.pcie_gen <= 6, where, "link.pcie_gen",
                     static_cast<double>(c.link.pcie_gen), "a PCIe generation 1..6");
    PERFCAST_EXPECTS(c.link.lanes == 1 || c.link.lanes == 2 || c.link.lanes == 4 ||
                         c.link.lanes == 8 || c.link.lanes == 16,
                     where, "link.lanes", static_cast<double>(c.link.lanes),
                     "1, 2, 4, 8 or 16 lanes");
    detail::expect_non_negative(c.overhead.launch.in(units::us), where, "overhead.launch");
    detail::expect_non_negative(c.overhead.per_core.in(units::us), where, "overhead.per_core");
    detail::expect_non_negative(c.overhead.host_dispatch.in(units::us), where,
                                "overhead.host_dispatch");
    detail::expect_non_negative(c.overhead.aicpu_launch.in(units::us), where,
                                "overhead.aicpu_launch");
    return c;
}

}  // namespace perfcast
