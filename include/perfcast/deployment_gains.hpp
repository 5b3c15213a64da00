// perfcast/deployment_gains.hpp: what each knob of a deployment buys, ranked.
//
// For one deployment (deployment.hpp: a model on a chip, instances x core limits, a batch and a
// runtime path), every change a tuner tries by hand (guide §2-§5, §10) is evaluated with the
// same model and calibration:
//   runtime options   copies=aggregated, memory=pinned, buffers=pool, launch=graph,
//                     shapes=static (each only where the deployment does otherwise);
//   instances         twice as many, and half as many (each instance keeps its core limits);
//   core limits       cube and vector limits halved, and doubled up to the chip's cores.
// Each change is applied alone to the deployment as it is; the list is ranked by throughput
// gain (closed loop: card_result::throughput), then by the latency change of the timed window.
// Changes that do not apply (no runtime path, one instance, a limit already at 1 or at the
// chip's cores) are left out, never reported as a zero gain. A change whose instances do not fit
// the card's memory (device_memory.hpp, under the caller's memory_rule) ranks after every one
// that does, marked.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "deployment.hpp"
#include "device_memory.hpp"
#include "runtime.hpp"

namespace perfcast {

/// One change to a deployment and what the model says it does.
struct deployment_change {
    std::string what;         // "copies=aggregated", "instances 2 -> 4", "cube 12 -> 6"
    deployment_case variant;  // the deployment with the change applied
    deployment_prediction prediction;
    double throughput_gain = 0;  // predicted samples/s / the deployment's - 1
    double latency_change = 0;   // predicted window / the deployment's - 1
    data_size memory{};          // what its instances hold on the card (a lower bound)
    bool fits = true;            // memory <= the chip's memory.hbm_size
};

/// The deployment as it is and every change, best throughput first.
struct deployment_gains {
    deployment_prediction base;
    std::optional<runtime_path> path;  // the deployment's runtime path (none: kernels only)
    std::vector<deployment_change> changes;
    memory_need need{};  // what one of its instances holds (device_memory.hpp)
    memory_rule rule{};  // how its instances hold the card's memory
    data_size memory{};  // what the deployment's instances hold on the card
    bool fits = true;    // memory <= the chip's memory.hbm_size
};

namespace detail {

/// How many of the model's transfers copy into the device.
[[nodiscard]] inline int input_copies(const model& m) {
    int n = 0;
    for (const node& x : m.nodes) {
        if (x.is_transfer() && x.direction == transfer_dir::to_device) ++n;
    }
    return n;
}

}  // namespace detail

/// Every change that applies to `d` (runtime options, instances, core limits), each alone, under
/// the calibration `cal`, ranked: those whose instances fit the card's memory under `rule`
/// first, then by throughput gain.
[[nodiscard]] inline deployment_gains what_each_change_buys(const deployment_case& d,
                                                            const profile::calibration& cal = {},
                                                            const memory_rule& rule = {}) {
    PERFCAST_EXPECTS(d.m != nullptr, "what_each_change_buys", "model", 0.0, "a model");
    validate(rule);
    deployment_gains g;
    g.base = predict(d, cal, rule);
    g.path = runtime_of(d, cal);
    g.need = memory_of(d.c, d.m->nodes, d.batch);
    g.rule = rule;
    g.memory = g.need.on_card(d.instances, rule, d.chips);
    g.fits = fits(d.c, g.need, d.instances, rule, d.chips);
    auto add = [&](std::string what, deployment_case v) {
        deployment_change c;
        c.what = std::move(what);
        c.prediction = predict(v, cal, rule);
        // Only the instance count changes what the card holds (the batch is the deployment's).
        c.memory = g.need.on_card(v.instances, rule, v.chips);
        c.fits = fits(v.c, g.need, v.instances, rule, v.chips);
        c.variant = std::move(v);
        c.throughput_gain = c.prediction.samples_per_s / g.base.samples_per_s - 1;
        c.latency_change = c.prediction.latency / g.base.latency - 1;
        g.changes.push_back(std::move(c));
    };
    auto with_setting = [&](std::string_view key, std::string_view value) {
        deployment_case v = d;
        v.settings.push_back({std::string(key), std::string(value), "what_each_change_buys"});
        add(std::string(key) + "=" + std::string(value), std::move(v));
    };
    if (g.path) {
        const runtime_path& r = *g.path;
        if (r.copies == copy_policy::per_tensor && detail::input_copies(*d.m) > 1) {
            with_setting("copies", "aggregated");
        }
        if (r.memory == host_memory::pageable && detail::input_copies(*d.m) > 0) {
            with_setting("memory", "pinned");
        }
        if (r.buffers == buffer_policy::per_task) with_setting("buffers", "pool");
        if (r.launch == launch_mode::per_op) with_setting("launch", "graph");
        if (r.shapes == shape_mode::dynamic_shapes) with_setting("shapes", "static");
    }
    // A count halved (down to 1) and doubled (up to `most`), each where it moves.
    auto halve_and_double = [&](std::string_view name, int now, int most, auto&& set) {
        auto change_to = [&](int to) {
            deployment_case v = d;
            set(v, to);
            add(std::string(name) + " " + std::to_string(now) + " -> " + std::to_string(to),
                std::move(v));
        };
        if (now < most) change_to(std::min(2 * now, most));
        if (now > 1) change_to(now / 2);
    };
    // Doubled only while the count stays one deployments_file.hpp reads (at most 1024).
    constexpr int max_instances = 1024;
    const int instances = d.instances.value;
    halve_and_double("instances", instances,
                     instances <= max_instances / 2 ? 2 * instances : instances,
                     [](deployment_case& v, int n) { v.instances = stream_count{n}; });
    halve_and_double("cube", d.split.cube.value, d.c.cube.cores,
                     [](deployment_case& v, int n) { v.split.cube = core_count{n}; });
    halve_and_double("vector", d.split.vector.value, d.c.vector.cores,
                     [](deployment_case& v, int n) { v.split.vector = core_count{n}; });
    std::stable_sort(g.changes.begin(), g.changes.end(),
                     [](const deployment_change& x, const deployment_change& y) {
                         if (x.fits != y.fits) return x.fits;
                         if (x.throughput_gain != y.throughput_gain) {
                             return x.throughput_gain > y.throughput_gain;
                         }
                         return x.latency_change < y.latency_change;
                     });
    return g;
}

}  // namespace perfcast
