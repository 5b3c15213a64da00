// The op kinds of today's language models (issue 13, item 1): fused attention, grouped (MoE)
// GEMMs, fills and row-parallel vector ops. Known answers computed by hand in the comments; the
// profile rows are the real ones of tests/data/profiles/real (SOURCES.md).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/node.hpp>
#include <perfcast/op.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_llm_ops {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;

namespace {

const std::string real_dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";

/// The A100 with its cube engine's `share` at 1, after checking the presets' own: `ampere` on
/// the A100 and the A40, 1 on the H100 and the 910B1.
chip without_share(double engine_spec::*share, double ampere) {
    const chip& c = chips::a100_80gb_sxm;
    REQUIRE(c.cube.*share == ampere);
    CHECK(chips::a40_pcie.cube.*share == ampere);
    CHECK(chips::h100_sxm.cube.*share == 1.0);
    CHECK(chips::ascend910b1.cube.*share == 1.0);
    chip full = c;
    full.cube.*share = 1.0;
    return full;
}

/// The first row of `type` in a real kernel_details file.
profile::kernel_row first_row_of(const std::string& file, std::string_view type) {
    const profile::kernel_table t = profile::read_kernel_details_file(real_dir + file);
    for (const profile::kernel_row& r : t.rows) {
        if (r.op_type == type) return r;
    }
    FAIL("no ", std::string(type), " row in ", file);
    return {};
}

/// Peak dense FLOP/s of the cube of `c` for dtype `t` on every core: 2 x MACs / cycle x cores x
/// clock.
double cube_peak_flops(const chip& c, dtype t) {
    return 2.0 * c.cube.ops_per_cycle_for(t) * static_cast<double>(c.cube.cores) *
           c.cube.clock.in(units::Hz);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Attention: FLOPs against 4 x B x Nq x Sq x Skv x D by hand.

static_assert(causal_pairs(4, 4) == 10);     // 1 + 2 + 3 + 4
static_assert(causal_pairs(3, 5) == 12);     // queries at positions 2, 3, 4 see 3 + 4 + 5 keys
static_assert(causal_pairs(1, 100) == 100);  // decode: the one query sees the whole cache
static_assert(causal_pairs(5, 3) == 6);      // the first two queries see no key: 1 + 2 + 3

TEST_CASE("attention: FLOPs are 4 B Nq Sq Skv D, causal keeps S(S+1)/2 pairs, backward 2.5x") {
    // The 2023 profile's shape: B 2, 5 heads of 128, S 8192.
    // 4 x 2 x 5 x 8192 x 8192 x 128 = 343,597,383,680 (exact in a double).
    const attention_shape dense{
        .batch = 2, .q_heads = 5, .kv_heads = 5, .q_len = 8192, .kv_len = 8192, .head_dim = 128};
    const op d = attention(dense, dtype::bf16);
    CHECK(d.kind == op_kind::attention);
    CHECK(d.eng == engine::cube);
    CHECK(d.flops().in(units::flop) == 343597383680.0);
    // Softmax: 10 fp32 operations per score element: 2 x 5 x 8192^2 x 10 = 6,710,886,400.
    CHECK(d.vector_ops == 6710886400.0);
    // Work units: (batch, head, 128-row query block) = 2 x 5 x 64.
    CHECK(d.work_units == 640);
    // Q and O: 2 x 5 x 8192 x 128 x 2 B = 20,971,520 B; K and V the same each.
    CHECK(d.bytes_read.in(units::B) == 3.0 * 20971520.0);
    CHECK(d.bytes_written.in(units::B) == 20971520.0);

    attention_shape causal = dense;
    causal.causal = true;
    // pairs 8192 x 8193 / 2 = 33,558,528; 4 x 2 x 5 x 33,558,528 x 128 = 171,819,663,360.
    CHECK(attention(causal, dtype::bf16).flops().in(units::flop) == 171819663360.0);

    attention_shape grad = dense;
    grad.backward = true;
    grad.dropout = true;
    const op g = attention(grad, dtype::bf16);
    CHECK(g.flops().in(units::flop) == 2.5 * 343597383680.0);
    // 12 backward + 2 dropout operations per score element.
    CHECK(g.vector_ops == 2.0 * 5.0 * 8192.0 * 8192.0 * 14.0);

    // GQA: fewer KV heads change the bytes, not the FLOPs (Q 16 heads, KV 8, as Qwen3's).
    const attention_shape gqa{
        .batch = 1, .q_heads = 16, .kv_heads = 8, .q_len = 4096, .kv_len = 4096, .head_dim = 128};
    const attention_shape mha{
        .batch = 1, .q_heads = 16, .kv_heads = 16, .q_len = 4096, .kv_len = 4096, .head_dim = 128};
    CHECK(attention(gqa, dtype::bf16).flops() == attention(mha, dtype::bf16).flops());
    CHECK(attention(gqa, dtype::bf16).bytes_read < attention(mha, dtype::bf16).bytes_read);

    CHECK_THROWS_AS((void)attention({.q_heads = 6, .kv_heads = 4}, dtype::bf16), error);
}

TEST_CASE("attention: never below its compute floor (FLOPs / peak cube rate), on every chip") {
    // The floor of the whole chip; an op using fewer cores is slower still. Exact comparison:
    // the model's compute term is ceil(units / cores) x ops per unit / rate, never less.
    const std::array<const chip*, 4> chips{&chips::ascend910b1, &chips::ascend910b3,
                                           &chips::a100_80gb_sxm, &chips::h100_sxm};
    const std::array<std::int64_t, 5> lengths{1, 100, 1024, 4096, 32768};
    for (const chip* c : chips) {
        for (std::int64_t sq : lengths) {
            for (std::int64_t skv : lengths) {
                for (int causal = 0; causal < 2; ++causal) {
                    for (int backward = 0; backward < 2; ++backward) {
                        const attention_shape a{.batch = 2,
                                                .q_heads = 32,
                                                .kv_heads = 8,
                                                .q_len = sq,
                                                .kv_len = skv,
                                                .head_dim = 128,
                                                .causal = causal == 1,
                                                .backward = backward == 1};
                        const op o = attention(a, dtype::bf16);
                        const double floor_s =
                            o.flops().in(units::flop) / cube_peak_flops(*c, dtype::bf16);
                        const op_cost k = cost(*c, o);
                        CAPTURE(c->name);
                        CAPTURE(sq);
                        CAPTURE(skv);
                        CHECK(k.compute.in(units::s) >= floor_s);
                        CHECK(k.latency.in(units::s) >= floor_s);
                    }
                }
            }
        }
    }
}

TEST_CASE("attention: the compute term is the cube time plus the softmax on the vector cores") {
    // 910B1: 24 cube cores (4096 bf16 MACs / cycle), 48 vector cores (64 fp32 ops / cycle);
    // 2 vector cores per cube core. B 1, 24 heads, S 128: 24 units, one per cube core.
    const chip& c = chips::ascend910b1;
    const op o = attention(
        {.batch = 1, .q_heads = 24, .kv_heads = 24, .q_len = 128, .kv_len = 4096, .head_dim = 128},
        dtype::bf16);
    REQUIRE(o.work_units == 24);
    // One unit: 2 x 128 x 4096 x 128 MACs = 134,217,728 / 4096 = 32,768 cycles of the cube.
    const double cube_s = 32768.0 / c.cube.clock.in(units::Hz);
    // Its softmax: 128 x 4096 x 10 = 5,242,880 operations; 48 vector cores on 24 units: one
    // unit each, 5,242,880 / 64 = 81,920 cycles.
    const double vector_s = 81920.0 / c.vector.clock.in(units::Hz);
    const model_params p;
    const double expected = cube_s / p.cube_efficiency + vector_s / p.vector_efficiency;
    // Relative 1e-12: the same operations in another order (double rounding only).
    CHECK(cost(c, o).compute.in(units::s) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("attention: a GQA decode step packs each KV head's query heads into one block") {
    // B 8, 32 query heads over 8 KV heads, one query row: 8 x 8 blocks of 4 rows, not 8 x 32.
    const op packed = attention(
        {.batch = 8, .q_heads = 32, .kv_heads = 8, .q_len = 1, .kv_len = 1000, .head_dim = 128},
        dtype::bf16);
    CHECK(packed.work_units == 64);
    // Two query rows: blocks of query rows per head as before, 8 x 32 x ceil(2 / 128).
    const op two = attention(
        {.batch = 8, .q_heads = 32, .kv_heads = 8, .q_len = 2, .kv_len = 1000, .head_dim = 128},
        dtype::bf16);
    CHECK(two.work_units == 256);
    // Without GQA a decode step has a block per query head.
    const op mha = attention(
        {.batch = 8, .q_heads = 32, .kv_heads = 32, .q_len = 1, .kv_len = 1000, .head_dim = 128},
        dtype::bf16);
    CHECK(mha.work_units == 256);
    // The work is the same whichever way it is cut.
    CHECK(packed.flops() == mha.flops());
    CHECK(packed.ops_per_unit == doctest::Approx(4.0 * mha.ops_per_unit).epsilon(1e-12));
}

TEST_CASE("attention: keys are split across idle cores (split-KV), in chunks of 256 or more") {
    // A100 (108 SMs): 1 x 4 heads x 1 query block = 4 blocks over 4096 keys: split by
    // min(108 / 4, 4096 / 256) = 16, so 64 blocks; fp32 partial outputs of each split.
    const op o = attention(
        {.batch = 1, .q_heads = 4, .kv_heads = 4, .q_len = 100, .kv_len = 4096, .head_dim = 128},
        dtype::fp16);
    CHECK(o.k_depth == 4096);
    const op_cost k = cost(chips::a100_80gb_sxm, o);
    CHECK(k.cores == 64);
    // Partial sums: O is 4 x 100 x 128 fp16 = 102,400 B written, 51,200 elements; 16 splits of
    // fp32 partials written and read back: 16 x 51,200 x 4 B = 3,276,800 B each way.
    CHECK(k.bytes.in(units::B) == (o.bytes_read + o.bytes_written).in(units::B) + 2.0 * 3276800.0);
    // Fewer than 512 keys: no split (one chunk is 256), 4 blocks on 4 SMs.
    const op short_kv = attention(
        {.batch = 1, .q_heads = 4, .kv_heads = 4, .q_len = 100, .kv_len = 500, .head_dim = 128},
        dtype::fp16);
    CHECK(cost(chips::a100_80gb_sxm, short_kv).cores == 4);
}

TEST_CASE("attention on the A100: each wave of blocks holds its SMs 4250 cycles over its bytes") {
    // B 64 sequences of one token over 33 keys, 32 heads: 2048 blocks on 108 SMs, 19 waves.
    const chip& c = chips::a100_80gb_sxm;
    const op o = attention(
        {.batch = 64, .q_heads = 32, .kv_heads = 32, .q_len = 1, .kv_len = 33, .head_dim = 128},
        dtype::fp16);
    REQUIRE(o.work_units == 2048);
    REQUIRE(c.overhead.attention_unit_cycles.in(units::cycle) == 4250.0);
    const op_cost k = cost(c, o);
    const double floor_s = 19.0 * 4250.0 / c.cube.clock.in(units::Hz);
    // The floor binds: the body is 19 x 4250 cycles plus the memory time, over the head.
    CHECK(k.latency.in(units::s) ==
          doctest::Approx(k.head.in(units::s) + floor_s + k.memory.in(units::s)).epsilon(1e-12));
    // Without the floor the same step is priced at its head, bytes and FLOPs alone: 30.7 against
    // 88.0 us (vidur measured 97 us: tests/data/gpu/vidur_a100_llama2-7b_attention.csv, line 65);
    // 0.4 of it: the 9.16 us head both share (0.3 before the Ampere heads, 5.16 us, were fitted).
    chip no_floor = c;
    no_floor.overhead.attention_unit_cycles = {};
    CHECK(cost(no_floor, o).latency.in(units::s) < 0.4 * k.latency.in(units::s));
    // The Hopper presets set no floor (their heads are fitted on cuDNN's attention).
    CHECK(chips::h100_sxm.overhead.attention_unit_cycles.in(units::cycle) == 0.0);
    CHECK(chips::a40_pcie.overhead.attention_unit_cycles.in(units::cycle) == 4250.0);
}

TEST_CASE("attention on the Ampere presets: its compute at 0.65 of the rate, GEMMs unchanged") {
    const chip& c = chips::a100_80gb_sxm;
    const chip full = without_share(&engine_spec::attention_share, 0.65);
    // A prefill chunk, compute-bound: its compute term (GEMMs and softmax) divided by the share.
    const op o = attention(
        {.batch = 1, .q_heads = 32, .kv_heads = 32, .q_len = 2048, .kv_len = 2048, .head_dim = 128},
        dtype::fp16);
    CHECK(cost(c, o).compute.in(units::s) ==
          doctest::Approx(cost(full, o).compute.in(units::s) / 0.65).epsilon(1e-12));
    // A GEMM is not attention: the share does not touch it.
    const op g = matmul(2048, 4096, 4096, dtype::fp16);
    CHECK(cost(c, g).latency == cost(full, g).latency);
}

TEST_CASE(
    "attention on the Ampere presets: at 0.8 of that share when its units fill no core twice") {
    const chip& c = chips::a100_80gb_sxm;
    const chip filled = without_share(&engine_spec::attention_unfilled_share, 0.8);
    // A prefill chunk of 1408 tokens over 4 heads (tensor-parallel degree 8 of a 32-head model):
    // 4 x ceil(1408 / 128) = 44 units, split in two over the keys (108 / 44 SMs): 88 <= 108.
    const op few = attention(
        {.batch = 1, .q_heads = 4, .kv_heads = 4, .q_len = 1408, .kv_len = 1408, .head_dim = 128},
        dtype::fp16);
    REQUIRE(few.work_units == 44);
    CHECK(cost(c, few).compute.in(units::s) ==
          doctest::Approx(cost(filled, few).compute.in(units::s) / 0.8).epsilon(1e-12));
    // On 40 SMs the 44 units outnumber the cores: the share does not apply.
    CHECK(cost(c, few, core_count{40}) == cost(filled, few, core_count{40}));
    // 32 heads of 2048 rows: 512 units on 108 SMs, untouched.
    const op many = attention(
        {.batch = 1, .q_heads = 32, .kv_heads = 32, .q_len = 2048, .kv_len = 2048, .head_dim = 128},
        dtype::fp16);
    CHECK(cost(c, many) == cost(filled, many));
    // The share is validated like the others: in (0, 1].
    chip bad = c;
    bad.cube.attention_unfilled_share = 0;
    CHECK_THROWS_WITH_AS((void)validate(bad), doctest::Contains("cube.attention_unfilled_share"),
                         perfcast::error);
}

TEST_CASE("attention: more units than cores share the cores, no whole wave more (cube part)") {
    // 8 heads x ceil(1728 / 128) = 112 units on the A100's 108 SMs: no split over the keys (the
    // units outnumber the cores), so the busiest SM computes 112 / 108 units, not 2.
    const chip& c = chips::a100_80gb_sxm;
    const op o = attention(
        {.batch = 1, .q_heads = 8, .kv_heads = 2, .q_len = 1728, .kv_len = 1728, .head_dim = 128},
        dtype::fp16);
    REQUIRE(o.work_units == 112);
    const model_params& p = default_model_params;
    const double cube_s = 112.0 / 108.0 * o.ops_per_unit /
                          (c.cube.ops_per_cycle_for(dtype::fp16) * c.cube.clock.in(units::Hz)) /
                          p.cube_efficiency;
    // The softmax part keeps whole waves (vector_part_time: ceil(112 / 108) = 2).
    const double vector_s = detail::vector_part_time(c, o, 112, 108, p, c.cube).in(units::s);
    // 1e-12: the same products in another order (doubles).
    CHECK(cost(c, o).compute.in(units::s) ==
          doctest::Approx((cube_s + vector_s) / c.cube.attention_share).epsilon(1e-12));
    // A GEMM keeps whole waves: 112 tiles of 128 x 256 on 108 SMs, two waves.
    const op g = matmul(128 * 8, 256 * 14, 4096, dtype::fp16);
    REQUIRE(g.work_units == 112);
    CHECK(detail::busiest_units(g, detail::as_given(g), 108, 2) == 2.0);
    CHECK(detail::busiest_units(o, detail::as_given(o), 108, 2) == doctest::Approx(112.0 / 108.0));
}

TEST_CASE("attention: the Ampere presets run the softmax part at 64 operations per SM cycle") {
    // 32 heads of 2048 rows over 2048 keys: 512 units; the softmax's attention_vector_ops_forward
    // fp32 operations per score, 32 x 2048 x 2048 x 10 of them.
    const op o = attention(
        {.batch = 1, .q_heads = 32, .kv_heads = 32, .q_len = 2048, .kv_len = 2048, .head_dim = 128},
        dtype::fp16);
    REQUIRE(o.work_units == 512);
    REQUIRE(o.vector_ops == doctest::Approx(32.0 * 2048 * 2048 * attention_vector_ops_forward));
    const model_params& p = default_model_params;
    // The A40: ceil(512 / 84) = 7 units on the busiest SM, each 1/512 of the operations, at 64 a
    // cycle (chips::ampere_attention_softmax_rate), not the 128 FP32 lanes of its SM.
    const chip& a40 = chips::a40_pcie;
    REQUIRE(a40.vector.ops_per_cycle_for(dtype::fp32) == 128.0);
    const double expected =
        7.0 * o.vector_ops / 512.0 / 64.0 / a40.vector.clock.in(units::Hz) / p.vector_efficiency;
    // 1e-12: the same products in another order (doubles).
    CHECK(detail::vector_part_time(a40, o, 512, 84, p, a40.cube).in(units::s) ==
          doctest::Approx(expected).epsilon(1e-12));
    // Unset (0), the engine's FP32 rate: half that time on the A40.
    chip fp32_rate = a40;
    fp32_rate.vector.attention_softmax_rate = 0;
    CHECK(detail::vector_part_time(fp32_rate, o, 512, 84, p, fp32_rate.cube).in(units::s) ==
          doctest::Approx(expected / 2).epsilon(1e-12));
    CHECK(cost(a40, o).compute > cost(fp32_rate, o).compute);
    // The A100's FP32 lanes are 64: the rate changes nothing there; the Hopper presets keep 0.
    chip a100_fp32 = chips::a100_80gb_sxm;
    a100_fp32.vector.attention_softmax_rate = 0;
    CHECK(cost(chips::a100_80gb_sxm, o) == cost(a100_fp32, o));
    for (const chip* c : {&chips::h100_sxm, &chips::h200_sxm, &chips::ascend910b1,
                          &chips::ascend910b3, &chips::ascend310p3}) {
        CAPTURE(c->name);
        CHECK(c->vector.attention_softmax_rate == 0);
    }
    CHECK(chips::a100_40gb_sxm.vector.attention_softmax_rate == 64);
    // Validated like the engine's other rates: 0 or in [1e-6, 1e9].
    chip bad = a40;
    bad.vector.attention_softmax_rate = -1;
    CHECK_THROWS_WITH_AS((void)validate(bad), doctest::Contains("vector.attention_softmax_rate"),
                         perfcast::error);
}

// ---------------------------------------------------------------------------------------------
// FlashInfer's layout (attention_kernel::flashinfer), from its plan's source (op.hpp).

namespace {
/// Attention of `q_len` queries of 8 heads over `kv_len` keys of 2 (a Llama-3-8B layer at a
/// tensor-parallel degree of 4), causal, in FlashInfer's layout with chunks of at least `chunk`.
op flashinfer_attention(std::int64_t q_len, std::int64_t kv_len, std::int64_t chunk = 512) {
    return attention({.batch = 1,
                      .q_heads = 8,
                      .kv_heads = 2,
                      .q_len = q_len,
                      .kv_len = kv_len,
                      .head_dim = 128,
                      .causal = true,
                      .kernel = attention_kernel::flashinfer,
                      .kv_chunk_min = chunk},
                     dtype::fp16);
}
}  // namespace

TEST_CASE("attention in FlashInfer's layout: a KV head's query heads packed in 128-row blocks") {
    // 1728 queries x 4 heads a group = 6912 packed rows = 54 blocks of 128, per KV head: 108.
    const op o = flashinfer_attention(1728, 15552);
    CHECK(o.work_units == 108);
    CHECK(o.kv_chunk_min == 512);
    // No padding (6912 = 54 x 128): the work spread evenly. K and V read once per block of
    // each KV head's group: 53 re-reads of K (2 x 15552 x 128 x 2 bytes) and V, of the kept part.
    CHECK(o.ops_per_unit == doctest::Approx(o.useful_ops / 108).epsilon(1e-12));
    const double k_bytes = 2.0 * 15552 * 128 * 2;
    const double kept = causal_pairs(1728, 15552) / (1728.0 * 15552.0);
    CHECK(o.reread.in(units::B) == doctest::Approx(2 * k_bytes * 53 * kept).epsilon(1e-12));
    // FlashAttention-2's layout of the same attention: 8 heads x ceil(1728 / 128) = 112 blocks.
    attention_shape a{.batch = 1, .q_heads = 8, .kv_heads = 2, .q_len = 1728, .kv_len = 15552};
    CHECK(attention(a, dtype::fp16).work_units == 112);
    CHECK(attention(a, dtype::fp16).kv_chunk_min == 0);
    // A head dim of 256: 64-row blocks (FlashInfer's choice), 108 a KV head.
    attention_shape wide_heads{
        .batch = 1, .q_heads = 8, .kv_heads = 2, .q_len = 1728, .kv_len = 15552, .head_dim = 256};
    wide_heads.kernel = attention_kernel::flashinfer;
    CHECK(attention(wide_heads, dtype::fp16).work_units == 216);
    // 17 queries: 68 packed rows, one 128-row block a KV head, its 60 padding rows computed too.
    const op padded = flashinfer_attention(17, 17);
    CHECK(padded.work_units == 2);
    CHECK(padded.ops_per_unit == doctest::Approx(padded.useful_ops / 2 * 128 / 68).epsilon(1e-12));
    // 16 queries: 64 packed rows, one smaller block, priced by its rows.
    const op small = flashinfer_attention(16, 16);
    CHECK(small.work_units == 2);
    CHECK(small.ops_per_unit == doctest::Approx(small.useful_ops / 2).epsilon(1e-12));
    // A chunk of fewer than one key is an error naming it.
    a.kernel = attention_kernel::flashinfer;
    a.kv_chunk_min = 0;
    CHECK_THROWS_WITH_AS((void)attention(a, dtype::fp16), doctest::Contains("kv_chunk_min"),
                         perfcast::error);
}

TEST_CASE("attention in FlashInfer's layout: its keys split as its plan splits them") {
    const core_count sms{108};  // the A100's: a grid of at most 216 blocks, two an SM
    // 108 blocks: room for 2 chunks of 7776 keys each, 216 blocks, each writing its partial
    // output (1 x 8 x 1728 x 128 fp16, 3,538,944 bytes) for the merge.
    const op o = flashinfer_attention(1728, 15552);
    const detail::tiling t = detail::split_k(o, detail::as_given(o), sms);
    CHECK(t.work_units == 216);
    CHECK(t.partials.in(units::B) == 2 * 3538944.0);
    CHECK(t.ops_per_unit == doctest::Approx(o.ops_per_unit / 2).epsilon(1e-12));
    // 1792 queries: 56 blocks a KV head, 112 > 108: no split, and whole waves (two blocks on
    // some SMs run at once), not FlashAttention-2's shared ones.
    const op big = flashinfer_attention(1792, 16128);
    CHECK(detail::split_k(big, detail::as_given(big), sms).work_units == 112);
    CHECK(detail::busiest_units(big, detail::as_given(big), 108, 2) == 2.0);
    // 64 queries over 2560 cached keys (2624 in all): 4 blocks, room for 54 chunks, but none
    // under 512 keys: ceil(2624 / 512) = 6 chunks, 24 blocks; with FlashInfer's later 128, 21.
    const op chunk = flashinfer_attention(64, 2624);
    REQUIRE(chunk.work_units == 4);
    CHECK(detail::split_k(chunk, detail::as_given(chunk), sms).work_units == 24);
    const op later = flashinfer_attention(64, 2624, flashinfer_kv_chunk_min);
    CHECK(detail::split_k(later, detail::as_given(later), sms).work_units == 84);
    // 512 keys are one chunk: no split.
    const op one = flashinfer_attention(64, 512);
    CHECK(detail::split_k(one, detail::as_given(one), sms).work_units == 4);
}

TEST_CASE("attention: a causal mask's last blocks see the most keys; no core computes less") {
    // 512 queries over themselves, FlashInfer's layout: 16 blocks a KV head of 128 packed rows,
    // 32 queries each; 32 blocks in all, one an SM. The last block keeps the pairs of the last
    // 32 queries, 512 x 513 / 2 - 480 x 481 / 2 = 15888, where the average keeps 131328 / 16:
    // the busiest core computes 15888 x 16 / 131328 average blocks' work, cube and softmax.
    const chip& c = chips::a100_80gb_sxm;
    const op o = flashinfer_attention(512, 512);
    REQUIRE(o.work_units == 32);
    const double ratio = 15888.0 * 16.0 / 131328.0;
    CHECK(o.heaviest_unit == doctest::Approx(ratio).epsilon(1e-12));
    op even = o;
    even.heaviest_unit = 1;
    CHECK(cost(c, o).compute.in(units::s) ==
          doctest::Approx(cost(c, even).compute.in(units::s)*ratio).epsilon(1e-12));
    // A split keeps whole chunks: 544 keys in chunks of 512 and 32, the heaviest block a full
    // chunk, 2 x 512 / 544 times the causal ratio (17 blocks: (148240 - 131328) x 17 / 148240).
    const op split = flashinfer_attention(544, 544);
    CHECK(split.heaviest_unit == doctest::Approx(16912.0 * 17.0 / 148240.0).epsilon(1e-12));
    const detail::tiling t = detail::split_k(split, detail::as_given(split), core_count{108});
    REQUIRE(t.work_units == 2 * 2 * 17);
    CHECK(t.heaviest == doctest::Approx(split.heaviest_unit * 1024.0 / 544.0).epsilon(1e-12));
    // One block a head: even, whatever the mask (FlashInfer's 64 packed rows; 64 queries of
    // FlashAttention-2's 128-row block).
    CHECK(flashinfer_attention(16, 16).heaviest_unit == 1.0);
    CHECK(attention({.q_len = 64, .kv_len = 64, .causal = true}, dtype::fp16).heaviest_unit == 1.0);
    // More queries than keys: the first 4032 of 4096 queries see none, so the last of the 32
    // blocks keeps every pair, 32 average blocks' work and no more.
    CHECK(attention({.q_len = 4096, .kv_len = 64, .causal = true}, dtype::fp16).heaviest_unit ==
          doctest::Approx(32.0).epsilon(1e-12));
    // Without a mask the blocks are even; with many more blocks than cores the average decides.
    CHECK(attention({.q_len = 512, .kv_len = 512}, dtype::fp16).heaviest_unit == 1.0);
    attention_shape wide{.q_heads = 32, .kv_heads = 32, .q_len = 2048, .kv_len = 2048};
    wide.causal = true;
    const op many = attention(wide, dtype::fp16);
    op many_even = many;
    many_even.heaviest_unit = 1;
    CHECK(cost(c, many) == cost(c, many_even));
    // cost() checks the factor of a hand-built op.
    many_even.heaviest_unit = 0.5;
    CHECK_THROWS_WITH_AS((void)cost(c, many_even), doctest::Contains("op.heaviest_unit"),
                         perfcast::error);
}

TEST_CASE("FlashInfer on the Ampere presets: the full rate, the unfilled share, a merge per row") {
    const chip& c = chips::a100_80gb_sxm;
    REQUIRE(c.overhead.attention_merge_cycles.in(units::cycle) == 1000.0);
    CHECK(chips::a40_pcie.overhead.attention_merge_cycles.in(units::cycle) == 1000.0);
    CHECK(chips::h100_sxm.overhead.attention_merge_cycles == cycle_count{});
    CHECK(chips::ascend910b1.overhead.attention_merge_cycles == cycle_count{});
    chip filled = c;
    filled.cube.attention_unfilled_share = 1.0;
    chip no_merge = c;
    no_merge.overhead.attention_merge_cycles = {};
    // 32 blocks on 108 SMs, not split (512 keys): the share of one block an SM, no merge.
    const op few = flashinfer_attention(512, 512);
    CHECK(cost(c, few).compute.in(units::s) ==
          doctest::Approx(cost(filled, few).compute.in(units::s) / 0.8).epsilon(1e-12));
    CHECK(cost(c, few) == cost(no_merge, few));
    // 216 blocks after the split: the full rate, then the merge of 1728 rows x 8 heads, 128 an
    // SM at 1000 cycles of 1410 MHz each: 90.78 us after the attention.
    const op many = flashinfer_attention(1728, 15552);
    CHECK(cost(c, many).compute == cost(filled, many).compute);
    const double merge_us = 1728.0 * 8 / 108 * 1000 / 1410.0;
    CHECK(cost(c, many).latency.in(units::us)-cost(no_merge, many).latency.in(units::us) ==
          doctest::Approx(merge_us).epsilon(1e-9));
    // FlashAttention-2's share of the full rate is its own kernel's: it does not touch
    // FlashInfer's.
    chip fa2_free = c;
    fa2_free.cube.attention_share = 1.0;
    CHECK(cost(fa2_free, few) == cost(c, few));
    CHECK(cost(fa2_free, many) == cost(c, many));
    // Validated like the other cycle counts: in [0, 1e9].
    chip bad = c;
    bad.overhead.attention_merge_cycles = cycle_count{-1.0, units::cycle};
    CHECK_THROWS_WITH_AS((void)validate(bad), doctest::Contains("overhead.attention_merge_cycles"),
                         perfcast::error);
}

TEST_CASE("attention rows: FlashInfer's kernels by their type, a release after '@'") {
    const auto row = [](const std::string& type) {
        const std::string text =
            "Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
            "Output Data Types\n" +
            type +
            ",AI_CORE,40,\"1,8,64,128;1,2,2624,128;1,2,2624,128;2048,2048\","
            "fp16;fp16;fp16;bool,\"1,8,64,128\",fp16\n";
        return profile::parse_kernel_details(text, "fi.csv").rows.at(0);
    };
    const auto old = profile::op_of(row("BatchPrefillWithPagedKVCache@0.0.6"));
    const auto now = profile::op_of(row("flashinfer::BatchPrefillWithPagedKVCacheKernel<false>"));
    const auto fa2 = profile::op_of(row("FlashAttentionScore"));
    REQUIRE(old.has_value());
    REQUIRE(now.has_value());
    REQUIRE(fa2.has_value());
    CHECK(*old == flashinfer_attention(64, 2624));
    CHECK(*now == flashinfer_attention(64, 2624, flashinfer_kv_chunk_min));
    CHECK(fa2->kv_chunk_min == 0);
    CHECK(fa2->work_units == 8);  // 8 heads x one 128-row block
    CHECK_FALSE(profile::detail::flashinfer_chunk_of("BatchDecodeWithPagedKVCache").has_value());
}

// ---------------------------------------------------------------------------------------------
// Attention rows of real profiles.

TEST_CASE("attention rows: FlashAttentionScore SBH with a full mask and dropout (CANN 7.0)") {
    // Q 8192,2,640 (S, B, H); mask 1,1,8192,8192 (a self-attention's full [S, S] mask: the
    // causal band, profile/ops.hpp); drop mask 83886112 bytes; statistics written flat:
    // 655360 = 2 x 8192 x 5 x 8, so 5 heads of 128.
    const profile::kernel_row r =
        first_row_of("torchnpu_2023_cann70_rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                     "FlashAttentionScore");
    const std::optional<op> o = profile::op_of(r);
    REQUIRE(o.has_value());
    CHECK(o->kind == op_kind::attention);
    const op expected = attention({.batch = 2,
                                   .q_heads = 5,
                                   .kv_heads = 5,
                                   .q_len = 8192,
                                   .kv_len = 8192,
                                   .head_dim = 128,
                                   .causal = true,
                                   .dropout = true},
                                  dtype::bf16);
    CHECK(*o == expected);
    // 4 x 2 x 5 x (8192 x 8193 / 2) x 128 = 4 x 10 x 33,558,528 x 128 = 171,819,663,360.
    CHECK(o->flops().in(units::flop) == 171819663360.0);
}

TEST_CASE("attention rows: a [S, S] mask is the causal band; another mask is dense") {
    // The 910B3 fixture: Q, K, V 4096,2,512 (SBH), mask 4096,4096, statistics 2,4,4096,8: 4
    // heads of 128. Its pipe counters show half the dense work (docs/validation.md, "Full masks
    // as the causal band").
    const profile::kernel_table t = profile::read_kernel_details_file(
        PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B3_matmul.csv");
    const attention_shape causal{.batch = 2,
                                 .q_heads = 4,
                                 .kv_heads = 4,
                                 .q_len = 4096,
                                 .kv_len = 4096,
                                 .head_dim = 128,
                                 .causal = true};
    int forward = 0, backward = 0;
    for (const profile::kernel_row& r : t.rows) {
        if (!r.op_type.starts_with("FlashAttentionScore")) continue;
        const std::optional<op> o = profile::op_of(r);
        if (!o) continue;  // line 22: Q 4096,2,511 against K 4096,2,512 (a shape conflict)
        attention_shape a = causal;
        a.backward = r.op_type == "FlashAttentionScoreGrad";
        CHECK(*o == attention(a, dtype::bf16));
        ++(a.backward ? backward : forward);
    }
    CHECK(forward == 4);
    CHECK(backward == 4);

    // A mask that is not [S, S] (a padding mask [B, 1, 1, Skv], a cross-attention's [Sq, Skv])
    // stays dense: every pair priced.
    const auto row = [](const std::string& q, const std::string& k, const std::string& mask) {
        const std::string text =
            "Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
            "Output Data Types\n"
            "FlashAttentionScore,MIX_AIC,100,\"" +
            q + ";" + k + ";" + k + ";;;;" + mask +
            "\",DT_BF16;DT_BF16;DT_BF16;;;;BOOL,\"1,4,256,8;1,4,256,8;;" + q +
            "\",FLOAT;FLOAT;;DT_BF16\n";
        return profile::parse_kernel_details(text, "m.csv").rows.at(0);
    };
    const auto self = profile::op_of(row("1,256,512", "1,256,512", "256,256"));
    const auto padding = profile::op_of(row("1,256,512", "1,256,512", "1,1,1,256"));
    const auto cross = profile::op_of(row("1,256,512", "1,512,512", "256,512"));
    REQUIRE(self.has_value());
    REQUIRE(padding.has_value());
    REQUIRE(cross.has_value());
    // B 1, 4 heads of 128, S 256: causal 4 x 4 x (256 x 257 / 2) x 128 = 67,371,008 FLOPs;
    // dense 4 x 4 x 256^2 x 128 = 134,217,728; cross (Skv 512) 268,435,456.
    CHECK(self->flops().in(units::flop) == 67371008.0);
    CHECK(padding->flops().in(units::flop) == 134217728.0);
    CHECK(cross->flops().in(units::flop) == 268435456.0);
}

TEST_CASE("attention rows: FlashAttentionScore SBH, GQA, compressed causal mask (CANN 8.3)") {
    // Q 4096,1,2048, K and V 4096,1,1024, mask 2048,2048 (sparse modes 2-4: causal);
    // statistics 1,16,4096,8: 16 query heads of 128, so 8 KV heads.
    const profile::kernel_row r = first_row_of(
        "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "FlashAttentionScore");
    const std::optional<op> o = profile::op_of(r);
    REQUIRE(o.has_value());
    const op expected = attention({.batch = 1,
                                   .q_heads = 16,
                                   .kv_heads = 8,
                                   .q_len = 4096,
                                   .kv_len = 4096,
                                   .head_dim = 128,
                                   .causal = true},
                                  dtype::bf16);
    CHECK(*o == expected);
    // 4 x 16 x (4096 x 4097 / 2) x 128 = 4 x 16 x 8,390,656 x 128 = 68,736,253,952.
    CHECK(o->flops().in(units::flop) == 68736253952.0);
}

// ---------------------------------------------------------------------------------------------
// Grouped GEMMs.

TEST_CASE("grouped_matmul: the sum of the per-expert GEMMs, each padded to its own tiles") {
    // fp16, N 1024, K 512; experts with 0, 100 and 300 tokens.
    // 100 rows: M padded to 112 (fractal 16), one M tile x 4 N tiles (256) = 4 units.
    // 300 rows: M padded to 304: 3 M tiles of 128 x 4 = 12 units. 16 units in all.
    const std::array<std::int64_t, 3> tokens{0, 100, 300};
    const op g = grouped_matmul(tokens, 1024, 512, dtype::fp16);
    CHECK(g.kind == op_kind::grouped_matmul);
    CHECK(g.work_units == 16);
    CHECK(g.useful_ops == 400.0 * 1024.0 * 512.0);  // 400 tokens x N x K MACs
    // Weights of the two experts with tokens only: 2 x 512 x 1024 x 2 B; X 400 x 512 x 2 B.
    CHECK(g.bytes_read.in(units::B) == 2.0 * 512 * 1024 * 2 + 400.0 * 512 * 2);
    CHECK(g.bytes_written.in(units::B) == 400.0 * 1024 * 2);
    // Padded work: 4 units of 112 x 256 x 512 and 12 of 128 x 256 x 512.
    CHECK(g.ops_per_unit * 16.0 == 4.0 * 112 * 256 * 512 + 12.0 * 128 * 256 * 512);

    // Even split: 10 tokens over 4 experts are 3, 3, 2, 2.
    const std::array<std::int64_t, 4> even{3, 3, 2, 2};
    const op e = grouped_matmul_even(10, 4, 1024, 512, dtype::fp16);
    const op per = grouped_matmul(even, 1024, 512, dtype::fp16);
    CHECK(e.useful_ops == per.useful_ops);
    CHECK(e.work_units == per.work_units);
    CHECK(e.bytes() == per.bytes());

    const std::array<std::int64_t, 2> none{0, 0};
    CHECK_THROWS_AS((void)grouped_matmul(none, 1024, 512, dtype::fp16), error);
}

// ---------------------------------------------------------------------------------------------
// Fills.

TEST_CASE("fill: writes only; ZerosLike and OnesLike rows map to it") {
    const op f = fill(1000, dtype::fp32);
    CHECK(f.kind == op_kind::fill);
    CHECK(f.bytes_read.in(units::B) == 0.0);
    CHECK(f.bytes_written.in(units::B) == 4000.0);
    CHECK(f.useful_ops == 0.0);
    CHECK(f.work_units == 125);  // 4000 B in 32-byte blocks

    // ZerosLike of 232138240 fp32 elements (2023 profile): writes 928,552,960 B, reads none.
    const profile::kernel_row r = first_row_of(
        "torchnpu_2023_cann70_rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv", "ZerosLike");
    const std::optional<op> o = profile::op_of(r);
    REQUIRE(o.has_value());
    CHECK(o->kind == op_kind::fill);
    CHECK(o->bytes_read.in(units::B) == 0.0);
    CHECK(o->bytes_written.in(units::B) == 928552960.0);
}

// ---------------------------------------------------------------------------------------------
// Row-parallel ops.

TEST_CASE("rowwise: ceil(rows / cores) x one row's time; with few rows the width decides") {
    const chip& c = chips::ascend910b1;  // 48 vector cores
    const auto compute_of = [](std::int64_t rows) {
        return cost(chips::ascend910b1, rowwise(rows, 11008, dtype::fp16, {.ops_per_element = 8}))
            .compute.in(units::s);
    };
    // 1 row and 48 rows take one row's time (each on its own core); 49 rows take two.
    const double one = compute_of(1);
    CHECK(one > 0);
    CHECK(compute_of(48) == one);
    CHECK(compute_of(49) == 2.0 * one);
    // One row: 11008 x 8 ops / 128 fp16 ops per cycle = 688 cycles.
    const model_params p;
    CHECK(
        one ==
        doctest::Approx(688.0 / c.vector.clock.in(units::Hz) / p.vector_efficiency).epsilon(1e-12));
    // A wider row takes longer at the same row count: the time follows the width.
    CHECK(cost(c, rowwise(1, 22016, dtype::fp16, {.ops_per_element = 8})).compute.in(units::s) ==
          2.0 * one);
}

TEST_CASE("rowwise on a GPU: waves of rows in flight, each holding its block per trip over it") {
    // By hand, A100: 108 SMs at 1410 MHz, 2048 resident threads per SM, 1200 cycles per trip
    // of a block's threads over its row (4800 for a row of four trips).
    // A norm of 2048 rows of 4096 fp16: 1024-thread blocks, 4 trips, 2 rows in flight per SM, 216
    // at once: ceil(2048 / 216) = 10 waves x 4800 / 1.41e9 s = 34.0 us, above the memory term
    // (16 MiB read and written, resident in one 20 MiB L2 partition, at the SMs' 20 B/cycle:
    // 5.5 us), so latency = the vector head (0.5 + 0.02 x 108 us) + the floor.
    const chip& a100 = chips::a100_80gb_sxm;
    REQUIRE(a100.overhead.row_trip_cycles.in(units::cycle) == 1200.0);
    const double head = 0.5 + 0.02 * 108;
    REQUIRE(head_time(a100, engine::vector, 108).in(units::us) == doctest::Approx(head));
    const op norm = rowwise(2048, 4096, dtype::fp16, {.ops_per_element = 6, .row_threads = 1024});
    const op_cost k = cost(a100, norm);
    CHECK(k.latency.in(units::us) ==
          doctest::Approx(head + 10.0 * 4800.0 / 1.41e9 * 1e6).epsilon(1e-9));
    // Narrower blocks keep more rows in flight and walk each in more trips: 512 threads, 4 rows
    // per SM, 5 waves of 8 trips, the same floor (as PyTorch's 128-thread blocks would have).
    const op narrow = rowwise(2048, 4096, dtype::fp16, {.ops_per_element = 6, .row_threads = 512});
    CHECK(cost(a100, narrow).latency.in(units::us) ==
          doctest::Approx(head + 5.0 * 8.0 * 1200.0 / 1.41e9 * 1e6).epsilon(1e-9));
    // Rows in flight that do not divide the rows evenly still count whole waves: 2000 rows of
    // 512-thread blocks, ceil(2000 / 432) = 5 waves, as 2048.
    CHECK(cost(a100, rowwise(2000, 4096, dtype::fp16, {.ops_per_element = 6, .row_threads = 512}))
              .latency == cost(a100, narrow).latency);
    // The trips: ceil(width / threads), each thread's steps over the row.
    CHECK(norm.row_trips == 4);
    CHECK(narrow.row_trips == 8);
    CHECK(rowwise(8, 4097, dtype::fp16, {.row_threads = 1024}).row_trips == 5);
    CHECK(rowwise(8, 1000, dtype::fp16, {.row_threads = 1000}).row_trips == 1);
    // Rows twice as wide at the same block take twice the trips: 8192 wide, 10 waves x 8 trips x
    // 1200 cycles = 68.1 us (the memory term, 32 MiB each way, stays under it).
    const op wide = rowwise(2048, 8192, dtype::fp16, {.ops_per_element = 6, .row_threads = 1024});
    CHECK(cost(a100, wide).latency.in(units::us) ==
          doctest::Approx(head + 80.0 * 1200.0 / 1.41e9 * 1e6).epsilon(1e-9));
    // One trip: 2048 rows of 1000 on 1000-thread blocks (2 in flight per SM), 10 waves x 1200
    // cycles = 8.5 us: the floor is a quarter of the 4096-wide rows', and the memory term
    // (4 MB each way) may pass it.
    const op one_trip =
        rowwise(2048, 1000, dtype::fp16, {.ops_per_element = 6, .row_threads = 1000});
    CHECK(cost(a100, one_trip).latency.in(units::us) >=
          doctest::Approx(head + 10.0 * 1200.0 / 1.41e9 * 1e6).epsilon(1e-9));
    CHECK(cost(a100, one_trip).latency.in(units::us) < head + 34.0 / 2);
    // Without a row latency (the Ascend presets, or a GPU with it cleared) no floor: faster.
    chip plain = a100;
    plain.overhead.row_trip_cycles = {};
    CHECK(cost(plain, norm).latency < k.latency);
    CHECK(cost(plain, norm).latency.in(units::us) < head + 10.0);
    // A row op that reduces nothing (rope, SwiGlu: the default) and a plain vector op get none.
    CHECK(rowwise(4096, 4096, dtype::fp16).row_threads == 0);
    CHECK(cost(a100, rowwise(2048, 4096, dtype::fp16, {.ops_per_element = 6})).latency ==
          cost(plain, norm).latency);
    CHECK(elementwise(4096 * 4096, dtype::fp16).row_threads == 0);
}

TEST_CASE("rowwise rows: RmsNorm, rope and SwiGlu of the CANN 8.3 profile") {
    const std::string file =
        "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    // SwiGlu 4096,6144 -> 4096,3072: 4096 rows, reads every input element, writes half.
    const std::optional<op> s = profile::op_of(first_row_of(file, "SwiGlu"));
    REQUIRE(s.has_value());
    CHECK(s->kind == op_kind::rowwise);
    CHECK(s->work_units == 4096);
    CHECK(s->bytes_read.in(units::B) == 4096.0 * 6144 * 2);
    CHECK(s->bytes_written.in(units::B) == 4096.0 * 3072 * 2);
    CHECK(s->useful_ops == 4096.0 * 3072 * 8);  // 8 ops per output element (vector_types)
    // RmsNorm 4096,1,1024;1024 -> 4096,1,1024: 4096 rows; gamma read too.
    const std::optional<op> n = profile::op_of(first_row_of(file, "RmsNorm"));
    REQUIRE(n.has_value());
    CHECK(n->kind == op_kind::rowwise);
    CHECK(n->work_units == 4096);
    CHECK(n->bytes_read.in(units::B) == (4096.0 * 1024 + 1024) * 2);
    // RotaryPositionEmbedding 4096,1,16,128 (+ cos, sin 4096,1,1,128): 65536 rows of 128.
    const std::optional<op> q = profile::op_of(first_row_of(file, "RotaryPositionEmbedding"));
    REQUIRE(q.has_value());
    CHECK(q->kind == op_kind::rowwise);
    CHECK(q->work_units == 4096 * 16);
    // Only the norm reduces its row across a GPU block: min(width 1024, 1024) threads.
    CHECK(n->row_threads == 1024);
    CHECK(q->row_threads == 0);
    CHECK(s->row_threads == 0);
}

TEST_CASE("Sin and Cos rows: the TBE kernels' instruction counts, 41 and 44 per element") {
    // CANN 8.1.RC1 tbe/impl/dynamic/sin.py, cos.py (sin_compute_v3 / cos_compute_v3 and
    // compute_fixed, chips after v200): counted by hand, each line one vector instruction. Sin:
    // 2 muls, 2 rounds, 1 muls + 1 sub (k0, k1), 8 muls + 8 sub (four parts of pi, each for k0
    // and k1) = 22; Cos adds a vadds before rounding and two offsets = 25; compute_fixed: square,
    // sign (6), polynomial (10), clamp (2) = 19.
    constexpr double sin_ops = 2 + 2 + 2 + 16 + 19;
    constexpr double cos_ops = sin_ops + 3;
    const std::string file =
        "torchnpu_cann83_qwen3_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    const chip& c = chips::ascend910b3;
    const std::int64_t n = 4096 * 128;  // both rows: FLOAT 4096,1,1,128
    const op plain = elementwise(n, dtype::fp32, {.inputs = 1});
    for (const auto& row :
         std::array<std::pair<std::string_view, double>, 2>{{{"Sin", sin_ops}, {"Cos", cos_ops}}}) {
        const std::string_view type = row.first;
        const double ops = row.second;
        CAPTURE(type);
        const std::optional<op> o = profile::op_of(first_row_of(file, type));
        REQUIRE(o.has_value());
        CHECK(o->useful_ops == ops * static_cast<double>(n));
        CHECK(o->fp32_arithmetic);  // fp16 inputs are cast to float32 (no effect on fp32 data)
        CHECK(o->bytes_read == plain.bytes_read);
        CHECK(o->bytes_written == plain.bytes_written);
        // The compute term is the plain fp32 op's times the count (exact up to rounding).
        CHECK(cost(c, *o).compute.in(units::us) ==
              doctest::Approx(ops * cost(c, plain).compute.in(units::us)).epsilon(1e-12));
        // Counted, not assumed: calibration's median factor of the heavy types it fitted (which
        // corrects the assumed counts) is not given to them.
        CHECK_FALSE(profile::is_heavy_type(type));
        CHECK_FALSE(o->uncounted);  // nor the chip's factor for assumed counts
        profile::calibration cal;
        cal.unseen_heavy_factor = 5;
        CHECK(cal.factor_of(type) == 1.0);
        CHECK(cal.factor_of("Exp") == 5.0);  // an assumed count takes it
    }
}

TEST_CASE("rows of kernels that widen 16-bit data to fp32 are priced in fp32") {
    // The 910B1 training profile's fp16 LayerNormV3 (its TBE kernel promotes fp16) against its
    // fp16 FastGelu (computed in fp16): only the first is widened.
    const profile::kernel_table t = profile::read_kernel_details_file(
        PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv");
    const auto first = [&](std::string_view type) {
        for (const profile::kernel_row& r : t.rows)
            if (r.op_type == type) return profile::op_of(r);
        return std::optional<op>{};
    };
    const std::optional<op> norm = first("LayerNormV3");
    const std::optional<op> gelu = first("FastGelu");
    REQUIRE(norm.has_value());
    REQUIRE(gelu.has_value());
    CHECK(norm->type == dtype::fp16);
    CHECK(gelu->type == dtype::fp16);
    CHECK(norm->fp32_arithmetic);
    CHECK_FALSE(gelu->fp32_arithmetic);
    // Both counts are the traits table's assumptions (a rowwise norm, an elementwise activation):
    // priced at the engine's uncounted_work times them. A plain Add is not.
    CHECK(norm->uncounted);
    CHECK(gelu->uncounted);
    for (const profile::kernel_row& r : t.rows) {
        if (r.op_type != "Add") continue;
        const auto add = profile::op_of(r);
        REQUIRE(add.has_value());
        CHECK_FALSE(add->uncounted);
        break;
    }
    // The widened row costs more compute than the same op left in fp16 (at least the 2x of
    // fp32's half rate); its memory term is the same.
    op narrow = *norm;
    narrow.fp32_arithmetic = false;
    const chip& c = chips::ascend910b1;
    CHECK(cost(c, *norm).compute.in(units::us) > 2.0 * cost(c, narrow).compute.in(units::us));
    CHECK(cost(c, *norm).memory == cost(c, narrow).memory);
    // On a chip without an fp32 vector rate the widened row is not mappable (its rate is
    // fp32's), while the fp16 FastGelu still is.
    chip no_fp32 = c;
    no_fp32.vector.ops_per_cycle[index_of(dtype::fp32)] = 0;
    const auto row_of = [&](std::string_view type) {
        for (const profile::kernel_row& r : t.rows)
            if (r.op_type == type) return r;
        return profile::kernel_row{};
    };
    CHECK_FALSE(profile::measured_op_of(no_fp32, row_of("LayerNormV3")).has_value());
    CHECK(profile::measured_op_of(no_fp32, row_of("FastGelu")).has_value());
    CHECK(profile::measured_op_of(c, row_of("LayerNormV3")).has_value());
}

// ---------------------------------------------------------------------------------------------
// Model-file lines.

TEST_CASE("model file: attention, grouped_matmul, fill and rowwise lines") {
    const model m = io::parse_model(
        "attention B,32,1,128;B,8,4096,128 bf16 name=decode\n"
        "flash_attention B,32,2048,128;B,8,2048,128 bf16 causal=1 backward=1\n"
        "gmm B*16,4096;8,4096,1024 bf16\n"
        "fill B,4096 fp32\n"
        "norm B,4096 bf16 ops=6\n"
        "rowwise B,22016;B,11008 fp16 ops=8\n");
    REQUIRE(m.nodes.size() == 6);
    CHECK(
        instantiate(m.nodes[0], 4) ==
        attention(
            {.batch = 4, .q_heads = 32, .kv_heads = 8, .q_len = 1, .kv_len = 4096, .head_dim = 128},
            dtype::bf16));
    CHECK(instantiate(m.nodes[1], 2) == attention({.batch = 2,
                                                   .q_heads = 32,
                                                   .kv_heads = 8,
                                                   .q_len = 2048,
                                                   .kv_len = 2048,
                                                   .head_dim = 128,
                                                   .causal = true,
                                                   .backward = true},
                                                  dtype::bf16));
    CHECK(instantiate(m.nodes[2], 2) ==
          grouped_matmul_even(32, 8, 1024, 4096, dtype::bf16, {.out_type = dtype::bf16}));
    // kernel=flashinfer: FlashInfer's layout; kv_chunk= its fewest keys a split (128 by default).
    const model fi = io::parse_model(
        "attention B,8,64,128;B,2,2624,128 fp16 causal=1 kernel=flashinfer kv_chunk=512\n"
        "attention B,8,64,128;B,2,2624,128 fp16 causal=1 kernel=flashinfer\n"
        "attention B,8,64,128;B,2,2624,128 fp16 causal=1 kernel=flash_attention\n");
    REQUIRE(fi.nodes.size() == 3);
    CHECK(instantiate(fi.nodes[0], 1) == flashinfer_attention(64, 2624));
    CHECK(instantiate(fi.nodes[1], 1) == flashinfer_attention(64, 2624, flashinfer_kv_chunk_min));
    CHECK(instantiate(fi.nodes[2], 1).kv_chunk_min == 0);
    const auto bad_fi = [](const std::string& keys) {
        (void)io::parse_model("attention B,8,64,128;B,2,2624,128 fp16 " + keys + "\n", "fi.model");
    };
    CHECK_THROWS_WITH_AS(bad_fi("kernel=xformers"),
                         doctest::Contains("fi.model:1:47: kernel = \"xformers\""),
                         io::model_file_error);
    CHECK_THROWS_WITH_AS(bad_fi("kernel=xformers"),
                         doctest::Contains("expected flash_attention or flashinfer"),
                         io::model_file_error);
    CHECK_THROWS_WITH_AS(bad_fi("kernel=flashinfer kv_chunk=0"),
                         doctest::Contains("fi.model:1:67: kv_chunk = \"0\""),
                         io::model_file_error);
    CHECK_THROWS_WITH_AS(bad_fi("kv_chunk=512"), doctest::Contains("(kernel=flashinfer)"),
                         io::model_file_error);
    CHECK(instantiate(m.nodes[3], 3) == fill(3 * 4096, dtype::fp32));
    CHECK(instantiate(m.nodes[4], 5) == rowwise(5, 4096, dtype::bf16, {.ops_per_element = 6}));
    CHECK(instantiate(m.nodes[5], 7) ==
          rowwise(7, 22016, dtype::fp16, {.ops_per_element = 8, .out_width = 11008}));
    CHECK_FALSE(instantiate(m.nodes[5], 7).fp32_arithmetic);

    // fp32=1: a kernel that widens 16-bit data (op::fp32_arithmetic), on both kinds that take it.
    const model w = io::parse_model(
        "norm B,4096 fp16 ops=6 fp32=1\n"
        "elementwise B,4096 fp16 inputs=1 ops=4 fp32=1\n"
        "elementwise B,4096 fp16 inputs=1 ops=4 fp32=0\n");
    REQUIRE(w.nodes.size() == 3);
    CHECK(instantiate(w.nodes[0], 3) ==
          rowwise(3, 4096, dtype::fp16, {.ops_per_element = 6, .fp32_arithmetic = true}));
    CHECK(instantiate(w.nodes[1], 3) ==
          elementwise(3 * 4096, dtype::fp16,
                      {.inputs = 1, .ops_per_element = 4, .fp32_arithmetic = true}));
    CHECK_FALSE(instantiate(w.nodes[2], 3).fp32_arithmetic);
    const auto not_a_flag = [] {
        (void)io::parse_model("elementwise B,4096 fp16 fp32=2\n", "w.model");
    };
    CHECK_THROWS_WITH_AS(not_a_flag(), doctest::Contains("w.model:1:"), io::model_file_error);

    // walk=: how a rowwise kernel walks its elements (op::walk; GPU rope and gated activations
    // loop over them one at a time), vector by default.
    const model r = io::parse_model(
        "rowwise B,9216 fp16 ops=4 walk=indexed name=rope\n"
        "rowwise B,9216 fp16 ops=4 walk=vector\n");
    REQUIRE(r.nodes.size() == 2);
    CHECK(instantiate(r.nodes[0], 4) ==
          rowwise(4, 9216, dtype::fp16, {.ops_per_element = 4, .walk = element_walk::indexed}));
    CHECK(instantiate(r.nodes[1], 4).walk == element_walk::vector);
    CHECK(instantiate(m.nodes[4], 5).walk == element_walk::vector);
    const auto bad_walk = [] {
        (void)io::parse_model("norm B,4096 fp16\nrowwise B,4096 fp16 walk=strided\n", "r.model");
    };
    CHECK_THROWS_WITH_AS(bad_walk(), doctest::Contains("r.model:2:26: walk"), io::model_file_error);
    CHECK_THROWS_WITH_AS(bad_walk(), doctest::Contains("vector, indexed or transposed"),
                         io::model_file_error);

    // reduce=1: each row reduced across one GPU thread block (a norm, as the profile mapping's
    // RmsNorm and LayerNorm): vLLM's block of min(width, 1024) threads; none by default.
    const model n = io::parse_model(
        "norm B,4096 bf16 ops=6 reduce=1\n"
        "norm B,512 bf16 ops=6 reduce=1\n"
        "norm B,4096 bf16 ops=6\n");
    REQUIRE(n.nodes.size() == 3);
    CHECK(instantiate(n.nodes[0], 8) ==
          rowwise(8, 4096, dtype::bf16, {.ops_per_element = 6, .row_threads = 1024}));
    CHECK(instantiate(n.nodes[1], 8).row_threads == 512);
    CHECK(instantiate(n.nodes[2], 8).row_threads == 0);
    // On a GPU preset the row floor applies to the reduced rows only: 65536 rows of 4096 at
    // 2048 / 1024 = 2 rows in flight per SM on 132 SMs are ceil(65536 / 264) = 249 waves of
    // 4 trips of row_trip_cycles (408 us), above the 4096-wide rows' bytes at the HBM rate (280
    // us): the body is the floor. Without reduce=1 the same line is priced by its bytes, under
    // the floor.
    const chip& h200 = chips::h200_sxm;
    REQUIRE(h200.vector.cores == 132);
    REQUIRE(h200.overhead.core_threads == 2048);
    const double floor_us =
        249.0 * 4.0 * (h200.overhead.row_trip_cycles / h200.vector.clock).in(units::us);
    const op_cost reduced = cost(h200, instantiate(n.nodes[0], 65536));
    // Tolerance: the two sides are the same product of doubles, computed in another order.
    CHECK((reduced.latency - reduced.head).in(units::us) ==
          doctest::Approx(floor_us).epsilon(1e-9));
    CHECK(reduced.memory.in(units::us) < floor_us);
    CHECK(cost(h200, instantiate(n.nodes[2], 65536)).latency.in(units::us) < floor_us);
    const auto not_reduce = [] { (void)io::parse_model("norm B,4096 fp16 reduce=2\n", "n.model"); };
    CHECK_THROWS_WITH_AS(not_reduce(), doctest::Contains("n.model:1:"), io::model_file_error);
    CHECK_THROWS_WITH_AS(not_reduce(), doctest::Contains("reduce"), io::model_file_error);

    // GQA groups must divide: 32 query heads over 6 KV heads is an error naming the line.
    const auto bad = [] {
        (void)io::parse_model("attention B,32,1,128;B,6,4096,128 bf16\n", "m.model");
    };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("m.model:1:"), io::model_file_error);
}

}  // namespace test_llm_ops
