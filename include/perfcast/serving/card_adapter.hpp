// perfcast/serving/card_adapter.hpp: service times from the card model (card.hpp):
// card_service and make_card_server, the one part of serving that needs the card model.
#pragma once

#include <ranges>
#include <span>
#include <type_traits>

#include "../batching.hpp"
#include "../card.hpp"
#include "../chip.hpp"
#include "../counts.hpp"
#include "../error.hpp"
#include "../graph.hpp"
#include "../units.hpp"

namespace perfcast {

// ---- service times from the card model ----------------------------------------------------

/// A `ServiceTime` from card.hpp: a batch of `batch` samples on an instance with core split
/// `split`, while `concurrent` batches run, takes the per-instance latency of
/// evaluate_card(chip, model, batch, concurrent instances, split). Every running batch is
/// taken to be of the same size as this one (card.hpp's instances are alike); core
/// time-sharing, HBM, L2, link and host contention come from the card model. On a card of
/// several chips (card_params::chips) the running batches are spread over them
/// (spread_over_chips) and the latency is the first chip's, which runs the most. The model's
/// nodes are not copied: they must outlive the adapter (and any table not yet built from it).
class card_service {
public:
    card_service(const chip& c, std::span<const node> model, core_split split,
                 card_params params = {})
        : chip_(&c), model_(model), split_(split), params_(params) {
        validate(split, c);
        // Open loop: a server starts the next request when one is there; the host work a
        // closed-loop stress test does between its tasks does not exist here.
        if (params_.runtime) params_.runtime->between = duration{};
        PERFCAST_EXPECTS(!model.empty(), "card_service", "model (nodes)", 0.0, "at least one node");
    }
    /// The adapter keeps the chip by address and the model's nodes as a view: temporaries of
    /// either would dangle. A temporary that owns its nodes (a model, a std::vector or
    /// std::array of nodes, `ctr_ranking_model().nodes`) does not compile; a view (a span) is
    /// taken as given.
    card_service(const chip&&, std::span<const node>, core_split, card_params = {}) = delete;
    template <class Nodes>
    requires(!std::is_lvalue_reference_v<Nodes> && !std::ranges::borrowed_range<Nodes> &&
             std::is_convertible_v<Nodes&&, std::span<const node>>)
        card_service(const chip&, Nodes&&, core_split, card_params = {})
    = delete;
    /// Plain ints: the ServiceTime signature batching.hpp's servers call (batch, concurrency).
    [[nodiscard]] duration operator()(int batch, int concurrent_batches) const {
        return evaluate_card(*chip_, model_, batch_size{batch}, stream_count{concurrent_batches},
                             split_, params_)
            .instances()[0]
            .latency;
    }
    [[nodiscard]] const core_split& split() const noexcept { return split_; }

private:
    const chip* chip_;
    std::span<const node> model_;
    core_split split_;
    card_params params_;
};

/// A server of `streams` instances of `model` on chip `c`, each with `split`: the card's cores
/// come from the chip, service times from card_service tabulated at every gear and every
/// concurrency 1..streams, before it returns (the server keeps the table, not the chip or the
/// model: temporaries are safe). What `perfcast whatif` builds per candidate.
[[nodiscard]] inline server_config make_card_server(const chip& c, std::span<const node> model,
                                                    stream_count streams, core_split split,
                                                    gear_set gears, duration window = {},
                                                    const card_params& params = {}) {
    uniform_server u;
    u.gears = gears;
    u.window = window;
    u.streams = streams.value;
    u.stream_cube = split.cube;
    u.stream_vector = split.vector;
    u.card_cube = core_count{c.cube.cores * validate(params).chips};  // every chip's cores
    u.card_vector = core_count{c.vector.cores * params.chips};
    return make_server(u, card_service(c, model, split, params));
}

}  // namespace perfcast
