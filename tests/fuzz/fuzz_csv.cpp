// libFuzzer target: the CSV reader, the kernel_details reader and the msprof pcie_*.csv reader
// (profile/pcie.hpp) on arbitrary bytes, and the rows they give through the sequence context and
// the model.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_csv.cpp -o fuzz_csv
//   ./fuzz_csv -max_total_time=60 tests/fuzz/corpus/csv
//
// Any input must either parse or throw perfcast::error (parse_error derives from it); a crash,
// a sanitizer report, a hang or another exception type is a finding. A small record limit keeps
// the "record too long" path reachable.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include <perfcast/chips.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/csv.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/pcie.hpp>
#include <perfcast/profile/report.hpp>
#include <perfcast/profile/validate.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    perfcast::profile::csv_options opt;
    opt.max_record_bytes = 4096;
    // 1. Plain CSV from memory, without the field-count check so that deeper states are reached.
    try {
        opt.check_field_count = false;
        perfcast::profile::csv_reader r(text, "fuzz", opt);
        std::size_t fields = 0;
        while (r.next()) fields += r.record().size();
        (void)fields;
    } catch (const perfcast::error&) {
    }
    // 2. Through a stream with a tiny buffer: every chunk boundary, with the field-count check.
    try {
        opt.check_field_count = true;
        opt.buffer_bytes = 7;
        std::istringstream in{std::string(text)};
        perfcast::profile::csv_reader r(in, "fuzz", opt);
        while (r.next()) {
        }
    } catch (const perfcast::error&) {
    }
    // 3. As a profile, all the way to the report.
    try {
        perfcast::profile::kernel_reader_options kopt;
        kopt.csv.max_record_bytes = 4096;
        std::istringstream in{std::string(text)};
        (void)perfcast::profile::build_report(in, "fuzz", perfcast::chips::ascend910b3, {}, kopt);
    } catch (const perfcast::error&) {
    }
    // 4. As rows: their sequence context, then every row predicted (what validate does).
    try {
        perfcast::profile::kernel_reader_options kopt;
        kopt.csv.max_record_bytes = 4096;
        std::istringstream in{std::string(text)};
        auto rows = perfcast::profile::read_kernel_details(in, "fuzz", kopt).rows;
        perfcast::profile::annotate_context(rows, perfcast::chips::ascend910b1);
        (void)perfcast::profile::score_rows(perfcast::chips::ascend910b1, rows);
    } catch (const perfcast::error&) {
    }
    // 5. As an msprof pcie_*.csv: every figure it gives is finite and >= 0.
    try {
        std::istringstream in{std::string(text)};
        const auto p = perfcast::profile::read_pcie(in, "fuzz", opt);
        const auto check = [](const auto& stat, auto unit) {
            for (const auto& v : {stat.min, stat.max, stat.avg}) {
                perfcast_fuzz::expect(!v || (v->in(unit) >= 0 && std::isfinite(v->in(unit))));
            }
        };
        for (const perfcast::profile::pcie_device& d : p.devices) {
            for (const auto* s : {&d.tx_posted, &d.tx_non_posted, &d.tx_completion, &d.rx_posted,
                                  &d.rx_non_posted, &d.rx_completion})
                check(*s, perfcast::units::Bps);
            check(d.tx_latency, perfcast::units::us);
        }
    } catch (const perfcast::error&) {
    }
    return 0;
}
