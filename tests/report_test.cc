// paynter report: the pages of B1, B3 and B4 load in headless Chromium with no
// console error and draw (drawing, plots, equations, 3D view, a hover shows an
// element's equations: the page's own self-test, run by #selftest and written
// into the DOM); a hostile model name injects nothing; the standalone LaTeX
// document is whole.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "paynter/html_report.h"
#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out;
};

Result Shell(const std::string& cmd) {
  Result r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

fs::path OutDir() {
  const fs::path d = fs::path(PAYNTER_BINARY_DIR) / "report_test";
  fs::create_directories(d);
  return d;
}

std::string Report(const std::string& model, const std::string& t_end, const fs::path& out) {
  const Result r = Shell(std::string(PAYNTER_EXE) + " report " + model + " --t-end " + t_end + " -o " + out.string() +
                       " 2>&1");
  EXPECT_EQ(r.code, 0) << r.out;
  return testing::ReadFileBytes(out);
}

// The page's self-test as Chromium runs it: the JSON the page writes into
// <pre id="selftest">, or "" when the page wrote none.
std::string SelfTest(const fs::path& page) {
  const char* env = std::getenv("CHROMIUM");
  const std::string chromium = env && *env ? env : "chromium";
  const Result r = Shell("timeout 90 " + chromium +
                       " --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 --dump-dom 'file://" +
                       fs::absolute(page).string() + "#selftest' 2>/dev/null");
  const std::string open = "<pre id=\"selftest\">";
  const size_t a = r.out.find(open);
  if (a == std::string::npos) return "";
  return r.out.substr(a + open.size(), r.out.find("</pre>", a) - a - open.size());
}

void ExpectPagePasses(const fs::path& page, const std::vector<std::string>& checks) {
  const std::string result = SelfTest(page);
  ASSERT_FALSE(result.empty()) << page << ": the page wrote no self-test (is chromium installed? scripts/setup.sh)";
  EXPECT_NE(result.find("{\"ok\":true,"), std::string::npos) << result;
  for (const auto& c : checks) EXPECT_NE(result.find("{\"name\":\"" + c + "\",\"ok\":true"), std::string::npos) << c << ": " << result;
}

TEST(Report, B1LoadsAndDraws) {
  const fs::path out = OutDir() / "B1.html";
  const std::string html = Report(testing::SourcePath("examples/B1_pendulum.yaml"), "5", out);
  EXPECT_EQ(Count(html, "<script"), 5u);  // error capture, data, uPlot, KaTeX, the page
  // Nothing is fetched: the page forbids it.
  EXPECT_NE(html.find("content=\"default-src 'none';"), std::string::npos);
  ExpectPagePasses(out, {"drawing", "plots", "hover", "equations", "console"});
}

TEST(Report, B3LoadsAndDraws) {
  const fs::path out = OutDir() / "B3.html";
  Report(testing::SourcePath("examples/B3_quick_return.yaml"), "1", out);
  ExpectPagePasses(out, {"drawing", "plots", "hover", "equations", "console"});
}

TEST(Report, B4LoadsDrawsAndAnimates) {
  const fs::path out = OutDir() / "B4.html";
  const std::string html = Report(testing::SourcePath("examples/B4_spatial_arm.yaml"), "1", out);
  EXPECT_NE(html.find("pose_slider_R33"), std::string::npos);
  ExpectPagePasses(out, {"drawing", "components", "plots", "hover", "equations", "3d drawn", "3d frames differ", "3d plays",
                         "console"});
}

// A model with two levels of submodels: a drawing per level, the blocks of
// level 1 opened one level in level 2 (the page's "levels" check opens one).
TEST(Report, NestedSubmodelsOpenOneLevelAtATime) {
  const fs::path out = OutDir() / "nested.html";
  const std::string html = Report(testing::SourcePath("examples/dc_drive_nested.yaml"), "0.5", out);
  EXPECT_NE(html.find("\"deeper\":[{\"level\":2"), std::string::npos);
  EXPECT_NE(html.find("\"name\":\"drive.motor\""), std::string::npos);
  ExpectPagePasses(out, {"drawing", "components", "levels", "plots", "hover", "console"});
}

TEST(Report, HostileModelNameInjectsNothing) {
  const fs::path dir = OutDir();
  const fs::path model = dir / "hostile.yaml";
  const std::string name =
      "evil</script><script>window.paynterInjected=1</script><img src=x onerror=\\\"window.paynterInjected=2\\\">"
      "'&amp;<!--<svg onload=alert(1)>";
  std::ofstream(model) << "name: \"" << name << "\"\n"
                       << "parameters: {k: 2}\n"
                       << "elements:\n"
                       << "  - {name: a, kind: C, capacitance: 1/k, initial: 1}\n"
                       << "  - {name: j, kind: \"0\"}\n"
                       << "  - {name: r, kind: R, resistance: k}\n"
                       << "bonds: [[j, a], [j, r]]\n"
                       << "outputs: {q: q_a}\n";
  const fs::path out = dir / "hostile.html";
  const std::string html = Report(model.string(), "1", out);
  // The name is data: no element of it appears as markup anywhere in the file
  // (the data holds no '<' or '>' at all; the libraries' code is not searched).
  EXPECT_EQ(Count(html, "<script"), 5u);
  const std::string open = "<script type=\"application/json\" id=\"paynter-data\">";
  const size_t a = html.find(open);
  ASSERT_NE(a, std::string::npos);
  const std::string data = html.substr(a + open.size(), html.find("</script>", a) - a - open.size());
  EXPECT_EQ(data.find_first_of("<>"), std::string::npos);
  EXPECT_EQ(html.substr(0, a).find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<svg onload"), std::string::npos);
  EXPECT_EQ(html.find("paynterInjected=1</script>"), std::string::npos);
  EXPECT_NE(html.find("evil\\u003c/script\\u003e"), std::string::npos);
  ExpectPagePasses(out, {"drawing", "plots", "no injection", "console"});
}

TEST(Report, JsonStringEscapesWhatCouldEndTheElement) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("</script><!--&"), "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
  EXPECT_EQ(JsonString("x\ny\x01"), "\"x\\ny\\u0001\"");
  EXPECT_EQ(JsonString("\xe2\x80\xa8\xe2\x80\xa9 \xce\xb8"), "\"\\u2028\\u2029 \xce\xb8\"");
}

TEST(Report, MissingLibrariesAreAClearErrorAndNoFile) {
  const fs::path out = OutDir() / "missing.html";
  fs::remove(out);
  const Result r = Shell("PAYNTER_WEB_DIR=/nonexistent " + std::string(PAYNTER_EXE) + " report " +
                       testing::SourcePath("examples/B1_pendulum.yaml") + " --t-end 1 -o " + out.string() + " 2>&1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("npm ci"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

// The standalone LaTeX document: a preamble, the document, braces balanced,
// no double subscript (a name's parts are one subscript list).
TEST(Report, StandaloneLatexIsWhole) {
  for (const char* m : {"examples/B1_pendulum.yaml", "examples/B3_quick_return.yaml", "examples/B4_spatial_arm.yaml"}) {
    const Result r = Shell(std::string(PAYNTER_EXE) + " equations --latex --standalone " + testing::SourcePath(m));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.rfind("\\documentclass", 0), 0u) << m;
    EXPECT_NE(r.out.find("\\usepackage{amsmath}"), std::string::npos);
    EXPECT_NE(r.out.find("\\begin{document}"), std::string::npos);
    EXPECT_EQ(r.out.substr(r.out.size() - 15), "\\end{document}\n");
    EXPECT_EQ(Count(r.out, "\\begin{align}"), Count(r.out, "\\end{align}"));
    int depth = 0;
    bool sub_open = false;  // after a subscript at this brace depth, before the next operator
    std::string line_of_double;
    for (size_t i = 0; i < r.out.size(); ++i) {
      const char c = r.out[i];
      if (c == '%') {
        while (i < r.out.size() && r.out[i] != '\n') ++i;
        continue;
      }
      if (c == '{') ++depth;
      if (c == '}') --depth;
      ASSERT_GE(depth, 0) << m << " at " << i;
      if (c == '_' && depth == 0) {
        if (sub_open && line_of_double.empty()) line_of_double = r.out.substr(r.out.rfind('\n', i) + 1, 80);
        sub_open = true;
      } else if (depth == 0 && (c == ' ' || c == '+' || c == '-' || c == '=' || c == '&' || c == '\\' || c == '^' ||
                                c == '\n' || c == '(' || c == ')' || c == ',')) {
        sub_open = false;
      }
    }
    EXPECT_EQ(depth, 0) << m;
    EXPECT_TRUE(line_of_double.empty()) << m << ": a double subscript: " << line_of_double;
  }
}

}  // namespace
}  // namespace paynter
