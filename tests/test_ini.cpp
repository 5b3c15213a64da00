// Tests for perfcast/io/ini.hpp: the CANN platform_config syntax, and chip_from_ini against the
// presets of chips/ascend.hpp (which cite the same files).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <perfcast/chips.hpp>
#include <perfcast/io/ini.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_ini {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using perfcast::chip;
using perfcast::dtype;
using perfcast::parse_error;
using perfcast::io::chip_from_ini;
using perfcast::io::ini_duplicates;
using perfcast::io::ini_options;
using perfcast::io::parse_ini;
using perfcast::io::platform_from_ini;
namespace units = perfcast::units;

namespace {

parse_error ini_error(const std::string& text, bool to_chip = false) {
    try {
        const auto f = parse_ini(text, "t.ini");
        if (to_chip) (void)chip_from_ini(f);
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error for: ", text);
    return parse_error("x", "", 0, 0, "", "");
}

// The keys of Ascend910A.ini (CANN 8.1.RC1) that chip_from_ini reads, verbatim.
constexpr const char* ascend910a_excerpt =
    "# [Platform Info configuration begin]\n"
    "[version]\nSoC_version=Ascend910A\nShort_SoC_version=Ascend910\nAIC_version=AIC-C-100\n\n"
    "[SoCInfo]\nai_core_cnt=32\nvector_core_cnt=0\nai_cpu_cnt=4\nmemory_type=\nmemory_size=\n"
    "l2_type=0\nl2_size=33554432\ncore_type_list=AICore\n\n"
    "[AICoreSpec]\ncube_freq=1000\ncube_m_size=16\ncube_n_size=16\ncube_k_size=16\n"
    "vec_calc_size=128\nl0_a_size=65536\nl0_b_size=65536\nl0_c_size=262144\nl1_size=1048576\n"
    "ub_size=262144\nubblock_size=32\n\n"
    "[AICoreMemoryRates]\nddr_rate=32\nddr_read_rate=32\nddr_write_rate=32\nl2_rate=110\n"
    "l2_read_rate=110\nl2_write_rate=86\nub_to_l2_rate=64\nub_to_ddr_rate=64\n\n"
    "[DtypeMKN]\nDefault=16,16,16\nDT_INT8=16,32,16\n";

// The keys of Ascend310P3.ini (CANN 8.1.RC1) that chip_from_ini reads, verbatim, with CRLF line
// ends to exercise those too.
constexpr const char* ascend310p3_excerpt =
    "[version]\r\nSoC_version=Ascend310P3\r\nAIC_version=AIC-M-200\r\n\r\n"
    "[SoCInfo]\r\nai_core_cnt=8\r\nvector_core_cnt=7\r\nmix_vector_core_cnt=15\r\n"
    "ai_cpu_cnt=16\r\nmemory_size=24000000000\r\nl2_size=16777216\r\n"
    "core_type_list=AICore,VectorCore\r\n\r\n"
    "[AICoreSpec]\r\ncube_freq=1060\r\ncube_m_size=16\r\ncube_n_size=16\r\ncube_k_size=16\r\n"
    "vec_calc_size=128\r\nl0_a_size=65536\r\nl0_b_size=65536\r\nl0_c_size=262144\r\n"
    "l1_size=1048576\r\nub_size=262144\r\nubblock_size=32\r\n\r\n"
    "[AICoreMemoryRates]\r\nddr_rate=17\r\nddr_read_rate=17\r\nl2_rate=114\r\n"
    "l2_read_rate=114\r\nub_to_ddr_rate=17\r\n\r\n"
    "[DtypeMKN]\r\nDefault=16,16,16\r\nDT_INT8=16,32,16\r\n\r\n"
    "[VectorCoreSpec]\r\nvec_freq=1000\r\nvec_calc_size=128\r\nub_size=262144\r\n"
    "ubblock_size=32\r\n\r\n"
    "[VectorCoreMemoryRates]\r\nddr_rate=9\r\nddr_read_rate=9\r\nl2_read_rate=57\r\n"
    "ub_to_ddr_rate=9\r\n";

void check_core_fields(const chip& got, const chip& want) {
    CHECK(got.cube.cores == want.cube.cores);
    CHECK(got.vector.cores == want.vector.cores);
    CHECK(got.aicpu.cores == want.aicpu.cores);
    CHECK(got.cube.clock == want.cube.clock);
    CHECK(got.vector.clock == want.vector.clock);
    CHECK(got.memory.l2_size == want.memory.l2_size);
    CHECK(got.memory.ub_size == want.memory.ub_size);
    CHECK(got.memory.hbm_size == want.memory.hbm_size);
    CHECK(got.memory.core_read_rate == want.memory.core_read_rate);
    CHECK(got.memory.core_write_rate == want.memory.core_write_rate);
    CHECK(got.alignment == want.alignment);
}

}  // namespace

TEST_CASE("ini: sections, keys, comments, blank lines, CRLF, BOM") {
    const auto f = parse_ini(
        "\xEF\xBB\xBF# comment\r\n; another\r\n\r\n[a]\r\n k = v 1 \r\nempty=\r\n"
        "hash=x#y\r\n[ b ]\r\nk=2\r\n[a]\r\nlater=3\r\n");
    REQUIRE(f.sections().size() == 2);
    REQUIRE(f.find("a", "k") != nullptr);
    CHECK(f.find("a", "k")->text == "v 1");
    CHECK(f.find("a", "k")->line == 5);
    CHECK(f.find("a", "k")->column == 6);
    CHECK(f.find("a", "empty")->text.empty());
    CHECK(f.find("a", "hash")->text == "x#y");  // only full-line comments
    CHECK(f.find("b", "k")->text == "2");
    CHECK(f.find("a", "later")->text == "3");  // a repeated section merges
    CHECK(f.find("a", "missing") == nullptr);
    CHECK(f.find("nope", "k") == nullptr);
}

TEST_CASE("ini: syntax errors carry the file, line, column and text") {
    SUBCASE("duplicate key: an error by default, naming both lines") {
        const parse_error e = ini_error("[s]\nk=1\n\nk=2\n");
        CHECK(e.source() == "t.ini");
        CHECK(e.line() == 4);
        CHECK(e.column() == 1);
        CHECK(std::string(e.what()).find("[s] k given twice (first on line 2)") !=
              std::string::npos);
        // The reader names itself by its public name (issue 14: read_* from a path or stream,
        // parse_* from text; it said parse_ini).
        CHECK(std::string(e.what()).starts_with("perfcast::read_ini: t.ini:4:1:"));
    }
    SUBCASE("duplicate key with last_wins") {
        ini_options o;
        o.duplicates = ini_duplicates::last_wins;
        const auto f = parse_ini("[s]\nk=1\nk=2\n", "t.ini", o);
        CHECK(f.find("s", "k")->text == "2");
        CHECK(f.find("s", "k")->line == 3);
    }
    SUBCASE("the same key in two sections is not a duplicate") {
        const auto f = parse_ini("[a]\nub_size=1\n[b]\nub_size=2\n");
        CHECK(f.find("a", "ub_size")->text == "1");
        CHECK(f.find("b", "ub_size")->text == "2");
    }
    SUBCASE("a line that is nothing") {
        const parse_error e = ini_error("[s]\n  just words\n");
        CHECK(e.line() == 2);
        CHECK(e.column() == 3);
        CHECK(e.text() == "just words");
    }
    SUBCASE("unclosed section, text after ']', empty section, empty key") {
        CHECK(ini_error("[s\n").line() == 1);
        CHECK(ini_error("[s] x\n").column() == 4);
        CHECK(ini_error("\n[]\n").line() == 2);
        CHECK(ini_error("[s]\n=3\n").line() == 2);
    }
}

TEST_CASE("ini: chip_from_ini on the shipped files equals the presets") {
    // Every preset whose CANN file is in tests/data/platform_config/ (copies of CANN 8.1.RC1,
    // see tests/data/README.md). With the preset as base, the whole chip must come out equal
    // (the file supplies what it has, the preset the rest); with the default base, the fields
    // the file holds must.
    const struct {
        const char* file;
        const chip& preset;
    } cases[] = {
        {"Ascend910B1.ini", perfcast::chips::ascend910b1},
        {"Ascend910B2.ini", perfcast::chips::ascend910b2},
        {"Ascend910B3.ini", perfcast::chips::ascend910b3},
        {"Ascend910B4.ini", perfcast::chips::ascend910b4},
        {"Ascend910_9391.ini", perfcast::chips::ascend910_9391},
        {"Ascend910A.ini", perfcast::chips::ascend910a},
        {"Ascend310P3.ini", perfcast::chips::ascend310p3},
    };
    int checked = 0;
    for (const auto& c : cases) {
        const std::string path =
            std::string(PERFCAST_SOURCE_DIR "/tests/data/platform_config/") + c.file;
        if (!std::filesystem::exists(path)) continue;
        CAPTURE(path);
        chip from_preset_base = chip_from_ini(path, c.preset);
        // The name is the file's SoC_version as written (Ascend910B4 for ascend910b4).
        CHECK(perfcast::detail::iequals(from_preset_base.name.view(), c.preset.name.view()));
        from_preset_base.name = c.preset.name;
        CHECK(from_preset_base == c.preset);
        // The default base is the preset the SoC_version names: the whole chip again (the
        // family's preset once gave a 910B4 the 910B1's HBM bandwidth).
        chip from_default_base = chip_from_ini(path);
        check_core_fields(from_default_base, c.preset);
        from_default_base.name = c.preset.name;
        CHECK(from_default_base == c.preset);
        ++checked;
    }
    MESSAGE(checked, " shipped ini files checked against their presets");
    CHECK(checked >= 3);  // B1, B2, B3 are shipped today
}

TEST_CASE("ini: 910B3 values, names and what came from the base") {
    const auto p = platform_from_ini(perfcast::io::read_ini_file(
        PERFCAST_SOURCE_DIR "/tests/data/platform_config/Ascend910B3.ini"));
    CHECK(p.soc_version == "Ascend910B3");
    CHECK(p.spec.name.view() == "Ascend910B3");
    CHECK(p.layout == perfcast::io::ini_core_layout::split);
    CHECK(p.spec.cube.cores == 20);
    CHECK(p.spec.vector.cores == 40);
    CHECK(p.spec.cube.clock.in(units::MHz) == 1800.0);
    CHECK(p.spec.memory.core_read_rate.in(units::B_per_cycle) == 32.0);
    CHECK(p.spec.memory.core_write_rate.in(units::B_per_cycle) == 64.0);
    CHECK(p.spec.memory.l2_read_rate.in(units::B_per_cycle) == 110.0);
    CHECK(p.spec.alignment.in(units::B) == 32.0);
    CHECK(p.cube_fractal.m == 16);
    CHECK(p.cube_fractal.k == 16);
    REQUIRE(p.int8_fractal);
    CHECK(p.int8_fractal->k == 32);
    CHECK(p.vec_calc_size == 128);
    CHECK_FALSE(p.standalone_vector);
    const auto has = [&p](std::string_view f) {
        for (const auto& x : p.from_base) {
            if (x == f) return true;
        }
        return false;
    };
    CHECK(has("memory.hbm_bandwidth"));
    CHECK(has("link"));
    CHECK_FALSE(has("memory.hbm_size"));
}

TEST_CASE("ini: 910A (vector_core_cnt=0, empty memory_size) -> combined cores, base memory") {
    const auto p = platform_from_ini(parse_ini(ascend910a_excerpt, "Ascend910A.ini"));
    CHECK(p.layout == perfcast::io::ini_core_layout::combined);
    CHECK(p.spec.cube.cores == 32);
    CHECK(p.spec.vector.cores == 32);  // each AI core's vector unit
    CHECK(p.spec.cube.clock.in(units::MHz) == 1000.0);
    // The default base for AIC-C-100 is the 910A preset, so its 32 GiB fills the empty size.
    CHECK(p.spec.memory.hbm_size == perfcast::chips::ascend910a.memory.hbm_size);
    check_core_fields(p.spec, perfcast::chips::ascend910a);
    chip whole = chip_from_ini(parse_ini(ascend910a_excerpt), perfcast::chips::ascend910a);
    whole.name = perfcast::chips::ascend910a.name;
    CHECK(whole == perfcast::chips::ascend910a);
}

TEST_CASE("ini: 310P3 (a second [VectorCore...] section) -> standalone vector cores kept aside") {
    const auto p = platform_from_ini(parse_ini(ascend310p3_excerpt, "Ascend310P3.ini"));
    CHECK(p.layout == perfcast::io::ini_core_layout::combined);
    CHECK(p.spec.vector.cores == 8);  // the AI cores' vector units, as the preset
    CHECK(p.spec.vector.clock.in(units::MHz) == 1060.0);
    CHECK(p.spec.memory.ub_size.in(units::B) == 262144.0);  // [AICoreSpec], not the 2nd
    CHECK(p.spec.memory.core_read_rate.in(units::B_per_cycle) == 17.0);
    REQUIRE(p.standalone_vector);
    CHECK(p.standalone_vector->cores == 7);
    CHECK(p.standalone_vector->clock.in(units::MHz) == 1000.0);
    CHECK(p.standalone_vector->core_read_rate.in(units::B_per_cycle) == 9.0);
    check_core_fields(p.spec, perfcast::chips::ascend310p3);
    chip whole = chip_from_ini(parse_ini(ascend310p3_excerpt), perfcast::chips::ascend310p3);
    whole.name = perfcast::chips::ascend310p3.name;
    CHECK(whole == perfcast::chips::ascend310p3);
}

TEST_CASE("ini: a split chip with its own [VectorCoreSpec] clock (910_95 style)") {
    const auto c =
        chip_from_ini(parse_ini("[SoCInfo]\nai_core_cnt=32\ncube_core_cnt=32\nvector_core_cnt=64\n"
                                "cube_vector_combine=fuse,split\n[AICoreSpec]\ncube_freq=1650\n"
                                "[VectorCoreSpec]\nvec_freq=1500\n"));
    CHECK(c.cube.cores == 32);
    CHECK(c.vector.cores == 64);
    CHECK(c.vector.clock.in(units::MHz) == 1500.0);
    // Everything else from the default base (AIC_version absent -> the 910B1 preset).
    CHECK(c.memory.hbm_bandwidth == perfcast::chips::ascend910b1.memory.hbm_bandwidth);
    CHECK(c.memory.ub_size == perfcast::chips::ascend910b1.memory.ub_size);
}

TEST_CASE("ini: bf16 vector arithmetic follows the file's intrinsic map") {
    const std::string head = "[SoCInfo]\nai_core_cnt=20\n[AICoreSpec]\ncube_freq=1800\n";
    // Bases that read bf16 the other way, so that a result can only come from the file.
    chip native_base = perfcast::chips::ascend910b1;
    native_base.vector.bf16_computed_as = dtype::bf16;
    const chip& widened_base = perfcast::chips::ascend910b1;  // fp32
    REQUIRE(widened_base.vector.bf16_computed_as == dtype::fp32);
    const auto from = [&head](const std::string& map, const chip& base) {
        return platform_from_ini(parse_ini(head + map, "t.ini"), base);
    };
    const auto in_from_base = [](const perfcast::io::ini_platform& p) {
        for (const auto& x : p.from_base) {
            if (x == "vector.bf16_computed_as") return true;
        }
        return false;
    };
    // The 910B3 file lists bf16 only in vconv: fp32 arithmetic, over a base that says bf16.
    const auto b3 =
        platform_from_ini(perfcast::io::read_ini_file(
                              PERFCAST_SOURCE_DIR "/tests/data/platform_config/Ascend910B3.ini"),
                          native_base);
    CHECK(b3.spec.vector.bf16_computed_as == dtype::fp32);
    CHECK_FALSE(in_from_base(b3));
    // From the map alone, over a base that reads bf16 the other way: vadd without it and vconv
    // converting it -> fp32; a future file whose vadd takes bf16 -> bf16.
    struct map_case {
        const char* map;
        const chip* base;
        dtype expected;
    };
    for (const map_case& m :
         {map_case{"[AICoreintrinsicDtypeMap]\n1=Intrinsic_vadd|float16,float32\n"
                   "24=Intrinsic_vconv|f322f16,bf162f32,f322bf16r\n",
                   &native_base, dtype::fp32},
          map_case{"[AICoreintrinsicDtypeMap]\n0=Intrinsic_vconv|f322f16,bf162f32\n"
                   "3=Intrinsic_vadd|float16,float32,bfloat16\n",
                   &widened_base, dtype::bf16}}) {
        CAPTURE(m.map);
        const auto p = from(m.map, *m.base);
        CHECK(p.spec.vector.bf16_computed_as == m.expected);
        CHECK_FALSE(in_from_base(p));
    }
    // No map, or a map without bf16 anywhere (910A, a trimmed file): the base's, and said so.
    for (const std::string& map :
         {std::string(), std::string("[AICoreintrinsicDtypeMap]\n"
                                     "1=Intrinsic_vadd|float16,float32\n")}) {
        CAPTURE(map);
        const auto kept = from(map, native_base);
        CHECK(kept.spec.vector.bf16_computed_as == dtype::bf16);
        CHECK(in_from_base(kept));
    }
    // The factor of assumed operation counts is never in a file: the base's, listed as such.
    chip other_factor = native_base;
    other_factor.vector.uncounted_work = 1.75;
    other_factor.cube.narrow_rows_2 = 0.5;  // nor the GEMM shares of unaligned rows
    other_factor.cube.attention_share = 0.7;  // nor the attention kernels' share
    other_factor.cube.attention_unfilled_share = 0.9;
    other_factor.vector.walk_rate = 2.5;    // nor the rates of walked element-wise kernels
    other_factor.vector.walk_head = perfcast::duration{0.3, units::us};
    other_factor.vector.softmax_block_rate = 0.9;  // nor the softmax kernels' rates
    other_factor.vector.attention_softmax_rate = 48;  // nor a fused attention's softmax rate
    other_factor.vector.index_select_rate = 0.5;      // nor index_select's element rate
    other_factor.vector.index_select_trip = perfcast::duration{0.4, units::us};  // nor its trip
    const auto p = from("", other_factor);
    CHECK(p.spec.vector.uncounted_work == 1.75);
    CHECK(p.spec.cube.narrow_rows_2 == 0.5);
    CHECK(p.spec.cube.attention_share == 0.7);
    CHECK(p.spec.cube.attention_unfilled_share == 0.9);
    CHECK(p.spec.vector.walk_rate == 2.5);
    CHECK(p.spec.vector.walk_head.in(units::us) == doctest::Approx(0.3));
    CHECK(p.spec.vector.softmax_block_rate == 0.9);
    CHECK(p.spec.vector.attention_softmax_rate == 48);
    CHECK(p.spec.vector.index_select_rate == 0.5);
    CHECK(p.spec.vector.index_select_trip.in(units::us) == doctest::Approx(0.4));
    for (const char* field :
         {"vector.fp8_computed_as", "vector.uncounted_work", "cube.narrow_rows_4",
          "cube.narrow_rows_2", "cube.attention_share", "cube.attention_unfilled_share",
          "vector.walk_rate", "vector.transpose_rate", "vector.walk_head",
          "vector.softmax_warp_rate", "vector.softmax_block_rate", "vector.attention_softmax_rate",
          "vector.index_select_rate", "vector.index_select_trip"}) {
        CAPTURE(field);
        CHECK(std::find(p.from_base.begin(), p.from_base.end(), field) != p.from_base.end());
    }
}

TEST_CASE("ini: bad values and missing keys name the file, line, key and value") {
    const std::string head =
        "[SoCInfo]\nai_core_cnt=20\ncube_core_cnt=20\nvector_core_cnt=40\n"
        "cube_vector_combine=split\n[AICoreSpec]\n";
    SUBCASE("missing cube_freq") {
        const parse_error e = ini_error(head + "ub_size=1\n", true);
        CHECK(std::string(e.what()).find("missing required key [AICoreSpec] cube_freq") !=
              std::string::npos);
        CHECK(std::string(e.what()).find("t.ini") != std::string::npos);
    }
    SUBCASE("missing ai_core_cnt") {
        const parse_error e = ini_error("[AICoreSpec]\ncube_freq=1800\n", true);
        CHECK(std::string(e.what()).find("[SoCInfo] ai_core_cnt") != std::string::npos);
    }
    SUBCASE("non-numeric value") {
        const parse_error e = ini_error(head + "cube_freq=fast\n", true);
        CHECK(e.line() == 7);
        CHECK(e.column() == 11);
        CHECK(e.text() == "fast");
        CHECK(std::string(e.what()).find("[AICoreSpec] cube_freq: expected a finite number > 0") !=
              std::string::npos);
    }
    SUBCASE("negative value") {
        const parse_error e = ini_error(head + "cube_freq=1800\nub_size=-5\n", true);
        CHECK(e.line() == 8);
        CHECK(e.text() == "-5");
    }
    SUBCASE("zero or negative core count") {
        CHECK(ini_error("[SoCInfo]\nai_core_cnt=0\n[AICoreSpec]\ncube_freq=1\n", true).line() == 2);
        CHECK(ini_error("[SoCInfo]\nai_core_cnt=-3\n[AICoreSpec]\ncube_freq=1\n", true).text() ==
              "-3");
    }
    SUBCASE("a clock outside 1 .. 10000 MHz is named at its line, in MHz") {
        const parse_error e = ini_error(head + "cube_freq=0.5\n", true);
        CHECK(e.line() == 7);
        CHECK(e.text() == "0.5");
        CHECK(std::string(e.what()).find("[AICoreSpec] cube_freq: expected a clock in MHz, 1 .. "
                                         "10000") != std::string::npos);
        CHECK(ini_error(head + "cube_freq=1800\n[VectorCoreSpec]\nvec_freq=20000\n", true).line() ==
              9);
    }
    SUBCASE("a huge number is an error, not infinity") {
        const parse_error e = ini_error(head + "cube_freq=1e400\n", true);
        CHECK(e.text() == "1e400");
    }
    SUBCASE("split chip without vector cores") {
        const parse_error e = ini_error(
            "[SoCInfo]\nai_core_cnt=20\nvector_core_cnt=0\ncube_vector_combine=split\n"
            "[AICoreSpec]\ncube_freq=1800\n",
            true);
        CHECK(e.line() == 3);
    }
    SUBCASE("a bad [DtypeMKN] entry") {
        const parse_error e = ini_error(head + "cube_freq=1800\n[DtypeMKN]\nDefault=16,16\n", true);
        CHECK(e.line() == 9);
    }
    SUBCASE("a file that cannot be opened") {
        CHECK_THROWS_AS((void)chip_from_ini(std::string("/nonexistent/x.ini")), parse_error);
    }
}

TEST_CASE("ini: a GPU preset is no base for a platform_config") {
    // The file leaves the AI CPU's clock and the HBM bandwidth to the base: a GPU's would be
    // taken for an Ascend's (a100 has no AI CPU at all). Said, naming the base and the file.
    const std::string path = PERFCAST_SOURCE_DIR "/tests/data/platform_config/Ascend910B3.ini";
    std::string message;
    try {
        (void)chip_from_ini(path, perfcast::chips::a100_80gb_sxm);
    } catch (const perfcast::error& e) {
        message = e.what();
    }
    CHECK(message.find("base chip = a100-80gb-sxm") != std::string::npos);
    CHECK(message.find("an Ascend preset") != std::string::npos);
    CHECK(message.find("Ascend910B3.ini") != std::string::npos);
    // An Ascend base is taken.
    CHECK(chip_from_ini(path, perfcast::chips::ascend910b1).cube.cores == 20);
}

}  // namespace test_ini
