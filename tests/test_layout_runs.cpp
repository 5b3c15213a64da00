// Contiguous runs of vector rows read from a profile: a row whose inputs all have its output's
// shape moves whole tensors (one run), a broadcast or strided operand walks the output's rows,
// and a TransData between NCHW and FRACTAL_Z gathers single elements. The measured rows are
// the real ones of tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt (AlexNet
// training on a 910B, SOURCES.md); docs/validation.md, "Layouts and contiguous runs".
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/op.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>

#include "alexnet_profile.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_layout_runs {

using namespace perfcast;
using perfcast_test::alexnet;
using perfcast_test::alexnet_rows;

namespace {

/// The row at `line` of the AlexNet profile.
const profile::kernel_row& row_at(std::size_t line) {
    for (const profile::kernel_row& r : alexnet_rows().rows) {
        if (r.line == line) return r;
    }
    FAIL("no row at line ", line, " of ", alexnet);
    return alexnet_rows().rows.front();
}

bool fractal_z(const profile::kernel_row& r) {
    for (const auto& f : r.input_formats)
        if (f.starts_with("FRACTAL_Z")) return true;
    for (const auto& f : r.output_formats)
        if (f.starts_with("FRACTAL_Z")) return true;
    return false;
}

struct rows_error {
    int rows = 0;
    double mape = 0;
};

/// Uncalibrated MAPE on the 910B1 preset of the AlexNet rows `keep` selects, in their sequence
/// context (what `perfcast validate` scores).
template <class Keep>
rows_error mape_of(Keep keep) {
    const chip& c = chips::ascend910b1;
    static const std::vector<profile::kernel_row> rows = [&] {
        std::vector<profile::kernel_row> v = alexnet_rows().rows;
        profile::annotate_context(v, c);
        return v;
    }();
    rows_error e;
    double sum = 0;
    for (const profile::kernel_row& r : rows) {
        if (!keep(r)) continue;
        const auto m = profile::measured_op_of(c, r);
        REQUIRE(m.has_value());
        const double predicted = cost(c, m->o, core_count{m->cores}).latency.in(units::us);
        sum += std::abs(predicted / m->measured.in(units::us)-1.0);
        ++e.rows;
    }
    if (e.rows > 0) e.mape = sum / e.rows;
    return e;
}

}  // namespace

TEST_CASE("a vector row whose inputs have its output's shape is one contiguous run") {
    // Line 6: Relu of [32,64,55,55] fp32, in place: 6,195,200 elements, 24,780,800 bytes.
    // Its last dimension (55 x 4 = 220 B) is not a multiple of 32 B, but the kernel flattens
    // the tensor: one run, aligned (24,780,800 = 774,400 x 32).
    const profile::kernel_row& relu = row_at(6);
    REQUIRE(relu.op_type == "Relu");
    const std::optional<op> o = profile::op_of(relu);
    REQUIRE(o.has_value());
    CHECK(o->run.in(units::B) == 24780800.0);
    CHECK(o->bytes_written.in(units::B) == 24780800.0);

    // The same row with a per-channel operand [1,64,1,1] (a broadcast Add): the kernel walks
    // the output's rows of 55 elements, 220 B each.
    profile::kernel_row add = relu;
    add.op_type = "Add";
    add.input_shapes.push_back(profile::tensor_shape{{1, 64, 1, 1}});
    add.input_types.push_back(add.input_types.front());
    add.input_formats.push_back(add.input_formats.front());
    const std::optional<op> b = profile::op_of(add);
    REQUIRE(b.has_value());
    CHECK(b->run.in(units::B) == 220.0);

    // A scalar operand (Muls' [1] or a 0-d tensor) does not make the rows strided.
    profile::kernel_row muls = relu;
    muls.op_type = "Muls";
    muls.input_shapes.push_back(profile::tensor_shape{{1}});
    muls.input_types.push_back(muls.input_types.front());
    muls.input_formats.push_back(muls.input_formats.front());
    CHECK(profile::op_of(muls)->run.in(units::B) == 24780800.0);

    // A slice reads a strided view larger than its output: rows of the output's last dimension.
    profile::kernel_row slice = relu;
    slice.op_type = "Slice";
    slice.input_shapes[0] = profile::tensor_shape{{32, 64, 55, 110}};
    CHECK(profile::op_of(slice)->run.in(units::B) == 220.0);
}

