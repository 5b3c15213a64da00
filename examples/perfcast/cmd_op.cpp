// examples/perfcast/cmd_op.cpp: `perfcast op`: the cost of one op on a chip under a core limit.
//
//   perfcast op --chip 910B1 --cube 12 --matmul 128,300,32 --batch 8 --dtype fp16
//   perfcast op --chip 910B1 --vector 24 --elementwise 4000 --inputs 2 --dtype int64
//   perfcast op --transfer 4MiB --link pcie5x4
//   perfcast op --line 'topk 8,300 fp16 k=10'          any op kind, as a model-file line
//
// The shortcut flags (--matmul ... --transpose) cover the common kinds; --line reaches every kind
// of the op vocabulary (node.hpp's op_kinds, or an extension's: run_op_in), so a new kind needs
// no edit here. A flag that does not apply to the op given is an error, not ignored (modifiers).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/cost.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/link.hpp>
#include <perfcast/node.hpp>
#include <perfcast/op.hpp>
#include <perfcast/op_vocabulary.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace perfcast::cli {

namespace op_detail {

inline constexpr std::array<option, 30> options{{
    {"chip", "NAME", "chip preset (default 910B1; see `perfcast chips`)"},
    chip_ini_option,
    params_option,
    {"cube", "K", "cube-core limit of a cube op (default: all)"},
    {"vector", "K", "vector-core limit of a vector op (default: all)"},
    {"dtype", "T", "data type (default fp16): fp32 hf32 fp16 bf16 fp8 int8 int32 int64 ..."},
    {"matmul", "M,N,K", "[M,K] x [K,N] on the cube"},
    {"batch", "B", "batch count of a batch matmul, or B in --line (default 1)"},
    {"broadcast-b", "", "B shared by every batch (broadcast BMM)"},
    {"elementwise", "N", "elementwise op with N output elements"},
    {"shapes", "A;B", "elementwise between broadcast shapes, e.g. '1,4000;400,1'"},
    {"inputs", "N", "elementwise inputs (default 2)"},
    {"ops-per-element", "X", "vector operations per output element (default 1)"},
    {"out-dtype", "T",
     "output dtype of --matmul / --elementwise / --shapes (default: same as --dtype)"},
    {"reduce", "ROWS,LEN", "reduce ROWS rows of LEN elements"},
    {"softmax", "ROWS,LEN", "softmax of ROWS rows of LEN elements (along the last axis)"},
    {"norm", "ROWS,WIDTH", "norm of ROWS rows of WIDTH, each reduced across a GPU block (ops: 8)"},
    {"gather", "N", "gather N rows"},
    {"row-bytes", "SIZE", "gathered row size, e.g. 64B (default 64B)"},
    {"table-rows", "N", "rows in the gathered table (default 1000000)"},
    {"hot", "SHARE", "share of gather indices on a few hot rows (0..1)"},
    {"topk", "ROWS,LEN,K", "TopK over ROWS rows of LEN"},
    {"valid", "N", "TopK valid length, K to LEN (default, or 0: LEN)"},
    {"transpose", "D0,D1,..", "transpose a tensor whose innermost axis moves"},
    {"line", "LINE", "an op of any kind as a model-file line (docs/model-file.md); B is --batch"},
    {"transfer", "SIZE", "host-to-device transfer, e.g. 4MiB"},
    {"link", "NAME", "host link for --transfer, e.g. pcie5x4 (default: the chip's)"},
    {"format", "FORMAT", "table (default) or json"},
    {"limit", "K", "core limit of the op's engine, whichever it is (instead of --cube / --vector)"},
    {"type", "T",
     "profiler op type whose per-type terms of --params price the op (work factor, fixed time, "
     "time per core), e.g. SoftmaxV2"},
}};

/// The flags that name the op: exactly one of them is given.
inline constexpr std::array<std::string_view, 11> op_flags{
    "matmul", "elementwise", "shapes",    "reduce", "softmax", "norm",
    "gather", "topk",        "transpose", "line",   "transfer"};

/// A flag that applies to some ops only: given with another, it is a usage error rather than
/// ignored. `ops`: the op flags it applies to, space-separated; `does`: what it does there.
struct modifier {
    std::string_view name;
    std::string_view ops;
    std::string_view does;
};

inline constexpr std::string_view device_ops =
    "matmul elementwise shapes reduce softmax norm gather topk transpose line";

inline constexpr std::array<modifier, 16> modifiers{{
    {"dtype", "matmul elementwise shapes reduce softmax norm gather topk transpose",
     "sets the dtype of a shortcut op flag's op (a --line names its own; a --transfer moves "
     "bytes)"},
    {"params", device_ops, "prices device ops (a --transfer is priced by its link alone)"},
    {"cube", device_ops, "sets the cube cores of a device op (a transfer holds no cores)"},
    {"vector", device_ops, "sets the vector cores of a device op (a transfer holds no cores)"},
    {"limit", device_ops, "sets the cores of a device op's engine (a transfer holds no cores)"},
    {"batch", "matmul line", "sets the batch count of --matmul, or B in --line"},
    {"broadcast-b", "matmul", "shares B across the batches of --matmul"},
    {"inputs", "elementwise", "sets the inputs of --elementwise (--shapes has two)"},
    {"ops-per-element", "elementwise shapes norm",
     "sets the operations per element of --elementwise, --shapes or --norm (a --line says "
     "ops=)"},
    {"out-dtype", "matmul elementwise shapes",
     "sets the output dtype of --matmul, --elementwise or --shapes (a --line says out= or to=)"},
    {"row-bytes", "gather", "sets the row size of --gather"},
    {"table-rows", "gather", "sets the table rows of --gather"},
    {"hot", "gather", "sets the share of --gather's indices on hot rows"},
    {"valid", "topk", "sets the valid length of --topk (a --line says valid=)"},
    {"link", "transfer", "sets the host link of --transfer"},
    {"type", device_ops, "applies a profiler type's terms of --params to a device op"},
}};

/// Whether the space-separated `words` hold `word`.
[[nodiscard]] constexpr bool has_word(std::string_view words, std::string_view word) noexcept {
    std::size_t pos = 0;
    while (pos <= words.size()) {
        const std::size_t end = std::min(words.find(' ', pos), words.size());
        if (words.substr(pos, end - pos) == word) return true;
        pos = end + 1;
    }
    return false;
}
static_assert(has_word(device_ops, "line") && has_word(device_ops, "matmul") &&
              !has_word(device_ops, "transfer") && !has_word(device_ops, "mat"));

/// The op flag given: exactly one of op_flags, else a usage error naming those given.
inline std::string_view op_flag_of(const parsed_args& a) {
    std::vector<std::string_view> given;
    for (std::string_view f : op_flags) {
        if (a.has(f)) given.push_back(f);
    }
    if (given.size() == 1) return given.front();
    std::string m =
        "give exactly one of --matmul, --elementwise, --shapes, --reduce, --softmax, --norm, "
        "--gather, --topk, --transpose, --line or --transfer";
    if (!given.empty()) {
        m += ", not ";
        for (std::size_t i = 0; i < given.size(); ++i) {
            if (i > 0) m += i + 1 == given.size() ? " and " : ", ";
            m += "--";
            m += given[i];
        }
        m += " together";
    }
    throw usage_error(m);
}

/// A modifier given with an op it does not apply to, or --limit with --cube / --vector: a usage
/// error that says why.
inline void check_modifiers(const parsed_args& a, std::string_view op_flag) {
    for (const modifier& m : modifiers) {
        if (!a.has(m.name) || has_word(m.ops, op_flag)) continue;
        throw usage_error("option '--" + std::string(m.name) + "' does not apply to --" +
                          std::string(op_flag) + ": --" + std::string(m.name) + " " +
                          std::string(m.does));
    }
    for (std::string_view flag : {"cube", "vector"}) {
        if (a.has("limit") && a.has(flag)) {
            throw usage_error("options '--limit' and '--" + std::string(flag) +
                              "' both set the op's core limit: give --" + std::string(flag) +
                              " (the " + std::string(flag) +
                              " cores) or --limit (the cores of whichever engine the op runs "
                              "on), not both");
        }
    }
}

/// --cube or --vector given for an op on another engine: a usage error naming the flag to use.
inline void check_engine_flags(const parsed_args& a, const op& o, op_vocabulary ops) {
    for (const engine e : {engine::cube, engine::vector}) {
        const std::string flag(name_of(e));
        if (!a.has(flag) || o.eng == e) continue;
        const std::string_view kind = name_in(ops, o.kind);
        const bool vowel =
            !kind.empty() && std::string_view("aeiou").find(kind[0]) != std::string_view::npos;
        std::string m = "--" + flag + " sets the " + flag + " cores, but " + (vowel ? "an " : "a ");
        m += kind;
        if (o.eng == engine::cube) {
            m += " runs on the cube: use --cube";
        } else if (o.eng == engine::vector) {
            m += " runs on the vector cores: use --vector";
        } else {
            m += " of ";
            m += name_of(o.type);
            m += " runs on the AI CPU: use --limit";
        }
        throw usage_error(m);
    }
}

/// `v`, a count that an int holds; larger is an error naming `flag`.
[[nodiscard]] inline int int_count(std::int64_t v, std::string_view flag) {
    PERFCAST_EXPECTS(v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max(),
                     "op", flag, std::to_string(v), "an integer in [-2147483648, 2147483647]");
    return static_cast<int>(v);
}

inline std::vector<std::int64_t> ints(const parsed_args& a, std::string_view name,
                                      std::size_t count) {
    std::vector<std::int64_t> v;
    const std::string text = *a.get(name);  // split() returns views into it
    for (std::string_view p : io::split(text, ','))
        v.push_back(io::parse_int(p, "--" + std::string(name)));
    if (v.size() != count) {
        throw usage_error("option '--" + std::string(name) + "' needs " + std::to_string(count) +
                          " comma-separated integers, got '" + *a.get(name) + "'");
    }
    return v;
}

inline shape shape_of(std::string_view text, std::string_view field) {
    std::vector<std::int64_t> d;
    for (std::string_view p : io::split(text, ',')) d.push_back(io::parse_int(p, field));
    PERFCAST_EXPECTS(d.size() >= 1 && d.size() <= shape::max_rank, "parse", field,
                     std::string(text), "1 to 8 comma-separated dimensions");
    shape s;
    for (std::int64_t x : d) {
        PERFCAST_EXPECTS(x >= 1, "parse", field, static_cast<double>(x), "every dimension >= 1");
        s.dims_[s.rank_++] = x;
    }
    (void)s.elements(field);
    return s;
}

inline std::int64_t int_flag(const parsed_args& a, std::string_view name, std::int64_t fallback) {
    if (auto v = a.get(name)) return io::parse_int(*v, "--" + std::string(name));
    return fallback;
}

/// The flag that sets an op factory's field, where the names differ: a factory's error about it
/// ("perfcast::gather: hot_fraction = 1.5, ...") is a usage error of that flag.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 4> field_flags{{
    {"hot_fraction", "hot"},
    {"ops_per_element", "ops-per-element"},
    {"row_bytes", "row-bytes"},
    {"table_rows", "table-rows"},
}};

