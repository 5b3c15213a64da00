// perfcast/fit.hpp: how one op's latency scales with the cores it is given, fitted from
// measurements.
//
// Model (guide §12, DESIGN "cost"): t(k) = a + c*k + W/k on k cores.
//   a  fixed time that does not shrink with cores (launch, serial part);
//   c  head cost per core held ("per-core launch overhead grows with cores");
//   W  core-time of the perfectly parallel part (work / k).
// Which terms are fitted depends on how many DIFFERENT core counts were measured:
//   1 distinct k  -> t = W/k            (pure work; repeated points at that k are averaged)
//   2 distinct k  -> t = a + W/k        (Amdahl form; see below for why not c*k + W/k or a + c*k)
//   3+ distinct k -> t = a + c*k + W/k  (all three terms)
// With two core counts any two-term model interpolates the points exactly, so the data cannot
// choose; a + W/k is the one that matches the seed's reading of its own example (guide §12:
// 100 us on 24 cores, 150 us on 12 -> W/12 - W/24 = 50 us, W = 1200 core-us, a = 50 us) and is
// monotone in k, the safer shape to extrapolate from two points. c*k needs a third core count to
// be told apart from a (on two points c*k and a trade off freely against W).
//
// Least squares on the normal equations (at most 3 x 3, Gaussian elimination with partial
// pivoting, constexpr). Weighting is relative by default (each point's residual divided by its
// measured latency), so a 1-core point of 2 ms does not drown a 24-core point of 100 us.
// Coefficients are constrained to be >= 0 by default (none of a, c, W can be negative
// physically): exact non-negative least squares by trying every subset of the form's terms and
// keeping the best feasible one, cheap for three terms. A dropped term reads as 0.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "enum_table.hpp"
#include "error.hpp"
#include "units.hpp"

