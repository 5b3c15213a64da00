// perfcast/optimise.hpp: two derivative-free minimisers of a few coordinates, for objectives
// that are sums over measured rows (no gradient, kinks from |x|):
//
//   nelder_mead(f, start, free, {.budget = 2000, .restarts = 2})   a simplex search over the
//                                   free coordinates of an array, restarted from its best point
//   golden_section(g, lo, hi)       the minimum of a unimodal g on [lo, hi]
//
// The calibration's stages are their users (profile/calibrate_stages.hpp). fit.hpp's least
// squares is another idea: a closed-form fit of one op's core scaling, not a search.
// Deterministic: no random numbers; the same objective gives the same point everywhere.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

namespace perfcast::detail {

/// The best point a search found and the objective there.
template <std::size_t N>
struct search_minimum {
    std::array<double, N> point{};
    double value = 0;
};

struct nelder_mead_options {
    // Objective evaluations of the searches after the start point's, shared evenly by the runs
    // (a run's budget starts once its simplex is built).
    int budget = 1000;
    int restarts = 0;  // runs after the first, each from the best point so far
    // The start simplex: the point, and the point moved by `step` along each free coordinate.
    // An assumption, for coordinates that are logs and logits (0.5: a factor of 1.65 on a time).
    double step = 0.5;
    // A run stops when its worst and best vertices differ by less than tolerance x (1 + best):
    // relative, far below any difference in error that matters. An assumption.
    double tolerance = 1e-10;
};

/// Nelder-Mead (Nelder and Mead 1965) with the usual coefficients: reflection 1, expansion 2,
/// contraction 0.5, shrink 0.5. Coordinates not `free` keep the start's values. Each restart
/// builds a fresh simplex around the best point, which escapes a simplex that collapsed early.
template <std::size_t N, class F>
[[nodiscard]] search_minimum<N> nelder_mead(F&& f, const std::array<double, N>& start,
                                            const std::array<bool, N>& free,
                                            const nelder_mead_options& opt) {
    using vec = std::array<double, N>;
    int evaluations = 0;
    const auto eval = [&](const vec& v) {
        ++evaluations;
        return f(v);
    };
    vec best = start;
    double best_f = eval(best);
    const int budget_per_run = opt.budget / (opt.restarts + 1);
    for (int run = 0; run <= opt.restarts; ++run) {
        std::vector<std::pair<vec, double>> simplex{{best, best_f}};
        for (std::size_t i = 0; i < N; ++i) {
            if (!free[i]) continue;
            vec v = best;
            v[i] += opt.step;
            simplex.emplace_back(v, eval(v));
        }
        const int stop = evaluations + budget_per_run;
        while (evaluations < stop && simplex.size() > 1) {
            std::sort(simplex.begin(), simplex.end(),
                      [](const auto& x, const auto& y) { return x.second < y.second; });
            if (simplex.back().second - simplex.front().second <
                opt.tolerance * (1.0 + simplex.front().second))
                break;
            vec centroid{};
            for (std::size_t j = 0; j + 1 < simplex.size(); ++j)
                for (std::size_t i = 0; i < N; ++i) centroid[i] += simplex[j].first[i];
            for (double& x : centroid) x /= static_cast<double>(simplex.size() - 1);
            // The point at t along the line from the centroid to the worst vertex: reflected at
            // t = -1, expanded at -2, contracted at 0.5.
            const auto along = [&](double t) {
                vec v;
                for (std::size_t i = 0; i < N; ++i)
                    v[i] = centroid[i] + t * (simplex.back().first[i] - centroid[i]);
                return v;
            };
            const vec xr = along(-1.0);
            const double fr = eval(xr);
            if (fr < simplex.front().second) {
                const vec xe = along(-2.0);
                const double fe = eval(xe);
                simplex.back() = fe < fr ? std::pair{xe, fe} : std::pair{xr, fr};
            } else if (fr < simplex[simplex.size() - 2].second) {
                simplex.back() = {xr, fr};
            } else {
                const vec xc = along(0.5);
                const double fc = eval(xc);
                if (fc < simplex.back().second) {
                    simplex.back() = {xc, fc};
                } else {  // shrink every vertex halfway towards the best
                    for (std::size_t j = 1; j < simplex.size(); ++j) {
                        for (std::size_t i = 0; i < N; ++i)
                            simplex[j].first[i] = simplex[0].first[i] +
                                                  0.5 * (simplex[j].first[i] - simplex[0].first[i]);
                        simplex[j].second = eval(simplex[j].first);
                    }
                }
            }
        }
        for (const auto& point : simplex) {
            if (point.second < best_f) {
                best = point.first;
                best_f = point.second;
            }
        }
    }
    return {best, best_f};
}

/// Golden-section search for the minimum of `g` on [lo, hi]: the middle of the last bracket,
/// after `iterations` steps that each shrink it by 0.618 (40 of them: 4e-9 of the interval).
template <class G>
[[nodiscard]] double golden_section(G&& g, double lo, double hi, int iterations = 40) {
    constexpr double phi = 0.6180339887498949;  // (sqrt(5) - 1) / 2
    double x1 = hi - phi * (hi - lo);
    double x2 = lo + phi * (hi - lo);
    double g1 = g(x1);
    double g2 = g(x2);
    for (int it = 0; it < iterations; ++it) {
        if (g1 < g2) {
            hi = x2;
            x2 = x1;
            g2 = g1;
            x1 = hi - phi * (hi - lo);
            g1 = g(x1);
        } else {
            lo = x1;
            x1 = x2;
            g1 = g2;
            x2 = lo + phi * (hi - lo);
            g2 = g(x2);
        }
    }
    return 0.5 * (lo + hi);
}

}  // namespace perfcast::detail
