// perfcast/dtype.hpp: tensor element types as the Ascend toolchain names them.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "error.hpp"
#include "units.hpp"

namespace perfcast {

enum class dtype : unsigned char {
    fp32,
    hf32,  // fp32 storage, reduced-precision cube path (guide §2: "fp32 -> HF32 for MatMul")
    fp16,
    bf16,
    fp64,
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    bool_,
};

inline constexpr std::size_t dtype_count = 14;

inline constexpr std::array<dtype, dtype_count> all_dtypes{
    dtype::fp32,  dtype::hf32,  dtype::fp16,  dtype::bf16,   dtype::fp64,
    dtype::int8,  dtype::uint8, dtype::int16, dtype::uint16, dtype::int32,
    dtype::uint32, dtype::int64, dtype::uint64, dtype::bool_};

[[nodiscard]] constexpr std::size_t index_of(dtype t) noexcept {
    return static_cast<std::size_t>(t);
}

/// Bytes per element.
[[nodiscard]] constexpr data_size size_of(dtype t) noexcept {
    constexpr std::array<double, dtype_count> bytes{4, 4, 2, 2, 8, 1, 1, 2, 2, 4, 4, 8, 8, 1};
    return data_size{bytes[index_of(t)], units::B};
}

/// Short lower-case name used by perfcast's own inputs and outputs ("fp16", "int64", ...).
[[nodiscard]] constexpr std::string_view name_of(dtype t) noexcept {
    constexpr std::array<std::string_view, dtype_count> names{
        "fp32", "hf32", "fp16", "bf16", "fp64", "int8", "uint8",
        "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"};
    return names[index_of(t)];
}

[[nodiscard]] constexpr bool is_integer(dtype t) noexcept {
    switch (t) {
        case dtype::int8: case dtype::uint8: case dtype::int16: case dtype::uint16:
        case dtype::int32: case dtype::uint32: case dtype::int64: case dtype::uint64:
        case dtype::bool_:
            return true;
        default:
            return false;
    }
}

/// Cube fractal (M, K, N) for a dtype: the tile one cube instruction works on.
/// Source: CANN 8.1.RC1 platform_config [DtypeMKN]: Default=16,16,16; DT_INT8/DT_UINT8=16,32,16.
/// fp32/hf32 use 16x8x16: an assumption from the 512-byte L0A fractal (16 x 8 x 4 B), which the
/// ini's Default line does not cover; calibrate with a measured fp32 MatMul.
struct fractal_shape {
    int m;
    int k;
    int n;
    [[nodiscard]] constexpr long long macs() const noexcept {
        return static_cast<long long>(m) * k * n;
    }
};

[[nodiscard]] constexpr fractal_shape cube_fractal(dtype t) noexcept {
    switch (t) {
        case dtype::int8:
        case dtype::uint8:
            return {16, 32, 16};
        case dtype::fp32:
        case dtype::hf32:
            return {16, 8, 16};
        default:
            return {16, 16, 16};
    }
}

/// Whether the vector unit has native instructions for the dtype. int64 and uint64 appear in the
/// 910B ini's [AICoreintrinsicDtypeMap] only for scalar intrinsics (sqrt, abs, max, min), so
/// vector work on them takes a scalar slow path (guide §7: Equal int64 230 us vs int32 < 30 us).
[[nodiscard]] constexpr bool vector_native(dtype t) noexcept {
    return t != dtype::int64 && t != dtype::uint64 && t != dtype::fp64;
}

namespace detail {
struct dtype_name {
    std::string_view text;
    dtype type;
};
// Spellings seen in msprof op_summary / torch_npu kernel_details ("DT_BF16", "FLOAT16",
// "FLOAT", "INT64"), plus perfcast's short names.
inline constexpr std::array<dtype_name, 45> dtype_names{{
    {"fp32", dtype::fp32},     {"float32", dtype::fp32},  {"FLOAT", dtype::fp32},
    {"DT_FLOAT", dtype::fp32}, {"FLOAT32", dtype::fp32},  {"hf32", dtype::hf32},
    {"HF32", dtype::hf32},     {"DT_HF32", dtype::hf32},  {"fp16", dtype::fp16},
    {"float16", dtype::fp16},  {"FLOAT16", dtype::fp16},  {"DT_FLOAT16", dtype::fp16},
    {"bf16", dtype::bf16},     {"bfloat16", dtype::bf16}, {"BF16", dtype::bf16},
    {"DT_BF16", dtype::bf16},  {"BFLOAT16", dtype::bf16}, {"fp64", dtype::fp64},
    {"DOUBLE", dtype::fp64},   {"DT_DOUBLE", dtype::fp64}, {"int8", dtype::int8},
    {"INT8", dtype::int8},     {"DT_INT8", dtype::int8},  {"uint8", dtype::uint8},
    {"UINT8", dtype::uint8},   {"DT_UINT8", dtype::uint8}, {"int16", dtype::int16},
    {"INT16", dtype::int16},   {"DT_INT16", dtype::int16}, {"uint16", dtype::uint16},
    {"UINT16", dtype::uint16}, {"int32", dtype::int32},   {"INT32", dtype::int32},
    {"DT_INT32", dtype::int32}, {"uint32", dtype::uint32}, {"UINT32", dtype::uint32},
    {"int64", dtype::int64},   {"INT64", dtype::int64},   {"DT_INT64", dtype::int64},
    {"uint64", dtype::uint64}, {"UINT64", dtype::uint64}, {"DT_UINT64", dtype::uint64},
    {"bool", dtype::bool_},    {"BOOL", dtype::bool_},    {"DT_BOOL", dtype::bool_},
}};
}  // namespace detail

/// The dtype named `text`, or nothing.
[[nodiscard]] constexpr std::optional<dtype> try_parse_dtype(std::string_view text) noexcept {
    for (const auto& n : detail::dtype_names) {
        if (n.text == text) return n.type;
    }
    return std::nullopt;
}

/// The dtype named `text`; an unknown name is a compile error in constant evaluation and a
/// `perfcast::error` listing the accepted short names at run time.
[[nodiscard]] constexpr dtype parse_dtype(std::string_view text) {
    if (auto t = try_parse_dtype(text)) return *t;
    detail::precondition_failed(
        "parse_dtype", "dtype", text,
        "one of fp32, hf32, fp16, bf16, fp64, int8, uint8, int16, uint16, int32, uint32, int64, "
        "uint64, bool (or a profiler spelling such as DT_BF16, FLOAT16, FLOAT, INT64)");
}

}  // namespace perfcast
