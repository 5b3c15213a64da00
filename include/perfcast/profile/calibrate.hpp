// perfcast/profile/calibrate.hpp: fit the model's parameters to measured rows.
//
// The parameters (per-engine head costs, the first-run cost, cube / vector / HBM efficiencies)
// are fitted by minimising the mean absolute log error, mean |log(predicted / measured)|, over
// the rows the model can map, with a Nelder-Mead search in a transformed space (logs for times,
// logits for shares) so every candidate is valid; then a work factor and a fixed time per
// vector op type (and, for heavy types the rows lack, the median heavy factor), alternating
// the two stages. Log errors weigh a 2x miss on a 2 us op like one on a 2 ms op,
// which is what a per-op error report (MAPE) asks for; the absolute value (not the square) keeps
// a few outliers (a kernel's slow first run, a collective stealing bandwidth) from dragging the
// fit away from the typical row. Whether the vector efficiency is fitted or kept is decided by
// a 3-fold cross-validation inside the fit rows (docs/calibration.md). Rows are split into fit
// and held-out sets by whole groups (same type, same shapes), so that repeats of one op never
// sit on both sides.
//
// Past 500 lines for now: the objective, the Nelder-Mead search and the alternating stages
// share param_space's encoding of the cost model's defaults, and calibrate_once (about 250
// lines) runs the stages inline; splitting it into its stages, then the file along those seams,
// is the open part of issue 14, item 3. The cross-validation folds still draw from their own
// LCG (calibrate(), fold_of_group): moving them to random.hpp would move every calibrated
// figure, a model change for a commit of its own.
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
#include "../progress.hpp"
#include "../random.hpp"
#include "context.hpp"
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

/// Whether calibration fits the vector efficiency. With a work factor per op type the two
/// overlap: a low vector efficiency and large factors, or the start efficiency and small ones,
/// fit the rows of the types with factors alike, and differ only on types the fit rows lack.
/// `choose` decides by cross-validation on the fit rows (docs/calibration.md).
enum class vector_efficiency_fit : unsigned char { choose, fit, keep };

struct calibration_options {
    int max_evaluations = 6000;  // objective evaluations of the Nelder-Mead search
    int restarts = 2;            // restarts from the best point (escape early collapse)
    int min_rows_per_type = 2;   // rows a type needs for its own work factor and fixed time
    double max_work_factor = 16;  // work factors stay within [1/16, 16]
    int rounds = 3;               // alternations of shared parameters and per-type terms
    bool fit_fixed_time = true;   // fit a fixed time per op type beside its work factor
    // Weights, per row, of a type's factor (|log f|) and fixed time (log(1 + t / 1 us)) against
    // its rows' summed |log error|. Chosen on the 910B1 and A100 hold-outs, where anything from
    // 0.03 to 0.1 for the fixed time does about as well (docs/calibration.md).
    double factor_penalty = 0.005;
    double fixed_penalty = 0.05;
    // Give a heavy type without a factor of its own (is_heavy_type) the median factor of the
    // heavy types fitted (calibration::unseen_heavy_factor).
    bool fit_unseen_heavy_factor = true;
    vector_efficiency_fit vector_efficiency = vector_efficiency_fit::choose;
    int folds = 3;  // cross-validation folds (whole groups of rows) of the `choose` decision
    // `choose` fits the vector efficiency only when that cross-validates more than this much
    // better (relative) than keeping it: keeping it is the model with one parameter fewer. An
    // assumption; 2 % and 5 % score alike on the 910B1 hold-outs (docs/validation.md).
    double cv_margin = 0.05;
    // Rows a cross-validation fit uses at most (an even stride through its folds' rows): the
    // decision needs the data's shape, not every repeat of it.
    std::size_t cv_max_rows = 2000;
    // Hears of each fit ("fit 3 of 7": the cross-validation's fits, then the final one) every
    // progress_every_evaluations objective evaluations.
    progress_fn progress{};
};

/// Objective evaluations of a fit between two progress reports (each costs one model
/// evaluation per row: a few milliseconds on a profile of thousands of rows).
inline constexpr int progress_every_evaluations = 200;

struct calibration_result {
    calibration fitted;
    std::size_t rows = 0;
    double log_error_before = 0;  // mean |log(pred / meas)| with the start parameters
    double log_error_after = 0;   // the same with the fitted parameters and per-type terms
    int evaluations = 0;
    bool vector_efficiency_fitted = false;
    // Mean absolute percentage error on the held-out folds of the `choose` decision, with the
    // vector efficiency fitted and kept (0 when not chosen by cross-validation).
    double cv_error_fitted = 0;
    double cv_error_kept = 0;
};

