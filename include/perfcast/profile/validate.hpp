// perfcast/profile/validate.hpp: the model against measured rows: prediction errors by row and
// by op type (MAPE, median and P90 absolute percentage error, worst rows), and hold-out studies
// repeated over seeds.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "calibrate.hpp"
#include "holdout.hpp"
#include "kernel_details.hpp"
#include "neighbours.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// Whether the fit rows of a calibrated score held a scored row's op type (fit_reference):
/// in a hold-out of whole groups (split_holdout), a type the fit rows lack has no factor or
/// fixed time of its own, and its rows show what the model knows of a kernel it never saw.
enum class type_in_fit : unsigned char { not_known, held, lacked };

/// One measured row and the model's prediction for it.
struct prediction {
    std::size_t line = 0;
    std::string name;
    std::string type;
    std::string task;
    int cores = 0;  // the row's block dim, clamped to the engine's cores
    duration measured{};
    duration predicted{};
    double ape = 0;  // |predicted - measured| / measured
    estimate_source source = estimate_source::model;  // the model, or measured neighbours
    double model_ape = 0;  // the model's own APE (= ape unless predicted from neighbours)
    /// The APE of its group's median measurement on this row (group_key: the same op type,
    /// input shapes and dtypes among the scored rows); 0 for a row alone in its group.
    double repeat_ape = 0;
    bool repeated = false;  // its group holds another scored row
    /// The APE of the median measurement of the same op (group_key) among other rows (the fit
    /// rows of a calibration: score_rows' `fit`); 0 with `twinned` false when they have none.
    double twin_ape = 0;
    bool twinned = false;
    bound_kind bound = bound_kind::compute;  // what bounds the model's time (op_cost::bound)
    type_in_fit fit = type_in_fit::not_known;
};

/// Error statistics of a set of predictions (shares, not percent: 0.15 = 15 %).
struct error_stats {
    std::size_t rows = 0;
    double mape = 0;
    double median_ape = 0;
    double p90_ape = 0;
    double max_ape = 0;
};

struct type_stats {
    std::string type;
    error_stats stats;
};

struct error_report {
    error_stats overall;
    std::vector<type_stats> by_type;    // ordered by type name
    std::vector<prediction> rows;       // every predicted row, file order
    std::size_t skipped = 0;            // rows the model cannot map (HCCL, conflicts, N/A)
    /// Those rows, each with why (unmapped_of), file order; score_rows fills it (a pooled
    /// hold-out study counts them only).
    std::vector<unmapped_row> unmapped;
    /// The measurement spread: every row predicted by its group's median measurement
    /// (prediction::repeat_ape), a floor no prediction of one time per op goes below.
    error_stats repeat_floor;
    std::size_t repeated_rows = 0;  // rows whose group holds another scored row
    /// The rows whose op the fit rows measured too (prediction::twinned): each predicted by
    /// the median of those measurements (`twin_floor`), and the report's own errors on the same
    /// rows (`twin_model`). Where two runs measured one op apart, a model fitted on one run
    /// does not, on average, predict the other better than the first run's measurement does.
    std::size_t twinned_rows = 0;
    error_stats twin_floor;
    error_stats twin_model;
    /// The errors by what bounds each row's model time (prediction::bound), indexed by
    /// bound_kind: where a report's error sits, in the heads (overhead) or in the bodies.
    std::array<error_stats, 3> by_bound{};
    /// With a fit reference (score_rows' `fit`): the rows whose op type the fit rows held, and
    /// those of types they lack (prediction::fit; both empty without one).
    error_stats type_held;
    error_stats type_lacked;
    [[nodiscard]] std::vector<prediction> worst(std::size_t n) const {
        std::vector<prediction> w = rows;
        std::sort(w.begin(), w.end(),
                  [](const prediction& a, const prediction& b) { return a.ape > b.ape; });
        if (w.size() > n) w.resize(n);
        return w;
    }
};

