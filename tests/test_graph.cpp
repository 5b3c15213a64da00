// graph.hpp: batch-sized nodes, the serial timeline, host bubbles (guide §3), transfers (guide §4).
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/link.hpp>
#include <perfcast/scenario.hpp>

#include <array>
#include <string>

#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_graph {

using namespace perfcast;
using perfcast::batch_symbol::B;

namespace {
constexpr const chip& b1 = chips::ascend910b1;
constexpr core_split split_12_24{core_count{12}, core_count{24}};

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const perfcast::error& e) {
        return e.what();
    }
    return "(no error)";
}
using perfcast_test::has;

// A host-bound model (guide §3): small ops, each launched by the host (40 us of host time,
// well above the few us each takes on the device).
constexpr duration host_time{40, units::us};
constexpr std::array<node, 7> host_bound{
    nodes::elementwise({B, 64}, dtype::fp16).host(host_time),
    nodes::elementwise({B, 64}, dtype::fp16, {.ops_per_element = 2}).host(host_time),
    nodes::matmul(B, 64, 64, dtype::fp16).host(host_time),
    nodes::elementwise({B, 64}, dtype::fp16, {.ops_per_element = 2}).host(host_time),
    nodes::matmul(B, 16, 64, dtype::fp16).host(host_time),
    nodes::reduce(B, 16, dtype::fp16).host(host_time),
    nodes::elementwise({B, 1}, dtype::fp16, {.inputs = 1, .ops_per_element = 4}).host(host_time),
};
}  // namespace

// ---- batch dimensions ------------------------------------------------------------------------
static_assert((B * 8).at(128) == 1024);
static_assert((B * 26 + 1).at(4) == 105);
static_assert((8 * B).per_batch == 8 && batch_dim{32}.fixed == 32);
static_assert(!batch_dim{0}.valid() && batch_dim{0, 1}.valid() && !batch_dim{-1, 5}.valid());
static_assert(batched_shape{B, 26}.depends_on_batch() && !batched_shape{1, 300}.depends_on_batch());
// Graph nodes are constexpr: the scenario's softmax at batch 16 is the op factory's.
static_assert(instantiate(nodes::softmax(8 * B, 300, dtype::fp32), 16) ==
              softmax(128, 300, dtype::fp32));
static_assert(batched_shape{B * 8, 300}.at(16) == shape{128, 300});

// ---- a node is the op.hpp op at every batch ------------------------------------------------
static_assert(instantiate(nodes::batch_matmul(B * 8, 1, 300, 32, dtype::fp16), 128) ==
              batch_matmul(1024, 1, 300, 32, dtype::fp16));
static_assert(instantiate(nodes::matmul(B, 1024, 1261, dtype::fp16), 64) ==
              matmul(64, 1024, 1261, dtype::fp16, {.broadcast_b = true}));
static_assert(instantiate(nodes::gather(B * 26, 32, 1000, dtype::fp16, {.hot_fraction = 0.5}),
                          10) ==
              gather(260, data_size{64, units::B}, 1000, dtype::fp16, {.hot_fraction = 0.5}));
static_assert(instantiate(nodes::tile({1, 300, 32}, {B * 8, 1, 1}, dtype::fp32), 128) ==
              tile(shape{1, 300, 32}, shape{1024, 1, 1}, dtype::fp32));
static_assert(instantiate(nodes::topk(B, 2000, 50, dtype::int32), 4).eng == engine::aicpu);
static_assert(instantiate(nodes::elementwise({B, 4}, dtype::fp16).on_aicpu(), 4).eng ==
              engine::aicpu);
static_assert(transfer_bytes(nodes::transfer({B, 26}, dtype::int64), 10) ==
              data_size{2080, units::B});

TEST_CASE("a node described once gives the op.hpp op at any batch") {
    const node n = nodes::batch_matmul(B * 8, 1, 300, 32, dtype::hf32, {.out_type = dtype::fp32});
    for (std::int64_t b : {1, 7, 16, 128, 512}) {
        CHECK(instantiate(n, b) ==
              batch_matmul(8 * b, 1, 300, 32, dtype::hf32, {.out_type = dtype::fp32}));
    }
    const node mm = nodes::matmul_shapes({B, 8, 1, 32}, {32, 300}, dtype::fp16);
    CHECK(mm.broadcast_b);
    CHECK(instantiate(mm, 16) ==
          batch_matmul(128, 1, 300, 32, dtype::fp16, {.broadcast_b = true}));
}

