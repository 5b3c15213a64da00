// profile/anchored.hpp: a what-if model anchored on a measured profile; node::scale in
// graph.hpp; `perfcast whatif PROFILE.csv --batch B`.
#include <doctest/doctest.h>

#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/profile/anchored.hpp>
#include <perfcast/whatif.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_anchored {

using namespace perfcast;

namespace {
constexpr const chip& b1 = chips::ascend910b1;
const std::string train = PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";

// Each anchored node's time at the profiled configuration is L0 x (measured / L0): one division
// and one multiplication, each rounded (relative error <= 2^-53 each), then summed in the same
// order as the measurements. So the sums agree to a few ulps per row; 1e-12 is far above that
// and far below any modelling effect.
bool close(duration a, duration b, double rel = 1e-12) {
    return std::abs(a.in(units::us) - b.in(units::us)) <=
           rel * std::max(std::abs(a.in(units::us)), std::abs(b.in(units::us)));
}

// A sum of the durations of the rows the anchoring keeps, computed independently.
duration measured_compute_time(const std::vector<profile::kernel_row>& rows) {
    duration total{};
    for (const profile::kernel_row& r : rows) {
        if (profile::engine_of(r.task) && r.task_duration && r.task_duration->in(units::us) > 0)
            total += *r.task_duration;
    }
    return total;
}

bool has_shape(const std::vector<profile::kernel_row>& rows, std::vector<std::int64_t> dims) {
    for (const profile::kernel_row& r : rows) {
        for (const auto& s : r.input_shapes)
            if (s.dims == dims) return true;
        for (const auto& s : r.output_shapes)
            if (s.dims == dims) return true;
    }
    return false;
}

using perfcast_test::cli_run;
cli_run run_cli(std::vector<std::string_view> args) {
    return perfcast_test::run_command(cli::whatif_command, std::move(args));
}

constexpr std::string_view minimal_csv =
    "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
    "Output Shapes,Output Data Types\n"
    // A Linear layer on [B x 128, 256] activations: M scales (rule 2), the weight does not.
    "MatMul,AI_CORE,120.5,24,\"256,256;512,256\",fp16;fp16,\"256,512\",fp16\n"
    // A vector op on [2, 128, 512]: the batch is the first dimension equal to B = 2 (rule 1).
    "Add,AI_VECTOR_CORE,30.25,40,\"2,128,512;2,128,512\",fp16;fp16,\"2,128,512\",fp16\n"
    // Communication: skipped.
    "hcom_allReduce_,HCCL,500,0,N/A,N/A,N/A,N/A\n"
    // A weight-sized 1-D op: fixed (rule 2 needs rank >= 2).
    "Cast,AI_VECTOR_CORE,7.5,8,\"4096\",fp32,\"4096\",fp16\n"
    // A row op_of cannot map (no dtype perfcast knows): kept at its measured time.
    "Mystery,AI_VECTOR_CORE,11,1,\"2,7\",UNDEFINED,\"2,7\",UNDEFINED\n";
}  // namespace

TEST_CASE("anchored: the batch rule of each tensor") {
    using profile::detail::batch_rule;
    using profile::tensor_shape;
    const auto seq_first = batch_rule(tensor_shape{{1024, 4, 12288}}, 4, true);
    REQUIRE(seq_first);
    CHECK(*seq_first == batched_shape{1024, batch_dim{1, 0}, 12288});
    const auto flat = batch_rule(tensor_shape{{4096, 12288}}, 4, true);
    REQUIRE(flat);
    CHECK(*flat == batched_shape{batch_dim{1024, 0}, 12288});
    CHECK(*batch_rule(tensor_shape{{4096, 12288}}, 4, false) == batched_shape{4096, 12288});
    CHECK(*batch_rule(tensor_shape{{12, 1024, 512}}, 4, true) ==
          batched_shape{batch_dim{3, 0}, 1024, 512});
    CHECK(*batch_rule(tensor_shape{{4, 3, 1024, 1024}}, 4, true) ==
          batched_shape{batch_dim{1, 0}, 3, 1024, 1024});
    // Only the first dimension equal to B scales (the ambiguity of a [B, B] tensor).
    CHECK(*batch_rule(tensor_shape{{4, 4}}, 4, true) == batched_shape{batch_dim{1, 0}, 4});
    CHECK(*batch_rule(tensor_shape{{75497472}}, 4, true) == batched_shape{75497472});
    CHECK(*batch_rule(tensor_shape{{}}, 4, true) == batched_shape{});
    CHECK_FALSE(batch_rule(tensor_shape{{0, 4}}, 4, true));
}

