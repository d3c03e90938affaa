// paynter studio's server, as a browser meets it: the program paynter-studio
// started on a scratch directory, asked over HTTP (cpp-httplib's client).
// The security rules (token, Host, paths that leave the directory, symbolic
// links), atomic saving and the refusal to save a model that does not load
// over one that does, check's located errors and the drawing, a run against
// its closed-form solution, a slider's run on the prepared model, and a clean
// stop by POST /api/shutdown and by SIGINT.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

// A model whose charge decays as q0 exp(-t/(R C)): the run is checked against it.
const char* kRc =
    "name: rc\n"
    "parameters:\n"
    "  R: 2\n"
    "  C: 0.5\n"
    "elements:\n"
    "  - {name: cap, kind: C, capacitance: C, initial: 1}\n"
    "  - {name: j, kind: \"0\"}\n"
    "  - {name: res, kind: R, resistance: R}\n"
    "bonds: [[j, cap], [j, res]]\n"
    "outputs: {q: q_cap}\n";

// The same with an unknown kind on line 8.
const char* kBroken =
    "name: rc\n"
    "parameters:\n"
    "  R: 2\n"
    "  C: 0.5\n"
    "elements:\n"
    "  - {name: cap, kind: C, capacitance: C, initial: 1}\n"
    "  - {name: j, kind: \"0\"}\n"
    "  - {name: res, kind: Q, resistance: R}\n"
    "bonds: [[j, cap], [j, res]]\n"
    "outputs: {q: q_cap}\n";

// The studio program on a directory: its pid, port and token.
class Studio {
 public:
  explicit Studio(const fs::path& path) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      execl(PAYNTER_EXE, PAYNTER_EXE, "studio", path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    // The first line: "paynter studio: http://127.0.0.1:PORT/?token=TOKEN".
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    out_ = out[0];
    first_line_ = line;
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+))"))) {
      port_ = std::stoi(m[1]);
      token_ = m[2];
    }
  }
  ~Studio() {
    if (pid_ > 0 && !stopped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  int port() const { return port_; }
  const std::string& token() const { return token_; }
  const std::string& first_line() const { return first_line_; }
  pid_t pid() const { return pid_; }
  // The exit status once it has stopped (waits).
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    stopped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  // A client that carries the token unless told not to.
  httplib::Client Client(bool with_token = true) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    if (with_token) c.set_default_headers({{"X-Paynter-Token", token_}});
    return c;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  bool stopped_ = false;
  std::string token_, first_line_;
};

fs::path Scratch(const std::string& name) {
  const fs::path d = fs::path(PAYNTER_BINARY_DIR) / "studio_test" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string Encoded(const std::string& s) { return httplib::detail::encode_query_param(s); }

class StudioServer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = Scratch(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "rc.yaml") << kRc;
    studio_ = std::make_unique<Studio>(dir_);
    ASSERT_GT(studio_->port(), 0) << "no address printed: " << studio_->first_line();
    ASSERT_EQ(studio_->token().size(), 32u);
  }
  void TearDown() override {
    if (!studio_ || studio_->port() <= 0) return;
    auto c = studio_->Client();
    auto r = c.Post("/api/shutdown", "", "text/plain");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(studio_->Wait(), 0);
  }
  fs::path dir_;
  std::unique_ptr<Studio> studio_;
};

TEST_F(StudioServer, EveryRequestNeedsTheToken) {
  auto bare = studio_->Client(false);
  for (const char* path : {"/", "/api/files", "/api/file?path=rc.yaml"}) {
    auto r = bare.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path;
    EXPECT_EQ(r->body.find("rc"), std::string::npos) << path << ": " << r->body;
  }
  auto r = bare.Post("/api/save?path=rc.yaml", "name: x\n", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), kRc);
  r = bare.Post("/api/shutdown", "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  // A wrong token of the right length, in the header or the query.
  std::string wrong = studio_->token();
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  r = bare.Get("/?token=" + wrong);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  r = bare.Get("/api/files", {{"X-Paynter-Token", wrong}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  // The right one in the query (the page's address) or the header.
  r = bare.Get("/?token=" + studio_->token());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("<title>paynter studio</title>"), std::string::npos);
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'none'"), std::string::npos);
  r = studio_->Client().Get("/api/files");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"rc.yaml\""), std::string::npos) << r->body;
}

