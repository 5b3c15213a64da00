// perfcast/io/params_file.hpp: the calibrated-parameters text file (`perfcast calibrate -o F`,
// read back by every command's `--params F`).
//
// Format (docs/calibration.md): one `key = value` a line, `#` starts a comment, blank lines
// ignored. Keys:
//   chip                                  the chip fitted for (a preset name: letters, digits,
//                                         '-', '_', '.'; calibration::chip)
//   cube_efficiency, vector_efficiency, hbm_efficiency, overlap, misaligned_efficiency,
//   contention_per_core, l2_resident_share, l2_efficiency,
//   hbm_mix_cost                                                 numbers
//   head.cube.launch_us, head.cube.per_core_us, head.vector.launch_us, head.vector.per_core_us,
//   head.aicpu.launch_us, first_run.launch_us, first_run.per_core_us  microseconds
//   work.<OpType>                                                factor (e.g. work.LayerNormV3)
//   unseen_heavy_work                                            factor of heavy types without one
//   fixed_us.<OpType>                                            microseconds (fixed time)
//   per_core_us.<OpType>                                         microseconds per core held
//   runtime.<key>                         a runtime-path setting (runtime.hpp's keys: runtime.
//                                         buffer_us = 12, runtime.copies = aggregated, ...)
// Unknown keys, repeated keys, values not of their key's kind and out-of-range values are errors
// naming the file, line, column and key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <istream>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "../cost.hpp"
#include "../error.hpp"
#include "../profile/ops.hpp"
#include "line_source.hpp"
#include "parse.hpp"
#include "table.hpp"

namespace perfcast::io {

namespace detail {
/// Whether `name` can be a params file's `chip` value: letters, digits, '-', '_', '.', 1 to 64
/// of them (no '#', which starts a comment, nor a space).
[[nodiscard]] inline bool plain_chip_name(std::string_view name) noexcept {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_' || ch == '.';
    });
}

[[noreturn]] inline void params_error(const std::string& source, std::size_t line,
                                      std::size_t column, std::string_view what) {
    throw perfcast::error("perfcast::read_params: " + source + ":" + std::to_string(line) + ":" +
                          std::to_string(column) + ": " + std::string(what));
}
}  // namespace detail

