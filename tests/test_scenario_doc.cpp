// docs/scenario.md's tables of the built-in scenario are written by hand from serial_latency and
// evaluate_card (no command prints those columns): this test recomputes every figure they show,
// so that a model change that moves one fails here instead of leaving the page behind (it had
// drifted by up to 1.2 us before this test).
#include <doctest/doctest.h>

#include <perfcast/card.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/scenario.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_scenario_doc {

using namespace perfcast;

namespace {

std::string scenario_page() {
    std::ifstream in(PERFCAST_SOURCE_DIR "/docs/scenario.md");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The numbers of the table rows ("| 16 | 338.7 | ... |") of the first table after `heading`.
std::vector<std::vector<double>> table_after(const std::string& page, std::string_view heading) {
    std::vector<std::vector<double>> rows;
    const std::size_t at = page.find(heading);
    REQUIRE(at != std::string::npos);
    std::istringstream lines(page.substr(at));
    std::string line;
    bool in_table = false;
    while (std::getline(lines, line)) {
        if (!line.starts_with("|")) {
            if (in_table) break;
            continue;
        }
        in_table = true;
        std::vector<double> cells;
        std::istringstream cols(line.substr(1));
        std::string cell;
        bool numeric = true;
        while (std::getline(cols, cell, '|')) {
            if (cell.find_first_not_of(' ') == std::string::npos) continue;
            try {
                std::size_t used = 0;
                const double v = std::stod(cell, &used);
                // The whole cell: "12.3x" is no figure.
                if (cell.find_first_not_of(' ', used) != std::string::npos) numeric = false;
                cells.push_back(v);
            } catch (const std::exception&) {
                numeric = false;
            }
        }
        if (numeric && !cells.empty()) rows.push_back(cells);
    }
    return rows;
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

}  // namespace

TEST_CASE("docs/scenario.md: the serial latency table is serial_latency's") {
    const std::string page = scenario_page();
    const auto rows = table_after(page, "Serial latency on all 24 / 48 cores");
    REQUIRE(rows.size() == 5);
    for (const auto& row : rows) {
        REQUIRE(row.size() == 7);
        const auto batch = static_cast<std::int64_t>(row[0]);
        const serial_result r =
            serial_latency(scenario::default_chip, scenario::ctr_ranking, batch);
        INFO("batch ", batch);
        // Each cell is the figure printed to 0.1: equal after the same rounding.
        CHECK(fixed(row[1], 1) == fixed(r.latency.in(units::us), 1));
        CHECK(fixed(row[2], 1) == fixed(r.device.in(units::us), 1));
        CHECK(fixed(row[3], 1) == fixed(r.bubbles.in(units::us), 1));
        CHECK(fixed(row[4], 1) == fixed(r.aicpu.in(units::us), 1));
        CHECK(fixed(row[5], 1) == fixed(r.transfer.in(units::us), 1));
        CHECK(fixed(row[6], 1) == fixed(r.working_set.in(units::MB), 1));
    }
    // The sunk model's figure in the prose after the table.
    const double sunk = serial_latency(scenario::default_chip, sink(scenario::ctr_ranking), 16)
                            .latency.in(units::us);
    CHECK(page.find("batch 16 takes " + fixed(sunk, 1) + " us with no") != std::string::npos);
}

TEST_CASE("docs/scenario.md: the core split prose and the streams table are evaluate_card's") {
    const std::string page = scenario_page();
    const chip& c = scenario::default_chip;
    const auto& m = scenario::ctr_ranking;
    const core_split half{core_count{12}, core_count{24}};
    const card_result one = evaluate_card(c, m, batch_size{128}, stream_count{1}, all_cores(c));
    const card_result one_half = evaluate_card(c, m, batch_size{128}, stream_count{1}, half);
    const card_result two_half = evaluate_card(c, m, batch_size{128}, stream_count{2}, half);
    const card_result two_all = evaluate_card(c, m, batch_size{128}, stream_count{2}, all_cores(c));
    const auto us = [](const card_result& r) { return fixed(r.avg_latency.in(units::us), 0); };
    const auto qps = [](const card_result& r) { return fixed(r.qps, 0); };
    CHECK(page.find("one stream on all cores " + us(one) + " us (" + qps(one) + " QPS)") !=
          std::string::npos);
    CHECK(page.find("12 cube / 24 vector cores " + us(one_half) + " us") != std::string::npos);
    CHECK(page.find("such streams side by side " + us(two_half) + " us each, " + qps(two_half) +
                    " QPS") != std::string::npos);
    CHECK(page.find("time-share the cores: " + us(two_all) + " us each, " + qps(two_all) +
                    " QPS") != std::string::npos);

    const auto rows = table_after(page, "**Streams and L2 (§11)**");
    REQUIRE(rows.size() == 8);
    for (const auto& row : rows) {
        REQUIRE(row.size() == 7);
        const int streams = static_cast<int>(row[0]);
        const card_result r = evaluate_card(c, m, batch_size{512}, stream_count{streams},
                                            core_split{core_count{6}, core_count{12}});
        INFO("streams ", streams);
        CHECK(fixed(row[1], 1) == fixed(r.avg_latency.in(units::us), 1));
        CHECK(fixed(row[2], 0) == fixed(r.qps, 0));
        CHECK(fixed(row[3], 0) == fixed(r.working_set.in(units::MB), 0));
        CHECK(fixed(row[4], 2) == fixed(r.l2_miss, 2));
        CHECK(fixed(row[5], 2) == fixed(r.hbm_utilization, 2));
        CHECK(fixed(row[6], 2) == fixed(r.cube_utilization, 2));
    }
}

}  // namespace test_scenario_doc
