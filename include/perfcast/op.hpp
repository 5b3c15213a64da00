// perfcast/op.hpp: constexpr descriptions of the ops a recommendation model runs.
//
// An op knows its engine, its useful work (MACs on the cube, element operations elsewhere), the
// bytes it reads and writes, the contiguous run length of its memory accesses and how many
// parallel work units it offers. How long it takes on a chip is cost.hpp's business.
//
// Past 500 lines on purpose: the op constructors, one per kind (about 20, each a few dozen lines of
// constexpr arithmetic), are kept together as the one vocabulary of work and bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "chip.hpp"
#include "dtype.hpp"
#include "enum_table.hpp"
#include "error.hpp"
#include "shape.hpp"
#include "units.hpp"

namespace perfcast {

/// The kind of an op or a model node. One row per kind in node.hpp's op_kinds (name, model-file
/// words, engine, profiler op types, traits, cost function): add a kind there. An open enum: an
/// extension uses values from first_extension_kind (op_vocabulary.hpp) with rows of its own.
enum class op_kind : unsigned char {
    matmul,        // also a model node's batch matmul
    batch_matmul,  // an op only: batch_matmul() with batch > 1
    elementwise,
    gather,
    topk,
    cast,
    reduce,
    tile,
    concat,
    broadcast,
    transpose,
    transfer,  // a host-link copy (a model node), not a device op
    generic,
    attention,       // fused (flash) attention: two GEMMs on the cube, softmax on the vector
    grouped_matmul,  // MoE: one GEMM per expert, every expert's tiles in one kernel
    fill,            // ZerosLike, OnesLike, Fill, memsets: writes only
    rowwise,         // norms, rope, gated activations: parallel over rows
    conv,            // a convolution (or its gradients) as the implicit GEMM it runs as
    softmax,         // softmax (or log-softmax) along the last axis: one row reduced at a time
};

/// How a vector kernel walks its elements. Libraries stream contiguous operands of one shape as
/// vectors; where an operand is broadcast along an axis, a cast widens the data, or the innermost
/// axis moves, some (PyTorch's CUDA kernels) fall back to a kernel that computes every element's
/// offsets: engine_spec::walk_rate / transpose_rate price it where the chip's library does so
/// (cost.hpp). Set by the factories and the profile mapping from the shapes and dtypes alone, but
/// `selected`, which the profile mapping reads off a kernel name (and a model file's gather off
/// `walk=index_select`).
enum class element_walk : std::uint8_t {
    vector,      // contiguous operands of the output's shape (or none): the vectorized path
    indexed,     // an operand broadcast along an axis, a widening floating-point cast, or a
                 // copy of a permuted view whose innermost axis stays
    transposed,  // the innermost axis moves: one side strided
    selected,    // a gather by PyTorch's index_select kernels before its 2.7 release
                 // (indexSelectLargeIndex / SmallIndex): one element's offsets per thread, at
                 // most 8 blocks of 128 threads an SM (engine_spec::index_select_rate)
};

/// element_walk's names, as model files write them (`walk=indexed`, docs/model-file.md).
inline constexpr std::array<enum_entry<element_walk>, 4> element_walk_names{{
    {element_walk::vector, "vector"},
    {element_walk::indexed, "indexed"},
    {element_walk::transposed, "transposed"},
    {element_walk::selected, "index_select"},
}};
static_assert(covers_enum<element_walk_names>());

/// How a fused attention kernel lays its work out in thread blocks (attention_shape::kernel): the
/// units cost.hpp prices and how it splits the keys.
enum class attention_kernel : std::uint8_t {
    /// FlashAttention-2's layout (Dao 2023), taken for cuDNN's and CANN's kernels too (an
    /// assumption): a block per batch, query head and 128-row query block (a decode step under
    /// grouped-query attention packs its group); the keys split as a GEMM's K when the blocks
    /// leave cores idle (cost.hpp split_k).
    flash_attention,
    /// FlashInfer's batch prefill (BatchPrefillWithPagedKVCache / RaggedKVCache, which vLLM,
    /// SGLang and sarathi-serve also run their decode steps through): the query rows of a KV
    /// head's group packed into one block's rows, 128-row blocks when more than 64 rows are
    /// packed, else 64; the keys split in chunks of at least attention_shape::kv_chunk_min so
    /// that the blocks fill two an SM (cost.hpp flashinfer_split). Source: FlashInfer's
    /// PrefillSplitQOKVIndptr and PrefillBinarySearchKVChunkSize (include/flashinfer/attention/
    /// handler.cuh, v0.0.5-v0.1.6; scheduler.cuh since), num_blocks_per_sm = 2.
    flashinfer,
};

/// attention_kernel's names, as model files write them (`kernel=flashinfer`).
inline constexpr std::array<enum_entry<attention_kernel>, 2> attention_kernel_names{{
    {attention_kernel::flash_attention, "flash_attention"},
    {attention_kernel::flashinfer, "flashinfer"},
}};
static_assert(covers_enum<attention_kernel_names>());

/// Packed query rows of FlashInfer's block: 128 past 64 rows (its warp layout k4x1x2: four warps
/// of two 16-row fragments), else one smaller block (PrefillSplitQOKVIndptr's choice by the
/// average packed rows, FlashInfer v0.0.5 on).
inline constexpr std::int64_t flashinfer_block_rows = 128;
inline constexpr std::int64_t flashinfer_small_block_rows = 64;
/// Head dim from which FlashInfer's blocks keep 64 rows (the same choice: head_dim < 256 for 128).
inline constexpr std::int64_t flashinfer_wide_head_dim = 256;

/// Fewest keys FlashInfer's split gives a block: 128 (min_kv_chunk_size = max(128 / page_size,
/// 1) pages in PrefillSplitQOKVIndptr, FlashInfer v0.0.7 of 2024-06-30 onwards, and v0.0.5).
inline constexpr std::int64_t flashinfer_kv_chunk_min = 128;
/// The same in FlashInfer v0.0.6 (2024-06-21; 512 / page_size pages), the release vidur's A100
/// Llama-3-8B attention profile was measured with (tests/data/README.md).
inline constexpr std::int64_t flashinfer_0_0_6_kv_chunk_min = 512;

/// Cube base tile (output block one core computes at a time): 128 x 256. Source: derived from the
/// 910B L0C buffer, l0_c_size = 131072 B in CANN 8.1.RC1 Ascend910B*.ini, holding 128 x 256 fp32
/// accumulators (4 B each). An assumption for other chips; calibrate with measured GEMMs.
inline constexpr std::int64_t cube_tile_m = 128;
inline constexpr std::int64_t cube_tile_n = 256;

/// Vector work unit: one 32-byte block, the smallest unit of a DataCopy on Ascend
/// (Ascend C: DataCopy lengths and UB addresses must be 32-byte aligned).
inline constexpr std::int64_t vector_block_bytes = 32;

/// A plain GEMM's sizes, kept so that cost() can tile it as the chip's libraries would
/// (chip::cube_tiles, cost.hpp): batch, M and N padded to the fractal, and the bytes of A (all
/// batches: read again for every N tile past the first) and of B as every batch reads it (read
/// again for every M tile past the first). All 0 for an op that is not a plain GEMM.
struct gemm_dims {
    std::int64_t batch = 0;
    std::int64_t m = 0;
    std::int64_t n = 0;
    data_size a{};
    data_size b{};
    [[nodiscard]] friend constexpr bool operator==(const gemm_dims&, const gemm_dims&) = default;
};

/// One op. Fields that do not apply to the kind stay at their defaults. Build ops with the
/// factory functions below rather than by hand: they check the arguments.
struct op {
    op_kind kind = op_kind::generic;
    engine eng = engine::vector;
    dtype type = dtype::fp16;      // compute dtype (inputs)
    dtype out_type = dtype::fp16;  // output dtype

