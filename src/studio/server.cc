// paynter studio's HTTP server (server.h), on cpp-httplib.
#include "server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>

#include "api.h"
#include "paynter/html_report.h"
#include "report_html/web_page.h"
#include "workspace.h"

namespace paynter::studio {

namespace fs = std::filesystem;
using web::Json;

bool HostAllowed(const std::string& host, int port) {
  std::string name = host, given_port;
  if (const size_t colon = host.rfind(':'); colon != std::string::npos) {
    name = host.substr(0, colon);
    given_port = host.substr(colon + 1);
  }
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name != "127.0.0.1" && name != "localhost") return false;
  return given_port.empty() || given_port == std::to_string(port);
}

namespace {

std::string RandomToken() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) ThrowAt({"studio"}, "", "studio: the system's random source failed", "getrandom", "an error");
    got += static_cast<size_t>(n);
  }
  std::string t;
  for (unsigned char b : bytes) t += fmt::format("{:02x}", b);
  return t;
}

// Compares without leaving early, so the time taken says nothing of the token.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void Refuse(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  Json j;
  j.Open('{').Key("ok").Bool(false).Field("error", why).Close('}');
  res.set_content(j.text(), "application/json; charset=utf-8");
}

void Answer(httplib::Response& res, const std::string& json) { res.set_content(json, "application/json; charset=utf-8"); }

std::multimap<std::string, std::string> Query(const httplib::Request& req) {
  return {req.params.begin(), req.params.end()};
}

