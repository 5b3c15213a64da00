// perfcast/profile/ops.hpp: turn a measured profile row into a perfcast::op.
//
// MatMul rows are read as A[M,K] x B[K,N] or A[M,K] x B[N,K]^T (torch_npu writes the transposed
// weight of a Linear layer that way), whichever agrees with the output shape; BatchMatMul rows
// as [..., M, K] x [..., K, N] (either operand may be transposed, B may be broadcast). Vector
// rows become elementwise ops over their output, Cast rows casts; anything else is a generic op
// with the row's bytes on its engine. Rows whose shapes contradict each other give no op. Which
// op types are MatMuls, reductions and casts is op_kinds' (node.hpp) profiler types; a type an
// extension's row claims becomes that kind's op of the row's input shapes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../cost.hpp"
#include "../node.hpp"
#include "../nodes.hpp"
#include "../op.hpp"
#include "../op_vocabulary.hpp"
#include "../runtime.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// Dimensions of a GEMM read from a profile row.
struct gemm_dims {
    std::int64_t batch = 1;
    std::int64_t m = 0;
    std::int64_t n = 0;
    std::int64_t k = 0;
    bool broadcast_b = false;
};

namespace detail {
inline bool positive(const tensor_shape& s) {
    for (std::int64_t d : s.dims)
        if (d < 1) return false;
    return true;
}
inline std::int64_t product(const std::vector<std::int64_t>& d, std::size_t from,
                            std::size_t to) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < to; ++i) p *= d[i];
    return p;
}
/// Scales the op's vector work by its type's own work factor `f`, its element walk's included
/// (op::walk_work): calibrate's stage 2 fits a factor so (calibrate_stages.hpp) and
/// calibration::applied applies it so. A type's fitted factor describes its whole measured time,
/// so the chip's row-kernel floor (chip::overhead.row_trip_cycles) no longer applies to it.
[[nodiscard]] inline op with_work(op o, double f) {
    o.useful_ops *= f;
    o.ops_per_unit *= f;
    o.walk_work *= f;
    o.row_threads = 0;
    return o;
}
}  // namespace detail

/// Whether an op type is a matrix multiply (MatMul, BatchMatMul and their V2 / V3 spellings:
/// the profiler types of op_kinds' matmul row).
[[nodiscard]] inline bool is_gemm_type(std::string_view type) noexcept {
    return detail::is_matmul_type(type);
}

/// What perfcast assumes about a vector op type it knows by name: vector operations per output
/// element (transcendentals and fused kernels issue several) and whether the kernel reads its
/// inputs at all (ZerosLike only uses the input's shape). Assumptions from the instruction count
/// of a straightforward kernel, except Sin and Cos, counted in the kernel source (below);
/// `perfcast calibrate` fits a work factor and a fixed time per type on top.
///
/// Sin 41 and Cos 44: the vector instructions per element of CANN 8.1.RC1's TBE kernels on
/// chips after v200 (the 910B family) in the default high-performance mode, `sin_compute_v3` /
/// `cos_compute_v3` with each file's `compute_fixed` (opp/built-in/op_impl/ai_core/tbe/impl/
/// dynamic/sin.py and cos.py, as published in github.com/leideng/CANN-8.1.RC1 at 4332a01): a
/// range reduction by round(x / pi) in two parts (2048 x k0 + k1) against four parts of pi (22
/// instructions for Sin; Cos adds the 0.5 before rounding and two offsets, 25), then the sign
/// and an odd polynomial of degree 9 clamped to [-1, 1] (19). Every instruction is fp32: fp16
/// and bf16 inputs are cast to fp32 and back (fp32_inside).
struct vector_type_traits {
    std::string_view type;
    double ops_per_element;
    bool reads_inputs;
    /// A row-parallel type that reduces each row across its GPU thread block (norms): a latency-
    /// bound row kernel (chip::overhead.row_trip_cycles), with vLLM's RMSNorm block
    /// (op.hpp row_reduction_threads; a model file's `reduce=1`).
    /// Rope and SwiGlu work on each element pair alone: no reduction, no floor.
    bool row_reduction = false;
    /// Synchronizations of all the kernel's cores (op::syncs): a compaction (NonZero) counts
    /// its share of the input on each core, synchronizes, then writes. Such a row is priced on
    /// its input's elements, one work unit each: the profiles' NonZero rows launch one core per
    /// element up to the cores (an input of 8 on 8 cores, of 16 on 16).
    int syncs = 0;
    /// The count is read from the kernel's source (Sin, Cos), not assumed: calibration does not
    /// give such a type the median factor of the heavy types it fitted (is_heavy_type), which
    /// corrects the assumed counts.
    bool counted = false;
    /// The kernel widens 16-bit floating-point data (fp16, bf16) and computes in fp32, per its
    /// source (op::fp32_arithmetic; the types marked, with their sources, below the table).
    bool fp32_inside = false;
    /// The GPU kernel loops over the row's elements one at a time, each thread computing its
    /// element's offsets (op::walk = element_walk::indexed; priced only where the chip gives a
    /// walk rate: engine_spec::walk_rate): sarathi-serve's rope
    /// (csrc/pos_encoding_kernels.cu, rotary_embedding_kernel: one block per token, a head and a
    /// rotation offset divided out of each element's index, cos and sin gathered by the token's
    /// position) and gated activation (csrc/activation_kernels.cu, silu_and_mul_kernel: one
    /// block per token, a scalar loop over the row's pairs). Their norms reduce each row and keep
    /// the row floor instead (row_reduction).
    bool walks = false;
};

inline constexpr std::array<vector_type_traits, 33> vector_types{{
    {"Exp", 4, true},
    {"Log", 4, true},
    {"Sqrt", 4, true},
    {"Rsqrt", 4, true},
    {"Reciprocal", 4, true},
    {"RealDiv", 4, true},
    {"Div", 4, true},
    {"Tanh", 6, true},
    {"Sigmoid", 6, true},
    {"FastGelu", 8, true},
    {"Gelu", 10, true},
    {"GeluGrad", 12, true},
    {"FastGeluGrad", 10, true},
    {"LayerNorm", layer_norm_ops_per_element, true, true},
    {.type = "LayerNormV3",
     .ops_per_element = layer_norm_ops_per_element,
     .reads_inputs = true,
     .row_reduction = true,
     .fp32_inside = true},
    {"LayerNormGrad", 12, true},
    {"Softmax", softmax_ops_per_element, true},
    {"LogSoftmax", softmax_ops_per_element, true},
    {"ScaledMaskedSoftmax", 10, true},
    {"SoftmaxGrad", 8, true},
    {"ApplyAdamW", 16, true},
    {"DropOutDoMask", 2, true},
    {"ZerosLike", 1, false},
    {"OnesLike", 1, false},
    {"Fill", 1, false},
    {.type = "RmsNorm",
     .ops_per_element = rms_norm_ops_per_element,
     .reads_inputs = true,
     .row_reduction = true,
     .fp32_inside = true},
    {.type = "ApplyRotaryPosEmb", .ops_per_element = 4, .reads_inputs = true, .walks = true},
    {.type = "SwiGlu",
     .ops_per_element = 8,
     .reads_inputs = true,
     .fp32_inside = true,
     .walks = true},
    {"Silu", 6, true},
    {.type = "RotaryPositionEmbedding",
     .ops_per_element = 4,
     .reads_inputs = true,
     .fp32_inside = true},
    {"NonZero", 1, true, false, 1},
    {.type = "Sin",
     .ops_per_element = 41,
     .reads_inputs = true,
     .counted = true,
     .fp32_inside = true},
    {.type = "Cos",
     .ops_per_element = 44,
     .reads_inputs = true,
     .counted = true,
     .fp32_inside = true},
}};
// fp32_inside, from CANN 8.1.RC1's kernels (github.com/leideng/CANN-8.1.RC1 at 4332a01, under
// opp/built-in/op_impl/ai_core/tbe/impl/): LayerNormV3 (dynamic/layer_norm_v3.py promotes fp16
// in the default mode where vexp takes fp32), RmsNorm (ascendc/rms_norm/rms_norm.h casts x to
// float), SwiGlu (ascendc/swi_glu: fp16 uses the bf16 class, which casts to float),
// RotaryPositionEmbedding (ascendc/rotary_position_embedding/rotate_half_bf16.h), Sin and Cos
// (dynamic/sin.py, cos.py). Not marked, their kernels computing fp16 in fp16 on the 910B: FastGelu,
// RealDiv, Exp, DropOutDoMask, ApplyAdamW; ScaledMaskedSoftmax and Softmax widen only part of
// their work (docs/model.md, "Kernels that widen 16-bit data").