namespace perfcast {

/// How residuals are weighted in a least-squares fit.
enum class fit_weighting : unsigned char {
    relative,  // minimise sum ((model - measured) / measured)^2: every point counts alike
    absolute,  // minimise sum (model - measured)^2: the slowest points dominate
};

namespace detail {

[[nodiscard]] constexpr double fit_abs(double x) noexcept { return x < 0 ? -x : x; }

[[nodiscard]] constexpr bool fit_finite(double x) noexcept {
    return x == x && x <= std::numeric_limits<double>::max() &&
           x >= -std::numeric_limits<double>::max();
}

/// sqrt for x >= 0, usable in constant expressions (Clang 14 has no constexpr std::sqrt).
/// x is first scaled by exact powers of 4 into [1, 4); Newton's method from above (r0 >= sqrt)
/// then decreases monotonically and stops when it stops decreasing (a handful of steps).
[[nodiscard]] constexpr double fit_sqrt(double x) noexcept {
    if (!(x > 0)) return 0.0;
    if (!fit_finite(x)) return x;
    double scale = 1.0;
    while (x >= 0x1p64) {
        x *= 0x1p-64;
        scale *= 0x1p32;
    }
    while (x < 0x1p-64) {
        x *= 0x1p64;
        scale *= 0x1p-32;
    }
    while (x >= 4.0) {
        x *= 0.25;
        scale *= 2.0;
    }
    while (x < 1.0) {
        x *= 4.0;
        scale *= 0.5;
    }
    double r = 0.5 * (x + 1.0);  // >= sqrt(x) (AM-GM), within a factor 1.25 for x in [1, 4)
    for (int i = 0; i < 64; ++i) {
        const double next = 0.5 * (r + x / r);
        if (!(next < r)) break;
        r = next;
    }
    return r * scale;
}

/// Solution of an n x n system (n <= N) by Gaussian elimination with partial pivoting.
template <std::size_t N>
struct fit_solution {
    std::array<double, N> x{};
    bool ok = false;
};

template <std::size_t N>
[[nodiscard]] constexpr fit_solution<N> fit_solve(std::array<std::array<double, N>, N> a,
                                                  std::array<double, N> b,
                                                  std::size_t n) noexcept {
    fit_solution<N> s;
    double scale = 0;
    for (std::size_t i = 0; i < n; ++i) scale = fit_abs(a[i][i]) > scale ? fit_abs(a[i][i]) : scale;
    if (!(scale > 0)) return s;
    for (std::size_t col = 0; col < n; ++col) {
        std::size_t piv = col;
        for (std::size_t r = col + 1; r < n; ++r) {
            if (fit_abs(a[r][col]) > fit_abs(a[piv][col])) piv = r;
        }
        // A pivot this small relative to the matrix means two basis columns coincide on the
        // data (e.g. only two distinct core counts for three terms): no unique answer.
        if (!(fit_abs(a[piv][col]) > 1e-12 * scale)) return s;
        if (piv != col) {
            std::swap(a[piv], a[col]);
            std::swap(b[piv], b[col]);
        }
        for (std::size_t r = col + 1; r < n; ++r) {
            const double f = a[r][col] / a[col][col];
            for (std::size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
            b[r] -= f * b[col];
        }
    }
    for (std::size_t i = n; i-- > 0;) {
        double v = b[i];
        for (std::size_t c = i + 1; c < n; ++c) v -= a[i][c] * s.x[c];
        s.x[i] = v / a[i][i];
    }
    s.ok = true;
    for (std::size_t i = 0; i < n; ++i) s.ok = s.ok && fit_finite(s.x[i]);
    return s;
}

/// Failure naming one element of an input array: "points[1].latency = NaN, expected ...".
/// Not constexpr: reaching it during constant evaluation is a compile error.
[[noreturn]] inline void fit_element_failed(std::string_view where, std::string_view array,
                                            std::size_t index, std::string_view member,
                                            std::string_view value,
                                            std::string_view expected) {
    std::string field(array);
    field.append("[").append(std::to_string(index)).append("]");
    if (!member.empty()) field.append(".").append(member);
    precondition_failed(where, field, value, expected);
}

[[noreturn]] inline void fit_element_failed(std::string_view where, std::string_view array,
                                            std::size_t index, std::string_view member,
                                            double value, std::string_view unit,
                                            std::string_view expected) {
    std::string v = number_text(value);
    if (fit_finite(value) && !unit.empty()) v.append(" ").append(unit);
    fit_element_failed(where, array, index, member, v, expected);
}

}  // namespace detail

/// One measurement: the op ran on `cores` cores and took `latency`.
struct core_point {
    core_count cores{};
    duration latency{};
    [[nodiscard]] friend constexpr bool operator==(const core_point&, const core_point&) = default;
};

/// Which terms of t(k) = a + c*k + W/k a fit uses.
enum class scaling_form : unsigned char {
    automatic,  // by the number of distinct core counts measured (1, 2, 3+), see the file header
    parallel,   // W/k
    amdahl,     // a + W/k
    full,       // a + c*k + W/k
};

namespace detail {
inline constexpr unsigned fit_term_fixed = 1U;     // a
inline constexpr unsigned fit_term_per_core = 2U;  // c*k
inline constexpr unsigned fit_term_work = 4U;      // W/k
}  // namespace detail

/// A form: its name in output, how many distinct core counts identify it and the terms a fit
/// solves for (automatic: all three, reduced by the data; see fit_scaling). A row of
/// scaling_forms (enum_table.hpp).
struct scaling_form_row {
    scaling_form value;
    std::string_view name;
    int distinct_cores;
    unsigned terms;
};

inline constexpr std::array<scaling_form_row, 4> scaling_forms{{
    {scaling_form::automatic, "automatic", 1,
     detail::fit_term_fixed | detail::fit_term_per_core | detail::fit_term_work},
    {scaling_form::parallel, "W/k", 1, detail::fit_term_work},
    {scaling_form::amdahl, "a + W/k", 2, detail::fit_term_fixed | detail::fit_term_work},
    {scaling_form::full, "a + c*k + W/k", 3,
     detail::fit_term_fixed | detail::fit_term_per_core | detail::fit_term_work},
}};
static_assert(covers_enum<scaling_forms>());

[[nodiscard]] constexpr std::string_view name_of(scaling_form f) noexcept {
    return name_in(scaling_forms, f);
}

/// How many distinct core counts a form needs to be identifiable.
[[nodiscard]] constexpr int required_distinct_cores(scaling_form f) noexcept {
    return scaling_forms[static_cast<std::size_t>(f)].distinct_cores;
}

/// Number of instances of k cores each that fit side by side on an engine of `engine_cores`:
/// floor(N / k). Guide §12: two 12-core instances on the A2's 24 cube cores.
[[nodiscard]] constexpr int instances_side_by_side(core_count k, core_count engine_cores) {
    PERFCAST_EXPECTS(k.value >= 1, "instances_side_by_side", "k", static_cast<double>(k.value),
                     "at least 1 core");
    PERFCAST_EXPECTS(engine_cores.value >= k.value, "instances_side_by_side", "engine_cores",
                     static_cast<double>(engine_cores.value),
                     "at least k cores (an instance cannot hold more cores than the engine has)");
    return engine_cores.value / k.value;
}

/// A fitted (or hand-written) core-scaling law t(k) = fixed + per_core*k + work/k.
/// `work` is a core-time (cores x time: 1200 core-us reads `work.in(units::us) == 1200`), kept
/// as a `duration` like `op_cost::core_time` in cost.hpp.
struct core_scaling {
    duration fixed{};     // a
    duration per_core{};  // c: added latency per core held
    duration work{};      // W: core-time of the parallel part
    scaling_form form = scaling_form::parallel;  // the form fitted (terms it dropped read 0)

