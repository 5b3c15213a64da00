// The test files' own convention: the build compiles them 8 to a unity file
// (PERFCAST_UNITY_TESTS, Meson's unity_size), so each keeps its names in a namespace named after
// it. A file without one compiles alone and breaks only when a batch puts two helpers of one name
// together; this says which file, at once.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

namespace test_test_files {

TEST_CASE("test files: each keeps its names in a namespace named after the file") {
    namespace fs = std::filesystem;
    std::vector<std::string> missing;
    int files = 0;
    for (const auto& e : fs::directory_iterator(PERFCAST_SOURCE_DIR "/tests")) {
        const std::string name = e.path().filename().string();
        if (name.rfind("test_", 0) != 0 || e.path().extension() != ".cpp") continue;
        ++files;
        std::ifstream in(e.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string stem = e.path().stem().string();
        std::string s = text.str();
        std::erase(s, '\r');  // a checkout with CRLF line ends
        if (s.find("\nnamespace " + stem + " {\n") == std::string::npos ||
            s.find("\n}  // namespace " + stem + "\n") == std::string::npos)
            missing.push_back(name);
    }
    CHECK(files > 50);  // the directory was read (60 files when this test was written)
    std::string list;
    for (const std::string& m : missing) list += " " + m;
    CHECK_MESSAGE(missing.empty(),
                  "without 'namespace <file stem> {' ... "
                  "'}  // namespace <file stem>':"
                      << list);
}

}  // namespace test_test_files
