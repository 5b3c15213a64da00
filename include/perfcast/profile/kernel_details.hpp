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
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../dtype.hpp"
#include "../enum_table.hpp"
#include "../error.hpp"
#include "../node.hpp"
#include "../units.hpp"
#include "csv.hpp"

namespace perfcast::profile {

/// A profiler timestamp in integer nanoseconds since the profiler's epoch. Profilers write
/// microseconds since 1970 with 3 decimals (1736413971558972.912): a double holds that only to
/// 0.25 us, too coarse for the gaps between tasks, so timestamps are integers.
struct timestamp {
    std::int64_t ns = 0;

    [[nodiscard]] constexpr double in_us() const noexcept {
        return static_cast<double>(ns) / 1000.0;
    }
    /// `a - b`: exact in integer nanoseconds, or in doubles when the difference does not fit
    /// (timestamps read from a hostile file can be that far apart).
    [[nodiscard]] friend constexpr duration operator-(timestamp a, timestamp b) noexcept {
        constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
        constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
        const bool overflows = (b.ns > 0 && a.ns < lo + b.ns) || (b.ns < 0 && a.ns > hi + b.ns);
        return duration{overflows ? static_cast<double>(a.ns) - static_cast<double>(b.ns)
                                  : static_cast<double>(a.ns - b.ns),
                        units::ns};
    }
    /// `t + d`, rounded to the nanosecond; saturates at the ends of the int64 nanosecond range
    /// (292 years either side of the epoch) rather than overflow, and a NaN duration leaves `t`.
    [[nodiscard]] friend constexpr timestamp operator+(timestamp t, duration d) noexcept {
        constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
        constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
        const double x = d.in(units::ns);
        if (x != x) return t;  // NaN
        constexpr double limit = 9.2e18;  // below 2^63 by more than a double's rounding there
        if (x >= limit) return timestamp{hi};
        if (x <= -limit) return timestamp{lo};
        const auto dx = static_cast<std::int64_t>(x < 0 ? x - 0.5 : x + 0.5);
        if (dx > 0 && t.ns > hi - dx) return timestamp{hi};
        if (dx < 0 && t.ns < lo - dx) return timestamp{lo};
        return timestamp{t.ns + dx};
    }
    [[nodiscard]] friend constexpr bool operator==(timestamp, timestamp) noexcept = default;
    [[nodiscard]] friend constexpr auto operator<=>(timestamp, timestamp) noexcept = default;
};

/// Where a task ran ("Accelerator Core" / "Task Type").
enum class task_type : unsigned char {
    ai_core,         // AI_CORE: cube cores (on split chips), or the combined AI core (910A, 310P)
    ai_vector_core,  // AI_VECTOR_CORE
    mix_aic,         // MIX_AIC: a cube-led op that also runs on vector cores (Block Dim = cube)
    mix_aiv,         // MIX_AIV: a vector-led op that also uses cube cores (Block Dim = vector)
    ai_cpu,          // AI_CPU
    hccl,            // HCCL: collective communication
    dsa,             // DSA_SQE and other data-engine tasks
    other,           // anything else (WRITE_BACK, FFTS_PLUS, ...): kept, reported as text
};

/// A task type as profilers write it and the engine whose cores it runs on (nothing for
/// communication and data-engine tasks): a row of task_types (enum_table.hpp).
struct task_type_row {
    task_type value;
    std::string_view name;
    std::optional<engine> eng;
};

inline constexpr std::array<task_type_row, 8> task_types{{
    {task_type::ai_core, "AI_CORE", engine::cube},
    {task_type::ai_vector_core, "AI_VECTOR_CORE", engine::vector},
    {task_type::mix_aic, "MIX_AIC", engine::cube},
    {task_type::mix_aiv, "MIX_AIV", engine::vector},
    {task_type::ai_cpu, "AI_CPU", engine::aicpu},
    {task_type::hccl, "HCCL", std::nullopt},
    {task_type::dsa, "DSA", std::nullopt},
    {task_type::other, "OTHER", std::nullopt},
}};
static_assert(covers_enum<task_types>());

[[nodiscard]] constexpr std::string_view name_of(task_type t) noexcept {
    return name_in(task_types, t);
}

/// The task type written `s`: a name of task_types, DSA_SQE and other "DSA..." data-engine
/// tasks as dsa, anything else as other.
[[nodiscard]] constexpr task_type parse_task_type(std::string_view s) noexcept {
    if (const auto t = parse_in(task_types, s)) return *t;
    if (s.substr(0, 3) == "DSA") return task_type::dsa;
    return task_type::other;
}

/// The engine whose cores a task runs on: cube, vector or AI CPU; nothing for other tasks.
[[nodiscard]] constexpr std::optional<engine> engine_of(task_type t) noexcept {
    return task_types[static_cast<std::size_t>(t)].eng;
}

/// Tasks that run on the cube or vector cores (the ones pipe ratios and block dims describe).
[[nodiscard]] constexpr bool runs_on_ai_cores(task_type t) noexcept {
    const auto e = engine_of(t);
    return e && *e != engine::aicpu;
}

/// One tensor's dimensions as the profiler wrote them; rank 0 is a scalar. Dimensions may be 0
/// (empty tensors), unlike perfcast::shape.
struct tensor_shape {
    std::vector<std::int64_t> dims;

