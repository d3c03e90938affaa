// Hostile inputs (issue 8): text that must never reach gnuplot, Graphviz or a
// shell as code; a native-code cache that others could plant code in;
// temporary files under guessable names and outputs that are not regular
// files; expressions that crashed the parser or overflowed the stack.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "paynter/process.h"
#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

// A fresh private directory per test.
class Dir {
 public:
  Dir() {
    std::string tmpl = (fs::temp_directory_path() / "paynter_hostile_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void Spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

struct CliResult {
  int status;  // the wait status
  std::string out;
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs the paynter program with these arguments, no shell in between.
CliResult Paynter(std::vector<std::string> args) {
  args.insert(args.begin(), PAYNTER_EXE);
  CliResult r;
  r.status = RunTool(args, &r.out);
  return r;
}

// ---------------------------------------------------------------------------
// Item 1: nothing from a CSV header, a title or a path is run by gnuplot.

TEST(Hostile, PlotRunsNothingFromHeaderTitleOrPaths) {
  Dir d;
  const std::string dir = d.path().string();
  auto planted = [&](const char* name) { return "`touch " + dir + "/" + name + "`"; };
  // Column names with backquotes, quotes, a backslash, a macro and a trailing CR.
  const std::string header = "t," + planted("X") + ",a'b\"c\\d@e,$(touch " + dir + "/Q)\r";
  // Paths with quotes and backquotes (no '/' inside a file name).
  const fs::path csv = d / "d`touch W`'\".csv";
  Spit(csv, header + "\n0,1,2,3\n1,2,3,4\n");
  const fs::path png = d / "o`touch Z`'\"q.png";
  const std::string title = "T'it\"le " + planted("Y") + " @x \\n\nsecond line";
  const CliResult r = Paynter({"plot", csv.string(), "-o", png.string(), "--title", title});
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char* f : {"X", "Y", "Z", "W", "Q"}) EXPECT_FALSE(fs::exists(d / f)) << f << " was created: " << r.out;
  ASSERT_TRUE(fs::exists(png)) << r.out;
  EXPECT_GT(fs::file_size(png), 1000u);

  // The labels appear as written (SVG shows the text).
  const fs::path svg = d / "-p.svg";  // a name gnuplot could take for an option
  const CliResult s = Paynter({"plot", csv.string(), "-o", svg.string(), "--title", title});
  EXPECT_EQ(s.status, 0) << s.out;
  const std::string text = testing::ReadFileBytes(svg);
  EXPECT_NE(text.find("`touch " + dir + "/X`"), std::string::npos) << text.substr(0, 2000);
  EXPECT_NE(text.find("a'b\"c\\d@e"), std::string::npos);
  EXPECT_NE(text.find("T'it\"le `touch"), std::string::npos);
  EXPECT_NE(text.find("second line"), std::string::npos);
  for (const char* f : {"X", "Y", "Z", "W", "Q"}) EXPECT_FALSE(fs::exists(d / f)) << f;
}

TEST(Hostile, DrawShowsHostileNamesLiterally) {
  Dir d;
  const std::string dir = d.path().string();
  // The model's name is free text: quotes, backslashes, Graphviz escapes, a
  // backquote command, braces and a newline.
  const std::string yaml = "name: \"a\\\"b\\\\N \\\\G `touch " + dir + "/X` } {\\nline2\\r\"\n" + R"(
elements:
  - {name: S, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - {name: R1, kind: R, resistance: 2}
bonds:
  - {from: S, to: J}
  - {from: J, to: R1}
)";
  const fs::path model = d / "m`touch Y`'.yaml";
  Spit(model, yaml);
  const fs::path svg = d / "-g`touch Z`'\".svg";
  const CliResult r = Paynter({"draw", model.string(), "-o", svg.string()});
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string text = testing::ReadFileBytes(svg);
  EXPECT_NE(text.find("a&quot;b\\N \\G `touch"), std::string::npos) << text.substr(0, 3000);
  EXPECT_NE(text.find("line2"), std::string::npos);
  const CliResult dot = Paynter({"draw", model.string(), "-o", (d / "g.dot").string()});
  ASSERT_EQ(dot.status, 0) << dot.out;
  const std::string source = testing::ReadFileBytes(d / "g.dot");
  EXPECT_NE(source.find("a\\\"b\\\\N \\\\G `touch"), std::string::npos) << source;
  EXPECT_EQ(source.find('\r'), std::string::npos);
  for (const char* f : {"X", "Y", "Z"}) EXPECT_FALSE(fs::exists(d / f)) << f;
}

// ---------------------------------------------------------------------------
// Item 3: temporary files have unpredictable names and are created
// exclusively; an output that is not a regular file is written in place.

TEST(Hostile, TemporaryFilesHaveUnpredictableNamesBesideTheTarget) {
  Dir d;
  const std::string target = (d / "out.csv").string();
  const std::string a = TemporaryBeside(target), b = TemporaryBeside(target), g = TemporaryBeside(target, ".gp");
  EXPECT_NE(a, b);
  for (const std::string& t : {a, b, g}) {
    EXPECT_EQ(fs::path(t).parent_path(), d.path()) << t;
    struct stat st;
    ASSERT_EQ(::lstat(t.c_str(), &st), 0) << t;  // created, so nobody can plant it
    EXPECT_TRUE(S_ISREG(st.st_mode));
  }
  EXPECT_EQ(g.substr(g.size() - 3), ".gp");
}

TEST(Hostile, PlantedLinkAtAGuessableNameIsNotFollowed) {
  Dir d;
  const fs::path victim = d / "victim";
  Spit(victim, "precious");
  // The names a write of out.csv used to go through.
  fs::create_symlink(victim, d / (".paynter-" + std::to_string(::getpid()) + "-out.csv.tmp"));
  fs::create_symlink(victim, d / ".paynter-out.csv.tmp");
  WriteFileAtomically((d / "out.csv").string(), "t,x\n0,1\n", "output file");
  EXPECT_EQ(testing::ReadFileBytes(victim), "precious");
  EXPECT_EQ(testing::ReadFileBytes(d / "out.csv"), "t,x\n0,1\n");
  // A new file gets the usual mode (0666 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(fs::status(d / "out.csv").permissions(), static_cast<fs::perms>(0666 & ~mask));
}

TEST(Hostile, FifoOutputIsWrittenInPlace) {
  Dir d;
  const fs::path fifo = d / "out.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  auto read_all = [&] {
    std::string got;
    char buf[256];
    ssize_t n;
    while ((n = ::read(reader, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
    return got;
  };
  WriteFileAtomically(fifo.string(), "t,x\n0,1\n", "output file");
  EXPECT_EQ(read_all(), "t,x\n0,1\n");
  // The plot and drawing path: a finished temporary file copied into the target.
  const std::string tmp = TemporaryBeside(fifo.string());
  Spit(tmp, "image");
  MoveIntoPlace(tmp, fifo.string(), "plot");
  EXPECT_EQ(read_all(), "image");
  EXPECT_FALSE(fs::exists(tmp));
  ::close(reader);
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
}

TEST(Hostile, LinkedOutputIsWrittenThroughNotReplaced) {
  Dir d;
  // A link to a device (as /dev/stdout is) and a link to a regular file.
  fs::create_symlink("/dev/null", d / "null.csv");
  WriteFileAtomically((d / "null.csv").string(), "t\n0\n", "output file");
  EXPECT_TRUE(fs::is_symlink(d / "null.csv"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // A dangling link gets its file.
  fs::create_symlink(d / "later.csv", d / "dangling.csv");
  WriteFileAtomically((d / "dangling.csv").string(), "t\n0\n", "output file");
  EXPECT_TRUE(fs::is_symlink(d / "dangling.csv"));
  EXPECT_EQ(testing::ReadFileBytes(d / "later.csv"), "t\n0\n");
  Spit(d / "real.svg", "old");
  fs::create_symlink(d / "real.svg", d / "link.svg");
  const CliResult r = Paynter({"draw", testing::SourcePath("examples/rlc.yaml"), "-o", (d / "link.svg").string()});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(d / "link.svg"));
  EXPECT_NE(testing::ReadFileBytes(d / "real.svg").find("<svg"), std::string::npos);
  // Nothing is left behind.
  for (const auto& e : fs::directory_iterator(d.path()))
    EXPECT_EQ(e.path().filename().string().rfind(".paynter-", 0), std::string::npos) << e.path();
}

// ---------------------------------------------------------------------------
// Item 2: the native-code cache is used only when nobody else can write it.

const char* kSmallModel = R"yaml(
parameters: {L: 0.5, C: 2}
elements:
  - {name: S, kind: Se, effort: "sin(t)"}
  - {name: J, kind: "1"}
  - {name: I1, kind: I, inertance: L}
  - {name: C1, kind: C, capacitance: C}
bonds:
  - {from: S, to: J}
  - {from: J, to: I1}
  - {from: J, to: C1}
)yaml";

std::unique_ptr<CompiledModel> CompileWith(const CodegenOptions& cg) {
  Model m = LoadModelFromString(kSmallModel, "small.yaml");
  CausalGraph g = AssignCausality(m);
  EquationSystem eqs = BuildEquations(m, g);
  return std::make_unique<CompiledModel>(eqs, cg);
}

double Derivative(const CompiledModel& cm) {
  std::vector<double> x = {0.3, -0.2}, dx(2);
  ModelWorkspace(cm).CalcDerivatives(0.7, x.data(), dx.data());
  return dx[0] + 10 * dx[1];
}

std::vector<fs::path> Objects(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".so") out.push_back(e.path());
  return out;
}

TEST(Hostile, CacheDirectoryWritableByOthersIsNotUsed) {
  Dir d;
  const fs::path cache = d / "cache";
  fs::create_directory(cache);
  fs::permissions(cache, static_cast<fs::perms>(0777));
  CodegenOptions cg;
  cg.backend = Backend::kNative;
  cg.cache_dir = cache.string();
  const auto cm = CompileWith(cg);
  EXPECT_EQ(cm->backend_name(), "native");
  EXPECT_TRUE(Objects(cache).empty()) << "an object was written into a directory others may write";
  EXPECT_NE(cm->codegen_note().find("not cached"), std::string::npos) << cm->codegen_note();
  EXPECT_NE(cm->codegen_note().find("writable by group or others"), std::string::npos) << cm->codegen_note();
  CodegenOptions tape;
  tape.backend = Backend::kTape;
  EXPECT_EQ(Derivative(*cm), Derivative(*CompileWith(tape)));
}

TEST(Hostile, NewCacheDirectoryIsPrivateAndUsed) {
  Dir d;
  CodegenOptions cg;
  cg.backend = Backend::kNative;
  cg.cache_dir = (d / "a" / "cache").string();
  const auto cm = CompileWith(cg);
  EXPECT_EQ(cm->codegen_note(), "");
  EXPECT_EQ(fs::status(cg.cache_dir).permissions(), fs::perms::owner_all);
  EXPECT_FALSE(Objects(cg.cache_dir).empty());
}

// Replaces each cached object by one whose constructor creates `marker`.
void PlantObjects(const fs::path& cache, const fs::path& marker) {
  const fs::path src = cache.parent_path() / "planted.c";
  Spit(src, "#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {\n  FILE* f = fopen(\"" +
                marker.string() + "\", \"w\");\n  if (f) fclose(f);\n}\n");
  for (const fs::path& so : Objects(cache)) {
    std::string out;
    ASSERT_EQ(RunTool({"cc", "-shared", "-fPIC", "-o", so.string(), src.string()}, &out), 0) << out;
  }
}

TEST(Hostile, CachedObjectWritableByOthersIsNotLoaded) {
  Dir d;
  const fs::path cache = d / "cache", marker = d / "planted-code-ran";
  CodegenOptions cg;
  cg.backend = Backend::kAuto;
  cg.cache_dir = cache.string();
  const double expected = Derivative(*CompileWith(cg));
  ASSERT_FALSE(Objects(cache).empty());
  PlantObjects(cache, marker);
  for (const fs::path& so : Objects(cache)) fs::permissions(so, static_cast<fs::perms>(0777));
  const auto cm = CompileWith(cg);
  EXPECT_FALSE(fs::exists(marker)) << "a planted object was loaded";
  EXPECT_EQ(cm->backend_name(), "native");
  EXPECT_NE(cm->codegen_note().find("not loaded"), std::string::npos) << cm->codegen_note();
  EXPECT_NE(cm->codegen_note().find("writable by group or others"), std::string::npos) << cm->codegen_note();
  EXPECT_EQ(Derivative(*cm), expected);
  // Rebuilt in place, private: the next run loads it silently.
  for (const fs::path& so : Objects(cache)) EXPECT_EQ(fs::status(so).permissions(), fs::perms::owner_all) << so;
  EXPECT_EQ(CompileWith(cg)->codegen_note(), "");
}

TEST(Hostile, CachedObjectOfAnotherUserIsNotLoaded) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  Dir d;
  const fs::path cache = d / "cache", marker = d / "planted-code-ran";
  CodegenOptions cg;
  cg.backend = Backend::kNative;
  cg.cache_dir = cache.string();
  CompileWith(cg);
  PlantObjects(cache, marker);
  for (const fs::path& so : Objects(cache)) {
    fs::permissions(so, static_cast<fs::perms>(0755));
    ASSERT_EQ(::chown(so.c_str(), 65534, 65534), 0);
  }
  const auto cm = CompileWith(cg);
  EXPECT_FALSE(fs::exists(marker)) << "a planted object was loaded";
  EXPECT_NE(cm->codegen_note().find("belongs to another user"), std::string::npos) << cm->codegen_note();
}

using testing::ScopedEnv;

TEST(Hostile, NoCacheWithoutHomeAndNoSharedFallback) {
  Dir d;
  const fs::path tmp = d / "tmp";
  fs::create_directory(tmp);
  ScopedEnv home("HOME", nullptr), xdg("XDG_CACHE_HOME", nullptr), tmpdir("TMPDIR", tmp.c_str());
  CodegenOptions cg;
  cg.backend = Backend::kNative;
  const auto cm = CompileWith(cg);
  EXPECT_EQ(cm->backend_name(), "native");
  EXPECT_NE(cm->codegen_note().find("not cached"), std::string::npos) << cm->codegen_note();
  // Nothing stays in the temporary directory (the private build directory is gone).
  EXPECT_TRUE(fs::is_empty(tmp)) << fs::directory_iterator(tmp)->path();
}

// ---------------------------------------------------------------------------
// Items 4 and 5: expressions that crashed the parser or overflowed the stack
// are located errors.

// A model with `text` as the value of parameter k (line 4) and as the inertance
// of element M (line 8) when `in_law`.
std::string ModelWith(const std::string& text, bool in_law = false) {
  return "parameters:\n  m: 1\n  g: 2\n  k: " + (in_law ? std::string("1") : text) + R"(
elements:
  - {name: S, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: )" + (in_law ? text : std::string("m")) + R"(}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
)";
}

Diagnostic ErrorOf(const std::string& yaml) {
  try {
    LoadModelFromString(yaml, "hostile.yaml");
  } catch (const Error& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "no error for:\n" << yaml.substr(0, 300);
  return {};
}

void ExpectLocated(const Diagnostic& d, int line, const std::string& element, const std::string& message) {
  EXPECT_EQ(d.where.file, "hostile.yaml");
  EXPECT_EQ(d.where.line, line) << d.ToString();
  EXPECT_EQ(d.element, element) << d.ToString();
  EXPECT_NE(d.message.find(message), std::string::npos) << d.ToString();
  EXPECT_FALSE(d.expected.empty()) << d.ToString();
  EXPECT_LT(d.ToString().size(), 1000u) << "the message repeats the whole input";
}

TEST(Hostile, FunctionWithoutArgumentIsALocatedError) {
  for (const char* text : {"sin()", "cos( )", "pow()", "atan2()", "2*exp ()", "sqrt(sin())"}) {
    SCOPED_TRACE(text);
    const Diagnostic d = ErrorOf(ModelWith(text));
    ExpectLocated(d, 4, "", "has no argument");
    EXPECT_FALSE(d.hint.empty());
    ExpectLocated(ErrorOf(ModelWith(text, true)), 8, "M", "has no argument");
  }
  ExpectLocated(ErrorOf(ModelWith("atan2(1)")), 4, "", "takes 2 arguments, not 1");
  ExpectLocated(ErrorOf(ModelWith("sin(1, 2)")), 4, "", "takes 1 argument, not 2");
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(Hostile, DeepNestingIsALocatedError) {
  const std::string parens = Repeat("(", 10000) + "1" + Repeat(")", 10000);
  const std::string sines = Repeat("sin(", 10000) + "1" + Repeat(")", 10000);
  const std::string minus = Repeat("-", 50000) + "1";
  const std::string minus_paren = Repeat("-(", 5000) + "1" + Repeat(")", 5000);
  for (const std::string* text : {&parens, &sines, &minus, &minus_paren}) {
    SCOPED_TRACE(text->substr(0, 10));
    const Diagnostic d = ErrorOf(ModelWith(*text));
    ExpectLocated(d, 4, "", "nested too deeply");
    EXPECT_FALSE(d.hint.empty());
    ExpectLocated(ErrorOf(ModelWith(*text, true)), 8, "M", "nested too deeply");
  }
  // At the limit, and with many signs that do not nest, all is well.
  const std::string deepest = Repeat("(", kMaxNesting) + "1" + Repeat(")", kMaxNesting);
  EXPECT_NO_THROW(LoadModelFromString(ModelWith(deepest), "hostile.yaml"));
  EXPECT_NO_THROW(LoadModelFromString(ModelWith(Repeat("(-1)+", 5000) + "1"), "hostile.yaml"));
  EXPECT_NO_THROW(LoadModelFromString(ModelWith(Repeat("sin(-1)*", 5000) + "1e-3"), "hostile.yaml"));
}

TEST(Hostile, LongTextIsALocatedError) {
  ExpectLocated(ErrorOf(ModelWith(Repeat("-", 100000) + "1")), 4, "", "too long");
  ExpectLocated(ErrorOf(ModelWith(Repeat("1+", 60000) + "1")), 4, "", "too long");
  const std::string name(100000, 'a');
  // As a symbol in an expression, as a parameter, element, bond and output name.
  ExpectLocated(ErrorOf(ModelWith(name)), 4, "", "too long");
  ExpectLocated(ErrorOf(ModelWith("m*" + name, true)), 8, "M", "too long");
  // (YAML keys longer than 1024 characters are YAML errors of their own.)
  const std::string key(1000, 'k');
  ExpectLocated(ErrorOf("parameters:\n  " + key + ": 1\n" + ModelWith("1").substr(11)), 2, "", "too long");
  std::string yaml = ModelWith("1");
  ExpectLocated(ErrorOf(yaml.replace(yaml.find("name: M"), 7, "name: " + name)), 8, "", "too long");
  yaml = ModelWith("1") + "  - {name: " + name + ", from: J, to: S}\n";
  ExpectLocated(ErrorOf(yaml), 12, "", "too long");
  yaml = ModelWith("1") + "outputs:\n  " + key + ": k\n";
  ExpectLocated(ErrorOf(yaml), 13, "", "too long");
  // A name at the limit is fine.
  const std::string longest(kMaxNameLength, 'b');
  EXPECT_NO_THROW(LoadModelFromString("parameters:\n  " + longest + ": 1\n" + ModelWith(longest).substr(11),
                                      "hostile.yaml"));
}

TEST(Hostile, MultibodyAndVectorTextsAreCheckedToo) {
  const std::string body = R"(
multibody:
  bodies:
    - {name: B, mass: MASS, inertia: [1, 2, 3]}
)";
  auto with_mass = [&](const std::string& mass) {
    std::string y = body;
    return y.replace(y.find("MASS"), 4, mass);
  };
  ExpectLocated(ErrorOf(with_mass("sin()")), 4, "B", "has no argument");
  ExpectLocated(ErrorOf(with_mass(Repeat("(", 10000) + "1" + Repeat(")", 10000))), 4, "B", "nested too deeply");
  std::string named = body;
  named.replace(named.find("name: B"), 7, "name: " + std::string(100000, 'B'));
  ExpectLocated(ErrorOf(named), 4, "", "too long");
  // A vector law nested 10,000 brackets deep.
  const std::string vec = R"(
elements:
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: ")" + Repeat("[", 10000) + "1" + Repeat("]", 10000) + R"("}
bonds:
  - {name: bJ, from: w, to: J, dim: 3}
)";
  ExpectLocated(ErrorOf(vec), 4, "J", "nested too deeply");
}

// ---------------------------------------------------------------------------
// Item 10: a law that is zero as written, where the equations divide by it, and
// a joint axis too large to normalize naively, are located errors, not GiNaC's
// division by zero or NaN.

Diagnostic EquationsErrorOf(const std::string& yaml) {
  try {
    Model m = LoadModelFromString(yaml, "hostile.yaml");
    CausalGraph g = AssignCausality(m);
    BuildEquations(m, g);
  } catch (const Error& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

TEST(Hostile, ZeroLawThatIsDividedByIsALocatedError) {
  struct Case {
    const char* source;  // drives the element
    const char* element; // line 4: the element named X
    const char* key;
  };
  const Case cases[] = {
      {"Se, effort: 1", "I, inertance: 0", "inertance"},     // f = p/I
      {"Se, effort: 1", "I, inertance: 0*t", "inertance"},
      {"Sf, flow: 1", "C, capacitance: 0", "capacitance"},   // e = q/C
      {"Se, effort: 1", "C, stiffness: 0", "stiffness"},     // q = e/k
      {"Se, effort: 1", "R, resistance: 0", "resistance"},   // f = e/R
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.element);
    const std::string junction = std::string(c.source).rfind("Sf", 0) == 0 ? "\"0\"" : "\"1\"";
    const std::string yaml = std::string("elements:\n  - {name: S, kind: ") + c.source + "}\n  - {name: J, kind: " +
                             junction + "}\n  - {name: X, kind: " + c.element +
                             "}\nbonds:\n  - {from: S, to: J}\n  - {from: J, to: X}\n";
    const Diagnostic d = EquationsErrorOf(yaml);
    ExpectLocated(d, 4, "X", "is zero");
    EXPECT_NE(d.got.find(c.key), std::string::npos) << d.ToString();
    EXPECT_FALSE(d.hint.empty());
  }
  for (const char* kind : {"TF", "GY"}) {
    const std::string yaml = std::string("elements:\n  - {name: S, kind: Se, effort: 1}\n  - {name: X, kind: ") + kind +
                             ", ratio: 0}\n  - {name: R1, kind: R, resistance: 1}\nbonds:\n  - {from: S, to: X}\n"
                             "  - {from: X, to: R1}\n";
    ExpectLocated(EquationsErrorOf(yaml), 3, "X", "ratio is zero");
  }
}

TEST(Hostile, MultibodyZeroMassInertiaAndHugeAxes) {
  auto model = [](const std::string& body, const std::string& axis) {
    return "multibody:\n  gravity: [0, 0, -9.81]\n  bodies:\n    - {name: B, " + body +
           "}\n  joints:\n    - {name: J, type: revolute, body1: ground, body2: B, axis: " + axis + "}\n";
  };
  ExpectLocated(EquationsErrorOf(model("mass: 0, inertia: [1, 2, 3]", "[0, 1, 0]")), 4, "B", "mass of body 'B' is zero");
  ExpectLocated(EquationsErrorOf(model("mass: 1, inertia: [1, 0, 3]", "[0, 1, 0]")), 4, "B", "inertia Iyy of body 'B' is zero");
  ExpectLocated(EquationsErrorOf(model("mass: 1, inertia: [1, 2, 3]", "[1e400, 0, 0]")), 6, "J", "not a finite number");
  // A huge axis is a direction like any other.
  const auto huge = testing::SimulateYaml(model("mass: 1, inertia: [1, 2, 3]", "[0, 1e300, 1e300]"), 0.1);
  const auto unit = testing::SimulateYaml(model("mass: 1, inertia: [1, 2, 3]", "[0, 1, 1]"), 0.1);
  EXPECT_EQ(huge.solution.rows.back(), unit.solution.rows.back());
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// ---------------------------------------------------------------------------
// A sign after another operator binds to the operand that follows it, as in
// mathematics (2*-3+10 is 4, not 2*(-3+10)), wherever an expression is read.

struct Valued {
  const char* text;
  double value;
};

const Valued kSignedExpressions[] = {
    {"2*-3+10", 4},
    {"1 - -2 + 3", 6},
    {"2^-1*4", 2},
    {"-2^2", -4},
    {"2^-1", 0.5},
    {"a*-b^2", -12},
    {"-a^2", -9},
    {"(-a)^2", 9},
    {"2^3^2", 512},
    {"2^-3^2", 1.0 / 512},
    {"-2^-2", -0.25},
    {"2^+2", 4},
    {"a/-b*3", -4.5},
    {"10/-2/-5", 1},
    {"a - -b*2", 7},
    {"+a*+b", 6},
    {"a*--b", 6},
    {"-a*-b", 6},
    {" - 3", -3},
    {"1 - 2 - 3", -4},
    {"2/4/8", 0.0625},
    {"-(a+b)*-(a-b)", 5},
    {"2*(-3+10)", 14},
    {"((1 - -2) * -(3 - 5))^2", 36},
    {"-(-(-(1)))*-(2)", 2},
    {"sin(-pi/2)*-2", 2},
    {"exp(-1)*-e1 + 1", 1 - 4 / std::exp(1.0)},
    {"atan2(-1, -1)*-4/pi", 3},
    {"pow(-2, 2) - -pow(2, -1)", 4.5},
    {"sqrt(4)*-sqrt(9)^2", -18},
    {"abs(-a*-b - 10)", 4},
    {"cos(0)-(-(-1))", 0},
    {"1e-3*-2", -0.002},
    {"2.5E+2 - -1e2", 350},
    {"-1e-3^2", -1e-6},
    {"2*-3e-1+1", 0.4},
    {"1.5e1/-3E0", -5},
    {"e1*-k_e2", -2},
    {"E^-1*-e1", -0.4},
    {"k_e2*-(e1-1)^2/-3", 1.5},
    {"-e1^k_e2*-2", 4},
    {"exp(e1-e1)*-E^2^-1", -std::sqrt(10.0)},
};

// A model whose parameter k, source effort, initial momentum, definition and
// output are all `text`.
std::string SignedModel(const std::string& text) {
  return "parameters:\n  a: 3\n  b: 2\n  e1: 4\n  k_e2: 0.5\n  E: 10\n  k: \"" + text + R"("
elements:
  - {name: S, kind: Se, effort: ")" + text + R"("}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: 1, initial: ")" + text + R"("}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
definitions:
  d: ")" + text + R"("
outputs:
  o: ")" + text + R"("
)";
}

double Evaluate(const GiNaC::ex& e, const Model& m) {
  const GiNaC::ex v = GiNaC::evalf(e.subs(m.ParameterValues()));
  if (!GiNaC::is_a<GiNaC::numeric>(v)) {
    ADD_FAILURE() << "not a number: " << v;
    return NAN;
  }
  return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
}

TEST(Hostile, SignAfterAnOperatorBindsToItsOperand) {
  for (const Valued& c : kSignedExpressions) {
    SCOPED_TRACE(c.text);
    const Model m = LoadModelFromString(SignedModel(c.text), "signs.yaml");
    const double tol = 1e-12 * (1 + std::fabs(c.value));
    ASSERT_EQ(m.parameters.back().name, "k");
    EXPECT_NEAR(m.parameters.back().value, c.value, tol) << "parameter";
    EXPECT_NEAR(Evaluate(m.elements[m.FindElement("S")].law, m), c.value, tol) << "law";
    EXPECT_NEAR(Evaluate(*m.elements[m.FindElement("M")].initial, m), c.value, tol) << "initial value";
    EXPECT_NEAR(Evaluate(m.definitions.at(0).value, m), c.value, tol) << "definition";
    EXPECT_NEAR(Evaluate(m.outputs.at(0).value, m), c.value, tol) << "output";
  }
}

TEST(Hostile, MultibodyAndVectorFieldsReadSignsAlike) {
  // A free body: mass 2 (2^-1*4), position x 4 (2*-3+10), velocity x 6
  // (1 - -2 + 3): x = 4 + 6 t, momentum 12.
  const std::string yaml = R"(
multibody:
  bodies:
    - {name: B, mass: "2^-1*4", inertia: [1, 1, "2*-1+3"], position: ["2*-3+10", 0, 0], velocity: ["1 - -2 + 3", 0, 0]}
outputs:
  x: B_x
  px: p_B_mx
)";
  const auto r = testing::SimulateYaml(yaml, 1.0);
  ASSERT_EQ(r.solution.columns.at(1), "x");
  EXPECT_NEAR(r.solution.rows.front()[1], 4, 1e-12);
  EXPECT_NEAR(r.solution.rows.back()[1], 10, 1e-9);
  EXPECT_NEAR(r.solution.rows.back()[2], 12, 1e-9);
  // A vector law, one component each.
  const Model v = LoadModelFromString(R"(
elements:
  - {name: S, kind: Se, effort: [1, "2*-1+3", "2^-1*2"]}
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: ["2*-3+10", "1 - -2 + 3", "2^-1*4"], initial: ["-2^2", "2^-1", "3*-2^2"]}
bonds:
  - {name: bS, from: S, to: w, dim: 3}
  - {name: bJ, from: w, to: J, dim: 3}
)",
                                      "vector.yaml");
  const double inertance[] = {4, 6, 2}, initial[] = {-4, 0.5, -12};
  for (int i = 0; i < 3; ++i) {
    const Element& e = v.elements[v.FindElement(std::string("J_") + "xyz"[i])];
    EXPECT_NEAR(Evaluate(e.law, v), inertance[i], 1e-12) << e.name;
    EXPECT_NEAR(Evaluate(*e.initial, v), initial[i], 1e-12) << e.name;
    EXPECT_NEAR(Evaluate(v.elements[v.FindElement(std::string("S_") + "xyz"[i])].law, v), 1, 1e-12);
  }
}

