// evaluate_card(chip, nodes, batch, streams, split) with the batch and the stream count swapped
// must not compile: they are distinct types (counts.hpp).
// Negative test; see cmake/PerfcastCompileFail.cmake for the PERFCAST_COMPILE_FAIL guard.
#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/scenario.hpp>

int main() {
    using namespace perfcast;
    const core_split half{core_count{12}, core_count{24}};
    const batch_size batch{16};
    const stream_count streams{2};
#if PERFCAST_COMPILE_FAIL
    [[maybe_unused]] auto r =
        evaluate_card(chips::ascend910b1, scenario::ctr_ranking, streams, batch, half);
#else
    [[maybe_unused]] auto r =
        evaluate_card(chips::ascend910b1, scenario::ctr_ranking, batch, streams, half);
#endif
}
