// Element walks (op::walk, engine_spec::walk_rate / transpose_rate / walk_head): which ops the
// factories and the profile mapping mark, and what cost() charges for them. Known answers are
// worked by hand in the comments; the measured rows are in tests/test_h200.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/node.hpp>
#include <perfcast/op.hpp>
#include <perfcast/profile/kernel_reader.hpp>
#include <perfcast/profile/ops.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_element_walk {

using namespace perfcast;

namespace {

/// The op of one kernel_details row on the vector engine.
op op_of_row(const std::string& type, const std::string& in_shapes, const std::string& in_types,
             const std::string& out_shape, const std::string& out_type) {
    const std::string text =
        "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "x," +
        type + ",AI_VECTOR_CORE,10,132,\"" + in_shapes + "\"," + in_types + ",\"" + out_shape +
        "\"," + out_type + "\n";
    const auto t = profile::parse_kernel_details(text);
    REQUIRE(t.rows.size() == 1);
    const auto o = profile::op_of(t.rows[0]);
    REQUIRE(o.has_value());
    return *o;
}

/// `o` as a plain vector walk (what cost() charged before walks existed).
op unwalked(op o) {
    o.walk = element_walk::vector;
    return o;
}

}  // namespace

TEST_CASE("element walks: the factories mark broadcasts, widening casts and moved inner axes") {
    // [8, 4096] x [4096]: the second operand is broadcast over 8 rows.
    CHECK(elementwise_broadcast(shape{8, 4096}, shape{4096}, dtype::bf16).walk ==
          element_walk::indexed);
    // guide §7's Equal on [1, 4000] and [400, 1]: both operands broadcast.
    CHECK(elementwise_broadcast(shape{1, 4000}, shape{400, 1}, dtype::int32).walk ==
          element_walk::indexed);
    // A one-element operand is a scalar argument; equal shapes are the vectorized path.
    CHECK(elementwise_broadcast(shape{400, 4000}, shape{1}, dtype::fp16).walk ==
          element_walk::vector);
    CHECK(elementwise_broadcast(shape{400, 4000}, shape{400, 4000}, dtype::fp16).walk ==
          element_walk::vector);
    CHECK(elementwise(4096, dtype::fp16).walk == element_walk::vector);
    // Widening floating-point casts only.
    CHECK(cast(4096, dtype::bf16, dtype::fp32).walk == element_walk::indexed);
    CHECK(cast(4096, dtype::fp16, dtype::fp32).walk == element_walk::indexed);
    CHECK(cast(4096, dtype::fp32, dtype::fp64).walk == element_walk::indexed);
    CHECK(cast(4096, dtype::fp32, dtype::bf16).walk == element_walk::vector);
    CHECK(cast(4096, dtype::fp16, dtype::bf16).walk == element_walk::vector);
    CHECK(cast(4096, dtype::int32, dtype::int64).walk == element_walk::vector);
    CHECK(cast(4096, dtype::int32, dtype::fp32).walk == element_walk::vector);
    CHECK(transpose(shape{64, 4096}, dtype::bf16).walk == element_walk::transposed);
    CHECK(transpose(shape{8, 64, 4096}, dtype::bf16, false).walk == element_walk::indexed);
}