    // Work and traffic, filled by the factories.
    double useful_ops = 0;          // MACs (cube) or element operations (vector, AI CPU)
    double ops_per_unit = 0;        // ops the hardware executes per work unit (with padding)
    std::int64_t work_units = 1;    // parallel units the op offers (tiles, rows, blocks)
    data_size bytes_read{};         // unique bytes read from global memory
    data_size bytes_written{};      // bytes written to global memory
    data_size reread{};             // extra reads implied by tiling (served by L2)
    data_size run{};                // typical contiguous run of a memory access
    double hot_fraction = 0;        // share of accesses that hit a few hot rows (gather)
    double m_efficiency = 1;        // cube: M / M padded to the fractal (1/16 for M = 1)
    std::int64_t k_depth = 0;       // cube: K padded to the fractal (split-K headroom)
    gemm_dims gemm{};               // cube: a plain GEMM's sizes (tile choice), else all 0
    // What the op's place in a sequence says (profile/context.hpp fills the first two from a
    // profile, l2_sequence.hpp the first and the third from a deployment's nodes; factories leave
    // them unknown):
    double l2_input_share = -1;  // share of the reads found in L2; < 0: decided by size
    data_size writeback{};       // dirty L2 lines (earlier ops' writes) this op's traffic evicts
    bool writes_reach_hbm = false;  // every byte it writes reaches HBM (written back later)
    bool first_run = false;      // first run of this kernel: its instructions are fetched cold
    // Cube ops with a vector part (attention's softmax): element operations the vector cores
    // run besides the cube work, in fp32, spread over `work_units` like the cube work. 0: none.
    double vector_ops = 0;
    // Rowwise ops that reduce each row across one GPU thread block (norms): the block's threads,
    // which with chip::overhead.core_threads set the rows a core keeps in flight; 0: none.
    std::int64_t row_threads = 0;
    // Their trips over the row: each thread's loads of it, ceil(width / row_threads) (rowwise);
    // each trip holds the block for chip::overhead.row_trip_cycles.
    std::int64_t row_trips = 0;
    // Fixed time of this kernel beyond the engine's head (scalar set-up, argument loads):
    // calibration fits one per op type (profile/calibrate.hpp); factories leave it 0.
    duration extra_head{};
    // Time per core held beyond the engine's per-core head: a kernel whose set-up grows with
    // the cores it starts (the 910B1 profile's ApplyAdamW of 4608, 6144 and 12288 elements, about
    // 1024 a core, takes 3.9, 4.4 and 6.1 us on 5, 6 and 12 cores). Calibration fits one per op
    // type in place of the fixed time where its rows say so (profile/calibrate_stages.hpp);
    // factories leave it 0.
    duration extra_per_core{};
    // Synchronizations of all the kernel's cores inside it (a data-dependent compaction such as
    // NonZero counts, synchronizes, then writes): each is priced as one more head on the op's
    // cores (cost.hpp), an assumption checked on the profiles' NonZero rows (docs/model.md).
    int syncs = 0;
    // A vector kernel that widens 16-bit floating-point data (fp16, bf16) and computes in fp32,
    // as some CANN kernels do by their source (profile/ops.hpp vector_type_traits::fp32_inside):
    // priced at the fp32 rate, with a conversion per element read or written in a 16-bit type,
    // on an engine whose library widens (engine_spec::widens_marked_kernels; cost.hpp). Default
    // false (elementwise_options and rowwise_options carry it): the op computes in its own dtype.
    bool fp32_arithmetic = false;
    // Its ops_per_unit is an assumed operation count (the profile mapping's traits table for a
    // type whose kernels it has not counted: profile/ops.hpp is_heavy_type), priced at the
    // engine's engine_spec::uncounted_work times it (cost.hpp). Factories leave it false.
    bool uncounted = false;
    // Cube GEMM: the largest power of two up to 16 dividing the bytes of both a K row and an N
    // row (16: aligned; engine_spec::narrow_rows_4 / _2 price less); 0: not a GEMM, or unknown.
    std::uint8_t row_align = 0;
    // Vector ops: how the kernel walks its elements (element_walk; engine_spec::walk_rate).
    element_walk walk = element_walk::vector;
    // Fused attention under a causal mask: the work of its heaviest unit (the last query block,
    // which sees every key) over the average unit's, q_len x kv_len / kept pairs; cost.hpp's
    // busiest core computes at least that many average units. 1: even units.
    double heaviest_unit = 1;
    // Fused attention in FlashInfer's layout (attention_kernel::flashinfer): the fewest keys its
    // split of the keys (op::k_depth) gives a block (cost.hpp flashinfer_split); 0: not that
    // layout (the keys split as a GEMM's K).
    std::int64_t kv_chunk_min = 0;
    // A walked op's (or a softmax's, on a GPU: engine_spec::softmax_warp_rate) work per element
    // relative to the walk's rate (2: half the rate): a calibrated work factor of its type
    // scales the walk as it scales the rest of its work (profile calibration's with_work); 1
    // otherwise.
    double walk_work = 1;

