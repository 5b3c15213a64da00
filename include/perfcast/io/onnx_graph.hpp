// perfcast/io/onnx_graph.hpp: an ONNX graph, as plain data, mapped to perfcast's model file.
//
// No ONNX dependency here: the `perfcast` command fills an `onnx_graph` with the system's ONNX
// library (examples/perfcast/onnx_source.cpp: the protobuf read, onnx::shape_inference run at
// three probe batches so that every dimension is known as a x B + c), and this header maps it,
// node by node, to model-file lines (docs/model-file.md) that `parse_model` reads. The lines are
// the import's output (`perfcast import -o`), so an import and its written file predict the same.
//
//   io::onnx_graph g = ...;                        // tensors with linear dims, nodes, attributes
//   io::onnx_import r = io::map_onnx_graph(g);     // r.text: one model line per op, commented
//   perfcast::model m = io::parse_model(r.text, g.source);
//
// What maps to what, and what is approximated: docs/import.md. An op this table does not know
// becomes `generic` with its real bytes and is counted in `r.generic`; layout-only ops (Reshape,
// Squeeze, ...) compile to nothing and are counted in `r.dropped`; nothing is left out silently.
// Errors are `onnx_import_error`: "perfcast::onnx_import: FILE: node 'NAME' (OP): FIELD = VALUE,
// expected WHAT".
//
// Past 500 lines on purpose: the plain graph types are small, and the rest is one mapper whose
// per-op functions share its error, shape and line helpers; a split would only move them into a
// detail header every function includes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../graph.hpp"
#include "../op.hpp"
#include "model_file.hpp"
#include "onnx_attention.hpp"
#include "onnx_qdq.hpp"
#include "onnx_types.hpp"

namespace perfcast::io {

/// What an import produced: the model-file text and the counts of its summary.
struct onnx_import {
    std::string text{};
    std::map<std::string, int> mapped{};   // ONNX op type -> nodes mapped to perfcast kinds
    std::map<std::string, int> dropped{};  // layout-only op type -> nodes dropped
    std::map<std::string, int> generic{};  // unknown op type -> nodes costed as generic
    std::map<std::string, int> fused{};    // op type -> nodes fused into attention lines
    std::map<std::string, int> qdq{};      // op type -> Q / DQ nodes folded into integer GEMMs
    std::vector<std::string> approximations{};
    int lines = 0;      // op lines written (transfers included)
    int attention = 0;  // attention subgraphs written as one `attention` line each
    int qdq_gemms = 0;  // GEMMs between QDQ nodes written as one integer GEMM each
};

/// How the import maps the graph.
struct onnx_import_options {
    /// Write each attention subgraph (io/onnx_attention.hpp) as one fused `attention` line, as
    /// a graph compiler with a fused attention kernel runs it; false: node by node.
    bool fuse_attention = true;
    /// Write each GEMM between DequantizeLinear inputs (and a QuantizeLinear output) as one
    /// integer GEMM, as a runtime running a QDQ model does (io/onnx_qdq.hpp); false: every
    /// QuantizeLinear and DequantizeLinear priced as written.
    bool fuse_qdq = true;
};

namespace onnx_detail {

/// Ops that compile to no kernel, dropped: views of the same bytes, whose first output holds
/// their first input's elements (ONNX operator docs, onnx/docs/Operators.md: Reshape, Squeeze,
/// Unsqueeze, Flatten, Identity; Dropout is an identity at inference), and ops the graph
/// compiler folds (Constant, Shape, ConstantOfShape).
inline constexpr std::array<std::string_view, 6> view_ops{"Reshape", "Squeeze",  "Unsqueeze",
                                                          "Flatten", "Identity", "Dropout"};
inline constexpr std::array<std::string_view, 3> folded_ops{"Constant", "Shape", "ConstantOfShape"};

/// Element-wise ops and their operations per element. 1 for arithmetic and comparisons; 4 for
/// a transcendental (Exp, Sigmoid, Tanh, Erf, ...): an assumption, the same as the built-in
/// scenario's sigmoid (tests/data/models/ctr_ranking.model, `ops=4`).
struct elementwise_row {
    std::string_view op;
    double ops;
};
inline constexpr std::array<elementwise_row, 44> elementwise_ops{{
    {"Add", 1},         {"Sub", 1},       {"Mul", 1},
    {"Div", 1},         {"Pow", 4},       {"Max", 1},
    {"Min", 1},         {"Mean", 1},      {"Sum", 1},
    {"Mod", 1},         {"Equal", 1},     {"Less", 1},
    {"LessOrEqual", 1}, {"Greater", 1},   {"GreaterOrEqual", 1},
    {"And", 1},         {"Or", 1},        {"Xor", 1},
    {"Where", 1},       {"PRelu", 2},     {"BitShift", 1},
    {"Relu", 1},        {"LeakyRelu", 2}, {"Neg", 1},
    {"Abs", 1},         {"Not", 1},       {"Sign", 1},
    {"Floor", 1},       {"Ceil", 1},      {"Round", 1},
    {"Reciprocal", 1},  {"Clip", 2},      {"Sqrt", 4},
    {"Exp", 4},         {"Log", 4},       {"Sigmoid", 4},
    {"Tanh", 4},        {"Erf", 4},       {"Elu", 4},
    {"Selu", 4},        {"Softplus", 4},  {"HardSigmoid", 2},
    {"HardSwish", 2},   {"Gelu", 4},
}};

/// Operations an element of QuantizeLinear (a division by the scale, a rounding, the zero point
/// added, a saturation) and of DequantizeLinear (the zero point taken off, a multiplication by
/// the scale): counted from the ONNX operator definitions (onnx/docs/Operators.md), as the
/// model file's other `ops=` are; the kernels' real cost is not measured (an assumption).
inline constexpr double quantize_ops_per_element = 4;
inline constexpr double dequantize_ops_per_element = 2;

inline constexpr std::array<std::string_view, 11> reduce_ops{
    "ReduceSum", "ReduceMean",      "ReduceMax",       "ReduceMin", "ReduceProd", "ReduceL1",
    "ReduceL2",  "ReduceLogSumExp", "ReduceSumSquare", "ArgMax",    "ArgMin"};

[[nodiscard]] inline std::string printable(std::string_view s) { return parse_error::printable(s); }

/// A name fit for a model file's `name=`: one word of at most 31 characters.
[[nodiscard]] inline std::string word_of(std::string_view s) {
    std::string out;
    for (const char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/' ||
                        c == ':';
        out += ok ? c : '_';
        if (out.size() == 31) break;
    }
    return out.empty() ? std::string("onnx") : out;
}

/// The longest comment comment_of writes, in bytes.
inline constexpr std::size_t comment_most = 80;

/// Text for a comment: one line, no control bytes, at most comment_most bytes; a longer text
/// keeps its start and its end (a path's file name, a node's name) around "...".
[[nodiscard]] inline std::string comment_of(std::string_view s) {
    constexpr std::size_t most = comment_most, head = 38, tail = most - head - 3;
    std::string out;
    const auto add = [&out](std::string_view part) {
        for (const char c : part)
            out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? '?' : c;
    };
    if (s.size() <= most) {
        add(s);
    } else {
        // Both cuts at the start of a character: never half of a UTF-8 sequence.
        const auto continuation = [&s](std::size_t i) {
            return (static_cast<unsigned char>(s[i]) & 0xC0U) == 0x80U;
        };
        std::size_t h = head;
        while (h > 0 && continuation(h)) --h;
        std::size_t t = s.size() - tail;
        while (t < s.size() && continuation(t)) ++t;
        add(s.substr(0, h));
        out += "...";
        add(s.substr(t));
    }
    return out;
}

/// A linear dimension as model-file text: 32, B, B*8, B*8+1.
[[nodiscard]] inline std::string dim_text(const onnx_dim& d) {
    // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on "literal" + string.
    std::string out;
    if (d.per_batch >= 1) out += 'B';
    if (d.per_batch > 1) {
        out += '*';
        out += std::to_string(d.per_batch);
    }
    if (d.fixed > 0) {
        if (!out.empty()) out += '+';
        out += std::to_string(d.fixed);
    }
    return out;
}

using dims = std::vector<onnx_dim>;

class mapper {
public:
    mapper(const onnx_graph& g, const onnx_import_options& o) : g_(g), options_(o) {}

