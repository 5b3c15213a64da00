// examples/perfcast/cli.hpp: the `perfcast` command's argument parser and subcommand dispatch.
//
// Flags are `--name value` or `--name=value`; a flag declared without a value name is a switch
// (`--help` is always accepted). `--` ends the flags. Anything else is positional. An unknown or
// malformed flag throws usage_error, which dispatch() turns into the command's usage on stderr and
// exit status 2. perfcast::error from the library becomes a message on stderr and status 1.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <perfcast/error.hpp>
#include <perfcast/version.hpp>

namespace perfcast::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // the command ran and failed (bad input file, ...)
inline constexpr int exit_usage = 2;    // the command line was wrong

/// A wrong command line: unknown flag, missing value, bad choice.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A flag a command accepts. `value_name` empty: a switch that takes no value.
struct option {
    std::string_view name;        // without the leading "--"
    std::string_view value_name;  // e.g. "FORMAT"; empty for a switch
    std::string_view help;
};

/// Edits (insertions, deletions, substitutions, swaps of two neighbours) between `a` and `b`,
/// ASCII case ignored: the optimal string alignment distance.
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    const auto lower = [](char ch) {
        return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    };
    // Three rows of the (|a| + 1) x (|b| + 1) table: two back, one back, this one.
    std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const bool same = lower(a[i - 1]) == lower(b[j - 1]);
            std::size_t d = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (same ? 0 : 1)});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]))
                d = std::min(d, before[j - 2] + 1);
            row[j] = d;
        }
        std::swap(before, last);
        std::swap(last, row);
    }
    return last[b.size()];
}

/// " (did you mean 'X'?)" for the candidate nearest to `typed` when it is within a third of
/// the typed word's length in edits (at least 1, at most 4: further away the guess is noise),
/// or when the typed word is a prefix of exactly one candidate; "" otherwise. Ties go to the
/// first candidate. `prefix` is shown before the name ("--" for options).
[[nodiscard]] inline std::string suggestion(std::string_view typed,
                                            std::span<const std::string_view> candidates,
                                            std::string_view prefix = "") {
    const std::size_t limit = std::clamp<std::size_t>(typed.size() / 3, 1, 4);
    std::string_view best;
    std::size_t best_distance = limit + 1;
    std::size_t prefixed = 0;
    std::string_view prefix_of;
    for (const std::string_view c : candidates) {
        const std::size_t d = edit_distance(typed, c);
        if (d < best_distance) {
            best_distance = d;
            best = c;
        }
        // A prefix, case ignored: the typed word's length in edits from its candidate's start.
        if (!typed.empty() && c.size() >= typed.size() &&
            edit_distance(typed, c.substr(0, typed.size())) == 0) {
            ++prefixed;
            prefix_of = c;
        }
    }
    if (best.empty() && prefixed == 1) best = prefix_of;
    if (best.empty()) return {};
    return " (did you mean '" + std::string(prefix) + std::string(best) + "'?)";
}

/// The result of parsing: flags by name (parse_args takes each valued flag once) and positional
/// arguments.
class parsed_args {
public:
    std::vector<std::string> positional;

    [[nodiscard]] bool has(std::string_view name) const noexcept {
        for (const auto& [n, v] : flags_) {
            if (n == name) return true;
        }
        return false;
    }
    [[nodiscard]] std::optional<std::string> get(std::string_view name) const {
        std::optional<std::string> out;
        for (const auto& [n, v] : flags_) {
            if (n == name) out = v;
        }
        return out;
    }
    [[nodiscard]] std::string value_or(std::string_view name, std::string_view fallback) const {
        if (auto v = get(name)) return *v;
        return std::string(fallback);
    }
    void set(std::string_view name, std::string_view value) {
        flags_.emplace_back(std::string(name), std::string(value));
    }

private:
    std::vector<std::pair<std::string, std::string>> flags_;
};

/// Whether a flag's value is a list of values (LIST, "X[,Y..]"), which a second use should
/// have joined, rather than one value with parts ("M,N,K": one GEMM, not two).
[[nodiscard]] constexpr bool takes_list(std::string_view value_name) noexcept {
    return value_name.find("LIST") != std::string_view::npos ||
           value_name.find("[,") != std::string_view::npos;
}

