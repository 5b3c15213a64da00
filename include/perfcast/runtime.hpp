// perfcast/runtime.hpp: the host and runtime path of one inference task, around the kernels.
//
// A serving stack (ACL / GE on Ascend, the CUDA runtime on GPUs) runs each task as steps, in
// this order; card.hpp times them with the kernels and makes instances contend for what they
// share:
//
//   step       what it is                                              resource
//   prepare    host-side input preparation                             a host thread
//   buffers    device buffers for inputs and outputs, allocated and    the device-wide lock
//              freed per task (0 from a pool)
//   copy_in    host -> device copies: one per input tensor, or one     link (+ host for packing
//              aggregated copy (packed on the host first); each is     and, when locked, the
//              setup + bytes / (link rate x pageable share)             lock for the setup)
//   launch     the model launch: one call for a sunk graph, plus       a host thread
//              shape inference and tiling when shapes are dynamic
//              (per-op dispatch is priced op by op in graph.hpp)
//   device     the kernels: graph.hpp's timeline, card.hpp's sharing   cores, HBM, L2
//   sync       stream synchronisation: device done -> host running     a host thread
//   copy_out   device -> host copies, one per output tensor            link
//   post       host post-processing                                    a host thread
//   between    host work between two tasks of a closed-loop stress     a host thread
//              test, outside its timed window
//
// The task's copies are the model's transfer nodes (graph.hpp): `transfer ... dir=in` lines are
// its input tensors, `dir=out` its outputs; the copy policy decides how they reach the device.
// With a runtime path, transfers leave the kernel timeline and become the copy steps.
//
// Contention (card.hpp solves it with the instances' average demands, a mean-field as for the
// cores): host steps stretch by max(1, (1 + U) / H) with H host threads for the card and U the
// other instances' busy host threads; steps under the device-wide lock (buffers, and the copy
// setups when `copies_locked`) take S x (1 + Q), Q the other instances' average presence at the
// lock (Schweitzer's approximation of a first-come-first-served queue); copies stream slower when
// the other instances hold the link (card.hpp).
//
// Every parameter is an assumption until calibrated (docs/runtime.md says how), except where a
// preset cites a measurement. A default-constructed runtime_path is neutral: no host step costs
// anything, copies cost what graph.hpp's transfer nodes cost (the link's per-transfer cost +
// bytes / its achievable rate), so it moves the copies to the ends of the task and changes
// nothing else.
//
// Past 500 lines on purpose: one idea, the runtime path: its policies, steps and presets and the
// table of its settings (runtime_key, about 140 lines of rows) all describe the one struct
// runtime_path.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "enum_table.hpp"
#include "error.hpp"
#include "units.hpp"

