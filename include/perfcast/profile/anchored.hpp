// perfcast/profile/anchored.hpp: a what-if model built from one measured profile.
//
// Every compute row of a profiled inference (or training) step becomes one graph.hpp node, in
// file order, anchored to its measurement: at a candidate configuration (a core limit and a
// batch) its time is
//     measured x model(candidate) / model(measured configuration)
// where the measured configuration is the row's block dim (clamped to its engine's cores) at the
// profiled batch B. The anchor is node::scale = measured / model(measured configuration), so the
// model's ratio carries the measurement to other configurations while card.hpp, whatif.hpp and
// serving_sweep.hpp run on the nodes unchanged.
//
// Rows: those profile::engine_of maps to an engine (AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV,
// AI_CPU) with a positive duration. HCCL, DSA and other tasks, and rows without a duration, are
// skipped (counted). A row profile::op_of cannot map to an op is "unmapped": it keeps its
// measured time at every configuration (a one-unit node of its engine whose model time depends
// on neither the batch nor the core limit) and is counted.
//
// The batch dimension of each tensor, given the profiled batch B (batch_rule):
//   1. the first dimension equal to B is the batch (B x 1);
//   2. otherwise, in a tensor of rank >= 2, a leading dimension k x B (k >= 2) is k rows per
//      sample (a flattened [B x S, H] activation, or B x heads in a batch matmul);
//   3. every other dimension is fixed.
// A GEMM's shared (broadcast) B operand is a weight and never scales. Ambiguity: a dimension that
// equals B, or a rank >= 2 leading dimension divisible by B, by coincidence (a weight [4608,
// 12288] at B = 4) is scaled too, and a batch dimension that is neither (a flattened 1-D tensor,
// a dropout bit mask) is not. anchor_options::leading_multiples = false turns rule 2 off.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../chip.hpp"
#include "../error.hpp"
#include "../graph.hpp"
#include "../node.hpp"
#include "../nodes.hpp"
#include "../op_vocabulary.hpp"
#include "../units.hpp"
#include "kernel_details.hpp"
#include "ops.hpp"

