// perfcast/deployment.hpp: measured deployments end to end: evaluate one, fit the runtime path
// (and optionally the device-time efficiencies) to measured rows, score held-out rows.
//
// A deployment is a model on a chip with `instances` instances per card, each limited to `split`
// cores, at one batch size, with a runtime path (runtime.hpp: a preset and settings). Its
// measurements are what a stress test prints: throughput (samples/s, the closed loop's rate) and
// the mean latency of the window the harness times (runtime_path::window). card.hpp predicts
// both: card_result::throughput and card_result::avg_window.
//
// The fit (fit_deployments) is Levenberg-Marquardt on the logs: it minimises
//   sum over rows and measured figures of log(predicted / measured)^2
// over the logs of the chosen knobs (each a runtime-path time, or a device efficiency), so every
// figure weighs by its relative error and every knob stays positive. Before it returns a number
// it checks that the rows can tell: a knob that moves no prediction (the rows never exercise it)
// or two knobs that move every prediction in the same proportion are reported as unidentified,
// never fitted. docs/runtime.md says how to choose the knobs and rows.
//
// Past 500 lines on purpose: evaluating, fitting and scoring measured deployments share the knob
// table and the residuals; each part is under 250 lines.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "card.hpp"
#include "counts.hpp"
#include "device_memory.hpp"
#include "error.hpp"
#include "graph.hpp"
#include "profile/ops.hpp"
#include "runtime.hpp"
#include "units.hpp"

