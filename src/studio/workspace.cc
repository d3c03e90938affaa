// paynter studio's directory (workspace.h).
#include "workspace.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "paynter/files.h"
#include "paynter/pipeline.h"

namespace paynter::studio {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void Refuse(const std::string& name, const std::string& why, const std::string& hint) {
  Diagnostic d;
  d.where.file = name;
  d.message = "studio: " + why;
  d.expected = "a file inside the studio's directory";
  d.got = name;
  d.hint = hint;
  throw PathRefused(std::move(d));
}

// True when `p` is `root` or below it (both without symbolic links).
bool Inside(const fs::path& p, const fs::path& root) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *q != *r) return false;
  return true;
}

bool IsModelName(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

}  // namespace

Workspace::Workspace(const std::string& dir) {
  std::error_code ec;
  root_ = fs::canonical(fs::absolute(dir, ec), ec);
  if (ec || !fs::is_directory(root_, ec))
    ThrowAt({dir}, "", "studio: the directory to work in cannot be opened", "a directory (or a model file in one)",
            ec ? ec.message() : "not a directory", "paynter studio [FILE|DIR]: the default is the current directory");
}

fs::path Workspace::Resolve(const std::string& name, bool for_writing) const {
  const fs::path rel(name);
  if (name.empty() || name.find('\0') != std::string::npos || rel.is_absolute() || rel.has_root_name())
    Refuse(name, "a file is named relative to the studio's directory", "a path such as models/tank.yaml");
  for (const auto& part : rel)
    if (part == "..") Refuse(name, "a path with '..' leaves the studio's directory", "a path below the directory");
  const fs::path full = root_ / rel;
  std::error_code ec;
  if (!for_writing) {
    const fs::path real = fs::canonical(full, ec);
    if (ec) Refuse(name, "no such file", "GET /api/files lists the model files");
    if (!Inside(real, root_))
      Refuse(name, "the path leads out of the studio's directory through a symbolic link",
             "copy the file into the directory");
    return real;
  }
  if (!IsModelName(rel)) Refuse(name, "the studio saves model files only", "a name ending in .yaml or .yml");
  const fs::path dir = fs::canonical(full.parent_path(), ec);
  if (ec || !fs::is_directory(dir, ec))
    Refuse(name, "the file's directory does not exist", "save into an existing directory");
  if (!Inside(dir, root_))
    Refuse(name, "the path leads out of the studio's directory through a symbolic link",
           "save into a directory inside it");
  struct stat st;
  if (lstat(full.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    Refuse(name, S_ISLNK(st.st_mode) ? "the file is a symbolic link, which the studio does not save through"
                                     : "the file is not a regular file",
           "save under another name");
  return dir / rel.filename();
}

std::vector<std::string> Workspace::ModelFiles(size_t limit) const {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end && out.size() < limit; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string leaf = p.filename().string();
    if (!leaf.empty() && (leaf[0] == '.' || leaf == "node_modules" || leaf == "build")) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();  // not followed anyway; not listed either
      continue;
    }
    if (it->is_regular_file(ec) && IsModelName(p)) out.push_back(fs::relative(p, root_, ec).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Workspace::Read(const std::string& name) const {
  const fs::path p = Resolve(name, false);
  RequireRegularInput(p.string(), "model file", "a model file (YAML)", "the studio opens model files");
  std::ifstream in(p, std::ios::binary);
  if (!in) Refuse(name, "the file cannot be read", "check its permissions");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Diagnostic LoadProblem(const std::string& text, const fs::path& file) {
  try {
    Load(ModelSource::Text(text, file.string()));
  } catch (const Error& e) {
    Diagnostic d = e.diagnostic();
    if (d.message.empty()) d.message = e.what();
    return d;
  }
  return {};
}

SaveResult Workspace::Save(const std::string& name, const std::string& text, bool force) const {
  const fs::path p = Resolve(name, true);
  SaveResult r;
  if (!force) {
    Diagnostic problem = LoadProblem(text, p);
    std::error_code ec;
    if (!problem.message.empty() && fs::exists(p, ec)) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream old;
      old << in.rdbuf();
      if (LoadProblem(old.str(), p).message.empty()) {
        r.needs_force = true;
        r.problem = std::move(problem);
        return r;
      }
    }
  }
  WriteFileAtomically(p.string(), text, "model file");
  r.saved = true;
  return r;
}

}  // namespace paynter::studio
