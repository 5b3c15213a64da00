// perfcast/profile/kernel_reader.hpp: the streaming reader of op_summary / kernel_details
// CSVs (kernel_details_reader), its options and skipped rows, the device / step checks it
// shares with the database reader, and the whole-file readers (read_kernel_details*).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../units.hpp"
#include "csv.hpp"
#include "kernel_columns.hpp"
#include "kernel_fields.hpp"
#include "kernel_row.hpp"

namespace perfcast::profile {

struct kernel_reader_options {
    /// Check MatMul/BatchMatMul input shapes against the output shape (note `shape_conflict`).
    bool check_matmul_shapes = true;
    /// A damaged row (a field count other than the header's, a value that is not what its
    /// column holds) is an error when true; when false it is skipped and listed in
    /// `kernel_details_reader::skipped()` with its line and reason. Damage to the file's
    /// structure (an unterminated quote, bytes after a closing quote, a record over
    /// `csv.max_record_bytes`) and a bad header are errors either way: nothing after them can
    /// be trusted to start a row.
    bool strict = false;
    /// Skipped rows kept with their reasons (every skip is counted; the list stops here so that
    /// a file of millions of bad rows reads in bounded memory).
    std::size_t max_skipped_listed = 1000;
    /// Rows of this device only (Device_id), the others counted in `devices()`. Unset: a file
    /// with rows of more than one device is an error at its end unless `several_devices`
    /// (utilization summed over devices is meaningless: 168.8 % on a two-device op_summary).
    /// A file without the column has no row to pick: `device` is then an error at its end,
    /// unless it is `source_device`, the device the file's folder names (msprof's device_N;
    /// for_each_source_file sets it from profile_source::device), when every row is its.
    std::optional<int> device;
    std::optional<int> source_device;
    bool several_devices = false;
    /// Rows of this training or inference step only (Step Id), the others counted in `steps()`.
    /// Unset: every step's rows (the report says how many steps they span). A step no row has,
    /// or a file without the column, is an error at its end.
    std::optional<int> step;
    /// Whether the reader runs the device and step checks above when its rows end. False
    /// leaves them to a caller that reads several files as one table: for_each_source_file
    /// (discover.hpp) runs them over every slice of a sliced op_summary, from each reader's
    /// `devices()` and `steps()`.
    bool check_at_end = true;
    /// The CSV layer (its `check_field_count` is not used: the reader compares each row with
    /// the header itself, so that a ragged row can be skipped).
    csv_options csv{};
};

/// A row the reader skipped (`kernel_reader_options::strict` false): where, why and what it
/// held (its fields joined by the delimiter, cut to 80 bytes).
struct skipped_row {
    std::string source;  // the file
    std::size_t line = 0;
    std::size_t column = 0;  // 0: the whole row (a wrong field count)
    std::string reason;
    std::string excerpt;
};

/// "FILE:LINE[:COLUMN]: reason: \"excerpt\"" (the excerpt made printable). Line 0 is a part
/// of the table larger than a row (a slice of a sliced op_summary missing or not read):
/// "FILE: reason", with the excerpt only when there is one.
[[nodiscard]] inline std::string describe(const skipped_row& s) {
    std::string m(s.source);
    if (s.line == 0) {
        m += ": " + s.reason;
        if (!s.excerpt.empty()) m += ": \"" + parse_error::printable(s.excerpt) + '"';
        return m;
    }
    m += ':' + std::to_string(s.line);
    if (s.column != 0) m += ':' + std::to_string(s.column);
    return m + ": " + s.reason + ": \"" + parse_error::printable(s.excerpt) + '"';
}

namespace detail {

/// At the end of a profile: `--device N` must name a device the rows have, and rows of several
/// devices need `several_devices` (utilization summed over devices is meaningless). `devices`:
/// rows per Device_id, before the filter. Shared by the CSV and database readers.
inline void check_devices(const std::map<int, std::size_t>& devices,
                          const kernel_reader_options& opt, const std::string& source,
                          std::string_view where) {
    const auto list = [&devices] {
        std::string out;
        for (const auto& [id, n] : devices) {
            if (!out.empty()) out += ", ";
            out += "device " + std::to_string(id) + ": " + std::to_string(n) + " rows";
        }
        return out;
    };
    if (opt.device) {
        if (devices.empty() && opt.source_device != opt.device) {
            throw parse_error(
                where, source, 0, 0,
                opt.source_device
                    ? "device " + std::to_string(*opt.device) + " asked for, but the table is " +
                          "device " + std::to_string(*opt.source_device) +
                          "'s (its folder device_" + std::to_string(*opt.source_device) +
                          ") and has no Device_id column"
                    : "device " + std::to_string(*opt.device) +
                          " asked for, but the table has no Device_id column to pick its rows "
                          "by (older torch_npu kernel_details have none, CANN 8.3's have it: "
                          "a rank's folder is one device)",
                "Device_id");
        }
        if (!devices.empty() && !devices.contains(*opt.device)) {
            throw parse_error(where, source, 0, 0,
                              "no row of device " + std::to_string(*opt.device) +
                                  " (the file has " + list() + ")",
                              "Device_id");
        }
        return;
    }
    if (devices.size() > 1 && !opt.several_devices) {
        throw parse_error(where, source, 0, 0,
                          "rows of " + std::to_string(devices.size()) + " devices (" + list() +
                              "): choose one (--device N)",
                          "Device_id");
    }
}

/// At the end of a profile: `--step N` must name a step the rows have ("the file has step 1:
/// 40 rows, ..." otherwise; a file without the Step Id column has none to pick). `steps`: rows
/// per Step Id, before the filter.
inline void check_step(const std::map<int, std::size_t>& steps, const kernel_reader_options& opt,
                       const std::string& source, std::string_view where) {
    if (!opt.step || steps.contains(*opt.step)) return;
    if (steps.empty()) {
        throw parse_error(where, source, 0, 0,
                          "step " + std::to_string(*opt.step) +
                              " asked for, but no row has a Step Id (torch_npu's kernel_details "
                              "has the column; msprof's op_summary does not)",
                          "Step Id");
    }
    std::string list;
    for (const auto& [id, n] : steps) {
        if (!list.empty()) list += ", ";
        list += "step " + std::to_string(id) + ": " + std::to_string(n) + " rows";
    }
    throw parse_error(
        where, source, 0, 0,
        "no row of step " + std::to_string(*opt.step) + " (the file has " + list + ")", "Step Id");
}

}  // namespace detail

/// Streams the rows of an op_summary / kernel_details CSV.
class kernel_details_reader {
public:
    explicit kernel_details_reader(std::istream& in, std::string source = "<stream>",
                                   kernel_reader_options opt = {})
        : csv_(in, std::move(source), unchecked(opt.csv)), opt_(opt) {
        read_header();
    }
    /// From text in memory (not copied).
    explicit kernel_details_reader(std::string_view text, std::string source = "<string>",
                                   kernel_reader_options opt = {})
        : csv_(text, std::move(source), unchecked(opt.csv)), opt_(opt) {
        read_header();
    }

