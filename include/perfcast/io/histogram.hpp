// perfcast/io/histogram.hpp: batch-size histograms and request traces from CSV (runtime).
//
//   bs,count            a histogram: one row per batch size       -> batch_distribution
//   time_ms,bs          a trace: one row per request, in time order -> arrivals
//
// The trace's time column names its unit: time_s, time_ms, time_us or time_ns (also
// timestamp_<unit> and t_<unit>); times are made relative to the first row. Columns are found by
// name in the header (case-insensitive, surrounding blanks ignored; `batch_size` for bs; `share`,
// `requests` or `weight` for count); other columns are ignored. Counts may be fractional
// (shares, percentages); batch sizes are whole numbers in 1..1048576.
//
// Both readers stream: a line at a time, in constant memory (`trace_reader` feeds
// `simulate` straight from the file). Accepted: a UTF-8 byte-order mark, LF, CRLF or CR line
// ends, a missing final line end, blank lines, comment lines whose first non-blank byte is '#',
// fields in double quotes ("16") with doubled quotes inside. Everything else is a
// `perfcast::parse_error` naming the source, line, column, the field and the offending text
// (bytes that are not printable ASCII, such as invalid UTF-8, are shown escaped): an empty
// input, a missing column, a row with fewer or more fields than the header, an empty field,
// a batch size that is not a whole number or out of range, a count that is not a finite number
// > 0, a batch size listed twice, a zero total, times out of order, and a line longer than
// `max_line_bytes` (1 MiB: hostile input cannot make the reader hold more).
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../distribution.hpp"
#include "../error.hpp"
#include "../profile/csv.hpp"
#include "../serving/simulation.hpp"  // arrival, simulate: trace_reader feeds it
#include "../units.hpp"
#include "line_source.hpp"

namespace perfcast::io {

namespace detail {

struct csv_field {
    std::string text;  // unquoted, trimmed
    std::size_t column = 0;
};

[[nodiscard]] inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

/// Whether a line is blank or a comment (first non-blank byte '#').
[[nodiscard]] inline bool skippable(std::string_view line) noexcept {
    for (char c : line) {
        if (is_blank(c)) continue;
        return c == '#';
    }
    return true;
}

/// Splits one line on commas; a field may be quoted. Throws parse_error at the bad byte.
inline void split_fields(const line_source& src, std::string_view where, std::string_view line,
                         std::vector<csv_field>& out) {
    out.clear();
    const char* p = line.data();
    const char* end = line.data() + line.size();
    for (;;) {
        while (p != end && is_blank(*p)) ++p;
        csv_field f;
        f.column = src.column_of(line, p);
        if (p != end && *p == '"') {
            const char* open = p++;
            bool closed = false;
            while (p != end) {
                if (*p == '"') {
                    if (p + 1 != end && p[1] == '"') {
                        f.text.push_back('"');
                        p += 2;
                        continue;
                    }
                    ++p;
                    closed = true;
                    break;
                }
                f.text.push_back(*p++);
            }
            if (!closed) {
                throw parse_error(where, src.source(), src.number(), src.column_of(line, open),
                                  "unterminated quoted field (fields cannot span lines here)",
                                  std::string(open, end));
            }
            while (p != end && is_blank(*p)) ++p;
            if (p != end && *p != ',') {
                const char* q = p;
                while (q != end && *q != ',') ++q;
                throw parse_error(where, src.source(), src.number(), src.column_of(line, p),
                                  "bytes after a closing quote (expected a comma or the line end)",
                                  std::string(p, q));
            }
        } else {
            const char* q = p;
            while (q != end && *q != ',') ++q;
            const char* e = q;
            while (e != p && is_blank(e[-1])) --e;
            f.text.assign(p, e);
            p = q;
        }
        out.push_back(std::move(f));
        if (p == end) return;
        ++p;  // the comma
    }
}

[[nodiscard]] inline std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return r;
}

/// The names in a header, for "found: ..." in an error.
[[nodiscard]] inline std::string header_list(const std::vector<csv_field>& header) {
    std::string s;
    for (const csv_field& f : header) {
        if (!s.empty()) s.append(", ");
        s.append(f.text);
    }
    return s;
}

/// Reads lines until the header; throws on an input without one.
inline void read_header(line_source& src, std::string_view where, std::string_view expected,
                        std::vector<csv_field>& header) {
    std::string_view line;
    while (src.next(line)) {
        if (skippable(line)) continue;
        split_fields(src, where, line, header);
        return;
    }
    throw parse_error(where, src.source(), 0, 0,
                      "empty input: expected a header line naming the columns " +
                          std::string(expected),
                      "");
}

/// Index of the first header field whose lower-case name is one of `names`.
[[nodiscard]] inline std::optional<std::size_t> find_column(
    const std::vector<csv_field>& header, std::initializer_list<std::string_view> names) {
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string n = lower(header[i].text);
        for (std::string_view want : names) {
            if (n == want) return i;
        }
    }
    return std::nullopt;
}

