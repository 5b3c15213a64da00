// perfcast/profile/calibrate_stages.hpp: one calibration of the model's parameters to measured
// rows (detail::calibrate_once), in its stages:
//
//   engines_of, searched_coordinates   which parameters the rows can tell: an engine without
//                                      rows keeps its start values
//   fit_shared      stage 1: the shared parameters (per-engine head costs, the first-run cost,
//                   cube / vector / HBM efficiencies; the L2 efficiency in a last round of its
//                   own when l2_rows says the rows inform it, from with_best_l2's grid),
//                   Nelder-Mead (optimise.hpp) on the mean |log error|
//                   (calibrate_objective.hpp) of the rows with the per-type terms
//   fit_type        stage 2, one op type: a work factor and a fixed time (or a time per core
//                   held), golden-section searches
//   fit_type_terms  stage 2: every vector / AI CPU type with enough rows, and the factor of the
//                   heavy types the rows lack
//   calibrate_once  the two stages alternated `rounds` times
//
// Whether the vector efficiency is fitted is the caller's choice (calibrate.hpp decides it by
// cross-validation).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "../optimise.hpp"
#include "../progress.hpp"
#include "calibrate_objective.hpp"
#include "calibrate_options.hpp"
#include "ops.hpp"

namespace perfcast::profile::detail {

/// Counts a fit's objective evaluations (every search's together) and reports them every
/// progress_every_evaluations.
struct evaluation_counter {
    const progress_fn& progress;
    int evaluations = 0;
    void operator()() {
        if (++evaluations % progress_every_evaluations == 0) {
            ::perfcast::detail::report_progress(progress, "fitting",
                                                static_cast<std::uint64_t>(evaluations), 0,
                                                "model evaluations");
        }
    }
};

/// What the rows hold: rows on each engine, and first runs (annotated profiles).
struct engines_seen {
    bool cube = false;
    bool vector = false;
    bool aicpu = false;
    bool first_run = false;
};

[[nodiscard]] inline engines_seen engines_of(const std::vector<measured_op>& rows) {
    engines_seen s;
    for (const measured_op& m : rows) {
        s.cube |= m.o.eng == engine::cube;
        s.vector |= m.o.eng == engine::vector;
        s.aicpu |= m.o.eng == engine::aicpu;
        s.first_run |= m.o.first_run;
    }
    return s;
}

/// How many of `rows` have a predicted time under `p` that moves by more than 1 % when `set`
/// makes one parameter 10 % lower or higher (`set(q, f)` scales it in `q` by f; both figures
/// assumptions: a step the search's resolution sees, a change larger than rounding).
template <class Set>
[[nodiscard]] std::size_t rows_moved_by(const chip& c, const std::vector<measured_op>& rows,
                                        const model_params& p, Set set) {
    model_params lo = p;
    model_params hi = p;
    set(lo, 0.9);
    set(hi, 1.1);
    std::size_t n = 0;
    for (const measured_op& m : rows) {
        const core_count k{m.cores};
        const double base = cost(c, m.o, k, p).latency.in(units::us);
        const double a = cost(c, m.o, k, lo).latency.in(units::us);
        const double b = cost(c, m.o, k, hi).latency.in(units::us);
        if (std::abs(a / base - 1) > 0.01 || std::abs(b / base - 1) > 0.01) ++n;
    }
    return n;
}

/// How many of `rows` inform the L2 rate (model_params::l2_efficiency, rows_moved_by). The rate
/// bounds a GEMM's tile loads (cost.hpp, tiled_for) and any op's L2 loads; most rows never touch
/// it.
[[nodiscard]] inline std::size_t l2_rows(const chip& c, const std::vector<measured_op>& rows,
                                         const model_params& p) {
    if (!(c.memory.l2_read_rate > bytes_per_cycle{})) return 0;
    return rows_moved_by(c, rows, p, [](model_params& q, double f) {
        q.l2_efficiency = std::clamp(q.l2_efficiency * f, model_params::min_efficiency, 2.0);
    });
}

/// How many of `rows` inform the HBM mix cost (model_params::hbm_mix_cost, rows_moved_by):
/// rows whose HBM traffic mixes reads and writes (dirty lines they evict included) and bounds
/// them.
[[nodiscard]] inline std::size_t mix_rows(const chip& c, const std::vector<measured_op>& rows,
                                          const model_params& p) {
    return rows_moved_by(c, rows, p, [](model_params& q, double f) {
        q.hbm_mix_cost = std::clamp(q.hbm_mix_cost * f, model_params::min_hbm_mix_cost,
                                    model_params::max_hbm_mix_cost);
    });
}

/// `p` with the L2 efficiency, of its own and the grid 2^(i/4), i = -8 .. 4 (0.25 .. 2, steps
/// of 19 %), that fits `data` best, the other parameters held: where stage 1 starts its search
/// of the rate. Nelder-Mead alone, started at the preset's rate, can slide into a worse minimum
/// (a low cube efficiency and the rate at its cap: tests/test_calibration.cpp), since rows
/// change with the rate only once their loads bound them.
[[nodiscard]] inline model_params with_best_l2(const chip& c, const std::vector<measured_op>& data,
                                               model_params p, evaluation_counter& counted) {
    counted();
    double best = mean_abs_log_error(c, data, p);  // the value it has competes too
    double best_l2 = p.l2_efficiency;
    for (int i = -8; i <= 4; ++i) {
        p.l2_efficiency = std::exp2(i / 4.0);
        counted();
        if (const double e = mean_abs_log_error(c, data, p); e < best) {
            best = e;
            best_l2 = p.l2_efficiency;
        }
    }
    p.l2_efficiency = best_l2;
    return p;
}

/// The coordinates of param_space that stage 1 searches. Engines with no rows keep their start
/// values. overlap and misaligned_efficiency stay as given: on profile rows they trade off
/// against the efficiencies (a fit that lowers overlap to explain memory-bound vector ops spoils
/// the GEMMs, whose compute and memory times are close), and a profile row does not say whether
/// its moves were aligned. The first-run cost is searched only when some rows are first runs,
/// the L2 efficiency only when the rows inform it (`fit_l2`: l2_rows), the HBM mix cost
/// likewise (`fit_mix`: mix_rows).
[[nodiscard]] inline std::array<bool, param_space::size> searched_coordinates(const engines_seen& s,
                                                                              bool fit_vector,
                                                                              bool fit_l2,
                                                                              bool fit_mix) {
    return {s.cube,                  // cube head: launch
            s.cube,                  //   and per core
            s.vector,                // vector head: launch
            s.vector,                //   and per core
            s.aicpu,                 // AI CPU launch
            s.cube,                  // cube efficiency
            s.vector && fit_vector,  // vector efficiency
            s.cube || s.vector,      // HBM efficiency
            false,                   // overlap
            false,                   // misaligned efficiency
            s.first_run,             // first-run cost: launch
            s.first_run,             //   and per core
            fit_l2,                  // L2 efficiency
            fit_mix};                // HBM mix cost
}

/// Stage 1: the shared parameters that minimise the mean |log error| on `data` (the rows with
/// the current per-type terms), searched from `from` with Nelder-Mead over the `free`
/// coordinates, `budget` evaluations in all, restarted `restarts` times from the best point.
/// What was not searched is `start`'s: an engine without rows keeps the start's head (not the
/// chip default made explicit), and so does the first-run cost (not the search's start point).
[[nodiscard]] inline model_params fit_shared(const chip& c, const std::vector<measured_op>& data,
                                             const model_params& from, const model_params& start,
                                             const engines_seen& seen,
                                             const std::array<bool, param_space::size>& free,
                                             int restarts, int budget,
                                             evaluation_counter& counted) {
    const param_space sp{c};
    const auto f = [&](const param_space::vec& v) {
        counted();
        return mean_abs_log_error(c, data, param_space::decode(v, from));
    };
    const auto best = ::perfcast::detail::nelder_mead(f, sp.encode(from), free,
                                                      {.budget = budget, .restarts = restarts});
    model_params out = param_space::decode(best.point, from);
    if (!seen.cube) out.head[0] = start.head[0];
    if (!seen.vector) out.head[1] = start.head[1];
    if (!seen.aicpu) out.head[2] = start.head[2];
    if (!seen.first_run) {
        out.first_run_launch = start.first_run_launch;
        out.first_run_per_core = start.first_run_per_core;
    }
    return out;
}

/// The terms stage 2 gives one op type: the log of its work factor (0: none) and its fixed time,
/// added once (op::extra_head) or, `per_core`, per core held (op::extra_per_core); `objective`:
/// the search's value at them (the penalised sum below).
struct type_terms {
    double log_factor = 0;
    std::optional<duration> fixed;
    bool per_core = false;
    double objective = 0;
};

/// Stage 2 for one vector / AI CPU op type (its rows `idx` of `rows`): a work factor f in
/// [1/max_work_factor, max_work_factor] and a fixed time d in [0, its fastest row], searched on
/// log f and u = log(1 + d / 1 us), kept only when they beat neither. The objective adds
/// rows x (factor_penalty x |log f| + fixed_penalty x u) to the type's sum of
/// |log(pred / meas)|: a fixed time has to buy more log error than a factor does, so it is
/// fitted where the rows show one (small and large rows off by the same time, as the 910B1's
/// ApplyAdamW of 4 Ki and 75 Mi elements are), and a factor the rows cannot pin down stays near 1
/// (docs/calibration.md). `per_core`: the fixed time is per core held instead, d / b_min a core
/// for the type's fewest cores b_min (so that d is what it adds to that row, as the penalty
/// reads it).
[[nodiscard]] inline type_terms fit_type(const chip& c, const std::vector<measured_op>& rows,
                                         const std::vector<std::size_t>& idx,
                                         const model_params& fitted, const calibration_options& opt,
                                         evaluation_counter& counted, bool per_core = false) {
    double fastest = rows[idx.front()].measured.in(units::us);
    int fewest_cores = rows[idx.front()].cores;
    for (std::size_t i : idx) {
        fastest = std::min(fastest, rows[i].measured.in(units::us));
        fewest_cores = std::min(fewest_cores, rows[i].cores);
    }
    const double per = per_core ? 1.0 / std::max(fewest_cores, 1) : 1.0;
    const auto g = [&](double logf, double u) {
        counted();
        double sum = 0;
        for (std::size_t i : idx) {
            op o = with_work(rows[i].o, std::exp(logf));
            (per_core ? o.extra_per_core : o.extra_head) +=
                duration{std::expm1(u) * per, units::us};
            sum += std::abs(
                std::log(cost(c, o, core_count{rows[i].cores}, fitted).latency / rows[i].measured));
        }
        return sum + static_cast<double>(idx.size()) *
                         (opt.factor_penalty * std::abs(logf) + opt.fixed_penalty * u);
    };
    // The objective is not jointly unimodal (a factor can fit the small rows' fixed costs at the
    // price of the large ones), so the best factor is found on a grid of fixed times first, then
    // refined by alternating searches.
    const double max_u = opt.fit_fixed_time ? std::log1p(fastest) : 0.0;
    const double max_logf = std::log(opt.max_work_factor);
    const auto best_factor = [&](double at_u) {
        return ::perfcast::detail::golden_section([&](double x) { return g(x, at_u); }, -max_logf,
                                                  max_logf);
    };
    double u = 0;
    double logf = best_factor(0.0);
    double best = g(logf, u);
    constexpr int grid = 8;  // fixed times tried: 0 and 7 steps up to the fastest row's time
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
        const double ru = ::perfcast::detail::golden_section(
            [&](double x) { return g(logf, x); }, std::max(0.0, u - max_u / (grid - 1)),
            std::min(max_u, u + max_u / (grid - 1)));
        const double rf = best_factor(ru);
        if (const double v = g(rf, ru); v < best) {  // refined only when better
            best = v;
            u = ru;
            logf = rf;
        }
    }
    // Kept only when it beats none. Below 1e-6 in log f or 1e-3 us (the searches' resolution, an
    // assumption) a factor or time is none.
    type_terms out;
    out.per_core = per_core;
    const double none = g(0.0, 0.0);
    out.objective = std::min(best, none);
    if (best < none) {
        if (std::abs(logf) > 1e-6) out.log_factor = logf;
        if (std::expm1(u) >= 1e-3) out.fixed = duration{std::expm1(u) * per, units::us};
    }
    return out;
}

