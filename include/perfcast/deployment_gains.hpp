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
// chip's cores) are left out, never reported as a zero gain.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "deployment.hpp"
#include "runtime.hpp"

namespace perfcast {

/// One change to a deployment and what the model says it does.
struct deployment_change {
    std::string what;         // "copies=aggregated", "instances 2 -> 4", "cube 12 -> 6"
    deployment_case variant;  // the deployment with the change applied
    deployment_prediction prediction;
    double throughput_gain = 0;  // predicted samples/s / the deployment's - 1
    double latency_change = 0;   // predicted window / the deployment's - 1
};

/// The deployment as it is and every change, best throughput first.
struct deployment_gains {
    deployment_prediction base;
    std::optional<runtime_path> path;  // the deployment's runtime path (none: kernels only)
    std::vector<deployment_change> changes;
};

namespace detail {

/// How many of the model's transfers copy into the device.
[[nodiscard]] inline int input_copies(const model& m) {
    int n = 0;
    for (const node& x : m.nodes) {
        if (x.kind == node_kind::transfer && x.direction == transfer_dir::to_device) ++n;
    }
    return n;
}

}  // namespace detail

/// Every change that applies to `d` (runtime options, instances, core limits), each alone, under
/// the calibration `cal`, ranked by throughput gain.
[[nodiscard]] inline deployment_gains what_each_change_buys(const deployment_case& d,
                                                            const profile::calibration& cal = {}) {
    PERFCAST_EXPECTS(d.m != nullptr, "what_each_change_buys", "model", 0.0, "a model");
    deployment_gains g;
    g.base = predict(d, cal);
    g.path = runtime_of(d, cal);
    auto add = [&](std::string what, deployment_case v) {
        deployment_change c;
        c.what = std::move(what);
        c.prediction = predict(v, cal);
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
    auto count_change = [&](std::string_view name, int from, int to, auto&& apply) {
        deployment_case v = d;
        apply(v, to);
        add(std::string(name) + " " + std::to_string(from) + " -> " + std::to_string(to),
            std::move(v));
    };
    constexpr int max_instances = 1024;  // deployments_file.hpp reads at most this many
    if (d.instances * 2 <= max_instances) {
        count_change("instances", d.instances, d.instances * 2,
                     [](deployment_case& v, int n) { v.instances = n; });
    }
    if (d.instances > 1) {
        count_change("instances", d.instances, d.instances / 2,
                     [](deployment_case& v, int n) { v.instances = n; });
    }
    const int cube = d.split.cube.value;
    const int vec = d.split.vector.value;
    if (cube > 1) {
        count_change("cube", cube, cube / 2,
                     [](deployment_case& v, int n) { v.split.cube = core_count{n}; });
    }
    if (cube < d.c.cube.cores) {
        count_change("cube", cube, std::min(2 * cube, d.c.cube.cores),
                     [](deployment_case& v, int n) { v.split.cube = core_count{n}; });
    }
    if (vec > 1) {
        count_change("vector", vec, vec / 2,
                     [](deployment_case& v, int n) { v.split.vector = core_count{n}; });
    }
    if (vec < d.c.vector.cores) {
        count_change("vector", vec, std::min(2 * vec, d.c.vector.cores),
                     [](deployment_case& v, int n) { v.split.vector = core_count{n}; });
    }
    std::stable_sort(g.changes.begin(), g.changes.end(),
                     [](const deployment_change& x, const deployment_change& y) {
                         if (x.throughput_gain != y.throughput_gain) {
                             return x.throughput_gain > y.throughput_gain;
                         }
                         return x.latency_change < y.latency_change;
                     });
    return g;
}

}  // namespace perfcast