TEST_F(StudioServer, OnlyItsOwnHostIsAnswered) {
  auto c = studio_->Client();
  const std::string port = std::to_string(studio_->port());
  for (const std::string& host : std::vector<std::string>{"evil.example", "evil.example:" + port, "127.0.0.2:" + port, "127.0.0.1.evil.example",
                                 "127.0.0.1:" + std::to_string(studio_->port() + 1), "localhost.:" + port, ""}) {
    auto r = c.Get("/api/files", {{"Host", host}});
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 403) << "Host: " << host;
  }
  for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "127.0.0.1"}) {
    auto r = c.Get("/api/files", {{"Host", host}});
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 200) << "Host: " << host;
  }
}

TEST_F(StudioServer, PathsStayInsideItsDirectory) {
  const fs::path outside = dir_.parent_path() / "outside_PathsStayInsideItsDirectory";
  fs::create_directories(outside);
  std::ofstream(outside / "secret.yaml") << "secret: 42\n";
  fs::create_symlink(outside / "secret.yaml", dir_ / "link.yaml");
  fs::create_directory_symlink(outside, dir_ / "linkdir");
  auto c = studio_->Client();
  for (const std::string& path : std::vector<std::string>{"../outside_PathsStayInsideItsDirectory/secret.yaml", (outside / "secret.yaml").string(),
                                 "link.yaml", "linkdir/secret.yaml", "sub/../../outside_PathsStayInsideItsDirectory/secret.yaml",
                                 "", "nonexistent.yaml"}) {
    auto r = c.Get("/api/file?path=" + Encoded(path));
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path << ": " << r->body;
    EXPECT_EQ(r->body.find("42"), std::string::npos) << path;
  }
  for (const std::string& path : std::vector<std::string>{"../outside_PathsStayInsideItsDirectory/new.yaml", (outside / "new.yaml").string(),
                                 "link.yaml", "linkdir/new.yaml", "rc.txt", "nodir/new.yaml"}) {
    auto r = c.Post("/api/save?path=" + Encoded(path), kRc, "text/plain");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path << ": " << r->body;
  }
  EXPECT_FALSE(fs::exists(outside / "new.yaml"));
  EXPECT_EQ(testing::ReadFileBytes(outside / "secret.yaml"), "secret: 42\n");
  // The listing leaves out what lies behind links.
  auto r = c.Get("/api/files");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body.find("secret"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("link"), std::string::npos) << r->body;
  // A subdirectory inside is fine.
  fs::create_directory(dir_ / "sub");
  r = c.Post("/api/save?path=sub/new.yaml", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "sub/new.yaml"), kRc);
}

TEST_F(StudioServer, SavingIsAtomicAndKeepsAGoodFileFromABrokenText) {
  auto c = studio_->Client();
  struct stat before, after;
  ASSERT_EQ(stat((dir_ / "rc.yaml").c_str(), &before), 0);
  const std::string edited = std::string(kRc) + "# edited\n";
  auto r = c.Post("/api/save?path=rc.yaml", edited, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), edited);
  // A new file renamed into place (not written over the old one), and no
  // temporary left beside it.
  ASSERT_EQ(stat((dir_ / "rc.yaml").c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".paynter", 0), std::string::npos) << e.path();
  // A text that does not load is not saved over a file that does...
  r = c.Post("/api/save?path=rc.yaml", kBroken, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409) << r->body;
  EXPECT_NE(r->body.find("\"needs_force\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"line\":8"), std::string::npos) << r->body;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), edited);
  // ...unless asked to.
  r = c.Post("/api/save?path=rc.yaml&force=1", kBroken, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), kBroken);
  // Over a file that does not load either, or as a new file, it is saved.
  r = c.Post("/api/save?path=rc.yaml", std::string(kBroken) + "# again\n", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/api/save?path=draft.yaml", kBroken, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "draft.yaml"), kBroken);
}