TEST(Hostile, SimulateReadsSignsAsMathematicsDoes) {
  // m = 4, effort 6, inertance 2, p(0) = 2: p = 2 + 6 t, f = p/2.
  Dir d;
  Spit(d / "signs.yaml", R"(
parameters:
  m: "2*-3+10"
elements:
  - {name: S, kind: Se, effort: "1 - -2 + 3"}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: "2^-1*m", initial: "2^-1*4"}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
definitions:
  v: "f_M*-2+10"
outputs:
  p: p_M
  y: "p_M*-1+10"
  z: "v^-1*-m"
)");
  const CliResult r = Paynter({"simulate", (d / "signs.yaml").string(), "--t-end", "1", "-o", (d / "o.csv").string()});
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream csv(testing::ReadFileBytes(d / "o.csv"));
  std::string header, line, last;
  std::getline(csv, header);
  EXPECT_EQ(header, "t,p,y,z");
  while (std::getline(csv, line))
    if (!line.empty()) last = line;
  double t, p, y, z;
  ASSERT_EQ(std::sscanf(last.c_str(), "%lf,%lf,%lf,%lf", &t, &p, &y, &z), 4) << last;
  EXPECT_NEAR(t, 1, 1e-12);
  EXPECT_NEAR(p, 8, 1e-9);
  EXPECT_NEAR(y, 2, 1e-9);
  EXPECT_NEAR(z, -4.0 / (-8 + 10), 1e-9);  // f = 4, v = 2
}

