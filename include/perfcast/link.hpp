// perfcast/link.hpp: the host link (PCIe) as the model sees it.
//
// Per lane and direction, a PCIe generation carries raw rate x line-code efficiency:
//   gen 1  2.5 GT/s  8b/10b     PCI Express Base Specification 1.0a (PCI-SIG, 2003)
//   gen 2  5.0 GT/s  8b/10b     PCI Express Base Specification 2.0 (2007)
//   gen 3  8.0 GT/s  128b/130b  PCI Express Base Specification 3.0 (2010)
//   gen 4 16.0 GT/s  128b/130b  PCI Express Base Specification 4.0 (2017)
//   gen 5 32.0 GT/s  128b/130b  PCI Express Base Specification 5.0 (2019)
//   gen 6 64.0 GT/s  PAM4, 256-byte FLIT of 236 B TLP + 6 B DLP + 8 B CRC + 6 B FEC
//                    PCI Express Base Specification 6.0 (2022); we count TLP + DLP, 242/256
// (one transfer = one bit per lane for NRZ; PAM4 moves two bits per symbol, so 64 GT/s is still
// 64 Gbit/s per lane). Packet headers, flow control and the host's DMA set-up are not in these
// figures: they are what `efficiency` (default 0.8, guide §4: "at best about 80 % of theory")
// and `per_transfer` stand for.
//
// A transfer of S bytes one way takes  per_transfer + S / (per_direction x efficiency),  so the
// effective rate S / time falls for small transfers (guide §4: "real rate depends strongly on
// transfer size"; the pinned Gen3 table in tests/test_link.cpp shows it).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "chip.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "fit.hpp"
#include "units.hpp"

namespace perfcast {

/// Line facts of one PCIe generation, per lane and per direction.
struct pcie_generation {
    int gen = 0;
    bandwidth raw_rate{};   // transfer rate on the wire: 1 GT/s = 1 Gbit/s per lane
    int payload_bits = 0;   // line code: payload bits per `line_bits` sent
    int line_bits = 0;
    std::string_view encoding{};

    /// Data rate per lane per direction after the line code.
    [[nodiscard]] constexpr bandwidth per_lane() const noexcept {
        return raw_rate * (static_cast<double>(payload_bits) / static_cast<double>(line_bits));
    }
};

/// The six generations (sources in the file header).
inline constexpr std::array<pcie_generation, 6> pcie_generations{{
    {1, bandwidth{2.5, units::Gbitps}, 8, 10, "8b/10b"},
    {2, bandwidth{5.0, units::Gbitps}, 8, 10, "8b/10b"},
    {3, bandwidth{8.0, units::Gbitps}, 128, 130, "128b/130b"},
    {4, bandwidth{16.0, units::Gbitps}, 128, 130, "128b/130b"},
    {5, bandwidth{32.0, units::Gbitps}, 128, 130, "128b/130b"},
    {6, bandwidth{64.0, units::Gbitps}, 242, 256, "PAM4 FLIT 242/256"},
}};

/// The generation `gen` (1..6); anything else is an error naming `gen`.
[[nodiscard]] constexpr const pcie_generation& pcie_generation_of(int gen) {
    PERFCAST_EXPECTS(gen >= 1 && gen <= 6, "pcie_generation_of", "gen",
                     static_cast<double>(gen), "a PCIe generation 1..6");
    return pcie_generations[static_cast<std::size_t>(gen - 1)];
}

/// Share of the per-direction line rate that bulk transfers reach. Guide §4: "at best about
/// 80 % of theory"; NVIDIA/nvbandwidth issue 42 measures 25.13 GB/s pinned host-to-device on an
/// A100 (PCIe 4.0 x16, 31.5 GB/s per direction): 79.8 %.
inline constexpr double default_link_efficiency = 0.8;

/// Fixed cost of one host transfer (API call, DMA descriptor set-up, completion). Assumption:
/// rounded from fitting this model to the pinned Gen3 table of tests/test_link.cpp (7.7 us with
/// efficiency 0.8; cudaMemcpy on a Quadro RTX 6000). Ascend's aclrtMemcpy is not measured here:
/// calibrate it with `fit_link` on your own (size, rate) points.
inline constexpr duration default_per_transfer{8.0, units::us};

/// A host link: PCIe generation x lanes, with the efficiency and per-transfer cost that turn
/// line rate into transfer time. A plain aggregate: `pcie_link{5, 4}` is PCIe 5.0 x4 with the
/// default efficiency and per-transfer cost.
struct pcie_link {
    int gen = 0;
    int lanes = 0;
    double efficiency = default_link_efficiency;
    duration per_transfer = default_per_transfer;

