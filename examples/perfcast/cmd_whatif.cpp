// examples/perfcast/cmd_whatif.cpp: `perfcast whatif`, the main job.
//
//   perfcast whatif [--model FILE] [--chip C] [--batch B[,B..]] [--streams 1-6]
//                   [--cube 6,8,12,24] [--vector 10,12,24,48] [--latency-ms X]
//                   [--rank-by qps|throughput] [--top N] [--format table|csv|json] [--svg FILE]
//   perfcast whatif PROFILE.csv --batch B [--sweep-batch LIST] [grid or serving flags]
//   perfcast whatif (--qps X[,Y..] | --p99-ms X [--traffic QPS [--headroom H]])
//                   [--bs-hist FILE | --replay FILE | --batch B] [--max-batch LIST]
//                   [--window-ms T[,T..]]
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
#include <perfcast/io/histogram.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/output_file.hpp>
#include <perfcast/io/serving_report.hpp>
#include <perfcast/io/serving_report_table.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/io/whatif_report.hpp>
#include <perfcast/profile/anchored.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving_sweep.hpp>
#include <perfcast/whatif.hpp>

#include "cli.hpp"
#include "command_parts.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "onnx_source.hpp"
#include "progress.hpp"

namespace perfcast::cli {

namespace whatif_detail {

inline constexpr std::array<option, 42> options{{
    {"model", "FILE",
     "model file (docs/model-file.md) or ONNX graph (.onnx, docs/import.md); default: the "
     "built-in CTR scenario"},
    {"batch-dim", "NAME",
     "with --model MODEL.onnx: the symbolic input dimension that is the batch (default: the "
     "first)"},
    {"unfused-attention", "",
     "with --model MODEL.onnx: attention subgraphs node by node (default: one fused attention "
     "line each)"},
    {"unfused-qdq", "",
     "with --model MODEL.onnx: QuantizeLinear / DequantizeLinear nodes priced as written "
     "(default: a GEMM between them one integer GEMM)"},
    {"chip", "C", "chip preset (perfcast chips); default: ascend910b1"},
    chip_ini_option,
    params_option,
    runtime_option,
    runtime_set_option,
    host_threads_option,
    chips_per_card_option,
    shared_weights_option,
    instance_memory_option,
    {"batch", "LIST",
     "batch sizes, e.g. 16,64 or 16-20; default 16,32,64,128,256 (serving: "
     "one size, default 16)"},
    {"streams", "LIST", "streams (instances) per card; default 1-6"},
    {"cube", "LIST",
     "cube-core limits per instance; default 6,8,12,24 (of 24 cube cores; the same shares of "
     "another chip's)"},
    {"vector", "LIST",
     "vector-core limits per instance; default 10,12,24,48 (of 48; the same shares of another "
     "chip's)"},
    {"latency-ms", "X", "latency target in ms: mark the best deployment within it"},
    {"rank-by", "BY", "qps (default) or throughput (samples/s)"},
    {"top", "N", "table rows to print (default 20; 0: all)"},
    {"format", "FORMAT", "table (default), csv or json (csv and json list every candidate)"},
    {"svg", "FILE",
     "write QPS against latency, with the Pareto front, as SVG (serving: TP99 "
     "against QPS)"},
    {"qps", "X[,Y..]", "serving: loads in requests/s per card; latency percentiles there"},
    {"p99-ms", "X", "serving: TP99 target in ms; per configuration the highest QPS meeting it"},
    {"bs-hist", "FILE", "serving: request batch sizes, a bs,count CSV (default: all --batch)"},
    {"replay", "FILE",
     "serving: a recorded trace (time_ms,bs CSV): its batch sizes for the sweep, and replayed "
     "on the first 3 leaders (bursts kept)"},
    {"max-batch", "LIST",
     "serving: max gears (every bs 1..max a gear, larger requests split); "
     "default 8,16,20,32"},
    {"window-ms", "T[,T..]", "serving: batching windows in ms; default 0"},
    {"traffic", "QPS",
     "serving: total requests/s; cards = ceil(traffic / capacity) (--p99-ms), with --replay "
     "at the replayed capacities too"},
    {"headroom", "SHARE", "serving: share of each card's capacity kept free, [0, 0.99]; default 0"},
    {"simulate-top", "N", "serving: leaders of the analytic ranking simulated (default 8; 0: all)"},
    {"requests", "N", "serving: requests per simulation, the first 10 % warm-up (default 20000)"},
    {"seed", "N", "serving: simulation seed (default 1)"},
    {"trace", "FILE",
     "serving: Chrome-trace / Perfetto JSON of 1 simulated second of the best (with --replay: of "
     "the trace replayed on it)"},
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

/// The text after each "default " in option `name`'s help, up to the next ' ', ';' or ')'.
template <class Fn>
[[nodiscard]] consteval bool any_default_of(std::string_view name, Fn&& matches) {
    for (const option& o : options) {
        if (o.name != name) continue;
        constexpr std::string_view word = "default ";
        for (std::size_t at = o.help.find(word); at != std::string_view::npos;
             at = o.help.find(word, at + 1)) {
            const std::string_view rest = o.help.substr(at + word.size());
            if (matches(rest.substr(0, rest.find_first_of(" ;)")))) return true;
        }
    }
    return false;
}

/// Whether option `name`'s help says "default `text`": the help spells out the library's
/// defaults (whatif_defaults, serving_defaults), and the static_asserts below tie the two.
[[nodiscard]] consteval bool help_says_default(std::string_view name, std::string_view text) {
    return any_default_of(name, [&](std::string_view said) { return said == text; });
}
[[nodiscard]] consteval bool help_says_default(std::string_view name, std::uint64_t value) {
    return any_default_of(name, [&](std::string_view said) {
        std::uint64_t v = 0;
        for (char ch : said) {
            if (ch < '0' || ch > '9') return false;
            v = 10 * v + static_cast<std::uint64_t>(ch - '0');
        }
        return !said.empty() && v == value;
    });
}
static_assert(help_says_default("streams", whatif_defaults::streams));
static_assert(help_says_default("cube", whatif_defaults::cube));
static_assert(help_says_default("vector", whatif_defaults::vector));
static_assert(help_says_default("batch", whatif_defaults::batches));
static_assert(help_says_default("top", whatif_defaults::top));
static_assert(help_says_default("batch", serving_defaults::batch));
static_assert(help_says_default("max-batch", serving_defaults::max_gears));
static_assert(help_says_default("window-ms", serving_defaults::windows));
static_assert(help_says_default("simulate-top", serving_defaults::simulate_top));
static_assert(help_says_default("requests", serving_defaults::requests));
static_assert(help_says_default("seed", serving_defaults::seed));

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

// check_at_most (common.hpp): the card and serving modes' checks, which --gains shares.
using ::perfcast::cli::check_at_most;

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

/// The default --cube and --vector lists on chip `c`: the 910B1's (whatif_defaults) at the same
/// shares of `c`'s cores (limits_for).
[[nodiscard]] inline std::string default_cube_text(const chip& c) {
    return limits_text(scenario::default_cube, whatif_defaults::cube_base_cores,
                       core_count{c.cube.cores});
}
[[nodiscard]] inline std::string default_vector_text(const chip& c) {
    return limits_text(scenario::default_vector, whatif_defaults::vector_base_cores,
                       core_count{c.vector.cores});
}
// The base lists are the default chip's: its cores are the bases.
static_assert(whatif_defaults::cube_base_cores.value == scenario::default_chip.cube.cores);
static_assert(whatif_defaults::vector_base_cores.value == scenario::default_chip.vector.cores);

/// On a chip without an AI CPU, says on `err` which of `m`'s ops engine_of places there: they
/// run on the chip's vector engine instead (engine_on).
inline void note_aicpu_moved(std::ostream& err, const model& m, const chip& c) {
    std::string names;
    std::size_t moved = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const node& n = m.nodes[i];
        if (n.is_transfer() || engine_on(c, n) == engine_of(n)) continue;
        if (++moved > 3) continue;
        if (!names.empty()) names += ", ";
        names +=
            n.name.view().empty() ? "node " + std::to_string(i + 1) : std::string(n.name.view());
    }
    if (moved == 0) return;
    err << "perfcast: " << c.name.view() << " has no AI CPU: " << moved
        << (moved == 1 ? " op of the model placed there (" : " ops of the model placed there (")
        << names << (moved > 3 ? ", ..." : "") << (moved == 1 ? ") runs" : ") run")
        << " on its vector engine\n";
}

}  // namespace whatif_detail

// ---- serving mode: --qps / --p99-ms and the flags that go with them --------------------------

namespace whatif_serving {

/// Flags that switch `whatif` from ranking inferences to serving requests under load.
inline constexpr std::array<std::string_view, 12> flags{
    "qps",      "p99-ms",       "bs-hist",  "max-batch", "window-ms", "traffic",
    "headroom", "simulate-top", "requests", "seed",      "trace",     "replay"};

/// Leaders a --replay trace is replayed on: each replay is a simulation of the trace, and a
/// capacity a bisection of them.
inline constexpr std::size_t replayed_leaders = 3;

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
    if (p != t->data() + t->size() || ec != std::errc{}) {
        // "1e5", as the docs write large counts (io::whole_in_exponent_form: exact or nothing).
        if (const auto w = io::whole_in_exponent_form(*t); w && *w >= 0) {
            v = static_cast<std::uint64_t>(*w);
            p = t->data() + t->size();
            ec = std::errc{};
        }
    }
    if (t->empty() || ec != std::errc{} || p != t->data() + t->size() || v < lo || v > hi) {
        throw usage_error("option '--" + std::string(flag) + "': '" + *t +
                          "' is not a whole number in " + std::to_string(lo) + ".." +
                          std::to_string(hi));
    }
    return v;
}

inline int run(const parsed_args& a, std::ostream& out, std::ostream& err, const model& m,
               const chip& c, const std::string& format, const card_params& params = {}) {
    using whatif_detail::as_ints;
    for (std::string_view card_only : {"latency-ms", "rank-by"}) {
        if (a.has(card_only)) {
            throw usage_error("option '--" + std::string(card_only) +
                              "' ranks single inferences; with serving flags (--qps, --p99-ms, "
                              "...) use --p99-ms for a TP99 target");
        }
    }
    io::serving_report x;
    x.model_name = m.name;
    x.model_nodes = m.nodes.size();
    x.chip_name = std::string(c.name.view());
    x.host_threads = params.host_threads;
    x.chips = params.chips;
    if (params.runtime) {
        x.runtime = params.runtime;
        // serving/card_adapter.hpp serves without it: requests, not a loop, start the tasks.
        if (x.runtime->between > duration{}) {
            err << "perfcast: warning: runtime between_us="
                << io::format_shortest(x.runtime->between.in(units::us))
                << " is a closed-loop stress test's host work between tasks; serving has no such "
                   "loop and leaves it out\n";
            x.runtime->between = duration{};
        }
    }
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
    o.requests = parse_count(a, "requests", serving_defaults::requests, 1000, 100000000);
    o.warmup = o.requests / 10;
    o.seed = parse_count(a, "seed", serving_defaults::seed, 0,
                         std::numeric_limits<std::uint64_t>::max());
    o.simulate_top = static_cast<std::size_t>(
        parse_count(a, "simulate-top", serving_defaults::simulate_top, 0, 1000000));
    x.top = row_count(a, "top", whatif_defaults::top);

    // Batch sizes: a histogram, a trace's, or every request of --batch samples.
    std::optional<batch_distribution> dist;
    std::optional<std::vector<arrival>> replay;
    if (const auto path = a.get("replay")) {
        for (std::string_view other : {"bs-hist", "batch"}) {
            if (a.has(other)) {
                throw usage_error("give --replay FILE (a trace: its batch sizes) or --" +
                                  std::string(other) + ", not both");
            }
        }
        if (format == "csv") {
            throw usage_error(
                "option '--replay' writes its replay in --format table or json, not csv");
        }
        replay = io::read_trace_file(*path);
        if (replay->size() < serving_sweeper::min_replay_requests) {
            throw usage_error("option '--replay': " + *path + " holds " +
                              std::to_string(replay->size()) + " request(s), expected at least " +
                              std::to_string(serving_sweeper::min_replay_requests) +
                              " (the first tenth warm-up, 100 counted)");
        }
        if (!(replay->back().time > replay->front().time)) {
            throw usage_error("option '--replay': every request of " + *path +
                              " arrives at one time, expected arrivals over a span of time (a "
                              "rate)");
        }
        dist = batch_sizes_of(*replay);
        x.sizes_source = *path;
        x.replay_source = *path;
        x.sizes_text = *path + " (a trace of " + std::to_string(replay->size()) + " requests, " +
                       std::to_string(dist->bins().size()) + " sizes, mean " +
                       io::format_fixed(dist->mean(), 2) + " samples)";
    } else if (const auto h = a.get("bs-hist")) {
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
        const std::vector<std::int64_t> b =
            parse_list("batch", a.value_or("batch", serving_defaults::batch));
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
    const std::vector<int> streams = list_or("streams", whatif_defaults::streams);
    const std::vector<int> cube = list_or("cube", whatif_detail::default_cube_text(c));
    const std::vector<int> vector = list_or("vector", whatif_detail::default_vector_text(c));
    g.max_gears = list_or("max-batch", serving_defaults::max_gears);
    g.windows.clear();
    for (double w : parse_reals("window-ms", a.value_or("window-ms", serving_defaults::windows),
                                window_range)) {
        g.windows.push_back(duration{w, units::ms});
    }
    whatif_detail::check_at_most("streams", streams, max_sweep_streams, "a stream count per card");
    whatif_detail::check_at_most("max-batch", g.max_gears, max_sweep_gear, "a largest gear");
    whatif_detail::check_limits("cube", cube, c.cube.cores, "cube", c.name.view());
    whatif_detail::check_limits("vector", vector, c.vector.cores, "vector", c.name.view());
    g.streams = counts<stream_count>(streams);
    g.cube = counts<core_count>(cube);
    g.vector = counts<core_count>(vector);
    check_chunks(replay ? std::max<std::uint64_t>(o.requests, replay->size()) : o.requests, *dist,
                 g.max_gears, x.sizes_text);

    o.progress = progress_from_args(a, err, "whatif");
    const serving_sweeper s(c, m, g, *dist, params, o.progress);
    const serving_sweep_result r = s.run(o);
    if (replay) x.replays = s.replay_leaders(r, *replay, replayed_leaders, o);

    if (format == "table") {
        io::write_serving_table(out, x, r);
        io::write_replay_table(out, x, r);
    } else if (format == "csv") {
        io::write_serving_csv(out, x, r);
    } else {
        io::write_serving_json(out, x, r);
    }

    if (const auto path = a.get("trace")) {
        // The timeline written and its line in the table.
        const auto write_trace = [&](const serving_result& tl, const serving_config& k,
                                     const std::string& what, const std::string& when) {
            io::chrome_trace_options copt;
            copt.process_name = "perfcast: " + describe(k) + " " + what;
            io::write_output({*path, "--trace"}, [&](std::ostream& f) {
                io::write_chrome_trace(f, tl.timeline, copt);
            });
            if (format == "table") {
                out << "trace: " << *path << ": #1 " << what << ", " << when << ": "
                    << tl.timeline.batches.size() << " batches on " << k.streams
                    << " stream track(s), " << tl.timeline.requests.size() << " requests"
                    << (tl.timeline.truncated ? " (truncated)" : "") << "\n";
            }
        };
        const bool have = !r.ranked.empty() && !r.ranked.front().points.empty();
        if (!x.replays.empty()) {
            // The recorded trace itself on the first replayed leader, its first second (as
            // long as the Poisson timeline's, which a viewer opens at once; a longer trace is
            // cut, a shorter one is there whole).
            const trace_replay& p = x.replays.front();
            const duration span{1.0, units::s};
            const serving_result tl =
                s.replay_timeline(p.config, *replay, span, o.seed, o.service_cv);
            write_trace(tl, p.config, "replaying " + x.replay_source + " at its own pace",
                        "its first " + io::format_significant(span.in(units::s), 3) +
                            " s from its first request");
        } else if (!have) {
            // Not on `out` when it carries csv or json.
            (format == "table" ? out : err)
                << "no trace written: no configuration meets the target, so there is no load "
                   "to trace\n";
        } else {
            const serving_row& best = r.ranked.front();
            const request_rate q = best.points[o.target ? 0 : r.peak].qps;
            // One second after the first: the card has left its empty start behind. Past
            // about 2.3e7 QPS (less where requests split into many chunks) both are shortened
            // alike, so the simulation stays within the sweeper's bounds (timeline_span).
            const duration span = s.timeline_span(best.config, q, duration{1.0, units::s});
            const duration from = span;
            write_trace(s.timeline(best.config, q, from, span, o.seed, o.service_cv), best.config,
                        "at " + io::throughput_text(q.in(units::qps)) + " QPS",
                        "simulated " + io::format_significant(from.in(units::s), 3) + " s .. " +
                            io::format_significant((from + span).in(units::s), 3) + " s");
        }
    }
    const bool plotted = std::any_of(r.ranked.begin(), r.ranked.end(),
                                     [](const serving_row& row) { return !row.points.empty(); });
    if (a.has("svg") && !plotted) {
        (format == "table" ? out : err)
            << "no SVG written: no configuration meets the target, so there is no curve to "
               "draw\n";
    } else if (const auto path = a.get("svg")) {
        io::write_output({*path, "--svg"}, [&](std::ostream& f) {
            io::write_serving_svg(
                f, x, s, r,
                "perfcast whatif: " + m.name + " on " + io::card_text(c.name.view(), params.chips),
                replay ? std::span<const arrival>(*replay) : std::span<const arrival>{});
        });
    }
    return exit_ok;
}

}  // namespace whatif_serving

std::string whatif_usage() {
    return "Usage: perfcast whatif [--model FILE] [--chip C] [--batch LIST] [--streams LIST]\n"
           "                       [--cube LIST] [--vector LIST] [--latency-ms X] [--rank-by BY]\n"
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
           "                [--bs-hist FILE | --replay FILE | --batch B] [--max-batch LIST]\n"
           "                [--window-ms T]\n"
           "Serve Poisson requests (batch sizes from --bs-hist) on every streams x cube x\n"
           "vector x max gear x window configuration: rank all by the analytic M/G/c model,\n"
           "simulate the --simulate-top leaders, report mean / P50 / P99 / P99.9 at each --qps,\n"
           "or the highest QPS whose TP99 meets --p99-ms and the cards --traffic needs;\n"
           "--replay replays a recorded trace on the first leaders (docs/whatif-serving.md).\n\n" +
           options_text(whatif_detail::options);
}

int run_whatif(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    using namespace whatif_detail;
    const parsed_args a = parse_args(args, options);
    if (a.has("help")) {
        out << whatif_usage();
        return exit_ok;
    }
    // Output paths fail now, not after the search (written later by write_svg and --trace), and
    // never over a file the command reads, nor over each other.
    std::vector<io::output_file> outputs;
    for (const std::string_view out_flag : {"svg", "trace"}) {
        const auto o = output_from_args(a, out_flag);
        if (!o) continue;
        for (const std::string_view in_flag : {"model", "bs-hist", "replay", "params", "chip-ini"})
            if (const auto in = a.get(in_flag)) refuse_output_over_input(*o, *in);
        for (const std::string& in : a.positional) refuse_output_over_input(*o, in);
        for (const io::output_file& earlier : outputs) refuse_outputs_in_one_file(earlier, *o);
        outputs.push_back(*o);
    }
    if (a.positional.size() > 1 || (!a.positional.empty() && a.has("model"))) {
        throw usage_error("unexpected argument '" + a.positional.back() +
                          "' (one PROFILE.csv, or a model file after --model)");
    }
    const bool from_profile = !a.positional.empty();
    if (from_profile) {
        const std::string& p = a.positional.front();
        if (io::has_extension(p, ".model") || is_onnx_path(p)) {
            throw usage_error("'" + p + "' looks like a model, not a profile: give it as --model " +
                              p + " (the argument without a flag is a PROFILE.csv)");
        }
    }
    if (!from_profile && a.has("sweep-batch")) {
        throw usage_error(
            "option '--sweep-batch' needs a PROFILE.csv (without one, --batch "
            "lists the batch sizes)");
    }
    const std::string format = choice(a, "format", {"table", "csv", "json"}, "table");
    // --rank is a folder's rank (profile_options); the sort key, --rank-by, once had that name.
    if (const auto r = a.get("rank"); r && (*r == "qps" || *r == "throughput")) {
        throw usage_error(
            "option '--rank' picks the rank of a folder of several ranks' output "
            "(a whole number); the sort key is --rank-by " +
            *r);
    }
    // The profile reader's flags (common.hpp profile_options_from_args) read nothing else.
    for (const std::string_view flag : {"strict", "device", "step", "rank"}) {
        if (!from_profile && a.has(flag)) {
            throw usage_error("option '--" + std::string(flag) +
                              "' applies to a PROFILE.csv it reads (whatif PROFILE.csv --batch B)");
        }
    }
    const std::string rank = choice(a, "rank-by", {"qps", "throughput"}, "qps");

    // The model and the chip.
    // A profile run without --chip / --chip-ini: the chip the profile names, else the default.
    const bool chip_given = a.has("chip") || a.has("chip-ini");
    chip c = chip_from_args(a, scenario::default_chip.name.view());
    const profile::calibration cal = params_from_args(a);
    std::optional<profile::anchored_profile> anchored;
    std::size_t damaged = 0;  // the profile's damaged rows, skipped and listed on stderr
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
        for (std::string_view sizes : {"bs-hist", "replay"}) {
            if (a.has(sizes)) {
                throw usage_error("--" + std::string(sizes) +
                                  " does not apply to a profile: --batch is its profiled "
                                  "batch, served as every request's size");
            }
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
        note_rows_chip(a, c, table.rows, a.positional.front(), err);
        warn_block_dims(c, table.rows, a.positional.front(), err);
        damaged = table.skipped_count;
        anchored = profile::anchor_profile(c, table.rows, pb.front(), cal);
        if (anchored->m.nodes.empty()) {
            throw usage_error("profile '" + a.positional.front() +
                              "' has no compute rows with a duration to anchor on");
        }
        anchored->m.name =
            a.positional.front() + " (anchored at batch " + std::to_string(pb.front()) + ")";
    }
    warn_params_chip(a, cal, c, err);
    if (!from_profile) {
        note_type_terms_unused(a, cal, err,
                               "model prices its nodes by op kind; a profile's rows (whatif "
                               "PROFILE) take them by type");
    }
    const bool onnx_model = a.has("model") && is_onnx_path(*a.get("model"));
    for (const std::string_view flag : {"batch-dim", "unfused-attention", "unfused-qdq"}) {
        if (a.has(flag) && !onnx_model) {
            throw usage_error("option '--" + std::string(flag) +
                              "' applies to an ONNX graph: --model MODEL.onnx");
        }
    }
    model m = anchored         ? anchored->m
              : a.has("model") ? read_model_input(*a.get("model"), err, a.value_or("batch-dim", ""),
                                                  {.fuse_attention = !a.has("unfused-attention"),
                                                   .fuse_qdq = !a.has("unfused-qdq")})
                               : scenario::ctr_ranking_model();
    whatif_detail::note_aicpu_moved(err, m, c);
    const card_params params{.graph = {.model = cal.params},
                             .host_threads = host_threads_from_args(a),
                             .chips = chips_per_card_from_args(a),
                             .runtime = runtime_from_args(a, m, cal),
                             .memory = memory_rule_from_args(a)};
    warn_runtime_vendor(c, runtime_preset_from_args(a, m), err);
    if (a.has("gains")) {
        if (from_profile) throw usage_error("--gains takes a model (--model), not a profile");
        return whatif_gains::run(a, out, m, c, cal, format);
    }
    if (whatif_serving::requested(a)) {
        return whatif_serving::run(a, out, err, m, c, format, params);
    }

    // The grid.
    auto list_or = [&](std::string_view flag, std::string_view fallback) {
        return parse_list(flag, a.value_or(flag, fallback));
    };
    const std::vector<int> streams =
        as_ints("streams", list_or("streams", whatif_defaults::streams));
    const std::vector<int> cube = as_ints("cube", list_or("cube", default_cube_text(c)));
    const std::vector<int> vector = as_ints("vector", list_or("vector", default_vector_text(c)));
    const std::vector<std::int64_t> batches = anchored ? list_or("sweep-batch", *a.get("batch"))
                                                       : list_or("batch", whatif_defaults::batches);
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
    io::whatif_report rep{.model_name = m.name,
                          .model_nodes = m.nodes.size(),
                          .chip_name = std::string(c.name.view()),
                          .rank_label = rank == "qps" ? "QPS" : "samples/s",
                          .runtime = params.runtime,
                          .host_threads = params.host_threads,
                          .chips = params.chips,
                          .top = row_count(a, "top", whatif_defaults::top)};
    if (anchored) {
        const profile::anchored_profile& p = *anchored;
        rep.profile = io::anchored_summary{.anchored = p.anchors.size(),
                                           .unmapped = p.unmapped,
                                           .batch_dependent = p.batch_dependent,
                                           .skipped = p.skipped,
                                           .damaged = damaged,
                                           .batch = p.batch,
                                           .measured = p.measured,
                                           .model_at_profile = profile::profiled_time(c, p, cal)};
    }

    const whatif_result r =
        sweep(c, m, g, params, rank == "throughput" ? rank_by::throughput : rank_by::qps,
              progress_from_args(a, err, "whatif"));
    if (target) rep.pick = r.best_under(*target);

    if (format == "table") {
        io::write_whatif_table(out, rep, r);
    } else if (format == "csv") {
        io::write_whatif_csv(out, rep, r);
    } else {
        io::write_whatif_json(out, rep, r);
    }
    if (auto path = a.get("svg")) {
        io::write_output({*path, "--svg"}, [&](std::ostream& f) {
            io::write_whatif_svg(
                f, rep, r,
                "perfcast whatif: " + m.name + " on " + io::card_text(c.name.view(), params.chips));
        });
    }
    return exit_ok;
}

}  // namespace perfcast::cli
