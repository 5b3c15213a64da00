// perfcast/profile/timeline.hpp: what the profilers' timelines say that the op table does not
// (runtime; reads JSON text).
//
// Reads the Chrome-trace JSON the profilers write: msprof's `msprof_*.json`, torch_npu's
// `trace_view.json` (both a list of events, or an object with "traceEvents"), and torch
// profiler / Kineto traces of GPU runs. It keeps three things:
//  - device task spans: complete events ("ph": "X") of the "Ascend Hardware" process (their
//    args' "Task Type"), or of the Kineto categories "Kernel" and "Memcpy";
//  - host API spans: complete events of the "CANN" process (AscendCL / runtime / node calls),
//    or of the Kineto category "Runtime", each classed by its name as a launch, a
//    synchronisation, a copy or other (`classify_host_api`): the host-bound report's
//    resources (docs/runtime.md);
//  - the AI Core clock: counter events ("ph": "C") named "AI Core Freq" with args {"MHz": f}.
// Timestamps are read exactly as integer nanoseconds (the profilers write microseconds with
// three decimals, as strings or numbers: 1778463028384811.770). Process names come from the
// metadata events ("ph": "M", "process_name") wherever they are in the file.
//
// An event this reader cannot use (no or a bad "ts" on a span, a counter without a number) is
// skipped and listed with its index and reason, like a damaged CSV row. A JSON syntax error is
// a parse_error with line and column: nothing after it can be trusted.
//
// Memory: the whole text (read_timeline_file maps the file: file_text.hpp) and the kept spans,
// about 100 bytes each. The text is read twice, the process names first (process_names), so
// that events are classified as they are read rather than all held until the end.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../enum_table.hpp"
#include "../io/json_reader.hpp"
#include "../units.hpp"
#include "file_text.hpp"
#include "kernel_columns.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// What a host API call does, for the host-bound report.
enum class host_api_kind : unsigned char { launch, synchronize, copy, op_api, other };
inline constexpr std::size_t host_api_kind_count = 5;
inline constexpr std::array<enum_entry<host_api_kind>, host_api_kind_count> host_api_kind_names{{
    {host_api_kind::launch, "launch"},
    {host_api_kind::synchronize, "synchronize"},
    {host_api_kind::copy, "copy"},
    {host_api_kind::op_api, "op_api"},
    {host_api_kind::other, "other"},
}};
static_assert(covers_enum<host_api_kind_names>());
[[nodiscard]] constexpr std::string_view name_of(host_api_kind k) noexcept {
    return name_in(host_api_kind_names, k);
}

namespace detail {
[[nodiscard]] constexpr bool icontains(std::string_view s, std::string_view part) noexcept {
    if (part.size() > s.size()) return false;
    for (std::size_t i = 0; i + part.size() <= s.size(); ++i) {
        if (iequals(s.substr(i, part.size()), part)) return true;
    }
    return false;
}
}  // namespace detail

/// The class of a host API call by its name (and msprof's "Mode" argument): "Memcpy" anywhere
/// is a copy (aclrtMemcpyAsync, cudaMemcpyAsync), "Synchronize" a synchronisation
/// (aclrtSynchronizeStream, cudaStreamSynchronize, cudaDeviceSynchronize), "launch" a launch
/// (CANN's Node@launch with Mode "launch", aclrtLaunchKernel, cudaLaunchKernel), the op API
/// layer around it an op_api call (Mode ACL_NN or ACL_OP: aclnnAddmm, aclopCompileAndExecute,
/// descriptor set-up); the rest other. Spans nest (a Node@launch inside its aclnn call), so
/// the classes' times overlap and are not to be added up. The rule is ours, from the names in
/// the real timelines of tests/data/profiles/real.
[[nodiscard]] constexpr host_api_kind classify_host_api(std::string_view name,
                                                        std::string_view mode = {}) noexcept {
    if (detail::icontains(name, "memcpy")) return host_api_kind::copy;
    if (detail::icontains(name, "synchronize")) return host_api_kind::synchronize;
    if (detail::icontains(name, "launch") || detail::iequals(mode, "launch"))
        return host_api_kind::launch;
    if (detail::iequals(mode, "ACL_NN") || detail::iequals(mode, "ACL_OP") ||
        detail::icontains(name, "aclnn") || detail::icontains(name, "aclop"))
        return host_api_kind::op_api;
    return host_api_kind::other;
}

