// perfcast/profile/report.hpp: what a measured profile says about a chip's use (runtime).
//
// `report_builder` takes kernel rows one at a time (constant memory per row, except 16 bytes of
// each timed row kept for the gap analysis) and `finish()` returns a `profile_report`:
//   (a) utilization per engine: sum(cycles) / (span x cores x clock) (guide §2), led by the
//       span first start .. last end; the seed's own span (last start - first start) is kept
//       next to it, and a value above 100 % carries a note saying why (the seed's span leaves
//       out the last task's duration; above 100 % over the whole span the chip is not the
//       profile's);
//   (b) per-op cube utilization recomputed as msprof does: aic_total_cycles /
//       (clock x cube cores x duration) x 100 (`recomputed_cube_utilization_pct`);
//   (c) time by op type, and the top ops by duration;
//   (d) per-op bound from the pipe ratios: a ratio > 0.8 flags the pipe (guide §5);
//   (e) a host-bound signal: device idle share from the gaps between tasks, and Wait Time
//       (guide §3);
//   (f) AI_CPU ops (guide §8); (g) int64 data on vector cores (guide §7); (h) moves whose
//       innermost run is not a multiple of the 32-byte alignment (guide §5); (i) block dims that
//       leave a tail wave or idle cores (guide §12); (j) achieved bandwidth per op against HBM
//       (fills by their output alone: `write_only_types`; faster than HBM: "L2 or cache");
//   each finding with the seed's fix, each row at most once per finding. The thresholds that
//   are ours, not the seed's, are in `report_options` with their reasons.
//
// The parts: report_result.hpp (profile_report, findings, report_options),
// report_measures.hpp (what one row gives), report_builder.hpp (report_builder, build_report).
#pragma once

#include "report_builder.hpp"
#include "report_measures.hpp"
#include "report_result.hpp"
