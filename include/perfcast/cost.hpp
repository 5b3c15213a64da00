// perfcast/cost.hpp: latency, cores held and bound of one op on k of N cores.
//
// latency = head + body, head = launch + per_core x b, b = min(k, work units): an op never holds
// more cores than it can fill. body overlaps compute and memory:
//   body = max(compute, memory) + (1 - overlap) x min(compute, memory)
// compute = ceil(units / b) x ops per unit / (ops per cycle per core x clock x efficiency): the
//   core with the most units sets the time (tiling tail), cube units are padded to the fractal.
// memory  = aligned bytes / min(b x per-core rate x clock, HBM bandwidth x efficiency) with each
//   contiguous run rounded up to the alignment unit, a penalty for misaligned runs, L2 re-reads
//   at the per-core L2 rate, and contention of b cores on hot rows.
// docs/model.md explains each term and where each default comes from.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "chip.hpp"
#include "enum_table.hpp"
#include "error.hpp"
#include "op.hpp"
#include "units.hpp"

namespace perfcast {

/// The model's tunable parameters. Defaults are assumptions unless a source is named; every one
/// can be fitted with `perfcast calibrate`.
struct model_params {
    /// Cube pipeline efficiency: share of cycles the cube issues MACs on a large GEMM.
    /// Assumption 0.9: the MAC pipe's busy share (aic_mac_ratio) of the large GEMMs in the real
    /// 910B3 profile (tests/data/profiles/kernel_details_910B3_matmul.csv) reaches 0.82 with the
    /// MTE2 pipe busy 96 % of the time, i.e. memory stalls included; 0.9 leaves those stalls to
    /// the memory term. Calibrate with `perfcast calibrate`.
    double cube_efficiency = 0.9;
    /// Vector pipeline efficiency. Assumption.
    double vector_efficiency = 0.8;
    /// Share of the chip's HBM bandwidth that streaming reaches. Assumption 0.8 (guide §4 gives
    /// "about 80 % of theory" for PCIe; taken as the same order for HBM until calibrated).
    /// Calibration may return a value above 1: the preset's HBM figure (itself an assumption for
    /// every Ascend chip) is then lower than what the measured ops moved. Allowed up to 2.
    double hbm_efficiency = 0.8;
    /// Share of the shorter of compute and memory hidden under the longer (double buffering).
    /// Assumption 0.9: in the 910B3 profile mac and mte2 busy ratios add up to 1.5 .. 1.8, so at
    /// least half, and typically most, of the shorter pipe hides under the longer.
    double overlap = 0.9;
    /// Rate factor of a move whose contiguous run is not a multiple of the alignment unit
    /// (guide §5: "moves that are not 32-byte aligned get low bandwidth"). Assumption 0.5.
    double misaligned_efficiency = 0.5;
    /// Extra memory time per additional core when all accesses hit hot rows (guide §12:
    /// "more cores, more conflicts"). Assumption 0.1 per core.
    double contention_per_core = 0.1;
    /// Share of L2 an op's inputs may fill and still be found there (the rest of L2 holds other
    /// tensors). Assumption 0.9: on the 910B1 profile an Add reading 2 x 100.7 MB (= the 192 MiB
    /// L2) streamed at HBM speed while a RealDiv reading 2 x 69.9 MB ran at 2.9 TB/s.
    double l2_resident_share = 0.9;
    /// Share of the chip's per-core L2 read rate (chip::memory.l2_read_rate) that loads reach:
    /// the GEMM tile search's load term and every op's L2 load time. 1: the presets' rates as
    /// their sources give them (the A100's from its whitepaper; the H100's and the Ascend chips'
    /// are assumptions, chips/). Calibration fits it when its rows inform it (cube rows whose
    /// predicted time the rate moves, profile/calibrate_stages.hpp). Allowed up to 2, as the
    /// HBM efficiency is: a preset's rate may be lower than what the measured ops moved.
    double l2_efficiency = 1.0;
    /// HBM time of the bytes of an op that both reads from and writes to HBM, relative to bytes
    /// that only flow one way, at full mix (as many bytes written as read; less mixed traffic
    /// pays in proportion, hbm_mix_weight). The bus turns around between reads and writes; an op
    /// that only reads (a reduction) or only writes (a fill) never pays it. Assumption 1 (no
    /// cost) until calibrated, which fits it when rows mix (profile/calibrate_stages.hpp): on the
    /// 910B1 profile the reductions that only read 302 MB stream at 1.67 TB/s, the chains that
    /// read and write at 1.1-1.35 TB/s over their bytes, a Cast that reads 302 MB and writes 151
    /// MB no faster (359 us) than one that reads 151 MB and writes 302 MB (335 us).
    /// Allowed in [min_hbm_mix_cost, max_hbm_mix_cost]: below 0.5 an op's HBM time, reads +
    /// writes + 2 (cost - 1) x the lesser of them, would fall as it writes more.
    double hbm_mix_cost = 1.0;
    static constexpr double min_hbm_mix_cost = 0.5;
    static constexpr double max_hbm_mix_cost = 4.0;
    /// The least efficiency or rate factor validate() accepts (cube, vector, HBM, L2,
    /// misaligned): 0.01 % of a rate. Less is a typing or unit mistake rather than a kernel
    /// (1e-320 once priced an op at inf); calibration's search stays at or above it too.
    static constexpr double min_efficiency = 1e-4;
    /// Extra head cost of a kernel's first run (first_run ops: profile/context.hpp), launch +
    /// per core: every core fetches the kernel's instructions cold. Assumption 0 until calibrated:
    /// on the 910B1 profile calibration finds about 0.1 us per core (a 48-core reduction of 16 KB
    /// takes 8-9 us on its first run and 3.6 us on the next ones).
    duration first_run_launch{};
    duration first_run_per_core{};

    /// Per-engine head cost (launch + per_core x b) replacing the chip's overhead figures when
    /// `set`: what calibration fits, since launch costs differ between cube, vector and AI CPU
    /// kernels. Indexed by engine (cube, vector, aicpu).
    struct head_override {
        bool set = false;
        duration launch{};
        duration per_core{};
        [[nodiscard]] friend constexpr bool operator==(const head_override&,
                                                       const head_override&) = default;
    };
    std::array<head_override, 3> head{};

    [[nodiscard]] constexpr const head_override& head_of(engine e) const noexcept {
        return head[static_cast<std::size_t>(e)];
    }

