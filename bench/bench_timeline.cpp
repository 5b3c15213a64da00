// Throughput of reading a timeline: the real torch_npu trace_view.json of January 2025
// (tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt, 723 events, 189 KB) with its
// event list repeated to ~20 MB, parsed from memory into spans (bytes/s = MB/s of input). The
// target of issue 12 is 100 MB/s for a timeline.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <perfcast/profile/timeline.hpp>

#include "bench_support.hpp"

#ifndef PERFCAST_SOURCE_DIR
#define PERFCAST_SOURCE_DIR "."
#endif

namespace {

const std::string trace_2025 = PERFCAST_SOURCE_DIR
    "/tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    "trace_view.json";

constexpr std::size_t target_bytes = std::size_t{20} << 20;

/// "[" + the file's events + ("," + the events) ... + "]": a valid list of at least `bytes`.
std::optional<std::string> repeated_events(std::size_t bytes) {
    std::ifstream f(trace_2025, std::ios::binary);
    if (!f) return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string file = ss.str();
    const auto b = file.find('[');
    const auto e = file.rfind(']');
    if (b == std::string::npos || e == std::string::npos || e <= b) return std::nullopt;
    const std::string_view events = std::string_view(file).substr(b + 1, e - b - 1);
    std::string out = "[";
    out.reserve(bytes + file.size());
    out += events;
    while (out.size() < bytes) {
        out += ',';
        out += events;
    }
    out += ']';
    return out;
}

/// ~20 MB of events, in memory.
const std::optional<std::string>& big_timeline() {
    static const std::optional<std::string> text = repeated_events(target_bytes);
    return text;
}

void bm_timeline_read(benchmark::State& state) {
    const auto& text = big_timeline();
    if (!text) return state.SkipWithError(("no " + trace_2025).c_str());
    std::size_t spans = 0;
    for (auto _ : state) {
        const perfcast::profile::timeline t = perfcast::profile::parse_timeline(*text, "big.json");
        spans = t.device_tasks.size() + t.host_api.size();
        benchmark::DoNotOptimize(spans);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(text->size()));
    state.counters["spans"] = static_cast<double>(spans);
    state.counters["MB"] = static_cast<double>(text->size()) / 1e6;
}
BENCHMARK(bm_timeline_read)->Unit(benchmark::kMillisecond);

/// The same events repeated to ~100 MB, written once to a temporary file and read with
/// read_timeline_file: the end-to-end figure (issue 12: >= 100 MB/s for a 100 MB timeline).
const std::optional<std::string>& big_timeline_file() {
    static const std::optional<std::string> path = perfcast_bench::written_to_temp(
        repeated_events(std::size_t{100} * 1000 * 1000), "perfcast_bench_timeline_100mb.json");
    return path;
}

void bm_timeline_read_file_100mb(benchmark::State& state) {
    const auto& path = big_timeline_file();
    if (!path) return state.SkipWithError(("cannot write a copy of " + trace_2025).c_str());
    std::size_t spans = 0;
    for (auto _ : state) {
        const perfcast::profile::timeline t = perfcast::profile::read_timeline_file(*path);
        spans = t.device_tasks.size() + t.host_api.size();
        benchmark::DoNotOptimize(spans);
    }
    const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(*path));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes);
    state.counters["spans"] = static_cast<double>(spans);
    state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(bm_timeline_read_file_100mb)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