namespace perfcast {

// ---------------------------------------------------------------------------------------------
// Options: each enum has one table of names (enum_table.hpp).

/// How the task's input tensors reach the device.
enum class copy_policy : unsigned char { per_tensor, aggregated };
inline constexpr std::array<enum_entry<copy_policy>, 2> copy_policy_names{
    {{copy_policy::per_tensor, "per-tensor"}, {copy_policy::aggregated, "aggregated"}}};

/// Host memory the copies read from or write to.
enum class host_memory : unsigned char { pageable, pinned };
inline constexpr std::array<enum_entry<host_memory>, 2> host_memory_names{
    {{host_memory::pageable, "pageable"}, {host_memory::pinned, "pinned"}}};

/// Where the task's device buffers come from.
enum class buffer_policy : unsigned char { per_task, pool };
inline constexpr std::array<enum_entry<buffer_policy>, 2> buffer_policy_names{
    {{buffer_policy::per_task, "per-task"}, {buffer_policy::pool, "pool"}}};

/// How the model is launched: the whole graph sunk to the device in one call, or op by op.
enum class launch_mode : unsigned char { graph, per_op };
inline constexpr std::array<enum_entry<launch_mode>, 2> launch_mode_names{
    {{launch_mode::graph, "graph"}, {launch_mode::per_op, "per-op"}}};

/// Static shapes, or shapes known only at run time (shape inference and tiling every task).
enum class shape_mode : unsigned char { static_shapes, dynamic_shapes };
inline constexpr std::array<enum_entry<shape_mode>, 2> shape_mode_names{
    {{shape_mode::static_shapes, "static"}, {shape_mode::dynamic_shapes, "dynamic"}}};

static_assert(covers_enum<copy_policy_names>() && covers_enum<host_memory_names>() &&
              covers_enum<buffer_policy_names>() && covers_enum<launch_mode_names>() &&
              covers_enum<shape_mode_names>());

[[nodiscard]] constexpr std::string_view name_of(copy_policy v) noexcept {
    return name_in(copy_policy_names, v);
}
[[nodiscard]] constexpr std::string_view name_of(host_memory v) noexcept {
    return name_in(host_memory_names, v);
}
[[nodiscard]] constexpr std::string_view name_of(buffer_policy v) noexcept {
    return name_in(buffer_policy_names, v);
}
[[nodiscard]] constexpr std::string_view name_of(launch_mode v) noexcept {
    return name_in(launch_mode_names, v);
}
[[nodiscard]] constexpr std::string_view name_of(shape_mode v) noexcept {
    return name_in(shape_mode_names, v);
}

// ---------------------------------------------------------------------------------------------
// The steps of a task and the window a stress test times.

enum class task_step : unsigned char {
    prepare, buffers, copy_in, launch, device, sync, copy_out, post, between
};
inline constexpr std::array<enum_entry<task_step>, 9> task_step_names{{
    {task_step::prepare, "prepare"},
    {task_step::buffers, "buffers"},
    {task_step::copy_in, "copy_in"},
    {task_step::launch, "launch"},
    {task_step::device, "device"},
    {task_step::sync, "sync"},
    {task_step::copy_out, "copy_out"},
    {task_step::post, "post"},
    {task_step::between, "between"},
}};
static_assert(covers_enum<task_step_names>());
[[nodiscard]] constexpr std::string_view name_of(task_step v) noexcept {
    return name_in(task_step_names, v);
}

/// A set of steps: the window a stress test's latency covers.
struct step_set {
    std::uint16_t bits = 0;

    [[nodiscard]] constexpr bool contains(task_step s) const noexcept {
        return (bits >> static_cast<unsigned>(s) & 1U) != 0;
    }
    [[nodiscard]] constexpr step_set with(task_step s) const noexcept {
        return {static_cast<std::uint16_t>(bits | 1U << static_cast<unsigned>(s))};
    }
    [[nodiscard]] friend constexpr bool operator==(step_set, step_set) noexcept = default;

    /// prepare .. post: the whole task, what a request waits for (the default window).
    [[nodiscard]] static constexpr step_set task() noexcept {
        step_set s;
        for (const auto& e : task_step_names) {
            if (e.value != task_step::between) s = s.with(e.value);
        }
        return s;
    }
    /// buffers .. copy_out: what a harness around the runtime calls times (no host work).
    [[nodiscard]] static constexpr step_set runtime_calls() noexcept {
        return step_set{}
            .with(task_step::buffers)
            .with(task_step::copy_in)
            .with(task_step::launch)
            .with(task_step::device)
            .with(task_step::sync)
            .with(task_step::copy_out);
    }
    /// launch + device + sync: the model execution call alone (copies timed separately).
    [[nodiscard]] static constexpr step_set execute() noexcept {
        return step_set{}.with(task_step::launch).with(task_step::device).with(task_step::sync);
    }
};

/// Named windows, for flags and files.
inline constexpr std::array<enum_entry<std::uint16_t>, 3> step_window_names{{
    {step_set::task().bits, "task"},
    {step_set::runtime_calls().bits, "runtime-calls"},
    {step_set::execute().bits, "execute"},
}};

/// "task", "execute", ... or the steps joined by '+'.
[[nodiscard]] inline std::string name_of(step_set s) {
    const std::string_view named = name_in(step_window_names, s.bits);
    if (named != "?") return std::string(named);
    std::string out;
    for (const auto& e : task_step_names) {
        if (!s.contains(e.value)) continue;
        if (!out.empty()) out += '+';
        out += e.name;
    }
    return out.empty() ? std::string("none") : out;
}

/// A window named as in step_window_names, or steps joined by '+' ("copy_in+launch+device").
[[nodiscard]] inline std::optional<step_set> parse_step_set(std::string_view text) {
    if (auto w = parse_in(step_window_names, text)) return step_set{*w};
    step_set s;
    while (!text.empty()) {
        const std::size_t plus = text.find('+');
        const std::string_view part = text.substr(0, plus);
        const auto st = parse_in(task_step_names, part);
        if (!st) return std::nullopt;
        s = s.with(*st);
        if (plus == std::string_view::npos) break;
        text.remove_prefix(plus + 1);
        if (text.empty()) return std::nullopt;  // a trailing '+'
    }
    if (s.bits == 0) return std::nullopt;
    return s;
}

// ---------------------------------------------------------------------------------------------
// The runtime path's parameters.

struct runtime_path {
    copy_policy copies = copy_policy::per_tensor;
    host_memory memory = host_memory::pinned;
    buffer_policy buffers = buffer_policy::pool;
    launch_mode launch = launch_mode::graph;
    shape_mode shapes = shape_mode::static_shapes;