/// `e` as the usage error of the flag that set the field it names ("option '--hot':
/// perfcast::gather: hot_fraction = 1.5, ..."), when that flag was given; else nothing.
inline std::optional<usage_error> as_flag_error(const parsed_args& a, const perfcast::error& e) {
    const std::string_view what = e.what();
    for (const auto& [field, flag] : field_flags) {
        if (a.has(flag) && what.find(": " + std::string(field) + " = ") != std::string_view::npos)
            return usage_error("option '--" + std::string(flag) + "': " + std::string(what));
    }
    return std::nullopt;
}

/// The device op the flags describe (op_flag_of and check_modifiers passed). `ops`: the kinds
/// --line may name.
inline op op_of(const parsed_args& a, op_vocabulary ops) {
    const dtype t = parse_dtype(a.value_or("dtype", "fp16"));
    if (a.has("line")) {
        const node n = io::parse_op_line(*a.get("line"), "--line", ops);
        if (a.has("batch") && !n.depends_on_batch()) {
            throw usage_error(
                "option '--batch' does not apply to this --line: --batch sets B, and the line "
                "has no B");
        }
        return instantiate(n, int_flag(a, "batch", 1));
    }
    elementwise_options eo;
    eo.inputs = int_count(int_flag(a, "inputs", 2), "--inputs");
    if (auto v = a.get("ops-per-element"))
        eo.ops_per_element = io::parse_double(*v, "--ops-per-element");
    if (auto v = a.get("out-dtype")) {
        eo.out_same_as_in = false;
        eo.out_type = parse_dtype(*v);
    }
    if (a.has("matmul")) {
        const auto d = ints(a, "matmul", 3);
        return batch_matmul(
            int_flag(a, "batch", 1), d[0], d[1], d[2], t,
            {.broadcast_b = a.has("broadcast-b"), .out_type = eo.out_same_as_in ? t : eo.out_type});
    }
    if (a.has("elementwise"))
        return elementwise(io::parse_int(*a.get("elementwise"), "--elementwise"), t, eo);
    if (a.has("shapes")) {
        const std::string shapes = *a.get("shapes");  // split() returns views into it
        const auto parts = io::split(shapes, ';');
        if (parts.size() != 2) throw usage_error("option '--shapes' needs two shapes 'A;B'");
        return elementwise_broadcast(shape_of(parts[0], "--shapes"), shape_of(parts[1], "--shapes"),
                                     t, eo);
    }
    if (a.has("reduce")) {
        const auto d = ints(a, "reduce", 2);
        return reduce(d[0], d[1], t);
    }
    if (a.has("softmax")) {
        const auto d = ints(a, "softmax", 2);
        return softmax(d[0], d[1], t);
    }
    if (a.has("norm")) {
        // The model file's `norm B,WIDTH ops=X reduce=1` (X: --ops-per-element, else a layer
        // norm's): each row reduced across one GPU thread block.
        const auto d = ints(a, "norm", 2);
        const double per_element =
            a.has("ops-per-element") ? eo.ops_per_element : layer_norm_ops_per_element;
        return rowwise(
            d[0], d[1], t,
            {.ops_per_element = per_element, .row_threads = row_reduction_threads(d[1])});
    }
    if (a.has("gather")) {
        gather_options go;
        if (auto v = a.get("hot")) go.hot_fraction = io::parse_double(*v, "--hot");
        return gather(io::parse_int(*a.get("gather"), "--gather"),
                      io::parse_size(a.value_or("row-bytes", "64B"), "--row-bytes"),
                      int_flag(a, "table-rows", 1000000), t, go);
    }
    if (a.has("topk")) {
        const auto d = ints(a, "topk", 3);
        return topk(d[0], d[1], d[2], t, int_flag(a, "valid", 0));
    }
    return transpose(shape_of(*a.get("transpose"), "--transpose"), t);
}