    [[nodiscard]] constexpr flop_count flops() const noexcept {
        return flop_count{useful_ops * (eng == engine::cube ? 2.0 : 1.0), units::flop};
    }
    [[nodiscard]] constexpr data_size bytes() const noexcept { return bytes_read + bytes_written; }
    [[nodiscard]] friend constexpr bool operator==(const op&, const op&) = default;
};

namespace detail {
constexpr void expect_dim(std::int64_t v, std::string_view where, std::string_view field) {
    PERFCAST_EXPECTS(v >= 1, where, field, static_cast<double>(v), "a dimension >= 1");
}
/// `v` rounded up to a multiple of `unit`, checked: a dimension near 2^63 is "too large".
constexpr std::int64_t round_up(std::int64_t v, std::int64_t unit, std::string_view where,
                                std::string_view field) {
    return checked_product(ceil_div(v, unit), unit, where, field);
}
constexpr data_size bytes_of(std::int64_t elements, dtype t) noexcept {
    return static_cast<double>(elements) * size_of(t);
}
/// 32-byte blocks of `elements`; a byte count past 2^63 - 1 is an error naming `where`.
constexpr std::int64_t blocks_of(std::int64_t elements, dtype t,
                                 std::string_view where = "vector op",
                                 std::string_view field = "bytes (elements x dtype size)") {
    const auto bytes = static_cast<std::int64_t>(size_of(t).in(units::B));
    return ceil_div(checked_product(elements, bytes, where, field), vector_block_bytes);
}
/// Whether a cast from `from` to `to` widens floating-point data (fp16 / bf16 -> fp32 or fp64,
/// fp32 -> fp64): element_walk::indexed (PyTorch's CUDA copy converts such casts one element
/// at a time, its vectorized conversion kernel being fp32 -> bf16's).
constexpr bool widens(dtype from, dtype to) noexcept {
    return !is_integer(from) && !is_integer(to) && size_of(to) > size_of(from);
}
/// Not constexpr (reached in constant evaluation, a compile error): "`field` = `value`,
/// expected `head``bound``tail`", for a bound that is another argument ("k <= valid (5)").
[[noreturn]] inline void bound_failed(std::string_view where, std::string_view field,
                                      std::int64_t value, std::string_view head, std::int64_t bound,
                                      std::string_view tail) {
    std::string expected(head);
    expected += std::to_string(bound);
    expected += tail;
    precondition_failed(where, field, std::to_string(value), expected);
}
/// Not constexpr: shapes `a` and `b` differ at dimension `i` of the longer one (aligned at their
/// last dimensions), neither size being 1.
[[noreturn]] inline void shapes_incompatible(std::string_view where, const shape& a, const shape& b,
                                             std::size_t i) {
    const std::size_t rank = a.rank() > b.rank() ? a.rank() : b.rank();
    std::string field = "dimension ";
    field += std::to_string(i);
    if (a.rank() != b.rank()) field += " (of the longer shape)";
    field += " of ";
    field += shape_text(a);
    field += " and ";
    field += shape_text(b);
    std::string value = std::to_string(a[i - (rank - a.rank())]);
    value += " and ";
    value += std::to_string(b[i - (rank - b.rank())]);
    precondition_failed(where, field, value,
                        "broadcast-compatible sizes (equal, or 1 in one of them)");
}
/// Where broadcasting `in` to `out` fails (numpy's rules, the shapes aligned at their last
/// dimensions: every input dimension 1 or the output's): that input dimension, or in.rank() when
/// it does not fail. An input of higher rank than the output fails at dimension 0.
[[nodiscard]] constexpr std::size_t broadcast_fails_at(const shape& in, const shape& out) noexcept {
    if (in.rank() > out.rank()) return 0;
    const std::size_t lead = out.rank() - in.rank();
    for (std::size_t i = 0; i < in.rank(); ++i) {
        if (in[i] != 1 && in[i] != out[lead + i]) return i;
    }
    return in.rank();
}
/// Not constexpr: the error of a broadcast of `in` to `out` that fails at input dimension `i`
/// (broadcast_fails_at). `field_head` starts the field ("broadcast " where `where` does not say
/// the kind); `shapes` says whose shapes, by default "input [2, 300] to output [3, 300]".
[[noreturn]] inline void broadcast_failed(std::string_view where, std::string_view field_head,
                                          const shape& in, const shape& out, std::size_t i,
                                          std::string_view shapes = {}) {
    std::string field(field_head);
    std::string value;
    std::string expected;
    if (in.rank() > out.rank()) {
        field += "input rank";
        value = std::to_string(in.rank());
        expected = "at most the output's rank, ";
        expected += std::to_string(out.rank());
    } else {
        field += "input dimension ";
        field += std::to_string(i);
        value = std::to_string(in[i]);
        expected = "1 or the output's ";
        expected += std::to_string(out[out.rank() - in.rank() + i]);
    }
    expected += " (";
    if (shapes.empty()) {
        expected += "input ";
        expected += shape_text(in);
        expected += " to output ";
        expected += shape_text(out);
    }
    expected += shapes;
    expected += ')';
    precondition_failed(where, field, value, expected);
}
}  // namespace detail

/// Options of a matrix multiply.
struct matmul_options {
    bool broadcast_b = false;  // B is shared by every batch (a broadcast BMM, guide §9)
    /// The output's dtype; nothing: the inputs' (as a model file's `out=` defaults, and as
    /// elementwise ops keep theirs).
    std::optional<dtype> out_type{};
    /// With broadcast_b: how many distinct [K, N] matrices B holds, each shared by batch /
    /// b_matrices of the batch (per-head weights [H, K, N] under activations [B, H, M, K]:
    /// H); 0 or 1: one. Without broadcast_b, B is one matrix per batch entry.
    std::int64_t b_matrices = 0;
};

namespace detail {
/// The largest power of two up to 16 dividing the bytes of a K row and of an N row of dtype `t`
/// (op::row_align); 0 for dtypes of 4 bytes or more and of fractional bytes. On the H200, fp32
/// GEMMs (FFMA kernels) ran as fast with K or N of 4095 as of 4096 (docs/validation.md,
/// "Measured on an H200"); tf32 / hf32 were not measured, so they are not marked either.
[[nodiscard]] constexpr std::int64_t row_align(std::int64_t k, std::int64_t n, dtype t) noexcept {
    const double bytes = size_of(t).in(units::B);
    const auto whole = static_cast<std::int64_t>(bytes);
    if (whole < 1 || whole >= 4 || static_cast<double>(whole) != bytes) return 0;
    const std::int64_t bits = (k * whole) | (n * whole) | 16;
    return bits & -bits;  // the lowest set bit: the largest power of two dividing all three
}
}  // namespace detail

/// batch x ([M, K] x [K, N]) on the cube. Padded to the dtype's fractal; tiled in 128 x 256
/// output blocks (see cube_tile_m). A re-reads once per N tile and B once per M tile beyond the
/// first: those re-reads are served by L2.
[[nodiscard]] constexpr op batch_matmul(std::int64_t batch, std::int64_t m, std::int64_t n,
                                        std::int64_t k, dtype t, matmul_options o = {}) {
    // Named as the op it builds: a batch of 1 is a matmul (matmul() and `perfcast op --matmul`).
    const std::string_view where = batch == 1 ? "matmul" : "batch_matmul";
    detail::expect_dim(batch, where, "batch");
    detail::expect_dim(m, where, "m");
    detail::expect_dim(n, where, "n");
    detail::expect_dim(k, where, "k");
    const fractal_shape f = cube_fractal(t);
    const std::int64_t mp = detail::round_up(m, f.m, where, "m (padded to the fractal)");
    const std::int64_t np = detail::round_up(n, f.n, where, "n (padded to the fractal)");
    const std::int64_t kp = detail::round_up(k, f.k, where, "k (padded to the fractal)");
    const std::int64_t tm = mp < cube_tile_m ? mp : cube_tile_m;
    const std::int64_t tn = np < cube_tile_n ? np : cube_tile_n;
    const std::int64_t m_tiles = ceil_div(mp, tm);
    const std::int64_t n_tiles = ceil_div(np, tn);

    op r;
    r.kind = batch == 1 ? op_kind::matmul : op_kind::batch_matmul;
    r.eng = engine::cube;
    r.type = t;
    r.out_type = o.out_type.value_or(t);
    const std::int64_t mk = checked_product(m, k, where, "m*k");
    const std::int64_t kn = checked_product(k, n, where, "k*n");
    const std::int64_t mn = checked_product(m, n, where, "m*n");
    const std::int64_t macs = checked_product(checked_product(batch, mn, where, "batch*m*n"), k,
                                              where, "batch*m*n*k");
    r.useful_ops = static_cast<double>(macs);
    r.work_units = checked_product(
        batch, checked_product(m_tiles, n_tiles, where, "m tiles*n tiles"), where, "work units");
    r.ops_per_unit = static_cast<double>(tm) * static_cast<double>(tn) * static_cast<double>(kp);
    const data_size a = detail::bytes_of(checked_product(batch, mk, where, "batch*m*k"), t);
    PERFCAST_EXPECTS(o.b_matrices >= 0 && o.b_matrices <= batch &&
                         (o.b_matrices == 0 || batch % o.b_matrices == 0),
                     where, "b_matrices", static_cast<double>(o.b_matrices),
                     "0 (one) or a divisor of the batch (" + std::to_string(batch) + ")");
    const data_size b_one = detail::bytes_of(kn, t);
    const double b_count = !o.broadcast_b     ? static_cast<double>(batch)
                           : o.b_matrices > 1 ? static_cast<double>(o.b_matrices)
                                              : 1.0;
    const data_size b = b_count * b_one;
    r.bytes_read = a + b;
    r.bytes_written = detail::bytes_of(checked_product(batch, mn, where, "batch*m*n"), r.out_type);
    r.reread = a * static_cast<double>(n_tiles - 1) +
               static_cast<double>(batch) * b_one * static_cast<double>(m_tiles - 1);
    r.run = static_cast<double>(k) * size_of(t);
    r.m_efficiency = static_cast<double>(m) / static_cast<double>(mp);
    r.k_depth = kp;
    r.gemm = {.batch = batch, .m = mp, .n = np, .a = a, .b = static_cast<double>(batch) * b_one};
    r.row_align = static_cast<std::uint8_t>(detail::row_align(k, n, t));
    return r;
}

/// [M, K] x [K, N] on the cube.
[[nodiscard]] constexpr op matmul(std::int64_t m, std::int64_t n, std::int64_t k, dtype t,
                                  matmul_options o = {}) {
    return batch_matmul(1, m, n, k, t, o);
}

/// Operations per element of an elementwise or rowwise op: below 1e9. The profile mapping's
/// heaviest counted types do a few tens (profile/ops.hpp); a count past the bound is a mistake,
/// and one near 1e300 times the elements is no finite work. The model file's `ops=` checks it.
inline constexpr double max_ops_per_element = 1e9;

/// Options of an elementwise op.
struct elementwise_options {
    int inputs = 2;               // input tensors
    int outputs = 1;              // output tensors
    double ops_per_element = 1;   // vector operations per output element
    std::int64_t read_elements = -1;  // elements read over all inputs; -1: inputs x elements
    std::int64_t inner = 0;       // innermost dimension (contiguous run); 0: all elements
    dtype out_type = dtype::fp16;
    bool out_same_as_in = true;   // output dtype = input dtype (ignores out_type)
    bool fp32_arithmetic = false;  // 16-bit data widened to fp32 inside (op::fp32_arithmetic)
};

/// An elementwise op producing `elements` outputs on the vector unit.
[[nodiscard]] constexpr op elementwise(std::int64_t elements, dtype t,
                                       elementwise_options o = {}) {
    constexpr std::string_view where = "elementwise";
    detail::expect_dim(elements, where, "elements");
    PERFCAST_EXPECTS(o.inputs >= 1, where, "inputs", static_cast<double>(o.inputs), ">= 1");
    PERFCAST_EXPECTS(o.outputs >= 1, where, "outputs", static_cast<double>(o.outputs), ">= 1");
    PERFCAST_EXPECTS(o.ops_per_element > 0 && o.ops_per_element < max_ops_per_element, where,
                     "ops_per_element", o.ops_per_element, "a count per element in (0, 1e9)");
    PERFCAST_EXPECTS(o.read_elements >= -1, where, "read_elements",
                     static_cast<double>(o.read_elements), ">= 0 (or -1: inputs x elements)");
    PERFCAST_EXPECTS(o.inner >= 0, where, "inner", static_cast<double>(o.inner), ">= 0");
    op r;
    r.kind = op_kind::elementwise;
    r.eng = engine::vector;
    r.type = t;
    r.out_type = o.out_same_as_in ? t : o.out_type;
    r.useful_ops = static_cast<double>(elements) * o.ops_per_element;
    r.work_units = detail::blocks_of(elements, t, where, "bytes (elements x dtype size)");
    r.ops_per_unit = static_cast<double>(vector_block_bytes) / size_of(t).in(units::B) *
                     o.ops_per_element;
    const std::int64_t read = o.read_elements >= 0
                                  ? o.read_elements
                                  : checked_product(elements, o.inputs, where, "read elements");
    r.bytes_read = detail::bytes_of(read, t);
    r.bytes_written =
        detail::bytes_of(checked_product(elements, o.outputs, where, "written elements"),
                         r.out_type);
    r.run = detail::bytes_of(o.inner > 0 ? o.inner : elements, t);
    r.fp32_arithmetic = o.fp32_arithmetic;
    return r;
}

/// An elementwise binary op between two broadcast-compatible shapes (numpy rules), e.g.
/// Equal on [1, 4000] and [400, 1] (guide §7) produces [400, 4000].
[[nodiscard]] constexpr op elementwise_broadcast(const shape& a, const shape& b, dtype t,
                                                 elementwise_options o = {}) {
    constexpr std::string_view where = "elementwise_broadcast";
    const std::size_t rank = a.rank() > b.rank() ? a.rank() : b.rank();
    std::int64_t out = 1;
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t da = i < a.rank() ? a[a.rank() - 1 - i] : 1;
        const std::int64_t db = i < b.rank() ? b[b.rank() - 1 - i] : 1;
        if (da != db && da != 1 && db != 1) detail::shapes_incompatible(where, a, b, rank - 1 - i);
        out = checked_product(out, da > db ? da : db, where, "output elements");
    }
    o.inputs = 2;
    o.read_elements = checked_sum(a.elements(), b.elements(), where, "read elements");
    op r = elementwise(out, t, o);
    // An operand of more than one element and fewer than the output's is walked by index (a
    // one-element operand is a scalar argument to the kernel).
    const auto broadcast = [out](std::int64_t n) { return n > 1 && n < out; };
    if (broadcast(a.elements()) || broadcast(b.elements())) r.walk = element_walk::indexed;
    return r;
}

