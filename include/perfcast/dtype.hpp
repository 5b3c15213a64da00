// perfcast/dtype.hpp: tensor element types as the Ascend toolchain names them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "enum_table.hpp"
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
    fp8_e4m3,  // OCP FP8 E4M3 (PyTorch's float8_e4m3fn, ONNX FLOAT8E4M3FN)
    fp8_e5m2,  // OCP FP8 E5M2 (PyTorch's float8_e5m2, ONNX FLOAT8E5M2)
};

/// Cube fractal (M, K, N) for a dtype: the tile one cube instruction works on.
struct fractal_shape {
    int m;
    int k;
    int n;
    [[nodiscard]] constexpr long long macs() const noexcept {
        return static_cast<long long>(m) * k * n;
    }
};

/// What perfcast knows about one dtype (a row of dtypes, enum_table.hpp).
struct dtype_row {
    dtype value;
    std::string_view name;   // short lower-case name of perfcast's own inputs and outputs
    double bytes;            // per element
    bool integer;            // integer or bool: topk on the AI CPU (guide §8), cast direction
    fractal_shape fractal;   // cube fractal (M, K, N)
    bool vector_native;      // the vector unit has native instructions for it
    name_list<4> spellings;  // profiler spellings besides `name`
};

// Fractals. Source: CANN 8.1.RC1 platform_config [DtypeMKN]: Default=16,16,16;
// DT_INT8/DT_UINT8=16,32,16. fp32/hf32 use 16x8x16: an assumption from the 512-byte L0A fractal
// (16 x 8 x 4 B), which the ini's Default line does not cover; calibrate with a measured fp32
// MatMul.
// Vector-native: int64 and uint64 appear in the 910B ini's [AICoreintrinsicDtypeMap] only for
// scalar intrinsics (sqrt, abs, max, min), so vector work on them takes a scalar slow path
// (guide §7: Equal int64 230 us vs int32 < 30 us); fp64 likewise has no vector path.
// Spellings: as seen in msprof op_summary / torch_npu kernel_details ("DT_BF16", "FLOAT16",
// "FLOAT", "INT64").
// FP8 (the OCP 8-bit floating-point formats, E4M3 and E5M2; NVIDIA Hopper and Ada tensor cores,
// NVIDIA H100 datasheet): 1 byte, "fp8" alone names E4M3, the format inference runs in. Spellings:
// PyTorch's dtype names (torch.float8_e4m3fn, torch.float8_e5m2), ONNX's TensorProto.DataType
// names and CANN's ge::DataType names (DT_FLOAT8_E4M3FN, DT_FLOAT8_E5M2). No vector unit of a
// preset computes in FP8 (CUDA cores convert it; no shipped Ascend chip takes it): vector
// arithmetic on it runs in engine_spec::fp8_computed_as (chip.hpp). The fractal is int8's
// (16, 32, 16), an assumption for the byte-wide cube path of an Ascend chip that takes FP8 (none
// of the presets does).
// clang-format off
inline constexpr std::array<dtype_row, 16> dtypes{{
    // value       name      B  integer fractal      native spellings (profilers)
    {dtype::fp32,   "fp32",   4, false, {16, 8, 16},  true,
     {"float32", "FLOAT", "FLOAT32", "DT_FLOAT"}},
    {dtype::hf32,   "hf32",   4, false, {16, 8, 16},  true,  {"HF32", "DT_HF32"}},
    {dtype::fp16,   "fp16",   2, false, {16, 16, 16}, true,  {"float16", "FLOAT16", "DT_FLOAT16"}},
    {dtype::bf16,   "bf16",   2, false, {16, 16, 16}, true,
     {"bfloat16", "BF16", "DT_BF16", "BFLOAT16"}},
    {dtype::fp64,   "fp64",   8, false, {16, 16, 16}, false, {"DOUBLE", "DT_DOUBLE"}},
    {dtype::int8,   "int8",   1, true,  {16, 32, 16}, true,  {"INT8", "DT_INT8"}},
    {dtype::uint8,  "uint8",  1, true,  {16, 32, 16}, true,  {"UINT8", "DT_UINT8"}},
    {dtype::int16,  "int16",  2, true,  {16, 16, 16}, true,  {"INT16", "DT_INT16"}},
    {dtype::uint16, "uint16", 2, true,  {16, 16, 16}, true,  {"UINT16"}},
    {dtype::int32,  "int32",  4, true,  {16, 16, 16}, true,  {"INT32", "DT_INT32"}},
    {dtype::uint32, "uint32", 4, true,  {16, 16, 16}, true,  {"UINT32"}},
    {dtype::int64,  "int64",  8, true,  {16, 16, 16}, false, {"INT64", "DT_INT64"}},
    {dtype::uint64, "uint64", 8, true,  {16, 16, 16}, false, {"UINT64", "DT_UINT64"}},
    {dtype::bool_,  "bool",   1, true,  {16, 16, 16}, true,  {"BOOL", "DT_BOOL"}},
    {dtype::fp8_e4m3, "fp8_e4m3", 1, false, {16, 32, 16}, false,
     {"fp8", "float8_e4m3fn", "FLOAT8E4M3FN", "DT_FLOAT8_E4M3FN"}},
    {dtype::fp8_e5m2, "fp8_e5m2", 1, false, {16, 32, 16}, false,
     {"float8_e5m2", "FLOAT8E5M2", "DT_FLOAT8_E5M2"}},
}};
// clang-format on
static_assert(covers_enum<dtypes>(), "perfcast::dtypes: one row per dtype, in enum order");