/// Parses `args` (the words after the subcommand) against `options`.
[[nodiscard]] inline parsed_args parse_args(std::span<const std::string_view> args,
                                            std::span<const option> options) {
    parsed_args out;
    bool flags_done = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (flags_done || a.size() < 3 || !a.starts_with("--")) {
            if (!flags_done && a == "--") {
                flags_done = true;
                continue;
            }
            const bool negative_number =
                a.size() > 1 && ((a[1] >= '0' && a[1] <= '9') || a[1] == '.');
            if (!flags_done && a.size() > 1 && a.front() == '-' && !negative_number) {
                if (a == "-h") {
                    out.set("help", "");
                    continue;
                }
                // "-chip": the option with one dash too few.
                std::vector<std::string_view> names{"help"};
                for (const option& o : options) names.push_back(o.name);
                throw usage_error("unknown option '" + std::string(a) + "'" +
                                  suggestion(a.substr(1), names, "--"));
            }
            out.positional.emplace_back(a);
            continue;
        }
        std::string_view name = a.substr(2);
        std::optional<std::string_view> inline_value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const option* spec = nullptr;
        for (const option& o : options) {
            if (o.name == name) spec = &o;
        }
        if (spec == nullptr && name == "help") {
            if (inline_value) throw usage_error("option '--help' takes no value");
            out.set("help", "");
            continue;
        }
        if (spec == nullptr) {
            std::vector<std::string_view> names{"help"};
            for (const option& o : options) names.push_back(o.name);
            throw usage_error("unknown option '--" + std::string(name) + "'" +
                              suggestion(name, names, "--"));
        }
        if (spec->value_name.empty()) {
            if (inline_value) {
                throw usage_error("option '--" + std::string(name) + "' takes no value");
            }
            out.set(name, "");
            continue;
        }
        std::string_view value;
        if (inline_value) {
            value = *inline_value;
        } else if (i + 1 < args.size()) {
            value = args[++i];
        } else {
            throw usage_error("option '--" + std::string(name) + "' needs a value (" +
                              std::string(spec->value_name) + ")");
        }
        // One value a flag: a second would silently replace the first (`--batch 16 --batch 32`
        // meant as a list, or a flag left in a script and set again after it).
        if (const auto first = out.get(name)) {
            throw usage_error("option '--" + std::string(name) + "' given twice ('" + *first +
                              "' and '" + std::string(value) + "'): give it once" +
                              (takes_list(spec->value_name)
                                   ? " (a list: '" + *first + "," + std::string(value) + "')"
                                   : std::string()));
        }
        out.set(name, value);
    }
    return out;
}

/// The value of flag `name`, which must be one of `choices`; `fallback` when absent.
[[nodiscard]] inline std::string choice(const parsed_args& a, std::string_view name,
                                        std::initializer_list<std::string_view> choices,
                                        std::string_view fallback) {
    std::string v = a.value_or(name, fallback);
    for (std::string_view c : choices) {
        if (v == c) return v;
    }
    std::string list;
    for (std::string_view c : choices) {
        if (!list.empty()) list += ", ";
        list += c;
    }
    throw usage_error("option '--" + std::string(name) + "' must be one of " + list + ", not '" +
                      v + "'");
}

/// "Every row", as row_count returns it.
inline constexpr std::size_t all_rows = std::numeric_limits<std::size_t>::max();

/// A row-count flag (`--top N`, `--worst N`): a whole number >= 0 where 0 means every row, the
/// same in every command; `fallback` when absent. Returns all_rows for 0.
[[nodiscard]] inline std::size_t row_count(const parsed_args& a, std::string_view name,
                                           std::size_t fallback) {
    const auto t = a.get(name);
    if (!t) return fallback;
    std::size_t n = 0;
    const auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), n);
    if (t->empty() || ec != std::errc{} || p != t->data() + t->size()) {
        throw usage_error("option '--" + std::string(name) + "': '" + *t +
                          "' is not a row count >= 0 (0: all rows)");
    }
    return n == 0 ? all_rows : n;
}

/// "Options:" block of a usage text.
[[nodiscard]] inline std::string options_text(std::span<const option> options) {
    std::string out = "Options:\n";
    std::vector<std::string> lefts;
    std::size_t width = 0;
    for (const option& o : options) {
        // Appended piece by piece: GCC 12 -O3 warns falsely (-Wrestrict) on "literal" + string&&.
        std::string left = "  --";
        left += o.name;
        if (!o.value_name.empty()) {
            left += ' ';
            left += o.value_name;
        }
        width = left.size() > width ? left.size() : width;
        lefts.push_back(std::move(left));
    }
    lefts.emplace_back("  --help");
    width = lefts.back().size() > width ? lefts.back().size() : width;
    for (std::size_t i = 0; i < lefts.size(); ++i) {
        out += lefts[i];
        out.append(width - lefts[i].size() + 2, ' ');
        out += i < options.size() ? std::string(options[i].help) : std::string("show this help");
        out += '\n';
    }
    return out;
}

