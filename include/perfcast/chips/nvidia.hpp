// perfcast/chips/nvidia.hpp: constexpr presets for NVIDIA data-center GPUs.
//
// The model speaks Ascend: a cube engine (matrix unit), a vector engine, per-core memory rates.
// A GPU maps onto it as follows (docs/model.md, "Chip parameters"):
//  - cube.cores = SMs; cube ops_per_cycle = dense tensor-core MACs per cycle per SM, derived so
//    that cores x ops x 2 x clock equals the datasheet's dense tensor peak;
//  - vector.cores = SMs; vector ops_per_cycle = FP32 CUDA cores per SM for fp32, twice that for
//    fp16/bf16 (packed half2). One vector op is one element operation, so the model's vector
//    peak is half the datasheet's FMA-counted FP32 TFLOPS;
//  - no AI CPU (aicpu.cores = 0): ops that Ascend runs there run on the host instead;
//  - alignment 32 B: the DRAM sector size, the unit of a memory transaction.
// Sources: NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf) and Ampere
// architecture whitepaper; NVIDIA H100 datasheet and Hopper architecture whitepaper; NVIDIA H200
// datasheet; NVIDIA A40 datasheet, the NVIDIA Ampere GA102 GPU architecture whitepaper and the
// CUDA C++ Programming Guide's limits for compute capability 8.6; and a device check on an H200
// (SM count, clocks, memory, L2, PCIe, per-SM copy rates, launch costs), which is cited as such.
// Everything else says "assumption".
#pragma once

#include "../chip.hpp"
#include "../dtype.hpp"
#include "../units.hpp"
#include "ascend.hpp"  // detail::make_rates

