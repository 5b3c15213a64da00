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
#include <map>
#include <string>
#include <optional>
#include <string_view>
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
}  // namespace detail

/// Whether an op type is a matrix multiply (MatMul, BatchMatMul and their V2 / V3 spellings:
/// the profiler types of op_kinds' matmul row).
[[nodiscard]] inline bool is_gemm_type(std::string_view type) noexcept {
    return detail::is_matmul_type(type);
}

/// What perfcast assumes about a vector op type it knows by name: vector operations per output
/// element (transcendentals and fused kernels issue several) and whether the kernel reads its
/// inputs at all (ZerosLike only uses the input's shape). Assumptions from the instruction count
/// of a straightforward kernel; `perfcast calibrate` fits a work factor and a fixed time per
/// type on top.
struct vector_type_traits {
    std::string_view type;
    double ops_per_element;
    bool reads_inputs;
};

inline constexpr std::array<vector_type_traits, 28> vector_types{{
    {"Exp", 4, true},           {"Log", 4, true},          {"Sqrt", 4, true},
    {"Rsqrt", 4, true},         {"Reciprocal", 4, true},   {"RealDiv", 4, true},
    {"Div", 4, true},           {"Tanh", 6, true},         {"Sigmoid", 6, true},
    {"FastGelu", 8, true},      {"Gelu", 10, true},        {"GeluGrad", 12, true},
    {"FastGeluGrad", 10, true}, {"LayerNorm", 8, true},    {"LayerNormV3", 8, true},
    {"LayerNormGrad", 12, true}, {"Softmax", 8, true},     {"ScaledMaskedSoftmax", 10, true},
    {"SoftmaxGrad", 8, true},   {"ApplyAdamW", 16, true},  {"DropOutDoMask", 2, true},
    {"ZerosLike", 1, false},    {"OnesLike", 1, false},    {"Fill", 1, false},
    {"RmsNorm", 6, true},       {"ApplyRotaryPosEmb", 4, true}, {"SwiGlu", 8, true},
    {"Silu", 6, true},
}};

[[nodiscard]] constexpr const vector_type_traits* traits_of(std::string_view type) noexcept {
    for (const auto& t : vector_types)
        if (t.type == type) return &t;
    return nullptr;
}

/// Whether the traits table counts more than one vector operation per element for `type`
/// (transcendentals, norms, softmax, optimizer updates): calibration gives such a type that
/// the profile lacks the median factor of those it shows.
[[nodiscard]] constexpr bool is_heavy_type(std::string_view type) noexcept {
    const vector_type_traits* t = traits_of(type);
    return t != nullptr && t->ops_per_element > 1;
}

/// What calibration learns on top of model_params, per vector / AI CPU op type where the
/// measured rows of a type allow: a work factor (vector operations per element relative to the
/// traits table) and a fixed time beyond the engine's head (a kernel's scalar set-up and
/// argument loads: about 2.8 us for ApplyAdamW's eleven inputs, on the 910B1 profile, at any
/// size). The fixed time is op::extra_head in the cost model and fixed_us.<Type> in the
/// parameters file.
struct calibration {
    model_params params{};
    std::map<std::string, double, std::less<>> work_factor;    // op type -> factor (1: none)
    std::map<std::string, duration, std::less<>> fixed_time;  // op type -> extra head (0: none)

    // The factor of a heavy type (is_heavy_type) without one of its own (1: none).
    double unseen_heavy_factor = 1;

    // Runtime-path settings (runtime.hpp; params keys `runtime.KEY`), applied over the preset
    // and the model file's runtime line by whoever evaluates a deployment.
    std::vector<runtime_setting> runtime;

    [[nodiscard]] double factor_of(std::string_view type) const {
        const auto it = work_factor.find(type);
        if (it != work_factor.end()) return it->second;
        return is_heavy_type(type) ? unseen_heavy_factor : 1.0;
    }
    [[nodiscard]] duration fixed_time_of(std::string_view type) const {
        const auto it = fixed_time.find(type);
        return it == fixed_time.end() ? duration{} : it->second;
    }
    /// `o` (an op of type `type`) with its type's work factor and fixed time; cube ops as given.
    [[nodiscard]] op applied(op o, std::string_view type) const {
        if (o.eng == engine::cube) return o;
        const double f = factor_of(type);
        if (!(f > 0 && f < 1e6)) {
            const bool own = work_factor.find(type) != work_factor.end();
            const std::string field = own ? "work factor of " + std::string(type)
                                          : "unseen_heavy_factor (for " + std::string(type) + ")";
            ::perfcast::detail::precondition_failed("calibration", field, f,
                                                    "a factor in (0, 1e6)");
        }
        o.useful_ops *= f;
        o.ops_per_unit *= f;
        o.extra_head += fixed_time_of(type);
        return o;
    }
};

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

