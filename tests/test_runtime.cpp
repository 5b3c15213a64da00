// runtime.hpp and its use in card.hpp: the host and runtime path of one inference task, closed
// loops, host threads and the device-wide lock shared by instances.
#include <doctest/doctest.h>

#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/runtime.hpp>
#include <perfcast/scenario.hpp>

#include <array>
#include <string>
#include <vector>

#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_runtime {

using namespace perfcast;
using namespace perfcast::literals;
using perfcast::batch_symbol::B;
using perfcast_test::message_of;

namespace {
constexpr const chip& b1 = chips::ascend910b1;
constexpr core_split full{core_count{24}, core_count{48}};
constexpr core_split half{core_count{12}, core_count{24}};

using perfcast_test::has;

/// A small model: three inputs, two kernels, one output (the transfers at the ends, where the
/// runtime path puts them).
const std::vector<node> small_model{
    nodes::transfer({B, 26}, dtype::int64),
    nodes::transfer({B, 13}, dtype::fp32),
    nodes::transfer({B, 1}, dtype::int32),
    nodes::matmul(B, 256, 512, dtype::fp16),
    nodes::elementwise({B, 256}, dtype::fp16),
    nodes::transfer({B}, dtype::fp32, transfer_dir::to_host),
};

card_params with_runtime(const runtime_path& r, int host_threads = 0) {
    card_params p;
    p.runtime = r;
    p.host_threads = host_threads;
    return p;
}
}  // namespace

// ---- the steps of one task, by hand ------------------------------------------------------------

