// perfcast/io/ini.hpp: CANN platform_config .ini reader -> perfcast::chip (runtime; allocates).
//
// CANN reads <toolkit>/data/platform_config/<SoC>.ini to learn the chip it compiles for; the
// same file on a user's machine describes the chip they have. `chip_from_ini(path, base)` turns
// it into a perfcast::chip: cores, clocks, memory sizes, per-core memory rates and alignment
// come from the file, everything the file does not hold (HBM bandwidth, PCIe, overheads,
// per-dtype ops-per-cycle tables, AI CPU clock) from `base`.
//
// The syntax accepted: `[section]` lines, `key=value` lines (blanks around key and value are
// dropped), full-line comments starting with '#' or ';', blank lines, LF or CRLF line ends, a
// UTF-8 byte-order mark. A value is the rest of the line: '#' inside a value is data.
// A section that appears twice is one section (keys merge). A key given twice in one section is
// an error by default (`ini_duplicates::error`): the shipped CANN files never do it, so a
// duplicate is an edit gone wrong and silently picking one would hide it;
// `ini_duplicates::last_wins` accepts it. Errors are perfcast::parse_error with the file, line,
// column and text.
#pragma once

#include <charconv>
#include <cstddef>
#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../chips/ascend.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../profile/csv.hpp"  // perfcast::parse_error, profile::open_input
#include "../units.hpp"
#include "line_source.hpp"
#include "parse.hpp"

namespace perfcast::io {

enum class ini_duplicates : unsigned char { error, last_wins };

struct ini_options {
    ini_duplicates duplicates = ini_duplicates::error;
    /// Longest line accepted, in bytes.
    std::size_t max_line_bytes = std::size_t{1} << 20;
};

/// One key's value and where it was written.
struct ini_value {
    std::string text;
    std::size_t line = 0;
    std::size_t column = 0;  // of the value's first byte
};

struct ini_section {
    std::string name;
    std::vector<std::pair<std::string, ini_value>> entries;  // in file order

    [[nodiscard]] const ini_value* find(std::string_view key) const noexcept {
        for (const auto& [k, v] : entries) {
            if (k == key) return &v;
        }
        return nullptr;
    }
};

/// A parsed .ini file. Keys before the first section belong to a section named "".
class ini_file {
public:
    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] const std::vector<ini_section>& sections() const noexcept { return sections_; }

    [[nodiscard]] const ini_section* section(std::string_view name) const noexcept {
        for (const auto& s : sections_) {
            if (s.name == name) return &s;
        }
        return nullptr;
    }
    [[nodiscard]] const ini_value* find(std::string_view sect,
                                        std::string_view key) const noexcept {
        const ini_section* s = section(sect);
        return s ? s->find(key) : nullptr;
    }

private:
    friend ini_file read_ini(std::istream&, std::string, ini_options);
    std::string source_;
    std::vector<ini_section> sections_;
};