    [[nodiscard]] std::size_t rank() const noexcept { return dims.size(); }
    [[nodiscard]] bool scalar() const noexcept { return dims.empty(); }
    /// Innermost dimension (1 for a scalar).
    [[nodiscard]] std::int64_t inner() const noexcept { return dims.empty() ? 1 : dims.back(); }
    /// Element count, or nothing when it does not fit in 63 bits.
    [[nodiscard]] std::optional<std::int64_t> elements() const noexcept {
        std::int64_t n = 1;
        for (std::int64_t d : dims) {
            if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) return std::nullopt;
            n *= d;
        }
        return n;
    }
    [[nodiscard]] friend bool operator==(const tensor_shape&, const tensor_shape&) = default;
};

/// "[81920,4096]" (scalars "[]").
[[nodiscard]] inline std::string to_string(const tensor_shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.dims.size(); ++i) {
        if (i != 0) out += ',';
        out += std::to_string(s.dims[i]);
    }
    return out + "]";
}

/// A dtype as written ("DT_BF16", "FLOAT", "UNDEFINED") and what perfcast makes of it.
struct tensor_dtype {
    std::string text;
    std::optional<dtype> type;  // empty: unknown to perfcast (kept, reported)
    [[nodiscard]] friend bool operator==(const tensor_dtype&, const tensor_dtype&) = default;
};

enum class note_kind : unsigned char {
    shape_conflict,         // MatMul input shapes disagree with the output under every transpose
    unknown_dtype,          // a dtype spelling perfcast does not know (UNDEFINED is not noted)
    bad_shape,              // a shape field that is not ';'-separated lists of integers
    tensor_count_mismatch,  // shapes and dtypes list different numbers of tensors
    engine_from_cycles,     // the task label names one engine, the cycle counters the other
};

inline constexpr std::array<enum_entry<note_kind>, 5> note_kind_names{{
    {note_kind::shape_conflict, "shape_conflict"},
    {note_kind::unknown_dtype, "unknown_dtype"},
    {note_kind::bad_shape, "bad_shape"},
    {note_kind::tensor_count_mismatch, "tensor_count_mismatch"},
    {note_kind::engine_from_cycles, "engine_from_cycles"},
}};
static_assert(covers_enum<note_kind_names>());

[[nodiscard]] constexpr std::string_view name_of(note_kind k) noexcept {
    return name_in(note_kind_names, k);
}

struct row_note {
    note_kind kind;
    std::string detail;
};

/// One task of the profile. Optional fields are empty when the column is absent or the profiler
/// wrote N/A or nothing.
struct kernel_row {
    std::size_t line = 0;   // line of the file where the row starts
    std::string name;       // Name / Op Name
    std::string op_type;    // Type / OP Type
    std::string task_text;  // Accelerator Core / Task Type, as written
    /// Where the task ran: from the label, unless the cycle counters say otherwise (a CANN
    /// 7.0-era kernel_details labels vector ops AI_CORE with aic_total_cycles 0 and
    /// aiv_total_cycles > 0; note `engine_from_cycles`).
    task_type task = task_type::other;
    std::optional<int> device;  // Device_id, when the file has the column
    std::optional<int> step;    // Step Id (torch_npu kernel_details), when the file has it

    std::optional<timestamp> start;
    std::optional<duration> task_duration;
    std::optional<duration> wait;
    std::optional<int> block_dim;
    std::optional<int> mix_block_dim;

    std::vector<tensor_shape> input_shapes;
    std::vector<tensor_dtype> input_types;
    std::vector<std::string> input_formats;
    std::vector<tensor_shape> output_shapes;
    std::vector<tensor_dtype> output_types;
    std::vector<std::string> output_formats;

    std::optional<cycle_count> aic_total_cycles;
    std::optional<cycle_count> aiv_total_cycles;
    std::optional<duration> aicore_time;
    std::optional<duration> aiv_time;
    // PipeUtilization ratios: share of the core's time the pipe was busy (0..1).
    std::optional<double> aic_mac_ratio;
    std::optional<double> aic_scalar_ratio;
    std::optional<double> aic_mte1_ratio;
    std::optional<double> aic_mte2_ratio;
    std::optional<double> aic_fixpipe_ratio;
    std::optional<double> aiv_vec_ratio;
    std::optional<double> aiv_scalar_ratio;
    std::optional<double> aiv_mte2_ratio;
    std::optional<double> aiv_mte3_ratio;
    std::optional<double> cube_utilization_pct;  // cube_utilization(%) as the profiler wrote it
    /// memory_bound of the older op_summary: mte2_ratio / max(mac_ratio, vec_ratio), above 1
    /// when moving data in took longer than computing (the profiler's own judgement).
    std::optional<double> memory_bound;

    std::vector<row_note> notes;

    /// What the rows before this one say about it (profile/context.hpp, annotate_context):
    /// the share of its input bytes a recent op wrote or read (so likely still in L2), the bytes
    /// of earlier writes still dirty in L2 that its traffic evicts (written back to HBM), and
    /// whether it is the first run of its kernel (op type, input shapes and dtypes) in the file.
    /// Unset until annotated.
    struct sequence_context {
        std::optional<double> l2_input_share;
        data_size writeback{};
        bool first_run = false;
        [[nodiscard]] friend bool operator==(const sequence_context&,
                                             const sequence_context&) = default;
    };
    sequence_context context;

