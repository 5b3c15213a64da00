// Op cost: the seed's examples (guide §5, §7, §9, §10, §12) and the model's invariants.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/op.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_cost {

using namespace perfcast;
using namespace perfcast::literals;

namespace {
constexpr const chip& b1 = chips::ascend910b1;

bool message_has(const auto& f, const std::string& needle) {
    try {
        f();
    } catch (const perfcast::error& e) {
        return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
}
}  // namespace

// guide §9: 128 x 8 runs of [1,32] x [32,300] (broadcast B) vs 8 runs of [128,32] x [32,300].
constexpr op bcast_bmm = batch_matmul(128 * 8, 1, 300, 32, dtype::fp16, {.broadcast_b = true});
constexpr op folded_bmm = batch_matmul(8, 128, 300, 32, dtype::fp16, {.broadcast_b = true});
static_assert(bcast_bmm.m_efficiency * 16 == folded_bmm.m_efficiency);  // exact: 1/16 vs 1
static_assert(cost(b1, folded_bmm).latency < cost(b1, bcast_bmm).latency);
static_assert(bcast_bmm.flops() == folded_bmm.flops());  // same useful work

TEST_CASE("guide §9: folding the broadcast axis into M uses the cube 16x better and is faster") {
    CHECK(bcast_bmm.m_efficiency == doctest::Approx(1.0 / 16.0));
    CHECK(folded_bmm.m_efficiency == 1.0);
    const op_cost a = cost(b1, bcast_bmm);
    const op_cost f = cost(b1, folded_bmm);
    CHECK(f.latency < a.latency);
    CHECK(f.utilization > a.utilization);
}

// guide §7: Equal on [1,4000] vs [400,1] under a 10-vector-core limit (the case's split).
constexpr op equal_of(dtype t) {
    return elementwise_broadcast(shape{1, 4000}, shape{400, 1}, t,
                                 {.out_type = dtype::bool_, .out_same_as_in = false});
}
static_assert(cost(b1, equal_of(dtype::int64), core_count{10}).latency >
              5.0 * cost(b1, equal_of(dtype::int32), core_count{10}).latency);

TEST_CASE("guide §7: int64 Equal takes the vector slow path, at least 5x the int32 time") {
    const op_cost i64 = cost(b1, equal_of(dtype::int64), core_count{10});
    const op_cost i32 = cost(b1, equal_of(dtype::int32), core_count{10});
    CHECK(equal_of(dtype::int64).work_units > 10);  // enough work to fill the 10 cores
    CHECK(i64.cores == 10);
    CHECK(i64.latency > 5.0 * i32.latency);
    CHECK(i64.bound == bound_kind::compute);
}

TEST_CASE("guide §10: TopK told its valid length (10 %) is about 90 % faster") {
    // 400 rows (case 2 works on 400-long candidate lists). Integer values run on the AI CPU
    // (guide §8). The work past the launch shrinks by the 90 % cut (to 1e-9: it is linear in
    // the valid length); the fixed launch keeps the whole op's saving under 90 %. The guide
    // gives only "about -90 % on average"; with the launch measured on the profiles' AI CPU
    // rows (73 us, chips/ascend.hpp) and the assumed AI CPU rate (1 op a cycle) the saving is
    // 82.8 %, so the check is 80 % .. 90 % (it was 85 % with the assumed 30 us launch).
    const op_cost padded = cost(b1, topk(400, 4000, 10, dtype::int32));
    const op_cost valid = cost(b1, topk(400, 4000, 10, dtype::int32, 400));
    CHECK(topk(1, 10, 1, dtype::int32).eng == engine::aicpu);
    const double body_ratio = (valid.latency - valid.head) / (padded.latency - padded.head);
    CHECK(body_ratio == doctest::Approx(0.1).epsilon(1e-9));
    const double saving = 1.0 - valid.latency / padded.latency;
    CHECK(saving > 0.80);
    CHECK(saving <= 0.90);
    // On the vector unit (fp32 values) the direction holds too.
    CHECK(cost(b1, topk(1024, 4000, 10, dtype::fp32, 400)).latency <
          cost(b1, topk(1024, 4000, 10, dtype::fp32)).latency);
}

TEST_CASE("guide §5: achieved bandwidth of 20000/48 x 2 x 8 B in 1051 us is about 0.006 GB/s") {
    const data_size per_core{20000.0 / 48.0 * 2.0 * 8.0, units::B};
    const bandwidth_check chk = check_bandwidth(b1, per_core, duration{1051, units::us});
    // 6666.7 B / 1051 us = 0.00634 GB/s; the seed writes "about 0.005": within 0.002 GB/s.
    CHECK(chk.achieved.in(units::GBps) == doctest::Approx(0.0063).epsilon(0.01));
    CHECK(chk.far_below);
    CHECK(chk.share < 0.001);
    CHECK_FALSE(check_bandwidth(b1, 64_KiB, 2_us).far_below);
    CHECK_THROWS_AS((void)achieved_bandwidth(1_KiB, 0_us), perfcast::error);
}

TEST_CASE("guide §5: a 33-element fp16 row (66 B) costs more per byte than a 32-element one") {
    // 4096 rows copied; only the row length (the contiguous run) differs.
    const op a = concat({shape{4096, 33}}, 33, dtype::fp16);
    const op b = concat({shape{4096, 32}}, 32, dtype::fp16);
    const auto per_byte_a = memory_time(b1, a, 24) / a.bytes();
    const auto per_byte_b = memory_time(b1, b, 24) / b.bytes();
    CHECK(per_byte_a > per_byte_b);
}

TEST_CASE("guide §12: fewer cores, less head overhead and core-time, more latency") {
    const op big = matmul(4096, 4096, 4096, dtype::fp16);
    const op_cost all = cost(b1, big, core_count{24});
    const op_cost half = cost(b1, big, core_count{12});
    CHECK(all.cores == 24);
    CHECK(half.cores == 12);
    CHECK(half.latency > all.latency);
    CHECK(half.head < all.head);
    CHECK(all.core_time == all.latency * 24.0);
}

TEST_CASE("an op never holds more cores than it has work units") {
    const op small = matmul(16, 256, 64, dtype::fp16);  // one 16 x 256 output tile
    CHECK(small.work_units == 1);
    CHECK(cost(b1, small, core_count{24}).cores == 1);
    CHECK(cost(b1, small, core_count{24}).latency == cost(b1, small, core_count{1}).latency);
}

TEST_CASE("split-K: a one-tile GEMM with a deep K spreads K over idle cores") {
    const op skinny = matmul(16, 256, 8192, dtype::fp16);  // one 16 x 256 tile, K = 8192
    CHECK(skinny.work_units == 1);
    const op_cost all = cost(b1, skinny, core_count{24});
    const op_cost one = cost(b1, skinny, core_count{1});
    CHECK(all.cores == 24);  // min(24 cores, 8192 / 256 chunks)
    CHECK(all.latency < one.latency);
    CHECK(all.bytes > one.bytes);  // fp32 partial sums written and read back
    const op shallow = matmul(16, 256, 256, dtype::fp16);  // K too shallow to split
    CHECK(cost(b1, shallow, core_count{24}).cores == 1);
}

TEST_CASE("GEMM tiles: the A100 prices [1024, 4096] x [4096, 4096] in the tile that ends first") {
    // By hand (A100: 108 SMs, 1024 fp16 MACs per cycle at 1410 MHz, cube efficiency 0.9, L2
    // 5120 / 108 B per cycle per SM). Per tile: busiest SM's MACs / rate vs (inputs + re-reads)
    // / L2 rate; A = 8 MiB, B = 32 MiB.
    //   256x128, 128x256: 128 tiles, 2 waves of 256*128*4096 MACs -> 206.5 us
    //   256x64, 64x256, 128x128: 256 tiles, 3 waves of 128*128*4096 -> 154.9 us
    //   128x64: 512 tiles, 5 waves of 128*64*4096 -> 129.1 us; loads 805 MB -> 111.6 us
    //   64x128: the same 129.1 us (listed after 128x64: the tie goes to 128x64)
    //   64x64: 1024 tiles, 10 waves -> 129.1 us, but loads 1074 MB -> 148.7 us
    const chip& a100 = chips::a100_80gb_sxm;
    const op g = matmul(1024, 4096, 4096, dtype::fp16);
    CHECK(g.work_units == 8 * 16);  // the factory's 128 x 256 tiles
    const op t = detail::tiled_for(a100, g, core_count{108}, {}, a100.cube);
    CHECK(t.work_units == 512);
    CHECK(t.ops_per_unit == doctest::Approx(128.0 * 64.0 * 4096.0));
    // A re-read for 63 more N tiles, B for 7 more M tiles.
    CHECK(t.reread.in(units::B) == doctest::Approx(8388608.0 * 63 + 33554432.0 * 7));
    const op_cost c = cost(a100, g);
    // 1e-9: the same arithmetic in another order (doubles).
    CHECK(c.compute.in(units::us) ==
          doctest::Approx(5.0 * 128 * 64 * 4096 / (1024 * 1.41e9 * 0.9) * 1e6).epsilon(1e-9));
    // A chip that lists no tiles (the 910B presets) keeps the factory's tiling.
    CHECK(detail::tiled_for(b1, g, core_count{24}, {}, b1.cube) == g);
}

TEST_CASE("GEMM tiles: the search in doubles picks what pricing every tiled op would") {
    // Reference: build each candidate op (detail::tiled, then split-K) and score it as the
    // search does; the fast search must choose the same tile and split for every shape.
    const chip& c = chips::a100_80gb_sxm;
    const double rate = 1024.0 * 1.41e9 * 0.9;
    const double l2 = c.memory.l2_read_rate.in(units::B_per_cycle)*1.41e9;
    int checked = 0;
    for (std::int64_t m : {1, 8, 100, 1024, 4096}) {
        for (std::int64_t n : {64, 1536, 4096, 12288}) {
            for (std::int64_t k : {64, 4096, 11008}) {
                for (int limit : {1, 7, 108}) {
                    const op g = matmul(m, n, k, dtype::fp16);
                    op want = g;
                    double best = -1;
                    for (const tile_shape& t : c.cube_tiles) {
                        const op r = detail::split_k(detail::tiled(g, t), core_count{limit});
                        const auto b = std::min<std::int64_t>(r.work_units, limit);
                        const double compute =
                            static_cast<double>(ceil_div(r.work_units, b)) * r.ops_per_unit / rate;
                        const double load =
                            (r.bytes_read + r.reread).in(units::B) / (l2 * static_cast<double>(b));
                        const double time = std::max(compute, load);
                        if (best < 0 || time < best) {
                            best = time;
                            want = r;
                        }
                    }
                    const op got = detail::tiled_for(c, g, core_count{limit}, {}, c.cube);
                    CAPTURE(m);
                    CAPTURE(n);
                    CAPTURE(k);
                    CAPTURE(limit);
                    CHECK(got.work_units == want.work_units);
                    CHECK(got.ops_per_unit == doctest::Approx(want.ops_per_unit));
                    CHECK(got.reread.in(units::B) == doctest::Approx(want.reread.in(units::B)));
                    ++checked;
                }
            }
        }
    }
    CHECK(checked == 180);
}

TEST_CASE("GEMM tiles: cost() prices the winner's tiling as it would the tiled op itself") {
    // cost() passes the winner's tiling beside the op (no copy) and takes the busiest core's
    // units from the search's waves: every field must equal pricing the op built by tiled_for,
    // to the bit. Shapes: clipped tiles (M of 1 and 100), split-K (K 11008 on few tiles), many
    // waves; a limit below the tile count, one between, the whole chip.
    for (const chip* c : {&chips::a100_80gb_sxm, &chips::h100_sxm}) {
        for (std::int64_t m : {1, 100, 4096}) {
            for (std::int64_t n : {64, 1536, 12288}) {
                for (std::int64_t k : {64, 11008}) {
                    for (int limit : {1, 7, c->cube.cores}) {
                        const op g = matmul(m, n, k, dtype::fp16);
                        const op t = detail::tiled_for(*c, g, core_count{limit}, {}, c->cube);
                        CAPTURE(m);
                        CAPTURE(n);
                        CAPTURE(k);
                        CAPTURE(limit);
                        CHECK(cost(*c, g, core_count{limit}) ==
                              detail::cost_terms(*c, t, detail::as_given(t), core_count{limit}, {},
                                                 c->cube));
                    }
                }
            }
        }
    }
}

TEST_CASE("GEMM tiles: a tile count past 2^62 keeps the factory tiling, no overflow") {
    // The factories cannot build such a GEMM (its MACs would pass 2^63 first); an op built by
    // hand can.
    chip c = chips::a100_80gb_sxm;
    c.cube_tiles = {};
    c.cube_tiles[0] = {1, 1};
    op g = matmul(4096, 4096, 4096, dtype::fp16);
    g.gemm.batch = std::int64_t{1} << 40;
    const op t = detail::tiled_for(c, g, core_count{108}, {}, c.cube);
    CHECK(t == g);  // 2^40 x 4096 x 4096 tiles of 1 x 1: skipped
}

TEST_CASE("tiling tail: 25 tiles on 24 cores take two rounds") {
    const op t25 = batch_matmul(25, 128, 256, 1024, dtype::fp16);
    const op t24 = batch_matmul(24, 128, 256, 1024, dtype::fp16);
    CHECK(t25.work_units == 25);
    const op_cost c25 = cost(b1, t25);
    const op_cost c24 = cost(b1, t24);
    CHECK(c25.compute.in(units::us) == doctest::Approx(2.0 * c24.compute.in(units::us)));
}

TEST_CASE("int8 runs the cube at twice the fp16 rate (fractal K 32)") {
    const op f16 = matmul(4096, 4096, 4096, dtype::fp16);
    const op i8 = matmul(4096, 4096, 4096, dtype::int8);
    CHECK(cost(b1, i8).compute.in(units::us) ==
          doctest::Approx(cost(b1, f16).compute.in(units::us) / 2.0));
}

TEST_CASE("gather: concentrated indices get slower with more cores (guide §12)") {
    const op hot = gather(20000, 64_B, 1000000, dtype::fp16, {.hot_fraction = 1.0});
    const op cold = gather(20000, 64_B, 1000000, dtype::fp16);
    CHECK(memory_time(b1, hot, 48) > memory_time(b1, cold, 48));
    CHECK(memory_time(b1, hot, 48) / memory_time(b1, cold, 48) >
          memory_time(b1, hot, 8) / memory_time(b1, cold, 8));
}

TEST_CASE("cost reports a consistent split") {
    const op_cost c = cost(b1, matmul(2048, 2048, 2048, dtype::fp16));
    CHECK(c.latency >= c.head + c.compute);
    CHECK(c.latency >= c.head + c.memory);
    CHECK(c.utilization > 0.0);
    CHECK(c.utilization <= 1.0);
    CHECK(c.flops.in(units::flop) == 2.0 * 2048.0 * 2048.0 * 2048.0);
    CHECK(c.bound == bound_kind::compute);
    const op_cost tiny = cost(b1, elementwise(16, dtype::fp16));
    CHECK(tiny.bound == bound_kind::overhead);
    const op_cost copy = cost(b1, broadcast(shape{1, 4096}, shape{65536, 4096}, dtype::fp16));
    CHECK(copy.bound == bound_kind::memory);
}

TEST_CASE("L2 partitions: an input stays resident in one partition, not the whole L2") {
    // The A100: 40 MiB of L2 in two partitions, 0.9 (l2_resident_share) of one = 18 MiB resident.
    const chip& a = chips::a100_80gb_sxm;
    REQUIRE(a.memory.l2_partitions == 2);
    CHECK(l2_resident_size(a.memory) == data_size{20.0, units::MiB});
    // An Add of 6 Mi fp16 elements: 24 MiB read (two inputs), 12 MiB written. The reads fit in
    // 0.9 x 40 MiB but not in 0.9 x 20 MiB, so they stream from HBM: memory time = reads /
    // (HBM x hbm_efficiency 0.8), the core read rate (20 B/cycle x 1.41 GHz x 108 SMs = 3.0
    // TB/s) being above 0.8 x 2039 GB/s. The writes (12 MiB) stay in L2.
    const op add = elementwise(6 * 1024 * 1024, dtype::fp16);
    REQUIRE(add.bytes_read == data_size{24.0, units::MiB});
    const int sms = a.vector.cores;
    const double reads = add.bytes_read.in(units::B);
    // Tolerance: the same divisions in another order, 1e-12.
    CHECK(memory_time(a, add, sms).in(units::s) ==
          doctest::Approx(reads / (2039e9 * 0.8)).epsilon(1e-12));
    chip whole = a;
    whole.memory.l2_partitions = 1;
    CHECK(memory_time(whole, add, sms) < memory_time(a, add, sms) * 0.6);
    // One partition (every Ascend preset): the whole L2.
    CHECK(l2_resident_size(b1.memory) == b1.memory.l2_size);
    // A partition count the chip check refuses names the field.
    whole.memory.l2_partitions = 0;
    CHECK(message_has([&] { (void)validate(whole); }, "memory.l2_partitions"));
}

TEST_CASE("HBM mix cost: only traffic that mixes reads and writes pays it, in proportion") {
    // By hand: weight = 1 + (cost - 1) x 2 x lesser / (reads + writes).
    const data_size mb{1e6, units::B};
    CHECK(detail::hbm_mix_weight(mb * 300.0, data_size{}, 1.5) == 1.0);  // a reduction
    CHECK(detail::hbm_mix_weight(data_size{}, mb * 300.0, 1.5) == 1.0);  // a fill
    CHECK(detail::hbm_mix_weight(data_size{}, data_size{}, 1.5) == 1.0);
    CHECK(detail::hbm_mix_weight(mb * 300.0, mb * 300.0, 1.5) == 1.5);  // as many of each
    // One byte written to two read: two thirds of the traffic alternates. 1e-15: rounding.
    CHECK(detail::hbm_mix_weight(mb * 300.0, mb * 150.0, 1.5) ==
          doctest::Approx(1.0 + 0.5 * 2.0 / 3.0).epsilon(1e-15));
    CHECK(detail::hbm_mix_weight(mb * 150.0, mb * 300.0, 1.5) ==
          detail::hbm_mix_weight(mb * 300.0, mb * 150.0, 1.5));
    CHECK(detail::hbm_mix_weight(mb * 300.0, mb * 150.0, 1.0) == 1.0);
    // At the lowest cost allowed, writing more never makes an op faster: (reads + writes) x
    // weight stays what the reads alone cost while the writes are the lesser (R + W (2 c - 1) =
    // R at c = 0.5), at 100 MB or 300 MB written beside 300 MB read, and grows past them.
    constexpr data_size r300{3e8, units::B};
    constexpr double c_min = model_params::min_hbm_mix_cost;
    static_assert((r300 + data_size{1e8, units::B}) *
                      detail::hbm_mix_weight(r300, data_size{1e8, units::B}, c_min) ==
                  r300);
    static_assert(r300 * 2.0 * detail::hbm_mix_weight(r300, r300, c_min) == r300);
    static_assert((r300 + data_size{6e8, units::B}) *
                      detail::hbm_mix_weight(r300, data_size{6e8, units::B}, c_min) >
                  r300);

    // On the 910B1, every read from HBM and every write reaching it (a known order past L2):
    // a Cast that narrows 75.5 M fp32 elements (302 MB read, 151 MB written) and one that widens
    // them (151 MB read, 302 MB written) move the same bytes just as mixed, so they take the same
    // memory time (the 910B1 profile measured 359 and 335 us; a cost of 1.5 on written bytes
    // alone would make the widening one 14 % the slower), and the cost raises both by the same
    // factor. A fill writes only: the cost does not touch it.
    op narrow = cast(75497472, dtype::fp32, dtype::fp16);
    op widen = cast(75497472, dtype::fp16, dtype::fp32);
    op zeros = fill(75497472, dtype::fp32);
    for (op* o : {&narrow, &widen, &zeros}) {
        o->l2_input_share = 0.0;
        o->writes_reach_hbm = true;
    }
    model_params mixed;
    mixed.hbm_mix_cost = 1.5;
    const auto mem = [&](const op& o, const model_params& p) {
        return cost(b1, o, core_count{48}, p).memory.in(units::us);
    };
    // 1e-12: the same double arithmetic on bytes in another order.
    CHECK(mem(narrow, mixed) == doctest::Approx(mem(widen, mixed)).epsilon(1e-12));
    CHECK(mem(narrow, mixed) ==
          doctest::Approx(mem(narrow, {}) * (1.0 + 0.5 * 2.0 / 3.0)).epsilon(1e-12));
    const duration hbm_time = (narrow.bytes_read + narrow.bytes_written) /
                              (b1.memory.hbm_bandwidth * default_model_params.hbm_efficiency);
    const double hbm_us = hbm_time.in(units::us);
    CHECK(mem(narrow, {}) == doctest::Approx(hbm_us).epsilon(1e-12));
    CHECK(mem(zeros, mixed) == mem(zeros, {}));

    // Dirty lines an op's traffic evicts (op::writeback) are writes in the mix: an Add that
    // reads 64 MiB from HBM, whose own 32 MiB of writes stay in L2 (its traffic fits), and
    // evicts 64 MiB of earlier writes moves as many bytes each way.
    op add = elementwise(16777216, dtype::fp16);
    add.l2_input_share = 0.0;
    add.writeback = add.bytes_read;
    const duration both_ways = (add.bytes_read + add.writeback) * 1.5 /
                               (b1.memory.hbm_bandwidth * default_model_params.hbm_efficiency);
    CHECK(mem(add, mixed) == doctest::Approx(both_ways.in(units::us)).epsilon(1e-12));
}

TEST_CASE("op factories' errors name the op, the field, the value and the bound") {
    // A batch of 1 is a matmul, and its errors say so.
    CHECK(message_has([] { (void)matmul(0, 1, 1, dtype::fp16); },
                      "perfcast::matmul: m = 0, expected a dimension >= 1"));
    CHECK(message_has([] { (void)batch_matmul(2, 0, 1, 1, dtype::fp16); },
                      "perfcast::batch_matmul: m = 0"));
    // The bound of the operations per element, not "finite".
    CHECK(message_has([] { (void)elementwise(4, dtype::fp16, {.ops_per_element = 1e300}); },
                      "perfcast::elementwise: ops_per_element = 1e+300, expected a count per "
                      "element in (0, 1e9)"));
    CHECK(message_has([] { (void)rowwise(4, 8, dtype::fp16, {.ops_per_element = 0}); },
                      "ops_per_element = 0, expected a count per element in (0, 1e9)"));
    // The dimension and the two sizes that do not broadcast.
    CHECK(message_has(
        [] {
            (void)elementwise_broadcast(shape{1, 4000}, shape{400, 2}, dtype::fp16);
        },
        "perfcast::elementwise_broadcast: dimension 1 of [1, 4000] and [400, 2] = "
        "4000 and 2, expected broadcast-compatible sizes (equal, or 1 in one of "
        "them)"));
    CHECK(elementwise_broadcast(shape{3, 4}, shape{2, 1, 4}, dtype::fp16)
              .bytes_written.in(units::B) == 2 * 3 * 4 * 2.0);  // 1 broadcasts: [2, 3, 4]
    CHECK(message_has(
        [] {
            (void)elementwise_broadcast(shape{3, 4}, shape{2, 2, 4}, dtype::fp16);
        },
        "dimension 1 (of the longer shape) of [3, 4] and [2, 2, 4] = 3 and 2"));
    // A broadcast checks numpy's rules too.
    CHECK(message_has(
        [] {
            (void)broadcast(shape{2, 300}, shape{3, 300}, dtype::fp32);
        },
        "perfcast::broadcast: input dimension 0 = 2, expected 1 or the output's 3 "
        "(input [2, 300] to output [3, 300])"));
    CHECK(message_has(
        [] {
            (void)broadcast(shape{1, 2, 3}, shape{2, 3}, dtype::fp32);
        },
        "perfcast::broadcast: input rank = 3, expected at most the output's rank, 2"));
    CHECK(broadcast(shape{300}, shape{4, 300}, dtype::fp32).bytes_written ==
          broadcast(shape{1, 300}, shape{4, 300}, dtype::fp32).bytes_written);
    // TopK: the bounds with their values; valid 0 is the whole length; k <= valid.
    CHECK(message_has([] { (void)topk(1, 10, 20, dtype::fp16); },
                      "perfcast::topk: k = 20, expected k <= length (10)"));
    CHECK(message_has([] { (void)topk(4, 100, 10, dtype::fp16, 200); },
                      "perfcast::topk: valid = 200, expected 1 <= valid <= length (100), or 0: the "
                      "whole length"));
    CHECK(message_has([] { (void)topk(4, 100, 10, dtype::fp16, 5); },
                      "perfcast::topk: k = 10, expected k <= valid (5): a TopK keeps k of the "
                      "valid elements"));
    CHECK(message_has(
        [] {
            (void)gather(10, data_size{2e15, units::B}, 10, dtype::fp16);
        },
        "row_bytes = 2e+15, expected a row size in [1, 1e15) bytes"));
}
// The checks stay constexpr: their messages are built only on the failing path.
static_assert(topk(4, 100, 10, dtype::fp16, 0) == topk(4, 100, 10, dtype::fp16, 100));
static_assert(topk(4, 100, 10, dtype::fp16, 10).bytes_read.in(units::B) == 80.0);
static_assert(broadcast(shape{1, 300}, shape{4, 300}, dtype::fp16).kind == op_kind::broadcast);
static_assert(elementwise_broadcast(shape{1, 4}, shape{3, 1}, dtype::fp16).work_units >= 1);
static_assert(matmul(16, 16, 16, dtype::fp16).kind == op_kind::matmul);

TEST_CASE("bad input names the field and the value") {
    CHECK(message_has([] { (void)matmul(0, 1, 1, dtype::fp16); }, "m = 0"));
    CHECK(message_has([] { (void)batch_matmul(-3, 1, 1, 1, dtype::fp16); }, "batch = -3"));
    CHECK(message_has([] { (void)cost(b1, matmul(64, 64, 64, dtype::fp16), core_count{25}); },
                      "limit (cube cores) = 25, expected 1 to 24 (the cube cores of ascend910b1)"));
    CHECK(message_has([] { (void)cost(b1, elementwise(64, dtype::fp16), core_count{0}); },
                      "limit (vector cores) = 0, expected 1 to 48 (the vector cores of "
                      "ascend910b1)"));
    // An op placed on the AI CPU of a chip that has none, and a dtype the engine lacks: the
    // message names the chip and what it has.
    CHECK(message_has(
        [] {
            op o = elementwise(64, dtype::int64);
            o.eng = engine::aicpu;
            (void)cost(chips::h100_sxm, o, core_count{1});
        },
        "limit (aicpu cores) = 1, expected an engine the chip has (no AI CPU cores of h100-sxm: "
        "place the op on the vector engine)"));
    CHECK(message_has(
        [] { (void)cost(chips::ascend910a, matmul(64, 64, 64, dtype::hf32), core_count{1}); },
        "dtype = hf32, expected a dtype the cube of ascend910a computes in ("));
    CHECK(message_has([] { (void)shape({1LL << 40, 1LL << 40}); }, "2^63 - 1: too large"));
    CHECK(message_has([] { (void)matmul(1LL << 32, 1LL << 32, 1LL << 32, dtype::fp16); },
                      "2^63 - 1): too large"));
    CHECK(message_has([] { (void)topk(1, 10, 20, dtype::fp16); }, "k = 20"));
    CHECK(message_has([] { (void)gather(10, 64_B, 10, dtype::fp16, {.hot_fraction = 1.5}); },
                      "hot_fraction = 1.5"));
    CHECK(message_has([] { (void)elementwise_broadcast(shape{3, 4}, shape{2, 4}, dtype::fp16); },
                      "broadcast-compatible"));
    model_params p;
    p.overlap = 1.5;
    CHECK(message_has([&] { (void)validate(p); }, "overlap = 1.5"));
}

// The 910B's vector unit has no bf16 arithmetic (chips/ascend.hpp, make_ascend): a bf16 op runs
// at the fp32 rate (64 lanes, half fp16's 128) and converts each bf16 element it reads or
// writes. Known answers on one work unit's cycles: a two-input bf16 Add of 16 elements (one
// 32-byte block) is 16 adds + 32 conversions in + 16 out = 64 fp32 operations, 1 cycle; fp16
// is 16 operations at 128 a cycle, 1/8 cycle. Exact up to rounding (1e-12 relative).
TEST_CASE("bf16 vector work runs in fp32 with its conversions on the 910B") {
    const std::int64_t n = std::int64_t{48} * 16 * 1024;  // 1024 blocks on each of 48 cores
    const elementwise_options add{.inputs = 2};
    const op_cost f16 = cost(b1, elementwise(n, dtype::fp16, add));
    const op_cost b16 = cost(b1, elementwise(n, dtype::bf16, add));
    const double cycles = 1024.0 * 64.0 / 64.0;  // units per core x ops per unit / rate
    const duration expected =
        cycle_count{cycles, units::cycle} / b1.vector.clock / model_params{}.vector_efficiency;
    CHECK(b16.compute.in(units::us) == doctest::Approx(expected.in(units::us)).epsilon(1e-12));
    CHECK(b16.compute.in(units::us) ==
          doctest::Approx(8.0 * f16.compute.in(units::us)).epsilon(1e-12));
    // A bf16 -> fp32 cast is the conversion itself: 16 conversions per block at the fp32 rate,
    // twice the fp16 -> fp32 cast's 16 at 128 a cycle, with no conversion added.
    const op_cost c_b16 = cost(b1, cast(n, dtype::bf16, dtype::fp32));
    const op_cost c_f16 = cost(b1, cast(n, dtype::fp16, dtype::fp32));
    CHECK(c_b16.compute.in(units::us) ==
          doctest::Approx(2.0 * c_f16.compute.in(units::us)).epsilon(1e-12));
    // An op that writes fp32 from bf16 inputs converts its inputs only: 16 ops + 16 in = 32.
    elementwise_options to_f32 = add;
    to_f32.inputs = 1;
    to_f32.out_same_as_in = false;
    to_f32.out_type = dtype::fp32;
    CHECK(cost(b1, elementwise(n, dtype::bf16, to_f32)).compute.in(units::us) ==
          doctest::Approx(expected.in(units::us) / 2.0).epsilon(1e-12));
    // An op that only moves data keeps the 16-bit rate and converts nothing. The factories give
    // moves no operations, so the check uses a hand-built one: a transpose given the Add's
    // work prices in bf16 as in fp16, while the same op as an elementwise one does not.
    const auto with_work = [&](op_kind k, dtype t) {
        op o = elementwise(n, t, add);
        o.kind = k;
        return cost(b1, o).compute;
    };
    CHECK(with_work(op_kind::transpose, dtype::bf16) == with_work(op_kind::transpose, dtype::fp16));
    CHECK(with_work(op_kind::elementwise, dtype::bf16).in(units::us) ==
          doctest::Approx(8.0 * with_work(op_kind::elementwise, dtype::fp16).in(units::us))
              .epsilon(1e-12));
    // An fp32 op writing bf16 converts its outputs down: per fp32 block (8 elements) 8 ops plus
    // 8 conversions, twice the 8 ops of the same op writing fp32.
    elementwise_options f32_to_b16{.inputs = 1, .out_same_as_in = false};
    f32_to_b16.out_type = dtype::bf16;
    elementwise_options f32_to_f32{.inputs = 1};
    CHECK(cost(b1, elementwise(n, dtype::fp32, f32_to_b16)).compute.in(units::us) ==
          doctest::Approx(2.0 *
                          cost(b1, elementwise(n, dtype::fp32, f32_to_f32)).compute.in(units::us))
              .epsilon(1e-12));
    // A GPU computes bf16 in bf16: the same compute as fp16.
    const chip& a100 = chips::a100_80gb_sxm;
    CHECK(cost(a100, elementwise(n, dtype::bf16, add)).compute ==
          cost(a100, elementwise(n, dtype::fp16, add)).compute);
}

TEST_CASE("a kernel that widens 16-bit data computes in fp32 with its conversions") {
    // One input, one output, 4 operations an element, 1024 blocks of 16 fp16 on each of 48 cores.
    const std::int64_t n = std::int64_t{48} * 16 * 1024;
    const elementwise_options one{.inputs = 1, .ops_per_element = 4};
    const op f16 = elementwise(n, dtype::fp16, one);
    op wide = f16;
    wide.fp32_arithmetic = true;
    // Per core: 16 Ki elements x (4 ops + 1 conversion in + 1 out) / 64 a cycle, against
    // 16 Ki x 4 / 128 in fp16: 3x.
    const double cycles = 16.0 * 1024 * (4 + 2) / 64.0;
    const duration expected =
        cycle_count{cycles, units::cycle} / b1.vector.clock / model_params{}.vector_efficiency;
    CHECK(cost(b1, wide).compute.in(units::us) ==
          doctest::Approx(expected.in(units::us)).epsilon(1e-12));
    CHECK(cost(b1, wide).compute.in(units::us) ==
          doctest::Approx(3.0 * cost(b1, f16).compute.in(units::us)).epsilon(1e-12));
    // bf16 data: the same (its arithmetic is fp32 on the 910B already, conversions included).
    op wide_b16 = elementwise(n, dtype::bf16, one);
    const duration b16 = cost(b1, wide_b16).compute;
    wide_b16.fp32_arithmetic = true;
    CHECK(cost(b1, wide_b16).compute == b16);
    CHECK(b16.in(units::us) == doctest::Approx(expected.in(units::us)).epsilon(1e-12));
    // fp32 data has nothing to widen; the memory side never changes.
    op wide_f32 = elementwise(n, dtype::fp32, one);
    const op_cost f32 = cost(b1, wide_f32);
    wide_f32.fp32_arithmetic = true;
    CHECK(cost(b1, wide_f32) == f32);
    CHECK(cost(b1, wide).memory == cost(b1, f16).memory);
    // Only where the chip's kernel library widens (engine_spec::widens_marked_kernels): every
    // Ascend preset, no GPU preset.
    CHECK(b1.vector.widens_marked_kernels);
    const chip& a100 = chips::a100_80gb_sxm;
    CHECK_FALSE(a100.vector.widens_marked_kernels);
    CHECK(cost(a100, wide) == cost(a100, f16));
}

TEST_CASE("an op of assumed operation counts runs the engine's uncounted_work times them") {
    // An elementwise op whose compute outweighs its memory (16 operations an element, fp16, 1024
    // blocks of 16 on each of 48 cores): marked uncounted, its compute is the engine's factor times
    // the count's, head and memory unchanged; on a chip whose factor is 1 (every GPU preset)
    // nothing changes.
    const std::int64_t n = std::int64_t{48} * 16 * 1024;
    const op counted = elementwise(n, dtype::fp16, {.inputs = 1, .ops_per_element = 16});
    op assumed = counted;
    assumed.uncounted = true;
    const double f = b1.vector.uncounted_work;
    CHECK(f == chips::ascend_uncounted_work);
    CHECK(f > 1.0);
    const op_cost a = cost(b1, assumed);
    const op_cost k = cost(b1, counted);
    // 16 Ki elements x 16 ops / 128 a cycle (fp16) on each core, at the vector efficiency.
    const duration by_hand = cycle_count{16.0 * 1024 * 16 / 128.0 * f, units::cycle} /
                             b1.vector.clock / model_params{}.vector_efficiency;
    CHECK(a.compute.in(units::us) == doctest::Approx(by_hand.in(units::us)).epsilon(1e-12));
    CHECK(a.compute.in(units::us) == doctest::Approx(f * k.compute.in(units::us)).epsilon(1e-12));
    CHECK(a.memory == k.memory);
    CHECK(a.head == k.head);
    CHECK(a.compute > a.memory);
    const chip& a100 = chips::a100_80gb_sxm;
    CHECK(a100.vector.uncounted_work == 1.0);
    CHECK(cost(a100, assumed) == cost(a100, counted));
    // A chip's own value, set by hand: 2x the work.
    chip twice = b1;
    twice.vector.uncounted_work = 2.0;
    CHECK(cost(twice, assumed).compute.in(units::us) ==
          doctest::Approx(2.0 * k.compute.in(units::us)).epsilon(1e-12));
}

}  // namespace test_cost
