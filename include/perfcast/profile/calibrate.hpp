// perfcast/profile/calibrate.hpp: fit the model's parameters to measured rows.
//
// The parameters (per-engine head costs, cube / vector / HBM efficiencies, overlap, the
// misaligned-move factor) are fitted by least squares on log(predicted / measured) over the rows
// the model can map, with a Nelder-Mead search in a transformed space (logs for times, logits for
// shares) so every candidate is valid. Log errors weigh a 2x miss on a 2 us op like one on a 2 ms
// op, which is what a per-op error report (MAPE) asks for. Rows are split into fit and held-out
// sets by whole groups (same type, same shapes), so that repeats of one op never sit on both
// sides.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "kernel_details.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// The rows of `rows` the model can map (see ops.hpp), with their block dims clamped to the chip.
[[nodiscard]] inline std::vector<measured_op> measured_ops(const chip& c,
                                                           const std::vector<kernel_row>& rows) {
    std::vector<measured_op> out;
    for (const kernel_row& r : rows) {
        if (auto m = measured_op_of(c, r)) out.push_back(std::move(*m));
    }
    return out;
}

struct calibration_options {
    int max_evaluations = 6000;  // objective evaluations of the Nelder-Mead search
    int restarts = 2;            // restarts from the best point (escape early collapse)
    int min_rows_per_type = 2;   // rows a type needs for its own work factor
    double max_work_factor = 16;  // work factors stay within [1/16, 16]
    int rounds = 3;               // alternations of shared parameters and work factors
};

struct calibration_result {
    calibration fitted;
    std::size_t rows = 0;
    double rms_log_error_before = 0;  // sqrt(mean(log(pred/meas)^2)) with the start parameters
    double rms_log_error_after = 0;
    int evaluations = 0;
};

namespace detail {

inline double logit(double p) { return std::log(p / (1.0 - p)); }
inline double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The free parameters as a vector, and back.
struct param_space {
    static constexpr std::size_t size = 10;
    using vec = std::array<double, size>;
    chip c;

    [[nodiscard]] vec encode(const model_params& p) const {
        const auto head = [&](engine e) {
            return model_params::head_override{
                true,
                p.head_of(e).set ? p.head_of(e).launch
                                 : (e == engine::aicpu ? c.overhead.aicpu_launch : c.overhead.launch),
                p.head_of(e).set ? p.head_of(e).per_core
                                 : (e == engine::aicpu ? duration{} : c.overhead.per_core)};
        };
        const auto lg = [](duration t) { return std::log(std::max(t.in(units::us), 1e-4)); };
        const auto share = [](double v) { return logit(std::clamp(v, 1e-4, 1.0 - 1e-4)); };
        const auto hc = head(engine::cube);
        const auto hv = head(engine::vector);
        const auto ha = head(engine::aicpu);
        return {lg(hc.launch),        lg(hc.per_core),          lg(hv.launch),
                lg(hv.per_core),      lg(ha.launch),            share(p.cube_efficiency),
                share(p.vector_efficiency), share(p.hbm_efficiency), share(p.overlap),
                share(p.misaligned_efficiency)};
    }

    [[nodiscard]] static model_params decode(const vec& v, model_params base) {
        const auto us = [](double x) { return duration{std::exp(x), units::us}; };
        base.head[0] = {true, us(v[0]), us(v[1])};
        base.head[1] = {true, us(v[2]), us(v[3])};
        base.head[2] = {true, us(v[4]), duration{}};
        base.cube_efficiency = logistic(v[5]);
        base.vector_efficiency = logistic(v[6]);
        base.hbm_efficiency = logistic(v[7]);
        base.overlap = logistic(v[8]);
        base.misaligned_efficiency = logistic(v[9]);
        return base;
    }
};

/// Weighted mean of log(predicted / measured)^2. A row weighs 1 / sqrt(rows of its op type), so
/// a type's total weight grows only as the square root of its row count: a dozen GEMMs are not
/// drowned by hundreds of tiny vector ops.
[[nodiscard]] inline double mean_sq_log_error(const chip& c, const std::vector<measured_op>& rows,
                                              const std::vector<double>& weights,
                                              const model_params& p) {
    double s = 0;
    double w = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const measured_op& m = rows[i];
        const double e = std::log(cost(c, m.o, core_count{m.cores}, p).latency / m.measured);
        s += weights[i] * e * e;
        w += weights[i];
    }
    return w > 0 ? s / w : 0.0;
}