    onnx_import run() {
        out_.text = "# imported from " + comment_of(g_.source) + " by perfcast import\n";
        out_.text += "# B is the graph's " +
                     (g_.batch_symbol.empty() ? std::string("(no batch: every line fixed=1)")
                      : g_.batch_symbol.front() == '\'' ? "dimension " + comment_of(g_.batch_symbol)
                                                        : comment_of(g_.batch_symbol)) +
                     "; docs/import.md says what each ONNX op became\n";
        out_.text +=
            "name " + word_of(g_.name.empty() ? std::string("onnx_model") : g_.name) + "\n";
        for (const onnx_tensor& t : g_.inputs) transfer(t, "in");
        // Which attention subgraph, if any, each node belongs to.
        std::vector<onnx_attention_match> att;
        if (options_.fuse_attention) att = find_attention(g_);
        std::vector<const onnx_attention_match*> part_of(g_.nodes.size(), nullptr);
        std::vector<bool> taken(g_.nodes.size(), false);
        for (const onnx_attention_match& m : att) {
            for (const std::size_t i : m.nodes) {
                part_of[i] = &m;
                taken[i] = true;
            }
        }
        // Which GEMMs run as integer GEMMs between QDQ nodes, and the Q / DQ nodes they fold.
        const onnx_qdq qdq = options_.fuse_qdq ? find_qdq(g_, taken) : onnx_qdq{};
        std::vector<const onnx_qdq_match*> qdq_of(g_.nodes.size(), nullptr);
        for (const onnx_qdq_match& m : qdq.gemms) qdq_of[m.gemm] = &m;
        for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
            if (part_of[i] == nullptr) {
                if (!qdq.folded.empty() && qdq.folded[i]) {
                    ++index_;  // the other nodes keep the names they have unfused
                    ++out_.qdq[g_.nodes[i].op_type];
                } else if (qdq_of[i] != nullptr) {
                    integer_gemm(*qdq_of[i], qdq.folded);
                } else if (!qdq.moved.empty() && qdq.moved[i]) {
                    moved_layout(g_.nodes[i], g_.nodes[*qdq.moved[i]]);
                } else {
                    node_lines(g_.nodes[i]);
                }
                continue;
            }
            ++index_;  // the other nodes keep the names they have unfused
            ++out_.fused[g_.nodes[i].op_type];
            if (i == part_of[i]->pv) attention(*part_of[i]);
        }
        for (const onnx_tensor& t : g_.outputs) transfer(t, "out");
        if (mixed_more_ > 0) {
            out_.approximations[static_cast<std::size_t>(mixed_said_)] +=
                mixed_more_ == 1
                    ? std::string("; so is 1 other GEMM with B in another dtype than A")
                    : "; so are " + std::to_string(mixed_more_) +
                          " other GEMMs with B in another dtype than A";
        }
        return std::move(out_);
    }

private:
    [[noreturn]] void fail(const onnx_node* n, std::string_view field, std::string_view value,
                           std::string_view expected) const {
        std::string where = g_.source;
        if (n != nullptr) {
            where += ": node '" + printable(n->name) + "' (" + printable(n->op_type) + ")";
        }
        where += ": " + std::string(field);
        throw onnx_import_error(::perfcast::detail::message(
                                    "onnx_import", where, "\"" + printable(value) + "\"", expected),
                                g_.source, n != nullptr ? n->name : std::string());
    }

    /// The tensor's dims, every one known and linear, at least 1 at B = 1; a scalar is [1].
    dims shape_of(const onnx_node* n, const onnx_tensor& t, std::string_view role) {
        if (!t.has_shape) {
            fail(n, std::string(role) + " '" + printable(t.name) + "' shape", "unknown",
                 "a shape ONNX shape inference knows (export with static shapes, or with the "
                 "batch as the only dynamic dimension)");
        }
        dims d = t.dims;
        if (d.size() > shape::max_rank) {
            fail(n, std::string(role) + " '" + printable(t.name) + "' rank",
                 std::to_string(d.size()), "at most 8 dimensions");
        }
        for (std::size_t i = 0; i < d.size(); ++i) {
            const onnx_dim& x = d[i];
            const std::string field =
                std::string(role) + " '" + printable(t.name) + "' dimension " + std::to_string(i);
            if (!x.symbol.empty()) {
                // ONNX names the sizes it cannot know (data-dependent) unk__N.
                if (x.symbol.rfind("unk__", 0) == 0) {
                    fail(n, field, x.symbol,
                         "a size shape inference knows (this one is data-dependent: export it "
                         "fixed, or import the model by hand, docs/model-file.md)");
                }
                fail(n, field, x.symbol,
                     (g_.batch_symbol.empty()
                          ? std::string("a fixed size")
                          : "the batch (" + g_.batch_symbol + ") or a fixed size") +
                         ": a dynamic dimension other than the batch is not predicted (choose "
                         "the batch with --batch-dim, or export the other fixed)");
            }
            if (!x.known) {
                fail(n, field, "unknown",
                     "a dimension ONNX shape inference knows, a x B + c at the probe batches");
            }
            if (x.per_batch < 0 || x.fixed < 0 || x.per_batch + x.fixed < 1) {
                if (x.per_batch == 0 && x.fixed == 0) {
                    throw empty_tensor{};
                }
                fail(n, field, std::to_string(x.per_batch) + "*B+" + std::to_string(x.fixed),
                     "a dimension a x B + c with a, c >= 0 and at least 1 at B = 1");
            }
        }
        if (d.empty()) d.push_back(onnx_dim::of(1));
        return d;
    }

    dtype type_of(const onnx_node* n, const onnx_tensor& t) const {
        if (auto d = dtype_of_onnx(t.elem_type)) return *d;
        fail(n, "tensor '" + printable(t.name) + "' element type",
             t.elem_type_name.empty()
                 ? std::to_string(t.elem_type)
                 : printable(t.elem_type_name) + " (" + std::to_string(t.elem_type) + ")",
             "a numeric ONNX type (float, float16, bfloat16, double, int8..int64, uint8..uint64, "
             "bool, float8e4m3fn, float8e5m2 and their fnuz variants)");
    }

    static std::string shapes_text(const std::vector<dims>& shapes) {
        std::string out;
        for (const dims& s : shapes) {
            if (!out.empty()) out += ';';
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (i > 0) out += ',';
                out += dim_text(s[i]);
            }
        }
        return out;
    }