/// Whether `idx`'s rows (of `rows`) ran on more than one core count: only then can a time per
/// core held differ from a fixed time. (Requiring three counts, so that two groups of rows that
/// differ in size too cannot pass for a time per core, scored worse: docs/validation.md, "A
/// time per core held".)
[[nodiscard]] inline bool several_core_counts(const std::vector<measured_op>& rows,
                                              const std::vector<std::size_t>& idx) {
    return std::any_of(idx.begin(), idx.end(),
                       [&](std::size_t i) { return rows[i].cores != rows[idx.front()].cores; });
}

/// The rows of each vector / AI CPU op type (indices into `rows`), by type name.
using rows_by_type = std::map<std::string, std::vector<std::size_t>, std::less<>>;

[[nodiscard]] inline rows_by_type per_type_rows(const std::vector<measured_op>& rows) {
    rows_by_type out;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].o.eng != engine::cube) out[rows[i].type].push_back(i);
    return out;
}

/// The factor g that minimizes the mean of |g / f - 1| over the factors f = exp(log_factors):
/// the percentage error of a type whose time follows its factor, priced at g instead of its
/// own f. That is the median of the factors weighted by 1 / f (a factor above the truth costs
/// more percentage error than one below it by the same ratio): the smallest factor at which the
/// weights reach half their sum, or, where they reach exactly half between two factors, the
/// geometric mean of the two (any g between them is as good). 1 for no factors.
[[nodiscard]] inline double least_relative_error_factor(std::vector<double> log_factors) {
    if (log_factors.empty()) return 1.0;
    std::sort(log_factors.begin(), log_factors.end());
    double total = 0;
    for (const double l : log_factors) total += std::exp(-l);
    double below = 0;
    for (std::size_t i = 0; i < log_factors.size(); ++i) {
        below += std::exp(-log_factors[i]);
        // Relative tolerance: a sum that equals half up to rounding is the tie between two.
        if (std::abs(below - 0.5 * total) <= 1e-12 * total && i + 1 < log_factors.size())
            return std::exp(0.5 * (log_factors[i] + log_factors[i + 1]));
        if (below >= 0.5 * total) return std::exp(log_factors[i]);
    }
    return std::exp(log_factors.back());
}

