// perfcast/profile/device_info.hpp: what msprof's per-device info file says about the chip, and
// the preset it names (runtime; reads one small JSON file).
//
// An msprof collection folder PROF_<...>/ holds device_<N>/info.json.<N> (and host/info.json.0),
// one JSON object that msprof writes when it starts collecting:
//
//   {"DeviceInfo": [{"id": 0, "ai_core_num": 24, "aiv_num": 48, "aic_frequency": "1800",
//                    "aiv_frequency": "1800", "hwts_frequency": "50", ...}],
//    "devices": "0", "platform_version": "...", ...}
//
// Layout from msprof's own writer and reader (public source):
// - writer: hicann/runtime, src/dfx/msprof/collector/dvvp/task_handle/src/info_json.cpp,
//   InfoJson::EncodeInfoMainJson, infoMainJson["DeviceInfo"][i]["ai_core_num"] (int64),
//   ["aiv_num"] (int64), ["aic_frequency"] / ["aiv_frequency"] / ["hwts_frequency"] (std::string,
//   MHz) for each device of the collection;
// - reader: kali20gakki/msprof, analysis/csrc/domain/services/device_context/device_info.cpp,
//   DeviceContext::GetInfoJson, which reads DeviceInfo[0]'s ai_core_num and aiv_num as numbers
//   and aic_frequency as a string parsed to an integer (files named info.json*, not *.done).
// aic_frequency is a string in those versions; a number is accepted too, and so are ai_core_num
// and aiv_num written as numeric strings. As msprof's reader does, the first DeviceInfo entry is
// read. No real info.json from a public repository was found to check in (2026-12-02): the tests
// use files built in the layout above.
//
// The chip: the one preset whose cube cores and AI core clock are ai_core_num and aic_frequency
// (within 0.5 MHz). Core count and clock are both stated here, so 20 x 1650 and 22 x 1500 are
// told apart (the cube_utilization(%) column cannot); 910B1 and 910_9391 (24 x 1850) are not.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "../chips.hpp"
#include "../error.hpp"
#include "../io/json_reader.hpp"
#include "../io/parse.hpp"
#include "../units.hpp"
#include "chip_evidence.hpp"
#include "csv.hpp"

