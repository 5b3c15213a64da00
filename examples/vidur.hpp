// examples/vidur.hpp: vidur's measured per-operator GPU times (the mlp.csv its MLP profiler
// writes, and the attention.csv of its attention profiler: read_attention, kernel_of, below) as
// rows of the minimal kernel_details subset (docs/profiles.md), so that `perfcast validate` and
// `perfcast calibrate` can score and fit the model on GPU measurements.
// Used by examples/vidur_to_kernel_details.cpp and tests/test_gpu_validation.cpp.
//
// What vidur measured (microsoft/vidur, vidur/profiling/mlp/): one Llama-style block in fp16
// (mlp_wrapper.py: `model.to(dtype=torch.float16)`), each operator inside a torch.profiler
// record_function range; an operator's time is the sum of the device durations of the CUDA
// kernels launched in its range (utils/record_function_tracer.py), in ms, with min / max / mean /
// median / std over the 20 calls of one profiling run. The layers are sarathi's
// (mlp/mlp_impl.py): ColumnParallelLinear / RowParallelLinear without bias, RMSNorm, get_rope,
// SiluAndMul, VocabParallelEmbedding, each sized for tensor-parallel degree tp.
//
// Each (operator, measurement row) becomes one kernel row:
// clang-format off
//   op                        Type                Accelerator Core  inputs -> output (T tokens)
//   emb                       indexSelect*Index   AI_VECTOR_CORE    [V/tp, E] fp16; [T] int64 -> [T, E]
//   input_layernorm,
//   post_attention_layernorm  RmsNorm             AI_VECTOR_CORE    [T, E]; [E] -> [T, E]
//   attn_pre_proj             MatMul              AI_CORE           [T, E]; [(H + 2 Hkv) D / tp, E] -> [T, (H + 2 Hkv) D / tp]
//   attn_rope                 ApplyRotaryPosEmb   AI_VECTOR_CORE    [T, (H + Hkv) D / tp]; [T, D]; [T] int64 -> [T, (H + Hkv) D / tp]
//   attn_post_proj            MatMul              AI_CORE           [T, H D / tp]; [E, H D / tp] -> [T, E]
//   mlp_up_proj               MatMul              AI_CORE           [T, E]; [g I / tp, E] -> [T, g I / tp]   (g = 2 gated, else 1)
//   mlp_act (gated)           SwiGlu              AI_VECTOR_CORE    [T, I / tp]; [T, I / tp] -> [T, I / tp]
//   mlp_act (not gated)       Gelu                AI_VECTOR_CORE    [T, I / tp] -> [T, I / tp]
//   mlp_down_proj             MatMul              AI_CORE           [T, I / tp]; [E, I / tp] -> [T, E]
//   add                       Add                 AI_VECTOR_CORE    [T, E]; [T, E] -> [T, E]
// clang-format on
// with E = n_embd, I = n_expanded_embd, H = n_head, Hkv = n_kv_head, D = E / H, V = vocab_size.
// MatMul weights are written [N, K] as torch stores a Linear weight (A[M,K] x B[N,K]^T, as in
// the 910B1 profile). Type names are the CANN op types of the same computations (RmsNorm,
// ApplyRotaryPosEmb, SwiGlu, Gelu, Add), but the embedding's: the kernel a torch before 2.7 ran
// for `F.embedding` (sarathi-serve pinned 2.2.2 when vidur profiled; its index_select:
// indexSelectSmallIndex for at most 16 tokens, else indexSelectLargeIndex), which walks its
// elements one a thread (GatherV2 until that was priced: docs/validation.md). Rope's query and key
// are one tensor (the kernel rotates both in place; perfcast counts one output tensor per row) and
// SwiGlu's input is its two halves (so that both are counted as read). Block Dim is the A100's 108
// SMs: the profile does not record grid sizes.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <perfcast/cost.hpp>  // detail::index_select_small_max
#include <perfcast/enum_table.hpp>
#include <perfcast/error.hpp>
#include <perfcast/profile/csv.hpp>