[[noreturn]] inline void missing_column(const line_source& src, std::string_view where,
                                        std::size_t header_line, std::string_view name,
                                        const std::vector<csv_field>& header) {
    throw parse_error(where, src.source(), header_line, 0,
                      "missing column " + std::string(name) +
                          "; the header (the first line that is not a comment) has the columns",
                      header_list(header));
}

/// Checks the row's field count against the header's.
inline void check_width(const line_source& src, std::string_view where, std::string_view line,
                        const std::vector<csv_field>& row, std::size_t width) {
    if (row.size() != width) {
        throw parse_error(where, src.source(), src.number(), 0,
                          std::to_string(row.size()) + " fields where the header has " +
                              std::to_string(width),
                          std::string(line.substr(0, 80)));
    }
}

[[noreturn]] inline void bad_field(const line_source& src, std::string_view where,
                                   const csv_field& f, std::string_view name,
                                   std::string_view expected) {
    throw parse_error(where, src.source(), src.number(), f.column,
                      std::string(name) + " is " +
                          (f.text.empty() ? std::string("empty") : std::string("invalid")) +
                          ", expected " + std::string(expected),
                      f.text);
}

/// A whole number of samples in 1..max_batch_size.
[[nodiscard]] inline int parse_bs(const line_source& src, std::string_view where,
                                  const csv_field& f, std::string_view name) {
    constexpr std::string_view expected = "a whole number of samples in 1..1048576";
    const std::string& t = f.text;
    long long v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc{} || ptr != t.data() + t.size() || v < 1 ||
        v > max_batch_size) {
        bad_field(src, where, f, name, expected);
    }
    return static_cast<int>(v);
}

/// A finite decimal number (no "inf", "nan", hex).
[[nodiscard]] inline double parse_real(const line_source& src, std::string_view where,
                                       const csv_field& f, std::string_view name,
                                       std::string_view expected) {
    const std::string& t = f.text;
    double v = 0;
    const auto [ptr, ec] =
        std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
    if (t.empty() || ec != std::errc{} || ptr != t.data() + t.size() || !std::isfinite(v)) {
        bad_field(src, where, f, name, expected);
    }
    return v;
}

}  // namespace detail