// ---- the serial timeline ---------------------------------------------------------------------
constexpr serial_result scenario_128 = serial_latency(b1, scenario::ctr_ranking, 128);
// Exactly the sum of its shares, by definition.
static_assert(scenario_128.latency ==
              scenario_128.device + scenario_128.aicpu + scenario_128.transfer +
                  scenario_128.bubbles);
static_assert(scenario_128.bubbles > duration{} && scenario_128.aicpu > duration{} &&
              scenario_128.transfer > duration{});

TEST_CASE("serial latency: shares add up, and a sunk graph is the sum of its op latencies") {
    const auto sunk = sink(scenario::ctr_ranking);
    for (std::int64_t b : {1, 16, 128, 512}) {
        const serial_result r = serial_latency(b1, sunk, b, split_12_24);
        CHECK(r.bubbles == duration{});
        CHECK(r.latency == r.device + r.aicpu + r.transfer + r.bubbles);
        // Op by op: device ops at their engine's limit, with what their place in the sequence
        // says about L2 (l2_sequence.hpp), transfers over the chip's link.
        duration device{}, aicpu{}, transfer{};
        const pcie_link link = link_of(b1);
        const std::vector<l2_context> contexts = l2_contexts(b1, sunk, b, {});
        for (std::size_t i = 0; i < sunk.size(); ++i) {
            const node& n = sunk[i];
            if (n.is_transfer()) {
                transfer += link.transfer_time(transfer_bytes(n, b));
                continue;
            }
            op o = instantiate(n, b);
            if (contexts[i].input_share >= 0) {
                o.l2_input_share = contexts[i].input_share;
                o.writes_reach_hbm = contexts[i].writes_reach_hbm;
            }
            const core_count k = o.eng == engine::cube     ? core_count{12}
                                 : o.eng == engine::vector ? core_count{24}
                                                           : core_count{b1.aicpu.cores};
            (o.eng == engine::aicpu ? aicpu : device) += cost(b1, o, k).latency;
        }
        // Same terms added in the same order: equal to the last bit.
        CHECK(r.device == device);
        CHECK(r.aicpu == aicpu);
        CHECK(r.transfer == transfer);
        CHECK(r.host_dispatched == 0);
    }
}

TEST_CASE("guide §3: host-bound model shows bubbles, sinking removes them, batch shrinks them") {
    const serial_result small = serial_latency(b1, host_bound, 1);
    // Every op's device time is below the 40 us host time, so the device waits between ops.
    for (const node& n : host_bound) {
        CHECK(evaluate_node(b1, n, batch_size{1}, all_cores(b1)).cost.latency < host_time);
    }
    CHECK(small.bubbles > duration{});
    CHECK(small.share(small.bubbles) > 0.5);  // host bound: most of the time is waiting
    CHECK(small.host == host_time * 7.0);
    // The host runs ahead: bubbles = host time of all ops - device time of all but the last
    // (device waits t_host - d_{i-1} before each op, and t_host before the first). Tolerance:
    // two sums of seven terms in a different order, 1e-12 relative.
    const duration last =
        evaluate_node(b1, host_bound.back(), batch_size{1}, all_cores(b1)).cost.latency;
    CHECK(small.bubbles.in(units::us) ==
          doctest::Approx((small.host - (small.device - last)).in(units::us)).epsilon(1e-12));

    // Sunk as a graph: no per-op dispatch, no bubbles.
    const serial_result sunk = serial_latency(b1, sink(host_bound), 1);
    CHECK(sunk.bubbles == duration{});
    CHECK(sunk.latency < small.latency);
    CHECK(sunk.device == small.device);

    // A larger batch makes ops longer: a smaller share of bubbles (guide §3: "larger batch").
    // Up to 2^20 samples ([2^20, 64] fp16 is 128 MiB per op: ops longer than the host time).
    double previous = 1.0;
    for (std::int64_t b : {1, 64, 4096, 65536, 1 << 20}) {
        const serial_result r = serial_latency(b1, host_bound, b);
        CHECK(r.share(r.bubbles) < previous);
        previous = r.share(r.bubbles);
    }
    CHECK(previous < 0.5 * small.share(small.bubbles));
}