struct device_task_span {
    std::string name;
    std::string task_type;  // args "Task Type" (msprof), or the Kineto category
    timestamp start;
    duration dur{};
};

struct host_api_span {
    std::string name;
    host_api_kind kind = host_api_kind::other;
    timestamp start;
    duration dur{};
    std::uint64_t thread = 0;
};

struct clock_sample {
    timestamp at;
    frequency clock{};
};

/// An event left out, with its place in the event list (0-based) and why.
struct skipped_event {
    std::size_t index = 0;
    std::string reason;
};

struct timeline {
    std::string source;
    std::size_t events = 0;                        // every event of the list
    std::map<std::string, std::size_t> processes;  // events per process name ("" unnamed)
    std::vector<device_task_span> device_tasks;
    std::vector<host_api_span> host_api;
    std::vector<clock_sample> aicore_clock;  // in time order
    std::vector<skipped_event> skipped;      // the first 1000
    std::size_t skipped_count = 0;
};

/// Host API time by class.
struct host_api_total {
    std::size_t calls = 0;
    duration time{};
};
[[nodiscard]] inline std::array<host_api_total, host_api_kind_count> host_api_totals(
    const timeline& t) {
    std::array<host_api_total, host_api_kind_count> out{};
    for (const host_api_span& s : t.host_api) {
        auto& x = out[static_cast<std::size_t>(s.kind)];
        ++x.calls;
        x.time += s.dur;
    }
    return out;
}

/// The AI Core clock over [from, to]: each sample holds until the next; the time-weighted
/// mean, and the lowest and highest value seen. Nothing without samples.
struct clock_summary {
    frequency mean{};
    frequency low{};
    frequency high{};
    std::size_t samples = 0;
    [[nodiscard]] bool constant() const noexcept { return low == high; }
};
[[nodiscard]] inline std::optional<clock_summary> clock_over(const timeline& t, timestamp from,
                                                             timestamp to) {
    if (t.aicore_clock.empty()) return std::nullopt;
    clock_summary s;
    s.samples = t.aicore_clock.size();
    s.low = s.high = t.aicore_clock.front().clock;
    double weighted = 0;  // MHz x ns
    double total = 0;
    for (std::size_t i = 0; i < t.aicore_clock.size(); ++i) {
        const clock_sample& c = t.aicore_clock[i];
        s.low = std::min(s.low, c.clock);
        s.high = std::max(s.high, c.clock);
        // The sample holds from its time (or `from`) until the next sample (or `to`).
        const timestamp b = std::max(c.at, from);
        const timestamp e =
            i + 1 < t.aicore_clock.size() ? std::min(t.aicore_clock[i + 1].at, to) : to;
        const double span = e > b ? (e - b).in(units::ns) : 0.0;
        weighted += c.clock.in(units::MHz)*span;
        total += span;
    }
    // A window the samples do not cover: the last sample before it holds.
    if (total <= 0) {
        s.mean = t.aicore_clock.back().clock;
        for (const clock_sample& c : t.aicore_clock)
            if (c.at <= from) s.mean = c.clock;
    } else {
        s.mean = frequency{weighted / total, units::MHz};
    }
    return s;
}

/// What the report prints of a timeline: counts, host API time by class, and the AI Core clock
/// over the device tasks' window (first start to last end).
struct timeline_summary {
    std::string source;
    std::size_t events = 0;
    std::size_t device_tasks = 0;
    std::array<host_api_total, host_api_kind_count> host_api{};
    std::optional<clock_summary> clock;
    std::size_t skipped_count = 0;
};
[[nodiscard]] inline timeline_summary summarize(const timeline& t) {
    timeline_summary s;
    s.source = t.source;
    s.events = t.events;
    s.device_tasks = t.device_tasks.size();
    s.host_api = host_api_totals(t);
    s.skipped_count = t.skipped_count;
    if (!t.device_tasks.empty()) {
        timestamp from = t.device_tasks.front().start;
        timestamp to = from;
        for (const device_task_span& d : t.device_tasks) {
            from = std::min(from, d.start);
            to = std::max(to, d.start + d.dur);
        }
        s.clock = clock_over(t, from, to);
    } else if (!t.aicore_clock.empty()) {
        s.clock = clock_over(t, t.aicore_clock.front().at, t.aicore_clock.back().at);
    }
    return s;
}

