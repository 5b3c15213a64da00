// perfcast/distribution.hpp: batch-size distributions and latency at low load.
//
// A `batch_distribution` is a histogram of request batch sizes: {bs, count} pairs given inline or
// read from a `bs,count` CSV (io/histogram.hpp). It answers shares and percentiles
// (guide §6: "90 % of requests bs <= 20, 86 % bs <= 16") and draws batch sizes for the
// simulation from a uniform number, so that the draws are the same on every compiler.
//
// `low_load` gives the per-request latency distribution when every request finds the card idle
// (no queueing): mean, P50, P90, P99, the core-time a request costs, and the card capacity that
// core-time implies. It is the limit of the simulation as QPS -> 0, and the seed's "low-load"
// latency target (guide §1). `service_floor` is the same without the batching window's wait: the
// latencies no load goes below.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "batching.hpp"
#include "error.hpp"
#include "units.hpp"

namespace perfcast {

/// One histogram bin: `count` requests of `bs` samples. Counts may be fractional (shares or
/// percentages work as well as request counts); only their ratios matter.
struct bs_count {
    int bs = 0;
    double count = 0;
    [[nodiscard]] friend constexpr bool operator==(const bs_count&, const bs_count&) = default;
};

namespace detail {
/// Rank tolerance for percentiles: a cumulative share within 1e-12 (relative) of p counts as
/// reaching p, so that 86 of 100 requests reach P86 despite 0.86 not being exact in binary.
inline constexpr double rank_tolerance = 1e-12;
}  // namespace detail

/// A batch-size distribution: bins sorted by bs, each bs once, counts > 0.
class batch_distribution {
public:
    /// Checks every bin: bs in 1..1048576, count finite and > 0, each bs once, finite total.
    /// Errors name the bin: "bins[2].count = -1, expected a finite count > 0".
    constexpr explicit batch_distribution(std::span<const bs_count> bins) {
        constexpr std::string_view where = "batch_distribution";
        PERFCAST_EXPECTS(!bins.empty(), where, "bins", "none", "at least one {bs, count} bin");
        bins_.assign(bins.begin(), bins.end());
        for (std::size_t i = 0; i < bins_.size(); ++i) {
            const bs_count& b = bins_[i];
            if (!(b.bs >= 1 && b.bs <= max_batch_size)) {
                detail::precondition_failed(where, "bins[" + std::to_string(i) + "].bs",
                                            static_cast<double>(b.bs),
                                            "a batch size in 1..1048576");
            }
            if (!(b.count > 0 && b.count <= 1.7976931348623157e308)) {
                detail::precondition_failed(where, "bins[" + std::to_string(i) + "].count",
                                            b.count, "a finite count > 0");
            }
        }
        std::sort(bins_.begin(), bins_.end(),
                  [](const bs_count& a, const bs_count& b) { return a.bs < b.bs; });
        cumulative_.reserve(bins_.size());
        double sum = 0;
        for (std::size_t i = 0; i < bins_.size(); ++i) {
            if (i > 0 && bins_[i].bs == bins_[i - 1].bs) {
                detail::precondition_failed(where, "bs", static_cast<double>(bins_[i].bs),
                                            "each batch size in one bin only");
            }
            sum += bins_[i].count;
            cumulative_.push_back(sum);  // not resize(): clang 14 rejects it in constexpr
        }
        PERFCAST_EXPECTS(sum <= 1.7976931348623157e308, where, "total", sum,
                         "a finite total count");
    }
    constexpr batch_distribution(std::initializer_list<bs_count> bins)
        : batch_distribution(std::span<const bs_count>(bins.begin(), bins.size())) {}

    /// Every request has `bs` samples.
    [[nodiscard]] static constexpr batch_distribution fixed(int bs) {
        return batch_distribution{{bs, 1.0}};
    }

    [[nodiscard]] constexpr std::span<const bs_count> bins() const noexcept { return bins_; }
    [[nodiscard]] constexpr double total() const noexcept { return cumulative_.back(); }
    [[nodiscard]] constexpr int min() const noexcept { return bins_.front().bs; }
    [[nodiscard]] constexpr int max() const noexcept { return bins_.back().bs; }
    /// Share of requests in bin i.
    [[nodiscard]] constexpr double share(std::size_t i) const noexcept {
        return bins_[i].count / total();
    }

    /// Mean samples per request.
    [[nodiscard]] constexpr double mean() const noexcept {
        double s = 0;
        // The sum of bs x count is at most max() x total(): when that fits in a double, the
        // exact sum; else (counts near the largest double) the same mean from the shares.
        if (total() <= 1.7976931348623157e308 / static_cast<double>(max())) {
            for (const bs_count& b : bins_) s += static_cast<double>(b.bs) * b.count;
            return s / total();
        }
        for (const bs_count& b : bins_) s += static_cast<double>(b.bs) * (b.count / total());
        return s;
    }

    /// Share of requests with at most `bs` samples (the CDF).
    [[nodiscard]] constexpr double share_at_most(int bs) const noexcept {
        double s = 0;
        for (std::size_t i = 0; i < bins_.size() && bins_[i].bs <= bs; ++i) s = cumulative_[i];
        return s / total();
    }

