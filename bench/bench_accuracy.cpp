// How fast and how right the model is on every measured data set the project ships: each
// benchmark times `profile::score_rows` over a data set and reports the model's error as counters
// (mape_pct, median_pct, p90_pct: absolute percentage error over the scored rows; rows).
// Calibration, where a case has one, runs once outside the timed loop. docs/validation.md has
// the same figures from the perfcast command.
//   910B1 profile (tests/data/profiles/kernel_details_910B1_train.csv): every mappable row
//   uncalibrated; its 13 GEMMs uncalibrated; hold-out 0.3, seed 1, calibrated on the rest, scored
//   on the held-out AI_CORE and AI_VECTOR_CORE rows (as `perfcast validate --holdout 0.3
//   --seed 1 --tasks AI_CORE,AI_VECTOR_CORE`); the same repeated over seeds 1-16 (timing the
//   whole study).
//   A100 (vidur's Llama-2-7B profile, tests/data/gpu/, converted by examples/vidur.hpp): the
//   test split uncalibrated and calibrated on the fit split; Qwen-72B's rows with that same
//   calibration (another model's shapes). Data the model was not tuned on (docs/validation.md,
//   "Unseen models and an unseen GPU"): vidur's Qwen-72B on the H100 and Llama-2-70B on the A40
//   (a preset written from its datasheet), uncalibrated. Attention, uncalibrated: vidur's A100
//   Llama-2-7B rows of degrees 4 and 8, its A100 Llama-3-8B rows (FlashInfer) and its A40
//   Llama-2-7B rows held out.
#include <benchmark/benchmark.h>

#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/profile/validate.hpp>

#include "../examples/vidur.hpp"

// bench/CMakeLists.txt defines it; a build that does not (e.g. Meson) looks for the data from the
// working directory and skips the cases whose file is not there.
#ifndef PERFCAST_SOURCE_DIR
#define PERFCAST_SOURCE_DIR "."
#endif

