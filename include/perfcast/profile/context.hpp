// perfcast/profile/context.hpp: what a profile's order says about each row.
//
// A kernel's time depends on what ran before it, in two ways the measured rows show:
//  - L2: an input that a recent kernel wrote (or read) is still in L2 and loads at the cores'
//    rate; an input last touched long ago comes from HBM. On the 910B1 training profile the
//    optimizer's casts of 25-300 MB stream at 1.1-1.3 TB/s (their fp16 gradients were written by
//    a collective long before) while forward-pass ops of the same sizes, reading what the
//    previous kernel wrote, reach 2.5-4.3 TB/s. The size rule alone (inputs that fit in L2 are
//    in L2) cannot tell these apart.
//  - Write-back: L2 is a write-back cache. An op's outputs stay in L2, dirty, and cost HBM time
//    only when later traffic evicts them; an op whose traffic pushes earlier outputs out of L2
//    pays for writing them back. A kernel streams its reads and writes together, so the lines
//    it leaves in L2 are dirty in the share of its traffic it wrote (not its outputs as one
//    block after its inputs). On the same profile the optimizer's chains of casts and Muls,
//    each reading and writing 50-300 MB, move their reads and writes together at 1.1-1.3 TB/s:
//    in such a chain each op writes back about as much as it writes.
//    A collective (an HCCL row) writes back the dirty lines before it: its traffic, which the
//    profile does not give, passes through L2.
//  - First run: the first run of a kernel (op type, input shapes and dtypes) fetches its
//    instructions cold: on the same profile a 48-core reduction of 16 KB takes 8-9 us on its
//    first run and 3.6 us on the next.
// annotate_context() walks the rows in file order (kernel_details.csv and op_summary list the
// kernels in launch order) and fills kernel_row::context of the rows that carry a start time,
// which measured_op_of() passes to the op (op::l2_input_share, op::writeback, op::first_run)
// and cost() uses (cost.hpp: memory_time, first_run_*).
// Rows without a start time (the minimal subset of docs/profiles.md, e.g. measurements of ops
// run one at a time and converted from another tool) are not a launch sequence: they are left
// unannotated, and cost() falls back to the size rule and no first-run cost.
// Tensors are matched by byte size: the profile does not name tensors, and a consumer reads the
// producer's output under another shape (a [4096, 6400] MatMul output read as [1024, 4, 6400]).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../chip.hpp"
#include "../cost.hpp"
#include "kernel_details.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// Options of annotate_context.
struct context_options {
    /// Tensors looked back at per input: bounds the work on profiles of many tiny kernels, whose
    /// L2 window would otherwise hold millions of tensors.
    std::size_t max_lookback = 512;
};

namespace detail {
/// Bytes of one tensor, or 0 when its dtype is unknown or its size does not fit.
[[nodiscard]] inline double tensor_bytes(const tensor_shape& s, const tensor_dtype& t) {
    if (!t.type) return 0;
    const auto n = s.elements();
    if (!n || *n <= 0) return 0;
    return static_cast<double>(*n) * size_of(*t.type).in(units::B);
}

[[nodiscard]] inline bool on_ai_cores(task_type t) noexcept {
    return t == task_type::ai_core || t == task_type::ai_vector_core || t == task_type::mix_aic ||
           t == task_type::mix_aiv;
}
}  // namespace detail