namespace perfcast {

/// One deployment and what was measured on it.
struct deployment_case {
    chip c{};
    std::shared_ptr<const model> m;   // shared by the rows that name the same model file
    stream_count instances{1};
    core_split split{};               // per instance
    batch_size batch{1};
    std::string runtime;              // preset name; empty: the model's, else none
    std::vector<runtime_setting> settings;  // the row's own options, applied last
    int host_threads = 0;             // 0: one per instance
    int chips = 1;                    // chips on the card, the instances spread over them
                                      // (card_params::chips)
    std::optional<double> samples_per_s;    // measured throughput
    std::optional<duration> latency;        // measured mean latency of the timed window
    std::optional<duration> p99;            // measured, read and reported; not predicted
    std::string origin;               // "rows.csv:7", prefixes errors
    std::string label;                // free text from the row
};

/// What the model says of one case.
struct deployment_prediction {
    double samples_per_s = 0;
    duration latency{};  // the window's mean (card_result::avg_window)
    duration cycle{};
    card_result card{};
};

/// The runtime path a case runs under `cal`: preset, the model's settings, cal.runtime, then
/// the row's own settings.
[[nodiscard]] inline std::optional<runtime_path> runtime_of(const deployment_case& d,
                                                            const profile::calibration& cal) {
    const std::string preset = runtime_preset_of(d.m.get(), d.runtime);
    static const std::vector<runtime_setting> none;
    const std::vector<runtime_setting>& from_model =
        d.m && d.m->runtime ? d.m->runtime->settings : none;
    try {
        return resolve_runtime(preset, {from_model, cal.runtime, d.settings});
    } catch (const error& e) {
        if (d.origin.empty()) throw;
        throw error(d.origin + ": " + e.what());
    }
}

namespace detail {
/// A case's measured figures are what a fit and a score divide by and take logs of: each one
/// given is finite and > 0 (io/deployments_file.hpp refuses others in a file; code may build
/// any). The error names the case's origin (its row), else its index.
inline void check_measured(const deployment_case& d, std::size_t index) {
    const std::string who =
        "deployment case " + (d.origin.empty() ? "#" + std::to_string(index + 1) : d.origin);
    if (d.samples_per_s) {
        PERFCAST_EXPECTS(std::isfinite(*d.samples_per_s) && *d.samples_per_s > 0, who,
                         "samples_per_s", *d.samples_per_s,
                         "a measured throughput in samples/s, finite and > 0 (or none)");
    }
    for (const auto& [name, t] : {std::pair{"latency", d.latency}, std::pair{"p99", d.p99}}) {
        if (!t) continue;
        PERFCAST_EXPECTS(std::isfinite(t->in(units::us)) && t->in(units::us) > 0, who, name,
                         t->in(units::us), "a measured time in us, finite and > 0 (or none)");
    }
}
/// check_measured for every case, named by its place in `cases` (before a validation fits on a
/// subset, whose places differ).
inline void check_all_measured(std::span<const deployment_case> cases) {
    for (std::size_t i = 0; i < cases.size(); ++i) check_measured(cases[i], i);
}
}  // namespace detail

/// How far past the closed-loop bound a measured throughput may lie before
/// implausible_measurements says so: printed figures are rounded (the DLRM rows of
/// tests/data/deployments write 0.135 ms as 0.14, which puts them up to 1.036x past the bound).
inline constexpr double closed_loop_slack = 1.1;

/// What is implausible in a case's measured figures, a sentence each (empty: nothing), for a
/// caller to warn of; the figures are still used. The model's harness is a closed loop, each
/// instance running one task at a time, so by Little's law it delivers instances x batch /
/// (mean cycle) samples/s, and the timed window lasts no longer than the cycle: a throughput past
/// instances x batch / latency (by more than closed_loop_slack) means a latency in the wrong unit
/// or several tasks in flight per instance. A P99 below the mean needs fewer than 1 % of tasks
/// far slower than all the rest: more often the two figures are swapped or in other units.
[[nodiscard]] inline std::vector<std::string> implausible_measurements(const deployment_case& d) {
    std::vector<std::string> out;
    using detail::significant_text;
    if (d.samples_per_s && d.latency && d.latency->in(units::s) > 0) {
        const double bound = static_cast<double>(d.instances.value) *
                             static_cast<double>(d.batch.value) / d.latency->in(units::s);
        if (*d.samples_per_s > closed_loop_slack * bound) {
            out.push_back("samples_per_s " + significant_text(*d.samples_per_s, 6) + " is " +
                          significant_text(*d.samples_per_s / bound, 3) + "x what " +
                          std::to_string(d.instances.value) + " closed loop(s) of batch " +
                          std::to_string(d.batch.value) + " deliver at latency " +
                          significant_text(d.latency->in(units::ms), 6) +
                          " ms (instances x batch / latency = " + significant_text(bound, 6) +
                          "/s): a latency in the wrong unit, or several tasks in flight per "
                          "instance (the model runs one)");
        }
    }
    if (d.p99 && d.latency && *d.p99 < *d.latency) {
        out.push_back("p99 " + significant_text(d.p99->in(units::ms), 6) +
                      " ms is below the mean latency " +
                      significant_text(d.latency->in(units::ms), 6) +
                      " ms: possible only with under 1 % of tasks far slower than the rest; "
                      "swapped columns or another unit?");
    }
    return out;
}

/// Predicts one case under the calibration `cal`, its instances holding the card's memory as
/// `rule` says (shared weights are one copy in L2's working set: card.hpp).
[[nodiscard]] inline deployment_prediction predict(const deployment_case& d,
                                                   const profile::calibration& cal = {},
                                                   const memory_rule& rule = {}) {
    PERFCAST_EXPECTS(d.m != nullptr, "predict(deployment_case)", "model", 0.0, "a model");
    card_params p;
    p.graph.model = cal.params;
    p.memory = rule;
    p.host_threads = d.host_threads;
    p.chips = d.chips;
    p.runtime = runtime_of(d, cal);
    deployment_prediction out;
    out.card = evaluate_card(d.c, d.m->view(), d.batch, d.instances, d.split, p);
    out.samples_per_s = out.card.throughput;
    out.latency = out.card.avg_window;
    out.cycle = out.card.avg_cycle;
    return out;
}

// ---------------------------------------------------------------------------------------------
// Knobs: what a fit may move.

/// One fittable parameter: a runtime-path time (runtime.hpp's keys ending in _us) or a device
/// efficiency (cost.hpp model_params).
struct deployment_knob {
    std::string_view name;
    double lo;       // valid range, in the knob's unit
    double hi;
    double typical;  // start when the current value is 0 or unset
    std::string_view unit;
    std::string_view meaning;
};

inline constexpr std::array<deployment_knob, 13> deployment_knobs{{
    {"prepare_us", 1e-3, 6e7, 10, "us", "host input preparation per task"},
    {"buffer_us", 1e-3, 6e7, 10, "us", "one device buffer allocated and freed"},
    {"copy_setup_us", 1e-3, 6e7, 8, "us", "per copy from pinned memory"},
    {"pageable_setup_us", 1e-3, 6e7, 10, "us", "added per copy from pageable memory"},
    {"launch_us", 1e-3, 6e7, 10, "us", "one launch of the sunk graph"},
    {"op_launch_us", 1e-3, 6e7, 8, "us", "host time to launch one op (launch=per-op)"},
    {"dynamic_shape_us", 1e-3, 6e7, 100, "us", "host shape inference and tiling per task"},
    {"sync_us", 1e-3, 6e7, 10, "us", "stream synchronisation"},
    {"post_us", 1e-3, 6e7, 10, "us", "host post-processing per task"},
    {"between_us", 1e-3, 6e7, 10, "us", "host work between tasks (closed loop)"},
    {"cube_efficiency", 1e-3, 1, 0.9, "", "cube pipeline efficiency (device time)"},
    {"vector_efficiency", 1e-3, 1, 0.8, "", "vector pipeline efficiency (device time)"},
    {"hbm_efficiency", 1e-3, 2, 0.8, "", "share of HBM bandwidth reached (device time)"},
}};

/// "prepare_us, buffer_us, ...": every knob's name, for help and errors.
[[nodiscard]] inline std::string deployment_knob_names() {
    std::string names;
    for (const deployment_knob& k : deployment_knobs) {
        if (!names.empty()) names += ", ";
        names += k.name;
    }
    return names;
}

[[nodiscard]] inline const deployment_knob& knob_named(std::string_view name) {
    for (const deployment_knob& k : deployment_knobs) {
        if (k.name == name) return k;
    }
    detail::precondition_failed("deployment fit", "knob", name,
                                "one of " + deployment_knob_names());
}

/// Sets knob `name` to `v` in `cal` (runtime keys as cal.runtime settings, replacing an earlier
/// one of the same key).
inline void set_knob(profile::calibration& cal, std::string_view name, double v) {
    if (name == "cube_efficiency") {
        cal.params.cube_efficiency = v;
    } else if (name == "vector_efficiency") {
        cal.params.vector_efficiency = v;
    } else if (name == "hbm_efficiency") {
        cal.params.hbm_efficiency = v;
    } else {
        const std::string text = detail::number_text(v);
        for (runtime_setting& s : cal.runtime) {
            if (s.key == name) {
                s.value = text;
                s.origin.clear();
                return;
            }
        }
        cal.runtime.push_back({std::string(name), text, ""});
    }
}

/// The knob's value in effect for case `d` under `cal` (nullopt: unset, e.g. copy setup from
/// the link).
[[nodiscard]] inline std::optional<double> knob_value(const deployment_case& d,
                                                      const profile::calibration& cal,
                                                      std::string_view name) {
    if (name == "cube_efficiency") return cal.params.cube_efficiency;
    if (name == "vector_efficiency") return cal.params.vector_efficiency;
    if (name == "hbm_efficiency") return cal.params.hbm_efficiency;
    const auto rt = runtime_of(d, cal);
    if (!rt) return std::nullopt;
    for (const runtime_key& k : runtime_keys) {
        if (k.key != name) continue;
        const std::string text = k.get(*rt);
        double v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc{} || p != text.data() + text.size()) return std::nullopt;
        return v;
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The fit.

struct deployment_fit_options {
    int max_iterations = 100;
    /// Stop when no knob's log moves by more than this in an iteration.
    double step_tolerance = 1e-7;
    /// A knob is unidentified when no row's log prediction moves by more than this per unit
    /// change of the knob's log (d log pred / d log knob): 1e-4 is a 0.01 % change of a figure
    /// for a doubling of the knob, below any measurement's noise.
    double min_sensitivity = 1e-4;
    /// Two knobs are inseparable when their sensitivity columns are this parallel (|cos|).
    double max_collinearity = 0.9999;
};

struct fitted_knob {
    std::string name;
    double start = 0;
    double value = 0;
    bool at_bound = false;  // ended on its valid range's edge
};

struct deployment_fit {
    profile::calibration cal;        // the base calibration with the knobs set
    std::vector<fitted_knob> knobs;
    double rms_log_error = 0;        // over the fitted figures: sqrt(mean(log(pred/meas)^2))
    std::size_t figures = 0;         // measured figures the fit used
    int iterations = 0;
};

namespace detail {

/// log(pred / meas) for each measured figure of each case.
inline void deployment_residuals(std::span<const deployment_case> cases,
                                 const profile::calibration& cal, std::vector<double>& out) {
    out.clear();
    for (const deployment_case& d : cases) {
        const deployment_prediction p = predict(d, cal);
        if (d.samples_per_s) out.push_back(std::log(p.samples_per_s / *d.samples_per_s));
        if (d.latency) out.push_back(std::log(p.latency.in(units::us) / d.latency->in(units::us)));
    }
}

/// Solves (A + lambda diag(A)) x = b for a small dense symmetric A (Gaussian elimination with
/// partial pivoting); false when singular.
inline bool solve_damped(std::vector<double> a, std::vector<double> b, std::size_t n,
                         double lambda, std::vector<double>& x) {
    for (std::size_t i = 0; i < n; ++i) a[i * n + i] *= 1.0 + lambda;
    for (std::size_t col = 0; col < n; ++col) {
        std::size_t piv = col;
        for (std::size_t r = col + 1; r < n; ++r) {
            if (std::abs(a[r * n + col]) > std::abs(a[piv * n + col])) piv = r;
        }
        if (!(std::abs(a[piv * n + col]) > 1e-300)) return false;
        if (piv != col) {
            for (std::size_t k = 0; k < n; ++k) std::swap(a[col * n + k], a[piv * n + k]);
            std::swap(b[col], b[piv]);
        }
        for (std::size_t r = col + 1; r < n; ++r) {
            const double f = a[r * n + col] / a[col * n + col];
            for (std::size_t k = col; k < n; ++k) a[r * n + k] -= f * a[col * n + k];
            b[r] -= f * b[col];
        }
    }
    x.assign(n, 0.0);
    for (std::size_t i = n; i-- > 0;) {
        double s = b[i];
        for (std::size_t k = i + 1; k < n; ++k) s -= a[i * n + k] * x[k];
        x[i] = s / a[i * n + i];
    }
    return true;
}

}  // namespace detail

/// Fits `knobs` (names from deployment_knobs) to the measured figures of `cases`, starting from
/// `base` (the values in effect for the first case, or the knob's typical value when that is 0
/// or unset). Errors: no cases, fewer measured figures than knobs, a knob named twice or
/// unknown, and knobs the rows cannot identify (the message names each and why).
[[nodiscard]] inline deployment_fit fit_deployments(std::span<const deployment_case> cases,
                                                    std::span<const std::string> knobs,
                                                    const profile::calibration& base = {},
                                                    const deployment_fit_options& opt = {}) {
    constexpr std::string_view where = "fit_deployments";
    PERFCAST_EXPECTS(!cases.empty(), where, "rows", 0.0, "at least one measured deployment");
    PERFCAST_EXPECTS(!knobs.empty(), where, "knobs", 0.0, "at least one knob to fit");
    std::vector<const deployment_knob*> ks;
    for (const std::string& name : knobs) {
        const deployment_knob& k = knob_named(name);
        for (const deployment_knob* other : ks) {
            if (other->name == k.name) {
                detail::precondition_failed(where, "knob", name, "each knob named once");
            }
        }
        ks.push_back(&k);
    }
    std::size_t figures = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const deployment_case& d = cases[i];
        detail::check_measured(d, i);
        figures += (d.samples_per_s ? 1U : 0U) + (d.latency ? 1U : 0U);
    }
    const std::size_t n = ks.size();
    if (figures < n) {
        detail::precondition_failed(
            where, "measured figures", static_cast<double>(figures),
            "at least one per knob (" + std::to_string(n) + " knobs): more rows, or fewer knobs");
    }

    deployment_fit fit;
    fit.cal = base;
    // Fitted for the rows' chip when they share one (calibration::chip), else for none.
    fit.cal.chip = std::string(cases.front().c.name.view());
    for (const deployment_case& d : cases)
        if (d.c.name.view() != fit.cal.chip) fit.cal.chip.clear();
    fit.figures = figures;
    std::vector<double> u(n);  // log of each knob's value
    for (std::size_t j = 0; j < n; ++j) {
        const auto v = knob_value(cases.front(), base, ks[j]->name);
        const double start = v && *v > 0 ? std::clamp(*v, ks[j]->lo, ks[j]->hi) : ks[j]->typical;
        u[j] = std::log(start);
        fit.knobs.push_back({std::string(ks[j]->name), start, start, false});
        set_knob(fit.cal, ks[j]->name, start);
    }
    // exp(log(hi)) can round past hi: the value is clamped back into the knob's range.
    auto value_at = [&](const std::vector<double>& at, std::size_t j) {
        return std::clamp(std::exp(at[j]), ks[j]->lo, ks[j]->hi);
    };
    auto apply = [&](const std::vector<double>& at) {
        profile::calibration c = fit.cal;
        for (std::size_t j = 0; j < n; ++j) set_knob(c, ks[j]->name, value_at(at, j));
        return c;
    };
    auto cost_of = [](const std::vector<double>& r) {
        double s = 0;
        for (double x : r) s += x * x;
        return s;
    };
    std::vector<double> r;
    detail::deployment_residuals(cases, apply(u), r);
    double cost = cost_of(r);
    const std::size_t m = r.size();
    std::vector<double> jac(m * n);
    std::vector<double> rj;

    auto jacobian = [&](const std::vector<double>& at, const std::vector<double>& r0) {
        for (std::size_t j = 0; j < n; ++j) {
            std::vector<double> up = at;
            const double lo = std::log(ks[j]->lo);
            const double hi = std::log(ks[j]->hi);
            double h = 1e-4 * std::max(1.0, std::abs(at[j]));
            if (up[j] + h > hi) h = -h;  // step inward at the upper bound
            up[j] = std::clamp(up[j] + h, lo, hi);
            const double step = up[j] - at[j];
            detail::deployment_residuals(cases, apply(up), rj);
            for (std::size_t i = 0; i < m; ++i) {
                jac[i * n + j] = step != 0 ? (rj[i] - r0[i]) / step : 0.0;
            }
        }
    };
    const auto at_bound = [&](std::size_t j) {
        return std::abs(u[j] - std::log(ks[j]->lo)) < 1e-9 ||
               std::abs(u[j] - std::log(ks[j]->hi)) < 1e-9;
    };
    // Identifiability: at the start and again at the solution. A knob the fit drove to an edge
    // of its range (a step cost at its 1e-3 us floor) may move nothing there: the rows said
    // "as small (large) as allowed", which the fit reports (fitted_knob::at_bound); it is not
    // judged at the solution, nor in a pair.
    auto check_identified = [&](bool at_solution) {
        const auto judged = [&](std::size_t j) { return !at_solution || !at_bound(j); };
        std::vector<std::string> problems;
        std::vector<double> norm(n, 0.0);
        for (std::size_t j = 0; j < n; ++j) {
            double mx = 0;
            for (std::size_t i = 0; i < m; ++i) {
                norm[j] += jac[i * n + j] * jac[i * n + j];
                mx = std::max(mx, std::abs(jac[i * n + j]));
            }
            norm[j] = std::sqrt(norm[j]);
            if (mx < opt.min_sensitivity && judged(j)) {
                problems.push_back(std::string(ks[j]->name) +
                                   ": no measured figure moves when it changes (the rows do not "
                                   "exercise it)");
            }
        }
        for (std::size_t a = 0; a < n; ++a) {
            for (std::size_t b = a + 1; b < n; ++b) {
                if (norm[a] == 0 || norm[b] == 0 || !judged(a) || !judged(b)) continue;
                double dot = 0;
                for (std::size_t i = 0; i < m; ++i) dot += jac[i * n + a] * jac[i * n + b];
                if (std::abs(dot) / (norm[a] * norm[b]) > opt.max_collinearity) {
                    problems.push_back(std::string(ks[a]->name) + " and " +
                                       std::string(ks[b]->name) +
                                       ": they move every measured figure in the same "
                                       "proportion (the rows cannot tell them apart; fit one)");
                }
            }
        }
        if (!problems.empty()) {
            std::string msg = "the rows cannot identify:";
            for (const std::string& p : problems) msg += "\n  " + p;
            throw error("perfcast::" + std::string(where) + ": " + msg);
        }
    };

    jacobian(u, r);
    check_identified(false);
    double lambda = 1e-3;
    for (fit.iterations = 0; fit.iterations < opt.max_iterations; ++fit.iterations) {
        std::vector<double> a(n * n, 0.0);
        std::vector<double> g(n, 0.0);
        for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
                g[j] -= jac[i * n + j] * r[i];
                for (std::size_t k = 0; k < n; ++k) a[j * n + k] += jac[i * n + j] * jac[i * n + k];
            }
        }
        bool improved = false;
        double moved = 0;
        for (int tries = 0; tries < 30 && !improved; ++tries) {
            std::vector<double> step;
            if (!detail::solve_damped(a, g, n, lambda, step)) {
                lambda *= 10;
                continue;
            }
            std::vector<double> next = u;
            moved = 0;
            for (std::size_t j = 0; j < n; ++j) {
                next[j] = std::clamp(u[j] + step[j], std::log(ks[j]->lo), std::log(ks[j]->hi));
                moved = std::max(moved, std::abs(next[j] - u[j]));
            }
            std::vector<double> rn;
            detail::deployment_residuals(cases, apply(next), rn);
            const double cn = cost_of(rn);
            if (cn <= cost) {
                improved = true;
                u = next;
                r = rn;
                cost = cn;
                lambda = std::max(lambda / 10, 1e-12);
            } else {
                lambda *= 10;
            }
        }
        if (!improved || moved < opt.step_tolerance) break;
        jacobian(u, r);
    }
    jacobian(u, r);
    check_identified(true);
    fit.cal = apply(u);
    for (std::size_t j = 0; j < n; ++j) {
        fit.knobs[j].value = value_at(u, j);
        fit.knobs[j].at_bound = at_bound(j);
    }
    fit.rms_log_error = std::sqrt(cost / static_cast<double>(m));
    return fit;
}