    [[nodiscard]] friend constexpr bool operator==(const model_params&,
                                                   const model_params&) = default;
};

/// The default parameters, one object: `cost(c, o)` binds its default argument to it instead of
/// building a fresh model_params (some 170 bytes) on every call.
inline constexpr model_params default_model_params{};

namespace detail {
/// The range of one of model_params' numeric fields: [least, most], or [least, most) when
/// `most_excluded`, and the words validate() gives for it. One table for validate()'s checks
/// and cost()'s guard (in_range), so the two cannot drift.
struct param_range {
    std::string_view field;
    double model_params::*member;
    double least;
    double most;
    bool most_excluded;
    std::string_view expected;
    [[nodiscard]] constexpr bool holds(double v) const noexcept {
        return (v >= least) & (most_excluded ? v < most : v <= most);
    }
};
inline constexpr double min_eff = model_params::min_efficiency;
inline constexpr std::array<param_range, 9> param_ranges{{
    {"cube_efficiency", &model_params::cube_efficiency, min_eff, 1, false, "a share in [1e-4, 1]"},
    {"vector_efficiency", &model_params::vector_efficiency, min_eff, 1, false,
     "a share in [1e-4, 1]"},
    {"hbm_efficiency", &model_params::hbm_efficiency, min_eff, 2, false, "a factor in [1e-4, 2]"},
    {"l2_efficiency", &model_params::l2_efficiency, min_eff, 2, false, "a factor in [1e-4, 2]"},
    {"hbm_mix_cost", &model_params::hbm_mix_cost, model_params::min_hbm_mix_cost,
     model_params::max_hbm_mix_cost, false, "a factor in [0.5, 4]"},
    {"overlap", &model_params::overlap, 0, 1, false, "a share in [0, 1]"},
    {"misaligned_efficiency", &model_params::misaligned_efficiency, min_eff, 1, false,
     "a share in [1e-4, 1]"},
    {"l2_resident_share", &model_params::l2_resident_share, 0, 1, false, "a share in [0, 1]"},
    {"contention_per_core", &model_params::contention_per_core, 0, 1e6, true,
     "a value in [0, 1e6)"},
}};
/// The range of every time field (first-run and head times): [0, 1e9) us.
[[nodiscard]] constexpr bool time_in_range(duration t) noexcept {
    const double us = t.in(units::us);
    return (us >= 0) & (us < 1e9);
}
inline constexpr std::string_view time_expected = "a time in [0, 1e9) us";

/// 1 when every field of param_ranges is in range, else 0; the table unrolled at compile time:
/// GCC 12 -O2 keeps a loop over it a loop, loading each member pointer and bound at run time;
/// unrolled, it compiles to the same instructions as the nine comparisons written out. In
/// unsigned, as in_range: Clang warns of `&` between bool calls (-Wbitwise-instead-of-logical),
/// and `&&` would branch.
template <std::size_t... I>
[[nodiscard]] constexpr unsigned all_in_range(const model_params& p,
                                              std::index_sequence<I...>) noexcept {
    return (1u & ... & static_cast<unsigned>(param_ranges[I].holds(p.*param_ranges[I].member)));
}

/// Whether validate(p) passes, as one branch-free test (no message): cost()'s guard.
[[nodiscard]] constexpr bool in_range(const model_params& p) noexcept {
    const auto bit = [](bool b) { return static_cast<unsigned>(b); };
    unsigned ok = bit(time_in_range(p.first_run_launch)) &
                  bit(time_in_range(p.first_run_per_core)) &
                  all_in_range(p, std::make_index_sequence<param_ranges.size()>{});
    // An unset head's times are not read (in constant evaluation they may be uninitialised).
    for (const auto& h : p.head)
        if (h.set) ok &= bit(time_in_range(h.launch)) & bit(time_in_range(h.per_core));
    return ok != 0;
}
// cost() skips the guard for the defaults on the strength of this.
static_assert(in_range(default_model_params));
}  // namespace detail

/// Checks a parameter set: efficiencies in [min_efficiency, 1] (HBM and L2 up to 2), overlap in
/// [0, 1], contention >= 0, times in [0, 1e9) us (detail::param_ranges).
constexpr const model_params& validate(const model_params& p) {
    constexpr std::string_view where = "validate(model_params)";
    for (const detail::param_range& r : detail::param_ranges)
        PERFCAST_EXPECTS(r.holds(p.*r.member), where, r.field, p.*r.member, r.expected);
    const auto check_time = [&](duration t, std::string_view field) {
        PERFCAST_EXPECTS(detail::time_in_range(t), where, field, t.in(units::us),
                         detail::time_expected);
    };
    check_time(p.first_run_launch, "first_run_launch");
    check_time(p.first_run_per_core, "first_run_per_core");
    for (const auto& h : p.head) {
        if (!h.set) continue;
        check_time(h.launch, "head.launch");
        check_time(h.per_core, "head.per_core");
    }
    return p;
}

enum class bound_kind : unsigned char { compute, memory, overhead };

inline constexpr std::array<enum_entry<bound_kind>, 3> bound_kind_names{{
    {bound_kind::compute, "compute"},
    {bound_kind::memory, "memory"},
    {bound_kind::overhead, "overhead"},
}};
static_assert(covers_enum<bound_kind_names>());

[[nodiscard]] constexpr std::string_view name_of(bound_kind b) noexcept {
    return name_in(bound_kind_names, b);
}

/// What one op costs under a core limit.
struct op_cost {
    duration latency{};
    int cores = 0;          // cores held (b)
    duration core_time{};   // cores x latency: the resource a core split saves (guide §12)
    duration head{};        // launch + per-core overhead
    duration compute{};
    duration memory{};
    bound_kind bound = bound_kind::compute;
    double utilization = 0;  // useful ops / (b x latency x per-core peak)
    data_size bytes{};       // bytes read + written (unique)
    flop_count flops{};
    [[nodiscard]] friend constexpr bool operator==(const op_cost&, const op_cost&) = default;
};

namespace detail {

/// Bytes after rounding each contiguous run up to the alignment unit, and the rate factor.
struct aligned_traffic {
    double factor;       // aligned bytes / bytes
    double rate_factor;  // 1, or the misaligned efficiency
};

constexpr aligned_traffic alignment_of(data_size run, data_size unit,
                                       const model_params& p) noexcept {
    const double r = run.in(units::B);
    const double u = unit.in(units::B);
    // Past 2^53 bytes a run is whole units for any practical unit (and the casts below stay
    // defined).
    if (r <= 0 || u <= 0 || r > 9.0e15 || u > 9.0e15) return {1.0, 1.0};
    const auto runs = static_cast<std::int64_t>(r);  // runs are whole bytes
    const auto ub = static_cast<std::int64_t>(u);
    // The remainder by a mask for a power-of-two unit (every preset's: 32 B), no division.
    const std::int64_t rest = (ub & (ub - 1)) == 0 ? runs & (ub - 1) : runs % ub;
    const std::int64_t rounded = rest == 0 ? runs : runs - rest + ub;
    // An aligned whole run gives 1 (rounded / r exactly), without the division.
    const double factor =
        static_cast<double>(rounded) == r ? 1.0 : static_cast<double>(rounded) / r;
    return {factor, rest == 0 ? 1.0 : p.misaligned_efficiency};
}

/// What the GEMM tile search and split-K change in a cube op. cost_terms prices an op with these
/// in place of its own fields, so that cost() prices the search's winner without building a
/// copy of the op (a few hundred bytes, copied twice: a third of a GPU GEMM's cost() call).
/// `partials`: split-K's fp32 partial sums, written and read back (0: no split).
/// `per_core_units`: the busiest core's units when the search knows them (its waves), else 0.
/// `extra_head`: head beyond the op's own (an element walk's, `walked`); `run`: the contiguous
/// run the memory term rounds (the op's, or a whole alignment unit for a transposing walk).
struct tiling {
    std::int64_t work_units = 1;
    double ops_per_unit = 0;
    data_size reread{};
    data_size partials{};
    std::int64_t per_core_units = 0;
    duration extra_head{};
    data_size run{};
    double heaviest = 1;
};

/// The op's own tiling.
[[nodiscard]] constexpr tiling as_given(const op& o) noexcept {
    return {o.work_units, o.ops_per_unit, o.reread,       data_size{}, 0,
            duration{},   o.run,          o.heaviest_unit};
}

constexpr bandwidth min_bw(bandwidth a, bandwidth b) noexcept { return a < b ? a : b; }
constexpr duration max_d(duration a, duration b) noexcept { return a < b ? b : a; }
constexpr duration min_d(duration a, duration b) noexcept { return a < b ? a : b; }
/// An op's body before its floors: the longer of compute and memory, plus the share of the
/// shorter that does not overlap it (model_params::overlap). perfcast op prints what a latency
/// floor adds past it (floor_us).
constexpr duration overlapped_body(duration compute, duration memory, double overlap) noexcept {
    return max_d(compute, memory) + (1.0 - overlap) * min_d(compute, memory);
}

}  // namespace detail

namespace detail {
/// The weight of each byte of an op's HBM traffic, `reads` and `writes` of it (model_params::
/// hbm_mix_cost): 1 + (cost - 1) x the share of the traffic that alternates direction, twice
/// the lesser direction's share (0 for reads or writes alone, 1 for as many of each).
/// Proportional, an assumption with no constant of its own: on the 910B1 profile's hold-out the
/// full cost at any mix, or from a lesser share of 0.1 or 0.25, scored within 0.1 point of it
/// (docs/validation.md, "Reads and writes mixed at the HBM").
[[nodiscard]] constexpr double hbm_mix_weight(data_size reads, data_size writes,
                                              double cost) noexcept {
    const data_size both = reads + writes;
    if (!(both > data_size{})) return 1.0;
    const data_size lesser = reads < writes ? reads : writes;
    return 1.0 + (cost - 1.0) * 2.0 * (lesser / both);
}
/// memory_time (below) of `o` in tiling `t`.
[[nodiscard]] constexpr duration memory_time_of(const chip& c, const op& o, const tiling& t, int b,
                                                const model_params& p) noexcept {
    const frequency clk = c.engine_of(o.eng).clock;
    const double cores = static_cast<double>(b);
    const auto al = detail::alignment_of(t.run, c.alignment, p);
    const data_size reads = (o.bytes_read + t.partials) * al.factor;
    const data_size writes = (o.bytes_written + t.partials) * al.factor;
    const data_size resident = l2_resident_size(c.memory) * p.l2_resident_share;
    // Share of the reads found in L2: the op's own figure when its producers are known
    // (profile/context.hpp), else all of them when they fit in the resident part of L2 and none
    // when they do not.
    const double read_hit = o.l2_input_share >= 0 ? (o.l2_input_share < 1 ? o.l2_input_share : 1.0)
                            : reads <= resident  ? 1.0
                                                 : 0.0;
    const bool writes_in_l2 = writes <= resident;
    const bandwidth hbm = c.memory.hbm_bandwidth * p.hbm_efficiency * al.rate_factor;
    const bandwidth read_bw = c.memory.core_read_rate * clk * cores * al.rate_factor;
    const bandwidth write_bw = c.memory.core_write_rate * clk * cores * al.rate_factor;
    duration load = reads / read_bw;
    if (c.memory.l2_read_rate > bytes_per_cycle{}) {
        const bandwidth l2_bw =
            c.memory.l2_read_rate * clk * cores * (al.rate_factor * p.l2_efficiency);
        load = max_d(load, (reads + t.reread) / l2_bw);
    }
    duration time = max_d(load, writes / write_bw);
    // HBM traffic: the reads not in L2, writes too large for L2, and the dirty lines of earlier
    // writes that this op's traffic evicts from L2 (known from a profile's order, else 0). Where
    // the order is known (l2_input_share set), the op streams its reads and writes together and
    // ends with the last `resident` bytes of its traffic in L2, dirty in the share it wrote:
    // those are charged to the later op whose traffic evicts them (that op's writeback), the
    // rest of its writes go to HBM now. Without the order nothing charges them later, so a write
    // too large for L2 is charged here whole.
    // A deployment's order (l2_sequence.hpp) sets l2_input_share too, and no writeback: it says
    // instead whether every byte written reaches HBM (its inference's working set does not fit
    // in L2), and then the op pays for all of its writes.
    const data_size moved = reads + writes;
    const bool order_known = o.l2_input_share >= 0;
    const data_size written_through =
        o.writes_reach_hbm ? writes
        : order_known      ? (moved > resident ? writes * (1.0 - resident / moved) : data_size{})
                           : (writes_in_l2 ? data_size{} : writes);
    const data_size hbm_reads = reads * (1.0 - read_hit);
    const data_size hbm_writes = written_through + o.writeback;
    const data_size through_hbm = hbm_reads + hbm_writes;
    if (through_hbm > data_size{})
        time =
            max_d(time, through_hbm * hbm_mix_weight(hbm_reads, hbm_writes, p.hbm_mix_cost) / hbm);
    const double contention = 1.0 + p.contention_per_core * o.hot_fraction * (cores - 1.0);
    return time * contention;
}
}  // namespace detail

/// Memory time of `o` on `b` cores. Loads (MTE2) and stores (MTE3 / fixpipe) are separate pipes
/// that run side by side, so the time is the longer of the two. Every load passes from L2 to a
/// core at the per-core L2 rate (tiling re-reads come from L2 too). An op whose inputs fit in
/// L2 (l2_resident_share of it) finds them there, left by its producer, and its outputs are
/// written back later: it moves at the cores' own rates. Inputs (or outputs) larger than that
/// stream through HBM (an LRU cache gets no hits on a cyclic stream larger than itself): such
/// loads (stores) are capped by HBM x efficiency and share it. When the op knows which share of
/// its reads is in L2 (`op::l2_input_share`, from the producers in a profile or a deployment's
/// order), the rest of its reads come from HBM whatever their size; `op::writeback` (dirty lines
/// of earlier writes that the op's traffic evicts, from a profile's order) is HBM traffic too, and
/// of its writes only the part its own traffic pushes out of L2 during the op (the rest stays
/// dirty, charged to whoever evicts it), or all of them when `op::writes_reach_hbm` (a
/// deployment's inference that does not fit in L2, l2_sequence.hpp). An op whose HBM traffic
/// mixes reads and writes pays `hbm_mix_cost` on it in proportion to the mix (hbm_mix_weight).
/// Each contiguous run is rounded up to the alignment unit, a misaligned run moves at a reduced
/// rate, and b cores on hot rows conflict (contention grows with b). Sharing HBM and L2 between
/// streams is card.hpp's business.
[[nodiscard]] constexpr duration memory_time(
    const chip& c, const op& o, int b, const model_params& p = default_model_params) noexcept {
    return detail::memory_time_of(c, o, detail::as_given(o), b, p);
}

/// Smallest K chunk a split-K GEMM gives one core: 256 (an assumption: 16 fractals of K 16;
/// calibrate with a measured skinny GEMM).
inline constexpr std::int64_t split_k_chunk = 256;

/// Whether op `o` waits for its first load, paying the chip's load latency in its head
/// (chip::overhead.load_latency): a kernel that reads, on the cube and vector engines. A fill
/// (nothing read) does not, nor does an AI CPU op (its launch holds its own wait).
[[nodiscard]] constexpr bool waits_for_load(const op& o) noexcept {
    return o.bytes_read > data_size{} && o.eng != engine::aicpu;
}
/// The load latency op `o` pays in its head on chip `c` (waits_for_load), else 0.
[[nodiscard]] constexpr duration load_latency_of(const chip& c, const op& o) noexcept {
    return waits_for_load(o) ? c.overhead.load_latency : duration{};
}

/// The thread blocks a GPU launches for a reduction of `rows` contiguous rows of `length`
/// elements each (one output per row), as PyTorch's reduce kernel configures them
/// (pytorch/pytorch aten/src/ATen/native/cuda/Reduce.cuh, setReduceConfig and
/// ReduceConfig::set_block_dimension; restated, not copied): at most 512 threads a block; a row of
/// 128 elements or more is read in vectors, of 8 elements for 16-bit data (PyTorch's fp16 and bf16
/// sum and mean kernels: `ReduceOp<c10::BFloat16, ..., 4, 8>` in the H200 traces; its max, min
/// and norms read 4, not told apart here) and of 4 otherwise; a 32-lane warp (fewer for a short
/// row) across it, and up to 512 / lanes rows a block; a thread left with at least min(16 x rows a
/// block, 256) values splits its row across the block's warps instead (one row a block), and such a
/// block still left with 256 or more a thread, on a grid no larger than `sms` x (threads an SM
/// keeps / threads a block), splits it across blocks too. `element_bytes`: the input's element
/// size; `sms`: the chip's SMs; `threads_per_sm`: chip::overhead.core_threads. Not modelled:
/// PyTorch's launches of inputs past 2^31 elements in parts, and its cap of 65535 blocks on the
/// split across blocks (grid.y).
struct gpu_reduce_launch {
    std::int64_t blocks = 1;             // thread blocks in the grid
    std::int64_t threads = 1;            // threads a block
    std::int64_t lanes = 1;              // of them across one row (the block's x size)
    std::int64_t values_per_thread = 1;  // elements each thread sums
};
[[nodiscard]] constexpr gpu_reduce_launch reduce_launch_of(std::int64_t rows, std::int64_t length,
                                                           std::int64_t element_bytes,
                                                           std::int64_t sms,
                                                           std::int64_t threads_per_sm) noexcept {
    if (rows < 1 || length < 1 || element_bytes < 1 || sms < 1 || threads_per_sm < 1) return {};
    constexpr std::int64_t max_threads = 512;
    constexpr std::int64_t warp = 32;
    // The largest power of two not above v (v >= 1).
    const auto floor_pow2 = [](std::int64_t v) {
        return static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(v)));
    };
    const std::int64_t vector = element_bytes == 2 ? 8 : 4;
    const std::int64_t d0 = length >= 128 ? length / vector : length;  // vectors along the row
    const std::int64_t p0 = d0 < max_threads ? floor_pow2(d0) : max_threads;
    const std::int64_t p1 = rows < max_threads ? floor_pow2(rows) : max_threads;
    std::int64_t lanes = p0 < warp ? p0 : warp;
    const std::int64_t block_rows = p1 < max_threads / lanes ? p1 : max_threads / lanes;
    lanes = p0 < max_threads / block_rows ? p0 : max_threads / block_rows;
    gpu_reduce_launch l;
    l.threads = lanes * block_rows;
    l.lanes = lanes;
    std::int64_t per_row = lanes;  // threads that share one row
    const std::int64_t threshold = block_rows * 16 < 256 ? block_rows * 16 : 256;
    const bool across_warps = ceil_div(length, per_row) >= threshold;
    if (across_warps) per_row *= block_rows;
    std::int64_t grid = across_warps ? rows : ceil_div(rows, block_rows);
    const std::int64_t target = sms * (threads_per_sm / l.threads);
    if (across_warps && ceil_div(length, per_row) >= 256 && grid <= target) {
        const std::int64_t vpt = ceil_div(length, per_row);
        const std::int64_t by_grid = ceil_div(target, grid);
        const std::int64_t by_min = ceil_div(vpt, 16);
        const std::int64_t at_least = ceil_div(vpt, 256);
        std::int64_t ctas = by_grid < by_min ? by_grid : by_min;
        if (ctas < at_least) ctas = at_least;
        if (ctas > 1) {
            per_row *= ctas;
            grid *= ctas;
        }
    }
    l.blocks = grid;
    l.values_per_thread = ceil_div(length, per_row);
    return l;
}

