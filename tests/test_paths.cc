#include "test_paths.h"

// Set by CMake for this file only (CMakeLists.txt, paynter_test_paths).
namespace paynter_test {
const char* SourceDir() { return PAYNTER_TEST_SOURCE_DIR; }
const char* BinaryDir() { return PAYNTER_TEST_BINARY_DIR; }
const char* Exe() { return PAYNTER_TEST_EXE; }
}  // namespace paynter_test