namespace {

using namespace perfcast;

const std::string profile_910b1 =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";
const std::string vidur_a100 = PERFCAST_SOURCE_DIR "/tests/data/gpu/vidur_a100_llama2-7b_mlp.csv";

bool readable(const std::string& path) { return std::ifstream(path).good(); }

/// A data set to score: rows, the chip, the calibration to score with.
struct scored_set {
    chip c;
    std::vector<profile::kernel_row> rows;
    profile::calibration cal;
};

template <class Filter>
void run(benchmark::State& state, const scored_set& s, Filter keep) {
    profile::error_report rep;
    for (auto _ : state) {
        rep = profile::score_rows(s.c, s.rows, s.cal, keep);
        benchmark::DoNotOptimize(rep.rows.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(s.rows.size()));
    state.counters["rows"] = static_cast<double>(rep.overall.rows);
    state.counters["mape_pct"] = 100.0 * rep.overall.mape;
    state.counters["median_pct"] = 100.0 * rep.overall.median_ape;
    state.counters["p90_pct"] = 100.0 * rep.overall.p90_ape;
}

bool all_rows(const profile::kernel_row&) { return true; }

const std::optional<scored_set>& b1_uncalibrated() {
    static const std::optional<scored_set> s = []() -> std::optional<scored_set> {
        if (!readable(profile_910b1)) return std::nullopt;
        // As the perfcast command: rows with their sequence context.
        auto rows = profile::read_kernel_details_file(profile_910b1).rows;
        profile::annotate_context(rows, chips::ascend910b1);
        return scored_set{chips::ascend910b1, std::move(rows), {}};
    }();
    return s;
}

void bm_accuracy_910b1_all_uncalibrated(benchmark::State& state) {
    const auto& s = b1_uncalibrated();
    if (!s) return state.SkipWithError(("no " + profile_910b1).c_str());
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_910b1_all_uncalibrated);

void bm_accuracy_910b1_gemm_uncalibrated(benchmark::State& state) {
    const auto& s = b1_uncalibrated();
    if (!s) return state.SkipWithError(("no " + profile_910b1).c_str());
    run(state, *s, [](const profile::kernel_row& r) { return profile::is_gemm_type(r.op_type); });
}
BENCHMARK(bm_accuracy_910b1_gemm_uncalibrated);

void bm_accuracy_910b1_holdout30_seed1(benchmark::State& state) {
    static const std::optional<scored_set> s = []() -> std::optional<scored_set> {
        if (!readable(profile_910b1)) return std::nullopt;
        const chip& c = chips::ascend910b1;
        auto rows = profile::read_kernel_details_file(profile_910b1).rows;
        profile::annotate_context(rows, c);
        const auto split = profile::split_holdout(rows, 0.3, 1);
        // As the perfcast command: fitted on every fit row, scored on the filtered test rows.
        return scored_set{c, split.test,
                          profile::calibrate(c, profile::measured_ops(c, split.fit)).fitted};
    }();
    if (!s) return state.SkipWithError(("no " + profile_910b1).c_str());
    run(state, *s, [](const profile::kernel_row& r) {
        return r.task_text == "AI_CORE" || r.task_text == "AI_VECTOR_CORE";
    });
}
BENCHMARK(bm_accuracy_910b1_holdout30_seed1);

/// The hold-out repeated over seeds 1-16 (as `perfcast validate --holdout 0.3 --seeds 1-16
/// --tasks AI_CORE,AI_VECTOR_CORE`): one iteration is sixteen calibrations and scorings, so it
/// times the whole study; the counters are the means over the seeds (mean_*) and the pooled
/// held-out rows (rows, mape_pct).
void bm_accuracy_910b1_holdout30_seeds1_16(benchmark::State& state) {
    if (!readable(profile_910b1)) return state.SkipWithError(("no " + profile_910b1).c_str());
    const chip& c = chips::ascend910b1;
    auto rows = profile::read_kernel_details_file(profile_910b1).rows;
    profile::annotate_context(rows, c);
    const auto ai = [](const profile::kernel_row& r) {
        return r.task_text == "AI_CORE" || r.task_text == "AI_VECTOR_CORE";
    };
    profile::holdout_study st;
    for (auto _ : state) {
        st = profile::repeated_holdout(c, rows, 0.3, 1, 16, ai);
        benchmark::DoNotOptimize(st.runs.data());
    }
    state.counters["rows"] = static_cast<double>(st.pooled.overall.rows);
    state.counters["mape_pct"] = 100.0 * st.pooled.overall.mape;
    state.counters["mean_mape_pct"] = 100.0 * st.mean_mape;
    state.counters["mean_median_pct"] = 100.0 * st.mean_median_ape;
    state.counters["mean_p90_pct"] = 100.0 * st.mean_p90_ape;
}
BENCHMARK(bm_accuracy_910b1_holdout30_seeds1_16)->Iterations(1)->Unit(benchmark::kSecond);

/// The A100 test split, scored with the preset's defaults and calibrated on the fit split.
struct a100_sets {
    scored_set uncalibrated;
    scored_set calibrated;
};

const std::optional<a100_sets>& a100_test() {
    static const std::optional<a100_sets> sets = []() -> std::optional<a100_sets> {
        if (!readable(vidur_a100)) return std::nullopt;
        std::ifstream f(vidur_a100, std::ios::binary);
        const auto split = vidur::split(vidur::read_mlp(f, vidur_a100));
        const auto rows_of = [](const std::vector<vidur::mlp_row>& m, const char* name) {
            std::ostringstream out;
            (void)vidur::write_profile(out, m);
            return profile::parse_kernel_details(out.str(), name).rows;
        };
        const chip& c = chips::a100_80gb_sxm;
        const auto fit = rows_of(split.fit, "fit.csv");
        const auto test = rows_of(split.test, "test.csv");
        const auto cal = profile::calibrate(c, profile::measured_ops(c, fit)).fitted;
        return a100_sets{{c, test, {}}, {c, test, cal}};
    }();
    return sets;
}

void bm_accuracy_a100_test_uncalibrated(benchmark::State& state) {
    const auto& s = a100_test();
    if (!s) return state.SkipWithError(("no " + vidur_a100).c_str());
    run(state, s->uncalibrated, all_rows);
}
BENCHMARK(bm_accuracy_a100_test_uncalibrated)->Unit(benchmark::kMillisecond);

void bm_accuracy_a100_test_calibrated(benchmark::State& state) {
    const auto& s = a100_test();
    if (!s) return state.SkipWithError(("no " + vidur_a100).c_str());
    run(state, s->calibrated, all_rows);
}
BENCHMARK(bm_accuracy_a100_test_calibrated)->Unit(benchmark::kMillisecond);

/// The measurements of a vidur file of tests/data/gpu/ (its median columns) that `keep` accepts,
/// read by `read` (vidur::read_mlp or read_attention), on chip `c` (its SMs as Block Dim), scored
/// with `cal`; nothing when the file is not there.
template <class Read, class Keep>
std::optional<scored_set> vidur_rows_set(const std::string& file, const chip& c, Read read,
                                         Keep keep, const profile::calibration& cal = {}) {
    const std::string path = PERFCAST_SOURCE_DIR "/tests/data/gpu/" + file;
    if (!readable(path)) return std::nullopt;
    std::ifstream f(path, std::ios::binary);
    auto rows = read(f, path);
    std::erase_if(rows, [&](const auto& r) { return !keep(r); });
    std::ostringstream out;
    (void)vidur::write_profile(out, rows, c.vector.cores);
    return scored_set{c, profile::parse_kernel_details(out.str(), file).rows, cal};
}

/// Every row of a vidur MLP file of tests/data/gpu/ on chip `c`, scored with `cal`.
std::optional<scored_set> vidur_set(const std::string& file, const chip& c,
                                    const profile::calibration& cal = {}) {
    return vidur_rows_set(
        file, c,
        [](std::istream& in, const std::string& path) { return vidur::read_mlp(in, path); },
        [](const vidur::mlp_row&) { return true; }, cal);
}

/// The rows of a vidur attention file of tests/data/gpu/ that `keep` accepts, on chip `c`,
/// uncalibrated.
template <class Keep>
std::optional<scored_set> vidur_attention_set(const std::string& file, const chip& c, Keep keep) {
    return vidur_rows_set(
        file, c,
        [](std::istream& in, const std::string& path) { return vidur::read_attention(in, path); },
        keep);
}

void bm_accuracy_a100_qwen72b_calibrated_on_llama2_7b(benchmark::State& state) {
    static const std::optional<scored_set> s = [] {
        const auto& a = a100_test();
        return a ? vidur_set("vidur_a100_qwen-72b_mlp_median.csv", chips::a100_80gb_sxm,
                             a->calibrated.cal)
                 : std::nullopt;
    }();
    if (!s) return state.SkipWithError("no vidur A100 files");
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_a100_qwen72b_calibrated_on_llama2_7b)->Unit(benchmark::kMillisecond);

void bm_accuracy_h100_qwen72b_uncalibrated(benchmark::State& state) {
    static const auto s = vidur_set("vidur_h100_qwen-72b_mlp_median.csv", chips::h100_sxm);
    if (!s) return state.SkipWithError("no vidur_h100_qwen-72b_mlp_median.csv");
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_h100_qwen72b_uncalibrated)->Unit(benchmark::kMillisecond);

void bm_accuracy_a40_llama2_70b_uncalibrated(benchmark::State& state) {
    static const auto s = vidur_set("vidur_a40_llama2-70b_mlp_median.csv", chips::a40_pcie);
    if (!s) return state.SkipWithError("no vidur_a40_llama2-70b_mlp_median.csv");
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_a40_llama2_70b_uncalibrated)->Unit(benchmark::kMillisecond);

// Attention (docs/validation.md, "Attention on the A100: vidur's paged kernels", "... FlashInfer's
// plan" and "Attention on the A40: an unseen GPU"), uncalibrated: the A100 Llama-2-7B rows of the
// degrees held out from the Ampere attention constants' fit (4 and 8), every A100 Llama-3-8B row
// (FlashInfer's kernels) and the A40 rows held out from the reading that set its softmax rate.

void bm_accuracy_a100_attention_degrees_4_8_uncalibrated(benchmark::State& state) {
    static const auto s =
        vidur_attention_set("vidur_a100_llama2-7b_attention.csv", chips::a100_80gb_sxm,
                            [](const vidur::attention_row& a) { return a.tp >= 4; });
    if (!s) return state.SkipWithError("no vidur_a100_llama2-7b_attention.csv");
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_a100_attention_degrees_4_8_uncalibrated)->Unit(benchmark::kMillisecond);

void bm_accuracy_a100_llama3_8b_flashinfer_uncalibrated(benchmark::State& state) {
    static const auto s =
        vidur_attention_set("vidur_a100_llama3-8b_attention.csv", chips::a100_80gb_sxm,
                            [](const vidur::attention_row&) { return true; });
    if (!s) return state.SkipWithError("no vidur_a100_llama3-8b_attention.csv");
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_a100_llama3_8b_flashinfer_uncalibrated)->Unit(benchmark::kMillisecond);

void bm_accuracy_a40_attention_held_out_uncalibrated(benchmark::State& state) {
    // Lines 1082-2109 of the file (tests/data/README.md).
    static const auto s =
        vidur_attention_set("vidur_a40_llama2-7b_attention.csv", chips::a40_pcie,
                            [](const vidur::attention_row& a) { return a.line >= 1082; });
    if (!s) return state.SkipWithError("no vidur_a40_llama2-7b_attention.csv");
    run(state, *s, all_rows);
}
BENCHMARK(bm_accuracy_a40_attention_held_out_uncalibrated)->Unit(benchmark::kMillisecond);

}  // namespace
