// examples/perfcast/cmd_import.cpp: `perfcast import MODEL.onnx [-o FILE] [--batch-dim NAME]`.
//
// Reads an ONNX graph (onnx_source.hpp: the system's ONNX library and its shape inference),
// maps it to model-file lines (include/perfcast/io/onnx_graph.hpp) and writes them, each with a
// comment naming its ONNX node, to FILE or standard output; the summary (ops mapped, dropped,
// costed as generic, approximations) goes to standard error. `perfcast whatif --model` reads
// the written file, or the .onnx itself, to the same prediction. docs/import.md.

#include <array>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/io/model_file.hpp>
#include <perfcast/io/onnx_graph.hpp>
#include <perfcast/io/output_file.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "onnx_source.hpp"

namespace perfcast::cli {

namespace import_detail {
inline constexpr std::array<option, 4> options{{
    {"output", "FILE", "write the model file here (also -o FILE; default: standard output)"},
    {"batch-dim", "NAME", "the symbolic input dimension that is the batch B (default: the first)"},
    {"unfused-attention", "",
     "attention subgraphs node by node (default: one fused attention line each)"},
    {"unfused-qdq", "",
     "QuantizeLinear / DequantizeLinear nodes priced as written (default: a GEMM between them "
     "one integer GEMM)"},
}};
}  // namespace import_detail

std::string import_usage() {
    return "Usage: perfcast import MODEL.onnx [-o FILE] [--batch-dim NAME] "
           "[--unfused-attention] [--unfused-qdq]\n\n"
           "Import an ONNX graph as a perfcast model file: one line per op, sized by the batch B\n"
           "(the graph's symbolic or first input dimension), each with a comment naming its ONNX\n"
           "node. The summary (ops mapped, dropped, costed by bytes) goes to standard error.\n"
           "`perfcast whatif --model` reads the file or the .onnx itself. docs/import.md.\n\n" +
           options_text(import_detail::options);
}

int run_import(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    std::vector<std::string_view> words(args.begin(), args.end());
    for (auto& w : words) {
        if (w == "-o") w = "--output";
    }
    const parsed_args a = parse_args(words, import_detail::options);
    if (a.has("help")) {
        out << import_usage();
        return exit_ok;
    }
    if (a.positional.size() != 1) {
        throw usage_error(a.positional.empty() ? "needs an ONNX file (MODEL.onnx)"
                                               : "unexpected argument '" + a.positional[1] + "'");
    }
    const std::optional<io::output_file> target = output_from_args(a, "output");
    const std::string& path = a.positional.front();
    if (target) refuse_output_over_input(*target, path);
    io::onnx_import r;
    const model m = import_onnx(
        path, a.value_or("batch-dim", ""), r, nullptr,
        {.fuse_attention = !a.has("unfused-attention"), .fuse_qdq = !a.has("unfused-qdq")});
    (void)m;  // read back: what is written is a model file whatif accepts
    if (target) {
        io::write_output(*target, r.text);
    } else {
        out << r.text;
    }
    err << io::import_summary(r);
    return exit_ok;
}

}  // namespace perfcast::cli
