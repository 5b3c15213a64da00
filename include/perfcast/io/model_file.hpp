// perfcast/io/model_file.hpp: models from a small text format (runtime only).
//
//   # the built-in scenario's attention, as text
//   name ctr_ranking
//   transfer  B,26                int64  dir=in name=in_item_ids
//   tile      1,300,32;B*8,1,1    fp32
//   bmm       B*8,1,32;B*8,32,300 hf32   out=fp32
//   gather    B*4;20000000,32     fp16   host=1
//
// One op a line: `kind shapes dtype [key=value ...]`; `#` starts a comment; blank lines are
// skipped; `name NAME` names the model. Shapes are separated by ';', dimensions by ','; a
// dimension is a sum of terms, each an integer, `B` (the batch), `B*n` or `n*B` (`B*8+1`).
// docs/model-file.md is the reference: every kind, its shapes and keys.
//
// Errors are `model_file_error` (a perfcast::error) carrying the file, line and column:
//   perfcast::model_file: m.model:3:7: shapes = "B*x,4", expected a dimension: an integer, B,
//   B*n or n*B, or a sum of those
//
// Past 500 lines on purpose: one parser: parse_node (about 290 lines) holds the per-kind rules of a
// line, which share the line's tokens and keys.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../graph.hpp"
#include "../nodes.hpp"
#include "../op.hpp"
#include "../op_vocabulary.hpp"
#include "../runtime.hpp"
#include "line_source.hpp"

namespace perfcast::io {

/// A model file error at a line and column (both from 1; column 0: the whole file).
class model_file_error : public ::perfcast::error {
public:
    model_file_error(const std::string& what, std::string file, int line, int column)
        : ::perfcast::error(what), file_(std::move(file)), line_(line), column_(column) {}
    [[nodiscard]] const std::string& file() const noexcept { return file_; }
    [[nodiscard]] int line() const noexcept { return line_; }
    [[nodiscard]] int column() const noexcept { return column_; }

private:
    std::string file_;
    int line_;
    int column_;
};

/// Longest model name (`name NAME`) accepted, in bytes.
inline constexpr std::size_t max_model_name = 100;

/// The kinds a model file knows, as written in files: the keywords of `ops` (node.hpp's
/// op_kinds unless an extension adds its own rows), "matmul, bmm, ... transfer or generic".
[[nodiscard]] inline std::string model_file_kinds(op_vocabulary ops = op_kinds) {
    return keywords_of(ops) + " (or a `name` or `runtime` line)";
}

namespace model_file_detail {

struct token {
    std::string_view text;
    int column = 0;  // 1-based
};

class line_parser {
public:
    line_parser(std::string_view file, int line) : file_(file), line_(line) {}

    [[noreturn]] void fail(int column, std::string_view field, std::string_view value,
                           std::string_view expected) const {
        std::string where = std::string(file_) + ":" + std::to_string(line_) + ":" +
                            std::to_string(column) + ": " + std::string(field);
        throw model_file_error(
            ::perfcast::detail::message("model_file", where,
                                        "\"" + parse_error::printable(value) + "\"", expected),
            std::string(file_), line_, column);
    }

    [[nodiscard]] std::int64_t integer(const token& t, std::string_view field,
                                       std::string_view expected) const {
        std::int64_t v = 0;
        const char* b = t.text.data();
        const char* e = b + t.text.size();
        auto [p, ec] = std::from_chars(b, e, v);
        if (ec != std::errc{} || p != e || t.text.empty()) fail(t.column, field, t.text, expected);
        return v;
    }

    [[nodiscard]] double number(const token& t, std::string_view field,
                                std::string_view expected) const {
        double v = 0;
        const char* b = t.text.data();
        const char* e = b + t.text.size();
        auto [p, ec] = std::from_chars(b, e, v);
        if (ec != std::errc{} || p != e || t.text.empty() || !(v == v) ||
            v > std::numeric_limits<double>::max() || v < -std::numeric_limits<double>::max()) {
            fail(t.column, field, t.text, expected);
        }
        return v;
    }

    /// `t` as an integer in [lo, hi], else a failure at its column: ranges are checked where the
    /// key is read, so that the error names its file, line and column.
    [[nodiscard]] std::int64_t integer_in(const token& t, std::string_view field, std::int64_t lo,
                                          std::int64_t hi, std::string_view expected) const {
        const std::int64_t v = integer(t, field, expected);
        if (v < lo || v > hi) fail(t.column, field, t.text, expected);
        return v;
    }