namespace perfcast::profile {

/// DeviceInfo[0] of an msprof info.json: what the chip was when msprof collected.
struct device_info {
    std::string source;                      // the file, for messages
    std::optional<int> id;                   // "id"
    std::optional<int> cube_cores;           // "ai_core_num"
    std::optional<int> vector_cores;         // "aiv_num" (0 on chips without separate ones)
    std::optional<frequency> ai_core_clock;  // "aic_frequency", MHz
    std::size_t entries = 0;                 // DeviceInfo entries in the file
    std::string problems;  // fields present but unreadable ("aic_frequency 'fast' is not ...")
};

namespace detail {

/// A number, or a string holding one (msprof writes the clocks as strings); nothing, with the
/// reason in `problems`, for anything else.
[[nodiscard]] inline std::optional<double> info_number(io::json_cursor& c, std::string_view field,
                                                       std::string& scratch,
                                                       std::string& problems) {
    std::string text;
    switch (c.peek()) {
        case io::json_cursor::kind::number: text = std::string(c.number()); break;
        case io::json_cursor::kind::string: text = std::string(io::trim(c.string(scratch))); break;
        default:
            c.skip_value();
            problems += (problems.empty() ? "" : "; ") + std::string(field) +
                        " is neither a number nor a numeric string";
            return std::nullopt;
    }
    double v = 0;
    if (io::parse_double(text, v) != io::number_status::ok) {
        problems += (problems.empty() ? "" : "; ") + std::string(field) + " '" +
                    parse_error::printable(text, 40) + "' is not a number";
        return std::nullopt;
    }
    return v;
}

/// A count in [0, 100000] that is a whole number, or nothing with the reason.
[[nodiscard]] inline std::optional<int> info_count(std::optional<double> v, std::string_view field,
                                                   std::string& problems) {
    if (!v) return std::nullopt;
    if (*v < 0 || *v > 100000 || std::floor(*v) != *v) {
        problems += (problems.empty() ? "" : "; ") + std::string(field) + " " +
                    ::perfcast::detail::number_text(*v) + " is not a core count";
        return std::nullopt;
    }
    return static_cast<int>(*v);
}

}  // namespace detail

/// Reads an info.json text. Throws parse_error (naming `source`, with line and column) when the
/// text is not JSON or its root is not an object; a field that is absent or unreadable is left
/// empty (unreadable ones said in `problems`).
[[nodiscard]] inline device_info parse_device_info(std::string_view text, std::string source) {
    device_info d;
    d.source = source;
    io::json_cursor c(text, std::move(source));
    if (c.peek() != io::json_cursor::kind::object) c.fail("expected an object (msprof info.json)");
    c.begin_object();
    std::string key;
    std::string field;
    std::string scratch;
    bool seen = false;
    while (c.next_member(key)) {
        if (key != "DeviceInfo" || seen || c.peek() != io::json_cursor::kind::array) {
            c.skip_value();
            continue;
        }
        seen = true;
        c.begin_array();
        while (c.next_element()) {
            ++d.entries;
            if (d.entries > 1 || c.peek() != io::json_cursor::kind::object) {
                c.skip_value();
                continue;
            }
            c.begin_object();
            while (c.next_member(field)) {
                if (field == "ai_core_num") {
                    d.cube_cores = detail::info_count(
                        detail::info_number(c, field, scratch, d.problems), field, d.problems);
                } else if (field == "aiv_num") {
                    d.vector_cores = detail::info_count(
                        detail::info_number(c, field, scratch, d.problems), field, d.problems);
                } else if (field == "id") {
                    d.id = detail::info_count(detail::info_number(c, field, scratch, d.problems),
                                              field, d.problems);
                } else if (field == "aic_frequency") {
                    const auto mhz = detail::info_number(c, field, scratch, d.problems);
                    if (mhz && *mhz > 0 && *mhz < 100000) {
                        d.ai_core_clock = frequency{*mhz, units::MHz};
                    } else if (mhz) {
                        d.problems += (d.problems.empty() ? "" : "; ") +
                                      std::string("aic_frequency ") +
                                      ::perfcast::detail::number_text(*mhz) + " is not a clock";
                    }
                } else {
                    c.skip_value();
                }
            }
        }
    }
    c.end();
    return d;
}

/// Reads the info.json file at `path` (errors name the file).
[[nodiscard]] inline device_info read_device_info_file(const std::string& path) {
    return parse_device_info(read_file_text(path, "read_device_info_file"), path);
}

/// What `d` says about the chip: the text ("DeviceInfo: ai_core_num 24, aiv_num 48,
/// aic_frequency 1800 MHz"), and the preset whose cube cores and clock those are, when exactly
/// one preset has them; otherwise why not.
[[nodiscard]] inline chip_evidence info_chip_evidence(const device_info& d) {
    chip_evidence e;
    const auto mhz_text = [](double v) { return ::perfcast::detail::number_text(std::round(v)); };
    std::string said;
    if (d.cube_cores) said = "ai_core_num " + std::to_string(*d.cube_cores);
    if (d.vector_cores)
        said +=
            (said.empty() ? "" : ", ") + std::string("aiv_num ") + std::to_string(*d.vector_cores);
    if (d.ai_core_clock)
        said += (said.empty() ? "" : ", ") + std::string("aic_frequency ") +
                mhz_text(d.ai_core_clock->in(units::MHz)) + " MHz";
    if (!said.empty()) e.text = "DeviceInfo: " + said;

    const std::string from = "the device info file " + d.source;
    if (!d.cube_cores || !d.ai_core_clock) {
        std::string missing;
        if (d.entries == 0) {
            missing = "no DeviceInfo entry";
        } else {
            if (!d.cube_cores) missing = "no ai_core_num";
            if (!d.ai_core_clock)
                missing += (missing.empty() ? "" : " and ") + std::string("no aic_frequency");
        }
        e.why_no_preset = from + " gives " + missing +
                          " (the cube cores and clock that would "
                          "tell the chip)";
        if (!d.problems.empty()) e.why_no_preset += ": " + d.problems;
        return e;
    }
    const int cores = *d.cube_cores;
    const double mhz = d.ai_core_clock->in(units::MHz);
    std::string fits;
    std::string same_cores;
    const chips::named_chip* only = nullptr;
    std::size_t count = 0;
    for (const chips::named_chip& p : chips::all_presets()) {
        if (p.spec.cube.cores != cores) continue;
        const double clock = p.spec.cube.clock.in(units::MHz);
        const std::string entry = std::string(p.name) + " (" + std::to_string(p.spec.cube.cores) +
                                  " x " + mhz_text(clock) + " MHz)";
        if (std::abs(clock - mhz) > 0.5) {
            same_cores += (same_cores.empty() ? "" : ", ") + entry;
            continue;
        }
        fits += (fits.empty() ? "" : ", ") + entry;
        only = &p;
        ++count;
    }
    const std::string stated = std::to_string(cores) + " cube cores at " + mhz_text(mhz) + " MHz";
    if (count == 1) {
        e.preset = only;
        e.text += ": " + fits;
    } else if (count == 0) {
        e.why_no_preset =
            from + " gives " + stated + ", which no preset has (describe the chip with --chip-ini)";
        if (!same_cores.empty()) e.why_no_preset += "; at other clocks: " + same_cores;
    } else {
        e.why_no_preset =
            from + " gives " + stated + ", as " + std::to_string(count) + " presets have: " + fits;
    }
    return e;
}

}  // namespace perfcast::profile
