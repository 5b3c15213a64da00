// Compile-time tests of counts.hpp and of the calls that take counts: compiling this file is
// passing. A batch size, a stream count and a core count are distinct types, so the calls that
// take two of them side by side (evaluate_card, evaluate_at, make_card_server, a sweep's grid)
// reject them swapped, or given as plain numbers, or one kind given for another.
#include <array>
#include <compare>
#include <concepts>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/counts.hpp>
#include <perfcast/deployment.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/nodes.hpp>
#include <perfcast/serving.hpp>
#include <perfcast/serving_sweep.hpp>
#include <perfcast/whatif.hpp>

namespace {

using namespace perfcast;

// The library's op vocabulary validates (node.hpp: here, not in the header, which a GCC build
// with -fsanitize=undefined could not then include).
static_assert(validate(op_kinds).size() == op_kinds.size());

// ---- the types --------------------------------------------------------------------------------

// Construction from a number is explicit; a count never turns back into a number by itself.
static_assert(std::is_constructible_v<batch_size, std::int64_t>);
static_assert(std::is_constructible_v<stream_count, int>);
static_assert(std::is_constructible_v<core_count, int>);
static_assert(!std::is_convertible_v<std::int64_t, batch_size>);
static_assert(!std::is_convertible_v<int, batch_size>);
static_assert(!std::is_convertible_v<int, stream_count>);
static_assert(!std::is_convertible_v<int, core_count>);
static_assert(!std::is_convertible_v<batch_size, std::int64_t>);
static_assert(!std::is_convertible_v<stream_count, int>);
static_assert(!std::is_convertible_v<core_count, int>);

// One kind is not another.
static_assert(!std::is_constructible_v<batch_size, stream_count>);
static_assert(!std::is_constructible_v<batch_size, core_count>);
static_assert(!std::is_constructible_v<stream_count, batch_size>);
static_assert(!std::is_constructible_v<stream_count, core_count>);
static_assert(!std::is_constructible_v<core_count, stream_count>);
static_assert(!std::is_constructible_v<core_count, batch_size>);
static_assert(!std::equality_comparable_with<batch_size, stream_count>);
static_assert(!std::equality_comparable_with<stream_count, core_count>);
static_assert(!std::equality_comparable_with<batch_size, std::int64_t>);

// Within a kind: value, equality and order, in constant expressions.
static_assert(batch_size{16}.value == 16);
static_assert(stream_count{2} == stream_count{2});
static_assert(stream_count{2} < stream_count{3});
static_assert(core_count{24} > core_count{12});
static_assert(batch_size{} == batch_size{0});
static_assert(std::is_trivially_copyable_v<batch_size> && sizeof(batch_size) == 8);
static_assert(std::is_trivially_copyable_v<stream_count> && sizeof(stream_count) == sizeof(int));

// A grid axis from numbers names its kind; the numbers must fit it.
static_assert(counts<stream_count>({1, 2, 4}).size() == 3);
static_assert(counts<batch_size>({16, 128})[1] == batch_size{128});
template <class Count, class Numbers>
concept counts_from = requires(const Numbers& n) {
    counts<Count>(n);
};
static_assert(counts_from<core_count, std::vector<int>>);
static_assert(counts_from<batch_size, std::vector<std::int64_t>>);

// ---- evaluate_card ----------------------------------------------------------------------------

template <class Batch, class Streams>
concept card_call = requires(const chip& c, std::span<const node> m, Batch b, Streams s,
                             const core_split& k) {
    evaluate_card(c, m, b, s, k);
};

static_assert(card_call<batch_size, stream_count>);   // the right order
static_assert(!card_call<stream_count, batch_size>);  // batch and streams swapped
static_assert(!card_call<core_count, stream_count>);  // a core count as the batch
static_assert(!card_call<batch_size, core_count>);    // a core count as the streams
static_assert(!card_call<std::int64_t, int>);         // plain numbers
static_assert(!card_call<int, int>);
static_assert(!card_call<batch_size, int>);
static_assert(!card_call<std::int64_t, stream_count>);

template <class Batch>
concept group_call = requires(const chip& c, std::span<const node> m, Batch b,
                              std::span<const instance_group> g) {
    evaluate_card(c, m, b, g);
};
static_assert(group_call<batch_size>);
static_assert(!group_call<stream_count>);
static_assert(!group_call<std::int64_t>);

// An instance group's count is a stream count.
template <class Count>
concept group_of = requires(core_split s, Count n) {
    instance_group{s, n};
};
static_assert(group_of<stream_count>);
static_assert(!group_of<int>);
static_assert(!group_of<batch_size>);
static_assert(!group_of<core_count>);

// ---- one node -----------------------------------------------------------------------------------

template <class Batch, class Limit>
concept node_call = requires(const chip& c, const node& n, Batch b, Limit k) {
    evaluate_at(c, n, b, k);
};
static_assert(node_call<batch_size, core_count>);
static_assert(!node_call<core_count, batch_size>);  // swapped
static_assert(!node_call<std::int64_t, core_count>);
static_assert(!node_call<batch_size, int>);

// ---- serving and sweeps -------------------------------------------------------------------------

template <class Streams>
concept card_server_call = requires(const chip& c, std::span<const node> m, Streams s,
                                    core_split k) {
    make_card_server(c, m, s, k, gear_set::every(16));
};
static_assert(card_server_call<stream_count>);
static_assert(!card_server_call<int>);
static_assert(!card_server_call<core_count>);

// Grids: streams, core limits and batches are lists of their own kind.
static_assert(std::same_as<decltype(whatif_grid::streams), std::vector<stream_count>>);
static_assert(std::same_as<decltype(whatif_grid::cube), std::vector<core_count>>);
static_assert(std::same_as<decltype(whatif_grid::vector), std::vector<core_count>>);
static_assert(std::same_as<decltype(whatif_grid::batches), std::vector<batch_size>>);
static_assert(std::same_as<decltype(serving_grid::streams), std::vector<stream_count>>);
static_assert(std::same_as<decltype(serving_grid::cube), std::vector<core_count>>);
static_assert(std::same_as<decltype(serving_grid::vector), std::vector<core_count>>);
static_assert(!std::is_convertible_v<std::vector<int>, std::vector<stream_count>>);

// counts<Count>(container): numbers that narrow into the count's value do not compile (a
// std::int64_t list as core counts), wider counts take them.
template <class N>
concept core_counts_from = requires(const N& v) {
    counts<core_count>(v);
};
static_assert(!numbers_of<core_count, std::vector<std::int64_t>>);
static_assert(!core_counts_from<std::vector<std::int64_t>>);
static_assert(core_counts_from<std::vector<int>>);
static_assert(numbers_of<batch_size, std::vector<std::int64_t>>);

// Views that would dangle do not compile: a temporary chip or model kept by the card adapter,
// the configurations of a temporary sweeper. (A temporary model passed to a call is
// safe, and converts.)
static_assert(std::is_convertible_v<model&&, std::span<const node>>);
static_assert(
    std::is_constructible_v<card_service, const chip&, std::span<const node>, core_split>);
static_assert(std::is_constructible_v<card_service, const chip&, const model&, core_split>);
static_assert(!std::is_constructible_v<card_service, chip&&, std::span<const node>, core_split>);
static_assert(!std::is_constructible_v<card_service, const chip&, model&&, core_split>);
// A temporary that owns nodes, of any kind, dangles too; a temporary span is a view.
static_assert(!std::is_constructible_v<card_service, const chip&, std::vector<node>&&, core_split>);
static_assert(
    !std::is_constructible_v<card_service, const chip&, std::array<node, 2>&&, core_split>);
static_assert(std::is_constructible_v<card_service, const chip&, std::vector<node>&, core_split>);
static_assert(
    std::is_constructible_v<card_service, const chip&, std::span<const node>&&, core_split>);
template <class C, class M>
concept serves = requires(C&& c, M&& m) {
    make_card_server(std::forward<C>(c), std::forward<M>(m), stream_count{1},
                     core_split{core_count{1}, core_count{1}}, gear_set{});
};
// The server tabulates its service times before it returns: temporaries are safe.
static_assert(serves<const chip&, const model&>);
static_assert(serves<chip&&, model&&>);
template <class S>
concept walks_configurations = requires(S&& s) {
    std::forward<S>(s).configurations();
};
static_assert(walks_configurations<const serving_sweeper&>);
static_assert(!walks_configurations<serving_sweeper&&>);

// A measured deployment: its instance count and batch.
static_assert(std::same_as<decltype(deployment_case::instances), stream_count>);
static_assert(std::same_as<decltype(deployment_case::batch), batch_size>);

// ---- the right order computes, in a constant expression ---------------------------------------

using batch_symbol::B;
constexpr std::array<node, 2> tiny{
    nodes::matmul(B, 512, 512, dtype::fp16),
    nodes::elementwise({B, 512}, dtype::fp16, {.ops_per_element = 2}),
};
constexpr core_split half{core_count{12}, core_count{24}};
constexpr card_result r =
    evaluate_card(chips::ascend910b1, tiny, batch_size{64}, stream_count{2}, half);
static_assert(r.batch == 64 && r.streams == 2);

}  // namespace
