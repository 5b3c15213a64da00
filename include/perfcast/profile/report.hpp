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
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
#include "../units.hpp"
#include "discover.hpp"
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
    std::size_t rows = 0;
    duration total_time{};  // sum of all rows' durations
    std::vector<engine_utilization> utilization;
    std::vector<op_type_time> by_type;  // longest first
    std::vector<op_entry> top_ops;      // longest first
    host_bound_summary host;
    std::vector<finding> findings;  // in finding_kind order, only those with rows
    std::vector<skipped_row> skipped;  // damaged rows left out (the first 1000 by default)
    std::size_t skipped_count = 0;     // every damaged row left out
    /// Rows per Step Id (torch_npu kernel_details); empty without the column. With more than one
    /// step the spans run over the time between steps too (`--step N` reports one).
    std::map<int, std::size_t> steps;
};

/// Op types that write their output and read no data: what the profiler lists as their inputs is
/// a shape, a value or a seed, not a tensor the kernel reads, so their traffic is their output
/// bytes alone (counting the inputs showed ZerosLike at 233 % of HBM on a real 910B profile,
/// docs/profiles.md). Each type is one seen in the profiles under tests/data/profiles/.
struct write_only_type {
    std::string_view type;    // OP Type / Type, as written
    std::string_view inputs;  // what its listed inputs are
};

inline constexpr std::array<write_only_type, 8> write_only_types{{
    {"ZerosLike", "a tensor used for its shape and dtype only"},
    {"OnesLike", "a tensor used for its shape and dtype only"},
    {"Fill", "the output dims and the fill value"},
    {"MemSet", "none listed (clears a workspace)"},
    {"Range", "start, limit and delta scalars"},
    {"DSAGenBitMask", "shape, seed and keep probability (a dropout mask)"},
    {"DSAStatelessGenBitMask", "shape, seed and keep probability (a dropout mask)"},
    {"DSARandomNormal", "shape, seed, mean and standard deviation"},
}};

[[nodiscard]] constexpr bool is_write_only_type(std::string_view type) noexcept {
    return std::any_of(write_only_types.begin(), write_only_types.end(),
                       [type](const write_only_type& w) { return w.type == type; });
}

/// The bytes an op moves once: its inputs and outputs, or for a write-only type its outputs
/// alone; nothing when a shape or dtype it needs is unknown.
[[nodiscard]] inline std::optional<data_size> bytes_moved_once(const kernel_row& r) {
    if (!is_write_only_type(r.op_type)) return r.bytes_moved();
    return r.output_bytes();
}

/// The innermost dimension larger than 1 (1 when there is none). Row-major strides come from the
/// dimensions to the right; a dimension of size 1 has no extent and changes no stride, so a
/// tensor is the same memory without it: [400,1] is [400], [4096,1,16,1] is [4096,16]. The
/// dimension that is then innermost is the run an op moves per row (cost.hpp's `inner`).
[[nodiscard]] inline std::int64_t innermost_extent(const tensor_shape& s) noexcept {
    for (auto it = s.dims.rbegin(); it != s.dims.rend(); ++it)
        if (*it != 1) return *it;
    return 1;
}

/// The shortest task time a rate (utilization, bandwidth) is computed over: 1 ns, the
/// profilers' resolution (msprof and torch_npu print microseconds with three decimals). A
/// shorter time is a rounding artefact, and dividing by it printed "inf GB/s" (issue 16).
inline constexpr duration min_rate_time{1.0, units::ns};

/// msprof's cube_utilization(%) recomputed for `c`: aic_total_cycles / (cube clock x cube cores x
/// duration) x 100. Nothing when the row has no cycles or a duration under min_rate_time.
[[nodiscard]] inline std::optional<double> recomputed_cube_utilization_pct(const kernel_row& r,
                                                                           const chip& c) {
    if (!r.aic_total_cycles || !r.task_duration || *r.task_duration < min_rate_time) {
        return std::nullopt;
    }
    const cycle_count avail =
        available_cycles(c.cube.clock, core_count{c.cube.cores}, *r.task_duration);
    return *r.aic_total_cycles / avail * 100.0;
}