    // Goodness of fit, over the points fitted (zero for a hand-written law).
    int points = 0;
    int distinct_cores = 0;
    duration rms_residual{};      // sqrt(mean((measured - fitted)^2))
    duration max_abs_residual{};  // max |measured - fitted|
    double max_rel_residual = 0;  // max |measured - fitted| / measured

    /// Predicted latency on k cores. A law that predicts a time <= 0 at k (possible only with
    /// unconstrained coefficients) is an error naming k.
    [[nodiscard]] constexpr duration latency(core_count k) const {
        PERFCAST_EXPECTS(k.value >= 1, "core_scaling::latency", "k",
                         static_cast<double>(k.value), "at least 1 core");
        const double kd = static_cast<double>(k.value);
        const duration t = fixed + per_core * kd + work / kd;
        PERFCAST_EXPECTS(t.in(units::s) > 0 && is_finite(t), "core_scaling::latency", "k", kd,
                         "a core count where the law predicts a latency > 0 (refit with "
                         "non-negative coefficients)");
        return t;
    }

    /// Cores x latency: the resource the op holds (guide §12: 100 us x 24 = 2400 core-us).
    [[nodiscard]] constexpr duration core_time(core_count k) const {
        return latency(k) * static_cast<double>(k.value);
    }

    /// Mean time per op when floor(N / k) instances of k cores each run side by side on an
    /// engine of N cores: latency(k) / floor(N / k). Guide §12: 150 us on 12 of 24 cores -> two
    /// at once -> 75 us per op. This is a throughput figure; each op still takes latency(k).
    [[nodiscard]] constexpr duration amortized_latency(core_count k,
                                                       core_count engine_cores) const {
        const int n = instances_side_by_side(k, engine_cores);
        return latency(k) / static_cast<double>(n);
    }

    /// measured - fitted at the point's core count.
    [[nodiscard]] constexpr duration residual(const core_point& p) const {
        return p.latency - latency(p.cores);
    }