/// The core limit of an op on engine `e` (check_modifiers and check_engine_flags passed): --limit,
/// --cube or --vector, checked against the chip's cores here rather than by cost() so that the
/// error names the flag, the bound and the chip; else all the engine's cores.
inline int limit_for(const parsed_args& a, const chip& c, engine e) {
    const int cores = c.engine_of(e).cores;
    std::string flag = "limit";
    if (!a.has(flag)) flag = name_of(e);
    const auto v = a.get(flag);
    if (!v) return cores;
    flag.insert(0, "--");
    const std::int64_t k = io::parse_int(*v, flag);
    std::string engine_cores = " (the ";
    engine_cores += name_of(e);
    engine_cores += " cores of ";
    engine_cores += c.name.view();
    engine_cores += ')';
    if (k < 1) {
        ::perfcast::detail::precondition_failed("op", flag, static_cast<double>(k),
                                                "at least 1 core");
    }
    if (k > cores) {
        ::perfcast::detail::precondition_failed("op", flag, static_cast<double>(k),
                                                "at most " + std::to_string(cores) + engine_cores);
    }
    return static_cast<int>(k);
}

/// One line of output: text fields first, then numbers.
struct report {
    std::vector<std::pair<std::string, std::string>> text;
    std::vector<std::pair<std::string, double>> numbers;
    std::vector<int> digits;
    void num(std::string name, double v, int d) {
        numbers.emplace_back(std::move(name), v);
        digits.push_back(d);
    }
};