    /// `t` as a number that `ok` accepts, else a failure at its column.
    template <class Ok>
    [[nodiscard]] double number_if(const token& t, std::string_view field,
                                   std::string_view expected, Ok ok) const {
        const double v = number(t, field, expected);
        if (!ok(v)) fail(t.column, field, t.text, expected);
        return v;
    }

    [[nodiscard]] bool flag(const token& t, std::string_view field) const {
        if (t.text == "1" || t.text == "true" || t.text == "yes") return true;
        if (t.text == "0" || t.text == "false" || t.text == "no") return false;
        fail(t.column, field, t.text, "0 or 1");
    }

    [[nodiscard]] dtype type(const token& t, std::string_view field) const {
        if (auto d = try_parse_dtype(t.text)) return *d;
        fail(t.column, field, t.text, "a dtype: " + choices_of(dtypes));
    }

    /// One dimension: terms joined by '+', each n, B, B*n or n*B.
    [[nodiscard]] batch_dim dim(const token& t) const {
        constexpr std::string_view expected =
            "a dimension: an integer, B, B*n or n*B, or a sum of those (B*8+1), with a value >= 1";
        if (t.text.empty()) fail(t.column, "shapes", t.text, expected);
        batch_dim d{0, 0};
        std::size_t pos = 0;
        while (pos <= t.text.size()) {
            const std::size_t plus = t.text.find('+', pos);
            const std::string_view term =
                t.text.substr(pos, plus == std::string_view::npos ? std::string_view::npos
                                                                  : plus - pos);
            const token tt{term, t.column + static_cast<int>(pos)};
            if (term.empty()) fail(tt.column, "shapes", t.text, expected);
            const std::size_t star = term.find('*');
            if (star == std::string_view::npos) {
                if (term == "B") {
                    d.per_batch += 1;
                } else {
                    d.fixed += positive(tt, expected);
                }
            } else {
                const token l{term.substr(0, star), tt.column};
                const token r{term.substr(star + 1), tt.column + static_cast<int>(star) + 1};
                if (l.text == "B" && r.text != "B") {
                    d.per_batch += positive(r, expected);
                } else if (r.text == "B" && l.text != "B") {
                    d.per_batch += positive(l, expected);
                } else {
                    fail(tt.column, "shapes", t.text, expected);
                }
            }
            if (plus == std::string_view::npos) break;
            pos = plus + 1;
        }
        if (!d.valid()) fail(t.column, "shapes", t.text, expected);
        return d;
    }

    /// Shapes: ';' between shapes, ',' between dimensions; at most `max_shapes` of them.
    [[nodiscard]] std::vector<batched_shape> shapes(const token& t,
                                                    std::size_t max_shapes = node::max_shapes) const {
        std::vector<batched_shape> out;
        std::size_t pos = 0;
        while (true) {
            const std::size_t semi = t.text.find(';', pos);
            const std::string_view one =
                t.text.substr(pos, semi == std::string_view::npos ? std::string_view::npos
                                                                  : semi - pos);
            const int col = t.column + static_cast<int>(pos);
            if (one.empty()) {
                fail(col, "shapes", t.text,
                     "shapes separated by ';', each of dimensions separated by ','");
            }
            batched_shape s;
            std::size_t dpos = 0;
            while (true) {
                const std::size_t comma = one.find(',', dpos);
                const token dt{one.substr(dpos, comma == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : comma - dpos),
                               col + static_cast<int>(dpos)};
                if (s.rank == shape::max_rank) {
                    fail(dt.column, "shapes", one, "at most 8 dimensions per shape");
                }
                s.push_back(dim(dt));
                if (comma == std::string_view::npos) break;
                dpos = comma + 1;
            }
            if (out.size() == max_shapes) {
                fail(col, "shapes", t.text, "at most " + std::to_string(max_shapes) + " shapes");
            }
            out.push_back(s);
            if (semi == std::string_view::npos) break;
            pos = semi + 1;
        }
        return out;
    }

private:
    [[nodiscard]] std::int64_t positive(const token& t, std::string_view expected) const {
        std::int64_t v = 0;
        const char* b = t.text.data();
        const char* e = b + t.text.size();
        auto [p, ec] = std::from_chars(b, e, v);
        if (ec != std::errc{} || p != e || t.text.empty() || v < 1) {
            fail(t.column, "shapes", t.text, expected);
        }
        return v;
    }

