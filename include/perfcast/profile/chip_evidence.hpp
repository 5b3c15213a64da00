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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../chips.hpp"
#include "../error.hpp"
#include "../units.hpp"

namespace perfcast::profile {

/// The evidence as text, and the preset it names when it names exactly one.
struct chip_evidence {
    std::string text;  // "NPU_INFO: Ascend910B; AICORE_FREQ: 1800 MHz (3 samples)"
    const chips::named_chip* preset = nullptr;  // set only when unambiguous
    std::string why_no_preset;                  // otherwise why (empty when there is no name)
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
    const auto mhz_text = [](double v) { return ::perfcast::detail::number_text(std::round(v)); };
    if (!distinct.empty()) {
        e.text = std::string(names_from) + ": ";
        for (std::size_t i = 0; i < distinct.size(); ++i) e.text += (i ? ", " : "") + distinct[i];
    }
    if (!clocks.empty()) {
        if (!e.text.empty()) e.text += "; ";
        e.text += std::string(clocks_from) + ": " + mhz_text(lo) +
                  (hi != lo ? ".." + mhz_text(hi) : "") + " MHz (" + std::to_string(clocks.size()) +
                  (clocks.size() == 1 ? " sample)" : " samples)");
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
        e.why_no_preset += "; at " + mhz_text(lo) + " MHz it may be " + at_clock;
    } else if (!others.empty()) {
        e.why_no_preset += "; it may be " + others;
    }
    return e;
}

}  // namespace perfcast::profile
