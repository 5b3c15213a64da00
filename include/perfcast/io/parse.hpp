// perfcast/io/parse.hpp: strict text-to-number parsing for command lines and text formats.
//
// Every parse_* function with a field name rejects the whole text unless all of it is consumed,
// and throws perfcast::error naming the field, the text and what was expected: "12x" is not 12,
// "1e400" is not infinity. The field scanners first (blank, trim, iequals, not_recorded,
// parse_double into a number_status, split with a callback) throw nothing: the readers of
// profiles (profile/kernel_fields.hpp, pcie.hpp, msprof_db.hpp) and of .ini files (ini.hpp)
// report a bad field with its file, line and column themselves.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../enum_table.hpp"  // detail::iequals
#include "../error.hpp"
#include "../profile/csv.hpp"  // parse_error::printable
#include "../units.hpp"

namespace perfcast::io {

/// Largest size parse_size accepts, in bytes (1 PiB).
inline constexpr double max_size_bytes = 1125899906842624.0;
/// Longest time parse_duration accepts, in seconds (1 day).
inline constexpr double max_duration_s = 86400.0;

/// Space, tab, CR or LF.
[[nodiscard]] constexpr bool blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// Without surrounding blanks (torch_npu ends start times with a TAB). Hand-written: the
/// library's find_first_not_of calls memchr per character, a hot spot on large profiles.
[[nodiscard]] constexpr std::string_view trim(std::string_view s) noexcept {
    std::size_t b = 0;
    std::size_t e = s.size();
    while (b < e && blank(s[b])) ++b;
    while (e > b && blank(s[e - 1])) --e;
    return s.substr(b, e - b);
}

/// Equal but for ASCII letter case (enum_table.hpp's, which the enum tables use).
using perfcast::detail::iequals;

/// Whether `path` ends in extension `ext` (".onnx"), in any letter case, after a name.
[[nodiscard]] constexpr bool has_extension(std::string_view path, std::string_view ext) noexcept {
    return path.size() > ext.size() && iequals(path.substr(path.size() - ext.size()), ext);
}

/// Empty or "N/A": the profiler did not record the value.
[[nodiscard]] constexpr bool not_recorded(std::string_view s) noexcept {
    return s.empty() || iequals(s, "N/A");
}

enum class number_status : unsigned char { ok, not_a_number, out_of_range };

/// Whole-field decimal: no leading '+', no blanks (trimmed before), finite. Throws nothing: the
/// status says what is wrong (parse_double(text, field) below throws instead).
[[nodiscard]] inline number_status parse_double(std::string_view s, double& out) noexcept {
    if (s.empty()) return number_status::not_a_number;
    // from_chars accepts "inf" and "nan"; a profile value never is one.
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+'))
            return number_status::not_a_number;
    }
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc::result_out_of_range) return number_status::out_of_range;
    if (ec != std::errc{} || ptr != s.data() + s.size()) return number_status::not_a_number;
    if (!std::isfinite(out)) return number_status::out_of_range;
    return number_status::ok;
}

/// Splits on `sep`, calling f(piece) for each piece (an empty input is one empty piece).
template <class F>
constexpr void split(std::string_view s, char sep, F&& f) {
    std::size_t b = 0;
    for (;;) {
        const auto e = s.find(sep, b);
        if (e == std::string_view::npos) {
            f(s.substr(b));
            return;
        }
        f(s.substr(b, e - b));
        b = e + 1;
    }
}

