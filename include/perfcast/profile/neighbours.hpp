// perfcast/profile/neighbours.hpp: near-measurement interpolation. Where a profile already holds
// the same op type at neighbouring sizes, predict from those measurements, scaled by the model
// between the two shapes, and fall back to the model elsewhere.
//
// Each measured reference row r gives a point (log model time m_r, log measured / model ratio
// y_r) on its key: op type, task type and first input's dtype (the model's error is a property
// of one kernel implementation, which these name). A row q to predict, of model time m_q:
//  - the nearest reference at or below m_q and the nearest at or above it, each within a factor
//    `window` of m_q in model time, give y_q by linear interpolation in log m (one of them alone:
//    its y); references of the same model time (the same shape measured again) average theirs;
//  - the prediction is m_q x exp(y_q): the measured time of the neighbour, carried to q's shape
//    by the model's own ratio m_q / m_r;
//  - no reference within the window: the model's m_q.
// Where the model's error is smooth in size, a neighbour's residual is a better guess than none;
// the window bounds how far it is trusted. It helps where the rows have measured neighbours (the
// A100 token sweep 13.6 -> 11.8 % MAPE, another rank of the same run 74.3 -> 54.2 %) and hurts
// where they do not (the 910B1 group hold-out, whose held-out shapes are never measured: 13.1 ->
// 14.6 %), so `validate` uses it only when asked (--interpolate; docs/validation.md,
// "Near-measurement interpolation").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "../error.hpp"
#include "calibrate.hpp"
#include "kernel_details.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// Within this factor of a query's model time a measured neighbour is used: 4x, an assumption
/// chosen among 1.5, 2, 4 and 8 on the A100 split and seeds 1-8 of the 910B1 hold-out (4 and 8
/// tie on the A100); `validate --near-window R` sets it.
inline constexpr double default_near_window = 4.0;

/// Where a prediction came from.
enum class estimate_source {
    model,           // no measured neighbour within the window
    one_neighbour,   // one neighbour's measured / model ratio
    two_neighbours,  // interpolated between the neighbours below and above
};

struct near_estimate {
    duration predicted{};
    estimate_source source = estimate_source::model;
};

/// The measured references of one profile, by key, for near-measurement interpolation.
class measured_neighbours {
public:
    /// The rows of `refs` the model can predict (with `cal`), as references; `window` >= 1.
    measured_neighbours(const chip& c, const std::vector<kernel_row>& refs, const calibration& cal,
                        double window = default_near_window)
        : log_window_(std::log(window)) {
        PERFCAST_EXPECTS(window >= 1 && std::isfinite(window), "measured_neighbours", "window",
                         window, "a factor >= 1 of model time");
        for (const kernel_row& r : refs) {
            const auto m = measured_op_of(c, r, cal);
            if (!m) continue;
            const double model_us =
                cost(c, m->o, core_count{m->cores}, cal.params_for(m->o, m->type, m->pattern_key))
                    .latency.in(units::us);
            const double measured_us = m->measured.in(units::us);
            if (!(model_us > 0) || !(measured_us > 0)) continue;
            points_[key_of(r)].push_back({std::log(model_us), std::log(measured_us / model_us)});
        }
        for (auto& [key, pts] : points_) merge_equal(pts);
    }

    /// Row `r`, whose model time is `model_time`, predicted from its neighbours.
    [[nodiscard]] near_estimate estimate(const kernel_row& r, duration model_time) const {
        near_estimate out{model_time, estimate_source::model};
        const double us = model_time.in(units::us);
        const auto it = points_.find(key_of(r));
        if (it == points_.end() || !(us > 0)) return out;
        const std::vector<point>& pts = it->second;
        const double x = std::log(us);
        // First point with x' >= x: the neighbour above; the one before it: below.
        const auto above = std::lower_bound(pts.begin(), pts.end(), x,
                                            [](const point& p, double v) { return p.x < v; });
        const point* hi = above != pts.end() && above->x - x <= log_window_ ? &*above : nullptr;
        const point* lo = above != pts.begin() && x - std::prev(above)->x <= log_window_
                              ? &*std::prev(above)
                              : nullptr;
        if (hi != nullptr && hi->x == x) lo = nullptr;  // the same model time: that point alone
        double y = 0;
        if (lo != nullptr && hi != nullptr) {
            const double t = (x - lo->x) / (hi->x - lo->x);
            y = lo->y + t * (hi->y - lo->y);
            out.source = estimate_source::two_neighbours;
        } else if (lo != nullptr || hi != nullptr) {
            y = (lo != nullptr ? lo : hi)->y;
            out.source = estimate_source::one_neighbour;
        } else {
            return out;
        }
        out.predicted = model_time * std::exp(y);
        return out;
    }

    /// References kept (rows the model could predict).
    [[nodiscard]] std::size_t size() const noexcept {
        std::size_t n = 0;
        for (const auto& [key, pts] : points_) n += pts.size();
        return n;
    }

private:
    struct point {
        double x;  // log model time (us)
        double y;  // log measured / model
    };

    [[nodiscard]] static std::string key_of(const kernel_row& r) {
        std::string k = r.op_type;
        k += '\x1f';
        k += r.task_text;
        k += '\x1f';
        if (!r.input_types.empty()) k += r.input_types.front().text;
        return k;
    }

    /// Sorted by x; points of the same x (the same shape measured again) become their mean.
    static void merge_equal(std::vector<point>& pts) {
        std::sort(pts.begin(), pts.end(), [](const point& a, const point& b) { return a.x < b.x; });
        std::vector<point> out;
        for (std::size_t i = 0; i < pts.size();) {
            std::size_t j = i;
            double sum = 0;
            while (j < pts.size() && pts[j].x == pts[i].x) sum += pts[j++].y;
            out.push_back({pts[i].x, sum / static_cast<double>(j - i)});
            i = j;
        }
        pts = std::move(out);
    }

    double log_window_;
    std::map<std::string, std::vector<point>> points_;
};

}  // namespace perfcast::profile