/// Cast `elements` from one dtype to another on the vector unit.
[[nodiscard]] constexpr op cast(std::int64_t elements, dtype from, dtype to) {
    elementwise_options o;
    o.inputs = 1;
    o.out_same_as_in = false;
    o.out_type = to;
    op r = elementwise(elements, from, o);
    r.kind = op_kind::cast;
    if (detail::widens(from, to)) r.walk = element_walk::indexed;
    return r;
}

/// Reduce `rows` rows of `length` elements each to one value per row.
[[nodiscard]] constexpr op reduce(std::int64_t rows, std::int64_t length, dtype t) {
    constexpr std::string_view where = "reduce";
    detail::expect_dim(rows, where, "rows");
    detail::expect_dim(length, where, "length");
    const std::int64_t elements = checked_product(rows, length, where, "elements");
    op r;
    r.kind = op_kind::reduce;
    r.eng = engine::vector;
    r.type = t;
    r.out_type = t;
    r.useful_ops = static_cast<double>(elements);
    r.work_units = detail::blocks_of(elements, t, where);
    r.ops_per_unit = static_cast<double>(vector_block_bytes) / size_of(t).in(units::B);
    r.bytes_read = detail::bytes_of(elements, t);
    r.bytes_written = detail::bytes_of(rows, t);
    r.run = detail::bytes_of(length, t);
    return r;
}

/// Gather `indices` rows of `row_bytes` each from a table of `table_rows` rows. `hot_fraction`
/// (0..1) is the share of indices that hit a few hot rows: cores then conflict on the same
/// addresses (guide §7, §12).
struct gather_options {
    double hot_fraction = 0;
    dtype index_type = dtype::int32;
};
[[nodiscard]] constexpr op gather(std::int64_t indices, data_size row_bytes,
                                  std::int64_t table_rows, dtype t, gather_options o = {}) {
    constexpr std::string_view where = "gather";
    detail::expect_dim(indices, where, "indices");
    detail::expect_dim(table_rows, where, "table_rows");
    PERFCAST_EXPECTS(row_bytes.in(units::B) >= 1 && row_bytes.in(units::B) < 1e15, where,
                     "row_bytes", row_bytes.in(units::B), "a row size in [1, 1e15) bytes");
    PERFCAST_EXPECTS(o.hot_fraction >= 0 && o.hot_fraction <= 1, where, "hot_fraction",
                     o.hot_fraction, "a share in [0, 1]");
    op r;
    r.kind = op_kind::gather;
    r.eng = engine::vector;
    r.type = t;
    r.out_type = t;
    r.useful_ops = 0;  // pure data movement
    r.work_units = indices;
    r.ops_per_unit = 0;
    const data_size moved = static_cast<double>(indices) * row_bytes;
    r.bytes_read = moved + detail::bytes_of(indices, o.index_type);
    r.bytes_written = moved;
    r.run = row_bytes;
    r.hot_fraction = o.hot_fraction;
    return r;
}

/// TopK over `rows` rows of `length` elements, of which only `valid` are real data (the rest
/// padding). A kernel that knows the valid length reads and sorts only `valid` elements
/// (guide §10); pass valid = length, or 0 (the default: the whole length), for the padded
/// kernel. k <= valid: it keeps k of the valid elements. Integer values run on the AI CPU
/// (guide §8).
[[nodiscard]] constexpr op topk(std::int64_t rows, std::int64_t length, std::int64_t k, dtype t,
                                std::int64_t valid = 0) {
    constexpr std::string_view where = "topk";
    detail::expect_dim(rows, where, "rows");
    detail::expect_dim(length, where, "length");
    detail::expect_dim(k, where, "k");
    if (k > length) detail::bound_failed(where, "k", k, "k <= length (", length, ")");
    if (valid < 0 || valid > length) {
        detail::bound_failed(where, "valid", valid, "1 <= valid <= length (", length,
                             "), or 0: the whole length");
    }
    if (valid == 0) valid = length;
    if (k > valid) {
        detail::bound_failed(where, "k", k, "k <= valid (", valid,
                             "): a TopK keeps k of the valid elements");
    }
    // Selection cost per element grows with log2(k) (a heap or merge of k candidates).
    double log2k = 1;
    for (std::int64_t v = 2; v < k; v *= 2) log2k += 1;
    op r;
    r.kind = op_kind::topk;
    r.eng = is_integer(t) ? engine::aicpu : engine::vector;
    r.type = t;
    r.out_type = t;
    const std::int64_t processed = checked_product(rows, valid, where, "rows*valid");
    r.useful_ops = static_cast<double>(processed) * log2k;
    r.work_units = rows;
    r.ops_per_unit = static_cast<double>(valid) * log2k;
    r.bytes_read = detail::bytes_of(processed, t);
    r.bytes_written = detail::bytes_of(checked_product(rows, k, where, "rows*k"), t) +
                      detail::bytes_of(rows * k, dtype::int32);
    r.run = detail::bytes_of(valid, t);
    return r;
}