/// A whole-text signed integer.
/// `t` as a whole number written in exponent form, digits[.digits]e[+-]digits with an optional
/// sign ("1e5", "-2.5E3", "1.50e1"), computed exactly in integers; nothing when `t` is not of that
/// form, is not a whole number ("1.5e0") or is outside int64.
[[nodiscard]] inline std::optional<std::int64_t> whole_in_exponent_form(std::string_view t) {
    std::size_t i = 0;
    const bool negative = !t.empty() && t[0] == '-';
    if (!t.empty() && (t[0] == '-' || t[0] == '+')) ++i;
    std::string digits;  // the mantissa's digits, the point left out
    std::int64_t fraction = 0;
    bool point = false;
    for (; i < t.size() && t[i] != 'e' && t[i] != 'E'; ++i) {
        if (t[i] == '.' && !point) {
            point = true;
        } else if (t[i] >= '0' && t[i] <= '9') {
            digits += t[i];
            if (point) ++fraction;
        } else {
            return std::nullopt;
        }
    }
    if (digits.empty() || i + 1 >= t.size()) return std::nullopt;
    std::int64_t exponent = 0;
    const char* first = t.data() + i + 1;
    if (*first == '+') ++first;
    const auto [end, ec] = std::from_chars(first, t.data() + t.size(), exponent);
    if (ec != std::errc{} || end != t.data() + t.size() || exponent > 1000 || exponent < -1000)
        return std::nullopt;
    std::int64_t shift = exponent - fraction;  // value = digits x 10^shift
    while (shift < 0) {                        // the digits below the point must be zeros
        if (digits.back() != '0') return std::nullopt;
        digits.pop_back();
        ++shift;
        if (digits.empty()) digits = "0";
    }
    const std::size_t nonzero = digits.find_first_not_of('0');
    if (nonzero == std::string::npos) return 0;
    digits.erase(0, nonzero);
    if (digits.size() + static_cast<std::size_t>(shift) > 19) return std::nullopt;
    digits.append(static_cast<std::size_t>(shift), '0');
    std::uint64_t magnitude = 0;
    for (const char c : digits) magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    if (magnitude > limit) return std::nullopt;
    return negative ? static_cast<std::int64_t>(0 - magnitude)
                    : static_cast<std::int64_t>(magnitude);
}

/// Whether `t` is a positive number (digits, or in exponent form) of 2^63 or more: a count that
/// no int64 holds ("99999999999999999999", "1e30"), to be called too large, not a non-number.
/// Read as a double, so for text that std::from_chars did not take as an int64 (2^63 - 1 itself
/// rounds to 2^63).
[[nodiscard]] inline bool past_int64(std::string_view t) {
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    const bool all_read = !t.empty() && t[0] != '-' && end == t.data() + t.size();
    // Out of range the other way ("1e-400") is no count too large.
    const bool underflow =
        t.find("e-") != std::string_view::npos || t.find("E-") != std::string_view::npos;
    return all_read && ((ec == std::errc::result_out_of_range && !underflow) ||
                        (ec == std::errc{} && std::isfinite(v) && v >= 0x1p63));
}

[[nodiscard]] inline std::int64_t parse_int(std::string_view text, std::string_view field) {
    const std::string_view t = trim(text);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc{} || end != t.data() + t.size()) {
        // A whole number in exponent form ("1e5", "2.5E3"), as the docs write large counts:
        // exact (no double), or no number at all.
        if (const auto w = whole_in_exponent_form(t)) return *w;
        // A 20-digit integer, or 1e30, is a number, just too large: say so.
        const bool too_large = past_int64(t);
        ::perfcast::detail::precondition_failed(
            "parse", field, "'" + parse_error::printable(text) + "'",
            too_large ? "an integer of at most 9223372036854775807 (2^63 - 1): too large"
                      : "an integer");
    }
    return v;
}

/// A whole-text finite number (no NaN, no infinity, no overflow).
[[nodiscard]] inline double parse_double(std::string_view text, std::string_view field) {
    const std::string_view t = trim(text);
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc{} || end != t.data() + t.size() || !std::isfinite(v)) {
        ::perfcast::detail::precondition_failed(
            "parse", field, "'" + parse_error::printable(text) + "'", "a finite number");
    }
    return v;
}

/// Splits on `sep` (empty pieces kept).
[[nodiscard]] inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t p = s.find(sep, start);
        out.push_back(s.substr(start, p == std::string_view::npos ? p : p - start));
        if (p == std::string_view::npos) break;
        start = p + 1;
    }
    return out;
}

/// "6,8,12" or a range "1-6" or a mix "1-3,8": the integers, in order, each >= `min_value`.
[[nodiscard]] inline std::vector<std::int64_t> parse_int_list(std::string_view text,
                                                              std::string_view field,
                                                              std::int64_t min_value = 1) {
    std::vector<std::int64_t> out;
    for (std::string_view piece : split(text, ',')) {
        const std::string_view p = trim(piece);
        const std::size_t dash = p.find('-', 1);
        std::int64_t lo = 0;
        std::int64_t hi = 0;
        if (dash == std::string_view::npos) {
            lo = hi = parse_int(p, field);
        } else {
            lo = parse_int(p.substr(0, dash), field);
            hi = parse_int(p.substr(dash + 1), field);
            PERFCAST_EXPECTS(hi >= lo && hi - lo <= 100000, "parse", field,
                             std::string(p), "a range LO-HI with LO <= HI");
        }
        PERFCAST_EXPECTS(lo >= min_value, "parse", field, static_cast<double>(lo),
                         "values >= " + std::to_string(min_value));
        for (std::int64_t v = lo; v <= hi; ++v) out.push_back(v);
    }
    return out;
}