/// The p-quantile (0..1) of `v` by linear interpolation between order statistics.
[[nodiscard]] inline double quantile(std::vector<double> v, double p) {
    PERFCAST_EXPECTS(!v.empty(), "quantile", "values", 0.0, "at least one value");
    PERFCAST_EXPECTS(p >= 0 && p <= 1, "quantile", "p", p, "a share in [0, 1]");
    std::sort(v.begin(), v.end());
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = lo + 1 < v.size() ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

[[nodiscard]] inline error_stats stats_of(const std::vector<double>& apes) {
    error_stats s;
    s.rows = apes.size();
    if (apes.empty()) return s;
    double sum = 0;
    for (double a : apes) {
        sum += a;
        s.max_ape = std::max(s.max_ape, a);
    }
    s.mape = sum / static_cast<double>(apes.size());
    s.median_ape = quantile(apes, 0.5);
    s.p90_ape = quantile(apes, 0.9);
    return s;
}

/// The model's prediction for one measured row, or nothing when the row cannot be mapped to an
/// op or has no duration of at least min_measured_us. The core limit is the row's block dim (the
/// cores it used), clamped to the engine. With `near`, the row is predicted from its measured
/// neighbours where it has any (profile/neighbours.hpp).
[[nodiscard]] inline std::optional<prediction> predict_row(
    const chip& c, const kernel_row& r, const calibration& cal = {},
    const measured_neighbours* near = nullptr) {
    const auto m = measured_op_of(c, r, cal);
    if (!m) return std::nullopt;
    prediction out;
    out.line = r.line;
    out.name = r.name;
    out.type = r.op_type;
    out.task = r.task_text;
    out.cores = m->cores;
    out.measured = m->measured;
    const op_cost k =
        cost(c, m->o, core_count{m->cores}, cal.params_for(m->o, m->type, m->pattern_key));
    out.predicted = k.latency;
    out.bound = k.bound;
    out.model_ape = std::abs(out.predicted / out.measured - 1.0);
    if (near != nullptr) {
        const near_estimate e = near->estimate(r, out.predicted);
        out.predicted = e.predicted;
        out.source = e.source;
    }
    out.ape = std::abs(out.predicted / out.measured - 1.0);
    return out;
}

/// The error report of predictions already made (`skipped`: rows that could not be predicted).
[[nodiscard]] inline error_report summarize(std::vector<prediction> predictions,
                                            std::size_t skipped = 0) {
    error_report rep;
    rep.skipped = skipped;
    std::map<std::string, std::vector<double>> by_type;
    std::vector<double> all;
    std::vector<double> floor;
    std::vector<double> twin;
    std::vector<double> twin_model;
    std::array<std::vector<double>, 3> bound;
    std::vector<double> held;
    std::vector<double> lacked;
    for (const prediction& pr : predictions) {
        all.push_back(pr.ape);
        bound[static_cast<std::size_t>(pr.bound)].push_back(pr.ape);
        if (pr.fit == type_in_fit::held) held.push_back(pr.ape);
        if (pr.fit == type_in_fit::lacked) lacked.push_back(pr.ape);
        by_type[pr.type].push_back(pr.ape);
        floor.push_back(pr.repeat_ape);
        if (pr.repeated) ++rep.repeated_rows;
        if (pr.twinned) {
            twin.push_back(pr.twin_ape);
            twin_model.push_back(pr.ape);
        }
    }
    rep.rows = std::move(predictions);
    rep.overall = stats_of(all);
    rep.repeat_floor = stats_of(floor);
    rep.twinned_rows = twin.size();
    rep.twin_floor = stats_of(twin);
    rep.twin_model = stats_of(twin_model);
    for (std::size_t i = 0; i < bound.size(); ++i) rep.by_bound[i] = stats_of(bound[i]);
    rep.type_held = stats_of(held);
    rep.type_lacked = stats_of(lacked);
    for (const auto& [type, apes] : by_type) rep.by_type.push_back({type, stats_of(apes)});
    return rep;
}

/// The median measurement of each op (group_key: type, input shapes and dtypes) among `rows`,
/// from the rows with a positive finite duration: what score_rows compares a scored row with
/// when its op was measured there too (`twins`).
[[nodiscard]] inline std::map<std::string, double> median_by_op(
    const std::vector<kernel_row>& rows) {
    std::map<std::string, std::vector<double>> us;
    for (const kernel_row& r : rows) {
        if (!r.task_duration || !is_finite(*r.task_duration)) continue;
        const double t = r.task_duration->in(units::us);
        if (t >= min_measured_us) us[group_key(r)].push_back(t);
    }
    std::map<std::string, double> out;
    for (auto& [key, v] : us) out.emplace(key, quantile(std::move(v), 0.5));
    return out;
}

/// What a calibration's fit rows measured, for scoring other rows against (score_rows):
/// the median measurement of each op (median_by_op) and the op types of the rows the model maps
/// on chip `c` (measured_op_of: the rows a calibration fits).
struct fit_reference {
    std::map<std::string, double> op_median;
    std::set<std::string, std::less<>> types;
};

[[nodiscard]] inline fit_reference reference_of(const chip& c,
                                                const std::vector<kernel_row>& fit_rows) {
    fit_reference out{median_by_op(fit_rows), {}};
    for (const kernel_row& r : fit_rows)
        if (measured_op_of(c, r)) out.types.insert(r.op_type);
    return out;
}

/// Predicts every row that `keep` accepts and summarizes the errors (with `near`: from measured
/// neighbours where there are any; with `fit`, what the fit rows measured (reference_of): each
/// row whose op they measured is also scored against that measurement,
/// error_report::twin_floor, and each row is marked by whether they held its op type).
template <class Filter>
[[nodiscard]] error_report score_rows(const chip& c, const std::vector<kernel_row>& rows,
                                      const calibration& cal, Filter keep,
                                      const measured_neighbours* near = nullptr,
                                      const fit_reference* fit = nullptr) {
    std::vector<prediction> predictions;
    std::map<std::string, std::vector<std::size_t>> groups;  // group_key -> predictions
    std::vector<unmapped_row> unmapped;
    for (const kernel_row& r : rows) {
        if (!keep(r)) continue;
        if (auto pr = predict_row(c, r, cal, near)) {
            std::string key = group_key(r);
            if (fit != nullptr) {
                pr->fit = fit->types.contains(r.op_type) ? type_in_fit::held : type_in_fit::lacked;
                if (const auto it = fit->op_median.find(key); it != fit->op_median.end()) {
                    const double measured = pr->measured.in(units::us);
                    pr->twin_ape = std::abs(it->second / measured - 1.0);
                    pr->twinned = true;
                }
            }
            groups[std::move(key)].push_back(predictions.size());
            predictions.push_back(std::move(*pr));
        } else {
            unmapped.push_back(detail::why_unmapped(c, r));  // predict_row: measured_op_of's none
        }
    }
    for (const auto& [key, members] : groups) {
        if (members.size() < 2) continue;
        std::vector<double> us;
        for (std::size_t i : members) us.push_back(predictions[i].measured.in(units::us));
        const double median = quantile(us, 0.5);
        for (std::size_t i : members) {
            prediction& pr = predictions[i];
            const double measured = pr.measured.in(units::us);
            pr.repeat_ape = std::abs(median / measured - 1.0);
            pr.repeated = true;
        }
    }
    error_report rep = summarize(std::move(predictions), unmapped.size());
    rep.unmapped = std::move(unmapped);
    return rep;
}

/// A row filter that keeps every row.
inline constexpr auto all_rows = [](const kernel_row&) { return true; };

[[nodiscard]] inline error_report score_rows(const chip& c, const std::vector<kernel_row>& rows,
                                             const calibration& cal = {}) {
    return score_rows(c, rows, cal, all_rows);
}

/// One hold-out draw of a repeated hold-out study.
struct holdout_run {
    std::uint64_t seed = 0;
    std::size_t fit_rows = 0;          // rows the calibration used (mapped)
    bool vector_efficiency_fitted = false;
    error_stats stats;                 // on the held-out rows `keep` accepts
    error_stats repeat_floor;          // their measurement spread (error_report::repeat_floor)
};

/// A calibrate-and-score hold-out repeated over seeds: the hold-out error of one draw depends
/// on which groups it holds out (on the 910B1 profile, 10.8-20.7 % over seeds 1-48), so a claim
/// about the model's accuracy needs several.
struct holdout_study {
    double share = 0;
    std::vector<holdout_run> runs;     // by seed
    std::size_t scored_runs = 0;       // runs with at least one held-out row scored
    double mean_mape = 0;              // means over the scored runs (0 when there are none)
    double mean_median_ape = 0;
    double mean_p90_ape = 0;
    double mean_floor_mape = 0;  // means of the runs' repeat_floor
    double mean_floor_median_ape = 0;
    error_report pooled;               // every run's held-out predictions together
};

/// For each seed in [first_seed, last_seed]: split `rows` (already in context, see
/// annotate_context) by split_holdout(share, seed), calibrate on the fit side from `start`,
/// score the held-out rows `keep` accepts. A seed whose held-out side has no row `keep`
/// accepts is listed but left out of the means. `near_window` > 0: the held-out rows are
/// predicted from their measured neighbours on the fit side within that factor of model time
/// (profile/neighbours.hpp), from the model elsewhere.
template <class Filter>
[[nodiscard]] holdout_study repeated_holdout(const chip& c, const std::vector<kernel_row>& rows,
                                             double share, std::uint64_t first_seed,
                                             std::uint64_t last_seed, Filter keep,
                                             const model_params& start = {},
                                             const calibration_options& opt = {},
                                             double near_window = 0) {
    PERFCAST_EXPECTS(first_seed <= last_seed && last_seed - first_seed < 1000,
                     "repeated_holdout", "seeds",
                     static_cast<double>(last_seed) - static_cast<double>(first_seed) + 1,
                     "1 to 1000 seeds, first <= last");
    holdout_study out;
    out.share = share;
    std::vector<prediction> all;
    std::size_t skipped = 0;
    for (std::uint64_t seed = first_seed;; ++seed) {
        const holdout_split split = split_holdout(rows, share, seed);
        // Whole groups move: a large share can leave nothing to fit on (said as such, not as
        // calibrate's "rows = 0").
        PERFCAST_EXPECTS(!split.fit.empty(), "repeated_holdout", "fit rows (hold-out seed)",
                         static_cast<double>(seed),
                         "a seed that leaves rows to fit on (this one holds out every group of " +
                             std::to_string(rows.size()) + " rows): give a smaller share");
        calibration_result fit;
        try {
            fit = calibrate(c, measured_ops(c, split.fit), start, opt);
        } catch (const error& e) {
            throw error(std::string(e.what()) + " (hold-out seed " + std::to_string(seed) + ")");
        }
        std::optional<measured_neighbours> near;
        if (near_window > 0) near.emplace(c, split.fit, fit.fitted, near_window);
        const fit_reference ref = reference_of(c, split.fit);
        error_report rep =
            score_rows(c, split.test, fit.fitted, keep, near ? &*near : nullptr, &ref);
        out.runs.push_back(
            {seed, fit.rows, fit.vector_efficiency_fitted, rep.overall, rep.repeat_floor});
        if (rep.overall.rows > 0) {
            ++out.scored_runs;
            out.mean_mape += rep.overall.mape;
            out.mean_median_ape += rep.overall.median_ape;
            out.mean_p90_ape += rep.overall.p90_ape;
            out.mean_floor_mape += rep.repeat_floor.mape;
            out.mean_floor_median_ape += rep.repeat_floor.median_ape;
        }
        skipped += rep.skipped;
        all.insert(all.end(), std::make_move_iterator(rep.rows.begin()),
                   std::make_move_iterator(rep.rows.end()));
        if (seed == last_seed) break;
    }
    if (out.scored_runs > 0) {
        const auto n = static_cast<double>(out.scored_runs);
        out.mean_mape /= n;
        out.mean_median_ape /= n;
        out.mean_p90_ape /= n;
        out.mean_floor_mape /= n;
        out.mean_floor_median_ape /= n;
    }
    out.pooled = summarize(std::move(all), skipped);
    return out;
}

}  // namespace perfcast::profile
