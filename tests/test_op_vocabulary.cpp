// The op vocabulary (node.hpp's op_kinds, op_vocabulary.hpp): one row per op kind from which
// names, model-file words, engines, the profile mapping and instantiate() derive; and a made-up
// kind (made_up_op.hpp: one row, one cost function) that the model file, `perfcast op` and the
// profile mapping all see.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/enum_table.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/node.hpp>
#include <perfcast/nodes.hpp>
#include <perfcast/op_vocabulary.hpp>
#include <perfcast/profile/anchored.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "made_up_op.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_op_vocabulary {

using namespace perfcast;
using perfcast::batch_symbol::B;
using perfcast_test::ops_with_scan;
using perfcast_test::scan_kind;
using perfcast_test::scan_row;

// ---------------------------------------------------------------------------------------------
// The library's table.

static_assert(std::is_same_v<node_kind, op_kind>, "a node's kind is an op kind: one enum");
static_assert(covers_enum<op_kinds>());

// Every row: its name is name_of's, the model file finds it by name and by each keyword, it has
// a cost function (transfer excepted: the link times it), and its shapes bound makes sense.
constexpr bool every_row_is_wired() {
    for (const op_row& r : op_kinds) {
        if (name_of(r.value) != r.name) return false;
        if (row_for_word(op_kinds, r.name) != &r) return false;
        for (std::string_view k : r.keywords) {
            if (row_for_word(op_kinds, k) != &r) return false;
        }
        if ((r.cost == nullptr) != (r.value == op_kind::transfer)) return false;
        if (r.shapes.min < 1 || r.shapes.min > r.shapes.max || r.shapes.form.empty()) return false;
    }
    return true;
}
static_assert(every_row_is_wired());

// A table that misses the last enumerator's row does not pass covers_enum (nor does one out of
// order): what keeps op_kinds, dtypes and the other tables complete.
namespace {
enum class three : unsigned char { a, b, c };
constexpr std::array<enum_entry<three>, 2> two_rows{{{three::a, "a"}, {three::b, "b"}}};
constexpr std::array<enum_entry<three>, 3> all_rows{
    {{three::a, "a"}, {three::b, "b"}, {three::c, "c"}}};
constexpr std::array<enum_entry<three>, 3> swapped{
    {{three::b, "b"}, {three::a, "a"}, {three::c, "c"}}};
constexpr std::array<enum_entry<three>, 3> same_name{
    {{three::a, "a"}, {three::b, "a"}, {three::c, "c"}}};
}  // namespace
static_assert(covers_enum<all_rows>());
static_assert(!covers_enum<two_rows>());
static_assert(!covers_enum<swapped>());
static_assert(!covers_enum<same_name>());

// Engines come from the rows.
static_assert(engine_of(nodes::matmul(B, 64, 32, dtype::fp16)) == engine::cube);
static_assert(engine_of(nodes::topk(B, 300, 10, dtype::fp16)) == engine::vector);
static_assert(engine_of(nodes::topk(B, 300, 10, dtype::int32)) == engine::aicpu);  // guide §8
static_assert(engine_of(nodes::generic(engine::cube, {B, 4}, dtype::fp16, 1, 2, 2)) ==
              engine::cube);
static_assert(engine_of(nodes::reduce(B, 64, dtype::fp16).on_aicpu()) == engine::aicpu);

// Profiler types: a name in any case, a `*` pattern as written.
static_assert(profile::detail::is_matmul_type("MatMulV2") &&
              profile::detail::is_matmul_type("matmulv2"));
static_assert(!profile::detail::is_matmul_type("MatMulV4"));
static_assert(profile::is_reduction_type("ReduceSum") &&
              profile::is_reduction_type("LpNormReduceV2") &&
              profile::is_reduction_type("ArgMaxWithValue"));
static_assert(!profile::is_reduction_type("reducesum") && !profile::is_reduction_type("Add"));