[[nodiscard]] constexpr const vector_type_traits* traits_of(std::string_view type) noexcept {
    for (const auto& t : vector_types)
        if (t.type == type) return &t;
    return nullptr;
}

/// Vector operations per output element of a row-parallel type (the traits table; 1 if absent).
[[nodiscard]] constexpr double rowwise_ops_of(std::string_view type) noexcept {
    const vector_type_traits* t = traits_of(type);
    return t != nullptr ? t->ops_per_element : 1.0;
}

/// Whether the traits table assumes more than one vector operation per element for `type`
/// (transcendentals, norms, softmax, optimizer updates; not a count read from the kernel's
/// source: vector_type_traits::counted): calibration gives such a type that the profile lacks
/// the median factor of those it shows.
[[nodiscard]] constexpr bool is_heavy_type(std::string_view type) noexcept {
    const vector_type_traits* t = traits_of(type);
    return t != nullptr && t->ops_per_element > 1 && !t->counted;
}

/// How a row's inputs meet its output, and their dtypes, as "same,scalar|fp32;fp32": each
/// input "same" (as many elements as the first output), "scalar" (one element), "broadcast"
/// (fewer, more than one), "reduced" (more) or "?" (not known); then the input dtypes by
/// perfcast's names (the same key whether a profiler writes FLOAT, DT_FLOAT or float32), or as
/// written where perfcast does not know one. Ops of one type and pattern run one kernel template at
/// other sizes; another pattern can be another kernel (a broadcast Mul against a Mul by a scalar):
/// the key of calibration's terms of a type seen in one pattern only (calibration::at_pattern).
[[nodiscard]] inline std::string input_pattern(const kernel_row& r) {
    std::string out;
    // -1: not known (not an optional: GCC 12 -O1 -Wall warned it "may be used uninitialized"
    // in a user's build).
    const std::int64_t outputs =
        r.output_shapes.empty() ? -1 : r.output_shapes[0].elements().value_or(-1);
    for (std::size_t i = 0; i < r.input_shapes.size(); ++i) {
        if (i != 0) out += ',';
        const std::int64_t n = r.input_shapes[i].elements().value_or(-1);
        if (n < 0 || outputs < 0) out += '?';
        else if (n == outputs) out += "same";
        else if (n <= 1) out += "scalar";
        else if (n < outputs) out += "broadcast";
        else out += "reduced";
    }
    out += '|';
    for (std::size_t i = 0; i < r.input_types.size(); ++i) {
        if (i != 0) out += ';';
        const tensor_dtype& t = r.input_types[i];
        out += t.type ? name_of(*t.type) : std::string_view(t.text);
    }
    return out;
}

/// Whether `key` (a params file's per-type key after "work." / "fixed_us." / "per_core_us.") is
/// a type ("Add") or a type and pattern as calibration::at_pattern writes it ("Mul[same,scalar|
/// fp32;fp32]": the inputs each same, scalar, broadcast, reduced or ?, then '|' and the dtypes).
[[nodiscard]] constexpr bool valid_terms_key(std::string_view key) noexcept {
    const std::size_t open = key.find('[');
    if (open == std::string_view::npos) return !key.empty() && key.find(']') == key.npos;
    if (open == 0 || key.back() != ']') return false;
    const std::string_view inside = key.substr(open + 1, key.size() - open - 2);
    const std::size_t bar = inside.find('|');
    if (bar == std::string_view::npos || inside.find_first_of("[]") != inside.npos) return false;
    std::string_view inputs = inside.substr(0, bar);
    if (inputs.empty()) return true;  // an op without inputs
    while (true) {
        const std::size_t comma = inputs.find(',');
        const std::string_view one = inputs.substr(0, comma);
        if (one != "same" && one != "scalar" && one != "broadcast" && one != "reduced" &&
            one != "?")
            return false;
        if (comma == std::string_view::npos) return true;
        inputs.remove_prefix(comma + 1);
    }
}

/// What calibration learns on top of model_params, per vector / AI CPU op type where the
/// measured rows of a type allow: a work factor (vector operations per element relative to the
/// traits table) and a fixed time beyond the engine's head (a kernel's scalar set-up and
/// argument loads), or in its place a time per core held, where the type's rows at several core
/// counts show the set-up growing with the cores (about 0.3 us a core for ApplyAdamW's eleven
/// inputs on the 910B1 profile). The fixed time is op::extra_head in the cost model and
/// fixed_us.<Type> in the parameters file; the time per core op::extra_per_core and
/// per_core_us.<Type>.
/// Terms fitted on rows of one input_pattern only are that pattern's: keyed
/// `Type[pattern]` (at_pattern), they apply to rows of that pattern and to no other op of the
/// type, which keeps the type's plain terms (none, or the unseen heavy factor). One pattern
/// cannot say how another runs: on the Qwen3 profile a broadcast Mul's factor, applied to the
/// type's Muls by a scalar, priced them at 2.3x (docs/validation.md, "Terms of one input pattern").
struct calibration {
    model_params params{};
    /// The chip these parameters were fitted for (its preset name, `chip::name`; params key
    /// `chip`; empty: not said, as in files written before the key). Its heads and efficiencies
    /// are that chip's: applied to another they are off by the chips' difference, which the
    /// commands warn of (transferred() keeps what carries).
    std::string chip;
    std::map<std::string, double, std::less<>> work_factor;    // op type -> factor (1: none)
    std::map<std::string, duration, std::less<>> fixed_time;  // op type -> extra head (0: none)
    std::map<std::string, duration, std::less<>> per_core_time;  // op type -> per core (0: none)

    // The factor of a heavy type (is_heavy_type) without one of its own (1: none).
    double unseen_heavy_factor = 1;

    // The vector efficiency the work factors were fitted against, where it is not params' (0:
    // params'). A calibration carried to another chip (transferred) sets it: a factor means a
    // kernel's work only beside the efficiency it was fitted with (the two trade off:
    // calibrate_options.hpp), so the vector ops a factor scales keep that efficiency, and the
    // rest, types the calibration has no factor for, run at the target's (params_for).
    double factor_vector_efficiency = 0;

    // Runtime-path settings (runtime.hpp; params keys `runtime.KEY`), applied over the preset
    // and the model file's runtime line by whoever evaluates a deployment.
    std::vector<runtime_setting> runtime;

    /// The key of the terms of `type`'s ops of one input_pattern:
    /// "Mul[broadcast,broadcast|fp32;fp32]".
    [[nodiscard]] static std::string at_pattern(std::string_view type, std::string_view pattern) {
        std::string key(type);
        key += '[';
        key += pattern;
        key += ']';
        return key;
    }
    /// The key whose terms an op of `type` takes: `pattern_key` (at_pattern, "": none) where any of
    /// the maps holds it, else `type`.
    [[nodiscard]] std::string_view key_of(std::string_view type,
                                          std::string_view pattern_key = {}) const {
        if (!pattern_key.empty() &&
            (work_factor.contains(pattern_key) || fixed_time.contains(pattern_key) ||
             per_core_time.contains(pattern_key)))
            return pattern_key;
        return type;
    }
    [[nodiscard]] double factor_of(std::string_view type, std::string_view pattern_key = {}) const {
        return factor_at(key_of(type, pattern_key), type);
    }
    [[nodiscard]] duration fixed_time_of(std::string_view type,
                                         std::string_view pattern_key = {}) const {
        return time_at(fixed_time, key_of(type, pattern_key));
    }
    [[nodiscard]] duration per_core_time_of(std::string_view type,
                                            std::string_view pattern_key = {}) const {
        return time_at(per_core_time, key_of(type, pattern_key));
    }
    /// `o` (an op of type `type`; `pattern_key`: its at_pattern key, "" for none) with its terms:
    /// those of `pattern_key` where the calibration holds any, else its type's work factor, fixed
    /// time and time per core; cube ops as given.
    [[nodiscard]] op applied(op o, std::string_view type, std::string_view pattern_key = {}) const {
        if (o.eng == engine::cube) return o;
        const std::string_view key = key_of(type, pattern_key);
        const bool own = work_factor.contains(key);
        const double f = factor_at(key, type);
        if (!(f > 0 && f < 1e6)) {
            const std::string field = own ? "work factor of " + std::string(key)
                                          : "unseen_heavy_factor (for " + std::string(type) + ")";
            ::perfcast::detail::precondition_failed("calibration", field, f,
                                                    "a factor in (0, 1e6)");
        }
        // A factor fitted to the type's own rows is applied as calibrate's stage 2 fitted it
        // (detail::with_work: the row floor gives way, the walk scales too). The factor of heavy
        // types without one corrects assumed operation counts only: not a walk, not the floor.
        if (own) {
            o = detail::with_work(o, f);
        } else {
            o.useful_ops *= f;
            o.ops_per_unit *= f;
        }
        o.extra_head += time_at(fixed_time, key);
        o.extra_per_core += time_at(per_core_time, key);
        return o;
    }

