// The model against kernels measured on an H200 (tests/data/gpu/h200/, issue 13 item 6): GEMMs,
// attention and element-wise ops timed by CUPTI through torch.profiler, converted by
// tests/data/gpu/h200/convert.py into the minimal kernel_details subset. docs/validation.md
// ("Measured on an H200") has the figures and the commands that print them.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/head_fit.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/profile/validate.hpp>

#include <cmath>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_h200 {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;

namespace {

const std::string h200_dir = PERFCAST_SOURCE_DIR "/tests/data/gpu/h200/";

/// The converted rows; with `condition` ("hot" / "cold") only the rows measured under it (the
/// converter ends every name with it).
std::vector<profile::kernel_row> h200_rows(std::string_view condition = {},
                                           const std::string& file = "h200_kernels.csv") {
    auto rows = profile::read_kernel_details_file(h200_dir + file).rows;
    if (!condition.empty()) {
        std::erase_if(rows, [&](const profile::kernel_row& r) {
            return !r.name.ends_with(" " + std::string(condition));
        });
    }
    return rows;
}

/// The rows `keep` selects, scored with `c`'s defaults (their place in the file known).
template <class Keep>
profile::error_report uncalibrated(const chip& c, std::vector<profile::kernel_row> rows,
                                   const Keep& keep) {
    profile::annotate_context(rows, c);
    return profile::score_rows(c, rows, {}, keep);
}

profile::error_report uncalibrated(const chip& c, std::vector<profile::kernel_row> rows) {
    return uncalibrated(c, std::move(rows), [](const profile::kernel_row&) { return true; });
}

double peak_bf16_flops(const chip& c) {
    return 2.0 * c.cube.ops_per_cycle_for(dtype::bf16) * static_cast<double>(c.cube.cores) *
           c.cube.clock.in(units::Hz);
}

}  // namespace

TEST_CASE("H200 measurements: 602 rows of 20 op types, every one mapped and scored") {
    const auto rows = h200_rows();
    CHECK(rows.size() == 602);
    std::set<std::string> types;
    for (const auto& r : rows) types.insert(r.op_type);
    CHECK(types.size() == 20);
    CHECK(h200_rows("hot").size() + h200_rows("cold").size() == rows.size());
    const auto rep = uncalibrated(chips::h200_sxm, rows);
    CHECK(rep.overall.rows == 602);  // none left out as unmappable
    // The repeat run (the same script again, 50 s later) has the same configurations.
    const auto again = h200_rows({}, "h200_kernels_run2.csv");
    REQUIRE(again.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) CHECK(again[i].name == rows[i].name);
}

TEST_CASE("the Hopper heads are what the head fit finds on the H200 rows") {
    // examples/fit_heads on the hot and cold halves as two profiles (docs/validation.md): the
    // preset's figures are its output as printed (0.01 us, 0.001 us per SM), so they must be
    // within that print's rounding of the fit; a model change that moves the fit shows here.
    const chip& c = chips::h200_sxm;
    const duration max_body{1.0, units::us};
    for (const engine e : {engine::cube, engine::vector}) {
        CAPTURE(static_cast<int>(e));
        const std::vector<std::vector<profile::head_row>> profiles{
            profile::head_rows(c, profile::core_ops(c, h200_rows("hot")), e, max_body),
            profile::head_rows(c, profile::core_ops(c, h200_rows("cold")), e, max_body)};
        const auto f = profile::fit_head(profiles);
        const bool cube = e == engine::cube;
        const overhead_spec& o = chips::hopper_overheads;
        const double launch = (cube ? o.launch : o.vector_launch).in(units::us);
        const double per_core = (cube ? o.per_core : o.vector_per_core).in(units::us);
        CHECK(std::abs(f.launch.in(units::us)-launch) <= 0.005 + 1e-9);
        CHECK(std::abs(f.per_core.in(units::us)-per_core) <= 0.0005 + 1e-9);
    }
    // The load latency: fit_heads searches [0, 1] us in steps of 0.01 us (chips/nvidia.hpp); here a
    // search in steps of 0.1 us must land within one step of the preset, and the preset must beat
    // its neighbours at the fine search's steps (the full search is 101 head fits: too slow for
    // the sanitizer builds). A fill's head-bound rows (0.67-0.90 us) are what tell it apart.
    const std::vector<profile::chip_rows> halves{{c, profile::core_ops(c, h200_rows("hot"))},
                                                 {c, profile::core_ops(c, h200_rows("cold"))}};
    const double preset = chips::hopper_overheads.load_latency.in(units::us);
    const auto coarse = profile::fit_load_latency(halves, duration{1.0, units::us}, max_body, 10);
    CHECK(std::abs(coarse.latency.in(units::us)-preset) <= 0.1 + 1e-9);
    const auto objective_at = [&](double latency_us) {
        std::vector<std::vector<profile::head_row>> rows;
        for (profile::chip_rows h : halves) {
            h.c.overhead.load_latency = duration{latency_us, units::us};
            rows.push_back(profile::head_rows(h.c, h.rows, engine::vector, max_body));
        }
        return profile::fit_head(rows);
    };
    const auto at = objective_at(preset);
    CHECK(at.objective <= objective_at(preset - 0.01).objective);
    CHECK(at.objective <= objective_at(preset + 0.01).objective);
    CHECK(std::abs(at.launch.in(units::us)-chips::hopper_overheads.vector_launch.in(units::us)) <=
          0.005 + 1e-9);
}

