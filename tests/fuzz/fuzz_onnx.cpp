// libFuzzer target: the ONNX importer (examples/perfcast/onnx_source.cpp over the system's ONNX
// library, then include/perfcast/io/onnx_graph.hpp's mapping and the model-file reader), as
// `perfcast import` runs it. Built only when ONNX is found (tests/fuzz/CMakeLists.txt).
//
//   build/fuzz/tests/fuzz/fuzz_onnx -max_total_time=600 /tmp/corpus_onnx
//
// Seeds: corpus/onnx, copies of tests/data/onnx/*.onnx (DLRM, DeepFM, the bad inputs; rebuilt by
// tests/data/onnx/make_models.py). Any input must import or throw perfcast::error; a crash,
// a sanitizer report or another exception is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <perfcast/error.hpp>
#include <perfcast/io/onnx_graph.hpp>

#include "../../examples/perfcast/onnx_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        perfcast::io::onnx_import summary;
        const perfcast::model m = perfcast::cli::import_onnx("fuzz.onnx", "", summary, &bytes);
        (void)perfcast::io::import_summary(summary);
        (void)m;
    } catch (const perfcast::error&) {
        // a clear error: expected for most inputs
    }
    return 0;
}
