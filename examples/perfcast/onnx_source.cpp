// examples/perfcast/onnx_source.cpp: io::onnx_graph from an ONNX file over the system's ONNX
// library (compiled only when the build finds it; see onnx_source.hpp). Everything here is
// ONNX's public C++ API: the ModelProto protobuf, onnx::shape_inference::InferShapes.
//
// Shapes: the batch dimension is set to each probe batch (io::onnx_probe_batches) in turn and
// shape inference runs on each copy, so that every dimension comes out as a number (Reshape's
// -1, Flatten and Concat included) and is solved as a x B + c (io::linear_dim). A graph whose
// inference fails under a changed batch (a Reshape to a fixed batch) is imported at its own
// sizes, every line fixed=1, and says so.
#include "onnx_source.hpp"

#include <perfcast/io/line_source.hpp>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace perfcast::cli {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& field, const std::string& value,
                       const std::string& expected) {
    throw io::onnx_import_error(
        ::perfcast::detail::message("onnx_import", path + ": " + field,
                                    "\"" + perfcast::parse_error::printable(value) + "\"",
                                    expected),
        path, {});
}

/// One dimension at one probe: a value, a symbol, or unknown.
struct probe_dim {
    bool has_value = false;
    std::int64_t value = 0;
    std::string symbol;
};
struct probe_shape {
    bool known = false;
    int elem_type = 0;
    std::vector<probe_dim> dims;
};
using shape_map = std::map<std::string, probe_shape>;

probe_shape shape_of(const onnx::TypeProto& t) {
    probe_shape s;
    if (!t.has_tensor_type()) return s;
    s.elem_type = t.tensor_type().elem_type();
    if (!t.tensor_type().has_shape()) return s;
    s.known = true;
    for (const auto& d : t.tensor_type().shape().dim()) {
        probe_dim p;
        if (d.has_dim_value()) {
            p.has_value = true;
            p.value = d.dim_value();
        } else if (d.has_dim_param()) {
            p.symbol = d.dim_param();
        }
        s.dims.push_back(p);
    }
    return s;
}

/// Every tensor's type after inference: inputs, value_info, outputs, initializers.
shape_map shapes_of(const onnx::GraphProto& g) {
    shape_map m;
    for (const auto& v : g.input()) m[v.name()] = shape_of(v.type());
    for (const auto& v : g.value_info()) m[v.name()] = shape_of(v.type());
    for (const auto& v : g.output()) m[v.name()] = shape_of(v.type());
    for (const auto& t : g.initializer()) {
        probe_shape s;
        s.known = true;
        s.elem_type = t.data_type();
        for (const auto d : t.dims()) s.dims.push_back({true, d, {}});
        m[t.name()] = s;
    }
    return m;
}

/// An element type's name as ONNX spells it ("FLOAT8E4M3FN"), empty for a number it does not
/// define.
std::string elem_type_name(int elem_type) {
    if (!onnx::TensorProto_DataType_IsValid(elem_type)) return {};
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
}

/// A small positive integer written in decimal, else 0.
std::int64_t multiple(const std::string& text) {
    if (text.empty() || text.size() > 9) return 0;
    std::int64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return 0;
        v = v * 10 + (c - '0');
    }
    return v;
}