/// The engine whose cores a row's Block Dim counts: cube for AI_CORE and MIX_AIC, vector for
/// AI_VECTOR_CORE and MIX_AIV; nothing for other tasks.
[[nodiscard]] constexpr std::optional<engine> block_dim_engine(task_type t) noexcept {
    if (!runs_on_ai_cores(t)) return std::nullopt;
    return engine_of(t);
}

namespace detail {

/// "0.964": 3 decimals, no locale.
inline std::string fixed3(double v) {
    std::array<char, 64> buf{};
    const auto [end, ec] =
        std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, 3);
    return ec == std::errc{} ? std::string(buf.data(), end) : std::string("?");
}

[[nodiscard]] inline bool aligned_format(std::string_view f) noexcept {
    // Fractal (NZ) and C0 formats are already padded to the cube fractal: their innermost
    // dimension as listed is not the innermost run in memory.
    return f.find("FRACTAL") == std::string_view::npos && f.find("C0") == std::string_view::npos;
}

}  // namespace detail

/// Pipes of a row above `threshold`, largest first: "mte2 0.964, mac 0.824", or "-".
[[nodiscard]] inline std::string bound_pipes(const kernel_row& r, double threshold) {
    std::vector<std::pair<double, std::string_view>> over;
    const auto add = [&](const std::optional<double>& v, std::string_view n) {
        if (v && *v > threshold) over.emplace_back(*v, n);
    };
    add(r.aic_mte2_ratio, "aic_mte2");
    add(r.aiv_mte2_ratio, "aiv_mte2");
    add(r.aiv_mte3_ratio, "aiv_mte3");
    add(r.aic_mac_ratio, "aic_mac");
    add(r.aiv_vec_ratio, "aiv_vec");
    add(r.aic_scalar_ratio, "aic_scalar");
    add(r.aiv_scalar_ratio, "aiv_scalar");
    add(r.aic_mte1_ratio, "aic_mte1");
    add(r.aic_fixpipe_ratio, "aic_fixpipe");
    if (over.empty()) return "-";
    std::stable_sort(over.begin(), over.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out;
    for (const auto& [v, n] : over) {
        if (!out.empty()) out += ", ";
        out += n;
        out += ' ';
        out += detail::fixed3(v);
    }
    return out;
}

/// The note of an op faster than the chip's HBM bandwidth (table, csv and json).
inline constexpr std::string_view above_hbm_note = "above HBM peak: L2 or cache";
/// The note of a utilization above 100 % over a span that holds every task: more cycles than the
/// chip's cores x clock can give.
inline constexpr std::string_view chip_mismatch_note =
    "above 100 %: more cycles than this chip's cores x clock give; the profile is from a chip "
    "with more cores or a higher clock (check --chip)";

/// Accumulates rows; `finish` computes the report.
class report_builder {
public:
    explicit report_builder(const chip& c, report_options opt = {}) : chip_(c), opt_(opt) {
        groups_[0].u.label = "cube, AI_CORE tasks (guide §2)";
        groups_[1].u.label = "cube, AI_CORE + MIX tasks";
        groups_[2].u.label = "vector, AI_VECTOR_CORE + MIX tasks";
        groups_[2].u.which = engine::vector;
        for (std::size_t i = 0; i < finding_kind_count; ++i) {
            findings_[i].kind = static_cast<finding_kind>(i);
        }
    }

    void add(const kernel_row& r) {
        ++rows_;  // also the row's ordinal, for flag()
        if (r.step) ++steps_[*r.step];
        const duration d = r.task_duration.value_or(duration{});
        total_ += d;

        // (a) utilization groups
        if (r.task == task_type::ai_core) add_to_group(groups_[0], r, r.aic_total_cycles);
        if (r.task == task_type::ai_core || r.task == task_type::mix_aic ||
            r.task == task_type::mix_aiv)
            add_to_group(groups_[1], r, r.aic_total_cycles);
        if (r.task == task_type::ai_vector_core || r.task == task_type::mix_aic ||
            r.task == task_type::mix_aiv)
            add_to_group(groups_[2], r, r.aiv_total_cycles);

        // (c) time by type
        type_key_.assign(r.op_type).push_back('\x1f');
        type_key_.append(r.task_text);
        auto it = by_type_.find(type_key_);
        if (it == by_type_.end()) {
            it = by_type_.emplace(type_key_, type_agg{r.op_type, r.task_text, 0, {}}).first;
        }
        ++it->second.count;
        it->second.total += d;

        // (e) gaps and waits
        if (r.start && r.task_duration) {
            intervals_.push_back({r.start->ns, r.end()->ns});
        }
        if (r.wait) {
            wait_ += *r.wait;
            ++wait_rows_;
        }

        const bool conflict = r.has_note(note_kind::shape_conflict);
        const std::optional<data_size> bytes = conflict ? std::nullopt : bytes_moved_once(r);
        std::optional<bandwidth> achieved;
        if (bytes && d >= min_rate_time) achieved = *bytes / d;

        // (d) pipes
        const double thr = opt_.pipe_ratio_threshold;
        const auto over = [thr](const std::optional<double>& v) { return v && *v > thr; };
        const bool memory_bound =
            over(r.aic_mte2_ratio) || over(r.aiv_mte2_ratio) || over(r.aiv_mte3_ratio);
        if (memory_bound) {
            flag(finding_kind::memory_bound_op, r, d, [&] { return mte_detail(r); });
        }
        if (over(r.aic_mac_ratio) || over(r.aiv_vec_ratio)) {
            flag(finding_kind::compute_bound_op, r, d, [&] { return bound_pipes(r, thr); });
        }
        if (over(r.aic_scalar_ratio) || over(r.aiv_scalar_ratio)) {
            flag(finding_kind::scalar_bound_op, r, d, [&] { return bound_pipes(r, thr); });
        }

        // (f) AI CPU
        if (r.task == task_type::ai_cpu)
            flag(finding_kind::aicpu_op, r, d, [&] { return dtype_summary(r); });

        // (g) int64 on vector cores
        if (r.task == task_type::ai_vector_core || r.task == task_type::mix_aiv ||
            r.task == task_type::mix_aic) {
            check_int64(r, d);
        }

        // (h) alignment
        if (runs_on_ai_cores(r.task) && !conflict) check_alignment(r, d);

        // (i) block dims
        if (const auto e = block_dim_engine(r.task); e && r.block_dim && *r.block_dim > 0) {
            const int cores = chip_.engine_of(*e).cores;
            const int b = *r.block_dim;
            if (cores > 0 && b > cores && b % cores != 0) {
                const int waves = (b + cores - 1) / cores;
                const double idle =
                    static_cast<double>(waves * cores - b) / static_cast<double>(waves * cores);
                flag(finding_kind::block_tail, r, d, [&] {
                    return std::string("block dim " + std::to_string(b) + " on " +
                                       std::to_string(cores) + " " + std::string(name_of(*e)) +
                                       " cores: " + std::to_string(waves) + " waves, " +
                                       detail::fixed3(idle * 100.0) + " % of core-waves idle");
                });
            } else if (cores > 0 && b < cores) {
                flag(finding_kind::under_filled, r, d, [&] {
                    return std::string("block dim " + std::to_string(b) + " of " +
                                       std::to_string(cores) + " " + std::string(name_of(*e)) +
                                       " cores");
                });
            }
        }

        // (j) bandwidth
        const bandwidth hbm = chip_.memory.hbm_bandwidth;
        if (memory_bound && achieved && hbm.base_value() > 0 &&
            *achieved / hbm < opt_.low_bandwidth_share) {
            flag(finding_kind::low_bandwidth, r, d, [&] {
                return std::string((is_write_only_type(r.op_type)
                                        ? "outputs once (write-only type): "
                                        : "inputs+outputs once: ") +
                                   detail::fixed3(achieved->in(units::GBps)) +
                                   " GB/s = " + detail::fixed3(*achieved / hbm * 100.0) + " % of " +
                                   detail::fixed3(hbm.in(units::GBps)) + " GB/s");
            });
        }

        // reader notes: a row with two unknown dtypes is one row of the finding, both named
        const auto notes_of = [&r](note_kind k) {
            std::string s;
            for (const row_note& n : r.notes)
                if (n.kind == k) s += (s.empty() ? "" : "; ") + n.detail;
            return s;
        };
        if (r.has_note(note_kind::shape_conflict))
            flag(finding_kind::shape_conflict, r, d,
                 [&] { return notes_of(note_kind::shape_conflict); });
        if (r.has_note(note_kind::unknown_dtype))
            flag(finding_kind::unknown_dtype, r, d,
                 [&] { return notes_of(note_kind::unknown_dtype); });

        // top ops
        if (opt_.top_ops > 0) keep_top(r, d, achieved);
    }

    [[nodiscard]] profile_report finish(std::string source = {}, std::string format = {}) {
        profile_report rep;
        rep.source = std::move(source);
        rep.format = std::move(format);
        rep.chip_name = std::string(chip_.name.view());
        rep.rows = rows_;
        rep.total_time = total_;
        rep.steps = steps_;

        for (auto& g : groups_) {
            engine_utilization u = g.u;
            const engine_spec& e = chip_.engine_of(g.u.which);
            u.cores = e.cores;
            u.clock = e.clock;
            if (g.u.tasks > 0) {
                u.seed_span = timestamp{g.last_start} - timestamp{g.first_start};
                u.full_span = timestamp{g.last_end} - timestamp{g.first_start};
                if (u.seed_span.base_value() > 0) {
                    u.seed_utilization =
                        u.cycles / available_cycles(e.clock, core_count{e.cores}, u.seed_span);
                }
                if (u.full_span.base_value() > 0) {
                    u.full_utilization =
                        u.cycles / available_cycles(e.clock, core_count{e.cores}, u.full_span);
                }
            }
            u.note = utilization_note(u);
            rep.utilization.push_back(std::move(u));
        }

        for (auto& [key, t] : by_type_) {
            op_type_time x;
            x.op_type = t.op_type;
            x.task = t.task;
            x.count = t.count;
            x.total = t.total;
            x.share = total_.base_value() > 0 ? t.total / total_ : 0.0;
            rep.by_type.push_back(std::move(x));
        }
        std::stable_sort(rep.by_type.begin(), rep.by_type.end(),
                         [](const auto& a, const auto& b) { return a.total > b.total; });

        rep.top_ops = top_;
        std::sort(rep.top_ops.begin(), rep.top_ops.end(), [](const auto& a, const auto& b) {
            return a.time > b.time || (a.time == b.time && a.line < b.line);
        });

        rep.host = host_summary();

        // Chip-level findings. The seed's filter (AI_CORE tasks) over the span that holds them
        // all: the seed's own span leaves out the last task and can pass 100 % on its own.
        const engine_utilization& seed = rep.utilization[0];
        if (seed.full_utilization && *seed.full_utilization > opt_.compute_bound_utilization) {
            finding& f = findings_[static_cast<std::size_t>(finding_kind::compute_bound)];
            f.rows = seed.tasks;
            f.time = seed.task_time;
            f.evidence = "cube utilization " + detail::fixed3(*seed.full_utilization * 100.0) +
                         " % > " + detail::fixed3(opt_.compute_bound_utilization * 100.0) +
                         " % over " + std::to_string(seed.tasks) +
                         " AI_CORE tasks, first start to last end";
            if (seed.seed_utilization) {
                f.evidence += " (the seed's span, last start - first start: " +
                              detail::fixed3(*seed.seed_utilization * 100.0) + " %)";
            }
            if (!seed.note.empty()) f.evidence += "; " + seed.note;
        }
        if (rep.host.idle_share && *rep.host.idle_share > opt_.host_idle_share) {
            finding& f = findings_[static_cast<std::size_t>(finding_kind::host_bound)];
            f.rows = rep.host.gaps;
            f.time = rep.host.idle;
            f.evidence = "device idle " + detail::fixed3(*rep.host.idle_share * 100.0) + " % of " +
                         detail::fixed3(rep.host.window.in(units::us)) + " us; " +
                         std::to_string(rep.host.gaps_longer_than_next) + " of " +
                         std::to_string(rep.host.gaps) +
                         " gaps longer than the task after them; total wait " +
                         detail::fixed3(rep.host.total_wait.in(units::us)) + " us";
        }
        for (auto& f : findings_) {
            if (f.rows == 0) continue;
            if (f.evidence.empty()) {
                f.evidence = std::to_string(f.rows) + " rows, " +
                             detail::fixed3(f.time.in(units::us)) + " us (" +
                             detail::fixed3(total_.base_value() > 0 ? f.time / total_ * 100.0 : 0) +
                             " % of device time)";
            }
            std::sort(f.examples.begin(), f.examples.end(), [](const auto& a, const auto& b) {
                return a.time > b.time || (a.time == b.time && a.line < b.line);
            });
            rep.findings.push_back(f);
        }
        return rep;
    }

private:
    struct group {
        engine_utilization u;
        std::int64_t first_start = 0;
        std::int64_t last_start = 0;
        std::int64_t last_end = 0;
    };
    struct type_agg {
        std::string op_type;
        std::string task;
        std::size_t count = 0;
        duration total{};
    };
    struct interval {
        std::int64_t begin;
        std::int64_t end;
    };

    /// Why a utilization above 100 % is not one (empty when neither value passes 100 %).
    static std::string utilization_note(const engine_utilization& u) {
        if (u.full_utilization && *u.full_utilization > 1.0) return std::string(chip_mismatch_note);
        if (u.seed_utilization && *u.seed_utilization > 1.0) {
            return "seed span above 100 %: it ends at the last start, " +
                   detail::fixed3((u.full_span - u.seed_span).in(units::us)) +
                   " us before the last end, so the last task's cycles have no time; first "
                   "start to last end: " +
                   (u.full_utilization ? detail::fixed3(*u.full_utilization * 100.0) : "-") + " %";
        }
        return {};
    }

    void add_to_group(group& g, const kernel_row& r, const std::optional<cycle_count>& cyc) {
        if (!r.start || !r.task_duration) return;
        if (g.u.tasks == 0) {
            g.first_start = g.last_start = r.start->ns;
            g.last_end = r.end()->ns;
        }
        ++g.u.tasks;
        g.u.task_time += *r.task_duration;
        if (cyc) g.u.cycles += *cyc;
        g.first_start = std::min(g.first_start, r.start->ns);
        g.last_start = std::max(g.last_start, r.start->ns);
        g.last_end = std::max(g.last_end, r.end()->ns);
    }

    std::string mte_detail(const kernel_row& r) const {
        std::string s;
        const double thr = opt_.pipe_ratio_threshold;
        const auto add = [&s, thr](const std::optional<double>& v, std::string_view n) {
            if (!v || *v <= thr) return;
            if (!s.empty()) s += ", ";
            s += n;
            s += ' ';
            s += detail::fixed3(*v);
        };
        add(r.aic_mte2_ratio, "aic_mte2");
        add(r.aiv_mte2_ratio, "aiv_mte2");
        add(r.aiv_mte3_ratio, "aiv_mte3");
        return s;
    }

    static std::string dtype_summary(const kernel_row& r) {
        const auto list = [](const std::vector<tensor_dtype>& t) {
            std::string s;
            for (const auto& x : t) s += (s.empty() ? "" : ";") + x.text;
            return s.empty() ? std::string("-") : s;
        };
        return "inputs " + list(r.input_types) + " -> outputs " + list(r.output_types);
    }

    /// Counts the row under `k` and keeps it as an example when it is among the longest;
    /// `make_detail` runs only then (most flagged rows of a large profile are not kept). A row
    /// counts once per finding: a second call for the same row and kind does nothing.
    template <class F>
    void flag(finding_kind k, const kernel_row& r, duration d, F&& make_detail) {
        const auto i = static_cast<std::size_t>(k);
        if (flagged_at_[i] == rows_) return;
        flagged_at_[i] = rows_;
        finding& f = findings_[i];
        ++f.rows;
        f.time += d;
        if (opt_.max_examples == 0) return;
        if (f.examples.size() < opt_.max_examples) {
            f.examples.push_back({r.line, r.name, r.op_type, d, make_detail()});
            return;
        }
        // Replace the shortest kept example when this one is longer.
        auto shortest =
            std::min_element(f.examples.begin(), f.examples.end(),
                             [](const auto& a, const auto& b) { return a.time < b.time; });
        if (shortest->time < d) *shortest = {r.line, r.name, r.op_type, d, make_detail()};
    }

    void check_int64(const kernel_row& r, duration d) {
        // Inputs and outputs are judged apart: Equal on int64 inputs writes a large bool
        // output (guide §7: [1,4000] vs [400,1]), and the slow path is in reading the inputs.
        struct share {
            double all = 0;
            double wide = 0;
        };
        const auto scan = [](const std::vector<tensor_shape>& s,
                             const std::vector<tensor_dtype>& t) {
            share x;
            if (s.size() != t.size()) return x;
            for (std::size_t i = 0; i < s.size(); ++i) {
                const auto n = s[i].elements();
                if (!n || !t[i].type) continue;
                const double b = static_cast<double>(*n) * size_of(*t[i].type).in(units::B);
                x.all += b;
                if (!vector_native(*t[i].type) && is_integer(*t[i].type)) x.wide += b;
            }
            return x;
        };
        const share in = scan(r.input_shapes, r.input_types);
        const share out = scan(r.output_shapes, r.output_types);
        // A Cast from int64 to a vector-native type is the finding's own fix, not a case of it.
        if (r.op_type == "Cast" && out.wide == 0 && out.all > 0) return;
        const auto hit = [this](const share& x) {
            return x.wide >= opt_.int64_min_bytes && x.wide / x.all >= opt_.int64_byte_share;
        };
        if (!hit(in) && !hit(out)) return;
        const share& w = hit(in) ? in : out;
        flag(finding_kind::int64_on_vector, r, d, [&] {
            return std::string(detail::fixed3(w.wide / w.all * 100.0) + " % of the " +
                               (&w == &in ? "input" : "output") + " bytes (" +
                               detail::fixed3(w.all) + " B) in int64/uint64");
        });
    }

    void check_alignment(const kernel_row& r, duration d) {
        const double align = chip_.alignment.in(units::B);
        if (align <= 0) return;
        std::string first;
        std::size_t bad = 0;
        const auto scan = [&](const std::vector<tensor_shape>& s,
                              const std::vector<tensor_dtype>& t,
                              const std::vector<std::string>& fmt, std::string_view side) {
            if (s.size() != t.size()) return;
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (s[i].scalar() || !t[i].type) continue;
                if (i < fmt.size() && !detail::aligned_format(fmt[i])) continue;
                const auto n = s[i].elements();
                const double elem = size_of(*t[i].type).in(units::B);
                // A tensor of at most one alignment unit is one short move whatever its shape
                // (the [1] scalars broadcast into Mul): nothing to fix there.
                if (!n || static_cast<double>(*n) * elem <= align) continue;
                const double run = static_cast<double>(innermost_extent(s[i])) * elem;
                if (std::fmod(run, align) != 0.0) {
                    if (bad == 0) {
                        first = std::string(side) + " " + std::to_string(i) + " " +
                                to_string(s[i]) + " " + t[i].text + ": innermost run " +
                                detail::fixed3(run) + " B";
                    }
                    ++bad;
                }
            }
        };
        scan(r.input_shapes, r.input_types, r.input_formats, "input");
        scan(r.output_shapes, r.output_types, r.output_formats, "output");
        if (bad > 0) {
            if (bad > 1) first += " (+" + std::to_string(bad - 1) + " more tensors)";
            flag(finding_kind::misaligned_move, r, d, [&] { return std::move(first); });
        }
    }

    void keep_top(const kernel_row& r, duration d, const std::optional<bandwidth>& achieved) {
        if (top_.size() == opt_.top_ops) {
            auto shortest =
                std::min_element(top_.begin(), top_.end(),
                                 [](const auto& a, const auto& b) { return a.time < b.time; });
            if (!(shortest->time < d)) return;
            top_.erase(shortest);
        }
        op_entry e;
        e.line = r.line;
        e.name = r.name;
        e.op_type = r.op_type;
        e.task = r.task_text;
        e.time = d;
        e.block_dim = r.block_dim;
        e.cube_utilization_pct = recomputed_cube_utilization_pct(r, chip_);
        e.profiled_cube_utilization_pct = r.cube_utilization_pct;
        e.bound = bound_pipes(r, opt_.pipe_ratio_threshold);
        e.achieved = achieved;
        const bandwidth hbm = chip_.memory.hbm_bandwidth;
        if (achieved && hbm.base_value() > 0) {
            // Faster than HBM can deliver: part of the data came from L2 (or the bytes were
            // cached), so a share of HBM above 100 % would mean nothing.
            if (*achieved > hbm) {
                e.above_hbm_peak = true;
            } else {
                e.hbm_share = *achieved / hbm;
            }
        }
        const auto note = [&e](std::string_view n) {
            if (!e.notes.empty()) e.notes += "; ";
            e.notes += n;
        };
        for (const row_note& n : r.notes) note(name_of(n.kind));
        if (e.above_hbm_peak) note(above_hbm_note);
        if (e.cube_utilization_pct && *e.cube_utilization_pct > 100.0) note(chip_mismatch_note);
        top_.push_back(std::move(e));
    }

    host_bound_summary host_summary() {
        host_bound_summary h;
        h.total_wait = wait_;
        h.wait_rows = wait_rows_;
        h.timed_tasks = intervals_.size();
        if (intervals_.empty()) return h;
        std::sort(intervals_.begin(), intervals_.end(), [](const interval& a, const interval& b) {
            return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
        });
        // Differences through timestamp's `-`: exact in int64 where they fit, in doubles where a
        // damaged file's times span more than int64 (fuzz_msprof_db found 2^63 - 1 minus -9e18
        // here). Each busy stretch is an integer number of ns below 2^53 in any real profile, so
        // their sum in doubles is exact too.
        const std::int64_t first = intervals_.front().begin;
        std::int64_t cur_end = intervals_.front().end;
        std::int64_t last_end = cur_end;
        duration busy{};
        std::int64_t cur_begin = first;
        for (std::size_t i = 1; i < intervals_.size(); ++i) {
            const interval& x = intervals_[i];
            if (x.begin > cur_end) {
                busy += timestamp{cur_end} - timestamp{cur_begin};
                ++h.gaps;
                if (timestamp{x.begin} - timestamp{cur_end} > timestamp{x.end} - timestamp{x.begin})
                    ++h.gaps_longer_than_next;
                cur_begin = x.begin;
                cur_end = x.end;
            } else {
                cur_end = std::max(cur_end, x.end);
            }
            last_end = std::max(last_end, x.end);
        }
        busy += timestamp{cur_end} - timestamp{cur_begin};
        h.window = timestamp{last_end} - timestamp{first};
        h.busy = busy;
        h.idle = h.window - h.busy;
        if (h.window.base_value() > 0) h.idle_share = h.idle / h.window;
        return h;
    }

    chip chip_;
    report_options opt_;
    std::size_t rows_ = 0;
    std::map<int, std::size_t> steps_;
    duration total_{};
    std::array<group, 3> groups_{};
    std::map<std::string, type_agg, std::less<>> by_type_;  // key: type '\x1f' task
    std::string type_key_;
    std::vector<interval> intervals_;
    duration wait_{};
    std::size_t wait_rows_ = 0;
    std::array<finding, finding_kind_count> findings_{};
    std::array<std::size_t, finding_kind_count> flagged_at_{};  // ordinal of the last row flagged
    std::vector<op_entry> top_;
};