TEST_CASE("a dynamic-shape op makes the host wait for it (guide §7 task_wait)") {
    // Two host ops; in the second model the first has a data-dependent output shape, so the
    // host cannot prepare op 2 until op 1 has run: a full host time of bubble before op 2.
    const node big = nodes::elementwise({B, 1 << 24}, dtype::fp32);  // 192 MiB: > 40 us
    const node small = nodes::elementwise({B, 64}, dtype::fp16);
    const std::array<node, 2> async{big.host(host_time), small.host(host_time)};
    const std::array<node, 2> sync{big.host(host_time).dynamic(), small.host(host_time)};
    CHECK(sync[0].mode == dispatch::host_sync);
    const serial_result a = serial_latency(b1, async, 1);
    const serial_result s = serial_latency(b1, sync, 1);
    const duration d0 = evaluate_node(b1, big, batch_size{1}, all_cores(b1)).cost.latency;
    REQUIRE(d0 > host_time);  // the host would have been ready in time
    CHECK(a.bubbles == host_time);  // only before the first op
    // Exact in real numbers; the timeline adds and subtracts the ops' latencies, so the doubles
    // agree to rounding only (1e-12 relative: the sums are of a few terms of 1-100 us).
    CHECK(s.bubbles.in(units::us) ==
          doctest::Approx((host_time + host_time).in(units::us)).epsilon(1e-12));
    CHECK((s.latency - a.latency).in(units::us) ==
          doctest::Approx(host_time.in(units::us)).epsilon(1e-12));
}

TEST_CASE("transfers: input and output copies over the chip's PCIe link (guide §4)") {
    const std::array<node, 2> m{nodes::transfer({B, 26}, dtype::int64),
                                nodes::transfer({B}, dtype::fp32, transfer_dir::to_host)};
    const serial_result r = serial_latency(b1, m, 100);
    const pcie_link l = link_of(b1);
    CHECK(r.transfer == l.transfer_time(data_size{100 * 26 * 8, units::B}) +
                            l.transfer_time(data_size{100 * 4, units::B}));
    CHECK(r.latency == r.transfer);
    CHECK(r.device_ops == 0);
    // A slower link (the chip default is PCIe 5.0 x16): PCIe 3.0 x4 takes longer.
    graph_params slow;
    slow.link = pcie_link{3, 4};
    CHECK(serial_latency(b1, m, 100, slow).transfer > r.transfer);
}

TEST_CASE("a core split slows one stream of the scenario (guide §12: single-stream latency)") {
    for (std::int64_t b : {128, 256}) {
        CHECK(serial_latency(b1, scenario::ctr_ranking, b, split_12_24).latency >
              serial_latency(b1, scenario::ctr_ranking, b).latency);
    }
}

TEST_CASE("graph errors name the field and the value") {
    CHECK(has(error_of([] { (void)serial_latency(b1, host_bound, 0); }), "batch = 0"));
    CHECK(has(error_of([] {
                  (void)serial_latency(b1, host_bound, 1, {core_count{25}, core_count{48}});
              }),
              "cube = 25, expected no more than the chip's cube cores (24 on ascend910b1)"));
    // A chip of no cores (default-constructed) is named as such: the split is not the problem.
    CHECK(has(error_of([] {
                  (void)serial_latency(chip{}, host_bound, 1, {core_count{1}, core_count{1}});
              }),
              "expected no more than the chip's cube cores (0 on an unnamed chip)"));
    CHECK(has(error_of([] {
              (void)serial_latency(b1, host_bound, 1, {core_count{24}, core_count{0}});
          }),
          "vector = 0"));
    CHECK(has(error_of([] { (void)nodes::reduce(B * 0, 4, dtype::fp16); }), "rows"));
    CHECK(has(error_of([] { (void)nodes::softmax(B * 0, 4, dtype::fp16); }), "nodes::softmax"));
    CHECK(has(error_of([] { (void)nodes::softmax(B, 0, dtype::fp16); }), "length"));
    CHECK(has(error_of([] { (void)nodes::elementwise({B, 4}, dtype::fp16).host(-1 * host_time); }),
              "host_time"));
    // An op that is invalid at some batch only: the message names the node and the batch.
    const std::array<node, 1> m{nodes::topk(B, 1000, 50, dtype::fp32).named("topk_b")};
    const std::string e = error_of([&] { (void)serial_latency(b1, m, 1, all_cores(b1)); });
    CHECK(e == "(no error)");
    const std::array<node, 1> m2{nodes::topk(1, B, 50, dtype::fp32).named("topk_over_batch")};
    const std::string e2 = error_of([&] { (void)serial_latency(b1, m2, 16, all_cores(b1)); });
    CHECK(has(e2, "k = 50"));
    CHECK(has(e2, "node 'topk_over_batch' at batch 16"));
}