TEST_CASE("element walks: the profile mapping reads them off a row's shapes and dtypes") {
    CHECK(op_of_row("Mul", "8,4096;4096", "BF16;BF16", "8,4096", "BF16").walk ==
          element_walk::indexed);
    CHECK(op_of_row("Add", "8,4096;8,1", "FLOAT;FLOAT", "8,4096", "FLOAT").walk ==
          element_walk::indexed);
    // [1, 4096] x [4096]: as many elements as the output, the vectorized kernel (0.90 us on
    // the H200, as the same-shape Mul).
    CHECK(op_of_row("Mul", "1,4096;4096", "BF16;BF16", "1,4096", "BF16").walk ==
          element_walk::vector);
    CHECK(op_of_row("Mul", "8,4096;8,4096", "BF16;BF16", "8,4096", "BF16").walk ==
          element_walk::vector);
    // A scalar operand ([] or one element) is not walked.
    CHECK(op_of_row("Mul", "8,4096;1", "BF16;BF16", "8,4096", "BF16").walk == element_walk::vector);
    // An input that does not broadcast to the output, or is of another dtype, is not one: an
    // embedding's [64] int64 indices against its [64, 64] output.
    CHECK(op_of_row("GatherV2", "1000000,64;64", "BF16;INT64", "64,64", "BF16").walk ==
          element_walk::vector);
    CHECK(op_of_row("Mul", "8,4096;8", "BF16;BF16", "8,4096", "BF16").walk == element_walk::vector);
    CHECK(op_of_row("Cast", "4,4096", "BF16", "4,4096", "FLOAT").walk == element_walk::indexed);
    CHECK(op_of_row("Cast", "4,4096", "FLOAT", "4,4096", "BF16").walk == element_walk::vector);
    CHECK(op_of_row("Transpose", "64,4096", "BF16", "4096,64", "BF16").walk ==
          element_walk::transposed);
    CHECK(op_of_row("Transpose", "4096,4096", "BF16", "4096,4096", "BF16").walk ==
          element_walk::transposed);  // 2-D: the axes swap
    // 3-D: the innermost sizes differ (the axis moved) or match (taken to stay: a permuted
    // view's copy, walked by index).
    CHECK(op_of_row("Transpose", "8,512,4096", "BF16", "8,4096,512", "BF16").walk ==
          element_walk::transposed);
    CHECK(op_of_row("Transpose", "8,512,4096", "BF16", "512,8,4096", "BF16").walk ==
          element_walk::indexed);
}

TEST_CASE("element walks: cost() charges the busiest core's elements at the engine's rate") {
    chip c = chips::h200_sxm;
    c.vector.walk_rate = 2.0;
    c.vector.transpose_rate = 0.5;
    c.vector.walk_head = duration{1.0, units::us};
    (void)validate(c);
    // [65536, 4096] bf16 x [4096]: 268,435,456 outputs, 16,777,216 32-byte units, 127,101 a
    // core on 132 cores (ceil), 16 elements each: 2,033,616 elements at 2 a cycle is 1,016,808
    // cycles, 513.54 us at 1.98 GHz (the walk's rate is not scaled by the vector efficiency).
    const op mul = elementwise_broadcast(shape{65536, 4096}, shape{4096}, dtype::bf16);
    REQUIRE(mul.walk == element_walk::indexed);
    const op_cost walked = cost(c, mul);
    const op_cost plain = cost(c, unwalked(mul));
    const double expected_us = 127101.0 * 16.0 / 2.0 / 1.98e9 * 1e6;
    CHECK(walked.compute.in(units::us) == doctest::Approx(expected_us).epsilon(1e-9));
    CHECK(walked.head.in(units::us) == doctest::Approx(plain.head.in(units::us) + 1.0));
    CHECK(walked.memory.in(units::us) == doctest::Approx(plain.memory.in(units::us)));
    CHECK(walked.latency > plain.latency);
    CHECK(walked.bound == bound_kind::compute);
    // Half the rate, twice the walk (its compute).
    chip slow = c;
    slow.vector.walk_rate = 1.0;
    CHECK(cost(slow, mul).compute.in(units::us) ==
          doctest::Approx(2.0 * expected_us).epsilon(1e-9));
    // Fewer cores: 16,777,216 units over 12 is 1,398,102 a core.
    CHECK(cost(c, mul, core_count{12}).compute.in(units::us) ==
          doctest::Approx(1398102.0 * 16.0 / 2.0 / 1.98e9 * 1e6).epsilon(1e-9));
    // A transpose: its own rate, and its runs of one element priced as whole 16-byte units
    // (the strided side is in the rate), so its memory term is a same-size copy's.
    const op t = transpose(shape{4096, 4096}, dtype::bf16);
    const op_cost tc = cost(c, t);
    op copy = t;
    copy.walk = element_walk::vector;
    copy.run = data_size{8192.0, units::B};  // a row of the untransposed input
    CHECK(tc.memory.in(units::us) == doctest::Approx(cost(c, copy).memory.in(units::us)));
    // 16,777,216 elements in 1,048,576 units, 7,944 a core, 16 each, at 0.5 a cycle.
    CHECK(tc.compute.in(units::us) ==
          doctest::Approx(7944.0 * 16.0 / 0.5 / 1.98e9 * 1e6).epsilon(1e-9));
}