    /// The smallest bs such that at least a share `p` of requests have <= bs samples
    /// (nearest-rank percentile; p in (0, 1]).
    [[nodiscard]] constexpr int percentile(double p) const {
        PERFCAST_EXPECTS(p > 0 && p <= 1, "batch_distribution::percentile", "p", p,
                         "a share in (0, 1]");
        const double need = p * total() * (1.0 - detail::rank_tolerance);
        for (std::size_t i = 0; i < bins_.size(); ++i) {
            if (cumulative_[i] >= need) return bins_[i].bs;
        }
        return bins_.back().bs;
    }

    /// A batch size drawn by a uniform `u` in [0, 1): the inverse CDF.
    [[nodiscard]] constexpr int sample(double u) const noexcept {
        const double x = u * total();
        std::size_t lo = 0;
        std::size_t hi = bins_.size() - 1;
        while (lo < hi) {  // first bin whose cumulative count exceeds x
            const std::size_t mid = (lo + hi) / 2;
            if (cumulative_[mid] > x) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return bins_[lo].bs;
    }

    [[nodiscard]] friend constexpr bool operator==(const batch_distribution& a,
                                                   const batch_distribution& b) {
        return a.bins_ == b.bins_;
    }

private:
    std::vector<bs_count> bins_;
    std::vector<double> cumulative_;
};

// ---- latency at low load ------------------------------------------------------------------

/// A latency and the share of requests that see it.
struct latency_share {
    duration latency{};
    double share = 0;
};

/// The smallest latency L such that a share >= p of requests take <= L (nearest rank).
/// `dist` must be sorted by latency with shares adding to 1.
[[nodiscard]] inline duration quantile(std::span<const latency_share> dist, double p) {
    PERFCAST_EXPECTS(p > 0 && p <= 1, "quantile", "p", p, "a share in (0, 1]");
    PERFCAST_EXPECTS(!dist.empty(), "quantile", "dist", "empty", "at least one latency");
    double cum = 0;
    for (const latency_share& l : dist) {
        cum += l.share;
        if (cum >= p * (1.0 - detail::rank_tolerance)) return l.latency;
    }
    return dist.back().latency;
}

/// Per-request latency when no request waits for another (QPS -> 0).
struct low_load_result {
    duration mean{};
    duration p50{};
    duration p90{};
    duration p99{};
    duration max{};
    /// Mean cube core-time per request: sum over its chunks of cube cores x time (guide §12).
    duration core_time{};
    /// Mean stream-time per request: sum over its chunks of the time they hold a stream.
    duration stream_time{};
    /// Share of computed samples that is padding, over all requests.
    double padding_share = 0;
    /// Share of requests split into more than one chunk.
    double split_share = 0;
    /// Capacity implied by the stream-time: streams / stream_time (the seed's
    /// QPS = 1000 / avg_latency_ms x S when nothing is split, guide §1).
    request_rate stream_bound{};
    /// Capacity implied by the core-time: card cube cores / core_time.
    request_rate core_bound{};
    /// min(stream_bound, core_bound): an upper bound on a card's QPS without merging requests
    /// into batches (merging small requests can exceed it; queueing keeps real QPS below it).
    request_rate capacity{};
    /// Every distinct latency with its share of requests, sorted by latency.
    std::vector<latency_share> distribution;

    /// Latency at any share p in (0, 1].
    [[nodiscard]] duration at(double p) const { return quantile(distribution, p); }
};

/// The latency distribution of requests drawn from `d` on an idle card `c` (cost_request for
/// every bin, weighted by its share).
[[nodiscard]] inline low_load_result low_load(const server_config& c,
                                              const batch_distribution& d) {
    validate(c);
    low_load_result r;
    double padded = 0;
    double padding = 0;
    r.distribution.reserve(d.bins().size());
    for (std::size_t i = 0; i < d.bins().size(); ++i) {
        const double w = d.share(i);
        const request_cost rc = cost_request(c, d.bins()[i].bs);
        r.mean += rc.latency * w;
        r.core_time += rc.core_time * w;
        r.stream_time += rc.stream_time * w;
        padded += w * rc.plan.padded();
        padding += w * rc.plan.padding();
        if (rc.plan.split()) r.split_share += w;
        r.distribution.push_back({rc.latency, w});
    }
    std::stable_sort(r.distribution.begin(), r.distribution.end(),
                     [](const latency_share& a, const latency_share& b) {
                         return a.latency < b.latency;
                     });
    r.padding_share = padded > 0 ? padding / padded : 0.0;
    r.p50 = r.at(0.50);
    r.p90 = r.at(0.90);
    r.p99 = r.at(0.99);
    r.max = r.distribution.back().latency;
    r.stream_bound = static_cast<double>(c.streams.size()) / r.stream_time;
    r.core_bound = static_cast<double>(c.card_cube.value) / r.core_time;
    r.capacity = r.stream_bound < r.core_bound ? r.stream_bound : r.core_bound;
    return r;
}

/// The latencies no load goes below: low_load with the batching window taken out (each request
/// served alone the moment it arrives; low_load itself when the window is 0). With a window,
/// low_load's requests wait it out, and under load a gear that fills leaves early, so a loaded
/// card's latency can fall below low_load's; not below these: a request merged into a larger
/// batch is served for longer, and queueing and shared cores only add.
[[nodiscard]] inline low_load_result service_floor(server_config c, const batch_distribution& d) {
    c.window = duration{};
    return low_load(c, d);
}

}  // namespace perfcast