namespace detail {
constexpr op data_move(op_kind kind, std::int64_t read, std::int64_t written, std::int64_t run,
                       dtype t, std::string_view where) {
    op r;
    r.kind = kind;
    r.eng = engine::vector;
    r.type = t;
    r.out_type = t;
    r.useful_ops = 0;
    r.work_units = blocks_of(written, t, where);
    r.ops_per_unit = 0;
    r.bytes_read = bytes_of(read, t);
    r.bytes_written = bytes_of(written, t);
    r.run = bytes_of(run, t);
    return r;
}
}  // namespace detail

/// Tile `in` by `multiples` (per dimension): reads the input once, writes the product.
[[nodiscard]] constexpr op tile(const shape& in, const shape& multiples, dtype t) {
    constexpr std::string_view where = "tile";
    PERFCAST_EXPECTS(multiples.rank() == in.rank(), where, "multiples",
                     static_cast<double>(multiples.rank()), "one multiple per input dimension");
    const std::int64_t read = in.elements("tile input");
    const std::int64_t written =
        checked_product(read, multiples.elements("tile multiples"), where, "output elements");
    return detail::data_move(op_kind::tile, read, written, in.inner(), t, where);
}

/// Concatenate tensors along one axis; `inner` is the contiguous run written per row.
[[nodiscard]] constexpr op concat(std::initializer_list<shape> inputs, std::int64_t inner,
                                  dtype t) {
    constexpr std::string_view where = "concat";
    PERFCAST_EXPECTS(inputs.size() >= 1, where, "inputs", static_cast<double>(inputs.size()),
                     "at least one input");
    detail::expect_dim(inner, where, "inner");
    std::int64_t total = 0;
    for (const shape& s : inputs) {
        total = checked_sum(total, s.elements("concat input"), where, "concat elements");
    }
    return detail::data_move(op_kind::concat, total, total, inner, t, where);
}

/// Broadcast `in` to `out` (materialized copy): numpy's rules, every input dimension 1 or the
/// output's (the shapes aligned at their last dimensions).
[[nodiscard]] constexpr op broadcast(const shape& in, const shape& out, dtype t) {
    if (const std::size_t i = detail::broadcast_fails_at(in, out); i < in.rank())
        detail::broadcast_failed("broadcast", "", in, out, i);
    return detail::data_move(op_kind::broadcast, in.elements("broadcast input"),
                             out.elements("broadcast output"), in.inner(), t, "broadcast");
}

/// Transpose `in`. When the innermost axis moves, every element is its own contiguous run (and
/// the op is walked transposed: element_walk); when it stays, the copy of a permuted view is
/// walked by index.
[[nodiscard]] constexpr op transpose(const shape& in, dtype t, bool inner_axis_moves = true) {
    const std::int64_t n = in.elements("transpose input");
    op r = detail::data_move(op_kind::transpose, n, n, inner_axis_moves ? 1 : in.inner(), t,
                             "transpose");
    r.walk = inner_axis_moves ? element_walk::transposed : element_walk::indexed;
    return r;
}

// ---------------------------------------------------------------------------------------------
// Ops of today's language models (issue 13): fused attention, grouped (MoE) GEMMs, fills and
// row-parallel vector ops.

/// Vector operations per score element of a fused attention's softmax, in fp32 (the kernels keep
/// scores in fp32). Forward, the online softmax of FlashAttention (Dao et al. 2022, Algorithm 1;
/// Dao 2023, Algorithm 1): scale 1, mask 1, running max 1, subtract 1, exp 4, row sum 1, cast of P
/// to the input dtype 1 = 10. Backward (Dao 2023, Algorithm 2): recompute P (scale, mask,
/// subtract, exp: 7), dS = P o (dP - D) 2, scale 1, two casts 2 = 12. Dropout adds 2 (mask and
/// rescale). Exp as 4 operations is profile/ops.hpp's vector_types row for Exp. These are
/// instruction counts of a straightforward kernel, assumptions: a measured attention row
/// anchors them (profile/anchored.hpp scales the whole op).
inline constexpr double attention_vector_ops_forward = 10;
inline constexpr double attention_vector_ops_backward = 12;
inline constexpr double attention_vector_ops_dropout = 2;
/// Backward FLOPs over forward FLOPs: 2.5 (Dao 2023, FlashAttention-2, §4.1: five matrix
/// multiplies in the backward pass against two in the forward pass).
inline constexpr double attention_backward_factor = 2.5;
/// Query rows one core takes at a time: 128 (FlashAttention-2 picks query blocks of 64 or 128,
/// Dao 2023 §3.3; 128 assumed, also on Ascend). Work units are (batch, head, query block).
inline constexpr std::int64_t attention_block_rows = 128;

/// A fused attention: batch x q_heads queries of q_len rows against kv_len keys, head_dim wide.
/// GQA / MQA: kv_heads < q_heads (q_heads a multiple of kv_heads). The layout (BSH, SBH, BNSD,
/// BSND) changes nothing the model sees: only these sizes matter.
struct attention_shape {
    std::int64_t batch = 1;
    std::int64_t q_heads = 1;
    std::int64_t kv_heads = 1;
    std::int64_t q_len = 1;
    std::int64_t kv_len = 1;
    std::int64_t head_dim = 128;
    bool causal = false;    // lower-triangular mask: blocks above the diagonal are skipped
    bool backward = false;  // FlashAttentionScoreGrad: 2.5x the forward GEMM work
    bool dropout = false;   // a dropout mask is applied to P
    attention_kernel kernel = attention_kernel::flash_attention;  // its blocks' layout
    std::int64_t kv_chunk_min = flashinfer_kv_chunk_min;  // flashinfer: fewest keys a split gives
    [[nodiscard]] friend constexpr bool operator==(const attention_shape&,
                                                   const attention_shape&) = default;
};

namespace detail {
/// causal_pairs in doubles, also for the fractional query counts of packed blocks; 0 for no
/// queries or no keys.
[[nodiscard]] constexpr double causal_pairs_of(double q, double kv) noexcept {
    if (q <= 0 || kv <= 0) return 0;
    if (q <= kv) return q * (kv - q) + q * (q + 1) / 2;
    return kv * (kv + 1) / 2;  // the first q - kv queries see no key
}
}  // namespace detail

/// Query-key pairs a causal mask keeps, the queries being the last q_len of kv_len positions
/// (bottom-right alignment, as with a KV cache): query i (from 0) sees kv_len - q_len + i + 1
/// keys. q_len = kv_len = S keeps S (S + 1) / 2 pairs: about half.
[[nodiscard]] constexpr double causal_pairs(std::int64_t q_len, std::int64_t kv_len) noexcept {
    return detail::causal_pairs_of(static_cast<double>(q_len), static_cast<double>(kv_len));
}

namespace detail {
/// The kept pairs of a causal attention's heaviest query block over its average block's: `blocks`
/// blocks of `block_queries` queries each (the last one the rest), the queries the last q_len of
/// kv_len positions, so that the last full block or the partial one after it is the heaviest.
/// 1 for one block; never more than `blocks`.
[[nodiscard]] constexpr double causal_heaviest(std::int64_t q_len, std::int64_t kv_len,
                                               double block_queries, std::int64_t blocks) noexcept {
    if (blocks <= 1) return 1;
    const auto q = static_cast<double>(q_len);
    const auto kv = static_cast<double>(kv_len);
    const double all = causal_pairs_of(q, kv);
    if (!(all > 0)) return 1;
    // Kept pairs of the last t queries: all, less those of the queries before them.
    const auto last = [&](double t) { return all - causal_pairs_of(q - t, kv - t); };
    double tail = q - block_queries * static_cast<double>(blocks - 1);
    if (!(tail > 0) || tail > block_queries) tail = block_queries;
    const double end = last(tail);
    const double before = last(tail + block_queries) - end;
    const double heaviest = end > before ? end : before;
    const double r = heaviest * static_cast<double>(blocks) / all;
    return r > 1 ? r : 1;
}
}  // namespace detail