namespace perfcast::vidur {

/// The operators of vidur's mlp.csv, in its column order.
inline constexpr std::array<std::string_view, 10> op_names{{
    "emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
    "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add",
}};

/// Which of vidur's per-operator statistics becomes the row's duration.
enum class statistic : unsigned char { median, mean };

inline constexpr std::array<enum_entry<statistic>, 2> statistic_names{
    {{statistic::median, "median"}, {statistic::mean, "mean"}}};
static_assert(covers_enum<statistic_names>());

[[nodiscard]] constexpr std::string_view name_of(statistic s) noexcept {
    return name_in(statistic_names, s);
}

/// One measurement row of mlp.csv: the model's dimensions, the batch and the operator times.
struct mlp_row {
    std::size_t line = 0;  // line in mlp.csv
    std::int64_t n_head = 0;
    std::int64_t n_kv_head = 0;
    std::int64_t n_embd = 0;
    std::int64_t n_expanded_embd = 0;
    std::int64_t vocab_size = 0;
    bool gated = false;
    std::int64_t num_tokens = 0;
    std::int64_t tp = 0;  // num_tensor_parallel_workers
    /// The chosen statistic per operator, microseconds; empty where vidur recorded nothing.
    std::array<std::optional<double>, op_names.size()> us{};
};

/// One kernel row of the minimal profile format.
struct kernel_line {
    std::string name;
    std::string type;
    std::string core;  // Accelerator Core
    double duration_us = 0;
    int block_dim = 0;
    std::string input_shapes;
    std::string input_types;
    std::string output_shapes;
    std::string output_types;
};

/// The A100's SM count (A100 datasheet / whitepaper; the a100_80gb_sxm preset).
inline constexpr int a100_sms = 108;

/// The fit / test split of the shipped A100 data: tensor-parallel degree 1 and at most 1024
/// tokens are for fitting, everything else is held out (larger batches and every tp > 1).
[[nodiscard]] constexpr bool in_fit_split(const mlp_row& r) noexcept {
    return r.tp == 1 && r.num_tokens <= 1024;
}

namespace detail {

[[noreturn]] inline void fail(const std::string& source, std::size_t line, std::string_view what) {
    throw perfcast::error("perfcast::vidur: " + source + ":" + std::to_string(line) + ": " +
                          std::string(what));
}

/// An integer of at least `min` (1: a count of heads, tokens, ...; 0: a length that may be
/// empty).
[[nodiscard]] inline std::int64_t to_int(std::string_view s, const std::string& source,
                                         std::size_t line, std::string_view column,
                                         std::int64_t min = 1) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v < min)
        fail(source, line,
             std::string(column) + ": '" + std::string(s) + "' is not " +
                 (min == 1 ? "a positive integer" : "an integer >= 0"));
    return v;
}

/// The header of a vidur CSV (read from `r`), to find its columns by name.
class header_columns {
public:
    header_columns(profile::csv_reader& r, std::string source, std::string_view file)
        : source_(std::move(source)) {
        if (!r.next())
            fail(source_, 1, "empty file (expected vidur's " + std::string(file) + " header)");
        for (std::size_t i = 0; i < r.record().size(); ++i) names_.emplace_back(r.record()[i]);
    }
    /// The index of `column`; an error naming the file when it has none.
    [[nodiscard]] std::size_t operator()(std::string_view column) const {
        if (const auto i = optional(column)) return *i;
        fail(source_, 1, "no column '" + std::string(column) + "'");
    }
    /// The index of `column`, or nothing when the file has none.
    [[nodiscard]] std::optional<std::size_t> optional(std::string_view column) const {
        for (std::size_t i = 0; i < names_.size(); ++i)
            if (names_[i] == column) return i;
        return std::nullopt;
    }

private:
    std::string source_;
    std::vector<std::string> names_;
};