    std::string_view file_;
    int line_;
};

/// Splits a line (comment removed) into whitespace-separated tokens with their columns.
[[nodiscard]] inline std::vector<token> tokens_of(std::string_view line) {
    std::vector<token> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        if (i >= line.size()) break;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
        out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
    }
    return out;
}

// The ranges of the numeric keys, checked as they are read (the factories check them again).
inline constexpr std::int64_t max_tensors = std::numeric_limits<int>::max();  // inputs=, outputs=
inline constexpr std::string_view tensors_expected = "an integer in [1, 2147483647]";
inline constexpr std::string_view ops_expected = "operations per element in (0, 1e9)";
static_assert(max_ops_per_element == 1e9, "ops_expected states the bound");
[[nodiscard]] constexpr bool ops_in_range(double v) noexcept {
    return v > 0 && v < max_ops_per_element;
}
/// generic's per-element figures: [0, 1e15), nodes::generic's bound.
[[nodiscard]] constexpr bool per_element_in_range(double v) noexcept { return v >= 0 && v < 1e15; }
inline constexpr std::int64_t max_int64 = std::numeric_limits<std::int64_t>::max();

struct key_value {
    std::string_view key;
    token value;
    int column = 0;
    bool used = false;
};

/// The node of one op line: its kind is the row of `ops` its first word names (op_vocabulary.hpp).
/// `require_batch`: an op must have B in a shape or say fixed=1 (a model's lines; not `perfcast
/// op --line`, which names one op at one batch).
[[nodiscard]] inline node parse_node(const line_parser& lp, const std::vector<token>& toks,
                                     op_vocabulary ops = op_kinds, bool require_batch = true) {
    const token& kind_t = toks[0];
    const std::string_view kind = kind_t.text;
    const op_row* row = row_for_word(ops, kind);
    if (row == nullptr) lp.fail(kind_t.column, "op", kind, model_file_kinds(ops));
    if (toks.size() < 2) {
        lp.fail(kind_t.column + static_cast<int>(kind.size()), "shapes", "",
                "shapes after the op kind (`" + std::string(kind) + " SHAPES DTYPE [key=value]`)");
    }
    const token& shapes_t = toks[1];
    // At most a node's 8 shapes, or the row's maximum where it takes more (concat takes up to
    // 4096 inputs, a bound that keeps a line readable).
    const auto row_max = static_cast<std::size_t>(row->shapes.max);
    const std::vector<batched_shape> shapes =
        lp.shapes(shapes_t, row_max > node::max_shapes ? row_max : node::max_shapes);
    if (toks.size() < 3) {
        lp.fail(shapes_t.column + static_cast<int>(shapes_t.text.size()), "dtype", "",
                "a dtype after the shapes (fp16, fp32, int64, ...)");
    }
    const dtype t = lp.type(toks[2], "dtype");

    std::vector<key_value> kvs;
    for (std::size_t i = 3; i < toks.size(); ++i) {
        const std::size_t eq = toks[i].text.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == toks[i].text.size()) {
            lp.fail(toks[i].column, "option", toks[i].text, "key=value");
        }
        const std::string_view key = toks[i].text.substr(0, eq);
        for (const key_value& kv : kvs) {
            if (kv.key == key) lp.fail(toks[i].column, "option", key, "each key at most once");
        }
        kvs.push_back({key, {toks[i].text.substr(eq + 1), toks[i].column + static_cast<int>(eq) + 1},
                       toks[i].column, false});
    }
    auto find = [&](std::string_view key) -> key_value* {
        for (key_value& kv : kvs) {
            if (kv.key == key) {
                kv.used = true;
                return &kv;
            }
        }
        return nullptr;
    };
    auto rank_at_least = [&](const batched_shape& s, std::size_t r, std::string_view form) {
        if (s.rank < r) lp.fail(shapes_t.column, "shapes", shapes_t.text, form);
    };

    // Common keys read up front (they are the same for every kind).
    const key_value* name_kv = find("name");
    const key_value* host_kv = find("host");
    const key_value* dynamic_kv = find("dynamic");
    const key_value* host_us_kv = find("host_us");
    const key_value* aicpu_kv = find("aicpu");
    const key_value* fixed_kv = find("fixed");
    const bool fixed = fixed_kv != nullptr && lp.flag(fixed_kv->value, "fixed");