    /// The parameters op `o` of `type` (its pattern_key, "" for none) is priced with: params,
    /// with factor_vector_efficiency where that is set and `o` is vector work that a factor
    /// scales (its key's own, or the unseen heavy factor of a heavy type without one).
    [[nodiscard]] model_params params_for(const op& o, std::string_view type,
                                          std::string_view pattern_key = {}) const {
        model_params p = params;
        if (factor_vector_efficiency > 0 && o.eng == engine::vector &&
            (work_factor.contains(key_of(type, pattern_key)) ||
             (is_heavy_type(type) && unseen_heavy_factor != 1)))
            p.vector_efficiency = factor_vector_efficiency;
        return p;
    }

private:
    // The factor under `key` (key_of), else the unseen heavy factor for a heavy `type`, else 1.
    [[nodiscard]] double factor_at(std::string_view key, std::string_view type) const {
        const auto it = work_factor.find(key);
        if (it != work_factor.end()) return it->second;
        return is_heavy_type(type) ? unseen_heavy_factor : 1.0;
    }
    // The time under `key` in `times`, else none.
    [[nodiscard]] static duration time_at(const std::map<std::string, duration, std::less<>>& times,
                                          std::string_view key) {
        const auto it = times.find(key);
        return it == times.end() ? duration{} : it->second;
    }
};

/// The key of `r`'s terms of its input pattern (calibration::at_pattern of its type and
/// input_pattern): what calibration fits a type seen in one pattern under, and what a row looks
/// its terms up by.
[[nodiscard]] inline std::string pattern_key(const kernel_row& r) {
    return calibration::at_pattern(r.op_type, input_pattern(r));
}

[[nodiscard]] inline std::optional<op> op_of(const kernel_row& r, op_vocabulary ops = op_kinds);

/// Whether an op type reduces its input (ReduceSum, ReduceMeanD, LpNormReduceV2, ArgMax...: the
/// profiler types of op_kinds' reduce row).
[[nodiscard]] constexpr bool is_reduction_type(std::string_view type) noexcept {
    const op_row* r = row_for_profiler_type(op_kinds, type);
    return r != nullptr && r->value == op_kind::reduce;
}

/// The GEMM a MatMul / BatchMatMul row describes, or nothing when no reading of its shapes
/// agrees with its output shape.
[[nodiscard]] inline std::optional<gemm_dims> gemm_of(const kernel_row& r) {
    if (r.input_shapes.size() < 2 || r.output_shapes.empty()) return std::nullopt;
    const tensor_shape& a = r.input_shapes[0];
    const tensor_shape& b = r.input_shapes[1];
    const tensor_shape& c = r.output_shapes[0];
    if (a.rank() < 2 || b.rank() < 2 || c.rank() < 2 || !detail::positive(a) ||
        !detail::positive(b) || !detail::positive(c))
        return std::nullopt;
    const std::int64_t cm = c.dims[c.rank() - 2];
    const std::int64_t cn = c.dims[c.rank() - 1];
    const std::int64_t cbatch = detail::product(c.dims, 0, c.rank() - 2);
    const std::int64_t abatch = detail::product(a.dims, 0, a.rank() - 2);
    const std::int64_t bbatch = detail::product(b.dims, 0, b.rank() - 2);
    if (abatch != cbatch || (bbatch != cbatch && bbatch != 1)) return std::nullopt;
    const std::int64_t a0 = a.dims[a.rank() - 2];
    const std::int64_t a1 = a.dims[a.rank() - 1];
    const std::int64_t b0 = b.dims[b.rank() - 2];
    const std::int64_t b1 = b.dims[b.rank() - 1];
    for (int ta = 0; ta < 2; ++ta) {
        const std::int64_t m = ta ? a1 : a0;
        const std::int64_t ka = ta ? a0 : a1;
        for (int tb = 0; tb < 2; ++tb) {
            const std::int64_t kb = tb ? b1 : b0;
            const std::int64_t n = tb ? b0 : b1;
            if (m == cm && n == cn && ka == kb) {
                return gemm_dims{cbatch, m, n, ka, bbatch == 1 && cbatch > 1};
            }
        }
    }
    return std::nullopt;
}

/// The compute dtype of a row: its first input's dtype perfcast knows (inputs not recorded:
/// its first output's). Nothing when an input before it is of a dtype perfcast does not know:
/// an fp8 GEMM (FLOAT8_E4M3FN inputs, a BF16 output) was once priced as a bf16 one.
[[nodiscard]] inline std::optional<dtype> dtype_of(const kernel_row& r) {
    for (const tensor_dtype& t : r.input_types) {
        if (t.type) return t.type;
        if (t.unknown_spelling()) return std::nullopt;
    }
    for (const tensor_dtype& t : r.output_types)
        if (t.type) return t.type;
    return std::nullopt;
}

/// The op a row describes, or nothing (communication tasks, unknown dtypes, contradictory or
/// missing shapes).
[[nodiscard]] inline std::optional<op> op_of(const kernel_row& r, const calibration& cal,
                                             op_vocabulary ops = op_kinds) {
    auto o = op_of(r, ops);
    if (o) o = cal.applied(*o, r.op_type, pattern_key(r));
    return o;
}

