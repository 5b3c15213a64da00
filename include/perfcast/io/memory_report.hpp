// perfcast/io/memory_report.hpp: what a sweep's deployments hold of the card's memory
// (device_memory.hpp), as the card and serving sweeps' tables say it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "../device_memory.hpp"
#include "../units.hpp"
#include "table.hpp"

namespace perfcast::io {

/// `need` as size_text writes it, with as many more digits (up to 9) as it takes to read above
/// `capacity`: "64.01 GiB" on a 64 GiB card, not "64 GiB"; "more than 64 GiB" when 9 do not.
[[nodiscard]] inline std::string size_over(data_size need, data_size capacity) {
    return ::perfcast::detail::text_above(
        need, capacity, [](data_size v, int digits) { return size_text(v, digits); });
}

/// What one instance holds, over the batches of `needs` (not empty): "memory: weights 3.87 MiB
/// and tables 3.58 GiB, a copy per instance; working set 4.85 MiB (batch 16) to 77.6 MiB
/// (batch 256)".
[[nodiscard]] inline std::string memory_need_line(std::span<const memory_need> needs,
                                                  const memory_rule& rule) {
    const memory_need* least = &needs.front();
    const memory_need* most = least;
    for (const memory_need& m : needs) {
        if (m.working < least->working) least = &m;
        if (m.working > most->working) most = &m;
    }
    std::string s = "memory: weights " + size_text(most->weights) + " and tables " +
                    size_text(most->tables) +
                    (rule.copies == weight_copies::shared ? ", one copy the instances share"
                                                          : ", a copy per instance");
    if (rule.reserve > data_size{}) s += ", " + size_text(rule.reserve) + " reserved each";
    s += "; working set " + size_text(least->working) + " (batch " +
         std::to_string(least->batch.value) + ")";
    if (most != least) {
        s += " to " + size_text(most->working) + " (batch " + std::to_string(most->batch.value) +
             ")";
    }
    return s;
}

/// Whether the `what` ("deployments", "configurations") fit: "the largest deployment holds at
/// least 21.9 GiB of the card's 64 GiB" when all `total` do (`largest`: the most any holds), else
/// "400 of 480 deployments need more than the card's 64 GiB: " and `then`.
/// On a card of several chips (`chips` > 1) the sizes are the fullest chip's, of its memory.
[[nodiscard]] inline std::string memory_fit_line(data_size largest, data_size capacity,
                                                 std::size_t unfit, std::size_t total,
                                                 std::string_view what, std::string_view then,
                                                 int chips = 1) {
    if (unfit == 0) {
        const std::string one(what.substr(0, what.size() - 1));  // "deployment"
        return "the largest " + one + " holds at least " + size_text(largest) +
               (chips > 1 ? " on its fullest chip, of a chip's " : " of the card's ") +
               size_text(capacity);
    }
    return std::to_string(unfit) + " of " + std::to_string(total) + " " + std::string(what) +
           " need more than " + (chips > 1 ? "a chip's " : "the card's ") + size_text(capacity) +
           (chips > 1 ? " on their fullest chip: " : ": ") + std::string(then);
}

}  // namespace perfcast::io
