// perfcast/traffic.hpp: memory traffic of a short op sequence, and what a graph rewrite saves.
//
// guide §9 judges rewrites by the bytes they stop moving: removing a Tile before a broadcasting
// BMM removes a 37.5 MiB write; swapping Tile and Concat cuts reads by 98.5 % and writes by half.
// Here each op names the tensors it reads and writes (shape + dtype, bytes = elements x size of
// the dtype); `traffic(seq)` adds them up per op, per tensor and in total, and
// `compare(before, after)` gives the deltas and the changes as fractions.
//
// What is counted: each tensor an op lists, once per op, at its full size. Not counted: re-reads
// implied by tiling, cache hits, alignment padding (cost.hpp models those per op). The fractions
// are unit-free, so fp32 where a source does not state the dtype changes nothing in them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "chip.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "shape.hpp"
#include "units.hpp"

namespace perfcast {

namespace detail {

/// "[4294967296, 4294967296, 2]"
[[nodiscard]] inline std::string traffic_shape_text(std::initializer_list<std::int64_t> dims) {
    std::string s = "[";
    bool first = true;
    for (std::int64_t d : dims) {
        if (!first) s.append(", ");
        s.append(std::to_string(d));
        first = false;
    }
    return s.append("]");
}

/// Not constexpr: reaching it during constant evaluation is a compile error.
[[noreturn]] inline void traffic_tensor_failed(std::string_view where, std::string_view tensor,
                                               std::string_view member, std::string_view value,
                                               std::string_view expected) {
    std::string field(tensor.empty() ? std::string_view("(unnamed)") : tensor);
    field.append(".").append(member);
    precondition_failed(where, field, value, expected);
}

/// Checks what `shape` checks, but names the tensor: "huge.shape = [...], expected ...".
[[nodiscard]] constexpr shape traffic_checked_shape(std::string_view tensor,
                                                    std::initializer_list<std::int64_t> dims) {
    constexpr std::string_view where = "tensor";
    if (dims.size() > shape::max_rank) {
        traffic_tensor_failed(where, tensor, "shape.rank", std::to_string(dims.size()),
                              "at most 8 dimensions");
    }
    std::uint64_t n = 1;
    bool overflow = false;
    for (std::int64_t d : dims) {
        if (d < 1) {
            traffic_tensor_failed(where, tensor, "shape", traffic_shape_text(dims),
                                  "every dimension >= 1");
        }
        const auto ud = static_cast<std::uint64_t>(d);
        // n x ud must stay below 2^63 (an int64 element count).
        if (n > (std::uint64_t{1} << 63U) / ud ||
            n * ud > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            overflow = true;
        }
        if (!overflow) n *= ud;
    }
    if (overflow) {
        traffic_tensor_failed(where, tensor, "shape", traffic_shape_text(dims),
                              "an element count below 2^63 (the product of the dimensions "
                              "overflows 63 bits)");
    }
    return shape(dims);
}

}  // namespace detail

/// A named tensor: shape (up to 8 dimensions, each >= 1) and dtype (fp32 unless stated).
/// Tensors with the same name in one sequence are the same tensor.
struct tensor {
    fixed_name name{};
    shape dims{};
    dtype type = dtype::fp32;

    constexpr tensor() noexcept = default;
    /// `tensor{"x", {1, 32, 3}}`, `tensor{"idx", {4000}, dtype::int64}`. A shape whose element
    /// count reaches 2^63 is an error naming the tensor ("x.shape = [...]").
    constexpr tensor(fixed_name n, std::initializer_list<std::int64_t> d, dtype t = dtype::fp32)
        : name(n), dims(detail::traffic_checked_shape(n.view(), d)), type(t) {}
    constexpr tensor(fixed_name n, const shape& s, dtype t = dtype::fp32) noexcept
        : name(n), dims(s), type(t) {}

    [[nodiscard]] constexpr std::int64_t elements() const { return dims.elements(name.view()); }
    /// elements x bytes per element (exact below 2^53 bytes).
    [[nodiscard]] constexpr data_size bytes() const {
        return size_of(type) * static_cast<double>(elements());
    }

