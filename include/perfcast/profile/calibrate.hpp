// perfcast/profile/calibrate.hpp: fit the model's parameters to measured rows.
//
// The parameters (per-engine head costs, the first-run cost, cube / vector / HBM efficiencies)
// are fitted by minimising the mean absolute log error, mean |log(predicted / measured)|, over
// the rows the model can map, with a Nelder-Mead search in a transformed space (logs for times,
// logits for shares) so every candidate is valid; then a work factor and a fixed time per
// vector op type (and, for heavy types the rows lack, the median heavy factor), alternating
// the two stages. Whether the vector efficiency is fitted or kept is decided by a 3-fold
// cross-validation inside the fit rows (docs/calibration.md). Rows are split into fit and
// held-out sets by whole groups (same type, same shapes), so that repeats of one op never sit
// on both sides.
//
//   annotate_context(rows, chip)                first, on every row (context.hpp): what ran
//                                               before each (its L2 inputs, write-backs, first
//                                               runs); without it the model knows none of that
//                                               (on the 910B1 profile, hold-out 0.3, seed 1:
//                                               38.8 % MAPE against 10.0 % with it)
//   split_holdout(rows, 0.3, seed)              fit and held-out rows, after the context
//   calibrate(chip, measured_ops(chip, rows))   the fit, cross-validated choice included
//
// One header a part, each including only what it needs; this one includes them all:
//   calibrate_options.hpp     calibration_options, calibration_result
//   calibrate_objective.hpp   measured_ops, the objective and the search space (param_space)
//   ../optimise.hpp           Nelder-Mead and golden-section search
//   calibrate_stages.hpp      one fit: its stages (shared parameters, per-type terms) alternated
//   holdout.hpp               split_holdout
// and, here, calibrate(): the cross-validation folds, the choice, the final fit. The folds draw
// from the one PRNG (random.hpp's splitmix64), as the hold-out split does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "../error.hpp"
#include "../progress.hpp"
#include "../random.hpp"
#include "calibrate_objective.hpp"
#include "calibrate_options.hpp"
#include "calibrate_stages.hpp"
#include "context.hpp"  // annotate_context: what callers run on the rows before a fit
#include "holdout.hpp"
#include "ops.hpp"

namespace perfcast::profile {

namespace detail {

/// The seed of the cross-validation folds: any fixed value keeps the decision the same
/// everywhere; 0 is arbitrary, not chosen on the results.
inline constexpr std::uint64_t cv_fold_seed = 0;

/// The cross-validation fold of each row: `folds` folds of whole groups (same type, bytes and
/// cores), a group's fold drawn by splitmix64 (random.hpp) from cv_fold_seed, in the order the
/// groups first appear, so the decision is the same on every platform.
[[nodiscard]] inline std::vector<int> cv_folds(const std::vector<measured_op>& rows, int folds) {
    std::map<std::string, int, std::less<>> fold_of_group;
    std::vector<int> fold(rows.size());
    std::uint64_t state = cv_fold_seed;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const measured_op& m = rows[i];
        std::string key = m.type + "|" + std::to_string(m.o.bytes_read.in(units::B)) + "|" +
                          std::to_string(m.o.bytes_written.in(units::B)) + "|" +
                          std::to_string(m.cores);
        auto it = fold_of_group.find(key);
        if (it == fold_of_group.end()) {
            const std::uint64_t draw = ::perfcast::detail::splitmix64(state);
            it = fold_of_group
                     .emplace(std::move(key),
                              static_cast<int>(draw % static_cast<std::uint64_t>(folds)))
                     .first;
        }
        fold[i] = it->second;
    }
    return fold;
}

/// At most `max_rows` of `rows` (0: all), an even stride through them: the decision needs the
/// data's shape, not every repeat of it.
[[nodiscard]] inline std::vector<measured_op> cv_sample(std::vector<measured_op> rows,
                                                        std::size_t max_rows) {
    if (max_rows == 0 || rows.size() <= max_rows) return rows;
    std::vector<measured_op> sample;
    sample.reserve(max_rows);
    for (std::size_t j = 0; j < max_rows; ++j) sample.push_back(rows[j * rows.size() / max_rows]);
    return sample;
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
    const std::vector<int> fold = detail::cv_folds(rows, opt.folds);
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
        train = detail::cv_sample(std::move(train), opt.cv_max_rows);
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

}  // namespace perfcast::profile