TEST_CASE("element walks: no rate, no change (the Ascend presets)") {
    const op mul = elementwise_broadcast(shape{1024, 4096}, shape{4096}, dtype::fp16);
    const op up = cast(1 << 20, dtype::fp16, dtype::fp32);
    const op t = transpose(shape{1024, 4096}, dtype::fp16);
    for (const chip* c : {&chips::ascend910b1, &chips::ascend310p3}) {
        CAPTURE(c->name.view());
        CHECK(c->vector.walk_rate == 0);
        CHECK(c->vector.transpose_rate == 0);
        for (const op& o : {mul, up, t}) {
            const op_cost a = cost(*c, o);
            const op_cost b = cost(*c, unwalked(o));
            CHECK(a.latency.in(units::us) == b.latency.in(units::us));
            CHECK(a.memory.in(units::us) == b.memory.in(units::us));
        }
    }
    // Every GPU preset walks (the Ampere ones at Hopper's rates, without the walk's head: their
    // default kernel head is larger than a walked Hopper kernel's head and walk head together);
    // a cube op ignores the flag.
    for (const auto& p : chips::all_presets()) {
        CAPTURE(p.name);
        const bool gpu = p.spec.aicpu.cores == 0;
        CHECK(p.spec.vector.walk_rate == (gpu ? chips::hopper_walk_rate : 0.0));
        CHECK(p.spec.vector.transpose_rate == (gpu ? chips::hopper_transpose_rate : 0.0));
        const bool hopper = gpu && p.spec.vector.cores == 132;
        CHECK(p.spec.vector.walk_head == (hopper ? chips::hopper_walk_head : duration{}));
        if (gpu) CHECK(cost(p.spec, mul).latency > cost(p.spec, unwalked(mul)).latency);
    }
    op gemm = matmul(512, 512, 512, dtype::bf16);
    op marked = gemm;
    marked.walk = element_walk::indexed;
    CHECK(cost(chips::h200_sxm, marked).latency.in(units::us) ==
          cost(chips::h200_sxm, gemm).latency.in(units::us));
}

TEST_CASE("element walks: impossible rates and heads are rejected, naming the field") {
    for (const double bad : {-1.0, 1e-9, std::numeric_limits<double>::quiet_NaN()}) {
        CAPTURE(bad);
        chip c = chips::h200_sxm;
        c.vector.walk_rate = bad;
        CHECK_THROWS_WITH_AS((void)validate(c), doctest::Contains("vector.walk_rate"), error);
        c = chips::h200_sxm;
        c.vector.transpose_rate = bad;
        CHECK_THROWS_WITH_AS((void)validate(c), doctest::Contains("vector.transpose_rate"), error);
    }
    chip c = chips::h200_sxm;
    c.vector.walk_head = duration{-0.5, units::us};
    CHECK_THROWS_WITH_AS((void)validate(c), doctest::Contains("vector.walk_head"), error);
    // A walked op's share of the walk (op::walk_work, a calibrated factor) must be a factor.
    op mul = elementwise_broadcast(shape{64, 4096}, shape{4096}, dtype::bf16);
    for (const double bad : {0.0, -1.0, 1e7, std::numeric_limits<double>::quiet_NaN()}) {
        CAPTURE(bad);
        mul.walk_work = bad;
        CHECK_THROWS_WITH_AS((void)cost(chips::h200_sxm, mul), doctest::Contains("op.walk_work"),
                             error);
        CHECK_NOTHROW((void)cost(chips::h200_sxm, unwalked(mul)));  // read for walked ops only
    }
}

TEST_CASE("element walks: GPU rope and gated activation rows walk by index, norms do not") {
    // sarathi-serve's rope and silu_and_mul kernels loop over a row's elements one
    // at a time (profile/ops.hpp's traits cite them); their norms reduce the row (row floor).
    const op rope = op_of_row("ApplyRotaryPosEmb", "4096,9216;4096,128;4096",
                              "FLOAT16;FLOAT16;INT64", "4096,9216", "FLOAT16");
    const op glu =
        op_of_row("SwiGlu", "4096,28672;4096,28672", "FLOAT16;FLOAT16", "4096,28672", "FLOAT16");
    const op norm =
        op_of_row("RmsNorm", "4096,8192;8192", "FLOAT16;FLOAT16", "4096,8192", "FLOAT16");
    CHECK(rope.walk == element_walk::indexed);
    CHECK(glu.walk == element_walk::indexed);
    CHECK(norm.walk == element_walk::vector);
    CHECK(norm.row_threads == 1024);
    CHECK(rope.work_units == 4096);  // a row per work unit: per-row parallelism
    // The rowwise factory takes the walk as an option.
    CHECK(rowwise(8, 4096, dtype::fp16, {.walk = element_walk::indexed}).walk ==
          element_walk::indexed);
    CHECK(rowwise(8, 4096, dtype::fp16).walk == element_walk::vector);
    // By hand on the A100 (108 SMs, 1410 MHz, 1.49 elements per SM cycle): 4096 rows of 9216
    // outputs, 38 rows on the busiest SM (ceil(4096 / 108)), 350,208 elements: 235,039 cycles,
    // 166.7 us. vidur measured 174 us for this Llama-2-70B rope on an A100 (docs/validation.md).
    const op_cost c = cost(chips::a100_80gb_sxm, rope);
    CHECK(c.compute.in(units::us) ==
          doctest::Approx(38.0 * 9216.0 / 1.49 / 1.41e9 * 1e6).epsilon(1e-9));
    // On an Ascend preset (no walk rate) the flag changes nothing.
    CHECK(cost(chips::ascend910b1, rope).latency.in(units::us) ==
          cost(chips::ascend910b1, unwalked(rope)).latency.in(units::us));
}