// The graphical edits as edits of the text (src/studio/text_edit.h, tested
// there): asked over HTTP, answered with the whole new text; a refused edit
// is a 400 with a located diagnostic; the file is not touched.
TEST_F(StudioServer, EditsAnswerTheNewTextAndTheLibraryListsPorts) {
  auto c = studio_->Client();
  auto r = c.Post("/api/edit?path=rc.yaml&op=flip&from=j&to=res", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  std::string flipped = kRc;
  flipped.replace(flipped.find("[j, res]"), 8, "[res, j]");
  EXPECT_NE(r->body.find("\"text\":\"" + std::regex_replace(std::regex_replace(flipped, std::regex("\""), "\\\""),
                                                            std::regex("\n"), "\\n") + "\""),
            std::string::npos)
      << r->body;
  r = c.Post("/api/edit?path=rc.yaml&op=parameter&name=R&value=" + Encoded("R0*2"), kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("  R: R0*2\\n"), std::string::npos) << r->body;
  r = c.Post("/api/edit?path=rc.yaml&op=element&element=nobody&key=initial&value=1", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("no element nobody"), std::string::npos) << r->body;
  r = c.Post("/api/edit?path=rc.yaml&op=layout&at=cap=1,x", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), kRc);
  r = c.Get("/api/library");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("{\"use\":\"lib:electrical/dc_motor\""), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"ports\":[{\"name\":\"p\",\"required\":true},{\"name\":\"n\",\"required\":false},"
                         "{\"name\":\"shaft\",\"required\":true}]"),
            std::string::npos)
      << r->body;
}

TEST_F(StudioServer, CheckLocatesAnErrorAndDrawsAGoodModel) {
  auto c = studio_->Client();
  auto r = c.Post("/api/check?path=rc.yaml", kBroken, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"ok\":false"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"line\":8"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("'Q'"), std::string::npos) << r->body;  // the message names what was found
  EXPECT_NE(r->body.find("\"hint\":\""), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("\"hint\":\"\""), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"file\":\"rc.yaml\""), std::string::npos) << r->body;  // named as the page knows it
  EXPECT_EQ(r->body.find("\"svg\""), std::string::npos);
  // The text checked is the request's, not the file's.
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), kRc);
  r = c.Post("/api/check?path=rc.yaml", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"svg\":\"\\u003c"), std::string::npos);
  EXPECT_NE(r->body.find("\"states\":1"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("{\"id\":\"el2\",\"name\":\"res\",\"kind\":\"R\",\"line\":8,\"here\":true,"
                        "\"law_key\":\"resistance\",\"law\":\"R\",\"initial\":\"\"}"),
            std::string::npos)
      << r->body;
  EXPECT_NE(r->body.find("{\"id\":\"bond1\",\"name\":\"b2\",\"from\":\"j\",\"to\":\"res\",\"line\":9,\"here\":true}"),
            std::string::npos)
      << r->body;
  EXPECT_NE(r->body.find("\"layout\":{\"kept\":false,\"positions\":{\"cap\":["), std::string::npos) << r->body;
  // A causal conflict is an error at its element's line: two effort sources on a 0-junction.
  const std::string conflict =
      "name: clash\nelements:\n  - {name: a, kind: Se, effort: 1}\n  - {name: b, kind: Se, effort: 2}\n"
      "  - {name: j, kind: \"0\"}\nbonds: [[a, j], [b, j]]\n";
  r = c.Post("/api/check?path=clash.yaml", conflict, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":false"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("causal conflict"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"svg\""), std::string::npos) << "a graph with a conflict is drawn";
  // Model text reaches the page only as data: no '<' in any answer.
  const std::string hostile = "name: \"x</script><img src=x onerror=alert(1)>\"\nelements:\n  - {name: a, kind: C, capacitance: 1}\n"
                              "bonds: []\n";
  r = c.Post("/api/check?path=rc.yaml", hostile, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("application/json", 0), 0u);
  EXPECT_EQ(r->body.find('<'), std::string::npos) << r->body;
}

