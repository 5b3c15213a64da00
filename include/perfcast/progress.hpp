// perfcast/progress.hpp: how far a long computation has got, for a caller that shows it.
//
//   perfcast::progress_fn show = [](const perfcast::progress_step& s) {
//       std::cerr << s.task << ": " << s.done << " of " << s.total << ' ' << s.unit << '\n';
//   };
//   auto r = perfcast::sweep(chip, model, grid, params, perfcast::rank_by::qps, show);
//
// The library never prints. Its long loops (a whatif grid, a serving sweep and its simulations,
// a calibration's fits) call the function they are given after each unit of work, and the
// caller decides what to show and how often (the perfcast command: a line on stderr at most
// every 2 s, see examples/perfcast/progress.hpp). An empty function costs one test per unit.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace perfcast {

/// One report: `done` of `total` units of `task` finished (total 0: not known in advance).
struct progress_step {
    std::string_view task;    // "costing ops", "simulating leader 3 of 8", "fit 2 of 7"
    std::uint64_t done = 0;   // units finished so far (<= total when total > 0)
    std::uint64_t total = 0;  // units in all; 0 when the task cannot tell
    std::string_view unit;    // "deployments", "requests", "evaluations"
};

/// Called after units of work; may be empty (nothing reported).
using progress_fn = std::function<void(const progress_step&)>;

namespace detail {
/// Calls `f` when it is set.
inline void report_progress(const progress_fn& f, std::string_view task, std::uint64_t done,
                            std::uint64_t total, std::string_view unit) {
    if (f) f(progress_step{task, done, total, unit});
}
}  // namespace detail

}  // namespace perfcast
