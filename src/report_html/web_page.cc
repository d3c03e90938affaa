// The parts of paynter's self-contained pages (web_page.h).
#include "web_page.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "paynter/data_dir.h"
#include "paynter/error.h"
#include "paynter/html_report.h"
#include "paynter/model.h"

#ifndef PAYNTER_WEB_DIR
#define PAYNTER_WEB_DIR ""
#endif

namespace paynter::web {

namespace fs = std::filesystem;

std::string JsonNumber(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

void Json::Comma() {
  if (!first_) out_ += ',';
  first_ = false;
}
Json& Json::Open(char c) {
  Comma();
  out_ += c;
  first_ = true;
  return *this;
}
Json& Json::Close(char c) {
  out_ += c;
  first_ = false;
  return *this;
}
Json& Json::Key(const std::string& k) {
  Comma();
  out_ += JsonString(k) + ":";
  first_ = true;
  return *this;
}
Json& Json::Str(const std::string& s) {
  Comma();
  out_ += JsonString(s);
  return *this;
}
Json& Json::Num(double v) {
  Comma();
  out_ += JsonNumber(v);
  return *this;
}
Json& Json::Bool(bool b) {
  Comma();
  out_ += b ? "true" : "false";
  return *this;
}
Json& Json::Raw(const std::string& json) {
  Comma();
  out_ += json;
  return *this;
}

std::string MechanismJson(const ModelSpec& spec) {
  if (!spec.multibody.present) return "";
  auto field = [](const ModelSpec::Entry& e, const std::string& k) {
    auto it = e.fields.find(k);
    return it == e.fields.end() || it->second.values.empty() ? std::string() : it->second.values[0];
  };
  Json j;
  j.Open('{').Key("bodies").Open('[');
  for (const auto& b : spec.multibody.bodies) j.Open('{').Field("name", field(b, "name")).Close('}');
  j.Close(']').Key("joints").Open('[');
  for (const auto& jt : spec.multibody.joints)
    j.Open('{')
        .Field("name", field(jt, "name"))
        .Field("type", field(jt, "type"))
        .Field("body1", field(jt, "body1"))
        .Field("body2", field(jt, "body2"))
        .Close('}');
  j.Close(']').Close('}');
  return j.text();
}

fs::path WebDir(const std::string& given) {
  if (!given.empty()) return given;
  return DataDirectory("web", "PAYNTER_WEB_DIR", PAYNTER_WEB_DIR);
}

std::string ReadWebFile(const fs::path& path, const std::string& page) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ThrowAt({path.string()}, "", page + ": a file of the page is missing",
            "the page's script, style and the npm libraries (uPlot, KaTeX, CodeMirror) in web/", "no readable file",
            "run scripts/setup.sh (it runs `npm ci` in web/), or set PAYNTER_WEB_DIR to a web/ directory "
            "with node_modules/");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "</script" (any case) would end the element and "<!--" change how it is
// read, so their '<' is escaped as JavaScript reads it inside strings and
// regular expressions, the only places such text occurs in code ("<\/", "<\!").
std::string InlineScript(std::string js) {
  std::string lower = js;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string out;
  size_t at = 0;
  for (size_t i = 0; i < js.size(); ++i) {
    if (lower.compare(i, 8, "</script") == 0 || lower.compare(i, 4, "<!--") == 0) {
      out += js.substr(at, i - at) + "<\\";
      at = i + 1;
    }
  }
  return out + js.substr(at);
}

std::string InlineStyle(std::string css) {
  for (size_t at = 0; (at = css.find("</", at)) != std::string::npos; at += 3) css.replace(at, 2, "<\\/");
  return css;
}

namespace {

std::string Base64(const std::string& bytes) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

}  // namespace

// Every browser that runs the page reads WOFF2: the WOFF and TrueType copies
// are left out.
std::string KatexStyle(const fs::path& dist) {
  std::string css = ReadWebFile(dist / "katex.min.css", "report");
  std::string out;
  size_t at = 0;
  const std::string open = "url(fonts/";
  while (true) {
    const size_t u = css.find(open, at);
    if (u == std::string::npos) break;
    const size_t close = css.find(')', u);
    if (close == std::string::npos) break;
    const std::string file = css.substr(u + open.size(), close - u - open.size());
    out += css.substr(at, u - at);
    // The src list: url(X.woff2) format("woff2"),url(X.woff) format("woff"),url(X.ttf) format("truetype")
    if (file.size() > 6 && file.compare(file.size() - 6, 6, ".woff2") == 0) {
      out += "url(data:font/woff2;base64," + Base64(ReadWebFile(dist / "fonts" / file, "report")) + ")";
      at = close + 1;
    } else {
      // Drop ",url(X.woff) format(...)": back over the comma written, on past the format.
      if (!out.empty() && out.back() == ',') out.pop_back();
      const size_t fmt_end = css.find(')', close + 1);
      at = fmt_end == std::string::npos ? close + 1 : fmt_end + 1;
    }
  }
  out += css.substr(at);
  return out;
}

std::string ErrorCaptureScript() {
  return "<script>window.paynterErrors=[];window.addEventListener('error',function(e){window.paynterErrors.push("
         "String(e.message))});(function(){var f=console.error;console.error=function(){window.paynterErrors.push("
         "Array.prototype.join.call(arguments,' '));f.apply(console,arguments)}})();</script>\n";
}

}  // namespace paynter::web