    [[nodiscard]] friend constexpr bool operator==(const core_scaling&,
                                                   const core_scaling&) = default;
};

struct scaling_fit_options {
    scaling_form form = scaling_form::automatic;
    fit_weighting weighting = fit_weighting::relative;
    bool non_negative = true;  // constrain a, c, W >= 0 (exact NNLS over the form's terms)
};

namespace detail {

[[nodiscard]] constexpr unsigned fit_terms_of(scaling_form f) noexcept {
    return scaling_forms[static_cast<std::size_t>(f)].terms;
}

struct fit_candidate {
    std::array<double, 3> coef{};  // a [us], c [us per core], W [core-us]; unused terms 0
    double wrss = 0;               // weighted residual sum of squares
    bool ok = false;
};

/// Weighted least squares over the terms in `mask`. Columns are scaled by k_ref (the largest
/// core count) so that 1, k/k_ref and k_ref/k are all of order 1 and the normal matrix stays
/// well conditioned.
[[nodiscard]] constexpr fit_candidate fit_terms(std::span<const core_point> pts, unsigned mask,
                                                fit_weighting w, double k_ref) noexcept {
    std::array<unsigned, 3> term{};
    std::size_t n = 0;
    for (unsigned t : {fit_term_fixed, fit_term_per_core, fit_term_work}) {
        if ((mask & t) != 0U) term[n++] = t;
    }
    auto basis = [&](unsigned t, double k) {
        if (t == fit_term_fixed) return 1.0;
        if (t == fit_term_per_core) return k / k_ref;
        return k_ref / k;
    };
    std::array<std::array<double, 3>, 3> ata{};
    std::array<double, 3> aty{};
    for (const core_point& p : pts) {
        const double k = static_cast<double>(p.cores.value);
        const double y = p.latency.in(units::us);
        const double wt = w == fit_weighting::relative ? 1.0 / (y * y) : 1.0;
        for (std::size_t i = 0; i < n; ++i) {
            const double bi = basis(term[i], k);
            aty[i] += wt * bi * y;
            for (std::size_t j = 0; j < n; ++j) ata[i][j] += wt * bi * basis(term[j], k);
        }
    }
    const auto sol = fit_solve<3>(ata, aty, n);
    fit_candidate c;
    if (!sol.ok) return c;
    for (std::size_t i = 0; i < n; ++i) {
        const double v = sol.x[i];
        if (term[i] == fit_term_fixed) c.coef[0] = v;
        if (term[i] == fit_term_per_core) c.coef[1] = v / k_ref;
        if (term[i] == fit_term_work) c.coef[2] = v * k_ref;
    }
    for (const core_point& p : pts) {
        const double k = static_cast<double>(p.cores.value);
        const double y = p.latency.in(units::us);
        const double wt = w == fit_weighting::relative ? 1.0 / (y * y) : 1.0;
        const double r = y - (c.coef[0] + c.coef[1] * k + c.coef[2] / k);
        c.wrss += wt * r * r;
    }
    c.ok = true;
    return c;
}

}  // namespace detail

/// Fits t(k) = a + c*k + W/k to measured points of one op (see the file header for which terms).
/// Errors name the offending point: "points[1].latency = NaN, expected a finite value > 0".
[[nodiscard]] constexpr core_scaling fit_core_scaling(std::span<const core_point> points,
                                                      scaling_fit_options opt = {}) {
    constexpr std::string_view where = "fit_core_scaling";
    PERFCAST_EXPECTS(!points.empty(), where, "points.size()", 0.0, "at least 1 point");
    for (std::size_t i = 0; i < points.size(); ++i) {
        const core_point& p = points[i];
        if (p.cores.value < 1) {
            detail::fit_element_failed(where, "points", i, "cores",
                                       static_cast<double>(p.cores.value), "",
                                       "at least 1 core");
        }
        const double t = p.latency.in(units::us);
        if (!(t > 0) || !detail::fit_finite(t)) {
            detail::fit_element_failed(where, "points", i, "latency", t, "us",
                                       "a finite value > 0");
        }
    }
    int distinct = 0;
    int k_max = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        bool seen = false;
        for (std::size_t j = 0; j < i; ++j) seen = seen || points[j].cores == points[i].cores;
        if (!seen) ++distinct;
        k_max = points[i].cores.value > k_max ? points[i].cores.value : k_max;
    }
    scaling_form form = opt.form;
    if (form == scaling_form::automatic) {
        form = distinct >= 3   ? scaling_form::full
               : distinct == 2 ? scaling_form::amdahl
                               : scaling_form::parallel;
    }
    // Repeated core counts add no information on the shape of t(k): a form with more terms than
    // distinct core counts has a singular normal matrix.
    PERFCAST_EXPECTS(distinct >= required_distinct_cores(form), where, "points.distinct_cores",
                     static_cast<double>(distinct),
                     form == scaling_form::full
                         ? "at least 3 distinct core counts for a + c*k + W/k (repeated core "
                           "counts make the fit singular)"
                         : "at least 2 distinct core counts for a + W/k (repeated core counts "
                           "make the fit singular)");

    const unsigned full_mask = detail::fit_terms_of(form);
    const double k_ref = static_cast<double>(k_max);
    detail::fit_candidate best;
    if (!opt.non_negative) {
        best = detail::fit_terms(points, full_mask, opt.weighting, k_ref);
    } else {
        // Exact NNLS: the constrained optimum is the unconstrained optimum on its own support,
        // so the best feasible subset is it. Larger subsets first: on a tie, keep more terms.
        for (unsigned mask = full_mask; mask != 0U; mask = (mask - 1U) & full_mask) {
            const auto c = detail::fit_terms(points, mask, opt.weighting, k_ref);
            if (!c.ok || c.coef[0] < 0 || c.coef[1] < 0 || c.coef[2] < 0) continue;
            if (!best.ok || c.wrss < best.wrss * (1 - 1e-12)) best = c;
        }
    }
    PERFCAST_EXPECTS(best.ok, where, "points.distinct_cores", static_cast<double>(distinct),
                     "core counts far enough apart for a non-singular fit");

    core_scaling s;
    s.fixed = duration{best.coef[0], units::us};
    s.per_core = duration{best.coef[1], units::us};
    s.work = duration{best.coef[2], units::us};
    s.form = form;
    s.points = static_cast<int>(points.size());
    s.distinct_cores = distinct;
    double ss = 0;
    double max_abs = 0;
    double max_rel = 0;
    for (const core_point& p : points) {
        const double k = static_cast<double>(p.cores.value);
        const double y = p.latency.in(units::us);
        const double r = detail::fit_abs(y - (best.coef[0] + best.coef[1] * k + best.coef[2] / k));
        ss += r * r;
        max_abs = r > max_abs ? r : max_abs;
        max_rel = r / y > max_rel ? r / y : max_rel;
    }
    s.rms_residual = duration{detail::fit_sqrt(ss / static_cast<double>(points.size())), units::us};
    s.max_abs_residual = duration{max_abs, units::us};
    s.max_rel_residual = max_rel;
    return s;
}

}  // namespace perfcast
