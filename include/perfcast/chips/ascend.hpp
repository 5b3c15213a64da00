// perfcast/chips/ascend.hpp: constexpr presets for Huawei Ascend NPUs.
//
// Every number read from a CANN platform configuration file cites the file and key. The files are
// CANN 8.1.RC1 data/platform_config/<SoC>.ini (copies in tests/data/platform_config/, origin in
// tests/data/README.md); tests/test_presets.cpp re-reads them and checks the presets against them.
// Numbers that are not in those files (HBM bandwidth, PCIe, AI CPU clock, overheads) are marked
// "assumption" here and listed in docs/model.md with how to calibrate them.
#pragma once

#include <initializer_list>

#include "../chip.hpp"
#include "../dtype.hpp"
#include "../units.hpp"

namespace perfcast::chips {

/// Model overheads for every Ascend preset (docs/model.md, "Assumptions"); calibrate them
/// against a profile.
///  - launch 3 us, per_core 0.1 us: head cost of a cube kernel, independent of its core count and
///    per core used (guide §12: more cores, more head cost). Assumptions: the shipped profiles
///    hold no head-bound cube kernel to fit them on (their GEMMs and attention kernels take
///    44 us and more);
///  - vector_launch 1.35 us, vector_per_core 0.12 us: head cost of a vector kernel. Fitted on
///    the head-bound vector rows (body under 1 us) of three shipped profiles, each weighing the
///    same: the 910B1 training profile, the two ranks of torchnpu 2023 CANN 7.0, and the 910B3
///    attention profile (examples/fit_heads.cpp; docs/validation.md, "Defaults that hold before
///    calibration", has the leave-one-profile-out scores and the profiles held out). On the 910B1
///    profile the head-bound vector kernels take a median 1.34 us on one core (195 rows), 1.98 us
///    on 12 (56 rows) and 3.68 us on 48 (41 rows);
///  - host_dispatch 20 us: host time to launch one op of a graph that is not sunk (guide §3);
///  - aicpu_launch 73 us: fixed cost of an AI CPU op. Fitted as the vector head is, on the AI_CPU
///    rows of the same profiles (examples/fit_heads.cpp): the 910B1 training profile's seven
///    scalar Casts (74-198 us, median 101 us) and the torchnpu 2023 rank 0's two (72.2 and
///    72.9 us), each profile weighing the same, give 72.9 us; left out, either profile is
///    predicted within 40 % (docs/validation.md, "bf16 on the vector unit, and the AI CPU
///    launch"). Guide §8 says only that "AICPU ops are slow"; the 30 us assumed before missed
///    the two profiles' AI CPU rows by 59 % and 71 %.
inline constexpr overhead_spec default_ascend_overheads{
    .launch = duration{3.0, units::us},
    .per_core = duration{0.1, units::us},
    .vector_launch = duration{1.35, units::us},
    .vector_per_core = duration{0.12, units::us},
    .host_dispatch = duration{20.0, units::us},
    .aicpu_launch = duration{73.0, units::us},
};

/// AI CPU clock. Assumption: the ini files give only the core count (ai_cpu_cnt). 1.9 GHz is the
/// on-chip CPU clock we recall from Atlas 300I Pro (Ascend 310P) product material ("8 cores x
/// 1.9 GHz"; not re-checked against a primary source); we use it for every Ascend preset.
/// Calibrate with the duration of a measured AI_CPU row.
inline constexpr frequency default_aicpu_clock{1.9, units::GHz};

/// engine_spec::uncounted_work of every Ascend preset's vector engine: the work of the CANN
/// kernels whose operation counts the profile mapping assumes (profile/ops.hpp is_heavy_type),
/// over those counts. Fitted on shipped measurements: calibrated at a factor of 1 (commit
/// 2e4a6c2), the 910B1 training profile gave its six such types ApplyAdamW 6.09, DropOutDoMask
/// 9.07, FastGelu 3.65, LayerNormV3 3.23, RealDiv 2.32 and ScaledMaskedSoftmax 6.23, and the
/// torchnpu CANN 8.3 Qwen3 profile its three RmsNorm 2.46, RotaryPositionEmbedding 4.98 and SwiGlu
/// 1.45; the factor of least mean percentage error over the nine (profile::
/// least_relative_error_factor, as calibration gives a type it lacks) is 2.456, rounded. Each
/// profile's own factor scores the other (docs/validation.md, "A default for the assumed
/// operation counts"). The 910A and 310P3 presets take it too: an assumption (their CANN kernels
/// are the same templates; no shipped profile of either).
inline constexpr double ascend_uncounted_work = 2.46;

namespace detail {

struct rate_entry {
    dtype type;
    double ops_per_cycle;
};

/// A rate table with the listed dtypes set and every other dtype 0 ("no path").
[[nodiscard]] constexpr rate_table make_rates(std::initializer_list<rate_entry> entries) noexcept {
    rate_table t{};
    for (const rate_entry& e : entries) t[index_of(e.type)] = e.ops_per_cycle;
    return t;
}

[[nodiscard]] constexpr rate_table uniform_rates(double ops_per_cycle) noexcept {
    rate_table t{};
    for (double& r : t) r = ops_per_cycle;
    return t;
}

}  // namespace detail

/// Cube MACs per cycle per core, Da Vinci AIC-C-220 (910B*, 910_9391; ini [version] AIC_version).
///  fp16/bf16 4096: one 16x16x16 fractal per cycle ([AICoreSpec] cube_m/n/k_size = 16; Hot Chips
///    2019 Da Vinci: "4096 FP16 MACs" per core).
///  int8/uint8 8192: [DtypeMKN] DT_INT8 = 16,32,16, twice the K per cycle (Hot Chips 2019:
///    "8192 INT8 MACs").
///  hf32 2048: one 16x8x16 fractal per cycle (fp32 data: 8 values fill a 32-byte fractal row,
///    dtype.hpp), half of fp16. Measured: the HF32 Conv2DBackpropInput / Filter rows of
///    tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt do 1,490-1,960 MACs per busy
///    MAC-pipe cycle per core (MACs / (aic_mac_time x Block Dim x 1800 MHz)).
///  fp32 1024: assumption, a quarter of fp16 (mmad lists f32f32f32 for C-220; rate unpublished).
///    The same profile's fp32 MatMuls (HF32 Eligible NO) do 770-1,006 MACs per busy cycle.
inline constexpr rate_table cube_rates_c220 = detail::make_rates({
    {dtype::fp16, 4096.0},
    {dtype::bf16, 4096.0},
    {dtype::int8, 8192.0},
    {dtype::uint8, 8192.0},
    {dtype::hf32, 2048.0},
    {dtype::fp32, 1024.0},
});

/// Cube rates of AIC-C-100 (910A) and AIC-M-200 (310P3): the ini's Intrinsic_mmad lists only
/// fp16 and (u)int8 inputs (no bf16, no h32 / f32f32f32), so bf16, hf32 and fp32 have no cube path.
inline constexpr rate_table cube_rates_fp16_int8 = detail::make_rates({
    {dtype::fp16, 4096.0},
    {dtype::int8, 8192.0},
    {dtype::uint8, 8192.0},
});

/// Vector element operations per cycle per core. [AICoreSpec] vec_calc_size = 128 read as 128
/// fp16 lanes = 256 bytes per cycle (Hot Chips 2019: "2048-bit" vector unit), so 256 / size_of:
/// 16-bit 128, 32-bit 64, 8-bit and bool 256. hf32 is fp32 data on the vector unit: 64.
/// int64/uint64 0.375: the scalar slow path, calibrated on the seed's one measured int64 op. The
///   ini's [AICoreintrinsicDtypeMap] has no vector instruction for int64 (only scalar
///   sqrt/abs/max/min), and guide §7 measured Equal on [1,4000] vs [400,1] int64 (1.6e6 outputs)
///   at 230 us on 10 vector cores of an A2 (910B1-class, 1850 MHz): 1.6e6 / (230 us x 10 x
///   1.85 GHz) = 0.376 elements/cycle/core, i.e. 170x slower than int32's 64. (The latency
///   ratio 230 us vs < 30 us understates it: the int32 op is not compute-bound.) A hand-written
///   int64 Equal took ~75 us (guide §7), about 3x this rate. Recalibrate with your own int64 op.
/// fp64 0.375: assumption, the same scalar path (no fp64 vector instruction either).
inline constexpr double scalar_path_rate = 0.375;
/// bf16 128 is the lanes its data takes; its arithmetic runs in fp32 (make_ascend below).
inline constexpr rate_table vector_rates_c220 = detail::make_rates({
    {dtype::fp16, 128.0},  {dtype::bf16, 128.0},  {dtype::int16, 128.0}, {dtype::uint16, 128.0},
    {dtype::fp32, 64.0},   {dtype::hf32, 64.0},   {dtype::int32, 64.0},  {dtype::uint32, 64.0},
    {dtype::int8, 256.0},  {dtype::uint8, 256.0}, {dtype::bool_, 256.0},
    {dtype::int64, scalar_path_rate}, {dtype::uint64, scalar_path_rate},
    {dtype::fp64, scalar_path_rate},
});

/// Vector rates of 910A / 310P3: as C-220 but without bf16, which these cores do not have (no bf16
/// in any intrinsic of Ascend910A.ini or Ascend310P3.ini).
inline constexpr rate_table vector_rates_no_bf16 = [] {
    rate_table t = vector_rates_c220;
    t[index_of(dtype::bf16)] = 0.0;
    return t;
}();

/// How the ini's AI cores are laid out.
enum class core_layout : unsigned char {
    split,     // cube_vector_combine=split: separate cube cores and vector cores (910B, A3)
    combined,  // each AI core holds a cube and a vector unit (910A, 310P3)
};

/// The keys of one CANN platform_config file that a preset uses, named as in the file. Public so
/// that a chip not in the presets can be built the same way: make_ascend(name, ini, ...).
struct platform_config {
    int ai_core_cnt = 0;      // [SoCInfo]
    int cube_core_cnt = 0;    // [SoCInfo]; 0 where the key is absent (910A, 310P3)
    int vector_core_cnt = 0;  // [SoCInfo]
    int ai_cpu_cnt = 0;       // [SoCInfo]
    double memory_size = 0;   // [SoCInfo], bytes; 0 where the value is empty (910A)
    double l2_size = 0;       // [SoCInfo], bytes
    double cube_freq = 0;     // [AICoreSpec], MHz
    double l0_a_size = 0;     // [AICoreSpec], bytes
    double l0_b_size = 0;
    double l0_c_size = 0;
    double l1_size = 0;
    double ub_size = 0;
    double ubblock_size = 0;   // [AICoreSpec], bytes: the 32-byte move alignment
    double ddr_read_rate = 0;  // [AICoreMemoryRates], bytes per cycle per core (our reading)
    double ub_to_ddr_rate = 0;
    double l2_read_rate = 0;
};

/// What a preset needs beyond the ini file: all assumptions (see each preset).
struct board_figures {
    bandwidth hbm_bandwidth{};
    data_size hbm_size{};  // used only when the ini's memory_size is empty
    int pcie_gen = 0;
    int lanes = 0;
};

/// An Ascend chip from its ini values, its core layout, its rate tables and the board figures.
/// Overheads are default_ascend_overheads; the AI CPU runs at default_aicpu_clock, 1 op/cycle.
/// Not validated here: wrap it in validate().
[[nodiscard]] constexpr chip make_ascend(fixed_name name, const platform_config& ini,
                                         core_layout layout, const rate_table& cube_rates,
                                         const rate_table& vector_rates,
                                         const board_figures& board) {
    const frequency clock{ini.cube_freq, units::MHz};
    chip c{};
    c.name = name;
    // The cube engine: cube_core_cnt where the file has it, else every AI core has a cube unit.
    c.cube = {.cores = ini.cube_core_cnt > 0 ? ini.cube_core_cnt : ini.ai_core_cnt,
              .clock = clock,
              .ops_per_cycle = cube_rates};
    // Split chips have vector_core_cnt separate vector cores; on combined chips each AI core's
    // vector unit is the vector engine (910A's vector_core_cnt is 0 because it has no separate
    // vector cores, not because it has no vector units). Vector units run at the AI core clock.
    // A vector unit that takes bf16 has no bf16 arithmetic: in the C-220 files of the presets
    // (Ascend910B1..B4.ini, Ascend910_9391.ini) [AICoreintrinsicDtypeMap] lists
    // bf16 for the vector unit only in Intrinsic_vconv (bf162f32, f322bf16 and bf16 to int32),
    // while Intrinsic_vadd, vmul, vexp, ... list float16 and float32 alone. So a bf16 op loads,
    // converts to fp32, computes and converts back (tests/test_presets.cpp checks the files).
    c.vector = {
        .cores = layout == core_layout::split ? ini.vector_core_cnt : ini.ai_core_cnt,
        .clock = clock,
        .ops_per_cycle = vector_rates,
        .bf16_computed_as = vector_rates[index_of(dtype::bf16)] > 0 ? dtype::fp32 : dtype::bf16,
        .widens_marked_kernels = true,
        .uncounted_work = ascend_uncounted_work};
    // AI CPU: ai_cpu_cnt cores; clock and the 1 op/cycle for every dtype are assumptions.
    c.aicpu = {.cores = ini.ai_cpu_cnt,
               .clock = default_aicpu_clock,
               .ops_per_cycle = detail::uniform_rates(1.0)};
    c.memory = {
        .hbm_size = ini.memory_size > 0 ? data_size{ini.memory_size, units::B} : board.hbm_size,
        .hbm_bandwidth = board.hbm_bandwidth,
        .l2_size = data_size{ini.l2_size, units::B},
        .core_read_rate = bytes_per_cycle{ini.ddr_read_rate, units::B_per_cycle},
        .core_write_rate = bytes_per_cycle{ini.ub_to_ddr_rate, units::B_per_cycle},
        .l2_read_rate = bytes_per_cycle{ini.l2_read_rate, units::B_per_cycle},
        .ub_size = data_size{ini.ub_size, units::B},
        .l1_size = data_size{ini.l1_size, units::B},
        .l0a_size = data_size{ini.l0_a_size, units::B},
        .l0b_size = data_size{ini.l0_b_size, units::B},
        .l0c_size = data_size{ini.l0_c_size, units::B},
    };
    c.alignment = data_size{ini.ubblock_size, units::B};
    c.link = {.pcie_gen = board.pcie_gen, .lanes = board.lanes};
    c.overhead = default_ascend_overheads;
    return c;
}

// ---------------------------------------------------------------------------------------------
// CANN 8.1.RC1 platform_config values, one record per file. The [AICoreSpec] and
// [AICoreMemoryRates] values are identical in Ascend910B1/B2/B3/B4 and Ascend910_9391.ini.
// ---------------------------------------------------------------------------------------------

/// Ascend910B1.ini
inline constexpr platform_config ascend910b1_ini{
    .ai_core_cnt = 24, .cube_core_cnt = 24, .vector_core_cnt = 48, .ai_cpu_cnt = 4,
    .memory_size = 68719476736.0,  // 64 GiB
    .l2_size = 201326592.0,        // 192 MiB
    .cube_freq = 1850.0,
    .l0_a_size = 65536.0, .l0_b_size = 65536.0, .l0_c_size = 131072.0,
    .l1_size = 524288.0, .ub_size = 196608.0, .ubblock_size = 32.0,
    .ddr_read_rate = 32.0, .ub_to_ddr_rate = 64.0, .l2_read_rate = 110.0,
};

/// Ascend910B2.ini: as B1 but cube_freq=1800.
inline constexpr platform_config ascend910b2_ini = [] {
    platform_config p = ascend910b1_ini;
    p.cube_freq = 1800.0;
    return p;
}();

/// Ascend910B3.ini: ai_core_cnt=20, cube_core_cnt=20, vector_core_cnt=40, cube_freq=1800.
inline constexpr platform_config ascend910b3_ini = [] {
    platform_config p = ascend910b1_ini;
    p.ai_core_cnt = 20;
    p.cube_core_cnt = 20;
    p.vector_core_cnt = 40;
    p.cube_freq = 1800.0;
    return p;
}();

/// Ascend910B4.ini: as B3 but memory_size=34359738368 (32 GiB), l2_size=100663296 (96 MiB),
/// cube_freq=1500.
inline constexpr platform_config ascend910b4_ini = [] {
    platform_config p = ascend910b3_ini;
    p.memory_size = 34359738368.0;
    p.l2_size = 100663296.0;
    p.cube_freq = 1500.0;
    return p;
}();

/// Ascend910_9391.ini (one die of the A3 / Ascend 910C package): identical to Ascend910B1.ini
/// except SoC_version.
inline constexpr platform_config ascend910_9391_ini = ascend910b1_ini;

/// Ascend910A.ini: ai_core_cnt=32, vector_core_cnt=0 (no separate vector cores; no
/// cube_core_cnt key, cube_vector_combine absent: each AI core holds cube + vector), ai_cpu_cnt=4,
/// memory_size= (empty), l2_size=33554432, cube_freq=1000, l0_c_size=262144, l1_size=1048576,
/// ub_size=262144; memory rates as B1.
inline constexpr platform_config ascend910a_ini{
    .ai_core_cnt = 32, .cube_core_cnt = 0, .vector_core_cnt = 0, .ai_cpu_cnt = 4,
    .memory_size = 0.0,       // empty in the file
    .l2_size = 33554432.0,    // 32 MiB
    .cube_freq = 1000.0,
    .l0_a_size = 65536.0, .l0_b_size = 65536.0, .l0_c_size = 262144.0,
    .l1_size = 1048576.0, .ub_size = 262144.0, .ubblock_size = 32.0,
    .ddr_read_rate = 32.0, .ub_to_ddr_rate = 64.0, .l2_read_rate = 110.0,
};

/// Ascend310P3.ini [SoCInfo] ai_core_cnt=8, vector_core_cnt=7, mix_vector_core_cnt=15,
/// ai_cpu_cnt=16, memory_size=24000000000, l2_size=16777216; [AICoreSpec] cube_freq=1060;
/// [AICoreMemoryRates] ddr_read_rate=17, ub_to_ddr_rate=17, l2_read_rate=114.
/// The 7 vector cores are separate, slower cores ([VectorCoreSpec] vec_freq=1000,
/// [VectorCoreMemoryRates] ddr_read_rate=9): see ascend310p3_vector_cores.
inline constexpr platform_config ascend310p3_ini{
    .ai_core_cnt = 8, .cube_core_cnt = 0, .vector_core_cnt = 7, .ai_cpu_cnt = 16,
    .memory_size = 24000000000.0,  // 24 GB (decimal in the file)
    .l2_size = 16777216.0,         // 16 MiB
    .cube_freq = 1060.0,
    .l0_a_size = 65536.0, .l0_b_size = 65536.0, .l0_c_size = 262144.0,
    .l1_size = 1048576.0, .ub_size = 262144.0, .ubblock_size = 32.0,
    .ddr_read_rate = 17.0, .ub_to_ddr_rate = 17.0, .l2_read_rate = 114.0,
};

// ---------------------------------------------------------------------------------------------
// Board figures: not in the ini files. All assumptions; docs/model.md says how to calibrate.
// ---------------------------------------------------------------------------------------------

/// 910B1/B2/B3 and the A3 die: HBM 1.6 TB/s is the figure commonly cited for the 910B's HBM2e
/// (no Huawei primary source found; third-party tables give 1.2-1.6 TB/s). PCIe 5.0 x16: the
/// guide §4 names PCIe 5.0 for the A2 server; x16 is an assumption. Calibrate the bandwidth
/// with a large contiguous copy (or an op's mte2 bytes / mte2 time), and the link with the
/// profile's pcie_*.csv rates.
inline constexpr board_figures ascend910b_board{
    .hbm_bandwidth = bandwidth{1.6, units::TBps}, .hbm_size = {}, .pcie_gen = 5, .lanes = 16};

/// 910B4: half the memory and half the L2 of the B3 (ini), so we assume half the HBM channels:
/// 0.8 TB/s. Assumption (third-party tables say 1.2 TB/s); calibrate as above.
inline constexpr board_figures ascend910b4_board{
    .hbm_bandwidth = bandwidth{0.8, units::TBps}, .hbm_size = {}, .pcie_gen = 5, .lanes = 16};

/// 910A: 4 HBM2 stacks, 32 GB, 1.2 TB/s (Huawei, Hot Chips 2019 "Ascend 910" and Linley
/// Microprocessor Report 2019: "Including 32GB of HBM2"); PCIe 4.0 x16 (Huawei Ascend 910 product
/// page as quoted from Hot Chips 2019). Secondary sources: assumptions until measured.
inline constexpr board_figures ascend910a_board{
    .hbm_bandwidth = bandwidth{1.2, units::TBps},
    .hbm_size = data_size{32.0, units::GiB},
    .pcie_gen = 4,
    .lanes = 16};

/// 310P3 (Atlas 300I Pro): LPDDR4X 204.8 GB/s, PCIe 4.0 x16 (Atlas 300I Pro product material;
/// the two-chip Atlas 300I Duo is quoted at 408 GB/s and PCIe 4.0 x16). Assumption until measured.
inline constexpr board_figures ascend310p3_board{
    .hbm_bandwidth = bandwidth{204.8, units::GBps}, .hbm_size = {}, .pcie_gen = 4, .lanes = 16};

// ---------------------------------------------------------------------------------------------
// Presets. Each is validated at compile time: an impossible value does not compile.
// ---------------------------------------------------------------------------------------------

/// Ascend 910B1: 24 cube / 48 vector cores at 1850 MHz. Peak cube fp16 = 24 x 4096 x 2 x 1.85 GHz
/// = 363.7 TFLOP/s.
inline constexpr chip ascend910b1 =
    validate(make_ascend("ascend910b1", ascend910b1_ini, core_layout::split,
                         cube_rates_c220, vector_rates_c220, ascend910b_board));

/// Ascend 910B2: 24 / 48 cores at 1800 MHz.
inline constexpr chip ascend910b2 =
    validate(make_ascend("ascend910b2", ascend910b2_ini, core_layout::split,
                         cube_rates_c220, vector_rates_c220, ascend910b_board));

/// Ascend 910B3: 20 / 40 cores at 1800 MHz (the chip class of
/// tests/data/profiles/kernel_details_910B3_matmul.csv).
inline constexpr chip ascend910b3 =
    validate(make_ascend("ascend910b3", ascend910b3_ini, core_layout::split,
                         cube_rates_c220, vector_rates_c220, ascend910b_board));

/// Ascend 910B4: 20 / 40 cores at 1500 MHz, 32 GiB, 96 MiB L2.
inline constexpr chip ascend910b4 =
    validate(make_ascend("ascend910b4", ascend910b4_ini, core_layout::split,
                         cube_rates_c220, vector_rates_c220, ascend910b4_board));

/// One die of the Atlas A3 (Ascend 910C: two dies per package; CANN SoC Ascend910_9391).
/// 24 / 48 cores at 1850 MHz, 64 GiB. HBM 1.6 TB/s per die: assumption (half of the 3.2 TB/s
/// commonly cited per 910C package).
inline constexpr chip ascend910_9391 =
    validate(make_ascend("ascend910_9391", ascend910_9391_ini, core_layout::split,
                         cube_rates_c220, vector_rates_c220, ascend910b_board));

/// The A3 die under its short name.
inline constexpr const chip& ascend_a3 = ascend910_9391;

/// Ascend 910A: 32 AI cores (cube + vector each) at 1000 MHz. Peak cube fp16 = 262.1 TFLOP/s
/// (Huawei quotes 256 TFLOP/s).
inline constexpr chip ascend910a =
    validate(make_ascend("ascend910a", ascend910a_ini, core_layout::combined,
                         cube_rates_fp16_int8, vector_rates_no_bf16, ascend910a_board));

/// Ascend 310P3: 8 AI cores (cube + vector each) at 1060 MHz. Peak cube fp16 = 69.5 TFLOP/s,
/// int8 139 TOP/s (Atlas 300I Pro material: 70 TFLOPS / 140 TOPS). The vector engine is the AI
/// cores' vector units, where CANN runs vector ops by default; the 7 separate vector cores are
/// not in the preset (see ascend310p3_vector_cores).
inline constexpr chip ascend310p3 =
    validate(make_ascend("ascend310p3", ascend310p3_ini, core_layout::combined,
                         cube_rates_fp16_int8, vector_rates_no_bf16, ascend310p3_board));

/// The 310P3's separate vector cores, for a model that lets vector ops use them too (Ascend C
/// "mix vector core" kernels): Ascend310P3.ini [SoCInfo] vector_core_cnt=7, [VectorCoreSpec]
/// vec_freq=1000, [VectorCoreMemoryRates] ddr_read_rate=9, ub_to_ddr_rate=9, l2_read_rate=57.
struct standalone_vector_cores {
    engine_spec engine{};
    bytes_per_cycle core_read_rate{};
    bytes_per_cycle core_write_rate{};
    bytes_per_cycle l2_read_rate{};
};

inline constexpr standalone_vector_cores ascend310p3_vector_cores{
    .engine = {.cores = 7,
               .clock = frequency{1000.0, units::MHz},
               .ops_per_cycle = vector_rates_no_bf16},
    .core_read_rate = bytes_per_cycle{9.0, units::B_per_cycle},
    .core_write_rate = bytes_per_cycle{9.0, units::B_per_cycle},
    .l2_read_rate = bytes_per_cycle{57.0, units::B_per_cycle},
};

}  // namespace perfcast::chips