/// The compute dtype of a row: its first input's dtype perfcast knows.
[[nodiscard]] inline std::optional<dtype> dtype_of(const kernel_row& r) {
    for (const tensor_dtype& t : r.input_types)
        if (t.type) return t.type;
    for (const tensor_dtype& t : r.output_types)
        if (t.type) return t.type;
    return std::nullopt;
}

/// The op a row describes, or nothing (communication tasks, unknown dtypes, contradictory or
/// missing shapes).
[[nodiscard]] inline std::optional<op> op_of(const kernel_row& r, const calibration& cal,
                                             op_vocabulary ops = op_kinds) {
    auto o = op_of(r, ops);
    if (o) o = cal.applied(*o, r.op_type);
    return o;
}

namespace detail {
[[nodiscard]] inline std::optional<op> op_of_row(const kernel_row& r, op_vocabulary ops);

/// Kinds whose profile rows need a reading of their own (op_of_row): MatMul shapes may be
/// transposed, a reduction reads more than it writes, a cast is an elementwise op.
[[nodiscard]] constexpr bool read_by_name(op_kind k) noexcept {
    return k == op_kind::matmul || k == op_kind::reduce || k == op_kind::cast;
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

/// An op whose sizes pass 2^63 - 1 ("too large") is an error naming the row's line, name and
/// type: the profile's file is named by the reader's caller. `ops`: the op kinds whose
/// profiler types the row may have (an extension's vocabulary, node.hpp's with_rows).
[[nodiscard]] inline std::optional<op> op_of(const kernel_row& r, op_vocabulary ops) {
    try {
        return detail::op_of_row(r, ops);
    } catch (const ::perfcast::error& e) {
        throw ::perfcast::error("row at line " + std::to_string(r.line) + " (" +
                                parse_error::printable(r.name) + ", " +
                                parse_error::printable(r.op_type) + "): " + e.what());
    }
}

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
    if (kind == op_kind::matmul) {
        const auto g = gemm_of(r);
        if (!g) return std::nullopt;
        dtype out = *t;
        if (!r.output_types.empty() && r.output_types[0].type) out = *r.output_types[0].type;
        return batch_matmul(g->batch, g->m, g->n, g->k, *t,
                            {.broadcast_b = g->broadcast_b, .out_type = out});
    }
    const auto bytes = r.bytes_moved();
    if (!bytes || r.output_shapes.empty()) return std::nullopt;
    const auto out_elems = r.output_shapes[0].elements();
    if (!out_elems || *out_elems < 1) return std::nullopt;
    if (*eng == engine::vector) {
        // Reductions by name (ReduceSum, LpNormReduceV2, ArgMaxWithValue, ...): every input
        // element is read once. Other vector ops read at most an output's worth of each input:
        // broadcast inputs are smaller, sliced and strided views (AsStrided, StridedSlice) read
        // only the elements they return.
        std::int64_t read_all = 0;
        std::int64_t read_viewed = 0;
        for (const tensor_shape& s : r.input_shapes) {
            const auto n = s.elements();
            if (!n) return std::nullopt;
            read_all += *n;
            read_viewed += std::min(*n, *out_elems);
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
        o.inner = r.output_shapes[0].inner() > 0 ? r.output_shapes[0].inner() : 0;
        if (!r.output_types.empty() && r.output_types[0].type && *r.output_types[0].type != *t) {
            o.out_same_as_in = false;
            o.out_type = *r.output_types[0].type;
        }
        op e = elementwise(*out_elems, *t, o);
        if (kind == op_kind::cast) e.kind = op_kind::cast;
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
};

/// The row as a measured op, or nothing when the row has no positive duration, cannot be mapped
/// to an op, or needs a rate the chip lacks. `cal` supplies per-type work factors and fixed
/// times.
[[nodiscard]] inline std::optional<measured_op> measured_op_of(const chip& c, const kernel_row& r,
                                                               const calibration& cal = {},
                                                               op_vocabulary ops = op_kinds) {
    if (!r.task_duration || !(r.task_duration->in(units::us) > 0)) return std::nullopt;
    auto o = op_of(r, cal, ops);
    if (!o) return std::nullopt;
    const engine_spec& e = c.engine_of(o->eng);
    if (e.cores < 1 || (o->useful_ops > 0 && e.ops_per_cycle_for(o->type) <= 0))
        return std::nullopt;
    if (r.context.l2_input_share) o->l2_input_share = *r.context.l2_input_share;
    o->first_run = r.context.first_run;
    o->writeback = r.context.writeback;
    const int k = r.block_dim && *r.block_dim > 0 ? *r.block_dim : e.cores;
    return measured_op{*o, std::min(k, e.cores), *r.task_duration, r.op_type};
}

}  // namespace perfcast::profile
