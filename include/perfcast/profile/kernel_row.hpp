// perfcast/profile/kernel_row.hpp: one op row of a profile (kernel_row) and its parts: the
// profiler timestamp, the task type, tensor shapes and dtypes, and the notes a row can carry.
// What every profile reader (CSV: kernel_reader.hpp; SQLite: msprof_db.hpp) produces.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../chip.hpp"
#include "../dtype.hpp"
#include "../enum_table.hpp"
#include "../units.hpp"

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
        if (x != x) return t;             // NaN
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
    /// Written in a spelling perfcast does not know (HIFLOAT8): not an empty field, nor
    /// UNDEFINED, the profiler saying it did not record the dtype (MemSet rows).
    [[nodiscard]] bool unknown_spelling() const noexcept {
        return !type && !text.empty() && text != "UNDEFINED";
    }
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
    /// torch_npu's "HF32 Eligible" (YES / NO): whether the kernel may compute fp32 data in HF32
    /// on the cube; nothing when the profile does not say.
    std::optional<bool> hf32_eligible;

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

/// Whether a row moves its data in runs of its output's innermost dimension: some input is
/// neither the output's shape (dimensions of size 1 aside: [1,4096,1024] is [4096,1024]'s memory)
/// nor a single element (a broadcast operand, a sliced or strided view), so the kernel walks rows.
/// A row whose inputs all have the output's shape (Relu, Cast, TensorMove, an Add of two equal
/// tensors) reads and writes whole contiguous tensors, which the kernels flatten: one run, however
/// odd the last dimension (the 2025 torch_npu profile's Relu of [32,64,55,55]: 49.6 MB in 15.5 us;
/// docs/validation.md, "Layouts and contiguous runs"). Read by the profile mapping (ops.hpp) and
/// the misaligned-move finding (report_builder.hpp).
[[nodiscard]] inline bool walks_rows(const kernel_row& r) {
    if (r.output_shapes.empty() || r.output_shapes[0].inner() < 1) return false;
    // Equal once the dimensions of size 1 are skipped (no std::views::filter: Clang 14 cannot
    // use libstdc++ 12's views).
    const auto same_memory = [](const tensor_shape& a, const tensor_shape& b) {
        std::size_t i = 0;
        std::size_t j = 0;
        for (;;) {
            while (i < a.dims.size() && a.dims[i] == 1) ++i;
            while (j < b.dims.size() && b.dims[j] == 1) ++j;
            if (i == a.dims.size() || j == b.dims.size())
                return i == a.dims.size() && j == b.dims.size();
            if (a.dims[i++] != b.dims[j++]) return false;
        }
    };
    const tensor_shape& out = r.output_shapes[0];
    return std::ranges::any_of(r.input_shapes, [&](const tensor_shape& s) {
        const auto n = s.elements();
        return !(n && *n <= 1) && !same_memory(s, out);
    });
}

}  // namespace perfcast::profile
