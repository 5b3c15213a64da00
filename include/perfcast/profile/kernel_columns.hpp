// perfcast/profile/kernel_columns.hpp: the column schema of op_summary / kernel_details CSVs:
// the columns perfcast reads and every spelling of each (kernel_column_spellings), which
// profiler wrote a header (kernel_format), and the header as read (kernel_header).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../enum_table.hpp"

namespace perfcast::profile {

/// The columns the reader knows, and their spellings (msprof op_summary first, then torch_npu
/// kernel_details, then newer msprof names). Matching ignores case and surrounding blanks.
enum class kernel_column : unsigned char {
    name,
    op_type,
    task_type,
    start,
    duration,
    wait,
    block_dim,
    mix_block_dim,
    input_shapes,
    input_types,
    input_formats,
    output_shapes,
    output_types,
    output_formats,
    aic_total_cycles,
    aiv_total_cycles,
    aicore_time,
    aiv_time,
    aic_mac_ratio,
    aic_scalar_ratio,
    aic_mte1_ratio,
    aic_mte2_ratio,
    aic_fixpipe_ratio,
    aiv_vec_ratio,
    aiv_scalar_ratio,
    aiv_mte2_ratio,
    aiv_mte3_ratio,
    cube_utilization,
    device_id,
    memory_bound,
    step_id,
    hf32_eligible,
};
inline constexpr std::size_t kernel_column_count = 32;

/// The longest task time a reader accepts, in us (a day): a profile covers seconds to minutes,
/// more is a unit mistake, and sums of such rows would overflow to inf in a report. The kernel
/// tables' times, an msprof database's task and wait times and a timeline's spans are refused
/// past it.
inline constexpr double max_task_us = 86400e6;
/// The most cycles of one task a reader accepts: what 65536 cores (chip.hpp's bound) at 10 GHz
/// run in that day, 5.7e19, rounded up.
inline constexpr double max_task_cycles = 1e20;

/// The range of a share column: its largest value and what a larger one is. The real profiles
/// of tests/data reach 0.996 (aiv_mte3_ratio) and 99.3 % (cube_utilization); the slack above 1
/// and 100 (0.1 % of the range, for a figure rounded apart from the ones it divides) is an
/// assumption. More is damage: a ratio of 7.5 once drove a compute-bound finding.
struct share_range {
    double most;
    std::string_view what;  // "a share above 1"
};
/// The share_range of `c`, or nothing for a column that holds no share.
[[nodiscard]] constexpr std::optional<share_range> share_range_of(kernel_column c) noexcept {
    switch (c) {
        case kernel_column::aic_mac_ratio:
        case kernel_column::aic_scalar_ratio:
        case kernel_column::aic_mte1_ratio:
        case kernel_column::aic_mte2_ratio:
        case kernel_column::aic_fixpipe_ratio:
        case kernel_column::aiv_vec_ratio:
        case kernel_column::aiv_scalar_ratio:
        case kernel_column::aiv_mte2_ratio:
        case kernel_column::aiv_mte3_ratio: return share_range{1.001, "a share above 1"};
        case kernel_column::cube_utilization: return share_range{100.1, "a percentage above 100"};
        default: return std::nullopt;
    }
}

/// What is wrong with the value `v` of column `c`, in the unit the CSV tables write (us for
/// the times, cycles, shares and percentages), or an empty view when it is in the column's
/// range: a time past max_task_us, cycles past max_task_cycles, a share past share_range_of.
/// Both profile readers (kernel_reader.hpp, msprof_db.hpp) refuse a row with it.
[[nodiscard]] constexpr std::string_view value_problem(kernel_column c, double v) noexcept {
    switch (c) {
        case kernel_column::duration:
        case kernel_column::wait:
        case kernel_column::aicore_time:
        case kernel_column::aiv_time:
            return v > max_task_us ? "a time over a day (86400000000 us)" : std::string_view{};
        case kernel_column::aic_total_cycles:
        case kernel_column::aiv_total_cycles:
            return v > max_task_cycles
                       ? "more cycles than 65536 cores at 10 GHz run in a day (1e20)"
                       : std::string_view{};
        default: {
            const auto r = share_range_of(c);
            return r && v > r->most ? r->what : std::string_view{};
        }
    }
}

struct kernel_column_spelling {
    kernel_column column;
    std::string_view text;
};

// The older op_summary layout (CANN releases before the split cube/vector cores; Atlas
// inference cards such as the 310P keep it) writes `Task Start Time` without a unit, the AI
// core's `total_cycles`, unprefixed pipe ratios and a `memory_bound` column; its header, as
// given in the MindStudio mskpp unit test test/cases/test_statistic_info.py
// (xiaobingling93-pixel/Ascend-mskpp at 2d9507386e438244a1e3c597d6dff3a29d19cd69, Mulan PSL v2):
// Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time,Task Duration(us),Task
// Wait Time(us),Block Dim,Input Shapes,...,aicore_time(us),total_cycles,vec_time(us),vec_ratio,
// mac_time(us),mac_ratio,scalar_time(us),scalar_ratio,mte1_time(us),mte1_ratio,mte2_time(us),
// mte2_ratio,mte3_time(us),mte3_ratio,icache_miss_rate,memory_bound. Its one AI core holds the
// cube (mac) and vector units, so total_cycles and the cube-side ratios map to the aic_ fields
// and vec/mte3 to the aiv_ ones (docs/profiles.md prints this table).
inline constexpr std::array<kernel_column_spelling, 48> kernel_column_spellings{{
    {kernel_column::name, "Op Name"},
    {kernel_column::name, "Name"},
    {kernel_column::op_type, "OP Type"},
    {kernel_column::op_type, "Type"},
    {kernel_column::task_type, "Task Type"},
    {kernel_column::task_type, "Accelerator Core"},
    {kernel_column::start, "Task Start Time(us)"},
    {kernel_column::start, "Start Time(us)"},
    {kernel_column::start, "Task Start Time"},  // older op_summary: microseconds, unit unnamed
    {kernel_column::duration, "Task Duration(us)"},
    {kernel_column::duration, "Duration(us)"},
    {kernel_column::wait, "Task Wait Time(us)"},
    {kernel_column::wait, "Wait Time(us)"},
    {kernel_column::block_dim, "Block Dim"},
    {kernel_column::block_dim, "Block Num"},
    {kernel_column::mix_block_dim, "Mix Block Dim"},
    {kernel_column::mix_block_dim, "Mix Block Num"},
    {kernel_column::input_shapes, "Input Shapes"},
    {kernel_column::input_types, "Input Data Types"},
    {kernel_column::input_formats, "Input Formats"},
    {kernel_column::output_shapes, "Output Shapes"},
    {kernel_column::output_types, "Output Data Types"},
    {kernel_column::output_formats, "Output Formats"},
    {kernel_column::aic_total_cycles, "aic_total_cycles"},
    {kernel_column::aic_total_cycles, "total_cycles"},  // older op_summary
    {kernel_column::aiv_total_cycles, "aiv_total_cycles"},
    {kernel_column::aicore_time, "aicore_time(us)"},
    {kernel_column::aiv_time, "aiv_time(us)"},
    {kernel_column::aic_mac_ratio, "aic_mac_ratio"},
    {kernel_column::aic_mac_ratio, "mac_ratio"},  // older op_summary (and the rows below)
    {kernel_column::aic_scalar_ratio, "aic_scalar_ratio"},
    {kernel_column::aic_scalar_ratio, "scalar_ratio"},
    {kernel_column::aic_mte1_ratio, "aic_mte1_ratio"},
    {kernel_column::aic_mte1_ratio, "mte1_ratio"},
    {kernel_column::aic_mte2_ratio, "aic_mte2_ratio"},
    {kernel_column::aic_mte2_ratio, "mte2_ratio"},
    {kernel_column::aic_fixpipe_ratio, "aic_fixpipe_ratio"},
    {kernel_column::aiv_vec_ratio, "aiv_vec_ratio"},
    {kernel_column::aiv_vec_ratio, "vec_ratio"},
    {kernel_column::aiv_scalar_ratio, "aiv_scalar_ratio"},
    {kernel_column::aiv_mte2_ratio, "aiv_mte2_ratio"},
    {kernel_column::aiv_mte3_ratio, "aiv_mte3_ratio"},
    {kernel_column::aiv_mte3_ratio, "mte3_ratio"},
    {kernel_column::cube_utilization, "cube_utilization(%)"},
    {kernel_column::device_id, "Device_id"},
    {kernel_column::memory_bound, "memory_bound"},    // older op_summary
    {kernel_column::step_id, "Step Id"},              // torch_npu kernel_details
    {kernel_column::hf32_eligible, "HF32 Eligible"},  // torch_npu kernel_details: YES / NO
}};

/// Which profiler wrote the file, judged by the header's spellings.
enum class kernel_format : unsigned char {
    msprof_op_summary,         // "OP Type", "Task Type", "Task Duration(us)"
    torch_npu_kernel_details,  // "Type", "Accelerator Core", "Duration(us)" and a start time
    minimal,                   // kernel_details spellings without Name and start time
};

inline constexpr std::array<enum_entry<kernel_format>, 3> kernel_format_names{{
    {kernel_format::msprof_op_summary, "msprof op_summary"},
    {kernel_format::torch_npu_kernel_details, "torch_npu kernel_details"},
    {kernel_format::minimal, "minimal"},
}};
static_assert(covers_enum<kernel_format_names>());

[[nodiscard]] constexpr std::string_view name_of(kernel_format f) noexcept {
    return name_in(kernel_format_names, f);
}

/// What the header holds: the index of each known column (or nothing) and the format.
struct kernel_header {
    std::array<std::optional<std::size_t>, kernel_column_count> index{};
    std::vector<std::string> columns;   // all header names as written (trimmed)
    std::vector<std::string> not_read;  // columns perfcast does not read, in header order
    kernel_format format = kernel_format::minimal;

    [[nodiscard]] bool has(kernel_column c) const noexcept {
        return index[static_cast<std::size_t>(c)].has_value();
    }
};

}  // namespace perfcast::profile
