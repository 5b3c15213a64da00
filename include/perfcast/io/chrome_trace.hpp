// perfcast/io/chrome_trace.hpp: a simulated interval as a Chrome trace / Perfetto timeline.
//
//   perfcast::sim_options o;
//   o.timeline = perfcast::timeline_options{.from = 1_s, .to = 1.2_s};
//   const auto r = perfcast::simulate(server, dist, 300_qps, 20000, o);
//   std::ofstream f("serving.json");
//   perfcast::io::write_chrome_trace(f, r.timeline);
//
// Open the file in https://ui.perfetto.dev or chrome://tracing. What it shows (JSON Object
// Format of the Trace Event Format):
//  - one thread track per stream ("stream 0 (12 cube / 24 vector cores)") with a slice per
//    batch: "bs 14 -> gear 16", its padding, the requests merged, the batches running at once;
//  - a counter track "queue" with the requests waiting, stepping at every change;
//  - one async track per request ("request 17 (bs 20)", arrival to completion) with a nested
//    "wait" slice from arrival to the start of its last chunk, so waits are visible one by one.
// Times are microseconds (the format's unit) with three decimals, relative to the simulation's
// time 0.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>

#include "../serving/result.hpp"
#include "../units.hpp"

namespace perfcast::io {

struct chrome_trace_options {
    std::string process_name = "perfcast card";
    bool requests = true;  // async request / wait slices
    bool queue = true;     // the queue counter
};

namespace detail {

/// `s` as a JSON string literal (quotes, backslashes and control bytes escaped; other bytes
/// passed through).
inline void json_string(std::ostream& os, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    os << '"';
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': os << "\\\""; break;
            case '\\': os << "\\\\"; break;
            case '\n': os << "\\n"; break;
            case '\r': os << "\\r"; break;
            case '\t': os << "\\t"; break;
            default:
                if (c < 0x20) {
                    os << "\\u00" << hex[c >> 4] << hex[c & 0xF];
                } else {
                    os << ch;
                }
        }
    }
    os << '"';
}

/// A time in microseconds with three decimals; JSON has no NaN or infinity, so those print 0.
inline void json_us(std::ostream& os, duration t) {
    double v = t.in(units::us);
    if (!(v == v) || v > 1e300 || v < -1e300) v = 0;
    std::array<char, 64> buf{};
    const auto [end, ec] =
        std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, 3);
    if (ec != std::errc{}) {
        os << '0';
        return;
    }
    os << std::string_view(buf.data(), static_cast<std::size_t>(end - buf.data()));
}

class event_writer {
public:
    explicit event_writer(std::ostream& os) : os_(os) {}
    /// Starts an event: `{` after a comma when needed.
    std::ostream& begin() {
        os_ << (first_ ? "\n" : ",\n") << '{';
        first_ = false;
        return os_;
    }

private:
    std::ostream& os_;
    bool first_ = true;
};

}  // namespace detail

/// Writes `tl` as a Chrome-trace JSON object.
inline void write_chrome_trace(std::ostream& os, const serving_timeline& tl,
                               const chrome_trace_options& opt = {}) {
    using detail::json_string;
    using detail::json_us;
    os << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"perfcast serving "
          "simulation\",\"from_us\":";
    json_us(os, tl.from);
    os << ",\"to_us\":";
    json_us(os, tl.to);
    os << ",\"truncated\":" << (tl.truncated ? "true" : "false") << "},\"traceEvents\":[";
    detail::event_writer ev(os);

    ev.begin() << "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":";
    json_string(os, opt.process_name);
    os << "}}";
    for (std::size_t i = 0; i < tl.streams.size(); ++i) {
        const std::string name = "stream " + std::to_string(i) + " (" +
                                 std::to_string(tl.streams[i].cube) + " cube / " +
                                 std::to_string(tl.streams[i].vector) + " vector cores)";
        ev.begin() << "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << i + 1
                   << ",\"args\":{\"name\":";
        json_string(os, name);
        os << "}}";
        ev.begin() << "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":" << i + 1
                   << ",\"args\":{\"sort_index\":" << i + 1 << "}}";
    }

    for (const timeline_batch& b : tl.batches) {
        const std::string name =
            "bs " + std::to_string(b.samples) + " -> gear " + std::to_string(b.gear);
        ev.begin() << "\"name\":";
        json_string(os, name);
        os << ",\"cat\":\"batch\",\"ph\":\"X\",\"pid\":1,\"tid\":" << b.stream + 1 << ",\"ts\":";
        json_us(os, b.start);
        os << ",\"dur\":";
        json_us(os, b.end - b.start);
        os << ",\"args\":{\"samples\":" << b.samples << ",\"gear\":" << b.gear
           << ",\"padding\":" << b.gear - b.samples << ",\"items\":" << b.requests
           << ",\"concurrent_batches\":" << b.concurrent
           << ",\"first_request\":" << b.first_request << "}}";
    }

    if (opt.queue) {
        for (const timeline_queue_point& q : tl.queue) {
            ev.begin() << "\"name\":\"queue\",\"ph\":\"C\",\"pid\":1,\"tid\":0,\"ts\":";
            json_us(os, q.time);
            os << ",\"args\":{\"waiting requests\":" << q.waiting << "}}";
        }
    }

    if (opt.requests) {
        for (const timeline_request& r : tl.requests) {
            const std::string name =
                "request " + std::to_string(r.id) + " (bs " + std::to_string(r.bs) + ")";
            ev.begin() << "\"name\":";
            json_string(os, name);
            os << ",\"cat\":\"request\",\"ph\":\"b\",\"id\":" << r.id
               << ",\"pid\":1,\"tid\":0,\"ts\":";
            json_us(os, r.arrival);
            os << ",\"args\":{\"bs\":" << r.bs << ",\"chunks\":" << r.chunks << ",\"wait_us\":";
            json_us(os, r.start - r.arrival);
            os << ",\"latency_us\":";
            json_us(os, r.end - r.arrival);
            os << "}}";
            if (r.start > r.arrival) {
                ev.begin() << "\"name\":\"wait\",\"cat\":\"request\",\"ph\":\"b\",\"id\":" << r.id
                           << ",\"pid\":1,\"tid\":0,\"ts\":";
                json_us(os, r.arrival);
                os << "}";
                ev.begin() << "\"name\":\"wait\",\"cat\":\"request\",\"ph\":\"e\",\"id\":" << r.id
                           << ",\"pid\":1,\"tid\":0,\"ts\":";
                json_us(os, r.start);
                os << "}";
            }
            ev.begin() << "\"name\":";
            json_string(os, name);
            os << ",\"cat\":\"request\",\"ph\":\"e\",\"id\":" << r.id
               << ",\"pid\":1,\"tid\":0,\"ts\":";
            json_us(os, r.end);
            os << "}";
        }
    }
    os << "\n]}\n";
}

}  // namespace perfcast::io