TEST_CASE("uncalibrated Hopper presets: the H200 rows and vidur's H100 rows") {
    // Bounds: the figures docs/validation.md reports, rounded up to the next whole percent (the
    // issue's goal is 35 %). The H200 file was fitted on (the heads), so each half is also
    // scored with the heads fitted on the other half alone (fit_heads' leave-one-out, there).
    const auto rep = uncalibrated(chips::h200_sxm, h200_rows());
    // 17.4 % (18.1 % before a norm's floor went per trip over its row, 20.0 % before softmax ran
    // on PyTorch's blocks, 20.7 % before reductions did, 22.6 % before the load latency, 104.5 %
    // with the A100's heads, 31.2 % before the GEMM shares, 27.4 % before the element walks)
    CHECK(rep.overall.mape <= 0.18);
    SUBCASE("the GEMMs and the attention kernels") {
        std::size_t seen = 0;
        for (const auto& t : rep.by_type) {
            CAPTURE(t.type);
            if (t.type == "MatMul") {
                CHECK(t.stats.mape <= 0.10);  // 9.9 % (23.3 % before the GEMM shares)
                ++seen;
            }
            if (t.type == "FlashAttentionScore") {
                CHECK(t.stats.mape <= 0.24);  // 23.8 %
                ++seen;
            }
        }
        CHECK(seen == 2);
    }
    // vidur's H100 rows, which no part of the Hopper fits saw: tests/test_gpu_validation.cpp.
}

TEST_CASE("H200 attention rows: measured and predicted at or above their FLOP floor") {
    // The floor is the attention's FLOPs (4 x B x Nq x Sq x Skv x D forward, the causal band
    // half of it, 2.5x for the backward pass) over the chip's dense bf16 peak. A measured row
    // under it would say the FLOP count is wrong (too many counted): none is; the fastest runs
    // at 69 % of the peak.
    const chip& c = chips::h200_sxm;
    std::size_t rows = 0;
    for (auto r : h200_rows()) {
        if (!r.op_type.starts_with("FlashAttentionScore")) continue;
        const auto m = profile::measured_op_of(c, r);
        REQUIRE(m.has_value());
        const double floor_s = m->o.flops().in(units::flop) / peak_bf16_flops(c);
        CAPTURE(r.name);
        CHECK(floor_s > 0);
        CHECK(m->measured.in(units::s) >= floor_s);
        CHECK(cost(c, m->o, core_count{m->cores}).latency.in(units::s) >= floor_s);
        ++rows;
    }
    CHECK(rows == 57);  // 53 forward (9 of them decode), 4 backward
}

TEST_CASE("GEMM rows not 16-byte aligned: row_align by hand, priced at the engine's shares") {
    // op::row_align: the largest power of two up to 16 dividing the bytes of a K row and an N
    // row (bf16: 2 bytes an element).
    CHECK(matmul(64, 4096, 4096, dtype::bf16).row_align == 16);
    CHECK(matmul(64, 4096, 4092, dtype::bf16).row_align == 8);  // 8184 B
    CHECK(matmul(64, 4094, 4096, dtype::bf16).row_align == 4);  // N row 8188 B
    CHECK(matmul(64, 4096, 4095, dtype::bf16).row_align == 2);  // 8190 B
    CHECK(matmul(64, 4096, 4095, dtype::fp32).row_align == 0);  // FFMA kernels: not marked
    CHECK(matmul(64, 4096, 4095, dtype::int8).row_align == 1);
    // K = 4095 and 4096 pad to the same fractal, so the compute terms differ by the share alone;
    // the A100 has no measured fall-back (shares 1): the same time.
    const op aligned = matmul(4096, 4096, 4096, dtype::bf16);
    const op odd = matmul(4096, 4096, 4095, dtype::bf16);
    const op even = matmul(4096, 4094, 4096, dtype::bf16);
    const chip& h = chips::h200_sxm;
    const double base = cost(h, aligned).compute.in(units::us);
    CHECK(cost(h, odd).compute.in(units::us) ==
          doctest::Approx(base / h.cube.narrow_rows_2).epsilon(1e-9));
    CHECK(cost(h, even).compute.in(units::us) >
          base / h.cube.narrow_rows_4 * 0.99);  // N 4094 pads to 4096 too: within 1 %
    CHECK(h.cube.narrow_rows_2 < h.cube.narrow_rows_4);
    CHECK(h.cube.narrow_rows_4 < 1.0);
    const chip& a = chips::a100_80gb_sxm;
    CHECK(cost(a, odd).compute.in(units::us) ==
          doctest::Approx(cost(a, aligned).compute.in(units::us)).epsilon(1e-9));
    // 16-byte rows (K = 4088 bf16: 8176 B) are whole runs for Hopper's 16-byte unit, so their
    // memory term is the aligned one's within the bytes' difference; on the A100 (32-byte
    // sectors) they are misaligned runs and cost more.
    const op rows16 = matmul(4096, 4096, 4088, dtype::bf16);
    CHECK(rows16.row_align == 16);
    CHECK(cost(h, rows16).memory.in(units::us) <= cost(h, aligned).memory.in(units::us)*1.001);
    CHECK(cost(a, rows16).memory.in(units::us) > 1.2 * cost(a, aligned).memory.in(units::us));
    // validate(chip) names the field and the value out of (0, 1].
    for (const double bad : {0.0, 1.5, std::nan("")}) {
        chip c = h;
        c.cube.narrow_rows_2 = bad;
        CHECK_THROWS_WITH_AS((void)validate(c), doctest::Contains("cube.narrow_rows_2"), error);
    }
}