namespace perfcast::profile {

struct anchor_options {
    /// Rule 2 above: a rank >= 2 leading dimension k x B scales as k per sample.
    bool leading_multiples = true;
};

/// One anchored row.
struct anchor {
    std::size_t row = 0;      // index into the rows given
    std::string name;         // the row's Name
    std::string type;         // the row's op type
    engine eng = engine::vector;
    int cores = 1;            // measured configuration: block dim, clamped to the engine
    duration measured{};      // the row's duration
    duration modelled{};      // the node's model time (scale 1) at batch B on `cores`
    bool mapped = false;      // false: kept at its measured time (op_of gave nothing)
    bool batch_dependent = false;  // some shape of the node scales with the batch
};

/// The anchored model and how it was built.
struct anchored_profile {
    model m;                        // one node per anchor, in row order, all sunk (graph)
    std::vector<anchor> anchors;    // parallel to m.nodes
    std::int64_t batch = 1;         // the profiled batch B
    std::size_t skipped = 0;        // rows that are not compute tasks or have no duration
    std::size_t unmapped = 0;       // anchors kept at their measured time
    std::size_t batch_dependent = 0;  // anchors whose shapes scale with the batch
    duration measured{};            // sum of the anchors' measured durations
};

namespace detail {

/// Rule of the file header: a tensor's dimensions as batch_dims, or nothing for an empty
/// dimension (0).
[[nodiscard]] inline std::optional<batched_shape> batch_rule(const tensor_shape& s,
                                                             std::int64_t batch,
                                                             bool leading_multiples) {
    if (s.rank() > shape::max_rank) return std::nullopt;
    batched_shape out;
    bool found = false;
    for (std::size_t i = 0; i < s.rank(); ++i) {
        const std::int64_t d = s.dims[i];
        if (d < 1) return std::nullopt;
        if (!found && d == batch) {
            out.push_back(batch_dim{1, 0});
            found = true;
        } else {
            out.push_back(batch_dim{d});
        }
    }
    if (!found && leading_multiples && s.rank() >= 2 && s.dims[0] > batch &&
        s.dims[0] % batch == 0) {
        out.dims[0] = batch_dim{s.dims[0] / batch, 0};
    }
    return out;
}

/// Elements of a batched shape with at most one scaling dimension, as a batch_dim.
[[nodiscard]] inline batch_dim elements_of(const batched_shape& s) {
    std::int64_t fixed = 1;
    std::int64_t per = 0;
    for (std::size_t i = 0; i < s.rank; ++i) {
        if (s.dims[i].depends_on_batch()) {
            per = s.dims[i].per_batch;
        } else {
            fixed = checked_product(fixed, s.dims[i].fixed, "anchor_profile", "elements");
        }
    }
    if (per == 0) return batch_dim{fixed};
    return batch_dim{checked_product(per, fixed, "anchor_profile", "elements"), 0};
}

/// The node of a row that op_of maps, sized by the batch rule; nothing when the shapes do not
/// allow one. `uncounted_work`: the chip's engine_spec::uncounted_work for the row's engine, which
/// scales the work of an op whose count is assumed (op::uncounted), as cost() does.
[[nodiscard]] inline std::optional<node> node_of(const kernel_row& r, const op& o, engine eng,
                                                 std::int64_t batch, const calibration& cal,
                                                 const anchor_options& opt, op_vocabulary ops,
                                                 double uncounted_work) {
    const auto t = dtype_of(r);
    if (!t) return std::nullopt;
    const bool lm = opt.leading_multiples;
    // A kind op_of reads by its cost function (an extension's): its node of the input shapes.
    const op_row* named = row_for_profiler_type(ops, r.op_type);
    if (named != nullptr && !read_by_name(named->value)) {
        if (r.input_shapes.size() > node::max_shapes) return std::nullopt;
        std::vector<batched_shape> shapes;
        for (const tensor_shape& s : r.input_shapes) {
            const auto b = batch_rule(s, batch, lm);
            if (!b) return std::nullopt;
            shapes.push_back(*b);
        }
        return nodes::of_row(*named, shapes, *t);
    }
    if (is_gemm_type(r.op_type)) {
        const auto g = gemm_of(r);
        if (!g) return std::nullopt;
        const tensor_shape& a = r.input_shapes[0];
        const tensor_shape& b = r.input_shapes[1];
        const tensor_shape& c = r.output_shapes[0];
        const auto bc = batch_rule(c, batch, lm);
        const auto ba = batch_rule(a, batch, lm);
        if (!bc || !ba) return std::nullopt;
        // A's layout, as gemm_of reads it (the first reading that agrees with the output).
        const std::size_t ar = a.rank();
        const std::int64_t a0 = a.dims[ar - 2];
        const std::int64_t a1 = a.dims[ar - 1];
        const std::int64_t b0 = b.dims[b.rank() - 2];
        const std::int64_t b1 = b.dims[b.rank() - 1];
        std::optional<std::size_t> k_index;
        for (int ta = 0; ta < 2 && !k_index; ++ta) {
            const std::int64_t m = ta ? a1 : a0;
            const std::int64_t ka = ta ? a0 : a1;
            for (int tb = 0; tb < 2; ++tb) {
                if (m == g->m && ka == g->k && (tb ? b1 : b0) == ka && (tb ? b0 : b1) == g->n) {
                    k_index = ta ? ar - 2 : ar - 1;
                    break;
                }
            }
        }
        if (!k_index) return std::nullopt;
        batched_shape lead;  // C's leading (batch) dimensions
        for (std::size_t i = 0; i + 2 < bc->rank; ++i) lead.push_back((*bc)[i]);
        const batch_dim bd = elements_of(lead);
        const batch_dim m = (*bc)[bc->rank - 2];
        const batch_dim n = (*bc)[bc->rank - 1];
        const batch_dim k = (*ba)[*k_index];
        dtype out = *t;
        if (!r.output_types.empty() && r.output_types[0].type) out = *r.output_types[0].type;
        node nd = nodes::batch_matmul(bd, m, n, k, *t,
                                      {.broadcast_b = g->broadcast_b, .out_type = out});
        return nd;
    }
    if (r.output_shapes.empty()) return std::nullopt;
    const auto out_s = batch_rule(r.output_shapes[0], batch, lm);
    if (!out_s) return std::nullopt;
    // The row's pattern's factor where the calibration has one (as op_of applied it), else the
    // type's.
    const double factor =
        cal.factor_of(r.op_type, pattern_key(r)) * (o.uncounted ? uncounted_work : 1.0);
    if (o.eng == engine::vector && eng == engine::vector) {
        if (o.kind == op_kind::reduce) {
            // reduce(rows = output elements, length = input elements / rows), as op_of.
            batch_dim in{};
            for (const tensor_shape& s : r.input_shapes) {
                const auto bs = batch_rule(s, batch, lm);
                if (!bs) return std::nullopt;
                in = in + elements_of(*bs);
            }
            const batch_dim rows = elements_of(*out_s);
            const std::int64_t rows_b = rows.at(batch);
            const std::int64_t in_b = in.at(batch);
            batch_dim length{std::max<std::int64_t>(1, in_b / rows_b)};
            if (!rows.depends_on_batch() && in.depends_on_batch() && in.fixed == 0 &&
                in.per_batch % rows_b == 0) {
                length = batch_dim{in.per_batch / rows_b, 0};
            }
            node nd = nodes::reduce(rows, length, *t);
            return nd;
        }
        // A gather by index_select (op_of's gather_of_row): its indices, the second input,
        // follow the batch; its table's rows and walk stay.
        if (o.kind == op_kind::gather && r.input_shapes.size() >= 2 &&
            r.input_shapes[0].rank() >= 1) {
            const auto idx = batch_rule(r.input_shapes[1], batch, lm);
            const std::int64_t row = static_cast<std::int64_t>(o.run / size_of(o.type));
            if (idx && row >= 1) {
                node nd = nodes::gather(elements_of(*idx), row, r.input_shapes[0].dims[0], *t);
                nd.walk = o.walk;
                return nd;
            }
        }
        const vector_type_traits* traits = traits_of(r.op_type);
        // Row-parallel kinds keep their rows (a norm's, a softmax's): the output's rows for a
        // rowwise row and the first input's for a softmax, as op_of reads them, the last axis the
        // row; a row whose last axis scales with the batch falls through to elementwise.
        if ((o.kind == op_kind::rowwise || o.kind == op_kind::softmax) && !r.input_shapes.empty()) {
            const auto in_s = batch_rule(r.input_shapes[0], batch, lm);
            const batched_shape& rs = o.kind == op_kind::softmax && in_s ? *in_s : *out_s;
            if (in_s && in_s->rank >= 1 && rs.rank >= 1 &&
                !(*in_s)[in_s->rank - 1].depends_on_batch() &&
                !rs[rs.rank - 1].depends_on_batch()) {
                batched_shape lead;
                for (std::size_t i = 0; i + 1 < rs.rank; ++i) lead.push_back(rs[i]);
                const batch_dim rows = elements_of(lead);
                const batch_dim width = (*in_s)[in_s->rank - 1];
                if (o.kind == op_kind::softmax) return nodes::softmax(rows, width, *t);
                nodes::rowwise_node_options ro;
                ro.ops_per_element = o.ops_per_unit / static_cast<double>(rs[rs.rank - 1].fixed) *
                                     (o.uncounted ? uncounted_work : 1.0);
                ro.fp32_arithmetic = o.fp32_arithmetic;
                ro.walk = o.walk;
                ro.row_reduction = o.row_threads > 0;
                // The full-size inputs (a Skip norm's skip, a gate listed apart): those as large as
                // the first; gamma, beta, cos and sin are small and left to the anchor.
                const auto first = r.input_shapes[0].elements();
                ro.inputs = static_cast<int>(std::count_if(
                    r.input_shapes.begin(), r.input_shapes.end(),
                    [&](const tensor_shape& x) { return first && x.elements() == first; }));
                if (ro.inputs < 1) ro.inputs = 1;
                node nd = rs[rs.rank - 1] == width
                              ? nodes::rowwise({rows, width}, *t, ro)
                              : nodes::rowwise({rows, width}, {rows, rs[rs.rank - 1]}, *t, ro);
                if (o.out_type != *t) {
                    nd.out_same_as_in = false;
                    nd.out_type = o.out_type;
                }
                return nd;
            }
        }
        // Elementwise over the output: the node reads `inputs` x output elements (op_of reads at
        // most an output's worth of each input: the anchor absorbs the difference at B).
        elementwise_options eo;
        eo.inputs = static_cast<int>(std::max<std::size_t>(1, r.input_shapes.size()));
        eo.ops_per_element = (traits ? traits->ops_per_element : 1.0) * factor;
        eo.fp32_arithmetic = traits != nullptr && traits->fp32_inside;
        eo.inner = r.output_shapes[0].inner() > 0 ? r.output_shapes[0].inner() : 0;
        if (!r.output_types.empty() && r.output_types[0].type && *r.output_types[0].type != *t) {
            eo.out_same_as_in = false;
            eo.out_type = *r.output_types[0].type;
        }
        return nodes::elementwise(*out_s, *t, eo);
    }
    // Cube ops that are not GEMMs and AI CPU ops: op_of's generic op, per output element.
    const auto bytes = r.bytes_moved();
    const auto out_elems = r.output_shapes[0].elements();
    if (!bytes || !out_elems || *out_elems < 1) return std::nullopt;
    const double e = static_cast<double>(*out_elems);
    node nd = nodes::generic(o.eng, *out_s, *t, factor, bytes->in(units::B) / e, 0,
                             std::max<std::int64_t>(1, o.work_units));
    return nd;
}

/// A node whose model time depends on neither the batch nor the core limit: one work unit of
/// 32 bytes on `eng`, no arithmetic.
[[nodiscard]] inline node fixed_node(engine eng) {
    return nodes::generic(eng, batched_shape{1}, dtype::fp16, 0, 32, 0, 1);
}

}  // namespace detail

/// The anchored model of `rows` (one profiled step, in file order) at profiled batch `batch` on
/// chip `c`, with `cal`'s model parameters, work factors and fixed times. Evaluate it with the
/// same parameters (card_params{.graph = {.model = cal.params}}): the anchors hold for them.
/// `ops`: the op kinds the rows may have (an extension's vocabulary, node.hpp's with_rows).
[[nodiscard]] inline anchored_profile anchor_profile(
    const chip& c, std::span<const kernel_row> rows, std::int64_t batch,
    const calibration& cal = {}, const anchor_options& opt = {}, op_vocabulary ops = op_kinds) {
    PERFCAST_EXPECTS(batch >= 1, "anchor_profile", "batch", static_cast<double>(batch),
                     "the profiled batch size, >= 1");
    const graph_params gp{.model = cal.params};
    anchored_profile out;
    out.batch = batch;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const kernel_row& r = rows[i];
        const auto eng = engine_of(r.task);
        if (!eng || !r.task_duration || !(r.task_duration->in(units::us) >= min_measured_us) ||
            !is_finite(*r.task_duration)) {
            ++out.skipped;
            continue;
        }
        anchor a;
        a.row = i;
        a.name = r.name;
        a.type = r.op_type;
        a.measured = *r.task_duration;
        std::optional<node> nd;
        if (const auto o = op_of(r, cal, ops)) {
            const engine_spec& es = c.engine_of(o->eng);
            if (es.cores >= 1 && (o->useful_ops == 0 ||
                                  es.ops_per_cycle_for(perfcast::detail::rate_type(es, *o)) > 0)) {
                try {
                    nd = detail::node_of(r, *o, *eng, batch, cal, opt, ops, es.uncounted_work);
                    if (nd && o->eng != engine::cube) {
                        nd->extra_head = o->extra_head;
                        nd->extra_per_core = o->extra_per_core;
                    }
                    if (nd) {
                        a.eng = perfcast::engine_of(*nd);
                        const int bd = r.block_dim && *r.block_dim > 0
                                           ? *r.block_dim
                                           : c.engine_of(a.eng).cores;
                        a.cores = std::clamp(bd, 1, c.engine_of(a.eng).cores);
                        a.modelled = evaluate_at(c, *nd, batch_size{batch}, core_count{a.cores}, gp)
                                         .cost.latency;
                        if (!(a.modelled > duration{}) || !is_finite(a.modelled)) nd.reset();
                    }
                } catch (const error&) {
                    nd.reset();  // shapes the node factories reject: kept at measured time
                }
            }
        }
        a.mapped = nd.has_value();
        if (!nd) {
            const engine e = *eng == engine::cube && c.cube.cores < 1 ? engine::vector : *eng;
            nd = detail::fixed_node(c.engine_of(e).cores >= 1 ? e : engine::vector);
            a.eng = perfcast::engine_of(*nd);
            a.cores = 1;
            a.modelled = evaluate_at(c, *nd, batch_size{batch}, core_count{1}, gp).cost.latency;
            ++out.unmapped;
        }
        a.batch_dependent = nd->depends_on_batch();
        if (a.batch_dependent) ++out.batch_dependent;
        nd->mode = dispatch::graph;
        nd->name = fixed_name(r.name);
        out.m.nodes.push_back(*nd);
        out.measured += a.measured;
        out.anchors.push_back(std::move(a));
    }
    // Each node's model time in its place in the sequence (graph.hpp, l2_sequence.hpp), which
    // the scale does not move (it scales times, not bytes): the anchors hold where the
    // deployment model evaluates them.
    const std::vector<l2_context> contexts = l2_contexts(c, out.m.view(), batch, gp);
    for (std::size_t i = 0; i < out.m.nodes.size(); ++i) {
        anchor& a = out.anchors[i];
        a.modelled =
            evaluate_at(c, out.m.nodes[i], batch_size{batch}, core_count{a.cores}, gp, contexts[i])
                .cost.latency;
        out.m.nodes[i] = out.m.nodes[i].scaled(a.measured / a.modelled);
    }
    out.m.name = "profile (anchored at batch " + std::to_string(batch) + ")";
    return out;
}

/// Model time of the anchored model at the profiled configuration: every node at batch B on its
/// own row's cores, summed (serial device + AI CPU time; the nodes are sunk, nothing waits for
/// the host). Equals `p.measured` up to rounding: one division and one multiplication per row.
[[nodiscard]] inline duration profiled_time(const chip& c, const anchored_profile& p,
                                            const calibration& cal = {}) {
    const graph_params gp{.model = cal.params};
    const std::vector<l2_context> contexts = l2_contexts(c, p.m.view(), p.batch, gp);
    duration total{};
    for (std::size_t i = 0; i < p.m.nodes.size(); ++i) {
        total += evaluate_at(c, p.m.nodes[i], batch_size{p.batch}, core_count{p.anchors[i].cores},
                             gp, contexts[i])
                     .cost.latency;
    }
    return total;
}

}  // namespace perfcast::profile
