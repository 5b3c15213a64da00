// libFuzzer target: the folder walk (profile/discover.hpp) over a tree the input describes, and
// the reading of every op table and timeline it finds.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_discover.cpp -o fuzz_discover
//   ./fuzz_discover -max_total_time=60 tests/fuzz/corpus/discover
//
// The input is a list of files: each is a path line ("a/b/kernel_details.csv\n") and then the
// file's bytes up to a NUL byte (or the end). Path parts keep [A-Za-z0-9_.-] and drop the rest;
// "." and ".." parts are dropped, so every file lands inside a scratch folder made once per
// process and emptied before each input (at most 32 files, 8 levels, 64 KiB each; seeds written
// from the real folders of tests/data/profiles/real by discover_seed.py). Any input must walk and
// read, or throw perfcast::error; every table found must be a file inside the scratch folder.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <perfcast/profile/discover.hpp>
#include <perfcast/profile/timeline.hpp>

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
    static const fs::path root = [] {
        std::string dir = (fs::temp_directory_path() / "perfcast_fuzz_discover.XXXXXX").string();
        if (mkdtemp(dir.data()) == nullptr) std::abort();
        return fs::path(dir);
    }();
    return root;
}

/// The input's path line as a relative path of kept parts; empty when nothing is kept.
fs::path sanitized(std::string_view line) {
    fs::path out;
    std::size_t depth = 0;
    while (!line.empty() && depth < 8) {
        const std::size_t slash = line.find('/');
        const std::string_view part = line.substr(0, slash);
        line = slash == std::string_view::npos ? std::string_view{} : line.substr(slash + 1);
        std::string kept;
        for (const char c : part) {
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
            if (ok && kept.size() < 64) kept += c;
        }
        if (kept.empty() || kept == "." || kept == "..") continue;
        out /= kept;
        ++depth;
    }
    return out;
}

bool inside(const fs::path& p, const fs::path& root) {
    const std::string a = fs::weakly_canonical(p).string();
    const std::string r = fs::weakly_canonical(root).string();
    return a.size() > r.size() && a.compare(0, r.size(), r) == 0 && a[r.size()] == '/';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fs::path& root = scratch();
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        fs::remove_all(it->path(), ec);
    }
    std::string_view in(reinterpret_cast<const char*>(data), size);
    for (int files = 0; !in.empty() && files < 32; ++files) {
        const std::size_t nl = in.find('\n');
        if (nl == std::string_view::npos) break;
        const fs::path rel = sanitized(in.substr(0, nl));
        in.remove_prefix(nl + 1);
        const std::size_t nul = in.find('\0');
        std::string_view body = in.substr(0, nul);
        in = nul == std::string_view::npos ? std::string_view{} : in.substr(nul + 1);
        if (rel.empty()) continue;
        if (body.size() > 65536) body = body.substr(0, 65536);
        const fs::path file = root / rel;
        fs::create_directories(file.parent_path(), ec);
        if (ec || fs::is_directory(file, ec)) continue;  // a file where a folder is, or the reverse
        std::ofstream(file, std::ios::binary)
            .write(body.data(), static_cast<std::streamsize>(body.size()));
    }
    try {
        const perfcast::profile::discovery d = perfcast::profile::discover_profiles(root);
        for (const auto& s : d.sources) {
            if (s.files.empty() || s.name().empty()) std::abort();
            for (const auto& f : s.files) {
                if (!inside(f, root)) std::abort();
            }
            if (s.timeline) {
                if (!inside(*s.timeline, root)) std::abort();
                try {
                    (void)perfcast::profile::read_timeline_file(s.timeline->string());
                } catch (const perfcast::error&) {
                }
            }
            if (perfcast::profile::needs_database_reader(s)) continue;  // SQLite: fuzz_msprof_db
            try {
                perfcast::profile::kernel_reader_options o;
                o.several_devices = true;
                (void)perfcast::profile::read_profile_source(s, o);
            } catch (const perfcast::error&) {
            }
        }
    } catch (const perfcast::error&) {
    }
    return 0;
}
