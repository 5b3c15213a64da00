// examples/perfcast/onnx_source.hpp: the command's ONNX reader (onnx_source.cpp, over the
// system's ONNX library) and the model input that takes a model file or an ONNX graph.
//
// ONNX is optional at configure time (CMake: PERFCAST_WITH_ONNX, find_package(ONNX) and
// Protobuf; Meson: -Donnx): the build that finds it compiles onnx_source.cpp and defines
// PERFCAST_HAVE_ONNX=1 for the command and the tests; the library headers never include it
// (include/perfcast/io/onnx_graph.hpp maps the plain graph this fills). Without it, reading a
// .onnx file is an error naming the Debian package libonnx-dev.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include <perfcast/error.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/onnx_graph.hpp>
#include <perfcast/io/parse.hpp>

#ifndef PERFCAST_HAVE_ONNX
#define PERFCAST_HAVE_ONNX 0
#endif

namespace perfcast::cli {

/// Whether this build reads ONNX graphs.
inline constexpr bool have_onnx = PERFCAST_HAVE_ONNX != 0;

/// The message of a build without ONNX asked to read `path`.
[[nodiscard]] inline std::string onnx_missing_message(const std::string& path) {
    return "'" + path +
           "' is an ONNX graph, and this perfcast was built without ONNX. Install the Debian "
           "packages libonnx-dev and libprotobuf-dev (apt-get install libonnx-dev "
           "libprotobuf-dev) and configure again (cmake picks them up; meson setup "
           "--reconfigure), or write the model by hand (docs/model-file.md)";
}

#if PERFCAST_HAVE_ONNX
/// The graph at `path` after ONNX shape inference at three probe batches (io::onnx_probe_batches):
/// every dimension as a x B + c, B the symbolic dimension `batch_dim` (empty: the first symbolic
/// dimension of the graph inputs, else their first dimension). Throws perfcast::error (an
/// io::onnx_import_error) when the file is not an ONNX model or `batch_dim` is not in it.
/// `fixed`: no batch, every dimension at the graph's own size.
[[nodiscard]] io::onnx_graph read_onnx_graph(const std::string& path,
                                             const std::string& batch_dim = {}, bool fixed = false);

/// The same from the bytes of an ONNX file; `path` names it in messages.
[[nodiscard]] io::onnx_graph parse_onnx_graph(std::string_view bytes, const std::string& path,
                                              const std::string& batch_dim = {},
                                              bool fixed = false);

/// The ONNX library's version, for messages.
[[nodiscard]] std::string onnx_version();
#else
[[nodiscard]] inline io::onnx_graph read_onnx_graph(const std::string& path,
                                                    const std::string& /*batch_dim*/ = {},
                                                    bool /*fixed*/ = false) {
    throw perfcast::error(onnx_missing_message(path));
}
[[nodiscard]] inline io::onnx_graph parse_onnx_graph(std::string_view /*bytes*/,
                                                     const std::string& path,
                                                     const std::string& /*batch_dim*/ = {},
                                                     bool /*fixed*/ = false) {
    throw perfcast::error(onnx_missing_message(path));
}
[[nodiscard]] inline std::string onnx_version() { return "none"; }
#endif

/// Whether `path` names an ONNX graph (by its extension, .onnx in any case).
[[nodiscard]] inline bool is_onnx_path(std::string_view path) {
    return io::has_extension(path, ".onnx");
}

/// The ONNX graph at `path` imported: the model and its summary. A graph whose batch is its
/// inputs' first dimension (no symbolic one) and does not import at other batches (a Reshape to
/// the exported size, a weight passed as an input of the same first dimension) is imported at
/// its own sizes, every line fixed=1, and the summary says so. `options`: how the graph maps
/// (attention subgraphs fused or node by node).
[[nodiscard]] inline model import_onnx(const std::string& path, const std::string& batch_dim,
                                       io::onnx_import& summary,
                                       const std::string_view* bytes = nullptr,
                                       const io::onnx_import_options& options = {}) {
    const auto read = [&](bool fixed) {
        return bytes != nullptr ? parse_onnx_graph(*bytes, path, batch_dim, fixed)
                                : read_onnx_graph(path, batch_dim, fixed);
    };
    io::onnx_graph g = read(false);
    const bool numeric = !g.batch_symbol.empty() && g.batch_symbol.front() != '\'';
    if (!numeric) return io::model_of(g, &summary, options);
    try {
        model m = io::model_of(g, &summary, options);
        // Mapped is not enough: each line must hold at other batches too (a weight passed as
        // an input of the graph's first dimension maps to B,2 + 2,2, which fails at batch 3).
        for (const std::int64_t b : io::onnx_probe_batches) {
            for (const node& n : m.nodes) {
                try {
                    if (n.is_transfer()) {
                        (void)transfer_bytes(n, b);  // sizes, no op
                    } else {
                        (void)instantiate(n, b);
                    }
                } catch (const perfcast::error& e) {
                    perfcast::detail::rethrow_for_node(e, n, b);
                }
            }
        }
        return m;
    } catch (const perfcast::error& e) {
        const std::string why = e.what();
        model m = io::model_of(read(true), &summary, options);
        summary.approximations.push_back("the batch (" + g.batch_symbol +
                                         ") does not vary in this graph, imported at its own "
                                         "sizes (every line fixed=1): " +
                                         why);
        return m;
    }
}

/// The model at `path`: a model file, or an ONNX graph imported (its summary on `err`).
[[nodiscard]] inline model read_model_input(const std::string& path, std::ostream& err,
                                            const std::string& batch_dim = {},
                                            const io::onnx_import_options& options = {}) {
    if (!is_onnx_path(path)) return io::read_model_file(path);
    io::onnx_import summary;
    model m = import_onnx(path, batch_dim, summary, nullptr, options);
    err << io::import_summary(summary);
    return m;
}

}  // namespace perfcast::cli
