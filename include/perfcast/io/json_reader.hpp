// perfcast/io/json_reader.hpp: a strict JSON pull reader over text in memory (runtime).
//
//   perfcast::io::json_cursor c(text, "trace.json");
//   c.begin_object();
//   std::string key;
//   while (c.next_member(key)) {
//       if (key == "traceEvents") { c.begin_array(); while (c.next_element()) { ... } }
//       else c.skip_value();
//   }
//   c.end();                                   // nothing but blanks after the root value
//
// RFC 8259: objects, arrays, strings (every escape, \u with surrogate pairs to UTF-8),
// numbers (the grammar checked; the text handed back, so a caller keeps every digit: profiler
// timestamps have 16 significant digits, more than a double holds exactly), true, false, null.
// Raw control bytes in strings are errors, as the RFC says; other bytes (invalid UTF-8
// included) pass through. Nesting deeper than `max_depth` (512) is an error rather than a deep
// recursion: the reader never recurses. Every error is a perfcast::parse_error with the source,
// line and column and the bytes there.
//
// Strings without escapes are views into the text (no copy); with escapes they are decoded into
// a caller's buffer. Throughput: bench/bench_readers.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "../profile/csv.hpp"  // perfcast::parse_error

namespace perfcast::io {

class json_cursor {
public:
    enum class kind : unsigned char { object, array, string, number, boolean, null };

    static constexpr std::size_t max_depth = 512;

    /// A UTF-8 byte-order mark before the value is dropped, as the CSV reader drops it.
    json_cursor(std::string_view text, std::string source) noexcept
        : text_(text), source_(std::move(source)) {
        if (text_.starts_with("\xEF\xBB\xBF")) p_ = 3;
    }

    /// The kind of the next value (blanks skipped); an error at the end of the text or at a
    /// byte that starts no value.
    [[nodiscard]] kind peek() {
        blanks();
        if (p_ >= text_.size()) fail("unexpected end of the text (expected a value)");
        switch (text_[p_]) {
            case '{': return kind::object;
            case '[': return kind::array;
            case '"': return kind::string;
            case 't':
            case 'f': return kind::boolean;
            case 'n': return kind::null;
            default:
                if (text_[p_] == '-' || (text_[p_] >= '0' && text_[p_] <= '9')) return kind::number;
                fail("expected a value (object, array, string, number, true, false or null)");
        }
    }

    void begin_object() { open('{', "an object"); }
    void begin_array() { open('[', "an array"); }

    /// The next member's key (decoded into `key`); false at the object's end (consumed).
    bool next_member(std::string& key) {
        if (!step('}')) return false;
        blanks();
        if (p_ >= text_.size() || text_[p_] != '"') fail("expected a member name in quotes");
        key.assign(string_view_of(key_scratch_));
        blanks();
        if (p_ >= text_.size() || text_[p_] != ':') fail("expected ':' after the member name");
        ++p_;
        return true;
    }
    /// True when an element follows; false at the array's end (consumed).
    bool next_element() { return step(']'); }

    /// The string value: a view into the text, or into `scratch` when it had escapes. Valid
    /// until the next call that reads a string into `scratch`.
    [[nodiscard]] std::string_view string(std::string& scratch) {
        blanks();
        if (p_ >= text_.size() || text_[p_] != '"') fail("expected a string");
        return string_view_of(scratch);
    }
    /// The number's text, checked against the JSON grammar.
    [[nodiscard]] std::string_view number() {
        blanks();
        const std::size_t b = p_;
        if (p_ < text_.size() && text_[p_] == '-') ++p_;
        if (p_ >= text_.size()) fail("expected a number");
        if (text_[p_] == '0') {
            ++p_;
        } else if (text_[p_] >= '1' && text_[p_] <= '9') {
            digits();
        } else {
            fail("expected a number");
        }
        if (p_ < text_.size() && text_[p_] == '.') {
            ++p_;
            if (!digits()) fail("expected digits after the decimal point");
        }
        if (p_ < text_.size() && (text_[p_] == 'e' || text_[p_] == 'E')) {
            ++p_;
            if (p_ < text_.size() && (text_[p_] == '+' || text_[p_] == '-')) ++p_;
            if (!digits()) fail("expected digits in the exponent");
        }
        return text_.substr(b, p_ - b);
    }
    [[nodiscard]] bool boolean() {
        blanks();
        if (literal("true")) return true;
        if (literal("false")) return false;
        fail("expected true or false");
    }
    void null() {
        blanks();
        if (!literal("null")) fail("expected null");
    }