// ---------------------------------------------------------------------------------------------
// Validation: fit on some rows, predict the others.

struct deployment_score {
    std::size_t row = 0;  // index into the cases
    bool trained = false; // the row was in the fit (its error is not a prediction's)
    deployment_prediction predicted{};
    std::optional<double> throughput_error;  // (pred - meas) / meas
    std::optional<double> latency_error;
};

struct deployment_validation {
    std::vector<deployment_score> rows;
    std::vector<deployment_fit> fits;  // one per hold-out (leave-one-out: one per row)
    /// Mean absolute relative error over the predicted (not trained) rows; nullopt when none
    /// has that figure.
    std::optional<double> throughput_mape;
    std::optional<double> latency_mape;
    std::size_t predicted_rows = 0;
};

namespace detail {
inline void score_row(deployment_score& s, const deployment_case& d,
                      const profile::calibration& cal) {
    check_measured(d, s.row);
    s.predicted = predict(d, cal);
    if (d.samples_per_s) {
        s.throughput_error = (s.predicted.samples_per_s - *d.samples_per_s) / *d.samples_per_s;
    }
    if (d.latency) s.latency_error = (s.predicted.latency - *d.latency) / *d.latency;
}

inline void summarise(deployment_validation& v) {
    double st = 0, sl = 0;
    std::size_t nt = 0, nl = 0;
    v.predicted_rows = 0;
    for (const deployment_score& s : v.rows) {
        if (s.trained) continue;
        ++v.predicted_rows;
        if (s.throughput_error) {
            st += std::abs(*s.throughput_error);
            ++nt;
        }
        if (s.latency_error) {
            sl += std::abs(*s.latency_error);
            ++nl;
        }
    }
    if (nt > 0) v.throughput_mape = st / static_cast<double>(nt);
    if (nl > 0) v.latency_mape = sl / static_cast<double>(nl);
}
}  // namespace detail

