// Throughput of reading profiles and the time of a calibration, on the real 910B1 profile
// (tests/data/profiles/kernel_details_910B1_train.csv, 591 rows of 33 columns) repeated:
//   - parsing ~20 MB of kernel_details text in memory (bytes/s = MB/s of input), with the bare
//     CSV reader for reference;
//   - calibrating on 10,000 rows (the profile's mappable rows repeated), default options.
//   - reading a ~100 MB msprof op_summary from a file through a stream, end to end.
// The data are repeats of one profile, so the fit itself is the same as on the file; only the
// time per row is measured.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/csv.hpp>
#include <perfcast/profile/kernel_details.hpp>

#include "bench_support.hpp"

// bench/CMakeLists.txt defines it; a build that does not (e.g. Meson) looks for the data from the
// working directory and skips the cases whose file is not there.
#ifndef PERFCAST_SOURCE_DIR
#define PERFCAST_SOURCE_DIR "."
#endif

namespace {

using namespace perfcast;

const std::string profile_910b1 =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";

constexpr std::size_t target_bytes = std::size_t{20} << 20;  // ~20 MB of profile text
constexpr std::size_t calibration_rows = 10'000;

/// The CSV at `path`: its header once, then its data lines repeated to at least `bytes`.
std::optional<std::string> repeated_rows(const std::string& path, std::size_t bytes) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    std::string file = ss.str();
    if (!file.empty() && file.back() != '\n') file += '\n';
    const std::size_t header_end = file.find('\n') + 1;
    const std::string_view body = std::string_view(file).substr(header_end);
    if (body.empty()) return std::nullopt;
    std::string out(file, 0, header_end);
    out.reserve(bytes + file.size());
    while (out.size() < bytes) out += body;
    return out;
}

/// The 910B1 profile's rows repeated to ~20 MB, in memory.
const std::optional<std::string>& big_profile() {
    static const std::optional<std::string> text = repeated_rows(profile_910b1, target_bytes);
    return text;
}

void bm_profile_parse_kernel_details(benchmark::State& state) {
    const auto& text = big_profile();
    if (!text) return state.SkipWithError(("no " + profile_910b1).c_str());
    std::size_t rows = 0;
    for (auto _ : state) {
        profile::kernel_details_reader r(std::string_view(*text), "big.csv");
        profile::kernel_row row;
        rows = 0;
        while (r.next(row)) ++rows;
        benchmark::DoNotOptimize(rows);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(text->size()));
    state.counters["rows"] = static_cast<double>(rows);
    state.counters["MB"] = static_cast<double>(text->size()) / 1e6;
}
BENCHMARK(bm_profile_parse_kernel_details)->Unit(benchmark::kMillisecond);

void bm_profile_parse_csv_only(benchmark::State& state) {
    const auto& text = big_profile();
    if (!text) return state.SkipWithError(("no " + profile_910b1).c_str());
    std::size_t fields = 0;
    for (auto _ : state) {
        profile::csv_reader r(std::string_view(*text), "big.csv");
        fields = 0;
        while (r.next()) fields += r.record().size();
        benchmark::DoNotOptimize(fields);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(text->size()));
}
BENCHMARK(bm_profile_parse_csv_only)->Unit(benchmark::kMillisecond);

/// A real msprof op_summary (tests/data/profiles/real/msprof_helix_2026_PROF, 9 rows of the
/// current layout) with its rows repeated to ~100 MB, written once to a temporary file, and read
/// from that file through a stream: the end-to-end figure of issue 12 (>= 200 MB/s for a 100 MB
/// op_summary). The file is in the page cache after the first read: this measures the reader,
/// not the disk.
const std::string op_summary_helix = PERFCAST_SOURCE_DIR
    "/tests/data/profiles/real/msprof_helix_2026_PROF/mindstudio_profiler_output/"
    "op_summary_20260511093035.csv";

const std::optional<std::string>& big_op_summary_file() {
    static const std::optional<std::string> path = perfcast_bench::written_to_temp(
        repeated_rows(op_summary_helix, std::size_t{100} * 1000 * 1000),
        "perfcast_bench_op_summary_100mb.csv");
    return path;
}

void bm_profile_read_op_summary_file_100mb(benchmark::State& state) {
    const auto& path = big_op_summary_file();
    if (!path) return state.SkipWithError(("cannot write a copy of " + op_summary_helix).c_str());
    std::size_t rows = 0;
    for (auto _ : state) {
        std::ifstream in(*path, std::ios::binary);
        profile::kernel_reader_options o;
        o.several_devices = true;
        profile::kernel_details_reader r(in, *path, o);
        profile::kernel_row row;
        rows = 0;
        while (r.next(row)) ++rows;
        benchmark::DoNotOptimize(rows);
    }
    const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(*path));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes);
    state.counters["rows"] = static_cast<double>(rows);
    state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(bm_profile_read_op_summary_file_100mb)->Unit(benchmark::kMillisecond)->Iterations(3);

/// The sequence context of every row of the ~20 MB profile (profile/context.hpp): what
/// `perfcast validate` and `calibrate` do after reading. The rows are read once, outside the loop;
/// each iteration annotates a fresh copy, made with the timer paused.
void bm_profile_annotate_context(benchmark::State& state) {
    const auto& text = big_profile();
    if (!text) return state.SkipWithError(("no " + profile_910b1).c_str());
    const auto rows = profile::parse_kernel_details(*text, "big.csv").rows;
    std::vector<profile::kernel_row> copy;
    for (auto _ : state) {
        state.PauseTiming();
        copy = rows;  // the last iteration's rows are freed here too, untimed
        state.ResumeTiming();
        profile::annotate_context(copy, chips::ascend910b1);
        benchmark::DoNotOptimize(copy.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(rows.size()));
    state.counters["rows"] = static_cast<double>(rows.size());
}
BENCHMARK(bm_profile_annotate_context)->Unit(benchmark::kMillisecond);

void bm_profile_calibrate_10k_rows(benchmark::State& state) {
    static const std::optional<std::vector<profile::measured_op>> rows =
        []() -> std::optional<std::vector<profile::measured_op>> {
        std::ifstream f(profile_910b1, std::ios::binary);
        if (!f) return std::nullopt;
        auto read = profile::read_kernel_details(f, profile_910b1).rows;
        profile::annotate_context(read, chips::ascend910b1);
        const auto one = profile::measured_ops(chips::ascend910b1, read);
        if (one.empty()) return std::nullopt;
        std::vector<profile::measured_op> out;
        out.reserve(calibration_rows);
        while (out.size() < calibration_rows) out.push_back(one[out.size() % one.size()]);
        return out;
    }();
    if (!rows) return state.SkipWithError(("no mappable rows in " + profile_910b1).c_str());
    int evaluations = 0;
    for (auto _ : state) {
        const auto res = profile::calibrate(chips::ascend910b1, *rows);
        evaluations = res.evaluations;
        benchmark::DoNotOptimize(res.evaluations);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(rows->size()));
    state.counters["rows"] = static_cast<double>(rows->size());
    state.counters["evaluations"] = evaluations;
}
BENCHMARK(bm_profile_calibrate_10k_rows)->Unit(benchmark::kMillisecond);

}  // namespace