    [[nodiscard]] const kernel_header& header() const noexcept { return header_; }
    [[nodiscard]] const std::string& source() const noexcept { return csv_.source(); }
    /// Rows skipped so far (at most `max_skipped_listed` of them) and how many in all.
    [[nodiscard]] const std::vector<skipped_row>& skipped() const noexcept { return skipped_; }
    [[nodiscard]] std::size_t skipped_count() const noexcept { return skipped_count_; }
    /// Rows read per Device_id (all devices, before the `device` filter); empty without the
    /// column.
    [[nodiscard]] const std::map<int, std::size_t>& devices() const noexcept { return devices_; }
    /// Rows read per Step Id (all steps and devices, before the `step` filter); empty without
    /// the column.
    [[nodiscard]] const std::map<int, std::size_t>& steps() const noexcept { return steps_; }
    /// Adds to `skipped()` a part of the table lost outside this file's rows, counted as one
    /// skip: for_each_source_file reports a missing or unreadable slice of a sliced op_summary
    /// through the reader of the first slice it reads.
    void add_skipped(skipped_row s) { skip(std::move(s)); }

    /// Reads the next usable row into `row` (reusing its storage); false at the end. A damaged
    /// row is skipped (or, `strict`, thrown as a parse_error).
    bool next(kernel_row& row) {
        for (;;) {
            if (!csv_.next()) {
                if (opt_.check_at_end) check_devices();
                return false;
            }
            const csv_record& r = csv_.record();
            // A whole row that cannot be a row: a wrong field count, or the header again (two
            // tables joined with `cat`).
            std::string reason;
            if (r.size() != header_.columns.size()) {
                reason = std::to_string(r.size()) + " fields where the header has " +
                         std::to_string(header_.columns.size());
            } else if (repeats_header(r)) {
                reason = "the header again (tables joined?)";
            }
            if (!reason.empty()) {
                if (opt_.strict) {
                    throw parse_error(where, csv_.source(), r.line(), 0, reason,
                                      r.joined(csv_.options().delimiter));
                }
                skip({csv_.source(), r.line(), 0, reason, r.joined(csv_.options().delimiter)});
                continue;
            }
            try {
                fill(row);
                if (row.device) {
                    ++devices_[*row.device];
                    if (opt_.device && *row.device != *opt_.device) continue;
                }
                if (row.step) ++steps_[*row.step];
                if (opt_.step && row.step != opt_.step) continue;
                return true;
            } catch (const row_damage& d) {
                if (opt_.strict) csv_.fail_at_field(d.field, where, d.problem);
                skip({csv_.source(), r.line(), r.position(d.field).column,
                      d.problem + ": \"" + parse_error::printable(r[d.field]) + '"',
                      r.joined(csv_.options().delimiter)});
            }
        }
    }

private:
    static constexpr std::string_view where = "read_kernel_details";