/// Every row predicted under `cal` as it is, nothing fitted: the uncalibrated model's error, the
/// baseline a fit is judged against.
[[nodiscard]] inline deployment_validation score_deployments(std::span<const deployment_case> cases,
                                                             const profile::calibration& cal = {}) {
    deployment_validation v;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        deployment_score s;
        s.row = i;
        detail::score_row(s, cases[i], cal);
        v.rows.push_back(s);
    }
    detail::summarise(v);
    return v;
}

/// Fits on the rows `train` (indices into `cases`) and predicts every row; the others are the
/// held-out predictions the means cover.
[[nodiscard]] inline deployment_validation
validate_deployments(std::span<const deployment_case> cases, std::span<const std::string> knobs,
                     std::span<const std::size_t> train, const profile::calibration& base = {},
                     const deployment_fit_options& opt = {}) {
    detail::check_all_measured(cases);
    std::vector<deployment_case> fit_rows;
    std::vector<bool> in_train(cases.size(), false);
    for (std::size_t i : train) {
        PERFCAST_EXPECTS(i < cases.size(), "validate_deployments", "training row",
                         static_cast<double>(i + 1),
                         "a row number in 1.." + std::to_string(cases.size()));
        if (!in_train[i]) fit_rows.push_back(cases[i]);
        in_train[i] = true;
    }
    deployment_validation v;
    v.fits.push_back(fit_deployments(fit_rows, knobs, base, opt));
    for (std::size_t i = 0; i < cases.size(); ++i) {
        deployment_score s;
        s.row = i;
        s.trained = in_train[i];
        detail::score_row(s, cases[i], v.fits.back().cal);
        v.rows.push_back(s);
    }
    detail::summarise(v);
    return v;
}

