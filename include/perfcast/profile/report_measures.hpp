// perfcast/profile/report_measures.hpp: what the report computes from one row alone: bytes
// moved (fills by their output: write_only_types), the innermost extent of a tensor, cube
// utilization recomputed for the chip, the engine a block dim counts on, the pipes that bound
// the op, and the notes the report writes beside them.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../dtype.hpp"
#include "../units.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// Op types that write their output and read no data: what the profiler lists as their inputs is
/// a shape, a value or a seed, not a tensor the kernel reads, so their traffic is their output
/// bytes alone (counting the inputs showed ZerosLike at 233 % of HBM on a real 910B profile,
/// docs/profiles.md). Each type is one seen in the profiles under tests/data/profiles/.
struct write_only_type {
    std::string_view type;    // OP Type / Type, as written
    std::string_view inputs;  // what its listed inputs are
};

inline constexpr std::array<write_only_type, 8> write_only_types{{
    {"ZerosLike", "a tensor used for its shape and dtype only"},
    {"OnesLike", "a tensor used for its shape and dtype only"},
    {"Fill", "the output dims and the fill value"},
    {"MemSet", "none listed (clears a workspace)"},
    {"Range", "start, limit and delta scalars"},
    {"DSAGenBitMask", "shape, seed and keep probability (a dropout mask)"},
    {"DSAStatelessGenBitMask", "shape, seed and keep probability (a dropout mask)"},
    {"DSARandomNormal", "shape, seed, mean and standard deviation"},
}};

[[nodiscard]] constexpr bool is_write_only_type(std::string_view type) noexcept {
    return std::any_of(write_only_types.begin(), write_only_types.end(),
                       [type](const write_only_type& w) { return w.type == type; });
}

/// The least byte count that is "too large": 2^63, past the 2^63 - 1 bound of shape products
/// and byte counts (docs/profiles.md, "Valid ranges of physical inputs").
inline constexpr double too_large_bytes = 0x1p63;

namespace detail {
[[nodiscard]] inline std::optional<data_size> bytes_once(const kernel_row& r) {
    return is_write_only_type(r.op_type) ? r.output_bytes() : r.bytes_moved();
}
}  // namespace detail

/// Whether the bytes an op moves once (bytes_moved_once) are too large (too_large_bytes or
/// more): a damaged row, whose rate would be a bandwidth of 5e15 GB/s.
[[nodiscard]] inline bool bytes_too_large(const kernel_row& r) {
    const auto b = detail::bytes_once(r);
    return b && !(b->in(units::B) < too_large_bytes);
}

/// The bytes an op moves once: its inputs and outputs, or for a write-only type its outputs
/// alone; nothing when a shape or dtype it needs is unknown, or when they are too large
/// (bytes_too_large: the row feeds no bandwidth, and its note says so).
[[nodiscard]] inline std::optional<data_size> bytes_moved_once(const kernel_row& r) {
    if (bytes_too_large(r)) return std::nullopt;
    return detail::bytes_once(r);
}

/// The innermost dimension larger than 1 (1 when there is none). Row-major strides come from the
/// dimensions to the right; a dimension of size 1 has no extent and changes no stride, so a
/// tensor is the same memory without it: [400,1] is [400], [4096,1,16,1] is [4096,16]. The
/// dimension that is then innermost is the run an op moves per row (cost.hpp's `inner`).
[[nodiscard]] inline std::int64_t innermost_extent(const tensor_shape& s) noexcept {
    for (auto it = s.dims.rbegin(); it != s.dims.rend(); ++it)
        if (*it != 1) return *it;
    return 1;
}

/// The shortest task time a rate (utilization, bandwidth) is computed over: 1 ns, the
/// profilers' resolution (msprof and torch_npu print microseconds with three decimals). A
/// shorter time is a rounding artefact, and dividing by it printed "inf GB/s" (issue 16).
inline constexpr duration min_rate_time{1.0, units::ns};