TEST(Hostile, SyntaxErrorsNameTheCharacter) {
  for (const char* text : {"2*", "1 +* 2", "(1", "1)", "2x", "1e", "1.2.3", "sin", "m(2)", "2 $ 3", "m g", "**2"}) {
    SCOPED_TRACE(text);
    const Diagnostic d = ErrorOf(ModelWith(std::string("\"") + text + "\""));
    ExpectLocated(d, 4, "", "cannot parse");
    EXPECT_NE(d.got.find(text), std::string::npos) << d.ToString();
  }
  const Diagnostic d = ErrorOf(ModelWith("\"(1 + 2\""));
  EXPECT_NE(d.got.find("character 1"), std::string::npos) << d.ToString();
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// ---------------------------------------------------------------------------
// Item 7: a stiff model under dopri5 is found stiff early and said so, with
// the hint to use bdf; --max-steps sets the step budget.

// x' = (cos t - x)/(R C), R C = 1e-6: dopri5 needs about 3 million steps for 10 s.
const char* kStiffCircuit = R"yaml(
elements:
  - {name: S, kind: Se, effort: "cos(t)"}
  - {name: J, kind: "1"}
  - {name: R1, kind: R, resistance: 1}
  - {name: C1, kind: C, capacitance: 1e-6}
bonds:
  - {from: S, to: J}
  - {from: J, to: R1}
  - {from: J, to: C1}
)yaml";

