// Tests for perfcast/profile/device_info.hpp (msprof's PROF_*/device_<N>/info.json.<N>), its
// discovery beside an op table (discover.hpp, profile_source::device_info) and the command taking
// the chip from it when no --chip is given. No real info.json from a public repository was found:
// the files here are built in the layout msprof's writer and reader show (device_info.hpp names
// them), with a real op_summary copied beside them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <perfcast/profile/device_info.hpp>
#include <perfcast/profile/discover.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_device_info {

using namespace perfcast::profile;
namespace fs = std::filesystem;
namespace units = perfcast::units;
using perfcast_test::run_command;
using perfcast_test::scratch_dir;

namespace {

const fs::path helix_op_summary = PERFCAST_SOURCE_DIR
    "/tests/data/profiles/real/msprof_helix_2026_PROF/mindstudio_profiler_output/"
    "op_summary_20260511093035.csv";

/// An info.json as msprof writes it (InfoJson::EncodeInfoMainJson's fields, the clocks as
/// strings), with DeviceInfo[0]'s core counts and AI core clock as given (JSON text).
std::string info_json(std::string_view cores, std::string_view aiv, std::string_view aic_mhz) {
    return std::string(R"({"DeviceInfo":[{"id":0,"env_type":3,"ctrl_cpu_core_num":1,)") +
           R"("ctrl_cpu_endian_little":1,"ts_cpu_core_num":1,"ai_cpu_core_num":6,"ai_core_num":)" +
           std::string(cores) + R"(,"ai_cpu_core_id":1,"ai_core_id":0,"aicpu_occupy_bitmap":126,)" +
           R"("aiv_num":)" + std::string(aiv) +
           R"(,"ctrl_cpu_id":"ARMv8_Cortex_A55","ctrl_cpu":"0","ai_cpu":"1,2,3,4,5,6",)" +
           R"("hwts_frequency":"50","aic_frequency":)" + std::string(aic_mhz) +
           R"(,"aiv_frequency":"1800"}],"netCard":[],"CPU":[],"version":"1.0","devices":"0",)" +
           R"("platform":"linux","platform_version":"5","pid":"1234","rank_id":-1})";
}

void write(const fs::path& p, std::string_view text) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f << text;
}

using perfcast_test::has;

}  // namespace

TEST_CASE("device_info: DeviceInfo[0]'s cores and clock, as numbers or numeric strings") {
    const device_info d = parse_device_info(info_json("24", "48", "\"1800\""), "info.json.0");
    CHECK(d.source == "info.json.0");
    CHECK(d.entries == 1);
    CHECK(d.id == 0);
    CHECK(d.cube_cores == 24);
    CHECK(d.vector_cores == 48);
    REQUIRE(d.ai_core_clock.has_value());
    CHECK(d.ai_core_clock->in(units::MHz) == doctest::Approx(1800));
    CHECK(d.problems.empty());

    // A number for the clock, numeric strings for the counts (blanks trimmed).
    const device_info n = parse_device_info(info_json("\" 20 \"", "\"40\"", "1500"), "x");
    CHECK(n.cube_cores == 20);
    CHECK(n.vector_cores == 40);
    REQUIRE(n.ai_core_clock.has_value());
    CHECK(n.ai_core_clock->in(units::MHz) == doctest::Approx(1500));

    // Only the first entry is read, as msprof's reader does.
    const device_info two = parse_device_info(
        R"({"DeviceInfo":[{"ai_core_num":20,"aic_frequency":"1800"},{"ai_core_num":24}]})", "x");
    CHECK(two.entries == 2);
    CHECK(two.cube_cores == 20);
}

TEST_CASE("device_info: the preset with those cube cores at that clock") {
    const chip_evidence b3 = info_chip_evidence(
        parse_device_info(info_json("20", "40", "\"1800\""), "PROF_1/device_0/info.json.0"));
    REQUIRE(b3.preset != nullptr);
    CHECK(b3.preset->name == "ascend910b3");
    CHECK(b3.text ==
          "DeviceInfo: ai_core_num 20, aiv_num 40, aic_frequency 1800 MHz: ascend910b3 (20 x "
          "1800 MHz)");
    CHECK(b3.why_no_preset.empty());

    // 20 cores at 1500 MHz is the 910B4, 24 at 1800 the 910B2: cores and clock both count.
    const chip_evidence b4 =
        info_chip_evidence(parse_device_info(info_json("20", "40", "1500"), "x"));
    REQUIRE(b4.preset != nullptr);
    CHECK(b4.preset->name == "ascend910b4");
    const chip_evidence b2 =
        info_chip_evidence(parse_device_info(info_json("24", "48", "\"1800\""), "x"));
    REQUIRE(b2.preset != nullptr);
    CHECK(b2.preset->name == "ascend910b2");
}