    /// Line rate one way: lanes x per-lane rate (PCIe 5.0 x4: 15.75 GB/s).
    [[nodiscard]] constexpr bandwidth per_direction() const;
    /// Both directions together, the figure vendors quote (PCIe 5.0 x4: 31.5 GB/s, "32").
    [[nodiscard]] constexpr bandwidth both_directions() const { return per_direction() * 2.0; }
    /// What a large one-way transfer reaches: per_direction x efficiency.
    [[nodiscard]] constexpr bandwidth achievable() const { return per_direction() * efficiency; }
    /// Both directions at once, each at the efficiency (guide §4: x4 Gen5 "about 25.6").
    [[nodiscard]] constexpr bandwidth achievable_both_directions() const {
        return both_directions() * efficiency;
    }
    /// One transfer of `size` bytes one way: per_transfer + size / achievable().
    [[nodiscard]] constexpr duration transfer_time(data_size size) const;
    /// size / transfer_time(size): falls towards 0 for small transfers, rises towards
    /// achievable() for large ones.
    [[nodiscard]] constexpr bandwidth effective_bandwidth(data_size size) const {
        return size / transfer_time(size);
    }

    [[nodiscard]] friend constexpr bool operator==(const pcie_link&, const pcie_link&) = default;
};

[[nodiscard]] constexpr bool valid_lane_count(int lanes) noexcept {
    return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16;
}

/// Rejects impossible links, naming the field: gen outside 1..6, lanes not 1/2/4/8/16,
/// efficiency outside (0, 1], a negative or non-finite per-transfer cost.
constexpr const pcie_link& validate(const pcie_link& l) {
    constexpr std::string_view where = "validate(pcie_link)";
    PERFCAST_EXPECTS(l.gen >= 1 && l.gen <= 6, where, "gen", static_cast<double>(l.gen),
                     "a PCIe generation 1..6");
    PERFCAST_EXPECTS(valid_lane_count(l.lanes), where, "lanes", static_cast<double>(l.lanes),
                     "1, 2, 4, 8 or 16 lanes");
    PERFCAST_EXPECTS(l.efficiency > 0 && l.efficiency <= 1, where, "efficiency", l.efficiency,
                     "a share in (0, 1]");
    PERFCAST_EXPECTS(l.per_transfer.in(units::us) >= 0 && is_finite(l.per_transfer), where,
                     "per_transfer", l.per_transfer.in(units::us),
                     "a finite time >= 0 (in us)");
    return l;
}

constexpr bandwidth pcie_link::per_direction() const {
    validate(*this);
    return pcie_generation_of(gen).per_lane() * static_cast<double>(lanes);
}

constexpr duration pcie_link::transfer_time(data_size size) const {
    PERFCAST_EXPECTS(size.in(units::B) >= 0 && is_finite(size), "pcie_link::transfer_time",
                     "size", size.in(units::B), "a finite size >= 0 (in B)");
    return per_transfer + size / achievable();
}

/// The link of a chip preset (generation and lanes from chip.hpp; default efficiency and
/// per-transfer cost).
[[nodiscard]] constexpr pcie_link link_of(const host_link_spec& spec) {
    return validate(pcie_link{spec.pcie_gen, spec.lanes});
}
[[nodiscard]] constexpr pcie_link link_of(const chip& c) { return link_of(c.link); }

// ---------------------------------------------------------------------------------------------
// Names: "pcie5x4", "pcie3x16", "gen4x16"; case does not matter, "pcie4.0x16" is accepted too.

inline constexpr std::string_view link_name_forms =
    "a link name pcie<gen>x<lanes> or gen<gen>x<lanes> such as pcie5x4, pcie3x16, gen4x16 "
    "(gen 1..6, lanes 1, 2, 4, 8 or 16; 'pcie4.0x16' also accepted)";

namespace detail {
struct link_scan {
    bool ok = false;  // the text has the form prefix, digits, 'x', digits
    int gen = 0;
    int lanes = 0;
};

[[nodiscard]] constexpr char link_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

[[nodiscard]] constexpr bool link_starts_with(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        if (link_lower(s[i]) != prefix[i]) return false;
    }
    return true;
}

/// Reads up to 3 decimal digits at `pos`; -1 if there is none.
[[nodiscard]] constexpr int link_digits(std::string_view s, std::size_t& pos) noexcept {
    int v = 0;
    std::size_t n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && n < 3) {
        v = v * 10 + (s[pos] - '0');
        ++pos;
        ++n;
    }
    return n == 0 ? -1 : v;
}

