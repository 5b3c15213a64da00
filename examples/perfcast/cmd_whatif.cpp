// examples/perfcast/cmd_whatif.cpp: `perfcast whatif`, the main job.
//
//   perfcast whatif [--model FILE] [--chip C] [--batch B[,B..]] [--streams 1-6]
//                   [--cube 6,8,12,24] [--vector 10,12,24,48] [--latency-ms X]
//                   [--rank qps|throughput] [--top N] [--format table|csv|json] [--svg FILE]
//   perfcast whatif PROFILE.csv --batch B [--sweep-batch LIST] [grid or serving flags]
//   perfcast whatif (--qps X[,Y..] | --p99-ms X [--traffic QPS [--headroom H]])
//                   [--bs-hist FILE | --batch B] [--max-batch LIST] [--window-ms T[,T..]]
//                   [--simulate-top N] [--requests N] [--seed N] [--trace FILE] [grid flags]
//
// Sweeps streams x cube limit x vector limit x batch for a model (the built-in scenario when no
// --model is given), ranks the deployments by QPS (ties by latency), marks the Pareto front of
// QPS against latency and the best deployment under the latency target. Lists accept ranges:
// "1-6", "6,8,12,24", "1-3,8".
//
// With a profile (kernel_details / op_summary CSV of one step at batch B) the model is the
// profile anchored on its measurements (profile/anchored.hpp): each compute row's time at a
// candidate = measured x model(candidate) / model(row's block dim at batch B).
//
// Serving mode (any of the serving flags): the same grid times max gears times batching windows
// served under Poisson load (serving_sweep.hpp): ranked by the analytic M/G/c model, the leaders
// simulated; latency percentiles at fixed loads, or the capacity under a TP99 target and the
// cards a traffic level needs (docs/whatif-serving.md). Without a serving flag nothing changes.

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/io/chrome_trace.hpp>
#include <perfcast/io/csv.hpp>
#include <perfcast/io/histogram.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/svg.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/profile/anchored.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving_sweep.hpp>
#include <perfcast/whatif.hpp>

#include "cli.hpp"
#include "cmd_gains.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "onnx_source.hpp"
#include "progress.hpp"