/// Sets the batch dims of `t` (by symbol, or dim 0 equal to `first` when `symbol` is empty).
void set_batch(onnx::TypeProto* t, const std::string& symbol, std::int64_t first,
               std::int64_t value) {
    if (!t->has_tensor_type() || !t->tensor_type().has_shape()) return;
    auto* shape = t->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < shape->dim_size(); ++i) {
        auto* d = shape->mutable_dim(i);
        if (symbol.empty()) {
            if (i == 0 && d->has_dim_value() && d->dim_value() == first) d->set_dim_value(value);
        } else if (d->has_dim_param()) {
            // "batch", or a multiple written "batch*8" / "8*batch" (a declared shape).
            const std::string& p = d->dim_param();
            std::int64_t times = 0;
            if (p == symbol) {
                times = 1;
            } else if (p.size() > symbol.size() + 1 && p.compare(0, symbol.size(), symbol) == 0 &&
                       p[symbol.size()] == '*') {
                times = multiple(p.substr(symbol.size() + 1));
            } else if (p.size() > symbol.size() + 1 &&
                       p.compare(p.size() - symbol.size(), symbol.size(), symbol) == 0 &&
                       p[p.size() - symbol.size() - 1] == '*') {
                times = multiple(p.substr(0, p.size() - symbol.size() - 1));
            }
            if (times > 0) d->set_dim_value(times * value);
        }
    }
}

/// Bytes of one element of ONNX data type `t` (TensorProto::DataType): a perfcast dtype's
/// (io::dtype_of_onnx), the complex types' two floats, and 0 for types without a fixed size
/// (STRING, UNDEFINED, types this library does not know).
std::size_t element_bytes(int t) {
    if (const auto d = io::dtype_of_onnx(t))
        return static_cast<std::size_t>(size_of(*d).in(units::B));
    if (t == onnx::TensorProto::COMPLEX64) return 8;
    if (t == onnx::TensorProto::COMPLEX128) return 16;
    return 0;
}

/// A tensor whose raw bytes are not its dims' elements is an error naming it: libonnx 1.12's
/// shape inference copies raw data into a vector sized by whole elements (onnx::ParseData), so
/// such a tensor (an axes input of 5 bytes) writes past the vector, or through a null pointer.
void check_tensor(const onnx::TensorProto& t, const std::string& path, const std::string& where) {
    if (!t.has_raw_data()) return;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return;  // inference refuses those
    const std::string field = where + " '" + t.name() + "' raw_data";
    const std::size_t size = element_bytes(t.data_type());
    if (size == 0) {
        const std::string name = elem_type_name(t.data_type());
        fail(path, field,
             "data type " + (name.empty() ? std::to_string(t.data_type())
                                          : name + " (" + std::to_string(t.data_type()) + ")"),
             "raw data only for a numeric data type");
    }
    std::uint64_t elements = 1;
    std::string dims;
    for (const auto d : t.dims()) {
        dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        if (d < 0 || (d > 0 && elements > std::numeric_limits<std::uint64_t>::max() /
                                              static_cast<std::uint64_t>(d) / size)) {
            fail(path, where + " '" + t.name() + "' dims", "[" + dims + "]",
                 "dimensions >= 0 whose product fits in 64 bits");
        }
        elements *= static_cast<std::uint64_t>(d);
    }
    if (t.raw_data().size() != elements * size) {
        fail(path, field, std::to_string(t.raw_data().size()) + " bytes",
             std::to_string(elements * size) + " bytes: dims [" + dims + "] of " +
                 std::to_string(size) + "-byte elements");
    }
}

void check_tensors(const onnx::GraphProto& g, const std::string& path);

/// check_tensor on a sparse tensor's values and indices.
void check_sparse(const onnx::SparseTensorProto& t, const std::string& path,
                  const std::string& where) {
    check_tensor(t.values(), path, where + " values");
    check_tensor(t.indices(), path, where + " indices");
}

/// check_tensor on the tensors of node attribute `a` (`where`: the node), and check_tensors on
/// its subgraphs.
void check_attribute(const onnx::AttributeProto& a, const std::string& path,
                     const std::string& where) {
    const std::string at = where + " attribute '" + a.name() + "'";
    if (a.has_t()) check_tensor(a.t(), path, at + " tensor");
    for (const auto& t : a.tensors()) check_tensor(t, path, at + " tensor");
    if (a.has_sparse_tensor()) check_sparse(a.sparse_tensor(), path, at);
    for (const auto& st : a.sparse_tensors()) check_sparse(st, path, at);
    if (a.has_g()) check_tensors(a.g(), path);
    for (const auto& sub : a.graphs()) check_tensors(sub, path);
}

