// perfcast/serving/arrivals.hpp: requests arriving at a server: the ArrivalSource concept,
// Poisson arrivals (random.hpp), a trace replayed from memory, and a trace's rate and batch
// sizes.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../distribution.hpp"
#include "../error.hpp"
#include "../random.hpp"
#include "../units.hpp"

namespace perfcast {

// ---- arrivals -----------------------------------------------------------------------------

/// One request: when it arrives and how many samples it carries.
struct arrival {
    duration time{};
    int bs = 0;
    [[nodiscard]] friend constexpr bool operator==(const arrival&, const arrival&) = default;
};

/// Anything that hands out arrivals in time order, then nothing: poisson_arrivals,
/// trace_arrivals, io::trace_reader (a CSV trace streamed from disk).
template <class S>
concept ArrivalSource = requires(S& s) {
    { s.next() } -> std::same_as<std::optional<arrival>>;
};

/// `count` requests with exponential gaps of mean 1 / qps and batch sizes drawn from `dist`.
/// The uniform numbers do not depend on qps (common random numbers): runs at two loads see the
/// same requests, one compressed in time, which makes latency-vs-QPS curves smooth and the
/// capacity bisection stable.
class poisson_arrivals {
public:
    poisson_arrivals(request_rate qps, batch_distribution dist, std::uint64_t count,
                     std::uint64_t seed = 1)
        : dist_(std::move(dist)), rng_(seed), left_(count) {
        PERFCAST_EXPECTS(qps.in(units::qps) > 0 && is_finite(qps), "poisson_arrivals", "qps",
                         qps.in(units::qps), "a finite rate > 0 requests per second");
        mean_gap_s_ = 1.0 / qps.in(units::qps);
    }
    [[nodiscard]] std::optional<arrival> next() noexcept {
        if (left_ == 0) return std::nullopt;
        --left_;
        t_ += rng_.exponential() * mean_gap_s_;
        const int bs = dist_.sample(rng_.uniform());
        return arrival{duration{t_, units::s}, bs};
    }

private:
    batch_distribution dist_;
    random_stream rng_;
    std::uint64_t left_;
    double mean_gap_s_ = 0;
    double t_ = 0;
};

/// Replays arrivals held in memory (not copied: the span must outlive the source), optionally
/// `speedup` times faster (times divided by speedup). Checks the order up front: an arrival
/// earlier than the one before it is an error naming its index.
class trace_arrivals {
public:
    explicit trace_arrivals(std::span<const arrival> trace, double speedup = 1.0)
        : trace_(trace), speedup_(speedup) {
        constexpr std::string_view where = "trace_arrivals";
        PERFCAST_EXPECTS(speedup > 0 && speedup <= 1e300, where, "speedup", speedup,
                         "a finite factor > 0");
        for (std::size_t i = 0; i < trace.size(); ++i) {
            const std::string field = "trace[" + std::to_string(i) + "]";
            PERFCAST_EXPECTS(is_finite(trace[i].time), where, field + ".time (ms)",
                             trace[i].time.in(units::ms), "a finite time");
            if (i > 0 && trace[i].time < trace[i - 1].time) {
                detail::precondition_failed(
                    where, field + ".time (ms)", trace[i].time.in(units::ms),
                    "arrivals in time order (trace[" + std::to_string(i - 1) + "] is at " +
                        detail::number_text(trace[i - 1].time.in(units::ms)) + " ms)");
            }
            PERFCAST_EXPECTS(trace[i].bs >= 1 && trace[i].bs <= max_batch_size, where,
                             field + ".bs", static_cast<double>(trace[i].bs),
                             "a batch size in 1..1048576");
        }
    }
    [[nodiscard]] std::optional<arrival> next() noexcept {
        if (i_ == trace_.size()) return std::nullopt;
        arrival a = trace_[i_++];
        a.time = a.time / speedup_;
        return a;
    }

private:
    std::span<const arrival> trace_;
    double speedup_;
    std::size_t i_ = 0;
};

/// Mean request rate of a trace: (n - 1) / (last - first). Needs two arrivals at different times.
[[nodiscard]] inline request_rate mean_rate(std::span<const arrival> trace) {
    PERFCAST_EXPECTS(trace.size() >= 2, "mean_rate", "trace (arrivals)",
                     static_cast<double>(trace.size()), "at least 2 arrivals");
    const duration span = trace.back().time - trace.front().time;
    PERFCAST_EXPECTS(span.in(units::s) > 0 && is_finite(span), "mean_rate", "trace span (ms)",
                     span.in(units::ms), "a last arrival later than the first");
    return static_cast<double>(trace.size() - 1) / span;
}

/// The batch-size histogram of a trace.
[[nodiscard]] inline batch_distribution batch_sizes_of(std::span<const arrival> trace) {
    PERFCAST_EXPECTS(!trace.empty(), "batch_sizes_of", "trace (arrivals)", 0.0,
                     "at least 1 arrival");
    std::vector<int> sizes;
    sizes.reserve(trace.size());
    for (const arrival& a : trace) sizes.push_back(a.bs);
    std::sort(sizes.begin(), sizes.end());
    std::vector<bs_count> bins;
    for (int b : sizes) {
        if (bins.empty() || bins.back().bs != b) bins.push_back({b, 0.0});
        bins.back().count += 1.0;
    }
    return batch_distribution(bins);
}

}  // namespace perfcast