namespace perfcast::cli {

namespace whatif_detail {

inline constexpr std::array<option, 37> options{{
    {"model", "FILE",
     "model file (docs/model-file.md) or ONNX graph (.onnx, docs/import.md); default: the "
     "built-in CTR scenario"},
    {"batch-dim", "NAME",
     "with --model MODEL.onnx: the symbolic input dimension that is the batch (default: the "
     "first)"},
    {"unfused-attention", "",
     "with --model MODEL.onnx: attention subgraphs node by node (default: one fused attention "
     "line each)"},
    {"chip", "C", "chip preset (perfcast chips); default: ascend910b1"},
    chip_ini_option,
    params_option,
    runtime_option,
    runtime_set_option,
    host_threads_option,
    {"batch", "LIST",
     "batch sizes, e.g. 16,64 or 16-20; default 16,32,64,128,256 (serving: "
     "one size, default 16)"},
    {"streams", "LIST", "streams (instances) per card; default 1-6"},
    {"cube", "LIST", "cube-core limits per instance; default 6,8,12,24"},
    {"vector", "LIST", "vector-core limits per instance; default 10,12,24,48"},
    {"latency-ms", "X", "latency target in ms: mark the best deployment within it"},
    {"rank", "BY", "qps (default) or throughput (samples/s)"},
    {"top", "N", "table rows to print (default 20; 0: all)"},
    {"format", "FORMAT", "table (default), csv or json (csv and json list every candidate)"},
    {"svg", "FILE",
     "write QPS against latency, with the Pareto front, as SVG (serving: TP99 "
     "against QPS)"},
    {"qps", "X[,Y..]", "serving: loads in requests/s per card; latency percentiles there"},
    {"p99-ms", "X", "serving: TP99 target in ms; per configuration the highest QPS meeting it"},
    {"bs-hist", "FILE", "serving: request batch sizes, a bs,count CSV (default: all --batch)"},
    {"max-batch", "LIST",
     "serving: max gears (every bs 1..max a gear, larger requests split); "
     "default 8,16,20,32"},
    {"window-ms", "T[,T..]", "serving: batching windows in ms; default 0"},
    {"traffic", "QPS", "serving: total requests/s; cards = ceil(traffic / capacity) (--p99-ms)"},
    {"headroom", "SHARE", "serving: share of each card's capacity kept free, [0, 1); default 0"},
    {"simulate-top", "N", "serving: leaders of the analytic ranking simulated (default 8; 0: all)"},
    {"requests", "N", "serving: requests per simulation, the first 10 % warm-up (default 20000)"},
    {"seed", "N", "serving: simulation seed (default 1)"},
    {"trace", "FILE", "serving: Chrome-trace / Perfetto JSON of 1 simulated second of the best"},
    {"sweep-batch", "LIST",
     "with PROFILE.csv: candidate batch sizes (default: the profiled "
     "--batch)"},
    strict_option,
    device_option,
    step_option,
    rank_option,
    whatif_gains::gains_option,
    quiet_option,
    progress_option,
}};

[[nodiscard]] inline std::vector<int> as_ints(std::string_view flag,
                                              const std::vector<std::int64_t>& v) {
    std::vector<int> out;
    for (std::int64_t x : v) {
        if (x > 1000000) {
            throw usage_error("option '--" + std::string(flag) + "': " + std::to_string(x) +
                              " is too large (at most 1000000)");
        }
        out.push_back(static_cast<int>(x));
    }
    return out;
}

/// Every value of list flag `flag` in [1, hi]: "option '--streams': 65 is not a stream count
/// in [1, 64] per card".
template <class T>
void check_at_most(std::string_view flag, const std::vector<T>& v, std::int64_t hi,
                   std::string_view what) {
    for (T x : v) {
        if (static_cast<std::int64_t>(x) > hi) {
            throw usage_error("option '--" + std::string(flag) + "': " + std::to_string(x) +
                              " is not " + std::string(what) + " in [1, " + std::to_string(hi) +
                              "]");
        }
    }
}

/// --latency-ms: 1 us .. 1e9 ms, the same range as serving's --p99-ms (whatif_serving).
inline constexpr double min_latency_ms = 1e-3;
inline constexpr double max_latency_ms = 1e9;

/// Core limits above the chip's: an error naming the flag, the value and the chip.
inline void check_limits(std::string_view flag, const std::vector<int>& v, int cores,
                         std::string_view engine_name, std::string_view chip_name) {
    for (int k : v) {
        if (k > cores) {
            ::perfcast::detail::precondition_failed(
                "whatif", "--" + std::string(flag), static_cast<double>(k),
                "at most " + std::to_string(cores) + " (the " + std::string(engine_name) +
                    " cores of " + std::string(chip_name) + ")");
        }
    }
}

[[nodiscard]] inline std::string split_text(const candidate& c) {
    return std::to_string(c.split.cube.value) + "/" + std::to_string(c.split.vector.value);
}

[[nodiscard]] inline std::string describe(const candidate& c) {
    return std::to_string(c.streams) + " stream(s) x " + std::to_string(c.split.cube.value) +
           " cube / " + std::to_string(c.split.vector.value) + " vector cores, batch " +
           std::to_string(c.batch) + ": " + io::format_fixed(c.qps, 0) + " QPS, " +
           io::format_fixed(c.throughput, 0) + " samples/s at " +
           io::format_fixed(c.latency.in(units::ms), 3) + " ms";
}

inline void write_candidate_json(io::json_writer& j, const candidate& c) {
    j.begin_object()
        .member("streams", c.streams)
        .member("cube", c.split.cube.value)
        .member("vector", c.split.vector.value)
        .member("batch", static_cast<double>(c.batch))
        .member("latency_ms", c.latency.in(units::ms))
        .member("stress_window_ms", c.window.in(units::ms))
        .member("cycle_ms", c.cycle.in(units::ms))
        .member("qps", c.qps)
        .member("samples_per_s", c.throughput)
        .member("cube_utilization", c.cube_utilization)
        .member("vector_utilization", c.vector_utilization)
        .member("hbm_utilization", c.hbm_utilization)
        .member("l2_miss", c.l2_miss)
        .member("bubbles_ms", c.bubbles.in(units::ms))
        .member("transfer_ms", c.transfer.in(units::ms))
        .member("bound", name_of(c.bound))
        .member("cores_shared", c.cores_shared)
        .end_object();
}

/// The runtime path as JSON: every key's value, as the params file writes it.
inline void write_runtime_json(io::json_writer& j, const runtime_path& r) {
    j.begin_object();
    for (const runtime_key& k : runtime_keys) j.member(k.key, k.get(r));
    j.end_object();
}

inline void write_svg(const std::string& path, const whatif_result& r,
                      const std::optional<selection>& pick, std::string_view title) {
    io::svg_plot p(std::string(title), "latency under load (ms)", "QPS per card");
    io::svg_series all{.name = "candidates", .points = {}, .color = "#adb5bd"};
    for (const candidate& c : r.ranked) all.points.push_back({c.latency.in(units::ms), c.qps});
    io::svg_series front{.name = "Pareto front",
                         .points = {},
                         .color = "#d9480f",
                         .style = io::svg_style::line_markers,
                         .radius = 4};
    for (std::size_t i : r.pareto) {
        front.points.push_back({r.ranked[i].latency.in(units::ms), r.ranked[i].qps});
    }
    p.add(std::move(all)).add(std::move(front));
    if (pick) {
        p.add_vline(pick->target().in(units::ms),
                    "target " + io::format_shortest(pick->target().in(units::ms)) + " ms");
        const candidate& c = pick->closest();
        p.add_label({c.latency.in(units::ms), c.qps},
                    (pick->has_value() ? "best: " : "closest: ") + std::to_string(c.streams) +
                        " x " + split_text(c) + ", batch " + std::to_string(c.batch));
    }
    io::write_output({path, "--svg"}, [&](std::ostream& out) { p.write(out); });
}

}  // namespace whatif_detail

// ---- serving mode: --qps / --p99-ms and the flags that go with them --------------------------

namespace whatif_serving {

/// Flags that switch `whatif` from ranking inferences to serving requests under load.
inline constexpr std::array<std::string_view, 11> flags{
    "qps",      "p99-ms",       "bs-hist",  "max-batch", "window-ms", "traffic",
    "headroom", "simulate-top", "requests", "seed",      "trace"};

[[nodiscard]] inline bool requested(const parsed_args& a) {
    for (std::string_view f : flags) {
        if (a.has(f)) return true;
    }
    return false;
}

/// The plausible values of a real-valued serving flag, [lo, hi], and what a value is. Outside
/// them a value is a unit mistake or a typo, not a question the model can answer
/// (docs/whatif-serving.md, "Flags": each bound and why).
struct real_range {
    double lo;
    double hi;
    std::string_view what;  // "a load", with the unit after the range
    std::string_view unit;  // "requests/s per card"
};

/// One request per 1000 s .. a billion per second on one card: the built-in scenario's
/// capacity is about 36000 per card; the range leaves four orders of magnitude either way.
inline constexpr real_range qps_range{1e-3, 1e9, "a load", "requests/s per card"};
/// 1 us .. 1e9 ms (11.6 days): below a microsecond no kernel even launches; any target looser
/// than saturation allows gives the same capped answer, so 1e9 stands for "no target".
inline constexpr real_range p99_range{1e-3, 1e9, "a TP99 target", "ms"};
/// 0 .. 1 minute: serving windows are milliseconds; past a minute the value is a unit mistake
/// (microseconds given as milliseconds). An assumption, like the next two.
inline constexpr real_range window_range{0, 60000, "a batching window", "ms"};
/// Up to a trillion requests per second in total (cards = traffic / capacity stay countable).
inline constexpr real_range traffic_range{1e-3, 1e12, "a traffic", "requests/s"};
/// Keeping more than 99 % of every card free is no plan (cards would grow a hundredfold).
inline constexpr real_range headroom_range{0, 0.99, "a share of each card kept free", ""};

/// "option '--qps': '0' is not a load in [0.001, 1e+09] requests/s per card".
[[nodiscard]] inline usage_error out_of_range(std::string_view flag, std::string_view text,
                                              const real_range& r, std::string_view more = {}) {
    std::string m = "option '--" + std::string(flag) + "': '" + std::string(text) + "' is not " +
                    std::string(r.what) + " in [" + io::format_shortest(r.lo) + ", " +
                    io::format_shortest(r.hi) + "]";
    if (!r.unit.empty()) m += " " + std::string(r.unit);
    return usage_error(m + std::string(more));
}

/// "1000,2500.5": numbers in `r`, duplicates removed.
[[nodiscard]] inline std::vector<double> parse_reals(std::string_view flag, std::string_view text,
                                                     const real_range& r) {
    std::vector<double> out;
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = text.find(',', pos);
        const std::size_t len =
            comma == std::string_view::npos ? std::string_view::npos : comma - pos;
        const std::string_view part = text.substr(pos, len);
        double v = 0;
        auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc{} || p != part.data() + part.size() || !(v >= r.lo) ||
            !(v <= r.hi)) {
            throw out_of_range(flag, ::perfcast::parse_error::printable(part), r);
        }
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

[[nodiscard]] inline double parse_real(const parsed_args& a, std::string_view flag,
                                       const real_range& r) {
    const std::string t = *a.get(flag);
    if (t.find(',') != std::string::npos) {
        throw out_of_range(flag, ::perfcast::parse_error::printable(t), r, " (one value)");
    }
    return parse_reals(flag, t, r).front();
}

/// The requests of one simulation times the chunks each is split into at the smallest
/// --max-batch, at most max_simulated_chunks (serving.hpp): the simulation's memory bound.
inline void check_chunks(std::uint64_t requests, const batch_distribution& dist,
                         const std::vector<int>& max_gears, const std::string& sizes) {
    const int gear = *std::min_element(max_gears.begin(), max_gears.end());
    const double each = mean_chunks(gear_set::every(gear), dist);
    const double chunks = static_cast<double>(requests) * each;
    if (chunks > max_simulated_chunks) {
        throw usage_error("option '--requests': " + std::to_string(requests) + " requests x " +
                          io::format_significant(each, 6) + " chunks each (" + sizes +
                          ", split at --max-batch " + std::to_string(gear) +
                          ") = " + io::format_significant(chunks, 3) +
                          " chunks, more than the 1e8 one simulation may queue (about 100 "
                          "bytes each when they all wait): fewer --requests or a larger "
                          "--max-batch");
    }
}

[[nodiscard]] inline std::uint64_t parse_count(const parsed_args& a, std::string_view flag,
                                               std::uint64_t fallback, std::uint64_t lo,
                                               std::uint64_t hi) {
    const auto t = a.get(flag);
    if (!t) return fallback;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (t->empty() || ec != std::errc{} || p != t->data() + t->size() || v < lo || v > hi) {
        throw usage_error("option '--" + std::string(flag) + "': '" + *t +
                          "' is not a whole number in " + std::to_string(lo) + ".." +
                          std::to_string(hi));
    }
    return v;
}

[[nodiscard]] inline std::string ms3(duration t) { return io::format_fixed(t.in(units::ms), 3); }
/// A rate as given: "100000", "2500.5" (no exponent for whole numbers).
[[nodiscard]] inline std::string rate_text(double v) {
    return v == std::floor(v) && v < 1e15 ? io::format_fixed(v, 0) : io::format_shortest(v);
}
[[nodiscard]] inline std::string pct(double share) { return io::format_fixed(100 * share, 1); }
[[nodiscard]] inline std::string split_text(const serving_config& k) {
    return std::to_string(k.split.cube.value) + "/" + std::to_string(k.split.vector.value);
}

/// Everything the serving outputs need besides the sweep's result.
struct context {
    std::string model_name;
    std::size_t model_nodes = 0;
    std::string chip_name;
    std::string sizes_text;  // "tests/data/x.csv (41 sizes, mean 8.14 samples)"
    std::string sizes_source;
    const batch_distribution* dist = nullptr;
    serving_sweep_options options;
    std::optional<request_rate> traffic;
    double headroom = 0;
};

[[nodiscard]] inline std::size_t simulated_count(const serving_sweep_result& r) {
    return static_cast<std::size_t>(std::count_if(
        r.ranked.begin(), r.ranked.end(), [](const serving_row& row) { return row.simulated; }));
}

[[nodiscard]] inline std::optional<card_count> cards_of(const context& x, const serving_row& r) {
    if (!x.traffic || !r.capacity) return std::nullopt;
    return cards_for(*x.traffic, *r.capacity, x.headroom);
}

inline void write_config_json(io::json_writer& j, const serving_config& k) {
    j.member("streams", k.streams)
        .member("cube", k.split.cube.value)
        .member("vector", k.split.vector.value)
        .member("max_gear", k.max_gear)
        .member("window_ms", k.window.in(units::ms));
}

/// Latencies only at a stable load: past saturation a finite run's percentiles measure how long
/// it ran, so they are null there and `state` says why.
inline void write_point_json(io::json_writer& j, const serving_point& p) {
    const bool steady = p.state == load_state::stable;
    j.begin_object().member("qps", p.qps.in(units::qps)).member("state", name_of(p.state));
    for (const auto& [key, t] : {std::pair{"mean_ms", p.mean}, std::pair{"p50_ms", p.p50},
                                 std::pair{"p99_ms", p.p99}, std::pair{"p999_ms", p.p999}}) {
        j.key(key);
        if (steady) {
            j.value(t.in(units::ms));
        } else {
            j.null();
        }
    }
    j.member("utilization", p.utilization)
        .member("core_utilization", p.core_utilization)
        .member("padding_share", p.padding_share)
        .member("mean_batch", p.mean_batch)
        .end_object();
}

inline void write_row_json(io::json_writer& j, const context& x, const serving_row& r,
                           std::size_t rank) {
    j.begin_object().member("rank", static_cast<std::uint64_t>(rank));
    write_config_json(j, r.config);
    j.member("analytic_rank", static_cast<std::uint64_t>(r.analytic_rank))
        .member("simulated", r.simulated)
        .member("low_load_mean_ms", r.low_load_mean.in(units::ms))
        .member("low_load_p99_ms", r.low_load_p99.in(units::ms));
    j.key("saturation_qps");
    if (r.saturation) {
        j.value(r.saturation->throughput.in(units::qps));
    } else {
        j.null();
    }
    j.key("saturation_bound_qps");
    if (r.saturation) {
        j.value(r.saturation->bound.in(units::qps));
    } else {
        j.null();
    }
    if (x.options.target) {
        j.key("analytic_capacity_qps");
        if (r.analytic_capacity) {
            j.value(r.analytic_capacity->in(units::qps));
        } else {
            j.null();
        }
        j.key("capacity_qps");
        if (r.capacity) {
            j.value(r.capacity->in(units::qps));
        } else {
            j.null();
        }
        j.key("capacity_limit");
        if (r.capacity) {
            j.value(name_of(r.limit));
        } else {
            j.null();
        }
        if (x.traffic) {
            j.key("cards");
            if (const auto c = cards_of(x, r)) {
                j.value(c->cards);
            } else {
                j.null();
            }
        }
    } else {
        // Saturated in the analytic model: no TP99 (it grows without end), and the state says
        // why it is null.
        const bool stable = is_finite(r.analytic_p99);
        j.key("analytic_p99_ms");
        if (stable) {
            j.value(r.analytic_p99.in(units::ms));
        } else {
            j.null();
        }
        j.member("analytic_state", stable ? "stable" : "saturated")
            .member("analytic_utilization", r.analytic_utilization);
    }
    j.key("points").begin_array();
    for (const serving_point& p : r.points) write_point_json(j, p);
    j.end_array().end_object();
}

inline void write_json(std::ostream& out, const context& x, const serving_sweep_result& r) {
    io::json_writer j(out);
    const bool capacity = x.options.target.has_value();
    j.begin_object()
        .member("mode", capacity ? "capacity" : "load")
        .member("model", x.model_name)
        .member("chip", x.chip_name);
    j.key("batch_sizes")
        .begin_object()
        .member("source", x.sizes_source)
        .member("mean", x.dist->mean())
        .member("max", x.dist->max())
        .end_object();
    j.member("configurations", static_cast<std::uint64_t>(r.configurations))
        .member("leaders", static_cast<std::uint64_t>(r.ranked.size()))
        .member("simulated", static_cast<std::uint64_t>(simulated_count(r)))
        .member("requests", x.options.requests)
        .member("warmup", x.options.warmup)
        .member("seed", x.options.seed);
    j.key("loads_qps").begin_array();
    for (request_rate q : x.options.loads) j.value(q.in(units::qps));
    j.end_array();
    j.key("target_p99_ms");
    if (capacity) {
        j.value(x.options.target->in(units::ms));
    } else {
        j.null();
    }
    j.key("met");
    if (capacity) {
        j.value(r.met());
    } else {
        j.null();
    }
    j.key("traffic_qps");
    if (x.traffic) {
        j.value(x.traffic->in(units::qps));
    } else {
        j.null();
    }
    j.member("headroom", x.headroom).member("saturation_margin", saturation_margin);
    j.key("best");
    if (!r.ranked.empty() && (!capacity || r.met())) {
        write_row_json(j, x, r.ranked.front(), 1);
    } else {
        j.null();
    }
    j.key("closest");
    if (r.none) {
        j.begin_object();
        write_config_json(j, r.none->closest);
        j.member("low_load_p99_ms", r.none->closest_p99.in(units::ms))
            .member("why", r.none->why)
            .end_object();
    } else {
        j.null();
    }
    j.key("candidates").begin_array();
    for (std::size_t i = 0; i < r.ranked.size(); ++i) write_row_json(j, x, r.ranked[i], i + 1);
    j.end_array().end_object();
}

inline void write_csv(std::ostream& out, const context& x, const serving_sweep_result& r) {
    using io::format_shortest;
    io::csv_writer w(out);
    w.row({"rank",
           "streams",
           "cube",
           "vector",
           "max_gear",
           "window_ms",
           "qps",
           "mean_ms",
           "p50_ms",
           "p99_ms",
           "p999_ms",
           "utilization",
           "core_utilization",
           "padding_share",
           "mean_batch",
           "capacity_qps",
           "cards",
           "low_load_p99_ms",
           "analytic_rank",
           "analytic_p99_ms",
           "analytic_capacity_qps",
           "state",
           "saturation_qps",
           "capacity_limit",
           "analytic_state"});
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
        const serving_row& row = r.ranked[i];
        const serving_config& k = row.config;
        std::vector<std::string> head{std::to_string(i + 1),
                                      std::to_string(k.streams),
                                      std::to_string(k.split.cube.value),
                                      std::to_string(k.split.vector.value),
                                      std::to_string(k.max_gear),
                                      format_shortest(k.window.in(units::ms))};
        const auto cards = cards_of(x, row);
        std::vector<std::string> tail{
            row.capacity ? format_shortest(row.capacity->in(units::qps)) : "",
            cards ? std::to_string(cards->cards) : "",
            format_shortest(row.low_load_p99.in(units::ms)),
            std::to_string(row.analytic_rank),
            x.options.target || !is_finite(row.analytic_p99)
                ? ""
                : format_shortest(row.analytic_p99.in(units::ms)),
            row.analytic_capacity ? format_shortest(row.analytic_capacity->in(units::qps)) : ""};
        auto emit = [&](const serving_point* p) {
            std::vector<std::string> f = head;
            if (p != nullptr) {
                const bool steady = p->state == load_state::stable;
                f.push_back(format_shortest(p->qps.in(units::qps)));
                for (duration t : {p->mean, p->p50, p->p99, p->p999}) {
                    f.push_back(steady ? format_shortest(t.in(units::ms)) : "");
                }
                for (double v :
                     {p->utilization, p->core_utilization, p->padding_share, p->mean_batch}) {
                    f.push_back(format_shortest(v));
                }
            } else {
                f.insert(f.end(), 9, "");
            }
            f.insert(f.end(), tail.begin(), tail.end());
            f.push_back(p != nullptr ? std::string(name_of(p->state)) : "");
            f.push_back(row.saturation ? format_shortest(row.saturation->throughput.in(units::qps))
                                       : "");
            f.push_back(row.capacity ? std::string(name_of(row.limit)) : "");
            // Load mode: whether the analytic model saw the highest load as stable (an empty
            // analytic_p99_ms when it did not: that TP99 grows without end).
            f.push_back(x.options.target              ? ""
                        : is_finite(row.analytic_p99) ? "stable"
                                                      : "saturated");
            w.row(f);
        };
        if (row.points.empty()) emit(nullptr);
        for (const serving_point& p : row.points) emit(&p);
    }
}

inline void write_table(std::ostream& out, const context& x, const serving_sweep_result& r,
                        std::size_t top) {
    const serving_sweep_options& o = x.options;
    const bool capacity = o.target.has_value();
    const std::size_t simulated = simulated_count(r);
    out << "model " << x.model_name << " (" << x.model_nodes << " nodes) on " << x.chip_name
        << ", batch sizes: " << x.sizes_text << "\n"
        << r.configurations << " configurations ranked by the analytic M/G/c model; the top "
        << r.ranked.size() << " simulated (" << o.requests << " requests each, the first "
        << o.warmup << " warm-up, seed " << o.seed << ")";
    if (simulated < r.ranked.size()) {
        out << ";\n"
            << r.ranked.size() - simulated
            << " of them not simulated: their TP99 misses the target even with no queueing";
    }
    out << "\n";
    if (capacity) {
        if (r.met()) {
            const serving_row& b = r.ranked.front();
            out << "best under TP99 <= " << io::format_shortest(o.target->in(units::ms))
                << " ms: " << describe(b.config) << ": "
                << io::format_fixed(b.capacity->in(units::qps), 0) << " QPS per card (TP99 "
                << ms3(b.points.front().p99) << " ms there)\n";
            if (b.limit == capacity_limit::saturation) {
                out << "capped at saturation: capacity = saturation throughput "
                    << io::format_fixed(b.saturation->throughput.in(units::qps), 0) << " x (1 - "
                    << io::format_shortest(saturation_margin)
                    << "); the target is looser than saturation allows (no steady state "
                       "above)\n";
            }
            if (const auto c = cards_of(x, b)) {
                out << "traffic " << rate_text(x.traffic->in(units::qps)) << " QPS: " << c->cards
                    << " card(s) = ceil(traffic / (capacity x (1 - "
                    << io::format_shortest(x.headroom) << "))), "
                    << io::format_fixed(c->per_card.in(units::qps), 0) << " QPS per card, "
                    << pct(c->load) << " % of its capacity\n";
            }
        } else if (r.none) {
            out << r.none->why << "\n";
        }
    } else {
        std::size_t points = 0;
        std::size_t unsteady = 0;
        for (const serving_row& row : r.ranked) {
            for (const serving_point& p : row.points) {
                ++points;
                if (p.state != load_state::stable) ++unsteady;
            }
        }
        if (unsteady > 0) {
            out << unsteady << " of " << points
                << " simulated loads saturated or with a growing queue: no percentiles there "
                   "(they would measure the run's length)\n";
        }
    }
    out << "\n";
    std::vector<std::string> header{"#", "streams", "cube/vec", "max gear", "window ms"};
    header.emplace_back(capacity ? "capacity QPS" : "QPS");
    for (const char* h :
         {"mean ms", "P50 ms", "P99 ms", "P99.9 ms", "util %", "cores %", "padding %", "mean bs"}) {
        header.emplace_back(h);
    }
    if (capacity) header.emplace_back("limit");
    if (capacity && x.traffic) header.emplace_back("cards");
    header.emplace_back("sat. QPS");
    if (capacity) {
        header.emplace_back("idle P99 ms");
        header.emplace_back("an. QPS");
    }
    header.emplace_back("an. #");
    io::text_table t(header);
    // Numbers right-aligned even in columns that hold "none" or "-" for a row that meets nothing.
    for (std::size_t i = 0; i < header.size(); ++i) {
        t.set_align(i, i == 2 ? io::align::left : io::align::right);
    }
    const std::size_t rows = top == 0 || top > r.ranked.size() ? r.ranked.size() : top;
    for (std::size_t i = 0; i < rows; ++i) {
        const serving_row& row = r.ranked[i];
        const serving_config& k = row.config;
        auto cells = [&](const serving_point* p, bool first) {
            std::vector<std::string> c;
            if (first) {
                c = {std::to_string(i + 1), std::to_string(k.streams), split_text(k),
                     std::to_string(k.max_gear), io::format_shortest(k.window.in(units::ms))};
            } else {
                c.assign(5, "");
            }
            if (p != nullptr && p->state != load_state::stable) {
                // No percentiles past saturation: they would measure the run's length.
                c.insert(c.end(), {io::format_fixed(p->qps.in(units::qps), 0), "-", "-",
                                   std::string(name_of(p->state)), "-", pct(p->utilization),
                                   pct(p->core_utilization), pct(p->padding_share),
                                   io::format_fixed(p->mean_batch, 1)});
            } else if (p != nullptr) {
                c.insert(c.end(),
                         {io::format_fixed(p->qps.in(units::qps), 0), ms3(p->mean), ms3(p->p50),
                          ms3(p->p99), ms3(p->p999), pct(p->utilization), pct(p->core_utilization),
                          pct(p->padding_share), io::format_fixed(p->mean_batch, 1)});
            } else {
                c.emplace_back("none");
                c.insert(c.end(), 8, "-");
            }
            if (capacity) {
                c.push_back(!first || !row.capacity ? "" : std::string(name_of(row.limit)));
            }
            if (capacity && x.traffic) {
                const auto cards = cards_of(x, row);
                c.push_back(cards ? std::to_string(cards->cards) : "-");
            }
            c.push_back(first && row.saturation
                            ? io::format_fixed(row.saturation->throughput.in(units::qps), 0)
                            : (first ? "-" : ""));
            if (capacity) {
                c.push_back(first ? ms3(row.low_load_p99) : "");
                c.push_back(!first ? ""
                            : row.analytic_capacity
                                ? io::format_fixed(row.analytic_capacity->in(units::qps), 0)
                                : "none");
            }
            c.push_back(first ? std::to_string(row.analytic_rank) : "");
            return c;
        };
        if (row.points.empty()) t.add_row(cells(nullptr, true));
        for (std::size_t p = 0; p < row.points.size(); ++p) {
            t.add_row(cells(&row.points[p], p == 0));
        }
    }
    t.write(out);
    if (rows < r.ranked.size()) {
        out << "(" << r.ranked.size() - rows << " more simulated; --top 0 lists all)\n";
    }
    out << (capacity ? "capacity QPS: the highest Poisson load per card whose simulated TP99 "
                       "meets the target\n(bisection to "
                     : "QPS: the offered Poisson load per card; ")
        << (capacity
                ? io::format_shortest(100 * o.rel_tolerance) + " %), at most sat. QPS x (1 - " +
                      io::format_shortest(saturation_margin) +
                      ") (limit: latency, or saturation\nwhen the target allows more); "
                      "latencies at it: "
                : "")
        << "arrival to the end of the last chunk;\nsat. QPS: the saturation throughput (every "
           "request queued at once): no steady state at or\nabove it (saturated) nor where the "
           "run's queue grew (queue-growing): no percentiles there;\nutil: streams busy; "
           "cores: the card's cube "
           "cores held; padding: padded / gear samples\n(0 when every bs 1..max is a gear); "
           "mean bs: samples per batch after merging;\n"
        << (capacity ? "idle P99: TP99 with no queueing (exact); an. QPS: the analytic capacity;\n"
                     : "")
        << "an. #: place in the analytic ranking that chose the simulated leaders ("
        << (capacity ? "capacity" : "TP99 at the highest load") << ").\n";
}

/// TP99 against QPS for the first few simulated configurations (sweep_qps at 10 loads).
inline void write_svg(const std::string& path, const context& x, const serving_sweeper& s,
                      const serving_sweep_result& r, std::string_view title) {
    constexpr std::size_t most = 5;
    constexpr std::array<std::string_view, most> colors{"#1c7ed6", "#d9480f", "#2b8a3e", "#862e9c",
                                                        "#e67700"};
    const serving_sweep_options& o = x.options;
    std::vector<const serving_row*> rows;
    double hi = 0;
    double floor_p99 = 0;
    for (const serving_row& row : r.ranked) {
        if (rows.size() == most || row.points.empty()) continue;
        rows.push_back(&row);
        if (row.capacity) hi = std::max(hi, 1.25 * row.capacity->in(units::qps));
        floor_p99 = std::max(floor_p99, row.low_load_p99.in(units::ms));
    }
    for (request_rate q : o.loads) hi = std::max(hi, q.in(units::qps));
    // Past saturation the TP99 grows with the run's length: such points are left off, and so
    // are points above this, so that the curves stay readable.
    const double y_cap = o.target ? 3 * o.target->in(units::ms) : 5 * floor_p99;
    io::svg_plot p(std::string(title) + " (saturated loads and TP99 above " +
                       io::format_shortest(y_cap) + " ms left off)",
                   "QPS per card", "TP99 (ms)");
    std::vector<request_rate> rates;
    for (int i = 1; i <= 10; ++i) rates.push_back(request_rate{hi * i / 10.0, units::qps});
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const serving_row& row = *rows[i];
        io::svg_series line{
            .name = "#" + std::to_string(i + 1) + " " + std::to_string(row.config.streams) + " x " +
                    split_text(row.config) + ", gear " + std::to_string(row.config.max_gear) +
                    ", window " + io::format_shortest(row.config.window.in(units::ms)) + " ms",
            .points = {},
            .color = std::string(colors[i]),
            .style = io::svg_style::line_markers};
        for (const serving_point& pt : s.curve(row.config, rates, o.requests, o.warmup, o.seed)) {
            if (pt.state == load_state::stable && pt.p99.in(units::ms) <= y_cap) {
                line.points.push_back({pt.qps.in(units::qps), pt.p99.in(units::ms)});
            }
        }
        p.add(std::move(line));
    }
    if (o.target) {
        p.add({.name = "TP99 target",
               .points = {{0, o.target->in(units::ms)}, {hi, o.target->in(units::ms)}},
               .color = "#c92a2a",
               .style = io::svg_style::line});
    }
    for (request_rate q : o.loads) {
        p.add_vline(q.in(units::qps), rate_text(q.in(units::qps)) + " QPS", "#868e96");
    }
    io::write_output({path, "--svg"}, [&](std::ostream& f) { p.write(f); });
}

