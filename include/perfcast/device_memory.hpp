// perfcast/device_memory.hpp: whether a deployment's instances fit the card's device memory.
//
// A sweep that ranks deployments by QPS alone can rank first one that cannot run: six instances
// of a model with a 20 GB embedding table do not fit a 64 GB card, however fast they would be.
// memory_of() gives what one instance of a model holds at a batch, as a lower bound from what a
// model file says (it names no tensors, so no allocator is simulated):
//  - weights: in a node with a shape that scales with the batch, every listed input whose shape
//    does not (weights, biases, a matmul's shared B, a grouped matmul's experts, whole whatever
//    the batch routes to them), each line's its own;
//  - tables: every lookup's whole table (rows x row bytes), once per distinct table (its rows,
//    row bytes and dtype): a CTR model looks one table up from several lines (the built-in
//    scenario does, five times), and a model file cannot say which lines share one, so lookups
//    of tables of one shape are taken to read one;
//  - working: at the batch, the largest working set of one node: the listed inputs that scale
//    with the batch, each once, and its output (while it runs they are live together), at most
//    the bytes it moves; a lookup's indices and output; a copy's bytes. A node none of whose
//    shapes scales with the batch (fixed=1, most nodes anchored on a profile) counts its output
//    only: its inputs may be weights that instances share. The activations live at once are at
//    least the largest of these.
// It is a lower bound but for what a model file cannot tell apart: a tensor two lines list (a
// weight two matmuls share, an embedding a lookup and a matmul tie) is counted for each, and an
// input without B that is an activation (the output of a fixed=1 line) is counted as a weight,
// live all the time.
// The card holds, per memory_rule: each instance its own copy of weights and tables (a model
// loaded once per instance: ACL's aclmdlLoadFromFile per instance, a framework session per
// process) or one copy they share, plus each instance's working set and its fixed reserve (the
// runtime's own context and workspace: 0 by default, an assumption that keeps the figure a lower
// bound; set it from what the runtime reports, e.g. npu-smi or nvidia-smi with one instance idle).
// A deployment fits when that total is at most the chip's memory.hbm_size; the driver's own
// reservation is not subtracted (a lower bound against the whole capacity).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chip.hpp"
#include "counts.hpp"
#include "error.hpp"
#include "l2_sequence.hpp"
#include "node.hpp"
#include "units.hpp"

namespace perfcast {

/// Whether instances on one card hold a copy of the weights and tables each or share one.
enum class weight_copies : unsigned char {
    per_instance,  // each instance loads the model (the default: the plain load APIs do)
    shared,        // one copy serves every instance (a runtime that shares loaded weights)
};

inline constexpr std::array<enum_entry<weight_copies>, 2> weight_copies_names{
    {{weight_copies::per_instance, "per_instance"}, {weight_copies::shared, "shared"}}};
static_assert(covers_enum<weight_copies_names>());

[[nodiscard]] constexpr std::string_view name_of(weight_copies w) noexcept {
    return name_in(weight_copies_names, w);
}

/// Most chips one card may carry (card_params::chips): 8, twice the most of a card we know of
/// (the Atlas 300I model 3000 carries four Ascend 310s, the Atlas 300I Duo two 310Ps); a bound
/// of ours. The errors that name it say "1 to 8".
inline constexpr int max_card_chips = 8;

/// How instances use the card's memory besides their tensors.
struct memory_rule {
    weight_copies copies = weight_copies::per_instance;
    /// Device memory each instance holds besides its tensors (runtime context, workspace):
    /// 0 by default, an assumption (calibrate it from the runtime's own figure).
    data_size reserve{};
    [[nodiscard]] friend constexpr bool operator==(const memory_rule&,
                                                   const memory_rule&) = default;
};

constexpr const memory_rule& validate(const memory_rule& r) {
    PERFCAST_EXPECTS(r.reserve.in(units::B) >= 0 && r.reserve.in(units::B) < 1e18,
                     "validate(memory_rule)", "reserve (bytes)", r.reserve.in(units::B),
                     "a size in [0, 1e18) bytes");
    return r;
}

/// What one instance of a model holds at one batch (lower bounds; see the file's comment).
struct memory_need {
    batch_size batch{1};      // the batch it is for
    data_size weights{};      // inputs that outlive the inference
    data_size tables{};       // lookups' tables, each distinct one once
    data_size working{};      // the largest working set of one node at the batch
    std::size_t largest = 0;  // that node's index
    [[nodiscard]] friend constexpr bool operator==(const memory_need&,
                                                   const memory_need&) = default;