    [[nodiscard]] friend constexpr bool operator==(const tensor&, const tensor&) = default;
};

/// A fixed-capacity list of tensors (constexpr, structural).
template <std::size_t Capacity>
struct tensor_list {
    std::array<tensor, Capacity> items{};
    std::size_t count = 0;

    constexpr tensor_list() noexcept = default;
    constexpr tensor_list(std::initializer_list<tensor> ts) {
        PERFCAST_EXPECTS(ts.size() <= Capacity, "tensor_list", "size",
                         static_cast<double>(ts.size()),
                         Capacity == 8 ? "at most 8 tensors read by one op"
                                       : "at most 4 tensors written by one op");
        for (const tensor& t : ts) items[count++] = t;
    }

    [[nodiscard]] constexpr std::size_t size() const noexcept { return count; }
    [[nodiscard]] constexpr const tensor& operator[](std::size_t i) const noexcept {
        return items[i];
    }
    [[nodiscard]] constexpr const tensor* begin() const noexcept { return items.data(); }
    [[nodiscard]] constexpr const tensor* end() const noexcept { return items.data() + count; }
    /// Sum of the listed tensors' bytes.
    [[nodiscard]] constexpr data_size bytes() const {
        data_size b{};
        for (const tensor& t : *this) b += t.bytes();
        return b;
    }

    [[nodiscard]] friend constexpr bool operator==(const tensor_list&,
                                                   const tensor_list&) = default;
};

inline constexpr std::size_t max_op_reads = 8;
inline constexpr std::size_t max_op_writes = 4;

/// One op of a sequence: `tensor_op{"Tile", {x}, {x_tiled}}`.
struct tensor_op {
    fixed_name name{};
    tensor_list<max_op_reads> reads{};
    tensor_list<max_op_writes> writes{};

    [[nodiscard]] constexpr data_size read_bytes() const { return reads.bytes(); }
    [[nodiscard]] constexpr data_size written_bytes() const { return writes.bytes(); }
    [[nodiscard]] friend constexpr bool operator==(const tensor_op&, const tensor_op&) = default;
};

/// Ops in execution order: `op_sequence{tile, concat}`.
template <std::size_t N>
struct op_sequence {
    std::array<tensor_op, N> ops;
    [[nodiscard]] friend constexpr bool operator==(const op_sequence&,
                                                   const op_sequence&) = default;
};
template <class... Ops>
op_sequence(Ops...) -> op_sequence<sizeof...(Ops)>;

struct op_traffic {
    fixed_name name{};
    data_size read{};
    data_size written{};
    [[nodiscard]] friend constexpr bool operator==(const op_traffic&, const op_traffic&) = default;
};

struct tensor_traffic {
    fixed_name name{};
    shape dims{};
    dtype type = dtype::fp32;
    data_size size{};     // bytes of the tensor
    data_size read{};     // size x number of ops that read it
    data_size written{};  // size x number of ops that write it
    int reads = 0;
    int writes = 0;
    [[nodiscard]] friend constexpr bool operator==(const tensor_traffic&,
                                                   const tensor_traffic&) = default;
};

template <std::size_t N>
struct traffic_report {
    static constexpr std::size_t tensor_capacity = N * (max_op_reads + max_op_writes);

    data_size read{};
    data_size written{};
    std::array<op_traffic, N> per_op{};
    std::array<tensor_traffic, tensor_capacity> per_tensor{};  // in order of first use
    std::size_t tensor_count = 0;