TEST_F(StudioServer, RunsTheEditorsTextAndSlidersReuseThePreparedModel) {
  auto c = studio_->Client();
  // q = exp(-t/(R C)); at t = 1 with R C = 1: e^-1.
  auto r = c.Post("/api/simulate?path=rc.yaml&t-end=1&rtol=1e-10&atol=1e-12&dt-out=0.5", kRc, "text/plain");
  ASSERT_TRUE(r);
  ASSERT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"columns\":[\"t\",\"q\"]"), std::string::npos) << r->body;
  std::smatch m;
  const std::regex last(R"("data":\[\[[^\]]*\],\[([^\]]*)\]\])");
  ASSERT_TRUE(std::regex_search(r->body, m, last)) << r->body;
  auto final_value = [](const std::string& list) { return std::stod(list.substr(list.rfind(',') + 1)); };
  EXPECT_NEAR(final_value(m[1]), std::exp(-1.0), 1e-8) << r->body;
  EXPECT_NE(r->body.find("\"prepared\":true"), std::string::npos);
  // A slider: R = 4 on the prepared model (R is settable): exp(-1/2).
  r = c.Post("/api/simulate?path=rc.yaml&t-end=1&rtol=1e-10&atol=1e-12&dt-out=0.5&param=R%3D4", kRc, "text/plain");
  ASSERT_TRUE(r);
  ASSERT_TRUE(std::regex_search(r->body, m, last)) << r->body;
  EXPECT_NEAR(final_value(m[1]), std::exp(-0.5), 1e-8) << r->body;
  EXPECT_NE(r->body.find("\"prepared\":false"), std::string::npos) << r->body;
  // The file was neither read nor changed, and no temporary is left.
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "rc.yaml"), kRc);
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().filename(), "rc.yaml");
  // A run that fails says why, at the model's name.
  r = c.Post("/api/simulate?path=rc.yaml&t-end=1&param=nope%3D1", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":false"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("nope"), std::string::npos) << r->body;
  // Every row goes to the page: a run that would send more than a million is refused before it starts.
  r = c.Post("/api/simulate?path=rc.yaml&t-end=1&dt-out=1e-7", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":false"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("more than a million rows"), std::string::npos) << r->body;
  r = c.Post("/api/simulate?path=rc.yaml&t-end=abc", kRc, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  r = c.Post("/api/simulate?path=rc.yaml&t-end=1", kBroken, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"line\":8"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"file\":\"rc.yaml\""), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find(".paynter"), std::string::npos) << "the temporary's name is not shown: " << r->body;
}

