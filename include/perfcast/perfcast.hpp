// perfcast/perfcast.hpp: the umbrella header of the constexpr model (no I/O).
//
// The runtime readers and writers are opt-in: <perfcast/profile/...> (profiler CSVs, reports,
// calibration, validation) and <perfcast/io/...> (ini, tables, CSV, JSON, SVG, Chrome trace,
// model files, parameter files).
#pragma once

// In layer order (bottom first).
// clang-format off
#include "version.hpp"
#include "error.hpp"
#include "counts.hpp"
#include "units.hpp"
#include "dtype.hpp"
#include "shape.hpp"
#include "chip.hpp"
#include "chips.hpp"
#include "link.hpp"
#include "op.hpp"
#include "cost.hpp"
#include "fit.hpp"
#include "traffic.hpp"
#include "batched_shape.hpp"
#include "node.hpp"
#include "nodes.hpp"
#include "l2_sequence.hpp"
#include "device_memory.hpp"
#include "graph.hpp"
#include "card.hpp"
#include "whatif.hpp"
#include "scenario.hpp"
#include "batching.hpp"
#include "distribution.hpp"
#include "serving.hpp"
#include "serving_sweep.hpp"
// clang-format on
