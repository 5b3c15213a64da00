// examples/perfcast/common.hpp: flags several subcommands share: the chip (--chip, --chip-ini)
// and the model parameters (--params).
#pragma once

#include <optional>
#include <string>

#include <perfcast/chips.hpp>
#include <perfcast/io/ini.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/profile/ops.hpp>

#include "cli.hpp"

namespace perfcast::cli {

inline constexpr option chip_option{"chip", "C", "chip preset (see 'perfcast chips')"};
inline constexpr option chip_ini_option{
    "chip-ini", "FILE", "CANN platform_config .ini of the installed chip (--chip: its base)"};
inline constexpr option params_option{"params", "FILE",
                                      "model parameters from 'perfcast calibrate -o FILE'"};

/// The chip from --chip-ini FILE (base: --chip, or the default for the file's core family) or
/// --chip C; `fallback` when neither is given (empty: an error).
[[nodiscard]] inline chip chip_from_args(const parsed_args& a, std::string_view fallback = {}) {
    const auto preset = a.get("chip");
    std::optional<chip> base;
    if (preset) base = chips::get_chip(*preset);  // an unknown name lists the known ones
    if (const auto ini = a.get("chip-ini")) {
        return base ? io::chip_from_ini(*ini, *base) : io::chip_from_ini(*ini);
    }
    if (base) return *base;
    if (fallback.empty()) throw usage_error("needs --chip C or --chip-ini FILE");
    return chips::get_chip(fallback);
}

/// The calibration from --params FILE, or the defaults.
[[nodiscard]] inline profile::calibration params_from_args(const parsed_args& a) {
    if (const auto f = a.get("params")) return io::read_params_file(*f);
    return {};
}

}  // namespace perfcast::cli
