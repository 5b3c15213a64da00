// deployment.hpp and io/deployments_file.hpp: measured deployments, the runtime-path fit, the
// hold-out scores and the rows file's errors.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/deployment.hpp>
#include <perfcast/deployment_gains.hpp>
#include <perfcast/io/deployments_file.hpp>
#include <perfcast/io/model_file.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_deployment {

using namespace perfcast;

namespace {

// A small CTR-like model: 26 + 1 input tensors, a few kernels, one output.
constexpr std::string_view small_model_text = R"(name small_ctr
transfer    B,26        int64  name=ids
transfer    B,13        fp32   name=dense
transfer    B,1         int32  name=label
matmul      B,256;256,512 fp16 name=fc1
elementwise B,512       fp16   name=relu
matmul      B,512;512,256 fp16 name=fc2
elementwise B,256       fp16   name=act
transfer    B           fp32   dir=out name=scores
)";

std::shared_ptr<const model> small_model() {
    static const auto m = std::make_shared<const model>(io::parse_model(small_model_text, "m"));
    return m;
}

/// The small model on a 910B1: `instances` x cube/vector cores at `batch`, under `runtime`.
deployment_case small_case(int instances, int cube, int vector, std::int64_t batch,
                           std::string runtime = "acl") {
    deployment_case d;
    d.c = chips::ascend910b1;
    d.m = small_model();
    d.instances = stream_count{instances};
    d.split = {core_count{cube}, core_count{vector}};
    d.batch = batch_size{batch};
    d.runtime = std::move(runtime);
    return d;
}

/// Rows that vary what each knob affects: batch, instances, copies, launch mode.
std::vector<deployment_case> synthetic_rows() {
    std::vector<deployment_case> rows;
    const chip& c = chips::ascend910b1;
    int line = 1;
    for (int inst : {1, 2, 4}) {
        for (std::int64_t batch : {16, 4096}) {
            for (std::string_view copies : {"per-tensor", "aggregated"}) {
                deployment_case d;
                d.c = c;
                d.m = small_model();
                d.instances = stream_count{inst};
                d.split = {core_count{24 / inst}, core_count{48 / inst}};
                d.batch = batch_size{batch};
                d.runtime = "acl";
                d.settings = {{"copies", std::string(copies), ""}};
                d.origin = "synthetic:" + std::to_string(++line);
                rows.push_back(d);
            }
        }
    }
    return rows;
}

/// The truth the rows are generated from.
profile::calibration truth() {
    profile::calibration cal;
    set_knob(cal, "pageable_setup_us", 31.0);
    set_knob(cal, "launch_us", 55.0);
    set_knob(cal, "between_us", 40.0);
    set_knob(cal, "cube_efficiency", 0.7);
    return cal;
}

/// Fills each row's measurements with the model's answer under `cal`, times (1 + noise).
void measure(std::vector<deployment_case>& rows, const profile::calibration& cal, double noise,
             unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> n(0.0, noise);
    for (deployment_case& d : rows) {
        const deployment_prediction p = predict(d, cal);
        d.samples_per_s = p.samples_per_s * (1 + (noise > 0 ? n(rng) : 0.0));
        d.latency = p.latency * (1 + (noise > 0 ? n(rng) : 0.0));
    }
}

std::string message_of(auto&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

using perfcast_test::has;

// Four knobs the synthetic rows separate: the per-copy setup (the copy policy varies), the
// launch (once per task), the host work between tasks (throughput only, outside the window) and
// the cube efficiency (device time, grows with the batch).
const std::vector<std::string> four{"pageable_setup_us", "launch_us", "between_us",
                                    "cube_efficiency"};

}  // namespace

