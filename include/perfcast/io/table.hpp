// perfcast/io/table.hpp: aligned plain-text tables for people (runtime only).
//
//   perfcast::io::text_table t({"chip", "cores", "TFLOP/s"});
//   t.add_row({"ascend910b3", "20", perfcast::io::format_fixed(294.9, 1)});
//   t.write(std::cout);
//
// A column whose body cells are all numbers (or empty) is right-aligned, others left-aligned;
// `set_align` overrides. Columns are separated by two spaces, the header is underlined with '-',
// and no line has trailing spaces. Widths count UTF-8 code points, not bytes.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../units.hpp"

namespace perfcast::io {

/// `v` with exactly `digits` digits after the point ("363.7"); NaN and infinities as "NaN",
/// "inf", "-inf". No locale.
[[nodiscard]] inline std::string format_fixed(double v, int digits) {
    if (v != v) return "NaN";
    if (v > 1.7976931348623157e308) return "inf";
    if (v < -1.7976931348623157e308) return "-inf";
    // Past 1e15 fixed notation is a wall of digits (1e300 would be 301 of them): exponent form.
    if (v >= 1e15 || v <= -1e15) {
        std::array<char, 64> e{};
        auto [end, ec] =
            std::to_chars(e.data(), e.data() + e.size(), v, std::chars_format::general, 6);
        if (ec == std::errc{}) return std::string(e.data(), end);
    }
    std::array<char, 512> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v,
                                   std::chars_format::fixed, digits < 0 ? 0 : digits);
    if (ec != std::errc{}) return ::perfcast::detail::number_text(v);
    std::string s(buf.data(), end);
    if (s.find_first_not_of("-0.") == std::string::npos && s.front() == '-') s.erase(0, 1);
    return s;  // "-0.0" printed as "0.0"
}

/// Shortest text that reads back as `v` ("0.1", "1e+20"); NaN and infinities as in format_fixed.
[[nodiscard]] inline std::string format_shortest(double v) {
    return ::perfcast::detail::number_text(v);
}

/// `v` to `digits` significant digits, fixed or exponent form as shorter ("18.43", "1.074",
/// "2.5e+07"); NaN and infinities as in format_fixed. For figures a reader compares, not reads
/// back.
[[nodiscard]] inline std::string format_significant(double v, int digits) {
    return ::perfcast::detail::significant_text(v, digits);
}

/// A predicted rate (QPS, samples/s) as the tables show it: whole from 100 up, 3 significant
/// digits below, so that a deployment of 0.3 QPS does not read "0".
[[nodiscard]] inline std::string throughput_text(double v) {
    return v >= 100 ? format_fixed(v, 0) : format_significant(v, 3);
}

/// A size to `digits` significant digits (3 by default; whole from 10^digits of its unit up, no
/// trailing zeros) in the largest binary unit it reaches once rounded: "3.58 GiB", "77.6 MiB",
/// "38.5 KiB", "512 B", "1 MiB" (not "1024 KiB").
[[nodiscard]] inline std::string size_text(data_size v, int digits = 3) {
    constexpr std::array<std::string_view, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
    const double b = v.in(units::B);
    std::size_t u = 0;
    double unit = 1;
    // Whole from 10^digits up, and where rounding to `digits` reaches it (999.7 is "1000", not
    // "1e+03").
    const auto text = [&](double x) {
        const std::string s = format_significant(x, digits);
        return x >= std::pow(10.0, digits) || s.find('e') != std::string::npos ? format_fixed(x, 0)
                                                                               : s;
    };
    // The largest unit whose value, rounded as written, is at least 1; a value that rounds up to
    // 1024 of a unit is 1 of the next.
    while (u + 1 < names.size() && (b / (unit * 1024) >= 1 || text(b / unit) == "1024")) {
        unit *= 1024;
        ++u;
    }
    return text(b / unit) + " " + std::string(names[u]);
}

/// Whether `s` is a number as the writers print it: optional sign, digits, optional fraction and
/// exponent, or NaN / inf. Used to right-align numeric columns.
[[nodiscard]] inline bool looks_numeric(std::string_view s) noexcept {
    if (s.empty()) return false;
    if (s == "NaN" || s == "nan" || s == "inf" || s == "-inf") return true;
    std::size_t i = 0;
    if (s[i] == '-' || s[i] == '+') ++i;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') { ++i; digits = true; }
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') { ++i; digits = true; }
    }
    if (!digits) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        bool exp_digits = false;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') { ++i; exp_digits = true; }
        if (!exp_digits) return false;
    }
    return i == s.size();
}

/// Display width of UTF-8 text: code points (continuation bytes are not counted).
[[nodiscard]] inline std::size_t display_width(std::string_view s) noexcept {
    std::size_t n = 0;
    for (char c : s) {
        if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++n;
    }
    return n;
}

enum class align : unsigned char { automatic, left, right };

/// A header and rows of strings, written with aligned columns.
class text_table {
public:
    explicit text_table(std::vector<std::string> header)
        : header_(std::move(header)), align_(header_.size(), align::automatic) {}
    text_table(std::initializer_list<std::string_view> header)
        : text_table(std::vector<std::string>(header.begin(), header.end())) {}

    /// Adds one row; it must have as many cells as the header (else perfcast::error).
    void add_row(std::vector<std::string> row) {
        if (row.size() != header_.size()) {
            ::perfcast::detail::precondition_failed(
                "io::text_table::add_row", "row size", static_cast<double>(row.size()),
                "as many cells as the header (" + std::to_string(header_.size()) + ")");
        }
        rows_.push_back(std::move(row));
    }
    void add_row(std::initializer_list<std::string_view> row) {
        add_row(std::vector<std::string>(row.begin(), row.end()));
    }

    /// Forces the alignment of column `column` (ignored when out of range).
    void set_align(std::size_t column, align a) {
        if (column < align_.size()) align_[column] = a;
    }

    [[nodiscard]] std::size_t columns() const noexcept { return header_.size(); }
    [[nodiscard]] std::size_t rows() const noexcept { return rows_.size(); }

    void write(std::ostream& os) const {
        const std::size_t n = header_.size();
        std::vector<std::size_t> width(n, 0);
        std::vector<bool> right(n, false);
        for (std::size_t c = 0; c < n; ++c) {
            width[c] = display_width(header_[c]);
            bool numeric = false;
            bool all_numeric = true;
            for (const auto& r : rows_) {
                if (display_width(r[c]) > width[c]) width[c] = display_width(r[c]);
                if (r[c].empty()) continue;
                if (looks_numeric(r[c])) numeric = true; else all_numeric = false;
            }
            right[c] = align_[c] == align::right ||
                       (align_[c] == align::automatic && numeric && all_numeric);
        }
        auto line = [&](const std::vector<std::string>& cells) {
            std::string out;
            for (std::size_t c = 0; c < n; ++c) {
                const std::size_t pad = width[c] - display_width(cells[c]);
                if (c > 0) out += "  ";
                if (right[c]) out.append(pad, ' ');
                out += cells[c];
                if (!right[c]) out.append(pad, ' ');
            }
            while (!out.empty() && out.back() == ' ') out.pop_back();
            os << out << '\n';
        };
        line(header_);
        std::string rule;
        for (std::size_t c = 0; c < n; ++c) {
            if (c > 0) rule += "  ";
            rule.append(width[c], '-');
        }
        os << rule << '\n';
        for (const auto& r : rows_) line(r);
    }

    [[nodiscard]] std::string str() const {
        std::ostringstream os;
        write(os);
        return os.str();
    }

private:
    std::vector<std::string> header_;
    std::vector<align> align_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace perfcast::io