/// Fills each AI core / vector core row's context from the rows before it: the share of its
/// input bytes that tensors of the same sizes, touched recently enough that the traffic since
/// plus all of the row's inputs fit in `l2 x l2_resident_share` bytes, account for (a recent
/// tensor stands for one input, not two), the bytes of earlier outputs its own traffic pushes
/// out of that window (dirty lines written back to HBM), and whether it is the first run of its
/// kernel. Rows of other tasks (AI CPU, HCCL, DSA) and rows without a start time are left as
/// they are: the traffic of the former is not in the profile, the latter are not a launch
/// sequence; an HCCL row with a start time clears the dirty lines before it (a collective's
/// traffic writes them back).
inline void annotate_context(std::vector<kernel_row>& rows, const chip& c,
                             const model_params& p = {}, const context_options& opt = {}) {
    struct touched {
        double bytes;
        double at;  // traffic count just after the tensor was touched
    };
    std::deque<touched> recent;
    // Each op's stretch of the traffic and the share of it that it wrote: a kernel streams its
    // reads and writes together, so the lines it leaves in L2 are dirty in that share (its
    // outputs are not one block after its inputs).
    struct span {
        double lo;
        double hi;
        double dirty;
    };
    std::deque<span> spans;
    std::vector<const touched*> matched;
    std::vector<double> in_bytes;   // this row's tensors' bytes (0: unknown), reused
    std::vector<double> out_bytes;
    std::set<std::string> kernels;
    double traffic = 0;
    const double capacity = p.l2_resident_share * l2_resident_size(c.memory).in(units::B);
    const auto sizes = [](const std::vector<tensor_shape>& shapes,
                          const std::vector<tensor_dtype>& types, std::vector<double>& out) {
        out.clear();
        const std::size_t n = std::min(shapes.size(), types.size());
        for (std::size_t i = 0; i < n; ++i)
            out.push_back(detail::tensor_bytes(shapes[i], types[i]));
        double sum = 0;
        for (double b : out) sum += b;
        return sum;
    };
    for (kernel_row& r : rows) {
        // A collective runs for a while on the communication engines, its traffic through L2
        // (not in the profile) evicting what is there: the dirty lines of earlier kernels are
        // written back during it, and no later kernel pays for them. What it leaves resident
        // is its own tensor, which `recent` already holds as the producer's output. (On the
        // 910B1 profile the bias Adds that read an all-reduced MatMul output run in 189-233 us,
        // the residual Adds of the same size that follow no collective in 205-228 us: neither
        // pays for the MatMul's dirty output; docs/validation.md "Collectives write back".)
        if (r.task == task_type::hccl && r.start) {
            spans.clear();
            continue;
        }
        if (!detail::on_ai_cores(r.task) || !r.start) continue;
        std::string signature = r.op_type + "|";
        for (const auto& s : r.input_shapes) signature += to_string(s);
        signature += "|";
        for (const auto& t : r.input_types) signature += t.text + ";";
        r.context.first_run = kernels.insert(std::move(signature)).second;

        while (!recent.empty() && traffic - recent.front().at > capacity) recent.pop_front();
        const double in_total = sizes(r.input_shapes, r.input_types, in_bytes);
        const double out_total = sizes(r.output_shapes, r.output_types, out_bytes);
        double in_l2 = 0;
        matched.clear();  // a recent tensor stands for one input, not two
        for (const double b : in_bytes) {
            if (b <= 0) continue;
            std::size_t looked = 0;
            for (auto it = recent.rbegin(); it != recent.rend() && looked < opt.max_lookback;
                 ++it, ++looked) {
                // Still resident when the traffic since it was touched and all of this op's
                // inputs (read together) fit in the window.
                if (traffic - it->at + in_total > capacity) break;
                if (it->bytes == b &&
                    std::find(matched.begin(), matched.end(), &*it) == matched.end()) {
                    in_l2 += b;
                    matched.push_back(&*it);
                    break;
                }
            }
        }
        r.context.l2_input_share =
            in_total > 0 ? std::optional<double>{in_l2 / in_total} : std::nullopt;
        // This op moves `own` bytes through L2: what falls out of the window meanwhile is the
        // traffic in (traffic - capacity, traffic + own - capacity]; its dirty part (outputs of
        // earlier ops) is written back to HBM. `own` is the model's traffic of the op where the
        // row maps to one (a strided view reads a third of its input tensor; a reduction writes
        // a scalar), else its tensors' bytes. Tensors enter the window at their full size: a
        // later op may read any part of them.
        double own = in_total + out_total;
        if (const auto o = op_of(r)) own = o->bytes().in(units::B);
        const double lo = traffic - capacity;
        const double hi = lo + own;
        while (!spans.empty() && spans.front().hi <= lo) spans.pop_front();
        double evicted_dirty = 0;
        for (const span& t : spans) {  // oldest first: stop past the evicted range
            if (t.lo >= hi) break;
            const double from = std::max(t.lo, lo);
            const double to = std::min(t.hi, hi);
            if (to > from) evicted_dirty += (to - from) * t.dirty;
        }
        r.context.writeback = data_size{evicted_dirty, units::B};
        if (in_total + out_total > 0)
            spans.push_back(
                {traffic, traffic + in_total + out_total, out_total / (in_total + out_total)});
        const auto touch = [&](const std::vector<double>& bytes) {
            for (const double b : bytes) {
                if (b <= 0) continue;
                traffic += b;
                recent.push_back({b, traffic});
            }
        };
        touch(in_bytes);
        touch(out_bytes);
    }
}

}  // namespace perfcast::profile