/// The thread blocks a GPU launches for a softmax of `rows` contiguous rows of `width` elements
/// along the last axis, written in the input's dtype, as PyTorch's CUDA softmax chooses them
/// (pytorch/pytorch aten/src/ATen/native/cuda/SoftMax.cu, host_softmax, dispatch_softmax_forward
/// and SoftMaxForward_getBlockSize; restated, not copied): a row of at most 2048 elements and
/// 8 KiB is held by one warp (`per_warp`; softmax_warp_forward) of min(32, its width rounded up
/// to a power of two) lanes, two rows a warp when that power is 128 or less, in blocks of 128
/// threads; a longer row gets a block of its own (cunn_SoftMaxForward*) of min(width, 1024)
/// threads rounded up to whole warps. `element_bytes`: the input's element size. Not modelled:
/// which of the block kernels runs (rows in registers, in shared memory, or read three times),
/// PyTorch's launches of more than 2^30 elements in parts, an fp32 output of 16-bit input (its
/// warp kernel takes rows of up to 1024 elements and 4 KiB there), and a softmax along another
/// axis (cunn_SpatialSoftMaxForward).
struct gpu_softmax_launch {
    std::int64_t blocks = 1;          // thread blocks in the grid
    std::int64_t threads = 1;         // threads a block
    std::int64_t rows_per_block = 1;  // rows a block holds
    bool per_warp = false;            // a warp holds a whole row (else a block does)
};
[[nodiscard]] constexpr gpu_softmax_launch softmax_launch_of(std::int64_t rows, std::int64_t width,
                                                             std::int64_t element_bytes) noexcept {
    if (rows < 1 || width < 1 || element_bytes < 1) return {};
    constexpr std::int64_t warp = 32;
    gpu_softmax_launch l;
    if (width <= 2048 && element_bytes <= 8192 / width) {  // width x bytes <= 8 KiB, no overflow
        const auto pow2 =
            static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(width)));
        const std::int64_t lanes = pow2 < warp ? pow2 : warp;
        constexpr std::int64_t block_threads = 128;
        l.per_warp = true;
        l.threads = block_threads;
        l.rows_per_block = block_threads / lanes * (pow2 <= 128 ? 2 : 1);
        l.blocks = ceil_div(rows, l.rows_per_block);
        return l;
    }
    const std::int64_t threads = width < 1024 ? width : 1024;
    l.threads = ceil_div(threads, warp) * warp;
    l.blocks = rows;
    return l;
}