TEST_CASE("device_info: no preset, and why") {
    // 24 x 1850 MHz is both the 910B1 and the 910_9391.
    const chip_evidence both =
        info_chip_evidence(parse_device_info(info_json("24", "48", "\"1850\""), "f"));
    CHECK(both.preset == nullptr);
    CHECK(has(both.why_no_preset,
              "the device info file f gives 24 cube cores at 1850 MHz, as 2 "
              "presets have: ascend910b1 (24 x 1850 MHz), ascend910_9391"));
    // An unknown core count; a known one at a clock no preset has.
    const chip_evidence cores =
        info_chip_evidence(parse_device_info(info_json("30", "60", "\"1800\""), "f"));
    CHECK(cores.preset == nullptr);
    CHECK(cores.why_no_preset ==
          "the device info file f gives 30 cube cores at 1800 MHz, which "
          "no preset has (describe the chip with --chip-ini)");
    const chip_evidence clock =
        info_chip_evidence(parse_device_info(info_json("20", "40", "\"1650\""), "f"));
    CHECK(clock.preset == nullptr);
    CHECK(has(clock.why_no_preset, "which no preset has"));
    CHECK(has(clock.why_no_preset, "at other clocks: ascend910b3 (20 x 1800 MHz), ascend910b4"));

    // Missing or unreadable fields.
    const chip_evidence no_clock =
        info_chip_evidence(parse_device_info(R"({"DeviceInfo":[{"ai_core_num":20}]})", "f"));
    CHECK(no_clock.preset == nullptr);
    CHECK(no_clock.text == "DeviceInfo: ai_core_num 20");
    CHECK(has(no_clock.why_no_preset, "the device info file f gives no aic_frequency"));
    const chip_evidence bad = info_chip_evidence(parse_device_info(
        R"({"DeviceInfo":[{"ai_core_num":"many","aic_frequency":"fast"}]})", "f"));
    CHECK(bad.preset == nullptr);
    CHECK(has(bad.why_no_preset, "gives no ai_core_num and no aic_frequency"));
    CHECK(has(bad.why_no_preset, "ai_core_num 'many' is not a number"));
    CHECK(has(bad.why_no_preset, "aic_frequency 'fast' is not a number"));
    const chip_evidence none = info_chip_evidence(parse_device_info(R"({"devices":"0"})", "f"));
    CHECK(none.preset == nullptr);
    CHECK(none.text.empty());
    CHECK(has(none.why_no_preset, "gives no DeviceInfo entry"));
    const chip_evidence fraction = info_chip_evidence(
        parse_device_info(R"({"DeviceInfo":[{"ai_core_num":20.5,"aic_frequency":0}]})", "f"));
    CHECK(fraction.preset == nullptr);
    CHECK(has(fraction.why_no_preset, "ai_core_num 20.5 is not a core count"));
    CHECK(has(fraction.why_no_preset, "aic_frequency 0 is not a clock"));
}

TEST_CASE("device_info: malformed JSON is a parse_error naming the file") {
    const std::string cut = info_json("20", "40", "\"1800\"").substr(0, 60);
    const std::string m = perfcast_test::message_of(
        [&] { (void)parse_device_info(cut, "PROF_1/device_0/info.json.0"); });
    CHECK(has(m, "PROF_1/device_0/info.json.0:1:"));
    CHECK_THROWS_AS((void)parse_device_info("[1, 2]", "f"), perfcast::parse_error);
    CHECK_THROWS_AS((void)parse_device_info(R"({"DeviceInfo":[]} x)", "f"), perfcast::parse_error);
    const std::string missing = perfcast_test::message_of(
        [] { (void)read_device_info_file("/nonexistent/device_0/info.json.0"); });
    CHECK(has(missing, "/nonexistent/device_0/info.json.0"));
    CHECK(has(missing, "perfcast::read_device_info_file:"));  // the reader by its public name
}

