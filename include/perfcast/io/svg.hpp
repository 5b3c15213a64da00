// perfcast/io/svg.hpp: a tiny SVG scatter / line plot writer (runtime only).
//
//   perfcast::io::svg_plot p("QPS against latency", "latency (ms)", "QPS");
//   p.add({.name = "candidates", .points = pts, .color = "#9aa5b1"});
//   p.add({.name = "Pareto front", .points = front, .color = "#d9480f",
//          .style = perfcast::io::svg_style::line_markers});
//   p.add_vline(1.0, "target 1 ms");
//   p.write(out);
//
// Axes get "nice" ticks (1, 2, 5 x 10^k) over the data and the reference lines. Text is XML-
// escaped; numbers are written without locale. Non-finite points are skipped.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace perfcast::io {

struct svg_point {
    double x = 0;
    double y = 0;
};

enum class svg_style : unsigned char { markers, line, line_markers };

struct svg_series {
    std::string name;
    std::vector<svg_point> points;
    std::string color = "#1c7ed6";
    svg_style style = svg_style::markers;
    double radius = 3;  // marker radius in pixels
};

/// `s` with &, <, >, " and ' escaped for XML text and attributes.
[[nodiscard]] inline std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace svg_detail {

/// Up to `digits` significant digits, no exponent for ordinary magnitudes, no locale.
[[nodiscard]] inline std::string svg_number(double v, int precision = 2) {
    if (!std::isfinite(v)) return "0";
    std::array<char, 64> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v,
                                   std::chars_format::fixed, precision);
    if (ec != std::errc{}) return "0";
    std::string s(buf.data(), end);
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
}

struct axis {
    double lo = 0;
    double hi = 1;
    double step = 0.2;
    int decimals = 1;
};

/// Nice ticks covering [lo, hi]: a step of 1, 2 or 5 x 10^k giving 4..10 ticks.
[[nodiscard]] inline axis nice_axis(double lo, double hi) {
    if (!(hi > lo)) {
        const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    const double raw = (hi - lo) / 6.0;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double f : {1.0, 2.0, 5.0, 10.0}) {
        step = f * mag;
        if (raw <= step) break;
    }
    axis a;
    a.step = step;
    a.lo = std::floor(lo / step) * step;
    a.hi = std::ceil(hi / step) * step;
    const int d = static_cast<int>(-std::floor(std::log10(step)));
    a.decimals = d > 0 ? d : 0;
    return a;
}

}  // namespace svg_detail

class svg_plot {
public:
    svg_plot(std::string title, std::string x_label, std::string y_label, int width = 760,
             int height = 480)
        : title_(std::move(title)),
          x_label_(std::move(x_label)),
          y_label_(std::move(y_label)),
          width_(width < 200 ? 200 : width),
          height_(height < 160 ? 160 : height) {}

    svg_plot& add(svg_series s) {
        series_.push_back(std::move(s));
        return *this;
    }
    /// A dashed vertical reference line at x (a latency target).
    svg_plot& add_vline(double x, std::string label, std::string color = "#c92a2a") {
        vlines_.push_back({x, std::move(label), std::move(color)});
        return *this;
    }
    /// A labelled point drawn on top (the chosen configuration).
    svg_plot& add_label(svg_point p, std::string label, std::string color = "#c92a2a") {
        labels_.push_back({p, std::move(label), std::move(color)});
        return *this;
    }