/// check_tensor on every tensor of graph `g`: its initializers (sparse ones' values and
/// indices), its nodes' tensor attributes and, recursively, their subgraphs.
void check_tensors(const onnx::GraphProto& g, const std::string& path) {
    for (const auto& t : g.initializer()) check_tensor(t, path, "initializer");
    for (const auto& s : g.sparse_initializer()) check_sparse(s, path, "sparse initializer");
    for (const auto& n : g.node()) {
        for (const auto& a : n.attribute())
            check_attribute(a, path, "node '" + n.name() + "' (" + n.op_type() + ")");
    }
}

/// An INT64 initializer's values when it holds at most io::onnx_tensor::max_small_values and
/// they are in the file (raw_data, little-endian as ONNX stores it, its size checked by
/// check_tensor; or int64_data); empty otherwise.
std::vector<std::int64_t> small_int64_values(const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto::INT64 ||
        t.data_location() == onnx::TensorProto::EXTERNAL)
        return {};
    std::uint64_t elements = 1;
    for (const auto d : t.dims()) {
        if (d < 0 || d > static_cast<std::int64_t>(io::onnx_tensor::max_small_values)) return {};
        elements *= static_cast<std::uint64_t>(d);
        if (elements > io::onnx_tensor::max_small_values) return {};
    }
    std::vector<std::int64_t> out;
    if (!t.raw_data().empty()) {
        if (t.raw_data().size() != elements * 8) return {};
        for (std::size_t i = 0; i < elements; ++i) {
            std::uint64_t v = 0;
            for (std::size_t b = 0; b < 8; ++b)
                v |= static_cast<std::uint64_t>(static_cast<unsigned char>(t.raw_data()[i * 8 + b]))
                     << (8 * b);
            out.push_back(static_cast<std::int64_t>(v));
        }
    } else if (static_cast<std::uint64_t>(t.int64_data_size()) == elements) {
        out.assign(t.int64_data().begin(), t.int64_data().end());
    }
    return out;
}

/// Nodes of node `n`'s graph attributes, nested ones included.
std::size_t subgraph_nodes(const onnx::NodeProto& n) {
    std::size_t count = 0;
    const auto walk = [&count](const onnx::GraphProto& g, const auto& self) -> void {
        for (const auto& m : g.node()) {
            ++count;
            for (const auto& a : m.attribute()) {
                if (a.has_g()) self(a.g(), self);
                for (const auto& sub : a.graphs()) self(sub, self);
            }
        }
    };
    for (const auto& a : n.attribute()) {
        if (a.has_g()) walk(a.g(), walk);
        for (const auto& sub : a.graphs()) walk(sub, walk);
    }
    return count;
}