inline void write(const report& r, std::ostream& out, const std::string& format) {
    if (format == "json") {
        io::json_writer j(out);
        j.begin_object();
        for (const auto& [k, v] : r.text) {
            if (k == "cores") {
                j.member(k, static_cast<int>(io::parse_int(v, k)));
            } else {
                j.member(k, std::string_view(v));
            }
        }
        for (const auto& [k, v] : r.numbers) j.member(k, v);
        j.end_object();
        out << '\n';
        return;
    }
    io::text_table tab({"field", "value"});
    for (const auto& [k, v] : r.text) tab.add_row({k, v});
    for (std::size_t i = 0; i < r.numbers.size(); ++i)
        tab.add_row({r.numbers[i].first, io::format_fixed(r.numbers[i].second, r.digits[i])});
    tab.write(out);
}

/// A host transfer: it holds no cores; its bound is the link, or its fixed setup cost (overhead,
/// as a device op's head) when that is the larger part.
inline report transfer_report(const parsed_args& a, const chip& c) {
    const data_size size = io::parse_size(*a.get("transfer"), "--transfer");
    const pcie_link link = [&] {
        if (!a.has("link")) return link_of(c);
        try {
            return parse_link(*a.get("link"));
        } catch (const perfcast::error& e) {
            throw usage_error("option '--link': " + std::string(e.what()));
        }
    }();
    const duration t = link.transfer_time(size);
    const duration moving = size / link.achievable();
    report r;
    r.text = {{"link", std::string(link_name(link).view())},
              {"op", "transfer"},
              {"cores", "0"},
              {"bound", moving < link.per_transfer ? "overhead" : "link"}};
    r.num("latency_us", t.in(units::us), 3);
    r.num("core_time_us", 0, 3);
    r.num("head_us", link.per_transfer.in(units::us), 3);
    r.num("compute_us", 0, 3);
    r.num("memory_us", moving.in(units::us), 3);
    r.num("utilization", link.effective_bandwidth(size) / link.achievable(), 4);
    r.num("bytes", size.in(units::B), 0);
    r.num("flops", 0, 0);
    r.num("effective_gbps", link.effective_bandwidth(size).in(units::GBps), 3);
    r.num("per_direction_gbps", link.per_direction().in(units::GBps), 3);
    r.num("achievable_gbps", link.achievable().in(units::GBps), 3);
    return r;
}