    void write(std::ostream& os) const {
        using svg_detail::svg_number;
        // Data range.
        double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
        bool any = false;
        auto take = [&](double x, double y, bool use_y) {
            if (!std::isfinite(x) || (use_y && !std::isfinite(y))) return;
            if (!any) {
                x0 = x1 = x;
                y0 = y1 = use_y ? y : 0;
                any = true;
            }
            x0 = x < x0 ? x : x0;
            x1 = x > x1 ? x : x1;
            if (use_y) {
                y0 = y < y0 ? y : y0;
                y1 = y > y1 ? y : y1;
            }
        };
        for (const auto& s : series_) {
            for (const auto& p : s.points) take(p.x, p.y, true);
        }
        for (const auto& v : vlines_) take(v.x, 0, false);
        if (y0 > 0) y0 = 0;  // QPS-like axes read better from zero
        if (x0 > 0) x0 = 0;
        const svg_detail::axis ax = svg_detail::nice_axis(x0, x1);
        const svg_detail::axis ay = svg_detail::nice_axis(y0, y1);

        const double left = 78, right = 24, top = 44, bottom = 56;
        const double pw = width_ - left - right;
        const double ph = height_ - top - bottom;
        auto px = [&](double x) { return left + (x - ax.lo) / (ax.hi - ax.lo) * pw; };
        auto py = [&](double y) { return top + ph - (y - ay.lo) / (ay.hi - ay.lo) * ph; };
        auto n = [](double v) { return svg_number(v, 2); };

        os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width_ << "\" height=\""
           << height_ << "\" viewBox=\"0 0 " << width_ << ' ' << height_
           << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
        os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
        os << "<text x=\"" << n(width_ / 2.0) << "\" y=\"24\" text-anchor=\"middle\" "
           << "font-size=\"15\">" << xml_escape(title_) << "</text>\n";
        // Grid and ticks.
        os << "<g stroke=\"#e9ecef\">\n";
        for (double t = ax.lo; t <= ax.hi + ax.step * 1e-9; t += ax.step) {
            os << "<line x1=\"" << n(px(t)) << "\" y1=\"" << n(top) << "\" x2=\"" << n(px(t))
               << "\" y2=\"" << n(top + ph) << "\"/>\n";
        }
        for (double t = ay.lo; t <= ay.hi + ay.step * 1e-9; t += ay.step) {
            os << "<line x1=\"" << n(left) << "\" y1=\"" << n(py(t)) << "\" x2=\"" << n(left + pw)
               << "\" y2=\"" << n(py(t)) << "\"/>\n";
        }
        os << "</g>\n<g fill=\"#495057\">\n";
        for (double t = ax.lo; t <= ax.hi + ax.step * 1e-9; t += ax.step) {
            os << "<text x=\"" << n(px(t)) << "\" y=\"" << n(top + ph + 16)
               << "\" text-anchor=\"middle\">" << svg_number(t, ax.decimals) << "</text>\n";
        }
        for (double t = ay.lo; t <= ay.hi + ay.step * 1e-9; t += ay.step) {
            os << "<text x=\"" << n(left - 6) << "\" y=\"" << n(py(t) + 4)
               << "\" text-anchor=\"end\">" << svg_number(t, ay.decimals) << "</text>\n";
        }
        os << "</g>\n";
        os << "<rect x=\"" << n(left) << "\" y=\"" << n(top) << "\" width=\"" << n(pw)
           << "\" height=\"" << n(ph) << "\" fill=\"none\" stroke=\"#868e96\"/>\n";
        os << "<text x=\"" << n(left + pw / 2) << "\" y=\"" << n(height_ - 14.0)
           << "\" text-anchor=\"middle\">" << xml_escape(x_label_) << "</text>\n";
        os << "<text transform=\"translate(18 " << n(top + ph / 2) << ") rotate(-90)\" "
           << "text-anchor=\"middle\">" << xml_escape(y_label_) << "</text>\n";
        // Reference lines.
        for (const auto& v : vlines_) {
            if (!std::isfinite(v.x)) continue;
            os << "<line x1=\"" << n(px(v.x)) << "\" y1=\"" << n(top) << "\" x2=\"" << n(px(v.x))
               << "\" y2=\"" << n(top + ph) << "\" stroke=\"" << xml_escape(v.color)
               << "\" stroke-dasharray=\"6 4\"/>\n";
            os << "<text x=\"" << n(px(v.x) + 4) << "\" y=\"" << n(top + 14) << "\" fill=\""
               << xml_escape(v.color) << "\">" << xml_escape(v.label) << "</text>\n";
        }
        // Series.
        for (const auto& s : series_) {
            const std::string color = xml_escape(s.color);
            if (s.style != svg_style::markers) {
                os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" "
                   << "points=\"";
                bool first = true;
                for (const auto& p : s.points) {
                    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
                    if (!first) os << ' ';
                    first = false;
                    os << n(px(p.x)) << ',' << n(py(p.y));
                }
                os << "\"/>\n";
            }
            if (s.style != svg_style::line) {
                os << "<g fill=\"" << color << "\" fill-opacity=\"0.75\">\n";
                for (const auto& p : s.points) {
                    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
                    os << "<circle cx=\"" << n(px(p.x)) << "\" cy=\"" << n(py(p.y)) << "\" r=\""
                       << n(s.radius) << "\"/>\n";
                }
                os << "</g>\n";
            }
        }
        for (const auto& l : labels_) {
            if (!std::isfinite(l.p.x) || !std::isfinite(l.p.y)) continue;
            os << "<circle cx=\"" << n(px(l.p.x)) << "\" cy=\"" << n(py(l.p.y))
               << "\" r=\"6\" fill=\"none\" stroke=\"" << xml_escape(l.color)
               << "\" stroke-width=\"2\"/>\n";
            os << "<text x=\"" << n(px(l.p.x) + 9) << "\" y=\"" << n(py(l.p.y) - 9) << "\" fill=\""
               << xml_escape(l.color) << "\">" << xml_escape(l.text) << "</text>\n";
        }
        // Legend.
        double ly = top + 10;
        for (const auto& s : series_) {
            if (s.name.empty()) continue;
            const double lx = left + pw - 170;
            os << "<rect x=\"" << n(lx) << "\" y=\"" << n(ly - 8) << "\" width=\"10\" height=\"10\" "
               << "fill=\"" << xml_escape(s.color) << "\"/>\n";
            os << "<text x=\"" << n(lx + 16) << "\" y=\"" << n(ly + 1) << "\">"
               << xml_escape(s.name) << "</text>\n";
            ly += 16;
        }
        os << "</svg>\n";
    }

