// The parts of paynter's self-contained pages (`paynter report`, `paynter
// studio`): the web/ directory and its files, scripts and style sheets
// inlined into an HTML page, and JSON data written for a page to read. Model
// text reaches a page only as JSON (JsonString, paynter/html_report.h), which
// the page's script inserts as text.
#pragma once

#include <filesystem>
#include <string>

namespace paynter {
struct ModelSpec;
}

namespace paynter::web {

// A JSON number; null for what JSON cannot hold (NaN, infinities).
std::string JsonNumber(double v);

// A small JSON writer: objects and arrays written in order, commas kept;
// strings by JsonString (safe inside an HTML <script> element).
class Json {
 public:
  Json& Open(char c);
  Json& Close(char c);
  Json& Key(const std::string& k);
  Json& Str(const std::string& s);
  Json& Num(double v);
  Json& Bool(bool b);
  Json& Raw(const std::string& json);  // a value already written as JSON
  Json& Field(const std::string& k, const std::string& s) { return Key(k).Str(s); }
  Json& Field(const std::string& k, const char* s) { return Key(k).Str(s); }
  Json& Field(const std::string& k, double v) { return Key(k).Num(v); }
  const std::string& text() const { return out_; }

 private:
  void Comma();
  std::string out_;
  bool first_ = true;
};

// A mechanism's bodies and joints for the pages' 3D view (web/view3d.js),
// as written in its `multibody:` section: {bodies: [{name}], joints: [{name,
// type, body1, body2}]}; their poses are the run's pose_* columns
// (RunOptions::poses). "" for a model without a multibody: section.
std::string MechanismJson(const ModelSpec& spec);

// The directory of the pages' script, style and npm libraries: `given`
// when not empty, else $PAYNTER_WEB_DIR, an installed paynter's
// share/paynter/web, or the source tree's web/ (paynter/data_dir.h).
std::filesystem::path WebDir(const std::string& given = "");

// A file of a page, whole; a missing one is an Error whose hint says how to
// install the libraries (npm ci in web/). `page` names the page ("report").
std::string ReadWebFile(const std::filesystem::path& path, const std::string& page);

// A script's text as the content of an inline <script> element, a style
// sheet's as that of a <style> element: nothing in them can end the element.
std::string InlineScript(std::string js);
std::string InlineStyle(std::string css);

// KaTeX's style sheet with its WOFF2 fonts as data: URIs.
std::string KatexStyle(const std::filesystem::path& dist);

// The page's first script: errors and console.error calls collected in
// window.paynterErrors (the pages' tests read them).
std::string ErrorCaptureScript();

}  // namespace paynter::web