TEST_CASE("runtime_steps: each step as the file header states it, computed by hand") {
    runtime_path r;
    r.memory = host_memory::pageable;
    r.buffers = buffer_policy::per_task;
    r.prepare = 5_us;
    r.buffer = 10_us;
    r.copy_setup = 8_us;
    r.pageable_setup = 20_us;
    r.pageable_rate = 0.5;
    r.graph_launch = 30_us;
    r.sync = 10_us;
    r.post = 3_us;
    r.between = 7_us;
    const copy_set in{3, data_size{3.0, units::MB}};
    const copy_set out{1, data_size{1.0, units::MB}};
    const bandwidth link = bandwidth{10.0, units::GBps};
    const task_times t = runtime_steps(r, in, out, 99_us, link);
    // Pageable: 8 + 20 us per copy, 5 GB/s. Three copies in (3 x 28 us + 3 MB / 5 GB/s = 600 us).
    CHECK(approx_equal(t.copy_in, duration{3 * 28.0 + 600.0, units::us}, 1e-12));
    CHECK(approx_equal(t.copy_out, duration{28.0 + 200.0, units::us}, 1e-12));
    CHECK(t.buffers == 40_us);  // 3 inputs + 1 output, 10 us each, nobody else at the lock
    CHECK(t.buffers_made == 4);
    CHECK(t.copies == 4);
    CHECK(t.launch == 30_us);
    CHECK(t.prepare == 5_us);
    CHECK(t.sync == 10_us);
    CHECK(t.post == 3_us);
    CHECK(t.between == 7_us);
    CHECK(t.lock_held == 40_us);
    CHECK(t.lock_wait == duration{});
    // The task excludes `between`; the cycle includes it; device is the caller's (0 here).
    CHECK(approx_equal(t.task(), duration{5 + 40 + 684 + 30 + 10 + 228 + 3, units::us}, 1e-12));
    CHECK(approx_equal(t.cycle(), t.task() + 7_us, 1e-12));
    CHECK(approx_equal(t.in(step_set::execute()), 40_us, 1e-12));  // launch + device + sync
    // Host work: prepare, launch, sync, post, between, the copy setups and the buffer calls.
    CHECK(approx_equal(t.host_work, duration{5 + 30 + 10 + 3 + 7 + 4 * 28 + 40, units::us}, 1e-12));
    CHECK(t.host_busy == t.host_work);  // nobody shares the host

    SUBCASE("pinned memory: no staging cost, the full link rate") {
        r.memory = host_memory::pinned;
        const task_times p = runtime_steps(r, in, out, 99_us, link);
        CHECK(approx_equal(p.copy_in, duration{3 * 8.0 + 300.0, units::us}, 1e-12));
    }
    SUBCASE("unset copy_setup is the link's per-transfer cost") {
        r.copy_setup.reset();
        r.memory = host_memory::pinned;
        const task_times p = runtime_steps(r, in, out, 99_us, link);
        CHECK(approx_equal(p.copy_out, duration{99.0 + 100.0, units::us}, 1e-12));
    }
    SUBCASE("aggregated: one copy and one buffer for the inputs, packed on the host first") {
        r.copies = copy_policy::aggregated;
        const task_times a = runtime_steps(r, in, out, 99_us, link);
        // pack: 3 MB at 10 GB/s = 300 us; one 28 us setup; 600 us streaming.
        CHECK(approx_equal(a.copy_in, duration{28.0 + 600.0 + 300.0, units::us}, 1e-12));
        CHECK(a.buffers_made == 2);
        CHECK(a.copies == 2);
        CHECK(a.buffers == 20_us);
        // A faster host memcpy makes aggregation pay: 2 x 28 us of setups saved, 30 us packing.
        r.pack_rate = bandwidth{100.0, units::GBps};
        const task_times f = runtime_steps(r, in, out, 99_us, link);
        CHECK(f.copy_in + f.buffers < t.copy_in + t.buffers);
    }
    SUBCASE("a buffer pool: no buffer step, nothing at the lock") {
        r.buffers = buffer_policy::pool;
        const task_times p = runtime_steps(r, in, out, 99_us, link);
        CHECK(p.buffers == duration{});
        CHECK(p.buffers_made == 0);
        CHECK(p.lock_held == duration{});
    }
    SUBCASE("dynamic shapes add shape inference to the launch; per-op launch has no graph call") {
        r.shapes = shape_mode::dynamic_shapes;
        r.dynamic_shape = 100_us;
        CHECK(runtime_steps(r, in, out, 99_us, link).launch == 130_us);
        r.launch = launch_mode::per_op;
        CHECK(runtime_steps(r, in, out, 99_us, link).launch == 100_us);
    }
    SUBCASE("contention: host steps stretch, the lock makes the others' presence a wait") {
        runtime_contention k;
        k.host_stretch = 2.0;
        k.lock_others = 1.5;
        k.link_in_stretch = 1.25;
        const task_times c = runtime_steps(r, in, out, 99_us, link, k);
        CHECK(c.prepare == 10_us);
        CHECK(c.post == 6_us);
        // A buffer call runs on the host (x 2) and waits for 1.5 others at the lock (x 2.5).
        CHECK(approx_equal(c.buffers, duration{40.0 * 2 * 2.5, units::us}, 1e-12));
        CHECK(approx_equal(c.lock_wait, duration{40.0 * 2 * 1.5, units::us}, 1e-12));
        CHECK(approx_equal(c.copy_in, duration{3 * 28.0 * 2 + 600.0 * 1.25, units::us}, 1e-12));
        CHECK(c.host_work == t.host_work);  // the work is the same; it takes longer
        CHECK(approx_equal(c.host_busy, t.host_work * 2.0, 1e-12));
        r.copies_locked = true;
        const task_times l = runtime_steps(r, in, out, 99_us, link, k);
        CHECK(approx_equal(l.copy_in, duration{3 * 28.0 * 2 * 2.5 + 600.0 * 1.25, units::us},
                           1e-12));
        CHECK(approx_equal(l.lock_held, duration{(40.0 + 4 * 28.0) * 2 * 2.5, units::us}, 1e-12));
    }
}

TEST_CASE("runtime_steps is constexpr") {
    constexpr runtime_path r{.buffers = buffer_policy::per_task, .buffer = duration{10.0, units::us}};
    constexpr task_times t = runtime_steps(r, copy_set{2, data_size{}}, copy_set{1, data_size{}},
                                           duration{8.0, units::us}, bandwidth{1.0, units::GBps});
    static_assert(t.buffers == duration{30.0, units::us});
    static_assert(t.copy_in == duration{16.0, units::us});
    CHECK(t.copies == 3);
}

// ---- in card.hpp -------------------------------------------------------------------------------

