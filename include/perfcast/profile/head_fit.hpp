// perfcast/profile/head_fit.hpp: fit one engine's default head cost (launch + per_core x b) to
// the measured rows of several profiles, each profile weighing the same, so that the presets'
// uncalibrated figures come from measurements (issue 13 item 3, docs/validation.md "Defaults
// that hold before calibration"). examples/fit_heads.cpp runs it leave-one-profile-out.
//
// A row's latency is head + body (cost.hpp): the body does not depend on the head, so each row's
// body is computed once and the search only adds candidate heads to it. The objective is the
// mean over profiles of each profile's mean |log(predicted / measured)| on the engine's rows:
// the calibration's objective (calibrate_objective.hpp), with a small profile weighing as much as a
// large one, since the defaults must hold on a profile they have not seen, not on the average row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "../error.hpp"
#include "context.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// The rows that ran on the AI cores (AI_CORE, AI_VECTOR_CORE, MIX_AIC and MIX_AIV tasks; with
/// `with_aicpu` the AI_CPU tasks too, else AI CPU ops are left out), in their sequence context
/// for `c` (context.hpp), as measured ops: what a head fit and its checks read
/// (examples/fit_heads.cpp, tests/test_head_fit.cpp).
[[nodiscard]] inline std::vector<measured_op> core_ops(const chip& c, std::vector<kernel_row> rows,
                                                       bool with_aicpu = false) {
    annotate_context(rows, c);
    std::vector<measured_op> out;
    for (const kernel_row& r : rows) {
        const bool on_cores = r.task == task_type::ai_core || r.task == task_type::ai_vector_core ||
                              r.task == task_type::mix_aic || r.task == task_type::mix_aiv;
        const bool on_aicpu = with_aicpu && r.task == task_type::ai_cpu;
        if (!on_cores && !on_aicpu) continue;
        if (auto m = measured_op_of(c, r); m && (m->o.eng == engine::aicpu ? on_aicpu : on_cores)) {
            out.push_back(std::move(*m));
        }
    }
    return out;
}

/// One measured row reduced to what the head search needs.
struct head_row {
    double body_us = 0;      // latency without the engine's head (first-run and fixed times stay)
    double cores = 0;        // cores the op holds (b)
    double measured_us = 0;  // > 0
};

/// The rows of `rows` that run on engine `e` and whose body under `p` on chip `c` is at most
/// `max_body`, the load latency aside (the head-bound rows: on a row with a long body the error is
/// the body's, and a head fitted to it would absorb what the compute and memory terms miss).
[[nodiscard]] inline std::vector<head_row> head_rows(const chip& c,
                                                     const std::vector<measured_op>& rows, engine e,
                                                     duration max_body,
                                                     const model_params& p = {}) {
    std::vector<head_row> out;
    for (const measured_op& m : rows) {
        if (m.o.eng != e || !(m.measured.in(units::us) > 0)) continue;
        const op_cost k = cost(c, m.o, core_count{m.cores}, p);
        const duration body = k.latency - head_time(c, e, k.cores, p);
        // The load latency (chip::overhead.load_latency) is in the body the search adds to the
        // head, not in the one that picks the rows: a fit of it keeps the same rows.
        const duration wait = load_latency_of(c, m.o);
        if (body - wait > max_body) continue;
        out.push_back({body.in(units::us), static_cast<double>(k.cores), m.measured.in(units::us)});
    }
    return out;
}

/// Mean over the non-empty profiles of each one's mean |log(predicted / measured)| with the head
/// launch + per_core x b (microseconds). 0 when every profile is empty.
[[nodiscard]] inline double head_objective(const std::vector<std::vector<head_row>>& profiles,
                                           double launch_us, double per_core_us) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& rows : profiles) {
        if (rows.empty()) continue;
        double s = 0;
        for (const head_row& r : rows)
            s +=
                std::abs(std::log((launch_us + per_core_us * r.cores + r.body_us) / r.measured_us));
        sum += s / static_cast<double>(rows.size());
        ++n;
    }
    return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

/// Mean absolute percentage error (a share) of `rows` with the head launch + per_core x b.
[[nodiscard]] inline double head_mape(const std::vector<head_row>& rows, double launch_us,
                                      double per_core_us) {
    double s = 0;
    for (const head_row& r : rows)
        s += std::abs((launch_us + per_core_us * r.cores + r.body_us) / r.measured_us - 1.0);
    return rows.empty() ? 0.0 : s / static_cast<double>(rows.size());
}

/// The search box: launch on a log scale, per_core on a linear one (0 allowed: the head may
/// not grow with the cores at all; a box of 0 fits the launch alone, as the AI CPU's head is).
struct head_fit_options {
    double launch_min_us = 0.01;
    double launch_max_us = 50;
    double per_core_max_us = 0.5;
    int grid = 41;        // points per axis and pass
    int refinements = 6;  // passes, each on a box 4/grid of the last one's around its best
};

struct head_fit {
    duration launch{};
    duration per_core{};
    double objective = 0;  // head_objective at the fit
    std::size_t rows = 0;  // rows over every profile
};

