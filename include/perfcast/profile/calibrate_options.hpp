// perfcast/profile/calibrate_options.hpp: what a calibration is asked (calibration_options:
// budgets, penalties, whether the vector efficiency is fitted) and what it returns
// (calibration_result). The fit itself: calibrate.hpp.
#pragma once

#include <cstddef>

#include "../progress.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// Whether calibration fits the vector efficiency. With a work factor per op type the two
/// overlap: a low vector efficiency and large factors, or the start efficiency and small ones,
/// fit the rows of the types with factors alike, and differ only on types the fit rows lack.
/// `choose` decides by cross-validation on the fit rows (docs/calibration.md).
enum class vector_efficiency_fit : unsigned char { choose, fit, keep };

/// Rows whose predicted time the L2 rate moves (detail::l2_rows) a fit needs before it fits
/// model_params::l2_efficiency; with fewer it keeps the start's. An assumption: 3 is the fewest
/// from which one outlier cannot set the rate alone.
inline constexpr int default_min_l2_rows = 3;

struct calibration_options {
    int max_evaluations = 6000;   // objective evaluations of the Nelder-Mead search
    int restarts = 2;             // restarts from the best point (escape early collapse)
    int min_rows_per_type = 2;    // rows a type needs for its own work factor and fixed time
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
    int min_l2_rows = default_min_l2_rows;
    bool fit_l2_efficiency = true;  // false: keep the start's l2_efficiency whatever the rows
    // Rows whose predicted time the HBM mix cost moves (detail::mix_rows) a fit needs before
    // it fits model_params::hbm_mix_cost; false: keep the start's whatever the rows.
    int min_mix_rows = default_min_l2_rows;
    bool fit_hbm_mix_cost = true;
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
    // Rows whose predicted time the L2 rate moves, and whether l2_efficiency was fitted (at
    // least calibration_options::min_l2_rows of them).
    std::size_t l2_rows = 0;
    bool l2_efficiency_fitted = false;
    // Rows whose predicted time the HBM mix cost moves, and whether hbm_mix_cost was fitted
    // (at least calibration_options::min_mix_rows of them).
    std::size_t mix_rows = 0;
    bool hbm_mix_cost_fitted = false;
    // Mean absolute percentage error on the held-out folds of the `choose` decision, with the
    // vector efficiency fitted and kept (0 when not chosen by cross-validation).
    double cv_error_fitted = 0;
    double cv_error_kept = 0;
};

}  // namespace perfcast::profile