TEST_CASE("a neutral runtime path changes nothing when the copies sit at the ends of the model") {
    const card_result plain = evaluate_card(b1, small_model, batch_size{64}, stream_count{1}, full);
    const card_result neutral =
        evaluate_card(b1, small_model, batch_size{64}, stream_count{1}, full, with_runtime({}));
    CHECK(neutral.runtime_path);
    CHECK(!plain.runtime_path);
    // The same terms summed in another order: equal to rounding (1e-12 relative).
    CHECK(approx_equal(neutral.avg_latency, plain.avg_latency, 1e-12));
    CHECK(approx_equal(neutral.instances()[0].transfer, plain.instances()[0].transfer, 1e-12));
    CHECK(approx_equal(neutral.qps, plain.qps, 1e-12));
    CHECK(neutral.instances()[0].steps.copies == 4);
    // Without a runtime path every figure is the latency.
    CHECK(plain.avg_window == plain.avg_latency);
    CHECK(plain.avg_cycle == plain.avg_latency);
}

TEST_CASE("the task's steps add up to its latency; the window and the cycle as defined") {
    runtime_path r = runtime_presets::acl;
    r.prepare = 50_us;
    r.between = 200_us;
    r.window = step_set::execute();
    const card_result c =
        evaluate_card(b1, small_model, batch_size{64}, stream_count{1}, full, with_runtime(r));
    const instance_result& i = c.instances()[0];
    const task_times& t = i.steps;
    CHECK(i.latency == t.task());
    CHECK(approx_equal(i.latency, t.prepare + t.buffers + t.copy_in + t.launch + t.device + t.sync +
                                      t.copy_out + t.post,
                       1e-12));
    CHECK(i.window == t.launch + t.device + t.sync);
    CHECK(i.cycle == i.latency + 200_us);
    // One instance alone: the device step is its serial kernel latency (transfers excluded).
    const std::vector<node> kernels(small_model.begin() + 3, small_model.end() - 1);
    CHECK(approx_equal(t.device, serial_latency(b1, kernels, 64, full).latency, 1e-12));
    // Closed loop: one task per cycle.
    CHECK(approx_equal(c.qps, 1000.0 / i.cycle.in(units::ms), 1e-12));
    CHECK(approx_equal(c.throughput, c.qps * 64, 1e-12));
    CHECK(c.avg_window == i.window);
    CHECK(c.window == step_set::execute());
    // The runtime path dominates this small model: more than half of the task is outside the
    // kernels, so the card is host- or link-bound.
    CHECK(t.device < 0.5 * i.latency);
    CHECK((c.bound == card_bound::host || c.bound == card_bound::link));
}

TEST_CASE("aggregated copies and a buffer pool each shorten a many-input task") {
    std::vector<node> m;
    for (int k = 0; k < 40; ++k) m.push_back(nodes::transfer({B, 8}, dtype::int64));
    m.push_back(nodes::matmul(B, 64, 320, dtype::fp16));
    m.push_back(nodes::transfer({B}, dtype::fp32, transfer_dir::to_host));
    const runtime_path base = runtime_presets::acl;
    runtime_path agg = base;
    agg.copies = copy_policy::aggregated;
    runtime_path pool = base;
    pool.buffers = buffer_policy::pool;
    const duration l0 =
        evaluate_card(b1, m, batch_size{16}, stream_count{1}, full, with_runtime(base)).avg_latency;
    const duration la =
        evaluate_card(b1, m, batch_size{16}, stream_count{1}, full, with_runtime(agg)).avg_latency;
    const duration lp =
        evaluate_card(b1, m, batch_size{16}, stream_count{1}, full, with_runtime(pool)).avg_latency;
    // 40 inputs: aggregation saves 39 copy setups (28 us each pageable) and 39 buffers (10 us).
    CHECK(l0 - la > duration{39 * 38.0 * 0.95, units::us});
    // The pool saves the 41 buffers exactly (one task alone: no wait at the lock).
    CHECK(approx_equal(l0 - lp, duration{41 * 10.0, units::us}, 1e-9));
}

TEST_CASE("host threads shared by instances: more instances than threads slow every one") {
    runtime_path r = runtime_presets::acl;
    r.prepare = 400_us;  // a host-heavy task
    r.post = 100_us;
    const card_result own =
        evaluate_card(b1, small_model, batch_size{16}, stream_count{4}, half, with_runtime(r, 0));
    const card_result two =
        evaluate_card(b1, small_model, batch_size{16}, stream_count{4}, half, with_runtime(r, 2));
    const card_result one =
        evaluate_card(b1, small_model, batch_size{16}, stream_count{4}, half, with_runtime(r, 1));
    CHECK(own.converged);
    CHECK(two.converged);
    CHECK(one.converged);
    CHECK(two.avg_latency > own.avg_latency);
    CHECK(one.avg_latency > two.avg_latency);
    // One thread serves at most one second of host work per second: the tasks per second stay
    // at or below 1 / (host work per task), whatever the instance count (5 % for the mean field).
    const double host_per_task = own.instances()[0].steps.host_work.in(units::s);
    CHECK(one.qps <= 1.05 / host_per_task);
    CHECK(one.host_utilization <= 1.05);
}