TEST(Hostile, StiffModelUnderDopri5IsReportedEarly) {
  Dir d;
  Spit(d / "stiff.yaml", kStiffCircuit);
  const std::string model = (d / "stiff.yaml").string(), out = (d / "o.csv").string();
  const double start = testing::ChildrenCpuSeconds();
  const CliResult r = Paynter({"simulate", model, "--t-end", "10", "--backend", "tape", "-o", out});
  const double seconds = testing::ChildrenCpuSeconds() - start;  // CPU time (test_util.h)
  EXPECT_EQ(r.exit_code(), 1) << r.out;
  EXPECT_NE(r.out.find("the problem is stiff"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--method bdf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--max-steps"), std::string::npos) << r.out;
  EXPECT_LT(seconds, 2.0 * testing::kSlowdown) << r.out;
  EXPECT_FALSE(fs::exists(out));
  // bdf solves it: x follows cos t.
  const CliResult b = Paynter({"simulate", model, "--t-end", "10", "--method", "bdf", "-o", out});
  ASSERT_EQ(b.status, 0) << b.out;
  // A short run is allowed to finish, and --stats says it is stiff.
  const CliResult s = Paynter({"simulate", model, "--t-end", "0.02", "--stats", "-o", out});
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_NE(s.out.find("found the problem stiff"), std::string::npos) << s.out;
  // --max-steps: a budget too small for the run, and a budget that is no budget.
  const CliResult m = Paynter({"simulate", model, "--t-end", "0.02", "--max-steps", "500", "-o", out});
  EXPECT_EQ(m.exit_code(), 1) << m.out;
  EXPECT_NE(m.out.find("max_steps = 500 is exhausted"), std::string::npos) << m.out;
  const CliResult z = Paynter({"simulate", model, "--t-end", "0.02", "--max-steps", "0", "-o", out});
  EXPECT_EQ(z.exit_code(), 1) << z.out;
  EXPECT_NE(z.out.find("max_steps"), std::string::npos) << z.out;
  // A large enough budget lets dopri5 go on through a stiff stretch.
  const CliResult g = Paynter({"simulate", model, "--t-end", "0.5", "--max-steps", "200000", "-o", out});
  EXPECT_EQ(g.status, 0) << g.out;
  const CliResult n = Paynter({"simulate", model, "--t-end", "0.5", "-o", out});
  EXPECT_EQ(n.exit_code(), 1) << n.out;
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// ---------------------------------------------------------------------------
// Item 9: masses, inertias and capacitances are positive, where they are given:
// in the model's parameters, in a law, in a body, and on the command line.

// Parameters m (line 2) and c (line 3), an inertance (line 7) and a
// capacitance (line 8).
std::string PhysicalModel(const std::string& m, const std::string& c, const std::string& inertance = "m",
                          const std::string& capacitance = "c") {
  return "parameters:\n  m: " + m + "\n  c: \"" + c + "\"\nelements:\n  - {name: S, kind: Se, effort: 1}\n"
         "  - {name: J, kind: \"1\"}\n  - {name: M, kind: I, inertance: \"" + inertance +
         "\"}\n  - {name: K, kind: C, capacitance: \"" + capacitance + "\"}\nbonds:\n  - {from: S, to: J}\n"
         "  - {from: J, to: M}\n  - {from: J, to: K}\n";
}

TEST(Hostile, NonPositiveMassesAndCapacitancesAreLocatedErrors) {
  EXPECT_NO_THROW(LoadModelFromString(PhysicalModel("2", "0.5"), "hostile.yaml"));
  // As parameters: the error is at the parameter.
  Diagnostic d = ErrorOf(PhysicalModel("-1", "0.5"));
  ExpectLocated(d, 2, "", "parameter 'm' is negative, but it is the inertance of element 'M'");
  EXPECT_FALSE(d.hint.empty());
  ExpectLocated(ErrorOf(PhysicalModel("0", "0.5")), 2, "", "parameter 'm' is zero");
  ExpectLocated(ErrorOf(PhysicalModel("2", "1 - m")), 3, "", "parameter 'c' is negative, but it is the capacitance");
  ExpectLocated(ErrorOf(PhysicalModel("2", "0*m")), 3, "", "parameter 'c' is zero");
  // As literals and expressions: at the element.
  ExpectLocated(ErrorOf(PhysicalModel("2", "0.5", "-3")), 7, "M", "the inertance of I 'M' is negative");
  ExpectLocated(ErrorOf(PhysicalModel("2", "0.5", "m - 5")), 7, "M", "the inertance of I 'M' is negative");
  ExpectLocated(ErrorOf(PhysicalModel("2", "0.5", "m", "c*(1 - m)")), 8, "K", "the capacitance of C 'K' is negative");
  // A body's mass and inertia, as numbers and as parameters.
  auto body = [](const std::string& mass, const std::string& inertia) {
    return "parameters:\n  mb: -4\nmultibody:\n  bodies:\n    - {name: B, mass: " + mass + ", inertia: " + inertia +
           "}\n";
  };
  ExpectLocated(ErrorOf(body("-2", "[1, 2, 3]")), 5, "B", "the mass of body 'B' is negative");
  ExpectLocated(ErrorOf(body("1", "[1, -2, 3]")), 5, "B", "the principal inertia Iyy of body 'B' is negative");
  ExpectLocated(ErrorOf(body("mb", "[1, 2, 3]")), 2, "", "parameter 'mb' is negative, but it is the inertance");
  ExpectLocated(ErrorOf(body("1", "[1, 2, mb]")), 2, "", "parameter 'mb' is negative, but it is the inertance");
}

TEST(Hostile, ParamOverridesOfMassesAreChecked) {
  Dir d;
  Spit(d / "m.yaml", PhysicalModel("2", "0.5", "m", "3*c"));
  const std::string model = (d / "m.yaml").string(), out = (d / "o.csv").string();
  auto run = [&](std::vector<std::string> params) {
    std::vector<std::string> args = {"simulate", model, "--t-end", "1", "--backend", "tape", "-o", out};
    for (const auto& p : params) {
      args.push_back("--param");
      args.push_back(p);
    }
    return Paynter(args);
  };
  EXPECT_EQ(run({"m=3", "c=0.1"}).exit_code(), 0);
  fs::remove(out);
  struct Case {
    const char* param;
    const char* message;
  };
  for (const Case& c : {Case{"m=-1", "--param m=-1: parameter 'm' is negative, but it is the inertance of element 'M'"},
                        Case{"m=0", "--param m=0: parameter 'm' is zero"},
                        Case{"c=-0.5", "the capacitance of C 'K' is negative with --param c=-0.5"},
                        Case{"m=nan", "--param m=nan: the value is not a finite number"},
                        Case{"m=-inf", "not a finite number"},
                        Case{"c=1e999", "bad --param"}}) {
    SCOPED_TRACE(c.param);
    const CliResult r = run({c.param});
    EXPECT_EQ(r.exit_code(), 1) << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // The library refuses a value that is not finite, too.
  Model m = LoadModelFromString(PhysicalModel("2", "0.5"), "m.yaml");
  CompiledModel cm(BuildEquations(m, AssignCausality(m)), CodegenOptions{Backend::kTape});
  ModelWorkspace ws(cm);
  EXPECT_THROW(ws.SetParameter("m", NAN), Error);
  EXPECT_THROW(ws.SetParameter("c", INFINITY), Error);
  EXPECT_NO_THROW(ws.SetParameter("c", 2));
  EXPECT_EQ(ws.GetParameter("c"), 2);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// ---------------------------------------------------------------------------
// Item 11 (part): a directory as the model, duplicate keys, usage errors.

TEST(Hostile, DirectoryAsTheModelSaysSo) {
  Dir d;
  try {
    LoadModel(d.path().string());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().where.file, d.path().string());
    EXPECT_NE(e.diagnostic().message.find("is a directory"), std::string::npos) << e.what();
  }
  const CliResult r = Paynter({"check", d.path().string()});
  EXPECT_EQ(r.exit_code(), 1) << r.out;
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("empty"), std::string::npos) << r.out;
}

TEST(Hostile, DuplicateKeysAreLocatedErrors) {
  // In a block element (line 7 repeats line 6's key), in a flow element, in a
  // bond, at the top level and under parameters.
  const std::string block = R"(
elements:
  - {name: S, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - name: M
    inertance: 1
    inertance: 2
    kind: I
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
)";
  Diagnostic d = ErrorOf(block);
  ExpectLocated(d, 7, "M", "duplicate key 'inertance'");
  EXPECT_NE(d.got.find("6:5"), std::string::npos) << d.ToString();
  std::string flow = ModelWith("1");
  flow.replace(flow.find("effort: 1}"), 10, "effort: 1, effort: -1}");
  ExpectLocated(ErrorOf(flow), 6, "S", "duplicate key 'effort'");
  std::string bond = ModelWith("1");
  bond.replace(bond.find("to: M}"), 6, "to: M, to: S}");
  ExpectLocated(ErrorOf(bond), 11, "", "duplicate key 'to'");
  ExpectLocated(ErrorOf(ModelWith("1") + "bonds: []\n"), 12, "", "duplicate key 'bonds'");
  ExpectLocated(ErrorOf("parameters:\n  m: 1\n  m: 2\n" + ModelWith("1").substr(11)), 3, "", "duplicate key 'm'");
  // The same key in different mappings is fine.
  EXPECT_NO_THROW(LoadModelFromString(ModelWith("1"), "hostile.yaml"));
}

TEST(Hostile, UsageErrorsExitOne) {
  const std::string model = testing::SourcePath("examples/rlc.yaml");
  const std::vector<std::vector<std::string>> usage = {
      {},
      {"frobnicate"},
      {"simulate"},
      {"simulate", model},
      {"simulate", model, "--t-end", "abc", "-o", "x.csv"},
      {"simulate", model, "--t-end", "1", "-o", "x.csv", "--no-such-option"},
      {"simulate", model, "--t-end", "1", "-o", "x.csv", "--backend", "gpu"},
      {"draw", model, "-o", "x.svg", "--highlight-path", "-3"},
      {"check", model, "extra"},
  };
  for (const auto& args : usage) {
    const CliResult r = Paynter(args);
    EXPECT_EQ(r.exit_code(), 1) << (args.empty() ? "" : args[0]) << ": " << r.out;
    EXPECT_FALSE(r.out.empty());
  }
  for (const std::vector<std::string>& help : {std::vector<std::string>{"--help"}, {"simulate", "--help"}}) {
    const CliResult r = Paynter(help);
    EXPECT_EQ(r.exit_code(), 0) << r.out;
    EXPECT_NE(r.out.find("simulate"), std::string::npos) << r.out;
  }
}

TEST(Hostile, ConstantNamesOfTheAlgebraLibraryAreOrdinaryParameters) {
  // I, Euler, Catalan and E are the user's parameters, not the imaginary unit
  // or constants of the algebra library (a closed-chain model named its
  // inertia I and got complex numbers).
  const std::string yaml = R"(
name: names
parameters: {I: 2, Euler: 3, Catalan: 5, E: 7}
elements:
  - {name: s, kind: Se, effort: 1}
  - {name: j, kind: '1'}
  - {name: m, kind: I, inertance: I}
bonds:
  - [s, j]
  - [j, m]
outputs:
  a: I + Euler + Catalan + E
  v: f_j
)";
  const auto r = testing::SimulateYaml(yaml, 1.0);
  EXPECT_DOUBLE_EQ(r.solution.Column("a").back(), 17.0);
  EXPECT_NEAR(r.solution.Column("v").back(), 0.5, 1e-9);  // v = t / I
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// ---------------------------------------------------------------------------
// Item 6: no text makes the work grow without bound: powers of numbers, huge
// exponents, vector bonds, many parameters.

TEST(Hostile, PowersOfNumbersStayBounded) {
  // Beyond the range of a double: a located error, at once (it was exact
  // arithmetic on a number of 10^12 bits).
  for (const char* text : {"2^1000000000000", "pow(10, 10^12)", "(2^1000)^(2^1000)", "2^-1000000000000"}) {
    SCOPED_TRACE(text);
    const Diagnostic d = ErrorOf(ModelWith(text));
    ExpectLocated(d, 4, "", "parameter 'k' has no finite value");
    EXPECT_NE(d.got.find("beyond the range of numbers"), std::string::npos) << d.ToString();
    if (std::string(text).find(',') == std::string::npos)  // unquoted in a flow mapping
      ExpectLocated(ErrorOf(ModelWith(text, true)), 8, "M", "has no finite value");
  }
  // Within it, powers keep their value, exact or not.
  auto k = [](const std::string& text) {
    const Model m = LoadModelFromString(ModelWith(text), "hostile.yaml");
    return m.parameters[2].value;
  };
  EXPECT_EQ(k("2^1000 / 2^999"), 2.0);
  EXPECT_EQ(k("(1/2)^-3"), 8.0);
  EXPECT_DOUBLE_EQ(k("10^300 * 10^-299"), 10.0);
  EXPECT_DOUBLE_EQ(k("1.5^2000 / 1.5^1999"), 1.5);
  EXPECT_EQ(k("(-1)^1000000000001"), -1.0);
  EXPECT_EQ(k("1^1000000000000"), 1.0);
}

TEST(Hostile, HugeIntegerExponentOfAnExpressionIsBounded) {
  // (1 + t/10)^n held (1/10)^n exactly; now the exponent is a floating-point
  // number past 1024, and the law is what it says.
  const std::string yaml = R"(
elements:
  - {name: S, kind: MSe, effort: (1 + t/10)^1000000000000}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: (1 + t)^-2000}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
)";
  const auto start = std::chrono::steady_clock::now();
  const Model m = LoadModelFromString(yaml, "hostile.yaml");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  auto at = [&](const GiNaC::ex& law, double t) {
    const GiNaC::ex v = GiNaC::evalf(law.subs(m.time == t));
    return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
  };
  EXPECT_EQ(at(m.elements[0].law, 0), 1.0);
  EXPECT_NEAR(at(m.elements[2].law, 1e-3), std::pow(1.001, -2000), 1e-12);
}

TEST(Hostile, HugeBondDimensionIsALocatedError) {
  std::string yaml = ModelWith("1");
  yaml.replace(yaml.find("{from: J, to: M}"), 16, "{from: J, to: M, dim: 1000000}");
  const Diagnostic d = ErrorOf(yaml);
  EXPECT_EQ(d.where.line, 11) << d.ToString();
  EXPECT_NE(d.message.find("bond dimension 1000000 is too large"), std::string::npos) << d.ToString();
  EXPECT_NE(d.expected.find(std::to_string(kMaxBondDimension)), std::string::npos) << d.ToString();
}

TEST(Hostile, ManyParametersLoadInLinearTime) {
  // 20,000 parameters, each from the one before: the parameter table was
  // rebuilt and substituted per parameter (48 s for 10,000).
  const int n = 20000;
  std::string yaml = "parameters:\n  p0: 1\n";
  for (int i = 1; i < n; ++i) yaml += "  p" + std::to_string(i) + ": p" + std::to_string(i - 1) + " + 1\n";
  yaml += "elements:\n  - {name: S, kind: Se, effort: p" + std::to_string(n - 1) + R"(}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: p0}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
)";
  const auto start = std::chrono::steady_clock::now();
  const Model m = LoadModelFromString(yaml, "hostile.yaml");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
  ASSERT_EQ(m.parameters.size(), static_cast<size_t>(n));
  EXPECT_EQ(m.parameters.back().value, n);  // p_i = i + 1
}

