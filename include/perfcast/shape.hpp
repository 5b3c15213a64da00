// perfcast/shape.hpp: tensor shapes with checked element counts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "error.hpp"

namespace perfcast {

/// Up to 8 dimensions, each >= 1 (a rank-0 shape is a scalar of one element).
class shape {
public:
    static constexpr std::size_t max_rank = 8;

    constexpr shape() noexcept = default;
    constexpr shape(std::initializer_list<std::int64_t> dims, std::string_view field = "shape") {
        PERFCAST_EXPECTS(dims.size() <= max_rank, "shape", field,
                         static_cast<double>(dims.size()), "at most 8 dimensions");
        for (std::int64_t d : dims) {
            PERFCAST_EXPECTS(d >= 1, "shape", field, static_cast<double>(d),
                             "every dimension >= 1");
            dims_[rank_++] = d;
        }
        (void)elements(field);  // rejects overflowing shapes at construction
    }

    [[nodiscard]] constexpr std::size_t rank() const noexcept { return rank_; }
    [[nodiscard]] constexpr std::int64_t operator[](std::size_t i) const noexcept {
        return dims_[i];
    }
    /// Innermost dimension (1 for a scalar).
    [[nodiscard]] constexpr std::int64_t inner() const noexcept {
        return rank_ == 0 ? 1 : dims_[rank_ - 1];
    }

    /// Product of the dimensions; an overflow of 63 bits is an error naming `field`.
    [[nodiscard]] constexpr std::int64_t elements(std::string_view field = "shape") const {
        std::int64_t n = 1;
        for (std::size_t i = 0; i < rank_; ++i) n = checked_mul(n, dims_[i], field);
        return n;
    }

    [[nodiscard]] friend constexpr bool operator==(const shape&, const shape&) = default;

    std::array<std::int64_t, max_rank> dims_{};  // public for structural-type rules
    std::size_t rank_ = 0;

private:
    static constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b,
                                              std::string_view field) {
        PERFCAST_EXPECTS(b == 0 || a <= std::numeric_limits<std::int64_t>::max() / b, "shape",
                         field, static_cast<double>(a) * static_cast<double>(b),
                         "an element count of at most 2^63 - 1: too large");
        return a * b;
    }
};

namespace detail {
/// "[400, 2]": a shape as error messages write it. Appended piece by piece (GCC 12 at -O3 warns
/// falsely, -Wrestrict, on "literal" + string).
[[nodiscard]] inline std::string shape_text(const shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.rank(); ++i) {
        if (i > 0) out += ", ";
        out += std::to_string(s[i]);
    }
    out += ']';
    return out;
}
}  // namespace detail

/// a x b with an overflow check naming `field`.
[[nodiscard]] constexpr std::int64_t checked_product(std::int64_t a, std::int64_t b,
                                                     std::string_view where,
                                                     std::string_view field) {
    PERFCAST_EXPECTS(
        a >= 0 && b >= 0 && (b == 0 || a <= std::numeric_limits<std::int64_t>::max() / b), where,
        field, static_cast<double>(a) * static_cast<double>(b),
        "at most 9223372036854775807 (2^63 - 1): too large");
    return a * b;
}

/// a + b with an overflow check naming `field`.
[[nodiscard]] constexpr std::int64_t checked_sum(std::int64_t a, std::int64_t b,
                                                 std::string_view where, std::string_view field) {
    PERFCAST_EXPECTS(a >= 0 && b >= 0 && a <= std::numeric_limits<std::int64_t>::max() - b, where,
                     field, static_cast<double>(a) + static_cast<double>(b),
                     "at most 9223372036854775807 (2^63 - 1): too large");
    return a + b;
}

/// ceil(a / b) for a >= 0, b >= 1; never overflows (no a + b - 1).
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
    return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace perfcast