    duration prepare{};       // host: input preparation, per task
    duration buffer{};        // one device buffer allocated and freed (per_task), under the lock
    /// Per copy from pinned memory; unset: the host link's per-transfer cost (link.hpp).
    std::optional<duration> copy_setup{};
    duration pageable_setup{};    // added per copy from pageable memory (staging)
    double pageable_rate = 1.0;   // pageable copy rate as a share of the pinned rate, (0, 1]
    bandwidth pack_rate{10.0, units::GBps};  // host memcpy rate packing an aggregated copy
    duration graph_launch{};      // one launch of the sunk graph (launch_mode::graph)
    /// Host time to launch one op (launch_mode::per_op); unset: the chip's host_dispatch.
    std::optional<duration> op_launch{};
    duration dynamic_shape{};     // host shape inference and tiling per task (dynamic shapes)
    duration sync{};              // stream synchronisation: device done -> host resumes
    duration post{};              // host post-processing, per task
    duration between{};           // host work between tasks (closed loop), outside the window
    bool copies_locked = false;   // copy setups also take the device-wide lock
    step_set window = step_set::task();  // what the reported latency covers

    [[nodiscard]] friend constexpr bool operator==(const runtime_path&,
                                                   const runtime_path&) = default;
};

namespace detail {
/// A time parameter: finite, >= 0 and at most a minute (a runtime step longer than that is a
/// unit mistake, not a deployment).
constexpr void expect_step_time(duration t, std::string_view field) {
    PERFCAST_EXPECTS(t.in(units::us) >= 0 && t.in(units::us) <= 6e7 && is_finite(t),
                     "validate(runtime_path)", field, t.in(units::us),
                     "a time in [0, 6e7] us (at most a minute)");
}
}  // namespace detail

constexpr const runtime_path& validate(const runtime_path& r) {
    constexpr std::string_view where = "validate(runtime_path)";
    detail::expect_step_time(r.prepare, "prepare_us");
    detail::expect_step_time(r.buffer, "buffer_us");
    if (r.copy_setup) detail::expect_step_time(*r.copy_setup, "copy_setup_us");
    detail::expect_step_time(r.pageable_setup, "pageable_setup_us");
    detail::expect_step_time(r.graph_launch, "launch_us");
    if (r.op_launch) detail::expect_step_time(*r.op_launch, "op_launch_us");
    detail::expect_step_time(r.dynamic_shape, "dynamic_shape_us");
    detail::expect_step_time(r.sync, "sync_us");
    detail::expect_step_time(r.post, "post_us");
    detail::expect_step_time(r.between, "between_us");
    PERFCAST_EXPECTS(r.pageable_rate > 0 && r.pageable_rate <= 1, where, "pageable_rate",
                     r.pageable_rate, "a share of the pinned rate in (0, 1]");
    PERFCAST_EXPECTS(r.pack_rate.in(units::GBps) >= 0.01 && r.pack_rate.in(units::GBps) <= 1e4,
                     where, "pack_GBps", r.pack_rate.in(units::GBps),
                     "a host copy rate in [0.01, 1e4] GB/s");
    PERFCAST_EXPECTS(r.window.bits != 0, where, "window", 0.0, "at least one step");
    return r;
}

/// Presets. Each number says where it comes from; "assumption" means nobody measured it for
/// perfcast yet: calibrate it on measured deployment rows (docs/runtime.md).
namespace runtime_presets {

/// Ascend, ACL / GE serving code as the CANN samples write it: per-task aclrtMalloc /
/// aclrtFree of every input and output buffer, one aclrtMemcpy per input tensor from pageable
/// (malloc'd) host memory, aclmdlExecute of the sunk graph, synchronous.
///  - buffer 10 us, pageable_setup 20 us, pageable_rate 0.5, launch 30 us, dynamic_shape 300 us,
///    sync 10 us: assumptions (orders of magnitude from the tuning guide's host-bound cases,
///    docs/tuning-guide.md; no published ACL per-call figures were found);
///  - copy setup: the link's per-transfer cost (link.hpp, 8 us).
inline constexpr runtime_path acl{
    .copies = copy_policy::per_tensor,
    .memory = host_memory::pageable,
    .buffers = buffer_policy::per_task,
    .launch = launch_mode::graph,
    .shapes = shape_mode::static_shapes,
    .prepare = {},
    .buffer = duration{10.0, units::us},
    .copy_setup = {},
    .pageable_setup = duration{20.0, units::us},
    .pageable_rate = 0.5,
    .pack_rate = bandwidth{10.0, units::GBps},
    .graph_launch = duration{30.0, units::us},
    .op_launch = {},
    .dynamic_shape = duration{300.0, units::us},
    .sync = duration{10.0, units::us},
    .post = {},
    .between = {},
    .copies_locked = false,
    .window = step_set::task(),
};

/// NVIDIA, the CUDA runtime with buffers from a pool (the caching allocators of the frameworks
/// and Triton), pageable copies, a CUDA-graph launch.
///  - launch 4.2 us: host time of a bare CUDA runtime launch call measured on an H200 by this
///    project's device check (chips/nvidia.hpp); a graph launch is taken to cost the same
///    (assumption);
///  - sync 5.9 us: the same check's launch + synchronize (10.1 us) less the launch (4.2 us);
///  - pageable_setup 10 us, pageable_rate 0.5: assumptions (pageable copies are staged through
///    a pinned buffer by the driver: NVIDIA, "How to Optimize Data Transfers in CUDA C/C++",
///    developer.nvidia.com/blog/how-optimize-data-transfers-cuda-cc/, gives the mechanism, not
///    our numbers);
///  - copy setup: the link's per-transfer cost (link.hpp: 7.7 us fitted to cudaMemcpy, rounded
///    to 8 us).
inline constexpr runtime_path cuda{
    .copies = copy_policy::per_tensor,
    .memory = host_memory::pageable,
    .buffers = buffer_policy::pool,
    .launch = launch_mode::graph,
    .shapes = shape_mode::static_shapes,
    .prepare = {},
    .buffer = duration{20.0, units::us},
    .copy_setup = {},
    .pageable_setup = duration{10.0, units::us},
    .pageable_rate = 0.5,
    .pack_rate = bandwidth{10.0, units::GBps},
    .graph_launch = duration{4.2, units::us},
    .op_launch = {},
    .dynamic_shape = duration{100.0, units::us},
    .sync = duration{5.9, units::us},
    .post = {},
    .between = {},
    .copies_locked = false,
    .window = step_set::task(),
};

}  // namespace runtime_presets

/// The presets by name (the command's --runtime).
inline constexpr std::array<enum_entry<int>, 3> runtime_preset_names{
    {{0, "none"}, {1, "acl"}, {2, "cuda"}}};

/// The preset named `text`: nothing for "none" (kernels only); an error for an unknown name.
[[nodiscard]] inline std::optional<runtime_path> runtime_preset(std::string_view text) {
    const auto i = parse_in(runtime_preset_names, text);
    if (!i) {
        detail::precondition_failed("runtime_preset", "name", text,
                                    choices_of(runtime_preset_names));
    }
    if (*i == 1) return runtime_presets::acl;
    if (*i == 2) return runtime_presets::cuda;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Settings by key: one table for the model file's `runtime` line, the params file's
// `runtime.KEY = value` and the command's --runtime-set KEY=VALUE.

namespace detail {
[[nodiscard]] inline double parse_setting_number(std::string_view key, std::string_view text,
                                                 std::string_view expected) {
    double v = 0;
    const char* b = text.data();
    const char* e = b + text.size();
    const auto [p, ec] = std::from_chars(b, e, v);
    if (text.empty() || ec != std::errc{} || p != e || !(v == v)) {
        precondition_failed("runtime setting", key, text, expected);
    }
    return v;
}

template <class E, std::size_t N>
[[nodiscard]] E parse_setting_enum(const std::array<enum_entry<E>, N>& table,
                                   std::string_view key, std::string_view text) {
    if (auto v = parse_in(table, text)) return *v;
    precondition_failed("runtime setting", key, text, choices_of(table));
}

[[nodiscard]] inline std::string us_text(duration t) { return number_text(t.in(units::us)); }

/// A time in us; `word`, when given, is the other value the key takes (its error says so).
inline void set_time(duration& out, std::string_view key, std::string_view text,
                     std::string_view word = {}) {
    const double v =
        parse_setting_number(key, text,
                             word.empty() ? std::string("a time in us, >= 0")
                                          : "a time in us, >= 0, or '" + std::string(word) + "'");
    out = duration{v, units::us};
    expect_step_time(out, key);
}
}  // namespace detail

/// One settable key of the runtime path.
struct runtime_key {
    std::string_view key;
    std::string_view value;  // what the value is, for help and errors
    std::string_view help;
    void (*set)(runtime_path&, std::string_view key, std::string_view value);
    std::string (*get)(const runtime_path&);  // the value as set() reads it back
};

/// yes / no, for the switches among the settings.
inline constexpr std::array<enum_entry<bool>, 2> yes_no_names{{{false, "no"}, {true, "yes"}}};

inline const std::array<runtime_key, 19> runtime_keys{{
    {"copies", "per-tensor|aggregated", "input copies: one per tensor or one aggregated copy",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.copies = detail::parse_setting_enum(copy_policy_names, k, v);
     },
     [](const runtime_path& r) { return std::string(name_of(r.copies)); }},
    {"memory", "pageable|pinned", "host memory of the copies",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.memory = detail::parse_setting_enum(host_memory_names, k, v);
     },
     [](const runtime_path& r) { return std::string(name_of(r.memory)); }},
    {"buffers", "per-task|pool", "device buffers allocated per task or taken from a pool",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.buffers = detail::parse_setting_enum(buffer_policy_names, k, v);
     },
     [](const runtime_path& r) { return std::string(name_of(r.buffers)); }},
    {"copy_lock", "no|yes",
     "copy setups also take the device-wide lock (runtimes that serialise "
     "copies per device)",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.copies_locked = detail::parse_setting_enum(yes_no_names, k, v);
     },
     [](const runtime_path& r) { return std::string(name_in(yes_no_names, r.copies_locked)); }},
    {"launch", "graph|per-op", "the whole graph sunk in one launch, or op by op from the host",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.launch = detail::parse_setting_enum(launch_mode_names, k, v);
     },
     [](const runtime_path& r) { return std::string(name_of(r.launch)); }},
    {"shapes", "static|dynamic", "dynamic: host shape inference and tiling every task",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.shapes = detail::parse_setting_enum(shape_mode_names, k, v);
     },
     [](const runtime_path& r) { return std::string(name_of(r.shapes)); }},
    {"window", "task|runtime-calls|execute|STEP+STEP..", "what the reported latency covers",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         auto w = parse_step_set(v);
         if (!w) {
             detail::precondition_failed(
                 "runtime setting", k, v,
                 "task, runtime-calls, execute, or steps joined by '+' (" +
                     choices_of(task_step_names) + ")");
         }
         r.window = *w;
     },
     [](const runtime_path& r) { return name_of(r.window); }},
    {"prepare_us", "US", "host input preparation per task",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.prepare, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.prepare); }},
    {"buffer_us", "US", "one device buffer allocated and freed (buffers=per-task)",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.buffer, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.buffer); }},
    {"copy_setup_us", "US|link", "per copy from pinned memory (link: the link's per-transfer cost)",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         if (v == "link") {
             r.copy_setup.reset();
             return;
         }
         duration t{};
         detail::set_time(t, k, v, "link");
         r.copy_setup = t;
     },
     [](const runtime_path& r) {
         return r.copy_setup ? detail::us_text(*r.copy_setup) : std::string("link");
     }},
    {"pageable_setup_us", "US", "added per copy from pageable memory",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.pageable_setup, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.pageable_setup); }},
    {"pageable_rate", "SHARE", "pageable copy rate as a share of the pinned rate, (0, 1]",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         r.pageable_rate = detail::parse_setting_number(k, v, "a share in (0, 1]");
         PERFCAST_EXPECTS(r.pageable_rate > 0 && r.pageable_rate <= 1, "runtime setting", k,
                          r.pageable_rate, "a share in (0, 1]");
     },
     [](const runtime_path& r) { return detail::number_text(r.pageable_rate); }},
    {"pack_GBps", "GB/S", "host memcpy rate packing an aggregated copy",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         const double x = detail::parse_setting_number(k, v, "a rate in GB/s");
         PERFCAST_EXPECTS(x >= 0.01 && x <= 1e4, "runtime setting", k, x,
                          "a host copy rate in [0.01, 1e4] GB/s");
         r.pack_rate = bandwidth{x, units::GBps};
     },
     [](const runtime_path& r) { return detail::number_text(r.pack_rate.in(units::GBps)); }},
    {"launch_us", "US", "one launch of the sunk graph",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.graph_launch, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.graph_launch); }},
    {"op_launch_us", "US|chip", "host time to launch one op, launch=per-op (chip: the chip's)",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         if (v == "chip") {
             r.op_launch.reset();
             return;
         }
         duration t{};
         detail::set_time(t, k, v, "chip");
         r.op_launch = t;
     },
     [](const runtime_path& r) {
         return r.op_launch ? detail::us_text(*r.op_launch) : std::string("chip");
     }},
    {"dynamic_shape_us", "US", "host shape inference and tiling per task (shapes=dynamic)",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.dynamic_shape, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.dynamic_shape); }},
    {"sync_us", "US", "stream synchronisation",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.sync, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.sync); }},
    {"post_us", "US", "host post-processing per task",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.post, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.post); }},
    {"between_us", "US", "host work between tasks of a closed loop (outside the window)",
     [](runtime_path& r, std::string_view k, std::string_view v) {
         detail::set_time(r.between, k, v);
     },
     [](const runtime_path& r) { return detail::us_text(r.between); }},
}};