namespace detail {

// One event's fields, as read.
struct raw_event {
    std::size_t index = 0;  // in the file's event list
    std::string name;
    std::string cat;
    char ph = 0;
    std::optional<std::uint64_t> pid;
    std::uint64_t tid = 0;
    std::string ts;  // the number's text (a string or a number in the file)
    std::optional<double> dur_us;
    std::string task_type;      // args "Task Type"
    std::string mode;           // args "Mode"
    std::string process_name;   // args "name" of a process_name metadata event
    std::optional<double> mhz;  // args "MHz"
};

// A number or a numeric string as text; nothing for other kinds (skipped).
[[nodiscard]] inline std::optional<std::string> number_text(io::json_cursor& c,
                                                            std::string& scratch) {
    switch (c.peek()) {
        case io::json_cursor::kind::number: return std::string(c.number());
        case io::json_cursor::kind::string: return std::string(trim(c.string(scratch)));
        default: c.skip_value(); return std::nullopt;
    }
}

[[nodiscard]] inline std::optional<std::uint64_t> id_of(io::json_cursor& c, std::string& scratch) {
    const auto t = number_text(c, scratch);
    if (!t) return std::nullopt;
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc{} || p != t->data() + t->size()) return std::nullopt;
    return v;
}

[[nodiscard]] inline std::optional<double> double_of(io::json_cursor& c, std::string& scratch) {
    const auto t = number_text(c, scratch);
    if (!t) return std::nullopt;
    double v = 0;
    if (parse_double(*t, v) != number_status::ok) return std::nullopt;
    return v;
}

[[nodiscard]] inline std::string string_or_skip(io::json_cursor& c, std::string& scratch) {
    if (c.peek() != io::json_cursor::kind::string) {
        c.skip_value();
        return {};
    }
    return std::string(c.string(scratch));
}

inline void read_event(io::json_cursor& c, raw_event& e, std::string& key, std::string& scratch) {
    e = raw_event{};
    c.begin_object();
    while (c.next_member(key)) {
        if (key == "name") {
            e.name = string_or_skip(c, scratch);
        } else if (key == "cat") {
            e.cat = string_or_skip(c, scratch);
        } else if (key == "ph") {
            const std::string ph = string_or_skip(c, scratch);
            e.ph = ph.size() == 1 ? ph[0] : '?';
        } else if (key == "pid") {
            e.pid = id_of(c, scratch);
        } else if (key == "tid") {
            e.tid = id_of(c, scratch).value_or(0);
        } else if (key == "ts") {
            e.ts = number_text(c, scratch).value_or(std::string());
        } else if (key == "dur") {
            e.dur_us = double_of(c, scratch);
        } else if (key == "args" && c.peek() == io::json_cursor::kind::object) {
            std::string akey;
            c.begin_object();
            while (c.next_member(akey)) {
                if (akey == "Task Type") {
                    e.task_type = string_or_skip(c, scratch);
                } else if (akey == "Mode") {
                    e.mode = string_or_skip(c, scratch);
                } else if (akey == "name") {
                    e.process_name = string_or_skip(c, scratch);
                } else if (akey == "MHz") {
                    e.mhz = double_of(c, scratch);
                } else {
                    c.skip_value();
                }
            }
        } else {
            c.skip_value();
        }
    }
}

/// Places `c` at the start of the event list: the document itself, or its "traceEvents".
inline void open_events(io::json_cursor& c, std::string& key) {
    const auto kind = c.peek();
    if (kind == io::json_cursor::kind::object) {
        c.begin_object();
        bool found = false;
        while (c.next_member(key)) {
            if (key == "traceEvents" && !found && c.peek() == io::json_cursor::kind::array) {
                found = true;
                break;
            }
            c.skip_value();
        }
        if (!found) c.fail("no \"traceEvents\" list in the object");
    } else if (kind != io::json_cursor::kind::array) {
        c.fail("expected a list of trace events, or an object with \"traceEvents\"");
    }
    c.begin_array();
}

