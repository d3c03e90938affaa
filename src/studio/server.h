// paynter studio's HTTP server (docs/studio.md, "Safe by design"): on
// 127.0.0.1 only; every request carries the token of the printed address
// (the header X-Paynter-Token or ?token=) and names the server by a Host of
// 127.0.0.1 or localhost (no DNS rebinding), else it is answered 403.
#pragma once

#include <iosfwd>
#include <string>

namespace paynter::studio {

struct ServerOptions {
  std::string path;      // FILE or DIR (default: the current directory)
  int port = 0;          // 0: a free port chosen by the system
  std::string web_dir;   // the page's files ("" as for paynter report)
  std::string token;     // "" = random (32 hex digits from the system's random source)
};

// Serves until POST /api/shutdown, SIGINT or SIGTERM; prints the address
// (http://127.0.0.1:PORT/?token=...) as the first line of `out`. Returns the
// exit status. Throws Error for a path or port it cannot use.
int Serve(const ServerOptions& options, std::ostream& out);

// True when a Host header names this server: 127.0.0.1 or localhost (any
// case), with the port `port` or none.
bool HostAllowed(const std::string& host, int port);

}  // namespace paynter::studio