/// Whether runtime key `key` says how the task's copies are made (copies, memory, copy_setup_us,
/// pageable_setup_us, pageable_rate, pack_GBps): it contradicts a model that declares no
/// transfer to copy.
[[nodiscard]] constexpr bool is_copy_setting(std::string_view key) noexcept {
    return key == "copies" || key == "memory" || key == "copy_setup_us" ||
           key == "pageable_setup_us" || key == "pageable_rate" || key == "pack_GBps";
}

/// "copies, memory, ..." for errors.
[[nodiscard]] inline std::string runtime_key_names() {
    std::string out;
    for (const runtime_key& k : runtime_keys) {
        if (!out.empty()) out += ", ";
        out += k.key;
    }
    return out;
}

/// Every key with its value, "copies=per-tensor memory=pageable ... between_us=0": what a
/// table prints under its figures.
[[nodiscard]] inline std::string runtime_summary(const runtime_path& r) {
    std::string out;
    for (const runtime_key& k : runtime_keys) {
        if (!out.empty()) out += ' ';
        out += k.key;
        out += '=';
        out += k.get(r);
    }
    return out;
}

/// Sets `key` to `value` (text as written in a file or flag); an unknown key or a bad value is
/// an error naming both.
inline void apply_runtime_setting(runtime_path& r, std::string_view key, std::string_view value) {
    for (const runtime_key& k : runtime_keys) {
        if (k.key == key) {
            k.set(r, key, value);
            return;
        }
    }
    detail::precondition_failed("runtime setting", "key", key,
                                "one of " + runtime_key_names());
}