TEST_CASE("the device-wide lock: buffer calls of every instance queue at one server") {
    runtime_path r;
    r.buffers = buffer_policy::per_task;
    r.buffer = 100_us;  // 4 buffers: 400 us at the lock per task, far more than the kernels
    for (int s : {1, 2, 4, 8}) {
        CAPTURE(s);
        const card_result c =
            evaluate_card(b1, small_model, batch_size{8}, stream_count{s},
                          core_split{core_count{3}, core_count{6}}, with_runtime(r));
        CHECK(c.converged);
        // The lock serves at most 1 / 400 us tasks per second. The mean field gives the
        // queueing approximately: at most 5 % above, and near it once 8 instances crowd it.
        CHECK(c.qps <= 1.05 / 400e-6);
        if (s == 8) CHECK(c.qps >= 0.85 / 400e-6);
        if (s > 1) CHECK(c.instances()[0].steps.lock_wait > duration{});
    }
}

TEST_CASE("a closed loop's between-task work lowers throughput, not the reported latency") {
    runtime_path r = runtime_presets::acl;
    runtime_path gap = r;
    gap.between = 1_ms;
    const card_result a =
        evaluate_card(b1, small_model, batch_size{32}, stream_count{2}, half, with_runtime(r));
    const card_result b =
        evaluate_card(b1, small_model, batch_size{32}, stream_count{2}, half, with_runtime(gap));
    CHECK(b.qps < a.qps);
    CHECK(approx_equal(b.avg_cycle, b.avg_latency + 1_ms, 1e-9));
    // Latency only moves through what the instances share (less contention with the gap).
    CHECK(b.avg_latency <= a.avg_latency);
}

TEST_CASE("per-op launch: the host dispatches every kernel and the device waits for it") {
    runtime_path r;
    r.launch = launch_mode::per_op;
    const card_result c =
        evaluate_card(b1, small_model, batch_size{1}, stream_count{1}, full, with_runtime(r));
    // Two tiny kernels at batch 1, each shorter than the 20 us host dispatch: bubbles.
    CHECK(c.instances()[0].bubbles > duration{});
    CHECK(c.instances()[0].bubbles >= 20_us);
    runtime_path g;
    const card_result s =
        evaluate_card(b1, small_model, batch_size{1}, stream_count{1}, full, with_runtime(g));
    CHECK(s.instances()[0].bubbles == duration{});
}

// ---- settings by key -----------------------------------------------------------------------