    node n;
    try {
        // The row's shape count; then the keys and checks of the kinds that have their own.
        if (shapes.size() < static_cast<std::size_t>(row->shapes.min) || shapes.size() > row_max) {
            lp.fail(shapes_t.column, "shapes", shapes_t.text,
                    std::string(row->shapes.form) + " for " + std::string(kind));
        }
        const op_kind which = row->value;
        if (which == op_kind::matmul || which == op_kind::batch_matmul) {
            // bmm and matmul are one kind: the batch is the product of A's leading dimensions.
            rank_at_least(shapes[0], 2, "A with at least 2 dimensions [..., M, K]");
            rank_at_least(shapes[1], 2, "B with at least 2 dimensions [..., K, N]");
            matmul_options o;
            o.out_type = t;
            if (const auto* kv = find("broadcast_b")) o.broadcast_b = lp.flag(kv->value, "broadcast_b");
            if (const auto* kv = find("out")) o.out_type = lp.type(kv->value, "out");
            const batched_shape& a = shapes[0];
            const batched_shape& b = shapes[1];
            if (!(a[a.rank - 1] == b[b.rank - 2])) {
                lp.fail(shapes_t.column, "shapes", shapes_t.text,
                        "B's K (its second-last dimension) equal to A's K (its last dimension)");
            }
            n = nodes::matmul_shapes(a, b, t, o);
        } else if (which == op_kind::elementwise) {
            elementwise_options o;
            if (const auto* kv = find("inputs")) {
                o.inputs = static_cast<int>(
                    lp.integer_in(kv->value, "inputs", 1, max_tensors, tensors_expected));
            }
            if (const auto* kv = find("outputs")) {
                o.outputs = static_cast<int>(
                    lp.integer_in(kv->value, "outputs", 1, max_tensors, tensors_expected));
            }
            if (const auto* kv = find("ops")) {
                o.ops_per_element = lp.number_if(kv->value, "ops", ops_expected, ops_in_range);
            }
            if (const auto* kv = find("inner")) {
                o.inner = lp.integer_in(kv->value, "inner", 0, max_int64, "an integer >= 0");
            }
            if (const auto* kv = find("fp32")) o.fp32_arithmetic = lp.flag(kv->value, "fp32");
            if (const auto* kv = find("out")) {
                o.out_type = lp.type(kv->value, "out");
                o.out_same_as_in = o.out_type == t;
            }
            n = shapes.size() == 2 ? nodes::elementwise_broadcast(shapes[0], shapes[1], t, o)
                                   : nodes::elementwise(shapes[0], t, o);
        } else if (which == op_kind::gather) {
            if (shapes[1].rank != 2 || shapes[1].depends_on_batch()) {
                lp.fail(shapes_t.column, "shapes", shapes_t.text,
                        "a table shape ROWS,ROW_ELEMENTS without B after the indices");
            }
            gather_options o;
            if (const auto* kv = find("hot")) {
                o.hot_fraction = lp.number_if(kv->value, "hot", "a share in [0, 1]",
                                              [](double v) { return v >= 0 && v <= 1; });
            }
            if (const auto* kv = find("index")) o.index_type = lp.type(kv->value, "index");
            batch_dim indices = shapes[0][0];
            if (shapes[0].rank != 1) {
                lp.fail(shapes_t.column, "shapes", shapes_t.text,
                        "the indices as one dimension (B*26, not B,26)");
            }
            n = nodes::gather(indices, shapes[1][1].fixed, shapes[1][0].fixed, t, o);
            if (const auto* kv = find("walk")) {
                // PyTorch's index_select kernels before 2.7 (element_walk::selected).
                const auto w = parse_in(element_walk_names, kv->value.text);
                if (!w || (*w != element_walk::vector && *w != element_walk::selected))
                    lp.fail(kv->value.column, "walk", kv->value.text, "vector or index_select");
                n.walk = *w;
            }
        } else if (which == op_kind::topk) {
            const auto* kv = find("k");
            if (kv == nullptr) {
                lp.fail(toks.back().column, "k", "", "k=N: how many elements the TopK keeps");
            }
            const std::int64_t k = lp.integer_in(kv->value, "k", 1, max_int64, "an integer >= 1");
            const batched_shape& s = shapes[0];
            batch_dim rows{1};
            if (s.rank == 2) rows = s[0];
            if (s.rank > 2 || s.rank == 0) {
                lp.fail(shapes_t.column, "shapes", shapes_t.text, "ROWS,LENGTH or LENGTH");
            }
            const bool fixed_length = !s.inner().depends_on_batch();
            if (fixed_length && k > s.inner().fixed) {
                lp.fail(kv->value.column, "k", kv->value.text,
                        "k <= the length (" + std::to_string(s.inner().fixed) + ")");
            }
            // valid=0 is the whole length, as leaving it out (nodes::topk).
            std::int64_t valid = 0;
            if (const auto* v = find("valid")) {
                std::string expected = "a valid length from k (";
                expected += std::to_string(k);
                expected += ") to the length";
                if (fixed_length) {
                    expected += " (";
                    expected += std::to_string(s.inner().fixed);
                    expected += ')';
                }
                expected += ", or 0: the whole length";
                valid = lp.integer(v->value, "valid", expected);
                if (valid < 0 || (valid != 0 && valid < k) ||
                    (fixed_length && valid > s.inner().fixed))
                    lp.fail(v->value.column, "valid", v->value.text, expected);
            }
            n = nodes::topk(rows, s.inner(), k, t, valid);
        } else if (which == op_kind::cast) {
            const auto* kv = find("to");
            if (kv == nullptr) lp.fail(toks.back().column, "to", "", "to=DTYPE: the target dtype");
            n = nodes::cast(shapes[0], t, lp.type(kv->value, "to"));
        } else if (which == op_kind::reduce) {
            const batched_shape& s = shapes[0];
            if (s.rank != 2 && s.rank != 1) {
                lp.fail(shapes_t.column, "shapes", shapes_t.text, "ROWS,LENGTH or LENGTH");
            }
            n = nodes::reduce(s.rank == 2 ? s[0] : batch_dim{1}, s.inner(), t);
        } else if (which == op_kind::tile) {
            if (shapes[0].rank != shapes[1].rank) {
                lp.fail(shapes_t.column, "shapes", shapes_t.text,
                        "MULTIPLES with one entry per input dimension");
            }
            n = nodes::tile(shapes[0], shapes[1], t);
        } else if (which == op_kind::concat) {
            std::int64_t inner = 0;
            if (const auto* kv = find("inner")) {
                inner = lp.integer_in(kv->value, "inner", 0, max_int64, "an integer >= 0");
            }
            n = nodes::concat({shapes[0]}, inner, t);
            // A concat costs its total elements (and the first input's run): past a node's 8
            // shapes, inputs 8.. are summed into one shape of their total elements. That sum is
            // a x B + c only when each of them has at most one dimension with B.
            for (std::size_t i = 1; i < shapes.size() && i + 1 < node::max_shapes; ++i) {
                n.shapes[n.shape_count++] = shapes[i];
            }
            if (shapes.size() >= node::max_shapes) {
                batch_dim total{0, 0};
                for (std::size_t i = node::max_shapes - 1; i < shapes.size(); ++i) {
                    const batched_shape& x = shapes[i];
                    batch_dim elements{0, 1};
                    for (std::size_t d = 0; d < x.rank; ++d) {
                        const batch_dim& v = x[d];
                        if (v.depends_on_batch() && elements.depends_on_batch()) {
                            lp.fail(shapes_t.column, "shapes", shapes_t.text,
                                    "concat inputs 8 and later with at most one dimension with "
                                    "B each (input " + std::to_string(i + 1) + " has more)");
                        }
                        elements = v.depends_on_batch()
                                       ? batch_dim{checked_product(v.per_batch, elements.fixed,
                                                                   "model_file", "concat"),
                                                   checked_product(v.fixed, elements.fixed,
                                                                   "model_file", "concat")}
                                       : batch_dim{checked_product(elements.per_batch, v.fixed,
                                                                   "model_file", "concat"),
                                                   checked_product(elements.fixed, v.fixed,
                                                                   "model_file", "concat")};
                    }
                    constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
                    if (total.per_batch > big || elements.per_batch > big || total.fixed > big ||
                        elements.fixed > big) {
                        lp.fail(shapes_t.column, "shapes", shapes_t.text,
                                "concat inputs whose elements together fit in 62 bits");
                    }
                    total = total + elements;
                }
                batched_shape rest;
                rest.push_back(total, "shapes");
                n.shapes[n.shape_count++] = rest;
            }
        } else if (which == op_kind::broadcast) {
            n = nodes::broadcast(shapes[0], shapes[1], t);
        } else if (which == op_kind::transpose) {
            bool moves = true;
            if (const auto* kv = find("inner_moves")) moves = lp.flag(kv->value, "inner_moves");
            n = nodes::transpose(shapes[0], t, moves);
        } else if (which == op_kind::transfer) {
            transfer_dir d = transfer_dir::to_device;
            if (const auto* kv = find("dir")) {
                const auto named = parse_in(transfer_dir_names, kv->value.text);
                if (!named) {
                    lp.fail(kv->value.column, "dir", kv->value.text,
                            "in (host to device) or out (device to host)");
                }
                d = *named;
            }
            n = nodes::transfer(shapes[0], t, d);
        } else if (which == op_kind::generic) {
            engine e = engine::vector;
            if (const auto* kv = find("engine")) {
                const auto named = parse_in(engine_names, kv->value.text);
                if (!named) {
                    lp.fail(kv->value.column, "engine", kv->value.text, choices_of(engine_names));
                }
                e = *named;
            }
            double flops = 0, in = 0, out = 0;
            std::int64_t units = 0;
            if (const auto* kv = find("flops")) {
                flops = lp.number_if(kv->value, "flops", "flops per element in [0, 1e15)",
                                     per_element_in_range);
            }
            if (const auto* kv = find("in")) {
                in = lp.number_if(kv->value, "in", "bytes read per element in [0, 1e15)",
                                  per_element_in_range);
            }
            if (const auto* kv = find("out")) {
                out = lp.number_if(kv->value, "out", "bytes written per element in [0, 1e15)",
                                   per_element_in_range);
            }
            if (const auto* kv = find("units")) {
                units = lp.integer_in(kv->value, "units", 1, max_int64, "an integer >= 1");
            }
            n = nodes::generic(e, shapes[0], t, flops, in, out, units);
        } else if (which == op_kind::attention) {
            rank_at_least(shapes[0], 4, "Q B,Nq,Sq,D and K B,Nkv,Skv,D");
            rank_at_least(shapes[1], 4, "Q B,Nq,Sq,D and K B,Nkv,Skv,D");
            n = nodes::of_row(*row, shapes, t);
            if (const auto* kv = find("causal")) n.causal = lp.flag(kv->value, "causal");
            if (const auto* kv = find("backward")) n.backward = lp.flag(kv->value, "backward");
            if (const auto* kv = find("kernel")) {
                const auto named = parse_in(attention_kernel_names, kv->value.text);
                if (!named) {
                    lp.fail(kv->value.column, "kernel", kv->value.text,
                            choices_of(attention_kernel_names));
                }
                n.attn_kernel = *named;
            }
            if (const auto* kv = find("kv_chunk")) {
                constexpr std::string_view expected = "a key count >= 1 (kernel=flashinfer)";
                n.kv_chunk_min = lp.integer(kv->value, "kv_chunk", expected);
                if (n.kv_chunk_min < 1 || n.attn_kernel != attention_kernel::flashinfer)
                    lp.fail(kv->value.column, "kv_chunk", kv->value.text, expected);
            }
            (void)instantiate(n, 1);  // GQA groups and K's batch and head dim, checked here
        } else if (which == op_kind::rowwise) {
            n = nodes::of_row(*row, shapes, t);
            if (const auto* kv = find("ops")) {
                n.ops_per_element = lp.number_if(kv->value, "ops", ops_expected, ops_in_range);
            }
            if (const auto* kv = find("inputs")) {
                n.inputs = static_cast<int>(
                    lp.integer_in(kv->value, "inputs", 1, max_tensors, tensors_expected));
            }
            if (const auto* kv = find("fp32")) n.fp32_arithmetic = lp.flag(kv->value, "fp32");
            if (const auto* kv = find("reduce")) n.row_reduction = lp.flag(kv->value, "reduce");
            if (const auto* kv = find("walk")) {
                const auto w = parse_in(element_walk_names, kv->value.text);
                if (!w || *w == element_walk::selected)
                    lp.fail(kv->value.column, "walk", kv->value.text,
                            "vector, indexed or transposed");
                n.walk = *w;
            }
        } else if (which == op_kind::conv) {
            n = nodes::of_row(*row, shapes, t);
            // An integer convolution writing float (an ONNX QDQ Conv without a QuantizeLinear).
            if (const auto* kv = find("out")) n.out_type = lp.type(kv->value, "out");
        } else {  // a kind without keys of its own: its shapes and dtype (an extension's)
            n = nodes::of_row(*row, shapes, t);
        }
        if (aicpu_kv != nullptr && lp.flag(aicpu_kv->value, "aicpu")) n = n.on_aicpu();
    } catch (const model_file_error&) {
        throw;
    } catch (const ::perfcast::error& e) {
        // A factory rejected a value: keep its message, add the location.
        lp.fail(shapes_t.column, "op", kind, std::string("valid arguments (") + e.what() + ")");
    }