/// Parses an .ini stream. Throws parse_error for a line that is neither a section, a key=value,
/// a comment nor blank; an unclosed '['; an empty key; a duplicate key (unless last_wins); a
/// line longer than the limit.
[[nodiscard]] inline ini_file read_ini(std::istream& in, std::string source = "<stream>",
                                       ini_options opt = {}) {
    constexpr std::string_view where = "read_ini";
    ini_file f;
    f.source_ = std::move(source);
    std::size_t n = 0;
    std::size_t current = 0;
    bool have_section = false;
    // Bounded lines (LF, CRLF or CR; a BOM dropped); a file of at most 16 MiB.
    io::detail::line_source src(in, f.source_, where, opt.max_line_bytes, max_small_file_bytes);
    std::string_view line;
    while (src.next(line)) {
        n = src.number();
        const std::string_view t = trim(line);
        if (t.empty() || t.front() == '#' || t.front() == ';') continue;
        const auto col_of = [&line](std::string_view part) {
            return static_cast<std::size_t>(part.data() - line.data()) + 1;
        };
        if (t.front() == '[') {
            const auto close = t.find(']');
            if (close == std::string_view::npos) {
                throw parse_error(where, f.source_, n, col_of(t), "section without ']'",
                                  std::string(t));
            }
            if (!trim(t.substr(close + 1)).empty()) {
                throw parse_error(where, f.source_, n, col_of(t.substr(close + 1)),
                                  "text after a section's ']'", std::string(t));
            }
            const std::string name(trim(t.substr(1, close - 1)));
            if (name.empty()) {
                throw parse_error(where, f.source_, n, col_of(t), "empty section name",
                                  std::string(t));
            }
            current = f.sections_.size();
            for (std::size_t i = 0; i < f.sections_.size(); ++i) {
                if (f.sections_[i].name == name) current = i;
            }
            if (current == f.sections_.size()) f.sections_.push_back({name, {}});
            have_section = true;
            continue;
        }
        const auto eq = t.find('=');
        if (eq == std::string_view::npos) {
            throw parse_error(where, f.source_, n, col_of(t),
                              "expected key=value, [section], a comment or a blank line",
                              std::string(t));
        }
        const std::string_view key = trim(t.substr(0, eq));
        if (key.empty()) {
            throw parse_error(where, f.source_, n, col_of(t), "empty key", std::string(t));
        }
        const std::string_view raw_value = t.substr(eq + 1);
        const std::string_view value = trim(raw_value);
        if (!have_section) {
            f.sections_.push_back({"", {}});
            current = f.sections_.size() - 1;
            have_section = true;
        }
        ini_section& s = f.sections_[current];
        const std::size_t value_col = value.empty() ? col_of(raw_value) : col_of(value);
        ini_value v{std::string(value), n, value_col};
        bool replaced = false;
        for (auto& [k, old] : s.entries) {
            if (k != key) continue;
            if (opt.duplicates == ini_duplicates::error) {
                throw parse_error(where, f.source_, n, col_of(key),
                                  "[" + s.name + "] " + std::string(key) +
                                      " given twice (first on line " + std::to_string(old.line) +
                                      ")",
                                  std::string(t));
            }
            old = std::move(v);
            replaced = true;
            break;
        }
        if (!replaced) s.entries.emplace_back(std::string(key), std::move(v));
    }
    if (in.bad()) throw parse_error(where, f.source_, n, 0, "read error", "");
    return f;
}

[[nodiscard]] inline ini_file parse_ini(std::string_view text, std::string source = "<string>",
                                        ini_options opt = {}) {
    std::istringstream in{std::string(text)};
    return read_ini(in, std::move(source), opt);
}

[[nodiscard]] inline ini_file read_ini_file(const std::string& path, ini_options opt = {}) {
    std::ifstream f = open_input_file(path, "read_ini_file", max_small_file_bytes);
    return read_ini(f, path, opt);
}

/// How the file lays out the AI cores ([SoCInfo] cube_vector_combine).
enum class ini_core_layout : unsigned char {
    split,     // "split" listed: separate cube cores and vector cores (910B, 910_9391, 910_95)
    combined,  // otherwise: each AI core has a cube and a vector unit (910A, 310P)
};

/// Separate vector cores of a combined chip (310P: [VectorCoreSpec] and
/// [VectorCoreMemoryRates]): not part of perfcast::chip's vector engine, kept for reference.
struct ini_standalone_vector_cores {
    int cores = 0;
    frequency clock{};
    bytes_per_cycle core_read_rate{};
    bytes_per_cycle core_write_rate{};
};

/// Everything chip_from_ini learns: the chip, plus what perfcast::chip has no member for.
struct ini_platform {
    chip spec{};
    ini_core_layout layout = ini_core_layout::combined;
    std::string soc_version;                    // [version] SoC_version
    std::string aic_version;                    // [version] AIC_version
    fractal_shape cube_fractal{16, 16, 16};     // [AICoreSpec] cube_m/k/n_size
    std::optional<fractal_shape> int8_fractal;  // [DtypeMKN] DT_INT8 (M,K,N)
    int vec_calc_size = 0;                      // [AICoreSpec] vec_calc_size
    std::optional<ini_standalone_vector_cores> standalone_vector;
    /// chip fields taken from `base` because the file does not give them.
    std::vector<std::string> from_base;
};