TEST_CASE("device_info: found beside an msprof table, and the command takes its chip") {
    const scratch_dir dir("device_info");
    const fs::path prof = dir.path / "PROF_000001_20260511093035_ABCDEF";
    const fs::path out = prof / "mindstudio_profiler_output";
    fs::create_directories(out);
    fs::copy_file(helix_op_summary, out / helix_op_summary.filename());
    const fs::path info = prof / "device_0" / "info.json.0";
    write(info, info_json("20", "40", "\"1800\""));
    write(prof / "device_0" / "info.json.0.done", "");
    write(prof / "host" / "info.json.0", info_json("0", "0", "\"0\""));

    const discovery d = discover_profiles(prof);
    REQUIRE(d.sources.size() == 1);
    REQUIRE(d.sources.front().device_info.has_value());
    CHECK(*d.sources.front().device_info == info);
    // Pointed at the output folder or the file itself, the PROF_ folder above is still looked in.
    const discovery inner = discover_profiles(out);
    REQUIRE(inner.sources.size() == 1);
    CHECK(inner.sources.front().device_info == info);
    const discovery file = discover_profiles(out / helix_op_summary.filename());
    REQUIRE(file.sources.size() == 1);
    CHECK(file.sources.front().device_info == info);

    // No --chip: the chip from the info file, said on stderr; the same report as with --chip.
    namespace cli = perfcast::cli;
    const std::string where = prof.generic_string();
    const auto told = run_command(cli::report_command, {where});
    REQUIRE(told.status == cli::exit_ok);
    CHECK(has(told.err, info.generic_string() +
                            ": DeviceInfo: ai_core_num 20, aiv_num 40, aic_frequency 1800 MHz: "
                            "ascend910b3 (20 x 1800 MHz); chip ascend910b3 (--chip overrides)"));
    const auto given = run_command(cli::report_command, {where, "--chip", "910B3"});
    REQUIRE(given.status == cli::exit_ok);
    CHECK(told.out == given.out);
    CHECK_FALSE(has(given.err, "info.json"));  // a chip given is not second-guessed
    // The commands that read rows through read_profile_rows choose the same way.
    const auto w = run_command(cli::whatif_command, {where, "--batch", "1", "--streams", "1",
                                                     "--cube", "20", "--vector", "40"});
    CHECK(has(w.err, "chip ascend910b3 (--chip overrides)"));

    // An info file that names no preset: a note, and the rows are asked instead.
    write(info, info_json("30", "60", "\"1800\""));
    const auto unknown = run_command(cli::report_command, {where});
    CHECK(has(unknown.err, "perfcast: note: the device info file " + info.generic_string() +
                               " gives 30 cube cores at 1800 MHz, which no preset has"));
    // A damaged one: a note naming it, not used.
    write(info, "{\"DeviceInfo\": [");
    const auto damaged = run_command(cli::report_command, {where});
    CHECK(has(damaged.err, "perfcast: note: "));
    CHECK(has(damaged.err, info.generic_string() + ":1:"));
    CHECK(has(damaged.err, "(not used to choose the chip)"));
}

TEST_CASE("device_info: which device's file") {
    const scratch_dir dir("device_info_devices");
    const fs::path prof = dir.path / "PROF_000002_x";
    // Older layout: the table under device_1/summary names its device.
    const fs::path table = prof / "device_1" / "summary" / "op_summary_0_1.csv";
    fs::create_directories(table.parent_path());
    fs::copy_file(helix_op_summary, table);
    write(prof / "device_0" / "info.json.0", info_json("24", "48", "\"1800\""));
    write(prof / "device_1" / "info.json.1", info_json("20", "40", "\"1800\""));
    const discovery d = discover_profiles(prof);
    REQUIRE(d.sources.size() == 1);
    CHECK(d.sources.front().device == 1);
    CHECK(d.sources.front().device_info == prof / "device_1" / "info.json.1");

    // A merged output with two device folders: which one is not known, so neither.
    const fs::path merged = dir.path / "PROF_000003_y";
    const fs::path out = merged / "mindstudio_profiler_output";
    fs::create_directories(out);
    fs::copy_file(helix_op_summary, out / helix_op_summary.filename());
    write(merged / "device_0" / "info.json.0", info_json("24", "48", "\"1800\""));
    write(merged / "device_1" / "info.json.1", info_json("24", "48", "\"1800\""));
    const discovery m = discover_profiles(merged);
    REQUIRE(m.sources.size() == 1);
    CHECK_FALSE(m.sources.front().device_info.has_value());

    // Outside a PROF_ folder there is nothing to look for.
    const discovery plain = discover_profiles(helix_op_summary);
    REQUIRE(plain.sources.size() == 1);
    CHECK_FALSE(plain.sources.front().device_info.has_value());
}

TEST_CASE("device_info: a torch_npu run folder's PROF_* collection") {
    // torch_npu keeps msprof's raw collection beside ASCEND_PROFILER_OUTPUT:
    // <run>_ascend_pt/PROF_*/device_<N>/info.json.<N>; the real 2025 table is copied in.
    const scratch_dir dir("device_info_torch");
    const fs::path run = dir.path / "host_123_ascend_pt";
    const fs::path table = run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv";
    fs::create_directories(table.parent_path());
    fs::copy_file(PERFCAST_SOURCE_DIR
                  "/tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt/"
                  "ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                  table);
    const fs::path info = run / "PROF_000001_20250101_abc" / "device_0" / "info.json.0";
    write(info, info_json("24", "48", "\"1800\""));
    const auto found = discover_profiles(run.string());
    REQUIRE(found.sources.size() == 1);
    REQUIRE(found.sources[0].device_info.has_value());
    CHECK(*found.sources[0].device_info == info);
    const auto r = run_command(perfcast::cli::report_command, {run.string(), "--top", "1"});
    CHECK(r.status == 0);
    CHECK(has(r.err, "info.json.0: DeviceInfo: ai_core_num 24"));
    CHECK(has(r.err, "chip ascend910b2 (--chip overrides)"));
    // Two PROF_ folders: which one is the table's is not known, so neither is used.
    write(run / "PROF_000002_20250101_def" / "device_0" / "info.json.0",
          info_json("20", "40", "\"1800\""));
    const auto two = discover_profiles(run.string());
    REQUIRE(two.sources.size() == 1);
    CHECK_FALSE(two.sources[0].device_info.has_value());
}

}  // namespace test_device_info