TEST_CASE("H200: the misaligned GEMMs held out of the shares' fit are predicted better") {
    // The shares were fitted on the random-shape GEMMs of even configuration number; the odd
    // ones are scored here with the preset and with shares of 1 (the model before them).
    chip ones = chips::h200_sxm;
    ones.cube.narrow_rows_4 = 1.0;
    ones.cube.narrow_rows_2 = 1.0;
    auto rows = h200_rows();
    std::erase_if(rows, [](const profile::kernel_row& r) {
        if (r.op_type != "MatMul") return true;
        const auto m = profile::measured_op_of(chips::h200_sxm, r);
        const auto cfg = std::stoi(r.name.substr(r.name.find("cfg") + 3));
        return !m || m->o.row_align == 0 || m->o.row_align >= 16 || cfg % 2 == 0;
    });
    CHECK(rows.size() == 20);
    const double with = uncalibrated(chips::h200_sxm, rows).overall.mape;
    const double without = uncalibrated(ones, rows).overall.mape;
    CHECK(with < 0.5 * without);
    CHECK(with <= 0.131);    // 13.0 % (12.9 % with the 32-byte unit they were fitted with)
    CHECK(without >= 0.65);  // 65.4 %
}

TEST_CASE("H200: the Hopper shares are the least |log| error fit on the even-numbered GEMMs") {
    // The search chips/nvidia.hpp describes: shares 0.05 .. 1 in steps of 0.005, each class (rows
    // aligned to 4 or 8 bytes, to 1 or 2) on its own; the preset must be the winner.
    struct gemm_row {
        op o;
        int cores;
        double measured_us;
    };
    std::vector<gemm_row> fit2, fit4;
    for (const auto& r : h200_rows()) {
        if (r.op_type != "MatMul") continue;
        const auto m = profile::measured_op_of(chips::h200_sxm, r);
        const auto cfg = std::stoi(r.name.substr(r.name.find("cfg") + 3));
        if (!m || m->o.row_align == 0 || m->o.row_align >= 16 || cfg % 2 != 0) continue;
        (m->o.row_align < 4 ? fit2 : fit4).push_back({m->o, m->cores, m->measured.in(units::us)});
    }
    CHECK(fit2.size() == 18);
    CHECK(fit4.size() == 3);
    const auto best_share = [](const std::vector<gemm_row>& rows) {
        double best = 1e300;
        double share = 0;
        for (int i = 0; i <= 190; ++i) {
            const double s = 0.05 + 0.005 * i;
            chip c = chips::h200_sxm;
            c.cube.narrow_rows_2 = s;
            c.cube.narrow_rows_4 = s;
            double sum = 0;
            for (const gemm_row& g : rows)
                sum += std::abs(std::log(cost(c, g.o, core_count{g.cores}).latency.in(units::us) /
                                         g.measured_us));
            if (sum < best) {
                best = sum;
                share = s;
            }
        }
        return share;
    };
    CHECK(best_share(fit2) == doctest::Approx(chips::hopper_narrow_rows_2).epsilon(1e-9));
    CHECK(best_share(fit4) == doctest::Approx(chips::hopper_narrow_rows_4).epsilon(1e-9));
}

TEST_CASE("H200 alignment set, measured after the shares were fixed: held out from every fit") {
    // tests/data/gpu/h200/h200_align.csv: GEMMs with K, N or M one to eight elements off a
    // multiple of 8, measured with commit a38221e's shares in place (docs/validation.md). The
    // 16-bit rows: 50.4 % MAPE with shares of 1, 21.5 % with the preset's (17.6 % since Hopper's
    // 16-byte alignment unit, read off this set: no longer held out for that). The fp32 rows ran
    // FFMA kernels at 46-53 TFLOP/s whatever the alignment: they are not marked, so the shares
    // leave them alone.
    chip ones = chips::h200_sxm;
    ones.cube.narrow_rows_4 = 1.0;
    ones.cube.narrow_rows_2 = 1.0;
    auto rows = h200_rows({}, "h200_align.csv");
    REQUIRE(rows.size() == 110);
    std::vector<profile::kernel_row> fp32_rows;
    std::erase_if(rows, [&](const profile::kernel_row& r) {
        const bool wide = r.input_types.at(0).type == dtype::fp32;
        if (wide) fp32_rows.push_back(r);
        return wide;
    });
    CHECK(rows.size() == 86);
    CHECK(fp32_rows.size() == 24);
    const double with = uncalibrated(chips::h200_sxm, rows).overall.mape;
    const double without = uncalibrated(ones, rows).overall.mape;
    CHECK(with <= 0.18);     // 17.6 %
    CHECK(without >= 0.46);  // 46.5 % (50.4 % with 32-byte runs)
    // As measured against (commit a38221e: 32-byte runs), the held-out figure: 21.5 %.
    chip sectors = chips::h200_sxm;
    sectors.alignment = data_size{32.0, units::B};
    CHECK(uncalibrated(sectors, rows).overall.mape <= 0.22);
    CHECK(uncalibrated(sectors, rows).overall.mape > with);
    CHECK(uncalibrated(chips::h200_sxm, fp32_rows).overall.mape ==
          doctest::Approx(uncalibrated(ones, fp32_rows).overall.mape).epsilon(1e-12));
}