/// Fused attention (FlashAttention, FlashAttentionScore and its grad, Prompt/IncreFlashAttention,
/// FusedInferAttentionScore, paged attention) as cube work and vector work:
///  - cube: QK^T and PV, head_dim MACs each per kept query-key pair, so 4 x B x Nq x pairs x D
///    FLOPs forward (pairs = q_len x kv_len, or causal_pairs() under a causal mask); 2.5x that
///    backward;
///  - vector: the softmax, attention_vector_ops_* per kept pair in fp32 (op::vector_ops), run
///    on the vector cores (cost.hpp; the cube and vector times add: each block's softmax waits
///    for its QK^T and its PV for the softmax, an assumption of no overlap);
///  - memory: Q, K, V read and O written (backward also O and dO read, dQ, dK, dV written); K
///    and V re-read by every query block beyond the first, served by L2;
///  - work units: (batch, query head, 128-row query block); a decode step under grouped-query
///    attention, (batch, KV head): its group of query heads are one block's rows; in
///    FlashInfer's layout (attention_shape::kernel) every q_len packs its group so, in 128-row
///    blocks past 64 packed rows (padding priced), one block up to 64;
///  - depth: the keys (op::k_depth), which cost.hpp splits over cores the units leave idle (in
///    FlashInfer's layout as its plan does: op::kv_chunk_min);
///  - a causal mask's heaviest unit (op::heaviest_unit): the last query block sees every key,
///    so a core computes at least q_len x kv_len / kept pairs average units' work.
/// Every kept pair is priced: the compute term is never below FLOPs / peak cube rate.
[[nodiscard]] constexpr op attention(const attention_shape& a, dtype t) {
    constexpr std::string_view where = "attention";
    detail::expect_dim(a.batch, where, "batch");
    detail::expect_dim(a.q_heads, where, "q_heads");
    detail::expect_dim(a.kv_heads, where, "kv_heads");
    detail::expect_dim(a.q_len, where, "q_len");
    detail::expect_dim(a.kv_len, where, "kv_len");
    detail::expect_dim(a.head_dim, where, "head_dim");
    PERFCAST_EXPECTS(a.q_heads % a.kv_heads == 0, where, "kv_heads",
                     static_cast<double>(a.kv_heads), "a divisor of q_heads (GQA groups)");
    const double pairs = a.causal ? causal_pairs(a.q_len, a.kv_len)
                                  : static_cast<double>(a.q_len) * static_cast<double>(a.kv_len);
    const double bn = static_cast<double>(a.batch) * static_cast<double>(a.q_heads);
    const std::int64_t q_blocks = ceil_div(a.q_len, attention_block_rows);
    const std::int64_t q_elems =
        checked_product(checked_product(checked_product(a.batch, a.q_heads, where, "batch*q_heads"),
                                        a.q_len, where, "query rows"),
                        a.head_dim, where, "query elements");
    const std::int64_t kv_elems = checked_product(
        checked_product(checked_product(a.batch, a.kv_heads, where, "batch*kv_heads"), a.kv_len,
                        where, "key rows"),
        a.head_dim, where, "key elements");
    op r;
    r.kind = op_kind::attention;
    r.eng = engine::cube;
    r.type = t;
    r.out_type = t;
    r.useful_ops = 2.0 * bn * pairs * static_cast<double>(a.head_dim) *
                   (a.backward ? attention_backward_factor : 1.0);
    // A decode step under grouped-query attention (one query row, several query heads per KV
    // head) runs each KV head's query heads as the rows of one block, so that K and V are read
    // once per group (FlashAttention's seqlenq_ngroups_swapped, cuDNN's and FlashDecoding's GQA
    // packing): B x Nkv blocks of group rows, not B x Nq blocks of one row.
    const bool packed = a.q_len == 1 && a.q_heads > a.kv_heads;
    r.work_units =
        packed ? checked_product(checked_product(a.batch, a.kv_heads, where, "batch*kv_heads"),
                                 ceil_div(a.q_heads / a.kv_heads, attention_block_rows), where,
                                 "work units")
               : checked_product(checked_product(a.batch, a.q_heads, where, "batch*q_heads"),
                                 q_blocks, where, "work units");
    r.ops_per_unit = r.useful_ops / static_cast<double>(r.work_units);
    // Each query head reads its KV head's K and V once per query block.
    double k_v_reads =
        static_cast<double>(a.q_heads / a.kv_heads) * static_cast<double>(q_blocks - 1);
    // A head's query blocks and the queries of each (a causal mask's heaviest block, below).
    std::int64_t head_blocks = packed ? 1 : q_blocks;
    auto block_queries = static_cast<double>(attention_block_rows);
    double padding = 1;  // padded rows over rows, which ops_per_unit already prices
    if (a.kernel == attention_kernel::flashinfer) {
        // FlashInfer's blocks: a KV head's query heads packed as rows (every q_len, not only a
        // decode step's), past 64 packed rows 128 of them a block (64 from a head dim of 256),
        // one block up to 64 (its smaller tiles, 64 or 16 rows by the release, left to the
        // chip's per-block floor as FlashAttention-2's decode blocks are: their rows are priced
        // as they are). K and V are read once per block of the group.
        PERFCAST_EXPECTS(a.kv_chunk_min >= 1, where, "kv_chunk_min",
                         static_cast<double>(a.kv_chunk_min), "a key count >= 1");
        const std::int64_t rows =
            checked_product(a.q_len, a.q_heads / a.kv_heads, where, "packed query rows");
        const bool big = rows > flashinfer_small_block_rows;
        const std::int64_t block_rows = a.head_dim < flashinfer_wide_head_dim
                                            ? flashinfer_block_rows
                                            : flashinfer_small_block_rows;
        const std::int64_t tiles = big ? ceil_div(rows, block_rows) : 1;
        r.work_units =
            checked_product(checked_product(a.batch, a.kv_heads, where, "batch*kv_heads"), tiles,
                            where, "work units");
        const double padded = big ? static_cast<double>(tiles) * static_cast<double>(block_rows)
                                  : static_cast<double>(rows);
        r.ops_per_unit =
            r.useful_ops / static_cast<double>(r.work_units) * padded / static_cast<double>(rows);
        r.kv_chunk_min = a.kv_chunk_min;
        k_v_reads = static_cast<double>(tiles - 1);
        head_blocks = tiles;
        padding = padded / static_cast<double>(rows);
        block_queries = static_cast<double>(block_rows) /
                        static_cast<double>(a.q_heads / a.kv_heads);  // a group's rows a query
    }
    // Under a causal mask a head's last query blocks see the most keys: the heaviest unit.
    if (a.causal) {
        const double heaviest =
            detail::causal_heaviest(a.q_len, a.kv_len, block_queries, head_blocks) / padding;
        r.heaviest_unit = heaviest > 1 ? heaviest : 1;
    }
    r.vector_ops = bn * pairs *
                   ((a.backward ? attention_vector_ops_backward : attention_vector_ops_forward) +
                    (a.dropout ? attention_vector_ops_dropout : 0.0));
    const data_size q = detail::bytes_of(q_elems, t);
    const data_size kv = detail::bytes_of(kv_elems, t);
    r.bytes_read = a.backward ? 3.0 * q + 2.0 * kv : q + 2.0 * kv;
    r.bytes_written = a.backward ? q + 2.0 * kv : q;
    // A causal mask skips the blocks above the diagonal: their K and V are not read either.
    const double kept = pairs / (static_cast<double>(a.q_len) * static_cast<double>(a.kv_len));
    r.reread = 2.0 * kv * k_v_reads * kept;
    r.run = static_cast<double>(a.head_dim) * size_of(t);
    // The keys are the depth a kernel splits when its query blocks leave cores idle
    // (FlashAttention's split-KV, num_splits; CANN IncreFlashAttention's flash decoding):
    // cost.hpp's split-K, in chunks of split_k_chunk keys, partial outputs in fp32; in
    // FlashInfer's layout as its plan splits them (cost.hpp flashinfer_split, op::kv_chunk_min).
    r.k_depth = a.kv_len;
    return r;
}