/// Settings as written somewhere (a model file's `runtime` line, a flag): applied in order over
/// a preset. `origin` ("m.model:3:9") prefixes any error.
struct runtime_setting {
    std::string key;
    std::string value;
    std::string origin;
    [[nodiscard]] friend bool operator==(const runtime_setting&, const runtime_setting&) = default;
};

/// Whether `settings` already set `key`: one list (a model's line, a row's options, a flag)
/// names each key at most once, since a second would silently win.
[[nodiscard]] inline bool sets_key(std::span<const runtime_setting> settings,
                                   std::string_view key) noexcept {
    for (const runtime_setting& s : settings)
        if (s.key == key) return true;
    return false;
}

/// What a model says of its runtime path: a preset (empty: the caller's) and settings over it.
struct runtime_spec {
    std::string preset;
    std::vector<runtime_setting> settings;
    [[nodiscard]] friend bool operator==(const runtime_spec&, const runtime_spec&) = default;
};

/// Applies `settings` in order; an error names the setting's origin.
inline void apply_runtime_settings(runtime_path& r, std::span<const runtime_setting> settings) {
    for (const runtime_setting& s : settings) {
        try {
            apply_runtime_setting(r, s.key, s.value);
        } catch (const error& e) {
            if (s.origin.empty()) throw;
            throw error(s.origin + ": " + e.what());
        }
    }
}