TEST_CASE("element walks: a type's own calibrated factor scales its walk") {
    // calibrate's stage 2 fits a type's factor on its whole time (profile/ops.hpp
    // with_work); calibration::applied gives the walk the same factor, and only a type's own
    // one: the factor of heavy types without one corrects assumed operation counts.
    const op glu =
        op_of_row("SwiGlu", "1024,11008;1024,11008", "FLOAT16;FLOAT16", "1024,11008", "FLOAT16");
    REQUIRE(glu.walk == element_walk::indexed);
    profile::calibration cal;
    cal.unseen_heavy_factor = 2.0;
    const op heavy = cal.applied(glu, "SwiGlu");
    CHECK(heavy.walk_work == 1.0);
    CHECK(heavy.ops_per_unit == doctest::Approx(2.0 * glu.ops_per_unit));
    cal.work_factor["SwiGlu"] = 0.5;
    const op own = cal.applied(glu, "SwiGlu");
    CHECK(own.walk_work == 0.5);
    CHECK(profile::detail::with_work(glu, 0.5).walk_work == 0.5);
    // Half the walk's work, half its compute term, where the walk sets it.
    const chip& a100 = chips::a100_80gb_sxm;
    CHECK(cost(a100, own).compute.in(units::us) ==
          doctest::Approx(0.5 * cost(a100, glu).compute.in(units::us)).epsilon(1e-9));
}