/// True / False (also true / false, 1 / 0).
[[nodiscard]] inline bool to_bool(std::string_view s, const std::string& source, std::size_t line,
                                  std::string_view column) {
    if (s == "True" || s == "true" || s == "1") return true;
    if (s == "False" || s == "false" || s == "0") return false;
    fail(source, line, std::string(column) + ": '" + std::string(s) + "' is not True/False");
}

/// A time in ms, or nothing for an empty field (vidur leaves out operators it did not time).
[[nodiscard]] inline std::optional<double> to_ms(std::string_view s, const std::string& source,
                                                 std::size_t line, std::string_view column) {
    if (s.empty()) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v) || v < 0)
        fail(source, line, std::string(column) + ": '" + std::string(s) +
                               "' is not a time >= 0 ms");
    if (v == 0) return std::nullopt;  // nothing timed: no kernel row
    return v;
}

[[nodiscard]] inline std::string shape(std::initializer_list<std::int64_t> dims) {
    std::string s;
    for (std::int64_t d : dims) {
        if (!s.empty()) s += ',';
        s += std::to_string(d);
    }
    return s;
}

/// A CSV field, quoted when it holds a delimiter, quote or line end (RFC 4180).
inline void write_field(std::ostream& out, std::string_view f) {
    if (f.find_first_of(",\"\r\n") == std::string_view::npos) {
        out << f;
        return;
    }
    out << '"';
    for (char c : f) {
        if (c == '"') out << '"';
        out << c;
    }
    out << '"';
}

}  // namespace detail

/// Reads vidur's mlp.csv. Throws perfcast::error (parse_error for CSV syntax) naming the file,
/// line and column on a missing column, a non-numeric value or dimensions that do not divide
/// (n_embd by n_head; heads, n_embd, n_expanded_embd and vocab_size by tp).
[[nodiscard]] inline std::vector<mlp_row> read_mlp(std::istream& in, std::string source,
                                                   statistic stat = statistic::median) {
    profile::csv_reader r(in, source);
    const detail::header_columns find(r, source, "mlp.csv");
    std::array<std::size_t, op_names.size()> time_col{};
    for (std::size_t i = 0; i < op_names.size(); ++i)
        time_col[i] = find("time_stats." + std::string(op_names[i]) + "." +
                           std::string(name_of(stat)));
    const std::size_t c_head = find("n_head"), c_kv = find("n_kv_head"), c_embd = find("n_embd"),
                      c_exp = find("n_expanded_embd"), c_vocab = find("vocab_size"),
                      c_gated = find("use_gated_mlp"), c_tokens = find("num_tokens"),
                      c_tp = find("num_tensor_parallel_workers");

    std::vector<mlp_row> rows;
    while (r.next()) {
        const profile::csv_record& f = r.record();
        mlp_row m;
        m.line = f.line();
        const auto num = [&](std::size_t c, std::string_view name) {
            return detail::to_int(f[c], source, m.line, name);
        };
        m.n_head = num(c_head, "n_head");
        m.n_kv_head = num(c_kv, "n_kv_head");
        m.n_embd = num(c_embd, "n_embd");
        m.n_expanded_embd = num(c_exp, "n_expanded_embd");
        m.vocab_size = num(c_vocab, "vocab_size");
        m.num_tokens = num(c_tokens, "num_tokens");
        m.tp = num(c_tp, "num_tensor_parallel_workers");
        m.gated = detail::to_bool(f[c_gated], source, m.line, "use_gated_mlp");
        if (m.n_embd % m.n_head != 0)
            detail::fail(source, m.line, "n_embd is not a multiple of n_head");
        const std::array<std::pair<std::int64_t, std::string_view>, 5> split_by_tp{{
            {m.n_head, "n_head"},
            {m.n_kv_head, "n_kv_head"},
            {m.n_embd, "n_embd"},
            {m.n_expanded_embd, "n_expanded_embd"},
            {m.vocab_size, "vocab_size"},
        }};
        for (const auto& [v, name] : split_by_tp) {
            if (v % m.tp != 0)
                detail::fail(source, m.line,
                             std::string(name) + " is not a multiple of num_tensor_parallel_workers");
        }
        for (std::size_t i = 0; i < op_names.size(); ++i) {
            const auto ms = detail::to_ms(f[time_col[i]], source, m.line,
                                          "time_stats." + std::string(op_names[i]));
            if (ms) m.us[i] = *ms * 1000.0;
        }
        rows.push_back(m);
    }
    return rows;
}