/// The runtime path a deployment runs: the preset named `preset` ("none", "acl", "cuda"; empty:
/// "none"), then each layer of settings in order (a model file's, a params file's, the command
/// line's). Settings over "none" start from the neutral runtime_path{} (every step free), since
/// setting a step says the path is modeled. Nothing at all: std::nullopt (kernels only).
[[nodiscard]] inline std::optional<runtime_path>
resolve_runtime(std::string_view preset,
                std::initializer_list<std::span<const runtime_setting>> layers) {
    std::optional<runtime_path> r = runtime_preset(preset.empty() ? "none" : preset);
    for (const auto& layer : layers) {
        if (layer.empty()) continue;
        if (!r) r = runtime_path{};
        apply_runtime_settings(*r, layer);
    }
    if (r) validate(*r);
    return r;
}

// ---------------------------------------------------------------------------------------------
// One task's steps.

/// The task's copies in one direction: how many tensors and their bytes together.
struct copy_set {
    int tensors = 0;
    data_size bytes{};
    [[nodiscard]] friend constexpr bool operator==(const copy_set&, const copy_set&) = default;
};

/// What the other instances on the card impose on this one (card.hpp's mean-field state).
struct runtime_contention {
    double host_stretch = 1.0;   // host steps take this many times longer (>= 1)
    double lock_others = 0.0;    // other instances at the device lock on average (>= 0)
    double link_in_stretch = 1.0;   // copies stream this many times slower (>= 1)
    double link_out_stretch = 1.0;
};