    /// Whether layout op `n` drops the batch: its first input's size grows with it, its first
    /// output's, every dimension known, does not (a Reshape to a shape constant written at the
    /// exported batch). Its element count would then change with the batch, which no layout op
    /// does: the graph holds at the exported batch only.
    static bool pins_batch(const onnx_node& n) {
        // A view only (not Shape, whose output is the input's rank, nor the constants).
        if (!listed(view_ops, n.op_type)) return false;
        if (n.inputs.empty() || n.outputs.empty() || !n.inputs[0].has_shape ||
            !n.outputs[0].has_shape || !has_batch({n.inputs[0].dims})) {
            return false;
        }
        for (const onnx_dim& d : n.outputs[0].dims) {
            if (!d.known || d.per_batch != 0) return false;
        }
        return true;
    }

    static bool has_batch(const std::vector<dims>& shapes) {
        for (const dims& s : shapes) {
            for (const onnx_dim& d : s) {
                if (d.per_batch > 0) return true;
            }
        }
        return false;
    }

    /// One model-file line, its comment naming the ONNX node.
    void line(std::string_view kind, const std::vector<dims>& shapes, dtype t, std::string keys,
              std::string_view name, std::string_view comment) {
        std::string l =
            std::string(kind) + " " + shapes_text(shapes) + " " + std::string(name_of(t));
        if (!keys.empty()) l += " " + keys;
        if (!has_batch(shapes)) l += " fixed=1";
        l += " name=" + word_of(name);
        out_.text += l + "  # " + comment_of(comment) + "\n";
        ++out_.lines;
    }

    void transfer(const onnx_tensor& t, std::string_view dir) {
        try {
            const dims s = shape_of(nullptr, t, dir == "in" ? "graph input" : "graph output");
            line("transfer", {s}, type_of(nullptr, t), "dir=" + std::string(dir), t.name,
                 "graph " + std::string(dir == "in" ? "input" : "output") + " " + t.name);
        } catch (const empty_tensor&) {
            out_.approximations.push_back("graph tensor '" + printable(t.name) +
                                          "' has no elements: no copy");
        }
    }

    static onnx_dim product(const onnx_node* n, const dims& d, const mapper& m) {
        onnx_dim p = onnx_dim::of(1);
        for (const onnx_dim& x : d) {
            if (p.per_batch > 0 && x.per_batch > 0) {
                m.fail(n, "shape", shapes_text({d}),
                       "at most one dimension with B in a shape this op flattens");
            }
            p = x.per_batch > 0
                    ? onnx_dim::batch(
                          checked_product(x.per_batch, p.fixed, "onnx_import", "dimension"),
                          checked_product(x.fixed, p.fixed, "onnx_import", "dimension"))
                    : onnx_dim::batch(
                          checked_product(p.per_batch, x.fixed, "onnx_import", "dimension"),
                          checked_product(p.fixed, x.fixed, "onnx_import", "dimension"));
        }
        return p;
    }

    /// `shape` with leading 1s to rank `r` (ONNX broadcasting aligns the trailing dims).
    static dims padded(dims s, std::size_t r) {
        while (s.size() < r) s.insert(s.begin(), onnx_dim::of(1));
        return s;
    }

    static std::string label(const onnx_node& n) {
        return "onnx " + n.op_type + " '" + n.name + "'";
    }

    void mapped(const onnx_node& n) { ++out_.mapped[n.op_type]; }

    /// The first input with a name, or fails.
    const onnx_tensor& input(const onnx_node& n, std::size_t i) const {
        if (i >= n.inputs.size() || n.inputs[i].name.empty()) {
            fail(&n, "input " + std::to_string(i), "missing",
                 "the input the ONNX operator requires");
        }
        return n.inputs[i];
    }
    const onnx_tensor& output(const onnx_node& n) const {
        if (n.outputs.empty()) fail(&n, "output 0", "missing", "an output");
        return n.outputs[0];
    }

    static std::string node_name(const onnx_node& n, std::size_t index) {
        return n.name.empty() ? n.op_type + "_" + std::to_string(index) : n.name;
    }

    /// GEMM m.gemm with the 8-bit inputs of its DequantizeLinear nodes, and the output of its
    /// QuantizeLinear where that is folded: the integer GEMM a runtime runs (io/onnx_qdq.hpp).
    void integer_gemm(const onnx_qdq_match& m, const std::vector<bool>& folded) {
        const onnx_node& n = g_.nodes[m.gemm];
        onnx_node f = n;
        for (std::size_t k = 0; k < 2; ++k) {
            const onnx_tensor& q = g_.nodes[m.dequantize[k]].inputs[0];
            if (!m.layouts[k].empty()) {  // the 8-bit tensor in the layout's shape
                f.inputs[k].elem_type = q.elem_type;
                f.inputs[k].elem_type_name = q.elem_type_name;
            } else {
                f.inputs[k] = q;
            }
        }
        // The nodes it folds (a DequantizeLinear something else reads is not: still a line),
        // named in the comment as far as it holds them whole, then counted ("+2 more"); a long
        // first name leaves the rest cut (comment_of).
        std::vector<std::size_t> folds;
        const auto add = [&](std::optional<std::size_t> i) {
            if (i && folded[*i] && std::find(folds.begin(), folds.end(), *i) == folds.end())
                folds.push_back(*i);
        };
        for (std::size_t k = 0; k < 2; ++k) {
            add(m.dequantize[k]);
            for (auto l = m.layouts[k].rbegin(); l != m.layouts[k].rend(); ++l) add(*l);
        }
        for (const std::size_t e : m.epilogue) add(e);
        add(m.quantize);
        add(m.bias);
        const std::size_t room = comment_most - std::min(comment_most, label(n).size());
        std::string note = ": integer";
        for (std::size_t k = 0; k < folds.size(); ++k) {
            const std::string next =
                note + (k == 0 ? ", folds " : ", ") + quoted_name(g_.nodes[folds[k]]);
            const std::size_t left = folds.size() - k - 1;
            const std::size_t more = left > 0 ? 8 + std::to_string(left).size() : 0;  // ", +N more"
            if (k > 0 && next.size() + more > room) {
                note += ", +" + std::to_string(folds.size() - k) + " more";
                break;
            }
            note = next;
        }
        // The GEMM writes what its QuantizeLinear writes, else its epilogue's last output.
        if (m.quantize) {
            f.outputs[0] = g_.nodes[*m.quantize].outputs[0];
        } else if (!m.epilogue.empty()) {
            f.outputs[0] = g_.nodes[m.epilogue.back()].outputs[0];
        }
        // A Gemm's bias C is added in the integer GEMM's epilogue: no line of its own.
        if (f.inputs.size() > 2) f.inputs.resize(2);
        const int before = out_.lines;
        node_lines(f, note);
        if (out_.lines == before) return;  // an empty tensor: no kernel, no integer GEMM counted
        if (out_.qdq_gemms == 0)
            out_.approximations.push_back(
                "node '" + printable(n.name) + "' (" + n.op_type +
                ") and every other GEMM between DequantizeLinear inputs: one integer GEMM "
                "reading their 8-bit inputs, its bias (a Gemm's C, or an Add of one value per "
                "column after it) and the scales applied in its epilogue (with a QuantizeLinear "
                "after it, a Relu / Clip before that too, writing its 8-bit output; weights "
                "quantized in the graph, and a weight's layout ops, once when the "
                "engine is built), as TensorRT runs them (ONNX Runtime's CPU provider most of "
                "them: QLinearMatMul, MatMulIntegerToFloat, QGemm, QLinearConv); unfused "
                "(fuse_qdq = false, --unfused-qdq) every node is priced as written");
        ++out_.qdq_gemms;
    }