// Blocks SIGINT and SIGTERM in this thread and those it starts; a thread of
// its own waits for them and stops the server.
class SignalStop {
 public:
  explicit SignalStop(httplib::Server& server) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    waiter_ = std::thread([this, &server] {
      int sig = 0;
      sigwait(&set_, &sig);
      if (!done_) server.stop();
    });
  }
  ~SignalStop() {
    done_ = true;
    pthread_kill(waiter_.native_handle(), SIGTERM);  // wakes the waiter (blocked, so nothing else sees it)
    waiter_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_, old_;
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace

int Serve(const ServerOptions& options, std::ostream& out) {
  std::string dir = options.path.empty() ? "." : options.path;
  std::string first;  // the file to open first, relative
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    const fs::path p = fs::absolute(dir, ec);
    first = p.filename().string();
    dir = p.parent_path().string();
  } else if (!fs::exists(dir, ec)) {
    ThrowAt({dir}, "", "studio: no such file or directory", "a model file or a directory", "nothing there",
            "paynter studio [FILE|DIR]");
  }
  const Workspace ws(dir);
  const std::string page = StudioPage(options.web_dir);  // a missing library is reported before serving
  const std::string token = options.token.empty() ? RandomToken() : options.token;

  httplib::Server server;
  std::mutex pipeline;  // one request at a time works on models (GiNaC is not thread-safe)
  Simulator simulator;
  RunProgress run;  // the run going on, asked by /api/progress and /api/stop
  DotRenderer renderer;
  int port = 0;
  server.set_payload_max_length(size_t{32} << 20);
  // An answer's header and body are written apart: with Nagle's algorithm the
  // body waited for the browser's delayed acknowledgement of the header (up
  // to 40 ms on every check and run, whatever the server's own time).
  server.set_tcp_nodelay(true);
  server.set_default_headers({{"Cache-Control", "no-store"},
                              {"X-Content-Type-Options", "nosniff"},
                              {"Referrer-Policy", "no-referrer"},
                              {"X-Frame-Options", "DENY"}});
  // The page has a policy of its own (below); every other answer is data.
  server.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.has_header("Content-Security-Policy"))
      res.set_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  });
  server.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (!HostAllowed(req.get_header_value("Host"), port)) {
      Refuse(res, 403, "the Host header names another server (the studio answers 127.0.0.1 and localhost only)");
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string given =
        req.has_header("X-Paynter-Token") ? req.get_header_value("X-Paynter-Token") : req.get_param_value("token");
    if (!SameToken(given, token)) {
      Refuse(res, 403, "the request carries no token or a wrong one: open the address paynter studio printed");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Errors of a request: a path refused is 403, a bad request 400.
  auto guarded = [&](auto handler) {
    return [&, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        handler(req, res);
      } catch (const PathRefused& e) {
        res.status = 403;
        Answer(res, "{\"ok\":false,\"diagnostics\":[" + DiagnosticJson(e.diagnostic(), e.diagnostic().where.file) + "]}");
      } catch (const Error& e) {
        res.status = 400;
        Answer(res, "{\"ok\":false,\"diagnostics\":[" + DiagnosticJson(e.diagnostic(), e.diagnostic().where.file) + "]}");
      }
    };
  };
  // The file a request works on: its own path, or for a model not saved yet
  // the path it will be saved to.
  auto model_path = [&](const httplib::Request& req) {
    const std::string name = req.get_param_value("path");
    std::error_code e;
    const bool exists = !name.empty() && fs::exists(ws.root() / fs::path(name), e);
    return std::make_pair(name, ws.Resolve(name, !exists));
  };

  server.Get("/", [&](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src "
                                              "'unsafe-inline'; img-src data:; font-src data:; connect-src 'self'; "
                                              "frame-ancestors 'none'");
    res.set_content(page, "text/html; charset=utf-8");
  });
  server.Get("/api/files", guarded([&](const httplib::Request&, httplib::Response& res) {
               Json j;
               j.Open('{').Key("ok").Bool(true).Field("root", ws.root().string()).Field("first", first);
               j.Key("files").Open('[');
               for (const auto& f : ws.ModelFiles()) j.Str(f);
               j.Close(']').Close('}');
               Answer(res, j.text());
             }));
  server.Get("/api/file", guarded([&](const httplib::Request& req, httplib::Response& res) {
               const std::string name = req.get_param_value("path");
               const std::string text = ws.Read(name);
               Json j;
               j.Open('{').Key("ok").Bool(true).Field("path", name).Field("text", text).Close('}');
               Answer(res, j.text());
             }));
  server.Post("/api/check", guarded([&](const httplib::Request& req, httplib::Response& res) {
                const auto [name, file] = model_path(req);
                std::lock_guard<std::mutex> lock(pipeline);
                Answer(res, CheckJson(req.body, file, name, renderer));
              }));
  server.Post("/api/simulate", guarded([&](const httplib::Request& req, httplib::Response& res) {
                const auto [name, file] = model_path(req);
                const RunOptions o = SimulateOptions(Query(req));
                std::lock_guard<std::mutex> lock(pipeline);
                Answer(res, simulator.RunJson(req.body, file, name, o, &run, req.get_param_value("run")));
              }));
  // How far the run is, and a stop: without the pipeline's lock, which the run holds.
  server.Get("/api/progress", guarded([&](const httplib::Request&, httplib::Response& res) { Answer(res, run.ToJson()); }));
  server.Post("/api/stop", guarded([&](const httplib::Request& req, httplib::Response& res) {
                const bool asked = run.Stop(req.get_param_value("run"));
                Json j;
                j.Open('{').Key("ok").Bool(true).Key("stopping").Bool(asked).Close('}');
                Answer(res, j.text());
              }));
  server.Get("/api/library", guarded([&](const httplib::Request&, httplib::Response& res) { Answer(res, LibraryJson()); }));
  server.Post("/api/export", guarded([&](const httplib::Request& req, httplib::Response& res) {
                const std::string name = req.get_param_value("path");
                const RunOptions o = SimulateOptions(Query(req));
                std::lock_guard<std::mutex> lock(pipeline);
                Answer(res, ExportJson(ws.Resolve(name, false), name, req.get_param_value("kind"), o, options.web_dir));
              }));
  server.Post("/api/edit", guarded([&](const httplib::Request& req, httplib::Response& res) {
                Answer(res, EditJson(req.body, req.get_param_value("path"), Query(req)));
              }));
  server.Post("/api/save", guarded([&](const httplib::Request& req, httplib::Response& res) {
                const std::string name = req.get_param_value("path");
                const bool force = req.get_param_value("force") == "1";
                std::lock_guard<std::mutex> lock(pipeline);
                const SaveResult r = ws.Save(name, req.body, force);
                if (r.needs_force) res.status = 409;
                Json j;
                j.Open('{').Key("ok").Bool(r.saved).Key("saved").Bool(r.saved).Key("needs_force").Bool(r.needs_force);
                j.Field("path", name).Key("diagnostics").Open('[');
                if (r.needs_force) j.Raw(DiagnosticJson(r.problem, name, "error", ws.Resolve(name, true).string()));
                j.Close(']').Close('}');
                Answer(res, j.text());
              }));
  server.Post("/api/shutdown", [&](const httplib::Request&, httplib::Response& res) {
    Answer(res, "{\"ok\":true}");
    server.stop();
  });

  port = options.port > 0 ? (server.bind_to_port("127.0.0.1", options.port) ? options.port : -1)
                          : server.bind_to_any_port("127.0.0.1");
  if (port <= 0)
    ThrowAt({"studio"}, "", fmt::format("studio: cannot listen on 127.0.0.1:{}", options.port), "a free port",
            "the port is taken or not allowed", "leave out --port for a free one");
  out << fmt::format("paynter studio: http://127.0.0.1:{}/?token={}\n", port, token);
  out << fmt::format("serving {} ({} model files); Ctrl-C stops it\n", ws.root().string(), ws.ModelFiles().size());
  out.flush();
  SignalStop stop(server);
  server.listen_after_bind();
  return 0;
}

}  // namespace paynter::studio
