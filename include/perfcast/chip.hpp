// perfcast/chip.hpp: what the model knows about an accelerator.
//
// A plain aggregate with public members: usable in constant expressions and as a template
// argument (`template <perfcast::chip C>`). Every preset in chips/ cites where each number comes
// from; `validate` rejects impossible chips, naming the field.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

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
    /// The dtype this engine's arithmetic on bf16 data runs in: bf16 itself (a GPU's half2
    /// bf16), or fp32 on a core whose only bf16 instructions are conversions (every Ascend
    /// vector unit that takes bf16: chips/ascend.hpp). Then a bf16 op runs at the fp32 rate and
    /// converts every bf16 element it reads or writes (cost.hpp, detail::converted_ops). Read
    /// for the vector engine only (cube and AI CPU ops are priced in their own dtype).
    dtype bf16_computed_as = dtype::bf16;
    /// The dtype this engine's arithmetic on FP8 data (either format) runs in; an FP8 format
    /// (the default): FP8 itself, at the rate table's entry for the data's format (0 on the
    /// Ascend presets, which take no FP8: an FP8 op's arithmetic is refused). The GPU presets set
    /// fp32 (chips::gpu_fp8_computed_as: CUDA cores convert FP8, they have no arithmetic for
    /// it), and their FP8 entries price moves only. As for bf16, each FP8 element read or written
    /// is converted (cost.hpp, detail::converted_ops). Read for the vector engine only. (A dtype,
    /// not an optional: a chip is a structural type, usable as a template argument.)
    dtype fp8_computed_as = dtype::fp8_e4m3;
    /// Whether this engine's kernel library widens 16-bit data where a kernel's source says so
    /// (op::fp32_arithmetic, set by the profile mapping from CANN kernels' sources): true on the
    /// Ascend presets (CANN), false on the GPU presets, whose shipped measurements (vidur's vLLM
    /// kernels) are priced in their own dtype, as before the flag existed (an assumption: vLLM's
    /// norm and activation kernels compute in float too, not modelled; docs/model.md).
    bool widens_marked_kernels = false;
    /// Work of this engine's kernels whose operation count perfcast assumes rather than counts
    /// (op::uncounted: the transcendental, norm, softmax and optimizer types of the profile
    /// mapping's traits table, profile/ops.hpp is_heavy_type), over that assumed count: 1 keeps
    /// the count. The Ascend presets' vector engines take a value fitted on shipped profiles
    /// (chips::ascend_uncounted_work); the GPU presets keep 1 (the A100's three such types fitted
    /// 0.85-1.28). Calibration's work factors of those types are relative to it.
    double uncounted_work = 1.0;
    /// Share of this engine's rate left to a GEMM whose rows are not 16-byte aligned
    /// (op::row_align: the bytes of a K row and an N row), for which the library cannot use its
    /// fastest kernels: `narrow_rows_4` for rows aligned to 4 or 8 bytes, `narrow_rows_2` to 1 or 2
    /// bytes. 1: no such fall-back, on every preset but the Hopper ones (measured on an H200:
    /// chips/nvidia.hpp). Read for the cube engine, for GEMMs of 1- and 2-byte dtypes on the path
    /// of tiled or split GEMMs (cost.hpp detail::narrowed): a chip with shares needs `cube_tiles`.
    double narrow_rows_4 = 1.0;
    double narrow_rows_2 = 1.0;
    /// Share of this engine's rate the library's fused attention keeps (op_kind::attention: its
    /// GEMMs and softmax together, cost.hpp): 1 on every preset but the Ampere ones, whose value
    /// is fitted on FlashAttention-2's paged split-KV kernel (chips/nvidia.hpp). Read for the
    /// cube engine.
    double attention_share = 1.0;
    /// Share of that rate a fused attention keeps when its work units (after the split over
    /// its keys) do not outnumber the cores it may use, so that no core holds more than one:
    /// 1 (no such loss) on every preset but the Ampere ones, whose value is fitted on
    /// FlashAttention-2's paged kernels (chips/nvidia.hpp). Of the engine's full rate in
    /// FlashInfer's layout, which attention_share does not touch. Read for the cube engine.
    double attention_unfilled_share = 1.0;
    /// Elements per cycle per core of this engine's kernels that walk their elements by index
    /// (op::walk, element_walk::indexed: an operand broadcast along an axis, a widening cast) and
    /// of its transposing copies (element_walk::transposed), and the fixed time such a kernel
    /// adds to the head (its offset set-up): the body is at least the busiest core's elements at
    /// that rate (cost.hpp). 0 (and no time): the library streams them like any other op, as
    /// on the Ascend presets (the GPU presets' rates were measured on an H200: chips/nvidia.hpp).
    /// Read for the vector engine.
    double walk_rate = 0;
    double transpose_rate = 0;
    duration walk_head{};
    /// Elements per cycle per core of this engine's library softmax (op_kind::softmax) on the
    /// blocks it launches (softmax_launch_of, cost.hpp): `softmax_warp_rate` where a warp holds
    /// a whole row (rows of up to 2048 elements and 8 KiB), `softmax_block_rate` where a block of
    /// up to 1024 threads reduces one row. The body is at least the busiest core's elements at
    /// that rate. 0: a softmax is priced by its assumed operations on the factory's units (the
    /// Ascend presets; the GPU presets' rates were measured on an H200: chips/nvidia.hpp).
    /// Read for the vector engine, on a chip whose cores keep threads (overhead.core_threads).
    double softmax_warp_rate = 0;
    double softmax_block_rate = 0;
    /// Operations per cycle per core at which this engine runs a fused attention's vector part
    /// (op::vector_ops: its softmax's operations per kept score, forward or backward, cost.hpp
    /// detail::vector_part_time). 0: the engine's fp32 rate, as on every preset but the Ampere
    /// ones, whose attention kernels' softmax is taken at the A100's 64 lanes an SM on the A40
    /// too, where only the FMA path doubled (chips::ampere_attention_softmax_rate). Read for the
    /// vector engine.
    double attention_softmax_rate = 0;
    /// Elements per cycle per core of a gather by PyTorch's index_select kernels before its 2.7
    /// release (op::walk = element_walk::selected: profile rows of types
    /// `*indexSelectLargeIndex*`, `*indexSelectSmallIndex*`): the
    /// body is at least the busiest core's elements at that rate, on the blocks the kernel
    /// launches (cost.hpp detail::index_select_blocks). 0: such a gather streams its rows as
    /// any other (the Ascend presets). The GPU presets' rate is fitted on vidur's A100 rows
    /// (chips::pytorch_index_select_rate). Read for the vector engine.
    double index_select_rate = 0;
    /// What such a gather of at most 16 indices (cost.hpp detail::index_select_small_max), run by
    /// indexSelectSmallIndex, whose threads walk the indices one after another (the index, then
    /// the row element it names, a dependent load), adds to its head per index past the first.
    /// Only with index_select_rate set (the walk it belongs to; validate refuses it alone). 0:
    /// nothing (the Ascend presets). The GPU presets' time is fitted on vidur's A100 rows
    /// (chips::pytorch_index_select_trip). Read for the vector engine.
    duration index_select_trip{};

    [[nodiscard]] friend constexpr bool operator==(const engine_spec&, const engine_spec&) = default;

    [[nodiscard]] constexpr double ops_per_cycle_for(dtype t) const noexcept {
        return ops_per_cycle[index_of(t)];
    }
    /// The dtype arithmetic on `t` runs in (`t`, bf16_computed_as for bf16, fp8_computed_as for
    /// FP8 where that is not an FP8 format).
    [[nodiscard]] constexpr dtype computed_as(dtype t) const noexcept {
        if (!is_narrow_float(t)) [[likely]]
            return t;
        if (t == dtype::bf16) return bf16_computed_as;
        // FP8 itself, or the dtype its target runs in (bf16 on a core computing bf16 in fp32).
        return is_fp8(fp8_computed_as) ? t : computed_as(fp8_computed_as);
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
    /// L2 partitions that each cache, for the cores wired to them, what those cores read (1: one
    /// shared L2). An input read by cores on every side is held once per partition, so what stays
    /// resident for the next kernel is l2_size / l2_partitions (l2_resident_size). NVIDIA's A100
    /// whitepaper ("The L2 cache is divided into two partitions ... Each L2 partition localizes
    /// and caches data for memory accesses from SMs in the GPCs directly connected to the
    /// partition"): 2 on the A100, an assumption for the Hopper presets; 1 on Ascend and the A40
    /// (no source describes a split).
    int l2_partitions = 1;

    [[nodiscard]] friend constexpr bool operator==(const memory_spec&, const memory_spec&) = default;
};