    /// Skips one value of any kind (nested ones included), without recursion: the open
    /// containers are a stack of bytes ('{' or '[').
    void skip_value() {
        std::string open;
        for (;;) {
            blanks();
            if (p_ >= text_.size()) fail("unexpected end of the text inside a value");
            const char c = text_[p_];
            if (c == '{' || c == '[') {
                if (open.size() + depth_ >= max_depth) fail("nesting deeper than 512 levels");
                ++p_;
                blanks();
                if (p_ < text_.size() && text_[p_] == (c == '{' ? '}' : ']')) {
                    ++p_;  // empty: a complete value
                } else {
                    open.push_back(c);
                    if (c == '{') member_name();
                    continue;
                }
            } else if (c == '"') {
                skip_string();
            } else if (c == 't' || c == 'f') {
                (void)boolean();
            } else if (c == 'n') {
                null();
            } else {
                (void)number();
            }
            // After a complete value: close containers, or a comma and the next value.
            for (;;) {
                if (open.empty()) return;
                blanks();
                if (p_ >= text_.size()) fail("unexpected end of the text inside a value");
                const char close = open.back() == '{' ? '}' : ']';
                if (text_[p_] == close) {
                    ++p_;
                    open.pop_back();
                    continue;
                }
                if (text_[p_] != ',') fail(std::string("expected ',' or '") + close + "'");
                ++p_;
                if (open.back() == '{') member_name();
                break;
            }
        }
    }

    /// Nothing but blanks may follow the root value.
    void end() {
        blanks();
        if (p_ != text_.size()) fail("text after the end of the JSON value");
    }

    [[nodiscard]] std::size_t offset() const noexcept { return p_; }
    [[nodiscard]] const std::string& source() const noexcept { return source_; }

