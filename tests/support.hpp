// tests/support.hpp: helpers several test files share.
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include <perfcast/error.hpp>
#include <perfcast/graph.hpp>

namespace perfcast_test {

/// The nodes of kind `k` in model `m` (an imported model's, a parsed model file's).
inline int count(const perfcast::model& m, perfcast::op_kind k) {
    int c = 0;
    for (const perfcast::node& n : m.nodes) c += n.kind == k ? 1 : 0;
    return c;
}

/// The node named `name` in model `m` (the last, if several); throws naming it when none is
/// (the test case fails with the name).
inline const perfcast::node& named(const perfcast::model& m, std::string_view name) {
    const perfcast::node* found = nullptr;
    for (const perfcast::node& n : m.nodes) {
        if (n.name.view() == name) found = &n;
    }
    if (found == nullptr) throw std::runtime_error("no node named '" + std::string(name) + "'");
    return *found;
}

/// A fresh directory under the system temp dir, removed at scope exit.
struct scratch_dir {
    std::filesystem::path path;
    explicit scratch_dir(std::string_view name)
        : path(std::filesystem::temp_directory_path() / ("perfcast_" + std::string(name))) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    [[nodiscard]] std::size_t entries() const {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path),
                                                      std::filesystem::directory_iterator()));
    }
};

/// The number after the first `"key": ` at or after `from` in a JSON text (NaN when absent or
/// null): enough for tests that read one figure of the command's JSON output.
inline double json_number(const std::string& s, std::string_view key, std::size_t from = 0) {
    const std::string k = "\"" + std::string(key) + "\": ";
    const std::size_t at = s.find(k, from);
    if (at == std::string::npos) return std::nan("");
    const char* p = s.data() + at + k.size();
    double v = 0;
    const auto [end, ec] = std::from_chars(p, s.data() + s.size(), v);
    return ec == std::errc{} && end != p ? v : std::nan("");
}

/// Whether `part` occurs in `s`.
inline bool has(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

/// what() of the perfcast::error `f` throws, or "(no error)".
inline std::string message_of(const auto& f) {
    try {
        f();
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return "(no error)";
}

// A strict JSON syntax check (RFC 8259 grammar, no extensions): enough to know that Perfetto
// and chrome://tracing can load the file.
class json_checker {
public:
    explicit json_checker(std::string_view s) : s_(s) {}
    bool valid() {
        ws();
        if (!value()) return false;
        ws();
        return i_ == s_.size();
    }

private:
    bool value() {
        if (i_ >= s_.size()) return false;
        switch (s_[i_]) {
            case '{': return object();
            case '[': return array();
            case '"': return string();
            case 't': return word("true");
            case 'f': return word("false");
            case 'n': return word("null");
            default: return number();
        }
    }
    bool object() {
        ++i_;
        ws();
        if (peek('}')) return ++i_, true;
        for (;;) {
            ws();
            if (!string()) return false;
            ws();
            if (!peek(':')) return false;
            ++i_;
            ws();
            if (!value()) return false;
            ws();
            if (peek(',')) {
                ++i_;
                continue;
            }
            if (peek('}')) return ++i_, true;
            return false;
        }
    }
    bool array() {
        ++i_;
        ws();
        if (peek(']')) return ++i_, true;
        for (;;) {
            ws();
            if (!value()) return false;
            ws();
            if (peek(',')) {
                ++i_;
                continue;
            }
            if (peek(']')) return ++i_, true;
            return false;
        }
    }
    bool string() {
        if (!peek('"')) return false;
        ++i_;
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') return ++i_, true;
            if (c < 0x20) return false;
            if (c == '\\') {
                ++i_;
                if (i_ >= s_.size()) return false;
                const char e = s_[i_];
                if (e == 'u') {
                    for (int k = 0; k < 4; ++k) {
                        ++i_;
                        if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
                            return false;
                    }
                } else if (std::strchr("\"\\/bfnrt", e) == nullptr) {
                    return false;
                }
            }
            ++i_;
        }
        return false;
    }
    bool number() {
        const std::size_t start = i_;
        if (peek('-')) ++i_;
        if (peek('0')) {
            ++i_;
        } else if (!digits()) {
            return false;
        }
        if (peek('.')) {
            ++i_;
            if (!digits()) return false;
        }
        if (peek('e') || peek('E')) {
            ++i_;
            if (peek('+') || peek('-')) ++i_;
            if (!digits()) return false;
        }
        return i_ > start;
    }
    bool digits() {
        const std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        return i_ > start;
    }
    bool word(std::string_view w) {
        if (s_.substr(i_, w.size()) != w) return false;
        i_ += w.size();
        return true;
    }
    bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
    void ws() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
            ++i_;
    }
    std::string_view s_;
    std::size_t i_ = 0;
};

}  // namespace perfcast_test