/// L2 bytes that an input found there can occupy: the size of one partition.
[[nodiscard]] constexpr data_size l2_resident_size(const memory_spec& m) noexcept {
    return m.l2_partitions > 1 ? m.l2_size / static_cast<double>(m.l2_partitions) : m.l2_size;
}

/// Host link (PCIe). Generation 1..6 and lane count; the model of rates lives in link.hpp.
struct host_link_spec {
    int pcie_gen = 0;
    int lanes = 0;

    [[nodiscard]] friend constexpr bool operator==(const host_link_spec&, const host_link_spec&) = default;
};

/// Fixed costs. Each preset says where its figures come from (docs/model.md); calibrate them
/// against a profile.
struct overhead_spec {
    duration launch{};           // t0: per-op head cost independent of core count (cube engine)
    duration per_core{};         // t1: added head cost per core used (guide §12) (cube engine)
    duration vector_launch{};    // t0 of a vector-engine kernel
    duration vector_per_core{};  // t1 of a vector-engine kernel
    duration host_dispatch{};  // host time to launch one op when the graph is not sunk (guide §3)
    duration aicpu_launch{};   // fixed cost of an AI CPU op
    // Latency-bound row kernels (rowwise ops whose row is one GPU thread block, with a block-wide
    // reduction): each row holds its block for at least row_trip_cycles (vector clock) per trip
    // of its threads over the row (op::row_trips: ceil(width / threads), each a dependent load),
    // and a core keeps core_threads / op::row_threads rows in flight, so the body is at least
    // ceil(rows / (cores x rows in flight)) x trips x row_trip_cycles. 0: no such floor (the
    // Ascend presets: a core loops over its rows in one kernel).
    cycle_count row_trip_cycles{};
    std::int64_t core_threads = 0;
    // Fused attention (op_kind::attention) on a GPU: each thread block (a work unit: a query
    // block of one head of one sequence, a decode step's group of query heads sharing a KV
    // head, or a split of its keys) holds its SM for at least
    // attention_unit_cycles (the engine's clock) beyond the time its bytes take at the SM's share
    // of HBM, so the body is at least waves x attention_unit_cycles + the memory time, waves =
    // ceil(units / cores): what a decode step over short KV caches costs, where neither the
    // FLOPs nor the bytes do. 0: no such floor (the Ascend presets: a core loops over its blocks
    // in one kernel; the Hopper presets: their attention heads are fitted on cuDNN kernels).
    cycle_count attention_unit_cycles{};
    // Fused attention in FlashInfer's layout whose keys its plan split (op::kv_chunk_min): the
    // kernel that merges the splits' partial outputs holds an SM this long per query row and
    // head (the engine's clock), after the attention (cost.hpp). 0: not priced (every preset but
    // the Ampere ones, whose value is fitted on FlashInfer v0.0.6's merge: chips/nvidia.hpp).
    cycle_count attention_merge_cycles{};
    // What a kernel that reads pays in its head over one that only writes (a fill): its first
    // load's wait and the rest of a reading kernel's set-up. Added to the head of every cube and
    // vector op that reads (op::bytes_read > 0), calibrated head or not; not to an AI CPU op's.
    // 0: folded into the launch figures (the Ascend presets, the A100 and A40: their heads are
    // fitted or assumed with it inside).
    duration load_latency{};