namespace perfcast::chips {

/// Model overheads for every GPU preset (the Hopper ones replace the heads, add a load latency,
/// keep the norms' trip of before and set no attention floors: hopper_overheads). The kernel
/// heads, the norms' trip and the attention floors are fitted on vidur's A100 rows (below);
/// host_dispatch 8 us (a CUDA launch from an eager framework) and aicpu_launch 30 us (a host
/// fallback op) are assumptions to calibrate against a profile (docs/model.md). What the H200
/// device check measured: a bare CUDA runtime launch call takes 4.2 us of host time (the floor
/// under host_dispatch; frameworks add their own), launch + synchronize 10.1 us, and an empty
/// kernel of 4224 blocks is not measurably slower than one of 1 block (per-SM cost < 0.03 us).
// The kernel heads, cube 7 us + 0.02 us per SM and vector 0.5 us + 0.02 us per SM (9.16 and
// 2.66 us on the A100's 108 SMs; both were 3 us + 0.02 us per SM, an assumption, under which
// vidur's A100 Adds of a few tokens, 2 us measured, were predicted at 5.3 us). Fitted, not
// measured: the uncalibrated MAPE of the A100 fit split of vidur's Llama-2-7B profile (every row
// of tensor-parallel degree 1 and <= 1024 tokens), jointly with the norms' trip
// (row_trip_cycles, below), PyTorch's index_select rate and trip (pytorch_index_select_rate,
// pytorch_index_select_trip) by coordinate descent over grids (cube launch 2 .. 8 us, vector
// launch 0.25 .. 3 us, per SM 0 .. 0.06 us, trip 400 .. 1800 cycles, rate 0.45 .. 0.9, index trip
// 0 .. 0.8 us), from the values before: 17.8 -> 11.6 %; both per-SM terms stayed (the H200's
// empty kernels bound them under 0.03 us). The rows pin the vector launch (with the rest as
// fitted: 11.6 % at 0.25 and 0.5 us, 12.2 % at 1, 15.2 % at 2, 19.4 % at 3) and barely the
// cube's (12.0 % at 3 us, 11.8 % at 5, 11.6 % at 7 and, scored after, 9: a plateau, 7 the grid's
// point): vidur times operators with CUDA events, a cuBLAS call that may hold more than one
// kernel. Held out: the A100 test split 21.1 -> 13.2 %, the A40's five models 15.2-20.6 ->
// 11.8-15.6 %, the measured deployments DLRM 4.7 -> 5.7 % and NCF 14.9 -> 15.1 % (worse;
// docs/validation.md, "The Ampere heads refitted"). Calibrate:
// `calibrate` fits `head.cube.*` and `head.vector.*` from a profile's short kernels.
inline constexpr overhead_spec default_gpu_overheads{
    .launch = duration{7.0, units::us},
    .per_core = duration{0.02, units::us},
    .vector_launch = duration{0.5, units::us},
    .vector_per_core = duration{0.02, units::us},
    .host_dispatch = duration{8.0, units::us},
    .aicpu_launch = duration{30.0, units::us},
    // A norm's thread block holds its row for 1200 SM cycles (0.85 us at the A100's 1410 MHz) a
    // trip of its threads over the row, four trips at 4096 elements of 1024 threads. Fitted, not
    // measured: with the heads above, on the same rows and grids (lowest at 1200 of the grid;
    // 1150 scores the same within 0.01 point, 1100 and 1250 0.1 point more); before those heads it
    // was fitted alone, 2.3 us a 4096-wide row, 810.75 cycles a trip (hopper_row_trip_cycles;
    // docs/validation.md "Row kernels on a GPU"); kept in cycles for the A40 (an assumption). Per
    // trip, from the kernel's code: vLLM's rms_norm_kernel (csrc/layernorm_kernels.cu, as vidur
    // profiled it) walks the row twice in strides of the block, each step a load that waits on
    // memory; other widths were scored, not fitted (docs/validation.md). Calibrate: a type's fitted
    // work factor replaces the floor.
    .row_trip_cycles = cycle_count{1200.0, units::cycle},
    // Resident threads per SM, compute capability 8.0 and 9.0 (CUDA C++ Programming Guide,
    // "Technical Specifications per Compute Capability": 2048).
    .core_threads = 2048,
    // A fused-attention thread block holds its SM for 4250 cycles (3.0 us at the A100's 1410
    // MHz) beyond its bytes' time: FlashAttention-2's split-KV kernel (the paged KV cache vLLM
    // and sarathi serve from) computes a full 64-row tile over each 128-key block whatever its
    // one query row. Fitted, not measured: the uncalibrated MAPE of the decode rows of vidur's
    // A100 Llama-2-7B attention profile at tensor-parallel degrees 1 and 2 (523 rows of
    // tests/data/gpu/vidur_a100_llama2-7b_attention.csv), lowest at 5000 of 0 .. 7000 cycles in
    // steps of 250 under the cube head of before (20.6 % without the floor, 13.5 % with it), then
    // refitted under the fitted heads above, lowest at 4250 of 2500 .. 5500 (14.9 % at 5000, 13.8
    // % at 4250); the degrees 4 and 8 were held out (docs/validation.md, "Attention on the A100:
    // vidur's paged kernels", "The Ampere heads refitted"). Kept in cycles for
    // the A40 (the same kernels on GA102: an assumption); the Hopper presets set none (their
    // heads are fitted on cuDNN's attention, which packs a decode step's heads otherwise).
    // Calibrate: time a decode step at batch 1 and 64 over a 32-token KV cache.
    .attention_unit_cycles = cycle_count{4250.0, units::cycle},
    // FlashInfer's merge of a split attention's partial outputs holds an SM 1000 cycles (0.71 us at
    // 1410 MHz) per query row and head: v0.0.6's VariableLengthMergeStates launches a 128-thread
    // block for each. With it FlashInfer's kernel runs at the engine's full rate past one block an
    // SM (no attention_share: a choice made after seeing that the 28 prompts of 13056-16384 tokens
    // of the rows held out below, 8-10 waves of blocks, score 3.2 % at it and were over by a median
    // 51 % at FlashAttention-2's 0.65) and at the share FlashAttention-2's rows fitted (0.8,
    // ampere_attention_unfilled_share) under it. Fitted, not measured: the uncalibrated MAPE of the
    // 585 rows of vidur's A100 Llama-3-8B profile read first (tensor-parallel degree 1's decode
    // steps and 64-token prefill chunks, degree 4's decode steps; tests/data/README.md) on a grid
    // of 0 .. 2000 cycles jointly with that share from 0.5 to 1 (steps of 100-300 cycles and 0.05,
    // then 800 .. 1200 by 100 at 0.8), lowest at 1000 and 0.8 (9.3 %; 10.3 % without the merge at
    // its best share there, 0.55; the ridge from 0.7 / 800 to 0.85 / 1200 within 0.3 points); the
    // 569 degree-4 prefill rows read second held out: 53.0 -> 8.7 % (docs/validation.md, "Attention
    // on the A100: FlashInfer's plan"). FlashInfer releases from v0.1 merge in a persistent kernel,
    // not measured here (an assumption that it costs the same); the A40 takes the same cycles (an
    // assumption); the Hopper presets none (FlashInfer runs other kernels there). Calibrate: time a
    // chunk of 64 tokens over 448 and 512 cached ones, the first unsplit, the second split.
    .attention_merge_cycles = cycle_count{1000.0, units::cycle},
};

/// A norm's trip over its row on the Hopper presets (overhead_spec::row_trip_cycles): 810.75
/// SM cycles, the A100's fit before the Ampere heads were refitted (3243 cycles a 4096-wide row
/// of four trips, fitted alone on the A100 fit split of vidur's Llama-2-7B profile), which the
/// Hopper heads were fitted with: carried over, never tuned on Hopper rows (only 810.75 and
/// 1200 were compared there). Not refitted with the Ampere constants: the trip is the norm
/// kernel's, and a profile row does not name it. The H200's rows (PyTorch's
/// vectorized_layer_norm_kernel, 128-thread blocks) score worse at the A100's new 1200 (the
/// main set 17.0 -> 17.6 %, the unseen set 18.9 -> 21.1 %, their RmsNorm rows 31.0 -> 52.0 %),
/// vidur's H100 rows (vLLM's rms_norm_kernel, as on the A100) better (with the index_select
/// rate and trip of before, 19.2 -> 14.6 %): each family keeps the trip its heads were fitted
/// with (docs/validation.md, "The Ampere heads refitted"). Calibrate: a type's fitted work
/// factor replaces the floor.
inline constexpr cycle_count hopper_row_trip_cycles{3243.0 / 4.0, units::cycle};

/// Overheads of the Hopper presets (H100 SXM, H200): the GPU defaults with the kernel heads fitted
/// on CUPTI kernel durations measured on an H200 (tests/data/gpu/h200/, issue 13 item 6). A fill
/// runs 0.70 us, a 4096-element Add 0.90 us with its inputs in L2 and 1.26 us from HBM: a kernel
/// that reads waits for its first load and sets up its inputs, one that only writes does not
/// (overhead_spec::load_latency). `examples/fit_heads --load-latency-max-us 1` on the file's hot
/// and cold halves gives the load latency 0.68 us (searched in steps of 0.01 us on [0, 1] us: the
/// least objective of the vector head fit), then cube 0.91 us + 0.004 us per SM and vector 0.71 us
/// + 0.000 us per SM with it: a reading kernel's launch and load take 1.59 us (cube, plus 0.004 us
/// per SM) and 1.39 us (vector), a fill's launch 0.71 us (docs/validation.md, "Measured on an
/// H200", "A fill does not wait for a load"; 0.71 / 0.88 / 0.70 us before reductions ran on the
/// blocks PyTorch launches, cost.hpp reduce_launch_of, whose small ReduceSum rows had pulled the
/// fit; 0.70 / 0.89 / 0.71 us before softmax ran on its own blocks, hopper_softmax_warp_rate
/// below). The latency is the typical reading kernel's extra head over a fill (its first load's
/// wait, 0.2 us from L2 and 0.56 us from HBM for the Add, and its set-up), not a memory round
/// trip. Before it the heads were cube 1.59 us + 0.004 us per SM and vector 1.37 us + 0.000 us,
/// with fills at twice their time. The vector head and latency are fitted with the element walks
/// in place (hopper_walk_rate below) and they with it: each the other's fit, a fixed point. The
/// Ampere presets keep their own heads (default_gpu_overheads: a vector launch fitted on vidur's
/// A100 rows, which sum an operator's kernels at 1 us resolution; those rows scored worse with
/// the Hopper heads, 28.6 -> 35.9 %, when they were fitted). Calibrate: `calibrate` fits both heads
/// (`head.cube.*`, `head.vector.*`) from a profile's short kernels, over the load latency.
inline constexpr overhead_spec hopper_overheads = [] {
    overhead_spec o = default_gpu_overheads;
    o.launch = duration{0.91, units::us};
    o.per_core = duration{0.004, units::us};
    o.vector_launch = duration{0.71, units::us};
    o.vector_per_core = duration{0.000, units::us};
    o.load_latency = duration{0.68, units::us};
    o.row_trip_cycles = hopper_row_trip_cycles;
    o.attention_unit_cycles = cycle_count{};
    o.attention_merge_cycles = cycle_count{};
    return o;
}();

/// The share of the tensor-core rate cuBLAS keeps on Hopper for a GEMM whose K and N rows are
/// not 16-byte aligned (engine_spec::narrow_rows_4 / _2), measured on an H200
/// (tests/data/gpu/h200/, issue 13 item 6): of 40 random bf16 shapes through F.linear, those with K
/// and N even but not multiples of 8 ran Ampere-era `s16816gemm ... align2` kernels at 144-214
/// TFLOP/s and those with an odd K or N Turing-era `s1688gemm ... align1` kernels at 94-131,
/// against 400-790 for aligned shapes. Each share is the least mean |log(predicted / measured)|
/// over the misaligned GEMMs of even configuration number (3 and 18 rows; tests/test_h200.cpp
/// repeats the search); those of odd number were held out: 65.4 % MAPE with shares of 1, 12.9 %
/// with these; 86 16-bit GEMMs measured after these were committed (h200_align.csv): 50.4 ->
/// 21.5 % (docs/validation.md, "Measured on an H200"). Below the ratio of the rates since a
/// misaligned GEMM's loads are slower too (cost.hpp's misaligned runs). Calibrate: time a GEMM with
/// K = 4095 and 4094 against 4096.
inline constexpr double hopper_narrow_rows_4 = 0.24;
inline constexpr double hopper_narrow_rows_2 = 0.145;

/// How fast the Hopper presets' library (PyTorch's CUDA kernels) walks the elements of an op it
/// does not vectorize (engine_spec::walk_rate, transpose_rate, walk_head; op::walk), measured on
/// an H200 (tests/data/gpu/h200/, the main set): a Mul against a [W] operand broadcast over rows,
/// and a bf16 -> fp32 cast, run `elementwise_kernel` / `unrolled_elementwise_kernel`, which
/// compute every element's offsets, at 1.3-1.6 elements per SM cycle (a [65536, 4096] bf16
/// broadcast Mul 665 us, where the same-shape Mul's vectorized kernel takes 364); a transposing
/// copy (`x.t().contiguous()`) at 0.57 (1.8 ms for [65536, 4096] bf16, hot or cold alike: not
/// bound by HBM). Each the least mean |log(predicted / measured)| on the file's 50 rows of the
/// first kind (rate in steps of 0.01, head of 0.01 us, searched together) and 16 of the second
/// (steps of 0.005, with that head), with the vector head and load latency of hopper_overheads,
/// which were refitted with these in place until neither moved (the walk head 0.62 us before
/// the load latency took 0.04 us more of a reading kernel's head, 0.58 us before softmax ran on
/// its own blocks and the latency gave 0.02 us of it back); tests/test_h200.cpp repeats
/// the search. Shapes and dtypes of none of these rows, measured before this fit
/// (h200_unseen.csv), score it (docs/validation.md). An assumption for the H100 (same SMs and
/// library), and for the A100 and the A40 (the same rates in elements per SM cycle; no walk head:
/// their vector head was fitted on vidur's A100 rows with the walks in place,
/// default_gpu_overheads). sarathi-serve's rope and gated-activation kernels, which walk the
/// same way (profile/ops.hpp), ran at 1.13-1.43 elements per SM cycle on vidur's A100 and H100
/// rows, which this fit did not see (docs/validation.md, "Unseen models and an unseen GPU").
/// Calibrate: time a broadcast Mul, an upcast and a transpose of a few hundred MB against a
/// same-shape Add.
inline constexpr double hopper_walk_rate = 1.49;
inline constexpr double hopper_transpose_rate = 0.595;
inline constexpr duration hopper_walk_head{0.60, units::us};

/// Elements per SM cycle of PyTorch's CUDA softmax along the last axis (engine_spec::
/// softmax_warp_rate, softmax_block_rate; the launches of softmax_launch_of, cost.hpp), measured
/// on an H200 (tests/data/gpu/h200/, the main set): `softmax_warp_forward` (a warp a row: [131072,
/// 128] and [16384, 1024] bf16, 31.8 and 31.7 us) and the block-a-row kernels
/// (`cunn_SoftMaxForwardReg` / `Smem`: [1..65536, 4096] bf16 hot and cold, [2048, 8192] and
/// [1024, 16384] hot). Their time follows the busiest SM's elements, not the bytes (a [65536, 4096]
/// bf16 softmax moves 1.3 TB/s where an Add of that size moves 4.4; 1.69 us more for each row an SM
/// gets, one row or 497): neither HBM nor the fp32 lanes bound it. Each the least mean
/// |log(predicted / measured)| on those 22 rows (steps of 0.01, searched together, the heads of
/// hopper_overheads in place, refitted with these until none moved; tests/test_h200.cpp checks
/// the result with a coarser grid and the preset's neighbours): the warp rate rests on the two warp
/// rows, the block rate on the twenty others. The widths of the unseen set (h200_unseen.csv:
/// 256-2048 per warp, 2560-32000 per block), which this fit did not use (their rows were looked
/// at), score it (docs/validation.md, "Softmax on the blocks PyTorch launches"). An assumption for
/// the H100 (same SMs and library) and for the A100 and the A40 (the same elements per SM cycle).
/// Calibrate: time a softmax of a few hundred MB with rows of 1024 and of 4096 elements.
inline constexpr double hopper_softmax_warp_rate = 2.31;
inline constexpr double hopper_softmax_block_rate = 1.26;

/// Elements per SM cycle of a gather by PyTorch's index_select kernels before its 2.7 release
/// (engine_spec::index_select_rate): indexSelectLargeIndex / SmallIndex compute each element's
/// offsets in a thread of their own, on a grid of at most 8 blocks of 128 threads an SM
/// (PyTorch's aten/src/ATen/native/cuda/Indexing.cu, as quoted by pytorch/pytorch pull request
/// 145999, which from 2.7 sizes the grid by the SM's resident threads). vidur's embedding rows
/// (sarathi-serve's `F.embedding` of a [T] index into a [V / tp, E] fp16 table; it pinned torch
/// 2.2.2 then) ran at 0.47-0.57 such elements an SM cycle at 4096 tokens of Llama-2-7B on the
/// A100, H100 and A40 (those three rows read before the fit), a tenth of the memory rate. Fitted,
/// not measured: the uncalibrated MAPE of the 131 embedding rows of vidur's A100 Llama-2-7B fit
/// split (tensor-parallel degree 1, at most 1024 tokens), lowest at 0.6 of 0.45-0.7 in steps of
/// 0.05 (68.2 % priced as memory-bound, 12.9 % at 0.6); held out: its test split's 913 rows 77.1
/// -> 10.8 %, the H100's 1044 84.7 -> 4.1 %, the A40 Llama-2-70B's 1044 37.8 -> 12.9 %
/// (docs/validation.md, "Embedding lookups on PyTorch's index_select"). Then refitted, 0.55, with
/// the Ampere heads (default_gpu_overheads: the same rows, every row of the
/// split scored, 0.45 .. 0.9; 0.5 and 0.55 tie at 11.6 %, 0.6 12.1 %): the test split's embedding
/// rows 10.8 -> 5.3 %, and worse on the chips whose heads did not move with it: the H100's 4.1
/// -> 6.3 %, the A40 Llama-2-70B's 12.9 -> 16.2 %. The same rate on every GPU
/// preset (elements per SM cycle): an assumption (those three chips' rows at 4096 tokens ran
/// 0.47-0.57). PyTorch
/// from 2.7 launches more blocks, and for rows of 16-byte multiples runs `vectorized_gather_kernel`
/// (the H200's, torch 2.11: memory-bound): not this rate. Calibrate: time an embedding lookup of
/// 4096 indices into a 4096-wide fp16 table.
inline constexpr double pytorch_index_select_rate = 0.55;

/// What PyTorch's indexSelectSmallIndex (at most 16 indices) adds per index past the first
/// (engine_spec::index_select_trip): each thread walks the indices one after another, loading
/// the index and then the row element it names, a dependent load each (Indexing.cu's loop over
/// the index count around the grid-stride loop over a row). vidur's A100 and H100 lookups of 1 to
/// 16 tokens grow by about 0.7 us a token, 5x the element rate's slope. Fitted, not measured:
/// the uncalibrated MAPE of the 5 such rows of vidur's A100 Llama-2-7B fit split (1, 2, 4, 8 and
/// 16 tokens), with the Ampere heads and index_select rate in place, lowest at 0.8 us of
/// 0 .. 1 us in steps of 0.05-0.1 (65.1 -> 25.9 %; its 1-token row stays under, 3 us measured).
/// Held out: the A100 test split's 15 such rows 64.3 -> 24.6 %, the H100's 20 38.8 -> 17.6 %, the
/// A40 Llama-2-70B's 20 37.4 -> 26.7 % (docs/validation.md, "The Ampere heads refitted"). A time,
/// not cycles: the A100 (1410 MHz) and the H100 (1980) rows grow alike. Calibrate: time an
/// embedding lookup of 1 and of 16 indices.
inline constexpr duration pytorch_index_select_trip{0.8, units::us};

namespace detail {

/// Per-SM memory rates shared by the GPU presets. DRAM -> SM measured on an H200 (this project's
/// device check, a float4 copy kernel, one block of 1024 threads on one SM, SM clock 1980 MHz):
/// 38.5 GB/s read while writing 38.5 GB/s -> 19.4 B/cycle each way; we use 20.
/// 132 SMs x 20 B x 1.98 GHz = 5.2 TB/s > HBM, so a full-chip stream is HBM-bound (the same
/// kernel on all SMs moved 4.0 TB/s read+write, 83 % of the 4.8 TB/s peak).
/// One block is latency-bound (more resident warps per SM would move more), so this is the
/// rate of a typical one-block-per-SM kernel, not a hardware limit. For A100 and H100 it is an
/// assumption carried over from the H200. Calibrate with a one-SM and an all-SM copy kernel.
inline constexpr bytes_per_cycle gpu_sm_dram_rate{20.0, units::B_per_cycle};
/// L2 -> SM, what a GEMM's tile loads and re-reads move (cost.hpp): the A100 whitepaper's L2
/// read bandwidth, 5120 bytes per clock for the chip (NVIDIA A100 Tensor Core GPU Architecture,
/// "A100 L2 cache": 2.3x the V100's), over its 108 SMs = 47.4 B/cycle per SM. The same kernel
/// as above measured 24 B/cycle per SM on the H200 with one block (an 8 MiB working set, 48
/// GB/s): what one latency-bound block pulls, not what a GEMM's warps do (with 24 the H100's
/// large GEMMs were capped at half their measured rate, docs/validation.md). Hopper presets:
/// an assumption that GH100 moves the same bytes per SM per clock (NVIDIA gives no figure).
inline constexpr bytes_per_cycle gpu_sm_l2_rate{5120.0 / 108.0, units::B_per_cycle};

/// Output tiles of the Ampere tensor-core GEMM kernels CUTLASS generates for fp16/bf16
/// (NVIDIA/cutlass python/cutlass_library/generator.py, GenerateSM80_TensorOp_16816's
/// tile_descriptions: threadblock M x N, largest first). cuBLAS's own kernels are closed; this
/// list stands for them. Used for the Hopper presets too (an assumption: Hopper kernels add
/// 2-SM clusters that share operand loads, which this tiling does not model).
inline constexpr std::array<tile_shape, max_cube_tiles> gpu_gemm_tiles{{
    {256, 128},
    {128, 256},
    {256, 64},
    {64, 256},
    {128, 128},
    {128, 64},
    {64, 128},
    {64, 64},
}};

/// GPU CUDA-core element rates from the FP32 lane count per SM. fp16/bf16 `half_per_fp32` times
/// it (2, packed half2, on GA100 and GH100; 1 on GA102, whose whitepaper gives non-tensor FP16
/// the FP32 peak);
/// int32 = INT32 lanes per SM; narrower integers one element per lane (assumption: no packing
/// assumed); int64 a quarter of int32 (assumption: emulated with 32-bit instructions);
/// fp64 = FP64 lanes per SM; FP8 one element per FP32 lane for moves (assumption, as int8).
[[nodiscard]] constexpr rate_table gpu_vector_rates(double fp32_lanes, double int32_lanes,
                                                    double fp64_lanes,
                                                    double half_per_fp32 = 2.0) noexcept {
    return make_rates({
        {dtype::fp32, fp32_lanes},
        {dtype::hf32, fp32_lanes},
        {dtype::fp16, half_per_fp32 * fp32_lanes},
        {dtype::bf16, half_per_fp32 * fp32_lanes},
        {dtype::int32, int32_lanes},
        {dtype::uint32, int32_lanes},
        {dtype::int16, fp32_lanes},
        {dtype::uint16, fp32_lanes},
        {dtype::int8, fp32_lanes},
        {dtype::uint8, fp32_lanes},
        {dtype::bool_, fp32_lanes},
        {dtype::int64, int32_lanes / 4.0},
        {dtype::uint64, int32_lanes / 4.0},
        {dtype::fp64, fp64_lanes},
        // FP8 data one element per lane, as int8: the rate of moves (a transpose, a gather);
        // arithmetic on FP8 runs in fp32 (gpu_fp8_computed_as).
        {dtype::fp8_e4m3, fp32_lanes},
        {dtype::fp8_e5m2, fp32_lanes},
    });
}

}  // namespace detail

/// The share of the tensor-core rate FlashAttention-2's paged split-KV kernel (the KV cache
/// vLLM and sarathi serve from) keeps on the Ampere presets (engine_spec::attention_share):
/// 64-row query blocks, two an SM at most (80 KB of shared memory each), page-table gathers.
/// Fitted, not measured: the uncalibrated MAPE of every row of tensor-parallel degrees 1 and 2 of
/// vidur's A100 Llama-2-7B attention profile (866 rows of
/// tests/data/gpu/vidur_a100_llama2-7b_attention.csv, the block floor in place), lowest at 0.65
/// of 0.5 .. 1 in steps of 0.05 (23.6 % at 1, 16.2 % at 0.65); degrees 4 and 8 held out: 27.1 ->
/// 20.1 % (docs/validation.md, "Attention on the A100: vidur's paged kernels"). The A40 takes
/// it too (the same kernels on GA102: an assumption); the Hopper presets keep 1 (cuDNN's
/// attention, measured on the H200, runs faster than the model prices it). Calibrate: a
/// profile's attention rows fit the cube efficiency.
inline constexpr double ampere_attention_share = 0.65;

/// The share of that rate the same kernel keeps on the Ampere presets when the attention's work
/// units (128-row query blocks of a head, times the split over keys) are no more than the SMs
/// (engine_spec::attention_unfilled_share): an SM then holds one unit, at most two 64-row
/// blocks of one head, and the prefill chunks of few heads (tensor-parallel degrees 4 and 8)
/// ran slower than the share above prices. Fitted, not measured: the uncalibrated MAPE of every
/// row of degrees 1 and 2 of the same profile (866 rows, the block floor and the share above in
/// place), lowest at 0.8 of 0.6 .. 1 in steps of 0.05 (16.2 % at 1, 15.6 % at 0.8); degrees 4
/// and 8 held out: 20.1 -> 16.3 % (docs/validation.md, "Attention on the A100: vidur's paged
/// kernels"); with the shared waves of cost.hpp detail::busiest_units the same grids still pick
/// 0.8 (15.2 %), held out 14.8 %. FlashInfer's layout takes it too, of its full rate: its
/// merge's cycles (default_gpu_overheads.attention_merge_cycles) were fitted jointly with it on
/// FlashInfer's rows and found 0.8 as well. A
/// threshold of half the SMs (one 64-row block an SM) fitted worse (16.0 %) and was not kept. The
/// A40 takes it too (an assumption); the Hopper presets keep 1. Calibrate: a profile's attention
/// rows of few heads fit the cube efficiency.
inline constexpr double ampere_attention_unfilled_share = 0.8;

/// Operations per cycle per SM at which the Ampere presets run a fused attention's vector part
/// (engine_spec::attention_softmax_rate: the softmax's fp32 operations per kept score, op.hpp
/// attention_vector_ops_*; FlashAttention-2's and FlashInfer's kernels alike). 64: the A100's FP32
/// lanes, at which the shares above were fitted. The
/// A40 has 128 FP32 lanes an SM, but GA102 doubled only the FP32 FMA path (NVIDIA Ampere GA102
/// GPU Architecture whitepaper: each SM partition's second datapath runs FP32 or INT32), while a
/// softmax also takes a maximum, an exp2 and a conversion to fp16 per score, and exp2 runs 16
/// results a clock per SM on both compute capabilities 8.0 and 8.6 (CUDA C++ Programming Guide,
/// "Arithmetic Instructions"): an assumption that the softmax's mix runs at the A100's rate per
/// SM cycle on both. Not fitted, but chosen (the only value tried) after vidur's A40 Llama-2-7B
/// attention rows read first showed their prefill chunks 41 % under at the FP32 rate (30 % at
/// this), then scored on the rows held out from that reading (docs/validation.md, "Attention on
/// the A40"). The Hopper presets keep their FP32 rate (0): their attention rows are cuDNN's.
/// Calibrate: the softmax part is divided by the vector efficiency, which a profile's attention
/// rows fit with the cube efficiency (`perfcast calibrate`).
inline constexpr double ampere_attention_softmax_rate = 64;

/// The dtype the GPU presets' vector engines compute on FP8 data in (engine_spec::
/// fp8_computed_as): fp32. CUDA cores have no FP8 arithmetic, only conversions (Hopper's
/// cvt.rn.satfinite.e4m3x2.f32 and the like, PTX ISA), and PyTorch's float8 types do their
/// arithmetic by converting to float32 (c10/util/Float8_e4m3fn.h and Float8_e5m2.h say so); an
/// assumption for kernels of other libraries. The tensor cores of the Hopper presets
/// take FP8 directly (their cube rate tables); the Ampere ones have no FP8 path.
inline constexpr dtype gpu_fp8_computed_as = dtype::fp32;

/// NVIDIA A100 80GB SXM4. 108 SMs, boost 1410 MHz (A100 datasheet / Ampere whitepaper).
/// Dense tensor peaks (datasheet): FP16/BF16 312 TFLOPS -> 312e12 / (2 x 108 x 1.41e9) = 1024
/// MAC/cycle/SM; INT8 624 TOPS -> 2048; TF32 156 TFLOPS -> 512 (our hf32); FP64 tensor 19.5
/// TFLOPS -> 64. fp32 without TF32 runs on CUDA cores: 19.5 TFLOPS = 108 x 64 FMA x 2 x 1.41 GHz
/// -> 64 (assumption that the cube's fp32 path is the FMA path).
/// 80 GB HBM2e at 2039 GB/s (datasheet, SXM); the datasheet's GB are binary here (nvidia-smi
/// reports 81920 MiB), so 80 GiB; L2 40 MB (whitepaper; 41943040 B = 40 MiB in deviceQuery);
/// 164 KiB max shared memory (ub) in a 192 KiB L1/shared array per SM (whitepaper);
/// PCIe 4.0 x16 (datasheet). FP32 lanes 64, INT32 lanes 64, FP64 lanes 32 per SM (whitepaper).
inline constexpr chip a100_80gb_sxm = validate(chip{
    .name = "a100-80gb-sxm",
    .cube = {.cores = 108,
             .clock = frequency{1410.0, units::MHz},
             .ops_per_cycle = detail::make_rates({
                 {dtype::fp16, 1024.0},
                 {dtype::bf16, 1024.0},
                 {dtype::hf32, 512.0},
                 {dtype::int8, 2048.0},
                 {dtype::uint8, 2048.0},
                 {dtype::fp32, 64.0},
                 {dtype::fp64, 64.0},
             }),
             .attention_share = ampere_attention_share,
             .attention_unfilled_share = ampere_attention_unfilled_share},
    .vector = {.cores = 108,
               .clock = frequency{1410.0, units::MHz},
               .ops_per_cycle = detail::gpu_vector_rates(64.0, 64.0, 32.0),
               .fp8_computed_as = gpu_fp8_computed_as,
               .walk_rate = hopper_walk_rate,
               .transpose_rate = hopper_transpose_rate,
               .walk_head = {},
               .softmax_warp_rate = hopper_softmax_warp_rate,
               .softmax_block_rate = hopper_softmax_block_rate,
               .attention_softmax_rate = ampere_attention_softmax_rate,
               .index_select_rate = pytorch_index_select_rate,
               .index_select_trip = pytorch_index_select_trip},
    .aicpu = {},
    .memory = {.hbm_size = data_size{80.0, units::GiB},
               .hbm_bandwidth = bandwidth{2039.0, units::GBps},
               .l2_size = data_size{40.0, units::MiB},
               .core_read_rate = detail::gpu_sm_dram_rate,
               .core_write_rate = detail::gpu_sm_dram_rate,
               .l2_read_rate = detail::gpu_sm_l2_rate,
               .ub_size = data_size{164.0, units::KiB},
               .l1_size = data_size{192.0, units::KiB},
               .l0a_size = {},  // no counterpart of Ascend's L0 buffers (registers: 256 KiB/SM)
               .l0b_size = {},
               .l0c_size = {},
               // Two L2 partitions (A100 whitepaper, "L2 cache"): 20 MiB stays resident.
               .l2_partitions = 2},
    .alignment = data_size{32.0, units::B},
    .link = {.pcie_gen = 4, .lanes = 16},
    .overhead = default_gpu_overheads,
    .cube_tiles = detail::gpu_gemm_tiles,
});

/// NVIDIA A100 40GB SXM4: the A100 80GB's GA100 compute (same SMs, clocks, tensor peaks and
/// 40 MB L2) with 40 GB of HBM2 at 1,555 GB/s (A100 datasheet, "A100 40GB SXM" column).
inline constexpr chip a100_40gb_sxm = validate([] {
    chip c = a100_80gb_sxm;
    c.name = "a100-40gb-sxm";
    c.memory.hbm_size = data_size{40.0, units::GiB};
    c.memory.hbm_bandwidth = bandwidth{1555.0, units::GBps};
    return c;
}());

/// NVIDIA H100 SXM5. 132 SMs (H100 datasheet / Hopper whitepaper). Two clocks: the dense tensor
/// peaks are quoted at 1830 MHz (FP16/BF16 989.4 TFLOPS = 132 x 2048 x 2 x 1.83 GHz; INT8 1978.9
/// TOPS -> 4096; FP8, E4M3 and E5M2 alike, 1978.9 TFLOPS -> 4096; TF32 494.7 -> 1024), the
/// FP32/FP64 peaks at 1980 MHz (FP32 66.9 TFLOPS = 132 x 128 x 2 x 1.98 GHz). The cube engine runs
/// at 1830 MHz, so its FP64-tensor (66.9 TFLOPS) and FMA fp32 rates are scaled by 1980/1830 to keep
/// the datasheet peaks; the vector engine runs at 1980 MHz with 128 FP32, 64 INT32 and 64 FP64
/// lanes per SM (whitepaper). 80 GB HBM3 at 3.35 TB/s, L2 50 MB, 228 KiB max shared memory in a 256
/// KiB L1/shared array per SM, PCIe 5.0 x16 (datasheet / whitepaper). GB read as GiB as for the
/// A100 (assumption; a few hundred MiB are reserved by the driver either way).
inline constexpr chip h100_sxm = validate(chip{
    .name = "h100-sxm",
    .cube = {.cores = 132,
             .clock = frequency{1830.0, units::MHz},
             .ops_per_cycle = detail::make_rates({
                 {dtype::fp16, 2048.0},
                 {dtype::bf16, 2048.0},
                 {dtype::hf32, 1024.0},
                 {dtype::int8, 4096.0},
                 {dtype::uint8, 4096.0},
                 {dtype::fp8_e4m3, 4096.0},
                 {dtype::fp8_e5m2, 4096.0},
                 {dtype::fp32, 128.0 * 1980.0 / 1830.0},
                 {dtype::fp64, 128.0 * 1980.0 / 1830.0},
             }),
             .narrow_rows_4 = hopper_narrow_rows_4,
             .narrow_rows_2 = hopper_narrow_rows_2},
    .vector = {.cores = 132,
               .clock = frequency{1980.0, units::MHz},
               .ops_per_cycle = detail::gpu_vector_rates(128.0, 64.0, 64.0),
               .fp8_computed_as = gpu_fp8_computed_as,
               .walk_rate = hopper_walk_rate,
               .transpose_rate = hopper_transpose_rate,
               .walk_head = hopper_walk_head,
               .softmax_warp_rate = hopper_softmax_warp_rate,
               .softmax_block_rate = hopper_softmax_block_rate,
               .index_select_rate = pytorch_index_select_rate,
               .index_select_trip = pytorch_index_select_trip},
    .aicpu = {},
    .memory = {.hbm_size = data_size{80.0, units::GiB},
               .hbm_bandwidth = bandwidth{3.35, units::TBps},
               .l2_size = data_size{50.0, units::MiB},
               .core_read_rate = detail::gpu_sm_dram_rate,
               .core_write_rate = detail::gpu_sm_dram_rate,
               .l2_read_rate = detail::gpu_sm_l2_rate,
               .ub_size = data_size{228.0, units::KiB},
               .l1_size = data_size{256.0, units::KiB},
               .l0a_size = {},
               .l0b_size = {},
               .l0c_size = {},
               // Assumption: partitioned as the A100's (H100 whitepaper gives no count).
               .l2_partitions = 2},
    // Hopper's bulk copies (TMA) take any 16-byte aligned row at full speed (CUDA Driver API,
    // cuTensorMapEncodeTiled: global address and strides multiples of 16 bytes); the H200's GEMMs
    // with K = 4088 bf16 (8176-byte rows) ran Hopper kernels at 604-785 TFLOP/s, as fast as
    // K = 4096 (docs/validation.md, "Measured on an H200"). The A100 keeps its 32-byte sectors.
    .alignment = data_size{16.0, units::B},
    .link = {.pcie_gen = 5, .lanes = 16},
    .overhead = hopper_overheads,
    .cube_tiles = detail::gpu_gemm_tiles,
});

/// NVIDIA H200 SXM: the H100 SXM's GH100 compute (same SMs, clocks and tensor peaks: H200
/// datasheet FP16 1979 TFLOPS with sparsity = 989.5 dense) with 141 GB HBM3e at 4.8 TB/s
/// (H200 datasheet). Checked on an H200 (this project's device check): 132 SMs, max SM clock
/// 1980 MHz, nvidia-smi memory.total 143771 MiB (used here), CUDA l2CacheSize 62914560 B = 60 MiB
/// (used here; more than the H100's 50 MB), 6016-bit bus at 3201 MHz = 4.8 TB/s, PCIe Gen5 x16
/// (pinned 256 MiB copies: 54.6 GB/s H2D, 55.1 GB/s D2H, 85 % of 64 GB/s).
inline constexpr chip h200_sxm = validate([] {
    chip c = h100_sxm;
    c.name = "h200-sxm";
    c.memory.hbm_size = data_size{143771.0, units::MiB};
    c.memory.hbm_bandwidth = bandwidth{4.8, units::TBps};
    c.memory.l2_size = data_size{60.0, units::MiB};
    return c;
}());

/// Overheads of the A40 (GA102, compute capability 8.6): the GPU defaults with 1536 resident
/// threads per SM in place of 2048 (CUDA C++ Programming Guide, "Technical Specifications per
/// Compute Capability": 8.6 holds 48 warps per SM), which is what the norms' row floor keeps in
/// flight. Every other figure is the GPU default, an assumption for this chip as for the A100.
inline constexpr overhead_spec ga102_overheads = [] {
    overhead_spec o = default_gpu_overheads;
    o.core_threads = 1536;
    return o;
}();

/// NVIDIA A40 (PCIe, GA102). 84 SMs, boost 1740 MHz (the full GA102 of the NVIDIA Ampere GA102
/// GPU Architecture whitepaper: 10,752 CUDA cores = 84 SMs x 128, as the A40 datasheet lists).
/// Dense tensor peaks (A40 datasheet, without sparsity): FP16 and BF16 149.7 TFLOPS ->
/// 149.7e12 / (2 x 84 x 1.74e9) = 512 MAC/cycle/SM; TF32 74.8 -> 256 (our hf32); INT8 299.3
/// TOPS -> 1024. fp32 without TF32 runs on CUDA cores: FP32 37.4 TFLOPS = 84 x 128 FMA x 2 x
/// 1.74 GHz -> 128 (as for the A100, an assumption that the cube's fp32 path is the FMA path);
/// fp64 has no tensor path on GA102: 2 FP64 units per SM (whitepaper: 1/64 of the FP32 rate).
/// 48 GB GDDR6 at 696 GB/s (datasheet; GB read as GiB as for the A100, an assumption: with ECC
/// on, the A40's default, the driver reports less; an L40S, also 48 GB GDDR6, reports 46068 MiB,
/// modal-labs/modal-client pull request 2797; not checked on an A40), L2 6 MB
/// (whitepaper: 6144 KB), 128 KB L1 / shared memory per SM of which 100 KiB can be shared
/// memory (whitepaper; CUDA guide, compute capability 8.6), PCIe 4.0 x16 (datasheet).
/// FP32 lanes 128, INT32 lanes 64 (half of the FP32 datapaths also run INT32), FP64 lanes 2 per
/// SM (whitepaper); fp16 / bf16 outside the tensor cores at the FP32 rate (the whitepaper's
/// GA102 table gives the same peak for non-tensor FP16 as for FP32), not twice it as on GA100.
/// The element walk rates of the Hopper presets (hopper_walk_rate): an assumption that made
/// sarathi-serve's rope rows on the A40 worse (docs/validation.md, "Unseen models and an unseen
/// GPU": 21.5 -> 30.0 % on Llama-2-70B, small rows the default kernel head already
/// over-predicts), kept since the rule was fixed before any A40 row was scored. Assumptions carried
/// from the A100 preset: the per-SM DRAM and L2 rates, the GEMM tile list (CUTLASS's SM80 kernels
/// also run on 8.6), 32-byte sectors, the overheads but the resident threads (ga102_overheads); and
/// one L2 partition (the GA102 whitepaper describes no split of L2, where the A100's says it has
/// two). No A40 measurement was seen before these figures were written down, but the non-tensor
/// fp16 rate, corrected after the first scoring from the whitepaper (it moved three figures by 0.1
/// point; docs/validation.md, "Unseen models and an unseen GPU"), and the attention's softmax rate
/// (ampere_attention_softmax_rate), set after half of vidur's A40 attention rows were read
/// (docs/validation.md, "Attention on the A40: an unseen GPU").
inline constexpr chip a40_pcie = validate(chip{
    .name = "a40-pcie",
    .cube = {.cores = 84,
             .clock = frequency{1740.0, units::MHz},
             .ops_per_cycle = detail::make_rates({
                 {dtype::fp16, 512.0},
                 {dtype::bf16, 512.0},
                 {dtype::hf32, 256.0},
                 {dtype::int8, 1024.0},
                 {dtype::uint8, 1024.0},
                 {dtype::fp32, 128.0},
                 {dtype::fp64, 2.0},
             }),
             .attention_share = ampere_attention_share,
             .attention_unfilled_share = ampere_attention_unfilled_share},
    .vector = {.cores = 84,
               .clock = frequency{1740.0, units::MHz},
               .ops_per_cycle = detail::gpu_vector_rates(128.0, 64.0, 2.0, 1.0),
               .fp8_computed_as = gpu_fp8_computed_as,
               .walk_rate = hopper_walk_rate,
               .transpose_rate = hopper_transpose_rate,
               .walk_head = {},
               .softmax_warp_rate = hopper_softmax_warp_rate,
               .softmax_block_rate = hopper_softmax_block_rate,
               .attention_softmax_rate = ampere_attention_softmax_rate,
               .index_select_rate = pytorch_index_select_rate,
               .index_select_trip = pytorch_index_select_trip},
    .aicpu = {},
    .memory = {.hbm_size = data_size{48.0, units::GiB},
               .hbm_bandwidth = bandwidth{696.0, units::GBps},
               .l2_size = data_size{6.0, units::MiB},
               .core_read_rate = detail::gpu_sm_dram_rate,
               .core_write_rate = detail::gpu_sm_dram_rate,
               .l2_read_rate = detail::gpu_sm_l2_rate,
               .ub_size = data_size{100.0, units::KiB},
               .l1_size = data_size{128.0, units::KiB},
               .l0a_size = {},
               .l0b_size = {},
               .l0c_size = {},
               .l2_partitions = 1},
    .alignment = data_size{32.0, units::B},
    .link = {.pcie_gen = 4, .lanes = 16},
    .overhead = ga102_overheads,
    .cube_tiles = detail::gpu_gemm_tiles,
});

}  // namespace perfcast::chips