/// The base chip used when none is given, for the values an ini file does not hold: the preset
/// the file's SoC_version names (Ascend910B4 -> ascend910b4, any case), else the preset of its
/// core family: AIC-C-100 (910A) -> ascend910a, AIC-M-200 (310P) -> ascend310p3, any other
/// (AIC-C-220 and newer) -> ascend910b1. Those values are the presets' documented assumptions
/// (HBM bandwidth, PCIe, overheads, AI CPU clock) and per-dtype rate tables
/// (include/perfcast/chips/ascend.hpp). (The family alone once gave a 910B4 the 910B1's HBM.)
[[nodiscard]] inline const chip& default_ini_base(std::string_view aic_version,
                                                  std::string_view soc_version = {}) noexcept {
    for (const chip* c :
         {&chips::ascend910b1, &chips::ascend910b2, &chips::ascend910b3, &chips::ascend910b4,
          &chips::ascend910_9391, &chips::ascend910a, &chips::ascend310p3}) {
        if (iequals(trim(soc_version), c->name.view())) return *c;
    }
    if (aic_version.starts_with("AIC-C-100")) return chips::ascend910a;
    if (aic_version.starts_with("AIC-M-200")) return chips::ascend310p3;
    return chips::ascend910b1;
}

namespace ini_detail {

constexpr std::string_view where = "chip_from_ini";

[[noreturn]] inline void bad_value(const ini_file& f, std::string_view sect, std::string_view key,
                                   const ini_value& v, std::string_view expected) {
    throw parse_error(
        where, f.source(), v.line, v.column,
        "[" + std::string(sect) + "] " + std::string(key) + ": expected " + std::string(expected),
        v.text);
}

/// The dtype the vector unit's bf16 arithmetic runs in by the file's [AICoreintrinsicDtypeMap]
/// (entries `N=Intrinsic_name|dtype,dtype,...`): bf16 when Intrinsic_vadd lists it, fp32 when
/// it does not and Intrinsic_vconv converts bf16 to fp32 (the presets' C-220 files:
/// chips/ascend.hpp); nothing (the base's reading) when the file has no map, no Intrinsic_vadd, or
/// no bf16 in either (no bf16 path at all, or a trimmed file: the base's rate table decides).
[[nodiscard]] inline std::optional<dtype> vector_bf16_arithmetic(const ini_file& f) {
    const ini_section* map = f.section("AICoreintrinsicDtypeMap");
    if (map == nullptr) return std::nullopt;
    const auto listed = [map](std::string_view name) -> std::optional<std::string_view> {
        for (const auto& [key, v] : map->entries) {
            const std::string_view t = v.text;
            const auto bar = t.find('|');
            if (bar != std::string_view::npos && t.substr(0, bar) == name) return t.substr(bar + 1);
        }
        return std::nullopt;
    };
    const auto add = listed("Intrinsic_vadd");
    if (!add) return std::nullopt;
    if (add->find("bf16") != std::string_view::npos ||
        add->find("bfloat16") != std::string_view::npos)
        return dtype::bf16;
    const auto conv = listed("Intrinsic_vconv");
    if (conv && conv->find("bf162f32") != std::string_view::npos) return dtype::fp32;
    return std::nullopt;
}

[[noreturn]] inline void missing(const ini_file& f, std::string_view sect, std::string_view key) {
    throw parse_error(where, f.source(), 0, 0,
                      "missing required key [" + std::string(sect) + "] " + std::string(key),
                      std::string(key));
}

/// A non-empty value, or nothing when the key is absent or its value is empty.
[[nodiscard]] inline const ini_value* present(const ini_file& f, std::string_view sect,
                                              std::string_view key) noexcept {
    const ini_value* v = f.find(sect, key);
    return v != nullptr && !v->text.empty() ? v : nullptr;
}

[[nodiscard]] inline std::optional<int> get_int(const ini_file& f, std::string_view sect,
                                                std::string_view key, bool positive) {
    const ini_value* v = present(f, sect, key);
    if (v == nullptr) return std::nullopt;
    int x = 0;
    const auto [p, ec] = std::from_chars(v->text.data(), v->text.data() + v->text.size(), x);
    if (ec != std::errc{} || p != v->text.data() + v->text.size() || x < (positive ? 1 : 0)) {
        bad_value(f, sect, key, *v, positive ? "an integer >= 1" : "an integer >= 0");
    }
    return x;
}

[[nodiscard]] inline std::optional<double> get_number(const ini_file& f, std::string_view sect,
                                                      std::string_view key, bool positive) {
    const ini_value* v = present(f, sect, key);
    if (v == nullptr) return std::nullopt;
    double x = 0;
    if (parse_double(v->text, x) != number_status::ok || x < 0 || (positive && x == 0)) {
        bad_value(f, sect, key, *v, positive ? "a finite number > 0" : "a finite number >= 0");
    }
    return x;
}

/// A clock in MHz, 1 .. 10000 (chip.hpp's range for any engine clock), named at its line: the
/// chip's own check would say Hz and lose the file's line.
[[nodiscard]] inline std::optional<double> get_mhz(const ini_file& f, std::string_view sect,
                                                   std::string_view key) {
    const auto x = get_number(f, sect, key, true);
    if (x && (*x < 1 || *x > 10000)) {
        bad_value(f, sect, key, *present(f, sect, key), "a clock in MHz, 1 .. 10000");
    }
    return x;
}

[[nodiscard]] inline std::optional<fractal_shape> get_mkn(const ini_file& f, std::string_view sect,
                                                          std::string_view key) {
    const ini_value* v = present(f, sect, key);
    if (v == nullptr) return std::nullopt;
    int parts[3] = {0, 0, 0};
    std::size_t i = 0;
    bool ok = true;
    split(v->text, ',', [&](std::string_view s) {
        s = trim(s);
        int x = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
        if (i >= 3 || ec != std::errc{} || p != s.data() + s.size() || x < 1) ok = false;
        if (i < 3) parts[i] = x;
        ++i;
    });
    if (!ok || i != 3) bad_value(f, sect, key, *v, "M,K,N: three integers >= 1");
    return fractal_shape{parts[0], parts[1], parts[2]};
}

}  // namespace ini_detail