    [[nodiscard]] friend constexpr bool operator==(const overhead_spec&, const overhead_spec&) = default;
};

/// An output tile of a GEMM kernel: the M x N block one core computes at a time.
struct tile_shape {
    std::int64_t m = 0;
    std::int64_t n = 0;
    [[nodiscard]] friend constexpr bool operator==(const tile_shape&, const tile_shape&) = default;
};

/// Most GEMM tile shapes a chip lists (chip::cube_tiles).
inline constexpr std::size_t max_cube_tiles = 8;

struct chip {
    fixed_name name{};
    engine_spec cube{};
    engine_spec vector{};
    engine_spec aicpu{};
    memory_spec memory{};
    data_size alignment{};  // contiguous-move alignment unit (32 B on Ascend: ubblock_size)
    host_link_spec link{};
    overhead_spec overhead{};
    /// The output tiles the chip's GEMM libraries choose among (cost.hpp prices a plain GEMM in
    /// the one that finishes first). Unused entries are {0, 0}; none listed: the factory's one
    /// tile (op.hpp cube_tile_m x cube_tile_n).
    std::array<tile_shape, max_cube_tiles> cube_tiles{};

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
/// `v` in [lo, hi] (finite), with `expected` naming the range and why.
constexpr void expect_in(double v, double lo, double hi, std::string_view field,
                         std::string_view expected) {
    PERFCAST_EXPECTS(v >= lo && v <= hi, "validate(chip)", field, v, expected);
}
/// Plausibility bounds of the memory fields (issue 16): outside them a value is a unit mistake,
/// and a rate of 1e-300 made latencies overflow to inf. Each bound leaves orders of magnitude
/// around every chip described (docs/model.md, "Chip parameters").
/// Sizes: at most 1 PiB, a thousand times the largest device memory (H200: 141 GB), as
/// io::parse_size's bound.
inline constexpr double max_size_bytes = 1125899906842624.0;
/// HBM bandwidth: 1 MB/s .. 1 PB/s (the H200's 4.8 TB/s is 200 times below the top).
inline constexpr double min_hbm_Bps = 1e6;
inline constexpr double max_hbm_Bps = 1e15;
/// Per-core rates: 0.001 .. 1e6 bytes per cycle (the 910B's 32 and 110 sit mid-range).
inline constexpr double min_core_rate = 1e-3;
inline constexpr double max_core_rate = 1e6;
/// Overheads: under 1e9 us (a quarter hour), the bound of the params file's times.
inline constexpr double max_overhead_us = 1e9;
/// Most cores one engine may have (see validate_engine).
inline constexpr int max_cores = 65536;
constexpr void validate_engine(const engine_spec& e, std::string_view field_cores,
                               std::string_view field_clock, std::string_view field_rate,
                               std::string_view field_uncounted, bool required) {
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
    // 0 (the dtype does not run here) or 1e-6 .. 1e9 ops per cycle per core: the presets
    // range from 1 (AI CPU) to a few thousand (tensor-core MACs per SM).
    for (double r : e.ops_per_cycle) {
        PERFCAST_EXPECTS(r == 0 || (r >= 1e-6 && r <= 1e9), "validate(chip)", field_rate, r,
                         "0 or a rate in [1e-6, 1e9] ops per cycle per core");
    }
    // The bounds of a calibrated work factor (model_params' max_work_factor is 16): 1/64 .. 64.
    PERFCAST_EXPECTS(e.uncounted_work >= 1.0 / 64 && e.uncounted_work <= 64, "validate(chip)",
                     field_uncounted, e.uncounted_work, "a factor in [1/64, 64]");
}
}  // namespace detail