    // A field that is not what its column holds: thrown by fill(), turned by next() into a
    // parse_error (strict) or a skipped row.
    struct row_damage {
        std::size_t field;
        std::string problem;
    };

    static csv_options unchecked(csv_options o) noexcept {
        o.check_field_count = false;
        return o;
    }
    void check_devices() const {
        detail::check_devices(devices_, opt_, csv_.source(), where);
        detail::check_step(steps_, opt_, csv_.source(), where);
    }
    void skip(skipped_row s) {
        ++skipped_count_;
        if (skipped_.size() < opt_.max_skipped_listed) skipped_.push_back(std::move(s));
    }

    [[nodiscard]] bool repeats_header(const csv_record& r) const noexcept {
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (detail::trim(r[i]) != header_.columns[i]) return false;
        }
        return true;
    }

    // What a file starting with `f` is when its magic number says it is not text, or nothing.
    [[nodiscard]] static std::optional<std::string_view> not_text_start(std::string_view f) {
        // The SQLite header string, "SQLite format 3" and a NUL
        // (https://www.sqlite.org/fileformat.html, 1.3.1): a database reaches this reader
        // only from standard input or a pipe (discover.hpp reads a .db file by its path).
        if (f.starts_with(std::string_view("SQLite format 3\0", 16))) {
            return "an SQLite database, not CSV text: give its file path (a database is read "
                   "from its file, not from standard input or a pipe)";
        }
        // The gzip magic number, 1f 8b (RFC 1952, 2.3.1: ID1 ID2).
        if (f.starts_with("\x1F\x8B")) {
            return "gzip-compressed, not CSV text: decompress it first (gunzip FILE, or "
                   "zcat FILE | perfcast report - ...)";
        }
        return std::nullopt;
    }

