// perfcast/profile/csv.hpp: a streaming RFC 4180 reader (runtime; allocates).
//
// Reads one record at a time from a std::istream or from text in memory, so a profile of any
// size is read in constant memory. Handles what the Ascend profilers write: quoted fields with
// doubled quotes, commas, newlines and TABs inside quotes (torch_npu writes start times as
// "1736413971558972.912\t"), CRLF or LF line ends, a UTF-8 byte-order mark. Bytes are passed
// through untouched: invalid UTF-8 is not an error here.
//
// Every error is a `perfcast::parse_error` carrying the source name, line, column and the
// offending text: an unterminated quote, bytes after a closing quote, a record longer than
// `csv_options::max_record_bytes` (1 MiB by default: a guard against a missing closing quote
// swallowing the whole file), and a record whose field count differs from the first record's.
//
// Choices beyond RFC 4180 (documented in docs/profiles.md):
//  - a line with no bytes at all is skipped (profilers end files with blank lines); a line
//    holding `""` is a record with one empty field;
//  - a lone CR ends a line like LF and CRLF do;
//  - a quote inside an unquoted field is kept as a literal byte (`ab"c` reads as `ab"c`).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../error.hpp"

namespace perfcast {

/// An error in a text input (CSV profile, CANN ini): where it is and what was found there.
/// `what()` reads "perfcast::<where>: <source>:<line>:<column>: <problem>: \"<text>\"".
/// Line and column are 1-based; column counts bytes; 0 means "not applicable".
class parse_error : public error {
public:
    parse_error(std::string_view where, std::string source, std::size_t line, std::size_t column,
                std::string_view problem, std::string text)
        : error(make_message(where, source, line, column, problem, text)),
          source_(std::move(source)),
          problem_(problem),
          text_(std::move(text)),
          line_(line),
          column_(column) {}

    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] std::size_t line() const noexcept { return line_; }
    [[nodiscard]] std::size_t column() const noexcept { return column_; }
    /// The offending text as it was in the input (not escaped).
    [[nodiscard]] const std::string& text() const noexcept { return text_; }
    /// What is wrong, without the place and the text: for a message that names the place itself.
    [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

    /// `text` made printable for a message: at most `max` bytes, control and non-ASCII bytes
    /// as \t, \r, \n, \xNN, quotes and backslashes escaped.
    [[nodiscard]] static std::string printable(std::string_view text, std::size_t max = 80) {
        static constexpr char hex[] = "0123456789ABCDEF";
        std::string out;
        const std::size_t n = std::min(text.size(), max);
        for (std::size_t i = 0; i < n; ++i) {
            const auto c = static_cast<unsigned char>(text[i]);
            switch (c) {
                case '\t': out += "\\t"; break;
                case '\r': out += "\\r"; break;
                case '\n': out += "\\n"; break;
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                default:
                    if (c < 0x20 || c >= 0x7F) {
                        out += "\\x";
                        out += hex[c >> 4];
                        out += hex[c & 0xF];
                    } else {
                        out += static_cast<char>(c);
                    }
            }
        }
        if (text.size() > max) out += "...";
        return out;
    }

private:
    static std::string make_message(std::string_view where, const std::string& source,
                                    std::size_t line, std::size_t column, std::string_view problem,
                                    std::string_view text) {
        std::string m = "perfcast::";
        m.append(where).append(": ").append(source);
        if (line != 0) m.append(":").append(std::to_string(line));
        if (column != 0) m.append(":").append(std::to_string(column));
        m.append(": ").append(problem).append(": \"").append(printable(text)).append("\"");
        return m;
    }

    std::string source_;
    std::string problem_;
    std::string text_;
    std::size_t line_ = 0;
    std::size_t column_ = 0;
};

namespace profile {

struct csv_options {
    char delimiter = ',';
    /// Longest record accepted, in bytes of input (quotes and embedded line ends included).
    std::size_t max_record_bytes = std::size_t{1} << 20;
    /// Every record must have as many fields as the first one (the header).
    bool check_field_count = true;
    /// Lines with no bytes are not records.
    bool skip_empty_lines = true;
    /// Bytes read from a stream at a time, at least 4 (tests use tiny values to cross every
    /// chunk boundary).
    std::size_t buffer_bytes = std::size_t{1} << 16;
};

/// Where a field starts in the input (1-based line and byte column).
struct field_position {
    std::size_t line = 0;
    std::size_t column = 0;
};

/// One record. Views stay valid until the reader reads the next record.
class csv_record {
public:
    [[nodiscard]] std::size_t size() const noexcept { return ends_.size(); }
    [[nodiscard]] bool empty() const noexcept { return ends_.empty(); }
    [[nodiscard]] std::string_view operator[](std::size_t i) const noexcept {
        const std::size_t b = i == 0 ? 0 : ends_[i - 1];
        return std::string_view(data_).substr(b, ends_[i] - b);
    }
    /// Line on which the record starts.
    [[nodiscard]] std::size_t line() const noexcept { return line_; }
    [[nodiscard]] field_position position(std::size_t i) const noexcept { return pos_[i]; }
    /// The fields joined by `delimiter`, as the line showed them (without quoting), cut after
    /// `max` bytes: the excerpt a message quotes for a whole record.
    [[nodiscard]] std::string joined(char delimiter, std::size_t max = 80) const {
        std::string out;
        for (std::size_t i = 0; i < size() && out.size() <= max; ++i) {
            if (i != 0) out += delimiter;
            out.append((*this)[i]);
        }
        if (out.size() > max) out.resize(max);
        return out;
    }
    /// Fields copied out, for callers that keep them.
    [[nodiscard]] std::vector<std::string> to_strings() const {
        std::vector<std::string> v;
        v.reserve(size());
        for (std::size_t i = 0; i < size(); ++i) v.emplace_back((*this)[i]);
        return v;
    }

private:
    friend class csv_reader;
    void clear() noexcept {
        data_.clear();
        ends_.clear();
        pos_.clear();
    }
    std::string data_;
    std::vector<std::size_t> ends_;
    std::vector<field_position> pos_;
    std::size_t line_ = 0;
};

/// Streaming reader. `while (r.next()) use(r.record());`
class csv_reader {
public:
    /// Reads from `in` (not owned; must outlive the reader). `source` names it in errors.
    explicit csv_reader(std::istream& in, std::string source = "<stream>", csv_options opt = {})
        : in_(&in),
          source_(std::move(source)),
          opt_(opt),
          buf_(std::max<std::size_t>(opt.buffer_bytes, 4)) {}

