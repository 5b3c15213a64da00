// perfcast/profile/holdout.hpp: a seeded split of profile rows into fit and held-out sets by
// whole groups (same type, same input shapes and dtypes), so that repeats of one op never sit
// on both sides: what `perfcast validate --holdout` scores a calibration on (validate.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../random.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// A deterministic split of rows into fit and held-out sets by whole groups (same op type, input
/// shapes and dtypes): about `fraction` of the rows are held out, chosen by `seed`.
struct holdout_split {
    std::vector<kernel_row> fit;
    std::vector<kernel_row> test;
};

/// The group of a row: its op type, input shapes and input dtypes as written. Rows of one group
/// are repeats of one op.
[[nodiscard]] inline std::string group_key(const kernel_row& r) {
    std::string key = r.op_type + "|";
    for (const auto& s : r.input_shapes) key += to_string(s);
    key += "|";
    for (const auto& t : r.input_types) key += t.text + ";";
    return key;
}

[[nodiscard]] inline holdout_split split_holdout(const std::vector<kernel_row>& rows,
                                                 double fraction, std::uint64_t seed) {
    PERFCAST_EXPECTS(fraction > 0 && fraction < 1, "split_holdout", "fraction", fraction,
                     "a share in (0, 1)");
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < rows.size(); ++i) groups[group_key(rows[i])].push_back(i);
    // splitmix64 (random.hpp): the same groups for the same seed on every platform.
    std::uint64_t state = seed;
    const auto next = [&state] { return ::perfcast::detail::splitmix64(state); };
    std::vector<std::pair<std::uint64_t, const std::vector<std::size_t>*>> order;
    for (const auto& [k, idx] : groups) order.emplace_back(next(), &idx);
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<bool> held(rows.size(), false);
    const auto target = static_cast<std::size_t>(fraction * static_cast<double>(rows.size()) + 0.5);
    std::size_t taken = 0;
    for (const auto& [r, idx] : order) {
        if (taken >= target) break;
        for (std::size_t i : *idx) held[i] = true;
        taken += idx->size();
    }
    holdout_split out;
    for (std::size_t i = 0; i < rows.size(); ++i) (held[i] ? out.test : out.fit).push_back(rows[i]);
    return out;
}

}  // namespace perfcast::profile