// ---- the inference's order and L2 (l2_sequence.hpp) ------------------------------------------
namespace {
// cost.hpp's resident part of the chip's L2: the window of l2_sequence.hpp.
data_size window_of(const chip& c) {
    return l2_resident_size(c.memory) * model_params{}.l2_resident_share;
}
constexpr graph_params size_rule{.l2_sequence = false};

// Indices copied in, then a lookup of 64 fp16 elements a row.
constexpr std::array<node, 2> lookup(std::int64_t table_rows) {
    return {nodes::transfer({B}, dtype::int32),
            nodes::gather(B, 64, table_rows, dtype::fp16, {.hot_fraction = 0.25})};
}
// A tensor of 2^20 fp16 elements a sample copied in, then three one-input elementwise ops.
constexpr std::array<node, 4> chain{
    nodes::transfer({B, 1 << 20}, dtype::fp16),
    nodes::elementwise({B, 1 << 20}, dtype::fp16, {.inputs = 1}),
    nodes::elementwise({B, 1 << 20}, dtype::fp16, {.inputs = 1, .ops_per_element = 2}),
    nodes::elementwise({B, 1 << 20}, dtype::fp16, {.inputs = 1}),
};
// A convolution whose 18.9 MB of weights fit in the 910B1's window beside its small activations.
constexpr std::array<node, 2> conv_net{
    nodes::conv({B, 1024, 4, 4}, {1024, 1024, 3, 3}, dtype::fp16),
    nodes::elementwise({B, 1024, 4, 4}, dtype::fp16, {.inputs = 1}),
};
}  // namespace

// In a constant expression the contexts come from the same walk: one of the chain's ops at batch
// 64 (an inference of 0.9 GB: its writes reach HBM), checked against the run-time walk below.
constexpr l2_context chain_64_op2 = l2_context_at(chips::ascend910b1, chain, batch_size{64}, {}, 2);
static_assert(chain_64_op2.input_share == 1.0 && chain_64_op2.writes_reach_hbm);
constexpr serial_result chain_64 = serial_latency(chips::ascend910b1, chain, 64);
static_assert(l2_context_at(chips::ascend910b1, chain, batch_size{1}, {}, 0).input_share < 0);
static_assert(
    !l2_context_at(chips::ascend910b1, host_bound, batch_size{16}, {}, 0).writes_reach_hbm);