[[nodiscard]] constexpr link_scan scan_link_name(std::string_view s) noexcept {
    std::size_t pos = 0;
    if (link_starts_with(s, "pcie")) {
        pos = 4;
    } else if (link_starts_with(s, "gen")) {
        pos = 3;
    } else {
        return {};
    }
    const int gen = link_digits(s, pos);
    if (gen < 0) return {};
    if (pos + 1 < s.size() && s[pos] == '.' && s[pos + 1] == '0') pos += 2;
    if (pos >= s.size() || link_lower(s[pos]) != 'x') return {};
    ++pos;
    const int lanes = link_digits(s, pos);
    if (lanes < 0 || pos != s.size()) return {};
    return {true, gen, lanes};
}
}  // namespace detail

/// The link named `text` with default efficiency and per-transfer cost, or nothing when the
/// text is not a valid link name.
[[nodiscard]] constexpr std::optional<pcie_link> try_parse_link(std::string_view text) noexcept {
    const auto s = detail::scan_link_name(text);
    if (!s.ok || s.gen < 1 || s.gen > 6 || !valid_lane_count(s.lanes)) return std::nullopt;
    return pcie_link{s.gen, s.lanes};
}

/// The link named `text`. A malformed name is an error naming the text and the accepted forms;
/// a generation outside 1..6 or a lane count not in {1, 2, 4, 8, 16} is an error naming `gen`
/// or `lanes`. A compile error in constant evaluation.
[[nodiscard]] constexpr pcie_link parse_link(std::string_view text) {
    const auto s = detail::scan_link_name(text);
    if (!s.ok) detail::precondition_failed("parse_link", "link", text, link_name_forms);
    PERFCAST_EXPECTS(s.gen >= 1 && s.gen <= 6, "parse_link", "gen", static_cast<double>(s.gen),
                     "a PCIe generation 1..6");
    PERFCAST_EXPECTS(valid_lane_count(s.lanes), "parse_link", "lanes",
                     static_cast<double>(s.lanes), "1, 2, 4, 8 or 16 lanes");
    return pcie_link{s.gen, s.lanes};
}

/// "pcie<gen>x<lanes>", the canonical name `parse_link` reads back.
[[nodiscard]] constexpr fixed_name link_name(const pcie_link& l) {
    validate(l);
    std::array<char, 12> buf{'p', 'c', 'i', 'e'};
    std::size_t n = 4;
    buf[n++] = static_cast<char>('0' + l.gen);
    buf[n++] = 'x';
    if (l.lanes >= 10) buf[n++] = static_cast<char>('0' + l.lanes / 10);
    buf[n++] = static_cast<char>('0' + l.lanes % 10);
    return fixed_name(std::string_view(buf.data(), n));
}