    /// Reads from text in memory (not copied; must outlive the reader).
    explicit csv_reader(std::string_view text, std::string source = "<string>",
                        csv_options opt = {})
        : source_(std::move(source)), opt_(opt), mem_(text) {}

    csv_reader(const csv_reader&) = delete;
    csv_reader& operator=(const csv_reader&) = delete;

    /// Reads the next record; false at the end of the input. Throws `parse_error`.
    bool next();

    [[nodiscard]] const csv_record& record() const noexcept { return rec_; }
    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    /// Field count of the first record (0 before it is read).
    [[nodiscard]] std::size_t expected_fields() const noexcept { return expected_fields_; }
    /// Records returned so far.
    [[nodiscard]] std::size_t records_read() const noexcept { return records_; }
    [[nodiscard]] const csv_options& options() const noexcept { return opt_; }

    /// Throws a parse_error located at field `i` of the current record.
    [[noreturn]] void fail_at_field(std::size_t i, std::string_view where,
                                    std::string_view problem) const {
        const field_position p = rec_.position(i);
        throw parse_error(where, source_, p.line, p.column, problem, std::string(rec_[i]));
    }

private:
    enum class state : unsigned char { field_start, unquoted, quoted, quote_in_quoted };

    bool refill();
    [[nodiscard]] std::size_t column_at(const char* q) const noexcept {
        return static_cast<std::size_t>(abs_of(q) - line_start_) + 1;
    }
    [[nodiscard]] std::uint64_t abs_of(const char* q) const noexcept {
        return base_ + static_cast<std::uint64_t>(q - begin_);
    }
    void new_line(const char* after_lf) noexcept {
        ++line_;
        line_start_ = abs_of(after_lf);
    }
    void start_field(const char* q) { rec_.pos_.push_back({line_, column_at(q)}); }
    void end_field() { rec_.ends_.push_back(rec_.data_.size()); }
    void check_length(const char* q) const {
        if (abs_of(q) - record_start_ > opt_.max_record_bytes) {
            std::string head = rec_.data_.substr(0, 80);
            throw parse_error("csv_reader", source_, rec_.line_, 0,
                              "record longer than " + std::to_string(opt_.max_record_bytes) +
                                  " bytes (a missing closing quote?)",
                              std::move(head));
        }
    }
    [[noreturn]] void fail(std::size_t line, std::size_t col, std::string_view problem,
                           std::string text) const {
        throw parse_error("csv_reader", source_, line, col, problem, std::move(text));
    }
    bool finish_record();

    std::istream* in_ = nullptr;
    std::string source_;
    csv_options opt_;
    std::vector<char> buf_;
    std::string_view mem_;
    bool mem_given_ = false;
    bool eof_ = false;
    bool bom_checked_ = false;
    bool skip_lf_ = false;  // a CR ended the last line; a following LF belongs to it

