// perfcast/profile/report_result.hpp: what a profile report holds (profile_report: utilization
// per engine, time by op type, top ops, the host-bound signal, findings), the kinds of finding
// with the seed's fixes, and the report's thresholds (report_options) with their reasons.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../chip.hpp"
#include "../enum_table.hpp"
#include "../units.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

struct report_options {
    /// Every row: `top_ops = report_options::all` lists every op (the command's `--top 0`).
    static constexpr std::size_t all = std::numeric_limits<std::size_t>::max();
    /// Ops listed in the top-ops table.
    std::size_t top_ops = 10;
    /// Example rows kept per finding (the longest ones).
    std::size_t max_examples = 5;
    /// A pipe busy more than this share of the op's time bounds it (guide §5: "flag ops whose
    /// aiv_mte2_ratio > 0.8"; the same threshold is used for every pipe).
    double pipe_ratio_threshold = 0.8;
    /// Chip-level utilization above which the profile is compute bound (guide §2: npu-smi
    /// "> 80 % is high").
    double compute_bound_utilization = 0.8;
    /// Device idle share above which the host-bound finding is raised. Ours: the seed gives no
    /// number; 20 % idle is where bubbles cost more than a typical kernel-tuning gain.
    double host_idle_share = 0.2;
    /// An op on vector cores is flagged for int64 when int64/uint64 tensors carry at least this
    /// share of its input bytes (or of its output bytes). Ours: index and scalar inputs in int64
    /// (FlashAttention's sequence lengths) are cheap; the slow path matters when the data itself is
    /// int64 (guide §7).
    double int64_byte_share = 0.5;
    /// ... and those int64 tensors hold at least this many bytes. Ours: below 1 KiB (128
    /// elements) the slow path costs less than an op launch.
    double int64_min_bytes = 1024.0;
    /// A memory-bound op moving less than this share of the HBM bandwidth is flagged as
    /// "far below the hardware" (guide §5: 0.005 GB/s). Ours: 10 %.
    double low_bandwidth_share = 0.1;
};

enum class finding_kind : unsigned char {
    compute_bound,     // chip level: utilization above compute_bound_utilization (guide §2)
    host_bound,        // device idle share above host_idle_share (guide §3)
    memory_bound_op,   // aic/aiv mte2 (or aiv mte3) ratio above the threshold (guide §5)
    compute_bound_op,  // aic mac or aiv vec ratio above the threshold (guide §2)
    scalar_bound_op,   // aic/aiv scalar ratio above the threshold
    aicpu_op,          // task type AI_CPU (guide §8)
    int64_on_vector,   // int64 data on vector cores (guide §7)
    misaligned_move,   // innermost run not a multiple of the alignment (guide §5)
    block_tail,        // block dim > cores and not a multiple: a partial last wave (guide §12)
    under_filled,      // block dim < cores: cores left idle by this op (guide §12, §11)
    low_bandwidth,     // memory-bound op far below HBM bandwidth (guide §5)
    shape_conflict,    // MatMul shapes disagree: bytes/alignment not derived (reader note)
    unknown_dtype,     // a dtype spelling perfcast does not know (reader note)
};

/// A finding: its name in output, and the text of the tuning guide for it: what it means, what
/// fixes it and the guide sections (a row of finding_kinds, enum_table.hpp).
struct finding_row {
    finding_kind value;
    std::string_view name;
    std::string_view title;
    std::string_view fix;
    std::string_view source;
};

