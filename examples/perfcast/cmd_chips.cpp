// examples/perfcast/cmd_chips.cpp: `perfcast chips [--format table|csv|json]`.
//
// Lists every preset with the parameters that decide most predictions. The table rounds for
// reading; csv and json carry full precision. Where each number comes from: docs/model.md.

#include <array>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/io/csv.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/table.hpp>

#include "cli.hpp"
#include "commands.hpp"

namespace perfcast::cli {

namespace chips_detail {

inline constexpr std::array<option, 1> options{{
    {"format", "FORMAT", "table (default), csv or json"},
}};

/// One row of the listing, in plain numbers.
struct chip_row {
    std::string_view name;
    int cube_cores;
    int vector_cores;
    double clock_mhz;
    double fp16_tflops;
    double int8_tops;
    std::optional<double> fp8_tflops;  // none: the cube has no FP8 path
    double hbm_gib;
    double hbm_gbps;
    double l2_mib;
    double ub_kib;
    double alignment_b;
    int pcie_gen;
    int pcie_lanes;
    std::string_view source;
};

[[nodiscard]] inline chip_row row_of(const chips::named_chip& n) {
    const chip& c = n.spec;
    return {
        .name = n.name,
        .cube_cores = c.cube.cores,
        .vector_cores = c.vector.cores,
        .clock_mhz = c.cube.clock.in(units::MHz),
        .fp16_tflops = c.peak(engine::cube, dtype::fp16).in(units::TFLOPS),
        .int8_tops = c.peak(engine::cube, dtype::int8).in(units::TFLOPS),
        .fp8_tflops =
            c.cube.ops_per_cycle_for(dtype::fp8_e4m3) > 0
                ? std::optional<double>{c.peak(engine::cube, dtype::fp8_e4m3).in(units::TFLOPS)}
                : std::nullopt,
        .hbm_gib = c.memory.hbm_size.in(units::GiB),
        .hbm_gbps = c.memory.hbm_bandwidth.in(units::GBps),
        .l2_mib = c.memory.l2_size.in(units::MiB),
        .ub_kib = c.memory.ub_size.in(units::KiB),
        .alignment_b = c.alignment.in(units::B),
        .pcie_gen = c.link.pcie_gen,
        .pcie_lanes = c.link.lanes,
        .source = n.source,
    };
}

}  // namespace chips_detail

std::string chips_usage() {
    return "Usage: perfcast chips [--format table|csv|json]\n\n"
           "List the chip presets: cores, clock, peak cube fp16 / int8 / fp8 (\"-\": no\n"
           "FP8 path), memory, L2, UB, alignment and host link. Sources and assumptions: "
           "docs/model.md.\n\n" +
           options_text(chips_detail::options);
}

int run_chips(std::span<const std::string_view> args, std::ostream& out, std::ostream& /*err*/) {
    const parsed_args a = parse_args(args, chips_detail::options);
    if (a.has("help")) {
        out << chips_usage();
        return exit_ok;
    }
    if (!a.positional.empty()) {
        throw usage_error("unexpected argument '" + a.positional.front() + "'");
    }
    const std::string format = choice(a, "format", {"table", "csv", "json"}, "table");

    std::vector<chips_detail::chip_row> rows;
    for (const chips::named_chip& n : chips::all_presets()) rows.push_back(chips_detail::row_of(n));

    using io::format_fixed;
    using io::format_shortest;
    if (format == "table") {
        io::text_table t({"chip", "cube", "vector", "MHz", "fp16 TFLOP/s", "int8 TOP/s",
                          "fp8 TFLOP/s", "HBM GiB", "HBM GB/s", "L2 MiB", "UB KiB", "align B",
                          "PCIe"});
        t.set_align(6, io::align::right);  // numbers, and "-" where there is no FP8 path
        for (const auto& r : rows) {
            t.add_row({std::string(r.name), std::to_string(r.cube_cores),
                       std::to_string(r.vector_cores), format_fixed(r.clock_mhz, 0),
                       format_fixed(r.fp16_tflops, 1), format_fixed(r.int8_tops, 1),
                       r.fp8_tflops ? format_fixed(*r.fp8_tflops, 1) : std::string("-"),
                       format_fixed(r.hbm_gib, 1), format_fixed(r.hbm_gbps, 1),
                       format_fixed(r.l2_mib, 0), format_fixed(r.ub_kib, 0),
                       format_fixed(r.alignment_b, 0),
                       "Gen" + std::to_string(r.pcie_gen) + " x" + std::to_string(r.pcie_lanes)});
        }
        t.write(out);
    } else if (format == "csv") {
        io::csv_writer w(out);
        w.row({"name", "cube_cores", "vector_cores", "clock_mhz", "fp16_tflops", "int8_tops",
               "fp8_tflops", "hbm_gib", "hbm_gbps", "l2_mib", "ub_kib", "alignment_b", "pcie_gen",
               "pcie_lanes", "source"});
        for (const auto& r : rows) {
            w.row({std::string(r.name), std::to_string(r.cube_cores),
                   std::to_string(r.vector_cores), format_shortest(r.clock_mhz),
                   format_shortest(r.fp16_tflops), format_shortest(r.int8_tops),
                   r.fp8_tflops ? format_shortest(*r.fp8_tflops) : std::string(),
                   format_shortest(r.hbm_gib), format_shortest(r.hbm_gbps),
                   format_shortest(r.l2_mib), format_shortest(r.ub_kib),
                   format_shortest(r.alignment_b), std::to_string(r.pcie_gen),
                   std::to_string(r.pcie_lanes), std::string(r.source)});
        }
    } else {
        io::json_writer j(out);
        j.begin_array();
        for (const auto& r : rows) {
            j.begin_object()
                .member("name", r.name)
                .member("cube_cores", r.cube_cores)
                .member("vector_cores", r.vector_cores)
                .member("clock_mhz", r.clock_mhz)
                .member("fp16_tflops", r.fp16_tflops)
                .member("int8_tops", r.int8_tops)
                .member_or_null("fp8_tflops", r.fp8_tflops, [&] { return *r.fp8_tflops; })
                .member("hbm_gib", r.hbm_gib)
                .member("hbm_gbps", r.hbm_gbps)
                .member("l2_mib", r.l2_mib)
                .member("ub_kib", r.ub_kib)
                .member("alignment_b", r.alignment_b)
                .member("pcie_gen", r.pcie_gen)
                .member("pcie_lanes", r.pcie_lanes)
                .member("source", r.source)
                .end_object();
        }
        j.end_array();
    }
    return exit_ok;
}

/// The dispatch-table entry for main.cpp.

}  // namespace perfcast::cli
