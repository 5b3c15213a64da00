// perfcast/profile/validate.hpp: the model against measured rows: prediction errors by row and
// by op type (MAPE, median and P90 absolute percentage error, worst rows).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "kernel_details.hpp"
#include "ops.hpp"

namespace perfcast::profile {

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
/// op or has no positive duration. The core limit is the row's block dim (the cores it used),
/// clamped to the engine.
[[nodiscard]] inline std::optional<prediction> predict_row(const chip& c, const kernel_row& r,
                                                           const calibration& cal = {}) {
    const auto m = measured_op_of(c, r, cal);
    if (!m) return std::nullopt;
    prediction out;
    out.line = r.line;
    out.name = r.name;
    out.type = r.op_type;
    out.task = r.task_text;
    out.cores = m->cores;
    out.measured = m->measured;
    out.predicted = cost(c, m->o, core_count{m->cores}, cal.params).latency;
    out.ape = std::abs(out.predicted / out.measured - 1.0);
    return out;
}

/// Predicts every row that `keep` accepts and summarizes the errors.
template <class Filter>
[[nodiscard]] error_report evaluate(const chip& c, const std::vector<kernel_row>& rows,
                                    const calibration& cal, Filter keep) {
    error_report rep;
    std::map<std::string, std::vector<double>> by_type;
    std::vector<double> all;
    for (const kernel_row& r : rows) {
        if (!keep(r)) continue;
        auto pr = predict_row(c, r, cal);
        if (!pr) {
            ++rep.skipped;
            continue;
        }
        all.push_back(pr->ape);
        by_type[pr->type].push_back(pr->ape);
        rep.rows.push_back(std::move(*pr));
    }
    rep.overall = stats_of(all);
    for (const auto& [type, apes] : by_type) rep.by_type.push_back({type, stats_of(apes)});
    return rep;
}

[[nodiscard]] inline error_report evaluate(const chip& c, const std::vector<kernel_row>& rows,
                                           const calibration& cal = {}) {
    return evaluate(c, rows, cal, [](const kernel_row&) { return true; });
}

}  // namespace perfcast::profile