TEST_CASE("TransData NCHW <-> FRACTAL_Z gathers single elements; NC1HWC0 moves C0 runs") {
    // Line 3: the first convolution's weight [64,3,11,11] fp32 NCHW -> FRACTAL_Z [121,4,16,8]:
    // every element its own 4-byte run (rounded up to the 32-byte unit: 8x the bytes, at the
    // misaligned rate), as a transpose whose innermost axis moves.
    const profile::kernel_row& w = row_at(3);
    REQUIRE(w.op_type == "TransData");
    REQUIRE(w.output_formats.at(0) == "FRACTAL_Z");
    const std::optional<op> g = profile::op_of(w);
    REQUIRE(g.has_value());
    CHECK(g->run.in(units::B) == 4.0);
    // Against the same op moved in one run: 8x the bytes (4 B rounded up to 32 B) at half the
    // rate (model_params::misaligned_efficiency, 0.5) on every term, 16x the memory time.
    const chip& c = chips::ascend910b1;
    op whole = *g;
    whole.run = g->bytes_written;
    CHECK(memory_time(c, *g, 8).in(units::us) ==
          doctest::Approx(16.0 * memory_time(c, whole, 8).in(units::us)).epsilon(1e-12));
    // And back (line 115: FRACTAL_Z [288,16,16,8] -> NCHW [256,256,3,3]).
    REQUIRE(row_at(115).input_formats.at(0) == "FRACTAL_Z");
    CHECK(profile::op_of(row_at(115))->run.in(units::B) == 4.0);

    // Line 2: the input images [32,3,224,224] NCHW -> NC1HWC0 [32,1,224,224,8]: runs of C0 = 8
    // fp32 elements, 32 B.
    const profile::kernel_row& img = row_at(2);
    REQUIRE(img.output_formats.at(0) == "NC1HWC0");
    CHECK(profile::op_of(img)->run.in(units::B) == 32.0);
    // A TransData between other layouts (ND -> FRACTAL_NZ) keeps the output's innermost axis.
    profile::kernel_row nz = w;
    nz.input_shapes[0] = profile::tensor_shape{{256, 256}};
    nz.input_formats[0] = "ND";
    nz.output_shapes[0] = profile::tensor_shape{{16, 16, 16, 16}};
    nz.output_formats[0] = "FRACTAL_NZ";
    CHECK(profile::op_of(nz)->run.in(units::B) == 64.0);
}

TEST_CASE("the AlexNet profile's weight conversions and contiguous copies, uncalibrated") {
    // Measured rows, 910B1 preset, no calibration, in sequence context (as `perfcast validate`
    // scores them; docs/validation.md). Figures printed by this test's MESSAGE: the 14
    // FRACTAL_Z TransData rows, 69.1 % before (runs of C0) and 18.9 % after; the 11 TensorMove
    // rows (weights [256,384,3,3] and the like, copied whole), 63.3 % before (runs of 3 or 5
    // elements at the misaligned rate) and 23.1 % after (with the vector head refitted after
    // this change; 19.5 % and 21.0 % with the runs alone); 16.8 % and 31.3 % since a kernel's
    // L2 lines are dirty in the share it wrote (docs/validation.md, "Dirty lines in the share a
    // kernel wrote": the small copies evict more dirty bytes). Bounds: the after figures plus 5
    // points, for the shared constants (heads, efficiencies) moving; the run rules have none.
    const rows_error weights = mape_of(
        [](const profile::kernel_row& r) { return r.op_type == "TransData" && fractal_z(r); });
    CHECK(weights.rows == 14);
    CHECK(weights.mape < 0.24);
    const rows_error copies =
        mape_of([](const profile::kernel_row& r) { return r.op_type == "TensorMove"; });
    CHECK(copies.rows == 11);
    CHECK(copies.mape < 0.37);
    MESSAGE("FRACTAL_Z TransData ", weights.mape * 100, " %, TensorMove ", copies.mape * 100, " %");
}

TEST_CASE("dimensions of size 1 do not make a row walk rows") {
    // RmsNorm-like shapes: [4096,1,1024] in, [4096,1024] out are the same memory; [4096,1] in
    // against [4096,1024] out is a broadcast.
    profile::kernel_row r;
    r.output_shapes = {profile::tensor_shape{{4096, 1024}}};
    r.input_shapes = {profile::tensor_shape{{4096, 1, 1024}},
                      profile::tensor_shape{{1, 4096, 1024}}};
    CHECK_FALSE(profile::walks_rows(r));
    r.input_shapes.push_back(profile::tensor_shape{{4096, 1}});
    CHECK(profile::walks_rows(r));
    // No output shape, or an empty one: nothing to walk.
    r.output_shapes.clear();
    CHECK_FALSE(profile::walks_rows(r));
}

}  // namespace test_layout_runs