TEST_CASE("element walks: PyTorch's index_select kernels walk a gather on their own blocks") {
    // An embedding lookup of 4096 tokens into a [32000, 4096] fp16 table, as vidur's converter
    // writes torch 2.2's F.embedding (examples/vidur.hpp): a gather of 4096 rows of 8 KiB.
    const op large = op_of_row("indexSelectLargeIndex", "32000,4096;4096", "FLOAT16;INT64",
                               "4096,4096", "FLOAT16");
    CHECK(large.kind == op_kind::gather);
    CHECK(large.walk == element_walk::selected);
    CHECK(large.work_units == 4096);
    CHECK(large.run.in(units::B) == 8192.0);
    // indexSelectLargeIndex: ceil(4096 x 4096 / 128) blocks, at most 8 an SM: 864 on the A100's
    // 108 SMs, 8 on the busiest; each block 4096 x 4096 / 864 elements at
    // chips::pytorch_index_select_rate elements an SM cycle, 1410 MHz.
    const chip& a100 = chips::a100_80gb_sxm;
    CHECK(detail::index_select_blocks(large, 108) == 864);
    const double per_block = 4096.0 * 4096.0 / 864.0;
    // 1e-9: the same products in another order (doubles).
    CHECK(cost(a100, large).compute.in(units::us) ==
          doctest::Approx(8.0 * per_block / chips::pytorch_index_select_rate / 1.41e9 * 1e6)
              .epsilon(1e-9));
    // Few rows: ceil(40 x 4096 / 128) = 1280 blocks, capped at 864 all the same; 17 rows, 544.
    const op forty =
        op_of_row("indexSelectLargeIndex", "32000,4096;40", "FLOAT16;INT64", "40,4096", "FLOAT16");
    CHECK(detail::index_select_blocks(forty, 108) == 864);
    const op seventeen =
        op_of_row("indexSelectLargeIndex", "32000,4096;17", "FLOAT16;INT64", "17,4096", "FLOAT16");
    CHECK(detail::index_select_blocks(seventeen, 108) == 544);
    // At most 16 indices, indexSelectSmallIndex: ceil(4096 / 128) = 32 blocks of a row's slice
    // each, one an SM: 16 x 4096 / 32 elements on the busiest.
    const op small =
        op_of_row("indexSelectSmallIndex", "32000,4096;16", "FLOAT16;INT64", "16,4096", "FLOAT16");
    REQUIRE(small.work_units == 16);
    CHECK(detail::index_select_blocks(small, 108) == 32);
    CHECK(cost(a100, small).compute.in(units::us) ==
          doctest::Approx(16.0 * 4096.0 / 32.0 / chips::pytorch_index_select_rate / 1.41e9 * 1e6)
              .epsilon(1e-9));
    // indexSelectSmallIndex's threads walk the 16 indices one after another: 15 trips past the
    // first at chips::pytorch_index_select_trip each, in its head; nothing else moves.
    chip no_trip = a100;
    no_trip.vector.index_select_trip = duration{};
    const op_cost walked_small = cost(a100, small);
    const op_cost untripped = cost(no_trip, small);
    // A relative 1e-12: the head's sum in another order (doubles).
    CHECK((walked_small.head - untripped.head).in(units::us) ==
          doctest::Approx(15.0 * chips::pytorch_index_select_trip.in(units::us)).epsilon(1e-12));
    CHECK(walked_small.compute == untripped.compute);
    CHECK(walked_small.memory == untripped.memory);
    // One index makes no trip past the first; 17 run indexSelectLargeIndex, which makes none.
    const op one =
        op_of_row("indexSelectSmallIndex", "32000,4096;1", "FLOAT16;INT64", "1,4096", "FLOAT16");
    CHECK(cost(a100, one) == cost(no_trip, one));
    CHECK(cost(a100, seventeen) == cost(no_trip, seventeen));
    // A GatherV2 row (CANN's kernel; PyTorch from 2.7 on the H200 ran vectorized_gather_kernel)
    // is not walked: it streams at the memory rate.
    CHECK(op_of_row("GatherV2", "32000,4096;4096", "FLOAT16;INT64", "4096,4096", "FLOAT16").walk ==
          element_walk::vector);
    // The Ascend presets have no such rate: the same gather is priced by its bytes.
    REQUIRE(chips::ascend910b1.vector.index_select_rate == 0);
    CHECK(chips::ascend910b1.vector.index_select_trip == duration{});
    op streamed = large;
    streamed.walk = element_walk::vector;
    CHECK(cost(chips::ascend910b1, large) == cost(chips::ascend910b1, streamed));
    // Every GPU preset walks it at the same rate an SM cycle.
    for (const chip* c : {&chips::a100_80gb_sxm, &chips::a100_40gb_sxm, &chips::h100_sxm,
                          &chips::h200_sxm, &chips::a40_pcie}) {
        CAPTURE(c->name);
        CHECK(c->vector.index_select_rate == chips::pytorch_index_select_rate);
        CHECK(c->vector.index_select_trip == chips::pytorch_index_select_trip);
    }
    // Another kind given walk=index_select (a model file) is walked by index.
    op mul = elementwise(4096 * 4096, dtype::fp16);
    mul.walk = element_walk::selected;
    op indexed = mul;
    indexed.walk = element_walk::indexed;
    CHECK(cost(a100, mul) == cost(a100, indexed));
    // Validated like the engine's other rates.
    chip bad = a100;
    bad.vector.index_select_rate = -0.5;
    CHECK_THROWS_WITH_AS((void)validate(bad), doctest::Contains("vector.index_select_rate"),
                         perfcast::error);
    bad = a100;
    bad.vector.index_select_trip = duration{-0.5, units::us};
    CHECK_THROWS_WITH_AS((void)validate(bad), doctest::Contains("vector.index_select_trip"),
                         perfcast::error);
    // A trip without the rate would be read nowhere: refused, naming both fields.
    bad = a100;
    bad.vector.index_select_rate = 0;
    CHECK_THROWS_WITH_AS((void)validate(bad),
                         doctest::Contains("0 us unless vector.index_select_rate is set"),
                         perfcast::error);
    bad.vector.index_select_trip = duration{};
    CHECK_NOTHROW((void)validate(bad));
}

