// Hostile inputs, round 3 (issue 25): each item a located error within a
// second (or the right answer), never a long silent run, a lost plot, a file
// read from outside the library or a temporary left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "paynter/files.h"
#include "paynter/process.h"
#include "paynter/progress.h"
#include "paynter/report.h"
#include "paynter/sweep.h"
#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

// A fresh private directory per test.
class Dir {
 public:
  Dir() {
    std::string tmpl = (fs::temp_directory_path() / "paynter_round3_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct CliResult {
  int status;  // the wait status
  std::string out;
  double seconds;  // the program's CPU time
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs the paynter program with these arguments, no shell in between.
CliResult Paynter(std::vector<std::string> args) {
  args.insert(args.begin(), PAYNTER_EXE);
  CliResult r;
  const double start = testing::ChildrenCpuSeconds();
  r.status = RunTool(args, &r.out);
  r.seconds = testing::ChildrenCpuSeconds() - start;  // CPU time (test_util.h, kSlowdown)
  return r;
}

Diagnostic ErrorOf(const std::string& yaml, const std::string& label = "round3.yaml") {
  try {
    LoadModelFromString(yaml, label);
  } catch (const Error& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "no error for:\n" << yaml.substr(0, 300);
  return {};
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const char* const kSmallModel = R"(
elements:
  - {name: S, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: 1}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
)";

// ---------------------------------------------------------------------------
// Item 1: ten levels of anchors and aliases (10^10 leaves once expanded) are
// refused at once, at the line where the tree grows past kMaxYamlNodes.

std::string AliasBomb(int levels) {
  std::string yaml = "name: bomb\nx0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < levels; ++i) {
    yaml += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) yaml += (k ? ", *a" : "*a") + std::to_string(i - 1);
    yaml += "]\n";
  }
  return yaml + kSmallModel;
}

TEST(HostileRound3, AliasBombIsRefusedAtOnce) {
  const std::string bomb = AliasBomb(10);
  EXPECT_LT(bomb.size(), 800u);  // 10^10 leaves once expanded
  const auto start = std::chrono::steady_clock::now();
  const Diagnostic d = ErrorOf(bomb);
  EXPECT_LT(SecondsSince(start), 1.0 * testing::kSlowdown);
  EXPECT_NE(d.message.find("more than 1000000 nodes (kMaxYamlNodes)"), std::string::npos) << d.ToString();
  // The sixth list (x5, line 7) is the first to pass 10^6 nodes: 1,111,111.
  EXPECT_EQ(d.where.line, 7) << d.ToString();
  EXPECT_FALSE(d.hint.empty());
  // The command line says so within a second too, with a non-zero exit.
  Dir dir;
  std::ofstream(dir / "bomb.yaml") << bomb;
  const CliResult r = Paynter({"check", (dir / "bomb.yaml").string()});
  EXPECT_EQ(r.exit_code(), 1) << r.out;
  EXPECT_LT(r.seconds, 1.0 * testing::kSlowdown) << r.out;
  EXPECT_NE(r.out.find("kMaxYamlNodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bomb.yaml:7"), std::string::npos) << r.out;
}

TEST(HostileRound3, AliasesWithinTheLimitStillReadAndAreCheckedOnce) {
  // Four levels (11,111 nodes) pass the size check: the reader goes on to
  // the first key it does not know.
  EXPECT_NE(ErrorOf(AliasBomb(4)).message.find("unknown key 'x0'"), std::string::npos);
  // Aliases in the sections of a model are read as what they repeat.
  EXPECT_NO_THROW(LoadModelFromString(R"(
parameters: {m: 2}
elements:
  - {name: S, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - &mass {name: M, kind: I, inertance: m}
bonds:
  - &b {from: S, to: J}
  - {from: J, to: M}
)", "round3.yaml"));
  // A duplicate key inside an aliased mapping is found (once, at its anchor).
  const std::string dup = std::string("common: &c {kind: I, kind: C}\n") + kSmallModel;
  const Diagnostic d = ErrorOf(dup);
  EXPECT_NE(d.message.find("duplicate key 'kind'"), std::string::npos) << d.ToString();
  EXPECT_EQ(d.where.line, 1) << d.ToString();
  // An element repeated by an alias is the same element twice: its name
  // clashes.
  std::string twice = std::string(kSmallModel) + "  - [J, R1]\n";
  twice.replace(twice.find("  - {name: M"), 0, "  - &e {name: R1, kind: R, resistance: 1}\n  - *e\n");
  const Diagnostic d2 = ErrorOf(twice);
  EXPECT_NE(d2.ToString().find("R1"), std::string::npos) << d2.ToString();
}

// The reader of model files (libyaml's events into paynter's own tree,
// src/model/yaml_tree.cc): what yaml-cpp let pass silently is a located
// error, bytes that are not UTF-8 still pass, and no nesting costs the stack
// or quadratic time.

TEST(HostileRound3, TextAfterTheTopLevelIsAnErrorNotDropped) {
  // The top level indented by two, then a key in column 1: yaml-cpp read the
  // first mapping and dropped the rest (here the run's settings) unread.
  std::string model;
  std::istringstream lines(kSmallModel);
  for (std::string line; std::getline(lines, line);) model += (line.empty() ? "" : "  ") + line + "\n";
  const int last = static_cast<int>(std::count(model.begin(), model.end(), '\n')) + 1;
  model += "simulation: {t_end: 5}\n";
  const Diagnostic d = ErrorOf(model);
  EXPECT_EQ(d.where.line, last) << d.ToString();
  EXPECT_NE(d.message.find("malformed YAML: a line outside the top-level mapping"), std::string::npos) << d.ToString();
  EXPECT_NE(d.hint.find("same column"), std::string::npos) << d.ToString();
}

TEST(HostileRound3, ASecondYamlDocumentIsAnError) {
  // yaml-cpp read the first document and ignored the second.
  const std::string two = std::string(kSmallModel) + "---\n" + kSmallModel;
  const Diagnostic d = ErrorOf(two);
  EXPECT_EQ(d.where.line, 9) << d.ToString();
  EXPECT_NE(d.message.find("more than one YAML document"), std::string::npos) << d.ToString();
  // One document, marked at its start and end, is a model as before.
  EXPECT_NO_THROW(LoadModelFromString("---\n" + std::string(kSmallModel) + "...\n", "round3.yaml"));
}

TEST(HostileRound3, NestingBeyondTheLimitIsALocatedErrorAtOnce) {
  // 100,000 levels: in brackets refused at the 100th, in blocks at the 2,000th.
  const std::clock_t start = std::clock();  // CPU time: the machine may be busy
  for (const std::string open : {"[", "{a: ", "- "}) {
    std::string deep = open == "- " ? "name: x\nlayout:\n" : "name: x\nlayout: ";
    for (int i = 0; i < 100000; ++i) deep += open;
    const Diagnostic d = ErrorOf(deep + "\n" + kSmallModel);
    const std::string says = open == "- " ? "malformed YAML: lists and mappings nested 2000 deep"
                                          : "malformed YAML: lists and mappings in brackets nested 100 deep";
    EXPECT_NE(d.message.find(says), std::string::npos) << open << ": " << d.ToString();
    EXPECT_GE(d.where.line, 2) << d.ToString();
    EXPECT_FALSE(d.hint.empty()) << d.ToString();
  }
  // A 2 MB list of a million items 98 brackets deep: read (and refused for
  // its size) within a second or so; libyaml took 20 s at 1,990 levels.
  const std::string wide = "layout: " + std::string(98, '[') + [] {
    std::string items;
    for (int i = 0; i < 999990; ++i) items += "a,";
    return items;
  }() + std::string(98, ']') + "\n";
  EXPECT_NE(ErrorOf(wide + kSmallModel).message.find("kMaxYamlNodes"), std::string::npos);
  EXPECT_LT(double(std::clock() - start) / CLOCKS_PER_SEC, 3.0 * testing::kSlowdown);
  // 99 levels in brackets and 1,998 in blocks are read (and the layout
  // refused for what it holds).
  const std::string flow = "layout: " + std::string(98, '[') + std::string(98, ']') + "\n" + kSmallModel;
  EXPECT_NE(ErrorOf(flow).message.find("'layout' must be a mapping"), std::string::npos) << ErrorOf(flow).ToString();
  std::string block = "layout:\n";
  for (int i = 0; i < 1997; ++i) block += "- ";
  block += "x\n";
  EXPECT_NE(ErrorOf(block + kSmallModel).message.find("'layout' must be a mapping"), std::string::npos)
      << ErrorOf(block + kSmallModel).ToString();
}

TEST(HostileRound3, AliasesOfDeepListsInsideDeepListsAreRefusedNotRecursedInto) {
  // Each element's `initial:` a list 1,900 deep holding the previous one: a
  // list 57,000 deep once the aliases are followed (883,500 nodes). The
  // bracketed text of a vector value is refused past 1,999 levels, at the
  // outermost list, instead of being recursed into that deep (yaml-cpp
  // refused lists past about 500 levels in blocks, the reader now 1,999).
  std::string yaml = "elements:\n  - {name: S, kind: Se, effort: 1}\n  - {name: J, kind: \"1\"}\n";
  for (int k = 0; k < 30; ++k) {
    const std::string K = std::to_string(k);
    yaml += "  - name: M" + K + "\n    kind: I\n    inertance: 1\n    initial: &a" + K + "\n      ";
    for (int i = 0; i < 1900; ++i) yaml += "- ";
    yaml += (k == 0 ? std::string("1") : "*a" + std::to_string(k - 1)) + "\n";
  }
  yaml += "bonds:\n  - [S, J]\n";
  const Diagnostic d = ErrorOf(yaml);
  EXPECT_NE(d.message.find("lists nested too deeply"), std::string::npos) << d.ToString().substr(0, 500);
  EXPECT_EQ(d.where.line, 12) << d.ToString().substr(0, 500);  // M1's list, the first deeper than 1,999 levels
  EXPECT_EQ(d.element, "M1") << d.ToString().substr(0, 500);
}

TEST(HostileRound3, BytesThatAreNotUtf8AndControlCharactersStillRead) {
  // A Latin-1 byte in a comment and in a description, a C1 control and a
  // line separator in a description: libyaml's reader refuses them all; the
  // model reads as it did, the description's bytes kept.
  const std::string desc = "caf\xe9 \xc2\x85 \xe2\x80\xa8 \x01 \xff";
  std::string yaml = "# caf\xe9\nname: m\ndescription: \"" + desc + "\"\n" + kSmallModel;
  yaml.replace(yaml.find("kind: Se,"), 9, "kind: Se, description: \"\xfe\\t\",");
  const ModelSpec spec = ReadHierarchicalModelSpec(yaml, "round3.yaml");
  EXPECT_EQ(spec.name, "m");
  EXPECT_NO_THROW(LoadModelFromString(yaml, "round3.yaml"));
  // Columns count bytes from the line's start, after characters of two or
  // more bytes as before.
  std::string bad = kSmallModel;
  bad.replace(bad.find("effort: 1}"), 10, "description: \xce\xb8\xce\xb8, effortt: 1}");
  const std::string line = "  - {name: S, kind: Se, description: \xce\xb8\xce\xb8, effortt: 1}";
  ASSERT_NE(bad.find(line + "\n"), std::string::npos);
  const Diagnostic d = ErrorOf(bad);
  EXPECT_NE(d.message.find("unknown key 'effortt'"), std::string::npos) << d.ToString();
  EXPECT_EQ(d.where.line, 3) << d.ToString();
  EXPECT_EQ(d.where.column, static_cast<int>(line.find("effortt")) + 1) << d.ToString();
  const Diagnostic tab = ErrorOf("name: m\nelements:\n\t- {name: S}\n");
  EXPECT_EQ(tab.where.line, 3) << tab.ToString();
  EXPECT_NE(tab.hint.find("spaces, not tabs"), std::string::npos) << tab.ToString();
}

// ---------------------------------------------------------------------------
// Item 2: a tiny inertia makes the steps tiny; the step forecast (or, for a
// mechanism, the drift check) stops the run at once, for dopri5 and bdf, with
// a hint that names the inertia.

TEST(HostileRound3, TinyInertiaStopsEarlyWithAHint) {
  Dir dir;
  std::string model = testing::ReadFileBytes(testing::SourcePath("examples/fourbar.yaml"));
  const size_t at = model.find("Ib: mb*b^2/12");
  ASSERT_NE(at, std::string::npos);
  model.replace(at, 13, "Ib: mb*b^2/2147483648");
  std::ofstream(dir / "fourbar.yaml") << model;
  const std::string out = (dir / "o.csv").string();
  for (const char* method : {"dopri5", "bdf"}) {
    SCOPED_TRACE(method);
    const CliResult r =
        Paynter({"simulate", (dir / "fourbar.yaml").string(), "--t-end", "0.1", "--method", method, "-o", out});
    EXPECT_EQ(r.exit_code(), 1) << r.out;
    EXPECT_LT(r.seconds, 10.0 * testing::kSlowdown) << r.out;  // minutes before; the forecast needs a few thousand steps
    // Whichever check meets the run first stops it: the step forecast, or
    // (bdf, whose steps stay longer) the joints' drift check; each names the
    // tiny inertia in its hint.
    const bool forecast = r.out.find("over the step budget of 1000000 (the step forecast)") != std::string::npos;
    const bool drift = r.out.find("the joints drifted beyond the drift tolerance") != std::string::npos;
    EXPECT_TRUE(forecast || drift) << r.out;
    if (forecast) {
      EXPECT_NE(r.out.find("very small mass, inertia"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("--max-steps"), std::string::npos) << r.out;
    } else {
      EXPECT_NE(r.out.find("an inertia many orders of magnitude below the others"), std::string::npos) << r.out;
    }
    EXPECT_NE(r.out.find("fourbar.yaml"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // The model as written runs as before.
  const CliResult ok = Paynter({"simulate", testing::SourcePath("examples/fourbar.yaml"), "--t-end", "0.1", "-o", out});
  EXPECT_EQ(ok.exit_code(), 0) << ok.out;
}

// ---------------------------------------------------------------------------
// Item 3: the bouncing ball past its Zeno point (4.064 s) stops with an error
// naming the event; before it, the run is as before.

TEST(HostileRound3, BouncingBallStopsBeforeItsZenoPoint) {
  Dir dir;
  const std::string ball = testing::SourcePath("examples/bouncing_ball.yaml"), out = (dir / "o.csv").string();
  for (const char* method : {"dopri5", "bdf", "rk4"}) {
    SCOPED_TRACE(method);
    const CliResult r = Paynter({"simulate", ball, "--t-end", "5", "--method", method, "--stats", "-o", out});
    EXPECT_EQ(r.exit_code(), 1) << r.out;
    EXPECT_LT(r.seconds, 5.0 * testing::kSlowdown) << r.out;
    EXPECT_NE(r.out.find("event 'impact' fires ever sooner"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("accumulate at about t = 4.06"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("a Zeno point"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bouncing_ball.yaml"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // t_end before the Zeno point: as many impacts as the exact solution has
  // (21 impacts up to 4.03 s: t_k = 0.4515, 1.174, ...).
  const CliResult r = Paynter({"simulate", ball, "--t-end", "4.03", "--stats", "-o", out});
  EXPECT_EQ(r.exit_code(), 0) << r.out;
  EXPECT_NE(r.out.find("events: 21 "), std::string::npos) << r.out;
}

// A ball that loses half its speed at each impact: its impacts accumulate at
// 3 sqrt(2 h0/g) = 1.3546 s, and after some fifteen of them its bounces are
// lower than the solver's tolerance. The run used to miss the next crossing
// there and end at t = 2 with the ball two metres below the floor, exit 0; the
// intervals' constant ratio (1/2) tells the Zeno point after a few impacts.
TEST(HostileRound3, AFastDecayingBallStopsBeforeItFallsThroughTheFloor) {
  Dir dir;
  const std::string ball = testing::SourcePath("examples/bouncing_ball.yaml"), out = (dir / "o.csv").string();
  for (const char* method : {"dopri5", "bdf", "rk4"}) {
    SCOPED_TRACE(method);
    const CliResult r = Paynter({"simulate", ball, "--param", "e=0.5", "--t-end", "2", "--method", method, "-o", out});
    EXPECT_EQ(r.exit_code(), 1) << r.out;
    EXPECT_NE(r.out.find("event 'impact' fires ever sooner"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("accumulate at about t = 1.35"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // Before the point the run is whole: impacts at 0.4515 (1 + 2 (1/2 + ... + 1/2^(k-1))) s, 5 before 1.3 s.
  const CliResult r = Paynter({"simulate", ball, "--param", "e=0.5", "--t-end", "1.3", "--stats", "-o", out});
  EXPECT_EQ(r.exit_code(), 0) << r.out;
  EXPECT_NE(r.out.find("events: 5 "), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------
// Item 4: lib: names a file of the component library, nothing outside it.

TEST(HostileRound3, LibraryPathsStayInsideTheLibrary) {
  Dir dir;
  std::ofstream(dir / "x.yaml") << "ports: [p]\nelements:\n  - {name: p, kind: \"1\"}\nbonds: []\n";
  const std::string rel = fs::relative(dir / "x", testing::SourcePath("library")).string();
  for (const std::string& use : {"lib:" + rel, "lib:" + (dir / "x").string(), std::string("lib:../examples/rlc"),
                                 std::string("lib:electrical/../../examples/rlc")}) {
    SCOPED_TRACE(use);
    const std::string yaml = "instances:\n  - {name: a, use: \"" + use + "\"}\n" +
                             "elements:\n  - {name: S, kind: Se, effort: 1}\nbonds:\n  - [S, a.p]\n";
    const Diagnostic d = ErrorOf(yaml);
    EXPECT_NE(d.message.find("leaves the component library"), std::string::npos) << d.ToString();
    EXPECT_EQ(d.where.line, 2) << d.ToString();
    EXPECT_EQ(d.element, "a") << d.ToString();
    EXPECT_NE(d.hint.find("without lib:"), std::string::npos) << d.ToString();
  }
  // A library component still loads.
  const std::string good = "instances:\n  - {name: d, use: \"lib:rotational/damper\", parameters: {b: 1}}\n"
                           "elements:\n  - {name: S, kind: Sf, flow: 1}\nbonds:\n  - [S, d.p]\n";
  try {
    LoadModelFromString(good, (dir / "good.yaml").string());
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("leaves the component library"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// Item 5: a range whose span overflows a double.

TEST(HostileRound3, SweepRangeSpanningMoreThanADoubleHolds) {
  const SweepRange r = ParseSweepRange("B=1e308:-1e308:3");
  EXPECT_EQ(SweepValues(r), (std::vector<double>{1e308, 0, -1e308}));
  const SweepRange w = ParseSweepRange("B=-1.7e308:1.7e308:5");
  for (double v : SweepValues(w)) EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_EQ(SweepValues(w)[2], 0);
  // Ordinary ranges are unchanged.
  EXPECT_EQ(SweepValues(ParseSweepRange("x=0:1:5")), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

// ---------------------------------------------------------------------------
// Item 7: a control character followed by a quote, in a title and a column
// name, is written to gnuplot as the text it is; the plot is made.

TEST(HostileRound3, ControlCharacterBeforeAQuoteKeepsThePlot) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot";
  Dir dir;
  const std::string csv = (dir / "d.csv").string(), png = (dir / "p.svg").string();
  std::ofstream(csv) << "t,a\x01'b,'\x02'\n0,1,2\n1,2,3\n";
  const CliResult r = Paynter({"plot", csv, "-o", png, "--title", "x\x01'y'\x7f''"});
  EXPECT_EQ(r.exit_code(), 0) << r.out;
  ASSERT_TRUE(fs::exists(png)) << r.out;
  const std::string svg = testing::ReadFileBytes(png);
  EXPECT_NE(svg.find("'y'"), std::string::npos) << svg.substr(0, 2000);
}

// ---------------------------------------------------------------------------
// Item 8: a device as the model, and a model file over kMaxModelFileBytes.

TEST(HostileRound3, DevicesAndHugeModelFilesAreRefused) {
  const auto start = std::chrono::steady_clock::now();
  const CliResult r = Paynter({"check", "/dev/zero"});
  EXPECT_EQ(r.exit_code(), 1) << r.out;
  EXPECT_LT(r.seconds, 1.0 * testing::kSlowdown);
  EXPECT_NE(r.out.find("/dev/zero"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a device"), std::string::npos) << r.out;
  Dir dir;
  const fs::path big = dir / "big.yaml";
  {
    std::ofstream out(big);
    out << kSmallModel;
    const std::string comment = "# " + std::string(1022, 'x') + "\n";
    for (size_t n = 0; n <= kMaxModelFileBytes / comment.size(); ++n) out << comment;
  }
  const CliResult b = Paynter({"check", big.string()});
  EXPECT_EQ(b.exit_code(), 1) << b.out;
  EXPECT_NE(b.out.find("larger than 16777216 bytes (kMaxModelFileBytes)"), std::string::npos) << b.out;
  EXPECT_LT(SecondsSince(start), 5.0 * testing::kSlowdown);
  // A FIFO is refused before it is opened (opening it would wait for a
  // writer for ever).
  const fs::path fifo = dir / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CliResult p = Paynter({"check", fifo.string()});
  EXPECT_EQ(p.exit_code(), 1) << p.out;
  EXPECT_NE(p.out.find("not a regular file"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("a pipe"), std::string::npos) << p.out;
}

// ---------------------------------------------------------------------------
// Item 9: a run killed with SIGKILL leaves its temporary; the next output
// written there removes it (and only temporaries of processes gone). A
// replaced output keeps its mode.

std::vector<std::string> Temporaries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".paynter-", 0) == 0) names.push_back(e.path().filename().string());
  return names;
}

std::string HostName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string t;
  for (const char* c = host; *c && t.size() < 64; ++c)
    t += std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '_' ? *c : '_';
  return t.empty() ? "host" : t;
}

TEST(HostileRound3, KilledRunsTemporaryIsRemovedByTheNextWrite) {
  Dir dir;
  const std::string model = testing::SourcePath("examples/rlc.yaml");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    const std::string out = (dir / "long.csv").string();
    ::execl(PAYNTER_EXE, PAYNTER_EXE, "simulate", model.c_str(), "--t-end", "1e5", "--dt-out", "0.01",
            "--max-steps", "1000000000", "-o", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait for its temporary to grow, then kill it as hard as can be.
  bool grown = false;
  for (int i = 0; i < 600 && !grown; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& name : Temporaries(dir.path())) {
      std::error_code ec;
      grown = grown || fs::file_size(dir / name, ec) > 0;
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(grown) << "the run wrote nothing";
  const std::vector<std::string> left = Temporaries(dir.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0].find("-" + std::to_string(pid) + "-"), std::string::npos) << left[0];
  // Temporaries that are not to be removed: of a live process (this one), of
  // another host, named otherwise.
  const std::string host = HostName();
  const std::vector<std::string> kept = {".paynter-" + host + "-" + std::to_string(::getpid()) + "-abcdef.tmp",
                                         ".paynter-otherhost-" + std::to_string(pid) + "-abcdef.tmp",
                                         ".paynter-" + host + "-" + std::to_string(pid) + "-abcdef.tmp.keep",
                                         ".paynter-abcdef.tmp"};
  for (const auto& k : kept) std::ofstream(dir / k) << "x";
  // A dead process's temporary that is a link is not followed or removed.
  fs::create_symlink(dir / "target", dir / (".paynter-" + host + "-" + std::to_string(pid) + "-linkkk.tmp"));
  const CliResult r = Paynter({"simulate", model, "--t-end", "0.1", "-o", (dir / "short.csv").string()});
  ASSERT_EQ(r.exit_code(), 0) << r.out;
  EXPECT_FALSE(fs::exists(dir / left[0]));
  for (const auto& k : kept) EXPECT_TRUE(fs::exists(dir / k)) << k;
  EXPECT_TRUE(fs::is_symlink(dir / (".paynter-" + host + "-" + std::to_string(pid) + "-linkkk.tmp")));
}

TEST(HostileRound3, ReplacedOutputKeepsItsMode) {
  Dir dir;
  const fs::path out = dir / "private.csv";
  std::ofstream(out) << "old\n";
  ::chmod(out.c_str(), 0600);
  const CliResult r = Paynter({"simulate", testing::SourcePath("examples/rlc.yaml"), "--t-end", "0.1", "-o", out});
  ASSERT_EQ(r.exit_code(), 0) << r.out;
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(testing::ReadFileBytes(out), "old\n");
  // A new output gets the mode of any new file.
  const fs::path fresh = dir / "fresh.csv";
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ASSERT_EQ(Paynter({"simulate", testing::SourcePath("examples/rlc.yaml"), "--t-end", "0.1", "-o", fresh}).status, 0);
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u & ~mask);
}

// ---------------------------------------------------------------------------
// Item 10: a sweep at its 10^8-run cap is defined at once, in little memory;
// one run over the cap is refused before anything else.

TEST(HostileRound3, SweepAtItsCapIsNotMaterialized) {
  RunOptions base;
  base.file = testing::SourcePath("examples/rlc.yaml");
  const auto start = std::chrono::steady_clock::now();
  const SweepDefinition def =
      MakeSweep(base, {ParseSweepRange("R=1:2:10000"), ParseSweepRange("L=1:3:10000")}, "");
  EXPECT_LT(SecondsSince(start), 1.0 * testing::kSlowdown);
  EXPECT_EQ(def.size(), 100000000);
  EXPECT_EQ(def.RunValues(0), (std::vector<double>{1, 1}));
  EXPECT_EQ(def.RunValues(1), (std::vector<double>{1, 1 + 2.0 / 9999}));
  EXPECT_EQ(def.RunValues(10000), (std::vector<double>{1 + 1.0 / 9999, 1}));
  EXPECT_EQ(def.RunValues(def.size() - 1), (std::vector<double>{2, 3}));
  EXPECT_EQ(def.OptionsFor(def.size() - 1).params.back(), (std::pair<std::string, double>{"L", 3}));
  try {
    MakeSweep(base, {ParseSweepRange("R=1:2:10000"), ParseSweepRange("L=1:3:10001")}, "");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 10^8 runs"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// Item 11: a wrong unit on an output is blamed on the output's line.

TEST(HostileRound3, OutputUnitMismatchIsBlamedOnTheOutput) {
  std::string model = testing::ReadFileBytes(testing::SourcePath("examples/dc_motor_units.yaml"));
  const size_t at = model.find("current: f_armature A");
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + static_cast<int>(std::count(model.begin(), model.begin() + static_cast<long>(at), '\n'));
  model.replace(at, 21, "current: f_armature V");
  const Diagnostic d = ErrorOf(model, "motor.yaml");
  EXPECT_EQ(d.where.line, line) << d.ToString();
  EXPECT_NE(d.ToString().find("output 'current'"), std::string::npos) << d.ToString();
  EXPECT_EQ(d.ToString().find("junction"), std::string::npos) << d.ToString();
  // As written, the example loads.
  EXPECT_NO_THROW(LoadModel(testing::SourcePath("examples/dc_motor_units.yaml")));
}

// ---------------------------------------------------------------------------
// Found beside the fuzzing campaign (docs/reliability.md): the other inputs
// paynter reads whole, a --params table and the CSV of `paynter plot`, were
// opened whatever they were: /dev/zero was read for ever (one endless line,
// memory growing) and a FIFO waited for a writer. They are refused as a model
// file is.

// What `read` throws, run in a child process that a hang (5 s) or a runaway
// allocation (1 GB) ends: "" when it throws no Error.
std::string ErrorInChild(const std::function<void()>& read) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fd[0]);
    ::alarm(5);
#ifndef __SANITIZE_ADDRESS__
    // AddressSanitizer reserves terabytes of address space for its shadow
    // memory and cannot start under this limit; the alarm bounds the run.
    const rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &limit);
#endif
    std::string what = "no error";
    try {
      read();
    } catch (const Error& e) {
      what = e.what();
    } catch (...) {
      what = "not a paynter::Error";
    }
    if (::write(pipe_fd[1], what.data(), what.size()) < 0) ::_exit(3);
    ::_exit(0);
  }
  ::close(pipe_fd[1]);
  std::string what;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) what.append(buf, static_cast<size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return "the child ended by signal " + std::to_string(WTERMSIG(status));
  return what;
}

TEST(HostileRound3, SpecialFilesAreRefusedAsTablesAndPlotInput) {
  Dir dir;
  const fs::path fifo = dir / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string png = (dir / "x.png").string();
  struct Case {
    std::string path, got;
  };
  for (const Case& c : {Case{"/dev/zero", "a device"}, Case{fifo.string(), "a pipe"},
                        Case{dir.path().string(), "a directory"}}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string table = ErrorInChild([&] { ReadParameterTable(c.path); });
    EXPECT_NE(table.find("the parameter table is not a regular file"), std::string::npos) << table;
    EXPECT_NE(table.find(c.got), std::string::npos) << table;
    EXPECT_NE(table.find(c.path), std::string::npos) << table;
    const std::string plot = ErrorInChild([&] { PlotCsv(c.path, png, {}, "", ""); });
    EXPECT_NE(plot.find("the CSV file is not a regular file"), std::string::npos) << plot;
    EXPECT_NE(plot.find(c.got), std::string::npos) << plot;
    EXPECT_LT(SecondsSince(start), 2.0 * testing::kSlowdown) << c.path;
  }
  EXPECT_FALSE(fs::exists(png));
}

// Found by the fuzzing campaign (fuzz_expression): a number with a huge
// exponent (5632234631e308593196) kept the algebra library forming the power
// of ten exactly for longer than the campaign's 10 s. Such a number is read
// in double precision: beyond 1e308 it has no value, below 5e-324 it is 0.
TEST(HostileRound3, NumberWithAHugeExponentIsReadAtOnce) {
  auto with_parameter = [](const std::string& value) {
    return "parameters: {a: " + value + "}\nelements:\n  - {name: S, kind: Se, effort: a}\n  - {name: J, kind: \"1\"}\n"
           "  - {name: M, kind: I, inertance: 1}\nbonds:\n  - {from: S, to: J}\n  - {from: J, to: M}\n";
  };
  const auto start = std::chrono::steady_clock::now();
  const std::string huge = ErrorInChild([&] { LoadModelFromString(with_parameter("5632234631e308593196"), "e.yaml"); });
  EXPECT_NE(huge.find("e.yaml:1:"), std::string::npos) << huge;
  EXPECT_NE(huge.find("beyond the range of numbers"), std::string::npos) << huge;
  const std::string tiny = ErrorInChild([&] {
    const Model m = LoadModelFromString(with_parameter("2 + 5632234631e-308593196"), "e.yaml");
    if (m.parameters.at(0).value != 2) throw Error("wrong value " + std::to_string(m.parameters.at(0).value));
    throw Error("read");
  });
  EXPECT_NE(tiny.find("read"), std::string::npos) << tiny;
  EXPECT_LT(SecondsSince(start), 2.0 * testing::kSlowdown);
  // Exponents a double holds read exactly as before.
  EXPECT_EQ(LoadModelFromString(with_parameter("2.5e3"), "e.yaml").parameters.at(0).value, 2500);
  EXPECT_DOUBLE_EQ(LoadModelFromString(with_parameter("1e1000 * 1e-990"), "e.yaml").parameters.at(0).value, 1e10);
}

// Found by the fuzzing campaign (fuzz_expression, leaks under LeakSanitizer):
// a power of numbers with a floating-point number on one side far beyond the
// range of doubles overflowed inside the algebra library, and 0^0 was
// refused by it; each threw from inside the power it was forming, which
// leaked. The reader refuses them first: a power beyond 2^(+-10^6) taken in
// double precision, as a power of exact numbers is, and zero to a power that
// is not positive.
TEST(HostileRound3, PowersWithoutAValueAreRefusedByTheReader) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {Case{"8888888888888888888888888888888888888888^88888888881e-6", "beyond the range of numbers"},
                        Case{"2.0^1e30", "beyond the range of numbers"}, Case{"0.5^1e30", "beyond the range of numbers"},
                        Case{"0^0", "zero to the power 0"},
                        Case{"1 + 0^(2-2)", "zero to the power 0"}}) {
    const std::string yaml = std::string("parameters: {a: \"") + c.text +
                             "\"}\nelements:\n  - {name: S, kind: Se, effort: a}\n  - {name: J, kind: \"1\"}\n"
                             "  - {name: M, kind: I, inertance: 1}\nbonds:\n  - {from: S, to: J}\n  - {from: J, to: M}\n";
    const Diagnostic d = ErrorOf(yaml, "p.yaml");
    EXPECT_EQ(d.where.line, 1) << d.ToString();
    EXPECT_NE(d.ToString().find(c.says), std::string::npos) << c.text << ": " << d.ToString();
  }
  // Within the range, as before.
  EXPECT_DOUBLE_EQ(LoadModelFromString("parameters: {a: \"2.0^10\"}\n" + std::string(kSmallModel), "p.yaml")
                       .parameters.at(0)
                       .value,
                   1024);
}

// ---------------------------------------------------------------------------
// Runs longer than 10 s without a word (the campaign's open finding): the
// symbolic stages name themselves on stderr, and a name no pass defines in
// an output of a mechanism is found before its joint-coordinate expansion.

// What `work` writes on stderr, captured in a file (not a terminal).
std::string StderrOf(const std::function<void()>& work) {
  Dir dir;
  const std::string path = (dir / "stderr.txt").string();
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  work();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(HostileRound3, LongStagesNameThemselvesEveryFiveSeconds) {
  SetStageProgress(true);
  const std::string log = StderrOf([] {
    StageScope outer("preparing m.yaml");
    {
      StageScope inner("forming the equations (12 bonds)");
      // Another thread's stage while this one owns the line: not shown.
      std::thread([] {
        StageScope other("a stage of another thread");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }).join();
      std::this_thread::sleep_for(std::chrono::milliseconds(5600));
    }
  });
  const std::string quick = StderrOf([] { StageScope quick("a quick stage"); });
  SetStageProgress(false);
  const std::string off = StderrOf([] {
    StageScope off("a stage while stage lines are off");
    std::this_thread::sleep_for(std::chrono::milliseconds(5600));
  });
  // The innermost stage, with the seconds since the outermost began, then
  // the outermost's close.
  EXPECT_NE(log.find("paynter: forming the equations (12 bonds) (5 s)\n"), std::string::npos) << log;
  EXPECT_NE(log.find("paynter: preparing m.yaml done in 6 s\n"), std::string::npos) << log;
  EXPECT_EQ(log.find("another thread"), std::string::npos) << log;
  EXPECT_EQ(quick, "");
  EXPECT_EQ(off, "");
}

TEST(HostileRound3, UndefinedOutputNameOfAMechanismIsFoundBeforeItsJointCoordinates) {
  Dir dir;
  std::string yaml = testing::ReadFileBytes(testing::SourcePath("examples/bricard.yaml"));
  const std::string declared = "  theta1: 0.8\n";
  ASSERT_NE(yaml.find(declared), std::string::npos);
  yaml.erase(yaml.find(declared), declared.size());  // the output theta1 + J1_angle names it still
  const std::string file = (dir / "bricard.yaml").string();
  std::ofstream(file) << yaml;
  for (const char* form : {"lagrange1", "lagrange2", "hamilton"}) {
    // Before, the error came after the symbolic stages: 46 s of CPU for lagrange1.
    const CliResult r = Paynter({"equations", file, "--form", form});
    EXPECT_EQ(r.exit_code(), 1) << form << r.out;
    EXPECT_NE(r.out.find("bricard.yaml:44:11: error: undefined symbol 'theta1' in output 'theta1'"), std::string::npos)
        << form << r.out;
    EXPECT_NE(r.out.find("did you mean 'theta2'?"), std::string::npos) << r.out;
    EXPECT_LT(r.seconds, 10.0 * testing::kSlowdown) << form;
  }
}

}  // namespace
}  // namespace paynter
