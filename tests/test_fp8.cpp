// FP8 (E4M3, E5M2): the dtype's names and size, the Hopper tensor cores' rate, arithmetic on the
// GPU vector engines in fp32 with its conversions, and the chips without an FP8 path saying so.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/onnx_types.hpp>
#include <perfcast/op.hpp>

#include <cstdint>
#include <string>

#include "../examples/perfcast/cli.hpp"
#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

namespace test_fp8 {

using namespace perfcast;
using namespace perfcast::literals;

namespace {
using perfcast_test::has;
using perfcast_test::run_command;

/// The message of the perfcast::error `f` throws, or "" when it throws none.
std::string error_of(const auto& f) {
    try {
        f();
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return {};
}
}  // namespace

static_assert(size_of(dtype::fp8_e4m3) == 1_B);
static_assert(parse_dtype("fp8") == dtype::fp8_e4m3);

TEST_CASE("fp8: names, spellings and size") {
    for (const char* s : {"fp8", "fp8_e4m3", "float8_e4m3fn", "FLOAT8E4M3FN", "DT_FLOAT8_E4M3FN",
                          "Float8_E4M3FN"}) {
        CAPTURE(s);
        CHECK(parse_dtype(s) == dtype::fp8_e4m3);
    }
    for (const char* s : {"fp8_e5m2", "float8_e5m2", "FLOAT8E5M2", "DT_FLOAT8_E5M2"}) {
        CAPTURE(s);
        CHECK(parse_dtype(s) == dtype::fp8_e5m2);
    }
    for (const dtype t : {dtype::fp8_e4m3, dtype::fp8_e5m2}) {
        CHECK(size_of(t).in(units::B) == 1.0);
        CHECK_FALSE(is_integer(t));
        CHECK_FALSE(vector_native(t));
        CHECK(is_fp8(t));
    }
    CHECK_FALSE(is_fp8(dtype::int8));
    CHECK_FALSE(is_fp8(dtype::bf16));
    // ONNX TensorProto.DataType 17-20 (onnx/onnx.proto); 21 (UINT4) is not read.
    CHECK(io::dtype_of_onnx(17) == dtype::fp8_e4m3);
    CHECK(io::dtype_of_onnx(18) == dtype::fp8_e4m3);
    CHECK(io::dtype_of_onnx(19) == dtype::fp8_e5m2);
    CHECK(io::dtype_of_onnx(20) == dtype::fp8_e5m2);
    CHECK_FALSE(io::dtype_of_onnx(21).has_value());
}

TEST_CASE("fp8: a Hopper GEMM at twice the fp16 tensor rate, half the bytes") {
    const chip& h100 = chips::h100_sxm;
    // H100 datasheet: FP8 1978.9 TFLOPS dense, twice FP16's 989.4, both at 1830 MHz.
    CHECK(h100.peak(engine::cube, dtype::fp8_e4m3).in(units::TFLOPS) ==
          doctest::Approx(2.0 * h100.peak(engine::cube, dtype::fp16).in(units::TFLOPS))
              .epsilon(1e-12));
    CHECK(h100.peak(engine::cube, dtype::fp8_e5m2) == h100.peak(engine::cube, dtype::fp8_e4m3));
    // A large square GEMM: the same tiles win for both dtypes (compute-bound), so the compute
    // term halves exactly (up to rounding: 1e-12).
    const std::int64_t n = 8192;
    const op_cost f8 = cost(h100, matmul(n, n, n, dtype::fp8_e4m3));
    const op_cost f16 = cost(h100, matmul(n, n, n, dtype::fp16));
    CHECK(f8.compute.in(units::us) ==
          doctest::Approx(0.5 * f16.compute.in(units::us)).epsilon(1e-12));
    CHECK(f8.bytes.in(units::B) == doctest::Approx(0.5 * f16.bytes.in(units::B)).epsilon(1e-12));
    // Never below the FP8 peak's time for its flops.
    const double floor_us = 2.0 * static_cast<double>(n * n * n) /
                            h100.peak(engine::cube, dtype::fp8_e4m3).in(units::TFLOPS)*1e-6;
    CHECK(f8.compute.in(units::us) >= floor_us);
    // An FP8 GEMM writing bf16 (torch._scaled_mm's usual output) writes 2 bytes an element.
    const op out16 = matmul(n, n, n, dtype::fp8_e4m3, {.out_type = dtype::bf16});
    CHECK(out16.bytes_written.in(units::B) == 2.0 * static_cast<double>(n * n));
    CHECK(cost(h100, out16).compute == f8.compute);
}

TEST_CASE("fp8: chips without an FP8 path refuse its arithmetic and name what they take") {
    const op gemm = matmul(1024, 1024, 1024, dtype::fp8_e4m3);
    const std::string a100 = error_of([&] { (void)cost(chips::a100_80gb_sxm, gemm); });
    CHECK(has(a100, "dtype = fp8_e4m3"));
    CHECK(has(a100,
              "a dtype the cube of a100-80gb-sxm computes in (fp32, hf32, fp16, bf16, "
              "fp64, int8, uint8)"));
    const op add = elementwise(1 << 20, dtype::fp8_e5m2);
    const std::string b1 = error_of([&] { (void)cost(chips::ascend910b1, add); });
    CHECK(has(b1, "dtype = fp8_e5m2"));
    REQUIRE(has(b1, "vector of ascend910b1 computes in ("));
    CHECK_FALSE(has(b1.substr(b1.find("computes in (")), "fp8"));
    // Moving FP8 data needs no arithmetic: a transpose prices as the same bytes of int8.
    const shape dims{64, 512, 256};
    const op_cost moved = cost(chips::ascend910b1, transpose(dims, dtype::fp8_e4m3));
    CHECK(moved == cost(chips::ascend910b1, transpose(dims, dtype::int8)));
    // On the GPUs' vector engines FP8 arithmetic runs in fp32: their errors list it as taken.
    CHECK(has(detail::dtype_expected(chips::h100_sxm, add), "fp8_e4m3, fp8_e5m2)"));
    CHECK(has(detail::dtype_expected(chips::a100_80gb_sxm, add), "fp8_e4m3, fp8_e5m2)"));
}

TEST_CASE("fp8: GPU element-wise arithmetic in fp32, each FP8 element read or written converted") {
    // Against a chip whose vector engine computed in FP8 itself at a quarter of the fp32 rate:
    // an Add of two FP8 inputs does 1 operation and 3 conversions an element at the fp32 rate,
    // the same cycles. Same op, same tiling, so the compute terms match (1e-12: rounding).
    const chip& h100 = chips::h100_sxm;
    REQUIRE(h100.vector.fp8_computed_as == dtype::fp32);
    chip native = h100;
    native.vector.fp8_computed_as = dtype::fp8_e4m3;  // FP8 itself
    native.vector.ops_per_cycle[index_of(dtype::fp8_e4m3)] =
        h100.vector.ops_per_cycle_for(dtype::fp32) / 4.0;
    const op add = elementwise(std::int64_t{132} * 4096 * 32, dtype::fp8_e4m3);
    CHECK(cost(h100, add).compute.in(units::us) ==
          doctest::Approx(cost(native, add).compute.in(units::us)).epsilon(1e-12));
    CHECK(cost(h100, add).memory == cost(native, add).memory);
    CHECK(detail::converted_ops(h100.vector, add, 1) > 0);
    // A cast is the conversion itself: none added to it (a widening one walks its elements by
    // index, as a bf16 -> fp32 cast does: op::walk).
    const op to16 = cast(std::int64_t{132} * 4096 * 32, dtype::fp8_e4m3, dtype::fp16);
    CHECK(detail::converted_ops(h100.vector, to16, 1) == 0);
    CHECK(to16.walk == element_walk::indexed);
}

TEST_CASE("fp8: a chip computing FP8 in an integer dtype is refused, naming the field") {
    chip c = chips::h100_sxm;
    c.vector.fp8_computed_as = dtype::int8;
    const std::string why = error_of([&] { (void)validate(c); });
    CHECK(has(why, "vector.fp8_computed_as = int8"));
    CHECK(has(why, "an FP8 format (FP8 itself), fp16, bf16 or fp32"));
    c.vector.fp8_computed_as = dtype::fp16;
    CHECK(error_of([&] { (void)validate(c); }).empty());
    // FP8 computed as bf16 where bf16 is computed in fp32 (every C-220 Ascend preset): fp32.
    chip b1 = chips::ascend910b1;
    REQUIRE(b1.vector.bf16_computed_as == dtype::fp32);
    b1.vector.fp8_computed_as = dtype::bf16;
    CHECK(b1.vector.computed_as(dtype::fp8_e5m2) == dtype::fp32);
    b1.vector.fp8_computed_as = dtype::fp16;
    CHECK(b1.vector.computed_as(dtype::fp8_e5m2) == dtype::fp16);
    c.vector.bf16_computed_as = dtype::fp8_e5m2;
    CHECK(has(error_of([&] { (void)validate(c); }), "vector.bf16_computed_as = fp8_e5m2"));
}

TEST_CASE("fp8: model-file lines and perfcast op take it") {
    const node n = io::parse_op_line("matmul B,4096;4096,4096 fp8 out=bf16");
    const op o = instantiate(n, 16);
    CHECK(o.type == dtype::fp8_e4m3);
    CHECK(o.out_type == dtype::bf16);
    const auto r =
        run_command(cli::op_command, {"--chip", "h100", "--matmul", "4096,4096,4096", "--dtype",
                                      "fp8", "--out-dtype", "bf16", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "\"dtype\": \"fp8_e4m3\""));
    CHECK(has(r.out, "\"out_dtype\": \"bf16\""));
    // Not shown where the output keeps the input's dtype.
    const auto same = run_command(cli::op_command, {"--chip", "h100", "--matmul", "64,64,64",
                                                    "--dtype", "fp8", "--format", "json"});
    REQUIRE(same.status == 0);
    CHECK_FALSE(has(same.out, "out_dtype"));
    // Reads 2 x 4096^2 bytes, writes 4096^2 bf16.
    CHECK(has(r.out, "\"bytes\": " + std::to_string(4 * 4096 * 4096)));
    const auto a100 = run_command(
        cli::op_command, {"--chip", "a100", "--matmul", "64,64,64", "--dtype", "float8_e5m2"});
    CHECK(a100.status != 0);
    CHECK(has(a100.err, "dtype = fp8_e5m2"));
}

}  // namespace test_fp8