    /// Layout op `n` between DequantizeLinear `dq` of an activation and the integer GEMMs that
    /// read it, or layout ops moved with it (io/onnx_qdq.hpp): it moves the 8-bit data, the
    /// DequantizeLinear moved past it and folded into those GEMMs.
    void moved_layout(const onnx_node& n, const onnx_node& dq) {
        onnx_node f = n;
        for (onnx_tensor* t : {&f.inputs[0], &f.outputs[0]}) {
            t->elem_type = dq.inputs[0].elem_type;
            t->elem_type_name = dq.inputs[0].elem_type_name;
        }
        const int before = out_.lines;
        node_lines(f, ": moves the 8-bit input of " + quoted_name(dq));
        if (out_.lines == before) return;  // a view: no line
        if (!moved_said_)
            out_.approximations.push_back(
                "node '" + printable(n.name) + "' (" + n.op_type +
                ") and every other layout op between a DequantizeLinear of an activation and "
                "integer GEMMs: moves the 8-bit data, the DequantizeLinear moved past it and "
                "folded into the GEMMs (ONNX Runtime's QDQPropagationTransformer)");
        moved_said_ = true;
    }

    /// A node's name quoted for a comment, or "(unnamed)".
    static std::string quoted_name(const onnx_node& n) {
        return n.name.empty() ? std::string("(unnamed)") : "'" + printable(n.name) + "'";
    }

    void node_lines(const onnx_node& n, std::string_view note = {}) {
        ++index_;
        const std::string name = node_name(n, index_);
        const std::string why = label(n) + std::string(note);
        const bool onnx_domain = n.default_domain();
        if (onnx_domain && (listed(view_ops, n.op_type) || listed(folded_ops, n.op_type))) {
            ++out_.dropped[n.op_type];
            if (pins_batch(n)) {
                out_.approximations.push_back(
                    "node '" + printable(name) + "' (" + n.op_type +
                    ") pins the batch: its input " + shapes_text({n.inputs[0].dims}) +
                    " grows with it, its output " + shapes_text({n.outputs[0].dims}) +
                    " does not (a shape written at the exported batch), so what follows it is "
                    "read at that size at every batch; export the shape with -1 or the batch "
                    "dimension (torch.onnx: x.reshape(-1, ...) and dynamic_axes)");
            }
            return;
        }
        try {
            if ((onnx_domain && map_known(n, name, why)) ||
                (n.domain == "com.microsoft" && map_onnxruntime(n, name, why))) {
                mapped(n);
                return;
            }
            generic(n, name, why);
        } catch (const empty_tensor&) {
            ++out_.dropped[n.op_type + " (no elements)"];
            out_.approximations.push_back("node '" + printable(n.name) + "' (" + n.op_type +
                                          ") has an empty tensor: no kernel");
        }
    }

    /// Unknown ops: `generic` over the output's elements with the real bytes per element.
    void generic(const onnx_node& n, const std::string& name, const std::string& why) {
        const onnx_tensor& o = output(n);
        const dims os = shape_of(&n, o, "output");
        const dtype t = type_of(&n, o);
        // Bytes per output element at B = 1 (in=, out=): exact when every tensor scales the
        // same way with B; weights read once are overcounted past B = 1 (docs/import.md).
        const auto at1 = [&](const dims& d) {
            const onnx_dim p = product(&n, d, *this);
            return static_cast<double>(p.per_batch + p.fixed);
        };
        const double elements = at1(os);
        double in = 0, outb = 0;
        for (const onnx_tensor& x : n.inputs) {
            if (x.name.empty()) continue;
            in += at1(shape_of(&n, x, "input")) * dtypes[index_of(type_of(&n, x))].bytes;
        }
        for (const onnx_tensor& x : n.outputs) {
            if (x.name.empty()) continue;
            outb += at1(shape_of(&n, x, "output")) * dtypes[index_of(type_of(&n, x))].bytes;
        }
        line("generic", {os}, t,
             "in=" + ::perfcast::detail::number_text(in / elements) +
                 " out=" + ::perfcast::detail::number_text(outb / elements),
             name, why + ": not in the op table, costed by its bytes");
        ++out_.generic[n.op_type];
        if (n.subgraph_nodes > 0) {
            out_.approximations.push_back(
                "node '" + printable(n.name) + "' (" + n.op_type + "): the " +
                std::to_string(n.subgraph_nodes) + " node(s) of its subgraphs are not priced, " +
                "only the bytes of its own inputs and outputs (control flow: import the " +
                "branch or body that runs as a graph of its own)");
        }
    }

    /// ONNX Runtime's fused norms (domain com.microsoft, the transformer optimizer's output for
    /// BERT and LLM exports; docs/ContribOperators.md of github.com/microsoft/onnxruntime):
    /// SimplifiedLayerNormalization is an RMS norm; the Skip forms add a skip input (and a bias)
    /// to the input before normalizing its last axis: one more full-size input and one more
    /// operation an element.
    bool map_onnxruntime(const onnx_node& n, const std::string& name, const std::string& why) {
        const std::string_view op = n.op_type;
        if (op == "SimplifiedLayerNormalization")
            return norm(n, rms_norm_ops_per_element, 1, name, why);
        if (op == "SkipLayerNormalization")
            return norm(n, layer_norm_ops_per_element + 1, 2, name, why);
        if (op == "SkipSimplifiedLayerNormalization")
            return norm(n, rms_norm_ops_per_element + 1, 2, name, why);
        return false;
    }

    bool map_known(const onnx_node& n, const std::string& name, const std::string& why) {
        const std::string_view op = n.op_type;
        if (op == "MatMul" || op == "Gemm" || op == "MatMulInteger") return matmul(n, name, why);
        // QLinearMatMul's B is its fourth input (A, its scale and zero point first).
        if (op == "QLinearMatMul") return matmul(n, name, why, 3);
        if (op == "QuantizeLinear") return quantize(n, quantize_ops_per_element, name, why);
        if (op == "DequantizeLinear") return quantize(n, dequantize_ops_per_element, name, why);
        for (const elementwise_row& r : elementwise_ops) {
            if (r.op == op) return elementwise(n, r.ops, name, why);
        }
        if (listed(reduce_ops, op)) return reduce(n, name, why, "");
        if (op == "Softmax" || op == "LogSoftmax") return softmax(n, name, why);
        if (op == "LayerNormalization") return norm(n, layer_norm_ops_per_element, 1, name, why);
        if (op == "RMSNormalization") return norm(n, rms_norm_ops_per_element, 1, name, why);
        if (op == "Gather") return gather(n, name, why);
        if (op == "GatherElements" || op == "GatherND") return copy(n, name, why, 2);
        if (op == "Concat") return concat(n, name, why);
        if (op == "Split") return split(n, name, why);
        if (op == "Slice") return copy(n, name, why, 1);
        if (op == "Transpose") return transpose(n, name, why);
        if (op == "Expand") return expand(n, name, why);
        if (op == "Tile") return tile(n, name, why);
        if (op == "Cast") return cast(n, name, why);
        if (op == "TopK") return topk(n, name, why);
        if (op == "Conv") return conv(n, name, why);
        return false;
    }

