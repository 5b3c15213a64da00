// The deployment path end to end (issue 11's speed targets): one deployment evaluated with the
// runtime path for a 100-op model (target under 50 us), and a 10-row calibration of three knobs
// (target under 1 s). Run in a Release build: ./perfcast_bench --benchmark_filter=deployment
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/deployment.hpp>
#include <perfcast/io/model_file.hpp>

namespace {

using namespace perfcast;

/// A CTR-like model of `ops` device ops (plus two input copies and one output copy): repeated
/// GEMM + activation + elementwise blocks, the shapes of a small ranking tower.
std::shared_ptr<const model> ctr_model(int ops) {
    std::string text =
        "name bench_ctr\n"
        "transfer B,26 int64 name=ids\n"
        "transfer B,13 fp32 name=dense\n";
    for (int i = 0; i < ops; ++i) {
        switch (i % 4) {
            case 0: text += "matmul B,256;256,256 fp16\n"; break;
            case 1: text += "elementwise B,256 fp16 inputs=1\n"; break;
            case 2: text += "gather B*26;1000000,16 fp16 hot=0.5\n"; break;
            default: text += "elementwise B,256 fp16 inputs=2\n"; break;
        }
    }
    text += "transfer B fp32 dir=out name=scores\n";
    return std::make_shared<const model>(io::parse_model(text, "bench"));
}

deployment_case case_of(std::shared_ptr<const model> m, int instances, std::int64_t batch,
                        std::string copies) {
    deployment_case d;
    d.c = chips::ascend910b1;
    d.m = std::move(m);
    d.instances = stream_count{instances};
    d.split = {core_count{24 / instances}, core_count{48 / instances}};
    d.batch = batch_size{batch};
    d.runtime = "acl";
    d.settings = {{"copies", std::move(copies), ""}};
    return d;
}

void bm_deployment_predict_100_ops(benchmark::State& state) {
    const deployment_case d = case_of(ctr_model(100), 2, 64, "per-tensor");
    for (auto _ : state) benchmark::DoNotOptimize(predict(d));
}
BENCHMARK(bm_deployment_predict_100_ops)->Unit(benchmark::kMicrosecond);

void bm_deployment_calibrate_10_rows(benchmark::State& state) {
    // Ten rows of a 20-op model, measured as the model answers under known knobs, fitted from
    // the defaults: what `perfcast calibrate --deployments` does for a small stress-test table.
    const auto m = ctr_model(20);
    std::vector<deployment_case> rows;
    profile::calibration truth;
    set_knob(truth, "pageable_setup_us", 31.0);
    set_knob(truth, "launch_us", 55.0);
    set_knob(truth, "between_us", 40.0);
    for (int i = 0; i < 10; ++i) {
        deployment_case d =
            case_of(m, 1 << (i % 3), i < 5 ? 16 : 1024, i % 2 == 0 ? "per-tensor" : "aggregated");
        const deployment_prediction p = predict(d, truth);
        d.samples_per_s = p.samples_per_s;
        d.latency = p.latency;
        rows.push_back(std::move(d));
    }
    const std::vector<std::string> knobs{"pageable_setup_us", "launch_us", "between_us"};
    for (auto _ : state) benchmark::DoNotOptimize(fit_deployments(rows, knobs));
}
BENCHMARK(bm_deployment_calibrate_10_rows)->Unit(benchmark::kMillisecond);

}  // namespace