namespace detail {
[[nodiscard]] inline std::optional<op> op_of_row(const kernel_row& r, op_vocabulary ops);

/// Kinds whose profile rows need a reading of their own (op_of_row): MatMul shapes may be
/// transposed, a reduction reads more than it writes, a cast is an elementwise op, a gather's
/// table and indices are two inputs.
[[nodiscard]] constexpr bool read_by_name(op_kind k) noexcept {
    return k == op_kind::matmul || k == op_kind::reduce || k == op_kind::cast ||
           k == op_kind::attention || k == op_kind::grouped_matmul || k == op_kind::fill ||
           k == op_kind::rowwise || k == op_kind::conv || k == op_kind::softmax ||
           k == op_kind::gather;
}

/// The softmax statistics FlashAttentionScore writes (softmax_max, softmax_sum: [B, N, Sq, 8],
/// CANN FlashAttentionScore reference) among a row's outputs, or its grad's inputs.
[[nodiscard]] inline const tensor_shape* softmax_stats_of(const kernel_row& r) {
    for (const auto* list : {&r.output_shapes, &r.input_shapes}) {
        for (const tensor_shape& s : *list) {
            if (s.rank() == 4 && s.dims[3] == 8 && positive(s)) return &s;
        }
    }
    return nullptr;
}

/// A dense attention mask among a row's inputs from the fourth on ([..., Sq, Skv], not the
/// compressed 2048 x 2048 causal mask), or null.
[[nodiscard]] inline const tensor_shape* dense_mask_of(const kernel_row& r) {
    for (std::size_t i = 3; i < r.input_shapes.size(); ++i) {
        const tensor_shape& m = r.input_shapes[i];
        if (m.rank() >= 2 && positive(m) &&
            !(m.rank() == 2 && m.dims[0] == 2048 && m.dims[1] == 2048))
            return &m;
    }
    return nullptr;
}

/// Whether input `m` (from the fourth on) is a self-attention's full mask, one for every head:
/// `a` has Sq = Skv = S > 1 and `m` is [S, S], [1, 1, S, S] or [B, 1, S, S] (the shapes
/// npu_fusion_attention takes besides BNSS; not a grad row's dY or statistics, whose second
/// dimension is not 1 or whose last is not S).
[[nodiscard]] inline bool square_self_mask(const tensor_shape& m, const attention_shape& a) {
    const std::size_t n = m.rank();
    if (!(n == 2 || (n == 4 && m.dims[1] == 1))) return false;
    return a.q_len == a.kv_len && a.q_len > 1 && m.dims[n - 2] == a.q_len &&
           m.dims[n - 1] == a.kv_len;
}

/// Query heads from softmax statistics written flat (CANN 7.0 profiles write [B*N*Sq*8] as one
/// dimension): the first output of rank 1 whose size is rows x N x 8 for an N dividing the
/// hidden size `hq`; else head dim 128 assumed (hq / 128 heads), or one head.
[[nodiscard]] inline std::int64_t flat_stats_heads(const kernel_row& r, std::int64_t rows,
                                                   std::int64_t hq) {
    for (const tensor_shape& s : r.output_shapes) {
        // rows x 8 past int64 matches no size (and would overflow).
        if (s.rank() != 1 || s.dims[0] < 1 || rows < 1 ||
            rows > std::numeric_limits<std::int64_t>::max() / 8)
            continue;
        if (s.dims[0] % (rows * 8) != 0) continue;
        const std::int64_t n = s.dims[0] / (rows * 8);
        if (n >= 1 && hq % n == 0) return n;
    }
    return hq % 128 == 0 ? hq / 128 : 1;
}

/// For an op type naming one of FlashInfer's batch prefill kernels (BatchPrefillWithPagedKVCache,
/// BatchPrefillWithRaggedKVCache, with a profiler's decoration around the name), which lay an
/// attention out in their own blocks (attention_kernel::flashinfer), the fewest keys their split
/// gives a block: flashinfer_kv_chunk_min, or flashinfer_0_0_6_kv_chunk_min for a type ending in
/// "@0.0.6" (a converter's mark of that release, whose plan split later). Else nothing.
[[nodiscard]] constexpr std::optional<std::int64_t> flashinfer_chunk_of(
    std::string_view type) noexcept {
    if (type.find("BatchPrefillWith") == std::string_view::npos) return std::nullopt;
    return type.ends_with("@0.0.6") ? flashinfer_0_0_6_kv_chunk_min : flashinfer_kv_chunk_min;
}

/// The attention a FlashAttentionScore-like row describes, from its shapes (the layout is not
/// in kernel_details, so it is read from them):
///  - rank-4 Q and K: BNSD, or BSND when the softmax statistics [B, N, Sq, 8] say so;
///  - rank-3 Q and K: SBH or BSH, told apart by the statistics' B and Sq (BSH without them, the
///    default input_layout of Prompt/IncreFlashAttention), else by a dense mask's Sq; heads
///    from the statistics (also when written flat), else head dim 128 assumed (the FLOPs do
///    not depend on it);
///  - TND (variable lengths, whose lengths are values, not shapes): not read.
/// The mask: a [2048, 2048] input is the compressed lower-triangular mask of sparse modes 2-4
/// (CANN FlashAttentionScore reference: "optimized" causal masks are 2048 x 2048): causal. Any
/// full [S, S] mask of a self-attention is the causal band (below); any other mask is applied
/// element by element over every pair (sparse mode 0): dense. A FlashAttentionScore's input 4
/// (Grad: 5) is the dropout mask when it is UINT8 (or untyped). A type with Grad or bwd in its
/// name is the backward pass. FlashInfer's kernels (flashinfer_chunk_of) take its layout.
[[nodiscard]] inline std::optional<op> attention_of_row(const kernel_row& r, dtype t) {
    if (r.input_shapes.size() < 2) return std::nullopt;
    const tensor_shape& q = r.input_shapes[0];
    const tensor_shape& k = r.input_shapes[1];
    if (q.rank() != k.rank() || !positive(q) || !positive(k)) return std::nullopt;
    const bool backward =
        r.op_type.find("Grad") != std::string::npos || r.op_type.find("bwd") != std::string::npos;
    const tensor_shape* stats = softmax_stats_of(r);
    attention_shape a;
    a.backward = backward;
    if (q.rank() == 4) {
        const bool bsnd = stats != nullptr && stats->dims[1] == q.dims[2] &&
                          stats->dims[2] == q.dims[1] && q.dims[1] != q.dims[2];
        a.batch = q.dims[0];
        a.q_heads = bsnd ? q.dims[2] : q.dims[1];
        a.q_len = bsnd ? q.dims[1] : q.dims[2];
        a.kv_heads = bsnd ? k.dims[2] : k.dims[1];
        a.kv_len = bsnd ? k.dims[1] : k.dims[2];
        a.head_dim = q.dims[3];
        if (k.dims[0] != a.batch || k.dims[3] != a.head_dim) return std::nullopt;
    } else if (q.rank() == 3) {
        bool sbh = false;
        const tensor_shape* mask = dense_mask_of(r);
        if (stats != nullptr) {
            const std::int64_t b = stats->dims[0];
            const std::int64_t sq = stats->dims[2];
            if (q.dims[0] == sq && q.dims[1] == b) {
                sbh = true;
            } else if (!(q.dims[0] == b && q.dims[1] == sq)) {
                return std::nullopt;  // TND or a layout the statistics contradict
            }
            a.q_heads = stats->dims[1];
        } else if (mask != nullptr) {
            // The mask's last two dimensions are Sq, Skv.
            sbh = q.dims[0] == mask->dims[mask->rank() - 2] &&
                  q.dims[1] != mask->dims[mask->rank() - 2];
        }
        a.batch = sbh ? q.dims[1] : q.dims[0];
        a.q_len = sbh ? q.dims[0] : q.dims[1];
        a.kv_len = sbh ? k.dims[0] : k.dims[1];
        if ((sbh ? k.dims[1] : k.dims[0]) != a.batch) return std::nullopt;
        const std::int64_t hq = q.dims[2];
        const std::int64_t hkv = k.dims[2];
        if (stats == nullptr)
            a.q_heads = flat_stats_heads(
                r, checked_product(a.batch, a.q_len, "attention row", "batch x query length"), hq);
        if (hq % a.q_heads != 0) return std::nullopt;
        a.head_dim = hq / a.q_heads;
        if (hkv % a.head_dim != 0) return std::nullopt;
        a.kv_heads = hkv / a.head_dim;
    } else {
        return std::nullopt;
    }
    if (a.kv_heads < 1 || a.q_heads % a.kv_heads != 0) return std::nullopt;
    // Causal: CANN's compressed [2048, 2048] mask, or a full [S, S] mask of a self-attention: in
    // sparse mode 0 the kernel computes only the band between pre_tockens and next_tockens
    // (torch_npu npu_fusion_attention reference), and the callers that pass a full
    // lower-triangular mask pass next_tockens = 0 with it (MindSpeed-LLM's FlashSelfAttention,
    // Hugging Face ports of Llama to torch_npu): the band is the causal triangle. The 910B3
    // fixture's rows confirm it: [4096, 4096] masks, and pipe counters of about half the dense
    // work (aic_mac_time 129 us against 287 us for a causal Qwen3 row of twice the pairs).
    for (std::size_t i = 3; i < r.input_shapes.size() && !a.causal; ++i) {
        const tensor_shape& m = r.input_shapes[i];
        a.causal =
            (m.rank() == 2 && m.dims[0] == 2048 && m.dims[1] == 2048) || square_self_mask(m, a);
    }
    if (const auto chunk = flashinfer_chunk_of(r.op_type)) {
        a.kernel = attention_kernel::flashinfer;
        a.kv_chunk_min = *chunk;
    }
    if (r.op_type.starts_with("FlashAttentionScore")) {
        // The dropout mask is UINT8 bits: another tensor there (a grad row whose profiler left
        // out the absent optional inputs, so that softmax_max sits at 5) is not one.
        const std::size_t drop = backward ? 5 : 4;
        const bool typed = r.input_types.size() > drop && r.input_types[drop].type.has_value();
        a.dropout = r.input_shapes.size() > drop && !r.input_shapes[drop].scalar() &&
                    positive(r.input_shapes[drop]) &&
                    (!typed || *r.input_types[drop].type == dtype::uint8);
    }
    return attention(a, t);
}

/// A GroupedMatmul row: X [T, K], W [E, K, N] (or [E, N, K]), output [T, N]; the group list
/// (tokens per expert) is a value, not a shape: the tokens are spread evenly.
[[nodiscard]] inline std::optional<op> grouped_matmul_of_row(const kernel_row& r, dtype t) {
    if (r.input_shapes.size() < 2 || r.output_shapes.empty()) return std::nullopt;
    const tensor_shape& x = r.input_shapes[0];
    const tensor_shape& w = r.input_shapes[1];
    const tensor_shape& y = r.output_shapes[0];
    if (x.rank() != 2 || w.rank() != 3 || y.rank() != 2 || !positive(x) || !positive(w) ||
        !positive(y) || y.dims[0] != x.dims[0])
        return std::nullopt;
    const std::int64_t kk = x.dims[1];
    const std::int64_t nn = y.dims[1];
    if (!((w.dims[1] == kk && w.dims[2] == nn) || (w.dims[1] == nn && w.dims[2] == kk)))
        return std::nullopt;
    dtype out = t;
    if (!r.output_types.empty() && r.output_types[0].type) out = *r.output_types[0].type;
    return grouped_matmul_even(x.dims[0], w.dims[0], nn, kk, t, {.out_type = out});
}

/// A fill row: its first output's elements in the output's dtype (else the row's dtype).
[[nodiscard]] inline std::optional<op> fill_of_row(const kernel_row& r, dtype t) {
    if (r.output_shapes.empty()) return std::nullopt;
    const auto n = r.output_shapes[0].elements();
    if (!n || *n < 1) return std::nullopt;
    dtype out = t;
    if (!r.output_types.empty() && r.output_types[0].type) out = *r.output_types[0].type;
    return fill(*n, out);
}

/// A gather row by PyTorch's index_select kernels (types `*indexSelectLargeIndex*`,
/// `*indexSelectSmallIndex*`: an embedding lookup): a table [V, ...] (input 0) and an index of T
/// entries (input 1) into T of the table's rows. Walked as those kernels walk before PyTorch 2.7
/// (element_walk::selected; engine_spec::index_select_rate).
/// Rows read otherwise (the table second, aten::index_select's `self, dim, index` with a scalar
/// between, an index not of integers, an output that is not indices x a row) are not mapped.
[[nodiscard]] inline std::optional<op> gather_of_row(const kernel_row& r, dtype t) {
    if (r.input_shapes.size() != 2 || r.output_shapes.empty()) return std::nullopt;
    const tensor_shape& table = r.input_shapes[0];
    const auto cells = table.elements();
    const auto indices = r.input_shapes[1].elements();
    const auto out = r.output_shapes[0].elements();
    if (!cells || !indices || !out || *indices < 1 || table.rank() < 1 || !positive(table))
        return std::nullopt;
    const std::int64_t rows = table.dims[0];
    const std::int64_t row_elements = *cells / rows;
    if (*out / row_elements != *indices || *out % row_elements != 0) return std::nullopt;
    // The index's dtype, an integer one (PyTorch's are int64, the default where the row has
    // none); the data's the table's (the output's where it lists one).
    dtype index = dtype::int64;
    if (r.input_types.size() > 1 && r.input_types[1].type) index = *r.input_types[1].type;
    if (index != dtype::int64 && index != dtype::int32) return std::nullopt;
    if (!r.output_types.empty() && r.output_types[0].type) t = *r.output_types[0].type;
    else if (!r.input_types.empty() && r.input_types[0].type) t = *r.input_types[0].type;
    op g = gather(*indices, static_cast<double>(row_elements) * size_of(t), rows, t,
                  {.index_type = index});
    g.walk = element_walk::selected;
    return g;
}

/// A row-parallel row (RmsNorm, LayerNorm, rope, SwiGlu): the rows of its first output, the
/// width of its first input, every input element read (gamma, cos and sin are small).
[[nodiscard]] inline std::optional<op> rowwise_of_row(const kernel_row& r, dtype t) {
    if (r.input_shapes.empty() || r.output_shapes.empty()) return std::nullopt;
    const tensor_shape& y = r.output_shapes[0];
    const auto out = y.elements();
    if (!out || *out < 1 || y.inner() < 1) return std::nullopt;
    std::int64_t read = 0;
    for (const tensor_shape& s : r.input_shapes) {
        const auto n = s.elements();
        if (!n) return std::nullopt;
        read = checked_sum(read, *n, "rowwise row", "read elements");
    }
    const std::int64_t rows = *out / y.inner();
    const std::int64_t width = r.input_shapes[0].inner();
    if (rows < 1 || width < 1 || !positive(r.input_shapes[0])) return std::nullopt;
    rowwise_options o;
    o.ops_per_element = rowwise_ops_of(r.op_type);
    if (const vector_type_traits* k = traits_of(r.op_type); k != nullptr) {
        if (k->row_reduction) o.row_threads = row_reduction_threads(width);
        o.fp32_arithmetic = k->fp32_inside;
        if (k->walks) o.walk = element_walk::indexed;
    }
    o.read_elements = read;
    o.out_width = y.inner();
    if (!r.output_types.empty() && r.output_types[0].type && *r.output_types[0].type != t) {
        o.out_same_as_in = false;
        o.out_type = *r.output_types[0].type;
    }
    op x = rowwise(rows, width, t, o);
    x.uncounted = is_heavy_type(r.op_type);
    return x;
}

/// A softmax row (Softmax, LogSoftmax, PyTorch's softmax kernels): the rows and width of its first
/// input along the last axis; further inputs (a dim or dtype argument a profiler lists) are not
/// read. Its output is taken in the input's dtype (an fp32 output of 16-bit input, PyTorch's
/// half-to-float path, is not modelled: docs/model.md).
[[nodiscard]] inline std::optional<op> softmax_of_row(const kernel_row& r, dtype t) {
    if (r.input_shapes.empty()) return std::nullopt;
    const tensor_shape& x = r.input_shapes[0];
    const auto n = x.elements();
    if (!n || *n < 1 || x.inner() < 1 || !positive(x)) return std::nullopt;
    return softmax(*n / x.inner(), x.inner(), t);
}

/// The dtype the cube multiplies a row's `t` data in: HF32 for fp32 data when the row's
/// "HF32 Eligible" is YES, or, where the profile does not say, when the op's default allows it
/// (`hf32_default`: torch_npu.npu.conv.allow_hf32 defaults to True, npu.matmul.allow_hf32 to
/// False; Ascend PyTorch API reference, torch_npu.npu.conv.allow_hf32 / matmul.allow_hf32).
[[nodiscard]] inline dtype cube_type(const kernel_row& r, dtype t, bool hf32_default) {
    return t == dtype::fp32 && r.hf32_eligible.value_or(hf32_default) ? dtype::hf32 : t;
}

/// Tensor `i` of a row's outputs (or inputs), all its sizes positive, and its format without a
/// ":N" suffix ("" when not written); nothing when the row has no such tensor.
struct row_tensor {
    const std::vector<std::int64_t>& dims;
    std::string_view format;
};
[[nodiscard]] inline std::optional<row_tensor> row_tensor_of(const kernel_row& r, bool output,
                                                             std::size_t i) {
    const auto& shapes = output ? r.output_shapes : r.input_shapes;
    const auto& formats = output ? r.output_formats : r.input_formats;
    if (i >= shapes.size() || !positive(shapes[i])) return std::nullopt;
    const std::string_view f = i < formats.size() ? std::string_view(formats[i]) : "";
    return row_tensor{shapes[i].dims, f.substr(0, f.find(':'))};
}

/// A feature map of a convolution row: its batch, channels and pixels per image, from NCHW or
/// NHWC (rank 4) or Ascend's NC1HWC0 (rank 5: channels C1 x C0), or nothing.
struct feature_map {
    std::int64_t batch = 0;
    std::int64_t channels = 0;
    std::int64_t pixels = 0;
};
[[nodiscard]] inline std::optional<feature_map> feature_map_of(const kernel_row& r, bool output,
                                                               std::size_t i) {
    const auto t = row_tensor_of(r, output, i);
    if (!t) return std::nullopt;
    const auto& d = t->dims;
    const std::string_view f = t->format;
    constexpr std::string_view where = "conv row";
    if (d.size() == 5 && f != "NDHWC" && f != "NCDHW")  // NC1HWC0 (the only rank-5 2-D layout)
        return feature_map{d[0], checked_product(d[1], d[4], where, "C1*C0"),
                           checked_product(d[2], d[3], where, "H*W")};
    if (d.size() != 4) return std::nullopt;
    if (f == "NHWC") return feature_map{d[0], d[3], checked_product(d[1], d[2], where, "H*W")};
    return feature_map{d[0], d[1], checked_product(d[2], d[3], where, "H*W")};
}

/// A convolution weight: output channels and CIN x KH x KW, from Ascend's FRACTAL_Z ([C1 x KH x
/// KW, COUT / 16, 16, C0]: CIN x KH x KW = C1 x KH x KW x C0) or COUT, CIN, KH, KW.
struct conv_weight {
    std::int64_t out_channels = 0;
    std::int64_t per_channel = 0;
};
[[nodiscard]] inline std::optional<conv_weight> conv_weight_of(const kernel_row& r, bool output,
                                                               std::size_t i) {
    const auto t = row_tensor_of(r, output, i);
    if (!t || t->dims.size() != 4) return std::nullopt;
    const auto& d = t->dims;
    constexpr std::string_view where = "conv row";
    if (t->format.starts_with("FRACTAL_Z"))
        return conv_weight{checked_product(d[1], d[2], where, "COUT"),
                           checked_product(d[0], d[3], where, "CIN*KH*KW")};
    return conv_weight{d[0], checked_product(checked_product(d[1], d[2], where, "CIN*KH"), d[3],
                                             where, "CIN*KH*KW")};
}

/// A Conv2D / Conv2DBackpropInput / Conv2DBackpropFilter row as its implicit GEMM (op.hpp's
/// conv_gemm), its operands at CANN's positions: Conv2D (x, filter, bias) -> y;
/// Conv2DBackpropInput (input_size, filter, out_backprop) -> dx; Conv2DBackpropFilter (x,
/// filter_size, out_backprop) -> dw. The dtype is the out_backprop's or x's (input_size and
/// filter_size are INT32 shapes); the bytes are the row's own tensors.
[[nodiscard]] inline std::optional<op> conv_of_row(const kernel_row& r) {
    const std::string_view type = r.op_type;
    const conv_pass p = type.starts_with("Conv2DBackpropInput")    ? conv_pass::backprop_input
                        : type.starts_with("Conv2DBackpropFilter") ? conv_pass::backprop_filter
                                                                   : conv_pass::forward;
    // The feature map whose pixels are the GEMM's (the output, or the output's gradient), the
    // weight (or its gradient), and the tensor whose dtype the cube multiplies.
    const auto y =
        p == conv_pass::forward ? feature_map_of(r, true, 0) : feature_map_of(r, false, 2);
    const auto w =
        p == conv_pass::backprop_filter ? conv_weight_of(r, true, 0) : conv_weight_of(r, false, 1);
    const std::size_t typed = p == conv_pass::backprop_input ? 2 : 0;
    const auto bytes = r.bytes_moved();
    const auto written = r.output_bytes();
    if (!y || !w || !bytes || !written || typed >= r.input_types.size() ||
        !r.input_types[typed].type)
        return std::nullopt;
    // torch_npu computes a Conv's fp32 data in HF32 unless told not to (torch_npu.npu.conv.
    // allow_hf32, default True); the row's "HF32 Eligible" says which, where it is written.
    const dtype t = cube_type(r, *r.input_types[typed].type, true);
    dtype out = *r.input_types[typed].type;
    if (!r.output_types.empty() && r.output_types[0].type) out = *r.output_types[0].type;
    constexpr std::string_view where = "conv row";
    const std::int64_t pixels = checked_product(y->batch, y->pixels, where, "N*HO*WO");
    return conv_gemm(p, pixels, y->channels, w->per_channel, t, *bytes - *written, *written, out);
}

/// The op of a row whose type another kind's row claims (an extension's, say): the kind's cost
/// function on a node of the row's input shapes and dtype; nothing when they do not fit the
/// kind's shapes.
[[nodiscard]] inline std::optional<op> row_op_of(const kernel_row& r, const op_row& kind, dtype t) {
    if (r.input_shapes.size() < static_cast<std::size_t>(kind.shapes.min) ||
        r.input_shapes.size() > static_cast<std::size_t>(kind.shapes.max) ||
        r.input_shapes.size() > node::max_shapes) {
        return std::nullopt;
    }
    std::vector<batched_shape> shapes;
    for (const tensor_shape& s : r.input_shapes) {
        if (s.rank() > shape::max_rank || !positive(s)) return std::nullopt;
        batched_shape b;
        for (std::int64_t d : s.dims) b.push_back(batch_dim{d});
        shapes.push_back(b);
    }
    return instantiate(nodes::of_row(kind, shapes, t), 1);
}
}  // namespace detail