TEST_CASE("H200 rows16 set, measured after the 16-byte alignment unit was committed: held out") {
    // tests/data/gpu/h200/h200_rows16.csv: bf16 / fp16 GEMMs whose K or N rows are 16- but not
    // 32-byte aligned (and 12 aligned to 4 bytes), measured after commit d263c1c gave the Hopper
    // presets a 16-byte alignment unit; nothing was fitted on them. 12.9 % MAPE; with the
    // 32-byte unit before it, 36.8 %.
    const auto rows = h200_rows({}, "h200_rows16.csv");
    REQUIRE(rows.size() == 72);
    chip sectors = chips::h200_sxm;
    sectors.alignment = data_size{32.0, units::B};
    CHECK(uncalibrated(chips::h200_sxm, rows).overall.mape <= 0.13);
    CHECK(uncalibrated(sectors, rows).overall.mape >= 0.36);
}

namespace {

/// The main set's rows the H200 preset walks by index and transposed, as measured ops with
/// their place in the file (profile/context.hpp).
struct walked_rows {
    struct row {
        op o;
        int cores;
        double measured_us;
    };
    std::vector<row> indexed, transposed;
};

walked_rows h200_walked() {
    auto rows = h200_rows();
    profile::annotate_context(rows, chips::h200_sxm);
    walked_rows w;
    for (const auto& r : rows) {
        const auto m = profile::measured_op_of(chips::h200_sxm, r);
        if (!m || m->o.walk == element_walk::vector) continue;
        REQUIRE(m->o.walk != element_walk::selected);  // the H200's gathers are GatherV2 rows
        (m->o.walk == element_walk::indexed ? w.indexed : w.transposed)
            .push_back({m->o, m->cores, m->measured.in(units::us)});
    }
    return w;
}

double mean_log_error(const chip& c, const std::vector<walked_rows::row>& rows) {
    double sum = 0;
    for (const auto& g : rows)
        sum += std::abs(
            std::log(cost(c, g.o, core_count{g.cores}).latency.in(units::us) / g.measured_us));
    return sum / static_cast<double>(rows.size());
}

chip with_walk(double rate, double head_us, double transpose_rate) {
    chip c = chips::h200_sxm;
    c.vector.walk_rate = rate;
    c.vector.walk_head = duration{head_us, units::us};
    c.vector.transpose_rate = transpose_rate;
    return c;
}

}  // namespace

TEST_CASE("H200: the walk rates and head are the least |log| error fit on the walked rows") {
    // chips/nvidia.hpp's search (rate in steps of 0.01 and head of 0.01 us together on the
    // indexed rows, then the transpose rate in steps of 0.005 with that head): here a coarse
    // grid over the same range must land within one of its steps of the preset, and the preset
    // must beat each of its neighbours at the search's own steps.
    const auto w = h200_walked();
    CHECK(w.indexed.size() == 50);  // broadcast Muls (bf16, fp32) and bf16 -> fp32 casts
    CHECK(w.transposed.size() == 16);
    const double rate = chips::hopper_walk_rate;
    const double head = chips::hopper_walk_head.in(units::us);
    const double tr = chips::hopper_transpose_rate;
    double best = 1e300, best_rate = 0, best_head = 0;
    for (int i = 0; i <= 50; ++i) {
        for (int j = 0; j <= 60; ++j) {
            const double e = mean_log_error(with_walk(0.5 + 0.05 * i, 0.05 * j, tr), w.indexed);
            if (e < best) {
                best = e;
                best_rate = 0.5 + 0.05 * i;
                best_head = 0.05 * j;
            }
        }
    }
    CHECK(std::abs(best_rate - rate) <= 0.05 + 1e-9);
    CHECK(std::abs(best_head - head) <= 0.05 + 1e-9);
    const double at = mean_log_error(with_walk(rate, head, tr), w.indexed);
    for (const auto& step : {std::pair{0.01, 0.0}, std::pair{-0.01, 0.0}, std::pair{0.0, 0.01},
                             std::pair{0.0, -0.01}}) {
        const double dr = step.first;  // not a structured binding: CAPTURE takes it by reference
        const double dh = step.second;
        CAPTURE(dr);
        CAPTURE(dh);
        CHECK(at <= mean_log_error(with_walk(rate + dr, head + dh, tr), w.indexed));
    }
    const double at_t = mean_log_error(with_walk(rate, head, tr), w.transposed);
    CHECK(at_t <= mean_log_error(with_walk(rate, head, tr + 0.005), w.transposed));
    CHECK(at_t <= mean_log_error(with_walk(rate, head, tr - 0.005), w.transposed));
    // Without the walks (rates 0) the same rows: 0.58 and 1.28 mean |log error|; with them
    // 0.152 and 0.123.
    CHECK(at <= 0.16);
    CHECK(at_t <= 0.13);
    CHECK(mean_log_error(with_walk(0, 0, 0), w.indexed) >= 0.55);
    CHECK(mean_log_error(with_walk(0, 0, 0), w.transposed) >= 1.2);
}

