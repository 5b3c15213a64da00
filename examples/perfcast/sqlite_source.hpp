// examples/perfcast/sqlite_source.hpp: the command's SQLite reader of msprof / torch_npu exports
// (a profile::db_row_source over the system's SQLite, in sqlite_source.cpp).
//
// SQLite is optional at configure time (CMake: PERFCAST_WITH_SQLITE, find_package(SQLite3);
// Meson: -Dsqlite, dependency('sqlite3')): the build that finds it compiles sqlite_source.cpp
// and defines PERFCAST_HAVE_SQLITE=1 for the command and the tests; the library headers never
// include it. Without it, opening a .db is an error naming the Debian package.
#pragma once

#include <memory>
#include <string>

#include <perfcast/error.hpp>
#include <perfcast/profile/msprof_db.hpp>

#ifndef PERFCAST_HAVE_SQLITE
#define PERFCAST_HAVE_SQLITE 0
#endif

namespace perfcast::cli {

/// Whether this build reads SQLite exports.
inline constexpr bool have_sqlite = PERFCAST_HAVE_SQLITE != 0;

/// The message of a build without SQLite asked to read `path`.
[[nodiscard]] inline std::string sqlite_missing_message(const std::string& path) {
    return "'" + path +
           "' is an SQLite export (msprof_*.db / ascend_pytorch_profiler*.db), and this perfcast "
           "was built without SQLite. Install the Debian package libsqlite3-dev (apt-get install "
           "libsqlite3-dev) and configure again (cmake picks it up; meson setup --reconfigure), "
           "or read the same run's CSV export (kernel_details.csv / op_summary_*.csv)";
}

#if PERFCAST_HAVE_SQLITE
/// `path` opened read-only and unchanged (SQLite's immutable mode: no -wal or -shm file is
/// created beside it, and a -wal file left there is not read). Throws perfcast::error when it
/// cannot be opened or is not an SQLite database.
[[nodiscard]] std::unique_ptr<profile::db_row_source> open_sqlite(const std::string& path);

/// The SQLite library's version, for messages.
[[nodiscard]] std::string sqlite_version();
#else
[[nodiscard]] inline std::unique_ptr<profile::db_row_source> open_sqlite(const std::string& path) {
    throw perfcast::error(sqlite_missing_message(path));
}
[[nodiscard]] inline std::string sqlite_version() { return "none"; }
#endif

}  // namespace perfcast::cli
