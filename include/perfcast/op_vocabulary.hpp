// perfcast/op_vocabulary.hpp: what the op vocabulary's rows hold and how a vocabulary is searched.
//
// The library's rows are node.hpp's `op_kinds`; an extension's vocabulary is op_kinds with rows of
// its own (node.hpp's with_rows). Readers take a vocabulary (default op_kinds): the model file by
// a row's name or keywords, profiles by its profiler op types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "chip.hpp"
#include "enum_table.hpp"
#include "op.hpp"
#include "shape.hpp"

namespace perfcast {

struct node;  // node.hpp

/// A kind's cost function: the op of node `n` at batch `batch`, where `first` is n.shapes[0] at
/// that batch. The op's engine is the row's (engine_of); its kind, work and bytes are the
/// function's.
using node_cost = op (*)(const node& n, std::int64_t batch, const shape& first);

/// A kind's shapes in a model file: how many, and what they are (for "expected ..." errors).
struct op_shapes {
    int min = 1;
    int max = 1;
    std::string_view form;
};

/// What the graph reads besides the engine.
struct op_traits {
    bool engine_from_node = false;   // the node's `eng` says (generic)
    bool integers_on_aicpu = false;  // integer values run on the AI CPU (topk, guide §8)
};

/// One op kind (a row of op_kinds, enum_table.hpp).
struct op_row {
    op_kind value;
    std::string_view name;        // in output and errors; also accepted in a model file
    name_list<2> keywords;        // model-file words (errors list them): `bmm` is a matmul
    engine eng;                   // the engine it runs on (but see traits)
    op_traits traits;             // what the graph reads besides the engine
    op_shapes shapes;             // in a model file
    name_list<8> profiler_types;  // profiler op types mapped to it (profile/ops.hpp): a name
                                  // matches in any case, a pattern with `*` as written
    node_cost cost;               // null: not a device op (transfer)
};

/// A set of op kinds: op_kinds, or op_kinds with an extension's rows (with_rows).
using op_vocabulary = std::span<const op_row>;

/// The first op_kind value an extension may use (the library's stay below).
inline constexpr op_kind first_extension_kind{128};

/// The row of vocabulary `v` that a model file's word names (a row's name or keyword), or null.
[[nodiscard]] constexpr const op_row* row_for_word(op_vocabulary v,
                                                   std::string_view word) noexcept {
    for (const op_row& r : v) {
        if (r.name == word || r.keywords.contains(word)) return &r;
    }
    return nullptr;
}

/// "matmul, bmm, ... transfer or generic": the keywords of `v`, in order.
[[nodiscard]] inline std::string keywords_of(op_vocabulary v) {
    std::size_t n = 0;
    for (const op_row& r : v) n += r.keywords.size();
    std::string out;
    std::size_t i = 0;
    for (const op_row& r : v) {
        for (std::string_view k : r.keywords) {
            if (i > 0) out += i + 1 == n ? " or " : ", ";
            out += k;
            ++i;
        }
    }
    return out;
}

/// Whether profiler op type `type` matches `pattern` of an op_row's profiler_types: a name in
/// any case (profilers write MatMul, Matmul), `X*` a prefix, `*X*` a part, as written.
[[nodiscard]] constexpr bool matches_type(std::string_view pattern,
                                          std::string_view type) noexcept {
    const bool head = pattern.starts_with('*');
    const bool tail = pattern.ends_with('*');
    if (!head && !tail) return detail::iequals(pattern, type);
    const std::string_view core =
        pattern.substr(head ? 1 : 0, pattern.size() - (head ? 1 : 0) - (tail ? 1 : 0));
    if (head && tail) return type.find(core) != std::string_view::npos;
    return head ? type.ends_with(core) : type.starts_with(core);
}

/// The first row of `v` whose profiler types match `type`, or null (profile/ops.hpp then maps by
/// engine: elementwise on the vector cores, generic elsewhere).
[[nodiscard]] constexpr const op_row* row_for_profiler_type(op_vocabulary v,
                                                            std::string_view type) noexcept {
    for (const op_row& r : v) {
        for (std::string_view p : r.profiler_types) {
            if (matches_type(p, type)) return &r;
        }
    }
    return nullptr;
}

}  // namespace perfcast