/// Head cost of a kernel on `b` cores of engine `e`: launch + per_core x b (the vector engine's
/// own figures for a vector kernel; AI CPU: its fixed launch), from the parameters' per-engine
/// override when set, else from the chip.
[[nodiscard]] constexpr duration head_time(const chip& c, engine e, int b,
                                           const model_params& p = default_model_params) noexcept {
    const auto& h = p.head_of(e);
    if (h.set) return h.launch + h.per_core * static_cast<double>(b);
    if (e == engine::aicpu) return c.overhead.aicpu_launch;
    if (e == engine::vector)
        return c.overhead.vector_launch + c.overhead.vector_per_core * static_cast<double>(b);
    return c.overhead.launch + c.overhead.per_core * static_cast<double>(b);
}

namespace detail {
/// Time of a cube op's vector part (op::vector_ops, attention's softmax) in fp32 (or at the
/// engine's engine_spec::attention_softmax_rate, where set) on the vector cores that pair with
/// the op's b cube cores (vector cores / cube cores of them each: 2 on the 910B, 1 on a GPU,
/// whose SMs are both engines), the work spread over the same `units`, the busiest core
/// computing at least the heaviest unit's (`heaviest` average units: tiling::heaviest).
[[nodiscard]] constexpr duration vector_part_time(const chip& c, const op& o, std::int64_t units,
                                                  int b, const model_params& p,
                                                  const engine_spec& e, double heaviest = 1) {
    const engine_spec& v = c.vector;
    const double rate =
        v.attention_softmax_rate > 0 ? v.attention_softmax_rate : v.ops_per_cycle_for(dtype::fp32);
    if (!(rate > 0) || v.cores < 1 || e.cores < 1) return duration{};
    std::int64_t vb = static_cast<std::int64_t>(b) * v.cores / e.cores;
    if (vb < 1) vb = 1;
    if (vb > units) vb = units;
    const double per_unit = o.vector_ops / static_cast<double>(units);
    const auto busiest = static_cast<double>(ceil_div(units, vb));
    const cycle_count cycles{(busiest > heaviest ? busiest : heaviest) * per_unit / rate,
                             units::cycle};
    return cycles / v.clock / p.vector_efficiency;
}

/// Units the busiest of `b` cores computes on the cube, of `per_core_units` = ceil(units / b)
/// whole waves: those, or for a fused attention in FlashAttention-2's layout with more units
/// than cores, units / b. Its thread blocks are small (a 64- or 128-row query block of one head,
/// or a split of its keys) and several stay resident on an SM, so the last wave's few blocks
/// share the SMs with the others instead of adding a wave: on vidur's A100 Llama-2-7B rows of
/// degrees 4 and 8, held out, 16.3 -> 14.8 % (docs/validation.md, "Attention on the A100:
/// vidur's paged kernels"). FlashInfer's layout (op::kv_chunk_min) keeps whole waves: its plan
/// holds two blocks an SM, and an SM given two runs both at once (at a degree of 4 over 1792
/// tokens, 112 blocks without a split took 1184 us, 1728 tokens in 216 blocks of half the keys
/// 682 us); on the profile's rows read first whole waves scored 10.3 %, shared ones 11.0 %
/// (measured before its merge was priced, with a share of 0.55 and a causal heaviest unit of
/// rows, not blocks). The softmax part (vector_part_time) and the block floor
/// (chip::overhead.attention_unit_cycles) keep whole waves: the softmax's share fitted vidur's A100
/// rows of degrees 1 and 2 no better (15.2 against 15.2 % MAPE), an assumption.
/// An attention's busiest core computes at least its heaviest unit (tiling::heaviest: a causal
/// mask's last query block).
[[nodiscard]] constexpr double busiest_units(const op& o, const tiling& t, std::int64_t b,
                                             std::int64_t per_core_units) noexcept {
    if (o.kind == op_kind::attention) [[unlikely]] {
        const double units = t.work_units > b && o.kv_chunk_min == 0
                                 ? static_cast<double>(t.work_units) / static_cast<double>(b)
                                 : static_cast<double>(per_core_units);
        return units > t.heaviest ? units : t.heaviest;  // a causal mask's heaviest unit
    }
    return static_cast<double>(per_core_units);
}

/// Whether ops of kind `k` only move data (no arithmetic to widen for).
[[nodiscard]] constexpr bool moves_only(op_kind k) noexcept {
    // One test of a bit mask (cost() runs in every sweep's inner loop).
    constexpr auto bit = [](op_kind x) { return std::uint32_t{1} << static_cast<unsigned>(x); };
    constexpr std::uint32_t moves =
        bit(op_kind::gather) | bit(op_kind::tile) | bit(op_kind::concat) | bit(op_kind::broadcast) |
        bit(op_kind::transpose) | bit(op_kind::fill) | bit(op_kind::transfer);
    static_assert(static_cast<unsigned>(op_kind::softmax) < 32, "op_kind fits the mask");
    return static_cast<unsigned>(k) < 32 && ((moves >> static_cast<unsigned>(k)) & 1U) != 0;
}

/// The dtype `o`'s arithmetic on `t` data runs in on `e`: fp32 for 16-bit floating-point data
/// of a kernel that widens it (op::fp32_arithmetic, on an engine whose library does:
/// engine_spec::widens_marked_kernels), else the engine's (a bf16 op on a core without bf16
/// arithmetic: fp32).
[[nodiscard]] constexpr dtype arithmetic_type(const engine_spec& e, const op& o, dtype t) noexcept {
    if (o.fp32_arithmetic && e.widens_marked_kernels && (t == dtype::fp16 || t == dtype::bf16))
        return dtype::fp32;
    return e.computed_as(t);
}

/// The dtype whose rate prices `o` on `e`: on the vector engine the one its arithmetic runs in
/// (arithmetic_type), else, and for an op that only moves data (factories give those no
/// operations; a hand-built one may), its own.
[[nodiscard]] constexpr dtype rate_type(const engine_spec& e, const op& o) noexcept {
    return o.eng == engine::vector && !moves_only(o.kind) ? arithmetic_type(e, o, o.type) : o.type;
}

/// Conversions per work unit of vector op `o` whose arithmetic runs in another dtype than its
/// data's (arithmetic_type: engine_spec::bf16_computed_as and fp8_computed_as,
/// op::fp32_arithmetic): each element
/// read in such a dtype converted up, each element written in one converted down, spread evenly
/// over `units` (the tiling's: a GPU reduction's blocks, `launched`). The bytes are taken as all
/// of the op's input (output) dtype: an op
/// writing another dtype besides (TopK's int32 indices) is charged for those too, an over-count.
/// 0 for a cast (it is the conversion), for an op without arithmetic (a fill, a move:
/// moves_only) and off the vector engine. A profile row of a type the model does not know is an
/// elementwise op of one operation per element, and is given its conversions too (docs/model.md).
[[nodiscard]] constexpr double converted_ops(const engine_spec& e, const op& o,
                                             std::int64_t units) noexcept {
    if (o.eng != engine::vector || o.kind == op_kind::cast || moves_only(o.kind) ||
        !(o.ops_per_unit > 0))
        return 0;
    const double in =
        arithmetic_type(e, o, o.type) != o.type ? o.bytes_read / size_of(o.type) : 0.0;
    const double out = arithmetic_type(e, o, o.out_type) != o.out_type
                           ? o.bytes_written / size_of(o.out_type)
                           : 0.0;
    return (in + out) / static_cast<double>(units);
}

/// The cost terms of `o` (validated) in tiling `t` on at most `limit` cores of `e`. Always
/// inlined: left to GCC 12's heuristics, a test on the op's element walk in cost() made it stop
/// inlining this into the 910B1 sweep of bench/bench_cost.cpp, 13.6 -> 20.7 ns an op.
[[nodiscard, gnu::always_inline]] inline constexpr op_cost cost_terms(const chip& c, const op& o,
                                                                      const tiling& t,
                                                                      core_count limit,
                                                                      const model_params& p,
                                                                      const engine_spec& e) {
    const double rate = e.ops_per_cycle_for(rate_type(e, o));
    const std::int64_t b64 = t.work_units < limit.value ? t.work_units : limit.value;
    const int b = static_cast<int>(b64);
    const std::int64_t per_core_units =
        t.per_core_units > 0 ? t.per_core_units : ceil_div(t.work_units, b64);

    op_cost r;
    r.cores = b;
    r.bytes = (o.bytes_read + t.partials) + (o.bytes_written + t.partials);
    r.flops = o.flops();
    const double eff = o.eng == engine::cube     ? p.cube_efficiency
                       : o.eng == engine::vector ? p.vector_efficiency
                                                 : 1.0;
    if (t.ops_per_unit > 0) {
        // Three divisions in a row, kept: one by rate x clock x efficiency rounds differently,
        // and a GEMM whose compute equals its memory time then changed its bound.
        double per_unit = t.ops_per_unit;
        if (o.uncounted) [[unlikely]]
            per_unit *= e.uncounted_work;  // the assumed count, as the engine's kernels run it
        if (is_narrow_float(o.type) || is_narrow_float(o.out_type) || o.fp32_arithmetic)
            [[unlikely]]
            per_unit += converted_ops(e, o, t.work_units);
        const cycle_count cycles{busiest_units(o, t, b64, per_core_units) * per_unit / rate,
                                 units::cycle};
        r.compute = cycles / e.clock / eff;
    }
    if (o.vector_ops > 0) r.compute += vector_part_time(c, o, t.work_units, b, p, e, t.heaviest);
    // Fused attention at the share of the rate the chip's FlashAttention-2 kernels keep
    // (FlashInfer's at the full rate), and at a share of that when its units leave no core more
    // than one (engine_spec::attention_unfilled_share, both layouts).
    if (o.kind == op_kind::attention) {
        if (o.kv_chunk_min == 0) r.compute = r.compute / e.attention_share;
        if (t.work_units <= limit.value) r.compute = r.compute / e.attention_unfilled_share;
    }
    r.memory = memory_time_of(c, o, t, b, p);
    r.head = head_time(c, o.eng, b, p);
    r.head += load_latency_of(c, o);
    if (o.first_run) r.head += p.first_run_launch + p.first_run_per_core * static_cast<double>(b);
    r.head += o.extra_head + t.extra_head + o.extra_per_core * static_cast<double>(b);
    // A synchronization of the op's cores at the chip's own head (not a calibrated override:
    // calibration fits the rest per op type, and the compaction rows do not pull the shared head).
    if (o.syncs > 0) r.head += static_cast<double>(o.syncs) * head_time(c, o.eng, b);
    duration body = overlapped_body(r.compute, r.memory, p.overlap);
    // FlashInfer's merge of a split's partial outputs (chip::overhead.attention_merge_cycles), a
    // kernel after the attention's: its rows (query rows x heads: the output's bytes over a
    // row's, op::run) spread over the cores.
    if (o.kv_chunk_min > 0 && t.partials > data_size{} &&
        c.overhead.attention_merge_cycles > cycle_count{}) [[unlikely]]
        body += o.bytes_written / o.run / static_cast<double>(limit.value) *
                c.overhead.attention_merge_cycles / e.clock;
    // A latency-bound row kernel (chip::overhead.row_trip_cycles): waves of rows in flight, each
    // row its trips over the row.
    if (o.row_threads > 0 && c.overhead.core_threads > 0 &&
        c.overhead.row_trip_cycles > cycle_count{} && o.eng == engine::vector) {
        std::int64_t in_flight = c.overhead.core_threads / o.row_threads;
        if (in_flight < 1) in_flight = 1;
        const std::int64_t waves = ceil_div(t.work_units, b64 * in_flight);
        const double trips = o.row_trips > 1 ? static_cast<double>(o.row_trips) : 1.0;
        // In doubles: waves x trips of a huge row count could pass int64's range.
        body =
            max_d(body, static_cast<double>(waves) * trips * c.overhead.row_trip_cycles / e.clock);
    }
    // Fused attention on a chip with a per-block floor (chip::overhead.attention_unit_cycles):
    // each wave of thread blocks pays it on top of the memory time.
    if (o.kind == op_kind::attention && c.overhead.attention_unit_cycles > cycle_count{}) {
        body = max_d(
            body, static_cast<double>(per_core_units) * c.overhead.attention_unit_cycles / e.clock +
                      r.memory);
    }
    r.latency = r.head + body;
    r.core_time = r.latency * static_cast<double>(b);
    r.bound = r.head >= r.compute && r.head >= r.memory ? bound_kind::overhead
              : r.compute >= r.memory                   ? bound_kind::compute
                                                        : bound_kind::memory;
    if (rate > 0) {
        const double peak_ops = static_cast<double>(b) * rate * e.clock.in(units::Hz) *
                                r.latency.in(units::s);
        r.utilization = o.useful_ops / peak_ops;
    }
    return r;
}

/// `o` split along K when it has fewer output tiles than `limit` cores and a deep K: K in chunks
/// of at least split_k_chunk across the idle cores, each writing fp32 partial sums that a final
/// pass reads back and adds. An attention in FlashInfer's layout (op::kv_chunk_min) splits as
/// that library's plan does instead (flashinfer_split).
[[nodiscard]] constexpr bool may_split_k(const op& o, std::int64_t units,
                                         core_count limit) noexcept {
    // FlashInfer's attention (op::kv_chunk_min): while two blocks an SM leave room for two
    // chunks a block and its keys are more than one chunk (flashinfer_split).
    if (o.kv_chunk_min > 0) [[unlikely]]
        return o.k_depth > o.kv_chunk_min && units <= limit.value;
    return o.k_depth >= 2 * split_k_chunk && units < limit.value;
}
[[nodiscard]] constexpr bool may_split_k(const op& o, core_count limit) noexcept {
    return may_split_k(o, o.work_units, limit);
}
/// Tiling `t` of `o` split in `ks` > 1 along K, in chunks of `chunk` (0: ceil(K / ks)); an
/// attention's heaviest unit is then a whole chunk (tiling::heaviest).
[[nodiscard]] constexpr tiling split_in(const op& o, tiling t, std::int64_t ks,
                                        std::int64_t chunk = 0) noexcept {
    t.partials = data_size{o.bytes_written / size_of(o.out_type) * static_cast<double>(ks) * 4.0,
                           units::B};  // fp32 sums
    t.work_units *= ks;
    t.ops_per_unit /= static_cast<double>(ks);
    if (o.kind == op_kind::attention) [[unlikely]] {
        if (chunk == 0) chunk = ceil_div(o.k_depth, ks);
        t.heaviest *=
            static_cast<double>(ks) * static_cast<double>(chunk) / static_cast<double>(o.k_depth);
    }
    return t;
}
/// Tiling `t` of attention `o` in FlashInfer's layout (op::kv_chunk_min) with its keys split as
/// FlashInfer's plan splits them (PrefillBinarySearchKVChunkSize: the smallest chunk of at least
/// kv_chunk_min keys whose blocks, t's times the chunks, fit a grid of two an SM,
/// num_blocks_per_sm = 2; in keys here, in pages there), each block writing its partial output
/// in the output's dtype for a merge kernel to read back (VariableLengthMergeStates; the 4-byte
/// log-sum-exp of each row and head beside it is left out). Called where may_split_k holds.
[[nodiscard]] constexpr tiling flashinfer_split(const op& o, tiling t, core_count limit) noexcept {
    const std::int64_t most = 2 * limit.value / t.work_units;  // >= 2 where may_split_k holds
    std::int64_t chunk = ceil_div(o.k_depth, most);
    if (chunk < o.kv_chunk_min) chunk = o.kv_chunk_min;
    const std::int64_t chunks = ceil_div(o.k_depth, chunk);
    if (chunks <= 1) return t;
    t = split_in(o, t, chunks, chunk);
    t.partials = o.bytes_written * static_cast<double>(chunks);  // the output's dtype, not fp32
    return t;
}
/// Tiling `t` of `o` split along K as far as the cores and the depth allow (or `t` as it is).
[[nodiscard]] constexpr tiling split_k(const op& o, const tiling& t, core_count limit) noexcept {
    if (!may_split_k(o, t.work_units, limit)) return t;
    if (o.kv_chunk_min > 0) [[unlikely]]
        return flashinfer_split(o, t, limit);
    const std::int64_t by_cores = limit.value / t.work_units;
    const std::int64_t by_depth = o.k_depth / split_k_chunk;
    const std::int64_t ks = by_cores < by_depth ? by_cores : by_depth;
    return ks <= 1 ? t : split_in(o, t, ks);
}

/// Plain GEMM `o` tiled in tm x tn (clipped to the padded M and N), m_tiles x n_tiles of them
/// per batch: its units, the work of one unit (the factory's, scaled by the tile's area: a
/// factor applied to it is kept) and the re-reads (A once per N tile past the first, B once per
/// M tile past the first).
[[nodiscard]] constexpr tiling tiled_in(const op& o, std::int64_t tm, std::int64_t tn,
                                        std::int64_t m_tiles, std::int64_t n_tiles) noexcept {
    const gemm_dims& g = o.gemm;
    const auto clip = [](std::int64_t v, std::int64_t cap) { return v < cap ? v : cap; };
    const double area = static_cast<double>(tm) * static_cast<double>(tn);
    const double factory_area =
        static_cast<double>(clip(g.m, cube_tile_m)) * static_cast<double>(clip(g.n, cube_tile_n));
    return {g.batch * m_tiles * n_tiles,
            o.ops_per_unit * area / factory_area,
            g.a * static_cast<double>(n_tiles - 1) + g.b * static_cast<double>(m_tiles - 1),
            data_size{},
            0,
            duration{},
            o.run};
}
/// Tile `t` clipped to GEMM `g`'s M and N.
[[nodiscard]] constexpr tile_shape clipped(const gemm_dims& g, tile_shape t) noexcept {
    return {g.m < t.m ? g.m : t.m, g.n < t.n ? g.n : t.n};
}
/// Plain GEMM `o` tiled in `t`.
[[nodiscard]] constexpr tiling tiled_in(const op& o, tile_shape t) noexcept {
    const tile_shape u = clipped(o.gemm, t);
    return tiled_in(o, u.m, u.n, ceil_div(o.gemm.m, u.m), ceil_div(o.gemm.n, u.n));
}

/// `o` with tiling `t` in place of its own.
[[nodiscard]] constexpr op with(const op& o, const tiling& t) noexcept {
    op r = o;
    r.work_units = t.work_units;
    r.ops_per_unit = t.ops_per_unit;
    r.reread = t.reread;
    r.heaviest_unit = t.heaviest;
    r.bytes_written += t.partials;
    r.bytes_read += t.partials;
    return r;
}
/// `o` split along K (split_k above); `o` itself when it is not.
[[nodiscard]] constexpr op split_k(const op& o, core_count limit) noexcept {
    return may_split_k(o, limit) ? with(o, split_k(o, as_given(o), limit)) : o;
}
/// Plain GEMM `o` tiled in `t` (tiled_in above).
[[nodiscard]] constexpr op tiled(const op& o, tile_shape t) noexcept {
    return with(o, tiled_in(o, t));
}

/// The tiling of cube op `o` that `cost` prices: a plain GEMM (op::gemm set) on a chip that
/// lists its libraries' tiles (chip::cube_tiles) gets the one whose slowest core finishes first,
/// as cuBLAS / CANN heuristics pick the tile with the fewest waves and the best-filled last
/// wave: per tile, the longer of its compute (the busiest core's units) and its loads at the
/// per-core L2 rate (inputs, split-K partial sums and re-reads); ties go to the tile listed
/// first. Then split-K. The search runs in doubles (exact below 2^53; a tile count past 2^62,
/// which no real GEMM has, keeps the factory tiling) and builds the tiling of the winner only
/// (tiled_in, split_in): it runs in every cost() call (bench/bench_cost.cpp).
[[nodiscard]] constexpr tiling tiling_for(const chip& c, const op& o, core_count limit,
                                          const model_params& p, const engine_spec& e) noexcept {
    const gemm_dims& g = o.gemm;
    if (g.m < 1 || g.n < 1 || g.batch < 1 || c.cube_tiles[0].m < 1)
        return split_k(o, as_given(o), limit);
    const auto lesser = [](double a, double b) { return a < b ? a : b; };
    // v >= 0, below 2^63
    const auto floor_of = [](double v) {
        return static_cast<double>(static_cast<std::int64_t>(v));
    };
    // ceil(v / d) for whole v, d >= 1: a power-of-two d (every preset tile) by a shift.
    const auto tiles_of = [](std::int64_t v, std::int64_t d) {
        if ((d & (d - 1)) == 0)  // not std::has_single_bit: a library call without -mpopcnt
            return (v + d - 1) >> std::countr_zero(static_cast<std::uint64_t>(d));
        return ceil_div(v, d);
    };
    const double hz = e.clock.in(units::Hz);
    const double rate = p.cube_efficiency * e.ops_per_cycle_for(o.type) * hz;
    const double l2_per_cycle = c.memory.l2_read_rate.in(units::B_per_cycle);
    const double l2 = hz * l2_per_cycle * p.l2_efficiency;
    const double inv_rate = rate > 0 ? 1.0 / rate : 0.0;
    const double inv_l2 = l2 > 0 ? 1.0 / l2 : 0.0;
    const double batch = static_cast<double>(g.batch);
    const double cores = static_cast<double>(limit.value);
    const double inv_cores = 1.0 / cores;
    const double per_area =
        o.ops_per_unit / (lesser(static_cast<double>(g.m), static_cast<double>(cube_tile_m)) *
                          lesser(static_cast<double>(g.n), static_cast<double>(cube_tile_n)));
    const bool deep = o.k_depth >= 2 * split_k_chunk;
    const double reads = o.bytes_read.in(units::B);
    const double a = g.a.in(units::B);
    const double b_bytes = g.b.in(units::B);
    const double per_split = o.bytes_written / size_of(o.out_type) * 4.0;  // fp32 partial sums
    // The winner: its tile, tile counts, K split and waves.
    std::int64_t best_tm = 0, best_tn = 0, best_m_tiles = 0, best_n_tiles = 0;
    double best_ks = 1, best_waves = 1;
    double best_time = -1;
    // A GEMM smaller than some tiles (a decode GEMM's few rows) clips several of them to one
    // shape: priced once, at its first (the same shape prices the same, and ties go to the
    // first). Listed shapes are distinct: while none is clipped there is nothing to look up.
    bool any_clipped = false;
    for (std::size_t i = 0; i < max_cube_tiles; ++i) {
        const tile_shape& t = c.cube_tiles[i];
        if (t.m < 1 || t.n < 1) continue;
        const tile_shape shape = clipped(g, t);
        const std::int64_t tm = shape.m;
        const std::int64_t tn = shape.n;
        any_clipped = any_clipped || tm < t.m || tn < t.n;
        if (any_clipped) {
            bool seen = false;
            for (std::size_t j = 0; j < i; ++j) {
                const tile_shape& u = c.cube_tiles[j];
                seen = seen || (u.m >= 1 && u.n >= 1 && clipped(g, u) == shape);
            }
            if (seen) continue;
        }
        // ceil(M / tm) = ceil(M / t.m): 1 when the tile is clipped (then tm = M).
        const std::int64_t m_tiles_i = tiles_of(g.m, t.m);
        const std::int64_t n_tiles_i = tiles_of(g.n, t.n);
        const double m_tiles = static_cast<double>(m_tiles_i);
        const double n_tiles = static_cast<double>(n_tiles_i);
        const double tiles = batch * m_tiles * n_tiles;
        if (!(tiles < 4.6e18)) continue;  // past 2^62
        double ks = 1;
        if (deep && tiles < cores) {
            ks = lesser(floor_of(cores / tiles), static_cast<double>(o.k_depth / split_k_chunk));
            if (ks < 1) ks = 1;
        }
        const double units = tiles * ks;
        // Waves: ceil(units / cores), exact (the product's rounding corrected). Below 2^52
        // units the product is off by less than 1, so floor(product) is floor(units / cores) or
        // one less (divisible units) and one step up corrects it; no loop.
        double waves = 1;
        if (units > cores) {
            waves = floor_of(units * inv_cores);
            if (units < 0x1p52) {
                if (waves * cores < units) waves += 1;
            } else {
                while (waves * cores < units) waves += 1;
                while (waves > 1 && (waves - 1) * cores >= units) waves -= 1;
            }
        }
        const double inv_held = units < cores ? 1.0 / units : inv_cores;
        const double work = waves * static_cast<double>(tm) * static_cast<double>(tn) * per_area;
        const double compute = (ks > 1 ? work / ks : work) * inv_rate;
        // Loads: inputs, split-K partial sums read back, A per N tile, B per M tile.
        const double partials = ks > 1 ? per_split * ks : 0.0;
        const double load =
            (reads + partials + a * (n_tiles - 1) + b_bytes * (m_tiles - 1)) * inv_l2 * inv_held;
        const double time = compute > load ? compute : load;
        if (best_time < 0 || time < best_time) {
            best_time = time;
            best_tm = tm;
            best_tn = tn;
            best_m_tiles = m_tiles_i;
            best_n_tiles = n_tiles_i;
            best_ks = ks;
            best_waves = waves;
        }
    }
    if (best_time < 0) return split_k(o, as_given(o), limit);
    // The winner, built by the functions the search mirrors (its ks is split_k's).
    tiling t = tiled_in(o, best_tm, best_tn, best_m_tiles, best_n_tiles);
    if (best_ks > 1) t = split_in(o, t, static_cast<std::int64_t>(best_ks));
    // Its waves are cost_terms' ceil(units / min(units, cores)) where the doubles hold the units
    // exactly (below 2^53); past that cost_terms divides the integers.
    if (t.work_units < std::int64_t{1} << 53)
        t.per_core_units = static_cast<std::int64_t>(best_waves);
    return t;
}
/// `t` with its work per unit at the engine's share of the rate for a GEMM whose rows are not
/// 16-byte aligned (op::row_align; engine_spec::narrow_rows_4 / _2): the library's slower kernels.
/// On the path of tiled and split GEMMs only (every GPU GEMM takes it), not in cost_terms: a test
/// there slowed the 910B1 sweep benchmark (bench/bench_cost.cpp) from 13 to 20 ns an op.
[[nodiscard]] constexpr tiling narrowed(tiling t, const op& o, const engine_spec& e) noexcept {
    if (o.row_align > 0 && o.row_align < 16) [[unlikely]]
        t.ops_per_unit /= o.row_align < 4 ? e.narrow_rows_2 : e.narrow_rows_4;
    return t;
}
/// Tiling `t` whose units carry at least `o`'s output elements at `elements_per_cycle` per core
/// (a library kernel's measured rate: an element walk's, a softmax's), as operations at `rate`,
/// the engine's rate for the op, so that cost_terms' compute term holds them; times the vector
/// efficiency, which cost_terms divides by (the rate is the library's, measured, not a share of a
/// peak); a calibrated factor of the op's type scales it (op::walk_work).
[[nodiscard]] constexpr tiling at_least_at(tiling t, const op& o, double rate,
                                           double elements_per_cycle,
                                           const model_params& p) noexcept {
    const double elements = o.bytes_written / size_of(o.out_type);  // the output's
    const double per_unit = elements / static_cast<double>(t.work_units) * rate /
                            elements_per_cycle * p.vector_efficiency * o.walk_work;
    if (per_unit > t.ops_per_unit) t.ops_per_unit = per_unit;
    return t;
}

/// Tiling `t` on `blocks` units (a GPU library's thread blocks), its work spread evenly over them.
[[nodiscard]] constexpr tiling on_blocks(tiling t, std::int64_t blocks) noexcept {
    t.ops_per_unit =
        static_cast<double>(t.work_units) * t.ops_per_unit / static_cast<double>(blocks);
    t.work_units = blocks;
    return t;
}

/// The most indices for which PyTorch's index_select runs indexSelectSmallIndex, whose threads
/// walk the indices one after another (aten/src/ATen/native/cuda/Indexing.cu: 16).
inline constexpr std::int64_t index_select_small_max = 16;

/// The thread blocks PyTorch's index_select kernels before its 2.7 release launch for gather `o`
/// (element_walk::selected: its units the indices, op::run a row's bytes) on `cores` SMs
/// (aten/src/ATen/native/cuda/Indexing.cu): with at most index_select_small_max indices
/// indexSelectSmallIndex, ceil(row elements / 128) blocks, each walking its part of every row;
/// else indexSelectLargeIndex, ceil(elements / 128); at most 8 an SM either way.
[[nodiscard]] constexpr std::int64_t index_select_blocks(const op& o, std::int64_t cores) noexcept {
    const double row = o.run / size_of(o.out_type);  // elements of a row
    const double elements =
        o.work_units <= index_select_small_max ? row : row * static_cast<double>(o.work_units);
    const std::int64_t most = 8 * cores;
    if (!(elements >= 1)) return 1;  // a hand-built op's empty or negative row
    if (!(elements < 128.0 * static_cast<double>(most))) return most;
    return (static_cast<std::int64_t>(elements) + 127) / 128;  // >= 1: elements >= 1
}

/// Tiling `t` of vector op `o` walked by index, transposed or by index_select (op::walk) on an
/// engine with a rate for it (engine_spec::walk_rate / transpose_rate / index_select_rate; a
/// gather by index_select on the blocks it launches, index_select_blocks): its units carry at
/// least their output elements at that rate (at_least_at), its head takes
/// engine_spec::walk_head (and indexSelectSmallIndex's engine_spec::index_select_trip per index
/// past the first), and a transposing copy's runs are whole alignment units (its strided
/// side is in its rate). Without a rate (the Ascend presets), off the vector engine or for an op
/// walked as vectors, `t` as it is. A tiling, not a cost: cost() keeps one
/// path for every vector op (a second one, returning this op's cost, slowed its sweep).
[[nodiscard]] constexpr tiling walked(tiling t, const chip& c, const op& o, const model_params& p,
                                      const engine_spec& e) noexcept {
    if (o.walk == element_walk::vector) [[likely]]
        return t;
    // index_select's rate is a gather's; another kind given that walk (through the C++ API: model
    // files refuse it) is walked by index.
    const bool selects = o.walk == element_walk::selected && o.kind == op_kind::gather;
    const double walk = o.walk == element_walk::transposed ? e.transpose_rate
                        : selects                          ? e.index_select_rate
                                                           : e.walk_rate;
    const double rate = e.ops_per_cycle_for(rate_type(e, o));
    if (o.eng != engine::vector || !(walk > 0) || !(rate > 0)) return t;
    if (selects) t = on_blocks(t, index_select_blocks(o, e.cores));
    t = at_least_at(t, o, rate, walk, p);
    t.extra_head = e.walk_head;
    // indexSelectSmallIndex's walk over its indices, one after another (engine_spec::
    // index_select_trip per index past the first).
    if (selects && o.work_units > 1 && o.work_units <= index_select_small_max)
        t.extra_head += e.index_select_trip * static_cast<double>(o.work_units - 1);
    if (o.walk == element_walk::transposed && t.run < c.alignment) t.run = c.alignment;
    return t;
}

/// Bytes of one `t` element, at least 1 (the launch rules take whole bytes).
[[nodiscard]] constexpr std::int64_t element_bytes_of(dtype t) noexcept {
    const double size = size_of(t).in(units::B);
    return size >= 1 ? static_cast<std::int64_t>(size) : 1;
}

/// Tiling `t` of softmax op `o` on a GPU: one unit per thread block PyTorch launches
/// (softmax_launch_of), the op's work spread over them, and each unit's output elements at least
/// at the engine's softmax rate for its kind of block (engine_spec::softmax_warp_rate,
/// softmax_block_rate; at_least_at).
[[nodiscard]] constexpr tiling softmax_launched(tiling t, const op& o, const model_params& p,
                                                const engine_spec& e) noexcept {
    const double elements = o.bytes_written / size_of(o.out_type);
    const std::int64_t rows = o.work_units;  // the factory's: one a row
    // Whole counts of a softmax the factory built (below 2^53; else as it is).
    if (rows < 1 || !(elements >= static_cast<double>(rows) && elements < 0x1p53)) return t;
    const gpu_softmax_launch l = softmax_launch_of(rows, static_cast<std::int64_t>(elements) / rows,
                                                   element_bytes_of(o.type));
    t = on_blocks(t, l.blocks);
    const double softmax_rate = l.per_warp ? e.softmax_warp_rate : e.softmax_block_rate;
    if (softmax_rate > 0)
        t = at_least_at(t, o, e.ops_per_cycle_for(rate_type(e, o)), softmax_rate, p);
    return t;
}

/// Tiling `t` of reduce op `o` on a GPU (a chip whose cores keep threads:
/// chip::overhead.core_threads): one unit per thread block the library launches
/// (reduce_launch_of), the op's work spread over them, so that a reduction of few rows runs on as
/// few SMs as its grid holds, each at its per-core rates; a softmax on its own blocks
/// (softmax_launched). Elsewhere (the Ascend presets, whose kernels loop over the rows on every
/// core, and every other op) `t` as it is.
[[nodiscard]] constexpr tiling launched(tiling t, const chip& c, const op& o, const model_params& p,
                                        const engine_spec& e) noexcept {
    if ((o.kind != op_kind::reduce && o.kind != op_kind::softmax) || c.overhead.core_threads < 1 ||
        o.eng != engine::vector) [[likely]]
        return t;
    if (o.kind == op_kind::softmax) return softmax_launched(t, o, p, e);
    const double rows = o.bytes_written / size_of(o.out_type);
    const double elements = o.bytes_read / size_of(o.type);
    // Whole counts of a reduction the factory built (below 2^53, checked; else as it is).
    if (!(rows >= 1 && rows < 0x1p53 && elements >= rows && elements < 0x1p53)) return t;
    const auto r = static_cast<std::int64_t>(rows);
    const auto length = static_cast<std::int64_t>(elements) / r;
    const gpu_reduce_launch l = reduce_launch_of(r, length, element_bytes_of(o.type),
                                                 c.vector.cores, c.overhead.core_threads);
    return on_blocks(t, l.blocks);
}

/// `o` in the tiling that `cost` prices (tiling_for, narrowed).
[[nodiscard]] constexpr op tiled_for(const chip& c, const op& o, core_count limit,
                                     const model_params& p, const engine_spec& e) noexcept {
    return with(o, narrowed(tiling_for(c, o, limit, p, e), o, e));
}
}  // namespace detail