namespace detail {
/// op_of_row's op, or why the op factories refused the row's sizes: a size that passes 2^63 - 1
/// ("too large": two inputs of 2^63 - 1 elements each, a GEMM of 1e22 multiply-adds).
struct row_op {
    std::optional<op> o;
    std::string refused;  // the factory's error; empty when it gave an op or nothing
};
[[nodiscard]] inline row_op try_op_of_row(const kernel_row& r, op_vocabulary ops) {
    try {
        return {op_of_row(r, ops), {}};
    } catch (const ::perfcast::error& e) {
        // Only a size past what the model holds; any other refusal stops the run as before.
        if (std::string_view(e.what()).find("too large") == std::string_view::npos) throw;
        return {std::nullopt, e.what()};
    }
}
}  // namespace detail

/// `ops`: the op kinds whose profiler types the row may have (an extension's vocabulary,
/// node.hpp's with_rows). A row whose sizes pass 2^63 - 1 ("too large") gives nothing, as other
/// shapes no op reads: one such row of a damaged file does not stop a run over the others
/// (why_unmapped says which size, unmapped_reason::shapes).
[[nodiscard]] inline std::optional<op> op_of(const kernel_row& r, op_vocabulary ops) {
    return detail::try_op_of_row(r, ops).o;
}

namespace detail {
/// Whether a row is a TransData between a plain NCHW weight and Ascend's FRACTAL_Z ([C1 x KH x
/// KW, COUT / 16, 16, C0]), either way. The new innermost axis (C0, channels) is strided by
/// KH x KW in the plain tensor, so the conversion is a gather of single elements, which the
/// kernel does on its scalar unit: priced as a transpose whose innermost axis moves (every
/// element its own run). In the 2025 torch_npu profile these rows spend 2.0-28.7 us of their
/// 6.5-53.6 us in the scalar pipe and under 10 us in the loads and stores (docs/validation.md,
/// "Layouts and contiguous runs"). NCHW <-> NC1HWC0 moves whole H x W planes (vector transposes)
/// and keeps the output's innermost axis as its run.
[[nodiscard]] inline bool fractal_z_gather(const kernel_row& r) {
    if (r.op_type != "TransData") return false;
    const auto in = row_tensor_of(r, false, 0);
    const auto out = row_tensor_of(r, true, 0);
    if (!in || !out) return false;
    const auto plain = [](const row_tensor& t) { return t.format == "NCHW" && t.dims.size() == 4; };
    const auto fractal = [](const row_tensor& t) { return t.format.starts_with("FRACTAL_Z"); };
    return (plain(*in) && fractal(*out)) || (fractal(*in) && plain(*out));
}
}  // namespace detail

