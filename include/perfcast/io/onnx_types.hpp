// perfcast/io/onnx_types.hpp: an ONNX graph as plain data, with no ONNX dependency.
//
// The `perfcast` command fills these with the system's ONNX library (examples/perfcast/
// onnx_source.cpp: the protobuf read, onnx::shape_inference at three probe batches so that every
// dimension is a x B + c); io/onnx_graph.hpp maps them to model-file lines and
// io/onnx_attention.hpp finds the attention subgraphs among their nodes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../dtype.hpp"
#include "../error.hpp"

namespace perfcast::io {

/// An import error: the file and the ONNX node (empty for a graph-level error).
class onnx_import_error : public ::perfcast::error {
public:
    onnx_import_error(const std::string& what, std::string file, std::string node)
        : ::perfcast::error(what), file_(std::move(file)), node_(std::move(node)) {}
    [[nodiscard]] const std::string& file() const noexcept { return file_; }
    [[nodiscard]] const std::string& node() const noexcept { return node_; }

private:
    std::string file_;
    std::string node_;
};

/// One dimension after shape inference: `per_batch` x B + `fixed` when known; else the symbol
/// it still has (a dynamic dimension other than the batch) or unknown.
struct onnx_dim {
    std::int64_t per_batch = 0;
    std::int64_t fixed = 0;
    std::string symbol{};  // non-empty: symbolic and not the batch
    bool known = true;

    [[nodiscard]] static onnx_dim of(std::int64_t n) { return {0, n, {}, true}; }
    [[nodiscard]] static onnx_dim batch(std::int64_t a = 1, std::int64_t c = 0) {
        return {a, c, {}, true};
    }
    [[nodiscard]] static onnx_dim symbolic(std::string name) {
        return {0, 0, std::move(name), false};
    }
    [[nodiscard]] static onnx_dim unknown() { return {0, 0, {}, false}; }
    friend bool operator==(const onnx_dim&, const onnx_dim&) = default;
};

/// ONNX TensorProto.DataType numbers (onnx/onnx.proto, "enum DataType").
enum class onnx_type : int {
    undefined = 0,
    float32 = 1,
    uint8 = 2,
    int8 = 3,
    uint16 = 4,
    int16 = 5,
    int32 = 6,
    int64 = 7,
    string = 8,
    boolean = 9,
    float16 = 10,
    float64 = 11,
    uint32 = 12,
    uint64 = 13,
    complex64 = 14,
    complex128 = 15,
    bfloat16 = 16,
    float8e4m3fn = 17,
    float8e4m3fnuz = 18,
    float8e5m2 = 19,
    float8e5m2fnuz = 20
};

/// perfcast's dtype of an ONNX element type, or none (strings, complex numbers, undefined).
[[nodiscard]] constexpr std::optional<dtype> dtype_of_onnx(int elem_type) noexcept {
    switch (static_cast<onnx_type>(elem_type)) {
        case onnx_type::float32: return dtype::fp32;
        case onnx_type::uint8: return dtype::uint8;
        case onnx_type::int8: return dtype::int8;
        case onnx_type::uint16: return dtype::uint16;
        case onnx_type::int16: return dtype::int16;
        case onnx_type::int32: return dtype::int32;
        case onnx_type::int64: return dtype::int64;
        case onnx_type::boolean: return dtype::bool_;
        case onnx_type::float16: return dtype::fp16;
        case onnx_type::float64: return dtype::fp64;
        case onnx_type::uint32: return dtype::uint32;
        case onnx_type::uint64: return dtype::uint64;
        case onnx_type::bfloat16: return dtype::bf16;
        // The FNUZ variants (no negative zero, one NaN; AMD's) differ from the OCP formats in
        // their special values and exponent bias only: the same byte. Priced as the OCP format
        // (an assumption: the Hopper presets' tensor cores take the OCP formats only).
        case onnx_type::float8e4m3fn:
        case onnx_type::float8e4m3fnuz: return dtype::fp8_e4m3;
        case onnx_type::float8e5m2:
        case onnx_type::float8e5m2fnuz: return dtype::fp8_e5m2;
        default: return std::nullopt;
    }
}

/// A tensor as a node sees it: name, element type, dims (none known: `has_shape` false) and
/// whether it is a weight (an initializer: on the device already, never copied per task).
struct onnx_tensor {
    std::string name{};
    int elem_type = 0;
    bool has_shape = false;
    std::vector<onnx_dim> dims{};
    bool weight = false;
    /// An INT64 initializer's values when it holds at most max_small_values (axes, shapes);
    /// empty otherwise.
    std::vector<std::int64_t> values{};
    static constexpr std::size_t max_small_values = 64;
    /// The element type's name as the ONNX library spells it (TensorProto.DataType: "STRING",
    /// "FLOAT8E4M3FN"), set by a reader that links it; empty: errors give the number alone.
    std::string elem_type_name{};
};

/// An attribute: integers (`i` is ints[0]), a float, a string.
struct onnx_attribute {
    std::string name{};
    std::vector<std::int64_t> ints{};
    double f = 0;
    std::string s{};
};

struct onnx_node {
    std::string op_type{};
    std::string name{};
    std::string domain{};
    std::vector<onnx_tensor> inputs{};  // an absent optional input has an empty name
    std::vector<onnx_tensor> outputs{};
    std::vector<onnx_attribute> attributes{};
    /// Nodes of its graph attributes, nested ones included (If's branches, Loop's and Scan's
    /// bodies): work the import does not price (the node is `generic`), so it says so.
    std::size_t subgraph_nodes = 0;