TEST_CASE("op vocabulary: the model file's kinds are the table's keywords, in table order") {
    CHECK(keywords_of(op_kinds) ==
          "matmul, bmm, elementwise, gather, topk, cast, reduce, tile, concat, broadcast, "
          "transpose, transfer, generic, attention, flash_attention, grouped_matmul, gmm, fill, "
          "memset, rowwise, norm, conv, conv2d or softmax");
    // batch_matmul is a name, not a listed keyword: accepted, and read as a matmul node.
    const model m = io::parse_model("batch_matmul B*8,1,32;B*8,32,300 fp16\n");
    REQUIRE(m.nodes.size() == 1);
    CHECK(m.nodes[0].kind == op_kind::matmul);
    CHECK(instantiate(m.nodes[0], 2).kind == op_kind::batch_matmul);
    // A softmax line, a profile's Softmax / LogSoftmax type and PyTorch's CUDA kernel names all
    // name the one kind; Ascend's fused ScaledMaskedSoftmax and LogSoftmaxV2 stay other ops.
    const model sm = io::parse_model("softmax B,16,4096 bf16\n");
    REQUIRE(sm.nodes.size() == 1);
    const op one = instantiate(sm.nodes[0], 2);
    CHECK(one.kind == op_kind::softmax);
    CHECK(one.work_units == 32);  // rows: 2 x 16
    CHECK(one.bytes_read.in(units::B) == doctest::Approx(32.0 * 4096 * 2));
    // The graph node of C++ callers (and the built-in scenario) is the same op.
    CHECK(instantiate(nodes::softmax(16 * batch_symbol::B, 4096, dtype::bf16), 2) == one);
    for (const std::string_view type :
         {"Softmax", "LogSoftmax", "softmax",
          "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, "
          "7, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, "
          "int, bool)",
          "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<c10::BFloat16, float>"}) {
        CAPTURE(type);
        const op_row* r = row_for_profiler_type(op_kinds, type);
        REQUIRE(r != nullptr);
        CHECK(r->value == op_kind::softmax);
    }
    CHECK(row_for_profiler_type(op_kinds, "ScaledMaskedSoftmax") == nullptr);
    CHECK(row_for_profiler_type(op_kinds, "LogSoftmaxV2") == nullptr);
    // Not these kernels: apex / Megatron's fused masked softmax (ScaledMaskedSoftmax on a GPU)
    // and PyTorch's softmax along another axis, which the kind does not model.
    for (const std::string_view type :
         {"void (anonymous namespace)::scaled_masked_softmax_warp_forward<c10::Half, c10::Half, "
          "float, 11>(c10::Half*, c10::Half const*, unsigned char const*, float, int, int, int, "
          "int)",
          "void at::native::(anonymous namespace)::cunn_SpatialSoftMaxForward<float, float, float, "
          "unsigned int, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, "
          "float const*, unsigned int, unsigned int, unsigned int)"}) {
        CAPTURE(type);
        CHECK(row_for_profiler_type(op_kinds, type) == nullptr);
    }
}