TEST_CASE("H200 set measured before the element walks: held out from their fit") {
    // tests/data/gpu/h200/h200_unseen.csv: PERFCAST_SET=unseen, run at commit 65c71d5 and scored
    // only after the walks were committed (docs/validation.md). "Before" is that commit's model:
    // no walk rates, the vector head 1.40 us + 0.001 us per SM. Its 64 walked rows: 52.9 % MAPE
    // before, 12.7 % now; the whole set 34.6 -> 19.0 % since a norm's floor goes per trip over
    // its row, which both models take (37.0 -> 21.3 % before; 37.0 -> 26.4 % before softmax ran
    // on PyTorch's blocks at its rates, which "before" lacks, on those blocks; 37.6 -> 27.1 %
    // before reductions ran on PyTorch's blocks, which both models take; 29.3 % before the load
    // latency, which was fitted on the main set after this one was scored). Bounds: those
    // figures rounded to the next whole percent (down for the "before" ones, which must stay
    // high).
    auto rows = h200_rows({}, "h200_unseen.csv");
    REQUIRE(rows.size() == 339);
    const auto again = h200_rows({}, "h200_unseen_run2.csv");
    REQUIRE(again.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) CHECK(again[i].name == rows[i].name);
    chip before = chips::h200_sxm;
    before.vector.walk_rate = 0;
    before.vector.transpose_rate = 0;
    before.vector.walk_head = duration{};
    before.overhead.vector_launch = duration{1.40, units::us};
    before.overhead.vector_per_core = duration{0.001, units::us};
    before.overhead.launch = duration{1.59, units::us};  // no load latency then
    before.overhead.load_latency = duration{};
    before.vector.softmax_warp_rate = 0;  // nor the softmax rates
    before.vector.softmax_block_rate = 0;
    const auto walked = [](const profile::kernel_row& r) {
        const auto o = profile::op_of(r);
        return o && o->walk != element_walk::vector;
    };
    const auto now_walked = uncalibrated(chips::h200_sxm, rows, walked).overall;
    CHECK(now_walked.rows == 64);
    CHECK(now_walked.mape <= 0.13);
    CHECK(uncalibrated(before, rows, walked).overall.mape >= 0.52);
    CHECK(uncalibrated(chips::h200_sxm, rows).overall.mape <= 0.20);  // the goal: 35 %
    CHECK(uncalibrated(before, rows).overall.mape >= 0.34);
}

TEST_CASE("H200 fills of the set measured before: held out from the load latency's fit") {
    // The load latency (chips::hopper_overheads) was fitted on the main set's hot and cold
    // halves; the unseen set's 28 Fill and ZerosLike rows (other shapes, fp32 among them) score
    // it: 14.7 % MAPE (15.3 % before the heads' refit with reductions on PyTorch's blocks), and
    // 39.9 % with the heads before it (cube 1.59 us, vector 1.37 us, walk head 0.62 us, no
    // latency). Bounds: rounded up to the next whole percent, down for the
    // "before" one, which must stay high.
    const auto rows = h200_rows({}, "h200_unseen.csv");
    const auto fills = [](const profile::kernel_row& r) {
        return r.op_type == "Fill" || r.op_type == "ZerosLike";
    };
    chip before = chips::h200_sxm;
    before.overhead.launch = duration{1.59, units::us};
    before.overhead.vector_launch = duration{1.37, units::us};
    before.overhead.load_latency = duration{};
    before.vector.walk_head = duration{0.62, units::us};
    const auto now = uncalibrated(chips::h200_sxm, rows, fills).overall;
    CHECK(now.rows == 28);
    CHECK(now.mape <= 0.15);
    CHECK(uncalibrated(before, rows, fills).overall.mape >= 0.39);
    // The other rows of the same set, which read, did not get worse on the whole: 27.5 % then,
    // 27.6 % before (the reading kernels' head moved from 1.37 to 1.41 us; 1.39 us and 21.8 %
    // since softmax ran on PyTorch's blocks).
    const auto reads = [&](const profile::kernel_row& r) { return !fills(r); };
    const auto others = uncalibrated(chips::h200_sxm, rows, reads).overall;
    CHECK(others.rows == 311);
    CHECK(others.mape <= uncalibrated(before, rows, reads).overall.mape);
}