inline int run(const parsed_args& a, std::ostream& out, std::ostream& err, const model& m,
               const chip& c, const std::string& format, const card_params& params = {}) {
    using whatif_detail::as_ints;
    for (std::string_view card_only : {"latency-ms", "rank"}) {
        if (a.has(card_only)) {
            throw usage_error("option '--" + std::string(card_only) +
                              "' ranks single inferences; with serving flags (--qps, --p99-ms, "
                              "...) use --p99-ms for a TP99 target");
        }
    }
    context x;
    x.model_name = m.name;
    x.model_nodes = m.nodes.size();
    x.chip_name = std::string(c.name.view());
    serving_sweep_options& o = x.options;

    // The load: fixed loads or a TP99 target, not both.
    if (a.has("qps") == a.has("p99-ms")) {
        throw usage_error(a.has("qps")
                              ? "give --qps (latency at fixed loads) or --p99-ms (capacity under "
                                "a TP99 target), not both"
                              : "serving flags need a load: --qps X[,Y..] or a TP99 target "
                                "--p99-ms X");
    }
    if (a.has("qps")) {
        for (double q : parse_reals("qps", *a.get("qps"), qps_range)) {
            o.loads.push_back(request_rate{q, units::qps});
        }
    } else {
        o.target = duration{parse_real(a, "p99-ms", p99_range), units::ms};
    }
    if (a.has("traffic")) {
        if (!o.target) {
            throw usage_error("option '--traffic' needs --p99-ms (cards = traffic / capacity)");
        }
        x.traffic = request_rate{parse_real(a, "traffic", traffic_range), units::qps};
    }
    if (a.has("headroom")) {
        if (!x.traffic) throw usage_error("option '--headroom' needs --traffic");
        x.headroom = parse_real(a, "headroom", headroom_range);
    }
    o.requests = parse_count(a, "requests", 20000, 1000, 100000000);
    o.warmup = o.requests / 10;
    o.seed = parse_count(a, "seed", 1, 0, std::numeric_limits<std::uint64_t>::max());
    o.simulate_top = static_cast<std::size_t>(parse_count(a, "simulate-top", 8, 0, 1000000));
    const std::size_t top = row_count(a, "top", 20);

    // Batch sizes: a histogram, or every request of --batch samples.
    std::optional<batch_distribution> dist;
    if (const auto h = a.get("bs-hist")) {
        if (a.has("batch")) {
            throw usage_error(
                "give --bs-hist FILE (a batch-size histogram) or --batch B (every "
                "request of B samples), not both");
        }
        dist = io::read_bs_histogram_file(*h);
        x.sizes_source = *h;
        x.sizes_text = *h + " (" + std::to_string(dist->bins().size()) + " sizes, mean " +
                       io::format_fixed(dist->mean(), 2) + " samples)";
    } else {
        const std::vector<std::int64_t> b = parse_list("batch", a.value_or("batch", "16"));
        if (b.size() != 1 || b.front() > max_batch_size) {
            throw usage_error(
                "option '--batch': with serving flags it is the one batch size of "
                "every request (1.." +
                std::to_string(max_batch_size) + "); for a mix give --bs-hist FILE");
        }
        dist = batch_distribution::fixed(static_cast<int>(b.front()));
        x.sizes_source = "fixed";
        x.sizes_text = "every request " + std::to_string(b.front()) + " samples (--batch)";
    }
    x.dist = &*dist;

    // The grid.
    auto list_or = [&](std::string_view flag, std::string_view fallback) {
        return as_ints(flag, parse_list(flag, a.value_or(flag, fallback)));
    };
    serving_grid g;
    const std::vector<int> streams = list_or("streams", "1-6");
    const std::vector<int> cube = list_or("cube", "6,8,12,24");
    const std::vector<int> vector = list_or("vector", "10,12,24,48");
    g.max_gears = list_or("max-batch", "8,16,20,32");
    g.windows.clear();
    for (double w : parse_reals("window-ms", a.value_or("window-ms", "0"), window_range)) {
        g.windows.push_back(duration{w, units::ms});
    }
    whatif_detail::check_at_most("streams", streams, max_sweep_streams, "a stream count per card");
    whatif_detail::check_at_most("max-batch", g.max_gears, max_sweep_gear, "a largest gear");
    whatif_detail::check_limits("cube", cube, c.cube.cores, "cube", c.name.view());
    whatif_detail::check_limits("vector", vector, c.vector.cores, "vector", c.name.view());
    g.streams = counts<stream_count>(streams);
    g.cube = counts<core_count>(cube);
    g.vector = counts<core_count>(vector);
    check_chunks(o.requests, *dist, g.max_gears, x.sizes_text);

    o.progress = progress_from_args(a, err, "whatif");
    const serving_sweeper s(c, m, g, *dist, params, o.progress);
    const serving_sweep_result r = s.run(o);

    if (format == "table") {
        write_table(out, x, r, top);
    } else if (format == "csv") {
        write_csv(out, x, r);
    } else {
        write_json(out, x, r);
    }

    if (const auto path = a.get("trace")) {
        const bool have = !r.ranked.empty() && !r.ranked.front().points.empty();
        if (!have) {
            // Not on `out` when it carries csv or json.
            (format == "table" ? out : err)
                << "no trace written: no configuration meets the target, so there is no load "
                   "to trace\n";
        } else {
            const serving_row& best = r.ranked.front();
            const request_rate q = best.points[o.target ? 0 : r.peak].qps;
            // One second after the first: the card has left its empty start behind.
            const duration from{1.0, units::s};
            const serving_result tl =
                s.timeline(best.config, q, from, duration{1.0, units::s}, o.seed);
            io::chrome_trace_options copt;
            copt.process_name = "perfcast: " + describe(best.config) + " at " +
                                io::format_fixed(q.in(units::qps), 0) + " QPS";
            io::write_output({*path, "--trace"}, [&](std::ostream& f) {
                io::write_chrome_trace(f, tl.timeline, copt);
            });
            if (format == "table") {
                out << "trace: " << *path << ": #1 at " << io::format_fixed(q.in(units::qps), 0)
                    << " QPS, simulated 1 s .. 2 s: " << tl.timeline.batches.size()
                    << " batches on " << best.config.streams << " stream track(s), "
                    << tl.timeline.requests.size() << " requests"
                    << (tl.timeline.truncated ? " (truncated)" : "") << "\n";
            }
        }
    }
    if (const auto path = a.get("svg")) {
        write_svg(*path, x, s, r,
                  "perfcast whatif: " + m.name + " on " + std::string(c.name.view()));
    }
    return exit_ok;
}

}  // namespace whatif_serving

