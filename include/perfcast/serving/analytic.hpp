// perfcast/serving/analytic.hpp: the M/G/c approximation of a card serving requests
// (Allen-Cunneen, Erlang C, a mixture for the percentiles): analyze(), in microseconds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "../batching.hpp"
#include "../distribution.hpp"
#include "../error.hpp"
#include "../units.hpp"
#include "result.hpp"

namespace perfcast {

// ---- analytic approximation ---------------------------------------------------------------

/// One class of requests in the analytic model: requests of one batch size.
struct analytic_class {
    double share = 0;   // of requests
    duration offset{};  // service of its chunks on the loaded card + expected window wait
    int parallel = 1;   // chunks that queue side by side (first wave)
};

/// What the M/G/c approximation predicts.
struct analytic_result {
    request_rate qps{};
    bool stable = false;  // utilization < 1; otherwise latencies are infinite
    /// The load at which the model's utilization reaches 1: c / (E[chunks] x E[chunk service
    /// with every other stream busy]); `stable` is qps < saturation.
    request_rate saturation{};
    double utilization = 0;       // share of streams busy
    double concurrency = 0;       // mean batches running, seen by a running batch
    double wait_probability = 0;  // Erlang C: share of chunks that queue
    duration mean_wait{};         // mean queueing time of a chunk (Allen-Cunneen)
    duration mean{};
    duration p50{};
    duration p90{};
    duration p99{};
    duration p999{};
    double mean_queue = 0;  // chunks waiting (Little's law)

    /// Latency at share p of requests, p in (0, 1).
    [[nodiscard]] duration at(double p) const;