namespace detail {
/// Adds GEMM `g` to grouped GEMM `acc`; `padded` sums units x ops per unit (tile padding).
constexpr void add_gemm(op& acc, const op& g, double& padded, double& m_sum, double& mp_sum) {
    acc.useful_ops += g.useful_ops;
    acc.work_units = checked_sum(acc.work_units, g.work_units, "grouped_matmul", "work units");
    padded += static_cast<double>(g.work_units) * g.ops_per_unit;
    acc.bytes_read += g.bytes_read;
    acc.bytes_written += g.bytes_written;
    acc.reread += g.reread;
    m_sum += g.useful_ops * g.m_efficiency;
    mp_sum += g.useful_ops;
}
constexpr op grouped_from(op acc, double padded, double m_sum, double mp_sum) {
    acc.kind = op_kind::grouped_matmul;
    acc.ops_per_unit = padded / static_cast<double>(acc.work_units);
    acc.m_efficiency = mp_sum > 0 ? m_sum / mp_sum : 1.0;
    acc.k_depth = 0;  // no split-K: a grouped GEMM's tiles are many (an assumption)
    return acc;
}
constexpr op grouped_start(std::int64_t k, dtype t, const matmul_options& o) {
    op acc;
    acc.eng = engine::cube;
    acc.type = t;
    acc.out_type = o.out_type.value_or(t);
    acc.work_units = 0;
    acc.run = static_cast<double>(k) * size_of(t);
    return acc;
}
}  // namespace detail

/// A grouped GEMM (MoE, GroupedMatmul): expert e multiplies its tokens[e] rows [tokens[e], K] by
/// its own weight [K, N]; experts without tokens read no weight. The work is the sum of the
/// per-expert GEMMs, each padded to its own tiles (an expert's last M tile is partly empty), and
/// every expert's tiles share the cores in one kernel (the waves are counted over all tiles).
[[nodiscard]] constexpr op grouped_matmul(std::span<const std::int64_t> tokens, std::int64_t n,
                                          std::int64_t k, dtype t, matmul_options o = {}) {
    constexpr std::string_view where = "grouped_matmul";
    PERFCAST_EXPECTS(!tokens.empty(), where, "experts", 0.0, "at least one expert");
    op acc = detail::grouped_start(k, t, o);
    double padded = 0, m_sum = 0, mp_sum = 0;
    for (std::int64_t m : tokens) {
        PERFCAST_EXPECTS(m >= 0, where, "tokens", static_cast<double>(m),
                         "a token count >= 0 per expert");
        if (m > 0) detail::add_gemm(acc, matmul(m, n, k, t, o), padded, m_sum, mp_sum);
    }
    PERFCAST_EXPECTS(acc.work_units >= 1, where, "tokens", 0.0, "at least one token in all");
    return detail::grouped_from(acc, padded, m_sum, mp_sum);
}

/// A grouped GEMM of `tokens` rows spread evenly over `experts` experts (the first tokens %
/// experts experts get one more): what a profile row or a model file can say without the
/// group list.
[[nodiscard]] constexpr op grouped_matmul_even(std::int64_t tokens, std::int64_t experts,
                                               std::int64_t n, std::int64_t k, dtype t,
                                               matmul_options o = {}) {
    constexpr std::string_view where = "grouped_matmul";
    detail::expect_dim(tokens, where, "tokens");
    detail::expect_dim(experts, where, "experts");
    const std::int64_t q = tokens / experts;
    const std::int64_t more = tokens % experts;
    op acc = detail::grouped_start(k, t, o);
    double padded = 0, m_sum = 0, mp_sum = 0;
    // Experts of one size are a batch of GEMMs with their own weights.
    if (more > 0)
        detail::add_gemm(acc, batch_matmul(more, q + 1, n, k, t, o), padded, m_sum, mp_sum);
    if (q > 0) {
        detail::add_gemm(acc, batch_matmul(experts - more, q, n, k, t, o), padded, m_sum, mp_sum);
    }
    return detail::grouped_from(acc, padded, m_sum, mp_sum);
}

/// A fill (ZerosLike, OnesLike, Fill, a memset): writes `elements` values and reads nothing
/// (ZerosLike uses only its input's shape); no vector work beyond the stores.
[[nodiscard]] constexpr op fill(std::int64_t elements, dtype t) {
    constexpr std::string_view where = "fill";
    detail::expect_dim(elements, where, "elements");
    op r;
    r.kind = op_kind::fill;
    r.eng = engine::vector;
    r.type = t;
    r.out_type = t;
    r.work_units = detail::blocks_of(elements, t, where);
    r.bytes_written = detail::bytes_of(elements, t);
    r.run = r.bytes_written;
    return r;
}

/// Options of a row-parallel op.
struct rowwise_options {
    double ops_per_element = 1;       // vector operations per output element
    std::int64_t read_elements = -1;  // elements read over all inputs; -1: rows x width
    std::int64_t out_width = 0;       // output elements per row; 0: width (SwiGlu: width / 2)
    dtype out_type = dtype::fp16;
    bool out_same_as_in = true;
    /// Threads of the GPU thread block that reduces one row (a norm; profile/ops.hpp sets it
    /// for the norm types); 0: the row is not reduced across a block (rope, SwiGlu), no row
    /// floor. Used only on a chip with a row latency (chip::overhead.row_trip_cycles).
    std::int64_t row_threads = 0;
    bool fp32_arithmetic = false;  // 16-bit data widened to fp32 inside (op::fp32_arithmetic)
    /// How the kernel walks the row's elements (op::walk): element_walk::indexed for a kernel
    /// that loops over them one at a time, computing each one's offsets (the GPU rope and gated
    /// activation kernels of sarathi-serve; profile/ops.hpp's traits say which types).
    element_walk walk = element_walk::vector;
};

/// Threads of the GPU thread block that reduces one row of `width` elements (a norm): vLLM's
/// RMSNorm block, min(width, 1024) (https://github.com/vllm-project/vllm,
/// csrc/layernorm_kernels.cu: `dim3 block(std::min(hidden_size, 1024))`), the block the GPU row
/// floor was fitted with (chip::overhead.row_trip_cycles). PyTorch's own layer norm kernel uses
/// 128 whatever the width (not modelled: docs/model.md; with the floor in trips over the row, a
/// narrower block's longer rows and its more rows in flight cancel out for rows of 1024 and more).
[[nodiscard]] constexpr std::int64_t row_reduction_threads(std::int64_t width) noexcept {
    return width < 1024 ? width : 1024;
}

/// A row-parallel vector op (RmsNorm, LayerNorm, rotary embedding, SwiGlu): `rows` rows of
/// `width` input elements, one row at a time per core (a row's reduction or its gate pairs stay
/// on one core, as CANN's and vLLM's kernels do; an assumption for others). The work units are
/// the rows, so the time follows ceil(rows / cores) x the time of one row: with fewer rows than
/// cores, fewer cores work and the time follows the row width, not rows x width.
[[nodiscard]] constexpr op rowwise(std::int64_t rows, std::int64_t width, dtype t,
                                   rowwise_options o = {}) {
    constexpr std::string_view where = "rowwise";
    detail::expect_dim(rows, where, "rows");
    detail::expect_dim(width, where, "width");
    PERFCAST_EXPECTS(o.ops_per_element > 0 && o.ops_per_element < max_ops_per_element, where,
                     "ops_per_element", o.ops_per_element, "a count per element in (0, 1e9)");
    PERFCAST_EXPECTS(o.out_width >= 0, where, "out_width", static_cast<double>(o.out_width),
                     ">= 0");
    PERFCAST_EXPECTS(o.read_elements >= -1, where, "read_elements",
                     static_cast<double>(o.read_elements), ">= 0 (or -1: rows x width)");
    const std::int64_t out_width = o.out_width > 0 ? o.out_width : width;
    const std::int64_t out = checked_product(rows, out_width, where, "output elements");
    op r;
    r.kind = op_kind::rowwise;
    r.eng = engine::vector;
    r.type = t;
    r.out_type = o.out_same_as_in ? t : o.out_type;
    r.useful_ops = static_cast<double>(out) * o.ops_per_element;
    r.work_units = rows;
    r.ops_per_unit = static_cast<double>(out_width) * o.ops_per_element;
    const std::int64_t read = o.read_elements >= 0
                                  ? o.read_elements
                                  : checked_product(rows, width, where, "read elements");
    r.bytes_read = detail::bytes_of(read, t);
    r.bytes_written = detail::bytes_of(out, r.out_type);
    r.run = detail::bytes_of(width, t);
    r.fp32_arithmetic = o.fp32_arithmetic;
    r.row_threads = o.row_threads;
    r.row_trips = o.row_threads > 0 ? ceil_div(width, o.row_threads) : 0;
    r.walk = o.walk;
    return r;
}