namespace detail {

inline double logit(double p) { return std::log(p / (1.0 - p)); }
inline double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The free parameters as a vector, and back.
struct param_space {
    static constexpr std::size_t size = 12;
    using vec = std::array<double, size>;
    chip c;

    [[nodiscard]] vec encode(const model_params& p) const {
        const auto head = [&](engine e) {
            const overhead_spec& o = c.overhead;
            return model_params::head_override{true,
                                               p.head_of(e).set      ? p.head_of(e).launch
                                               : e == engine::aicpu  ? o.aicpu_launch
                                               : e == engine::vector ? o.vector_launch
                                                                     : o.launch,
                                               p.head_of(e).set      ? p.head_of(e).per_core
                                               : e == engine::aicpu  ? duration{}
                                               : e == engine::vector ? o.vector_per_core
                                                                     : o.per_core};
        };
        const auto lg = [](duration t) { return std::log(std::max(t.in(units::us), 1e-4)); };
        const auto share = [](double v) { return logit(std::clamp(v, 1e-4, 1.0 - 1e-4)); };
        const auto hc = head(engine::cube);
        const auto hv = head(engine::vector);
        const auto ha = head(engine::aicpu);
        return {lg(hc.launch),        lg(hc.per_core),          lg(hv.launch),
                lg(hv.per_core),      lg(ha.launch),            share(p.cube_efficiency),
                share(p.vector_efficiency), share(p.hbm_efficiency / 2), share(p.overlap),
                share(p.misaligned_efficiency),
                // A zero first-run cost starts the search at 0.5 us + 0.02 us per core: log(0)
                // is no place to start from.
                lg(p.first_run_launch > duration{} ? p.first_run_launch : duration{0.5, units::us}),
                lg(p.first_run_per_core > duration{} ? p.first_run_per_core
                                                     : duration{0.02, units::us})};
    }

    [[nodiscard]] static model_params decode(const vec& v, model_params base) {
        const auto us = [](double x) { return duration{std::exp(x), units::us}; };
        base.head[0] = {true, us(v[0]), us(v[1])};
        base.head[1] = {true, us(v[2]), us(v[3])};
        base.head[2] = {true, us(v[4]), duration{}};
        base.cube_efficiency = logistic(v[5]);
        base.vector_efficiency = logistic(v[6]);
        // (0, 2): validate() allows HBM efficiency up to 2, the presets' HBM figures being
        // assumptions.
        base.hbm_efficiency = 2 * logistic(v[7]);
        base.overlap = logistic(v[8]);
        base.misaligned_efficiency = logistic(v[9]);
        base.first_run_launch = us(v[10]);
        base.first_run_per_core = us(v[11]);
        return base;
    }
};

/// Mean of |log(predicted / measured)| over `rows` under `p`.
[[nodiscard]] inline double mean_abs_log_error(const chip& c, const std::vector<measured_op>& rows,
                                               const model_params& p) {
    double s = 0;
    for (const measured_op& m : rows)
        s += std::abs(std::log(cost(c, m.o, core_count{m.cores}, p).latency / m.measured));
    return rows.empty() ? 0.0 : s / static_cast<double>(rows.size());
}

/// Scales the op's vector work by `f`.
[[nodiscard]] inline op with_work(op o, double f) {
    o.useful_ops *= f;
    o.ops_per_unit *= f;
    return o;
}

}  // namespace detail

