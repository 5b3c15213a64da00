// perfcast/profile/chip_evidence.hpp: what a profile says about its chip, and the preset it
// names, if it names exactly one (runtime).
//
// Profilers name the chip as the driver does ("Ascend910B" in msprof's NPU_INFO, which names
// the family, not the model) and may record the AI core clock. A preset is chosen only when the
// names agree and one of them is a preset's name or alias; otherwise the reason says which
// presets fit, those at the measured clock first, so that the user can pass --chip.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../chips.hpp"
#include "../error.hpp"
#include "../units.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

namespace detail {
/// `v` rounded to a whole number, as text ("1800").
[[nodiscard]] inline std::string rounded_text(double v) {
    return ::perfcast::detail::number_text(std::round(v));
}
}  // namespace detail

/// The evidence as text, and the preset it names when it names exactly one.
struct chip_evidence {
    std::string text;  // "NPU_INFO: Ascend910B; AICORE_FREQ: 1800 MHz (3 samples)"
    const chips::named_chip* preset = nullptr;  // set only when unambiguous
    std::string why_no_preset;                  // otherwise why (empty when there is no name)
    /// The rows' cube cores x clock in cycles per us, and how many rows agree on it within 1 %
    /// (rows_chip_evidence; 0 from other evidence).
    double cores_x_clock = 0;
    std::size_t agreeing = 0;
};

/// Judges chip `names` (as written; repeats allowed) and measured AI core `clocks`, labelled in
/// the text by where they came from.
[[nodiscard]] inline chip_evidence judge_chip_evidence(std::span<const std::string> names,
                                                       std::span<const frequency> clocks,
                                                       std::string_view names_from,
                                                       std::string_view clocks_from) {
    chip_evidence e;
    std::vector<std::string> distinct;
    for (const std::string& n : names) {
        if (std::find(distinct.begin(), distinct.end(), n) == distinct.end()) distinct.push_back(n);
    }
    double lo = 0;
    double hi = 0;
    for (std::size_t i = 0; i < clocks.size(); ++i) {
        const double mhz = clocks[i].in(units::MHz);
        lo = i == 0 ? mhz : std::min(lo, mhz);
        hi = i == 0 ? mhz : std::max(hi, mhz);
    }
    if (!distinct.empty()) {
        e.text = std::string(names_from) + ": ";
        for (std::size_t i = 0; i < distinct.size(); ++i) e.text += (i ? ", " : "") + distinct[i];
    }
    if (!clocks.empty()) {
        if (!e.text.empty()) e.text += "; ";
        e.text += std::string(clocks_from) + ": " + detail::rounded_text(lo) +
                  (hi != lo ? ".." + detail::rounded_text(hi) : "") + " MHz (" +
                  std::to_string(clocks.size()) + (clocks.size() == 1 ? " sample)" : " samples)");
    }
    if (distinct.empty()) return e;
    if (distinct.size() > 1) {
        e.why_no_preset =
            std::string(names_from) + " names " + std::to_string(distinct.size()) + " chips";
        return e;
    }
    if (const chips::named_chip* p = chips::find_preset(distinct.front())) {
        e.preset = p;
        return e;
    }
    // A family name: the presets whose folded name extends it.
    const auto family = chips::detail::fold(distinct.front());
    std::string at_clock;
    std::string others;
    for (const chips::named_chip& p : chips::all_presets()) {
        const auto f = chips::detail::fold(p.name);
        if (family.overflow || family.size == 0 || !f.view().starts_with(family.view())) continue;
        const double clock = p.spec.cube.clock.in(units::MHz);
        const bool fits = !clocks.empty() && clock >= lo - 0.5 && clock <= hi + 0.5;
        std::string& list = fits ? at_clock : others;
        list += (list.empty() ? "" : ", ") + std::string(p.name);
    }
    e.why_no_preset =
        std::string(names_from) + "'s '" + distinct.front() + "' does not say which model";
    if (!at_clock.empty()) {
        e.why_no_preset += "; at " + detail::rounded_text(lo) + " MHz it may be " + at_clock;
    } else if (!others.empty()) {
        e.why_no_preset += "; it may be " + others;
    }
    return e;
}

/// Rows the core x clock evidence needs: the profiler rounds cube_utilization(%) to 3 decimals
/// and durations to 3 (us), so rows under 1 % or 10 us are left out (their quotient moves by more
/// than the 0.5 % that tells two presets apart).
inline constexpr double evidence_min_utilization_pct = 1.0;
inline constexpr duration evidence_min_duration{10.0, units::us};