// The columns and values of a simulate answer: {"columns":[...],"data":[[...],...]}.
std::map<std::string, std::vector<double>> RunColumns(const std::string& body) {
  std::map<std::string, std::vector<double>> out;
  std::vector<std::string> names;
  const size_t c = body.find("\"columns\":[");
  if (c == std::string::npos) return out;
  const std::string list = body.substr(c + 11, body.find(']', c) - c - 11);
  for (size_t at = 0; (at = list.find('"', at)) != std::string::npos;) {
    const size_t end = list.find('"', at + 1);
    names.push_back(list.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  size_t at = body.find("\"data\":[");
  if (at == std::string::npos) return out;
  at += 8;
  for (const auto& name : names) {
    at = body.find('[', at) + 1;
    const size_t end = body.find(']', at);
    std::stringstream ss(body.substr(at, end - at));
    std::string v;
    while (std::getline(ss, v, ',')) out[name].push_back(std::stod(v));
    at = end + 1;
  }
  return out;
}

// A mechanism runs with its poses (the 3D view's columns pose_*) and its
// bodies and joints named; a bond graph with neither. B1 in 3D: the bar turns
// about z by gamma (R_WB's first column is (cos gamma, sin gamma, 0)), its
// pivot stays at the origin, its centre L/2 = 0.5 from it.
TEST_F(StudioServer, AMechanismsRunCarriesItsPosesForThe3dView) {
  const std::string text = testing::ReadSourceFile("examples/B1_pendulum_3d.yaml");
  std::ofstream(dir_ / "B1_pendulum_3d.yaml") << text;
  auto c = studio_->Client();
  for (const char* param : {"", "&param=B%3D2"}) {  // a slider's run too
    SCOPED_TRACE(param);
    auto r = c.Post(std::string("/api/simulate?path=B1_pendulum_3d.yaml&t-end=1&rtol=1e-10&atol=1e-12&dt-out=0.1") +
                        param,
                    text, "text/plain");
    ASSERT_TRUE(r);
    ASSERT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
    EXPECT_NE(r->body.find("\"mechanism\":{\"bodies\":[{\"name\":\"bar\"}],\"joints\":[{\"name\":\"pivot\",\"type\":"
                           "\"revolute\",\"body1\":\"ground\",\"body2\":\"bar\"}]}"),
              std::string::npos)
        << r->body;
    auto cols = RunColumns(r->body);
    for (const char* name : {"pose_bar_x", "pose_bar_y", "pose_bar_z", "pose_bar_R11", "pose_bar_R21", "pose_bar_R33",
                             "pose_bar_mass", "pose_bar_I1", "pose_bar_I3", "pose_pivot_x", "pose_pivot_y",
                             "pose_pivot_z", "gamma"})
      ASSERT_TRUE(cols.count(name)) << name << " missing: " << r->body.substr(0, 600);
    const size_t n = cols["t"].size();
    ASSERT_EQ(n, 11u);
    EXPECT_GT(std::fabs(cols["gamma"][n - 1]), 0.1);  // it has swung
    for (size_t i = 0; i < n; ++i) {
      const double g = cols["gamma"][i];
      EXPECT_NEAR(cols["pose_bar_R11"][i], std::cos(g), 1e-6) << "row " << i;
      EXPECT_NEAR(cols["pose_bar_R21"][i], std::sin(g), 1e-6) << "row " << i;
      EXPECT_NEAR(cols["pose_bar_R33"][i], 1.0, 1e-6) << "row " << i;
      EXPECT_NEAR(std::hypot(cols["pose_pivot_x"][i], cols["pose_pivot_y"][i], cols["pose_pivot_z"][i]), 0.0, 1e-6);
      EXPECT_NEAR(std::hypot(cols["pose_bar_x"][i], cols["pose_bar_y"][i], cols["pose_bar_z"][i]), 0.5, 1e-6);
    }
    EXPECT_EQ(cols["pose_bar_mass"][0], 1.0);
    EXPECT_EQ(cols["pose_bar_I1"][0], 0.083);
  }
  // A bond graph: no pose columns, no mechanism.
  auto r = c.Post("/api/simulate?path=rc.yaml&t-end=1", kRc, "text/plain");
  ASSERT_TRUE(r);
  ASSERT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("pose_"), std::string::npos) << r->body.substr(0, 300);
  EXPECT_EQ(r->body.find("\"mechanism\""), std::string::npos) << r->body.substr(0, 300);
  EXPECT_EQ(RunColumns(r->body).size(), 2u);
}

// A run started from the page reports how far it is while it runs and stops
// when asked: the answer says so and carries none of its rows; nothing is
// left in the directory, and the prepared model serves the next run.
TEST_F(StudioServer, ALongRunReportsItsProgressAndStopsWhenAsked) {
  // rk4 at its 1 ms step to t = 1e9: 1e12 steps, far more than a test waits for.
  std::string answer;
  std::thread run([&] {
    auto c = studio_->Client();
    c.set_read_timeout(600, 0);
    auto r = c.Post("/api/simulate?path=rc.yaml&t-end=1e9&method=rk4&max-steps=1e13&run=long1", kRc, "text/plain");
    answer = r ? r->body : "no answer";
  });
  auto c = studio_->Client();
  // Asked while it runs (the run holds the pipeline; these do not wait for it).
  std::string progress;
  double t_first = -1;
  std::smatch m;
  const std::regex t_of(R"("t":([-0-9.e+]+))");
  for (int k = 0; k < 6000; ++k) {  // until it integrates: at most 10 min of polling
    auto r = c.Get("/api/progress");
    ASSERT_TRUE(r);
    progress = r->body;
    if (progress.find("\"phase\":\"integrating\"") != std::string::npos && std::regex_search(progress, m, t_of) &&
        std::stod(m[1]) > 0) {
      t_first = std::stod(m[1]);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(t_first, 0) << progress;
  EXPECT_NE(progress.find("\"running\":true,\"id\":\"long1\""), std::string::npos) << progress;
  EXPECT_NE(progress.find("\"t_end\":1000000000"), std::string::npos) << progress;
  // The time moves on (the solver reports after every step).
  double t_later = t_first;
  for (int k = 0; k < 6000 && t_later <= t_first; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto r = c.Get("/api/progress");
    ASSERT_TRUE(r);
    if (std::regex_search(r->body, m, t_of)) t_later = std::stod(m[1]);
  }
  EXPECT_GT(t_later, t_first);
  // Another run's id stops nothing; this run's does.
  auto r = c.Post("/api/stop?run=other", "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"stopping\":false"), std::string::npos) << r->body;
  r = c.Post("/api/stop?run=long1", "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"stopping\":true"), std::string::npos) << r->body;
  run.join();
  EXPECT_NE(answer.find("\"ok\":false,\"stopped\":true"), std::string::npos) << answer;
  EXPECT_NE(answer.find("the run was stopped at t = "), std::string::npos) << answer;
  EXPECT_EQ(answer.find("\"columns\""), std::string::npos) << "no rows of a stopped run: " << answer;
  r = c.Get("/api/progress");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"running\":false"), std::string::npos) << r->body;
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().filename(), "rc.yaml");
  // No run goes on: a stop asks nothing.
  r = c.Post("/api/stop", "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"stopping\":false"), std::string::npos) << r->body;
  // The next run is whole, on the model prepared for the stopped one: q(1) = e^-1.
  r = c.Post("/api/simulate?path=rc.yaml&t-end=1&rtol=1e-10&atol=1e-12&dt-out=0.5", kRc, "text/plain");
  ASSERT_TRUE(r);
  ASSERT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"prepared\":false"), std::string::npos) << r->body;
  const std::regex last(R"("data":\[\[[^\]]*\],\[[^\]]*,([^\],]*)\]\])");
  ASSERT_TRUE(std::regex_search(r->body, m, last)) << r->body;
  EXPECT_NEAR(std::stod(m[1]), std::exp(-1.0), 1e-8) << r->body;
}