[[nodiscard]] inline std::vector<double> type_weights(const std::vector<measured_op>& rows) {
    std::map<std::string, double, std::less<>> count;
    for (const measured_op& m : rows) count[m.type] += 1;
    std::vector<double> w;
    w.reserve(rows.size());
    for (const measured_op& m : rows) w.push_back(1.0 / std::sqrt(count.find(m.type)->second));
    return w;
}

/// Scales the op's vector work by `f`.
[[nodiscard]] inline op with_work(op o, double f) {
    o.useful_ops *= f;
    o.ops_per_unit *= f;
    return o;
}

}  // namespace detail

/// Fits the model's parameters to `rows` on chip `c`, starting from `start`.
[[nodiscard]] inline calibration_result calibrate(const chip& c,
                                                  const std::vector<measured_op>& rows,
                                                  const model_params& start = {},
                                                  calibration_options opt = {}) {
    PERFCAST_EXPECTS(!rows.empty(), "calibrate", "rows", 0.0,
                     "at least one measured row the model can map");
    PERFCAST_EXPECTS(opt.max_evaluations >= 10, "calibrate", "max_evaluations",
                     static_cast<double>(opt.max_evaluations), ">= 10");
    using space = detail::param_space;
    using vec = space::vec;
    const space sp{c};
    // Engines with no rows keep their start values: their coordinates are not searched.
    std::array<bool, space::size> free{};
    bool has_cube = false, has_vector = false, has_aicpu = false;
    for (const measured_op& m : rows) {
        has_cube |= m.o.eng == engine::cube;
        has_vector |= m.o.eng == engine::vector;
        has_aicpu |= m.o.eng == engine::aicpu;
    }
    // overlap and misaligned_efficiency stay as given: on profile rows they trade off against
    // the efficiencies (a fit that lowers overlap to explain memory-bound vector ops spoils the
    // GEMMs, whose compute and memory times are close), and a profile row does not say whether
    // its moves were aligned.
    free = {has_cube, has_cube, has_vector, has_vector, has_aicpu, has_cube,
            has_vector, has_cube || has_vector, false, false};

    calibration_result res;
    res.rows = rows.size();
    const std::vector<double> weights = detail::type_weights(rows);
    res.rms_log_error_before = std::sqrt(detail::mean_sq_log_error(c, rows, weights, start));

    // Stage 1: Nelder-Mead over the free coordinates (coefficients 1, 2, 0.5, 0.5), with
    // restarts from the best point, on `data` (the rows with the current work factors).
    const auto stage1 = [&](const std::vector<measured_op>& data, const model_params& from,
                            int budget) {
        const auto f = [&](const vec& v) {
            ++res.evaluations;
            return detail::mean_sq_log_error(c, data, weights, space::decode(v, from));
        };
        vec best = sp.encode(from);
        double best_f = f(best);
        const int budget_per_run = budget / (opt.restarts + 1);
        for (int run = 0; run <= opt.restarts; ++run) {
            std::vector<std::pair<vec, double>> simplex{{best, best_f}};
            for (std::size_t i = 0; i < space::size; ++i) {
                if (!free[i]) continue;
                vec v = best;
                v[i] += 0.5;
                simplex.emplace_back(v, f(v));
            }
            const int stop = res.evaluations + budget_per_run;
            while (res.evaluations < stop && simplex.size() > 1) {
                std::sort(simplex.begin(), simplex.end(),
                          [](const auto& x, const auto& y) { return x.second < y.second; });
                if (simplex.back().second - simplex.front().second <
                    1e-10 * (1.0 + simplex.front().second))
                    break;
                vec centroid{};
                for (std::size_t j = 0; j + 1 < simplex.size(); ++j)
                    for (std::size_t i = 0; i < space::size; ++i)
                        centroid[i] += simplex[j].first[i];
                for (double& x : centroid) x /= static_cast<double>(simplex.size() - 1);
                const auto along = [&](double t) {
                    vec v;
                    for (std::size_t i = 0; i < space::size; ++i)
                        v[i] = centroid[i] + t * (simplex.back().first[i] - centroid[i]);
                    return v;
                };
                const vec xr = along(-1.0);
                const double fr = f(xr);
                if (fr < simplex.front().second) {
                    const vec xe = along(-2.0);
                    const double fe = f(xe);
                    simplex.back() = fe < fr ? std::pair{xe, fe} : std::pair{xr, fr};
                } else if (fr < simplex[simplex.size() - 2].second) {
                    simplex.back() = {xr, fr};
                } else {
                    const vec xc = along(0.5);
                    const double fc = f(xc);
                    if (fc < simplex.back().second) {
                        simplex.back() = {xc, fc};
                    } else {
                        for (std::size_t j = 1; j < simplex.size(); ++j) {
                            for (std::size_t i = 0; i < space::size; ++i)
                                simplex[j].first[i] = simplex[0].first[i] +
                                                      0.5 * (simplex[j].first[i] - simplex[0].first[i]);
                            simplex[j].second = f(simplex[j].first);
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
        model_params out = space::decode(best, from);
        // Engines without rows keep the start's head (not the chip default made explicit).
        if (!has_cube) out.head[0] = start.head[0];
        if (!has_vector) out.head[1] = start.head[1];
        if (!has_aicpu) out.head[2] = start.head[2];
        return out;
    };

    // Stage 2: a work factor per vector / AI CPU op type with at least `min_rows_per_type`
    // rows, by golden-section search on log(factor) in [1/max_work_factor, max_work_factor],
    // kept only when it beats no factor.
    std::map<std::string, std::vector<std::size_t>, std::less<>> by_type;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].o.eng != engine::cube) by_type[rows[i].type].push_back(i);
    const auto stage2 = [&](const model_params& fitted) {
        std::map<std::string, double, std::less<>> factors;
        for (const auto& entry : by_type) {
            const std::vector<std::size_t>& idx = entry.second;  // named: lambdas capture it
            if (idx.size() < static_cast<std::size_t>(opt.min_rows_per_type)) continue;
            const auto g = [&](double logf) {
                ++res.evaluations;
                double sum = 0;
                for (std::size_t i : idx) {
                    const op o = detail::with_work(rows[i].o, std::exp(logf));
                    const double e =
                        std::log(cost(c, o, core_count{rows[i].cores}, fitted).latency /
                                 rows[i].measured);
                    sum += e * e;
                }
                return sum;
            };
            constexpr double phi = 0.6180339887498949;
            double lo = -std::log(opt.max_work_factor);
            double hi = std::log(opt.max_work_factor);
            double x1 = hi - phi * (hi - lo);
            double x2 = lo + phi * (hi - lo);
            double g1 = g(x1);
            double g2 = g(x2);
            for (int it = 0; it < 40; ++it) {
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
            const double best_log = 0.5 * (lo + hi);
            if (g(best_log) < g(0.0)) factors[entry.first] = std::exp(best_log);
        }
        return factors;
    };
    const auto scaled_by = [&](const calibration& cal) {
        std::vector<measured_op> out = rows;
        for (measured_op& m : out)
            if (m.o.eng != engine::cube) m.o = detail::with_work(m.o, cal.factor_of(m.type));
        return out;
    };

    // Alternate: shared parameters on the rows with the current factors, then the factors
    // under the new shared parameters.
    const int rounds = opt.rounds < 1 ? 1 : opt.rounds;
    model_params current = start;
    for (int round = 0; round < rounds; ++round) {
        current = stage1(scaled_by(res.fitted), current, opt.max_evaluations / rounds);
        res.fitted.params = current;
        res.fitted.work_factor = stage2(current);
    }
    res.rms_log_error_after =
        std::sqrt(detail::mean_sq_log_error(c, scaled_by(res.fitted), weights, current));
    return res;
}

/// A deterministic split of rows into fit and held-out sets by whole groups (same op type, input
/// shapes and dtypes): about `fraction` of the rows are held out, chosen by `seed`.
struct holdout_split {
    std::vector<kernel_row> fit;
    std::vector<kernel_row> test;
};

[[nodiscard]] inline holdout_split split_holdout(const std::vector<kernel_row>& rows,
                                                 double fraction, std::uint64_t seed) {
    PERFCAST_EXPECTS(fraction > 0 && fraction < 1, "split_holdout", "fraction", fraction,
                     "a share in (0, 1)");
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        std::string key = rows[i].op_type + "|";
        for (const auto& s : rows[i].input_shapes) key += to_string(s);
        key += "|";
        for (const auto& t : rows[i].input_types) key += t.text + ";";
        groups[key].push_back(i);
    }
    // splitmix64: the same groups for the same seed on every platform.
    std::uint64_t state = seed;
    const auto next = [&state] {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    std::vector<std::pair<std::uint64_t, const std::vector<std::size_t>*>> order;
    for (const auto& [k, idx] : groups) order.emplace_back(next(), &idx);
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<bool> held(rows.size(), false);
    const auto target = static_cast<std::size_t>(fraction * static_cast<double>(rows.size()) + 0.5);
    std::size_t taken = 0;
    for (const auto& [r, idx] : order) {
        if (taken >= target) break;
        for (std::size_t i : *idx) held[i] = true;
        taken += idx->size();
    }
    holdout_split out;
    for (std::size_t i = 0; i < rows.size(); ++i) (held[i] ? out.test : out.fit).push_back(rows[i]);
    return out;
}

}  // namespace perfcast::profile