    /// Conv: a 2-D convolution of one group (X N,CIN,H,W; W COUT,CIN,KH,KW; Y N,COUT,HO,WO
    /// from shape inference) as the model file's `conv X;W;Y`. Strides, pads and dilations
    /// reach the cost through Y's HO x WO. The bias (a third input) is added in the kernel's
    /// epilogue by cuDNN and CANN (torch_npu's Conv2D rows list it as an operand): no line of
    /// its own. Grouped and depthwise convolutions, and 1-D or 3-D ones, stay generic.
    bool conv(const onnx_node& n, const std::string& name, const std::string& why) {
        const dims x = shape_of(&n, input(n, 0), "input");
        const dims w = shape_of(&n, input(n, 1), "input");
        if (x.size() != 4 || w.size() != 4 || n.int_attribute("group", 1) != 1) return false;
        const dims y = shape_of(&n, output(n), "output");
        const dtype t = type_of(&n, input(n, 0));
        const dtype ot = type_of(&n, output(n));
        mixed(n, t, type_of(&n, input(n, 1)));  // W of another dtype than X
        // A QDQ Conv without its QuantizeLinear: 8-bit inputs, a float output (io/onnx_qdq.hpp).
        line("conv", {x, w, y}, t, ot != t ? "out=" + std::string(name_of(ot)) : std::string(),
             name, why);
        return true;
    }

    /// QuantizeLinear / DequantizeLinear: one pass over X writing Y in its own dtype (int8,
    /// uint8 or FP8 one way, a float the other), `ops` operations an element; the scale and
    /// zero point (a scalar, or one per channel) are not counted as read.
    bool quantize(const onnx_node& n, double ops, const std::string& name, const std::string& why) {
        const onnx_tensor& x = input(n, 0);
        const dtype t = type_of(&n, x);
        const dtype ot = type_of(&n, output(n));
        const dims xs = shape_of(&n, x, "input");
        // Priced as written where not folded into an integer GEMM (io/onnx_qdq.hpp). Said
        // once, at the first such node: a QDQ model has hundreds.
        if (!qdq_said_)
            out_.approximations.push_back(
                "node '" + printable(n.name) + "' (" + n.op_type +
                ") and every other QuantizeLinear / DequantizeLinear " +
                (options_.fuse_qdq
                     ? std::string("not folded into an integer GEMM: priced as written, one "
                                   "pass over the input at its dtype's rate (")
                     : std::string("(fuse_qdq = false, --unfused-qdq): priced as written, one "
                                   "pass over the input at its dtype's rate (")) +
                std::string(name_of(t)) + " here)" +
                (options_.fuse_qdq ? ""
                                   : "; a runtime fusing them into the GEMMs around them runs "
                                     "those GEMMs in the integer dtype instead"));
        qdq_said_ = true;
        std::string keys = "inputs=1 ops=" + ::perfcast::detail::number_text(ops);
        if (ot != t) keys += " out=" + std::string(name_of(ot));
        line("elementwise", {xs}, t, keys, name, why);
        return true;
    }

    /// A line has one dtype: a uint8 A against an int8 B (ONNX Runtime's default U8S8) is priced
    /// in A's. Said once, with a count of the others (run): a QDQ model has hundreds.
    void mixed(const onnx_node& n, dtype t, dtype tb) {
        if (tb == t) return;
        if (mixed_said_ >= 0) {
            ++mixed_more_;
            return;
        }
        mixed_said_ = static_cast<std::ptrdiff_t>(out_.approximations.size());
        out_.approximations.push_back("node '" + printable(n.name) + "' (" + n.op_type + "): B (" +
                                      std::string(name_of(tb)) + ") priced in A's dtype (" +
                                      std::string(name_of(t)) + ")");
    }

    /// MatMul, Gemm and the quantized GEMMs: A is input 0, B input `b_input` (MatMulInteger's
    /// zero points and QLinearMatMul's scales and zero points are not counted as read; its
    /// requantization of the output runs in the GEMM's epilogue).
    bool matmul(const onnx_node& n, const std::string& name, const std::string& why,
                std::size_t b_input = 1) {
        const onnx_tensor& at = input(n, 0);
        const onnx_tensor& bt = input(n, b_input);
        const dtype t = type_of(&n, at);
        const dtype tb = type_of(&n, bt);
        dims a = shape_of(&n, at, "input");
        dims b = shape_of(&n, bt, "input");
        mixed(n, t, tb);
        const dtype ot = type_of(&n, output(n));
        if (n.op_type == "Gemm") {
            if (a.size() != 2 || b.size() != 2) {
                fail(&n, "inputs", shapes_text({a, b}), "two 2-D inputs (ONNX Gemm)");
            }
            if (n.int_attribute("transA", 0) != 0) std::swap(a[0], a[1]);
            if (n.int_attribute("transB", 0) != 0) std::swap(b[0], b[1]);
        }
        // ONNX MatMul follows numpy.matmul: a 1-D A is [1, K], a 1-D B is [K, 1].
        if (a.size() == 1) a.insert(a.begin(), onnx_dim::of(1));
        if (b.size() == 1) b.push_back(onnx_dim::of(1));
        std::string keys;
        if (ot != t) keys = "out=" + std::string(name_of(ot));
        if (b.size() > 2) {
            // B with its own batch: shared by A's batch when its leading dims have no B.
            const dims lead(b.begin(), b.end() - 2);
            const onnx_dim p = product(&n, lead, *this);
            const dims alead(a.begin(), a.end() - 2);
            const onnx_dim pa = product(&n, alead, *this);
            // A with no batch of its own (fixed or varying): a weight on the left.
            const bool a_unbatched = pa.per_batch == 0 && pa.fixed == 1;
            // Fixed (static) shapes: A with 1s above B's own leading dimensions, or of a higher
            // rank, shares B as a varying batch does.
            bool ones_over_b = false;
            for (std::size_t i = 0; i + 2 < b.size(); ++i) {
                const std::size_t ai = i + a.size();
                ones_over_b =
                    ones_over_b || (ai >= b.size() && a[ai - b.size()] == onnx_dim::of(1) &&
                                    b[i] != onnx_dim::of(1));
            }
            if (p.per_batch == 0 && p.fixed == 1) {
                b = dims(b.end() - 2, b.end());
            } else if (p.per_batch == 0 && !a_unbatched &&
                       (pa.per_batch > 0 || a.size() > b.size() || ones_over_b)) {
                keys += std::string(keys.empty() ? "" : " ") + "broadcast_b=1";
                // B's own leading dimensions (per-head weights [H, K, N]) are A's last ones: where
                // A has a 1 there (A [B, 1, M, K]), A is broadcast over them (numpy.matmul).
                const std::size_t rank = std::max(a.size(), b.size());
                a = padded(a, rank);
                bool spread = false;
                for (std::size_t i = 0; i + 2 < b.size(); ++i) {
                    onnx_dim& ad = a[rank - b.size() + i];
                    if (b[i] != onnx_dim::of(1) && ad == onnx_dim::of(1)) {
                        ad = b[i];
                        spread = true;
                    }
                }
                if (spread)
                    out_.approximations.push_back("node '" + printable(n.name) + "' (" + n.op_type +
                                                  "): A broadcast over B's batch, costed "
                                                  "as one matmul per batch entry");
            } else if (a_unbatched) {
                // A weight on the left (W x, x with the batch): costed as the transposed product
                // x^T W^T, W one shared [K, N] read once; as one matmul per batch entry it was
                // read batch times (a 4096 x 4096 W at batch 64: 2 GiB, 40x the time).
                dims xt(b.begin(), b.end() - 2);
                xt.push_back(b[b.size() - 1]);
                xt.push_back(b[b.size() - 2]);
                b = {a[a.size() - 1], a[a.size() - 2]};
                a = std::move(xt);
                out_.approximations.push_back(
                    "node '" + printable(n.name) + "' (" + n.op_type +
                    "): a weight on the left (W x), costed as the transposed product "
                    "(x^T W^T: the weight read once, the transposes taken as the GEMM "
                    "library's flags)");
            } else if (a.size() < b.size()) {
                a = padded(a, b.size());
                // A broadcast across B's batch: A's rows are B's batch (numpy.matmul), where A
                // has a 1 (or no dimension); where A has its own, B's 1 is broadcast instead.
                for (std::size_t i = 0; i + 2 < a.size(); ++i)
                    if (a[i] == onnx_dim::of(1)) a[i] = b[i];
                out_.approximations.push_back("node '" + printable(n.name) + "' (" + n.op_type +
                                              "): A broadcast over B's batch, costed "
                                              "as one matmul per batch entry");
            }
        }
        line("matmul", {a, b}, t, keys, name, why);
        if (n.op_type == "Gemm" && n.inputs.size() > 2 && !n.inputs[2].name.empty()) {
            const dims os = shape_of(&n, output(n), "output");
            const dims c = padded(shape_of(&n, n.inputs[2], "input"), os.size());
            line("elementwise", c == os ? std::vector<dims>{os} : std::vector<dims>{os, c}, ot,
                 "inputs=2", name + "_bias", why + ": the bias C");
        }
        return true;
    }