/// The key of the terms fitted on `idx`'s rows (of `rows`) of type `type`: their pattern's
/// (measured_op::pattern_key) where the rows are all of one input pattern, else the type. One
/// pattern does not tell how the type's other kernels run (calibration, ops.hpp); rows of
/// several give terms that held across them.
[[nodiscard]] inline std::string terms_key(const std::vector<measured_op>& rows,
                                           const std::vector<std::size_t>& idx,
                                           const std::string& type) {
    const std::string& first = rows[idx.front()].pattern_key;
    const bool one_pattern =
        !first.empty() && std::all_of(idx.begin(), idx.end(),
                                      [&](std::size_t i) { return rows[i].pattern_key == first; });
    return one_pattern ? first : type;
}

/// Stage 2: the per-type terms under the shared parameters `fitted`, for every type with at least
/// `min_rows_per_type` rows: its time beyond the factor fitted both as a fixed time and, where
/// its rows ran on several core counts, as a time per core held, the form with the lower
/// penalised error kept (a tie: the fixed time), under the type's key or, where its rows are
/// all of one input pattern, that pattern's (terms_key); a heavy type the rows lack (or have one
/// row of, or show in one pattern only, for its other patterns) gets the factor of least mean
/// percentage error over the heavy types they show (least_relative_error_factor). `params` of the
/// result is left to the caller.
[[nodiscard]] inline calibration fit_type_terms(const chip& c, const std::vector<measured_op>& rows,
                                                const rows_by_type& by_type,
                                                const model_params& fitted,
                                                const calibration_options& opt,
                                                evaluation_counter& counted) {
    calibration out;
    std::vector<double> heavy;  // log factors of the heavy types fitted (0: none kept)
    for (const auto& [type, idx] : by_type) {
        if (idx.size() < static_cast<std::size_t>(opt.min_rows_per_type)) continue;
        type_terms terms = fit_type(c, rows, idx, fitted, opt, counted);
        if (opt.fit_fixed_time && several_core_counts(rows, idx)) {
            type_terms per_core = fit_type(c, rows, idx, fitted, opt, counted, true);
            if (per_core.objective < terms.objective) terms = per_core;
        }
        const std::string key = terms_key(rows, idx, type);
        if (terms.fixed) (terms.per_core ? out.per_core_time : out.fixed_time)[key] = *terms.fixed;
        const bool heavy_type = opt.fit_unseen_heavy_factor && is_heavy_type(type);
        // A heavy type fitted at none keeps 1 explicitly: without an entry it would take the
        // unseen heavy types' factor.
        if (terms.log_factor != 0 || heavy_type) out.work_factor[key] = std::exp(terms.log_factor);
        // A type whose rows fixed no factor (kept at 1: they do not tell one) says nothing
        // about what the others need.
        if (heavy_type && terms.log_factor != 0) heavy.push_back(terms.log_factor);
    }
    // The traits table's operation counts are the assumption the factors correct, and on one
    // chip its kernels miss them alike (docs/calibration.md).
    if (heavy.size() >= 2)  // a median of one type would be that type's own factor
        out.unseen_heavy_factor = least_relative_error_factor(heavy);
    return out;
}