TEST_CASE("element walks: a model file's gather takes walk=index_select") {
    const model m = io::parse_model(
        "gather B;32000,4096 fp16 index=int64 walk=index_select name=emb\n"
        "gather B;32000,4096 fp16 index=int64\n",
        "e.model");
    REQUIRE(m.nodes.size() == 2);
    const op selected = instantiate(m.nodes[0], 4096);
    CHECK(selected.walk == element_walk::selected);
    CHECK(instantiate(m.nodes[1], 4096).walk == element_walk::vector);
    // The same op as the profile mapping's indexSelectLargeIndex row of 4096 tokens.
    const op row = op_of_row("indexSelectLargeIndex", "32000,4096;4096", "FLOAT16;INT64",
                             "4096,4096", "FLOAT16");
    CHECK(cost(chips::a100_80gb_sxm, selected).latency.in(units::us) ==
          doctest::Approx(cost(chips::a100_80gb_sxm, row).latency.in(units::us)).epsilon(1e-12));
    // index_select is a gather's walk only; a gather takes no other.
    const auto parse = [](const std::string& text) { (void)io::parse_model(text, "w.model"); };
    CHECK_THROWS_WITH_AS(parse("gather B;100,64 fp16 walk=indexed\n"),
                         doctest::Contains("w.model:1:"), io::model_file_error);
    CHECK_THROWS_WITH_AS(parse("gather B;100,64 fp16 walk=indexed\n"),
                         doctest::Contains("vector or index_select"), io::model_file_error);
    CHECK_THROWS_WITH_AS(parse("rowwise B,4096 fp16 walk=index_select\n"),
                         doctest::Contains("vector, indexed or transposed"), io::model_file_error);
}

TEST_CASE("element walks: index_select rows read otherwise are not mapped") {
    const auto mapped = [](const std::string& in_shapes, const std::string& in_types,
                           const std::string& out_shape) {
        const std::string text =
            "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
            "Output Shapes,Output Data Types\n"
            "x,indexSelectLargeIndex,AI_VECTOR_CORE,10,132,\"" +
            in_shapes + "\"," + in_types + ",\"" + out_shape + "\",FLOAT16\n";
        const auto t = profile::parse_kernel_details(text);
        REQUIRE(t.rows.size() == 1);
        return profile::op_of(t.rows[0]).has_value();
    };
    CHECK(mapped("32000,4096;64", "FLOAT16;INT64", "64,4096"));
    CHECK(mapped("32000,4096;64", "FLOAT16;INT32", "64,4096"));
    // The table second; aten::index_select's scalar dim between; a float index; an output that is
    // not the indices' rows.
    CHECK_FALSE(mapped("64;32000,4096", "INT64;FLOAT16", "64,4096"));
    CHECK_FALSE(mapped("32000,4096;;64", "FLOAT16;INT64;INT64", "64,4096"));
    CHECK_FALSE(mapped("32000,4096;64", "FLOAT16;FLOAT16", "64,4096"));
    CHECK_FALSE(mapped("32000,4096;64", "FLOAT16;INT64", "32,4096"));
    // The H200's torch 2.11 grids (tests/data/gpu/h200/kernels_run1.csv.gz, configurations 589
    // and 599): indexSelectSmallIndex of one index into a 4096-wide table on 32 blocks, into a
    // 64-wide one on 1.
    const auto blocks = [](const std::string& table, const std::string& out) {
        const std::string text =
            "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
            "Output Shapes,Output Data Types\n"
            "x,indexSelectSmallIndex,AI_VECTOR_CORE,2,132,\"" +
            table + ";1\",BF16;INT64,\"" + out + "\",BF16\n";
        const auto t = profile::parse_kernel_details(text);
        REQUIRE(t.rows.size() == 1);
        const auto o = profile::op_of(t.rows[0]);
        REQUIRE(o.has_value());
        return detail::index_select_blocks(*o, 132);
    };
    CHECK(blocks("32000,4096", "1,4096") == 32);
    CHECK(blocks("1000000,64", "1,64") == 1);
    // Fewer cores than the chip's (a what-if): the chip's blocks spread over those cores.
    const op large = op_of_row("indexSelectLargeIndex", "32000,4096;4096", "FLOAT16;INT64",
                               "4096,4096", "FLOAT16");
    const chip& a100 = chips::a100_80gb_sxm;
    CHECK(cost(a100, large, core_count{54}).compute.in(units::us) ==
          doctest::Approx(2.0 * cost(a100, large).compute.in(units::us)).epsilon(1e-9));
}

}  // namespace test_element_walk
