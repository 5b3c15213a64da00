// perfcast/chips.hpp: every chip preset, and lookup by name.
//
//   constexpr auto c = perfcast::chips::get_chip("910B3");          // compile-time lookup
//   if (auto c = perfcast::chips::find_chip(user_text)) { ... }      // optional, never throws
//   for (const auto& p : perfcast::chips::all_presets()) { p.name; p.spec; p.source; }
//
// Names are matched case-insensitively, ignoring '-', '_', '.' and spaces, with or without a
// leading "Ascend" or "NVIDIA": ascend910b3, 910B3, Ascend910B3, Ascend910_9391, a3, a100,
// A100-80GB, h100, "NVIDIA H200" all work.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "chip.hpp"
#include "chips/ascend.hpp"
#include "chips/nvidia.hpp"
#include "error.hpp"

namespace perfcast::chips {

/// One preset: its canonical name, the chip, where its numbers come from, and other names it
/// answers to (written naturally; matched after normalization, like the canonical name).
struct named_chip {
    std::string_view name;
    chip spec;
    std::string_view source;
    std::array<std::string_view, 6> aliases{};
};

namespace detail {

inline constexpr std::array<named_chip, 12> presets{{
    {"ascend910b1",
     ascend910b1,
     "CANN 8.1.RC1 Ascend910B1.ini; HBM 1.6 TB/s, PCIe 5.0 x16, AI CPU clock, overheads: "
     "assumptions",
     {"910B1"}},
    {"ascend910b2",
     ascend910b2,
     "CANN 8.1.RC1 Ascend910B2.ini; HBM 1.6 TB/s, PCIe 5.0 x16, AI CPU clock, overheads: "
     "assumptions",
     {"910B2"}},
    {"ascend910b3",
     ascend910b3,
     "CANN 8.1.RC1 Ascend910B3.ini; HBM 1.6 TB/s, PCIe 5.0 x16, AI CPU clock, overheads: "
     "assumptions",
     {"910B3"}},
    {"ascend910b4",
     ascend910b4,
     "CANN 8.1.RC1 Ascend910B4.ini; HBM 0.8 TB/s, PCIe 5.0 x16, AI CPU clock, overheads: "
     "assumptions",
     {"910B4"}},
    {"ascend910_9391",
     ascend910_9391,
     "CANN 8.1.RC1 Ascend910_9391.ini (one A3 / 910C die); HBM 1.6 TB/s per die, PCIe 5.0 x16, "
     "AI CPU clock, overheads: assumptions",
     {"910_9391", "A3", "Ascend910_93"}},
    {"ascend910a",
     ascend910a,
     "CANN 8.1.RC1 Ascend910A.ini; HBM 32 GiB 1.2 TB/s and PCIe 4.0 x16 (Hot Chips 2019), AI CPU "
     "clock, overheads: assumptions",
     {"910A"}},
    {"ascend310p3",
     ascend310p3,
     "CANN 8.1.RC1 Ascend310P3.ini; LPDDR4X 204.8 GB/s and PCIe 4.0 x16 (Atlas 300I Pro), AI CPU "
     "clock, overheads: assumptions",
     {"310P3", "Atlas 300I Pro"}},
    {"a100-80gb-sxm",
     a100_80gb_sxm,
     "NVIDIA A100 datasheet + Ampere whitepaper; per-SM memory rates, overheads: assumptions",
     {"a100", "a100-80gb", "a100-sxm", "a100-sxm4-80gb", "a100-80gb-sxm4"}},
    {"a100-40gb-sxm",
     a100_40gb_sxm,
     "NVIDIA A100 datasheet (40GB SXM: HBM2 1555 GB/s; GA100 compute as the 80GB); per-SM memory "
     "rates, overheads: assumptions",
     {"a100-40gb", "a100-sxm4-40gb", "a100-40gb-sxm4"}},
    {"h100-sxm",
     h100_sxm,
     "NVIDIA H100 datasheet + Hopper whitepaper; kernel heads, load latency and element walks "
     "fitted on H200 kernels; per-SM memory rates, other overheads: assumptions",
     {"h100", "h100-sxm5", "h100-80gb", "h100-sxm5-80gb"}},
    {"h200-sxm",
     h200_sxm,
     "NVIDIA H200 datasheet (GH100 compute as H100 SXM); kernel heads, load latency and element "
     "walks fitted on its measured kernels; per-SM memory rates, other overheads: assumptions",
     {"h200", "h200-141gb", "h200-sxm5"}},
    {"a40-pcie",
     a40_pcie,
     "NVIDIA A40 datasheet + GA102 whitepaper; resident threads: CUDA guide (8.6); per-SM memory "
     "rates, overheads: assumptions",
     {"a40", "a40-48gb"}},
}};

/// A name folded for matching: lower case, without '-', '_', '.', ' ', and without a leading
/// "ascend" or "nvidia". Fixed capacity so it works in constant expressions; longer names
/// (over 63 characters) match nothing.
struct folded_name {
    std::array<char, 64> text{};
    std::size_t size = 0;
    bool overflow = false;