inline constexpr std::size_t dtype_count = dtypes.size();

inline constexpr std::array<dtype, dtype_count> all_dtypes = [] {
    std::array<dtype, dtype_count> out{};
    for (std::size_t i = 0; i < dtype_count; ++i) out[i] = dtypes[i].value;
    return out;
}();

[[nodiscard]] constexpr std::size_t index_of(dtype t) noexcept {
    return static_cast<std::size_t>(t);
}

/// Bytes per element.
[[nodiscard]] constexpr data_size size_of(dtype t) noexcept {
    return data_size{dtypes[index_of(t)].bytes, units::B};
}

/// Short lower-case name used by perfcast's own inputs and outputs ("fp16", "int64", ...).
[[nodiscard]] constexpr std::string_view name_of(dtype t) noexcept { return name_in(dtypes, t); }

[[nodiscard]] constexpr bool is_integer(dtype t) noexcept { return dtypes[index_of(t)].integer; }

[[nodiscard]] constexpr fractal_shape cube_fractal(dtype t) noexcept {
    return dtypes[index_of(t)].fractal;
}

/// Whether `t` is one of the FP8 formats.
[[nodiscard]] constexpr bool is_fp8(dtype t) noexcept {
    return t == dtype::fp8_e4m3 || t == dtype::fp8_e5m2;
}

/// Whether `t` is bf16 or an FP8 format: the floating-point dtypes an engine may compute in a
/// wider dtype (engine_spec::computed_as). One test of a bit mask: cost() asks it of every op.
[[nodiscard]] constexpr bool is_narrow_float(dtype t) noexcept {
    constexpr std::uint32_t mask = (std::uint32_t{1} << index_of(dtype::bf16)) |
                                   (std::uint32_t{1} << index_of(dtype::fp8_e4m3)) |
                                   (std::uint32_t{1} << index_of(dtype::fp8_e5m2));
    static_assert(dtype_count <= 32, "dtypes fit the mask");
    return ((mask >> index_of(t)) & 1U) != 0;
}

/// Whether the vector unit has native instructions for the dtype (see dtypes).
[[nodiscard]] constexpr bool vector_native(dtype t) noexcept {
    return dtypes[index_of(t)].vector_native;
}

/// The dtype named `text` (its name or a profiler spelling, in any case: "FP16", "Float16"), or
/// nothing.
[[nodiscard]] constexpr std::optional<dtype> try_parse_dtype(std::string_view text) noexcept {
    for (const dtype_row& r : dtypes) {
        if (detail::iequals(r.name, text)) return r.value;
        for (std::string_view s : r.spellings) {
            if (detail::iequals(s, text)) return r.value;
        }
    }
    return std::nullopt;
}

/// The dtype named `text`; an unknown name is a compile error in constant evaluation and a
/// `perfcast::error` listing the accepted short names at run time.
[[nodiscard]] constexpr dtype parse_dtype(std::string_view text) {
    if (auto t = try_parse_dtype(text)) return *t;
    detail::precondition_failed(
        "parse_dtype", "dtype", text,
        "one of " + choices_of(dtypes, ", ", ", ") +
            " (any case, or a profiler spelling such as DT_BF16, FLOAT16, FLOAT, INT64)");
}

}  // namespace perfcast