TEST_CASE("deployment fit: synthetic known answer, each knob back within 2 %") {
    auto rows = synthetic_rows();
    measure(rows, truth(), 0.0, 1);
    const deployment_fit fit = fit_deployments(rows, four);
    REQUIRE(fit.knobs.size() == 4);
    const double want[] = {31.0, 55.0, 40.0, 0.7};
    for (std::size_t i = 0; i < 4; ++i) {
        INFO(fit.knobs[i].name, " = ", fit.knobs[i].value, ", truth ", want[i]);
        // 2 %: the issue's bound for noise-free rows; the fit reaches ~1e-6 (it stops when no
        // log moves by 1e-7), so 2 % fails only if the fit is wrong, not imprecise.
        CHECK(std::abs(fit.knobs[i].value / want[i] - 1) < 0.02);
        CHECK(fit.knobs[i].start != doctest::Approx(want[i]));  // it had to move
    }
    CHECK(fit.rms_log_error < 1e-4);
    // Fitted for the rows' one chip (the params file's `chip`), not the start's.
    profile::calibration start;
    start.chip = "h100-sxm";
    CHECK(fit_deployments(rows, four, start).cal.chip == std::string(rows.front().c.name.view()));
    rows.back().c = chips::ascend910b2;  // rows of two chips: fitted for neither
    CHECK(fit_deployments(rows, four, start).cal.chip.empty());
}

TEST_CASE("deployment fit: with 3 % measurement noise the knobs degrade gracefully") {
    auto rows = synthetic_rows();
    measure(rows, truth(), 0.03, 7);
    const deployment_fit fit = fit_deployments(rows, four);
    const double want[] = {31.0, 55.0, 40.0, 0.7};
    double worst = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        worst = std::max(worst, std::abs(fit.knobs[i].value / want[i] - 1));
        INFO(fit.knobs[i].name, " ", fit.knobs[i].value, " truth ", want[i]);
    }
    INFO("worst knob error ", worst);
    // Graceful: 3 % noise on 24 figures moves no knob by more than 30 %, and the fitted model
    // still reproduces the rows to about the noise. Seen (seed 7): pageable_setup_us -4.7 %,
    // launch_us +5.3 %, between_us +1.1 %, cube_efficiency +24 % (device time is the smaller
    // share of these tasks, so the rows pin it least).
    CHECK(worst < 0.30);
    CHECK(fit.rms_log_error < 0.05);
}

TEST_CASE("deployment fit: knobs the rows cannot identify are named, not fitted") {
    auto rows = synthetic_rows();
    measure(rows, truth(), 0.0, 1);
    // The rows never launch op by op: op_launch_us moves nothing.
    const std::vector<std::string> idle{"launch_us", "op_launch_us"};
    const std::string m1 = message_of([&] { (void)fit_deployments(rows, idle); });
    CHECK(has(m1, "cannot identify"));
    CHECK(has(m1, "op_launch_us: no measured figure moves"));
    // launch and sync are both once per task, on the host, under the same window: inseparable.
    const std::vector<std::string> twins{"launch_us", "sync_us"};
    const std::string m2 = message_of([&] { (void)fit_deployments(rows, twins); });
    CHECK(has(m2, "launch_us and sync_us"));
    CHECK(has(m2, "cannot tell them apart"));
    // More knobs than figures.
    std::vector<deployment_case> one{rows.front()};
    one.front().latency.reset();
    CHECK(has(message_of([&] { (void)fit_deployments(one, four); }), "at least one per knob"));
    CHECK(has(message_of([&] { (void)fit_deployments(rows, std::vector<std::string>{"speed"}); }),
              "one of prepare_us"));
}

