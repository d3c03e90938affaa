#pragma once
// Where a test finds the source tree (examples/, library/, web/), the build
// tree and the program. The paths are compiled into tests/test_paths.cc alone,
// not into every test: no other test object depends on where the checkout
// lies, so the build scripts' compiler cache (scripts/ccache.sh) shares them
// between clones.
namespace paynter_test {
const char* SourceDir();
const char* BinaryDir();
const char* Exe();
}  // namespace paynter_test

#define PAYNTER_SOURCE_DIR (::paynter_test::SourceDir())
#define PAYNTER_BINARY_DIR (::paynter_test::BinaryDir())
// The paynter program of this build (its target, paynter_cli).
#define PAYNTER_EXE (::paynter_test::Exe())
