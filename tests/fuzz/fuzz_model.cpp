// libFuzzer target: the model-file reader on arbitrary bytes, then every op evaluated at a small
// and a huge batch (the shape and byte arithmetic must report "too large", never overflow).
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_model.cpp -o fuzz_model
//   ./fuzz_model -max_total_time=60 tests/fuzz/corpus/model
//
// Any input must either give a model whose nodes evaluate or throw perfcast::error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/model_file.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const perfcast::model m = perfcast::io::parse_model(text, "fuzz.model");
        for (const std::int64_t batch : {std::int64_t{1}, std::int64_t{8}, std::int64_t{1} << 40}) {
            for (const perfcast::node& n : m.nodes) {
                try {
                    (void)perfcast::evaluate_at(perfcast::chips::ascend910b1, n,
                                                perfcast::batch_size{batch},
                                                perfcast::core_count{24});
                } catch (const perfcast::error&) {
                }
            }
        }
    } catch (const perfcast::error&) {
    }
    return 0;
}