    [[nodiscard]] bool has_note(note_kind k) const noexcept {
        return std::any_of(notes.begin(), notes.end(),
                           [k](const row_note& n) { return n.kind == k; });
    }
    [[nodiscard]] std::optional<timestamp> end() const noexcept {
        if (!start || !task_duration) return std::nullopt;
        return *start + *task_duration;
    }
    /// Bytes of all inputs and outputs, when every shape and dtype is known.
    [[nodiscard]] std::optional<data_size> bytes_moved() const noexcept {
        if (input_shapes.size() + output_shapes.size() == 0) return std::nullopt;
        const auto in = tensor_bytes(input_shapes, input_types);
        const auto out = tensor_bytes(output_shapes, output_types);
        if (!in || !out) return std::nullopt;
        return data_size{*in + *out, units::B};
    }
    /// Bytes of the outputs alone, when there are outputs and every shape and dtype is known.
    [[nodiscard]] std::optional<data_size> output_bytes() const noexcept {
        if (output_shapes.empty()) return std::nullopt;
        const auto out = tensor_bytes(output_shapes, output_types);
        if (!out) return std::nullopt;
        return data_size{*out, units::B};
    }

private:
    // Bytes of a list of tensors; nothing when the lists differ in length or a shape or dtype
    // is unknown.
    [[nodiscard]] static std::optional<double> tensor_bytes(
        const std::vector<tensor_shape>& s, const std::vector<tensor_dtype>& t) noexcept {
        if (s.size() != t.size()) return std::nullopt;
        double bytes = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            const auto n = s[i].elements();
            if (!n || !t[i].type) return std::nullopt;
            bytes += static_cast<double>(*n) * size_of(*t[i].type).in(units::B);
        }
        return bytes;
    }
};

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
};
inline constexpr std::size_t kernel_column_count = 31;

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
inline constexpr std::array<kernel_column_spelling, 47> kernel_column_spellings{{
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
    {kernel_column::memory_bound, "memory_bound"},  // older op_summary
    {kernel_column::step_id, "Step Id"},            // torch_npu kernel_details
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
    std::vector<std::string> columns;  // all header names as written (trimmed)
    std::vector<std::string> not_read;  // columns perfcast does not read, in header order
    kernel_format format = kernel_format::minimal;

    [[nodiscard]] bool has(kernel_column c) const noexcept {
        return index[static_cast<std::size_t>(c)].has_value();
    }
};

struct kernel_reader_options {
    /// Check MatMul/BatchMatMul input shapes against the output shape (note `shape_conflict`).
    bool check_matmul_shapes = true;
    /// A damaged row (a field count other than the header's, a value that is not what its
    /// column holds) is an error when true; when false it is skipped and listed in
    /// `kernel_details_reader::skipped()` with its line and reason. Damage to the file's
    /// structure (an unterminated quote, bytes after a closing quote, a record over
    /// `csv.max_record_bytes`) and a bad header are errors either way: nothing after them can
    /// be trusted to start a row.
    bool strict = false;
    /// Skipped rows kept with their reasons (every skip is counted; the list stops here so that
    /// a file of millions of bad rows reads in bounded memory).
    std::size_t max_skipped_listed = 1000;
    /// Rows of this device only (Device_id), the others counted in `devices()`. Unset: a file
    /// with rows of more than one device is an error at its end unless `several_devices`
    /// (utilization summed over devices is meaningless: 168.8 % on a two-device op_summary).
    std::optional<int> device;
    bool several_devices = false;
    /// Rows of this training or inference step only (Step Id), the others counted in `steps()`.
    /// Unset: every step's rows (the report says how many steps they span). A step no row has,
    /// or a file without the column, is an error at its end.
    std::optional<int> step;
    /// The CSV layer (its `check_field_count` is not used: the reader compares each row with
    /// the header itself, so that a ragged row can be skipped).
    csv_options csv{};
};

/// A row the reader skipped (`kernel_reader_options::strict` false): where, why and what it
/// held (its fields joined by the delimiter, cut to 80 bytes).
struct skipped_row {
    std::string source;  // the file
    std::size_t line = 0;
    std::size_t column = 0;  // 0: the whole row (a wrong field count)
    std::string reason;
    std::string excerpt;
};

/// "FILE:LINE[:COLUMN]: reason: \"excerpt\"" (the excerpt made printable).
[[nodiscard]] inline std::string describe(const skipped_row& s) {
    std::string m(s.source);
    m += ':' + std::to_string(s.line);
    if (s.column != 0) m += ':' + std::to_string(s.column);
    return m + ": " + s.reason + ": \"" + parse_error::printable(s.excerpt) + '"';
}

namespace detail {

[[nodiscard]] constexpr bool blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// Without surrounding blanks (torch_npu ends start times with a TAB). Hand-written: the
/// library's find_first_not_of calls memchr per character, a hot spot on large profiles.
[[nodiscard]] constexpr std::string_view trim(std::string_view s) noexcept {
    std::size_t b = 0;
    std::size_t e = s.size();
    while (b < e && blank(s[b])) ++b;
    while (e > b && blank(s[e - 1])) --e;
    return s.substr(b, e - b);
}

[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

/// Empty or "N/A": the profiler did not record the value.
[[nodiscard]] constexpr bool not_recorded(std::string_view s) noexcept {
    return s.empty() || iequals(s, "N/A");
}

/// Strips one pair of enclosing double quotes: torch_npu writes shapes as """8,4;2""", which
/// CSV unquoting turns into "8,4;2".
[[nodiscard]] constexpr std::string_view strip_inner_quotes(std::string_view s) noexcept {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    return s;
}

enum class number_status : unsigned char { ok, not_a_number, out_of_range };

/// Whole-field decimal: no leading '+', no blanks (trimmed before), finite.
[[nodiscard]] inline number_status parse_double(std::string_view s, double& out) noexcept {
    if (s.empty()) return number_status::not_a_number;
    // from_chars accepts "inf" and "nan"; a profile value never is one.
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+'))
            return number_status::not_a_number;
    }
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc::result_out_of_range) return number_status::out_of_range;
    if (ec != std::errc{} || ptr != s.data() + s.size()) return number_status::not_a_number;
    if (!std::isfinite(out)) return number_status::out_of_range;
    return number_status::ok;
}

/// "1736413971558972.912" microseconds -> integer nanoseconds, exactly (digits beyond the
/// nanosecond are rounded half up). Only digits and one '.'.
[[nodiscard]] inline bool parse_timestamp_us(std::string_view s, std::int64_t& ns) noexcept {
    if (s.empty()) return false;
    const auto dot = s.find('.');
    const std::string_view ip = s.substr(0, dot);
    const std::string_view fp =
        dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
    if (ip.empty() && fp.empty()) return false;
    constexpr std::int64_t max_us = std::numeric_limits<std::int64_t>::max() / 1000 - 1;
    std::int64_t us = 0;
    for (char c : ip) {
        if (c < '0' || c > '9') return false;
        if (us > (max_us - (c - '0')) / 10) return false;
        us = us * 10 + (c - '0');
    }
    std::int64_t frac = 0;
    int digits = 0;
    bool round_up = false;
    for (char c : fp) {
        if (c < '0' || c > '9') return false;
        if (digits < 3) {
            frac = frac * 10 + (c - '0');
            ++digits;
        } else if (digits == 3) {
            round_up = c >= '5';
            ++digits;
        }
    }
    while (digits < 3) {
        frac *= 10;
        ++digits;
    }
    ns = us * 1000 + frac + (round_up ? 1 : 0);
    return true;
}

/// Splits on `sep`, calling f(piece) for each piece (an empty input is one empty piece).
template <class F>
constexpr void split(std::string_view s, char sep, F&& f) {
    std::size_t b = 0;
    for (;;) {
        const auto e = s.find(sep, b);
        if (e == std::string_view::npos) {
            f(s.substr(b));
            return;
        }
        f(s.substr(b, e - b));
        b = e + 1;
    }
}

/// "81920,4096;8192,512" -> two shapes; "" -> one scalar; ";" -> two scalars.
/// False (and `out` empty) when a dimension is not a non-negative integer. Reuses `out`'s
/// storage: a streaming reader parses millions of these.
[[nodiscard]] inline bool parse_shapes(std::string_view field, std::vector<tensor_shape>& out) {
    bool ok = true;
    std::size_t n = 0;
    split(field, ';', [&](std::string_view t) {
        if (n == out.size()) out.emplace_back();
        std::vector<std::int64_t>& dims = out[n++].dims;
        dims.clear();
        t = trim(t);
        if (t.empty()) return;
        split(t, ',', [&](std::string_view d) {
            d = trim(d);
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
            if (d.empty() || ec != std::errc{} || ptr != d.data() + d.size() || v < 0) ok = false;
            dims.push_back(v);
        });
    });
    out.resize(ok ? n : 0);
    return ok;
}

/// "DT_BF16;DT_BF16" -> two dtypes; unknown spellings are kept with an empty `type`.
inline void parse_dtypes(std::string_view field, std::vector<tensor_dtype>& out) {
    std::size_t n = 0;
    split(field, ';', [&](std::string_view t) {
        t = trim(t);
        if (n == out.size()) out.emplace_back();
        tensor_dtype& d = out[n++];
        d.text.assign(t);
        d.type = try_parse_dtype(t);
    });
    out.resize(n);
}

inline void parse_formats(std::string_view field, std::vector<std::string>& out) {
    std::size_t n = 0;
    split(field, ';', [&](std::string_view t) {
        if (n == out.size()) out.emplace_back();
        out[n++].assign(trim(t));
    });
    out.resize(n);
}

/// Whether op type `t` is a matrix multiply: one of op_kinds' matmul row's profiler types.
[[nodiscard]] constexpr bool is_matmul_type(std::string_view t) noexcept {
    const op_row* r = row_for_profiler_type(op_kinds, t);
    return r != nullptr && r->value == op_kind::matmul;
}

/// Whether A x B -> C holds with A as [M,K] or [K,M] and B as [K,N] or [N,K] (leading batch
/// dimensions broadcast). Nothing to check (true) when a tensor has rank < 2.
[[nodiscard]] inline bool matmul_shapes_agree(const tensor_shape& a, const tensor_shape& b,
                                              const tensor_shape& c) noexcept {
    if (a.rank() < 2 || b.rank() < 2 || c.rank() < 2) return true;
    const auto at = [](const tensor_shape& s, std::size_t from_end) {
        return s.dims[s.rank() - 1 - from_end];
    };
    // Batch dimensions, aligned from the right: each of A's and B's is 1 or C's.
    const std::size_t cb = c.rank() - 2;
    const std::size_t ab = a.rank() - 2;
    const std::size_t bb = b.rank() - 2;
    if (ab > cb || bb > cb) return false;
    for (std::size_t i = 0; i < cb; ++i) {
        const std::int64_t cd = c.dims[cb - 1 - i];
        const std::int64_t ad = i < ab ? a.dims[ab - 1 - i] : 1;
        const std::int64_t bd = i < bb ? b.dims[bb - 1 - i] : 1;
        if ((ad != 1 && ad != cd) || (bd != 1 && bd != cd)) return false;
        if (ad != cd && bd != cd && cd != 1) return false;
    }
    const std::int64_t m = at(c, 1);
    const std::int64_t n = at(c, 0);
    for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
            const std::int64_t am = ta ? at(a, 0) : at(a, 1);
            const std::int64_t ak = ta ? at(a, 1) : at(a, 0);
            const std::int64_t bk = tb ? at(b, 0) : at(b, 1);
            const std::int64_t bn = tb ? at(b, 1) : at(b, 0);
            if (am == m && bn == n && ak == bk) return true;
        }
    }
    return false;
}

}  // namespace detail