/// The graph's nodes in the order onnx.checker's check_graph requires (every input written
/// before the node reads it, by a graph input, an initializer or an earlier node: no cycle;
/// every output written once), and each op of the default domain one ONNX's schema registry
/// knows at the model's opset. The rest of onnx.checker is not run: its check_node holds a node
/// of an opset newer than this libonnx (1.12: opset 17) to the older schema (an opset-18
/// ReduceMean's axes input refused), its check_model wants every external weight file present
/// (import reads none) and a shape on every graph input (import says what it lacks itself).
void check_structure(const onnx::ModelProto& m, const std::string& path) {
    const onnx::GraphProto& g = m.graph();
    const auto domain_of = [](const std::string& d) { return d == "ai.onnx" ? std::string() : d; };
    std::unordered_map<std::string, int> opsets;
    for (const auto& o : m.opset_import())
        opsets[domain_of(o.domain())] = static_cast<int>(o.version());
    // Before IR version 3 a model without opset_import is at opset 1 (onnx.proto); from 3 on a
    // node of the default domain needs one (a graph of custom-domain ops does not).
    if (!opsets.contains("") && m.ir_version() < 3) opsets[""] = 1;
    const bool default_nodes = std::any_of(g.node().begin(), g.node().end(), [&](const auto& n) {
        return domain_of(n.domain()).empty();
    });
    if (!opsets.contains("") && default_nodes) {
        fail(path, "opset_import", "no ONNX opset",
             "the opset the graph was exported with (ModelProto.opset_import: a file cut short, "
             "or written without one)");
    }
    const int opset = opsets.contains("") ? opsets.at("") : 0;
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    const auto known = ranges.find("");
    const bool newer = known == ranges.end() || opset > known->second.second;
    std::set<std::string> scope;
    for (const auto& v : g.input()) scope.insert(v.name());
    for (const auto& t : g.initializer()) scope.insert(t.name());
    for (const auto& t : g.sparse_initializer()) scope.insert(t.values().name());
    // A tensor no node writes but the graph declares (value_info) is taken as given: a graph
    // that lists ops rather than a data flow (tests/data/onnx/ctr_ranking.onnx) declares them.
    std::set<std::string> written;
    for (const auto& n : g.node())
        for (const auto& out : n.output()) written.insert(out);
    for (const auto& v : g.value_info())
        if (!written.contains(v.name())) scope.insert(v.name());
    for (const auto& n : g.node()) {
        const std::string at = "node '" + n.name() + "' (" + n.op_type() + ")";
        for (const auto& in : n.input()) {
            if (in.empty() || scope.contains(in)) continue;
            if (written.contains(in)) {
                fail(path, at + " input", in,
                     "a tensor written before the node: a graph input, an initializer or an "
                     "earlier node's output (nodes in topological order, no cycle; onnx.checker)");
            }
            fail(path, at + " input", in,
                 "a graph input, an initializer, a node's output or a tensor the graph declares "
                 "(value_info): nothing writes it");
        }
        if (domain_of(n.domain()).empty() && !newer &&
            onnx::OpSchemaRegistry::Instance()->GetSchema(n.op_type(), opset, "") == nullptr) {
            fail(path, at + " op_type", n.op_type(),
                 "an op of the ONNX default domain at opset " + std::to_string(opset) +
                     " (ONNX's schema registry; a custom op needs a domain of its own)");
        }
        for (const auto& out : n.output()) {
            if (out.empty()) continue;
            if (!scope.insert(out).second) {
                fail(path, at + " output", out,
                     "a name no graph input, initializer or other node writes (each tensor "
                     "written once; onnx.checker)");
            }
        }
    }
}

shape_map infer(const onnx::ModelProto& original, const std::set<std::string>& initializers,
                const std::string& symbol, std::int64_t first, std::int64_t probe) {
    onnx::ModelProto m = original;
    auto* g = m.mutable_graph();
    // Declared shapes at the probe batch: the inputs', the outputs' (inference may not know
    // them: a Squeeze whose axes are an input) and, for a symbolic batch, the intermediate
    // ones; a numeric batch's intermediate shapes are inferred again.
    if (probe > 0) {
        for (auto& v : *g->mutable_input()) {
            if (!initializers.count(v.name())) set_batch(v.mutable_type(), symbol, first, probe);
        }
        for (auto& v : *g->mutable_output()) set_batch(v.mutable_type(), symbol, first, probe);
        if (symbol.empty()) {
            g->clear_value_info();
        } else {
            for (auto& v : *g->mutable_value_info())
                set_batch(v.mutable_type(), symbol, first, probe);
        }
    }
    try {
        onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception&) {
        // error_mode 0 keeps node-level errors quiet; a graph-level one leaves shapes unknown,
        // reported by the mapping at the node that needs them.
    }
    return shapes_of(m.graph());
}

}  // namespace

std::string onnx_version() { return "1.12 (Debian libonnx-dev) or compatible"; }