    [[nodiscard]] std::string str() const {
        std::ostringstream os;
        write(os);
        return os.str();
    }

private:
    struct vline {
        double x;
        std::string label;
        std::string color;
    };
    struct note {
        svg_point p;
        std::string text;
        std::string color;
    };

    std::string title_;
    std::string x_label_;
    std::string y_label_;
    int width_;
    int height_;
    std::vector<svg_series> series_;
    std::vector<vline> vlines_;
    std::vector<note> labels_;
};

/// A horizontal bar chart: one bar per (label, value), in the order given, values >= 0 and
/// finite (others are drawn as empty bars), each bar labelled with its value and `unit`.
inline void write_svg_bars(std::ostream& os, std::string_view title,
                           const std::vector<std::pair<std::string, double>>& bars,
                           std::string_view unit) {
    constexpr double left = 220, right = 120, top = 40, row = 22, width = 760;
    const double height = top + row * static_cast<double>(bars.size()) + 20;
    double most = 0;
    for (const auto& b : bars)
        if (std::isfinite(b.second) && b.second > most) most = b.second;
    const double span = width - left - right;
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << svg_detail::svg_number(width)
       << "\" height=\"" << svg_detail::svg_number(height) << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
       << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
       << "<text x=\"" << svg_detail::svg_number(width / 2) << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">"
       << xml_escape(title) << "</text>\n";
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const double v = bars[i].second;
        const double w = std::isfinite(v) && v > 0 && most > 0 ? span * v / most : 0.0;
        const double y = top + row * static_cast<double>(i);
        os << "<text x=\"" << svg_detail::svg_number(left - 6) << "\" y=\"" << svg_detail::svg_number(y + 15)
           << "\" text-anchor=\"end\">" << xml_escape(bars[i].first) << "</text>\n"
           << "<rect x=\"" << svg_detail::svg_number(left) << "\" y=\"" << svg_detail::svg_number(y + 3) << "\" width=\""
           << svg_detail::svg_number(w) << "\" height=\"" << svg_detail::svg_number(row - 6) << "\" fill=\"#1c7ed6\"/>\n"
           << "<text x=\"" << svg_detail::svg_number(left + w + 6) << "\" y=\"" << svg_detail::svg_number(y + 15) << "\">"
           << (std::isfinite(v) ? svg_detail::svg_number(v) : std::string("-")) << ' ' << xml_escape(unit)
           << "</text>\n";
    }
    os << "</svg>\n";
}

}  // namespace perfcast::io