    for (const key_value& kv : kvs) {
        if (!kv.used) {
            lp.fail(kv.column, "option", kv.key,
                    "a key " + std::string(kind) + " takes (see docs/model-file.md)");
        }
    }
    if (require_batch && !fixed && !n.depends_on_batch()) {
        lp.fail(shapes_t.column, "shapes", shapes_t.text,
                "a dimension with B (the batch), or fixed=1 for an op whose size does not "
                "depend on the batch");
    }
    if (name_kv != nullptr) {
        if (name_kv->value.text.size() > 31) {
            lp.fail(name_kv->value.column, "name", name_kv->value.text, "at most 31 characters");
        }
        n = n.named(name_kv->value.text);
    }
    const bool host = host_kv != nullptr && lp.flag(host_kv->value, "host");
    if (host_us_kv != nullptr) {  // a host time implies host dispatch
        const double us = lp.number(host_us_kv->value, "host_us", "a host time in [0, 1e9) us");
        // 1e9 us (about 17 minutes): the bound the params file applies to every time.
        if (!(us >= 0 && us < 1e9)) {
            lp.fail(host_us_kv->value.column, "host_us", host_us_kv->value.text,
                    "a host time in [0, 1e9) us");
        }
        n = n.host(duration{us, units::us});
    } else if (host) {
        n = n.host();
    }
    if (dynamic_kv != nullptr && lp.flag(dynamic_kv->value, "dynamic")) n = n.dynamic();
    return n;
}

