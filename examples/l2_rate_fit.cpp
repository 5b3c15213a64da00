// l2_rate_fit: what calibration's fitted L2 efficiency buys when a chip's L2 rate is wrong
// (docs/validation.md, "The L2 rate, fitted by calibration"). The preset's per-core L2 read
// rate is replaced by RATE bytes per cycle; the model is calibrated on FIT.csv with the L2
// efficiency kept and fitted (calibration_options::fit_l2_efficiency) and each fit is scored on
// TEST.csv, overall and on the MatMul rows.
//
//   l2_rate_fit CHIP RATE FIT.csv TEST.csv      (RATE: bytes per cycle, or `preset`)
//
// Example (the H100 with the L2 rate it had before issue 13, on vidur's split):
//   l2_rate_fit h100-sxm 24 h100/fit.csv h100/test.csv
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfcast/chips.hpp"
#include "perfcast/io/parse.hpp"
#include "perfcast/io/table.hpp"
#include "perfcast/profile/calibrate.hpp"
#include "perfcast/profile/kernel_details.hpp"
#include "perfcast/profile/validate.hpp"

namespace {

using namespace perfcast;

constexpr std::string_view usage =
    "Usage: l2_rate_fit CHIP RATE FIT.csv TEST.csv\n"
    "\n"
    "Replaces CHIP's per-core L2 read rate by RATE bytes per cycle (`preset`: keeps it),\n"
    "calibrates on FIT.csv with the L2 efficiency kept and fitted, and scores each on\n"
    "TEST.csv (every row, and the MatMul rows).\n";

std::string percent(double share) { return io::format_fixed(100 * share, 1) + " %"; }

/// "MAPE a %, median b %, P90 c %; MatMul (n rows) d %" of `cal` on `rows` (the MatMul part
/// from the same report's types).
std::string scores(const chip& c, const std::vector<profile::kernel_row>& rows,
                   const profile::calibration& cal) {
    const profile::error_report report = profile::score_rows(c, rows, cal);
    const profile::error_stats& all = report.overall;
    std::string s = "MAPE " + percent(all.mape) + ", median " + percent(all.median_ape) + ", P90 " +
                    percent(all.p90_ape);
    for (const profile::type_stats& t : report.by_type)
        if (t.type == "MatMul")
            s += "; MatMul (" + std::to_string(t.stats.rows) + " rows) " + percent(t.stats.mape);
    return s;
}

int run(int argc, char** argv) {
    if (argc != 5) {
        std::cerr << usage;
        return 2;
    }
    const std::optional<chip> preset = chips::find_chip(argv[1]);
    if (!preset) {
        std::cerr << "l2_rate_fit: unknown chip '" << argv[1] << "' (see 'perfcast chips')\n";
        return 2;
    }
    const double rate = std::string_view(argv[2]) == "preset"
                            ? preset->memory.l2_read_rate.in(units::B_per_cycle)
                            : io::parse_double(argv[2], "RATE");
    if (!(rate > 0 && rate < 1e6)) {
        std::cerr << "l2_rate_fit: RATE " << argv[2] << ": expected bytes per cycle in (0, 1e6)\n";
        return 2;
    }
    chip c = *preset;
    c.memory.l2_read_rate = bytes_per_cycle{rate, units::B_per_cycle};
    const auto fit = profile::read_kernel_details_file(argv[3]).rows;
    const auto test = profile::read_kernel_details_file(argv[4]).rows;

    std::cout << argv[1] << ", L2 read rate " << io::format_fixed(rate, 2)
              << " B/cycle per core (preset: "
              << io::format_fixed(preset->memory.l2_read_rate.in(units::B_per_cycle), 2) << "); "
              << test.size() << " test rows\n";
    std::cout << "  uncalibrated:      " << scores(c, test, {}) << '\n';
    const auto rows = profile::measured_ops(c, fit);
    for (const bool fit_l2 : {false, true}) {
        profile::calibration_options opt;
        opt.fit_l2_efficiency = fit_l2;
        const auto r = profile::calibrate(c, rows, {}, opt);
        std::cout << (fit_l2 ? "  calibrated, L2 fitted: " : "  calibrated, L2 kept:   ")
                  << scores(c, test, r.fitted) << "; cube efficiency "
                  << io::format_fixed(r.fitted.params.cube_efficiency, 3);
        if (fit_l2)
            std::cout << ", L2 efficiency " << io::format_fixed(r.fitted.params.l2_efficiency, 3)
                      << " (" << r.l2_rows << " of " << rows.size()
                      << " fit rows move with the rate)";
        std::cout << '\n';
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "l2_rate_fit: " << e.what() << '\n';
        return 1;
    }
}