    /// A parse_error at the current position: line and column counted from the text.
    [[noreturn]] void fail(std::string_view problem) const {
        std::size_t line = 1;
        std::size_t col = 1;
        const std::size_t at = p_ < text_.size() ? p_ : text_.size();
        for (std::size_t i = 0; i < at; ++i) {
            if (text_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw parse_error("json", source_, line, col, problem, std::string(text_.substr(at, 40)));
    }

private:
    void blanks() noexcept {
        while (p_ < text_.size() &&
               (text_[p_] == ' ' || text_[p_] == '\n' || text_[p_] == '\r' || text_[p_] == '\t'))
            ++p_;
    }
    bool digits() noexcept {
        const std::size_t b = p_;
        while (p_ < text_.size() && text_[p_] >= '0' && text_[p_] <= '9') ++p_;
        return p_ != b;
    }
    bool literal(std::string_view w) noexcept {
        if (text_.substr(p_, w.size()) != w) return false;
        p_ += w.size();
        return true;
    }
    void open(char c, std::string_view what) {
        blanks();
        if (p_ >= text_.size() || text_[p_] != c)
            fail(std::string("expected ") + std::string(what));
        if (++depth_ > max_depth) fail("nesting deeper than 512 levels");
        ++p_;
        first_ = true;
    }
    // Before a member or element: the container's end (consumed, false), or a comma unless it
    // is the first.
    bool step(char close) {
        blanks();
        if (p_ >= text_.size()) fail("unexpected end of the text (a container is not closed)");
        if (text_[p_] == close) {
            ++p_;
            --depth_;
            first_ = false;
            return false;
        }
        if (!first_) {
            if (text_[p_] != ',') fail(std::string("expected ',' or '") + close + "'");
            ++p_;
        }
        first_ = false;
        return true;
    }
    // A member's name and its colon (skipped).
    void member_name() {
        blanks();
        if (p_ >= text_.size() || text_[p_] != '"') fail("expected a member name in quotes");
        skip_string();
        blanks();
        if (p_ >= text_.size() || text_[p_] != ':') fail("expected ':' after the member name");
        ++p_;
    }

    // A string skipped is still checked (escapes, surrogates, control bytes).
    void skip_string() { (void)string_view_of(skip_scratch_); }

    // Reads the string at p_ (on its opening quote).
    std::string_view string_view_of(std::string& scratch) {
        const std::size_t b = ++p_;
        // Fast path: no escape before the closing quote.
        std::size_t q = b;
        while (q < text_.size() && text_[q] != '"' && text_[q] != '\\' &&
               static_cast<unsigned char>(text_[q]) >= 0x20)
            ++q;
        if (q < text_.size() && text_[q] == '"') {
            p_ = q + 1;
            return text_.substr(b, q - b);
        }
        scratch.assign(text_.substr(b, q - b));
        p_ = q;
        for (;;) {
            if (p_ >= text_.size()) fail("unterminated string");
            const char c = text_[p_];
            if (c == '"') {
                ++p_;
                return scratch;
            }
            if (static_cast<unsigned char>(c) < 0x20) fail("control byte inside a string");
            if (c != '\\') {
                scratch.push_back(c);
                ++p_;
                continue;
            }
            ++p_;
            if (p_ >= text_.size()) fail("unterminated string");
            const char e = text_[p_++];
            switch (e) {
                case '"': scratch.push_back('"'); break;
                case '\\': scratch.push_back('\\'); break;
                case '/': scratch.push_back('/'); break;
                case 'b': scratch.push_back('\b'); break;
                case 'f': scratch.push_back('\f'); break;
                case 'n': scratch.push_back('\n'); break;
                case 'r': scratch.push_back('\r'); break;
                case 't': scratch.push_back('\t'); break;
                case 'u': unicode(scratch); break;
                default: --p_; fail("unknown escape in a string");
            }
        }
    }
    std::uint32_t hex4() {
        if (p_ + 4 > text_.size()) fail("\\u needs four hex digits");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[p_++];
            v <<= 4;
            if (h >= '0' && h <= '9') {
                v |= static_cast<std::uint32_t>(h - '0');
            } else if (h >= 'a' && h <= 'f') {
                v |= static_cast<std::uint32_t>(h - 'a' + 10);
            } else if (h >= 'A' && h <= 'F') {
                v |= static_cast<std::uint32_t>(h - 'A' + 10);
            } else {
                --p_;
                fail("\\u needs four hex digits");
            }
        }
        return v;
    }
    void unicode(std::string& out) {
        std::uint32_t cp = hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(p_, 2) != "\\u") fail("a high surrogate without its low surrogate");
            p_ += 2;
            const std::uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("a high surrogate without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("a low surrogate without its high surrogate");
        }
        const auto put = [&out](std::uint32_t b) { out.push_back(static_cast<char>(b)); };
        if (cp < 0x80) {
            put(cp);
        } else if (cp < 0x800) {
            put(0xC0 | (cp >> 6));
            put(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            put(0xE0 | (cp >> 12));
            put(0x80 | ((cp >> 6) & 0x3F));
            put(0x80 | (cp & 0x3F));
        } else {
            put(0xF0 | (cp >> 18));
            put(0x80 | ((cp >> 12) & 0x3F));
            put(0x80 | ((cp >> 6) & 0x3F));
            put(0x80 | (cp & 0x3F));
        }
    }

    std::string_view text_;
    std::string source_;
    std::size_t p_ = 0;
    std::size_t depth_ = 0;
    bool first_ = false;
    std::string key_scratch_;
    std::string skip_scratch_;
};

}  // namespace perfcast::io