/// `rows` with `cal`'s per-type terms applied: what stage 1 fits the shared parameters on.
[[nodiscard]] inline std::vector<measured_op> scaled_by(const std::vector<measured_op>& rows,
                                                        const calibration& cal) {
    std::vector<measured_op> out = rows;
    for (measured_op& m : out) m.o = cal.applied(m.o, m.type, m.pattern_key);
    return out;
}

/// One calibration with the vector efficiency fitted (`fit_vector`) or kept: stage 1 on the rows
/// with the current per-type terms, then stage 2 under the new shared parameters, `rounds` times,
/// each stage 1 with an equal share of `max_evaluations`; then, when the rows inform the L2 rate
/// (l2_rows), one more round that searches it too (one more share: up to (rounds + 1) / rounds
/// of `max_evaluations` in all).
[[nodiscard]] inline calibration_result calibrate_once(const chip& c,
                                                       const std::vector<measured_op>& rows,
                                                       const model_params& start,
                                                       const calibration_options& opt,
                                                       bool fit_vector) {
    const engines_seen seen = engines_of(rows);
    calibration_result res;
    res.l2_rows = l2_rows(c, rows, start);
    res.l2_efficiency_fitted =
        opt.fit_l2_efficiency &&
        res.l2_rows >= static_cast<std::size_t>(std::max(opt.min_l2_rows, 1));
    res.mix_rows = mix_rows(c, rows, start);
    res.hbm_mix_cost_fitted =
        opt.fit_hbm_mix_cost &&
        res.mix_rows >= static_cast<std::size_t>(std::max(opt.min_mix_rows, 1));
    res.rows = rows.size();
    res.vector_efficiency_fitted = seen.vector && fit_vector;
    evaluation_counter counted{opt.progress};
    res.log_error_before = mean_abs_log_error(c, rows, start);
    const rows_by_type by_type = per_type_rows(rows);
    const int rounds = opt.rounds < 1 ? 1 : opt.rounds;
    // The L2 efficiency, when the rows inform it, is freed in one more round after the others,
    // from their result (its grid start, then with the other shared parameters): searched from
    // the start, the coordinates together can settle in a worse minimum than the fit that
    // keeps it (a vector efficiency left high and the work factors at their cap: on the H100
    // with half its L2 rate, mean |log error| 0.189 against 0.149 kept). The last round starts
    // from the kept fit, and its grid and search keep the best point they see.
    const int l2_round = res.l2_efficiency_fitted ? rounds : -1;
    model_params current = start;
    for (int round = 0; round < rounds + (l2_round >= 0 ? 1 : 0); ++round) {
        const bool l2 = round == l2_round;
        const std::vector<measured_op> data = scaled_by(rows, res.fitted);
        if (l2) current = with_best_l2(c, data, current, counted);
        current = fit_shared(c, data, current, start, seen,
                             searched_coordinates(seen, fit_vector, l2, res.hbm_mix_cost_fitted),
                             opt.restarts, opt.max_evaluations / rounds, counted);
        if (!l2) current.l2_efficiency = start.l2_efficiency;  // exact: not searched
        if (!res.hbm_mix_cost_fitted) current.hbm_mix_cost = start.hbm_mix_cost;
        calibration types = fit_type_terms(c, rows, by_type, current, opt, counted);
        types.params = current;
        res.fitted = std::move(types);
    }
    res.log_error_after = mean_abs_log_error(c, scaled_by(rows, res.fitted), current);
    res.evaluations = counted.evaluations;
    res.fitted.chip = std::string(c.name.view());  // the params file's `chip`
    return res;
}

}  // namespace perfcast::profile::detail