    // What a header that is not text is, from its bytes, or nothing: named, since its header
    // otherwise reads as unknown names.
    [[nodiscard]] static std::optional<std::string_view> not_text(const csv_record& h) {
        const std::string_view f = h.empty() ? std::string_view{} : h[0];
        if (const auto what = not_text_start(f)) return what;
        // UTF-16 (a spreadsheet's "Unicode text"): a byte-order mark FF FE / FE FF, or the
        // letters of an ASCII header with a NUL before (big-endian) or after (little-endian)
        // each: NULs in every other byte and nowhere else.
        const auto alternating = [f](std::size_t nul_at) {
            if (f.size() < 2) return false;
            for (std::size_t i = 0; i < f.size(); ++i) {
                if ((f[i] == '\0') != (i % 2 == nul_at)) return false;
            }
            return true;
        };
        if (f.starts_with("\xFF\xFE") || f.starts_with("\xFE\xFF") || alternating(0) ||
            alternating(1)) {
            return "the file is UTF-16 text; perfcast reads UTF-8 (convert it, e.g. "
                   "iconv -f UTF-16 -t UTF-8)";
        }
        for (std::size_t i = 0; i < h.size(); ++i) {
            if (h[i].find('\0') != std::string_view::npos) {
                return "NUL bytes in the header: a binary file, not CSV text";
            }
        }
        return std::nullopt;
    }

    void read_header() {
        bool any = false;
        try {
            any = csv_.next();
        } catch (const parse_error& e) {
            // Binary bytes can break the CSV layer in the first record (a quote after a comma
            // never closed): its excerpt of an over-long record starts at the file's first byte.
            if (e.line() <= 1 && !e.text().empty()) {
                if (const auto what = not_text_start(e.text())) {
                    throw parse_error(where, csv_.source(), 1, 0, *what, e.text());
                }
            }
            throw;
        }
        if (!any) {
            throw parse_error(where, csv_.source(), 1, 0,
                              "empty file (expected a header with Type, Accelerator Core and "
                              "Duration(us))",
                              "");
        }
        const csv_record& h = csv_.record();
        if (const auto what = not_text(h)) {
            throw parse_error(where, csv_.source(), h.line(), 0, *what,
                              h.joined(csv_.options().delimiter));
        }
        for (std::size_t i = 0; i < h.size(); ++i) {
            const std::string_view name = detail::trim(h[i]);
            header_.columns.emplace_back(name);
            bool known = false;
            for (const auto& sp : kernel_column_spellings) {
                if (!detail::iequals(name, sp.text)) continue;
                known = true;
                auto& slot = header_.index[static_cast<std::size_t>(sp.column)];
                if (slot) {
                    csv_.fail_at_field(
                        i, where,
                        "column given twice (also as field " + std::to_string(*slot + 1) + ")");
                }
                slot = i;
            }
            if (!known) header_.not_read.emplace_back(name);
        }
        const auto require = [&](kernel_column c, std::string_view names) {
            if (!header_.has(c)) {
                std::string all;
                for (const auto& n : header_.columns) all += (all.empty() ? "" : ",") + n;
                std::string problem = "missing required column " + std::string(names);
                // One field holding another separator: a table saved with ';' or tabs.
                if (h.size() == 1 && all.find_first_of(";\t") != std::string::npos) {
                    problem += " (the header is one field: the table is separated by '" +
                               std::string(all.find(';') != std::string::npos ? ";" : "\\t") +
                               "'; perfcast reads comma-separated tables)";
                }
                throw parse_error(where, csv_.source(), h.line(), 0, problem, all);
            }
        };
        require(kernel_column::op_type, "Type (or OP Type)");
        require(kernel_column::task_type, "Accelerator Core (or Task Type)");
        require(kernel_column::duration, "Duration(us) (or Task Duration(us))");
        const std::string_view type_name = header_.columns[*col(kernel_column::op_type)];
        if (detail::iequals(type_name, "OP Type")) {
            header_.format = kernel_format::msprof_op_summary;
        } else if (header_.has(kernel_column::start) || header_.has(kernel_column::name)) {
            header_.format = kernel_format::torch_npu_kernel_details;
        } else {
            header_.format = kernel_format::minimal;
        }
    }

    [[nodiscard]] std::optional<std::size_t> col(kernel_column c) const noexcept {
        return header_.index[static_cast<std::size_t>(c)];
    }
    [[nodiscard]] std::string_view field(kernel_column c) const noexcept {
        const auto i = col(c);
        return i ? detail::trim(csv_.record()[*i]) : std::string_view{};
    }

    [[noreturn]] void bad(kernel_column c, std::string_view problem) const {
        const std::size_t i = *col(c);
        throw row_damage{i, std::string(problem) + " in column '" + header_.columns[i] + "'"};
    }