/// The kind of the first row of `ops` whose profiler types match the row's op type (see
/// op_vocabulary.hpp): a MatMul, a reduction or a cast read below, any other kind by its cost
/// function (row_op_of). When no row claims the type the engine decides: an elementwise op on the
/// vector cores, a generic op with the row's bytes elsewhere.
[[nodiscard]] inline std::optional<op> detail::op_of_row(const kernel_row& r, op_vocabulary ops) {
    const auto eng = engine_of(r.task);
    const auto t = dtype_of(r);
    if (!eng || !t || r.has_note(note_kind::shape_conflict)) return std::nullopt;
    const op_row* named = row_for_profiler_type(ops, r.op_type);
    const op_kind kind = named != nullptr ? named->value : op_kind::generic;
    if (named != nullptr && !read_by_name(kind)) return row_op_of(r, *named, *t);
    if (kind == op_kind::attention) return attention_of_row(r, *t);
    if (kind == op_kind::grouped_matmul) return grouped_matmul_of_row(r, *t);
    if (kind == op_kind::fill) return fill_of_row(r, *t);
    if (kind == op_kind::rowwise) return rowwise_of_row(r, *t);
    if (kind == op_kind::softmax) return softmax_of_row(r, *t);
    if (kind == op_kind::gather) return gather_of_row(r, *t);
    if (kind == op_kind::conv) return conv_of_row(r);
    if (kind == op_kind::matmul) {
        const auto g = gemm_of(r);
        if (!g) return std::nullopt;
        dtype out = *t;
        if (!r.output_types.empty() && r.output_types[0].type) out = *r.output_types[0].type;
        return batch_matmul(g->batch, g->m, g->n, g->k, cube_type(r, *t, false),
                            {.broadcast_b = g->broadcast_b, .out_type = out});
    }
    const auto bytes = r.bytes_moved();
    if (!bytes || r.output_shapes.empty()) return std::nullopt;
    // A Foreach row (torch's multi-tensor ops: ForeachAddList, ForeachMulScalar, ...) applies
    // one elementwise op to each tensor of its lists: its elements are all of its outputs'.
    const bool list = *eng == engine::vector && r.op_type.starts_with("Foreach");
    std::optional<std::int64_t> out_elems = r.output_shapes[0].elements();
    for (std::size_t i = 1; list && out_elems && i < r.output_shapes.size(); ++i) {
        const auto n = r.output_shapes[i].elements();
        out_elems = n ? std::optional(checked_sum(*out_elems, *n, "Foreach row", "elements"))
                      : std::nullopt;
    }
    if (!out_elems || *out_elems < 1) return std::nullopt;
    if (*eng == engine::vector) {
        // Reductions by name (ReduceSum, LpNormReduceV2, ArgMaxWithValue, ...): every input
        // element is read once. Other vector ops read at most an output's worth of each input:
        // broadcast inputs are smaller, sliced and strided views (AsStrided, StridedSlice) read
        // only the elements they return.
        std::int64_t read_all = 0;
        std::int64_t read_viewed = 0;
        // An input of more than one element and fewer than the output's that broadcasts to it
        // (numpy's rule: its dimensions, from the last, each the output's or 1) in the row's
        // dtype (a gather's int64 indices of [T] against its [T, T] output are not one).
        bool broadcast = false;
        const tensor_shape& y = r.output_shapes[0];
        const auto broadcasts = [&y](const tensor_shape& x) {
            if (x.rank() > y.rank()) return false;
            for (std::size_t i = 1; i <= x.rank(); ++i) {
                const std::int64_t d = x.dims[x.rank() - i];
                if (d != 1 && d != y.dims[y.rank() - i]) return false;
            }
            return true;
        };
        for (std::size_t i = 0; i < r.input_shapes.size(); ++i) {
            const tensor_shape& s = r.input_shapes[i];
            const auto n = s.elements();
            if (!n) return std::nullopt;
            read_all = checked_sum(read_all, *n, "vector row", "read elements");
            read_viewed =
                checked_sum(read_viewed, std::min(*n, *out_elems), "vector row", "read elements");
            const bool same_type = i < r.input_types.size() && r.input_types[i].type == *t;
            broadcast = broadcast || (*n > 1 && *n < *out_elems && same_type && broadcasts(s));
        }
        if (kind == op_kind::reduce && read_all > *out_elems) {
            op red = reduce(*out_elems, std::max<std::int64_t>(1, read_all / *out_elems), *t);
            return red;
        }
        const vector_type_traits* traits = traits_of(r.op_type);
        const std::int64_t read = traits && !traits->reads_inputs ? 0 : read_viewed;
        elementwise_options o;
        o.inputs = static_cast<int>(r.input_shapes.empty() ? 1 : r.input_shapes.size());
        o.read_elements = read;
        if (traits) o.ops_per_element = traits->ops_per_element;
        o.inner = !list && walks_rows(r) ? r.output_shapes[0].inner() : 0;
        if (detail::fractal_z_gather(r)) o.inner = 1;
        if (!r.output_types.empty() && r.output_types[0].type && *r.output_types[0].type != *t) {
            o.out_same_as_in = false;
            o.out_type = *r.output_types[0].type;
        }
        if (traits && traits->syncs > 0 && read_all > 0) {
            // A compaction: every input element read, one work unit each (traits above).
            o.read_elements = read_all;
            op e = elementwise(read_all, *t, o);
            e.work_units = read_all;
            e.ops_per_unit = traits->ops_per_element;
            e.syncs = traits->syncs;
            return e;
        }
        o.fp32_arithmetic = traits != nullptr && traits->fp32_inside;
        op e = elementwise(*out_elems, *t, o);
        e.uncounted = is_heavy_type(r.op_type);
        if (kind == op_kind::cast) e.kind = op_kind::cast;
        // How the kernel walks its elements (element_walk; priced where the chip's library
        // walks them so: engine_spec::walk_rate). A Transpose row gives no permutation: its
        // innermost axis moves when it is 2-D or the innermost sizes differ; otherwise it is
        // taken to stay, a copy of a permuted view walked by index. A reduction read above is
        // none of these.
        if (r.op_type == "Transpose" && !r.input_shapes.empty()) {
            const tensor_shape& x = r.input_shapes[0];
            e.walk = x.rank() <= 2 || x.inner() != r.output_shapes[0].inner()
                         ? element_walk::transposed
                         : element_walk::indexed;
        } else if ((!list && broadcast) ||
                   (kind == op_kind::cast && perfcast::detail::widens(*t, e.out_type))) {
            e.walk = element_walk::indexed;
        }
        // A kernel writes every output it lists: ApplyAdamW its var, m and v. The work stays the
        // first output's elements. (A norm row is rowwise_of_row's: its y only, the mean and
        // rstd a row each.)
        if (r.output_shapes.size() > 1 && !list) {
            if (const auto all = r.output_bytes(); all && *all > e.bytes_written)
                e.bytes_written = *all;
        }
        return e;
    }
    // Cube ops that are not GEMMs and AI CPU ops: their bytes, one work unit per 4 KiB moved.
    const std::int64_t units = 1 + static_cast<std::int64_t>(bytes->in(units::B)) / 4096;
    return generic(*eng, flop_count{static_cast<double>(*out_elems), units::flop}, *bytes,
                   data_size{}, units, *t);
}

