// libFuzzer target: the serving inputs' CSV readers (io/histogram.hpp) on arbitrary bytes: the
// same bytes as a batch-size histogram (`whatif --bs-hist FILE`) and as a request trace
// (io::read_trace_file / trace_reader, which the library's `simulate` streams).
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_histogram.cpp -o fuzz_histogram
//   ./fuzz_histogram -max_total_time=60 tests/fuzz/corpus/histogram
//
// Any input must either give what the readers promise or throw perfcast::error: a histogram
// whose shares are finite and sum to 1 and whose mean lies between its smallest and largest
// batch size; a trace whose times start at 0, never go back and are finite, and whose batch
// sizes are in 1..max_batch_size. A broken promise aborts (libFuzzer records the input).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <perfcast/batching.hpp>
#include <perfcast/io/histogram.hpp>

#include "fuzz_support.hpp"

using perfcast_fuzz::expect;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const perfcast::batch_distribution d = perfcast::io::parse_bs_histogram(text, "fuzz");
        double shares = 0;
        for (std::size_t i = 0; i < d.bins().size(); ++i) {
            const double s = d.share(i);
            expect(std::isfinite(s) && s >= 0 && s <= 1);
            shares += s;
        }
        expect(std::abs(shares - 1.0) < 1e-9);
        const double mean = d.mean();
        expect(std::isfinite(mean) && mean >= d.min() * (1 - 1e-12) &&
               mean <= d.max() * (1 + 1e-12));
    } catch (const perfcast::error&) {
    }
    try {
        const auto arrivals = perfcast::io::parse_trace(text, "fuzz");
        double previous = 0;
        for (std::size_t i = 0; i < arrivals.size(); ++i) {
            const double t = arrivals[i].time.in(perfcast::units::s);
            expect(std::isfinite(t) && t >= previous && (i > 0 || t == 0));
            expect(arrivals[i].bs >= 1 && arrivals[i].bs <= perfcast::max_batch_size);
            previous = t;
        }
    } catch (const perfcast::error&) {
    }
    return 0;
}