namespace detail {
/// What cost() expects of a core limit on engine `e` of chip `c`, for its error: "at most 24 (the
/// cube cores of ascend910b1)", or that the chip has none of that engine's cores.
[[nodiscard]] inline std::string limit_expected(const chip& c, engine e) {
    const int cores = c.engine_of(e).cores;
    const std::string engine_cores = std::string(e == engine::aicpu ? "AI CPU" : name_of(e)) +
                                     " cores of " + std::string(c.name.view());
    if (cores < 1)
        return "an engine the chip has (no " + engine_cores +
               (e == engine::aicpu ? ": place the op on the vector engine)" : ")");
    return "1 to " + std::to_string(cores) + " (the " + engine_cores + ")";
}
/// What cost() expects of op `o`'s dtype on chip `c`, for its error: the dtypes its engine has a
/// rate for (on the vector engine, for the dtype each one's arithmetic runs in).
[[nodiscard]] inline std::string dtype_expected(const chip& c, const op& o) {
    const engine_spec& e = c.engine_of(o.eng);
    std::string list;
    for (const dtype t : all_dtypes) {
        if (!(e.ops_per_cycle_for(o.eng == engine::vector ? e.computed_as(t) : t) > 0)) continue;
        if (!list.empty()) list += ", ";
        list += name_of(t);
    }
    return "a dtype the " + std::string(o.eng == engine::aicpu ? "AI CPU" : name_of(o.eng)) +
           " of " + std::string(c.name.view()) + " computes in (" +
           (list.empty() ? std::string("none") : list) + ")";
}
}  // namespace detail