/// `runtime [PRESET] [key=value ...]`: the task's runtime path (runtime.hpp), once per file.
/// Each setting is checked here, against a scratch path, so a bad one names its line. Returns
/// the line's first copy setting (runtime.hpp is_copy_setting), if any: the caller refuses it
/// on a model without transfers, which it knows only after the last line.
[[nodiscard]] inline std::optional<token> parse_runtime(const line_parser& lp,
                                                        const std::vector<token>& toks,
                                                        std::string_view source, int line_no,
                                                        model& m) {
    if (m.runtime) lp.fail(toks[0].column, "runtime", "runtime", "one runtime line per file");
    runtime_spec spec;
    std::size_t i = 1;
    if (i < toks.size() && toks[i].text.find('=') == std::string_view::npos) {
        if (!parse_in(runtime_preset_names, toks[i].text)) {
            lp.fail(toks[i].column, "runtime preset", toks[i].text,
                    choices_of(runtime_preset_names) + ", or key=value settings");
        }
        spec.preset = std::string(toks[i].text);
        ++i;
    }
    runtime_path scratch;
    std::optional<token> copy;
    for (; i < toks.size(); ++i) {
        const std::string_view t = toks[i].text;
        const std::size_t eq = t.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == t.size()) {
            lp.fail(toks[i].column, "runtime setting", t, "key=value (" + runtime_key_names() + ")");
        }
        const std::string_view key = t.substr(0, eq);
        const std::string_view value = t.substr(eq + 1);
        if (sets_key(spec.settings, key))
            lp.fail(toks[i].column, "runtime setting", t, "each key at most once per line");
        try {
            apply_runtime_setting(scratch, key, value);
        } catch (const ::perfcast::error& e) {
            lp.fail(toks[i].column, "runtime setting", t, std::string("a valid setting (") +
                                                              e.what() + ")");
        }
        spec.settings.push_back({std::string(key), std::string(value),
                                 std::string(source) + ":" + std::to_string(line_no) + ":" +
                                     std::to_string(toks[i].column)});
        if (!copy && is_copy_setting(key)) copy = toks[i];
    }
    m.runtime = std::move(spec);
    return copy;
}