inline report op_report(const chip& c, const op& o, const op_cost& k, op_vocabulary ops,
                        const model_params& p) {
    report r;
    r.text = {{"chip", std::string(c.name.view())},    {"op", std::string(name_in(ops, o.kind))},
              {"engine", std::string(name_of(o.eng))}, {"dtype", std::string(name_of(o.type))},
              {"cores", std::to_string(k.cores)},      {"bound", std::string(name_of(k.bound))}};
    // The output's dtype where it is not the input's (a cast, an FP8 GEMM writing bf16).
    if (o.out_type != o.type)
        r.text.insert(r.text.begin() + 4, std::pair<std::string, std::string>{
                                              "out_dtype", std::string(name_of(o.out_type))});
    r.num("latency_us", k.latency.in(units::us), 3);
    r.num("core_time_us", k.core_time.in(units::us), 3);
    r.num("head_us", k.head.in(units::us), 3);
    r.num("compute_us", k.compute.in(units::us), 3);
    r.num("memory_us", k.memory.in(units::us), 3);
    // A latency floor of the body (a GPU row kernel's trips, a fused attention's block waves, a
    // split attention's merge; docs/model.md) past the overlapped compute and memory: what the
    // latency holds beyond head + body, shown where it is there, so the terms add up.
    const duration floor =
        k.latency - k.head - perfcast::detail::overlapped_body(k.compute, k.memory, p.overlap);
    if (floor > k.latency * 1e-9) r.num("floor_us", floor.in(units::us), 3);
    r.num("utilization", k.utilization, 4);
    r.num("bytes", k.bytes.in(units::B), 0);
    r.num("flops", k.flops.in(units::flop), 0);
    return r;
}

}  // namespace op_detail