TEST_CASE("l2 sequence: a model whose inference fits in L2 is priced as the size rule prices it") {
    // host_bound at batch 16 has a working set of a few KB, conv_net at batch 8 about 19 MB of
    // the 910B1's 192 MiB L2, a reduction over an uncopied input of 512 MB at batch 8 one of
    // 128 KB (its input is no buffer of the inference): the buffers stay in L2 from one
    // inference to the next, no op gets a context, and every op costs what cost.hpp's size rule
    // gives it alone (which sends the 512 MB read to HBM).
    const std::array<node, 1> big_input{nodes::reduce(B * 4096, 8192, dtype::fp16)};
    for (const l2_context& x : l2_contexts(b1, host_bound, 16, {})) CHECK(x == l2_context{});
    for (const l2_context& x : l2_contexts(b1, conv_net, 8, {})) CHECK(x == l2_context{});
    CHECK(l2_contexts(b1, big_input, 8, {})[0] == l2_context{});
    CHECK(serial_latency(b1, host_bound, 16).latency ==
          serial_latency(b1, host_bound, 16, size_rule).latency);
    CHECK(serial_latency(b1, conv_net, 8).latency ==
          serial_latency(b1, conv_net, 8, size_rule).latency);
    CHECK(serial_latency(b1, big_input, 8).latency ==
          serial_latency(b1, big_input, 8, size_rule).latency);
    // The constant-expression walk gives the run-time one's contexts, and the constant-expression
    // serial latency (its contexts in an array, one walk) the run-time one (a vector).
    CHECK(chain_64_op2 == l2_contexts(b1, chain, 64, {})[2]);
    CHECK(chain_64.latency == serial_latency(b1, chain, 64).latency);
    CHECK(chain_64.device == serial_latency(b1, chain, 64).device);
    // With the sequence off, no context at all.
    for (const l2_context& x : l2_contexts(b1, chain, 64, size_rule)) CHECK(x == l2_context{});
}

TEST_CASE("l2 sequence: a lookup's rows come from HBM unless they are hot or the table fits") {
    constexpr std::int64_t batch = 1 << 20;  // 4 MiB of indices, 128 MiB of rows
    const auto big = lookup(20'000'000);     // 2.56 GB of table, far past the window
    REQUIRE(data_size{20'000'000.0 * 128, units::B} > window_of(b1));
    const op g = instantiate(big[1], batch);
    const data_size rows = g.bytes_written;  // the rows read are the rows written
    // The indices were just copied in (found); of the rows, the hot quarter is found.
    const l2_context x = l2_contexts(b1, big, batch, {})[1];
    CHECK(x.input_share ==
          doctest::Approx((g.bytes_read - rows + rows * 0.25) / g.bytes_read).epsilon(1e-12));
    // Against the size rule (the 132 MiB read fit in the 173 MB window: all found), slower.
    CHECK(serial_latency(b1, big, batch).latency >
          serial_latency(b1, big, batch, size_rule).latency);
    // A table that fits beside the rest of the inference is found whole; a transfer gets no
    // context (cost.hpp does not price it).
    CHECK(l2_contexts(b1, lookup(1000), 1024, {})[1].input_share == 1.0);
    CHECK(l2_contexts(b1, big, batch, {})[0].input_share < 0);
}

TEST_CASE("l2 sequence: writes reach HBM once an inference that does not fit in L2") {
    constexpr std::int64_t batch = 64;  // 128 MiB a tensor, 0.9 GB an inference
    const std::vector<l2_context> ctx = l2_contexts(b1, chain, batch, {});
    const model_params mp{};
    for (std::size_t i = 1; i < chain.size(); ++i) {
        INFO("op " << i);
        // Each reads the output just before it: found (the traffic since is 0, its reads fit).
        CHECK(ctx[i].input_share == 1.0);
        CHECK(ctx[i].writes_reach_hbm);
        // So its memory time is at least its writes at HBM speed (its reads are found, so its HBM
        // traffic is writes alone, which the mix cost does not weigh), which the size rule, under
        // which 128 MiB of writes stayed in the window, did not charge: slower than under the
        // size rule.
        const op o = instantiate(chain[i], batch);
        const node_eval e =
            evaluate_node(b1, chain[i], batch_size{batch}, all_cores(b1), {}, ctx[i]);
        const duration hbm_floor = o.bytes_written / (b1.memory.hbm_bandwidth * mp.hbm_efficiency);
        CHECK(e.cost.memory.in(units::us) >= hbm_floor.in(units::us) * (1 - 1e-12));
        CHECK(e.cost.latency >
              evaluate_node(b1, chain[i], batch_size{batch}, all_cores(b1)).cost.latency);
    }
    // A larger L2 that holds the whole inference: nothing reaches HBM.
    chip big_l2 = b1;
    big_l2.memory.l2_size = b1.memory.l2_size * 8.0;
    for (const l2_context& x : l2_contexts(big_l2, chain, batch, {})) {
        if (x.input_share >= 0) CHECK(!x.writes_reach_hbm);
    }
}

}  // namespace test_graph