// ---------------------------------------------------------------------------------------------
// What-ifs (guide §4 fixes).

/// n separate transfers of `size_each` versus one gathered transfer of n x size_each.
struct gather_result {
    duration separate{};  // n x transfer_time(size_each)
    duration gathered{};  // transfer_time(n x size_each)
    duration saving{};    // separate - gathered = (n - 1) x per_transfer
    [[nodiscard]] constexpr double speedup() const noexcept { return separate / gathered; }
    [[nodiscard]] friend constexpr bool operator==(const gather_result&,
                                                   const gather_result&) = default;
};

/// guide §4: "gather many small host transfers into one large transfer". The copy into one host
/// buffer is not counted (host memcpy runs far above PCIe rates; cost it separately if needed).
[[nodiscard]] constexpr gather_result gather_transfers(const pcie_link& link, int n,
                                                       data_size size_each) {
    PERFCAST_EXPECTS(n >= 1, "gather_transfers", "n", static_cast<double>(n),
                     "at least 1 transfer");
    const double nd = static_cast<double>(n);
    gather_result r;
    r.separate = link.transfer_time(size_each) * nd;
    r.gathered = link.transfer_time(size_each * nd);
    r.saving = r.separate - r.gathered;
    return r;
}

/// Inputs sent in `from` versus converted to `to` on the host first.
struct conversion_result {
    data_size bytes_before{};
    data_size bytes_after{};
    duration before{};  // transfer_time(bytes_before)
    duration after{};   // transfer_time(bytes_after)
    duration saving{};  // before - after (negative when `to` is wider)
    [[nodiscard]] friend constexpr bool operator==(const conversion_result&,
                                                   const conversion_result&) = default;
};

/// Transfer time of inputs of `size` bytes in dtype `from` versus the same elements in `to`.
/// The host-side conversion and any device-side cast back are not counted (cost the cast as an
/// op). Guide §4: "fp32 -> fp16 (half the bytes)".
[[nodiscard]] constexpr conversion_result convert_inputs(const pcie_link& link, data_size size,
                                                         dtype from, dtype to) {
    PERFCAST_EXPECTS(size.in(units::B) >= 0 && is_finite(size), "convert_inputs", "size",
                     size.in(units::B), "a finite size >= 0 (in B)");
    conversion_result r;
    r.bytes_before = size;
    r.bytes_after = size * (size_of(to) / size_of(from));
    r.before = link.transfer_time(r.bytes_before);
    r.after = link.transfer_time(r.bytes_after);
    r.saving = r.before - r.after;
    return r;
}

/// fp32 inputs sent as fp16: half the bytes (guide §4).
[[nodiscard]] constexpr conversion_result halve_precision(const pcie_link& link, data_size size) {
    return convert_inputs(link, size, dtype::fp32, dtype::fp16);
}

// ---------------------------------------------------------------------------------------------
// Calibration: per_transfer (and optionally efficiency) from measured (size, rate) points.

/// One measurement: a one-way transfer of `size` ran at `measured` = size / time.
struct transfer_point {
    data_size size{};
    bandwidth measured{};
    [[nodiscard]] constexpr duration time() const noexcept { return size / measured; }
    [[nodiscard]] friend constexpr bool operator==(const transfer_point&,
                                                   const transfer_point&) = default;
};

struct link_fit_options {
    /// Also fit the efficiency (the slope). Off: keep the link's efficiency, fit per_transfer.
    bool fit_efficiency = false;
    /// Relative by default: a table from 1 KB to 1 MB spans two orders of magnitude in time and
    /// an absolute fit would ignore the small transfers.
    fit_weighting weighting = fit_weighting::relative;
};

struct link_fit {
    pcie_link link{};             // the input link with the fitted per_transfer (and efficiency)
    int points = 0;
    double max_rel_error = 0;     // max |predicted / measured effective rate - 1|
    double rms_rel_error = 0;     // sqrt(mean((predicted / measured - 1)^2))
    [[nodiscard]] friend constexpr bool operator==(const link_fit&, const link_fit&) = default;
};

