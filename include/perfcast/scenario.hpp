// perfcast/scenario.hpp: the built-in scenario, what `perfcast whatif` runs without a model.
//
// An illustrative CTR / recommendation ranking model of the kind the seed describes, on the A2
// card (Ascend 910B1: 24 cube / 48 vector cores, guide §12). It is not a measured model: every
// size, dtype and dispatch choice is explained, with the seed section it comes from, in
// docs/scenario.md. tests/data/models/ctr_ranking.model is the same model in the text format
// (tests check that both agree).
//
// One request ranks B candidate items for one user (B = the batch):
//   inputs      candidate ids [B, 26] int64, dense features [B, 13] fp32, the user's recent
//               behaviour ids [300] and long-term behaviour ids [2000] (int64)
//   embeddings  gathers from 20M-row tables (cast of the int64 ids to int32 first, guide §7)
//   attention   target attention of 8 candidate fields over the 300 recent behaviours, as
//               deployed before guide §9's rewrites: a Tile materialises the behaviour sequence
//               per candidate (128 x 8 x 300 x 32 x 4 B = 37.5 MiB at B = 128), two HF32 BMMs
//               with M = 1 read it (1/16 of the cube), an int64 Equal mask (guide §7), softmax
//   long-term   a broadcast BMM [B,1,32] x [32,2000] scores the long-term sequence, a padded
//               TopK keeps 50 (guide §10: valid data ~10 %), a gather and a mean pool
//   defaults    features with default values through a Where (AI CPU, data-dependent shape) and
//               a host-dispatched gather and mask: the dynamic subgraph of guide §7
//   MLP         concat (misaligned 2522-byte rows) and 1261 -> 1024 -> 512 -> 256 -> 1 fp16
//   output      sigmoid scores [B] fp32 back to the host
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "chip.hpp"
#include "chips.hpp"
#include "dtype.hpp"
#include "graph.hpp"
#include "op.hpp"