namespace detail {

inline batch_distribution read_bs_histogram_from(line_source& src) {
    constexpr std::string_view where = "read_bs_histogram";
    std::vector<csv_field> header;
    read_header(src, where, "bs,count", header);
    const std::size_t header_line = src.number();
    const auto bs_col = find_column(header, {"bs", "batch_size"});
    if (!bs_col) missing_column(src, where, header_line, "bs", header);
    const auto count_col = find_column(header, {"count", "share", "requests", "weight"});
    if (!count_col) missing_column(src, where, header_line, "count", header);

    std::map<int, std::size_t> seen;  // bs -> line
    std::vector<bs_count> bins;
    double total = 0;
    std::vector<csv_field> row;
    std::string_view line;
    while (src.next(line)) {
        if (skippable(line)) continue;
        split_fields(src, where, line, row);
        check_width(src, where, line, row, header.size());
        const csv_field& bf = row[*bs_col];
        const csv_field& cf = row[*count_col];
        const int bs = parse_bs(src, where, bf, "bs");
        const double count = parse_real(src, where, cf, "count", "a finite number > 0");
        if (!(count > 0)) {
            throw parse_error(where, src.source(), src.number(), cf.column,
                              "count must be > 0 (a bin with no requests is left out)", cf.text);
        }
        const auto [it, fresh] = seen.emplace(bs, src.number());
        if (!fresh) {
            throw parse_error(where, src.source(), src.number(), bf.column,
                              "bs listed twice (first on line " + std::to_string(it->second) +
                                  ")",
                              bf.text);
        }
        total += count;
        if (!std::isfinite(total)) {
            throw parse_error(where, src.source(), src.number(), cf.column,
                              "total count overflows a double", cf.text);
        }
        bins.push_back({bs, count});
    }
    if (bins.empty()) {
        throw parse_error(where, src.source(), 0, 0,
                          "zero total: no bs,count rows after the header", "");
    }
    return batch_distribution(bins);
}

/// Seconds per unit of a time column name, or 0 when the name is not a time column.
[[nodiscard]] inline double time_unit_of(std::string_view lower_name) noexcept {
    for (std::string_view prefix : {"time_", "timestamp_", "t_"}) {
        if (lower_name.substr(0, prefix.size()) != prefix) continue;
        const std::string_view u = lower_name.substr(prefix.size());
        if (u == "s") return 1.0;
        if (u == "ms") return 1e-3;
        if (u == "us") return 1e-6;
        if (u == "ns") return 1e-9;
    }
    return 0.0;
}

}  // namespace detail

/// Reads a `bs,count` histogram from `in`; `source` names it in errors.
[[nodiscard]] inline batch_distribution read_bs_histogram(std::istream& in,
                                                          std::string source = "<stream>") {
    detail::line_source src(in, std::move(source), "read_bs_histogram", max_line_bytes);
    return detail::read_bs_histogram_from(src);
}

/// Reads a `bs,count` histogram from text in memory.
[[nodiscard]] inline batch_distribution parse_bs_histogram(std::string_view text,
                                                           std::string source = "<string>") {
    detail::line_source src(text, std::move(source), "read_bs_histogram", max_line_bytes);
    return detail::read_bs_histogram_from(src);
}

/// Reads a `bs,count` histogram from a file (`--bs-hist FILE`).
[[nodiscard]] inline batch_distribution read_bs_histogram_file(const std::string& path) {
    std::ifstream f = profile::open_input(path, "read_bs_histogram");
    return read_bs_histogram(f, path);
}

/// The longest trace read_trace accepts, first row to last: 1e9 s (31.7 years; an assumption,
/// far past any stress test, so that a time in the wrong unit is an error, not an overflow).
inline constexpr double max_trace_span_s = 1e9;

/// A request trace read a row at a time: an ArrivalSource for `simulate`. Times are relative to
/// the first row.
class trace_reader {
public:
    explicit trace_reader(std::istream& in, std::string source = "<stream>")
        : src_(in, std::move(source), where, max_line_bytes) {
        start();
    }
    explicit trace_reader(std::string_view text, std::string source = "<string>")
        : src_(text, std::move(source), where, max_line_bytes) {
        start();
    }