TEST_CASE("GPU reductions: the blocks PyTorch's reduce kernel launches, and what they cost") {
    // Known answers: the grid and block of every reduce_kernel launch in the H200 traces
    // (tests/data/gpu/h200/kernels_run1.csv.gz and unseen_kernels_run1.csv.gz, the ReduceSum
    // configurations: bf16 rows summed along their last axis), against reduce_launch_of on 132
    // SMs of 2048 threads.
    struct launch {
        std::int64_t rows, length, blocks, lanes, threads;
    };
    const launch measured[] = {
        {1, 4096, 1, 512, 512},       {4, 4096, 1, 128, 512},       {16, 4096, 1, 32, 512},
        {64, 4096, 4, 32, 512},       {256, 4096, 16, 32, 512},     {1024, 4096, 64, 32, 512},
        {4096, 4096, 256, 32, 512},   {16384, 4096, 1024, 32, 512}, {65536, 4096, 4096, 32, 512},
        {1, 3000, 1, 256, 256},       {7, 5120, 2, 128, 512},       {96, 3584, 6, 32, 512},
        {640, 2560, 40, 32, 512},     {3000, 3072, 188, 32, 512},   {8192, 5120, 512, 32, 512},
        {20000, 6000, 1250, 32, 512}, {49152, 256, 3072, 32, 512},  {24576, 512, 1536, 32, 512},
        {6144, 2048, 384, 32, 512},   {393, 32000, 393, 32, 512},
    };
    for (const launch& m : measured) {
        CAPTURE(m.rows);
        CAPTURE(m.length);
        const gpu_reduce_launch l = reduce_launch_of(m.rows, m.length, 2, 132, 2048);
        CHECK(l.blocks == m.blocks);
        CHECK(l.lanes == m.lanes);
        CHECK(l.threads == m.threads);
    }
    // The vector by element size (8 elements for 16-bit data, else 4): a row of 3000 is 375
    // vectors of bf16, so 256 lanes (the largest power of two under 375, measured above), but 750
    // vectors of fp32 or int8, so the block's 512.
    CHECK(reduce_launch_of(1, 3000, 4, 132, 2048).lanes == 512);
    CHECK(reduce_launch_of(1, 3000, 1, 132, 2048).lanes == 512);
    CHECK(reduce_launch_of(1, 1500, 4, 132, 2048).lanes == 256);
    // By hand: 16 rows of 4096 bf16 take one block of 32 lanes x 16 rows, 128 values a thread;
    // 393 rows of 32000 would leave a lane 1000 values, so each row takes a whole block of 512
    // threads (63 values each); one row of 2^20 fp32 is split across blocks too: 512 threads a
    // block leave 2048 values each, the grid of 1 is under 132 x 4, so it takes min(528, 128) =
    // 128 blocks of 16 values a thread.
    CHECK(reduce_launch_of(16, 4096, 2, 132, 2048).values_per_thread == 128);
    CHECK(reduce_launch_of(393, 32000, 2, 132, 2048).values_per_thread == 63);
    const gpu_reduce_launch global = reduce_launch_of(1, 1 << 20, 4, 132, 2048);
    CHECK(global.blocks == 128);
    CHECK(global.values_per_thread == 16);
    CHECK(reduce_launch_of(0, 4096, 2, 132, 2048).blocks == 1);  // nothing to launch: one block
    // Over a sweep of shapes and element sizes: blocks of 1 to 512 threads, a power of two, and
    // every element summed by some thread (blocks x threads x values a thread >= rows x length).
    for (const std::int64_t rows : {1, 3, 7, 16, 100, 393, 4096, 65537, 1 << 22}) {
        for (const std::int64_t length : {1, 2, 31, 127, 128, 1000, 4096, 32000, 1 << 20}) {
            for (const std::int64_t bytes : {1, 2, 4, 8}) {
                CAPTURE(rows);
                CAPTURE(length);
                CAPTURE(bytes);
                const gpu_reduce_launch l = reduce_launch_of(rows, length, bytes, 132, 2048);
                CHECK(l.threads >= 1);
                CHECK(l.threads <= 512);
                CHECK((l.threads & (l.threads - 1)) == 0);
                CHECK(l.blocks >= 1);
                CHECK(static_cast<double>(l.blocks) * static_cast<double>(l.threads) *
                          static_cast<double>(l.values_per_thread) >=
                      static_cast<double>(rows) * static_cast<double>(length));
            }
        }
    }

    // In cost(): a GPU reduction runs on the SMs its grid holds; an Ascend one on every core.
    CHECK(cost(chips::h200_sxm, reduce(16, 4096, dtype::bf16)).cores == 1);
    CHECK(cost(chips::h200_sxm, reduce(1024, 4096, dtype::bf16)).cores == 64);
    CHECK(cost(chips::h200_sxm, reduce(65536, 4096, dtype::bf16)).cores == 132);
    CHECK(cost(chips::ascend910b1, reduce(16, 4096, dtype::fp16)).cores == 48);

    // Measured: the ReduceSum rows of both sets (the unseen one fitted by nothing, its rows looked
    // at before the change; no constant was fitted for this: the blocks are PyTorch's, the per-SM
    // rate the preset's, measured before).
    // Before, a chip without the threads an SM keeps, which prices them on every SM (the
    // ReduceSum rows have no row floor either way): main 46.2 -> 22.8 %, unseen 34.5 -> 22.5 %
    // (23.1 and 22.7 % since the heads were refitted with softmax on PyTorch's blocks: a reading
    // kernel's vector head 1.41 -> 1.39 us). Bounds: rounded up to the next whole percent, down
    // for the "before" ones.
    chip before = chips::h200_sxm;
    before.overhead.core_threads = 0;
    const auto sums = [](const profile::kernel_row& r) { return r.op_type == "ReduceSum"; };
    for (const char* file : {"h200_kernels.csv", "h200_unseen.csv"}) {
        CAPTURE(file);
        const auto rows = h200_rows({}, file);
        const auto now = uncalibrated(chips::h200_sxm, rows, sums).overall;
        CHECK(now.rows == 18);
        CHECK(now.mape <= 0.24);
        CHECK(uncalibrated(before, rows, sums).overall.mape >= 0.34);
    }
}

namespace {

struct softmax_row {
    op o;
    int cores;
    double measured_us;
};

/// The Softmax rows of `file`, their place in the file known, as the H200 measured them.
std::vector<softmax_row> h200_softmax(const std::string& file) {
    auto rows = h200_rows({}, file);
    profile::annotate_context(rows, chips::h200_sxm);
    std::vector<softmax_row> out;
    for (const auto& r : rows) {
        if (r.op_type != "Softmax") continue;
        const auto m = profile::measured_op_of(chips::h200_sxm, r);
        REQUIRE(m);
        CHECK(m->o.kind == op_kind::softmax);
        out.push_back({m->o, m->cores, m->measured.in(units::us)});
    }
    return out;
}

chip with_softmax(double warp_rate, double block_rate) {
    chip c = chips::h200_sxm;
    c.vector.softmax_warp_rate = warp_rate;
    c.vector.softmax_block_rate = block_rate;
    return c;
}

/// Mean |log(predicted / measured)| of `rows` on `c`, or with `ape` their MAPE.
double softmax_error(const chip& c, const std::vector<softmax_row>& rows, bool ape = false) {
    double sum = 0;
    for (const auto& r : rows) {
        const double ratio =
            cost(c, r.o, core_count{r.cores}).latency.in(units::us) / r.measured_us;
        sum += ape ? std::abs(ratio - 1) : std::abs(std::log(ratio));
    }
    return sum / static_cast<double>(rows.size());
}

}  // namespace