/// Reads a profile stream and reports on it for chip `c`.
[[nodiscard]] inline profile_report build_report(std::istream& in, std::string source,
                                                 const chip& c, report_options opt = {},
                                                 kernel_reader_options ropt = {}) {
    kernel_details_reader reader(in, source, ropt);
    report_builder b(c, opt);
    kernel_row row;
    while (reader.next(row)) b.add(row);
    profile_report r = b.finish(std::move(source), std::string(name_of(reader.header().format)));
    r.skipped = reader.skipped();
    r.skipped_count = reader.skipped_count();
    return r;
}

/// The report over every file of `s` (the slices of one op_summary read as one table).
[[nodiscard]] inline profile_report build_report(const profile_source& s, const chip& c,
                                                 report_options opt = {},
                                                 kernel_reader_options ropt = {}) {
    report_builder b(c, opt);
    std::string format;
    std::vector<skipped_row> skipped;
    std::size_t skipped_count = 0;
    for_each_source_file(s, ropt, [&](kernel_details_reader& reader) {
        kernel_row row;
        while (reader.next(row)) b.add(row);
        if (format.empty()) format = std::string(name_of(reader.header().format));
        skipped.insert(skipped.end(), reader.skipped().begin(), reader.skipped().end());
        skipped_count += reader.skipped_count();
    });
    profile_report r = b.finish(s.name(), std::move(format));
    r.skipped = std::move(skipped);
    r.skipped_count = skipped_count;
    return r;
}

[[nodiscard]] inline profile_report build_report_file(const std::string& path, const chip& c,
                                                      report_options opt = {},
                                                      kernel_reader_options ropt = {}) {
    std::ifstream f = open_input(path, "build_report");
    return build_report(f, path, c, opt, ropt);
}

}  // namespace perfcast::profile