    const char* begin_ = nullptr;  // current chunk
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    std::uint64_t base_ = 0;  // absolute offset of begin_

    std::size_t line_ = 1;
    std::uint64_t line_start_ = 0;    // absolute offset of the current line's first byte
    std::uint64_t record_start_ = 0;  // absolute offset of the current record's first byte
    field_position quote_open_{};     // where the open quoted field began

    csv_record rec_;
    std::size_t expected_fields_ = 0;
    std::size_t records_ = 0;
};

inline bool csv_reader::refill() {
    if (eof_) return false;
    if (in_ == nullptr) {
        if (mem_given_) {
            eof_ = true;
            return false;
        }
        mem_given_ = true;
        begin_ = p_ = mem_.data();
        end_ = mem_.data() + mem_.size();
        base_ = 0;
        if (mem_.empty()) {
            eof_ = true;
            return false;
        }
        return true;
    }
    if (begin_ != nullptr) base_ += static_cast<std::uint64_t>(end_ - begin_);
    in_->read(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    const auto got = static_cast<std::size_t>(in_->gcount());
    if (got == 0) {
        if (in_->bad()) fail(line_, 0, "read error", "");
        eof_ = true;
        begin_ = p_ = end_ = buf_.data();
        return false;
    }
    begin_ = p_ = buf_.data();
    end_ = buf_.data() + got;
    return true;
}

inline bool csv_reader::finish_record() {
    ++records_;
    if (opt_.check_field_count) {
        if (expected_fields_ == 0) {
            expected_fields_ = rec_.size();
        } else if (rec_.size() != expected_fields_) {
            fail(rec_.line_, 0,
                 std::to_string(rec_.size()) + " fields where the first record has " +
                     std::to_string(expected_fields_),
                 rec_.joined(opt_.delimiter));
        }
    } else if (expected_fields_ == 0) {
        expected_fields_ = rec_.size();
    }
    return true;
}

inline bool csv_reader::next() {
    rec_.clear();
    if (p_ == end_ && !refill()) return false;

    if (!bom_checked_) {
        bom_checked_ = true;
        // A BOM is never split across reads: istream::read fills the buffer (>= 4 bytes)
        // unless the input ends first.
        if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF &&
            static_cast<unsigned char>(p_[1]) == 0xBB &&
            static_cast<unsigned char>(p_[2]) == 0xBF) {
            p_ += 3;
            line_start_ = 3;
        }
    }

    const char delim = opt_.delimiter;
    state st = state::field_start;
    bool any_bytes = false;  // the record has consumed at least one byte of content

    for (;;) {
        if (p_ == end_) {
            if (!refill()) break;
        }
        if (!any_bytes) {
            if (skip_lf_) {
                skip_lf_ = false;
                if (*p_ == '\n') {
                    ++p_;
                    line_start_ = abs_of(p_);
                    continue;
                }
            }
            rec_.line_ = line_;
            record_start_ = abs_of(p_);
            // Blank line: nothing before the line end.
            if (opt_.skip_empty_lines && (*p_ == '\n' || *p_ == '\r')) {
                if (*p_ == '\r') skip_lf_ = true;
                ++p_;
                new_line(p_);
                continue;
            }
            any_bytes = true;
        }
        switch (st) {
            case state::field_start: {
                const char c = *p_;
                if (c == '"') {
                    quote_open_ = {line_, column_at(p_)};
                    start_field(p_);
                    ++p_;
                    st = state::quoted;
                } else if (c == delim) {
                    start_field(p_);
                    end_field();
                    ++p_;
                    check_length(p_);
                } else if (c == '\n' || c == '\r') {
                    start_field(p_);
                    end_field();
                    if (c == '\r') skip_lf_ = true;
                    ++p_;
                    new_line(p_);
                    return finish_record();
                } else {
                    start_field(p_);
                    st = state::unquoted;
                }
                break;
            }
            case state::unquoted: {
                const char* q = p_;
                while (q != end_ && *q != delim && *q != '\n' && *q != '\r') ++q;
                rec_.data_.append(p_, static_cast<std::size_t>(q - p_));
                p_ = q;
                check_length(p_);
                if (q == end_) break;  // refill and continue the field
                end_field();
                const char c = *p_++;
                if (c == delim) {
                    st = state::field_start;
                } else {
                    if (c == '\r') skip_lf_ = true;
                    new_line(p_);
                    return finish_record();
                }
                break;
            }
            case state::quoted: {
                const char* q = p_;
                while (q != end_ && *q != '"') {
                    if (*q == '\n') {
                        rec_.data_.append(p_, static_cast<std::size_t>(q + 1 - p_));
                        p_ = q + 1;
                        new_line(p_);
                    }
                    ++q;
                }
                rec_.data_.append(p_, static_cast<std::size_t>(q - p_));
                p_ = q;
                check_length(p_);
                if (q == end_) break;
                ++p_;  // the quote
                st = state::quote_in_quoted;
                break;
            }
            case state::quote_in_quoted: {
                const char c = *p_;
                if (c == '"') {
                    rec_.data_.push_back('"');
                    ++p_;
                    st = state::quoted;
                } else if (c == delim) {
                    end_field();
                    ++p_;
                    st = state::field_start;
                } else if (c == '\n' || c == '\r') {
                    end_field();
                    if (c == '\r') skip_lf_ = true;
                    ++p_;
                    new_line(p_);
                    return finish_record();
                } else {
                    const std::size_t col = column_at(p_);
                    const std::size_t b = rec_.ends_.empty() ? 0 : rec_.ends_.back();
                    std::string text = "\"" + rec_.data_.substr(b) + "\"";
                    // Show the stray bytes up to the next delimiter or line end.
                    const char* q = p_;
                    while (q != end_ && *q != delim && *q != '\n' && *q != '\r' && q - p_ < 40) ++q;
                    text.append(p_, static_cast<std::size_t>(q - p_));
                    fail(line_, col,
                         "bytes after a closing quote (expected the delimiter or a "
                         "line end)",
                         std::move(text));
                }
                break;
            }
        }
    }

    // End of input.
    if (st == state::quoted) {
        const std::size_t b = rec_.ends_.empty() ? 0 : rec_.ends_.back();
        fail(quote_open_.line, quote_open_.column,
             "unterminated quoted field (no closing quote before the end of the input)",
             "\"" + rec_.data_.substr(b, 80));
    }
    if (!any_bytes) return false;
    // The last field of a record without a final line end ("a,b" or "a,").
    if (st == state::field_start) start_field(p_);
    end_field();
    return finish_record();
}

/// Calls `f(const csv_record&)` for every record of `in`.
template <class F>
void for_each_csv_record(std::istream& in, std::string source, F&& f, csv_options opt = {}) {
    csv_reader r(in, std::move(source), opt);
    while (r.next()) f(r.record());
}

/// Every record of `text`, copied out (for small inputs and tests).
[[nodiscard]] inline std::vector<std::vector<std::string>> parse_csv(
    std::string_view text, std::string source = "<string>", csv_options opt = {}) {
    std::vector<std::vector<std::string>> out;
    csv_reader r(text, std::move(source), opt);
    while (r.next()) out.push_back(r.record().to_strings());
    return out;
}

/// Opens `path` for reading in binary mode, or throws a parse_error naming it.
/// A directory is refused by name (an ifstream opens one and reads nothing), and so is a device
/// or a socket (/dev/zero would be read until a record passed its limit); a FIFO is read.
[[nodiscard]] inline std::ifstream open_input(const std::string& path, std::string_view where) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_directory(st)) {
        throw parse_error(where, path, 0, 0, "is a directory, expected a file", path);
    }
    if (fs::is_character_file(st) || fs::is_block_file(st) || fs::is_socket(st)) {
        throw parse_error(where, path, 0, 0, "is a device or socket, expected a regular file",
                          path);
    }
    std::ifstream f(path, std::ios::binary);
    if (!f) throw parse_error(where, path, 0, 0, "cannot open file for reading", path);
    return f;
}

/// The whole of `path` as text, read in one allocation when its size is known (a regular file)
/// and through the stream otherwise (a pipe); errors as open_input. For readers that need the
/// text in memory (JSON): a 100 MB timeline read through an ostringstream took twice the time,
/// copying as it grew.
[[nodiscard]] inline std::string read_file_text(const std::string& path, std::string_view where) {
    std::ifstream f = open_input(path, where);
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    std::string text;
    if (!ec && std::filesystem::is_regular_file(path, ec)) {
        text.resize(static_cast<std::size_t>(size));
        f.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<std::size_t>(f.gcount()));  // shorter if it shrank meanwhile
        if (f.bad()) throw parse_error(where, path, 0, 0, "read error", path);
        if (f.peek() == std::char_traits<char>::eof()) return text;
        f.clear();  // it grew meanwhile: the rest through the stream
    }
    std::ostringstream rest;
    rest << f.rdbuf();
    text += rest.str();
    if (f.bad()) throw parse_error(where, path, 0, 0, "read error", path);
    return text;
}

}  // namespace profile
}  // namespace perfcast