io::onnx_graph read_onnx_graph(const std::string& path, const std::string& batch_dim, bool fixed) {
    // A folder or a device is refused by name (open_input_file), as the model-file reader does.
    std::ifstream in = io::open_input_file(
        path, "onnx_import", static_cast<std::uintmax_t>(std::numeric_limits<int>::max()));
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail(path, "file", path, "a readable ONNX model file");
    return parse_onnx_graph(bytes, path, batch_dim, fixed);
}

io::onnx_graph parse_onnx_graph(std::string_view bytes, const std::string& path,
                                const std::string& batch_dim, bool fixed) {
    // Protobuf reads at most 2 GiB - 1 in one message (its int sizes).
    if (bytes.size() >= static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        fail(path, "size", std::to_string(bytes.size()) + " bytes",
             "an ONNX model under 2 GiB (protobuf's limit; weights as external data)");
    }
    onnx::ModelProto model;
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        fail(path, "contents", "not a protobuf ModelProto",
             "an ONNX model (a complete ModelProto; the file may be truncated or not ONNX)");
    }
    if (!model.has_graph() || model.ir_version() <= 0) {
        fail(path, "ir_version", std::to_string(model.ir_version()),
             "an ONNX model with an IR version >= 1 and a graph");
    }
    const onnx::GraphProto& g = model.graph();
    check_tensors(g, path);
    check_structure(model, path);
    for (const auto& f : model.functions()) {
        for (const auto& n : f.node()) {
            for (const auto& a : n.attribute())
                check_attribute(a, path, "function '" + f.name() + "' node '" + n.name() + "'");
        }
    }

    io::onnx_graph out;
    out.source = path;
    out.name = g.name();
    for (const auto& o : model.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") out.opset = o.version();
    }
    std::set<std::string> initializers;
    for (const auto& t : g.initializer()) initializers.insert(t.name());

    // The batch: --batch-dim, else the first symbolic dimension of the inputs, else their first
    // dimension.
    std::string symbol = batch_dim;
    std::int64_t first = 0;
    std::vector<std::string> symbols;
    for (const auto& v : g.input()) {
        if (initializers.count(v.name())) continue;
        for (const probe_dim& d : shape_of(v.type()).dims) {
            if (!d.symbol.empty()) symbols.push_back(d.symbol);
        }
    }
    if (!batch_dim.empty()) {
        bool found = false;
        for (const std::string& s : symbols) found = found || s == batch_dim;
        if (!found) {
            std::string list;
            std::set<std::string> listed;  // each name once (inputs share their batch)
            for (const std::string& s : symbols) {
                if (listed.insert(s).second) list += (list.empty() ? "" : ", ") + s;
            }
            fail(path, "--batch-dim", batch_dim,
                 "a symbolic dimension of the graph inputs (" + (list.empty() ? "none" : list) +
                     ")");
        }
    } else if (!symbols.empty()) {
        symbol = symbols.front();
    } else if (!fixed) {
        for (const auto& v : g.input()) {
            if (initializers.count(v.name())) continue;
            const probe_shape s = shape_of(v.type());
            if (!s.dims.empty() && s.dims[0].has_value) {
                first = s.dims[0].value;
                break;
            }
        }
    }
    out.batch_symbol = !symbol.empty() ? "'" + symbol + "'"
                       : first > 0     ? "first dimension (" + std::to_string(first) + ")"
                                       : std::string();

    std::array<shape_map, 3> probes;
    if (!out.batch_symbol.empty()) {
        for (std::size_t i = 0; i < probes.size(); ++i) {
            probes[i] = infer(model, initializers, symbol, first, io::onnx_probe_batches[i]);
        }
    }
    // A numeric batch that shape inference cannot vary (a Reshape to the exported batch): the
    // graph at its own sizes, every line fixed=1.
    const shape_map own =
        symbol.empty() ? infer(model, initializers, symbol, first, 0) : shape_map{};
    if (symbol.empty() && !out.batch_symbol.empty()) {
        for (const auto& n : g.node()) {
            for (const auto& o : n.output()) {
                const auto a = own.find(o);
                const auto b = probes[0].find(o);
                if (a != own.end() && a->second.known &&
                    (b == probes[0].end() || !b->second.known)) {
                    out.batch_symbol.clear();
                }
            }
        }
    }
    const bool batched = !out.batch_symbol.empty();

    std::map<std::string, const onnx::TensorProto*> initializer_of;
    for (const auto& t : g.initializer()) initializer_of.emplace(t.name(), &t);
    const auto tensor_of = [&](const std::string& name) {
        io::onnx_tensor t;
        t.name = name;
        t.weight = initializers.count(name) > 0;
        if (const auto it = initializer_of.find(name); it != initializer_of.end())
            t.values = small_int64_values(*it->second);
        if (name.empty()) return t;
        if (!batched) {
            const auto it = own.find(name);
            if (it == own.end() || !it->second.known) return t;
            t.elem_type = it->second.elem_type;
            t.elem_type_name = elem_type_name(t.elem_type);
            t.has_shape = true;
            for (const probe_dim& d : it->second.dims) {
                t.dims.push_back(d.has_value        ? io::onnx_dim::of(d.value)
                                 : d.symbol.empty() ? io::onnx_dim::unknown()
                                                    : io::onnx_dim::symbolic(d.symbol));
            }
            return t;
        }
        std::array<const probe_shape*, 3> at{};
        for (std::size_t i = 0; i < 3; ++i) {
            const auto it = probes[i].find(name);
            if (it == probes[i].end()) return t;
            at[i] = &it->second;
        }
        t.elem_type = at[0]->elem_type;
        t.elem_type_name = elem_type_name(t.elem_type);
        if (!at[0]->known || !at[1]->known || !at[2]->known ||
            at[0]->dims.size() != at[1]->dims.size() || at[0]->dims.size() != at[2]->dims.size()) {
            return t;
        }
        t.has_shape = true;
        for (std::size_t d = 0; d < at[0]->dims.size(); ++d) {
            const probe_dim& p0 = at[0]->dims[d];
            if (!p0.symbol.empty()) {
                t.dims.push_back(io::onnx_dim::symbolic(p0.symbol));
                continue;
            }
            if (!p0.has_value || !at[1]->dims[d].has_value || !at[2]->dims[d].has_value) {
                t.dims.push_back(io::onnx_dim::unknown());
                continue;
            }
            const auto lin = io::linear_dim({p0.value, at[1]->dims[d].value, at[2]->dims[d].value});
            t.dims.push_back(lin ? *lin : io::onnx_dim::unknown());
        }
        return t;
    };

    for (const auto& v : g.input()) {
        if (!initializers.count(v.name())) out.inputs.push_back(tensor_of(v.name()));
    }
    for (const auto& v : g.output()) out.outputs.push_back(tensor_of(v.name()));
    for (const auto& n : g.node()) {
        io::onnx_node x;
        x.op_type = n.op_type();
        x.name = n.name();
        x.domain = n.domain();
        for (const auto& i : n.input()) x.inputs.push_back(tensor_of(i));
        for (const auto& o : n.output()) x.outputs.push_back(tensor_of(o));
        for (const auto& a : n.attribute()) {
            io::onnx_attribute at;
            at.name = a.name();
            if (a.has_i()) at.ints.push_back(a.i());
            for (const auto v : a.ints()) at.ints.push_back(v);
            at.f = a.has_f() ? static_cast<double>(a.f()) : 0.0;
            at.s = a.s();
            x.attributes.push_back(std::move(at));
        }
        x.subgraph_nodes = subgraph_nodes(n);
        out.nodes.push_back(std::move(x));
    }
    return out;
}

}  // namespace perfcast::cli
