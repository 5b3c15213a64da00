// Presets against their sources: the Ascend presets carry the values of the CANN 8.1.RC1
// platform_config files shipped in tests/data/platform_config/ (origin: tests/data/README.md);
// the GPU presets reproduce their datasheets' peaks. Lookup by every spelling.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_presets {

#ifndef PERFCAST_SOURCE_DIR
#define PERFCAST_SOURCE_DIR "."  // the build defines it; "." lets a run from the repo root work
#endif

namespace {

using namespace perfcast;

/// The value of `key` in `[section]` of a CANN ini file, or nothing. A line-based lookup, enough
/// for these files (no continuation lines, no quoting); a full reader belongs in io/.
std::optional<std::string> ini_value(const std::string& file, std::string_view section,
                                     std::string_view key) {
    std::ifstream in(file);
    REQUIRE_MESSAGE(in.good(), "cannot open " << file);
    std::string line;
    std::string current;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.front() == '#') continue;
        if (line.front() == '[') {
            current = line.substr(1, line.find(']') - 1);
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string::npos || current != section) continue;
        if (std::string_view(line).substr(0, eq) == key) return line.substr(eq + 1);
    }
    return std::nullopt;
}

std::string ini_path(std::string_view soc) {
    return std::string(PERFCAST_SOURCE_DIR) + "/tests/data/platform_config/" + std::string(soc) +
           ".ini";
}

/// A numeric ini value; fails the test when absent or empty.
double ini_number(std::string_view soc, std::string_view section, std::string_view key) {
    const auto v = ini_value(ini_path(soc), section, key);
    INFO(soc, ".ini [", section, "] ", key);
    REQUIRE(v.has_value());
    REQUIRE_FALSE(v->empty());
    return std::stod(*v);
}

struct ascend_case {
    std::string_view soc;  // file name without .ini
    const chip* preset;
};

const ascend_case ascend_cases[] = {
    {"Ascend910B1", &chips::ascend910b1},       {"Ascend910B2", &chips::ascend910b2},
    {"Ascend910B3", &chips::ascend910b3},       {"Ascend910B4", &chips::ascend910b4},
    {"Ascend910_9391", &chips::ascend910_9391}, {"Ascend910A", &chips::ascend910a},
    {"Ascend310P3", &chips::ascend310p3},
};

/// The dtype list of intrinsic `name` (e.g. "Intrinsic_vadd") in the file's
/// [AICoreintrinsicDtypeMap], whose keys are running numbers that differ between files; empty
/// when the file lists no such intrinsic.
std::string intrinsic_dtypes(std::string_view soc, std::string_view name) {
    std::ifstream in(ini_path(soc));
    REQUIRE(in.good());
    std::string line;
    bool in_map = false;
    const std::string prefix = std::string(name) + "|";
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line.front() == '[') in_map = line == "[AICoreintrinsicDtypeMap]";
        const auto eq = line.find('=');
        if (in_map && eq != std::string::npos && line.compare(eq + 1, prefix.size(), prefix) == 0)
            return line.substr(eq + 1 + prefix.size());
    }
    return {};
}