/// The chip described by a parsed CANN platform_config file; values the file lacks come from
/// `base`. Required keys: [SoCInfo] ai_core_cnt and [AICoreSpec] cube_freq; on a split chip also
/// [SoCInfo] vector_core_cnt. Cube cores are cube_core_cnt where present, else ai_core_cnt. On
/// a combined chip (910A: vector_core_cnt=0; 310P) every AI core's vector unit is the vector
/// engine, so vector cores = ai_core_cnt, as the presets in chips/ascend.hpp do. The result is
/// validated (perfcast::validate).
[[nodiscard]] inline ini_platform platform_from_ini(const ini_file& f, const chip& base) {
    using namespace ini_detail;
    // The file gives an Ascend chip's cores, clocks and rates; the base gives what it does not
    // (the AI CPU's clock, the HBM bandwidth ...), so the base is an Ascend chip too: a GPU
    // preset has no AI CPU (aicpu.cores 0), and its values would be taken for an Ascend's.
    if (base.aicpu.cores < 1) {
        ::perfcast::detail::precondition_failed(
            where, "base chip", base.name.view(),
            "an Ascend preset (a CANN platform_config describes an Ascend chip; as its base: "
            "910B1, 910B3, 910B4, 310P3 ..., or none for the default of the file's AIC_version; "
            "file " +
                f.source() + ")");
    }
    ini_platform p;
    chip& c = p.spec;
    c = base;
    const auto take = [&p](std::string field) { p.from_base.push_back(std::move(field)); };

    if (const ini_value* v = present(f, "version", "SoC_version")) {
        p.soc_version = v->text;
        c.name = fixed_name(v->text);
    }
    if (const ini_value* v = present(f, "version", "AIC_version")) p.aic_version = v->text;

    const ini_value* combine = present(f, "SoCInfo", "cube_vector_combine");
    p.layout = combine != nullptr && combine->text.find("split") != std::string::npos
                   ? ini_core_layout::split
                   : ini_core_layout::combined;

    const auto ai_cores = get_int(f, "SoCInfo", "ai_core_cnt", true);
    if (!ai_cores) missing(f, "SoCInfo", "ai_core_cnt");
    const auto freq = get_mhz(f, "AICoreSpec", "cube_freq");
    if (!freq) missing(f, "AICoreSpec", "cube_freq");
    const frequency clock{*freq, units::MHz};

    const auto cube_cores = get_int(f, "SoCInfo", "cube_core_cnt", false);
    c.cube.cores = cube_cores && *cube_cores > 0 ? *cube_cores : *ai_cores;
    c.cube.clock = clock;

    const auto vec_cores = get_int(f, "SoCInfo", "vector_core_cnt", false);
    if (p.layout == ini_core_layout::split) {
        if (!vec_cores) missing(f, "SoCInfo", "vector_core_cnt");
        if (*vec_cores < 1) {
            bad_value(f, "SoCInfo", "vector_core_cnt", *f.find("SoCInfo", "vector_core_cnt"),
                      "an integer >= 1 on a chip with cube_vector_combine=split");
        }
        c.vector.cores = *vec_cores;
        // Split chips that list [VectorCoreSpec] (910_95) give the vector cores' own clock.
        c.vector.clock =
            frequency{get_mhz(f, "VectorCoreSpec", "vec_freq").value_or(*freq), units::MHz};
    } else {
        c.vector.cores = *ai_cores;
        c.vector.clock = clock;
        if (vec_cores && *vec_cores > 0) {
            ini_standalone_vector_cores s;
            s.cores = *vec_cores;
            s.clock =
                frequency{get_mhz(f, "VectorCoreSpec", "vec_freq").value_or(*freq), units::MHz};
            const auto rd = get_number(f, "VectorCoreMemoryRates", "ddr_read_rate", false);
            const auto wr = get_number(f, "VectorCoreMemoryRates", "ub_to_ddr_rate", false);
            s.core_read_rate = bytes_per_cycle{rd.value_or(0.0), units::B_per_cycle};
            s.core_write_rate = bytes_per_cycle{wr.value_or(0.0), units::B_per_cycle};
            p.standalone_vector = s;
        }
    }

    if (auto n = get_int(f, "SoCInfo", "ai_cpu_cnt", false)) {
        c.aicpu.cores = *n;
    } else {
        take("aicpu.cores");
    }

    const auto size_or_base = [&](std::string_view sect, std::string_view key, data_size& out,
                                  std::string field) {
        if (auto v = get_number(f, sect, key, false)) {
            out = data_size{*v, units::B};
        } else {
            take(std::move(field));
        }
    };
    const auto rate_or_base = [&](std::string_view sect, std::string_view key,
                                  std::string_view fallback_key, bytes_per_cycle& out,
                                  std::string field) {
        auto v = get_number(f, sect, key, false);
        if (!v) v = get_number(f, sect, fallback_key, false);
        if (v) {
            out = bytes_per_cycle{*v, units::B_per_cycle};
        } else {
            take(std::move(field));
        }
    };
    // memory_size is empty in Ascend910A.ini: the base's size is used then.
    if (auto v = get_number(f, "SoCInfo", "memory_size", true)) {
        c.memory.hbm_size = data_size{*v, units::B};
    } else {
        take("memory.hbm_size");
    }
    size_or_base("SoCInfo", "l2_size", c.memory.l2_size, "memory.l2_size");
    size_or_base("AICoreSpec", "ub_size", c.memory.ub_size, "memory.ub_size");
    size_or_base("AICoreSpec", "l1_size", c.memory.l1_size, "memory.l1_size");
    size_or_base("AICoreSpec", "l0_a_size", c.memory.l0a_size, "memory.l0a_size");
    size_or_base("AICoreSpec", "l0_b_size", c.memory.l0b_size, "memory.l0b_size");
    size_or_base("AICoreSpec", "l0_c_size", c.memory.l0c_size, "memory.l0c_size");
    // Bytes per cycle per core: our reading of the unit (docs/model.md).
    rate_or_base("AICoreMemoryRates", "ddr_read_rate", "ddr_rate", c.memory.core_read_rate,
                 "memory.core_read_rate");
    rate_or_base("AICoreMemoryRates", "ub_to_ddr_rate", "ddr_write_rate", c.memory.core_write_rate,
                 "memory.core_write_rate");
    rate_or_base("AICoreMemoryRates", "l2_read_rate", "l2_rate", c.memory.l2_read_rate,
                 "memory.l2_read_rate");
    if (auto v = get_number(f, "AICoreSpec", "ubblock_size", true)) {
        c.alignment = data_size{*v, units::B};
    } else {
        take("alignment");
    }

    const auto m = get_int(f, "AICoreSpec", "cube_m_size", true);
    const auto k = get_int(f, "AICoreSpec", "cube_k_size", true);
    const auto n = get_int(f, "AICoreSpec", "cube_n_size", true);
    if (auto d = get_mkn(f, "DtypeMKN", "Default")) p.cube_fractal = *d;
    if (m && k && n) p.cube_fractal = fractal_shape{*m, *k, *n};
    p.int8_fractal = get_mkn(f, "DtypeMKN", "DT_INT8");
    p.vec_calc_size = get_int(f, "AICoreSpec", "vec_calc_size", true).value_or(0);
    // The dtype bf16 vector arithmetic runs in, from the file's intrinsic map (docs/model.md,
    // "bf16 on the vector unit"); the base's without one.
    if (const auto bf16 = vector_bf16_arithmetic(f)) {
        c.vector.bf16_computed_as = *bf16;
    } else {
        take("vector.bf16_computed_as");
    }

    // Never in the ini files.
    for (const char* field : {"cube.ops_per_cycle",
                              "cube.narrow_rows_4",
                              "cube.narrow_rows_2",
                              "cube.attention_share",
                              "cube.attention_unfilled_share",
                              "vector.ops_per_cycle",
                              "vector.fp8_computed_as",
                              "vector.uncounted_work",
                              "vector.walk_rate",
                              "vector.transpose_rate",
                              "vector.walk_head",
                              "vector.softmax_warp_rate",
                              "vector.softmax_block_rate",
                              "vector.attention_softmax_rate",
                              "vector.index_select_rate",
                              "vector.index_select_trip",
                              "aicpu.clock",
                              "aicpu.ops_per_cycle",
                              "memory.hbm_bandwidth",
                              "link",
                              "overhead"}) {
        take(field);
    }
    try {
        (void)validate(c);
    } catch (const ::perfcast::error& e) {
        // Name the file: "cube.clock = 1e+15, expected ..." alone does not say where it came from.
        throw ::perfcast::error(std::string(e.what()) + " (chip read from " + f.source() + ")");
    }
    return p;
}

/// As platform_from_ini, with the default base for the file's SoC_version and AIC_version.
[[nodiscard]] inline ini_platform platform_from_ini(const ini_file& f) {
    const ini_value* v = f.find("version", "AIC_version");
    const ini_value* soc = f.find("version", "SoC_version");
    return platform_from_ini(f, default_ini_base(v ? std::string_view(v->text) : "",
                                                 soc ? std::string_view(soc->text) : ""));
}

[[nodiscard]] inline chip chip_from_ini(const ini_file& f, const chip& base) {
    return platform_from_ini(f, base).spec;
}
[[nodiscard]] inline chip chip_from_ini(const ini_file& f) {
    return platform_from_ini(f).spec;
}

/// Reads the CANN platform_config file at `path` (e.g.
/// /usr/local/Ascend/ascend-toolkit/latest/<arch>-linux/data/platform_config/Ascend910B3.ini).
[[nodiscard]] inline chip chip_from_ini(const std::string& path, const chip& base) {
    return chip_from_ini(read_ini_file(path), base);
}
[[nodiscard]] inline chip chip_from_ini(const std::string& path) {
    return chip_from_ini(read_ini_file(path));
}

}  // namespace perfcast::io