namespace detail {
/// "1 row", "12 rows".
[[nodiscard]] inline std::string rows_text(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " row" : " rows");
}

/// fit_deployments on the rows left when `held_out` ("row 7 (rows.csv:8)", "configuration
/// 'memory=pinned' (10 rows)") is held out; an error says which fold failed and on how many rows
/// it trained: a knob the whole file identifies may be one the other rows never exercise.
[[nodiscard]] inline deployment_fit fit_holding_out(std::string_view where,
                                                    const std::string& held_out,
                                                    std::span<const deployment_case> rest,
                                                    std::span<const std::string> knobs,
                                                    const profile::calibration& base,
                                                    const deployment_fit_options& opt) {
    try {
        return fit_deployments(rest, knobs, base, opt);
    } catch (const error& e) {
        throw error("perfcast::" + std::string(where) + ": holding out " + held_out +
                    ", the fit on the other " + rows_text(rest.size()) + " failed: " + e.what());
    }
}
}  // namespace detail

/// Leave-one-group-out: rows with the same `group_of(row)` (a configuration: the options, the
/// instance count, the model ...) are predicted together by a fit on every other group, so no
/// configuration is on both sides. One fit per group, in the order groups first appear.
[[nodiscard]] inline deployment_validation validate_deployments_by_group(
    std::span<const deployment_case> cases, std::span<const std::string> knobs,
    const std::function<std::string(const deployment_case&)>& group_of,
    const profile::calibration& base = {}, const deployment_fit_options& opt = {}) {
    detail::check_all_measured(cases);
    std::vector<std::string> groups;
    std::vector<std::size_t> group_index(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string g = group_of(cases[i]);
        const auto it = std::find(groups.begin(), groups.end(), g);
        group_index[i] = static_cast<std::size_t>(it - groups.begin());
        if (it == groups.end()) groups.push_back(g);
    }
    PERFCAST_EXPECTS(groups.size() >= 2, "validate_deployments_by_group", "groups",
                     static_cast<double>(groups.size()),
                     "at least 2 (every row is in one configuration: nothing to hold out)");
    deployment_validation v;
    v.rows.resize(cases.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        std::vector<deployment_case> rest;
        for (std::size_t k = 0; k < cases.size(); ++k) {
            if (group_index[k] != g) rest.push_back(cases[k]);
        }
        v.fits.push_back(detail::fit_holding_out("validate_deployments_by_group",
                                                 "configuration '" + groups[g] + "' (" +
                                                     detail::rows_text(cases.size() - rest.size()) +
                                                     ")",
                                                 rest, knobs, base, opt));
        for (std::size_t i = 0; i < cases.size(); ++i) {
            if (group_index[i] != g) continue;
            v.rows[i].row = i;
            detail::score_row(v.rows[i], cases[i], v.fits.back().cal);
        }
    }
    detail::summarise(v);
    return v;
}

/// Leave-one-out: each row predicted by a fit on all the others.
[[nodiscard]] inline deployment_validation
validate_deployments_loo(std::span<const deployment_case> cases,
                         std::span<const std::string> knobs,
                         const profile::calibration& base = {},
                         const deployment_fit_options& opt = {}) {
    detail::check_all_measured(cases);
    deployment_validation v;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        std::vector<deployment_case> rest;
        for (std::size_t k = 0; k < cases.size(); ++k) {
            if (k != i) rest.push_back(cases[k]);
        }
        v.fits.push_back(detail::fit_holding_out(
            "validate_deployments_loo",
            "row " + std::to_string(i + 1) +
                (cases[i].origin.empty() ? std::string() : " (" + cases[i].origin + ")"),
            rest, knobs, base, opt));
        deployment_score s;
        s.row = i;
        detail::score_row(s, cases[i], v.fits.back().cal);
        v.rows.push_back(s);
    }
    detail::summarise(v);
    return v;
}

}  // namespace perfcast