/// A measured row as the model sees it: the op, the cores it used (its block dim, clamped to
/// the engine) and its measured time.
struct measured_op {
    op o;
    int cores = 1;
    duration measured{};
    std::string type;
    /// pattern_key of the row ("": not known, as for rows not read from a profile): the key of
    /// terms fitted on rows of this pattern alone.
    std::string pattern_key{};
};

/// The least measured time a row is scored or fitted at, in us: profilers write times in us
/// with 3 decimals, so 0.001 is the least they record that is not 0. Less (0, or 1e-300 in a
/// damaged file) is no kernel's time, and an error relative to it would be any size.
inline constexpr double min_measured_us = 0.001;

/// The row as a measured op, or nothing when the row has no duration of at least
/// min_measured_us, cannot be mapped to an op, or needs a rate the chip lacks. `cal` supplies
/// per-type work factors and fixed times.
[[nodiscard]] inline std::optional<measured_op> measured_op_of(const chip& c, const kernel_row& r,
                                                               const calibration& cal = {},
                                                               op_vocabulary ops = op_kinds) {
    if (!r.task_duration || !(r.task_duration->in(units::us) >= min_measured_us))
        return std::nullopt;
    std::string key = pattern_key(r);
    auto o = op_of(r, ops);
    if (!o) return std::nullopt;
    *o = cal.applied(*o, r.op_type, key);
    const engine_spec& e = c.engine_of(o->eng);
    // The rate the op is priced at (a widened 16-bit op: fp32's), as cost() checks it.
    if (e.cores < 1 ||
        (o->useful_ops > 0 && e.ops_per_cycle_for(perfcast::detail::rate_type(e, *o)) <= 0))
        return std::nullopt;
    if (r.context.l2_input_share) o->l2_input_share = *r.context.l2_input_share;
    o->first_run = r.context.first_run;
    o->writeback = r.context.writeback;
    const int k = r.block_dim && *r.block_dim > 0 ? *r.block_dim : e.cores;
    return measured_op{*o, std::min(k, e.cores), *r.task_duration, r.op_type, std::move(key)};
}