/// Reads a parameters file from a stream. Values not in the file keep their defaults.
[[nodiscard]] inline profile::calibration read_params(std::istream& in,
                                                      const std::string& source = "<params>") {
    profile::calibration cal;
    model_params& p = cal.params;
    std::set<std::string> seen;
    // Echoed bytes escaped and cut (a binary file or a 1 MB key stays readable).
    const auto shown = [](std::string_view t) { return parse_error::printable(t); };
    detail::line_source src(in, source, "read_params", max_line_bytes, max_small_file_bytes);
    std::string_view text;
    while (src.next(text)) {
        const std::size_t line_no = src.number();
        std::string_view line = text;
        if (const auto hash = line.find('#'); hash != std::string_view::npos)
            line = line.substr(0, hash);
        if (trim(line).empty()) continue;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos)
            detail::params_error(source, line_no, 1,
                                 "expected 'key = value', got '" + shown(trim(line)) + "'");
        const std::string key(trim(line.substr(0, eq)));
        const std::string_view value_text = line.substr(eq + 1);
        std::size_t value_col = eq + 2;  // 1-based column of the value's first character
        while (value_col - 1 < line.size() &&
               (line[value_col - 1] == ' ' || line[value_col - 1] == '\t'))
            ++value_col;
        if (!seen.insert(key).second)
            detail::params_error(source, line_no, 1, "key '" + shown(key) + "' given twice");
        if (key == "chip") {  // a name, not a number: the chip they were fitted for
            const std::string_view name = trim(value_text);
            if (!detail::plain_chip_name(name))
                detail::params_error(source, line_no, value_col,
                                     "key 'chip': expected a chip name (letters, digits, '-', "
                                     "'_', '.'; at most 64), got '" +
                                         shown(trim(value_text)) + "'");
            cal.chip = std::string(name);
            continue;
        }
        if (key.starts_with("runtime.")) {  // checked now, applied by whoever evaluates
            const std::string rkey = key.substr(8);
            const std::string value(trim(value_text));
            runtime_path scratch;
            try {
                apply_runtime_setting(scratch, rkey, value);
            } catch (const perfcast::error& e) {
                detail::params_error(source, line_no, value_col,
                                     "key '" + shown(key) + "': " + std::string(e.what()));
            }
            cal.runtime.push_back({rkey, value,
                                   source + ":" + std::to_string(line_no) + ":" +
                                       std::to_string(value_col)});
            continue;
        }
        double v = 0;
        try {
            v = parse_double(value_text, key);
        } catch (const perfcast::error&) {
            detail::params_error(source, line_no, value_col,
                                 "key '" + shown(key) + "': expected a number, got '" +
                                     shown(trim(value_text)) + "'");
        }
        const bool time_key = key.starts_with("head.") || key.starts_with("first_run.") ||
                              key.starts_with("fixed_us.") || key.starts_with("per_core_us.");
        if (time_key && !(v >= 0 && v < 1e9)) {
            // 1e9 us (about 17 minutes) is the bound validate(model_params) applies too.
            detail::params_error(source, line_no, value_col,
                                 "key '" + shown(key) + "': expected a time in [0, 1e9) us, got " +
                                     shown(trim(value_text)));
        }
        const auto head_key = [&](engine e, bool launch) {
            auto& h = p.head[static_cast<std::size_t>(e)];
            if (!h.set) {
                h.set = true;
                h.launch = duration{};
                h.per_core = duration{};
            }
            (launch ? h.launch : h.per_core) = duration{v, units::us};
        };
        if (key == "cube_efficiency") p.cube_efficiency = v;
        else if (key == "vector_efficiency") p.vector_efficiency = v;
        else if (key == "hbm_efficiency") p.hbm_efficiency = v;
        else if (key == "overlap") p.overlap = v;
        else if (key == "misaligned_efficiency") p.misaligned_efficiency = v;
        else if (key == "contention_per_core") p.contention_per_core = v;
        else if (key == "l2_resident_share") p.l2_resident_share = v;
        else if (key == "l2_efficiency") p.l2_efficiency = v;
        else if (key == "hbm_mix_cost") p.hbm_mix_cost = v;
        else if (key == "hbm_write_cost")
            // Written by earlier versions, whose rule weighed every byte written to HBM by it: read
            // as the mix cost it would mislead.
            detail::params_error(source, line_no, 1,
                                 "key 'hbm_write_cost' was fitted under an HBM rule perfcast no "
                                 "longer has (writes weighed against reads): re-run 'perfcast "
                                 "calibrate', which fits hbm_mix_cost (docs/calibration.md)");
        else if (key == "head.cube.launch_us") head_key(engine::cube, true);
        else if (key == "head.cube.per_core_us") head_key(engine::cube, false);
        else if (key == "head.vector.launch_us") head_key(engine::vector, true);
        else if (key == "head.vector.per_core_us") head_key(engine::vector, false);
        else if (key == "head.aicpu.launch_us") head_key(engine::aicpu, true);
        else if (key == "first_run.launch_us") p.first_run_launch = duration{v, units::us};
        else if (key == "first_run.per_core_us") p.first_run_per_core = duration{v, units::us};
        else if (key == "unseen_heavy_work") {
            if (!(v > 0 && v < 1e6))
                detail::params_error(source, line_no, value_col,
                                     "key '" + shown(key) +
                                         "': expected a factor in (0, 1e6), got " +
                                         shown(trim(value_text)));
            cal.unseen_heavy_factor = v;
        } else if ((key.starts_with("work.") || key.starts_with("fixed_us.") ||
                    key.starts_with("per_core_us.")) &&
                   !profile::valid_terms_key(key.substr(key.find('.') + 1))) {
            detail::params_error(source, line_no, 1,
                                 "key '" + shown(key) +
                                     "': expected an op type, or a type and input pattern as "
                                     "calibrate writes it, Type[same,scalar|fp32;fp32] (each "
                                     "input same, scalar, broadcast, reduced or ?)");
        } else if (key.starts_with("work.") && key.size() > 5) {
            if (!(v > 0 && v < 1e6))
                detail::params_error(source, line_no, value_col,
                                     "key '" + shown(key) +
                                         "': expected a factor in (0, 1e6), got " +
                                         shown(trim(value_text)));
            cal.work_factor[key.substr(5)] = v;
        } else if (key.starts_with("fixed_us.") && key.size() > 9) {
            cal.fixed_time[key.substr(9)] = duration{v, units::us};
        } else if (key.starts_with("per_core_us.") && key.size() > 12) {
            cal.per_core_time[key.substr(12)] = duration{v, units::us};
        } else {
            detail::params_error(source, line_no, 1,
                                 "unknown key '" + shown(key) + "' (see docs/calibration.md)");
        }
    }
    try {
        (void)validate(p);
    } catch (const perfcast::error& e) {
        throw perfcast::error(std::string(e.what()) + " (in " + source + ")");
    }
    return cal;
}