/// Adds the notes that need the whole row: tensor counts, unknown dtypes, MatMul shapes.
inline void check_row(kernel_row& row, bool check_matmul_shapes = true) {
    const auto count_check = [&row](const std::vector<tensor_shape>& s,
                                    const std::vector<tensor_dtype>& t, std::string_view what) {
        if (!s.empty() && !t.empty() && s.size() != t.size()) {
            row.notes.push_back({note_kind::tensor_count_mismatch,
                                 std::string(what) + ": " + std::to_string(s.size()) + " shapes, " +
                                     std::to_string(t.size()) + " dtypes"});
        }
    };
    count_check(row.input_shapes, row.input_types, "inputs");
    count_check(row.output_shapes, row.output_types, "outputs");
    for (const auto* list : {&row.input_types, &row.output_types}) {
        for (const tensor_dtype& t : *list) {
            // UNDEFINED is the profiler saying it did not record the dtype (MemSet): not a
            // spelling perfcast lacks, so not noted.
            if (!t.type && t.text != "UNDEFINED" && !t.text.empty()) {
                row.notes.push_back({note_kind::unknown_dtype, t.text});
            }
        }
    }
    if (check_matmul_shapes && detail::is_matmul_type(row.op_type) &&
        row.input_shapes.size() >= 2 && !row.output_shapes.empty() &&
        !detail::matmul_shapes_agree(row.input_shapes[0], row.input_shapes[1],
                                     row.output_shapes[0])) {
        row.notes.push_back({note_kind::shape_conflict, "inputs " + to_string(row.input_shapes[0]) +
                                                            " x " + to_string(row.input_shapes[1]) +
                                                            " cannot give " +
                                                            to_string(row.output_shapes[0]) +
                                                            " with either input transposed"});
    }
}

