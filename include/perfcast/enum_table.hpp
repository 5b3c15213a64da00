// perfcast/enum_table.hpp: one constexpr table per enum, from which names and parsing derive.
//
//   inline constexpr std::array<enum_entry<copy_policy>, 2> copy_policy_names{{
//       {copy_policy::per_tensor, "per-tensor"}, {copy_policy::aggregated, "aggregated"}}};
//   name_in(copy_policy_names, copy_policy::aggregated)   // "aggregated"
//   parse_in(copy_policy_names, "per-tensor")             // optional: copy_policy::per_tensor
//   choices_of(copy_policy_names)                         // "per-tensor or aggregated"
//
// A new enumerator is a new row: its name, its parsing and the "expected ..." of every error
// message follow from the table.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace perfcast {

/// One enumerator and the name it is written as (in files, flags and output).
template <class E>
struct enum_entry {
    E value;
    std::string_view name;
};

/// The name of `v` in `table`, or "?" when the table lacks it.
template <class E, std::size_t N>
[[nodiscard]] constexpr std::string_view name_in(const std::array<enum_entry<E>, N>& table,
                                                 E v) noexcept {
    for (const auto& e : table) {
        if (e.value == v) return e.name;
    }
    return "?";
}

/// The enumerator named `text` (exact match), or nothing.
template <class E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> parse_in(const std::array<enum_entry<E>, N>& table,
                                                  std::string_view text) noexcept {
    for (const auto& e : table) {
        if (e.name == text) return e.value;
    }
    return std::nullopt;
}

/// "a, b or c": the names for an error's "expected ...".
template <class E, std::size_t N>
[[nodiscard]] std::string choices_of(const std::array<enum_entry<E>, N>& table) {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
        if (i > 0) out += i + 1 == N ? " or " : ", ";
        out += table[i].name;
    }
    return out;
}

}  // namespace perfcast
