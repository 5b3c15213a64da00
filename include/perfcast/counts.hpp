// perfcast/counts.hpp: whole-number counts that are easy to swap, as distinct types.
//
// A core count, a batch size and a stream count are all plain integers, and the calls that take
// them take two or three side by side: `evaluate_card(c, nodes, batch, streams, split)`. Each is
// its own type, so a stream count given where a batch size is expected, or a core count given as
// either, does not compile (tests/static_counts.cpp). Construction from a number is explicit
// (`batch_size{16}`), the number is `.value`, and a count compares only with its own kind. No
// arithmetic: code that computes with a count takes `.value` at the boundary and stays plain.
//
// A grid's axis is a list of one kind: `counts<stream_count>({1, 2, 4})`.
//
// Three short structs rather than one template: a compile error then names `batch_size`, not
// `count<batch_tag, long>`.
#pragma once

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace perfcast {

/// A count of cores of one engine: not a batch size, not a stream count.
struct core_count {
    int value = 0;
    constexpr core_count() noexcept = default;
    constexpr explicit core_count(int n) noexcept : value(n) {}
    [[nodiscard]] friend constexpr bool operator==(core_count, core_count) noexcept = default;
    [[nodiscard]] friend constexpr auto operator<=>(core_count, core_count) noexcept = default;
};

/// Samples per inference (the batch an instance runs): not a core count, not a stream count.
struct batch_size {
    std::int64_t value = 0;
    constexpr batch_size() noexcept = default;
    constexpr explicit batch_size(std::int64_t n) noexcept : value(n) {}
    [[nodiscard]] friend constexpr bool operator==(batch_size, batch_size) noexcept = default;
    [[nodiscard]] friend constexpr auto operator<=>(batch_size, batch_size) noexcept = default;
};

/// Instances (streams) of a model running side by side on one card: not a batch size, not a
/// core count.
struct stream_count {
    int value = 0;
    constexpr stream_count() noexcept = default;
    constexpr explicit stream_count(int n) noexcept : value(n) {}
    [[nodiscard]] friend constexpr bool operator==(stream_count, stream_count) noexcept = default;
    [[nodiscard]] friend constexpr auto operator<=>(stream_count, stream_count) noexcept = default;
};

/// A list of counts of one kind from plain numbers, for a grid's axis:
/// `whatif_grid{.streams = counts<stream_count>({1, 2}), .cube = counts<core_count>({12, 24}),
/// ...}`.
template <class Count>
[[nodiscard]] constexpr std::vector<Count> counts(
    std::initializer_list<decltype(Count::value)> numbers) {
    std::vector<Count> out;
    out.reserve(numbers.size());
    for (const auto n : numbers) out.push_back(Count{n});
    return out;
}

/// Whether the numbers of container `Numbers` fit count `Count`'s value without narrowing.
template <class Count, class Numbers>
concept numbers_of = requires(const Numbers& numbers) {
    // Each number fits the count's value without narrowing (checked here, not left to braces,
    // which a compiler may only warn of).
    decltype(Count::value){*std::begin(numbers)};
};

/// The same from a container of numbers (a parsed list); a number type that does not fit the
/// count's (std::int64_t for a core count) does not compile: convert it first.
template <class Count, class Numbers>
requires numbers_of<Count, Numbers>
[[nodiscard]] constexpr std::vector<Count> counts(const Numbers& numbers) {
    std::vector<Count> out;
    out.reserve(numbers.size());
    for (const auto n : numbers) out.push_back(Count{n});  // braces: no narrowing
    return out;
}

}  // namespace perfcast