// ---------------------------------------------------------------------------
// Item 8: --param reaches everything derived from the parameter.

// k and the initial momentum are derived from m; the outputs show them.
const char* kDerivedModel = R"(
parameters:
  m: 2
  k: 50*m
  p0: 3*m
  mass: m/2
elements:
  - {name: S, kind: Se, effort: k}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: mass, initial: p0}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
outputs:
  kk: k
  p: p_M
)";

TEST(Hostile, ParamOverrideReachesDerivedParametersAndInitialValues) {
  Dir d;
  Spit(d / "m.yaml", kDerivedModel);
  const std::string out = (d / "o.csv").string();
  const CliResult r = Paynter({"simulate", (d / "m.yaml").string(), "--t-end", "1", "--dt-out", "0.5", "--backend",
                               "tape", "--param", "m=3", "-o", out});
  ASSERT_EQ(r.exit_code(), 0) << r.out;
  std::istringstream csv(testing::ReadFileBytes(out));
  std::string header, row0, row1, row2;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  std::getline(csv, row2);
  EXPECT_EQ(header, "t,kk,p");
  double t = 0, kk = 0, p = 0;
  ASSERT_EQ(std::sscanf(row0.c_str(), "%lf,%lf,%lf", &t, &kk, &p), 3) << row0;
  EXPECT_EQ(kk, 50 * 3.0);  // k = 50*m with m = 3
  EXPECT_EQ(p, 3 * 3.0);    // p(0) = p0 = 3*m
  ASSERT_EQ(std::sscanf(row2.c_str(), "%lf,%lf,%lf", &t, &kk, &p), 3) << row2;
  EXPECT_NEAR(p, 9 + 150 * t, 1e-9);  // dp/dt = k
  // In the library: the spec's parameters take the values before it is built.
  ModelSpec spec = ReadModelSpec(kDerivedModel, "m.yaml");
  ApplyParameterOverrides(&spec, {{"m", 3}});
  const Model m = BuildModel(spec);
  EXPECT_EQ(m.parameters[1].value, 150);
  EXPECT_EQ(m.parameters[3].value, 1.5);
  EXPECT_TRUE(m.parameters[0].overridden);
  const EquationSystem eqs = BuildEquations(m, AssignCausality(m));
  ASSERT_EQ(eqs.initial_state.size(), 1u);
  EXPECT_EQ(eqs.initial_state[0], 9);
  EXPECT_EQ(eqs.state_inertia[0], 1.5);
}

