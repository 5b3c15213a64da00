// perfcast/profile/kernel_details.hpp: op rows of msprof op_summary_*.csv and torch_npu
// kernel_details.csv (runtime; allocates; streams).
//
// Both profilers write one row per device task with the same content under two sets of column
// names; every spelling is accepted (table `kernel_column_spellings`). Only three columns are
// required: the op type (Type / OP Type), the task type (Accelerator Core / Task Type) and the
// duration (Duration(us) / Task Duration(us)). The minimal format documented in
// docs/profiles.md (Type, Accelerator Core, Duration(us), Block Dim, Input Shapes, Input Data
// Types, Output Shapes, Output Data Types) is how a measurement of any hardware can be written.
//
// Values: "N/A" and empty numeric fields are "not recorded" (an empty optional), never 0.
// A field that is neither (text, 1e400, inf, a negative duration) is a `perfcast::parse_error`
// naming the file, line, column and text. Shapes and dtypes are descriptive, so problems with
// them do not stop the reading: the row gets a `row_note` (unknown dtype, unparsable shape,
// shape/dtype count mismatch, MatMul shapes that no transpose makes agree: `shape_conflict`).
//
// The parts: kernel_row.hpp (the row), kernel_columns.hpp (column names and spellings),
// kernel_fields.hpp (shapes, dtypes, timestamps, row checks), kernel_reader.hpp (the reader).
#pragma once

#include "kernel_columns.hpp"
#include "kernel_fields.hpp"
#include "kernel_reader.hpp"
#include "kernel_row.hpp"