inline constexpr std::array<finding_row, 13> finding_kinds{{
    {finding_kind::compute_bound, "compute_bound",
     "the cube engine is busy most of the time (compute bound)",
     "graph compilation; op fusion (fewer launches, fewer intermediate reads and "
     "writes); lower precision (fp32 -> HF32 for Conv/MatMul only)",
     "guide §2"},
    {finding_kind::host_bound, "host_bound",
     "the device waits for the host between tasks (host bound)",
     "sink the whole graph; dynamic -> static graph; larger batch (longer ops, "
     "smaller bubble share); faster host or more host CPU per card; co-locate "
     "host-bound and non-host-bound models; what each runtime option buys for "
     "your deployment: perfcast whatif --model F --gains (docs/runtime.md)",
     "guide §3"},
    {finding_kind::memory_bound_op, "memory_bound_op",
     "ops whose memory move-in (mte2) or move-out (mte3) pipe is busy > 80 % of "
     "their time (memory-access bound)",
     "vector op fusion (less data moved); 32-byte aligned moves", "guide §5"},
    {finding_kind::compute_bound_op, "compute_bound_op",
     "ops whose cube (mac) or vector (vec) pipe is busy > 80 % of their time",
     "op fusion; lower precision (fp32 -> HF32 for Conv/MatMul only); for small "
     "ops, fewer cores per op and several streams",
     "guide §2, §12"},
    {finding_kind::scalar_bound_op, "scalar_bound_op",
     "ops whose scalar pipe is busy > 80 % of their time",
     "scalar work usually means a slow path (int64 arithmetic, data-dependent "
     "control); rewrite with vector-native dtypes or a custom op",
     "guide §7, §10"},
    {finding_kind::aicpu_op, "aicpu_op", "ops on the AI CPU",
     "AICPU ops are slow: remove them or move them to the host CPU; TopK with "
     "int32/int64 values runs only on AICPU: cast to fp32 when values < 2^24 "
     "(exact) to use the vector unit; reorder the graph so AICPU ops depend only "
     "on host-side inputs",
     "guide §8"},
    {finding_kind::int64_on_vector, "int64_on_vector",
     "int64 data on vector cores (no vector instructions: scalar slow path)",
     "compute in int32, or in fp32 when values < 2^24 (exact); or write a custom "
     "int64 op (seed: Equal int64 230+ us, int32 < 30 us, custom int64 ~75 us)",
     "guide §7, §10"},
    {finding_kind::misaligned_move, "misaligned_move",
     "tensors whose innermost run is not a multiple of the 32-byte alignment "
     "(low move bandwidth)",
     "align moves to 32 bytes (pad or reshape the innermost dimension); vector op "
     "fusion",
     "guide §5"},
    {finding_kind::block_tail, "block_tail",
     "block dims above the core count and not a multiple of it: the last wave "
     "leaves cores idle",
     "choose shapes or tiling so the block dim is a multiple of the cores; or "
     "limit the op's cores (core split) so the rest serve another stream",
     "guide §12"},
    {finding_kind::under_filled, "under_filled",
     "block dims below the core count: the op holds only part of the engine",
     "fine under a core split or with several streams (the idle cores serve "
     "others); alone, batch more (larger shapes fill more cores)",
     "guide §11, §12, §13"},
    {finding_kind::low_bandwidth, "low_bandwidth",
     "memory-bound ops far below the chip's HBM bandwidth",
     "look for cores conflicting on the same addresses (Gather with concentrated "
     "indices: fewer cores) and for misaligned moves",
     "guide §5, §12"},
    {finding_kind::shape_conflict, "shape_conflict",
     "MatMul rows whose input shapes do not give the output shape under any "
     "transpose (profile inconsistency)",
     "check the profiler output; perfcast does not derive bytes, bandwidth or "
     "alignment from these rows",
     "profile check"},
    {finding_kind::unknown_dtype, "unknown_dtype", "dtype spellings perfcast does not know",
     "bytes and bandwidth are not computed for these rows; report the spelling so "
     "it can be added to perfcast/dtype.hpp",
     "profile check"},
}};
static_assert(covers_enum<finding_kinds>());

[[nodiscard]] constexpr std::string_view name_of(finding_kind k) noexcept {
    return name_in(finding_kinds, k);
}

inline constexpr std::size_t finding_kind_count = finding_kinds.size();

/// The seed's text for each finding: what it means and what fixes it (guide sections).
struct finding_text {
    std::string_view title;
    std::string_view fix;
    std::string_view source;
};

[[nodiscard]] constexpr finding_text text_of(finding_kind k) noexcept {
    const finding_row& r = finding_kinds[static_cast<std::size_t>(k)];
    return {r.title, r.fix, r.source};
}

