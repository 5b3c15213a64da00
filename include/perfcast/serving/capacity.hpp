// perfcast/serving/capacity.hpp: the highest load a card serves within a latency target
// (find_capacity, best_capacity: bisection on the simulation or the analytic model, capped
// below saturation) and the cards a traffic level needs (cards_for).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "../distribution.hpp"
#include "../enum_table.hpp"
#include "../error.hpp"
#include "../progress.hpp"
#include "../units.hpp"
#include "analytic.hpp"
#include "arrivals.hpp"
#include "result.hpp"
#include "saturation.hpp"
#include "simulation.hpp"

namespace perfcast {

// ---- capacity -----------------------------------------------------------------------------

/// An expected-like result: a value, or why there is none (E has a `why` string).
template <class T, class E>
class outcome {
public:
    outcome(T v) : v_(std::in_place_index<0>, std::move(v)) {}  // NOLINT: implicit by design
    outcome(E e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT: implicit by design

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    [[nodiscard]] explicit operator bool() const noexcept { return has_value(); }
    /// The value; throws perfcast::error carrying `why` when there is none.
    [[nodiscard]] const T& value() const {
        if (!has_value()) throw ::perfcast::error(std::get<1>(v_).why);
        return std::get<0>(v_);
    }
    /// Why there is no value (only when !has_value()).
    [[nodiscard]] const E& error() const {
        if (has_value()) throw ::perfcast::error("perfcast::outcome::error: there is a value");
        return std::get<1>(v_);
    }
    [[nodiscard]] const T& operator*() const { return value(); }
    [[nodiscard]] const T* operator->() const { return &value(); }

private:
    std::variant<T, E> v_;
};

enum class capacity_method : unsigned char { simulation, analytic };

struct capacity_options {
    /// Latency the quantile must not exceed (the TP99 target).
    duration target{};
    double quantile = 0.99;
    capacity_method method = capacity_method::simulation;
    /// Simulation: requests per evaluated load, warm-up, seed, service noise (sim_options).
    std::uint64_t requests = 20000;
    std::uint64_t warmup = 2000;
    std::uint64_t seed = 1;
    double service_cv = 0;
    /// Stop when the bracket [meets, fails] is narrower than this share of its top.
    double rel_tolerance = 0.01;
    /// Passed to every simulation of the search (sim_options::progress).
    progress_fn progress{};
};

/// What decided a capacity: the latency target, or the saturation cap.
enum class capacity_limit : unsigned char {
    latency,     // the highest stable load whose quantile meets the target (to rel_tolerance)
    saturation,  // the target is looser than saturation allows: the quantile still meets it at
                 // saturation x (1 - saturation_margin), the highest load searched
};

inline constexpr std::array<enum_entry<capacity_limit>, 2> capacity_limit_names{{
    {capacity_limit::latency, "latency"},
    {capacity_limit::saturation, "saturation"},
}};

static_assert(covers_enum<capacity_limit_names>());

[[nodiscard]] constexpr std::string_view name_of(capacity_limit l) noexcept {
    return name_in(capacity_limit_names, l);
}

/// The highest load found whose latency quantile meets the target.
struct serving_capacity {
    std::size_t index = 0;        // which candidate (best_capacity); 0 for one configuration
    request_rate qps{};           // requests per second per card
    duration latency{};           // the quantile at that load
    double utilization = 0;       // streams busy
    double core_utilization = 0;  // simulation only (0 with the analytic method)
    int evaluations = 0;          // simulations or analytic evaluations spent
    /// The saturation throughput the search stayed below (saturation().throughput; with the
    /// analytic method the model's analytic_result::saturation).
    request_rate saturation{};
    /// latency: below the cap; saturation: qps = saturation x (1 - saturation_margin), the
    /// target would allow more but no steady state exists there.
    capacity_limit limit = capacity_limit::latency;
};

/// No load meets the target. `closest` is the candidate with the lowest latency quantile at the
/// lowest load, `closest_latency` that quantile.
struct no_capacity {
    std::string why;
    std::size_t closest = 0;
    duration closest_latency{};
    duration target{};
};

using capacity_result = outcome<serving_capacity, no_capacity>;

namespace detail {

inline void check_capacity_options(const capacity_options& o) {
    constexpr std::string_view where = "find_capacity";
    PERFCAST_EXPECTS(o.target.in(units::s) > 0 && is_finite(o.target), where, "target (ms)",
                     o.target.in(units::ms), "a finite latency > 0 ms");
    PERFCAST_EXPECTS(o.quantile > 0 && o.quantile < 1, where, "quantile", o.quantile,
                     "a share in (0, 1), e.g. 0.99 for TP99");
    PERFCAST_EXPECTS(o.rel_tolerance >= 1e-6 && o.rel_tolerance < 1, where, "rel_tolerance",
                     o.rel_tolerance, "a share in [1e-6, 1)");
    if (o.method == capacity_method::simulation) {
        PERFCAST_EXPECTS(o.requests > o.warmup && o.requests - o.warmup >= 100, where, "requests",
                         static_cast<double>(o.requests), "at least 100 more than warmup");
    }
}

[[nodiscard]] inline std::string ms_text(duration t) {
    return number_text(std::round(t.in(units::ms)*1000.0) / 1000.0) + " ms";
}

/// Latency quantile, utilizations, at one load; `steady` false when the run's queue grew.
struct load_point {
    duration latency{};
    double utilization = 0;
    double core_utilization = 0;
    bool steady = true;
    [[nodiscard]] bool meets(duration target) const noexcept { return steady && latency <= target; }
};

/// Where light loads miss the target because their requests wait out the batching window, the
/// search scans down from the ceiling for the highest load that meets it, each load this ratio
/// of the one above, window_scan_steps loads at most (0.8^31: down to 1/1000 of the ceiling).
/// Both assumptions: a step that a meeting range of loads is wider than, a search bound.
inline constexpr double window_scan_ratio = 0.8;
inline constexpr int window_scan_steps = 32;

/// Bisection on the load: `eval(qps)` gives the quantile there. `floor_latency` is the quantile
/// no load goes below (service_floor), `light_latency` the quantile as the load goes to 0
/// (low_load: the same but for a batching window's wait), `guess` a load near saturation and
/// `sat` the saturation throughput: no load above sat x (1 - saturation_margin) is evaluated, so
/// every bracket holds stable loads only, and a target still met there gives that load, marked
/// capacity_limit::saturation. With a window, light loads can miss a target that busier loads
/// meet (gears fill and leave early; the latency falls with the load, then rises toward
/// saturation): the search then scans down from the ceiling (window_scan_ratio) for the highest
/// load that meets and bisects between it and the load above.
template <class Eval>
capacity_result bisect_capacity(const capacity_options& o, duration floor_latency,
                                duration light_latency, request_rate guess, request_rate sat,
                                Eval&& eval) {
    if (floor_latency > o.target) {
        const bool window = light_latency > floor_latency;
        return no_capacity{"perfcast::find_capacity: no load meets the target: the latency at " +
                               number_text(o.quantile * 100) + " % is " + ms_text(floor_latency) +
                               (window ? " at any load (the service alone, without the batching "
                                         "window's wait)"
                                       : " even at low load") +
                               ", above the target " + ms_text(o.target),
                           0, floor_latency, o.target};
    }
    serving_capacity best;
    best.saturation = sat;
    const double ceiling = sat.in(units::qps) * (1.0 - saturation_margin);
    int evals = 0;
    // Load 0 meets when its requests meet the target waiting out the window (or there is none).
    const bool light_meets = light_latency <= o.target;
    double lo = 0;  // the highest load known to meet (0: none yet, or load 0 where light_meets)
    load_point at_lo{light_latency, 0.0, 0.0};
    double hi = std::min(guess.in(units::qps), ceiling);
    // The lowest latency quantile a load gave: "none meets it" reports it as the closest.
    duration seen = duration{std::numeric_limits<double>::infinity(), units::s};
    const auto measure = [&](double q) {
        const load_point p = eval(request_rate{q, units::qps});
        ++evals;
        if (p.latency < seen) seen = p.latency;
        return p;
    };
    const auto at_ceiling = [&](const load_point& p) {
        best.qps = request_rate{ceiling, units::qps};
        best.latency = p.latency;
        best.utilization = p.utilization;
        best.core_utilization = p.core_utilization;
        best.evaluations = evals;
        best.limit = capacity_limit::saturation;
        return best;
    };
    if (!light_meets) {
        // The loads that meet lie between light loads and saturation: scan down from the top.
        double q = ceiling;
        for (int i = 0; i < window_scan_steps; ++i, q *= window_scan_ratio) {
            const load_point p = measure(q);
            if (p.meets(o.target)) {
                if (i == 0) return at_ceiling(p);
                lo = q;
                at_lo = p;
                break;
            }
            hi = q;  // the lowest load above that fails
        }
        if (lo == 0) {
            return no_capacity{"perfcast::find_capacity: no load meets the target " +
                                   ms_text(o.target) + " of the loads tried (" +
                                   number_text(ceiling) + " down to " + number_text(hi) +
                                   " requests/s; lighter loads wait out the batching window: " +
                                   ms_text(light_latency) + " at low load)",
                               0, seen, o.target};
        }
    }
    // Grow until a load fails (merging can beat the no-merging guess), up to the ceiling.
    for (int i = 0; light_meets && i < 64; ++i) {
        const load_point p = measure(hi);
        if (!p.meets(o.target)) break;
        lo = hi;
        at_lo = p;
        if (hi >= ceiling) return at_ceiling(p);
        hi = std::min(hi * 2, ceiling);
    }
    // Shrink until a load meets, when the guess already failed (load 0 meets).
    while (lo == 0 && evals < 60) {
        const double probe = hi / 4;
        const load_point p = measure(probe);
        if (p.meets(o.target)) {
            lo = probe;
            at_lo = p;
        } else {
            hi = probe;
        }
    }
    if (lo == 0) {
        return no_capacity{"perfcast::find_capacity: no load meets the target " +
                               ms_text(o.target) + " (even " + number_text(hi) +
                               " requests/s fails)",
                           0, seen, o.target};
    }
    while (hi - lo > o.rel_tolerance * hi && evals < 200) {
        const double mid = 0.5 * (lo + hi);
        const load_point p = measure(mid);
        if (p.meets(o.target)) {
            lo = mid;
            at_lo = p;
        } else {
            hi = mid;
        }
    }
    best.qps = request_rate{lo, units::qps};
    best.latency = at_lo.latency;
    best.utilization = at_lo.utilization;
    best.core_utilization = at_lo.core_utilization;
    best.evaluations = evals;
    return best;
}

/// The simulation settings of every load a capacity search simulates (latencies kept for the
/// quantile).
[[nodiscard]] inline sim_options capacity_sim_options(const capacity_options& o) {
    sim_options so;
    so.seed = o.seed;
    so.warmup = o.warmup;
    so.service_cv = o.service_cv;
    so.keep_latencies = true;
    so.progress = o.progress;
    return so;
}

}  // namespace detail

/// Highest QPS per card whose latency quantile meets `o.target` with Poisson arrivals of batch
/// sizes from `dist` (bisection on the simulation or the analytic model), never above
/// saturation x (1 - saturation_margin) and never at a load whose run's queue grew: a loose
/// target gives that cap, marked capacity_limit::saturation. "None meets it" when even the
/// quantile no load goes below (service_floor: no queueing, no window wait) is above the target,
/// or when no load the search tried meets it.
[[nodiscard]] inline capacity_result find_capacity(const server_config& config,
                                                   const batch_distribution& dist,
                                                   const capacity_options& o) {
    detail::check_capacity_options(o);
    const low_load_result low = low_load(config, dist);
    const duration light_latency = low.at(o.quantile);
    const duration floor_latency =
        config.window > duration{} ? service_floor(config, dist).at(o.quantile) : light_latency;
    if (o.method == capacity_method::analytic) {
        // The model's own saturation load (any rate gives it: it does not depend on the load).
        const request_rate sat = analyze(config, dist, low.capacity, o.service_cv).saturation;
        return detail::bisect_capacity(
            o, floor_latency, light_latency, low.capacity, sat, [&](request_rate q) {
                const analytic_result a = analyze(config, dist, q, o.service_cv);
                return detail::load_point{a.stable ? a.at(o.quantile) : a.mean, a.utilization, 0.0,
                                          a.stable};
            });
    }
    const sim_options so = detail::capacity_sim_options(o);
    const saturation_result sat = saturation(config, dist, o.seed, o.service_cv);
    return detail::bisect_capacity(
        o, floor_latency, light_latency, low.capacity, sat.throughput, [&](request_rate q) {
            const serving_result s = simulate(config, dist, q, o.requests, so);
            return detail::load_point{s.at(o.quantile), s.utilization, s.core_utilization,
                                      !s.queue_grew()};
        });
}

/// Highest request rate at which `trace`, replayed faster or slower (its gaps scaled, its batch
/// sizes kept), meets the target. `o.requests` and `o.seed` are not used; the warm-up counts
/// trace requests.
[[nodiscard]] inline capacity_result find_capacity(const server_config& config,
                                                   std::span<const arrival> trace,
                                                   const capacity_options& o) {
    // The trace is the run: its length, not `requests`, must pass the warm-up.
    PERFCAST_EXPECTS(trace.size() > o.warmup && trace.size() - o.warmup >= 100, "find_capacity",
                     "trace (requests)", static_cast<double>(trace.size()),
                     "at least 100 more than capacity_options::warmup (" +
                         std::to_string(o.warmup) + "): a longer trace or a smaller warmup");
    capacity_options ot = o;
    ot.requests = trace.size();
    detail::check_capacity_options(ot);
    const request_rate base = mean_rate(trace);
    trace_arrivals check(trace);  // validates the order once
    const batch_distribution dist = batch_sizes_of(trace);
    const low_load_result low = low_load(config, dist);
    const sim_options so = detail::capacity_sim_options(o);
    // The trace's sizes, queued at once: its bursts are not the saturation's business.
    const saturation_result sat = saturation(config, dist, o.seed, o.service_cv);
    const duration light_latency = low.at(o.quantile);
    const duration floor_latency =
        config.window > duration{} ? service_floor(config, dist).at(o.quantile) : light_latency;
    return detail::bisect_capacity(
        o, floor_latency, light_latency, low.capacity, sat.throughput, [&](request_rate q) {
            trace_arrivals src(trace, q / base);
            const serving_result s = simulate(config, src, so);
            return detail::load_point{s.at(o.quantile), s.utilization, s.core_utilization,
                                      !s.queue_grew()};
        });
}

/// The candidate with the highest capacity, or none meets it with the closest candidate (the
/// lowest latency quantile no load goes below: at low load, without a batching window's wait).
[[nodiscard]] inline capacity_result best_capacity(std::span<const server_config> candidates,
                                                   const batch_distribution& dist,
                                                   const capacity_options& o) {
    PERFCAST_EXPECTS(!candidates.empty(), "best_capacity", "candidates", 0.0,
                     "at least one configuration");
    std::optional<serving_capacity> best;
    no_capacity closest;
    closest.closest_latency = duration{std::numeric_limits<double>::infinity(), units::s};
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const capacity_result r = find_capacity(candidates[i], dist, o);
        if (r) {
            if (!best || r->qps > best->qps) {
                best = *r;
                best->index = i;
            }
        } else if (r.error().closest_latency < closest.closest_latency) {
            closest = r.error();
            closest.closest = i;
        }
    }
    if (best) return *best;
    closest.why = "perfcast::best_capacity: none of the " + std::to_string(candidates.size()) +
                  " configurations meets the target " + detail::ms_text(o.target) +
                  "; the closest is candidate " + std::to_string(closest.closest) + " at " +
                  detail::ms_text(closest.closest_latency) + " (" +
                  detail::number_text(o.quantile * 100) +
                  " % at low load, without a batching window's wait)";
    return closest;
}

/// How many cards carry a traffic level.
struct card_count {
    std::int64_t cards = 0;
    request_rate per_card{};  // traffic / cards
    double load = 0;          // per_card / capacity
};

/// cards = ceil(traffic / (capacity x (1 - headroom))): headroom 0.2 keeps every card at <= 80 %
/// of its capacity. A ratio within 1e-9 of a whole number counts as that number.
[[nodiscard]] inline card_count cards_for(request_rate traffic, request_rate capacity_per_card,
                                          double headroom = 0) {
    constexpr std::string_view where = "cards_for";
    PERFCAST_EXPECTS(traffic.in(units::qps) > 0 && is_finite(traffic), where, "traffic",
                     traffic.in(units::qps), "a finite rate > 0 requests per second");
    PERFCAST_EXPECTS(capacity_per_card.in(units::qps) > 0 && is_finite(capacity_per_card), where,
                     "capacity", capacity_per_card.in(units::qps),
                     "a finite rate > 0 requests per second");
    PERFCAST_EXPECTS(headroom >= 0 && headroom < 1, where, "headroom", headroom,
                     "a share in [0, 1)");
    const double x = traffic / (capacity_per_card * (1.0 - headroom));
    PERFCAST_EXPECTS(x < 9e15, where, "traffic / capacity", x, "fewer than 9e15 cards");
    double cards = std::ceil(x * (1.0 - 1e-9));
    if (cards < 1) cards = 1;
    card_count r;
    r.cards = static_cast<std::int64_t>(cards);
    r.per_card = traffic / cards;
    r.load = r.per_card / capacity_per_card;
    return r;
}

}  // namespace perfcast