/// The kernel rows of one measurement (one per timed operator, in vidur's column order).
[[nodiscard]] inline std::vector<kernel_line> kernels_of(const mlp_row& m,
                                                         int block_dim = a100_sms) {
    using detail::shape;
    const std::int64_t T = m.num_tokens;
    const std::int64_t E = m.n_embd;
    const std::int64_t D = m.n_embd / m.n_head;
    const std::int64_t qkv = (m.n_head + 2 * m.n_kv_head) * D / m.tp;
    const std::int64_t qk = (m.n_head + m.n_kv_head) * D / m.tp;
    const std::int64_t attn_out = m.n_head * D / m.tp;
    const std::int64_t inner = m.n_expanded_embd / m.tp;
    const std::int64_t up = (m.gated ? 2 : 1) * inner;

    std::vector<kernel_line> out;
    for (std::size_t i = 0; i < op_names.size(); ++i) {
        if (!m.us[i]) continue;
        kernel_line k;
        k.name = std::string(op_names[i]) + " T=" + std::to_string(T) + " tp=" +
                 std::to_string(m.tp) + " line=" + std::to_string(m.line);
        k.duration_us = *m.us[i];
        k.block_dim = block_dim;
        k.core = "AI_VECTOR_CORE";
        const std::string_view op = op_names[i];
        const auto matmul = [&](std::int64_t n, std::int64_t kdim) {
            k.type = "MatMul";
            k.core = "AI_CORE";
            k.input_shapes = shape({T, kdim}) + ";" + shape({n, kdim});
            k.input_types = "fp16;fp16";
            k.output_shapes = shape({T, n});
            k.output_types = "fp16";
        };
        if (op == "emb") {
            // PyTorch's own threshold, the one cost.hpp prices the two kernels by.
            k.type = T <= perfcast::detail::index_select_small_max ? "indexSelectSmallIndex"
                                                                   : "indexSelectLargeIndex";
            k.input_shapes = shape({m.vocab_size / m.tp, E}) + ";" + shape({T});
            k.input_types = "fp16;int64";
            k.output_shapes = shape({T, E});
        } else if (op == "input_layernorm" || op == "post_attention_layernorm") {
            k.type = "RmsNorm";
            k.input_shapes = shape({T, E}) + ";" + shape({E});
            k.input_types = "fp16;fp16";
            k.output_shapes = shape({T, E});
        } else if (op == "attn_pre_proj") {
            matmul(qkv, E);
        } else if (op == "attn_rope") {
            k.type = "ApplyRotaryPosEmb";
            k.input_shapes = shape({T, qk}) + ";" + shape({T, D}) + ";" + shape({T});
            k.input_types = "fp16;fp16;int64";
            k.output_shapes = shape({T, qk});
        } else if (op == "attn_post_proj") {
            matmul(E, attn_out);
        } else if (op == "mlp_up_proj") {
            matmul(up, E);
        } else if (op == "mlp_act") {
            if (m.gated) {
                k.type = "SwiGlu";
                k.input_shapes = shape({T, inner}) + ";" + shape({T, inner});
                k.input_types = "fp16;fp16";
            } else {
                k.type = "Gelu";
                k.input_shapes = shape({T, inner});
                k.input_types = "fp16";
            }
            k.output_shapes = shape({T, inner});
        } else if (op == "mlp_down_proj") {
            matmul(E, inner);
        } else {  // add
            k.type = "Add";
            k.input_shapes = shape({T, E}) + ";" + shape({T, E});
            k.input_types = "fp16;fp16";
            k.output_shapes = shape({T, E});
        }
        if (k.output_types.empty()) k.output_types = "fp16";
        out.push_back(std::move(k));
    }
    return out;
}

