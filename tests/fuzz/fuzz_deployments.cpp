// libFuzzer target: the measured-deployments reader (io/deployments_file.hpp, `perfcast
// validate-deployments` / `calibrate-deployments --deployments FILE`) on arbitrary bytes, and
// every row it gives predicted and scored as `validate-deployments --knobs none` does.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       -DPERFCAST_SOURCE_DIR='"'$PWD'"' tests/fuzz/fuzz_deployments.cpp -o fuzz_deployments
//   ./fuzz_deployments -max_total_time=60 tests/fuzz/corpus/deployments
//
// Model paths are relative to tests/data/deployments/dlrm_a100 (the seeds name the shipped
// DLRM, NCF and CTR models from there). Any input must either throw perfcast::error or give
// rows whose predictions are finite and > 0 and whose errors against the measurements are
// finite; anything else aborts (libFuzzer records the input).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <perfcast/deployment.hpp>
#include <perfcast/io/deployments_file.hpp>

#include "fuzz_support.hpp"

#ifndef PERFCAST_SOURCE_DIR
#error "PERFCAST_SOURCE_DIR: the repository's root, where the seeds' model files are"
#endif

using perfcast_fuzz::expect;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto rows = perfcast::io::parse_deployments(
            text, PERFCAST_SOURCE_DIR "/tests/data/deployments/dlrm_a100", "fuzz.csv");
        const perfcast::deployment_validation v = perfcast::score_deployments(rows);
        expect(v.rows.size() == rows.size());
        for (const perfcast::deployment_score& s : v.rows) {
            const double qps = s.predicted.samples_per_s;
            const double ms = s.predicted.latency.in(perfcast::units::ms);
            expect(std::isfinite(qps) && qps > 0);
            expect(std::isfinite(ms) && ms > 0);
            if (s.throughput_error) expect(std::isfinite(*s.throughput_error));
            if (s.latency_error) expect(std::isfinite(*s.latency_error));
        }
    } catch (const perfcast::error&) {
    }
    return 0;
}