/// One task's step times and what it held.
struct task_times {
    duration prepare{};
    duration buffers{};
    duration copy_in{};
    duration launch{};
    duration device{};  // set by the caller: the kernel timeline (device + AI CPU + bubbles)
    duration sync{};
    duration copy_out{};
    duration post{};
    duration between{};
    duration host_work{};    // host CPU time of the steps (kernels' dispatch not included)
    duration host_busy{};    // time on a host thread: host_work x the host stretch
    duration lock_held{};    // time at the device lock, waiting included
    duration lock_wait{};    // of which waiting for other instances
    duration stream_in{};    // link streaming time, host -> device (stretched)
    duration stream_out{};
    int copies = 0;          // copies made (both directions)
    int buffers_made = 0;    // device buffers allocated (0 with a pool)

    [[nodiscard]] constexpr duration of(task_step s) const noexcept {
        switch (s) {
            case task_step::prepare: return prepare;
            case task_step::buffers: return buffers;
            case task_step::copy_in: return copy_in;
            case task_step::launch: return launch;
            case task_step::device: return device;
            case task_step::sync: return sync;
            case task_step::copy_out: return copy_out;
            case task_step::post: return post;
            case task_step::between: return between;
        }
        return {};
    }
    /// The sum of the steps in `w`.
    [[nodiscard]] constexpr duration in(step_set w) const noexcept {
        duration t{};
        for (const auto& e : task_step_names) {
            if (w.contains(e.value)) t += of(e.value);
        }
        return t;
    }
    /// prepare .. post: what a request waits for.
    [[nodiscard]] constexpr duration task() const noexcept { return in(step_set::task()); }
    /// task + between: one turn of a closed loop.
    [[nodiscard]] constexpr duration cycle() const noexcept { return task() + between; }
    [[nodiscard]] friend constexpr bool operator==(const task_times&, const task_times&) = default;
};

