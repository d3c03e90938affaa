// paynter-studio — the program behind `paynter studio` (docs/studio.md): the
// paynter program starts it (src/cli/paynter_main.cc), so that the server
// library and its dependencies are loaded by this program alone and
// paynter's other commands start as fast as before.
#include <CLI/CLI.hpp>

#include <iostream>

#include "paynter/error.h"
#include "server.h"

int main(int argc, char** argv) {
  CLI::App app{"paynter studio: edit, check, draw and run a model in the browser (a server on 127.0.0.1)"};
  app.name("paynter studio");
  paynter::studio::ServerOptions o;
  app.add_option("PATH", o.path, "a model file to open, or the directory to work in (default: the current one)");
  app.add_option("--port", o.port, "the port to listen on (default: a free one)")->check(CLI::Range(1, 65535));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    return paynter::studio::Serve(o, std::cout);
  } catch (const paynter::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << paynter::Error(std::string("paynter studio: internal error: ") + e.what()).what() << "\n";
    return 2;
  }
}
