// Real profiler outputs from public repositories (tests/data/profiles/real/SOURCES.md): each
// read by the kernel reader, with the expectations taken from the file's own columns, read
// independently through the plain CSV layer (csv_reader), never typed in from the reader's output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/profile/chip_evidence.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/report.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_real_profiles {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast::profile;
namespace units = perfcast::units;

namespace {

const std::string real_dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE_MESSAGE(f.good(), "cannot open ", path);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// The file's records as the CSV layer sees them (no field-count check), keyed by header name.
struct raw_file {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;  // data records, any field count
    std::vector<std::size_t> lines;

    [[nodiscard]] std::optional<std::string> get(std::size_t row, const std::string& col) const {
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (header[i] == col) {
                if (i < rows[row].size()) return rows[row][i];
                return std::nullopt;
            }
        }
        return std::nullopt;
    }
};

raw_file read_raw(const std::string& text) {
    csv_options o;
    o.check_field_count = false;
    csv_reader r(std::string_view(text), "raw", o);
    raw_file f;
    REQUIRE(r.next());
    f.header = r.record().to_strings();
    while (r.next()) {
        f.rows.push_back(r.record().to_strings());
        f.lines.push_back(r.record().line());
    }
    return f;
}

std::size_t decimals(const std::string& s) {
    const auto dot = s.find('.');
    return dot == std::string::npos ? 0 : s.size() - dot - 1;
}

/// Checks every row's recomputed cube utilization against the file's cube_utilization(%).
/// Tolerance: half a unit of the printed utilization's last digit, plus what the printed
/// duration's rounding (half a unit of its last digit) moves a utilization computed from it
/// (the profiler divides by the unrounded duration): u x 0.5 x 10^-d / duration.
std::size_t check_cube_utilization(const std::string& path, const perfcast::chip& c,
                                   const std::string& duration_column) {
    const std::string text = slurp(path);
    const raw_file raw = read_raw(text);
    const kernel_table t = parse_kernel_details(text, path);
    REQUIRE(t.skipped_count == 0);
    REQUIRE(t.rows.size() == raw.rows.size());
    std::size_t compared = 0;
    for (std::size_t i = 0; i < raw.rows.size(); ++i) {
        const auto printed = raw.get(i, "cube_utilization(%)");
        const auto dur_text = raw.get(i, duration_column);
        const std::optional<double> mine = recomputed_cube_utilization_pct(t.rows[i], c);
        if (!printed || *printed == "N/A" || printed->empty() || !mine) continue;
        const double profiled = std::stod(*printed);
        const double d = std::stod(*dur_text);
        const double tol =
            0.5 * std::pow(10.0, -static_cast<double>(decimals(*printed))) +
            profiled * 0.5 * std::pow(10.0, -static_cast<double>(decimals(*dur_text))) / d;
        INFO(path, " line ", raw.lines[i], ": profiler ", *printed, ", recomputed ", *mine);
        CHECK(std::abs(*mine - profiled) <= tol);
        ++compared;
    }
    return compared;
}

}  // namespace