    [[nodiscard]] constexpr data_size total() const noexcept { return read + written; }
    /// The traffic of the tensor named `name`, or nothing when no op lists it.
    [[nodiscard]] constexpr std::optional<tensor_traffic> find_tensor(
        std::string_view name) const noexcept {
        for (std::size_t i = 0; i < tensor_count; ++i) {
            if (per_tensor[i].name.view() == name) return per_tensor[i];
        }
        return std::nullopt;
    }
};

namespace detail {

[[noreturn]] inline void traffic_mismatch_failed(std::size_t op, bool read, std::size_t index,
                                                 std::string_view tensor,
                                                 std::size_t first_op) {
    std::string field = "ops[" + std::to_string(op) + "]." + (read ? "reads[" : "writes[") +
                        std::to_string(index) + "] (" + std::string(tensor) + ")";
    precondition_failed("traffic", field, "a different shape or dtype",
                        "the shape and dtype the tensor has in ops[" +
                            std::to_string(first_op) + "] (one name, one tensor)");
}

template <std::size_t N>
constexpr void traffic_add(traffic_report<N>& r, const tensor& t, bool read, std::size_t op,
                           std::size_t index, std::array<std::size_t, N * (max_op_reads +
                                                                            max_op_writes)>&
                                                  first_op) {
    const data_size b = t.bytes();
    std::size_t i = 0;
    while (i < r.tensor_count && !(r.per_tensor[i].name == t.name)) ++i;
    if (i == r.tensor_count) {
        r.per_tensor[i].name = t.name;
        r.per_tensor[i].dims = t.dims;
        r.per_tensor[i].type = t.type;
        r.per_tensor[i].size = b;
        first_op[i] = op;
        ++r.tensor_count;
    } else if (!(r.per_tensor[i].dims == t.dims) || r.per_tensor[i].type != t.type) {
        traffic_mismatch_failed(op, read, index, t.name.view(), first_op[i]);
    }
    if (read) {
        r.per_tensor[i].read += b;
        ++r.per_tensor[i].reads;
    } else {
        r.per_tensor[i].written += b;
        ++r.per_tensor[i].writes;
    }
}

}  // namespace detail

/// Bytes read and written by the sequence: total, per op, per tensor. Two tensors of one name
/// with different sizes are an error naming the op and position.
template <std::size_t N>
[[nodiscard]] constexpr traffic_report<N> traffic(const op_sequence<N>& seq) {
    traffic_report<N> r;
    std::array<std::size_t, traffic_report<N>::tensor_capacity> first_op{};
    for (std::size_t o = 0; o < N; ++o) {
        const tensor_op& op = seq.ops[o];
        r.per_op[o].name = op.name;
        for (std::size_t i = 0; i < op.reads.size(); ++i) {
            detail::traffic_add(r, op.reads[i], true, o, i, first_op);
            r.per_op[o].read += op.reads[i].bytes();
        }
        for (std::size_t i = 0; i < op.writes.size(); ++i) {
            detail::traffic_add(r, op.writes[i], false, o, i, first_op);
            r.per_op[o].written += op.writes[i].bytes();
        }
        r.read += r.per_op[o].read;
        r.written += r.per_op[o].written;
    }
    return r;
}

/// Before versus after a rewrite. Changes are fractions: -0.5 is "-50 %".
struct traffic_change {
    data_size read_before{};
    data_size read_after{};
    data_size written_before{};
    data_size written_after{};

    [[nodiscard]] constexpr data_size read_delta() const noexcept {
        return read_after - read_before;
    }
    [[nodiscard]] constexpr data_size written_delta() const noexcept {
        return written_after - written_before;
    }
    [[nodiscard]] constexpr data_size total_delta() const noexcept {
        return read_delta() + written_delta();
    }
    /// after / before - 1; an error when nothing was read before (no fraction to give).
    [[nodiscard]] constexpr double read_change() const {
        return change(read_before, read_after, "read_before");
    }
    [[nodiscard]] constexpr double written_change() const {
        return change(written_before, written_after, "written_before");
    }
    [[nodiscard]] constexpr double total_change() const {
        return change(read_before + written_before, read_after + written_after, "total_before");
    }

    [[nodiscard]] friend constexpr bool operator==(const traffic_change&,
                                                   const traffic_change&) = default;

private:
    [[nodiscard]] static constexpr double change(data_size before, data_size after,
                                                 std::string_view field) {
        PERFCAST_EXPECTS(before.in(units::B) > 0, "traffic_change", field, before.in(units::B),
                         "more than 0 B, to express the change as a fraction");
        return after / before - 1.0;
    }
};

template <std::size_t N, std::size_t M>
[[nodiscard]] constexpr traffic_change compare(const traffic_report<N>& before,
                                               const traffic_report<M>& after) noexcept {
    return {before.read, after.read, before.written, after.written};
}

template <std::size_t N, std::size_t M>
[[nodiscard]] constexpr traffic_change compare(const op_sequence<N>& before,
                                               const op_sequence<M>& after) {
    return compare(traffic(before), traffic(after));
}

}  // namespace perfcast