    bool elementwise(const onnx_node& n, double ops, const std::string& name,
                     const std::string& why) {
        const onnx_tensor& o = output(n);
        const dims os = shape_of(&n, o, "output");
        const dtype ot = type_of(&n, o);
        std::vector<dims> ins;
        dtype t = ot;
        bool first = true;
        for (const onnx_tensor& x : n.inputs) {
            if (x.name.empty()) continue;
            if (first) t = type_of(&n, x);
            // Where's condition is bool: the data type is its second input's.
            if (n.op_type == "Where" && ins.size() == 1) t = type_of(&n, x);
            first = false;
            ins.push_back(shape_of(&n, x, "input"));
        }
        // A line has one dtype: Where's bool condition is read at the data's.
        if (n.op_type == "Where" && size_of(t).in(units::B) > 1)
            out_.approximations.push_back("node '" + printable(n.name) +
                                          "' (Where): its bool condition counted at the data's "
                                          "dtype (" +
                                          std::string(name_of(t)) + ")");
        // Clip's min and max, PRelu's slope: scalars or broadcast; every input counts as read.
        std::size_t data_inputs = ins.size();
        if (n.op_type == "Clip") data_inputs = 1;
        std::string keys = "inputs=" + std::to_string(data_inputs == 0 ? 1 : data_inputs);
        if (ops != 1) keys += " ops=" + ::perfcast::detail::number_text(ops);
        if (ot != t) keys += " out=" + std::string(name_of(ot));
        // A binary op with a broadcast: its two inputs (`elementwise A;B`, the output is their
        // broadcast); without one, the output's shape.
        std::vector<dims> shapes{os};
        if (data_inputs == 2 && ins.size() >= 2) {
            const dims a = padded(ins[0], os.size());
            const dims b = padded(ins[1], os.size());
            if (a != os || b != os) shapes = {a, b};
        }
        line("elementwise", shapes, t, keys, name, why);
        return true;
    }

    /// A reduction: ROWS (the output's elements), LENGTH (input elements / output elements).
    bool reduce(const onnx_node& n, const std::string& name, const std::string& why,
                std::string_view suffix) {
        const dims is = shape_of(&n, input(n, 0), "input");
        const dims os = shape_of(&n, output(n), "output");
        const onnx_dim ie = product(&n, is, *this);
        const onnx_dim oe = product(&n, os, *this);
        // Whether the reduced axes are the innermost (dimensions of 1, which order nothing, left
        // aside); otherwise each output element reads strided elements, priced as a contiguous
        // row all the same (model.md), and said so. The axes: ArgMax / ArgMin's `axis`, the
        // `axes` attribute (opsets before 13 / 18) or initializer input; none: every axis.
        std::optional<std::vector<std::int64_t>> axes;
        if (n.op_type == "ArgMax" || n.op_type == "ArgMin") {
            axes = std::vector<std::int64_t>{n.int_attribute("axis", 0)};
        } else if (const onnx_attribute* at = n.attribute("axes")) {
            axes = at->ints;
        } else if (n.inputs.size() > 1 && !n.inputs[1].name.empty()) {
            if (!n.inputs[1].values.empty()) axes = n.inputs[1].values;
        } else {
            axes = std::vector<std::int64_t>{};
        }
        bool innermost = true;
        if (axes) {
            std::vector<bool> reduced(is.size(), axes->empty());
            for (const std::int64_t a : *axes) reduced[axis_of(n, a, is.size(), "axes")] = true;
            bool seen = false;
            for (std::size_t i = 0; i < is.size(); ++i) {
                if (is[i] == onnx_dim::of(1)) continue;
                if (reduced[i]) seen = true;
                else if (seen) innermost = false;
            }
        } else {
            // Axes not known here (computed): the output is then taken for the input's leading
            // dimensions when it equals them.
            const auto without_ones = [](const dims& d) {
                dims out;
                for (const onnx_dim& x : d)
                    if (!(x == onnx_dim::of(1))) out.push_back(x);
                return out;
            };
            const dims in_kept = without_ones(is);
            const dims out_kept = without_ones(os);
            innermost = out_kept.size() <= in_kept.size();
            for (std::size_t i = 0; innermost && i < out_kept.size(); ++i)
                innermost = out_kept[i] == in_kept[i];
        }
        if (!innermost)
            out_.approximations.push_back("node '" + printable(n.name) + "' (" + n.op_type +
                                          " over axes other than the innermost): priced as a "
                                          "reduction of contiguous rows");
        line("reduce", {rows_length(n, ie, oe)}, type_of(&n, input(n, 0)), "",
             name + std::string(suffix), why);
        return true;
    }

    dims rows_length(const onnx_node& n, const onnx_dim& ie, const onnx_dim& oe) const {
        // LENGTH = ie / oe, a fixed count unless the batch itself is reduced.
        if (oe.per_batch > 0) {
            if (oe.fixed != 0 || ie.fixed != 0 || ie.per_batch % oe.per_batch != 0) {
                fail(&n, "reduced length", dim_text(ie) + " / " + dim_text(oe),
                     "a whole number of elements per output element");
            }
            return {oe, onnx_dim::of(ie.per_batch / oe.per_batch)};
        }
        if (oe.fixed < 1 || ie.per_batch % oe.fixed != 0 || ie.fixed % oe.fixed != 0) {
            fail(&n, "reduced length", dim_text(ie) + " / " + dim_text(oe),
                 "a whole number of elements per output element");
        }
        return {oe, onnx_dim::batch(ie.per_batch / oe.fixed, ie.fixed / oe.fixed)};
    }