/// A subcommand: `perfcast <name> ...`. `run` gets the words after the name and may throw
/// usage_error (dispatch prints the error and usage()'s synopsis and exits 2) or perfcast::error
/// (exit 1; 2 when it names a flag's value: names_a_flag).
struct command {
    std::string_view name;
    std::string_view summary;
    int (*run)(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
    std::string (*usage)();
};

/// Whether a perfcast::error's text says a flag's value is wrong: the library's checks name the
/// flag as the field when the command passed it so ("perfcast::parse: --transfer = '2PiB',
/// expected ...", "perfcast::whatif: --cube = 25, expected at most 24 ..."), or the command
/// prefixed it ("option '--runtime-set': ..."). A usage error, then (exit 2), as a value the
/// command itself refuses is.
[[nodiscard]] inline bool names_a_flag(std::string_view what) {
    if (what.starts_with("option '--")) return true;
    if (!what.starts_with("perfcast::")) return false;
    const std::size_t colon = what.find(": ");
    return colon != std::string_view::npos && what.substr(colon + 2).starts_with("--") &&
           what.find(" = ", colon) != std::string_view::npos &&
           what.find(' ', colon + 2) == what.find(" = ", colon);
}

/// The first paragraph of a command's usage (its "Usage:" lines) and where the rest is: what a
/// usage error shows under the error, which the whole help would scroll away.
/// Also every later mode's usage line ("Serving mode: perfcast whatif (...)") with the indented
/// lines that continue it.
[[nodiscard]] inline std::string synopsis(std::string_view name, const std::string& usage) {
    const std::size_t end = usage.find("\n\n");
    std::string out = usage.substr(0, end == std::string::npos ? usage.size() : end + 1);
    const std::string call = ": perfcast " + std::string(name) + " ";
    bool continuing = false;
    std::size_t at = end == std::string::npos ? usage.size() : end + 2;
    while (at < usage.size()) {
        std::size_t eol = usage.find('\n', at);
        if (eol == std::string::npos) eol = usage.size();
        const std::string_view line(usage.data() + at, eol - at);
        continuing =
            line.find(call) != std::string_view::npos || (continuing && line.starts_with("  "));
        if (continuing) out.append(line).append("\n");
        at = eol + 1;
    }
    out += "'perfcast " + std::string(name) + " --help' lists every option.\n";
    return out;
}

/// The program's usage: every subcommand with its summary.
[[nodiscard]] inline std::string program_usage(std::span<const command> commands) {
    std::string out = "Usage: perfcast <command> [options]\n\nCommands:\n";
    std::size_t width = 0;
    for (const command& c : commands) width = c.name.size() > width ? c.name.size() : width;
    for (const command& c : commands) {
        out += "  ";
        out += c.name;
        out.append(width - c.name.size() + 2, ' ');
        out += c.summary;
        out += '\n';
    }
    out += "\nRun 'perfcast <command> --help' for a command's options, 'perfcast --version' for the\n"
           "version.\n";
    return out;
}

/// A stream buffer over a C stream that remembers the first failed write and its OS reason
/// (errno is gone by the time main returns), so that `perfcast chips > /dev/full` can fail with
/// "No space left on device" instead of exiting 0.
class checked_file_buf : public std::streambuf {
public:
    explicit checked_file_buf(std::FILE* f) noexcept : f_(f) {}

    /// Flushes; true when every write so far reached the file.
    [[nodiscard]] bool finish() {
        if (std::fflush(f_) != 0) note(errno);
        if (std::ferror(f_) != 0) note(EIO);
        return error_ == 0;
    }
    /// "No space left on device", or empty while nothing failed.
    [[nodiscard]] std::string reason() const {
        return error_ == 0 ? std::string() : std::string(std::strerror(error_));
    }

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (error_ != 0 || n <= 0) return error_ != 0 ? 0 : n;
        errno = 0;
        const auto want = static_cast<std::size_t>(n);
        if (std::fwrite(s, 1, want, f_) != want) {
            note(errno);
            return 0;
        }
        return n;
    }
    int sync() override {
        errno = 0;
        if (std::fflush(f_) != 0) note(errno);
        return error_ == 0 ? 0 : -1;
    }

private:
    void note(int e) noexcept {
        if (error_ == 0) error_ = e != 0 ? e : EIO;
    }
    std::FILE* f_;
    int error_ = 0;
};

/// Runs the subcommand named by args[0]. Returns the process exit status.
[[nodiscard]] inline int dispatch(std::span<const std::string_view> args,
                                  std::span<const command> commands, std::ostream& out,
                                  std::ostream& err) {
    if (args.empty()) {
        err << program_usage(commands);
        return exit_usage;
    }
    const std::string_view name = args.front();
    if (name == "--help" || name == "-h" || name == "help") {
        out << program_usage(commands);
        return exit_ok;
    }
    if (name == "--version") {
        out << "perfcast " << perfcast::version << '\n';
        return exit_ok;
    }
    for (const command& c : commands) {
        if (c.name != name) continue;
        try {
            return c.run(args.subspan(1), out, err);
        } catch (const usage_error& e) {
            err << "perfcast " << c.name << ": " << e.what() << "\n\n"
                << synopsis(c.name, c.usage());
            return exit_usage;
        } catch (const perfcast::error& e) {
            err << "perfcast " << c.name << ": " << e.what() << '\n';
            if (!names_a_flag(e.what())) return exit_failure;
            err << '\n' << synopsis(c.name, c.usage());
            return exit_usage;
        } catch (const std::exception& e) {
            err << "perfcast " << c.name << ": error: " << e.what() << '\n';
            return exit_failure;
        }
    }
    std::vector<std::string_view> names{"help", "--help", "--version"};
    for (const command& c : commands) names.push_back(c.name);
    err << "perfcast: unknown command '" << name << "'" << suggestion(name, names) << "\n\n"
        << program_usage(commands);
    return exit_usage;
}

}  // namespace perfcast::cli