std::string whatif_usage() {
    return "Usage: perfcast whatif [--model FILE] [--chip C] [--batch LIST] [--streams LIST]\n"
           "                       [--cube LIST] [--vector LIST] [--latency-ms X] [--rank BY]\n"
           "                       [--top N] [--format table|csv|json] [--svg FILE]\n"
           "       perfcast whatif PROFILE.csv --batch B [--sweep-batch LIST] [other flags]\n\n"
           "Rank deployments (streams per card x cube / vector cores per instance x batch) by\n"
           "QPS = 1000 / mean latency (ms) x streams, ties by latency; mark the Pareto front of\n"
           "QPS against latency and the best deployment within --latency-ms. Without --model it\n"
           "runs the built-in CTR ranking scenario (docs/scenario.md) on ascend910b1.\n\n"
           "With PROFILE.csv (one profiled step at batch B, --batch B) every compute row is\n"
           "anchored on its measured time: at a candidate, measured x model(candidate) /\n"
           "model(its block dim at batch B); rows the model cannot map keep their measured time\n"
           "(docs/model.md, \"What-if from a profile\"). --sweep-batch: candidate batches.\n\n"
           "Serving mode: perfcast whatif (--qps X[,Y..] | --p99-ms X [--traffic QPS])\n"
           "                [--bs-hist FILE | --batch B] [--max-batch LIST] [--window-ms T]\n"
           "Serve Poisson requests (batch sizes from --bs-hist) on every streams x cube x\n"
           "vector x max gear x window configuration: rank all by the analytic M/G/c model,\n"
           "simulate the --simulate-top leaders, report mean / P50 / P99 / P99.9 at each --qps,\n"
           "or the highest QPS whose TP99 meets --p99-ms and the cards --traffic needs\n"
           "(docs/whatif-serving.md).\n\n" +
           options_text(whatif_detail::options);
}