    /// The next arrival, or nothing at the end. Throws parse_error.
    [[nodiscard]] std::optional<arrival> next() {
        std::string_view line;
        while (src_.next(line)) {
            if (detail::skippable(line)) continue;
            detail::split_fields(src_, where, line, row_);
            detail::check_width(src_, where, line, row_, width_);
            const detail::csv_field& tf = row_[time_col_];
            const double t = detail::parse_real(src_, where, tf, time_name_, "a finite time");
            const int bs = detail::parse_bs(src_, where, row_[bs_col_], "bs");
            if (rows_ > 0 && t < prev_) {
                throw parse_error(where, src_.source(), src_.number(), tf.column,
                                  time_name_ + " is earlier than the row before (" +
                                      ::perfcast::detail::number_text(prev_) + " on line " +
                                      std::to_string(prev_line_) + "): rows must be in time order",
                                  tf.text);
            }
            if (rows_ == 0) first_ = t;
            // Each time is finite, their difference need not be (-1e308 then 1e308): at most
            // max_trace_span_s after the first row (an assumption: a longer trace is a unit
            // mistake, or two traces joined).
            const double since = (t - first_) * unit_s_;
            if (!(since <= max_trace_span_s)) {
                throw parse_error(where, src_.source(), src_.number(), tf.column,
                                  time_name_ +
                                      " is more than 1e9 s (31 years) after the first "
                                      "row's: a trace spans less",
                                  tf.text);
            }
            prev_ = t;
            prev_line_ = src_.number();
            ++rows_;
            return arrival{duration{since, units::s}, bs};
        }
        if (rows_ == 0 && !reported_empty_) {
            reported_empty_ = true;
            throw parse_error(where, src_.source(), 0, 0,
                              "no rows after the header (a trace needs at least one request)",
                              "");
        }
        return std::nullopt;
    }

    /// Rows returned so far.
    [[nodiscard]] std::size_t rows() const noexcept { return rows_; }

private:
    static constexpr std::string_view where = "read_trace";

    void start() {
        std::vector<detail::csv_field> header;
        detail::read_header(src_, where, "time_ms,bs", header);
        width_ = header.size();
        const std::size_t header_line = src_.number();
        bool found = false;
        for (std::size_t i = 0; i < header.size(); ++i) {
            const double u = detail::time_unit_of(detail::lower(header[i].text));
            if (u > 0) {
                time_col_ = i;
                unit_s_ = u;
                time_name_ = header[i].text;
                found = true;
                break;
            }
        }
        if (!found) {
            detail::missing_column(src_, where, header_line,
                                   "time_s, time_ms, time_us or time_ns", header);
        }
        const auto b = detail::find_column(header, {"bs", "batch_size"});
        if (!b) detail::missing_column(src_, where, header_line, "bs", header);
        bs_col_ = *b;
    }

    detail::line_source src_;
    std::vector<detail::csv_field> row_;
    std::size_t width_ = 0;
    std::size_t time_col_ = 0;
    std::size_t bs_col_ = 0;
    double unit_s_ = 1.0;
    std::string time_name_;
    double first_ = 0;
    double prev_ = 0;
    std::size_t prev_line_ = 0;
    std::size_t rows_ = 0;
    bool reported_empty_ = false;
};

/// Every arrival of a trace in `in`.
[[nodiscard]] inline std::vector<arrival> read_trace(std::istream& in,
                                                     std::string source = "<stream>") {
    trace_reader r(in, std::move(source));
    std::vector<arrival> out;
    while (auto a = r.next()) out.push_back(*a);
    return out;
}

/// Every arrival of a trace held in memory.
[[nodiscard]] inline std::vector<arrival> parse_trace(std::string_view text,
                                                      std::string source = "<string>") {
    trace_reader r(text, std::move(source));
    std::vector<arrival> out;
    while (auto a = r.next()) out.push_back(*a);
    return out;
}

/// Every arrival of a trace file (`--trace FILE`).
[[nodiscard]] inline std::vector<arrival> read_trace_file(const std::string& path) {
    std::ifstream f = profile::open_input(path, "read_trace");
    return read_trace(f, path);
}

}  // namespace perfcast::io
