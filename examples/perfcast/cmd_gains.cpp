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

#include <perfcast/batching.hpp>
#include <perfcast/deployment_gains.hpp>
#include <perfcast/io/gains_report.hpp>

#include "cli.hpp"
#include "command_parts.hpp"
#include "common.hpp"

namespace perfcast::cli::whatif_gains {

namespace {

/// The most instances --gains takes: the most a deployments row names (io/deployments_file.hpp
/// reads instances in 1..1024; deployment_gains.hpp doubles a count only within it).
constexpr std::int64_t max_gains_instances = 1024;

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

}  // namespace

int run(const parsed_args& a, std::ostream& out, const model& m, const chip& c,
        const profile::calibration& cal, const std::string& format) {
    // One deployment, every change ranked by what it buys: no ranking of candidates, no
    // serving run, no profile (rows of a profile's flags never reach here: --gains takes a model).
    for (std::string_view f : {"qps", "p99-ms", "traffic", "headroom", "latency-ms", "rank-by",
                               "top", "svg", "trace", "sweep-batch", "bs-hist", "replay",
                               "max-batch", "window-ms", "simulate-top", "requests", "seed"}) {
        if (a.has(f)) {
            throw usage_error("option '--" + std::string(f) + "' does not apply to --gains");
        }
    }
    if (format == "csv") throw usage_error("--gains writes a table or json, not csv");
    deployment_case d;
    d.c = c;
    d.m = std::make_shared<const model>(m);
    // Each value checked whole, before it narrows to an int, with the card mode's messages
    // (check_at_most): 4294967297 streams must not run as 1.
    const std::int64_t batch = one_value(a, "batch", 16);
    const std::int64_t streams = one_value(a, "streams", 1);
    const std::int64_t cube = one_value(a, "cube", c.cube.cores);
    const std::int64_t vector = one_value(a, "vector", c.vector.cores);
    check_at_most("batch", std::vector{batch}, max_batch_size, "a batch size");
    check_at_most("streams", std::vector{streams}, max_gains_instances, "a stream count per card");
    check_at_most("cube", std::vector{cube}, c.cube.cores,
                  "a limit of " + std::string(c.name.view()) + "'s cube cores");
    check_at_most("vector", std::vector{vector}, c.vector.cores,
                  "a limit of " + std::string(c.name.view()) + "'s vector cores");
    d.batch = batch_size{batch};
    d.instances = stream_count{static_cast<int>(streams)};
    d.split = {core_count{static_cast<int>(cube)}, core_count{static_cast<int>(vector)}};
    d.runtime = runtime_preset_from_args(a, m);
    if (const auto t = a.get("runtime-set")) d.settings = runtime_settings_from_flag(*t);
    d.host_threads = host_threads_from_args(a);
    d.chips = chips_per_card_from_args(a);
    const deployment_gains g = what_each_change_buys(d, cal, memory_rule_from_args(a));
    if (format == "json") {
        io::write_gains_json(out, d, g);
    } else {
        io::write_gains_table(out, d, g);
    }
    return exit_ok;
}

}  // namespace perfcast::cli::whatif_gains
