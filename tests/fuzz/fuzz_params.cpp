// libFuzzer target: the parameters-file reader (`--params FILE`) on arbitrary bytes.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_params.cpp -o fuzz_params
//   ./fuzz_params -max_total_time=60 tests/fuzz/corpus/params
//
// Any input must either give parameters that validate or throw perfcast::error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <perfcast/cost.hpp>
#include <perfcast/io/params_file.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto cal = perfcast::io::parse_params(text);
        (void)perfcast::validate(cal.params);  // must hold for any parameters that came out
    } catch (const perfcast::error&) {
    }
    return 0;
}