    // A non-negative finite number in the column's range (kernel_columns.hpp value_problem:
    // a time at most a day, issue 16; a share at most 1), or nothing.
    [[nodiscard]] std::optional<double> number(kernel_column c) const {
        const std::string_view s = field(c);
        if (detail::not_recorded(s)) return std::nullopt;
        double v = 0;
        switch (detail::parse_double(s, v)) {
            case detail::number_status::ok: break;
            case detail::number_status::not_a_number: bad(c, "not a number");
            case detail::number_status::out_of_range: bad(c, "number out of the range of a double");
        }
        if (v < 0) bad(c, "negative value");
        if (const std::string_view p = value_problem(c, v); !p.empty()) bad(c, p);
        return v;
    }
    [[nodiscard]] std::optional<duration> micros(kernel_column c) const {
        const std::optional<double> v = number(c);
        return v ? std::optional{duration{*v, units::us}} : std::nullopt;
    }
    [[nodiscard]] std::optional<cycle_count> cycles(kernel_column c) const {
        const std::optional<double> v = number(c);
        return v ? std::optional{cycle_count{*v, units::cycle}} : std::nullopt;
    }
    [[nodiscard]] std::optional<bool> yes_no(kernel_column c) const {
        const std::string_view s = field(c);
        if (detail::not_recorded(s)) return std::nullopt;
        if (detail::iequals(s, "YES")) return true;
        if (detail::iequals(s, "NO")) return false;
        bad(c, "YES or NO");
    }
    [[nodiscard]] std::optional<int> count(kernel_column c) const {
        const std::string_view s = field(c);
        if (detail::not_recorded(s)) return std::nullopt;
        int v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) bad(c, "count out of range");
        if (ec != std::errc{} || ptr != s.data() + s.size()) bad(c, "not an integer");
        if (v < 0) bad(c, "negative count");
        return v;
    }

    void fill(kernel_row& row) {
        const csv_record& r = csv_.record();
        row.line = r.line();
        row.name.assign(field(kernel_column::name));
        row.op_type.assign(field(kernel_column::op_type));
        // A required column without its value: the row cannot be placed or timed (an empty
        // Duration read as 0 once gave a 0 us op in the report).
        if (detail::not_recorded(row.op_type)) bad(kernel_column::op_type, "no op type");
        row.task_text.assign(field(kernel_column::task_type));
        row.task = parse_task_type(row.task_text);

        row.start.reset();
        if (const std::string_view s = field(kernel_column::start); !detail::not_recorded(s)) {
            std::int64_t ns = 0;
            if (!detail::parse_timestamp_us(s, ns)) {
                bad(kernel_column::start, "not a timestamp in microseconds");
            }
            row.start = timestamp{ns};
        }
        row.task_duration = micros(kernel_column::duration);
        if (!row.task_duration) bad(kernel_column::duration, "no duration (empty or N/A)");
        row.wait = micros(kernel_column::wait);
        row.block_dim = count(kernel_column::block_dim);
        row.mix_block_dim = count(kernel_column::mix_block_dim);

        row.notes.clear();
        shapes(kernel_column::input_shapes, row.input_shapes, row);
        shapes(kernel_column::output_shapes, row.output_shapes, row);
        dtypes(kernel_column::input_types, row.input_types);
        dtypes(kernel_column::output_types, row.output_types);
        formats(kernel_column::input_formats, row.input_formats);
        formats(kernel_column::output_formats, row.output_formats);

        row.aic_total_cycles = cycles(kernel_column::aic_total_cycles);
        row.aiv_total_cycles = cycles(kernel_column::aiv_total_cycles);
        row.aicore_time = micros(kernel_column::aicore_time);
        row.aiv_time = micros(kernel_column::aiv_time);
        row.aic_mac_ratio = number(kernel_column::aic_mac_ratio);
        row.aic_scalar_ratio = number(kernel_column::aic_scalar_ratio);
        row.aic_mte1_ratio = number(kernel_column::aic_mte1_ratio);
        row.aic_mte2_ratio = number(kernel_column::aic_mte2_ratio);
        row.aic_fixpipe_ratio = number(kernel_column::aic_fixpipe_ratio);
        row.aiv_vec_ratio = number(kernel_column::aiv_vec_ratio);
        row.aiv_scalar_ratio = number(kernel_column::aiv_scalar_ratio);
        row.aiv_mte2_ratio = number(kernel_column::aiv_mte2_ratio);
        row.aiv_mte3_ratio = number(kernel_column::aiv_mte3_ratio);
        row.cube_utilization_pct = number(kernel_column::cube_utilization);
        row.device = count(kernel_column::device_id);
        row.step = count(kernel_column::step_id);
        row.memory_bound = number(kernel_column::memory_bound);
        row.hf32_eligible = yes_no(kernel_column::hf32_eligible);
        engine_from_cycles(row);

        check_row(row, opt_.check_matmul_shapes);
    }

    void shapes(kernel_column c, std::vector<tensor_shape>& out, kernel_row& row) const {
        const std::string_view s = field(c);
        if (!col(c) || detail::iequals(s, "N/A")) {
            out.clear();
            return;
        }
        const std::string_view inner = detail::strip_inner_quotes(s);
        if (!detail::parse_shapes(inner, out)) {
            row.notes.push_back(
                {note_kind::bad_shape, header_.columns[*col(c)] + " = " + std::string(s)});
        }
    }
    void dtypes(kernel_column c, std::vector<tensor_dtype>& out) const {
        const std::string_view s = field(c);
        if (!col(c) || detail::not_recorded(s)) {
            out.clear();
            return;
        }
        detail::parse_dtypes(detail::strip_inner_quotes(s), out);
    }
    void formats(kernel_column c, std::vector<std::string>& out) const {
        const std::string_view s = field(c);
        if (!col(c) || detail::not_recorded(s)) {
            out.clear();
            return;
        }
        detail::parse_formats(detail::strip_inner_quotes(s), out);
    }

    csv_reader csv_;
    kernel_reader_options opt_;
    kernel_header header_;
    std::vector<skipped_row> skipped_;
    std::size_t skipped_count_ = 0;
    std::map<int, std::size_t> devices_;
    std::map<int, std::size_t> steps_;
};