/// The largest Block Dim a kernel on the AI cores is launched with: CANN's SetBlockDim takes a
/// blockDim (logical cores) in [1, 65535] (hiascend.com, CANN Community Edition 8.3.RC1 API
/// reference, "SetBlockDim"). More is no launch: a damaged or mistyped field.
inline constexpr int max_block_dim = 65535;

/// What the model has to assume of row `r`'s Block Dim on chip `c`, or "" when nothing: a row on
/// the cube or vector cores with no Block Dim (empty or N/A), a Block Dim of 0, or one above
/// max_block_dim is priced on all of its engine's cores (measured_op_of, anchor_profile), which
/// the row does not say. "Block Dim 0 (task AI_CORE): expected the blocks it launched, 1 ..
/// 65535; priced on all 24 cube cores". A Block Dim above the cores is not one: the blocks
/// run in waves on all of them.
[[nodiscard]] inline std::string block_dim_problem(const chip& c, const kernel_row& r) {
    const auto eng = engine_of(r.task);
    if (!runs_on_ai_cores(r.task) || !eng) return {};
    if (r.block_dim && *r.block_dim >= 1 && *r.block_dim <= max_block_dim) return {};
    const std::string what =
        !r.block_dim ? "no Block Dim (empty or N/A)" : "Block Dim " + std::to_string(*r.block_dim);
    return what + " (task " + parse_error::printable(r.task_text) +
           "): expected the blocks it launched, 1 .. " + std::to_string(max_block_dim) +
           "; priced on all " + std::to_string(c.engine_of(*eng).cores) + " " +
           std::string(name_of(*eng)) + " cores";
}

/// Why a row gives no measured op (measured_op_of), in the order measured_op_of meets them.
enum class unmapped_reason : unsigned char {
    no_duration,     // no duration of at least min_measured_us
    not_compute,     // a task on none of the priced engines: communication (HCCL), DSA, other
    no_dtype,        // no input or output dtype perfcast knows
    shape_conflict,  // the row's shapes contradict each other (note shape_conflict)
    shapes,          // shapes missing, unreadable, or not those of the op its type names
    no_rate,         // the chip has no cores or no rate for the op's dtype on its engine
};

inline constexpr std::array<enum_entry<unmapped_reason>, 6> unmapped_reason_names{{
    {unmapped_reason::no_duration, "no_duration"},
    {unmapped_reason::not_compute, "not_compute"},
    {unmapped_reason::no_dtype, "no_dtype"},
    {unmapped_reason::shape_conflict, "shape_conflict"},
    {unmapped_reason::shapes, "shapes"},
    {unmapped_reason::no_rate, "no_rate"},
}};
static_assert(covers_enum<unmapped_reason_names>());

[[nodiscard]] constexpr std::string_view name_of(unmapped_reason r) noexcept {
    return name_in(unmapped_reason_names, r);
}

/// A row the model cannot predict, and why: `detail` says it of this row (the task, the dtype
/// text, the shapes, the chip), for a reader who wants to mend the file or the model.
struct unmapped_row {
    std::size_t line = 0;
    std::string name;
    std::string type;
    std::string task;
    unmapped_reason reason = unmapped_reason::shapes;
    std::string detail;
};

namespace detail {

/// Why row `r` does not map, measured_op_of(c, r, ..., ops) having given nothing for it
/// (unmapped_of asks it first; score_rows just has).
[[nodiscard]] inline unmapped_row why_unmapped(const chip& c, const kernel_row& r,
                                               op_vocabulary ops = op_kinds) {
    unmapped_row u{r.line, r.name, r.op_type, r.task_text, unmapped_reason::shapes, {}};
    const auto say = [&u](unmapped_reason why, std::string detail) {
        u.reason = why;
        u.detail = std::move(detail);
        return u;
    };
    const auto notes = [&r](note_kind k) {
        std::string out;
        for (const row_note& n : r.notes)
            if (n.kind == k) out += (out.empty() ? "" : "; ") + n.detail;
        return out;
    };
    if (!r.task_duration) return say(unmapped_reason::no_duration, "no duration recorded");
    if (!(r.task_duration->in(units::us) >= min_measured_us))
        return say(unmapped_reason::no_duration,
                   "a duration of " +
                       perfcast::detail::number_text(r.task_duration->in(units::us)) +
                       " us, under the least scored (0.001 us)");
    const auto eng = engine_of(r.task);
    if (!eng)
        return say(unmapped_reason::not_compute,
                   "task '" + r.task_text + "' (" + std::string(name_of(r.task)) +
                       "): runs on none of the cube, vector or AI CPU engines the model prices");
    const auto t = dtype_of(r);
    if (!t) {
        const std::string unknown = notes(note_kind::unknown_dtype);
        return say(unmapped_reason::no_dtype, unknown.empty()
                                                  ? "no input or output dtype recorded"
                                                  : "a dtype perfcast does not know: " + unknown);
    }
    if (r.has_note(note_kind::shape_conflict))
        return say(unmapped_reason::shape_conflict, notes(note_kind::shape_conflict));
    if (const auto o = op_of(r, ops)) {
        const engine_spec& e = c.engine_of(o->eng);
        return say(
            unmapped_reason::no_rate,
            std::string(c.name.view()) + " has " +
                (e.cores < 1 ? "no " + std::string(name_of(o->eng)) + " cores"
                             : "no " + std::string(name_of(o->eng)) + " rate for " +
                                   std::string(name_of(perfcast::detail::rate_type(e, *o)))));
    }
    std::string shapes;
    for (const auto* side : {&r.input_shapes, &r.output_shapes}) {
        shapes += side == &r.input_shapes ? "inputs " : " -> outputs ";
        if (side->empty()) shapes += "none";
        for (std::size_t i = 0; i < side->size(); ++i)
            shapes += (i == 0 ? "" : ";") + to_string((*side)[i]);
    }
    const std::string bad = notes(note_kind::bad_shape);
    if (std::string refused = try_op_of_row(r, ops).refused; !refused.empty())
        return say(unmapped_reason::shapes,
                   shapes + ": sizes the model cannot hold (" + std::move(refused) + ")");
    const op_row* named = row_for_profiler_type(ops, r.op_type);
    return say(
        unmapped_reason::shapes,
        (bad.empty() ? std::string{} : "unreadable shapes (" + bad + "); ") + shapes +
            (named != nullptr ? ": not shapes op kind '" + std::string(named->name) + "' reads"
                              : ": not shapes an elementwise or generic op on the " +
                                    std::string(name_of(*eng)) + " engine reads"));
}

}  // namespace detail

/// Why measured_op_of(c, r, cal, ops) gives nothing, or nothing when it gives an op. Only the
/// reason is worked out here; whether the row maps is measured_op_of's answer, so the two
/// cannot disagree.
[[nodiscard]] inline std::optional<unmapped_row> unmapped_of(const chip& c, const kernel_row& r,
                                                             const calibration& cal = {},
                                                             op_vocabulary ops = op_kinds) {
    if (measured_op_of(c, r, cal, ops)) return std::nullopt;
    return detail::why_unmapped(c, r, ops);
}

}  // namespace perfcast::profile