    /// The axis `a` (negative from the end) of a rank-`r` tensor, or fails naming the field.
    std::size_t axis_of(const onnx_node& n, std::int64_t a, std::size_t r,
                        std::string_view f) const {
        const auto rank = static_cast<std::int64_t>(r);
        if (a < 0) a += rank;
        if (a < 0 || a >= rank) {
            fail(&n, f, std::to_string(a),
                 "an axis in [-" + std::to_string(rank) + ", " + std::to_string(rank) + ")");
        }
        return static_cast<std::size_t>(a);
    }

    /// Rows and length of a softmax-like op along `axis` (opset < 13: every dim from the axis),
    /// and whether that is the input's last axis in memory (no dimension after it but 1s).
    struct along {
        onnx_dim rows, length;
        bool innermost = true;
    };
    along along_axis(const onnx_node& n, const dims& s) const {
        const std::int64_t deflt = g_.opset != 0 && g_.opset < 13 ? 1 : -1;
        const std::size_t axis = axis_of(n, n.int_attribute("axis", deflt), s.size(), "axis");
        const bool flattened = g_.opset != 0 && g_.opset < 13;
        dims len_dims(s.begin() + static_cast<std::ptrdiff_t>(axis),
                      flattened ? s.end() : s.begin() + static_cast<std::ptrdiff_t>(axis) + 1);
        dims rest(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
        bool innermost = true;
        if (!flattened) {
            for (auto d = s.begin() + static_cast<std::ptrdiff_t>(axis) + 1; d != s.end(); ++d) {
                innermost = innermost && d->per_batch == 0 && d->fixed == 1;
                rest.push_back(*d);
            }
        }
        return {product(&n, rest, *this), product(&n, len_dims, *this), innermost};
    }

    /// Softmax or LogSoftmax: one `softmax ROWS,LENGTH` line, as the frameworks run it (one
    /// kernel: the built-in scenario's softmax, op.hpp softmax), along `axis` (along_axis).
    bool softmax(const onnx_node& n, const std::string& name, const std::string& why) {
        const along a = along_axis(n, shape_of(&n, input(n, 0), "input"));
        if (!a.innermost)
            out_.approximations.push_back("node '" + printable(n.name) + "' (" + n.op_type +
                                          " along an axis other than the last): priced as a "
                                          "softmax of rows of that axis's length");
        line("softmax", {{a.rows, a.length}}, type_of(&n, input(n, 0)), "", name, why);
        return true;
    }

    /// A norm over the axes from `axis` (default -1: LayerNormalization and RMSNormalization,
    /// ONNX operator definitions, opsets 17 and 23; ONNX Runtime's fused norms, which have no
    /// axis before the last): one `norm ROWS,WIDTH ops=X reduce=1` line, as the frameworks run it
    /// (one kernel, each row reduced across a thread block; the profile mapping's LayerNorm and
    /// RmsNorm), reading `inputs` full-size tensors (a Skip form's skip is the second).
    bool norm(const onnx_node& n, double ops, int inputs, const std::string& name,
              const std::string& why) {
        const dims s = shape_of(&n, input(n, 0), "input");
        const std::size_t axis = axis_of(n, n.int_attribute("axis", -1), s.size(), "axis");
        const dims len_dims(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end());
        const dims rest(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
        std::string keys = "ops=" + ::perfcast::detail::number_text(ops);
        if (inputs > 1) keys += " inputs=" + std::to_string(inputs);
        line("norm", {{product(&n, rest, *this), product(&n, len_dims, *this)}},
             type_of(&n, input(n, 0)), keys + " reduce=1", name, why);
        return true;
    }

    /// Gather on axis 0 of a weight table: an embedding lookup. Anything else is a copy of the
    /// output (listed as an approximation).
    bool gather(const onnx_node& n, const std::string& name, const std::string& why) {
        const onnx_tensor& data = input(n, 0);
        const onnx_tensor& idx = input(n, 1);
        const dims ds = shape_of(&n, data, "input");
        const dims is = shape_of(&n, idx, "input");
        const dims tail(ds.begin() + 1, ds.end());
        const onnx_dim row = product(&n, tail, *this);
        if (n.int_attribute("axis", 0) != 0 || ds[0].per_batch > 0 || row.per_batch > 0) {
            out_.approximations.push_back("node '" + printable(n.name) +
                                          "' (Gather off a batch-dependent tensor or a non-zero "
                                          "axis): costed as a copy of its output");
            return copy(n, name, why, 1);
        }
        const dtype it = type_of(&n, idx);
        std::string keys = it == dtype::int64 ? "index=int64" : "";
        line("gather", {{product(&n, is, *this)}, {ds[0], row}}, type_of(&n, data), keys, name,
             why);
        return true;
    }

    /// A copy of the output's elements reading `inputs` tensors of its size (Slice,
    /// GatherElements, GatherND): an element-wise op of 1 operation per element.
    bool copy(const onnx_node& n, const std::string& name, const std::string& why, int inputs) {
        const dims os = shape_of(&n, output(n), "output");
        line("elementwise", {os}, type_of(&n, output(n)), "inputs=" + std::to_string(inputs), name,
             why + ": a copy of its output");
        return true;
    }

    /// Concat along `axis`: the contiguous run per row is the output's elements from the axis on
    /// (a whole output row is written at once; the built-in scenario's concat, inner=1261).
    bool concat(const onnx_node& n, const std::string& name, const std::string& why) {
        std::vector<dims> shapes;
        const onnx_tensor* first = nullptr;
        for (const onnx_tensor& x : n.inputs) {
            if (x.name.empty()) continue;
            if (first == nullptr) first = &x;
            shapes.push_back(shape_of(&n, x, "input"));
        }
        if (first == nullptr) fail(&n, "inputs", "none", "at least one input");
        const std::size_t axis = axis_of(n, n.int_attribute("axis", 0), shapes[0].size(), "axis");
        const dims os = shape_of(&n, output(n), "output");
        if (axis >= os.size()) fail(&n, "axis", std::to_string(axis), "an axis of the output");
        const onnx_dim run =
            product(&n, dims(os.begin() + static_cast<std::ptrdiff_t>(axis), os.end()), *this);
        std::string keys;
        if (run.per_batch == 0) keys = "inner=" + std::to_string(run.fixed);
        line("concat", shapes, type_of(&n, *first), keys, name, why);
        return true;
    }

    /// Split: the same bytes as the concat of its outputs.
    bool split(const onnx_node& n, const std::string& name, const std::string& why) {
        std::vector<dims> shapes;
        for (const onnx_tensor& x : n.outputs) {
            if (!x.name.empty()) shapes.push_back(shape_of(&n, x, "output"));
        }
        if (shapes.empty()) fail(&n, "outputs", "none", "at least one output");
        line("concat", shapes, type_of(&n, input(n, 0)), "", name, why + ": its outputs' bytes");
        return true;
    }

    bool transpose(const onnx_node& n, const std::string& name, const std::string& why) {
        const dims s = shape_of(&n, input(n, 0), "input");
        const onnx_attribute* perm = n.attribute("perm");
        // Default perm reverses the dims: the last axis moves unless the rank is 1.
        bool moves = s.size() > 1;
        if (perm != nullptr && !perm->ints.empty()) {
            moves = perm->ints.back() != static_cast<std::int64_t>(perm->ints.size()) - 1;
        }
        line("transpose", {s}, type_of(&n, input(n, 0)), moves ? "" : "inner_moves=0", name, why);
        return true;
    }

    bool expand(const onnx_node& n, const std::string& name, const std::string& why) {
        const dims os = shape_of(&n, output(n), "output");
        const dims is = padded(shape_of(&n, input(n, 0), "input"), os.size());
        line("broadcast", {is, os}, type_of(&n, input(n, 0)), "", name, why);
        return true;
    }

    /// Tile: MULTIPLES are output dim / input dim, each a x B + c.
    bool tile(const onnx_node& n, const std::string& name, const std::string& why) {
        const dims is = shape_of(&n, input(n, 0), "input");
        const dims os = shape_of(&n, output(n), "output");
        if (is.size() != os.size())
            fail(&n, "output rank", std::to_string(os.size()), "the input's");
        dims mult;
        for (std::size_t i = 0; i < is.size(); ++i) {
            const onnx_dim& a = is[i];
            const onnx_dim& b = os[i];
            if (a.per_batch == 0 && b.per_batch % a.fixed == 0 && b.fixed % a.fixed == 0) {
                mult.push_back(onnx_dim::batch(b.per_batch / a.fixed, b.fixed / a.fixed));
            } else if (a.fixed == 0 && b.fixed == 0 && b.per_batch % a.per_batch == 0) {
                mult.push_back(onnx_dim::of(b.per_batch / a.per_batch));
            } else {
                fail(&n, "repeats at dimension " + std::to_string(i),
                     dim_text(b) + " / " + dim_text(a), "a whole number of repeats");
            }
        }
        line("tile", {is, mult}, type_of(&n, input(n, 0)), "", name, why);
        return true;
    }

    bool cast(const onnx_node& n, const std::string& name, const std::string& why) {
        const dims s = shape_of(&n, input(n, 0), "input");
        line("cast", {s}, type_of(&n, input(n, 0)),
             "to=" + std::string(name_of(type_of(&n, output(n)))), name, why);
        return true;
    }

    /// TopK along `axis` (default -1): ROWS (the other dims), LENGTH; k is the output's length
    /// along the axis (shape inference read it from the K input).
    bool topk(const onnx_node& n, const std::string& name, const std::string& why) {
        const dims s = shape_of(&n, input(n, 0), "input");
        const dims os = shape_of(&n, output(n), "output");
        const std::size_t axis = axis_of(n, n.int_attribute("axis", -1), s.size(), "axis");
        const onnx_dim k = os[axis];
        if (k.per_batch != 0) fail(&n, "k", dim_text(k), "a fixed k");
        dims rest(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
        rest.insert(rest.end(), s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end());
        line("topk", {{product(&n, rest, *this), s[axis]}}, type_of(&n, input(n, 0)),
             "k=" + std::to_string(k.fixed), name, why);
        return true;
    }

    /// An attention subgraph as one fused `attention Q;K` line (BNSD sizes), written where its
    /// second MatMul was; a mask on the scores is priced as every query-key pair.
    void attention(const onnx_attention_match& m) {
        const onnx_node& qk = g_.nodes[m.qk];
        const onnx_node& sm = g_.nodes[m.softmax];
        const onnx_node& pv = g_.nodes[m.pv];
        const std::string name = node_name(sm, m.softmax + 1);
        const std::string why = "onnx attention: MatMul '" + qk.name + "', Softmax '" + sm.name +
                                "', MatMul '" + pv.name + "' (" + std::to_string(m.nodes.size()) +
                                " nodes)";
        line("attention", {m.q, m.k}, type_of(&qk, input(qk, 0)), "", name, why);
        ++out_.attention;
        if (m.mask) {
            const onnx_node& mask = g_.nodes[*m.mask];
            out_.approximations.push_back(
                "attention at Softmax '" + printable(sm.name) + "': its mask (" + mask.op_type +
                " '" + printable(mask.name) +
                "') is priced as every query-key pair (for a causal mask write causal=1 on the "
                "line: about half the pairs)");
        }
    }

    struct empty_tensor {};

    const onnx_graph& g_;
    onnx_import_options options_;
    std::ptrdiff_t mixed_said_ = -1;  // the approximation of the first GEMM of mixed dtypes
    int mixed_more_ = 0;              // the others
    onnx_import out_{};
    bool qdq_said_ = false;    // the QDQ approximation listed (quantize)
    bool moved_said_ = false;  // the approximation of a layout op moving 8-bit data listed
    std::size_t index_ = 0;
};

}  // namespace onnx_detail

/// The graph's model-file text and its summary (docs/import.md: the op table). Throws
/// onnx_import_error naming the file, the node, the field, its value and what was expected.
[[nodiscard]] inline onnx_import map_onnx_graph(const onnx_graph& g,
                                                const onnx_import_options& options = {}) {
    if (g.nodes.empty()) {
        throw onnx_import_error(
            ::perfcast::detail::message("onnx_import", g.source + ": graph nodes", "0",
                                        "an ONNX model with at least one node"),
            g.source, {});
    }
    return onnx_detail::mapper(g, options).run();
}

/// The imported model: map_onnx_graph's text read by the model-file reader.
[[nodiscard]] inline model model_of(const onnx_graph& g, onnx_import* summary = nullptr,
                                    const onnx_import_options& options = {}) {
    onnx_import r = map_onnx_graph(g, options);
    model m = parse_model(r.text, g.source);
    // Their lines are the generated text's, not a file the user has: an error names the node
    // (the ONNX node's name) alone.
    for (node& n : m.nodes) n.line = node::source_line{};
    if (summary != nullptr) *summary = std::move(r);
    return m;
}

/// The import summary for standard error: lines written, ops mapped, dropped and generic.
[[nodiscard]] inline std::string import_summary(const onnx_import& r) {
    const auto list = [](const std::map<std::string, int>& m) {
        std::string s;
        for (const auto& kv : m) {
            s += (s.empty() ? "" : ", ") + kv.first + " x" + std::to_string(kv.second);
        }
        return s.empty() ? std::string("none") : s;
    };
    const auto total = [](const std::map<std::string, int>& m) {
        int n = 0;
        for (const auto& kv : m) n += kv.second;
        return n;
    };
    const int mapped = total(r.mapped), dropped = total(r.dropped), generic = total(r.generic),
              fused = total(r.fused), qdq = total(r.qdq);
    std::string s = "imported: " + std::to_string(r.lines) + " model lines from " +
                    std::to_string(mapped + dropped + generic + fused + qdq) + " ONNX nodes\n";
    s += "  mapped (" + std::to_string(mapped) + "): " + list(r.mapped) + "\n";
    s += "  dropped, layout only (" + std::to_string(dropped) + "): " + list(r.dropped) + "\n";
    s += "  generic, costed by bytes (" + std::to_string(generic) + "): " + list(r.generic) + "\n";
    if (fused > 0) {
        s += "  fused into " + std::to_string(r.attention) + " attention line" +
             (r.attention == 1 ? "" : "s") + " (" + std::to_string(fused) + "): " + list(r.fused) +
             "\n";
    }
    if (r.qdq_gemms > 0 || qdq > 0) {
        s += "  folded into " + std::to_string(r.qdq_gemms) + " integer GEMM" +
             (r.qdq_gemms == 1 ? "" : "s") + " (" + std::to_string(qdq) + "): " + list(r.qdq) +
             "\n";
    }
    for (const std::string& a : r.approximations) s += "  approximation: " + a + "\n";
    return s;
}

}  // namespace perfcast::io