namespace detail {
/// One calibration with the vector efficiency fitted (`fit_vector`) or kept.
[[nodiscard]] inline calibration_result calibrate_once(const chip& c,
                                                       const std::vector<measured_op>& rows,
                                                       const model_params& start,
                                                       const calibration_options& opt,
                                                       bool fit_vector) {
    using space = detail::param_space;
    using vec = space::vec;
    const space sp{c};
    // Engines with no rows keep their start values: their coordinates are not searched.
    std::array<bool, space::size> free{};
    bool has_cube = false, has_vector = false, has_aicpu = false, has_first_run = false;
    for (const measured_op& m : rows) {
        has_cube |= m.o.eng == engine::cube;
        has_vector |= m.o.eng == engine::vector;
        has_aicpu |= m.o.eng == engine::aicpu;
        has_first_run |= m.o.first_run;
    }
    // overlap and misaligned_efficiency stay as given: on profile rows they trade off against
    // the efficiencies (a fit that lowers overlap to explain memory-bound vector ops spoils the
    // GEMMs, whose compute and memory times are close), and a profile row does not say whether
    // its moves were aligned.
    // The first-run cost is searched only when some rows are first runs (annotated profiles).
    free = {has_cube,      has_cube,
            has_vector,    has_vector,
            has_aicpu,     has_cube,
            has_vector && fit_vector, has_cube || has_vector,
            false,         false,
            has_first_run, has_first_run};

    calibration_result res;
    res.rows = rows.size();
    res.vector_efficiency_fitted = has_vector && fit_vector;
    const auto counted = [&res, &opt] {
        if (++res.evaluations % progress_every_evaluations == 0) {
            ::perfcast::detail::report_progress(opt.progress, "fitting",
                                                static_cast<std::uint64_t>(res.evaluations), 0,
                                                "model evaluations");
        }
    };
    res.log_error_before = mean_abs_log_error(c, rows, start);

    // Stage 1: Nelder-Mead over the free coordinates (coefficients 1, 2, 0.5, 0.5), with
    // restarts from the best point, on `data` (the rows with the current per-type terms).
    const auto stage1 = [&](const std::vector<measured_op>& data, const model_params& from,
                            int budget) {
        const auto f = [&](const vec& v) {
            counted();
            return mean_abs_log_error(c, data, space::decode(v, from));
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
        if (!has_first_run) {  // not searched: keep the start's (not the search's start point)
            out.first_run_launch = start.first_run_launch;
            out.first_run_per_core = start.first_run_per_core;
        }
        return out;
    };

    // Stage 2: per vector / AI CPU op type with at least `min_rows_per_type` rows, a work
    // factor f in [1/max_work_factor, max_work_factor] and a fixed time d in [0, its fastest
    // row], searched on log f and u = log(1 + d / 1 us), kept only when they beat neither. The
    // objective adds rows x (factor_penalty x |log f| + fixed_penalty x u) to the type's sum of
    // |log(pred / meas)|: a fixed time has to buy more log error than a factor does, so it is
    // fitted where the rows show one (small and large rows off by the same time, as the 910B1's
    // ApplyAdamW of 4 Ki and 75 Mi elements are), and a factor the rows cannot pin down stays
    // near 1 (docs/calibration.md).
    std::map<std::string, std::vector<std::size_t>, std::less<>> by_type;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].o.eng != engine::cube) by_type[rows[i].type].push_back(i);
    const auto golden = [](auto&& g, double lo, double hi) {
        constexpr double phi = 0.6180339887498949;
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
        return 0.5 * (lo + hi);
    };
    const auto stage2 = [&](const model_params& fitted) {
        calibration out;
        std::vector<double> heavy;  // log factors of the heavy types fitted (0: none kept)
        for (const auto& entry : by_type) {
            const std::vector<std::size_t>& idx = entry.second;  // named: lambdas capture it
            if (idx.size() < static_cast<std::size_t>(opt.min_rows_per_type)) continue;
            double fastest = rows[idx.front()].measured.in(units::us);
            for (std::size_t i : idx) fastest = std::min(fastest, rows[i].measured.in(units::us));
            const auto g = [&](double logf, double u) {
                counted();
                double sum = 0;
                for (std::size_t i : idx) {
                    op o = with_work(rows[i].o, std::exp(logf));
                    o.extra_head += duration{std::expm1(u), units::us};
                    sum += std::abs(std::log(
                        cost(c, o, core_count{rows[i].cores}, fitted).latency / rows[i].measured));
                }
                return sum + static_cast<double>(idx.size()) *
                                 (opt.factor_penalty * std::abs(logf) + opt.fixed_penalty * u);
            };
            // The objective is not jointly unimodal (a factor can fit the small rows' fixed
            // costs at the price of the large ones), so the best factor is found on a grid of
            // fixed times first, then refined by alternating searches.
            const double max_u = opt.fit_fixed_time ? std::log1p(fastest) : 0.0;
            const double max_logf = std::log(opt.max_work_factor);
            const auto best_factor = [&](double at_u) {
                return golden([&](double x) { return g(x, at_u); }, -max_logf, max_logf);
            };
            double u = 0;
            double logf = best_factor(0.0);
            double best = g(logf, u);
            constexpr int grid = 8;
            for (int j = 1; max_u > 0 && j < grid; ++j) {
                const double uj = max_u * j / (grid - 1);
                const double fj = best_factor(uj);
                if (const double v = g(fj, uj); v < best) {
                    best = v;
                    u = uj;
                    logf = fj;
                }
            }
            for (int pass = 0; max_u > 0 && pass < 2; ++pass) {
                const double ru = golden([&](double x) { return g(logf, x); },
                                         std::max(0.0, u - max_u / (grid - 1)),
                                         std::min(max_u, u + max_u / (grid - 1)));
                const double rf = best_factor(ru);
                if (const double v = g(rf, ru); v < best) {  // refined only when better
                    best = v;
                    u = ru;
                    logf = rf;
                }
            }
            // Kept only when it beats none. Below 1e-6 in log f or 1e-3 us (the searches'
            // resolution, an assumption) a factor or time is none.
            double kept = 0;  // log of the factor kept (0: none)
            if (best < g(0.0, 0.0)) {
                if (std::abs(logf) > 1e-6) kept = logf;
                if (std::expm1(u) >= 1e-3)
                    out.fixed_time[entry.first] = duration{std::expm1(u), units::us};
            }
            const bool heavy_type = opt.fit_unseen_heavy_factor && is_heavy_type(entry.first);
            // A heavy type fitted at none keeps 1 explicitly: without an entry it would take
            // the unseen heavy types' median.
            if (kept != 0 || heavy_type) out.work_factor[entry.first] = std::exp(kept);
            if (heavy_type) heavy.push_back(kept);
        }
        // A heavy type the rows lack (or have one row of) gets the median factor of the heavy
        // types they show: the traits table's operation counts are the assumption the factors
        // correct, and on one chip its kernels miss them alike (docs/calibration.md).
        if (heavy.size() >= 2) {  // a median of one type would be that type's own factor
            std::sort(heavy.begin(), heavy.end());
            const std::size_t h = heavy.size() / 2;
            out.unseen_heavy_factor =
                std::exp(heavy.size() % 2 ? heavy[h] : 0.5 * (heavy[h - 1] + heavy[h]));
        }
        return out;
    };
    const auto scaled_by = [&](const calibration& cal) {
        std::vector<measured_op> out = rows;
        for (measured_op& m : out) m.o = cal.applied(m.o, m.type);
        return out;
    };