TEST_CASE("real profiles: recomputed cube utilization equals the profiler's column") {
    // Three files whose cycles / (utilization x duration) is 43200 cycles per us on every row:
    // 24 cube cores at 1800 MHz, the 910B2 preset (CANN platform_config Ascend910B2.ini).
    CHECK(check_cube_utilization(real_dir + "torchnpu_helix_2026_standalone/ASCEND_PROFILER_OUTPUT/"
                                            "kernel_details.csv",
                                 perfcast::chips::ascend910b2, "Duration(us)") == 10);
    CHECK(check_cube_utilization(real_dir + "torchnpu_2025_level1_rank0_ascend_pt/"
                                            "ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                                 perfcast::chips::ascend910b2, "Duration(us)") == 185);
    CHECK(check_cube_utilization(real_dir + "msprof_helix_2026_PROF/mindstudio_profiler_output/"
                                            "op_summary_20260511093035.csv",
                                 perfcast::chips::ascend910b2, "Task Duration(us)") == 7);
    // The CANN 8.3.RC1 run: 20 cube cores (its block dims stop at 20) at 1650 MHz, a clock no
    // preset has (the 910B3 runs its cube at 1800, the 910B4 at 1500): with the 910B3 preset
    // every nonzero row is off by 1800/1650; at 1650 MHz every row agrees.
    perfcast::chip at1650 = perfcast::chips::ascend910b3;
    at1650.cube.clock = perfcast::frequency{1650.0, units::MHz};
    const std::string qwen =
        real_dir +
        "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    CHECK(check_cube_utilization(qwen, at1650, "Duration(us)") == 558);
}

TEST_CASE("real profiles: a CANN 7.0-era kernel_details (ragged line, vector ops as AI_CORE)") {
    const std::string path =
        real_dir + "torchnpu_2023_cann70_rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const std::string text = slurp(path);
    const raw_file raw = read_raw(text);
    const kernel_table t = parse_kernel_details(text, path);

    // Which records are ragged, and which AI_CORE rows carry cycles on the vector side only.
    std::vector<std::size_t> ragged;
    std::size_t vector_as_ai_core = 0;
    for (std::size_t i = 0; i < raw.rows.size(); ++i) {
        if (raw.rows[i].size() != raw.header.size()) {
            ragged.push_back(raw.lines[i]);
            continue;
        }
        if (raw.get(i, "Accelerator Core") == "AI_CORE" && raw.get(i, "aic_total_cycles") == "0" &&
            std::stod(*raw.get(i, "aiv_total_cycles")) > 0)
            ++vector_as_ai_core;
    }
    REQUIRE(ragged.size() == 1);
    CHECK(ragged[0] == 17);
    REQUIRE(t.skipped_count == 1);
    CHECK(t.skipped[0].line == 17);
    CHECK(t.skipped[0].reason == "31 fields where the header has 32");
    CHECK(t.skipped[0].excerpt.find(",FlashAttentionScore,") != std::string::npos);
    CHECK(t.rows.size() == raw.rows.size() - 1);

    REQUIRE(vector_as_ai_core > 0);
    std::size_t noted = 0;
    for (const kernel_row& r : t.rows) {
        if (!r.has_note(note_kind::engine_from_cycles)) continue;
        ++noted;
        CHECK(r.task == task_type::ai_vector_core);
        CHECK(r.task_text == "AI_CORE");
    }
    CHECK(noted == vector_as_ai_core);

    // The report carries the skipped row with its reason.
    std::istringstream in(text);
    const profile_report rep = build_report(in, path, perfcast::chips::ascend910b2);
    CHECK(rep.skipped_count == 1);
    REQUIRE(rep.skipped.size() == 1);
    CHECK(rep.skipped[0].line == 17);
    CHECK(rep.rows == t.rows.size());
}

TEST_CASE("real profiles: the CANN 8.3 file's Device_id column is read") {
    const std::string path =
        real_dir +
        "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const std::string text = slurp(path);
    const raw_file raw = read_raw(text);
    const kernel_table t = parse_kernel_details(text, path);
    REQUIRE(t.rows.size() == raw.rows.size());
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        REQUIRE(t.rows[i].device.has_value());
        CHECK(*t.rows[i].device == std::stoi(*raw.get(i, "Device_id")));
        REQUIRE(t.rows[i].step.has_value());  // Step Id, read since --step
        CHECK(*t.rows[i].step == std::stoi(*raw.get(i, "Step Id")));
    }
    // Columns the reader does not use are listed once, in header order: Step Id (the first
    // column) is read, Model ID (the third) is the first that is not.
    REQUIRE_FALSE(t.header.not_read.empty());
    CHECK(t.header.not_read.front() == "Model ID");
}

TEST_CASE("real profiles: the older op_summary layout (total_cycles, unprefixed ratios)") {
    const std::string path = real_dir + "msprof_older_layout_mskpp_ut/op_summary.csv";
    const std::string text = slurp(path);
    const raw_file raw = read_raw(text);
    const kernel_table t = parse_kernel_details(text, path);
    REQUIRE(t.rows.size() == 1);
    const kernel_row& r = t.rows[0];
    const auto num = [&raw](const char* col) { return std::stod(*raw.get(0, col)); };
    CHECK(t.header.format == kernel_format::msprof_op_summary);
    REQUIRE(r.start.has_value());
    CHECK(r.start->in_us() == doctest::Approx(num("Task Start Time")).epsilon(1e-15));
    REQUIRE(r.aic_total_cycles.has_value());
    CHECK(r.aic_total_cycles->in(units::cycle) == num("total_cycles"));
    CHECK(r.aiv_vec_ratio == num("vec_ratio"));
    CHECK(r.aic_mac_ratio == num("mac_ratio"));
    CHECK(r.aic_scalar_ratio == num("scalar_ratio"));
    CHECK(r.aic_mte2_ratio == num("mte2_ratio"));
    CHECK(r.aiv_mte3_ratio == num("mte3_ratio"));
    REQUIRE(r.memory_bound.has_value());
    CHECK(*r.memory_bound == num("memory_bound"));
    // memory_bound is mte2_ratio / max(mac_ratio, vec_ratio): 0.3887 / 0.0229 = 16.974, printed
    // 16.9677 from the unrounded ratios; the 4-decimal ratios allow +-0.5e-4 on each, which moves
    // the quotient by up to 16.97 x (0.5e-4/0.3887 + 0.5e-4/0.0229) = 0.039.
    CHECK(*r.aic_mte2_ratio / std::max(*r.aic_mac_ratio, *r.aiv_vec_ratio) ==
          doctest::Approx(*r.memory_bound).epsilon(0.039 / 16.9677));
    // icache_miss_rate, vec_time(us) and the other per-pipe times are not read.
    CHECK(std::find(t.header.not_read.begin(), t.header.not_read.end(), "icache_miss_rate") !=
          t.header.not_read.end());
}

TEST_CASE("real profiles: the chip told by the rows' own cube_utilization(%) column") {
    // 43200 cycles/us on every usable row: 24 x 1800 MHz, the 910B2 alone among the presets.
    const std::string y2025 =
        real_dir + "torchnpu_2025_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const kernel_table t = parse_kernel_details(slurp(y2025), y2025);
    const chip_evidence e = rows_chip_evidence(t.rows);
    REQUIRE(e.preset != nullptr);
    CHECK(e.preset->name == "ascend910b2");
    CHECK(e.text.find("= 43200 cycles/us") != std::string::npos);
    CHECK(e.why_no_preset.empty());

    // The CANN 8.3.RC1 run: 20 x 1650 = 33000, which no preset has: no chip, and why.
    const std::string qwen =
        real_dir +
        "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const chip_evidence q = rows_chip_evidence(parse_kernel_details(slurp(qwen), qwen).rows);
    CHECK(q.preset == nullptr);
    CHECK(q.why_no_preset.find("33000 cycles/us, which no preset has") != std::string::npos);

    // Rows made at 24 x 1850 MHz: the 910B1 and the 910_9391 both have it, so neither is chosen.
    std::vector<kernel_row> made(4);
    for (std::size_t i = 0; i < made.size(); ++i) {
        const double us = 100.0 + 10.0 * static_cast<double>(i);
        const double pct = 50.0 + static_cast<double>(i);
        made[i].task_duration = perfcast::duration{us, units::us};
        made[i].cube_utilization_pct = pct;
        made[i].aic_total_cycles =
            perfcast::cycle_count{24.0 * 1850.0 * us * pct / 100.0, units::cycle};
    }
    const chip_evidence both = rows_chip_evidence(made);
    CHECK(both.preset == nullptr);
    CHECK(both.cores_x_clock == doctest::Approx(24.0 * 1850.0).epsilon(1e-12));
    CHECK(both.agreeing == 4);
    // A chip given that the rows did not run on is said (24 x 1850 = 44400 against the 910B3's
    // 20 x 1800 = 36000); one within 0.5 % is not. What the note names, by hand.
    CHECK(chip_mismatch(perfcast::chips::ascend910b1, both).empty());
    const std::string note = chip_mismatch(perfcast::chips::ascend910b3, both);
    CHECK(note.find("= 44400 cycles/us (median of 4 rows, 4 within 1 %)") != std::string::npos);
    CHECK(note.find("but chip ascend910b3 has 20 x 1800 MHz = 36000") != std::string::npos);
    CHECK(chip_mismatch(perfcast::chips::h100_sxm, e)
              .find("ascend910b2 (24 x 1800 MHz), but chip "
                    "h100-sxm") != std::string::npos);
    CHECK(both.why_no_preset.find("as 2 presets have: ascend910b1 (24 x 1850 MHz), "
                                  "ascend910_9391 (24 x 1850 MHz)") != std::string::npos);

    // Fewer than 3 rows agreeing, or none usable (under 1 % or 10 us): no chip.
    made.resize(2);
    CHECK(rows_chip_evidence(made).preset == nullptr);
    CHECK(chip_mismatch(perfcast::chips::ascend910b3, rows_chip_evidence(made))
              .empty());  // too few rows
    made[0].task_duration = perfcast::duration{9.0, units::us};
    made[1].cube_utilization_pct = 0.5;
    const chip_evidence none = rows_chip_evidence(made);
    CHECK(none.preset == nullptr);
    CHECK(none.text.empty());
}

}  // namespace test_real_profiles