int run_whatif(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    using namespace whatif_detail;
    const parsed_args a = parse_args(args, options);
    if (a.has("help")) {
        out << whatif_usage();
        return exit_ok;
    }
    // Output paths fail now, not after the search (written later by write_svg and --trace).
    (void)output_from_args(a, "svg");
    (void)output_from_args(a, "trace");
    if (a.positional.size() > 1 || (!a.positional.empty() && a.has("model"))) {
        throw usage_error("unexpected argument '" + a.positional.back() +
                          "' (one PROFILE.csv, or a model file after --model)");
    }
    const bool from_profile = !a.positional.empty();
    if (!from_profile && a.has("sweep-batch")) {
        throw usage_error(
            "option '--sweep-batch' needs a PROFILE.csv (without one, --batch "
            "lists the batch sizes)");
    }
    const std::string format = choice(a, "format", {"table", "csv", "json"}, "table");
    const std::string rank = choice(a, "rank", {"qps", "throughput"}, "qps");

    // The model and the chip.
    // A profile run without --chip / --chip-ini: the chip the profile names, else the default.
    const bool chip_given = a.has("chip") || a.has("chip-ini");
    chip c = chip_from_args(a, scenario::default_chip.name.view());
    const profile::calibration cal = params_from_args(a);
    std::optional<profile::anchored_profile> anchored;
    if (from_profile) {
        if (!a.has("batch")) {
            throw usage_error("a profile needs --batch B, the batch size it was measured at");
        }
        const std::vector<std::int64_t> pb = parse_list("batch", *a.get("batch"));
        if (pb.size() != 1) {
            throw usage_error(
                "option '--batch': with a profile it is the one batch size the "
                "profile was measured at (candidates: --sweep-batch LIST)");
        }
        if (a.has("bs-hist")) {
            throw usage_error(
                "--bs-hist does not apply to a profile: --batch is its profiled "
                "batch, served as every request's size");
        }
        chip_told told;
        const auto table =
            read_profile_rows(a, a.positional.front(), err, chip_given ? nullptr : &told);
        if (!chip_given) {
            if (told.c) {
                c = *told.c;
            } else {
                std::string why = told.why_not;
                constexpr std::string_view asks = "needs --chip C or --chip-ini FILE: ";
                if (why.starts_with(asks)) why.erase(0, asks.size());
                err << "perfcast: " << a.positional.front() << ": the profile does not name its "
                    << "chip (" << why << "); " << c.name.view() << " assumed, --chip C sets it\n";
            }
        }
        anchored = profile::anchor_profile(c, table.rows, pb.front(), cal);
        if (anchored->m.nodes.empty()) {
            throw usage_error("profile '" + a.positional.front() +
                              "' has no compute rows with a duration to anchor on");
        }
        anchored->m.name =
            a.positional.front() + " (anchored at batch " + std::to_string(pb.front()) + ")";
    }
    const bool onnx_model = a.has("model") && is_onnx_path(*a.get("model"));
    for (const std::string_view flag : {"batch-dim", "unfused-attention"}) {
        if (a.has(flag) && !onnx_model) {
            throw usage_error("option '--" + std::string(flag) +
                              "' applies to an ONNX graph: --model MODEL.onnx");
        }
    }
    model m = anchored         ? anchored->m
              : a.has("model") ? read_model_input(*a.get("model"), err, a.value_or("batch-dim", ""),
                                                  {.fuse_attention = !a.has("unfused-attention")})
                               : scenario::ctr_ranking_model();
    const card_params params{.graph = {.model = cal.params},
                             .host_threads = host_threads_from_args(a),
                             .runtime = runtime_from_args(a, m, cal)};
    if (a.has("gains")) {
        if (from_profile) throw usage_error("--gains takes a model (--model), not a profile");
        return whatif_gains::run(
            a, out, m, c, cal, format,
            [](std::string_view f, std::string_view t) { return parse_list(f, t); });
    }
    if (whatif_serving::requested(a)) {
        return whatif_serving::run(a, out, err, m, c, format, params);
    }

    // The grid.
    auto list_or = [&](std::string_view flag, std::string_view fallback) {
        return parse_list(flag, a.value_or(flag, fallback));
    };
    const std::vector<int> streams = as_ints("streams", list_or("streams", "1-6"));
    const std::vector<int> cube = as_ints("cube", list_or("cube", "6,8,12,24"));
    const std::vector<int> vector = as_ints("vector", list_or("vector", "10,12,24,48"));
    const std::vector<std::int64_t> batches =
        anchored ? list_or("sweep-batch", *a.get("batch")) : list_or("batch", "16,32,64,128,256");
    check_at_most("streams", streams, max_sweep_streams, "a stream count per card");
    check_at_most(anchored ? "sweep-batch" : "batch", batches, max_batch_size, "a batch size");
    check_limits("cube", cube, c.cube.cores, "cube", c.name.view());
    check_limits("vector", vector, c.vector.cores, "vector", c.name.view());
    const whatif_grid g{.streams = counts<stream_count>(streams),
                        .cube = counts<core_count>(cube),
                        .vector = counts<core_count>(vector),
                        .batches = counts<batch_size>(batches)};

    std::optional<duration> target;
    if (auto t = a.get("latency-ms")) {
        double v = 0;
        auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
        if (t->empty() || ec != std::errc{} || p != t->data() + t->size() ||
            !(v >= min_latency_ms) || !(v <= max_latency_ms)) {
            throw usage_error("option '--latency-ms': '" + ::perfcast::parse_error::printable(*t) +
                              "' is not a latency in [0.001, 1e+09] ms (e.g. 1.5)");
        }
        target = duration{v, units::ms};
    }
    const std::size_t top = row_count(a, "top", 20);

    const whatif_result r =
        sweep(c, m, g, params, rank == "throughput" ? rank_by::throughput : rank_by::qps,
              progress_from_args(a, err, "whatif"));
    std::optional<selection> pick;
    if (target) pick = r.best_under(*target);
    std::vector<bool> on_front(r.ranked.size(), false);
    for (std::size_t i : r.pareto) on_front[i] = true;
    auto is_pick = [&](const candidate& x) {
        return pick && pick->has_value() && x == pick->closest();
    };

    if (format == "table") {
        out << "model " << m.name << " (" << m.nodes.size() << " nodes) on " << c.name.view()
            << ": " << r.ranked.size() << " deployments, ranked by "
            << (rank == "qps" ? "QPS" : "samples/s") << "\n";
        if (anchored) {
            const auto& p = *anchored;
            const std::size_t mapped = p.anchors.size() - p.unmapped;
            out << "profile: " << p.anchors.size() << " measured ops anchored (" << mapped
                << " mapped to ops, " << p.batch_dependent << " scaling with the batch; "
                << p.unmapped << " unmapped, kept at their measured time), " << p.skipped
                << " rows skipped (communication, DSA, no duration)\n"
                << "measured " << io::format_fixed(p.measured.in(units::ms), 3)
                << " ms of op time; the model at the profiled configuration (batch " << p.batch
                << ", each op's block dim): "
                << io::format_fixed(profile::profiled_time(c, p, cal).in(units::ms), 3) << " ms\n";
        }
        if (pick) {
            if (pick->has_value()) {
                out << "best within " << io::format_shortest(target->in(units::ms))
                    << " ms: " << describe(pick->closest()) << "\n";
            } else {
                out << pick->why() << "\n";
            }
        }
        out << "\n";
        const bool with_path = params.runtime.has_value();
        std::vector<std::string> header{"#", "streams", "cube/vec", "batch", "latency ms"};
        if (with_path) header.insert(header.end(), {"window ms", "cycle ms"});
        header.insert(header.end(), {"QPS", "samples/s", "cube %", "vec %", "L2 miss %", "bound",
                                     "shared", "front", "note"});
        io::text_table t(std::move(header));
        const std::size_t rows = top == 0 || top > r.ranked.size() ? r.ranked.size() : top;
        bool pick_shown = false;
        auto add = [&](std::size_t i) {
            const candidate& x = r.ranked[i];
            std::string note;
            if (is_pick(x)) {
                note = "<- best within " + io::format_shortest(target->in(units::ms)) + " ms";
                pick_shown = true;
            }
            std::vector<std::string> row{std::to_string(i + 1), std::to_string(x.streams),
                                         split_text(x), std::to_string(x.batch),
                                         io::format_fixed(x.latency.in(units::ms), 3)};
            if (with_path) {
                row.insert(row.end(), {io::format_fixed(x.window.in(units::ms), 3),
                                       io::format_fixed(x.cycle.in(units::ms), 3)});
            }
            row.insert(row.end(),
                       {io::format_fixed(x.qps, 0), io::format_fixed(x.throughput, 0),
                        io::format_fixed(100 * x.cube_utilization, 1),
                        io::format_fixed(100 * x.vector_utilization, 1),
                        io::format_fixed(100 * x.l2_miss, 1), std::string(name_of(x.bound)),
                        x.cores_shared ? "yes" : "", on_front[i] ? "*" : "", note});
            t.add_row(std::move(row));
        };
        for (std::size_t i = 0; i < rows; ++i) add(i);
        if (pick && pick->has_value() && !pick_shown) {
            for (std::size_t i = rows; i < r.ranked.size(); ++i) {
                if (is_pick(r.ranked[i])) {
                    add(i);
                    break;
                }
            }
        }
        t.write(out);
        if (rows < r.ranked.size()) {
            out << "(" << r.ranked.size() - rows
                << " more; --top 0 lists all, --format csv|json gives every column)\n";
        }
        if (with_path) {
            out << "runtime path: " << runtime_summary(*params.runtime) << "\n"
                << "latency: one task, prepare .. post, every stream busy; window: what a stress\n"
                   "test times ("
                << name_of(params.runtime->window)
                << "); cycle: task + host work between tasks; QPS = 1000 / cycle\n"
                   "ms x streams (closed loop, tasks back to back); samples/s = QPS x batch;\n";
        } else {
            out << "latency: one inference with every stream busy; QPS = 1000 / latency ms x "
                   "streams;\nsamples/s = QPS x batch; ";
        }
        out << "shared: the splits add up to more cores than the chip\n"
               "has, so cores are time-shared; front: on the Pareto front of QPS against latency\n"
               "("
            << r.pareto.size() << " deployments).\n";
    } else if (format == "csv") {
        io::csv_writer w(out);
        w.row({"rank",
               "streams",
               "cube",
               "vector",
               "batch",
               "latency_ms",
               "qps",
               "samples_per_s",
               "cube_utilization",
               "vector_utilization",
               "hbm_utilization",
               "l2_miss",
               "bubbles_ms",
               "transfer_ms",
               "bound",
               "cores_shared",
               "pareto",
               "best",
               "stress_window_ms",
               "cycle_ms"});
        for (std::size_t i = 0; i < r.ranked.size(); ++i) {
            const candidate& x = r.ranked[i];
            using io::format_shortest;
            w.row({std::to_string(i + 1),
                   std::to_string(x.streams),
                   std::to_string(x.split.cube.value),
                   std::to_string(x.split.vector.value),
                   std::to_string(x.batch),
                   format_shortest(x.latency.in(units::ms)),
                   format_shortest(x.qps),
                   format_shortest(x.throughput),
                   format_shortest(x.cube_utilization),
                   format_shortest(x.vector_utilization),
                   format_shortest(x.hbm_utilization),
                   format_shortest(x.l2_miss),
                   format_shortest(x.bubbles.in(units::ms)),
                   format_shortest(x.transfer.in(units::ms)),
                   std::string(name_of(x.bound)),
                   x.cores_shared ? "1" : "0",
                   on_front[i] ? "1" : "0",
                   is_pick(x) ? "1" : "0",
                   format_shortest(x.window.in(units::ms)),
                   format_shortest(x.cycle.in(units::ms))});
        }
    } else {
        io::json_writer j(out);
        j.begin_object().member("model", m.name).member("chip", c.name.view());
        // What each figure means (latency_ms: the task; window_ms: what a stress test times;
        // cycle_ms: task + between-task host work; qps: closed loop).
        j.key("runtime");
        if (params.runtime) {
            write_runtime_json(j, *params.runtime);
        } else {
            j.null();
        }
        j.member("host_threads", params.host_threads);
        // What the table mode prints about an anchored profile (null for a model).
        j.key("profile");
        if (anchored) {
            const auto& p = *anchored;
            j.begin_object()
                .member("anchored", static_cast<double>(p.anchors.size()))
                .member("mapped", static_cast<double>(p.anchors.size() - p.unmapped))
                .member("batch_dependent", static_cast<double>(p.batch_dependent))
                .member("unmapped", static_cast<double>(p.unmapped))
                .member("skipped", static_cast<double>(p.skipped))
                .member("profiled_batch", static_cast<double>(p.batch))
                .member("measured_ms", p.measured.in(units::ms))
                .member("model_at_profile_ms", profile::profiled_time(c, p, cal).in(units::ms))
                .end_object();
        } else {
            j.null();
        }
        j.key("target_ms");
        if (target) {
            j.value(target->in(units::ms));
        } else {
            j.null();
        }
        j.member("met", pick.has_value() && pick->has_value());
        j.key("best");
        if (pick && pick->has_value()) {
            write_candidate_json(j, pick->closest());
        } else {
            j.null();
        }
        j.key("closest");
        if (pick) {
            write_candidate_json(j, pick->closest());
        } else {
            j.null();
        }
        j.key("pareto").begin_array();
        for (std::size_t i : r.pareto) j.value(static_cast<double>(i + 1));
        j.end_array();
        j.key("candidates").begin_array();
        for (const candidate& x : r.ranked) write_candidate_json(j, x);
        j.end_array();
        j.end_object();
        out << '\n';
    }
    if (auto path = a.get("svg")) {
        write_svg(*path, r, pick,
                  "perfcast whatif: " + m.name + " on " + std::string(c.name.view()));
    }
    return exit_ok;
}

/// The dispatch-table entry for main.cpp.

}  // namespace perfcast::cli