std::string op_usage() {
    return "Usage: perfcast op [--chip NAME] [--cube K | --vector K | --limit K] OP-FLAGS "
           "[--format table|json]\n"
           "       perfcast op --transfer SIZE [--link pcie5x4]\n\n"
           "Predict one op: latency, cores held, core-time, head / compute / memory split, bound\n"
           "and utilization. One op flag; --cube for an op on the cube, --vector for one on\n"
           "the vector cores, --limit for either (or the AI CPU); a flag that does not apply\n"
           "to the op is an error. Examples:\n"
           "  perfcast op --chip 910B1 --cube 12 --matmul 128,300,32 --batch 8 --dtype fp16\n"
           "  perfcast op --chip 910B1 --vector 24 --elementwise 4000 --inputs 2 --dtype int64\n"
           "  perfcast op --transfer 4MiB --link pcie5x4\n"
           "  perfcast op --chip 910B1 --line 'topk B,300 fp16 k=10' --batch 8\n"
           "  perfcast op --chip H200 --softmax 4096,4096 --dtype bf16\n\n" +
           options_text(op_detail::options);
}

/// `perfcast op` with the op kinds of `ops` (op_kinds, or an extension's vocabulary).
int run_op_in(op_vocabulary ops, std::span<const std::string_view> args, std::ostream& out,
              std::ostream& err) {
    const parsed_args a = parse_args(args, op_detail::options);
    if (a.has("help")) {
        out << op_usage();
        return exit_ok;
    }
    if (!a.positional.empty())
        throw usage_error("unexpected argument '" + a.positional.front() + "'");
    const std::string format = choice(a, "format", {"table", "json"}, "table");
    const std::string_view op_flag = op_detail::op_flag_of(a);
    op_detail::check_modifiers(a, op_flag);
    const chip c = chip_from_args(a, "910B1");
    const profile::calibration cal = params_from_args(a);
    warn_params_chip(a, cal, c, err);
    if (op_flag == "transfer") {
        op_detail::write(op_detail::transfer_report(a, c), out, format);
        return exit_ok;
    }
    op o = [&] {
        try {
            return op_detail::op_of(a, ops);
        } catch (const perfcast::error& e) {
            // The op is the flags' description: whatever is wrong with it is a usage error.
            if (auto u = op_detail::as_flag_error(a, e)) throw *u;
            throw usage_error(e.what());
        }
    }();
    if (const engine e = engine_on(c, o.eng); e != o.eng) {  // an AI CPU op on a GPU
        o.eng = e;
        err << "perfcast: " << c.name.view()
            << " has no AI CPU: the op runs on its vector engine\n";
    }
    op_detail::check_engine_flags(a, o, ops);
    const int limit = op_detail::limit_for(a, c, o.eng);
    model_params params = cal.params;
    if (const auto type = a.get("type")) {
        if (!a.has("params"))
            throw usage_error("--type " + *type +
                              " names per-type terms of a calibration: give --params FILE");
        if (o.eng == engine::cube) {
            err << "perfcast: note: cube ops take no per-type terms (calibrate fits none for "
                   "them): --type "
                << *type << " changes nothing\n";
        } else if (!has_type_terms(cal, *type)) {
            err << "perfcast: note: " << *a.get("params") << " holds no terms for op type " << *type
                << " (names are matched exactly, as the profiler writes them): the op "
                << "is priced with the file's shared parameters alone\n";
        }
        o = cal.applied(o, *type);
        params = cal.params_for(o, *type);
    } else {
        note_type_terms_unused(a, cal, err,
                               "op prices by op kind: --type T applies those of "
                               "profiler op type T");
    }
    op_detail::write(op_detail::op_report(c, o, cost(c, o, core_count{limit}, params), ops, params),
                     out, format);
    return exit_ok;
}

}  // namespace perfcast::cli
