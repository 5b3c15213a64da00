// perfcast/profile/pcie.hpp: msprof pcie_*.csv (runtime; allocates).
//
// The file has the columns Device_id,Mode,Min,Max,Avg and one row per metric ("Mode"):
// Tx_p_avg(MB/s), Tx_np_avg(MB/s), Tx_cpl_avg(MB/s), Tx_latency_avg(us), Rx_p_avg(MB/s),
// Rx_np_avg(MB/s), Rx_cpl_avg(MB/s) (p: posted writes, np: non-posted reads, cpl: completions).
// The unit in parentheses is checked: MB/s is 1e6 B/s (msprof's unit; guide §4 reads
// Tx_p_avg = 99.628 MB/s as the average input rate), us is microseconds. Metrics perfcast does
// not know are skipped, so newer msprof versions still read. N/A or empty: not recorded.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <fstream>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../io/parse.hpp"  // trim, parse_double, not_recorded, iequals
#include "../units.hpp"
#include "csv.hpp"

namespace perfcast::profile {

/// Min, max and average of one metric over the sampling window.
template <class Q>
struct pcie_stat {
    std::optional<Q> min;
    std::optional<Q> max;
    std::optional<Q> avg;
    [[nodiscard]] bool recorded() const noexcept { return min || max || avg; }
};

struct pcie_device {
    int device_id = 0;
    pcie_stat<bandwidth> tx_posted;      // Tx_p_avg(MB/s)
    pcie_stat<bandwidth> tx_non_posted;  // Tx_np_avg(MB/s)
    pcie_stat<bandwidth> tx_completion;  // Tx_cpl_avg(MB/s)
    pcie_stat<duration> tx_latency;      // Tx_latency_avg(us)
    pcie_stat<bandwidth> rx_posted;      // Rx_p_avg(MB/s)
    pcie_stat<bandwidth> rx_non_posted;  // Rx_np_avg(MB/s)
    pcie_stat<bandwidth> rx_completion;  // Rx_cpl_avg(MB/s)
};

struct pcie_profile {
    std::vector<pcie_device> devices;  // in order of first appearance

    [[nodiscard]] const pcie_device* find(int device_id) const noexcept {
        const auto it = std::find_if(devices.begin(), devices.end(), [device_id](const auto& d) {
            return d.device_id == device_id;
        });
        return it == devices.end() ? nullptr : &*it;
    }
};

namespace detail {
struct pcie_metric {
    std::string_view name;  // before the parenthesis
    std::string_view unit;  // inside it
};
}  // namespace detail

/// Reads a pcie_*.csv. Throws parse_error for a missing column, a number that is not one, a
/// negative or out-of-range value, or a known metric with an unexpected unit.
[[nodiscard]] inline pcie_profile read_pcie(std::istream& in, std::string source = "<stream>",
                                            csv_options opt = {}) {
    constexpr std::string_view where = "read_pcie";
    csv_reader r(in, std::move(source), opt);
    if (!r.next()) throw parse_error(where, r.source(), 1, 0, "empty file", "");
    std::optional<std::size_t> c_dev, c_mode, c_min, c_max, c_avg;
    for (std::size_t i = 0; i < r.record().size(); ++i) {
        const std::string_view h = io::trim(r.record()[i]);
        if (io::iequals(h, "Device_id")) c_dev = i;
        if (io::iequals(h, "Mode")) c_mode = i;
        if (io::iequals(h, "Min")) c_min = i;
        if (io::iequals(h, "Max")) c_max = i;
        if (io::iequals(h, "Avg")) c_avg = i;
    }
    if (!c_dev || !c_mode || !c_min || !c_max || !c_avg) {
        std::string all;
        for (std::size_t i = 0; i < r.record().size(); ++i) {
            all += (i ? "," : "") + std::string(r.record()[i]);
        }
        throw parse_error(where, r.source(), r.record().line(), 0,
                          "expected the columns Device_id,Mode,Min,Max,Avg", all);
    }

    pcie_profile out;
    while (r.next()) {
        const csv_record& rec = r.record();
        const std::string_view dev_text = io::trim(rec[*c_dev]);
        int dev = 0;
        {
            const auto [p, ec] =
                std::from_chars(dev_text.data(), dev_text.data() + dev_text.size(), dev);
            if (ec != std::errc{} || p != dev_text.data() + dev_text.size() || dev < 0)
                r.fail_at_field(*c_dev, where, "not a device id");
        }
        const std::string_view mode = io::trim(rec[*c_mode]);
        const auto open = mode.find('(');
        const auto close = mode.rfind(')');
        const std::string_view name = io::trim(mode.substr(0, open));
        const std::string_view unit =
            open != std::string_view::npos && close != std::string_view::npos && close > open
                ? mode.substr(open + 1, close - open - 1)
                : std::string_view{};

        pcie_device* d = nullptr;
        for (auto& x : out.devices) {
            if (x.device_id == dev) d = &x;
        }
        if (d == nullptr) {
            out.devices.push_back(pcie_device{});
            d = &out.devices.back();
            d->device_id = dev;
        }

        const auto value = [&](std::size_t c) -> std::optional<double> {
            const std::string_view s = io::trim(rec[c]);
            if (io::not_recorded(s)) return std::nullopt;
            double v = 0;
            const auto st = io::parse_double(s, v);
            if (st == io::number_status::not_a_number) r.fail_at_field(c, where, "not a number");
            if (st == io::number_status::out_of_range)
                r.fail_at_field(c, where, "number out of the range of a double");
            if (v < 0) r.fail_at_field(c, where, "negative value");
            return v;
        };
        const auto rate = [&](pcie_stat<bandwidth>& s) {
            if (!io::iequals(unit, "MB/s")) {
                r.fail_at_field(*c_mode, where, "unexpected unit (expected MB/s)");
            }
            if (auto v = value(*c_min)) s.min = bandwidth{*v, units::MBps};
            if (auto v = value(*c_max)) s.max = bandwidth{*v, units::MBps};
            if (auto v = value(*c_avg)) s.avg = bandwidth{*v, units::MBps};
        };
        if (io::iequals(name, "Tx_p_avg")) {
            rate(d->tx_posted);
        } else if (io::iequals(name, "Tx_np_avg")) {
            rate(d->tx_non_posted);
        } else if (io::iequals(name, "Tx_cpl_avg")) {
            rate(d->tx_completion);
        } else if (io::iequals(name, "Rx_p_avg")) {
            rate(d->rx_posted);
        } else if (io::iequals(name, "Rx_np_avg")) {
            rate(d->rx_non_posted);
        } else if (io::iequals(name, "Rx_cpl_avg")) {
            rate(d->rx_completion);
        } else if (io::iequals(name, "Tx_latency_avg")) {
            if (!io::iequals(unit, "us")) {
                r.fail_at_field(*c_mode, where, "unexpected unit (expected us)");
            }
            if (auto v = value(*c_min)) d->tx_latency.min = duration{*v, units::us};
            if (auto v = value(*c_max)) d->tx_latency.max = duration{*v, units::us};
            if (auto v = value(*c_avg)) d->tx_latency.avg = duration{*v, units::us};
        }
        // Other metrics: skipped on purpose (see the header comment).
    }
    return out;
}

[[nodiscard]] inline pcie_profile read_pcie_file(const std::string& path) {
    std::ifstream f = open_input(path, "read_pcie");
    return read_pcie(f, path);
}

}  // namespace perfcast::profile