/// Cost of `o` on chip `c` using at most `limit` cores of its engine.
/// Always inlined: a sweep over core limits (whatif, card) then keeps the chip's figures out of
/// its loop; left to GCC 12's heuristics, the GEMM tile search made it stop inlining and the
/// 2400-evaluation sweep of bench/bench_cost.cpp took twice as long (82 us against 41 us).
[[nodiscard, gnu::always_inline]] inline constexpr op_cost cost(
    const chip& c, const op& o, core_count limit, const model_params& p = default_model_params) {
    constexpr std::string_view where = "cost";
    // validate(p) only when a range check fails (it then throws naming the field): cost() runs
    // in every sweep's inner loop, and validate's early-out checks cost a third of it. The
    // defaults are in range (static_assert after detail::in_range): skipped for them, which the
    // table's member pointers kept GCC 12 from folding away (cost() 29 -> 40 ns, the matmul of
    // bench_cost.cpp's BM_cost_one).
    if (&p != &default_model_params && !detail::in_range(p)) [[unlikely]]
        validate(p);
    const engine_spec& e = c.engine_of(o.eng);
    PERFCAST_EXPECTS(limit.value >= 1 && limit.value <= e.cores, where,
                     o.eng == engine::cube     ? "limit (cube cores)"
                     : o.eng == engine::vector ? "limit (vector cores)"
                                               : "limit (aicpu cores)",
                     static_cast<double>(limit.value), detail::limit_expected(c, o.eng));
    PERFCAST_EXPECTS(o.work_units >= 1, where, "op.work_units", static_cast<double>(o.work_units),
                     ">= 1");
    PERFCAST_EXPECTS(o.extra_head.in(units::us) >= 0 && o.extra_head.in(units::us) < 1e9, where,
                     "op.extra_head (us)", o.extra_head.in(units::us), "a time in [0, 1e9) us");
    PERFCAST_EXPECTS(o.extra_per_core.in(units::us) >= 0 && o.extra_per_core.in(units::us) < 1e9,
                     where, "op.extra_per_core (us)", o.extra_per_core.in(units::us),
                     "a time in [0, 1e9) us");
    PERFCAST_EXPECTS(o.vector_ops >= 0 && o.vector_ops < 1e300, where, "op.vector_ops",
                     o.vector_ops, "a finite count >= 0");
    PERFCAST_EXPECTS(o.syncs >= 0 && o.syncs <= 1000, where, "op.syncs",
                     static_cast<double>(o.syncs), "a count in [0, 1000]");
    // An attention's own fields (read on its paths only).
    PERFCAST_EXPECTS(o.kind != op_kind::attention ||
                         (o.heaviest_unit >= 1 && o.heaviest_unit < 1e18 && o.kv_chunk_min >= 0),
                     where, o.kv_chunk_min >= 0 ? "op.heaviest_unit" : "op.kv_chunk_min",
                     o.kv_chunk_min >= 0 ? o.heaviest_unit : static_cast<double>(o.kv_chunk_min),
                     o.kv_chunk_min >= 0 ? "a factor in [1, 1e18)" : "a key count >= 0");
    PERFCAST_EXPECTS((o.walk == element_walk::vector && o.kind != op_kind::softmax) ||
                         (o.walk_work > 0 && o.walk_work < 1e6),
                     where, "op.walk_work", o.walk_work,
                     "a factor in (0, 1e6) for a walked op or a softmax");
    const double rate = e.ops_per_cycle_for(detail::rate_type(e, o));
    PERFCAST_EXPECTS(o.useful_ops == 0 || rate > 0, where, "dtype", name_of(o.type),
                     detail::dtype_expected(c, o));

    // Cube ops: the tile the chip's libraries would choose (tiling_for), or split-K; an op that
    // needs neither is priced as given. Either way no copy of the op: cost_terms takes the
    // winner's tiling beside it (cost() runs in every sweep's inner loop).
    const bool tiles = o.gemm.m > 0 && c.cube_tiles[0].m > 0;
    if (o.eng != engine::cube || (!tiles && !detail::may_split_k(o, limit)))
        return detail::cost_terms(
            c, o, detail::walked(detail::launched(detail::as_given(o), c, o, p, e), c, o, p, e),
            limit, p, e);
    return detail::cost_terms(c, o, detail::narrowed(detail::tiling_for(c, o, limit, p, e), o, e),
                              limit, p, e);
}