/// The runtime steps of one task (all but `device`, which the caller adds): `in` and `out` are
/// the task's copies, `per_transfer` the link's per-transfer cost and `link_rate` its achievable
/// one-way rate (pinned).
[[nodiscard]] constexpr task_times runtime_steps(const runtime_path& r, const copy_set& in,
                                                 const copy_set& out, duration per_transfer,
                                                 bandwidth link_rate,
                                                 const runtime_contention& k = {}) {
    constexpr std::string_view where = "runtime_steps";
    PERFCAST_EXPECTS(in.tensors >= 0 && out.tensors >= 0, where, "tensors",
                     static_cast<double>(in.tensors < 0 ? in.tensors : out.tensors), ">= 0");
    PERFCAST_EXPECTS(link_rate.in(units::Bps) > 0, where, "link_rate",
                     link_rate.in(units::GBps), "a rate > 0 GB/s");
    PERFCAST_EXPECTS(k.host_stretch >= 1 && k.lock_others >= 0 && k.link_in_stretch >= 1 &&
                         k.link_out_stretch >= 1,
                     where, "contention", k.host_stretch,
                     "stretches >= 1 and a lock population >= 0");
    task_times t;
    const double hs = k.host_stretch;
    const double lock = 1.0 + k.lock_others;

    // Host work alone (each stretched by the host threads' sharing).
    const duration launch = (r.launch == launch_mode::graph ? r.graph_launch : duration{}) +
                            (r.shapes == shape_mode::dynamic_shapes ? r.dynamic_shape : duration{});
    t.prepare = r.prepare * hs;
    t.post = r.post * hs;
    t.between = r.between * hs;
    t.launch = launch * hs;
    t.sync = r.sync * hs;
    t.host_work = r.prepare + r.post + r.between + launch + r.sync;

    // Copies: per tensor, or the inputs packed on the host into one copy. A copy's setup runs
    // on the host (and at the lock when `copies_locked`); its bytes stream over the link.
    const bool pinned = r.memory == host_memory::pinned;
    const duration setup =
        (r.copy_setup ? *r.copy_setup : per_transfer) + (pinned ? duration{} : r.pageable_setup);
    const bandwidth rate = link_rate * (pinned ? 1.0 : r.pageable_rate);
    const int copies_in =
        r.copies == copy_policy::aggregated ? (in.tensors > 0 ? 1 : 0) : in.tensors;
    const int copies_out = out.tensors;
    t.copies = copies_in + copies_out;
    const double setup_factor = hs * (r.copies_locked ? lock : 1.0);
    t.stream_in = in.bytes / rate * k.link_in_stretch;
    t.stream_out = out.bytes / rate * k.link_out_stretch;
    const duration pack = r.copies == copy_policy::aggregated && in.tensors > 1
                              ? in.bytes / r.pack_rate
                              : duration{};
    t.copy_in = setup * static_cast<double>(copies_in) * setup_factor + t.stream_in + pack * hs;
    t.copy_out = setup * static_cast<double>(copies_out) * setup_factor + t.stream_out;
    const duration setups = setup * static_cast<double>(t.copies);
    t.host_work += pack + setups;
    if (r.copies_locked) {
        t.lock_held += setups * hs * lock;
        t.lock_wait += setups * hs * k.lock_others;
    }

    // Device buffers: one per copy's device side, allocated and freed by host calls under the
    // device lock.
    if (r.buffers == buffer_policy::per_task) {
        t.buffers_made = copies_in + out.tensors;
        const duration alone = r.buffer * static_cast<double>(t.buffers_made);
        t.buffers = alone * hs * lock;
        t.lock_held += t.buffers;
        t.lock_wait += alone * hs * k.lock_others;
        t.host_work += alone;
    }
    t.host_busy = t.host_work * hs;
    return t;
}

}  // namespace perfcast