/// The header of the minimal kernel_details subset (docs/profiles.md), with Name.
inline void write_header(std::ostream& out) {
    out << "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
           "Output Shapes,Output Data Types\n";
}

/// One kernel row; the duration with 3 decimals (vidur's times are whole microseconds or
/// medians of them, so nothing is lost).
inline void write_row(std::ostream& out, const kernel_line& k) {
    std::array<char, 64> buf{};
    const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), k.duration_us,
                                   std::chars_format::fixed, 3);
    const std::string_view dur(buf.data(), static_cast<std::size_t>(res.ptr - buf.data()));
    for (const std::string_view f : {std::string_view(k.name), std::string_view(k.type),
                                     std::string_view(k.core)}) {
        detail::write_field(out, f);
        out << ',';
    }
    out << dur << ',' << k.block_dim << ',';
    detail::write_field(out, k.input_shapes);
    out << ',';
    detail::write_field(out, k.input_types);
    out << ',';
    detail::write_field(out, k.output_shapes);
    out << ',';
    detail::write_field(out, k.output_types);
    out << '\n';
}

/// Writes the kernel rows of `rows` (header first); returns the number of kernel rows.
inline std::size_t write_profile(std::ostream& out, const std::vector<mlp_row>& rows,
                                 int block_dim = a100_sms) {
    write_header(out);
    std::size_t n = 0;
    for (const mlp_row& m : rows) {
        for (const kernel_line& k : kernels_of(m, block_dim)) {
            write_row(out, k);
            ++n;
        }
    }
    return n;
}

/// One measurement row of vidur's attention.csv (vidur/profiling/attention/attention_wrapper.py):
/// sarathi's attention forward, timed by the kineto profiler, fp16 (main.py), over a paged KV
/// cache of `block_size`-token blocks at random places. Decode: `batch` sequences, one new
/// token each, attending to their kv_cache_size cached tokens and itself; prefill: one sequence,
/// a chunk of `chunk` tokens attending causally to its kv_cache_size cached tokens and itself.
struct attention_row {
    std::size_t line = 0;  // line in attention.csv
    std::int64_t n_q_head = 0;
    std::int64_t n_kv_head = 0;
    std::int64_t n_embd = 0;
    std::int64_t tp = 0;  // num_tensor_parallel_workers
    std::int64_t batch = 0;
    std::int64_t chunk = 0;     // prefill_chunk_size (0 for decode)
    std::int64_t kv_cache = 0;  // kv_cache_size
    bool prefill = false;
    double us = 0;  // the attn_prefill (prefill) or attn_decode (decode) statistic
    // attention_backend is AttentionBackend.FLASHINFER (FlashInfer's kernels); otherwise, or
    // without the column, FlashAttention-2's (AttentionBackend.FLASH_ATTENTION).
    bool flashinfer = false;
};