/// Cost on every core of the op's engine.
[[nodiscard]] constexpr op_cost cost(const chip& c, const op& o,
                                     const model_params& p = default_model_params) {
    return cost(c, o, core_count{c.engine_of(o.eng).cores}, p);
}

/// Achieved bandwidth of a move: bytes / time (guide §5's check).
[[nodiscard]] constexpr bandwidth achieved_bandwidth(data_size bytes, duration t) {
    PERFCAST_EXPECTS(t.in(units::s) > 0 && is_finite(t), "achieved_bandwidth", "time",
                     t.in(units::us), "a finite time > 0 us");
    PERFCAST_EXPECTS(bytes.in(units::B) >= 0 && is_finite(bytes), "achieved_bandwidth", "bytes",
                     bytes.in(units::B), "a finite size >= 0");
    return bytes / t;
}

/// Judgement of a measured move against what one core can move (guide §5).
struct bandwidth_check {
    bandwidth achieved{};
    bandwidth per_core_peak{};  // core_read_rate x clock
    double share = 0;           // achieved / per-core peak
    bool far_below = false;     // share < 1 %: look for core conflicts or misalignment
};

/// `bytes` moved by one core in `t` on chip `c`: far below the per-core rate means something
/// is wrong (guide §5: 6.5 KB per core in 1051 us, about 0.006 GB/s).
[[nodiscard]] constexpr bandwidth_check check_bandwidth(const chip& c, data_size bytes,
                                                        duration t) {
    bandwidth_check r;
    r.achieved = achieved_bandwidth(bytes, t);
    r.per_core_peak = c.memory.core_read_rate * c.vector.clock;
    r.share = r.achieved / r.per_core_peak;
    r.far_below = r.share < 0.01;
    return r;
}

}  // namespace perfcast
