// perfcast/enum_table.hpp: one constexpr table per enum, from which names and parsing derive.
//
// A table is a std::array of rows, one per enumerator, in enumerator order. A row is any struct
// with `value` (the enumerator) and `name` (how it is written in files, flags and output);
// `enum_entry` is the row of an enum that has nothing else to say. Richer rows carry the rest of
// what belongs to the enumerator (dtype.hpp: size and fractal; node.hpp: an op kind's engine,
// model-file keywords, profiler type names and cost function):
//
//   inline constexpr std::array<enum_entry<copy_policy>, 2> copy_policy_names{{
//       {copy_policy::per_tensor, "per-tensor"}, {copy_policy::aggregated, "aggregated"}}};
//   static_assert(covers_enum<copy_policy_names>());      // every enumerator once, in order
//   name_in(copy_policy_names, copy_policy::aggregated)   // "aggregated"
//   parse_in(copy_policy_names, "per-tensor")             // optional: copy_policy::per_tensor
//   choices_of(copy_policy_names)                         // "per-tensor or aggregated"
//
// A new enumerator is a new row: its name, its parsing and the "expected ..." of every error
// message follow from the table, and covers_enum fails to compile until the row is there.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "error.hpp"

namespace perfcast {

/// One enumerator and the name it is written as (in files, flags and output).
template <class E>
struct enum_entry {
    E value;
    std::string_view name;
};

/// A few names in a table row (a dtype's profiler spellings, an op kind's model-file keywords),
/// at most N. Built from a braced list: `{"bmm", "matmul"}`. (A plain std::array<string_view, N>
/// with fewer initializers than N trips GCC 12 in constant evaluation.)
template <std::size_t N>
struct name_list {
    std::array<std::string_view, N> items{};
    std::size_t count = 0;

    constexpr name_list() noexcept = default;
    constexpr name_list(std::initializer_list<std::string_view> names) {
        PERFCAST_EXPECTS(names.size() <= N, "name_list", "names", static_cast<double>(names.size()),
                         "no more names than the list holds");
        for (std::string_view n : names) items[count++] = n;
    }
    [[nodiscard]] constexpr const std::string_view* begin() const noexcept { return items.data(); }
    [[nodiscard]] constexpr const std::string_view* end() const noexcept {
        return items.data() + count;
    }
    [[nodiscard]] constexpr std::size_t size() const noexcept { return count; }
    [[nodiscard]] constexpr bool empty() const noexcept { return count == 0; }
    [[nodiscard]] constexpr std::string_view operator[](std::size_t i) const noexcept {
        return items[i];
    }
    [[nodiscard]] constexpr bool contains(std::string_view name) const noexcept {
        for (std::string_view n : *this) {
            if (n == name) return true;
        }
        return false;
    }
};

namespace detail {
[[nodiscard]] constexpr char lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
/// Whether `a` and `b` are the same ASCII text but for case.
[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

/// The enumerator type of a table's rows.
template <class Table>
using table_value_t = std::remove_cvref_t<decltype(std::declval<const Table&>()[0].value)>;
}  // namespace detail

/// The row of `v` in `table`, or null when the table lacks it.
template <class Table>
[[nodiscard]] constexpr auto row_in(const Table& table,
                                    std::type_identity_t<detail::table_value_t<Table>> v) noexcept
    -> decltype(&table[0]) {
    for (const auto& e : table) {
        if (e.value == v) return &e;
    }
    return nullptr;
}

/// The name of `v` in `table`, or "?" when the table lacks it.
template <class Table>
[[nodiscard]] constexpr std::string_view name_in(
    const Table& table, std::type_identity_t<detail::table_value_t<Table>> v) noexcept {
    // Not through row_in: GCC 12 with -fsanitize=undefined cannot constant-evaluate a pointer's
    // comparison with null, and names are taken in constant expressions (the scenario's nodes).
    for (const auto& e : table) {
        if (e.value == v) return std::string_view(e.name);
    }
    return std::string_view("?");
}

/// The enumerator named `text` (exact match), or nothing.
template <class Table>
[[nodiscard]] constexpr std::optional<detail::table_value_t<Table>> parse_in(
    const Table& table, std::string_view text) noexcept {
    for (const auto& e : table) {
        if (e.name == text) return e.value;
    }
    return std::nullopt;
}

/// The names joined by `separator`, the last two by `last` ("a, b or c" by default): the names
/// for an error's "expected ...".
template <class Table>
[[nodiscard]] std::string choices_of(const Table& table, std::string_view separator = ", ",
                                     std::string_view last = " or ") {
    std::string out;
    const std::size_t n = std::size(table);
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) out += i + 1 == n ? last : separator;
        out += table[i].name;
    }
    return out;
}

namespace detail {
/// Whether `V` is a named enumerator of its enum: the compiler spells a named one
/// "perfcast::op_kind::matmul" in a function's signature and an unnamed value
/// "(perfcast::op_kind)13" (the test magic_enum's `enum_name` uses, on GCC and Clang; elsewhere
/// every value counts as unnamed, which keeps covers_enum's other checks).
template <auto V>
[[nodiscard]] constexpr bool names_an_enumerator() noexcept {
#if defined(__GNUC__) || defined(__clang__)
    constexpr std::string_view f{__PRETTY_FUNCTION__, sizeof(__PRETTY_FUNCTION__) - 1};
    constexpr std::size_t eq = f.rfind("= ");
    constexpr std::size_t end = f.rfind(']');
    if (eq == std::string_view::npos || end == std::string_view::npos || end < eq + 2) {
        return false;
    }
    // "(T)13": digits after the last ')'. A named one may start with '(' too: "(anonymous
    // namespace)::e::a".
    const std::string_view value = f.substr(eq + 2, end - eq - 2);
    const std::size_t close = value.rfind(')');
    if (value.empty() || value[0] != '(' || close == std::string_view::npos) return true;
    const std::string_view number = value.substr(close + 1);
    if (number.empty()) return true;
    for (char c : number) {
        if ((c < '0' || c > '9') && c != '-') return true;
    }
    return false;
#else
    return false;
#endif
}
}  // namespace detail

/// Whether `Table` has one row per enumerator, in enumerator order: row i holds the enumerator
/// whose value is i, names are non-empty and distinct, and the value after the last row is not an
/// enumerator (a new enumerator without its row fails here). For enums numbered 0, 1, 2, ...
template <const auto& Table>
[[nodiscard]] consteval bool covers_enum() {
    using E = detail::table_value_t<std::remove_cvref_t<decltype(Table)>>;
    using U = std::underlying_type_t<E>;
    constexpr std::size_t n = std::size(Table);
    for (std::size_t i = 0; i < n; ++i) {
        if (static_cast<std::size_t>(static_cast<U>(Table[i].value)) != i) return false;
        if (Table[i].name.empty()) return false;
        for (std::size_t j = 0; j < i; ++j) {
            if (Table[j].name == Table[i].name) return false;
        }
    }
    return !detail::names_an_enumerator<static_cast<E>(n)>();
}

}  // namespace perfcast
