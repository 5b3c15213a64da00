// perfcast/profile/db_source.hpp: rows of a database table, as a reader asks for them (runtime;
// no database code here).
//
// A `db_row_source` lists a table's columns and calls a visitor with the cells of the columns
// asked for, row by row. The perfcast command implements it over the system's SQLite
// (examples/perfcast/sqlite_source.cpp); `memory_db_source` holds tables in memory (tests,
// fuzzing, and tools that already have the rows). The library's readers (msprof_db.hpp) take a
// source, so that they depend on no database library and are tested without one. The cell
// conversions at the end (`detail::db_integer`, `db_number`, ...) say what a cell that is not what
// its column holds is, for the readers to report.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// One cell as the database typed it. Text and blobs keep their bytes in `text`.
struct db_value {
    enum class kind : unsigned char { null, integer, real, text, blob };
    kind type = kind::null;
    std::int64_t integer = 0;
    double real = 0;
    std::string text;

    [[nodiscard]] static db_value of(std::int64_t v) {
        db_value c;
        c.type = kind::integer;
        c.integer = v;
        return c;
    }
    [[nodiscard]] static db_value of(double v) {
        db_value c;
        c.type = kind::real;
        c.real = v;
        return c;
    }
    [[nodiscard]] static db_value of(std::string_view v) {
        db_value c;
        c.type = kind::text;
        c.text.assign(v);
        return c;
    }
    [[nodiscard]] friend bool operator==(const db_value&, const db_value&) = default;
};

/// Called once per row with the cells of the columns asked for, in that order.
using db_row_visitor = std::function<void(std::span<const db_value>)>;

/// Reads tables of one database. The perfcast command implements it with SQLite; tests with
/// `memory_db_source`.
class db_row_source {
public:
    virtual ~db_row_source() = default;
    /// The database's name in messages (its path).
    [[nodiscard]] virtual std::string name() const = 0;
    /// The columns of `table` as the database names them, or nothing when it has no such table.
    /// Table names match without regard to ASCII case, as in SQL.
    [[nodiscard]] virtual std::optional<std::vector<std::string>> table_columns(
        std::string_view table) = 0;
    /// Calls `row` for each row of `table`, in the table's stored order, with the cells of
    /// `columns` (each one of `table_columns(table)`) in that order. Exceptions thrown by `row`
    /// pass through; the source's own failures are perfcast::error.
    virtual void read_table(std::string_view table, std::span<const std::string_view> columns,
                            const db_row_visitor& row) = 0;
};

/// A database held in memory: tables of named columns and rows of cells.
class memory_db_source final : public db_row_source {
public:
    struct table {
        std::vector<std::string> columns;
        std::vector<std::vector<db_value>> rows;  // a short row reads NULL past its end
    };

    explicit memory_db_source(std::string name = "<memory>") : name_(std::move(name)) {}

    /// Adds (or replaces) a table; returns it for filling (the reference stays valid).
    table& add(std::string name, std::vector<std::string> columns) {
        if (table* t = find(name)) {
            *t = {std::move(columns), {}};
            return *t;
        }
        tables_.emplace_back(std::move(name), table{std::move(columns), {}});
        return tables_.back().second;
    }

    [[nodiscard]] std::string name() const override { return name_; }

    [[nodiscard]] std::optional<std::vector<std::string>> table_columns(
        std::string_view name) override {
        if (const table* t = find(name)) return t->columns;
        return std::nullopt;
    }

    void read_table(std::string_view name, std::span<const std::string_view> columns,
                    const db_row_visitor& row) override {
        const table* t = find(name);
        if (t == nullptr)
            throw ::perfcast::error("memory_db_source: no table " + std::string(name));
        std::vector<std::size_t> at(columns.size());
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const auto it = std::find_if(t->columns.begin(), t->columns.end(), [&](const auto& c) {
                return detail::iequals(c, columns[i]);
            });
            if (it == t->columns.end()) {
                throw ::perfcast::error("memory_db_source: no column " + std::string(columns[i]) +
                                        " in " + std::string(name));
            }
            at[i] = static_cast<std::size_t>(it - t->columns.begin());
        }
        std::vector<db_value> cells(columns.size());
        for (const auto& r : t->rows) {
            for (std::size_t i = 0; i < columns.size(); ++i) {
                cells[i] = at[i] < r.size() ? r[at[i]] : db_value{};
            }
            row(cells);
        }
    }

    /// The table named `name`, or nullptr.
    [[nodiscard]] table* find(std::string_view name) {
        for (auto& [n, t] : tables_) {
            if (detail::iequals(n, name)) return &t;
        }
        return nullptr;
    }