TEST_CASE("op vocabulary: validate names the broken row") {
    auto rows = perfcast_test::ops_with_scan;
    const std::size_t scan = rows.size() - 1;
    rows[scan].cost = nullptr;
    CHECK(perfcast_test::message_of([&] { (void)validate(rows); }).find("cost = scan") !=
          std::string::npos);
    rows = perfcast_test::ops_with_scan;
    rows[scan].keywords = {"bmm"};
    CHECK(perfcast_test::message_of([&] { (void)validate(rows); }).find("keyword = bmm") !=
          std::string::npos);
    rows = perfcast_test::ops_with_scan;
    rows[scan].value = op_kind::reduce;
    CHECK(perfcast_test::message_of([&] { (void)validate(rows); }).find("value = scan") !=
          std::string::npos);
    rows = perfcast_test::ops_with_scan;
    rows[scan].value = op_kind{20};  // neither the library's nor from first_extension_kind
    CHECK(perfcast_test::message_of([&] { (void)validate(rows); }).find("value = scan") !=
          std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// A made-up kind: one row and one cost function in made_up_op.hpp.

static_assert(ops_with_scan.size() == op_kinds.size() + 1);
static_assert(!is_library_kind(scan_kind) && name_of(scan_kind) == "?");
static_assert(row_for_word(ops_with_scan, "scan") == &ops_with_scan.back());
static_assert(row_for_profiler_type(ops_with_scan, "CumSum") == &ops_with_scan.back());
static_assert(row_for_profiler_type(op_kinds, "CumSum") == nullptr);

TEST_CASE("made-up op: the model file reads it, and the graph evaluates it from its row") {
    const model m = io::parse_model(
        "name with_scan\n"
        "transfer B,4000 fp16\n"
        "scan     B,4000 fp16 name=prefix\n"
        "reduce   B,4000 fp16\n",
        "scan.model", ops_with_scan);
    REQUIRE(m.nodes.size() == 3);
    const node& n = m.nodes[1];
    CHECK(n.kind == scan_kind);
    CHECK(n.row == &ops_with_scan.back());
    CHECK(row_of(n).name == "scan");
    CHECK(n.name.view() == "prefix");
    CHECK(engine_of(n) == engine::vector);

    // instantiate() is the row's cost function, on the row's engine.
    const op o = instantiate(n, 8);
    CHECK(o == perfcast_test::scan_cost(n, 8, shape{8, 4000}));
    CHECK(o.kind == scan_kind);
    CHECK(o.eng == engine::vector);
    CHECK(o.work_units == 8);

    // In a model: its latency is part of the serial latency, like any device op.
    const chip& c = chips::ascend910b1;
    const serial_result r = serial_latency(c, m, 8);
    CHECK(r.device_ops == 2);
    const duration scan_alone = evaluate_node(c, n, batch_size{8}, all_cores(c)).cost.latency;
    const duration reduce_alone =
        evaluate_node(c, m.nodes[2], batch_size{8}, all_cores(c)).cost.latency;
    CHECK(scan_alone == cost(c, o, core_count{c.vector.cores}).latency);
    CHECK(r.device == scan_alone + reduce_alone);

    // Its row's shape count, in the model file's words.
    const std::string two = perfcast_test::message_of(
        [] { (void)io::parse_model("scan B,4;B,4 fp16\n", "t.model", ops_with_scan); });
    CHECK(two.find("one shape ROWS,LENGTH (scanned along the last axis) for scan") !=
          std::string::npos);

    // Without the vocabulary the word is unknown, and the error lists the library's words; with
    // it, scan is listed too.
    const std::string unknown =
        perfcast_test::message_of([] { (void)io::parse_model("scan B,4 fp16\n", "t.model"); });
    CHECK(unknown.find("op = \"scan\", expected matmul, bmm,") != std::string::npos);
    CHECK(unknown.find("conv2d or softmax (or a `name` or `runtime` line)") != std::string::npos);
    const std::string listed = perfcast_test::message_of(
        [] { (void)io::parse_model("sacn B,4 fp16\n", "t.model", ops_with_scan); });
    CHECK(listed.find("conv2d, softmax or scan (or a") != std::string::npos);
}

TEST_CASE("made-up op: perfcast op --line costs it") {
    const auto r = perfcast_test::run_command(
        cli::op_command_with<ops_with_scan>,
        {"--chip", "910B1", "--vector", "20", "--line", "scan 8,4000 fp16", "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\"op\": \"scan\"") != std::string::npos);
    CHECK(r.out.find("\"engine\": \"vector\"") != std::string::npos);
    CHECK(r.out.find("\"cores\": 8") != std::string::npos);  // one row per work unit
    const node n = io::parse_op_line("scan 8,4000 fp16", "t", ops_with_scan);
    const op_cost k = cost(chips::ascend910b1, instantiate(n, 1), core_count{20});
    CHECK(perfcast_test::json_number(r.out, "latency_us") ==
          doctest::Approx(k.latency.in(units::us)).epsilon(1e-12));
    // B in the line is --batch.
    const auto at_b = perfcast_test::run_command(
        cli::op_command_with<ops_with_scan>,
        {"--vector", "20", "--line", "scan B,4000 fp16", "--batch", "8", "--format", "json"});
    CHECK(at_b.out == r.out);

    // The library's command does not know it.
    const auto plain = perfcast_test::run_command(cli::op_command, {"--line", "scan 8,4000 fp16"});
    CHECK(plain.status == 2);  // the --line's op: a usage error
    CHECK(plain.err.find("op = \"scan\"") != std::string::npos);
}

TEST_CASE("made-up op: the profile mapping maps its profiler types to it") {
    const auto t = profile::parse_kernel_details(
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "CumSum,AI_VECTOR_CORE,12.5,8,\"8,4000\",fp16,\"8,4000\",fp16\n");
    REQUIRE(t.rows.size() == 1);
    const profile::kernel_row& row = t.rows[0];

    const auto o = profile::op_of(row, ops_with_scan);
    REQUIRE(o);
    CHECK(o->kind == scan_kind);
    const std::array shapes{batched_shape{8, 4000}};
    CHECK(*o == instantiate(nodes::of_row(ops_with_scan.back(), shapes, dtype::fp16), 1));
    const auto m = profile::measured_op_of(chips::ascend910b1, row, {}, ops_with_scan);
    REQUIRE(m);
    CHECK(m->o.kind == scan_kind);
    CHECK(m->cores == 8);

    // The library's vocabulary reads the same row as a vector op over its output.
    const auto plain = profile::op_of(row);
    REQUIRE(plain);
    CHECK(plain->kind == op_kind::elementwise);

    // The anchored what-if: a scan node sized by the batch rule (rows = B), anchored on the
    // measurement at the profiled batch.
    const chip& c = chips::ascend910b1;
    const profile::anchored_profile p =
        profile::anchor_profile(c, t.rows, 8, {}, {}, ops_with_scan);
    REQUIRE(p.m.nodes.size() == 1);
    CHECK(p.anchors[0].mapped);
    CHECK(p.m.nodes[0].kind == scan_kind);
    CHECK(p.m.nodes[0].shapes[0] == batched_shape{B, 4000});
    CHECK(profile::profiled_time(c, p).in(units::us) == doctest::Approx(12.5));
}

TEST_CASE("perfcast op --line: a library kind as a model-file line is its shortcut flag's op") {
    using perfcast_test::run_command;
    const auto flag = run_command(cli::op_command, {"--topk", "8,300,10", "--format", "json"});
    const auto line =
        run_command(cli::op_command, {"--line", "topk 8,300 fp16 k=10", "--format", "json"});
    REQUIRE(flag.status == 0);
    CHECK(line.out == flag.out);
    const auto bmm = run_command(cli::op_command, {"--matmul", "128,300,32", "--batch", "8"});
    const auto bmm_line =
        run_command(cli::op_command, {"--line", "bmm B,128,32;B,32,300 fp16", "--batch", "8"});
    REQUIRE(bmm.status == 0);
    CHECK(bmm_line.out == bmm.out);
    CHECK(bmm.out.find("batch_matmul") != std::string::npos);
    // The H200 flags below against their model-file lines at B = 65536 (json: every field).
    const auto h200_line = [](std::string_view text) {
        return run_command(cli::op_command, {"--chip", "H200", "--line", text, "--batch", "65536",
                                             "--format", "json"});
    };
    const auto sm = run_command(cli::op_command, {"--chip", "H200", "--softmax", "65536,4096",
                                                  "--dtype", "bf16", "--format", "json"});
    REQUIRE(sm.status == 0);
    CHECK(h200_line("softmax B,4096 bf16").out == sm.out);
    CHECK(sm.out.find("\"op\": \"softmax\"") != std::string::npos);
    // --norm is the model file's norm line with reduce=1: a layer norm's operations by default,
    // --ops-per-element for another (an RMS norm's 6).
    const auto nm = run_command(cli::op_command, {"--chip", "H200", "--norm", "65536,4096",
                                                  "--dtype", "bf16", "--format", "json"});
    REQUIRE(nm.status == 0);
    CHECK(h200_line("norm B,4096 bf16 ops=8 reduce=1").out == nm.out);
    const auto rms =
        run_command(cli::op_command, {"--chip", "H200", "--norm", "65536,4096", "--dtype", "bf16",
                                      "--ops-per-element", "6", "--format", "json"});
    REQUIRE(rms.status == 0);
    CHECK(h200_line("norm B,4096 bf16 ops=6 reduce=1").out == rms.out);
    CHECK(rms.out != nm.out);
    CHECK(h200_line("norm B,4096 bf16 ops=8").out != nm.out);  // without reduce=1: no row floor
    // One op flag at a time; a transfer line is no device op.
    CHECK(run_command(cli::op_command, {"--line", "reduce 8,4 fp16", "--reduce", "8,4"}).status ==
          2);
    const auto transfer = run_command(cli::op_command, {"--line", "transfer 64 fp16"});
    CHECK(transfer.status == 2);
    CHECK(transfer.err.find("a device op") != std::string::npos);
}

TEST_CASE("vocabulary: the graph factories of the LLM-era kinds build the model file's nodes") {
    // nodes:: (C++ callers) and a model file's line (users, the importer) are one vocabulary:
    // the same node, every field, for each kind the factories cover.
    using batch_symbol::B;
    const auto line = [](const std::string& text) {
        const model m = io::parse_model(text + "\n");
        REQUIRE(m.nodes.size() == 1);
        return m.nodes[0];
    };
    CHECK(nodes::rowwise({B, 9216}, dtype::fp16,
                         {.ops_per_element = 4, .walk = element_walk::indexed}) ==
          line("rowwise B,9216 fp16 ops=4 walk=indexed"));
    CHECK(nodes::rowwise({B, 2816}, {B, 1408}, dtype::bf16,
                         {.ops_per_element = 8, .inputs = 2, .fp32_arithmetic = true}) ==
          line("rowwise B,2816;B,1408 bf16 ops=8 inputs=2 fp32=1"));
    CHECK(nodes::rowwise({B, 4096}, dtype::bf16, {.ops_per_element = 6, .row_reduction = true}) ==
          line("norm B,4096 bf16 ops=6 reduce=1"));
    CHECK(nodes::norm({B, 4096}, dtype::fp16) == line("norm B,4096 fp16 ops=8 reduce=1"));
    CHECK(nodes::attention({B, 32, 1, 128}, {B, 8, 4096, 128}, dtype::bf16, {.causal = true}) ==
          line("attention B,32,1,128;B,8,4096,128 bf16 causal=1"));
    CHECK(nodes::attention({B, 8, 512, 64}, {B, 8, 512, 64}, dtype::fp16, {.backward = true}) ==
          line("attention B,8,512,64;B,8,512,64 fp16 backward=1"));
    CHECK(nodes::attention({B, 8, 64, 128}, {B, 2, 2624, 128}, dtype::fp16,
                           {.causal = true,
                            .kernel = attention_kernel::flashinfer,
                            .kv_chunk_min = flashinfer_0_0_6_kv_chunk_min}) ==
          line("attention B,8,64,128;B,2,2624,128 fp16 causal=1 kernel=flashinfer kv_chunk=512"));
    CHECK(nodes::grouped_matmul({8 * B, 4096}, {8, 4096, 1408}, dtype::bf16) ==
          line("gmm B*8,4096;8,4096,1408 bf16"));
    CHECK(nodes::fill({B, 4096}, dtype::fp32) == line("fill B,4096 fp32"));
    CHECK(nodes::conv({B, 3, 32, 32}, {16, 3, 3, 3}, dtype::fp16) ==
          line("conv B,3,32,32;16,3,3,3 fp16"));
    CHECK(nodes::conv({B, 3, 32, 32}, {16, 3, 3, 3}, {B, 16, 16, 16}, dtype::fp16) ==
          line("conv B,3,32,32;16,3,3,3;B,16,16,16 fp16"));
    CHECK(nodes::softmax(B, 4096, dtype::bf16) == line("softmax B,4096 bf16"));
    // A GEMM writes its inputs' dtype unless told (the model file's out= default): an fp32
    // matmul once wrote fp16 by the factory's default, half its output bytes.
    CHECK(nodes::matmul(B, 64, 64, dtype::fp32) == line("matmul B,64;64,64 fp32"));
    CHECK(nodes::matmul(B, 64, 64, dtype::fp32, {.out_type = dtype::fp16}) ==
          line("matmul B,64;64,64 fp32 out=fp16"));
    CHECK(matmul(1024, 1024, 1024, dtype::fp32).bytes_written == data_size{4 << 20, units::B});
    CHECK(matmul(1024, 1024, 1024, dtype::fp32, {.out_type = dtype::fp16}).bytes_written ==
          data_size{2 << 20, units::B});
    // A 1 x 1 convolution of 8 channels over 4 x 4 (batch and kernel sizes at their default 1).
    constexpr conv_dims pointwise{.in_channels = 8,
                                  .height = 4,
                                  .width = 4,
                                  .out_channels = 8,
                                  .out_height = 4,
                                  .out_width = 4};
    CHECK(conv(pointwise, dtype::fp32).out_type == dtype::fp32);
    // And the ops they make at a batch are the op factories' (the norm's block: vLLM's).
    CHECK(instantiate(nodes::norm({B, 4096}, dtype::bf16, 6), 4) ==
          rowwise(4, 4096, dtype::bf16, {.ops_per_element = 6, .row_threads = 1024}));
    CHECK(instantiate(nodes::fill({B, 4096}, dtype::fp32), 2) == fill(2 * 4096, dtype::fp32));
    // Shapes of the wrong rank are refused where the node is made.
    CHECK_THROWS_WITH_AS((void)nodes::attention({B, 32, 128}, {B, 8, 4096, 128}, dtype::bf16),
                         doctest::Contains("nodes::attention"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)nodes::grouped_matmul({B, 4096}, {4096, 1408}, dtype::bf16),
                         doctest::Contains("nodes::grouped_matmul"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)nodes::conv({B, 3, 32}, {16, 3, 3, 3}, dtype::fp16),
                         doctest::Contains("nodes::conv"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)nodes::rowwise({B, 64}, dtype::fp16, {.inputs = 0}),
                         doctest::Contains("nodes::rowwise"), perfcast::error);
    // An elementwise node of 0 inputs or outputs is refused as the model file's line is (a
    // node's 0 inputs would read as the default 2).
    CHECK_THROWS_WITH_AS((void)nodes::elementwise({B, 8}, dtype::fp16, {.inputs = 0}),
                         doctest::Contains("nodes::elementwise: inputs = 0"), perfcast::error);
    CHECK_THROWS_WITH_AS((void)nodes::elementwise({B, 8}, dtype::fp16, {.outputs = 0}),
                         doctest::Contains("nodes::elementwise: outputs = 0"), perfcast::error);
    CHECK(instantiate(nodes::elementwise({B, 8}, dtype::fp16, {.inputs = 1}), 4).bytes_read ==
          instantiate(nodes::elementwise({B, 8}, dtype::fp16, {.inputs = 2}), 4).bytes_read / 2.0);
}

}  // namespace test_op_vocabulary
