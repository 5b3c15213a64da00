// examples/perfcast/sqlite_source.cpp: profile::db_row_source over the system's SQLite
// (compiled only when the build finds it; see sqlite_source.hpp). Everything here is SQLite's
// public C API: open read-only, list a table's columns, select named columns.
#include "sqlite_source.hpp"

#include <sqlite3.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast::cli {

namespace {

struct close_db {
    void operator()(sqlite3* db) const noexcept { sqlite3_close(db); }
};
struct finalize {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using db_handle = std::unique_ptr<sqlite3, close_db>;
using statement = std::unique_ptr<sqlite3_stmt, finalize>;

/// A path as an SQLite URI path: '%', '?', '#' and bytes outside printable ASCII percent-encoded
/// (https://www.sqlite.org/uri.html).
std::string uri_path(const std::string& path) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char ch : path) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7F) {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xF];
        } else {
            out += ch;
        }
    }
    return out;
}

/// "name" with embedded quotes doubled: an SQL identifier.
std::string quoted(std::string_view name) {
    std::string out = "\"";
    for (const char c : name) {
        out += c;
        if (c == '"') out += '"';
    }
    return out + "\"";
}

class sqlite_row_source final : public profile::db_row_source {
public:
    explicit sqlite_row_source(std::string path) : path_(std::move(path)) {
        // Absolute, so that the URI has no authority part ("file://...") whatever the path.
        std::error_code ec;
        const std::filesystem::path abs = std::filesystem::absolute(path_, ec);
        if (ec) fail("cannot resolve the path: " + ec.message());
        if (!std::filesystem::is_regular_file(abs, ec)) fail("no such file");
        // mode=ro: never written; immutable=1: no locking and no -wal / -shm files beside it
        // (both real exports under tests/data/profiles/real are in WAL mode).
        const std::string uri =
            "file:" + uri_path(abs.lexically_normal().generic_string()) + "?mode=ro&immutable=1";
        sqlite3* raw = nullptr;
        const int rc =
            sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
        db_.reset(raw);
        if (rc != SQLITE_OK) fail(raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
        // SQLite reads the header lazily: a file that is not a database fails here, by name.
        (void)prepare("SELECT count(*) FROM sqlite_master");
    }

    [[nodiscard]] std::string name() const override { return path_; }

    [[nodiscard]] std::optional<std::vector<std::string>> table_columns(
        std::string_view table) override {
        statement s = prepare("SELECT name FROM pragma_table_info(?1)");
        if (sqlite3_bind_text(s.get(), 1, table.data(), static_cast<int>(table.size()),
                              SQLITE_TRANSIENT) != SQLITE_OK) {
            fail(sqlite3_errmsg(db_.get()));
        }
        std::vector<std::string> names;
        while (step(s.get())) {
            const auto* t = sqlite3_column_text(s.get(), 0);
            const int n = sqlite3_column_bytes(s.get(), 0);
            names.emplace_back(reinterpret_cast<const char*>(t), static_cast<std::size_t>(n));
        }
        if (names.empty()) return std::nullopt;  // a table always has a column
        return names;
    }

    void read_table(std::string_view table, std::span<const std::string_view> columns,
                    const profile::db_row_visitor& row) override {
        std::string sql = "SELECT ";
        for (std::size_t i = 0; i < columns.size(); ++i) {
            // Appended piece by piece: `"," + std::string` trips a false -Wrestrict in
            // GCC 12 at -O3 (the Release build).
            if (i != 0) sql += ',';
            sql += quoted(columns[i]);
        }
        if (columns.empty()) sql += "NULL";
        sql += " FROM ";
        sql += quoted(table);
        statement s = prepare(sql);
        std::vector<profile::db_value> cells(columns.size());
        while (step(s.get())) {
            for (std::size_t i = 0; i < columns.size(); ++i) {
                const int c = static_cast<int>(i);
                profile::db_value& v = cells[i];
                switch (sqlite3_column_type(s.get(), c)) {
                    case SQLITE_INTEGER:
                        v.type = profile::db_value::kind::integer;
                        v.integer = sqlite3_column_int64(s.get(), c);
                        break;
                    case SQLITE_FLOAT:
                        v.type = profile::db_value::kind::real;
                        v.real = sqlite3_column_double(s.get(), c);
                        break;
                    case SQLITE_TEXT: {
                        v.type = profile::db_value::kind::text;
                        const auto* t = sqlite3_column_text(s.get(), c);
                        const int n = sqlite3_column_bytes(s.get(), c);
                        v.text.assign(reinterpret_cast<const char*>(t),
                                      static_cast<std::size_t>(n));
                        break;
                    }
                    case SQLITE_BLOB: {
                        v.type = profile::db_value::kind::blob;
                        const void* b = sqlite3_column_blob(s.get(), c);
                        const int n = sqlite3_column_bytes(s.get(), c);
                        v.text.assign(static_cast<const char*>(b), static_cast<std::size_t>(n));
                        break;
                    }
                    default: v = profile::db_value{}; break;
                }
            }
            row(cells);
        }
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw perfcast::error("perfcast::read_msprof_db: " + path_ + ": SQLite: " + what);
    }
    [[nodiscard]] statement prepare(const std::string& sql) const {
        sqlite3_stmt* raw = nullptr;
        const int rc =
            sqlite3_prepare_v2(db_.get(), sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr);
        statement s(raw);
        if (rc != SQLITE_OK) fail(sqlite3_errmsg(db_.get()));
        return s;
    }
    /// True with a row, false at the end.
    bool step(sqlite3_stmt* s) const {
        const int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        fail(sqlite3_errmsg(db_.get()));
    }

    std::string path_;
    db_handle db_;
};

}  // namespace

std::unique_ptr<profile::db_row_source> open_sqlite(const std::string& path) {
    return std::make_unique<sqlite_row_source>(path);
}

std::string sqlite_version() { return sqlite3_libversion(); }

}  // namespace perfcast::cli
