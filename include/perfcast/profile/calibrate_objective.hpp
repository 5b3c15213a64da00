// perfcast/profile/calibrate_objective.hpp: what calibration minimises, and over what.
//
// The rows: the measured ops the model can map (measured_ops). The objective: the mean absolute
// log error, mean |log(predicted / measured)| (mean_abs_log_error). Log errors weigh a 2x miss
// on a 2 us op like one on a 2 ms op, which is what a per-op error report (MAPE) asks for; the
// absolute value (not the square) keeps a few outliers (a kernel's slow first run, a collective
// stealing bandwidth) from dragging the fit away from the typical row. The search space
// (param_space): the shared parameters as a vector of logs (times) and logits (shares), so that
// every point a search tries decodes to valid parameters. The score of a finished fit on
// held-out rows: mean_ape.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
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

namespace detail {

inline double logit(double p) { return std::log(p / (1.0 - p)); }
inline double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The shared parameters as a search vector (logs of times, logits of shares), and back.
struct param_space {
    static constexpr std::size_t size = 14;
    using vec = std::array<double, size>;
    static constexpr double mix_lo = model_params::min_hbm_mix_cost;
    static constexpr double mix_hi = model_params::max_hbm_mix_cost;
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
        return {lg(hc.launch), lg(hc.per_core), lg(hv.launch), lg(hv.per_core), lg(ha.launch),
                share(p.cube_efficiency), share(p.vector_efficiency), share(p.hbm_efficiency / 2),
                share(p.overlap), share(p.misaligned_efficiency),
                // A zero first-run cost starts the search at 0.5 us + 0.02 us per core: log(0)
                // is no place to start from.
                lg(p.first_run_launch > duration{} ? p.first_run_launch : duration{0.5, units::us}),
                lg(p.first_run_per_core > duration{} ? p.first_run_per_core
                                                     : duration{0.02, units::us}),
                share(p.l2_efficiency / 2), share((p.hbm_mix_cost - mix_lo) / (mix_hi - mix_lo))};
    }

    [[nodiscard]] static model_params decode(const vec& v, model_params base) {
        const auto us = [](double x) { return duration{std::exp(x), units::us}; };
        base.head[0] = {true, us(v[0]), us(v[1])};
        base.head[1] = {true, us(v[2]), us(v[3])};
        base.head[2] = {true, us(v[4]), duration{}};
        // Efficiencies no lower than validate() accepts (model_params::min_efficiency).
        const auto eff = [](double x) { return std::max(model_params::min_efficiency, x); };
        base.cube_efficiency = eff(logistic(v[5]));
        base.vector_efficiency = eff(logistic(v[6]));
        // (0, 2): validate() allows HBM efficiency up to 2, the presets' HBM figures being
        // assumptions.
        base.hbm_efficiency = eff(2 * logistic(v[7]));
        base.overlap = logistic(v[8]);
        base.misaligned_efficiency = eff(logistic(v[9]));
        base.first_run_launch = us(v[10]);
        base.first_run_per_core = us(v[11]);
        // (0, 2), as the HBM efficiency: the presets' L2 rates are assumptions but the A100's.
        base.l2_efficiency = eff(2 * logistic(v[12]));
        // Inside model_params::hbm_mix_cost's bounds.
        base.hbm_mix_cost = mix_lo + (mix_hi - mix_lo) * logistic(v[13]);
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

/// Mean absolute percentage error of `cal` on `rows`.
[[nodiscard]] inline double mean_ape(const chip& c, const std::vector<measured_op>& rows,
                                     const calibration& cal) {
    double s = 0;
    for (const measured_op& m : rows) {
        const op o = cal.applied(m.o, m.type, m.pattern_key);
        s += std::abs(
            cost(c, o, core_count{m.cores}, cal.params_for(o, m.type, m.pattern_key)).latency /
                m.measured -
            1.0);
    }
    return rows.empty() ? 0.0 : s / static_cast<double>(rows.size());
}

}  // namespace detail

}  // namespace perfcast::profile
