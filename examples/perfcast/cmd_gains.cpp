// examples/perfcast/cmd_gains.cpp: `perfcast whatif --gains`, what each knob of one deployment
// buys (deployment_gains.hpp), ranked. Declared in command_parts.hpp; cmd_whatif.cpp calls it.
//
//   perfcast whatif --model F --chip C --batch B --streams S --cube K --vector V --gains
//                   [--runtime NAME] [--runtime-set K=V,..] [--params F] [--format table|json]

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/deployment_gains.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/table.hpp>

#include "cli.hpp"
#include "command_parts.hpp"
#include "common.hpp"

namespace perfcast::cli::whatif_gains {

namespace {

/// The one value of a list flag (`fallback` when absent).
[[nodiscard]] std::int64_t one_value(const parsed_args& a, std::string_view flag,
                                     std::int64_t fallback) {
    const auto t = a.get(flag);
    if (!t) return fallback;
    const std::vector<std::int64_t> v = parse_list(flag, *t);
    if (v.size() != 1) {
        throw usage_error("option '--" + std::string(flag) + "': --gains takes one value ('" + *t +
                          "' lists " + std::to_string(v.size()) + ")");
    }
    return v.front();
}

[[nodiscard]] std::string signed_pct(double share) {
    const std::string s = io::format_fixed(100 * share, 1);
    return share > 0 && s != "0.0" ? "+" + s : s;
}

void write_table(std::ostream& out, const deployment_case& d, const deployment_gains& g) {
    out << "deployment: " << d.m->name << " on " << d.c.name.view() << ", " << deployment_text(d)
        << ": " << io::format_fixed(g.base.samples_per_s, 0) << " samples/s, window "
        << io::format_fixed(g.base.latency.in(units::ms), 3) << " ms, cycle "
        << io::format_fixed(g.base.cycle.in(units::ms), 3) << " ms\n";
    out << "runtime path: "
        << (g.path ? runtime_summary(*g.path) : std::string("none (kernels only)")) << "\n\n";
    io::text_table t(
        {"#", "change", "samples/s", "gain %", "window ms", "change %", "cycle ms", "bound"});
    int rank = 0;
    for (const deployment_change& c : g.changes) {
        t.add_row(
            {std::to_string(++rank), c.what, io::format_fixed(c.prediction.samples_per_s, 0),
             signed_pct(c.throughput_gain), io::format_fixed(c.prediction.latency.in(units::ms), 3),
             signed_pct(c.latency_change), io::format_fixed(c.prediction.cycle.in(units::ms), 3),
             std::string(name_of(c.prediction.card.bound))});
    }
    t.write(out);
    out << "\nEach change alone, from the deployment as it is; gain: samples/s (closed loop) "
           "against\nthe deployment's; change: the timed window's latency. Instances keep their "
           "core limits\n(more instances than the chip has cores for share them).\n";
}

void write_json(std::ostream& out, const deployment_case& d, const deployment_gains& g) {
    io::json_writer j(out);
    j.begin_object()
        .member("model", d.m->name)
        .member("chip", d.c.name.view())
        .member("deployment", deployment_text(d))
        .member("runtime", g.path ? runtime_summary(*g.path) : std::string("none"))
        .member("samples_per_s", g.base.samples_per_s)
        .member("window_ms", g.base.latency.in(units::ms))
        .member("cycle_ms", g.base.cycle.in(units::ms));
    j.key("changes").begin_array();
    for (const deployment_change& c : g.changes) {
        j.begin_object()
            .member("change", c.what)
            .member("samples_per_s", c.prediction.samples_per_s)
            .member("throughput_gain", c.throughput_gain)
            .member("window_ms", c.prediction.latency.in(units::ms))
            .member("latency_change", c.latency_change)
            .member("cycle_ms", c.prediction.cycle.in(units::ms))
            .member("bound", name_of(c.prediction.card.bound))
            .end_object();
    }
    j.end_array().end_object();
    out << '\n';
}

}  // namespace

std::string deployment_text(const deployment_case& d) {
    return std::to_string(d.instances.value) + " x " + std::to_string(d.split.cube.value) + "/" +
           std::to_string(d.split.vector.value) + " b" + std::to_string(d.batch.value);
}

int run(const parsed_args& a, std::ostream& out, const model& m, const chip& c,
        const profile::calibration& cal, const std::string& format) {
    for (std::string_view f : {"qps", "p99-ms", "traffic", "latency-ms", "svg", "sweep-batch"}) {
        if (a.has(f)) {
            throw usage_error("option '--" + std::string(f) + "' does not apply to --gains");
        }
    }
    if (format == "csv") throw usage_error("--gains writes a table or json, not csv");
    deployment_case d;
    d.c = c;
    d.m = std::make_shared<const model>(m);
    d.batch = batch_size{one_value(a, "batch", 16)};
    d.instances = stream_count{static_cast<int>(one_value(a, "streams", 1))};
    d.split = {core_count{static_cast<int>(one_value(a, "cube", c.cube.cores))},
               core_count{static_cast<int>(one_value(a, "vector", c.vector.cores))}};
    if (d.split.cube.value > c.cube.cores || d.split.vector.value > c.vector.cores) {
        throw usage_error("--cube / --vector: " + std::string(c.name.view()) + " has " +
                          std::to_string(c.cube.cores) + " cube and " +
                          std::to_string(c.vector.cores) + " vector cores");
    }
    if (d.instances.value > 1024)
        throw usage_error("option '--streams': at most 1024 with --gains");
    d.runtime = a.has("runtime") ? *a.get("runtime")
                : m.runtime      ? m.runtime->preset
                                 : std::string("none");
    if (const auto t = a.get("runtime-set")) d.settings = runtime_settings_from_flag(*t);
    d.host_threads = host_threads_from_args(a);
    const deployment_gains g = what_each_change_buys(d, cal);
    if (format == "json") {
        write_json(out, d, g);
    } else {
        write_table(out, d, g);
    }
    return exit_ok;
}

}  // namespace perfcast::cli::whatif_gains