[[nodiscard]] inline profile::calibration read_params_file(const std::string& path) {
    std::ifstream f = open_input_file(path, "read_params", max_small_file_bytes);
    return read_params(f, path);
}

[[nodiscard]] inline profile::calibration parse_params(std::string_view text) {
    std::istringstream s{std::string(text)};
    return read_params(s, "<string>");
}

/// Writes every parameter (so the file documents the full model state), then the work factors
/// and fixed times per op type.
inline void write_params(std::ostream& out, const profile::calibration& cal,
                         std::string_view header = {}) {
    const model_params& p = cal.params;
    out << "# perfcast model parameters (docs/calibration.md)\n";
    if (!header.empty()) out << "# " << header << '\n';
    // A chip named by an ini may hold any text: written only if read back as written.
    if (detail::plain_chip_name(cal.chip)) out << "chip = " << cal.chip << '\n';
    else if (!cal.chip.empty())
        out << "# chip not written: its name is not letters, digits, '-', '_', '.'\n";
    const auto num = [&](std::string_view k, double v) {
        out << k << " = " << format_shortest(v) << '\n';
    };
    num("cube_efficiency", p.cube_efficiency);
    num("vector_efficiency", p.vector_efficiency);
    num("hbm_efficiency", p.hbm_efficiency);
    num("overlap", p.overlap);
    num("misaligned_efficiency", p.misaligned_efficiency);
    num("contention_per_core", p.contention_per_core);
    num("l2_resident_share", p.l2_resident_share);
    num("l2_efficiency", p.l2_efficiency);
    num("hbm_mix_cost", p.hbm_mix_cost);
    constexpr std::string_view names[] = {"cube", "vector", "aicpu"};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& h = p.head[i];
        if (!h.set) continue;
        num("head." + std::string(names[i]) + ".launch_us", h.launch.in(units::us));
        if (i < 2) num("head." + std::string(names[i]) + ".per_core_us", h.per_core.in(units::us));
    }
    num("first_run.launch_us", p.first_run_launch.in(units::us));
    num("first_run.per_core_us", p.first_run_per_core.in(units::us));
    num("unseen_heavy_work", cal.unseen_heavy_factor);
    for (const auto& [type, f] : cal.work_factor) num("work." + type, f);
    for (const auto& [type, t] : cal.fixed_time) num("fixed_us." + type, t.in(units::us));
    for (const auto& [type, t] : cal.per_core_time) num("per_core_us." + type, t.in(units::us));
    for (const runtime_setting& r : cal.runtime) out << "runtime." << r.key << " = " << r.value << '\n';
}

}  // namespace perfcast::io
