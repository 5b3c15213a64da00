// libFuzzer target: the JSON reader, the timeline reader and msprof's device info reader
// (profile/device_info.hpp: JSON too) on arbitrary bytes.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_timeline.cpp -o fuzz_timeline
//   ./fuzz_timeline -max_total_time=60 tests/fuzz/corpus/timeline
//
// Any input must either read or throw perfcast::error (parse_error derives from it); the clock
// summary of whatever was read must be finite, and so must a device info's clock.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <perfcast/io/json_reader.hpp>
#include <perfcast/profile/device_info.hpp>
#include <perfcast/profile/timeline.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        perfcast::io::json_cursor c(text, "fuzz");
        c.skip_value();
        c.end();
    } catch (const perfcast::error&) {
    }
    try {
        const perfcast::profile::timeline t = perfcast::profile::parse_timeline(text, "fuzz");
        (void)perfcast::profile::host_api_totals(t);
        if (!t.device_tasks.empty()) {
            const auto c = perfcast::profile::clock_over(t, t.device_tasks.front().start,
                                                         t.device_tasks.back().start);
            if (c && !std::isfinite(c->mean.in(perfcast::units::MHz))) std::abort();
        }
    } catch (const perfcast::error&) {
    }
    try {
        const perfcast::profile::device_info d = perfcast::profile::parse_device_info(text, "fuzz");
        if (d.ai_core_clock && !std::isfinite(d.ai_core_clock->in(perfcast::units::MHz)))
            std::abort();
        (void)perfcast::profile::info_chip_evidence(d);
    } catch (const perfcast::error&) {
    }
    return 0;
}