private:
    std::string name_;
    std::deque<std::pair<std::string, table>> tables_;
};

namespace detail {

/// A cell that is not what its column holds: the column's index and the problem.
struct db_damage {
    std::size_t column;
    std::string problem;
};

[[nodiscard]] inline std::string cell_text(const db_value& v) {
    switch (v.type) {
        case db_value::kind::null: return "NULL";
        case db_value::kind::integer: return std::to_string(v.integer);
        case db_value::kind::real: return ::perfcast::detail::number_text(v.real);
        case db_value::kind::text: return v.text;
        case db_value::kind::blob: return "<blob of " + std::to_string(v.text.size()) + " bytes>";
    }
    return "?";
}

/// The cells joined by ',' (a skipped row's excerpt).
[[nodiscard]] inline std::string cells_text(std::span<const db_value> cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i != 0) out += ',';
        out += cell_text(cells[i]);
        if (out.size() > 200) break;  // excerpts are cut to 80 bytes when printed
    }
    return out;
}

[[nodiscard]] inline std::string_view kind_name(db_value::kind k) noexcept {
    switch (k) {
        case db_value::kind::null: return "NULL";
        case db_value::kind::integer: return "an integer";
        case db_value::kind::real: return "a real";
        case db_value::kind::text: return "text";
        case db_value::kind::blob: return "a blob";
    }
    return "?";
}

/// An integer cell (a real with an integral value in range is accepted: NUMERIC columns), or
/// nothing for NULL.
[[nodiscard]] inline std::optional<std::int64_t> db_integer(const db_value& v, std::size_t col) {
    switch (v.type) {
        case db_value::kind::null: return std::nullopt;
        case db_value::kind::integer: return v.integer;
        case db_value::kind::real:
            // 2^63 as a double; every double below it in magnitude converts exactly.
            if (std::isfinite(v.real) && v.real == std::floor(v.real) && v.real > -9.2e18 &&
                v.real < 9.2e18) {
                return static_cast<std::int64_t>(v.real);
            }
            throw db_damage{col, "not an integer"};
        default: throw db_damage{col, std::string(kind_name(v.type)) + ", not an integer"};
    }
}

[[nodiscard]] inline std::int64_t db_required_integer(const db_value& v, std::size_t col) {
    if (auto i = db_integer(v, col)) return *i;
    throw db_damage{col, "NULL where a value is required"};
}

/// A count (block dims, device ids): a non-negative int, or nothing for NULL.
[[nodiscard]] inline std::optional<int> db_count(const db_value& v, std::size_t col) {
    const auto i = db_integer(v, col);
    if (!i) return std::nullopt;
    if (*i < 0) throw db_damage{col, "negative count"};
    if (*i > std::numeric_limits<int>::max()) throw db_damage{col, "count out of range"};
    return static_cast<int>(*i);
}

/// A non-negative finite number, or nothing for NULL.
[[nodiscard]] inline std::optional<double> db_number(const db_value& v, std::size_t col) {
    double x = 0;
    switch (v.type) {
        case db_value::kind::null: return std::nullopt;
        case db_value::kind::integer: x = static_cast<double>(v.integer); break;
        case db_value::kind::real: x = v.real; break;
        default: throw db_damage{col, std::string(kind_name(v.type)) + ", not a number"};
    }
    if (!std::isfinite(x)) throw db_damage{col, "not a finite number"};
    if (x < 0) throw db_damage{col, "negative value"};
    return x;
}

}  // namespace detail

}  // namespace perfcast::profile