/// The label against the cycle counters: a task with cycles on one engine only ran there (a CANN
/// 7.0-era kernel_details labels vector ops AI_CORE with aic_total_cycles 0 and aiv_total_cycles
/// > 0). Changes `row.task` and adds note `engine_from_cycles`; every reader calls it once per
/// row, after the counters are read.
inline void engine_from_cycles(kernel_row& row) {
    if (!row.aic_total_cycles || !row.aiv_total_cycles) return;
    const double aic = row.aic_total_cycles->in(units::cycle);
    const double aiv = row.aiv_total_cycles->in(units::cycle);
    task_type t = row.task;
    if (row.task == task_type::ai_core && aic == 0 && aiv > 0) t = task_type::ai_vector_core;
    if (row.task == task_type::ai_vector_core && aiv == 0 && aic > 0) t = task_type::ai_core;
    if (t == row.task) return;
    const auto whole = [](double v) {
        char buf[32];
        const int n = std::snprintf(buf, sizeof buf, "%.0f", v);  // whole cycles, any size
        return n > 0 && static_cast<std::size_t>(n) < sizeof buf
                   ? std::string(buf, static_cast<std::size_t>(n))
                   : std::string("(huge)");
    };
    row.notes.push_back(
        {note_kind::engine_from_cycles, "labelled " + row.task_text + ", aic_total_cycles " +
                                            whole(aic) + ", aiv_total_cycles " + whole(aiv) +
                                            ": read as " + std::string(name_of(t))});
    row.task = t;
}