// An element just added, with no bond yet, does not load; the studio still
// draws the text's elements and bonds (without causality) so that the new
// element can be chosen and bonded, and names the error at its line.
TEST_F(StudioServer, AnElementNotBondedYetIsDrawnWithItsErrorAtItsLine) {
  auto c = studio_->Client();
  std::string text = kRc;
  const std::string with = "  - {name: res, kind: R, resistance: R}\n";
  text.replace(text.find(with), with.size(), with + "  - {name: C1, kind: C, capacitance: 1}\n");  // line 9
  auto r = c.Post("/api/check?path=rc.yaml", text, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":false"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("dangling element"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"line\":9"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"sketch\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"svg\":\"\\u003c"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("{\"id\":\"el3\",\"name\":\"C1\",\"kind\":\"C\",\"line\":9,\"here\":true,"
                         "\"law_key\":\"capacitance\",\"law\":\"1\",\"initial\":\"\"}"),
            std::string::npos)
      << r->body;
  EXPECT_NE(r->body.find("id=\\\"el3\\\""), std::string::npos) << "C1 is in the drawing: " << r->body;
  EXPECT_EQ(r->body.find("\"states\""), std::string::npos) << "no causality, no equations: " << r->body;
  // A bond to C1 makes the model whole.
  text.replace(text.find("bonds: [[j, cap], [j, res]]"), 27, "bonds: [[j, cap], [j, res], [j, C1]]");
  r = c.Post("/api/check?path=rc.yaml", text, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"sketch\":false"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\"elements\":4,\"bonds\":3,\"integral\":1,\"derivative\":1"), std::string::npos)
      << r->body;  // C1 beside cap on the 0-junction: in derivative causality
  // What cannot even be drawn (a bond to no element) is an error without a drawing.
  text.replace(text.find("[j, C1]"), 7, "[j, C2]");
  r = c.Post("/api/check?path=rc.yaml", text, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("unknown element 'C2'"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("\"svg\""), std::string::npos) << r->body;
}

// Submodels are drawn as `paynter draw` draws them: each instance a block,
// a bond at a port drawn with the port's name; the check lists the blocks
// (their use, line and joined ports) and the bonds at ports as written, and
// such a bond is flipped in its line like any other.
TEST_F(StudioServer, SubmodelsAreDrawnAsBlocksWithTheirPorts) {
  auto c = studio_->Client();
  const std::string text =
      "name: lib_rc\n"
      "elements:\n"
      "  - {name: src, kind: Se, effort: 1}\n"
      "  - {name: j, kind: \"1\"}\n"
      "  - {name: cap, kind: C, capacitance: 1}\n"
      "instances:\n"
      "  - {name: r1, use: \"lib:electrical/resistor\"}\n"
      "bonds:\n"
      "  - [src, j]\n"
      "  - [j, cap]\n"
      "  - [j, r1.p]\n";
  auto r = c.Post("/api/check?path=lib_rc.yaml", text, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"ok\":true"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("id=\\\"comp0\\\""), std::string::npos) << "r1 as a block: " << r->body;
  const size_t svg_at = r->body.find("\"svg\":\""), svg_end = r->body.find("\",\"sketch\"");
  ASSERT_LT(svg_at, svg_end) << r->body;
  const std::string svg = r->body.substr(svg_at, svg_end - svg_at);
  EXPECT_EQ(svg.find("r1.res"), std::string::npos) << "r1's elements are inside its block: " << svg;
  EXPECT_NE(r->body.find("{\"id\":\"comp0\",\"name\":\"r1\",\"kind\":\"submodel\",\"use\":\"lib:electrical/resistor\","
                         "\"line\":7,\"joined\":[\"p\"]}"),
            std::string::npos)
      << r->body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r->body, m, std::regex(R"re(\{"id":"(mb\d+)","name":"[^"]*","from":"j","to":"r1.p","line":11,"here":true\})re")))
      << r->body;
  EXPECT_NE(r->body.find("id=\\\"" + m[1].str() + "\\\""), std::string::npos) << "the bond at r1.p drawn: " << r->body;
  r = c.Post("/api/edit?path=lib_rc.yaml&op=flip&from=j&to=r1.p&line=11", text, "text/plain");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("bonds:\\n  - [src, j]\\n  - [j, cap]\\n  - [r1.p, j]\\n\""), std::string::npos) << r->body;
}

TEST(Studio, StopsCleanlyOnSigint) {
  const fs::path dir = Scratch("sigint");
  Studio s(dir);
  ASSERT_GT(s.port(), 0) << s.first_line();
  auto c = s.Client();
  auto r = c.Get("/api/files");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  kill(s.pid(), SIGINT);
  EXPECT_EQ(s.Wait(), 0);
}

TEST(Studio, AMissingPathIsAClearError) {
  const std::string out = [] {
    FILE* p = popen((std::string(PAYNTER_EXE) + " studio /nonexistent/dir 2>&1; echo rc=$?").c_str(), "r");
    std::string s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) s.append(buf, n);
    pclose(p);
    return s;
  }();
  EXPECT_NE(out.find("no such file or directory"), std::string::npos) << out;
  EXPECT_NE(out.find("rc=1"), std::string::npos) << out;
}

}  // namespace
}  // namespace paynter