std::string error_of_get_chip(std::string_view name) {
    try {
        (void)chips::get_chip(name);
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("presets: Ascend presets carry their platform_config values") {
    for (const ascend_case& t : ascend_cases) {
        CAPTURE(t.soc);
        const chip& c = *t.preset;
        const auto file = ini_path(t.soc);
        REQUIRE(ini_value(file, "version", "SoC_version") == std::string(t.soc));

        // Cores: cube_core_cnt where the file has it, else ai_core_cnt (every AI core has a cube).
        const double ai_cores = ini_number(t.soc, "SoCInfo", "ai_core_cnt");
        const auto cube_key = ini_value(file, "SoCInfo", "cube_core_cnt");
        CHECK(c.cube.cores == static_cast<int>(cube_key ? std::stod(*cube_key) : ai_cores));
        // Vector: the separate vector cores on split chips, else each AI core's vector unit.
        const bool split = ini_value(file, "SoCInfo", "cube_vector_combine") == "split";
        CHECK(c.vector.cores ==
              static_cast<int>(split ? ini_number(t.soc, "SoCInfo", "vector_core_cnt")
                                     : ai_cores));
        CHECK(c.aicpu.cores == static_cast<int>(ini_number(t.soc, "SoCInfo", "ai_cpu_cnt")));

        // Clock: cube_freq (MHz) for the cube and the AI cores' vector units.
        const double mhz = ini_number(t.soc, "AICoreSpec", "cube_freq");
        CHECK(c.cube.clock.in(units::MHz) == doctest::Approx(mhz));
        CHECK(c.vector.clock.in(units::MHz) == doctest::Approx(mhz));

        // Memory sizes (bytes).
        const auto memory_size = ini_value(file, "SoCInfo", "memory_size");
        REQUIRE(memory_size.has_value());
        if (!memory_size->empty()) {
            CHECK(c.memory.hbm_size.in(units::B) == std::stod(*memory_size));
        }
        CHECK(c.memory.l2_size.in(units::B) == ini_number(t.soc, "SoCInfo", "l2_size"));
        CHECK(c.memory.ub_size.in(units::B) == ini_number(t.soc, "AICoreSpec", "ub_size"));
        CHECK(c.memory.l1_size.in(units::B) == ini_number(t.soc, "AICoreSpec", "l1_size"));
        CHECK(c.memory.l0a_size.in(units::B) == ini_number(t.soc, "AICoreSpec", "l0_a_size"));
        CHECK(c.memory.l0b_size.in(units::B) == ini_number(t.soc, "AICoreSpec", "l0_b_size"));
        CHECK(c.memory.l0c_size.in(units::B) == ini_number(t.soc, "AICoreSpec", "l0_c_size"));
        CHECK(c.alignment.in(units::B) == ini_number(t.soc, "AICoreSpec", "ubblock_size"));

        // Per-core memory rates (bytes per cycle per core).
        CHECK(c.memory.core_read_rate.in(units::B_per_cycle) ==
              ini_number(t.soc, "AICoreMemoryRates", "ddr_read_rate"));
        CHECK(c.memory.core_write_rate.in(units::B_per_cycle) ==
              ini_number(t.soc, "AICoreMemoryRates", "ub_to_ddr_rate"));
        CHECK(c.memory.l2_read_rate.in(units::B_per_cycle) ==
              ini_number(t.soc, "AICoreMemoryRates", "l2_read_rate"));

        // Cube: a 16x16x16 fp16 fractal per cycle; [DtypeMKN] DT_INT8 doubles K, so int8 rate
        // is twice fp16.
        CHECK(ini_value(file, "AICoreSpec", "cube_m_size") == "16");
        CHECK(ini_value(file, "AICoreSpec", "cube_k_size") == "16");
        CHECK(ini_value(file, "AICoreSpec", "cube_n_size") == "16");
        CHECK(ini_value(file, "DtypeMKN", "DT_INT8") == "16,32,16");
        CHECK(c.cube.ops_per_cycle_for(dtype::fp16) == 16.0 * 16.0 * 16.0);
        CHECK(c.cube.ops_per_cycle_for(dtype::int8) == 2.0 * c.cube.ops_per_cycle_for(dtype::fp16));
        // Vector: vec_calc_size = 128 fp16 lanes.
        CHECK(c.vector.ops_per_cycle_for(dtype::fp16) ==
              ini_number(t.soc, "AICoreSpec", "vec_calc_size"));
        // int64 on the vector unit is a slow path (no vector intrinsic for it).
        CHECK(c.vector.ops_per_cycle_for(dtype::int64) <
              c.vector.ops_per_cycle_for(dtype::int32) / 4.0);
    }
}

TEST_CASE("presets: bf16 / fp32 cube paths follow the ini's Intrinsic_mmad list") {
    for (const ascend_case& t : ascend_cases) {
        CAPTURE(t.soc);
        const auto mmad = ini_value(ini_path(t.soc), "AICoreintrinsicDtypeMap", "25");
        const auto mmad_310p = ini_value(ini_path(t.soc), "AICoreintrinsicDtypeMap", "26");
        const bool first = mmad && mmad->starts_with("Intrinsic_mmad");
        const std::string list = first ? *mmad : mmad_310p.value_or("");
        REQUIRE(list.starts_with("Intrinsic_mmad"));
        const bool fp32_cube = list.find("f32f32f32") != std::string::npos;
        CHECK((t.preset->cube.ops_per_cycle_for(dtype::fp32) > 0) == fp32_cube);
        CHECK((t.preset->cube.ops_per_cycle_for(dtype::hf32) > 0) == fp32_cube);
    }
    CHECK(chips::ascend910b1.cube.ops_per_cycle_for(dtype::bf16) == 4096.0);
    CHECK(chips::ascend910a.cube.ops_per_cycle_for(dtype::bf16) == 0.0);
    CHECK(chips::ascend310p3.vector.ops_per_cycle_for(dtype::bf16) == 0.0);
}

TEST_CASE("presets: bf16 vector arithmetic runs in fp32 where the ini converts bf16 only") {
    // A vector unit whose arithmetic intrinsics list no bf16 but whose vconv converts bf16 to
    // fp32 computes a bf16 op in fp32 (chips/ascend.hpp, make_ascend); one without any bf16
    // vector instruction has no bf16 path at all.
    for (const ascend_case& t : ascend_cases) {
        CAPTURE(t.soc);
        const std::string conv = intrinsic_dtypes(t.soc, "Intrinsic_vconv");
        REQUIRE_FALSE(conv.empty());
        bool bf16_arithmetic = false;
        for (std::string_view name : {"Intrinsic_vadd", "Intrinsic_vmul", "Intrinsic_vexp",
                                      "Intrinsic_vmax", "Intrinsic_vsub"}) {
            const std::string list = intrinsic_dtypes(t.soc, name);
            REQUIRE_FALSE(list.empty());
            bf16_arithmetic = bf16_arithmetic || list.find("bf16") != std::string::npos ||
                              list.find("bfloat16") != std::string::npos;
        }
        const bool converts = conv.find("bf162f32") != std::string::npos;
        const engine_spec& v = t.preset->vector;
        CHECK_FALSE(bf16_arithmetic);  // no shipped file has it: a new one must be looked at
        CHECK((v.ops_per_cycle_for(dtype::bf16) > 0) == converts);
        CHECK(v.computed_as(dtype::bf16) == (converts ? dtype::fp32 : dtype::bf16));
        CHECK(v.computed_as(dtype::fp16) == dtype::fp16);
    }
    // GPUs compute bf16 in bf16 (half2 arithmetic).
    CHECK(chips::a100_80gb_sxm.vector.computed_as(dtype::bf16) == dtype::bf16);
}

TEST_CASE("presets: 310P3's separate vector cores come from [VectorCoreSpec]") {
    const auto& v = chips::ascend310p3_vector_cores;
    CHECK(v.engine.cores == static_cast<int>(ini_number("Ascend310P3", "SoCInfo",
                                                         "vector_core_cnt")));
    CHECK(v.engine.clock.in(units::MHz) == ini_number("Ascend310P3", "VectorCoreSpec", "vec_freq"));
    CHECK(v.core_read_rate.in(units::B_per_cycle) ==
          ini_number("Ascend310P3", "VectorCoreMemoryRates", "ddr_read_rate"));
    CHECK(v.core_write_rate.in(units::B_per_cycle) ==
          ini_number("Ascend310P3", "VectorCoreMemoryRates", "ub_to_ddr_rate"));
    CHECK(v.l2_read_rate.in(units::B_per_cycle) ==
          ini_number("Ascend310P3", "VectorCoreMemoryRates", "l2_read_rate"));
    // mix_vector_core_cnt = AI cores + separate vector cores.
    CHECK(ini_number("Ascend310P3", "SoCInfo", "mix_vector_core_cnt") ==
          chips::ascend310p3.vector.cores + v.engine.cores);
}

TEST_CASE("presets: peaks") {
    using units::TFLOPS;
    CHECK(chips::ascend910b1.peak(engine::cube, dtype::fp16).in(TFLOPS) ==
          doctest::Approx(363.7248));
    CHECK(chips::ascend910b3.peak(engine::cube, dtype::fp16).in(TFLOPS) ==
          doctest::Approx(294.912));
    CHECK(chips::ascend310p3.peak(engine::cube, dtype::int8).in(TFLOPS) ==
          doctest::Approx(140.0).epsilon(0.01));  // Atlas 300I Pro: 140 TOPS
    CHECK(chips::ascend910a.peak(engine::cube, dtype::fp16).in(TFLOPS) ==
          doctest::Approx(256.0).epsilon(0.03));  // Huawei: 256 TFLOPS
    // GPUs: datasheet dense tensor peaks.
    CHECK(chips::a100_80gb_sxm.peak(engine::cube, dtype::fp16).in(TFLOPS) ==
          doctest::Approx(312.0).epsilon(0.001));
    CHECK(chips::a100_80gb_sxm.peak(engine::cube, dtype::hf32).in(TFLOPS) ==
          doctest::Approx(156.0).epsilon(0.001));  // TF32
    CHECK(chips::a100_80gb_sxm.peak(engine::cube, dtype::int8).in(TFLOPS) ==
          doctest::Approx(624.0).epsilon(0.001));
    CHECK(chips::h100_sxm.peak(engine::cube, dtype::fp16).in(TFLOPS) ==
          doctest::Approx(989.4).epsilon(0.0005));
    CHECK(chips::h100_sxm.peak(engine::cube, dtype::hf32).in(TFLOPS) ==
          doctest::Approx(494.7).epsilon(0.0005));
    CHECK(chips::h100_sxm.peak(engine::cube, dtype::int8).in(TFLOPS) ==
          doctest::Approx(1978.9).epsilon(0.0005));
    CHECK(chips::h200_sxm.peak(engine::cube, dtype::bf16).in(TFLOPS) ==
          doctest::Approx(989.4).epsilon(0.0005));
    // Vector fp32: element ops (FMA = 1), half the datasheet's FMA-counted FP32 TFLOPS.
    CHECK(2.0 * chips::a100_80gb_sxm.peak(engine::vector, dtype::fp32).in(TFLOPS) ==
          doctest::Approx(19.5).epsilon(0.001));
    CHECK(2.0 * chips::h100_sxm.peak(engine::vector, dtype::fp32).in(TFLOPS) ==
          doctest::Approx(66.9).epsilon(0.001));
    // Memory.
    CHECK(chips::a100_80gb_sxm.memory.hbm_bandwidth.in(units::GBps) == doctest::Approx(2039.0));
    CHECK(chips::h200_sxm.memory.hbm_bandwidth.in(units::TBps) == doctest::Approx(4.8));
    CHECK(chips::h200_sxm.cube == chips::h100_sxm.cube);
    CHECK(chips::h200_sxm.vector == chips::h100_sxm.vector);
    // H200 values measured by the device check (nvidia-smi, cudaDeviceProp): docs/model.md.
    CHECK(chips::h200_sxm.memory.hbm_size.in(units::MiB) == 143771.0);
    CHECK(chips::h200_sxm.memory.l2_size.in(units::B) == 62914560.0);
    CHECK(chips::h200_sxm.vector.cores == 132);
    CHECK(chips::h200_sxm.vector.clock.in(units::MHz) == 1980.0);
    CHECK(chips::h200_sxm.memory.ub_size.in(units::B) == 233472.0);
    // A40 (datasheet, dense): FP16 / BF16 149.7, TF32 74.8 TFLOPS, INT8 299.3 TOPS, FP32 37.4;
    // 696 GB/s; GA102 whitepaper: 84 SMs, 6 MB L2; CUDA guide (8.6): 1536 threads, 100 KiB.
    const chip& a40 = chips::a40_pcie;
    CHECK(a40.peak(engine::cube, dtype::fp16).in(TFLOPS) == doctest::Approx(149.7).epsilon(0.001));
    CHECK(a40.peak(engine::cube, dtype::bf16).in(TFLOPS) == doctest::Approx(149.7).epsilon(0.001));
    CHECK(a40.peak(engine::cube, dtype::hf32).in(TFLOPS) == doctest::Approx(74.8).epsilon(0.001));
    CHECK(a40.peak(engine::cube, dtype::int8).in(TFLOPS) == doctest::Approx(299.3).epsilon(0.001));
    CHECK(2.0 * a40.peak(engine::vector, dtype::fp32).in(TFLOPS) ==
          doctest::Approx(37.4).epsilon(0.001));
    CHECK(a40.memory.hbm_bandwidth.in(units::GBps) == doctest::Approx(696.0));
    CHECK(a40.memory.l2_size.in(units::MiB) == 6.0);
    CHECK(a40.memory.ub_size.in(units::KiB) == 100.0);
    CHECK(a40.vector.cores == 84);
    CHECK(a40.overhead.core_threads == 1536);
    // Per-SM copy rate x SMs x clock exceeds HBM, so a full-chip stream is HBM-bound.
    for (const chip* g : {&chips::a100_80gb_sxm, &chips::h100_sxm, &chips::h200_sxm, &a40}) {
        const bandwidth all_sms = g->memory.core_read_rate * g->vector.clock *
                                  static_cast<double>(g->vector.cores);
        CHECK(all_sms > g->memory.hbm_bandwidth);
    }
}

TEST_CASE("presets: shared overheads live in one place") {
    for (const auto& p : chips::all_presets()) {
        CAPTURE(p.name);
        const bool gpu = p.spec.aicpu.cores == 0;
        // Hopper (132 SMs): its heads fitted on the H200 measurements; the A40 (84 SMs): the
        // defaults with compute capability 8.6's resident threads; the A100s: the defaults.
        const bool hopper = gpu && p.spec.cube.cores == 132;
        const bool ga102 = gpu && p.spec.cube.cores == 84;
        CHECK(p.spec.overhead == (hopper  ? chips::hopper_overheads
                                  : ga102 ? chips::ga102_overheads
                                  : gpu   ? chips::default_gpu_overheads
                                          : chips::default_ascend_overheads));
    }
    CHECK(chips::default_ascend_overheads.launch.in(units::us) == doctest::Approx(3.0));
    CHECK(chips::default_ascend_overheads.per_core.in(units::us) == doctest::Approx(0.1));
    CHECK(chips::default_ascend_overheads.host_dispatch.in(units::us) == doctest::Approx(20.0));
    CHECK(chips::default_ascend_overheads.aicpu_launch.in(units::us) == doctest::Approx(73.0));
    CHECK(chips::default_gpu_overheads.per_core.in(units::us) == doctest::Approx(0.02));
    CHECK(chips::default_gpu_overheads.host_dispatch.in(units::us) == doctest::Approx(8.0));
    // Vector kernels: fitted on Ascend profiles (tests/test_head_fit.cpp checks the fit); on the
    // GPUs fitted apart from the cube head (below), though an SM runs both engines' kernels.
    CHECK(chips::default_ascend_overheads.vector_launch.in(units::us) == doctest::Approx(1.35));
    CHECK(chips::default_ascend_overheads.vector_per_core.in(units::us) == doctest::Approx(0.12));
    // The Ampere heads, fitted on vidur's A100 fit split (docs/validation.md, "The Ampere heads
    // refitted"): 7 us + 0.02 us per SM (cube), 0.5 us + 0.02 us (vector).
    CHECK(chips::default_gpu_overheads.launch.in(units::us) == doctest::Approx(7.0));
    CHECK(chips::default_gpu_overheads.vector_launch.in(units::us) == doctest::Approx(0.5));
    CHECK(chips::default_gpu_overheads.vector_per_core == chips::default_gpu_overheads.per_core);
    CHECK(chips::default_gpu_overheads.row_trip_cycles.in(units::cycle) == 1200.0);
    // Hopper: only the four head figures, the load latency, the norms' trip and the attention
    // block floor differ (tests/test_h200.cpp checks the fit). Before the load latency the heads
    // were 1.59 us (cube) and 1.37 us (vector); a reading kernel's are now 0.91 + 0.68 = 1.59 us
    // and 0.71 + 0.68 = 1.39 us, a fill's 0.71 us. The trip is the A100's before its heads were
    // refitted (3243 cycles a 4096-wide row of four trips). The block floor is the Ampere
    // presets' (fitted on vidur's A100 attention); Hopper sets none.
    overhead_spec h = chips::hopper_overheads;
    CHECK(h.launch.in(units::us) == doctest::Approx(0.91));
    CHECK(h.vector_launch.in(units::us) == doctest::Approx(0.71));
    CHECK(h.load_latency.in(units::us) == doctest::Approx(0.68));
    CHECK(h.attention_unit_cycles == cycle_count{});
    CHECK(h.attention_merge_cycles == cycle_count{});
    CHECK(h.row_trip_cycles.in(units::cycle) == doctest::Approx(3243.0 / 4.0));
    CHECK(chips::default_gpu_overheads.load_latency == duration{});
    CHECK(chips::default_gpu_overheads.attention_unit_cycles.in(units::cycle) == 4250.0);
    CHECK(chips::default_gpu_overheads.attention_merge_cycles.in(units::cycle) == 1000.0);
    h.launch = chips::default_gpu_overheads.launch;
    h.per_core = chips::default_gpu_overheads.per_core;
    h.vector_launch = chips::default_gpu_overheads.vector_launch;
    h.vector_per_core = chips::default_gpu_overheads.vector_per_core;
    h.load_latency = chips::default_gpu_overheads.load_latency;
    h.attention_unit_cycles = chips::default_gpu_overheads.attention_unit_cycles;
    h.attention_merge_cycles = chips::default_gpu_overheads.attention_merge_cycles;
    h.row_trip_cycles = chips::default_gpu_overheads.row_trip_cycles;
    CHECK(h == chips::default_gpu_overheads);
    // GA102: only the resident threads differ (CUDA guide, compute capability 8.6: 1536).
    overhead_spec g = chips::ga102_overheads;
    CHECK(g.core_threads == 1536);
    CHECK(chips::default_gpu_overheads.core_threads == 2048);
    g.core_threads = chips::default_gpu_overheads.core_threads;
    CHECK(g == chips::default_gpu_overheads);
}

TEST_CASE("presets: the list is complete, named consistently and validates") {
    const auto presets = chips::all_presets();
    CHECK(presets.size() == 12);
    std::set<std::string_view> names;
    for (const auto& p : presets) {
        CAPTURE(p.name);
        CHECK(p.spec.name.view() == p.name);
        CHECK_FALSE(p.source.empty());
        CHECK_NOTHROW((void)validate(p.spec));
        names.insert(p.name);
    }
    CHECK(names.size() == presets.size());
}

TEST_CASE("presets: lookup by every spelling") {
    struct spelling {
        std::string_view text;
        const chip* expected;
    };
    const spelling spellings[] = {
        {"ascend910b3", &chips::ascend910b3},
        {"910B3", &chips::ascend910b3},
        {"Ascend910B3", &chips::ascend910b3},
        {"ASCEND910B3", &chips::ascend910b3},
        {"ascend_910b3", &chips::ascend910b3},
        {"Ascend 910B3", &chips::ascend910b3},
        {"ascend910b1", &chips::ascend910b1},
        {"910b2", &chips::ascend910b2},
        {"910B4", &chips::ascend910b4},
        {"910_9391", &chips::ascend910_9391},
        {"9109391", &chips::ascend910_9391},
        {"Ascend910_9391", &chips::ascend910_9391},
        {"a3", &chips::ascend910_9391},
        {"A3", &chips::ascend910_9391},
        {"Ascend910_93", &chips::ascend910_9391},
        {"910A", &chips::ascend910a},
        {"Ascend910A", &chips::ascend910a},
        {"310P3", &chips::ascend310p3},
        {"ascend310p3", &chips::ascend310p3},
        {"a100", &chips::a100_80gb_sxm},
        {"A100-80GB", &chips::a100_80gb_sxm},
        {"a100_80gb", &chips::a100_80gb_sxm},
        {"A100-80GB-SXM", &chips::a100_80gb_sxm},
        {"h100", &chips::h100_sxm},
        {"A100-40GB", &chips::a100_40gb_sxm},
        {"a100-sxm4-40gb", &chips::a100_40gb_sxm},
        {"H100-SXM", &chips::h100_sxm},
        {"NVIDIA H100", &chips::h100_sxm},
        {"h200", &chips::h200_sxm},
        {"H200-SXM", &chips::h200_sxm},
        {"a40", &chips::a40_pcie},
        {"NVIDIA A40", &chips::a40_pcie},
        {"A40-48GB", &chips::a40_pcie},
    };
    for (const spelling& s : spellings) {
        CAPTURE(s.text);
        const auto found = chips::find_chip(s.text);
        REQUIRE(found.has_value());
        CHECK(*found == *s.expected);
        CHECK(chips::get_chip(s.text) == *s.expected);
        REQUIRE(chips::find_preset(s.text) != nullptr);
        CHECK(chips::find_preset(s.text)->spec == *s.expected);
    }
    CHECK(&chips::ascend_a3 == &chips::ascend910_9391);
}

TEST_CASE("presets: every name and alias selects exactly one preset") {
    for (const auto& p : chips::all_presets()) {
        std::size_t hits = 0;
        for (const auto& q : chips::all_presets()) hits += chips::matches(q, p.name) ? 1U : 0U;
        CHECK_MESSAGE(hits == 1, p.name);
        for (std::string_view alias : p.aliases) {
            if (alias.empty()) continue;
            hits = 0;
            for (const auto& q : chips::all_presets()) hits += chips::matches(q, alias) ? 1U : 0U;
            CHECK_MESSAGE(hits == 1, alias);
        }
    }
}

TEST_CASE("presets: an unknown name is an error listing the known names") {
    for (std::string_view bad : {"910B", "ascend", "b200", "", "910B3x"}) {
        CAPTURE(bad);
        CHECK_FALSE(chips::find_chip(bad).has_value());
        CHECK(chips::find_preset(bad) == nullptr);
        CHECK_THROWS_AS((void)chips::get_chip(bad), perfcast::error);
    }
    const std::string m = error_of_get_chip("tpu-v5");
    CHECK(m.find("tpu-v5") != std::string::npos);
    CHECK(m.find("get_chip") != std::string::npos);
    for (const auto& p : chips::all_presets()) {
        CAPTURE(p.name);
        CHECK(m.find(p.name) != std::string::npos);
    }
    CHECK(chips::known_chip_names().find("ascend910b1, ascend910b2") != std::string::npos);
    CHECK(m.find("did you mean") == std::string::npos);  // no preset begins "tpuv5"
    // A name that begins presets' names: they are offered.
    CHECK(error_of_get_chip("310P").find("; did you mean ascend310p3?") != std::string::npos);
    CHECK(error_of_get_chip("910B").find(
              "; did you mean ascend910b1 or ascend910b2 or ascend910b3 or ascend910b4?") !=
          std::string::npos);
    // A name too long to fold matches nothing rather than overflowing.
    CHECK_FALSE(chips::find_chip(std::string(200, 'a')).has_value());
}

}  // namespace test_presets