    [[nodiscard]] constexpr std::string_view view() const noexcept { return {text.data(), size}; }
};

[[nodiscard]] constexpr folded_name fold(std::string_view s) noexcept {
    folded_name f;
    for (char ch : s) {
        if (ch == '-' || ch == '_' || ch == '.' || ch == ' ' || ch == '\t' || ch == '\r' ||
            ch == '\n')
            continue;  // a name read from a CRLF file keeps its '\r'
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        if (f.size == f.text.size()) {
            f.overflow = true;
            return f;
        }
        f.text[f.size++] = ch;
    }
    for (std::string_view prefix : {std::string_view{"ascend"}, std::string_view{"nvidia"}}) {
        if (f.view().starts_with(prefix) && f.size > prefix.size()) {
            for (std::size_t i = prefix.size(); i < f.size; ++i) {
                f.text[i - prefix.size()] = f.text[i];
            }
            f.size -= prefix.size();
            break;
        }
    }
    return f;
}

[[nodiscard]] constexpr bool same_name(std::string_view a, std::string_view b) noexcept {
    const folded_name fa = fold(a);
    const folded_name fb = fold(b);
    return !fa.overflow && !fb.overflow && fa.view() == fb.view();
}

/// Non-constexpr on purpose: reaching it in constant evaluation is a compile error.
[[noreturn]] inline void unknown_chip(std::string_view name);

}  // namespace detail

/// Every preset, in a fixed order (Ascend first, then NVIDIA).
[[nodiscard]] constexpr std::span<const named_chip> all_presets() noexcept {
    return detail::presets;
}

/// Whether `n` answers to `name` (its canonical name or an alias, after folding).
[[nodiscard]] constexpr bool matches(const named_chip& n, std::string_view name) noexcept {
    if (detail::same_name(n.name, name)) return true;
    for (const std::string_view& alias : n.aliases) {
        if (!alias.empty() && detail::same_name(alias, name)) return true;
    }
    return false;
}

/// The preset entry named `name`, or nullptr.
[[nodiscard]] constexpr const named_chip* find_preset(std::string_view name) noexcept {
    for (const named_chip& n : detail::presets) {
        if (matches(n, name)) return &n;
    }
    return nullptr;
}

/// The chip named `name`, or nothing.
[[nodiscard]] constexpr std::optional<chip> find_chip(std::string_view name) noexcept {
    if (const named_chip* n = find_preset(name)) return n->spec;
    return std::nullopt;
}

/// The canonical names of all presets, comma-separated (for messages and `--help`).
[[nodiscard]] inline std::string known_chip_names() {
    std::string out;
    for (const named_chip& n : detail::presets) {
        if (!out.empty()) out += ", ";
        out += n.name;
    }
    return out;
}

/// The chip named `name`. An unknown name does not compile in constant evaluation; at run time it
/// throws perfcast::error listing every known name.
[[nodiscard]] constexpr chip get_chip(std::string_view name) {
    if (const named_chip* n = find_preset(name)) return n->spec;
    detail::unknown_chip(name);
}

namespace detail {
inline void unknown_chip(std::string_view name) {
    std::string expected = "one of " + known_chip_names() +
                           " (case-insensitive; 'Ascend' prefix, '_' and '-' optional; aliases "
                           "such as 910B3, A3, a100, h100, h200)";
    // A name that begins a preset's ("310P", "910B"): those presets, as a guess.
    const folded_name f = fold(name);
    std::string guesses;
    if (!f.overflow && f.size >= 2) {
        for (const named_chip& n : presets) {
            if (fold(n.name).view().starts_with(f.view()))
                guesses += (guesses.empty() ? "" : " or ") + std::string(n.name);
        }
    }
    if (!guesses.empty()) expected += "; did you mean " + guesses + "?";
    ::perfcast::detail::precondition_failed("chips::get_chip", "chip", name, expected);
}
}  // namespace detail

}  // namespace perfcast::chips