    [[nodiscard]] const onnx_attribute* attribute(std::string_view n) const {
        for (const onnx_attribute& a : attributes) {
            if (a.name == n) return &a;
        }
        return nullptr;
    }
    /// The default ONNX domain (empty or "ai.onnx"), whose operator names the importer knows.
    [[nodiscard]] bool default_domain() const { return domain.empty() || domain == "ai.onnx"; }
    [[nodiscard]] std::int64_t int_attribute(std::string_view n, std::int64_t fallback) const {
        const onnx_attribute* a = attribute(n);
        return a != nullptr && !a->ints.empty() ? a->ints[0] : fallback;
    }
};

/// The graph: its task's inputs and outputs (initializers excluded) and its nodes in order.
struct onnx_graph {
    std::string name{};
    std::string source{};        // the file, for messages
    std::string batch_symbol{};  // what became B ("batch", or "first dimension" when numeric)
    std::int64_t opset = 0;      // the default domain's opset
    std::vector<onnx_tensor> inputs{};
    std::vector<onnx_tensor> outputs{};
    std::vector<onnx_node> nodes{};
};

/// Who writes and who reads each tensor of `g` (the importer's pattern finders:
/// onnx_attention.hpp, onnx_qdq.hpp). Reads inside a node's subgraphs (If, Loop) are not listed.
struct onnx_graph_index {
    std::map<std::string, std::size_t, std::less<>> producer;
    std::map<std::string, std::vector<std::size_t>, std::less<>> consumers;
    std::set<std::string, std::less<>> outputs;

    explicit onnx_graph_index(const onnx_graph& g) {
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            for (const onnx_tensor& t : g.nodes[i].outputs) {
                if (!t.name.empty()) producer.emplace(t.name, i);
            }
            for (const onnx_tensor& t : g.nodes[i].inputs) {
                if (!t.name.empty()) consumers[t.name].push_back(i);
            }
        }
        for (const onnx_tensor& t : g.outputs) outputs.insert(t.name);
    }

    /// Read by one node only, and not a graph output: a fused kernel may keep it inside.
    [[nodiscard]] bool internal(std::string_view t) const {
        const auto c = consumers.find(t);
        return c != consumers.end() && c->second.size() == 1 && !outputs.contains(t);
    }

    /// Read by at least one node, every reader (once per input slot) passing `ok`, and not a
    /// graph output: a fused kernel may keep it inside where `ok` says the readers fuse.
    template <class Reader>
    [[nodiscard]] bool read_only_by(std::string_view t, Reader ok) const {
        const auto c = consumers.find(t);
        if (c == consumers.end() || outputs.contains(t)) return false;
        return std::all_of(c->second.begin(), c->second.end(), ok);
    }
};

/// Probe batches at which the command runs ONNX shape inference: two solve a x B + c, the third
/// checks it (a dimension growing as B^2 fails the check). Small, and >= 2 so that no Squeeze
/// mistakes the batch for a unit dimension. An assumption of this importer, not an ONNX value.
inline constexpr std::array<std::int64_t, 3> onnx_probe_batches{2, 3, 5};

/// The dimension a x B + c that takes the values `v` at the probe batches, or none.
[[nodiscard]] constexpr std::optional<onnx_dim> linear_dim(const std::array<std::int64_t, 3>& v) {
    const auto& p = onnx_probe_batches;
    const std::int64_t dv = v[1] - v[0];
    const std::int64_t dp = p[1] - p[0];
    if (dv % dp != 0) return std::nullopt;
    const std::int64_t a = dv / dp;
    const std::int64_t c = v[0] - a * p[0];
    if (a * p[2] + c != v[2]) return std::nullopt;
    return onnx_dim{a, c, {}, true};
}

namespace onnx_detail {
/// Whether `op` is in `list` (the importer's op tables).
template <std::size_t N>
[[nodiscard]] constexpr bool listed(const std::array<std::string_view, N>& list,
                                    std::string_view op) noexcept {
    return std::find(list.begin(), list.end(), op) != list.end();
}
}  // namespace onnx_detail

}  // namespace perfcast::io