/// One row cited by a finding.
struct finding_example {
    std::size_t line = 0;
    std::string name;
    std::string op_type;
    duration time{};
    std::string detail;
};

struct finding {
    finding_kind kind{};
    std::size_t rows = 0;                   // rows flagged (1 for chip-level findings)
    duration time{};                        // their total device time
    std::string evidence;                   // the numbers behind it
    std::vector<finding_example> examples;  // the longest flagged rows

    [[nodiscard]] finding_text text() const noexcept { return text_of(kind); }
};

/// Utilization of one engine over the profile.
struct engine_utilization {
    std::string label;  // e.g. "cube, AI_CORE tasks (guide §2)"
    engine which = engine::cube;
    std::size_t tasks = 0;  // rows counted
    cycle_count cycles{};   // sum of aic_ or aiv_total_cycles
    duration task_time{};   // sum of the rows' durations
    int cores = 0;
    frequency clock{};
    duration seed_span{};  // last start - first start (guide §2)
    duration full_span{};  // first start .. last end
    /// cycles / available cycles over seed_span: the guide's formula, kept as written. It can
    /// pass 1 (the span leaves out the last task's duration): `note` then says so.
    std::optional<double> seed_utilization;
    /// The same over full_span: the headline, and what the compute_bound finding judges. Above 1
    /// only when the cycles exceed the chip's cores x clock (`note`: not the profile's chip).
    std::optional<double> full_utilization;
    /// Why a value above 100 % is not a utilization; empty when none is (utilization_note).
    std::string note;
};

struct op_type_time {
    std::string op_type;
    std::string task;
    std::size_t count = 0;
    duration total{};
    double share = 0;  // of all rows' summed duration
};

/// One op of the top-ops table.
struct op_entry {
    std::size_t line = 0;
    std::string name;
    std::string op_type;
    std::string task;
    duration time{};
    std::optional<int> block_dim;
    std::optional<double> cube_utilization_pct;           // recomputed for the chip
    std::optional<double> profiled_cube_utilization_pct;  // as the profiler wrote it
    std::string bound;                                    // pipes above the threshold, or "-"
    std::optional<bandwidth> achieved;  // bytes of inputs+outputs (fills: outputs) / time
    std::optional<double> hbm_share;    // achieved / chip HBM bandwidth, at most 1
    bool above_hbm_peak = false;        // achieved > HBM: served by L2 or a cache (no share)
    bool above_compute_peak = false;    // a GEMM's FLOP/s above the chip's cube peak
    std::string notes;                  // reader notes and the report's, '; '-joined
};

struct host_bound_summary {
    std::size_t timed_tasks = 0;  // rows with a start time and a duration
    duration window{};            // first start .. last end
    duration busy{};              // union of [start, end) of all timed tasks
    duration idle{};              // window - busy
    std::optional<double> idle_share;
    std::size_t gaps = 0;                   // idle intervals between tasks
    std::size_t gaps_longer_than_next = 0;  // gap before a task longer than that task (guide §3)
    duration total_wait{};                  // sum of Wait Time(us)
    std::size_t wait_rows = 0;
};

struct profile_report {
    std::string source;
    std::string format;
    std::string chip_name;
    /// Empty, or why the rows look taken on another chip than chip_name (chip_mismatch).
    std::string chip_note;
    std::size_t rows = 0;
    duration total_time{};  // sum of all rows' durations
    std::vector<engine_utilization> utilization;
    std::vector<op_type_time> by_type;  // longest first
    std::vector<op_entry> top_ops;      // longest first
    host_bound_summary host;
    std::vector<finding> findings;     // in finding_kind order, only those with rows
    std::vector<skipped_row> skipped;  // damaged rows left out (the first 1000 by default)
    std::size_t skipped_count = 0;     // every damaged row left out
    /// Rows per Step Id (torch_npu kernel_details); empty without the column. With more than one
    /// step the spans run over the time between steps too (`--step N` reports one).
    std::map<int, std::size_t> steps;
};

}  // namespace perfcast::profile