/// predicted / measured effective rate - 1 at the point's size (= measured time / predicted
/// time - 1): positive when the model is too fast.
[[nodiscard]] constexpr double relative_error(const pcie_link& link, const transfer_point& p) {
    return link.effective_bandwidth(p.size) / p.measured - 1.0;
}

/// Least squares on time = per_transfer + size / (per_direction x efficiency). per_transfer is
/// kept >= 0 (exact: the constrained optimum of a convex quadratic). Errors name the point
/// ("points[2].size = -1 B, expected ...") or the fitted value that makes no sense (a slope
/// that does not grow with size, an efficiency above 1: the points are faster than the link).
[[nodiscard]] constexpr link_fit fit_link(const pcie_link& base,
                                          std::span<const transfer_point> points,
                                          link_fit_options opt = {}) {
    constexpr std::string_view where = "fit_link";
    validate(base);
    PERFCAST_EXPECTS(!points.empty(), where, "points.size()", 0.0, "at least 1 point");
    for (std::size_t i = 0; i < points.size(); ++i) {
        const double s = points[i].size.in(units::B);
        if (!(s > 0) || !detail::fit_finite(s)) {
            detail::fit_element_failed(where, "points", i, "size", s, "B", "a finite size > 0");
        }
        const double r = points[i].measured.in(units::GBps);
        if (!(r > 0) || !detail::fit_finite(r)) {
            detail::fit_element_failed(where, "points", i, "measured", r, "GB/s",
                                       "a finite rate > 0");
        }
    }
    const double line = base.per_direction().in(units::Bps);
    // Sums in us and MB so that the numbers stay near 1.
    double sw = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
    for (const transfer_point& p : points) {
        const double x = p.size.in(units::MB);
        const double y = p.time().in(units::us);
        const double w = opt.weighting == fit_weighting::relative ? 1.0 / (y * y) : 1.0;
        sw += w;
        sx += w * x;
        sxx += w * x * x;
        sy += w * y;
        sxy += w * x * y;
    }
    double slope = 0;  // us per MB = 1 / (achievable in MB/us = TB/s)
    double a = 0;      // us
    if (!opt.fit_efficiency) {
        slope = 1.0 / base.achievable().in(units::TBps);
        a = (sy - slope * sx) / sw;
    } else {
        const double det = sw * sxx - sx * sx;
        PERFCAST_EXPECTS(det > 1e-12 * sw * sxx, where, "points", "all of one size",
                         "at least 2 different sizes to fit the efficiency");
        slope = (sw * sxy - sx * sy) / det;
        a = (sy - slope * sx) / sw;
        if (a < 0) {  // best slope through the origin
            a = 0;
            slope = sxy / sxx;
        }
        PERFCAST_EXPECTS(slope > 0, where, "slope", slope,
                         "a transfer time that grows with size (us per MB > 0)");
    }
    if (a < 0) a = 0;

    link_fit f;
    f.link = base;
    f.link.per_transfer = duration{a, units::us};
    if (opt.fit_efficiency) {
        const double eff = 1.0 / (slope * 1e-12 * line);  // achievable / line
        PERFCAST_EXPECTS(eff <= 1.0, where, "efficiency", eff,
                         "a share <= 1: the points run faster than this generation and lane "
                         "count carry one way; check gen and lanes");
        f.link.efficiency = eff;
    }
    f.points = static_cast<int>(points.size());
    double ss = 0;
    for (const transfer_point& p : points) {
        const double e = relative_error(f.link, p);
        const double ae = detail::fit_abs(e);
        f.max_rel_error = ae > f.max_rel_error ? ae : f.max_rel_error;
        ss += e * e;
    }
    f.rms_rel_error = detail::fit_sqrt(ss / static_cast<double>(points.size()));
    return f;
}

}  // namespace perfcast