/// Reads vidur's attention.csv (or a cut of it holding at least the columns named below).
/// A row without a time for its phase (vidur leaves the other phase's columns empty) is an
/// error naming the file, line and column, as are non-numeric values, heads that do not divide
/// by tp, a prefill row without a chunk or of a batch other than 1, and a decode row with one.
[[nodiscard]] inline std::vector<attention_row> read_attention(std::istream& in, std::string source,
                                                               statistic stat = statistic::median) {
    profile::csv_reader r(in, source);
    const detail::header_columns find(r, source, "attention.csv");
    const std::string st(name_of(stat));
    const std::size_t c_decode = find("time_stats.attn_decode." + st),
                      c_prefill = find("time_stats.attn_prefill." + st), c_q = find("n_q_head"),
                      c_kv = find("n_kv_head"), c_embd = find("n_embd"),
                      c_tp = find("num_tensor_parallel_workers"), c_batch = find("batch_size"),
                      c_chunk = find("prefill_chunk_size"), c_cache = find("kv_cache_size"),
                      c_phase = find("is_prefill");
    const std::optional<std::size_t> c_backend = find.optional("attention_backend");
    std::vector<attention_row> rows;
    while (r.next()) {
        const profile::csv_record& f = r.record();
        attention_row a;
        a.line = f.line();
        a.n_q_head = detail::to_int(f[c_q], source, a.line, "n_q_head");
        a.n_kv_head = detail::to_int(f[c_kv], source, a.line, "n_kv_head");
        a.n_embd = detail::to_int(f[c_embd], source, a.line, "n_embd");
        a.tp = detail::to_int(f[c_tp], source, a.line, "num_tensor_parallel_workers");
        a.batch = detail::to_int(f[c_batch], source, a.line, "batch_size");
        a.chunk = detail::to_int(f[c_chunk], source, a.line, "prefill_chunk_size", 0);
        a.kv_cache = detail::to_int(f[c_cache], source, a.line, "kv_cache_size", 0);
        a.prefill = detail::to_bool(f[c_phase], source, a.line, "is_prefill");
        if (c_backend) {
            const std::string_view backend = f[*c_backend];
            if (backend != "AttentionBackend.FLASHINFER" &&
                backend != "AttentionBackend.FLASH_ATTENTION")
                detail::fail(source, a.line,
                             "attention_backend: '" + std::string(backend) +
                                 "' (expected AttentionBackend.FLASHINFER or "
                                 "AttentionBackend.FLASH_ATTENTION)");
            a.flashinfer = backend == "AttentionBackend.FLASHINFER";
        }
        if (a.n_embd % a.n_q_head != 0)
            detail::fail(source, a.line, "n_embd is not a multiple of n_q_head");
        if (a.n_q_head % a.tp != 0 || a.n_kv_head % a.tp != 0)
            detail::fail(source, a.line,
                         "n_q_head or n_kv_head is not a multiple of "
                         "num_tensor_parallel_workers");
        if (a.n_q_head % a.n_kv_head != 0)
            detail::fail(source, a.line, "n_q_head is not a multiple of n_kv_head");
        if (a.prefill && (a.chunk < 1 || a.batch != 1))
            detail::fail(source, a.line,
                         "a prefill row needs prefill_chunk_size >= 1 and "
                         "batch_size 1 (vidur's AttentionInput::is_valid)");
        if (!a.prefill && (a.chunk != 0 || a.kv_cache < 1))
            detail::fail(source, a.line,
                         "a decode row needs prefill_chunk_size 0 and "
                         "kv_cache_size >= 1 (vidur's AttentionInput::is_valid)");
        const std::size_t c = a.prefill ? c_prefill : c_decode;
        const std::string_view column =
            a.prefill ? "time_stats.attn_prefill" : "time_stats.attn_decode";
        const auto ms = detail::to_ms(f[c], source, a.line, column);
        if (!ms) detail::fail(source, a.line, std::string(column) + ": no time (expected > 0 ms)");
        a.us = *ms * 1000.0;
        rows.push_back(a);
    }
    return rows;
}