/// msprof's cube_utilization(%) recomputed for `c`: aic_total_cycles / (cube clock x cube cores x
/// duration) x 100. Nothing when the row has no cycles or a duration under min_rate_time.
[[nodiscard]] inline std::optional<double> recomputed_cube_utilization_pct(const kernel_row& r,
                                                                           const chip& c) {
    if (!r.aic_total_cycles || !r.task_duration || *r.task_duration < min_rate_time) {
        return std::nullopt;
    }
    const cycle_count avail =
        available_cycles(c.cube.clock, core_count{c.cube.cores}, *r.task_duration);
    return *r.aic_total_cycles / avail * 100.0;
}

/// The engine whose cores a row's Block Dim counts: cube for AI_CORE and MIX_AIC, vector for
/// AI_VECTOR_CORE and MIX_AIV; nothing for other tasks.
[[nodiscard]] constexpr std::optional<engine> block_dim_engine(task_type t) noexcept {
    if (!runs_on_ai_cores(t)) return std::nullopt;
    return engine_of(t);
}

namespace detail {

/// "0.964": 3 decimals, no locale.
inline std::string fixed3(double v) {
    std::array<char, 64> buf{};
    const auto [end, ec] =
        std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, 3);
    return ec == std::errc{} ? std::string(buf.data(), end) : std::string("?");
}

[[nodiscard]] inline bool aligned_format(std::string_view f) noexcept {
    // Fractal (NZ) and C0 formats are already padded to the cube fractal: their innermost
    // dimension as listed is not the innermost run in memory.
    return f.find("FRACTAL") == std::string_view::npos && f.find("C0") == std::string_view::npos;
}

}  // namespace detail

/// Pipes of a row above `threshold`, largest first: "mte2 0.964, mac 0.824", or "-".
[[nodiscard]] inline std::string bound_pipes(const kernel_row& r, double threshold) {
    std::vector<std::pair<double, std::string_view>> over;
    const auto add = [&](const std::optional<double>& v, std::string_view n) {
        if (v && *v > threshold) over.emplace_back(*v, n);
    };
    add(r.aic_mte2_ratio, "aic_mte2");
    add(r.aiv_mte2_ratio, "aiv_mte2");
    add(r.aiv_mte3_ratio, "aiv_mte3");
    add(r.aic_mac_ratio, "aic_mac");
    add(r.aiv_vec_ratio, "aiv_vec");
    add(r.aic_scalar_ratio, "aic_scalar");
    add(r.aiv_scalar_ratio, "aiv_scalar");
    add(r.aic_mte1_ratio, "aic_mte1");
    add(r.aic_fixpipe_ratio, "aic_fixpipe");
    if (over.empty()) return "-";
    std::stable_sort(over.begin(), over.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out;
    for (const auto& [v, n] : over) {
        if (!out.empty()) out += ", ";
        out += n;
        out += ' ';
        out += detail::fixed3(v);
    }
    return out;
}

/// The note of an op whose bytes are too large (bytes_too_large): no bandwidth is computed.
inline constexpr std::string_view too_large_bytes_note =
    "bytes of 2^63 or more (too large): no bandwidth computed";
/// The note of an op faster than the chip's HBM bandwidth (table, csv and json).
inline constexpr std::string_view above_hbm_note = "above HBM peak: L2 or cache";
/// The note of a GEMM faster than the chip's cube peak: no cache explains that.
inline constexpr std::string_view above_compute_note =
    "above the chip's peak FLOP/s: another chip or clock, or shapes that are not the kernel's "
    "(check --chip)";
/// The note of a utilization above 100 % over a span that holds every task: more cycles than the
/// chip's cores x clock can give.
inline constexpr std::string_view chip_mismatch_note =
    "above 100 %: more cycles than this chip's cores x clock give; the profile is from a chip "
    "with more cores or a higher clock (check --chip)";

}  // namespace perfcast::profile
