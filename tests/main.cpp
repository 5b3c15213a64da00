// The doctest runner: the only translation unit that defines main. Test files include
// <doctest/doctest.h> and define cases; see tests/CMakeLists.txt.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