    /// What `instances` instances hold on one card under rule `r`; on a card of `chips` chips
    /// (card_params::chips), each with its own memory, what the fullest chip holds: its
    /// ceil(instances / chips) instances (spread_over_chips), shared weights once on it.
    [[nodiscard]] constexpr data_size on_card(stream_count instances, const memory_rule& r,
                                              int chips = 1) const {
        PERFCAST_EXPECTS(chips >= 1 && chips <= max_card_chips, "memory_need::on_card", "chips",
                         static_cast<double>(chips), "1 to 8 chips on the card");
        PERFCAST_EXPECTS(instances.value >= 1, "memory_need::on_card", "instances",
                         static_cast<double>(instances.value), "at least 1 instance");
        // ceil(instances / chips) without overflow near INT_MAX
        const int per_chip = instances.value / chips + (instances.value % chips > 0 ? 1 : 0);
        const double n = static_cast<double>(per_chip);
        const data_size model = weights + tables;
        const data_size each = working + r.reserve;
        return (r.copies == weight_copies::shared ? model : model * n) + each * n;
    }
};

/// memory_need of `nodes` at batch `b` on chip `c` (the chip places AI CPU ops: engine_on).
/// A node that cannot be instantiated at `b` is an error naming it and the batch.
[[nodiscard]] constexpr memory_need memory_of(const chip& c, std::span<const node> nodes,
                                              batch_size b) {
    struct table_key {
        std::int64_t rows;
        data_size bytes;
        dtype type;
        [[nodiscard]] constexpr bool operator==(const table_key&) const = default;
    };
    std::vector<table_key> seen;
    memory_need m;
    m.batch = b;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const node& n = nodes[i];
        const detail::node_traffic t = detail::traffic_of(c, n, b.value);
        data_size working = t.reads + t.writes;  // a copy's bytes
        if (n.kind == op_kind::gather) {
            // Its reads are its indices and the rows it takes from the table, as many bytes as
            // it writes: the working set is the indices and the output.
            working = t.reads;
            const table_key k{n.table_rows, t.table, n.type};
            if (std::find(seen.begin(), seen.end(), k) == seen.end()) {
                seen.push_back(k);
                m.tables += t.table;
            }
        } else if (!n.is_transfer()) {
            data_size scaled{};
            // A tile's second shape is its multiples, not a tensor; a broadcast's and a row
            // kernel's second and a convolution's third are the output, in `writes`.
            const std::size_t tensors = n.kind == op_kind::tile || n.kind == op_kind::broadcast ||
                                                (n.kind == op_kind::rowwise && n.shape_count == 2)
                                            ? 1
                                        : n.kind == op_kind::conv && n.shape_count == 3
                                            ? 2
                                            : n.shape_count;
            for (std::size_t j = 0; j < tensors; ++j) {
                // A concat of more than 8 inputs sums its inputs from the 8th on into one shape
                // (io/model_file.hpp) that may mix batch-scaled and fixed ones: not told apart,
                // left out (a lower bound).
                if (n.kind == op_kind::concat && j + 1 == node::max_shapes &&
                    n.shapes[j].depends_on_batch())
                    continue;
                const data_size bytes =
                    static_cast<double>(n.shapes[j].at(b.value, "shapes").elements("shapes")) *
                    size_of(n.type);
                if (n.shapes[j].depends_on_batch()) {
                    scaled += bytes;
                } else if (n.depends_on_batch()) {
                    m.weights += bytes;
                }
            }
            const data_size listed = scaled + t.writes;
            working = listed < working ? listed : working;
        }
        if (working > m.working) {
            m.working = working;
            m.largest = i;
        }
    }
    return m;
}

namespace detail {
/// `text(need, digits)` with as many digits (3 to 9) as it takes to read above `capacity`, or
/// "more than " + text(capacity, 9) when 9 do not: the one rule of gib_above and io::size_over.
template <class Text>
[[nodiscard]] std::string text_above(data_size need, data_size capacity, const Text& text) {
    for (int digits = 3; digits <= 9; ++digits) {
        if (!(need > capacity) || text(need, digits) != text(capacity, digits))
            return text(need, digits);
    }
    return "more than " + text(capacity, 9);
}
}  // namespace detail

/// `need` in GiB with as many significant digits (3 to 9) as it takes to read above `capacity`
/// ("64.0000003 GiB" on a 64 GiB card, not "64 GiB"), or "more than 64 GiB" when 9 do not: the
/// core headers' messages (io::size_over writes the tables' sizes).
[[nodiscard]] inline std::string gib_above(data_size need, data_size capacity) {
    return detail::text_above(need, capacity, [](data_size v, int digits) {
        return detail::significant_text(v.in(units::GiB), digits) + " GiB";
    });
}

/// Whether `instances` instances of a model needing `m` fit chip `c`'s memory under rule `r`
/// (on a card of `chips` such chips, the fullest chip's: memory_need::on_card).
[[nodiscard]] constexpr bool fits(const chip& c, const memory_need& m, stream_count instances,
                                  const memory_rule& r, int chips = 1) {
    return m.on_card(instances, r, chips) <= c.memory.hbm_size;
}

}  // namespace perfcast
