// perfcast/io/line_source.hpp: bounded line reading and input-file opening for every text
// reader (model files, params files, CANN .ini, histograms, traces, deployments).
//
// Limits (docs/profiles.md "Files in and out"): a line holds at most `max_line_bytes` (1 MiB; the
// CSV profile reader's record limit); a file at most its kind's limit (`max_model_file_bytes`,
// `max_small_file_bytes`). Lines end with LF, CRLF or a lone CR; a UTF-8 byte-order mark on the
// first line is dropped. `open_input_file` refuses a directory, a device, a socket (a FIFO is
// read, bounded by the same byte limit). Bytes echoed in errors go through
// parse_error::printable: escaped, and cut to 80 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../profile/csv.hpp"

namespace perfcast::io {

/// Longest line the readers accept.
inline constexpr std::size_t max_line_bytes = std::size_t{1} << 20;
/// Largest model file: 64 MiB, over 100 times a 100k-op model (about 40 bytes an op line).
inline constexpr std::uintmax_t max_model_file_bytes = std::uintmax_t{64} << 20;
/// Largest params or CANN .ini file: 16 MiB (real ones are a few KiB).
inline constexpr std::uintmax_t max_small_file_bytes = std::uintmax_t{16} << 20;

/// Opens `path` for reading: a regular file of at most `max_bytes`, or a FIFO; a directory, a
/// device (/dev/zero) or a socket is a parse_error saying what it is.
[[nodiscard]] inline std::ifstream open_input_file(const std::string& path, std::string_view where,
                                                   std::uintmax_t max_bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_regular_file(st)) {
        const std::uintmax_t size = fs::file_size(path, ec);
        if (!ec && size > max_bytes) {
            throw parse_error(where, path, 0, 0,
                              "file of " + std::to_string(size) + " bytes, over the limit of " +
                                  std::to_string(max_bytes),
                              path);
        }
    }
    return profile::open_input(path, where);  // a directory, a device or a socket refused
}

namespace detail {

/// Lines of a stream or of text in memory, without their line ends.
class line_source {
public:
    static constexpr std::uintmax_t no_total_limit = ~std::uintmax_t{0};

    line_source(std::istream& in, std::string source, std::string_view where,
                std::size_t max_line_bytes, std::uintmax_t max_total_bytes = no_total_limit)
        : in_(&in),
          source_(std::move(source)),
          where_(where),
          max_(max_line_bytes),
          max_total_(max_total_bytes),
          buf_(std::size_t{1} << 16) {}
    line_source(std::string_view text, std::string source, std::string_view where,
                std::size_t max_line_bytes)
        : text_(text), source_(std::move(source)), where_(where), max_(max_line_bytes) {}

    /// The next line (valid until the next call); false at the end of the input.
    bool next(std::string_view& line) {
        line_.clear();
        bool any = false;
        for (;;) {
            if (p_ == end_ && !refill()) break;
            if (skip_lf_) {
                skip_lf_ = false;
                if (*p_ == '\n') {
                    ++p_;
                    continue;
                }
            }
            any = true;
            const char* q = p_;
            while (q != end_ && *q != '\n' && *q != '\r') ++q;
            append(p_, q);
            if (q == end_) {
                p_ = q;
                continue;
            }
            skip_lf_ = *q == '\r';
            p_ = q + 1;
            ++number_;
            finish_line(line);
            return true;
        }
        if (!any) return false;
        ++number_;  // a last line without a line end
        finish_line(line);
        return true;
    }

    /// 1-based number of the line last returned.
    [[nodiscard]] std::size_t number() const noexcept { return number_; }
    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    /// 1-based byte column of `at` within the line last returned.
    [[nodiscard]] std::size_t column_of(std::string_view line, const char* at) const noexcept {
        return static_cast<std::size_t>(at - line.data()) + 1 + bom_shift_;
    }

private:
    bool refill() {
        if (in_ == nullptr) {
            if (text_given_) return false;
            text_given_ = true;
            p_ = text_.data();
            end_ = text_.data() + text_.size();
            return !text_.empty();
        }
        in_->read(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        const auto got = static_cast<std::size_t>(in_->gcount());
        if (got == 0) {
            if (in_->bad()) {
                throw parse_error(where_, source_, number_ + 1, 0, "read error", "");
            }
            return false;
        }
        total_ += got;
        if (total_ > max_total_) {
            throw parse_error(where_, source_, number_ + 1, 0,
                              "input longer than " + std::to_string(max_total_) +
                                  " bytes (the limit for this kind of file)",
                              "");
        }
        p_ = buf_.data();
        end_ = buf_.data() + got;
        return true;
    }
    void append(const char* a, const char* b) {
        line_.append(a, static_cast<std::size_t>(b - a));
        if (line_.size() > max_) {
            throw parse_error(where_, source_, number_ + 1, 0,
                              "line longer than " + std::to_string(max_) + " bytes",
                              line_.substr(0, 40));
        }
    }
    void finish_line(std::string_view& line) {
        line = line_;
        bom_shift_ = 0;
        if (number_ == 1 && line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") {
            line.remove_prefix(3);
            bom_shift_ = 3;
        }
    }

    std::istream* in_ = nullptr;
    std::string_view text_;
    bool text_given_ = false;
    std::string source_;
    std::string_view where_;
    std::size_t max_;
    std::uintmax_t max_total_ = no_total_limit;
    std::uintmax_t total_ = 0;
    std::vector<char> buf_;
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    bool skip_lf_ = false;
    std::string line_;
    std::size_t number_ = 0;
    std::size_t bom_shift_ = 0;
};

}  // namespace detail

}  // namespace perfcast::io