    // Alternate: shared parameters on the rows with the current per-type terms, then the
    // per-type terms under the new shared parameters.
    const int rounds = opt.rounds < 1 ? 1 : opt.rounds;
    model_params current = start;
    for (int round = 0; round < rounds; ++round) {
        current = stage1(scaled_by(res.fitted), current, opt.max_evaluations / rounds);
        calibration types = stage2(current);
        types.params = current;
        res.fitted = std::move(types);
    }
    res.log_error_after = mean_abs_log_error(c, scaled_by(res.fitted), current);
    return res;
}

/// Mean absolute percentage error of `cal` on `rows`.
[[nodiscard]] inline double mean_ape(const chip& c, const std::vector<measured_op>& rows,
                                     const calibration& cal) {
    double s = 0;
    for (const measured_op& m : rows) {
        s += std::abs(cost(c, cal.applied(m.o, m.type), core_count{m.cores}, cal.params).latency /
                          m.measured -
                      1.0);
    }
    return rows.empty() ? 0.0 : s / static_cast<double>(rows.size());
}
}  // namespace detail

/// Fits the model's parameters to `rows` on chip `c`, starting from `start`. With
/// `vector_efficiency_fit::choose` (the default) the rows are split into `folds` folds of whole
/// groups (same type, bytes and cores); the model is calibrated on all folds but one with the
/// vector efficiency fitted and kept, scored on the one left out, and the final fit on every
/// row fits the efficiency only when its mean APE over the folds is below (1 - cv_margin) x
/// the kept setting's (or when no fold could be scored). A fold's fit uses at most
/// `cv_max_rows` rows.
[[nodiscard]] inline calibration_result calibrate(const chip& c,
                                                  const std::vector<measured_op>& rows,
                                                  const model_params& start = {},
                                                  calibration_options opt = {}) {
    PERFCAST_EXPECTS(!rows.empty(), "calibrate", "rows", 0.0,
                     "at least one measured row the model can map");
    PERFCAST_EXPECTS(opt.max_evaluations >= 10, "calibrate", "max_evaluations",
                     static_cast<double>(opt.max_evaluations), ">= 10");
    PERFCAST_EXPECTS(opt.folds >= 2, "calibrate", "folds", static_cast<double>(opt.folds),
                     ">= 2");
    PERFCAST_EXPECTS(opt.cv_margin >= 0 && opt.cv_margin < 1, "calibrate", "cv_margin",
                     opt.cv_margin, "a share in [0, 1)");
    PERFCAST_EXPECTS(opt.factor_penalty >= 0 && opt.factor_penalty < 1e6, "calibrate",
                     "factor_penalty", opt.factor_penalty, "a finite weight >= 0");
    PERFCAST_EXPECTS(opt.fixed_penalty >= 0 && opt.fixed_penalty < 1e6, "calibrate",
                     "fixed_penalty", opt.fixed_penalty, "a finite weight >= 0");
    PERFCAST_EXPECTS(opt.max_work_factor >= 1 && opt.max_work_factor < 1e6, "calibrate",
                     "max_work_factor", opt.max_work_factor, "a finite factor >= 1");
    // Each fit's reports say which fit it is: "fit 3 of 7".
    std::string task = "fit 1 of 1";
    calibration_options each = opt;
    if (opt.progress) {
        each.progress = [&opt, &task](const progress_step& p) {
            opt.progress({task, p.done, p.total, p.unit});
        };
    }
    if (opt.vector_efficiency != vector_efficiency_fit::choose)
        return detail::calibrate_once(c, rows, start, each,
                                      opt.vector_efficiency == vector_efficiency_fit::fit);
    // Folds of whole groups, drawn by a fixed LCG so the decision is the same everywhere.
    std::map<std::string, int, std::less<>> fold_of_group;
    std::vector<int> fold(rows.size());
    std::uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const measured_op& m = rows[i];
        std::string key = m.type + "|" + std::to_string(m.o.bytes_read.in(units::B)) + "|" +
                          std::to_string(m.o.bytes_written.in(units::B)) + "|" +
                          std::to_string(m.cores);
        auto it = fold_of_group.find(key);
        if (it == fold_of_group.end()) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            it = fold_of_group
                     .emplace(std::move(key), static_cast<int>((state >> 33) %
                                                               static_cast<unsigned>(opt.folds)))
                     .first;
        }
        fold[i] = it->second;
    }
    // Fits to come: two per fold with rows on both sides, then the final one.
    std::vector<std::size_t> fold_rows(static_cast<std::size_t>(opt.folds), 0);
    for (int f : fold) ++fold_rows[static_cast<std::size_t>(f)];
    std::size_t fits = 1;
    for (std::size_t n : fold_rows)
        if (n > 0 && n < rows.size()) fits += 2;
    std::size_t fit_no = 0;
    const auto next_fit = [&] {
        task = "fit " + std::to_string(++fit_no) + " of " + std::to_string(fits);
    };
    double error[2] = {0, 0};  // [0]: efficiency fitted, [1]: kept
    std::size_t scored = 0;
    for (int f = 0; f < opt.folds; ++f) {
        std::vector<measured_op> train;
        std::vector<measured_op> held;
        for (std::size_t i = 0; i < rows.size(); ++i)
            (fold[i] == f ? held : train).push_back(rows[i]);
        if (train.empty() || held.empty()) continue;
        if (opt.cv_max_rows > 0 && train.size() > opt.cv_max_rows) {
            std::vector<measured_op> sample;
            sample.reserve(opt.cv_max_rows);
            for (std::size_t j = 0; j < opt.cv_max_rows; ++j)
                sample.push_back(train[j * train.size() / opt.cv_max_rows]);
            train = std::move(sample);
        }
        for (int mode = 0; mode < 2; ++mode) {
            next_fit();
            const auto r = detail::calibrate_once(c, train, start, each, mode == 0);
            error[mode] += detail::mean_ape(c, held, r.fitted) * static_cast<double>(held.size());
        }
        scored += held.size();
    }
    const bool fit_vector = scored == 0 || error[0] < error[1] * (1.0 - opt.cv_margin);
    next_fit();
    calibration_result res = detail::calibrate_once(c, rows, start, each, fit_vector);
    if (scored > 0) {
        res.cv_error_fitted = error[0] / static_cast<double>(scored);
        res.cv_error_kept = error[1] / static_cast<double>(scored);
    }
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
    // splitmix64 (random.hpp): the same groups for the same seed on every platform.
    std::uint64_t state = seed;
    const auto next = [&state] { return ::perfcast::detail::splitmix64(state); };
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