namespace detail {

/// At the end of a profile: `--device N` must name a device the rows have, and rows of several
/// devices need `several_devices` (utilization summed over devices is meaningless). `devices`:
/// rows per Device_id, before the filter. Shared by the CSV and database readers.
inline void check_devices(const std::map<int, std::size_t>& devices,
                          const kernel_reader_options& opt, const std::string& source,
                          std::string_view where) {
    const auto list = [&devices] {
        std::string out;
        for (const auto& [id, n] : devices) {
            if (!out.empty()) out += ", ";
            out += "device " + std::to_string(id) + ": " + std::to_string(n) + " rows";
        }
        return out;
    };
    if (opt.device) {
        if (!devices.empty() && !devices.contains(*opt.device)) {
            throw parse_error(where, source, 0, 0,
                              "no row of device " + std::to_string(*opt.device) +
                                  " (the file has " + list() + ")",
                              "Device_id");
        }
        return;
    }
    if (devices.size() > 1 && !opt.several_devices) {
        throw parse_error(where, source, 0, 0,
                          "rows of " + std::to_string(devices.size()) + " devices (" + list() +
                              "): choose one (--device N)",
                          "Device_id");
    }
}

/// At the end of a profile: `--step N` must name a step the rows have ("the file has step 1:
/// 40 rows, ..." otherwise; a file without the Step Id column has none to pick). `steps`: rows
/// per Step Id, before the filter.
inline void check_step(const std::map<int, std::size_t>& steps, const kernel_reader_options& opt,
                       const std::string& source, std::string_view where) {
    if (!opt.step || steps.contains(*opt.step)) return;
    if (steps.empty()) {
        throw parse_error(where, source, 0, 0,
                          "step " + std::to_string(*opt.step) +
                              " asked for, but no row has a Step Id (torch_npu's kernel_details "
                              "has the column; msprof's op_summary does not)",
                          "Step Id");
    }
    std::string list;
    for (const auto& [id, n] : steps) {
        if (!list.empty()) list += ", ";
        list += "step " + std::to_string(id) + ": " + std::to_string(n) + " rows";
    }
    throw parse_error(
        where, source, 0, 0,
        "no row of step " + std::to_string(*opt.step) + " (the file has " + list + ")", "Step Id");
}

}  // namespace detail

/// Streams the rows of an op_summary / kernel_details CSV.
class kernel_details_reader {
public:
    explicit kernel_details_reader(std::istream& in, std::string source = "<stream>",
                                   kernel_reader_options opt = {})
        : csv_(in, std::move(source), unchecked(opt.csv)), opt_(opt) {
        read_header();
    }
    /// From text in memory (not copied).
    explicit kernel_details_reader(std::string_view text, std::string source = "<string>",
                                   kernel_reader_options opt = {})
        : csv_(text, std::move(source), unchecked(opt.csv)), opt_(opt) {
        read_header();
    }

    [[nodiscard]] const kernel_header& header() const noexcept { return header_; }
    [[nodiscard]] const std::string& source() const noexcept { return csv_.source(); }
    /// Rows skipped so far (at most `max_skipped_listed` of them) and how many in all.
    [[nodiscard]] const std::vector<skipped_row>& skipped() const noexcept { return skipped_; }
    [[nodiscard]] std::size_t skipped_count() const noexcept { return skipped_count_; }
    /// Rows read per Device_id (all devices, before the `device` filter); empty without the
    /// column.
    [[nodiscard]] const std::map<int, std::size_t>& devices() const noexcept { return devices_; }
    /// Rows read per Step Id (all steps and devices, before the `step` filter); empty without
    /// the column.
    [[nodiscard]] const std::map<int, std::size_t>& steps() const noexcept { return steps_; }

    /// Reads the next usable row into `row` (reusing its storage); false at the end. A damaged
    /// row is skipped (or, `strict`, thrown as a parse_error).
    bool next(kernel_row& row) {
        for (;;) {
            if (!csv_.next()) {
                check_devices();
                return false;
            }
            const csv_record& r = csv_.record();
            if (r.size() != header_.columns.size()) {
                const std::string reason = std::to_string(r.size()) +
                                           " fields where the header has " +
                                           std::to_string(header_.columns.size());
                if (opt_.strict) {
                    throw parse_error(where, csv_.source(), r.line(), 0, reason,
                                      r.joined(csv_.options().delimiter));
                }
                skip({csv_.source(), r.line(), 0, reason, r.joined(csv_.options().delimiter)});
                continue;
            }
            try {
                fill(row);
                if (row.device) {
                    ++devices_[*row.device];
                    if (opt_.device && *row.device != *opt_.device) continue;
                }
                if (row.step) ++steps_[*row.step];
                if (opt_.step && row.step != opt_.step) continue;
                return true;
            } catch (const row_damage& d) {
                if (opt_.strict) csv_.fail_at_field(d.field, where, d.problem);
                skip({csv_.source(), r.line(), r.position(d.field).column,
                      d.problem + ": \"" + parse_error::printable(r[d.field]) + '"',
                      r.joined(csv_.options().delimiter)});
            }
        }
    }

private:
    static constexpr std::string_view where = "read_kernel_details";

    // A field that is not what its column holds: thrown by fill(), turned by next() into a
    // parse_error (strict) or a skipped row.
    struct row_damage {
        std::size_t field;
        std::string problem;
    };

    static csv_options unchecked(csv_options o) noexcept {
        o.check_field_count = false;
        return o;
    }
    void check_devices() const {
        detail::check_devices(devices_, opt_, csv_.source(), where);
        detail::check_step(steps_, opt_, csv_.source(), where);
    }
    void skip(skipped_row s) {
        ++skipped_count_;
        if (skipped_.size() < opt_.max_skipped_listed) skipped_.push_back(std::move(s));
    }