    /// The mixture behind the percentiles: a request of class i takes offset_i plus the longest
    /// of `parallel_i` independent chunk waits; its j-th chunk waits with probability
    /// chunk_wait[j - 1] (fewer than j streams free), an exponential time of rate
    /// `tail_rate_per_s`.
    std::vector<analytic_class> classes;
    std::vector<double> chunk_wait;
    double tail_rate_per_s = 0;
};

namespace detail {

/// Erlang C: probability that an arrival waits in M/M/c with offered load a (< c).
[[nodiscard]] inline double erlang_c(int c, double a) noexcept {
    double b = 1.0;  // Erlang B by the stable recursion
    for (int k = 1; k <= c; ++k) b = a * b / (static_cast<double>(k) + a * b);
    const double rho = a / static_cast<double>(c);
    return b / (1.0 - rho * (1.0 - b));
}

/// Binomial(n, p) probabilities 0..n (log space, so large n does not underflow the terms).
[[nodiscard]] inline std::vector<double> binomial_pmf(int n, double p) {
    std::vector<double> pmf(static_cast<std::size_t>(n) + 1, 0.0);
    if (p <= 0) {
        pmf.front() = 1;
        return pmf;
    }
    if (p >= 1) {
        pmf.back() = 1;
        return pmf;
    }
    const double lp = std::log(p);
    const double lq = std::log1p(-p);
    const double lgn = std::lgamma(n + 1.0);
    for (int k = 0; k <= n; ++k) {
        pmf[static_cast<std::size_t>(k)] =
            std::exp(lgn - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * lp + (n - k) * lq);
    }
    return pmf;
}

/// Service time at gear index g of a batch running beside m - 1 others of its own request,
/// the other streams each busy with probability rho: E[t(g, m + Binomial(others, rho))].
[[nodiscard]] inline double loaded_seconds(const service_table& t, std::size_t g, int m,
                                           const std::vector<double>& others_pmf) {
    if (!t.depends_on_concurrency()) return t.seconds_at(g, 1);
    double s = 0;
    for (std::size_t k = 0; k < others_pmf.size(); ++k) {
        s += others_pmf[k] * t.seconds_at(g, m + static_cast<int>(k));
    }
    return s;
}

/// P(latency <= t) of the mixture.
[[nodiscard]] inline double mixture_cdf(const analytic_result& r, double t) noexcept {
    double f = 0;
    for (const analytic_class& k : r.classes) {
        const double x = t - k.offset.in(units::s);
        if (x < 0) continue;
        const double e = std::exp(-r.tail_rate_per_s * x);
        double all = 1.0;
        for (int j = 0; j < k.parallel; ++j) {
            all *= 1.0 - r.chunk_wait[static_cast<std::size_t>(j)] * e;
        }
        f += k.share * all;
    }
    return f;
}

[[nodiscard]] inline duration mixture_quantile(const analytic_result& r, double p) {
    if (!r.stable) return duration{std::numeric_limits<double>::infinity(), units::s};
    double lo = 0;
    double hi = 0;
    int most = 1;
    for (const analytic_class& k : r.classes) {
        hi = std::max(hi, k.offset.in(units::s));
        most = std::max(most, k.parallel);
    }
    if (r.tail_rate_per_s > 0) {
        // P(longest of `most` waits > x) <= most x e^(-rate x) <= 1 - p there.
        hi += std::log(most / (1.0 - p) + 1.0) / r.tail_rate_per_s;
    }
    hi = hi * (1 + 1e-9) + 1e-12;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (mixture_cdf(r, mid) >= p * (1.0 - rank_tolerance)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return duration{hi, units::s};
}

/// E[longest of k independent waits], wait j being 0 with probability 1 - P_j, else
/// exponential of rate theta: with y = e^(-theta x) the mean is
/// (1 / theta) x integral over [0, 1] of (1 - prod_j (1 - P_j y)) / y dy, a polynomial of degree
/// k - 1 integrated by Simpson's rule on 64 intervals (error far below the model's).
[[nodiscard]] inline double mean_max_wait(int k, std::span<const double> p, double theta) {
    if (theta <= 0) return 0;
    const auto f = [&](double y) {
        double prod = 1.0;
        double sum = 0.0;
        for (int j = 0; j < k; ++j) {
            prod *= 1.0 - p[static_cast<std::size_t>(j)] * y;
            sum += p[static_cast<std::size_t>(j)];
        }
        return y == 0.0 ? sum : (1.0 - prod) / y;
    };
    constexpr int n = 64;
    double s = f(0.0) + f(1.0);
    for (int i = 1; i < n; ++i) s += (i % 2 == 1 ? 4.0 : 2.0) * f(static_cast<double>(i) / n);
    return s / (3.0 * n) / theta;
}

/// Wait probability of the j-th chunk (j = 1..c) of a request arriving at an M/M/c system of
/// offered load a: P(fewer than j servers free) = C + sum_{n = c-j+1}^{c-1} pi_n, with
/// pi_n = (1 - C) (a^n / n!) / sum_{m < c} a^m / m!.
[[nodiscard]] inline std::vector<double> chunk_wait_probabilities(int c, double a, double cwait) {
    std::vector<double> term(static_cast<std::size_t>(c));
    double t = 1.0;
    double norm = 0.0;
    for (int n = 0; n < c; ++n) {
        if (n > 0) t *= a / n;
        term[static_cast<std::size_t>(n)] = t;
        norm += t;
    }
    std::vector<double> p(static_cast<std::size_t>(c));
    double acc = cwait;
    for (int j = 1; j <= c; ++j) {
        if (j > 1) acc += (1.0 - cwait) * term[static_cast<std::size_t>(c - j + 1)] / norm;
        p[static_cast<std::size_t>(j - 1)] = acc < 1.0 ? acc : 1.0;
    }
    return p;
}

}  // namespace detail

inline duration analytic_result::at(double p) const {
    PERFCAST_EXPECTS(p > 0 && p < 1, "analytic_result::at", "p", p, "a share in (0, 1)");
    return detail::mixture_quantile(*this, p);
}

/// M/G/c approximation of `config` at `qps` with batch sizes from `dist`; microseconds, for
/// sweeps. The simulation is the reference; docs/serving.md gives the measured gaps.
///
/// Jobs are chunks: a request of bs samples brings its plan's K chunks at once (compound
/// Poisson: arrival SCV ca^2 = E[K^2] / E[K], Whitt's QNA). Each chunk runs alone at its gear:
/// requests are not merged (conservative when a window merges small requests under load).
/// Contention: a running batch sees 1 + Binomial(c - 1, rho) batches, so its mean service time
/// is E[t(g, N)] (a fixed point in rho). Mean wait by Allen-Cunneen,
/// Wq = C(c, a) / (c mu - lambda_chunks) x (ca^2 + cs^2) / 2, exact for M/M/c, with C the
/// Erlang C probability and cs^2 including the simulation's service noise. A chunk waits
/// with probability P_j, else not: P_1 = C, and the j-th chunk of a split request also waits when
/// fewer than j streams are free (M/M/c state probabilities); a wait is exponential of mean
/// Wq / C. A request of K chunks waits for the longest of its first min(K, c) chunk waits (taken
/// independent), then runs its chunks in waves of c on the loaded card; one that does not fill the
/// largest gear also waits out the window when it finds no queue (probability 1 - C; its mean,
/// added as a constant). Streams are taken as alike (stream 0's table).
[[nodiscard]] inline analytic_result analyze(const server_config& config,
                                             const batch_distribution& dist, request_rate qps,
                                             double service_cv = 0) {
    validate(config);
    PERFCAST_EXPECTS(qps.in(units::qps) > 0 && is_finite(qps), "analyze", "qps", qps.in(units::qps),
                     "a finite rate > 0 requests per second");
    const int k_erlang = detail::erlang_shape(service_cv);
    const double noise_scv = k_erlang == 0 ? 0.0 : 1.0 / k_erlang;
    const int c = static_cast<int>(config.streams.size());
    const service_table& table = config.streams.front().service;
    const double lambda = qps.in(units::qps);

    analytic_result r;
    r.qps = qps;
    std::vector<batch_plan> plans;
    plans.reserve(dist.bins().size());
    double ek = 0;
    double ek2 = 0;
    for (std::size_t i = 0; i < dist.bins().size(); ++i) {
        plans.push_back(plan_request(config.gears, dist.bins()[i].bs));
        const double k = plans.back().chunks;
        ek += dist.share(i) * k;
        ek2 += dist.share(i) * k * k;
    }
    const double lambda_c = lambda * ek;
    {
        // At saturation every other stream is busy: the mean chunk service there.
        const std::vector<double> all_busy = detail::binomial_pmf(c - 1, 1.0);
        double es_full = 0;
        for (std::size_t i = 0; i < plans.size(); ++i) {
            for (int j = 0; j < plans[i].chunks; ++j) {
                es_full += dist.share(i) *
                           detail::loaded_seconds(
                               table, config.gears.index_for(plans[i].chunk(j).gear), 1, all_busy);
            }
        }
        r.saturation = request_rate{static_cast<double>(c) / es_full, units::qps};
    }
    // Chunk service moments with the other c - 1 streams busy with probability rho each.
    double es = 0;
    double es2 = 0;
    double rho = 0;
    for (int it = 0; it < 200; ++it) {
        const std::vector<double> others = detail::binomial_pmf(c - 1, std::min(rho, 1.0));
        es = 0;
        es2 = 0;
        for (std::size_t i = 0; i < plans.size(); ++i) {
            for (int j = 0; j < plans[i].chunks; ++j) {
                const double t = detail::loaded_seconds(
                    table, config.gears.index_for(plans[i].chunk(j).gear), 1, others);
                es += dist.share(i) * t;
                es2 += dist.share(i) * t * t;
            }
        }
        es /= ek;
        es2 /= ek;
        const double next = lambda_c * es / c;
        const bool done = std::abs(next - rho) <= 1e-12 * next;
        rho = next;
        if (done || rho >= 1.0) break;
    }
    r.utilization = rho;
    r.concurrency = 1.0 + (c - 1) * std::min(rho, 1.0);
    r.stable = rho < 1.0;
    if (!r.stable) {
        const duration inf{std::numeric_limits<double>::infinity(), units::s};
        r.mean_wait = r.mean = r.p50 = r.p90 = r.p99 = r.p999 = inf;
        r.wait_probability = 1.0;
        r.mean_queue = std::numeric_limits<double>::infinity();
        return r;
    }
    const double a = lambda_c * es;
    const double cwait = detail::erlang_c(c, a);
    const double scv_s = (es2 * (1.0 + noise_scv)) / (es * es) - 1.0;
    const double scv_a = ek2 / ek;
    const double wq = cwait / (c / es - lambda_c) * (scv_a + scv_s) / 2.0;
    r.wait_probability = cwait;
    r.mean_wait = duration{wq, units::s};
    r.tail_rate_per_s = wq > 0 ? cwait / wq : 0.0;
    r.mean_queue = lambda_c * wq;
    r.chunk_wait = detail::chunk_wait_probabilities(c, a, cwait);

    double mean = 0;
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const batch_plan& p = plans[i];
        double service = 0;
        for (int first = 0; first < p.chunks; first += c) {
            const int m = std::min(p.chunks - first, c);
            const std::vector<double> others = detail::binomial_pmf(c - m, rho);
            double wave = 0;
            for (int j = 0; j < m; ++j) {
                wave = std::max(
                    wave, detail::loaded_seconds(
                              table, config.gears.index_for(p.chunk(first + j).gear), m, others));
            }
            service += wave;
        }
        const bool full =
            p.split() || p.request == config.gears.max() || config.max_requests_per_batch == 1;
        const double window = full ? 0.0 : config.window.in(units::s) * (1.0 - cwait);
        const int parallel = std::min(p.chunks, c);
        mean += dist.share(i) * (service + window +
                                 detail::mean_max_wait(parallel, r.chunk_wait, r.tail_rate_per_s));
        r.classes.push_back({dist.share(i), duration{service + window, units::s}, parallel});
    }
    r.mean = duration{mean, units::s};
    r.p50 = r.at(0.50);
    r.p90 = r.at(0.90);
    r.p99 = r.at(0.99);
    r.p999 = r.at(0.999);
    return r;
}

}  // namespace perfcast