TEST_CASE("deployment fit and score: a measured figure <= 0 or not finite is refused, by row") {
    // The file reader refuses these; a caller building cases in code meets the same check, not
    // an infinite or NaN error out of log(0) or a division by the measurement.
    auto rows = synthetic_rows();
    measure(rows, truth(), 0.0, 1);
    const std::vector<std::string> one_knob{"launch_us"};
    auto zero = rows;
    zero[1].samples_per_s = 0.0;
    zero[1].origin.clear();  // no row of a file: named by its place
    const std::string m1 = message_of([&] { (void)fit_deployments(zero, one_knob); });
    CHECK(has(m1, "perfcast::deployment case #2: samples_per_s = 0, expected a measured"));
    auto negative = rows;
    negative[2].samples_per_s = -5.0;
    negative[2].origin = "rows.csv:4";
    CHECK(has(message_of([&] { (void)score_deployments(negative); }),
              "deployment case rows.csv:4: samples_per_s = -5"));
    auto nan = rows;
    nan[0].latency = duration{std::nan(""), units::us};
    const std::string m3 = message_of([&] { (void)fit_deployments(nan, one_knob); });
    CHECK(has(m3, "deployment case synthetic:2: latency = "));  // the first row is line 2
    CHECK(has(m3, "a measured time in us, finite and > 0"));
    // A validation names a case by its place among all the cases, not in the subset it fits.
    auto third = rows;
    third[2].samples_per_s = 0.0;
    third[2].origin.clear();
    CHECK(has(message_of([&] { (void)validate_deployments_loo(third, one_knob); }),
              "deployment case #3: samples_per_s = 0"));
    // The error of the fit's identifiability check has the library's prefix too.
    const std::vector<std::string> idle{"launch_us", "op_launch_us"};
    CHECK(message_of([&] {
              (void)fit_deployments(rows, idle);
          }).starts_with("perfcast::fit_deployments: the rows cannot identify"));
}

TEST_CASE("deployment validation: a fold whose fit fails names what it held out") {
    // Row 5 alone launches op by op: op_launch_us is identified on all rows, on none without it.
    auto rows = synthetic_rows();
    rows[4].settings.push_back({"launch", "per-op", ""});
    measure(rows, truth(), 0.0, 1);
    const std::vector<std::string> op{"op_launch_us"};
    CHECK(message_of([&] { (void)fit_deployments(rows, op); }) == "no error");
    const std::string loo = message_of([&] { (void)validate_deployments_loo(rows, op); });
    CHECK(
        loo.starts_with("perfcast::validate_deployments_loo: holding out row 5 (synthetic:6), "
                        "the fit on the other 11 rows failed: perfcast::fit_deployments: the "
                        "rows cannot identify:\n  op_launch_us: no measured figure moves"));
    const std::string by = message_of([&] {
        (void)validate_deployments_by_group(rows, op, [](const deployment_case& d) {
            return std::string(d.settings.size() == 2 ? "per-op" : "graph");
        });
    });
    CHECK(
        by.starts_with("perfcast::validate_deployments_by_group: holding out configuration "
                       "'per-op' (1 row), the fit on the other 11 rows failed: "
                       "perfcast::fit_deployments: the rows cannot identify:"));
}

TEST_CASE("deployment validation: two training rows predict the rest; leave-one-out") {
    auto rows = synthetic_rows();
    measure(rows, truth(), 0.0, 1);
    // Two knobs from two rows that differ in what each knob scales (copies differ: the per-copy
    // setup; the launch is once per task either way).
    const std::vector<std::string> two{"pageable_setup_us", "launch_us"};
    const std::vector<std::size_t> train{0, 1};
    profile::calibration base = truth();
    set_knob(base, "pageable_setup_us", 10.0);
    set_knob(base, "launch_us", 10.0);
    const deployment_validation v = validate_deployments(rows, two, train, base);
    REQUIRE(v.rows.size() == rows.size());
    CHECK(v.predicted_rows == rows.size() - 2);
    REQUIRE(v.throughput_mape.has_value());
    // The rows were generated with the same structure: the held-out error is the fit's, ~0.
    CHECK(*v.throughput_mape < 1e-3);
    CHECK(*v.latency_mape < 1e-3);
    CHECK(v.rows[0].trained);
    CHECK_FALSE(v.rows[2].trained);

    const deployment_validation loo = validate_deployments_loo(rows, two, base);
    CHECK(loo.fits.size() == rows.size());
    CHECK(loo.predicted_rows == rows.size());
    CHECK(*loo.throughput_mape < 1e-3);

    // Whole configurations held out. By instance count: three groups, each predicted by a fit on
    // the other two, which still vary the copy policy: exact.
    const deployment_validation byi = validate_deployments_by_group(
        rows, two, [](const deployment_case& d) { return std::to_string(d.instances.value); },
        base);
    CHECK(byi.fits.size() == 3);
    CHECK(byi.predicted_rows == rows.size());
    CHECK(*byi.throughput_mape < 1e-3);
    // By copy policy: a fit on one policy's rows sees a fixed number of copies per task, so the
    // per-copy setup and the launch move every figure alike: refused, not guessed.
    CHECK(has(message_of([&] {
                  (void)validate_deployments_by_group(
                      rows, two, [](const deployment_case& d) { return d.settings.front().value; },
                      base);
              }),
              "pageable_setup_us and launch_us"));
    // One group only: nothing to hold out.
    CHECK(has(message_of([&] {
                  (void)validate_deployments_by_group(
                      rows, two, [](const deployment_case&) { return std::string("all"); }, base);
              }),
              "at least 2"));
}

