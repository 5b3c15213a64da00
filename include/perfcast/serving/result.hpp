// perfcast/serving/result.hpp: what a serving simulation is asked (sim_options, its service
// noise as an Erlang shape, timeline_options) and what it measured (serving_result, the
// timeline, queue_grew()).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "../distribution.hpp"
#include "../error.hpp"
#include "../progress.hpp"
#include "../units.hpp"

namespace perfcast {

// ---- simulation options and results ------------------------------------------------------

/// Which interval of simulated time to record as a timeline (io/chrome_trace.hpp writes it).
struct timeline_options {
    duration from{};
    duration to{};
    std::size_t max_events = 200000;  // per kind (batches, requests, queue points)
};

struct sim_options {
    std::uint64_t seed = 1;
    /// Requests at the start whose latencies are not counted, and before whose arrival the
    /// time averages (utilization, queue) do not start: the card starts empty.
    std::uint64_t warmup = 0;
    /// Variability of service times around the table's value (coefficient of variation):
    /// 0 deterministic; 1/sqrt(k) for k = 1..100 draws an Erlang-k factor of mean 1
    /// (1: exponential, for checks against M/M/c). Other values are rounded to the nearest k.
    double service_cv = 0;
    /// Return every counted latency, sorted (for quantiles other than the fixed ones).
    bool keep_latencies = false;
    std::optional<timeline_options> timeline{};
    /// Hears of the requests served so far ("simulating", unit "requests served"), every
    /// progress_every_batches batches; the total is the run's request count where simulate
    /// knows it (the Poisson overload), else 0.
    progress_fn progress{};
};

/// Batches a simulation runs between two progress reports: a few thousand events, a
/// millisecond or so, so that even a run of huge split requests reports often.
inline constexpr std::uint64_t progress_every_batches = 4096;

/// One batch on a stream, as recorded in a timeline.
struct timeline_batch {
    int stream = 0;
    duration start{};
    duration end{};
    int samples = 0;     // before padding
    int gear = 0;        // after padding
    int requests = 0;    // items merged (requests or chunks of split requests)
    int concurrent = 0;  // batches running on the card when it started (itself included)
    std::uint64_t first_request = 0;  // id of the oldest request in it
};

/// One request: arrival, start of its last chunk, end of its last chunk.
struct timeline_request {
    std::uint64_t id = 0;
    int bs = 0;
    int chunks = 0;
    duration arrival{};
    duration start{};
    duration end{};
};

struct timeline_queue_point {
    duration time{};
    std::size_t waiting = 0;  // requests with a chunk not yet started
};

struct timeline_stream {
    int cube = 0;
    int vector = 0;
};

/// What happened in [from, to): batches that started, requests that arrived, queue changes.
struct serving_timeline {
    duration from{};
    duration to{};
    std::vector<timeline_stream> streams;
    std::vector<timeline_batch> batches;
    std::vector<timeline_request> requests;
    std::vector<timeline_queue_point> queue;
    bool truncated = false;  // max_events was reached
};

/// What a simulation measured. Latencies are arrival to completion of the last chunk, over the
/// requests after the warm-up; time averages are over [arrival of the first counted request,
/// last arrival].
struct serving_result {
    std::uint64_t requests = 0;  // counted requests
    request_rate qps{};          // arrivals per second over the observed interval
    duration mean{};
    duration p50{};
    duration p90{};
    duration p99{};
    duration p999{};
    duration max{};
    /// Standard error of `mean` by 32 batch means over consecutive completions (the requests'
    /// latencies are correlated, so the naive sd / sqrt(n) would understate it).
    duration mean_stderr{};
    /// Arrival to the start of the request's last chunk.
    duration mean_wait{};
    /// Share of counted requests whose last chunk did not start on arrival.
    double wait_share = 0;
    /// Mean wait of the first and of the last quarter of the counted requests, in arrival
    /// order (0 below 8 counted requests): a queue that grows through the run shows as a last
    /// quarter far above the first (queue_grew()).
    duration wait_first_quarter{};
    duration wait_last_quarter{};
    /// Time-average share of streams busy.
    double utilization = 0;
    /// Time-average share of the card's cube cores held by running batches (capped at 1 when
    /// the streams' splits oversubscribe the card).
    double core_utilization = 0;
    /// Requests waiting (a chunk not yet started): time average and maximum.
    double mean_queue = 0;
    std::size_t max_queue = 0;
    std::uint64_t batches = 0;        // batches started from the first counted arrival on
    double mean_batch = 0;            // samples per batch, before padding
    double padding_share = 0;         // padding samples / gear samples
    duration span{};                  // observed interval
    std::vector<duration> latencies;  // sorted, when sim_options::keep_latencies
    serving_timeline timeline;        // when sim_options::timeline

    /// Whether the queue grew through the run (queue_growth_ratio, queue_growth_floor): the
    /// mark of a load the card cannot keep up with, whose percentiles measure the run's length.
    [[nodiscard]] bool queue_grew() const noexcept;

    /// Latency at share p of the kept latencies (nearest rank).
    [[nodiscard]] duration at(double p) const {
        PERFCAST_EXPECTS(!latencies.empty(), "serving_result::at", "latencies", "not kept",
                         "a result of a run with sim_options::keep_latencies");
        PERFCAST_EXPECTS(p > 0 && p <= 1, "serving_result::at", "p", p, "a share in (0, 1]");
        const double n = static_cast<double>(latencies.size());
        auto k = static_cast<std::size_t>(std::ceil(p * n * (1.0 - detail::rank_tolerance)));
        if (k < 1) k = 1;
        return latencies[k - 1];
    }
};

/// queue_grew(): the last quarter's mean wait is above queue_growth_ratio x the first quarter's
/// and above it by more than queue_growth_floor mean service times (mean latency - mean wait).
/// A load above what the card completes grows the wait linearly through the run, from the
/// warm-up on: with the default 10 % warm-up the last quarter's mean is about 4 x the first's
/// (wait ~ t: (0.775 + 1) / 2 over (0.1 + 0.325) / 2). A stable queue's quarters scatter around
/// one mean. Both numbers are assumptions, set between those two cases and checked by the tests
/// (a stable run at 90 % of the saturation throughput stays below them; one at 110 % is far
/// above); raise them if a stable run is flagged.
inline constexpr double queue_growth_ratio = 2.0;
inline constexpr double queue_growth_floor = 4.0;

inline bool serving_result::queue_grew() const noexcept {
    const double first = wait_first_quarter.in(units::s);
    const double last = wait_last_quarter.in(units::s);
    const double service = (mean - mean_wait).in(units::s);
    return last > queue_growth_ratio * first && last - first > queue_growth_floor * service;
}

namespace detail {

/// Erlang shape for a coefficient of variation: 0 (deterministic) or k = round(1 / cv^2).
[[nodiscard]] inline int erlang_shape(double cv) {
    PERFCAST_EXPECTS(cv == 0 || (cv >= 0.0995 && cv <= 1.0), "simulate", "service_cv", cv,
                     "0 (deterministic) or a coefficient of variation in [0.1, 1]");
    if (cv == 0) return 0;
    const double k = std::round(1.0 / (cv * cv));
    return k < 1 ? 1 : (k > 100 ? 100 : static_cast<int>(k));
}

}  // namespace detail

}  // namespace perfcast
