// perfcast/batched_shape.hpp: dimensions and shapes that depend on the batch size.
//
// One model description serves every batch size: each dimension is `a x B + c` (`batch_dim`),
// and a node (node.hpp) stores its shapes as batched_shapes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "error.hpp"
#include "shape.hpp"

namespace perfcast {

// ---------------------------------------------------------------------------------------------
// Dimensions that depend on the batch size.

/// `per_batch x B + fixed`. A plain number converts to a fixed dimension. Valid dimensions have
/// per_batch >= 0 and a value >= 1 at B = 1 (so at every B >= 1).
struct batch_dim {
    std::int64_t per_batch = 0;
    std::int64_t fixed = 0;

    constexpr batch_dim() noexcept = default;
    constexpr batch_dim(std::int64_t n) noexcept : fixed(n) {}  // NOLINT: 32 is a fixed dim
    constexpr batch_dim(std::int64_t a, std::int64_t c) noexcept : per_batch(a), fixed(c) {}

    [[nodiscard]] constexpr bool depends_on_batch() const noexcept { return per_batch != 0; }
    [[nodiscard]] constexpr bool valid() const noexcept {
        return per_batch >= 0 && fixed <= std::numeric_limits<std::int64_t>::max() - per_batch &&
               per_batch + fixed >= 1;
    }
    /// The value at batch `batch` (>= 1); overflow is an error naming `field`.
    [[nodiscard]] constexpr std::int64_t at(std::int64_t batch,
                                            std::string_view field = "dimension") const {
        const std::int64_t scaled = checked_product(per_batch, batch, "batch_dim::at", field);
        PERFCAST_EXPECTS(fixed < 0 || scaled <= std::numeric_limits<std::int64_t>::max() - fixed,
                         "batch_dim::at", field,
                         static_cast<double>(scaled) + static_cast<double>(fixed),
                         "a dimension that fits in 63 bits");
        return scaled + fixed;
    }

    [[nodiscard]] friend constexpr batch_dim operator*(batch_dim d, std::int64_t s) noexcept {
        return {d.per_batch * s, d.fixed * s};
    }
    [[nodiscard]] friend constexpr batch_dim operator*(std::int64_t s, batch_dim d) noexcept {
        return d * s;
    }
    [[nodiscard]] friend constexpr batch_dim operator+(batch_dim a, batch_dim b) noexcept {
        return {a.per_batch + b.per_batch, a.fixed + b.fixed};
    }
    [[nodiscard]] friend constexpr bool operator==(batch_dim, batch_dim) noexcept = default;
};

/// The batch symbol: `B * 8` is 8 per sample, `B * 26 + 1` one more. In its own namespace
/// because `units::B` is the byte: `using perfcast::batch_symbol::B;` where you describe models.
namespace batch_symbol {
inline constexpr batch_dim B{1, 0};
}  // namespace batch_symbol

/// A shape whose dimensions are batch_dims.
struct batched_shape {
    std::array<batch_dim, shape::max_rank> dims{};
    std::size_t rank = 0;

    constexpr batched_shape() noexcept = default;
    constexpr batched_shape(std::initializer_list<batch_dim> d, std::string_view field = "shape") {
        PERFCAST_EXPECTS(d.size() <= shape::max_rank, "batched_shape", field,
                         static_cast<double>(d.size()), "at most 8 dimensions");
        for (batch_dim x : d) push_back(x, field);
    }
    constexpr void push_back(batch_dim x, std::string_view field = "shape") {
        PERFCAST_EXPECTS(rank < shape::max_rank, "batched_shape", field,
                         static_cast<double>(rank + 1), "at most 8 dimensions");
        PERFCAST_EXPECTS(x.valid(), "batched_shape", field,
                         static_cast<double>(x.per_batch + x.fixed),
                         "a dimension a x B + c with a >= 0 and a + c >= 1");
        dims[rank++] = x;
    }
    [[nodiscard]] constexpr bool depends_on_batch() const noexcept {
        for (std::size_t i = 0; i < rank; ++i) {
            if (dims[i].depends_on_batch()) return true;
        }
        return false;
    }
    [[nodiscard]] constexpr batch_dim operator[](std::size_t i) const noexcept { return dims[i]; }
    [[nodiscard]] constexpr batch_dim inner() const noexcept {
        return rank == 0 ? batch_dim{1} : dims[rank - 1];
    }
    /// The concrete shape at batch `batch`.
    [[nodiscard]] constexpr shape at(std::int64_t batch, std::string_view field = "shape") const {
        shape s;
        for (std::size_t i = 0; i < rank; ++i) {
            s.dims_[i] = dims[i].at(batch, field);
            PERFCAST_EXPECTS(s.dims_[i] >= 1, "batched_shape::at", field,
                             static_cast<double>(s.dims_[i]), "every dimension >= 1");
        }
        s.rank_ = rank;
        (void)s.elements(field);  // overflow check
        return s;
    }
    [[nodiscard]] friend constexpr bool operator==(const batched_shape&,
                                                   const batched_shape&) = default;
};

namespace detail {
/// "[B*8+1, 300]": a batched shape as a model file writes its dimensions, in error messages.
[[nodiscard]] inline std::string shape_text(const batched_shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.rank; ++i) {
        if (i > 0) out += ", ";
        const batch_dim d = s[i];
        if (d.per_batch >= 1) out += 'B';
        if (d.per_batch > 1) {
            out += '*';
            out += std::to_string(d.per_batch);
        }
        if (d.fixed != 0 || d.per_batch == 0) {
            if (d.per_batch != 0 && d.fixed > 0) out += '+';
            out += std::to_string(d.fixed);
        }
    }
    out += ']';
    return out;
}
}  // namespace detail

}  // namespace perfcast