/// Vector operations per element perfcast assumes for a softmax (a max, a subtraction, an
/// exponential, a sum and a division, the exponential counted as more than one): an assumption,
/// as for the profile mapping's other heavy types (op::uncounted); calibration fits a Softmax
/// type's factor. A GPU preset prices PyTorch's kernels by their measured element rates instead
/// (engine_spec::softmax_warp_rate, softmax_block_rate; cost.hpp).
inline constexpr double softmax_ops_per_element = 8;

/// Vector operations per element perfcast assumes for a layer norm (a mean, a centred square, a
/// variance, the normalisation with its scale and bias): an assumption, as softmax's above; the
/// profile mapping's LayerNorm types and the ONNX importer's LayerNormalization take it.
inline constexpr double layer_norm_ops_per_element = 8;

/// Vector operations per element perfcast assumes for an RMS norm (the square, the mean, the
/// reciprocal root, the scaling and the scale): an assumption, as the layer norm's above; the
/// profile mapping's RmsNorm type and the ONNX importer's RMS norms take it.
inline constexpr double rms_norm_ops_per_element = 6;

/// Softmax (or log-softmax: the same kernels) of `rows` rows of `width` elements along the last
/// axis, written in the input's dtype: a row-parallel op of softmax_ops_per_element operations an
/// element whose count is assumed (op::uncounted). On a chip whose cores keep threads (the GPU
/// presets) cost() runs it on the thread blocks PyTorch launches for it (softmax_launch_of).
[[nodiscard]] constexpr op softmax(std::int64_t rows, std::int64_t width, dtype t) {
    constexpr std::string_view where = "softmax";
    detail::expect_dim(rows, where, "rows");
    detail::expect_dim(width, where, "width");
    (void)checked_product(rows, width, where, "elements");
    rowwise_options o;
    o.ops_per_element = softmax_ops_per_element;
    op r = rowwise(rows, width, t, o);
    r.kind = op_kind::softmax;
    r.uncounted = true;
    return r;
}

/// Which product of a convolution a kernel computes: the output (forward), the gradient of the
/// input (Conv2DBackpropInput) or of the weight (Conv2DBackpropFilter).
enum class conv_pass : unsigned char { forward, backprop_input, backprop_filter };

/// A 2-D convolution's sizes: input N x CIN x H x W, weight COUT x CIN x KH x KW, output N x
/// COUT x HO x WO (stride, padding and dilation are in HO / WO; one group).
struct conv_dims {
    std::int64_t batch = 1;
    std::int64_t in_channels = 1;
    std::int64_t height = 1;
    std::int64_t width = 1;
    std::int64_t out_channels = 1;
    std::int64_t kernel_h = 1;
    std::int64_t kernel_w = 1;
    std::int64_t out_height = 1;
    std::int64_t out_width = 1;
};

/// The implicit GEMM of a convolution pass, read `read` bytes and write `written` (the tensors
/// themselves, not the im2col copy the GEMM's operands stand for: the cube reads input patches
/// from its buffers). With P = N x HO x WO output pixels and R = CIN x KH x KW weights per
/// output channel, every pass does P x COUT x R multiply-adds (the forward's; a gradient pass
/// skips no more work than the forward did):
/// - forward: [P, R] x [R, COUT];
/// - backprop_input: [P, COUT] x [COUT, R] (column gradients, added back into the input's
///   pixels: no multiply-adds of the zeros a strided convolution's transposed form inserts);
/// - backprop_filter: [COUT, P] x [P, R] (a deep K: split-K spreads it when the tiles are few).
[[nodiscard]] constexpr op conv_gemm(conv_pass p, std::int64_t pixels, std::int64_t out_channels,
                                     std::int64_t per_channel, dtype t, data_size read,
                                     data_size written, dtype out_type) {
    op r = p == conv_pass::forward
               ? matmul(pixels, out_channels, per_channel, t, {.out_type = out_type})
           : p == conv_pass::backprop_input
               ? matmul(pixels, per_channel, out_channels, t, {.out_type = out_type})
               : matmul(out_channels, per_channel, pixels, t, {.out_type = out_type});
    r.kind = op_kind::conv;
    r.bytes_read = read;
    r.bytes_written = written;
    return r;
}

/// A 2-D convolution pass on the cube (conv_gemm), its tensors of dtype `t` and the written one
/// `written_type` (nothing: `t`): forward reads the input and the weight and writes the output;
/// backprop_input reads the output's gradient and the weight and writes the input's;
/// backprop_filter reads the input and the output's gradient and writes the weight's.
[[nodiscard]] constexpr op conv(const conv_dims& d, dtype t, conv_pass p = conv_pass::forward,
                                std::optional<dtype> written_type = std::nullopt) {
    constexpr std::string_view where = "conv";
    const dtype out_type = written_type.value_or(t);
    detail::expect_dim(d.batch, where, "batch");
    detail::expect_dim(d.in_channels, where, "in_channels");
    detail::expect_dim(d.height, where, "height");
    detail::expect_dim(d.width, where, "width");
    detail::expect_dim(d.out_channels, where, "out_channels");
    detail::expect_dim(d.kernel_h, where, "kernel_h");
    detail::expect_dim(d.kernel_w, where, "kernel_w");
    detail::expect_dim(d.out_height, where, "out_height");
    detail::expect_dim(d.out_width, where, "out_width");
    const std::int64_t pixels = checked_product(
        checked_product(d.batch, d.out_height, where, "N*HO"), d.out_width, where, "N*HO*WO");
    const std::int64_t per_channel =
        checked_product(checked_product(d.in_channels, d.kernel_h, where, "CIN*KH"), d.kernel_w,
                        where, "CIN*KH*KW");
    const data_size x = detail::bytes_of(
        checked_product(checked_product(d.batch, d.in_channels, where, "N*CIN"),
                        checked_product(d.height, d.width, where, "H*W"), where, "input"),
        t);
    const data_size w =
        detail::bytes_of(checked_product(d.out_channels, per_channel, where, "weight"), t);
    const data_size y =
        detail::bytes_of(checked_product(pixels, d.out_channels, where, "output elements"), t);
    const auto written = [&](data_size s) { return s * (size_of(out_type) / size_of(t)); };
    if (p == conv_pass::forward)
        return conv_gemm(p, pixels, d.out_channels, per_channel, t, x + w, written(y), out_type);
    if (p == conv_pass::backprop_input)
        return conv_gemm(p, pixels, d.out_channels, per_channel, t, y + w, written(x), out_type);
    return conv_gemm(p, pixels, d.out_channels, per_channel, t, x + y, written(w), out_type);
}

/// Anything else: its engine, flops, bytes in and out, and its parallel work units.
[[nodiscard]] constexpr op generic(engine e, flop_count flops, data_size in, data_size out,
                                   std::int64_t work_units, dtype t = dtype::fp16) {
    constexpr std::string_view where = "generic";
    PERFCAST_EXPECTS(flops.in(units::flop) >= 0 && flops.in(units::flop) < 1e300, where, "flops",
                     flops.in(units::flop), "a finite value >= 0");
    PERFCAST_EXPECTS(in.in(units::B) >= 0 && in.in(units::B) < 1e300, where, "bytes_in",
                     in.in(units::B), "a finite value >= 0");
    PERFCAST_EXPECTS(out.in(units::B) >= 0 && out.in(units::B) < 1e300, where, "bytes_out",
                     out.in(units::B), "a finite value >= 0");
    detail::expect_dim(work_units, where, "work_units");
    op r;
    r.kind = op_kind::generic;
    r.eng = e;
    r.type = t;
    r.out_type = t;
    const double per_op = e == engine::cube ? 2.0 : 1.0;
    r.useful_ops = flops.in(units::flop) / per_op;
    r.work_units = work_units;
    r.ops_per_unit = r.useful_ops / static_cast<double>(work_units);
    r.bytes_read = in;
    r.bytes_written = out;
    r.run = data_size{4096, units::B};  // assume long contiguous runs
    return r;
}

}  // namespace perfcast