TEST(Hostile, ParamOverrideMovesTheStartOfAMechanism) {
  // B4: the slider starts at s = c on the arm, at x = a + c.
  Dir d;
  const std::string out = (d / "b4.csv").string();
  const CliResult r = Paynter({"simulate", testing::SourcePath("examples/B4_spatial_arm.yaml"), "--t-end", "0.001",
                               "--backend", "tape", "--param", "c=0.25", "-o", out});
  ASSERT_EQ(r.exit_code(), 0) << r.out;
  const Model b4 = LoadModel(testing::SourcePath("examples/B4_spatial_arm.yaml"));
  double a = 0;
  for (const auto& p : b4.parameters)
    if (p.name == "a") a = p.value;
  std::istringstream csv(testing::ReadFileBytes(out));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  std::vector<std::string> names, values;
  for (auto [text, list] : {std::pair{header, &names}, std::pair{row, &values}}) {
    std::stringstream ss(text);
    for (std::string cell; std::getline(ss, cell, ',');) list->push_back(cell);
  }
  ASSERT_EQ(names.size(), values.size());
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return std::stod(values[i]);
    ADD_FAILURE() << "no column " << name;
    return std::nan("");
  };
  EXPECT_NEAR(column("s"), 0.25, 1e-12);
  EXPECT_NEAR(column("X3"), a + 0.25, 1e-12);
}