/// Calls `f(const kernel_row&)` for each row of `in`; returns the header. Constant memory.
template <class F>
kernel_header for_each_kernel_row(std::istream& in, std::string source, F&& f,
                                  kernel_reader_options opt = {}) {
    kernel_details_reader r(in, std::move(source), opt);
    kernel_row row;
    while (r.next(row)) f(static_cast<const kernel_row&>(row));
    return r.header();
}

/// A whole profile in memory, with the rows the reader skipped.
struct kernel_table {
    kernel_header header;
    std::vector<kernel_row> rows;
    std::vector<skipped_row> skipped;  // the first `max_skipped_listed` skipped rows
    std::size_t skipped_count = 0;     // every skipped row
};

namespace detail {
[[nodiscard]] inline kernel_table read_all(kernel_details_reader& r) {
    kernel_table t;
    kernel_row row;
    while (r.next(row)) t.rows.push_back(row);
    t.header = r.header();
    t.skipped = r.skipped();
    t.skipped_count = r.skipped_count();
    return t;
}
}  // namespace detail

[[nodiscard]] inline kernel_table read_kernel_details(std::istream& in,
                                                      std::string source = "<stream>",
                                                      kernel_reader_options opt = {}) {
    kernel_details_reader r(in, std::move(source), opt);
    return detail::read_all(r);
}

[[nodiscard]] inline kernel_table parse_kernel_details(std::string_view text,
                                                       std::string source = "<string>",
                                                       kernel_reader_options opt = {}) {
    kernel_details_reader r(text, std::move(source), opt);
    return detail::read_all(r);
}

[[nodiscard]] inline kernel_table read_kernel_details_file(const std::string& path,
                                                           kernel_reader_options opt = {}) {
    std::ifstream f = open_input(path, "read_kernel_details");
    return read_kernel_details(f, path, opt);
}

}  // namespace perfcast::profile