    void read_header() {
        if (!csv_.next()) {
            throw parse_error(where, csv_.source(), 1, 0,
                              "empty file (expected a header with Type, Accelerator Core and "
                              "Duration(us))",
                              "");
        }
        const csv_record& h = csv_.record();
        for (std::size_t i = 0; i < h.size(); ++i) {
            const std::string_view name = detail::trim(h[i]);
            header_.columns.emplace_back(name);
            bool known = false;
            for (const auto& sp : kernel_column_spellings) {
                if (!detail::iequals(name, sp.text)) continue;
                known = true;
                auto& slot = header_.index[static_cast<std::size_t>(sp.column)];
                if (slot) {
                    csv_.fail_at_field(
                        i, where,
                        "column given twice (also as field " + std::to_string(*slot + 1) + ")");
                }
                slot = i;
            }
            if (!known) header_.not_read.emplace_back(name);
        }
        const auto require = [&](kernel_column c, std::string_view names) {
            if (!header_.has(c)) {
                std::string all;
                for (const auto& n : header_.columns) all += (all.empty() ? "" : ",") + n;
                throw parse_error(where, csv_.source(), h.line(), 0,
                                  std::string("missing required column ") + std::string(names),
                                  all);
            }
        };
        require(kernel_column::op_type, "Type (or OP Type)");
        require(kernel_column::task_type, "Accelerator Core (or Task Type)");
        require(kernel_column::duration, "Duration(us) (or Task Duration(us))");
        const std::string_view type_name = header_.columns[*col(kernel_column::op_type)];
        if (detail::iequals(type_name, "OP Type")) {
            header_.format = kernel_format::msprof_op_summary;
        } else if (header_.has(kernel_column::start) || header_.has(kernel_column::name)) {
            header_.format = kernel_format::torch_npu_kernel_details;
        } else {
            header_.format = kernel_format::minimal;
        }
    }

    [[nodiscard]] std::optional<std::size_t> col(kernel_column c) const noexcept {
        return header_.index[static_cast<std::size_t>(c)];
    }
    [[nodiscard]] std::string_view field(kernel_column c) const noexcept {
        const auto i = col(c);
        return i ? detail::trim(csv_.record()[*i]) : std::string_view{};
    }

    [[noreturn]] void bad(kernel_column c, std::string_view problem) const {
        const std::size_t i = *col(c);
        throw row_damage{i, std::string(problem) + " in column '" + header_.columns[i] + "'"};
    }