/// The kernel row of one attention measurement: a FlashAttentionScore in BNSD shapes, fp16,
/// Q [B, Nq/tp, S, D], K and V [B, Nkv/tp, kv_cache + S, D] (S = 1 decode, the chunk prefill).
/// A decode row's one query sees every key: no mask input. A prefill chunk is causal, but
/// FlashAttention-2's measured kernel's time grows as if it computed every pair of the
/// S x (kv_cache + S) rectangle: at tensor-parallel degree 1 a chunk's own S^2 part costs
/// 3.96 ps a pair and head, the cached part 3.4-3.5 (the full-square reading), where the causal
/// reading would make its kept pairs cost 2.3 times the cached ones; so no mask input either.
/// FlashInfer's prefill skips the pairs above the diagonal (its 16384-token chunk with nothing
/// cached, 3.58 ms at tensor-parallel degree 4, would be 98 % of the tensor peak as a full
/// square): a causal mask input, [2048, 2048] bool, as the profile mapping reads one
/// (docs/validation.md, "Attention on the A100: vidur's paged kernels"). FlashInfer's rows, prefill
/// and decode alike (sarathi-serve ran both through BatchPrefillWithPagedKVCacheWrapper), are of
/// type BatchPrefillWithPagedKVCache@0.0.6: FlashInfer's layout (attention_kernel::flashinfer)
/// in the release they were measured with, whose plan split the keys in chunks of at least 512
/// (tests/data/README.md says how the release is known).
[[nodiscard]] inline kernel_line kernel_of(const attention_row& a, int block_dim = a100_sms) {
    using detail::shape;
    const std::int64_t d = a.n_embd / a.n_q_head;
    const std::int64_t s = a.prefill ? a.chunk : 1;
    const std::int64_t keys = a.kv_cache + s;
    const std::int64_t hq = a.n_q_head / a.tp;
    const std::int64_t hkv = a.n_kv_head / a.tp;
    kernel_line k;
    k.name = std::string(a.prefill ? "attn_prefill" : "attn_decode") +
             " B=" + std::to_string(a.batch) + " S=" + std::to_string(s) +
             " kv=" + std::to_string(a.kv_cache) + " tp=" + std::to_string(a.tp) +
             " line=" + std::to_string(a.line);
    k.type = a.flashinfer ? "BatchPrefillWithPagedKVCache@0.0.6" : "FlashAttentionScore";
    k.core = "AI_CORE";
    k.duration_us = a.us;
    k.block_dim = block_dim;
    const std::string q = shape({a.batch, hq, s, d});
    const std::string kv = shape({a.batch, hkv, keys, d});
    k.input_shapes = q + ";" + kv + ";" + kv;
    k.input_types = "fp16;fp16;fp16";
    if (a.prefill && a.flashinfer) {
        k.input_shapes += ";2048,2048";
        k.input_types += ";bool";
    }
    k.output_shapes = q;
    k.output_types = "fp16";
    return k;
}

/// Writes the kernel rows of attention measurements `rows` (header first); returns their number.
inline std::size_t write_profile(std::ostream& out, const std::vector<attention_row>& rows,
                                 int block_dim = a100_sms) {
    write_header(out);
    for (const attention_row& a : rows) write_row(out, kernel_of(a, block_dim));
    return rows.size();
}

/// The fit / test split of attention measurements: tensor-parallel degrees 1 and 2 (32 and 16
/// heads of Llama-2-7B per GPU) are for fitting, 4 and 8 held out (fewer heads, so fewer thread
/// blocks for the same shapes: what the fit rows do not show).
[[nodiscard]] constexpr bool in_fit_split(const attention_row& a) noexcept { return a.tp <= 2; }

/// Measurement rows (mlp_row or attention_row) split by `in_fit_split`.
template <class Row>
struct split_of {
    std::vector<Row> fit;
    std::vector<Row> test;
};
using split_rows = split_of<mlp_row>;

template <class Row>
[[nodiscard]] split_of<Row> split(const std::vector<Row>& rows) {
    split_of<Row> s;
    for (const Row& m : rows) (in_fit_split(m) ? s.fit : s.test).push_back(m);
    return s;
}

/// Whether `header` (a CSV's first line) is vidur's attention.csv rather than its mlp.csv.
[[nodiscard]] constexpr bool is_attention_header(std::string_view header) noexcept {
    return header.find("time_stats.attn_decode.") != std::string_view::npos ||
           header.find("time_stats.attn_prefill.") != std::string_view::npos;
}

}  // namespace perfcast::vidur
