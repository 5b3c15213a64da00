// perfcast/io/csv.hpp: CSV writing (runtime only). Reading profiles lives in profile/.
//
//   perfcast::io::csv_writer w(std::cout);
//   w.row({"name", "tflops"});
//   w.row({"ascend910b3", perfcast::io::format_fixed(294.9, 1)});
//
// Quoting follows RFC 4180: a field that contains the delimiter, a double quote, CR or LF is
// enclosed in double quotes and its quotes are doubled. Fields with leading or trailing spaces are
// quoted too, so that readers that trim cannot change them. Records end with "\n" by default
// (what Unix tools expect); pass "\r\n" for strict RFC 4180 line ends.
#pragma once

#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast::io {

/// Whether `field` must be quoted in CSV with `delimiter`.
[[nodiscard]] inline bool csv_needs_quotes(std::string_view field, char delimiter = ',') noexcept {
    if (field.empty()) return false;
    if (field.front() == ' ' || field.back() == ' ') return true;
    for (char c : field) {
        if (c == delimiter || c == '"' || c == '\n' || c == '\r') return true;
    }
    return false;
}

/// `field` as one CSV field: unchanged, or quoted with inner quotes doubled.
[[nodiscard]] inline std::string csv_field(std::string_view field, char delimiter = ',') {
    if (!csv_needs_quotes(field, delimiter)) return std::string(field);
    std::string out;
    out.reserve(field.size() + 2);
    out += '"';
    for (char c : field) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

/// Writes records to a stream.
class csv_writer {
public:
    explicit csv_writer(std::ostream& os, char delimiter = ',', std::string_view eol = "\n")
        : os_(&os), delimiter_(delimiter), eol_(eol) {}

    void row(std::span<const std::string> fields) {
        bool first = true;
        for (const std::string& f : fields) {
            if (!first) *os_ << delimiter_;
            first = false;
            *os_ << csv_field(f, delimiter_);
        }
        *os_ << eol_;
    }
    void row(const std::vector<std::string>& fields) {
        row(std::span<const std::string>(fields.data(), fields.size()));
    }
    void row(std::initializer_list<std::string_view> fields) {
        bool first = true;
        for (std::string_view f : fields) {
            if (!first) *os_ << delimiter_;
            first = false;
            *os_ << csv_field(f, delimiter_);
        }
        *os_ << eol_;
    }

private:
    std::ostream* os_;
    char delimiter_;
    std::string eol_;
};

}  // namespace perfcast::io
