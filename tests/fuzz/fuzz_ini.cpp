// libFuzzer target: the CANN platform_config reader and chip_from_ini on arbitrary bytes.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_ini.cpp -o fuzz_ini
//   ./fuzz_ini -max_total_time=60 tests/fuzz/corpus/ini
//
// Any input must either give a valid chip or throw perfcast::error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <perfcast/chip.hpp>
#include <perfcast/io/ini.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto dup :
         {perfcast::io::ini_duplicates::error, perfcast::io::ini_duplicates::last_wins}) {
        try {
            perfcast::io::ini_options opt;
            opt.duplicates = dup;
            opt.max_line_bytes = 4096;
            const auto f = perfcast::io::parse_ini(text, "fuzz.ini", opt);
            const auto p = perfcast::io::platform_from_ini(f);
            (void)perfcast::validate(p.spec);  // must hold for any chip that came out
        } catch (const perfcast::error&) {
        }
    }
    return 0;
}