TEST_CASE("GPU softmax: the blocks PyTorch launches, its element rates, and what they cost") {
    // Known answers: the grid and block of every softmax launch in the H200 traces
    // (tests/data/gpu/h200/kernels_run1.csv.gz and unseen_kernels_run1.csv.gz, the Softmax
    // configurations: 16-bit rows along their last axis): softmax_warp_forward in blocks of
    // 32 x 4 threads, the cunn_SoftMaxForward* kernels one block of 1024 a row.
    struct launch {
        std::int64_t rows, width, blocks, threads;
        bool per_warp;
    };
    const launch measured[] = {
        {1, 4096, 1, 1024, false},         {4, 4096, 4, 1024, false},
        {16, 4096, 16, 1024, false},       {64, 4096, 64, 1024, false},
        {256, 4096, 256, 1024, false},     {1024, 4096, 1024, 1024, false},
        {4096, 4096, 4096, 1024, false},   {16384, 4096, 16384, 1024, false},
        {65536, 4096, 65536, 1024, false}, {131072, 128, 16384, 128, true},
        {16384, 1024, 4096, 128, true},    {2048, 8192, 2048, 1024, false},
        {1024, 16384, 1024, 1024, false},  {1, 3000, 1, 1024, false},
        {7, 5120, 7, 1024, false},         {96, 3584, 96, 1024, false},
        {640, 2560, 640, 1024, false},     {3000, 3072, 3000, 1024, false},
        {8192, 5120, 8192, 1024, false},   {20000, 6000, 20000, 1024, false},
        {49152, 256, 12288, 128, true},    {24576, 512, 6144, 128, true},
        {6144, 2048, 1536, 128, true},     {393, 32000, 393, 1024, false},
    };
    for (const launch& m : measured) {
        CAPTURE(m.rows);
        CAPTURE(m.width);
        const gpu_softmax_launch l = softmax_launch_of(m.rows, m.width, 2);
        CHECK(l.blocks == m.blocks);
        CHECK(l.threads == m.threads);
        CHECK(l.per_warp == m.per_warp);
    }
    // By hand: a row of 2048 fp32 (8 KiB) still fits a warp, one of 2049 bf16 or of 2048 fp64
    // (16 KiB) does not, nor one of 1025 fp64 (8200 B), which gets a block of 1024 threads; rows
    // of 3 elements get warps of 4 lanes (3 rounded up to a power of two), 32 warps a block of
    // 128 threads, two rows a warp: 64 rows a block, 16 blocks for 1000 rows.
    CHECK(softmax_launch_of(1, 2048, 4).per_warp);
    CHECK(!softmax_launch_of(1, 2049, 2).per_warp);
    CHECK(!softmax_launch_of(1, 2048, 8).per_warp);
    CHECK(!softmax_launch_of(5, 1025, 8).per_warp);
    CHECK(softmax_launch_of(5, 1025, 8).threads == 1024);
    CHECK(softmax_launch_of(5, 1025, 8).blocks == 5);
    CHECK(softmax_launch_of(1000, 3, 2).rows_per_block == 64);
    CHECK(softmax_launch_of(1000, 3, 2).blocks == 16);
    CHECK(softmax_launch_of(0, 4096, 2).blocks == 1);  // nothing to launch: one block
    // Rows a block by width, by hand: a warp of min(32, next power of two) lanes, 4 warps of 32
    // (more of fewer lanes) in 128 threads, two rows a warp up to a power of 128.
    const std::pair<std::int64_t, std::int64_t> rows_per_block[] = {
        {1, 256}, {2, 128}, {3, 64}, {16, 16}, {31, 8}, {128, 8}, {129, 4}, {2048, 4}};
    for (const auto& w : rows_per_block) {
        const std::int64_t width = w.first;  // not a structured binding: CAPTURE takes a reference
        CAPTURE(width);
        CHECK(softmax_launch_of(1000, width, 4).rows_per_block == w.second);
    }
    // Over a sweep: every row held by a block and no block empty, blocks of whole warps of at
    // most 1024 threads; an absurd element size does not overflow into the warp path.
    for (const std::int64_t rows : {1, 3, 7, 100, 393, 65537}) {
        for (const std::int64_t width : {1, 2, 31, 128, 129, 1024, 2048, 2049, 4097, 32000}) {
            for (const std::int64_t bytes : {1, 2, 4, 8}) {
                CAPTURE(rows);
                CAPTURE(width);
                CAPTURE(bytes);
                const gpu_softmax_launch l = softmax_launch_of(rows, width, bytes);
                CHECK(l.blocks * l.rows_per_block >= rows);
                CHECK((l.blocks - 1) * l.rows_per_block < rows);
                CHECK(l.threads % 32 == 0);
                CHECK(l.threads <= 1024);
            }
        }
    }
    CHECK(!softmax_launch_of(1, 2048, std::int64_t{1} << 61).per_warp);

    // The op: a softmax is one kind, from the model file's word, the profile's type and the
    // factory alike; on an Ascend preset it is the row-parallel op of its assumed operations.
    const op s = softmax(65536, 4096, dtype::bf16);
    CHECK(s.kind == op_kind::softmax);
    CHECK(s.uncounted);
    CHECK(s.bytes_read.in(units::B) == doctest::Approx(65536.0 * 4096 * 2));
    CHECK(s.bytes_written.in(units::B) == doctest::Approx(65536.0 * 4096 * 2));
    CHECK(s.useful_ops == doctest::Approx(65536.0 * 4096 * softmax_ops_per_element));
    rowwise_options eight;
    eight.ops_per_element = softmax_ops_per_element;
    op as_rows = rowwise(65536, 4096, dtype::fp16, eight);
    as_rows.uncounted = true;
    CHECK(cost(chips::ascend910b1, softmax(65536, 4096, dtype::fp16)).latency ==
          cost(chips::ascend910b1, as_rows).latency);
    // No Ascend preset has softmax rates; every GPU preset has the Hopper ones.
    for (const auto& p : chips::all_presets()) {
        CAPTURE(p.name);
        const bool gpu = p.spec.overhead.core_threads > 0;
        CHECK(p.spec.vector.softmax_warp_rate == (gpu ? chips::hopper_softmax_warp_rate : 0.0));
        CHECK(p.spec.vector.softmax_block_rate == (gpu ? chips::hopper_softmax_block_rate : 0.0));
    }
    // A profile row: the first input's rows and width; a further argument a profiler lists is
    // not read, and a row without an input is not mappable.
    profile::kernel_row row;
    row.op_type = "Softmax";
    row.task = profile::task_type::ai_vector_core;
    row.input_shapes = {profile::tensor_shape{{8, 16, 4096}}, profile::tensor_shape{{1}}};
    row.input_types = {profile::tensor_dtype{"BF16", dtype::bf16},
                       profile::tensor_dtype{"INT64", dtype::int64}};
    row.output_shapes = {profile::tensor_shape{{8, 16, 4096}}};
    const auto mapped = profile::op_of(row);
    REQUIRE(mapped);
    CHECK(mapped->kind == op_kind::softmax);
    CHECK(mapped->work_units == 128);
    CHECK(mapped->bytes_read.in(units::B) == doctest::Approx(128.0 * 4096 * 2));
    row.input_shapes.clear();
    CHECK(!profile::op_of(row));
    // walk_work scales the rate's floor, so cost() checks it on a softmax as on a walked op.
    op broken = s;
    broken.walk_work = 0;
    CHECK_THROWS_AS((void)cost(chips::h200_sxm, broken), perfcast::error);

    // In cost(): the busiest SM's rows at the block rate. 65536 rows of 4096 bf16 give 497 rows
    // (ceil(65536 / 132)) to the busiest SM: 497 x 4096 / (1.26 x 1980 MHz) = 816.0 us of compute.
    const op_cost big = cost(chips::h200_sxm, s);
    CHECK(big.cores == 132);
    CHECK(
        big.compute.in(units::us) ==
        doctest::Approx(497.0 * 4096 / (chips::hopper_softmax_block_rate * 1980.0)).epsilon(1e-9));
    CHECK(cost(chips::h200_sxm, softmax(1, 4096, dtype::bf16)).cores == 1);
    CHECK(cost(chips::h200_sxm, softmax(131072, 128, dtype::bf16)).cores == 132);
    // A calibrated factor of the type scales the rate's floor (op::walk_work).
    op slower = s;
    slower.walk_work = 2;
    CHECK(cost(chips::h200_sxm, slower).compute.in(units::us) ==
          doctest::Approx(2 * big.compute.in(units::us)).epsilon(1e-9));

    // The rates: chips/nvidia.hpp's search (both in steps of 0.01 together) on the main set's 22
    // Softmax rows. Here a coarse grid (steps of 0.05) must land within one of its steps of the
    // presets, and the presets must beat each neighbour at the search's own step.
    const auto main_rows = h200_softmax("h200_kernels.csv");
    REQUIRE(main_rows.size() == 22);
    const double warp = chips::hopper_softmax_warp_rate;
    const double block = chips::hopper_softmax_block_rate;
    double best = 1e300, best_warp = 0, best_block = 0;
    for (int i = 0; i <= 60; ++i) {
        for (int j = 0; j <= 40; ++j) {
            const double e = softmax_error(with_softmax(1 + 0.05 * i, 0.5 + 0.05 * j), main_rows);
            if (e < best) {
                best = e;
                best_warp = 1 + 0.05 * i;
                best_block = 0.5 + 0.05 * j;
            }
        }
    }
    CHECK(std::abs(best_warp - warp) <= 0.05 + 1e-9);
    CHECK(std::abs(best_block - block) <= 0.05 + 1e-9);
    const double at = softmax_error(with_softmax(warp, block), main_rows);
    for (const auto& step : {std::pair{0.01, 0.0}, std::pair{-0.01, 0.0}, std::pair{0.0, 0.01},
                             std::pair{0.0, -0.01}}) {
        const double dw = step.first;  // not a structured binding: CAPTURE takes it by reference
        const double db = step.second;
        CAPTURE(dw);
        CAPTURE(db);
        CHECK(at <= softmax_error(with_softmax(warp + dw, block + db), main_rows));
    }

    // Held out: the unseen set's 32 Softmax rows (widths 256-2048 a warp, 2560-32000 a block, none
    // of the main set's) were not seen by that search: 8.7 % MAPE; on PyTorch's blocks without
    // the rates 62.1 %; the main set 7.3 % and 55.8 %. Before this kind (a Softmax row priced as
    // an element-wise op of eight operations an element on every SM): 63.8 % and 57.8 %
    // (docs/validation.md, "Softmax on the blocks PyTorch launches"). Bounds: rounded up to the
    // next whole percent, down for the ones without the rates, which must stay high.
    const auto unseen = h200_softmax("h200_unseen.csv");
    REQUIRE(unseen.size() == 32);
    CHECK(softmax_error(chips::h200_sxm, unseen, true) <= 0.09);
    CHECK(softmax_error(with_softmax(0, 0), unseen, true) >= 0.61);
    CHECK(softmax_error(chips::h200_sxm, main_rows, true) <= 0.08);
    CHECK(softmax_error(with_softmax(0, 0), main_rows, true) >= 0.55);
}

}  // namespace test_h200