TEST_CASE("runtime settings: every key sets its field; bad keys and values name themselves") {
    runtime_path r;
    apply_runtime_setting(r, "copies", "aggregated");
    apply_runtime_setting(r, "memory", "pageable");
    apply_runtime_setting(r, "buffers", "per-task");
    apply_runtime_setting(r, "launch", "per-op");
    apply_runtime_setting(r, "shapes", "dynamic");
    apply_runtime_setting(r, "window", "copy_in+device");
    apply_runtime_setting(r, "prepare_us", "1");
    apply_runtime_setting(r, "buffer_us", "2");
    apply_runtime_setting(r, "copy_setup_us", "3");
    apply_runtime_setting(r, "pageable_setup_us", "4");
    apply_runtime_setting(r, "pageable_rate", "0.25");
    apply_runtime_setting(r, "pack_GBps", "6");
    apply_runtime_setting(r, "launch_us", "7");
    apply_runtime_setting(r, "dynamic_shape_us", "8");
    apply_runtime_setting(r, "sync_us", "9");
    apply_runtime_setting(r, "post_us", "10");
    apply_runtime_setting(r, "between_us", "11");
    CHECK(r.copies == copy_policy::aggregated);
    CHECK(r.memory == host_memory::pageable);
    CHECK(r.buffers == buffer_policy::per_task);
    CHECK(r.launch == launch_mode::per_op);
    CHECK(r.shapes == shape_mode::dynamic_shapes);
    CHECK(r.window == step_set{}.with(task_step::copy_in).with(task_step::device));
    CHECK(r.prepare == 1_us);
    CHECK(r.buffer == 2_us);
    CHECK(r.copy_setup == 3_us);
    CHECK(r.pageable_setup == 4_us);
    CHECK(r.pageable_rate == 0.25);
    CHECK(r.pack_rate == bandwidth{6.0, units::GBps});
    CHECK(r.graph_launch == 7_us);
    CHECK(r.dynamic_shape == 8_us);
    CHECK(r.sync == 9_us);
    CHECK(r.post == 10_us);
    CHECK(r.between == 11_us);
    CHECK_FALSE(r.copies_locked);
    apply_runtime_setting(r, "copy_lock", "yes");
    CHECK(r.copies_locked);
    CHECK(has(message_of([&] { apply_runtime_setting(r, "copy_lock", "maybe"); }),
              "copy_lock = maybe, expected no or yes"));
    CHECK(runtime_keys.size() == 19);  // a new key is a new row here and a line above

    CHECK(has(message_of([&] { apply_runtime_setting(r, "copy", "aggregated"); }),
              "key = copy, expected one of copies, memory"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "copies", "gathered"); }),
              "copies = gathered, expected per-tensor or aggregated"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "sync_us", "-3"); }),
              "sync_us = -3, expected a time in [0, 6e7] us"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "sync_us", "fast"); }),
              "sync_us = fast, expected a time in us"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "pageable_rate", "1.5"); }),
              "pageable_rate = 1.5, expected a share in (0, 1]"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "window", "device+"); }),
              "window = device+, expected task, runtime-calls, execute, or steps"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "launch_us", "1e300"); }),
              "launch_us = 1e+300, expected a time in [0, 6e7] us"));
    // A key that also takes a word names it.
    CHECK(has(message_of([&] { apply_runtime_setting(r, "op_launch_us", "chips"); }),
              "op_launch_us = chips, expected a time in us, >= 0, or 'chip'"));
    CHECK(has(message_of([&] { apply_runtime_setting(r, "copy_setup_us", "pcie"); }),
              "copy_setup_us = pcie, expected a time in us, >= 0, or 'link'"));
}

TEST_CASE("windows by name and by steps; presets by name") {
    CHECK(parse_step_set("task") == step_set::task());
    CHECK(parse_step_set("execute") == step_set::execute());
    CHECK(parse_step_set("runtime-calls") == step_set::runtime_calls());
    CHECK(parse_step_set("launch+device+sync") == step_set::execute());
    CHECK(!parse_step_set(""));
    CHECK(!parse_step_set("device++sync"));
    CHECK(!parse_step_set("gpu"));
    CHECK(name_of(step_set::execute()) == "execute");
    CHECK(name_of(step_set{}.with(task_step::copy_in).with(task_step::post)) == "copy_in+post");
    CHECK(runtime_preset("acl") == runtime_presets::acl);
    CHECK(runtime_preset("cuda") == runtime_presets::cuda);
    CHECK(!runtime_preset("none"));
    CHECK(has(message_of([] { (void)runtime_preset("tensorrt"); }),
              "name = tensorrt, expected none, acl or cuda"));
    CHECK(has(message_of([] {
              card_params p;
              p.runtime = runtime_path{};
              p.runtime->pageable_rate = 0;
              (void)evaluate_card(b1, small_model, batch_size{1}, stream_count{1}, full, p);
          }),
          "pageable_rate = 0"));
}

TEST_CASE("the preset a run takes: the one given, else the model's line's, else none") {
    model m{.name = "m", .nodes = {}};
    CHECK(runtime_preset_of(nullptr, "") == "none");
    CHECK(runtime_preset_of(nullptr, "cuda") == "cuda");
    CHECK(runtime_preset_of(&m, "") == "none");
    m.runtime = runtime_spec{.preset = "", .settings = {{"sync_us", "5", "m.model:2:9"}}};
    CHECK(runtime_preset_of(&m, "") == "none");  // settings alone go over none
    m.runtime->preset = "acl";
    CHECK(runtime_preset_of(&m, "") == "acl");
    CHECK(runtime_preset_of(&m, "cuda") == "cuda");  // the flag or row wins
}

}  // namespace test_runtime