/// The checks after the last line: at least one op; the name defaults to the file's stem.
[[nodiscard]] inline model finish_model(model m, std::string_view source) {
    if (m.nodes.empty()) {
        throw model_file_error(::perfcast::detail::message("model_file",
                                                           std::string(source) + ": op lines",
                                                           "0", "at least one op line"),
                               std::string(source), 0, 0);
    }
    if (m.name.empty()) {
        // The file's stem.
        std::string_view s = source;
        if (const auto slash = s.find_last_of("/\\"); slash != std::string_view::npos) {
            s = s.substr(slash + 1);
        }
        if (const auto dot = s.rfind('.'); dot != std::string_view::npos && dot > 0) {
            s = s.substr(0, dot);
        }
        m.name = std::string(s);
    }
    return m;
}

/// Reads a model line by line from `src` (bounded lines; LF, CRLF or CR; a BOM dropped).
[[nodiscard]] inline model parse_lines(detail::line_source& src, std::string_view source,
                                       op_vocabulary ops) {
    model m;
    int copy_line = 0;  // the runtime line's first copy setting, if any: its line and column
    int copy_column = 0;
    std::string copy_text;
    std::string_view line;
    while (src.next(line)) {
        const int line_no = src.number() > static_cast<std::size_t>(std::numeric_limits<int>::max())
                                ? std::numeric_limits<int>::max()
                                : static_cast<int>(src.number());
        if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
            line = line.substr(0, hash);
        }
        const std::vector<token> toks = tokens_of(line);
        const line_parser lp(source, line_no);
        if (!toks.empty()) {
            if (toks[0].text == "name") {
                if (toks.size() != 2) {
                    lp.fail(toks[0].column, "name", line, "`name MODEL_NAME` (one word)");
                }
                // Names are printed in every table and plot title: a readable length.
                if (toks[1].text.size() > max_model_name) {
                    lp.fail(toks[1].column, "name", toks[1].text,
                            "a model name of at most 100 bytes");
                }
                if (!m.name.empty()) {
                    lp.fail(toks[0].column, "name", "name",
                            "one name line per file (the model is named '" + m.name + "')");
                }
                m.name = std::string(toks[1].text);
            } else if (toks[0].text == "runtime") {
                if (const auto copy = parse_runtime(lp, toks, source, line_no, m)) {
                    copy_line = line_no;
                    copy_column = copy->column;
                    copy_text = std::string(copy->text);
                }
            } else {
                m.nodes.push_back(parse_node(lp, toks, ops));
                m.nodes.back().line = node::source_line{line_no};
            }
        }
    }
    // A copy setting on the runtime line of a model that copies nothing contradicts it (as a
    // deployments row's options would): said at the setting, whatever reads the model.
    if (copy_line > 0 && std::none_of(m.nodes.begin(), m.nodes.end(),
                                      [](const node& n) { return n.is_transfer(); })) {
        line_parser(source, copy_line)
            .fail(copy_column, "runtime setting", copy_text,
                  "no copy setting in a model that declares no input or output transfer to copy "
                  "(declare them with transfer lines, or leave the setting out)");
    }
    return finish_model(std::move(m), source);
}

}  // namespace model_file_detail