/// The units parse_size accepts, as written: decimal and binary byte multiples up to the peta
/// (its bound, max_size_bytes, is 1 PiB) and bits with decimal prefixes (link figures).
inline constexpr std::string_view size_units_text =
    "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB, bit, Kbit, Mbit or Gbit";

/// "4MiB", "64 KB", "512B", "1.5GB", "32Mbit": a data size with a decimal or binary unit (bare
/// numbers are refused: the unit must be named), from 0 B to 1 PiB.
[[nodiscard]] inline data_size parse_size(std::string_view text, std::string_view field) {
    const std::string_view t = trim(text);
    // The number: a sign, digits and points, an exponent only where digits follow its 'e' (the
    // E of "1EB" starts the unit).
    const auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
    std::size_t i = t.starts_with('-') || t.starts_with('+') ? 1 : 0;
    while (i < t.size()) {
        if (digit(i) || t[i] == '.') {
            ++i;
        } else if (t[i] == 'e' || t[i] == 'E') {
            const std::size_t j =
                i + 1 < t.size() && (t[i + 1] == '+' || t[i + 1] == '-') ? i + 2 : i + 1;
            if (!digit(j)) break;
            i = j;
        } else {
            break;
        }
    }
    const std::string_view unit_text = trim(t.substr(i));
    struct named {
        std::string_view name;
        unit<data_dim> u;
    };
    constexpr named known[] = {{"B", units::B},       {"KB", units::KB},     {"MB", units::MB},
                               {"GB", units::GB},     {"TB", units::TB},     {"PB", units::PB},
                               {"KiB", units::KiB},   {"MiB", units::MiB},   {"GiB", units::GiB},
                               {"TiB", units::TiB},   {"PiB", units::PiB},   {"bit", units::bit},
                               {"Kbit", units::Kbit}, {"Mbit", units::Mbit}, {"Gbit", units::Gbit}};
    const std::string quoted = std::string("'") + parse_error::printable(text) + "'";
    for (const named& n : known) {
        if (n.name == unit_text) {
            const double v = parse_double(t.substr(0, i), field);
            const data_size d{v, n.u};
            // 1 PiB: a thousand times the largest device memory (H200: 141 GB); more is a typo.
            PERFCAST_EXPECTS(v >= 0 && d.in(units::B) <= max_size_bytes, "parse", field, quoted,
                             "a size between 0 B and 1 PiB (1125899906842624 B)");
            return d;
        }
    }
    std::string expected;
    if (unit_text.empty()) {
        expected = "a size with a unit: ";
    } else {
        expected = "a size in a supported unit ('";
        expected += parse_error::printable(unit_text);
        expected += "' is not one): ";
    }
    expected += size_units_text;
    ::perfcast::detail::precondition_failed("parse", field, quoted, expected);
}

/// "150us", "7.01ms", "2s": a time with its unit named.
[[nodiscard]] inline duration parse_duration(std::string_view text, std::string_view field) {
    const std::string_view t = trim(text);
    struct named {
        std::string_view name;
        unit<time_dim> u;
    };
    constexpr named known[] = {{"ns", units::ns}, {"us", units::us}, {"ms", units::ms},
                               {"s", units::s}};
    for (const named& n : known) {
        if (t.size() > n.name.size() && t.ends_with(n.name)) {
            const std::string_view num = t.substr(0, t.size() - n.name.size());
            // "ms" also ends with "s": only accept when the number part is all numeric.
            if (!num.empty() && (num.back() < '0' || num.back() > '9') && num.back() != '.')
                continue;
            const double v = parse_double(num, field);
            const duration d{v, n.u};
            // A day: every latency, launch cost or window perfcast models is far shorter.
            PERFCAST_EXPECTS(v >= 0 && d.in(units::s) <= max_duration_s, "parse", field,
                             std::string("'") + std::string(text) + "'",
                             "a time between 0 s and 1 day (86400 s)");
            return d;
        }
    }
    ::perfcast::detail::precondition_failed("parse", field, std::string("'") + std::string(text) + "'",
                                "a time with a unit: ns, us, ms or s");
}

}  // namespace perfcast::io