TEST(Hostile, ParamOverrideOfAnUnknownNameOrOfADerivedMass) {
  Dir d;
  Spit(d / "m.yaml", kDerivedModel);
  const std::string out = (d / "o.csv").string();
  auto run = [&](const std::string& param) {
    return Paynter({"simulate", (d / "m.yaml").string(), "--t-end", "1", "--backend", "tape", "--param", param, "-o",
                    out});
  };
  CliResult r = run("n=3");
  EXPECT_EQ(r.exit_code(), 1) << r.out;
  EXPECT_NE(r.out.find("--param n=3: the model has no parameter 'n'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'm'?"), std::string::npos) << r.out;
  // The mass m/2 turns negative: the error says which override made it so.
  r = run("m=-4");
  EXPECT_EQ(r.exit_code(), 1) << r.out;
  EXPECT_NE(r.out.find("parameter 'mass' is negative, but it is the inertance of element 'M' with --param m=-4"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(out));
}

// ---------------------------------------------------------------------------
// Item 11 (the rest): accurate messages for values without a value, forward
// and recursive parameters; control characters escaped; runtime errors name
// the model's file.

TEST(Hostile, NanInfinityAndDivisionByZeroSaySo) {
  for (const char* text : {".nan", ".NaN", ".inf", "-.inf", "1/0", "1/(2 - 2)", "0^-1", "log(0)"}) {
    SCOPED_TRACE(text);
    const Diagnostic d = ErrorOf(ModelWith(text));
    ExpectLocated(d, 4, "", "parameter 'k' has no finite value");
    EXPECT_EQ(d.message.find("cannot parse"), std::string::npos) << d.ToString();
    EXPECT_EQ(d.hint.find("parentheses"), std::string::npos) << d.ToString();
    ExpectLocated(ErrorOf(ModelWith(text, true)), 8, "M", "has no finite value");
  }
  EXPECT_NE(ErrorOf(ModelWith(".nan")).got.find("YAML's not-a-number"), std::string::npos);
  EXPECT_NE(ErrorOf(ModelWith("2*(1/0)")).got.find("division by zero at character 5"), std::string::npos);
}

TEST(Hostile, ForwardAndRecursiveParametersSaySo) {
  const std::string tail = ModelWith("1").substr(ModelWith("1").find("elements:"));
  Diagnostic d = ErrorOf("parameters:\n  a: 2*b\n  b: 1\n" + tail);
  ExpectLocated(d, 2, "", "parameter 'a' uses parameter 'b', which is declared after it");
  EXPECT_NE(d.got.find("hostile.yaml:3"), std::string::npos) << d.ToString();
  EXPECT_NE(d.hint.find("declare 'b' before 'a'"), std::string::npos) << d.ToString();
  EXPECT_EQ(d.ToString().find("did you mean"), std::string::npos) << d.ToString();
  d = ErrorOf("parameters:\n  a: 1\n  b: b + a\n" + tail);
  ExpectLocated(d, 3, "", "parameter 'b' refers to itself");
  EXPECT_EQ(d.ToString().find("did you mean"), std::string::npos) << d.ToString();
  // Two that refer to each other: the first names the second, declared after it.
  ExpectLocated(ErrorOf("parameters:\n  a: b\n  b: a\n" + tail), 2, "", "uses parameter 'b', which is declared after");
}

TEST(Hostile, ControlCharactersAreEscapedInMessagesAndReports) {
  const std::string esc = "\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m";
  // A parameter name, an element kind, a model name: shown escaped.
  for (const std::string& yaml :
       {"parameters:\n  \"m" + esc + "\": 1\n" + ModelWith("1").substr(11),
        ModelWith("1").replace(ModelWith("1").find("kind: Se"), 8, "kind: \"S" + esc + "\"")}) {
    try {
      LoadModelFromString(yaml, "hostile.yaml");
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
      EXPECT_EQ(what.find('\x07'), std::string::npos) << what;
      EXPECT_EQ(what.find("\xc2\x9b"), std::string::npos) << what;
      EXPECT_NE(what.find("\\x1b]0;pwned\\x07"), std::string::npos) << what;
      EXPECT_NE(e.diagnostic().got.find('\x1b'), std::string::npos);  // the diagnostic keeps the text as given
    }
  }
  EXPECT_EQ(std::string(Error("a\x1b[31mb\nc").what()), "a\\x1b[31mb\nc");
  Dir d;
  Spit(d / "m.yaml", "name: \"x" + esc + "\"\n" + ModelWith("1"));
  const CliResult r = Paynter({"check", (d / "m.yaml").string()});
  EXPECT_EQ(r.exit_code(), 0) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model 'x\\x1b]0;pwned"), std::string::npos) << r.out;
}

TEST(Hostile, RuntimeErrorsNameTheModelFile) {
  Dir d;
  Spit(d / "blowup.yaml", R"(
elements:
  - {name: S, kind: MSe, effort: 1/(1 - t)^3}
  - {name: J, kind: "1"}
  - {name: M, kind: I, inertance: 1}
bonds:
  - {from: S, to: J}
  - {from: J, to: M}
)");
  const std::string model = (d / "blowup.yaml").string();
  for (const char* method : {"rk4", "dopri5"}) {
    SCOPED_TRACE(method);
    const CliResult r = Paynter({"simulate", model, "--t-end", "2", "--method", method, "--backend", "tape", "-o",
                                 (d / "o.csv").string()});
    EXPECT_EQ(r.exit_code(), 1) << r.out;
    EXPECT_EQ(r.out.find("<model>"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(model + ": error: "), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// Item 6: an output interval that would hold more rows than memory can is
// refused at once, before anything is compiled.
TEST(Hostile, AbsurdNumberOfOutputRowsIsRefused) {
  Dir d;
  Spit(d / "m.yaml", ModelWith("1"));
  const std::string out = (d / "o.csv").string();
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"simulate", (d / "m.yaml").string(), "--t-end", "1", "--dt-out", "1e-300", "-o", out},
        std::vector<std::string>{"compare", (d / "m.yaml").string(), "--t-end", "10", "--dt-out", "1e-9"}}) {
    SCOPED_TRACE(command[0]);
    const auto start = std::chrono::steady_clock::now();
    const CliResult r = Paynter(command);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
    EXPECT_EQ(r.exit_code(), 1) << r.out;
    EXPECT_NE(r.out.find("output rows"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hint:     use --dt-out"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
}

}  // namespace
}  // namespace paynter
