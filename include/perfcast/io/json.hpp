// perfcast/io/json.hpp: a tiny streaming JSON writer (runtime only).
//
//   perfcast::io::json_writer j(std::cout);        // indent 2; json_writer(os, 0) is compact
//   j.begin_object();
//   j.member("chip", "ascend910b3").member("cores", 20).member("tflops", 294.9);
//   j.key("dtypes").begin_array().value("fp16").value("int8").end_array();
//   j.end_object();                                  // then j.done() is true
//
// Strings are escaped (", \, control characters; bytes that are not UTF-8 as U+FFFD). Numbers are
// written with std::to_chars (shortest round trip, no locale). JSON has no NaN or infinity: a
// non-finite double is written as null, so a reader sees "no value" rather than a wrong number.
// Misuse (a value where a key is due, a key in an array, an unbalanced end, a second root value)
// throws perfcast::error.
#pragma once

#include <array>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "../error.hpp"

namespace perfcast::io {

namespace json_detail {
/// The length of the well-formed UTF-8 sequence at `s[i]` (a byte >= 0x80), or 0 for a byte
/// that starts none (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
[[nodiscard]] constexpr std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept {
    const auto at = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = at(i);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k) {
        if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
    }
    return n;
}
}  // namespace json_detail

/// `s` as a JSON string literal, quotes included. Each byte that starts no well-formed UTF-8
/// sequence (a profile's damaged name) becomes one U+FFFD (per byte, not per maximal subpart as
/// Unicode recommends: simpler, and still valid JSON).
[[nodiscard]] inline std::string json_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        const auto c = static_cast<unsigned char>(ch);
        switch (ch) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20U || c == 0x7FU) {
                    constexpr std::string_view hex = "0123456789abcdef";
                    out += "\\u00";
                    out += hex[(c >> 4U) & 0xFU];
                    out += hex[c & 0xFU];
                } else if (c < 0x80U) {
                    out += ch;
                } else if (const std::size_t n = json_detail::utf8_sequence(s, i); n > 0) {
                    out.append(s.substr(i, n));
                    i += n - 1;
                } else {
                    out += "\\ufffd";
                }
        }
    }
    out += '"';
    return out;
}

/// A JSON number for `v`, or "null" when `v` is NaN or infinite.
[[nodiscard]] inline std::string json_number(double v) {
    if (v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) return "null";
    return ::perfcast::detail::number_text(v);
}

class json_writer {
public:
    explicit json_writer(std::ostream& os, int indent = 2) : os_(&os), indent_(indent) {}

    json_writer& begin_object() {
        before_value();
        *os_ << '{';
        stack_.push_back({true, 0, false});
        return *this;
    }
    json_writer& end_object() { return end(true); }
    json_writer& begin_array() {
        before_value();
        *os_ << '[';
        stack_.push_back({false, 0, false});
        return *this;
    }
    json_writer& end_array() { return end(false); }

    /// The key of the next member; only inside an object, and not twice in a row.
    json_writer& key(std::string_view k) {
        if (stack_.empty() || !stack_.back().object || stack_.back().has_key) {
            misuse("key", k, "a key only inside an object, before its value");
        }
        frame& f = stack_.back();
        if (f.count > 0) *os_ << ',';
        newline(stack_.size());
        *os_ << json_quote(k) << (indent_ > 0 ? ": " : ":");
        f.has_key = true;
        return *this;
    }

    json_writer& value(std::string_view s) {
        before_value();
        *os_ << json_quote(s);
        return *this;
    }
    json_writer& value(const char* s) { return value(std::string_view(s)); }
    json_writer& value(const std::string& s) { return value(std::string_view(s)); }
    json_writer& value(bool b) {
        before_value();
        *os_ << (b ? "true" : "false");
        return *this;
    }
    template <std::integral T>
        requires(!std::same_as<T, bool>)
    json_writer& value(T v) {
        before_value();
        std::array<char, 32> buf{};
        const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
        *os_ << std::string_view(buf.data(), static_cast<std::size_t>(res.ptr - buf.data()));
        return *this;
    }
    /// NaN and infinities are written as null.
    template <std::floating_point T>
    json_writer& value(T v) {
        before_value();
        *os_ << json_number(static_cast<double>(v));
        return *this;
    }
    json_writer& null() {
        before_value();
        *os_ << "null";
        return *this;
    }

    /// key(k).value(v)
    template <class T>
    json_writer& member(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }
    json_writer& member(std::string_view k, const char* v) {
        key(k);
        return value(v);
    }
    /// key(k).value(figure()) when `has` (a bool or an optional) holds, else key(k).null(): a
    /// figure that exists only sometimes.
    template <class Has, class Figure>
    json_writer& member_or_null(std::string_view k, const Has& has, Figure&& figure) {
        key(k);
        if (has) return value(figure());
        return null();
    }

    /// True once one complete root value has been written.
    [[nodiscard]] bool done() const noexcept { return root_written_ && stack_.empty(); }

private:
    struct frame {
        bool object;
        std::size_t count;
        bool has_key;
    };

    [[noreturn]] static void misuse(std::string_view call, std::string_view what,
                                    std::string_view expected) {
        ::perfcast::detail::precondition_failed("io::json_writer", call, what, expected);
    }

    void newline(std::size_t depth) {
        if (indent_ <= 0) return;
        *os_ << '\n';
        for (std::size_t i = 0; i < depth * static_cast<std::size_t>(indent_); ++i) *os_ << ' ';
    }

    void before_value() {
        if (stack_.empty()) {
            if (root_written_) misuse("value", "second root", "one root value per writer");
            root_written_ = true;
            return;
        }
        frame& f = stack_.back();
        if (f.object) {
            if (!f.has_key) misuse("value", "value without key", "key(k) before a member's value");
            f.has_key = false;
        } else {
            if (f.count > 0) *os_ << ',';
            newline(stack_.size());
        }
        ++f.count;
    }

    json_writer& end(bool object) {
        if (stack_.empty() || stack_.back().object != object || stack_.back().has_key) {
            misuse(object ? "end_object" : "end_array", "unbalanced",
                   object ? "an open object with no pending key" : "an open array");
        }
        const bool empty = stack_.back().count == 0;
        stack_.pop_back();
        if (!empty) newline(stack_.size());
        *os_ << (object ? '}' : ']');
        if (stack_.empty() && indent_ > 0) *os_ << '\n';
        return *this;
    }

    std::ostream* os_;
    int indent_;
    std::vector<frame> stack_;
    bool root_written_ = false;
};

}  // namespace perfcast::io
