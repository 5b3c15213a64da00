// perfcast/serving/saturation.hpp: is there a steady state at a load? saturation() (the
// throughput of a queue that never empties) and classify() (stable, queue-growing, saturated).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "../batching.hpp"
#include "../distribution.hpp"
#include "../enum_table.hpp"
#include "../units.hpp"
#include "arrivals.hpp"
#include "result.hpp"
#include "simulation.hpp"

namespace perfcast {

// ---- stability: is there a steady state at this load? ------------------------------------

/// Capacity never goes above saturation throughput x (1 - saturation_margin). An assumption:
/// a queue's waits and their noise grow as 1 / (1 - utilization), and the time a simulation
/// needs to settle as 1 / (1 - utilization)^2 (M/M/1 relaxation time, Morse 1955), so a load
/// closer to saturation than 5 % has percentiles that depend on how long the run is (the
/// default 20000 requests are too few) and on the saturation estimate's own error (about 1 %,
/// saturation()). 5 % keeps both below the bisection's 1 % step. Calibrate by running
/// find_capacity with a loose target at 2x and 4x the requests: the capacities must agree.
inline constexpr double saturation_margin = 0.05;

/// Requests in the saturation probe (saturation()): all queued at time 0. Its throughput is
/// the mean over 80 % of them, so the packing of random request sizes into batches averages
/// over thousands of batches (the estimate's noise is far below saturation_margin).
inline constexpr std::uint64_t saturation_probe_requests = 10000;
/// ... unless its requests are split into many chunks: then it takes as many requests as fill
/// saturation_probe_chunks chunks (thousands of batches still), at least
/// saturation_probe_min_requests. All of them wait at once, so this bounds the probe's memory
/// (about 100 MB) and time: 10000 requests of 1048576 samples at a largest gear of 32 would be
/// 3.3e8 chunks, 16 GB and minutes (issue 16).
inline constexpr double saturation_probe_chunks = 1e6;
inline constexpr std::uint64_t saturation_probe_min_requests = 100;

/// Requests in the saturation probe of `dist` under `gears` (see saturation_probe_chunks).
[[nodiscard]] inline std::uint64_t saturation_probe_size(const gear_set& gears,
                                                         const batch_distribution& dist) {
    const double fit = saturation_probe_chunks / mean_chunks(gears, dist);
    if (fit >= static_cast<double>(saturation_probe_requests)) return saturation_probe_requests;
    if (fit <= static_cast<double>(saturation_probe_min_requests)) {
        return saturation_probe_min_requests;
    }
    return static_cast<std::uint64_t>(fit);
}

/// How fast a configuration completes requests when its queue never empties.
struct saturation_result {
    /// Upper bound from the service tables alone: the most samples per second any n <= streams
    /// busy streams complete, each at its most efficient gear (max over n and g of
    /// sum over n streams of g / t(g, n)), over the mean request size. No padding, every batch
    /// full: a load above it can never be served.
    request_rate bound{};
    /// Measured: every one of saturation_probe_size() requests (sizes drawn from the
    /// distribution) queued at time 0 and served by the simulation (FIFO packing into batches,
    /// splits, contention, the same as under load); completions between the 10th and the 90th
    /// percentile over the time between them (the ramp-up and the last partial batches left
    /// out), at most `bound`. The card cannot keep up with a higher Poisson load: its queue
    /// grows without end.
    request_rate throughput{};
};

namespace detail {

/// `count` requests, all at time 0, sizes drawn from `dist`.
class queued_at_once {
public:
    queued_at_once(const batch_distribution& dist, std::uint64_t count, std::uint64_t seed)
        : dist_(&dist), rng_(seed), left_(count) {}
    [[nodiscard]] std::optional<arrival> next() noexcept {
        if (left_ == 0) return std::nullopt;
        --left_;
        return arrival{duration{}, dist_->sample(rng_.uniform())};
    }

private:
    const batch_distribution* dist_;
    random_stream rng_;
    std::uint64_t left_;
};

}  // namespace detail

/// The saturation throughput of `config` with request sizes from `dist` (see
/// saturation_result); `seed` and `service_cv` as in sim_options.
[[nodiscard]] inline saturation_result saturation(const server_config& config,
                                                  const batch_distribution& dist,
                                                  std::uint64_t seed = 1, double service_cv = 0) {
    validate(config);
    saturation_result r;
    double best_samples_per_s = 0;
    for (std::size_t n = 1; n <= config.streams.size(); ++n) {
        std::vector<double> per_stream;
        per_stream.reserve(config.streams.size());
        for (const stream_spec& st : config.streams) {
            double most = 0;
            for (std::size_t g = 0; g < config.gears.size(); ++g) {
                most = std::max(most, static_cast<double>(config.gears[g]) /
                                          st.service.seconds_at(g, static_cast<int>(n)));
            }
            per_stream.push_back(most);
        }
        std::sort(per_stream.begin(), per_stream.end(), std::greater<>());
        double sum = 0;
        for (std::size_t k = 0; k < n; ++k) sum += per_stream[k];
        best_samples_per_s = std::max(best_samples_per_s, sum);
    }
    r.bound = request_rate{best_samples_per_s / dist.mean(), units::qps};

    sim_options so;
    so.seed = seed;
    so.service_cv = service_cv;
    so.keep_latencies = true;
    detail::queued_at_once src(dist, saturation_probe_size(config.gears, dist), seed);
    const serving_result s = simulate(config, src, so);
    // Every request arrived at 0: its latency is its completion time.
    // Requests complete in steps (a batch's requests together, streams in lockstep), so the
    // rate counts whole steps: from the step holding the 10th percentile to the one holding
    // the 90th, every completion at those two instants on the same side.
    const std::vector<duration>& done = s.latencies;
    const std::size_t n = done.size();
    const duration t10 = done[n / 10 - 1];
    const duration t90 = done[n - n / 10 - 1];
    const auto upto = [&](duration t) {
        return static_cast<double>(std::upper_bound(done.begin(), done.end(), t) - done.begin());
    };
    r.throughput =
        t90 > t10 ? (upto(t90) - upto(t10)) / (t90 - t10) : static_cast<double>(n) / s.max;
    // Not above the bound: what the measurement's end effects could still add is no capacity.
    if (r.throughput > r.bound) r.throughput = r.bound;
    return r;
}

/// What a load does to a configuration, judged before any percentile is reported.
enum class load_state : unsigned char {
    stable,     // below the saturation throughput, and the simulated queue did not grow
    growing,    // below the saturation throughput, but the simulated queue grew through the run
                // (queue_grew()): too close to saturation for this run length
    saturated,  // at or above the saturation throughput: no steady state; a finite run's
                // percentiles measure how long it ran, not the card
};

inline constexpr std::array<enum_entry<load_state>, 3> load_state_names{{
    {load_state::stable, "stable"},
    {load_state::growing, "queue-growing"},
    {load_state::saturated, "saturated"},
}};

static_assert(covers_enum<load_state_names>());

[[nodiscard]] constexpr std::string_view name_of(load_state s) noexcept {
    return name_in(load_state_names, s);
}

/// The state of a simulated run at `offered` load: saturated at or above `sat.throughput` (or
/// the analytic bound), growing when its queue grew, else stable.
[[nodiscard]] inline load_state classify(request_rate offered, const serving_result& run,
                                         const saturation_result& sat) noexcept {
    if (offered >= sat.throughput || offered >= sat.bound) return load_state::saturated;
    if (run.queue_grew()) return load_state::growing;
    return load_state::stable;
}

}  // namespace perfcast