/// What the rows' own cube_utilization(%) column says about the chip. The profiler computes it
/// as aic_total_cycles / (duration x cube cores x clock) x 100 (tests/test_real_profiles.cpp
/// checks that on four real files), so cycles / (duration x utilization / 100) is cores x clock,
/// in cycles per us, whatever the row. The median over the rows is compared with every preset's
/// cube cores x clock: a preset is named when exactly one is within 0.5 % (the nearest two
/// Ascend presets, 910B1 and 910B2, are 2.8 % apart) and at least 3 rows agree within 1 % of the
/// median. Cores and clock are not told apart: 20 x 1650 and 22 x 1500 look the same.
class rows_evidence {
public:
    /// Takes row `r`'s cores x clock when it has what the evidence needs.
    void add(const kernel_row& r) {
        if (!r.aic_total_cycles || !r.task_duration || !r.cube_utilization_pct) return;
        if (*r.cube_utilization_pct < evidence_min_utilization_pct) return;
        if (*r.task_duration < evidence_min_duration) return;
        const double v = r.aic_total_cycles->in(units::cycle) /
                         (r.task_duration->in(units::us) * *r.cube_utilization_pct / 100.0);
        if (std::isfinite(v) && v > 0) per_us_.push_back(v);
    }
    /// The evidence of the rows added (rows_chip_evidence).
    [[nodiscard]] chip_evidence result() const;

private:
    std::vector<double> per_us_;
};

[[nodiscard]] inline chip_evidence rows_chip_evidence(std::span<const kernel_row> rows) {
    rows_evidence ev;
    for (const kernel_row& r : rows) ev.add(r);
    return ev.result();
}

inline chip_evidence rows_evidence::result() const {
    std::vector<double> per_us = per_us_;
    chip_evidence e;
    if (per_us.empty()) return e;
    std::sort(per_us.begin(), per_us.end());
    const double median = per_us[per_us.size() / 2];
    const auto agreeing =
        static_cast<std::size_t>(std::count_if(per_us.begin(), per_us.end(), [median](double v) {
            return std::abs(v - median) <= 0.01 * median;
        }));
    e.text = "cube_utilization(%) column: cube cores x clock = " + detail::rounded_text(median) +
             " cycles/us (median of " + std::to_string(per_us.size()) + " rows, " +
             std::to_string(agreeing) + " within 1 %)";
    e.cores_x_clock = median;
    e.agreeing = agreeing;
    if (agreeing < 3) {
        e.why_no_preset =
            "the cube_utilization(%) column: fewer than 3 rows agree on cores x clock";
        return e;
    }
    std::string fits;
    const chips::named_chip* only = nullptr;
    std::size_t count = 0;
    for (const chips::named_chip& p : chips::all_presets()) {
        const double product = p.spec.cube.cores * p.spec.cube.clock.in(units::MHz);
        if (std::abs(product - median) > 0.005 * median) continue;
        fits += (fits.empty() ? "" : ", ") + std::string(p.name) + " (" +
                std::to_string(p.spec.cube.cores) + " x " +
                detail::rounded_text(p.spec.cube.clock.in(units::MHz)) + " MHz)";
        only = &p;
        ++count;
    }
    if (count == 1) {
        e.preset = only;
        e.text += ": " + fits;
    } else if (count == 0) {
        e.why_no_preset = "the cube_utilization(%) column gives cube cores x clock = " +
                          detail::rounded_text(median) +
                          " cycles/us, which no preset has (describe the chip with --chip-ini)";
    } else {
        e.why_no_preset = "the cube_utilization(%) column gives cube cores x clock = " +
                          detail::rounded_text(median) + " cycles/us, as " + std::to_string(count) +
                          " presets have: " + fits;
    }
    return e;
}

/// When chip `c`, given by the user, is not the chip the rows' evidence `e` says ran them (at
/// least 3 rows agree on a cores x clock more than 0.5 % from c's, the tolerance that tells two
/// presets apart): a note saying so, for the user to check --chip; else empty. Every utilization
/// and prediction is computed for `c` whatever the note says.
[[nodiscard]] inline std::string chip_mismatch(const chip& c, const chip_evidence& e) {
    if (e.agreeing < 3 || !(e.cores_x_clock > 0)) return {};
    const double given = c.cube.cores * c.cube.clock.in(units::MHz);
    if (std::abs(given - e.cores_x_clock) <= 0.005 * e.cores_x_clock) return {};
    return "the profile's " + e.text + ", but chip " + std::string(c.name.view()) + " has " +
           std::to_string(c.cube.cores) + " x " +
           detail::rounded_text(c.cube.clock.in(units::MHz)) +
           " MHz = " + detail::rounded_text(given) +
           ": another chip, or this one at another clock? (the figures are computed for " +
           std::string(c.name.view()) + "; --chip-ini describes a chip at its clock)";
}

}  // namespace perfcast::profile