/// Rejects impossible chips: 0 cube or vector cores, 0 clock, negative or NaN rates and sizes.
/// Returns the chip so that `constexpr chip c = validate(chip{...});` checks at compile time.
constexpr const chip& validate(const chip& c) {
    constexpr std::string_view where = "validate(chip)";
    detail::validate_engine(c.cube, "cube.cores", "cube.clock", "cube.ops_per_cycle",
                            "cube.uncounted_work", true);
    detail::validate_engine(c.vector, "vector.cores", "vector.clock", "vector.ops_per_cycle",
                            "vector.uncounted_work", true);
    detail::validate_engine(c.aicpu, "aicpu.cores", "aicpu.clock", "aicpu.ops_per_cycle",
                            "aicpu.uncounted_work", false);
    for (const auto& [share, field] :
         {std::pair{c.cube.narrow_rows_4, "cube.narrow_rows_4"},
          std::pair{c.cube.narrow_rows_2, "cube.narrow_rows_2"},
          std::pair{c.cube.attention_share, "cube.attention_share"},
          std::pair{c.cube.attention_unfilled_share, "cube.attention_unfilled_share"}}) {
        PERFCAST_EXPECTS(share > 0 && share <= 1, where, field, share, "a share in (0, 1]");
    }
    for (const auto& [rate, field] :
         {std::pair{c.vector.walk_rate, "vector.walk_rate"},
          std::pair{c.vector.transpose_rate, "vector.transpose_rate"},
          std::pair{c.vector.softmax_warp_rate, "vector.softmax_warp_rate"},
          std::pair{c.vector.softmax_block_rate, "vector.softmax_block_rate"},
          std::pair{c.vector.attention_softmax_rate, "vector.attention_softmax_rate"},
          std::pair{c.vector.index_select_rate, "vector.index_select_rate"}}) {
        PERFCAST_EXPECTS(rate == 0 || (rate >= 1e-6 && rate <= 1e9), where, field, rate,
                         "0 (unset: not modelled, or the engine's own rate) or a rate in "
                         "[1e-6, 1e9] per cycle per core");
    }
    // Narrow floating-point data is computed in itself or in a wider floating-point dtype.
    const dtype b16 = c.vector.bf16_computed_as;
    PERFCAST_EXPECTS(b16 == dtype::bf16 || b16 == dtype::fp32, where, "vector.bf16_computed_as",
                     name_of(b16), "bf16 (itself) or fp32");
    const dtype f8 = c.vector.fp8_computed_as;
    PERFCAST_EXPECTS(is_fp8(f8) || f8 == dtype::fp16 || f8 == dtype::bf16 || f8 == dtype::fp32,
                     where, "vector.fp8_computed_as", name_of(f8),
                     "an FP8 format (FP8 itself), fp16, bf16 or fp32");
    detail::expect_in(c.vector.walk_head.in(units::us), 0, detail::max_overhead_us,
                      "vector.walk_head", "a time in [0, 1e9] us");
    detail::expect_in(c.vector.index_select_trip.in(units::us), 0, detail::max_overhead_us,
                      "vector.index_select_trip", "a time in [0, 1e9] us");
    // The trip belongs to index_select's walk: without its rate it would be read nowhere.
    PERFCAST_EXPECTS(c.vector.index_select_trip == duration{} || c.vector.index_select_rate > 0,
                     where, "vector.index_select_trip", c.vector.index_select_trip.in(units::us),
                     "0 us unless vector.index_select_rate is set (the walk the trip belongs to)");
    constexpr double pib = detail::max_size_bytes;
    constexpr std::string_view size_range = "a size in [1 B, 1 PiB]";
    constexpr std::string_view buffer_range = "a size in [0 B, 1 PiB]";
    const double hbm = c.memory.hbm_size.in(units::B);
    detail::expect_in(hbm, 1, pib, "memory.hbm_size", size_range);
    detail::expect_in(c.memory.hbm_bandwidth.in(units::Bps), detail::min_hbm_Bps,
                      detail::max_hbm_Bps, "memory.hbm_bandwidth",
                      "a bandwidth between 1 MB/s and 1 PB/s (in B/s: 1e6 .. 1e15)");
    detail::expect_in(c.memory.l2_size.in(units::B), 0, pib, "memory.l2_size", buffer_range);
    PERFCAST_EXPECTS(c.memory.l2_partitions >= 1 && c.memory.l2_partitions <= 64, where,
                     "memory.l2_partitions", static_cast<double>(c.memory.l2_partitions),
                     "1 to 64 partitions");
    constexpr std::string_view rate_range = "a rate in [0.001, 1e6] bytes per cycle per core";
    detail::expect_in(c.memory.core_read_rate.in(units::B_per_cycle), detail::min_core_rate,
                      detail::max_core_rate, "memory.core_read_rate", rate_range);
    detail::expect_in(c.memory.core_write_rate.in(units::B_per_cycle), detail::min_core_rate,
                      detail::max_core_rate, "memory.core_write_rate", rate_range);
    const double l2_rate = c.memory.l2_read_rate.in(units::B_per_cycle);
    PERFCAST_EXPECTS(
        l2_rate == 0 || (l2_rate >= detail::min_core_rate && l2_rate <= detail::max_core_rate),
        where, "memory.l2_read_rate", l2_rate,
        "0 (no L2 rate) or a rate in [0.001, 1e6] bytes per cycle per core");
    detail::expect_in(c.memory.ub_size.in(units::B), 0, pib, "memory.ub_size", buffer_range);
    detail::expect_in(c.memory.l1_size.in(units::B), 0, pib, "memory.l1_size", buffer_range);
    detail::expect_in(c.memory.l0a_size.in(units::B), 0, pib, "memory.l0a_size", buffer_range);
    detail::expect_in(c.memory.l0b_size.in(units::B), 0, pib, "memory.l0b_size", buffer_range);
    detail::expect_in(c.memory.l0c_size.in(units::B), 0, pib, "memory.l0c_size", buffer_range);
    // 1 B .. 1 MiB: every chip described aligns moves to 32 B (guide §5) or 128 B lines.
    detail::expect_in(c.alignment.in(units::B), 1, 1048576, "alignment",
                      "an alignment unit in [1 B, 1 MiB]");
    PERFCAST_EXPECTS(c.link.pcie_gen >= 1 && c.link.pcie_gen <= 6, where, "link.pcie_gen",
                     static_cast<double>(c.link.pcie_gen), "a PCIe generation 1..6");
    PERFCAST_EXPECTS(c.link.lanes == 1 || c.link.lanes == 2 || c.link.lanes == 4 ||
                         c.link.lanes == 8 || c.link.lanes == 16,
                     where, "link.lanes", static_cast<double>(c.link.lanes),
                     "1, 2, 4, 8 or 16 lanes");
    constexpr std::string_view time_range = "a time in [0, 1e9] us";
    detail::expect_in(c.overhead.launch.in(units::us), 0, detail::max_overhead_us,
                      "overhead.launch", time_range);
    detail::expect_in(c.overhead.per_core.in(units::us), 0, detail::max_overhead_us,
                      "overhead.per_core", time_range);
    detail::expect_in(c.overhead.vector_launch.in(units::us), 0, detail::max_overhead_us,
                      "overhead.vector_launch", time_range);
    detail::expect_in(c.overhead.vector_per_core.in(units::us), 0, detail::max_overhead_us,
                      "overhead.vector_per_core", time_range);
    detail::expect_in(c.overhead.host_dispatch.in(units::us), 0, detail::max_overhead_us,
                      "overhead.host_dispatch", time_range);
    detail::expect_in(c.overhead.aicpu_launch.in(units::us), 0, detail::max_overhead_us,
                      "overhead.aicpu_launch", time_range);
    // 0 .. 1e9 cycles per trip; 0 .. 1e6 resident threads per core (an SM holds 2048).
    detail::expect_in(c.overhead.row_trip_cycles.in(units::cycle), 0, 1e9,
                      "overhead.row_trip_cycles", "0 (no row floor) or a count in [0, 1e9] cycles");
    detail::expect_in(c.overhead.attention_unit_cycles.in(units::cycle), 0, 1e9,
                      "overhead.attention_unit_cycles",
                      "0 (no attention floor) or a count in [0, 1e9] cycles");
    detail::expect_in(c.overhead.attention_merge_cycles.in(units::cycle), 0, 1e9,
                      "overhead.attention_merge_cycles",
                      "0 (no merge priced) or a count in [0, 1e9] cycles");
    detail::expect_in(static_cast<double>(c.overhead.core_threads), 0, 1e6, "overhead.core_threads",
                      "0 .. 1e6 resident threads per core");
    detail::expect_in(c.overhead.load_latency.in(units::us), 0, detail::max_overhead_us,
                      "overhead.load_latency", time_range);
    // 1 .. 4096 rows and columns (the presets list 64 .. 256), or an unused {0, 0}.
    for (const tile_shape& t : c.cube_tiles) {
        const bool unused = t.m == 0 && t.n == 0;
        PERFCAST_EXPECTS(unused || (t.m >= 1 && t.m <= 4096), where, "cube_tiles.m",
                         static_cast<double>(t.m), "0 (unused) or 1 .. 4096 rows");
        PERFCAST_EXPECTS(unused || (t.n >= 1 && t.n <= 4096), where, "cube_tiles.n",
                         static_cast<double>(t.n), "0 (unused) or 1 .. 4096 columns");
    }
    return c;
}

}  // namespace perfcast