namespace model_file_detail {
/// The reader's own errors (a line too long, a directory, a read error) as model_file_error.
template <class F>
[[nodiscard]] model reading(std::string_view source, F&& read) {
    try {
        return std::forward<F>(read)();
    } catch (const parse_error& e) {
        const auto small = [](std::size_t v) {
            return v > 1000000000 ? 1000000000 : static_cast<int>(v);
        };
        throw model_file_error(e.what(), std::string(source), small(e.line()), small(e.column()));
    }
}
}  // namespace model_file_detail

/// Reads a model from `text`; `source` names it in error messages. `ops`: the op kinds it may
/// use (an extension's vocabulary, node.hpp's with_rows).
[[nodiscard]] inline model parse_model(std::string_view text, std::string_view source = "<text>",
                                       op_vocabulary ops = op_kinds) {
    return model_file_detail::reading(source, [&] {
        detail::line_source src(text, std::string(source), "model_file", max_line_bytes);
        return model_file_detail::parse_lines(src, source, ops);
    });
}

/// Reads the model file at `path` (at most max_model_file_bytes; see line_source.hpp).
[[nodiscard]] inline model read_model_file(const std::string& path, op_vocabulary ops = op_kinds) {
    return model_file_detail::reading(path, [&] {
        std::ifstream in = open_input_file(path, "model_file", max_model_file_bytes);
        detail::line_source src(in, path, "model_file", max_line_bytes, max_model_file_bytes);
        return model_file_detail::parse_lines(src, path, ops);
    });
}

/// One op line of a model file (`topk 8,300 fp16 k=10`) as a node; `B` may appear but need not
/// (`perfcast op --line`). `source` names it in error messages.
[[nodiscard]] inline node parse_op_line(std::string_view line, std::string_view source = "<line>",
                                        op_vocabulary ops = op_kinds) {
    const model_file_detail::line_parser lp(source, 1);
    const std::vector<model_file_detail::token> toks = model_file_detail::tokens_of(line);
    if (toks.empty()) lp.fail(1, "op", line, "an op line: KIND SHAPES DTYPE [KEY=VALUE ...]");
    if (toks[0].text == "name" || toks[0].text == "runtime") {
        lp.fail(toks[0].column, "op", toks[0].text, model_file_kinds(ops));
    }
    return model_file_detail::parse_node(lp, toks, ops, false);
}

}  // namespace perfcast::io
