// perfcast/error.hpp: the library's error tiers.
//
// Invalid values (0 cores, a negative bandwidth, NaN) go through `PERFCAST_EXPECTS`, which calls
// the non-constexpr `detail::precondition_failed`: in constant evaluation that call is a compile
// error (the diagnostic names the function and the failed condition); at run time it throws
// `perfcast::error` whose message names the function, the field, the value and what was expected.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace perfcast {

/// Thrown for invalid input at run time. `what()` reads
/// "perfcast::<where>: <field> = <value>, expected <what>".
class error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

namespace detail {

/// Shortest round-trip text of a double (no locale, no iostream).
[[nodiscard]] inline std::string number_text(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::array<char, 64> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    if (ec != std::errc{}) return "?";
    return std::string(buf.data(), end);
}

/// `v` to `digits` significant digits (at least 1), fixed or exponent form as shorter ("0.3581",
/// "70.5", "2.5e+07"); NaN and infinities as number_text writes them.
[[nodiscard]] inline std::string significant_text(double v, int digits) {
    if (std::isnan(v) || std::isinf(v)) return number_text(v);
    std::array<char, 64> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v,
                                   std::chars_format::general, digits < 1 ? 1 : digits);
    if (ec != std::errc{}) return number_text(v);
    return std::string(buf.data(), end);
}

[[nodiscard]] inline std::string number_text(long long v) { return std::to_string(v); }
[[nodiscard]] inline std::string number_text(unsigned long long v) { return std::to_string(v); }

/// Builds "perfcast::where: field = value, expected expected".
[[nodiscard]] inline std::string message(std::string_view where, std::string_view field,
                                         std::string_view value, std::string_view expected) {
    std::string m = "perfcast::";
    m.append(where).append(": ").append(field).append(" = ").append(value);
    m.append(", expected ").append(expected);
    return m;
}

/// Not constexpr on purpose: reaching it during constant evaluation is a compile error.
[[noreturn]] inline void precondition_failed(std::string_view where, std::string_view field,
                                             double value, std::string_view expected) {
    throw error(message(where, field, number_text(value), expected));
}

[[noreturn]] inline void precondition_failed(std::string_view where, std::string_view field,
                                             std::string_view value, std::string_view expected) {
    throw error(message(where, field, value, expected));
}

}  // namespace detail

/// Checks `cond`; when false, fails with the field, its value and the expectation. Usable in
/// constexpr functions: a failed check during constant evaluation does not compile.
#define PERFCAST_EXPECTS(cond, where, field, value, expected)                                  \
    do {                                                                                       \
        if (!(cond)) ::perfcast::detail::precondition_failed((where), (field), (value),        \
                                                             (expected));                      \
    } while (false)

}  // namespace perfcast