/// Every process's name from the metadata events ("ph": "M", "process_name"), wherever they
/// are in the list (the last one of a process wins). A first pass over the text: the events
/// are then classified as they are read, without holding them all (a 100 MB trace holds about
/// 400,000; docs/profiles.md, "Speed").
[[nodiscard]] inline std::map<std::uint64_t, std::string> process_names(std::string_view text,
                                                                        const std::string& source) {
    io::json_cursor c(text, source);
    std::string key;
    std::string scratch;
    open_events(c, key);
    std::map<std::uint64_t, std::string> process;
    raw_event e;
    while (c.next_element()) {
        if (c.peek() != io::json_cursor::kind::object) {
            c.skip_value();
            continue;
        }
        read_event(c, e, key, scratch);
        if (e.ph == 'M' && e.name == "process_name" && e.pid) process[*e.pid] = e.process_name;
    }
    return process;
}

}  // namespace detail

/// The timeline in `text` (Chrome trace JSON). Throws parse_error on a JSON syntax error.
[[nodiscard]] inline timeline parse_timeline(std::string_view text, std::string source) {
    constexpr std::size_t max_listed = 1000;
    timeline t;
    t.source = source;
    // Two passes: the process names first (metadata events may come after the spans they name).
    const std::map<std::uint64_t, std::string> process = detail::process_names(text, source);
    io::json_cursor c(text, std::move(source));
    std::string key;
    std::string scratch;
    detail::open_events(c, key);
    const auto skip = [&t](std::size_t i, std::string why) {
        ++t.skipped_count;
        if (t.skipped.size() < max_listed) t.skipped.push_back({i, std::move(why)});
    };
    detail::raw_event x;
    while (c.next_element()) {
        const std::size_t index = t.events++;
        if (c.peek() != io::json_cursor::kind::object) {
            c.skip_value();
            skip(index, "not an object");
            continue;
        }
        detail::read_event(c, x, key, scratch);
        if (x.ph != 'X' && x.ph != 'C') continue;
        x.index = index;
        const auto named = x.pid ? process.find(*x.pid) : process.end();
        const std::string& pname = named != process.end() ? named->second : x.cat;
        ++t.processes[pname];
        std::int64_t ns = 0;
        const bool has_ts = !x.ts.empty() && detail::parse_timestamp_us(x.ts, ns);
        if (x.ph == 'C') {
            if (x.name != "AI Core Freq") continue;
            // 1 MHz .. 10 GHz, the range chip.hpp accepts for any clock.
            if (!has_ts || !x.mhz || *x.mhz < 1 || *x.mhz > 10000) {
                skip(x.index, "AI Core Freq counter without a time or a clock in [1, 10000] MHz");
                continue;
            }
            t.aicore_clock.push_back({timestamp{ns}, frequency{*x.mhz, units::MHz}});
            continue;
        }
        const bool device = pname == "Ascend Hardware" || x.cat == "Kernel" || x.cat == "kernel" ||
                            x.cat == "Memcpy" || x.cat == "gpu_memcpy";
        const bool host = pname == "CANN" || x.cat == "Runtime" || x.cat == "cuda_runtime";
        if (!device && !host) continue;
        if (!has_ts || !x.dur_us || *x.dur_us < 0) {
            skip(x.index, "span '" + parse_error::printable(x.name) +
                              "' without a valid ts (microseconds) and dur");
            continue;
        }
        // As the op tables: sums would overflow to inf.
        if (const std::string_view p = value_problem(kernel_column::duration, *x.dur_us);
            !p.empty()) {
            skip(x.index,
                 "span '" + parse_error::printable(x.name) + "' whose dur is " + std::string{p});
            continue;
        }
        const duration d{*x.dur_us, units::us};
        if (device) {
            t.device_tasks.push_back(
                {x.name, x.task_type.empty() ? x.cat : x.task_type, timestamp{ns}, d});
        } else {
            t.host_api.push_back(
                {x.name, classify_host_api(x.name, x.mode), timestamp{ns}, d, x.tid});
        }
    }
    // The rest of an enclosing object (other members after traceEvents) is not needed; the
    // text must still be well-formed up to the list's end, which it was.
    std::stable_sort(t.aicore_clock.begin(), t.aicore_clock.end(),
                     [](const clock_sample& a, const clock_sample& b) { return a.at < b.at; });
    return t;
}

/// The timeline in the file at `path`, mapped rather than copied where possible (file_text.hpp:
/// a file must not be truncated while it is read; parse_timeline(text, source) reads a copy).
[[nodiscard]] inline timeline read_timeline_file(const std::string& path) {
    const file_text text = file_text::read(path, "read_timeline_file");
    return parse_timeline(text.view(), path);
}

}  // namespace perfcast::profile