TEST_CASE("anchored: node::scale multiplies every time term; 1 changes nothing") {
    const node n = nodes::matmul(batch_dim{128, 0}, 512, 256, dtype::fp16);
    const node_eval plain = evaluate_at(b1, n, batch_size{8}, core_count{12});
    CHECK(evaluate_at(b1, n.scaled(1.0), batch_size{8}, core_count{12}) == plain);
    const node_eval twice = evaluate_at(b1, n.scaled(2.0), batch_size{8}, core_count{12});
    CHECK(twice.cost.latency == plain.cost.latency * 2.0);
    CHECK(twice.cost.core_time == plain.cost.core_time * 2.0);
    CHECK(twice.cost.compute == plain.cost.compute * 2.0);
    CHECK(twice.cost.memory == plain.cost.memory * 2.0);
    CHECK(twice.memory_streamed == plain.memory_streamed * 2.0);
    CHECK(twice.cost.bytes == plain.cost.bytes);
    CHECK_THROWS_AS((void)n.scaled(0.0), perfcast::error);
    CHECK_THROWS_AS((void)nodes::transfer(batched_shape{16}, dtype::fp16).scaled(2.0),
                    perfcast::error);
}

TEST_CASE("anchored what-if reproduces the profile itself exactly at the profiled configuration") {
    const auto table = profile::read_kernel_details_file(train);
    const auto& rows = table.rows;
    // B = 4: the embedding output is [4, 1024, 12288] (B leading), the transformer layers'
    // activations [1024, 4, 12288] (sequence first, Megatron layout: B second), the attention
    // scores [4, 3, 1024, 1024], the token ids [4, 1024]; the flattened GEMM rows [4096 = 4 x
    // 1024, ...] and the batch matmuls [12 = 4 x 3 heads, 1024, ...].
    CHECK(has_shape(rows, {4, 1024, 12288}));
    CHECK(has_shape(rows, {1024, 4, 12288}));
    CHECK(has_shape(rows, {4, 3, 1024, 1024}));
    CHECK(has_shape(rows, {4, 1024}));
    CHECK(has_shape(rows, {4096, 12288}));
    CHECK(has_shape(rows, {12, 1024, 512}));

    const profile::anchored_profile p = profile::anchor_profile(b1, rows, 4);
    REQUIRE(p.m.nodes.size() == p.anchors.size());
    CHECK(p.anchors.size() + p.skipped == rows.size());
    CHECK(p.skipped >= 26);  // 19 HCCL and 7 DSA rows
    CHECK(p.batch_dependent > 0);
    CHECK(p.unmapped < p.anchors.size());
    std::size_t unmapped = 0;
    for (std::size_t i = 0; i < p.anchors.size(); ++i) {
        if (i > 0) CHECK(p.anchors[i].row > p.anchors[i - 1].row);  // file order
        if (!p.anchors[i].mapped) ++unmapped;
    }
    CHECK(unmapped == p.unmapped);
    CHECK(p.measured == measured_compute_time(rows));  // same rows, same order: exact
    CHECK(close(profile::profiled_time(b1, p), p.measured));
    // Each node in its place in the sequence (l2_sequence.hpp), as the deployment model
    // evaluates it.
    const std::vector<l2_context> contexts = l2_contexts(b1, p.m.view(), 4, {});
    for (std::size_t i = 0; i < p.anchors.size(); ++i) {
        const auto& a = p.anchors[i];
        CHECK(
            close(evaluate_at(b1, p.m.nodes[i], batch_size{4}, core_count{a.cores}, {}, contexts[i])
                      .cost.latency,
                  a.measured));
    }
    // Elsewhere the anchors scale as the model does: a larger batch takes longer; fewer cores
    // too. Unmapped rows keep their measured time at every batch and core limit.
    const serial_result at4 = serial_latency(b1, p.m.view(), 4);
    const serial_result at8 = serial_latency(b1, p.m.view(), 8);
    CHECK(at8.latency > at4.latency);
    CHECK(serial_latency(b1, p.m.view(), 4, core_split{core_count{6}, core_count{12}}).latency >
          at4.latency);
    for (std::size_t i = 0; i < p.anchors.size(); ++i) {
        if (p.anchors[i].mapped) continue;
        const node_eval e =
            evaluate_node(b1, p.m.nodes[i], batch_size{16}, {core_count{6}, core_count{10}});
        CHECK(close(e.cost.latency, p.anchors[i].measured));
    }
    // One stream on the card is the serial anchored latency: the step's working set is far
    // beyond L2, but card.hpp charges only the misses beyond one instance alone (the measurement
    // holds those). Two streams halve each one's L2 hit share: half the warm traffic misses.
    const core_split all{core_count{24}, core_count{48}};
    const card_result one = evaluate_card(b1, p.m.view(), batch_size{4}, stream_count{1}, all);
    CHECK(one.working_set > b1.memory.l2_size);
    CHECK(one.l2_miss == 0.0);
    CHECK(one.avg_latency == serial_latency(b1, p.m.view(), 4, all).latency);
    const card_result two = evaluate_card(b1, p.m.view(), batch_size{4}, stream_count{2}, all);
    CHECK(two.l2_miss == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(two.avg_latency > one.avg_latency);
    // The card sweep runs on it unchanged.
    const whatif_result r = sweep(b1, p.m.view(),
                                  whatif_grid{.streams = counts<stream_count>({1, 2}),
                                              .cube = counts<core_count>({12, 24}),
                                              .vector = counts<core_count>({24, 48}),
                                              .batches = counts<batch_size>({4, 8})});
    CHECK(r.ranked.size() == 16);
    for (const candidate& x : r.ranked) {
        CHECK(x.latency >= at4.latency * 0.5);
        CHECK(x.qps > 0);
    }
}

TEST_CASE(
    "anchored: a calibration's fixed times and times per core reach the nodes; the anchors "
    "still hold") {
    const auto rows = profile::read_kernel_details_file(train).rows;
    profile::calibration cal;
    cal.work_factor["ApplyAdamW"] = 6.5;
    cal.fixed_time["ApplyAdamW"] = duration{3, units::us};
    cal.fixed_time["Cast"] = duration{0.5, units::us};
    cal.per_core_time["Cast"] = duration{0.125, units::us};
    cal.fixed_time["MatMul"] = duration{7, units::us};  // cube ops take no per-type terms
    const profile::anchored_profile p = profile::anchor_profile(b1, rows, 4, cal);
    REQUIRE(p.m.nodes.size() == p.anchors.size());
    const graph_params gp{.model = cal.params};
    std::size_t adamw = 0;
    std::size_t casts = 0;
    std::size_t matmuls = 0;
    const std::vector<l2_context> contexts = l2_contexts(b1, p.m.view(), 4, gp);
    for (std::size_t i = 0; i < p.anchors.size(); ++i) {
        const auto& a = p.anchors[i];
        CHECK(
            close(evaluate_at(b1, p.m.nodes[i], batch_size{4}, core_count{a.cores}, gp, contexts[i])
                      .cost.latency,
                  a.measured));
        if (!a.mapped) continue;
        if (a.type == "ApplyAdamW") {
            ++adamw;
            CHECK(p.m.nodes[i].extra_head == duration{3, units::us});
            CHECK(p.m.nodes[i].extra_per_core == duration{});
        } else if (a.type == "Cast" && a.eng == engine::vector) {
            ++casts;
            CHECK(p.m.nodes[i].extra_head == duration{0.5, units::us});
            CHECK(p.m.nodes[i].extra_per_core == duration{0.125, units::us});
        } else if (a.type == "MatMul") {
            ++matmuls;
            CHECK(p.m.nodes[i].extra_head == duration{});
        }
    }
    CHECK(adamw > 10);
    CHECK(casts > 10);
    CHECK(matmuls == 9);
}

TEST_CASE("anchored: a hand-written minimal profile") {
    const auto t = profile::parse_kernel_details(minimal_csv);
    REQUIRE(t.rows.size() == 5);
    const profile::anchored_profile p = profile::anchor_profile(b1, t.rows, 2);
    REQUIRE(p.anchors.size() == 4);
    CHECK(p.skipped == 1);
    CHECK(p.unmapped == 1);
    CHECK(p.batch_dependent == 2);
    CHECK(close(p.measured, duration{120.5 + 30.25 + 7.5 + 11, units::us}));
    CHECK(close(profile::profiled_time(b1, p), p.measured));
    // MatMul: M = 256 = 128 x B, the weight [512, 256] fixed.
    CHECK(p.anchors[0].mapped);
    CHECK(p.anchors[0].cores == 24);
    CHECK(p.m.nodes[0].kind == node_kind::matmul);
    CHECK(instantiate(p.m.nodes[0], 2) == *profile::op_of(t.rows[0]));
    CHECK(instantiate(p.m.nodes[0], 4).useful_ops == 2 * instantiate(p.m.nodes[0], 2).useful_ops);
    // Add: [B, 128, 512]; the block dim 40 is the measured configuration.
    CHECK(p.anchors[1].cores == 40);
    CHECK(p.m.nodes[1].shapes[0] == batched_shape{batch_dim{1, 0}, 128, 512});
    // Cast over 4096 weights: fixed; its time moves only with the core limit.
    CHECK_FALSE(p.anchors[2].batch_dependent);
    CHECK(close(evaluate_at(b1, p.m.nodes[2], batch_size{64}, core_count{8}).cost.latency,
                duration{7.5, units::us}));
    // The unmapped row: measured time at every configuration.
    CHECK_FALSE(p.anchors[3].mapped);
    CHECK(close(evaluate_at(b1, p.m.nodes[3], batch_size{64}, core_count{48}).cost.latency,
                duration{11, units::us}));
    // A much larger batch: the batch-dependent nodes grow (at twice the batch the model's
    // GEMM still fits its 24 cores in one wave and barely moves), the rest stay.
    CHECK(serial_latency(b1, p.m.view(), 64).latency >
          serial_latency(b1, p.m.view(), 2).latency);
    CHECK(close(evaluate_node(b1, p.m.nodes[3], batch_size{64}, all_cores(b1)).cost.latency,
                evaluate_node(b1, p.m.nodes[3], batch_size{2}, all_cores(b1)).cost.latency));
}

TEST_CASE("anchored: norm, gated and softmax rows keep their kinds and rows") {
    // At B = 4 on an H200: an RmsNorm over [4 x 32, 4096] tokens (rule 2: 128 = 32 x B), a
    // SwiGlu that halves the width, a Softmax over [4, 8, 1024] (rule 1). Each becomes a node of
    // its own kind (not an elementwise node over its output), with the rows that scale with the
    // batch and the width that does not, and reproduces its measurement where it was measured.
    constexpr std::string_view csv =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "RmsNorm,AI_VECTOR_CORE,6.5,132,\"128,4096;4096\",BF16;BF16,\"128,4096\",BF16\n"
        "SwiGlu,AI_VECTOR_CORE,9.25,132,\"128,2816\",BF16,\"128,1408\",BF16\n"
        "Softmax,AI_VECTOR_CORE,5.75,132,\"4,8,1024\",FLOAT,\"4,8,1024\",FLOAT\n";
    const auto t = profile::parse_kernel_details(csv);
    REQUIRE(t.rows.size() == 3);
    const chip& h200 = chips::h200_sxm;
    const profile::anchored_profile p = profile::anchor_profile(h200, t.rows, 4);
    REQUIRE(p.anchors.size() == 3);
    CHECK(p.unmapped == 0);
    CHECK(p.batch_dependent == 3);
    CHECK(close(profile::profiled_time(h200, p), p.measured));
    using batch_symbol::B;
    // The norm: rows 32 x B of 4096, reduced across a thread block (the GPU row floor), the
    // op_of op at the profiled batch (its 6 operations an element, fp32 inside).
    CHECK(p.m.nodes[0].kind == node_kind::rowwise);
    CHECK(p.m.nodes[0].shapes[0] == batched_shape{32 * B, 4096});
    CHECK(p.m.nodes[0].row_reduction);
    const op norm_at_4 = instantiate(p.m.nodes[0], 4);
    const op mapped = *profile::op_of(t.rows[0]);
    CHECK(norm_at_4.work_units == mapped.work_units);
    CHECK(norm_at_4.ops_per_unit == doctest::Approx(mapped.ops_per_unit).epsilon(1e-12));
    CHECK(norm_at_4.row_threads == mapped.row_threads);
    CHECK(norm_at_4.fp32_arithmetic == mapped.fp32_arithmetic);
    CHECK(instantiate(p.m.nodes[0], 8).work_units == 2 * mapped.work_units);
    // SwiGlu: the input's width in, the output's out (its operations per output element),
    // walked element by element on a GPU.
    CHECK(p.m.nodes[1].kind == node_kind::rowwise);
    REQUIRE(p.m.nodes[1].shape_count == 2);
    CHECK(p.m.nodes[1].shapes[0] == batched_shape{32 * B, 2816});
    CHECK(p.m.nodes[1].shapes[1] == batched_shape{32 * B, 1408});
    CHECK(instantiate(p.m.nodes[1], 4).ops_per_unit ==
          doctest::Approx(profile::op_of(t.rows[1])->ops_per_unit).epsilon(1e-12));
    CHECK(p.m.nodes[1].walk == element_walk::indexed);
    CHECK_FALSE(p.m.nodes[1].row_reduction);
    // Softmax: B x 8 rows of 1024, on the blocks PyTorch launches at every batch.
    CHECK(p.m.nodes[2].kind == node_kind::softmax);
    CHECK(instantiate(p.m.nodes[2], 16) == softmax(16 * 8, 1024, dtype::fp32));

    // A type's own calibrated factor scales its operations and drops the row floor, as op_of
    // applies it (profile/ops.hpp with_work).
    profile::calibration cal;
    cal.work_factor["RmsNorm"] = 2;
    const profile::anchored_profile f = profile::anchor_profile(h200, t.rows, 4, cal);
    CHECK_FALSE(f.m.nodes[0].row_reduction);
    CHECK(instantiate(f.m.nodes[0], 4).ops_per_unit ==
          doctest::Approx(profile::op_of(t.rows[0], cal)->ops_per_unit).epsilon(1e-12));
    CHECK(close(profile::profiled_time(h200, f, cal), f.measured));

    // On the 910B1 a type whose count is assumed (op::uncounted) carries the engine's factor for
    // assumed counts in its operations (the node's op is counted); an fp32 output of bf16 input
    // keeps its dtype; a skip input as large as the first is read too.
    constexpr std::string_view ascend_csv =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "LayerNormV3,AI_VECTOR_CORE,40.5,48,\"4,1024,4096;4096;4096\",FLOAT16;FLOAT16;FLOAT16,"
        "\"4,1024,4096;4,1024,1;4,1024,1\",FLOAT16;FLOAT;FLOAT\n"
        "RmsNorm,AI_VECTOR_CORE,20.25,48,\"4,1024,4096;4,1024,4096\",BF16;BF16,"
        "\"4,1024,4096\",FLOAT\n";
    const auto at = profile::parse_kernel_details(ascend_csv);
    REQUIRE(at.rows.size() == 2);
    const profile::anchored_profile a = profile::anchor_profile(b1, at.rows, 4);
    REQUIRE(a.m.nodes.size() == 2);
    const op ln = *profile::op_of(at.rows[0]);
    REQUIRE(ln.uncounted);
    CHECK(b1.vector.uncounted_work > 1);
    CHECK(instantiate(a.m.nodes[0], 4).ops_per_unit ==
          doctest::Approx(ln.ops_per_unit * b1.vector.uncounted_work).epsilon(1e-12));
    CHECK(a.m.nodes[0].shapes[0] == batched_shape{1024 * B, 4096});
    CHECK_FALSE(a.m.nodes[1].out_same_as_in);
    CHECK(a.m.nodes[1].out_type == dtype::fp32);
    CHECK(a.m.nodes[1].inputs == 2);
    CHECK(close(profile::profiled_time(b1, a), a.measured));
}

TEST_CASE("perfcast whatif PROFILE.csv --batch B") {
    const cli_run r = run_cli({train, "--batch", "4", "--streams", "1", "--cube", "12,24",
                               "--vector", "24,48"});
    CHECK(r.status == 0);
    // The training profile has no cube_utilization(%) column to tell its chip: the default chip,
    // and a note saying so (tests/test_report.cpp has a profile that names its chip).
    CHECK(r.err.find("the profile does not name its chip") != std::string::npos);
    CHECK(r.out.find("anchored at batch 4") != std::string::npos);
    CHECK(r.out.find("unmapped") != std::string::npos);
    CHECK(r.out.find("at the profiled configuration") != std::string::npos);
    // Candidate batches.
    const cli_run s = run_cli({train, "--batch", "4", "--sweep-batch", "4,8", "--streams", "1-2",
                               "--format", "csv"});
    CHECK(s.status == 0);
    CHECK(s.out.find(",8,") != std::string::npos);
    // JSON carries the anchor counts the table prints (valid JSON; null for a model).
    const cli_run j = run_cli({train, "--batch", "4", "--streams", "1", "--cube", "24",
                               "--vector", "48", "--format", "json"});
    CHECK(j.status == 0);
    CHECK(perfcast_test::json_checker(j.out).valid());
    for (const char* f : {"\"profile\": {", "\"anchored\": 565", "\"mapped\": 481",
                          "\"batch_dependent\": 102", "\"unmapped\": 84", "\"skipped\": 26",
                          "\"profiled_batch\": 4", "\"measured_ms\"", "\"model_at_profile_ms\""})
        CHECK(j.out.find(f) != std::string::npos);
    const cli_run plain = run_cli({"--streams", "1", "--cube", "24", "--vector", "48",
                                   "--batch", "16", "--format", "json"});
    CHECK(plain.out.find("\"profile\": null") != std::string::npos);
    // --batch is one profiled batch; a profile and --model do not mix.
    CHECK(run_cli({train, "--batch", "4,8"}).status != 0);
    CHECK(run_cli({train}).status != 0);
    CHECK(run_cli({train, "--batch", "4", "--model", "x.model"}).status != 0);
    CHECK(run_cli({"--sweep-batch", "4"}).status != 0);
}

TEST_CASE("anchored: an index_select gather keeps its kind, table and walk") {
    // At B = 256 tokens on an A100: an embedding lookup of B tokens into a [32000, 4096] fp16
    // table (torch 2.2's indexSelectLargeIndex): a gather node whose indices scale with the
    // batch (rule 1: the dimension equal to B), walked as index_select walks, reproducing its
    // measurement where it was measured.
    constexpr std::string_view csv =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "indexSelectLargeIndex,AI_VECTOR_CORE,15.0,108,\"32000,4096;256\",FLOAT16;INT64,"
        "\"256,4096\",FLOAT16\n";
    const auto t = profile::parse_kernel_details(csv);
    REQUIRE(t.rows.size() == 1);
    const chip& a100 = chips::a100_80gb_sxm;
    const profile::anchored_profile p = profile::anchor_profile(a100, t.rows, 256);
    REQUIRE(p.anchors.size() == 1);
    CHECK(p.unmapped == 0);
    CHECK(close(profile::profiled_time(a100, p), p.measured));
    CHECK(p.m.nodes[0].kind == node_kind::gather);
    CHECK(p.m.nodes[0].walk == element_walk::selected);
    const op at_256 = instantiate(p.m.nodes[0], 256);
    const op mapped = *profile::op_of(t.rows[0]);
    CHECK(at_256.walk == element_walk::selected);
    CHECK(at_256.work_units == mapped.work_units);
    CHECK(at_256.run == mapped.run);
    CHECK(instantiate(p.m.nodes[0], 512).work_units == 2 * mapped.work_units);
}

}  // namespace test_anchored