    // A non-negative finite number, or nothing.
    [[nodiscard]] std::optional<double> number(kernel_column c) const {
        const std::string_view s = field(c);
        if (detail::not_recorded(s)) return std::nullopt;
        double v = 0;
        switch (detail::parse_double(s, v)) {
            case detail::number_status::ok: break;
            case detail::number_status::not_a_number: bad(c, "not a number");
            case detail::number_status::out_of_range: bad(c, "number out of the range of a double");
        }
        if (v < 0) bad(c, "negative value");
        return v;
    }
    // A task's time (Duration, Wait Time, aicore_time, aiv_time) is at most a day: a profile
    // covers seconds to minutes; more is a unit mistake, and sums of such rows would overflow
    // to inf in the report (issue 16).
    static constexpr double max_task_us = 86400e6;
    // Cycles of one task: at most what 65536 cores (chip.hpp's bound) at 10 GHz run in that
    // day, 5.7e19, rounded up.
    static constexpr double max_task_cycles = 1e20;
    [[nodiscard]] std::optional<duration> micros(kernel_column c) const {
        const std::optional<double> v = number(c);
        if (!v) return std::nullopt;
        if (*v > max_task_us) bad(c, "a time over a day (86400000000 us)");
        return duration{*v, units::us};
    }
    [[nodiscard]] std::optional<cycle_count> cycles(kernel_column c) const {
        const std::optional<double> v = number(c);
        if (!v) return std::nullopt;
        if (*v > max_task_cycles)
            bad(c, "more cycles than 65536 cores at 10 GHz run in a day (1e20)");
        return cycle_count{*v, units::cycle};
    }
    [[nodiscard]] std::optional<int> count(kernel_column c) const {
        const std::string_view s = field(c);
        if (detail::not_recorded(s)) return std::nullopt;
        int v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) bad(c, "count out of range");
        if (ec != std::errc{} || ptr != s.data() + s.size()) bad(c, "not an integer");
        if (v < 0) bad(c, "negative count");
        return v;
    }

    void fill(kernel_row& row) {
        const csv_record& r = csv_.record();
        row.line = r.line();
        row.name.assign(field(kernel_column::name));
        row.op_type.assign(field(kernel_column::op_type));
        row.task_text.assign(field(kernel_column::task_type));
        row.task = parse_task_type(row.task_text);

        row.start.reset();
        if (const std::string_view s = field(kernel_column::start); !detail::not_recorded(s)) {
            std::int64_t ns = 0;
            if (!detail::parse_timestamp_us(s, ns)) {
                bad(kernel_column::start, "not a timestamp in microseconds");
            }
            row.start = timestamp{ns};
        }
        row.task_duration = micros(kernel_column::duration);
        row.wait = micros(kernel_column::wait);
        row.block_dim = count(kernel_column::block_dim);
        row.mix_block_dim = count(kernel_column::mix_block_dim);

        row.notes.clear();
        shapes(kernel_column::input_shapes, row.input_shapes, row);
        shapes(kernel_column::output_shapes, row.output_shapes, row);
        dtypes(kernel_column::input_types, row.input_types);
        dtypes(kernel_column::output_types, row.output_types);
        formats(kernel_column::input_formats, row.input_formats);
        formats(kernel_column::output_formats, row.output_formats);

        row.aic_total_cycles = cycles(kernel_column::aic_total_cycles);
        row.aiv_total_cycles = cycles(kernel_column::aiv_total_cycles);
        row.aicore_time = micros(kernel_column::aicore_time);
        row.aiv_time = micros(kernel_column::aiv_time);
        row.aic_mac_ratio = number(kernel_column::aic_mac_ratio);
        row.aic_scalar_ratio = number(kernel_column::aic_scalar_ratio);
        row.aic_mte1_ratio = number(kernel_column::aic_mte1_ratio);
        row.aic_mte2_ratio = number(kernel_column::aic_mte2_ratio);
        row.aic_fixpipe_ratio = number(kernel_column::aic_fixpipe_ratio);
        row.aiv_vec_ratio = number(kernel_column::aiv_vec_ratio);
        row.aiv_scalar_ratio = number(kernel_column::aiv_scalar_ratio);
        row.aiv_mte2_ratio = number(kernel_column::aiv_mte2_ratio);
        row.aiv_mte3_ratio = number(kernel_column::aiv_mte3_ratio);
        row.cube_utilization_pct = number(kernel_column::cube_utilization);
        row.device = count(kernel_column::device_id);
        row.step = count(kernel_column::step_id);
        row.memory_bound = number(kernel_column::memory_bound);
        engine_from_cycles(row);

        check_row(row, opt_.check_matmul_shapes);
    }

    void shapes(kernel_column c, std::vector<tensor_shape>& out, kernel_row& row) const {
        const std::string_view s = field(c);
        if (!col(c) || detail::iequals(s, "N/A")) {
            out.clear();
            return;
        }
        const std::string_view inner = detail::strip_inner_quotes(s);
        if (!detail::parse_shapes(inner, out)) {
            row.notes.push_back(
                {note_kind::bad_shape, header_.columns[*col(c)] + " = " + std::string(s)});
        }
    }
    void dtypes(kernel_column c, std::vector<tensor_dtype>& out) const {
        const std::string_view s = field(c);
        if (!col(c) || detail::not_recorded(s)) {
            out.clear();
            return;
        }
        detail::parse_dtypes(detail::strip_inner_quotes(s), out);
    }
    void formats(kernel_column c, std::vector<std::string>& out) const {
        const std::string_view s = field(c);
        if (!col(c) || detail::not_recorded(s)) {
            out.clear();
            return;
        }
        detail::parse_formats(detail::strip_inner_quotes(s), out);
    }

    csv_reader csv_;
    kernel_reader_options opt_;
    kernel_header header_;
    std::vector<skipped_row> skipped_;
    std::size_t skipped_count_ = 0;
    std::map<int, std::size_t> devices_;
    std::map<int, std::size_t> steps_;
};

/// Calls `f(const kernel_row&)` for each row of `in`; returns the header. Constant memory.
template <class F>
kernel_header for_each_kernel_row(std::istream& in, std::string source, F&& f,
                                  kernel_reader_options opt = {}) {
    kernel_details_reader r(in, std::move(source), opt);
    kernel_row row;
    while (r.next(row)) f(static_cast<const kernel_row&>(row));
    return r.header();
}

/// A whole profile in memory, with the rows the reader skipped.
struct kernel_table {
    kernel_header header;
    std::vector<kernel_row> rows;
    std::vector<skipped_row> skipped;  // the first `max_skipped_listed` skipped rows
    std::size_t skipped_count = 0;     // every skipped row
};

namespace detail {
[[nodiscard]] inline kernel_table read_all(kernel_details_reader& r) {
    kernel_table t;
    kernel_row row;
    while (r.next(row)) t.rows.push_back(row);
    t.header = r.header();
    t.skipped = r.skipped();
    t.skipped_count = r.skipped_count();
    return t;
}
}  // namespace detail

[[nodiscard]] inline kernel_table read_kernel_details(std::istream& in,
                                                      std::string source = "<stream>",
                                                      kernel_reader_options opt = {}) {
    kernel_details_reader r(in, std::move(source), opt);
    return detail::read_all(r);
}

[[nodiscard]] inline kernel_table read_kernel_details_string(std::string_view text,
                                                             std::string source = "<string>",
                                                             kernel_reader_options opt = {}) {
    kernel_details_reader r(text, std::move(source), opt);
    return detail::read_all(r);
}

[[nodiscard]] inline kernel_table read_kernel_details_file(const std::string& path,
                                                           kernel_reader_options opt = {}) {
    std::ifstream f = open_input(path, "read_kernel_details");
    return read_kernel_details(f, path, opt);
}

}  // namespace perfcast::profile
