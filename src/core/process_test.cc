// Programs started without a shell (paynter/process.h).
#include "paynter/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace paynter {
namespace {

namespace fs = std::filesystem;

std::string ReadWhole(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(CommandWords, SplitsAtBlanksAndNothingElse) {
  EXPECT_EQ(CommandWords("  ccache  gcc\t-O2\n-ffp-contract=off "),
            (std::vector<std::string>{"ccache", "gcc", "-O2", "-ffp-contract=off"}));
  // No shell reads a setting: quotes and metacharacters are parts of words.
  EXPECT_EQ(CommandWords("'a b' $HOME;rm"), (std::vector<std::string>{"'a", "b'", "$HOME;rm"}));
  EXPECT_TRUE(CommandWords(" \t\n").empty());
}

TEST(FindProgram, LooksUpPathAndTakesAPathAsItIs) {
  const std::string sh = FindProgram("sh");
  ASSERT_FALSE(sh.empty());
  EXPECT_EQ(sh.front(), '/');
  EXPECT_EQ(::access(sh.c_str(), X_OK), 0);
  EXPECT_EQ(FindProgram(sh), sh);
  EXPECT_EQ(FindProgram("paynter-no-such-program"), "");
  EXPECT_EQ(FindProgram("/nonexistent/sh"), "");
  EXPECT_EQ(FindProgram("/"), "");  // a directory is no program
  EXPECT_EQ(FindProgram(""), "");
}

TEST(RunTool, ArgumentsReachTheProgramVerbatim) {
  std::string out;
  const int status = RunTool({"printf", "%s|", "a b", "$HOME", ";", "*", "'q'"}, &out);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(out, "a b|$HOME|;|*|'q'|");
}

TEST(RunTool, CollectsBothStreamsAndTheExitStatus) {
  std::string out;
  const int status = RunTool({"sh", "-c", "echo out; echo err >&2; exit 3"}, &out);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(out, "out\nerr\n");
}

TEST(RunTool, StandardInputIsEmpty) {
  std::string out;
  ASSERT_EQ(RunTool({"sh", "-c", "cat; echo end"}, &out), 0);
  EXPECT_EQ(out, "end\n");
}

TEST(RunTool, AMissingProgramSaysSo) {
  std::string out;
  EXPECT_EQ(RunTool({"paynter-no-such-program", "x"}, &out), -1);
  EXPECT_NE(out.find("cannot run paynter-no-such-program"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(RunTool({"/nonexistent/program"}, &out), -1);
  EXPECT_NE(out.find("cannot run /nonexistent/program"), std::string::npos) << out;
}

// A signal the caller ignores is at its default in the program: an inherited
// SIG_IGN would, e.g., hide the statuses of a compiler's own children.
TEST(RunTool, TheProgramGetsDefaultSignals) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &ignore, &old), 0);
  std::string out;
  const int status = RunTool({"sh", "-c", "kill -INT $$; echo survived"}, &out);
  ::sigaction(SIGINT, &old, nullptr);
  ASSERT_TRUE(WIFSIGNALED(status)) << out;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_EQ(out, "");
}

TEST(PreparedCommand, WritesBothStreamsIntoAPrivateFile) {
  char dir_template[] = "/tmp/paynter-process-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const fs::path dir = dir_template;
  const fs::path log = dir / "log";
  {
    std::ofstream(log) << "old text, longer than what replaces it\n";
  }
  const PreparedCommand command({FindProgram("sh"), "-c", "echo out; echo err >&2"}, log.string());
  const pid_t pid = command.Start();
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(ReadWhole(log), "out\nerr\n");
  // A new file is the user's alone.
  const fs::path fresh = dir / "fresh";
  const PreparedCommand again({FindProgram("true")}, fresh.string());
  const pid_t pid2 = again.Start();
  ASSERT_GT(pid2, 0);
  ASSERT_EQ(::waitpid(pid2, &status, 0), pid2);
  struct stat st;
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paynter