TEST_CASE("deployments file: rows, options and what they measured") {
    const auto dir = std::filesystem::temp_directory_path() / "perfcast_deployments_test";
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "small.model") << small_model_text;
        std::ofstream(dir / "kernels.model") << "name k\nmatmul B,64;64,64 fp16\n";
    }
    const std::string ok =
        "# measured on a 910B1\n"
        "chip,model,instances,cube,vector,batch,runtime,options,samples_per_s,latency_ms,p99_ms,"
        "label\n"
        "ascend910b1,small.model,2,12,24,64,acl,copies=aggregated memory=pinned,30120,4.21,,a\n"
        "ascend910b1,small.model,1,,,16,,,,1.5,2.5,b\n";
    const auto rows = io::parse_deployments(ok, dir);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].instances == stream_count{2});
    CHECK(rows[0].split.cube.value == 12);
    CHECK(rows[0].settings.size() == 2);
    CHECK(rows[0].settings[1].key == "memory");
    CHECK(rows[0].samples_per_s == doctest::Approx(30120));
    CHECK(rows[1].split.cube.value == chips::ascend910b1.cube.cores);
    CHECK(!rows[1].samples_per_s);
    CHECK(rows[1].p99->in(units::ms) == doctest::Approx(2.5));
    CHECK(rows[0].m == rows[1].m);  // read once

    const std::string head = "chip,model,instances,batch,options,latency_ms\n";
    auto err = [&](const std::string& body) {
        return message_of([&] { (void)io::parse_deployments(head + body, dir, "rows.csv"); });
    };
    CHECK(has(err("ascend910b1,missing.model,1,16,,1\n"), "rows.csv:2"));
    CHECK(has(err("ascend910b1,missing.model,1,16,,1\n"), "model: no such file"));
    CHECK(has(err("ascend910b1,small.model,1,16,speed=3,1\n"), "rows.csv:2:"));
    CHECK(has(err("ascend910b1,small.model,1,16,speed=3,1\n"), "expected one of copies"));
    CHECK(has(err("ascend910b1,small.model,0,16,,1\n"), "instances is invalid"));
    CHECK(has(err("ascend910b1,small.model,1,16,sync_us=-4,1\n"), "expected a time in [0, 6e7]"));
    CHECK(has(err("ascend910b1,small.model,1,16,,-1\n"), "latency_ms is invalid"));
    // Under a nanosecond is no measured inference (1e-300 ms once scored an error of 1.6e+301 %):
    // the file, line, column, field, value and the range.
    CHECK(has(err("ascend910b1,small.model,1,16,,1e-300\n"),
              "rows.csv:2:31: latency_ms is invalid, expected a mean latency in ms, at least 1e-6 "
              "(1 ns: no measured inference is shorter) and at most a day: \"1e-300\""));
    CHECK(has(message_of([&] {
                  (void)io::parse_deployments(
                      "chip,model,instances,batch,latency_ms,p99_ms\n"
                      "ascend910b1,small.model,1,16,1,1e-7\n",
                      dir, "rows.csv");
              }),
              "rows.csv:2:32: p99_ms is invalid, expected a P99 latency in ms, at least 1e-6"));
    // 1 ns itself is accepted (1e-12: the ms -> ns conversion rounds in the last bits only).
    CHECK(io::parse_deployments(head + "ascend910b1,small.model,1,16,,1e-6\n", dir)
              .front()
              .latency->in(units::ns) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(has(err("ascend910b1,small.model,1,16,,\n"), "no measurement"));
    CHECK(has(err("ascend910b1,kernels.model,1,16,copies=aggregated,1\n"),
              "contradicts model 'kernels.model'"));
    CHECK(has(err("nochip,small.model,1,16,,1\n"), "chip:"));
    // A key twice in one row's options would silently win: refused, naming the row.
    CHECK(has(err("ascend910b1,small.model,1,16,sync_us=5 sync_us=6,1\n"),
              "options: sync_us given twice"));
    CHECK(has(err("ascend910b1,small.model,1,16,sync_us=5 sync_us=6,1\n"), "rows.csv:2:"));
    CHECK(has(message_of([&] {
                  (void)io::parse_deployments("chip,model,instances,batch,latency,x\n", dir);
              }),
              "unknown column"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("guide case 2 through the runtime path: 51 ms = 44 ms on the device + 7 ms task_wait") {
    // Guide §7 (case 2): a coarse-ranking model limited to 7 cube / 10 vector cores; one
    // modelExecute took 51 ms, of which about 44 ms were device tasks and about 7 ms task_wait
    // (host scheduling for the dynamic-shape ops). Its op list is not published, so a stand-in
    // (lookups over a 4000-long sequence, elementwise work and a pooling: vector work, its data
    // in the 910B1's L2) carries the device time, and the two published figures are the rows:
    // the device tasks alone (window=device) and the execute call (window=execute). The fit
    // must split them into a vector-unit scale and a per-task dynamic-shape cost, and the fix
    // (static shapes) must remove the 7 ms and only that.
    const auto m = std::make_shared<const model>(io::parse_model(R"(name coarse_rank_stand_in
gather      B*4000;2000000,64   fp32   name=seq_lookup
elementwise B,4000,64           fp32   inputs=2 name=mask
reduce      B*64,4000           fp32   name=pool
matmul      B,64;64,256         fp16   name=fc
)",
                                                                 "stand-in"));
    auto row = [&](std::string_view window, double ms) {
        deployment_case d;
        d.c = chips::ascend910b1;
        d.m = m;
        d.split = {core_count{7}, core_count{10}};
        d.batch = batch_size{2048};
        d.runtime = "acl";
        d.settings = {{"shapes", "dynamic", ""}, {"window", std::string(window), ""}};
        d.latency = duration{ms, units::ms};
        d.origin = "guide case 2";
        return d;
    };
    const std::vector<deployment_case> rows{row("device", 44.0), row("execute", 51.0)};
    const std::vector<std::string> knobs{"vector_efficiency", "dynamic_shape_us"};
    const deployment_fit fit = fit_deployments(rows, knobs);
    // Two figures, two knobs: an exact solve (the fit's tolerance is far below 0.1 %).
    CHECK(fit.rms_log_error < 1e-3);
    const deployment_prediction slow = predict(rows[1], fit.cal);
    CHECK(slow.latency.in(units::ms) == doctest::Approx(51.0).epsilon(1e-3));
    CHECK(predict(rows[0], fit.cal).latency.in(units::ms) == doctest::Approx(44.0).epsilon(1e-3));
    // The 7 ms are host time in the execute call: the dynamic-shape cost plus the acl preset's
    // launch and synchronisation (tens of microseconds), so dynamic_shape_us is just under 7000.
    const double dyn = fit.knobs[1].value;
    MESSAGE("case 2: vector_efficiency " << fit.knobs[0].value << ", dynamic_shape_us " << dyn);
    CHECK(dyn > 6800);
    CHECK(dyn < 7000);

    // The fix: static shapes (the custom Gather without the Where subgraph). The execute call
    // loses the task_wait, about 7 ms; the device tasks stay 44 ms.
    deployment_case fixed = rows[1];
    fixed.settings[0].value = "static";
    const deployment_prediction fast = predict(fixed, fit.cal);
    CHECK(slow.latency.in(units::ms)-fast.latency.in(units::ms) ==
          doctest::Approx(dyn / 1000).epsilon(1e-6));
    CHECK(fast.latency.in(units::ms) > 44.0);
    CHECK(fast.latency.in(units::ms) < 44.2);  // + launch and sync, under 0.2 ms on acl
    // Under load the dynamic-shape host work is shared too: four instances on one host thread
    // lose more throughput to it than one instance does.
    deployment_case four_slow = rows[1], four_fast = fixed;
    for (deployment_case* d : {&four_slow, &four_fast}) {
        d->instances = stream_count{4};
        d->host_threads = 1;
    }
    const double gain_one = fast.samples_per_s / slow.samples_per_s;
    const double gain_four =
        predict(four_fast, fit.cal).samples_per_s / predict(four_slow, fit.cal).samples_per_s;
    CHECK(gain_one > 1.0);
    CHECK(gain_four > gain_one);
}

TEST_CASE("guide case 1 through the deployment path: no runtime path, the card's answer") {
    // Guide §6 (case 1) is a statement about device time and cores (bs 20 alone on 12/24 cores
    // against two bs-10 tasks): with runtime none the deployment path must give exactly the
    // card's figures, so the case's tests (test_batching.cpp) still hold for it.
    deployment_case d = small_case(1, 12, 24, 20, "none");
    const deployment_prediction p = predict(d);
    const card_result alone =
        evaluate_card(d.c, d.m->view(), batch_size{20}, stream_count{1}, d.split);
    CHECK(p.latency == alone.avg_latency);
    CHECK(p.samples_per_s == alone.throughput);
    d.batch = batch_size{10};
    d.instances = stream_count{2};
    const card_result two =
        evaluate_card(d.c, d.m->view(), batch_size{10}, stream_count{2}, d.split);
    CHECK(predict(d).latency == two.avg_latency);
    // And the case's direction on the kernels: two bs-10 tasks in parallel finish sooner than
    // one bs-20 task on the same split (7.01 against 9.19 ms in the guide).
    CHECK(two.avg_latency < alone.avg_latency);
}

TEST_CASE("what each change buys: runtime options, instances, core limits, ranked") {
    // acl: per-tensor copies from pageable memory, buffers per task, graph launch.
    deployment_case d = small_case(2, 12, 24, 64);
    const deployment_gains g = what_each_change_buys(d);
    auto find = [&](std::string_view what) -> const deployment_change* {
        for (const deployment_change& c : g.changes) {
            if (c.what == what) return &c;
        }
        return nullptr;
    };
    // Every change that applies, and none that does not (the launch is already a graph, shapes
    // already static).
    for (std::string_view w : {"copies=aggregated", "memory=pinned", "buffers=pool",
                               "instances 2 -> 4", "instances 2 -> 1", "cube 12 -> 6",
                               "cube 12 -> 24", "vector 24 -> 12", "vector 24 -> 48"}) {
        CAPTURE(w);
        CHECK(find(w) != nullptr);
    }
    CHECK(find("launch=graph") == nullptr);
    CHECK(find("shapes=static") == nullptr);
    CHECK(g.changes.size() == 9);
    // Ranked by throughput gain, and each gain is the variant's own prediction against the base.
    for (std::size_t i = 1; i < g.changes.size(); ++i) {
        CHECK(g.changes[i - 1].throughput_gain >= g.changes[i].throughput_gain);
    }
    for (const deployment_change& c : g.changes) {
        CAPTURE(c.what);
        CHECK(c.throughput_gain ==
              doctest::Approx(predict(c.variant).samples_per_s / g.base.samples_per_s - 1)
                  .epsilon(1e-12));
    }
    // Directions the runtime path fixes: pinned memory drops the pageable setup and staging,
    // a buffer pool drops the per-task allocations, one aggregated copy replaces three: each
    // shortens the window and raises throughput.
    for (std::string_view w : {"copies=aggregated", "memory=pinned", "buffers=pool"}) {
        CAPTURE(w);
        CHECK(find(w)->latency_change < 0);
        CHECK(find(w)->throughput_gain > 0);
    }
    // Halving the instances halves the tasks in flight: throughput falls.
    CHECK(find("instances 2 -> 1")->throughput_gain < 0);

    // Kernels only (runtime none): no runtime option is offered; one instance: no halving.
    d.runtime = "none";
    d.instances = stream_count{1};
    const deployment_gains k = what_each_change_buys(d);
    for (const deployment_change& c : k.changes) {
        CAPTURE(c.what);
        CHECK(c.what.find('=') == std::string::npos);
        CHECK(c.what != "instances 1 -> 0");
    }
    CHECK_FALSE(k.path.has_value());

    // Per-op launch and dynamic shapes are offered when the deployment has them.
    d.runtime = "acl";
    d.settings = {{"launch", "per-op", ""}, {"shapes", "dynamic", ""}};
    const deployment_gains p = what_each_change_buys(d);
    bool graph = false, shapes = false;
    for (const deployment_change& c : p.changes) {
        graph = graph || c.what == "launch=graph";
        shapes = shapes || c.what == "shapes=static";
        if (c.what == "shapes=static") CHECK(c.latency_change < 0);
    }
    CHECK(graph);
    CHECK(shapes);
}

TEST_CASE("copy_lock: copy setups under the device-wide lock slow instances that copy at once") {
    deployment_case d = small_case(4, 6, 12, 16);
    const deployment_prediction free_copies = predict(d);
    d.settings = {{"copy_lock", "yes", ""}};
    const deployment_prediction locked = predict(d);
    // Four instances, four copies per task each: every setup now also waits for the others'
    // setups and buffer calls at the lock.
    CHECK(locked.latency > free_copies.latency);
    CHECK(locked.samples_per_s < free_copies.samples_per_s);
    // One instance has nobody to wait for: the lock costs nothing.
    d.instances = stream_count{1};
    const deployment_prediction alone_locked = predict(d);
    d.settings.clear();
    CHECK(alone_locked.latency.in(units::us) ==
          doctest::Approx(predict(d).latency.in(units::us)).epsilon(1e-12));
}

TEST_CASE("implausible measured figures: past the closed-loop bound, a P99 below the mean") {
    deployment_case d = small_case(2, 12, 24, 64);
    d.latency = duration{1.0, units::ms};
    // 2 loops x 64 samples / 1 ms = 128,000 samples/s at most; 10 % slack for printed rounding.
    d.samples_per_s = 128000.0 * 1.09;
    CHECK(implausible_measurements(d).empty());
    d.samples_per_s = 128000.0 * 1.2;
    auto what = implausible_measurements(d);
    REQUIRE(what.size() == 1);
    CHECK(has(what[0],
              "samples_per_s 153600 is 1.2x what 2 closed loop(s) of batch 64 deliver "
              "at latency 1 ms (instances x batch / latency = 128000/s)"));
    // A latency in us written as ms puts the throughput 1000x past the bound.
    d.samples_per_s = 100000.0;
    d.latency = duration{1000.0, units::ms};
    what = implausible_measurements(d);
    REQUIRE(what.size() == 1);
    CHECK(has(what[0], "is 781x what"));
    d.latency = duration{1.0, units::ms};
    d.p99 = duration{0.8, units::ms};
    what = implausible_measurements(d);
    REQUIRE(what.size() == 1);
    CHECK(has(what[0], "p99 0.8 ms is below the mean latency 1 ms"));
    d.p99 = duration{1.0, units::ms};  // equal is possible: every task alike
    CHECK(implausible_measurements(d).empty());
    // One figure alone bounds nothing.
    d.latency.reset();
    d.samples_per_s = 1e12;
    CHECK(implausible_measurements(d).empty());
}

}  // namespace test_deployment