namespace perfcast::scenario {

/// The A2 card of guide §12 (24 cube / 48 vector cores). 910B1 rather than 910B3 (20 / 40):
/// its core counts are the ones the seed gives for the A2 server card.
inline constexpr const chip& default_chip = chips::ascend910b1;

inline constexpr std::string_view ctr_ranking_name = "ctr_ranking";

namespace detail {
using batch_symbol::B;
inline constexpr dtype f16 = dtype::fp16;
inline constexpr dtype f32 = dtype::fp32;
inline constexpr dtype i64 = dtype::int64;
inline constexpr std::int64_t table_rows = 20'000'000;  // embedding rows per table
inline constexpr std::int64_t emb = 32;                 // embedding width (guide §9: 32)
inline constexpr std::int64_t fields = 26;              // sparse fields per candidate
inline constexpr std::int64_t heads = 8;                // target-attention fields (guide §9: 8)
inline constexpr std::int64_t recent = 300;             // recent behaviours (guide §9: 300)
inline constexpr std::int64_t longterm = 2000;          // long-term behaviours
inline constexpr std::int64_t top = 50;                 // behaviours kept by the TopK
inline constexpr std::int64_t defaults = 4;             // fields with default values
inline constexpr std::int64_t dense = 13;               // dense features
// Concat row: 26 x 32 item + 8 x 32 attention + 32 long-term + 4 x 32 defaults + 13 dense.
inline constexpr std::int64_t concat_row = fields * emb + heads * emb + emb + defaults * emb + dense;
}  // namespace detail

/// The nodes, in stream order.
inline constexpr std::array<node, 34> ctr_ranking = [] {
    using namespace detail;
    using nodes::batch_matmul;
    using nodes::elementwise;
    return std::array<node, 34>{
        // Inputs over PCIe (guide §4).
        nodes::transfer({B, fields}, i64).named("in_item_ids"),
        nodes::transfer({B, dense}, f32).named("in_dense"),
        nodes::transfer({1, recent}, i64).named("in_recent_ids"),
        nodes::transfer({1, longterm}, i64).named("in_longterm_ids"),
        // Embeddings. int64 ids are cast to int32 first (int64 is a vector slow path, guide §7).
        nodes::cast({B, fields}, i64, dtype::int32).named("cast_item_ids"),
        nodes::gather(B * fields, emb, table_rows, f16, {.hot_fraction = 0.2})
            .named("gather_item_emb"),
        nodes::gather(recent, emb, table_rows, f32).named("gather_recent_emb"),
        nodes::gather(longterm, emb, table_rows, f16).named("gather_longterm_emb"),
        // Target attention, before guide §9's rewrites.
        nodes::cast({B, heads, emb}, f16, f32).named("cast_query"),
        nodes::tile({1, recent, emb}, {B * heads, 1, 1}, f32).named("tile_recent"),
        batch_matmul(B * heads, 1, recent, emb, dtype::hf32, {.out_type = f32}).named("bmm_scores"),
        nodes::elementwise_broadcast({B, 1}, {1, recent}, i64,
                                     {.out_type = dtype::bool_, .out_same_as_in = false})
            .named("equal_mask"),
        elementwise({B * heads, recent}, f32, {.inputs = 2, .ops_per_element = 2})
            .named("mask_scale"),
        nodes::softmax(B * heads, recent, f32).named("softmax"),
        batch_matmul(B * heads, 1, emb, recent, dtype::hf32, {.out_type = f32}).named("bmm_pool"),
        nodes::cast({B, heads * emb}, f32, f16).named("cast_attention"),
        // Long-term interest: broadcast BMM, padded TopK, gather, mean pool (guide §9, §10).
        batch_matmul(B, 1, longterm, emb, f16, {.broadcast_b = true, .out_type = f32})
            .named("bmm_longterm"),
        nodes::topk(B, longterm, top, f32).named("topk_longterm"),
        nodes::gather(B * top, emb, table_rows, f16).named("gather_top_emb"),
        nodes::reduce(B * emb, top, f16).named("pool_top"),
        // Features with default values: Where has a data-dependent output shape (guide §7).
        nodes::generic(engine::aicpu, {B, defaults}, i64, 1, 8, 8).named("where_default").dynamic(),
        nodes::gather(B * defaults, emb, table_rows, f16).named("gather_default").host(),
        elementwise({B, defaults * emb}, f16, {.inputs = 2}).named("mask_default").host(),
        // MLP.
        nodes::cast({B, dense}, f32, f16).named("cast_dense"),
        nodes::concat(
            {{B, fields * emb}, {B, heads * emb}, {B, emb}, {B, defaults * emb}, {B, dense}},
            concat_row, f16)
            .named("concat"),
        nodes::matmul(B, 1024, concat_row, f16).named("mlp1"),
        elementwise({B, 1024}, f16, {.inputs = 2, .ops_per_element = 2}).named("bias_relu1"),
        nodes::matmul(B, 512, 1024, f16).named("mlp2"),
        elementwise({B, 512}, f16, {.inputs = 2, .ops_per_element = 2}).named("bias_relu2"),
        nodes::matmul(B, 256, 512, f16).named("mlp3"),
        elementwise({B, 256}, f16, {.inputs = 2, .ops_per_element = 2}).named("bias_relu3"),
        nodes::matmul(B, 1, 256, f16, {.out_type = f32}).named("mlp_out"),
        elementwise({B, 1}, f32, {.inputs = 1, .ops_per_element = 4}).named("sigmoid"),
        // Output.
        nodes::transfer({B}, f32, transfer_dir::to_host).named("out_scores"),
    };
}();

/// The scenario as a run-time model.
[[nodiscard]] inline model ctr_ranking_model() {
    return model{std::string(ctr_ranking_name),
                 std::vector<node>(ctr_ranking.begin(), ctr_ranking.end())};
}

/// Default what-if grid of `perfcast whatif` (guide §12: limits of 6-12 cores are typical; 24 and
/// 48 are the whole card; guide §6 / §13: gears from 16 to 256).
inline constexpr std::array<int, 6> default_streams{1, 2, 3, 4, 5, 6};
inline constexpr std::array<int, 4> default_cube{6, 8, 12, 24};
inline constexpr std::array<int, 4> default_vector{10, 12, 24, 48};
inline constexpr std::array<std::int64_t, 5> default_batches{16, 32, 64, 128, 256};

}  // namespace perfcast::scenario