/// The launch and per-core head minimising head_objective: a grid over the box, then finer
/// grids around the best point (the objective is a sum of |log| terms: not smooth, so no
/// gradient). Deterministic. Throws when no profile has a row.
[[nodiscard]] inline head_fit fit_head(const std::vector<std::vector<head_row>>& profiles,
                                       const head_fit_options& opt = {}) {
    std::size_t rows = 0;
    for (const auto& p : profiles) rows += p.size();
    PERFCAST_EXPECTS(rows > 0, "fit_head", "rows", 0.0, "at least one row on the engine");
    PERFCAST_EXPECTS(opt.grid >= 3 && opt.grid <= 10000, "fit_head", "grid",
                     static_cast<double>(opt.grid), "3 to 10000 points per axis");
    PERFCAST_EXPECTS(opt.launch_min_us > 0 && opt.launch_min_us < opt.launch_max_us, "fit_head",
                     "launch_min_us", opt.launch_min_us, "a time in (0, launch_max_us)");
    PERFCAST_EXPECTS(opt.per_core_max_us >= 0 && opt.per_core_max_us < 1e6, "fit_head",
                     "per_core_max_us", opt.per_core_max_us, "a time in [0, 1e6) us");
    double lo_l = std::log(opt.launch_min_us);
    double hi_l = std::log(opt.launch_max_us);
    double lo_c = 0;
    double hi_c = opt.per_core_max_us;
    double best_l = lo_l;
    double best_c = 0;
    double best = head_objective(profiles, std::exp(best_l), best_c);
    const auto steps = static_cast<double>(opt.grid - 1);
    for (int pass = 0; pass <= opt.refinements; ++pass) {
        for (int i = 0; i < opt.grid; ++i) {
            const double l = lo_l + (hi_l - lo_l) * i / steps;
            for (int j = 0; j < opt.grid; ++j) {
                const double pc = lo_c + (hi_c - lo_c) * j / steps;
                if (const double v = head_objective(profiles, std::exp(l), pc); v < best) {
                    best = v;
                    best_l = l;
                    best_c = pc;
                }
            }
        }
        const double wl = 2 * (hi_l - lo_l) / steps;
        const double wc = 2 * (hi_c - lo_c) / steps;
        lo_l = std::max(std::log(opt.launch_min_us), best_l - wl);
        hi_l = std::min(std::log(opt.launch_max_us), best_l + wl);
        lo_c = std::max(0.0, best_c - wc);
        hi_c = std::min(opt.per_core_max_us, best_c + wc);
    }
    return {duration{std::exp(best_l), units::us}, duration{best_c, units::us}, best, rows};
}

/// A profile of a head fit: its chip and its rows (core_ops).
struct chip_rows {
    chip c;
    std::vector<measured_op> rows;
};

/// The load latency (chip::overhead.load_latency) and the vector head fitted with it.
struct load_latency_fit {
    duration latency{};
    head_fit vector;
};

/// The load latency in [0, max], in `steps` equal steps, whose vector head fit (fit_head over
/// every profile's head_rows, with that latency on each profile's chip) has the least
/// objective; ties go to the smaller latency. What tells the latency from the launch: the
/// head-bound rows of kernels that read nothing (fills), which do not pay it; without one the two
/// trade off one for one, so it throws when no profile has a head-bound vector row that reads
/// nothing (or none at all).
[[nodiscard]] inline load_latency_fit fit_load_latency(std::vector<chip_rows> profiles,
                                                       duration max, duration max_body,
                                                       int steps = 100) {
    PERFCAST_EXPECTS(max.in(units::us) >= 0 && max.in(units::us) < 1e6, "fit_load_latency",
                     "max (us)", max.in(units::us), "a time in [0, 1e6) us");
    PERFCAST_EXPECTS(steps >= 1 && steps <= 100000, "fit_load_latency", "steps",
                     static_cast<double>(steps), "1 to 100000 steps");
    std::size_t fills = 0;
    for (const chip_rows& p : profiles) {
        std::vector<measured_op> write_only;  // the rows that do not wait for a load
        for (const measured_op& m : p.rows)
            if (!waits_for_load(m.o)) write_only.push_back(m);
        fills += head_rows(p.c, write_only, engine::vector, max_body).size();
    }
    PERFCAST_EXPECTS(fills > 0, "fit_load_latency", "head-bound vector rows that read nothing", 0.0,
                     "at least one (a fill): without one the latency trades off with the launch");
    std::optional<load_latency_fit> best;
    for (int i = 0; i <= steps; ++i) {
        const duration l = max * (static_cast<double>(i) / static_cast<double>(steps));
        std::vector<std::vector<head_row>> per_profile;
        for (chip_rows& p : profiles) {
            p.c.overhead.load_latency = l;
            per_profile.push_back(head_rows(p.c, p.rows, engine::vector, max_body));
        }
        const head_fit f = fit_head(per_profile);
        if (!best || f.objective < best->vector.objective) best = load_latency_fit{l, f};
    }
    return *best;
}

}  // namespace perfcast::profile
