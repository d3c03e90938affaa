// paynter studio's directory: the one place it reads and writes (docs/studio.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "paynter/error.h"

namespace paynter::studio {

// A path the studio refuses: outside its directory, through a symbolic link
// that leads out, or not a model file. The server answers 403.
class PathRefused : public Error {
 public:
  using Error::Error;
};

// What Workspace::Save did.
struct SaveResult {
  bool saved = false;
  // Not saved: the text does not load and the file it would replace does;
  // `problem` is the text's first error (Save again with force to write it).
  bool needs_force = false;
  Diagnostic problem;
};

// The directory given to `paynter studio`: files are named relative to it and
// never leave it. A relative name has no '..' part and no root; the file it
// names, its symbolic links resolved, is inside the directory (itself
// resolved); a file saved is a model file (.yaml or .yml) whose directory
// exists inside, and it is not itself a symbolic link.
class Workspace {
 public:
  explicit Workspace(const std::string& dir);  // throws Error when it is not a directory
  const std::filesystem::path& root() const { return root_; }

  // The file `name` names, for reading or writing; throws PathRefused.
  std::filesystem::path Resolve(const std::string& name, bool for_writing) const;
  // The model files (*.yaml, *.yml) under the directory, relative, sorted;
  // hidden entries and directories reached through symbolic links left out.
  std::vector<std::string> ModelFiles(size_t limit = 5000) const;
  std::string Read(const std::string& name) const;
  // Writes `text` to `name` completely or not at all (a temporary beside it,
  // renamed into place). A text that does not load (LoadModel's first error)
  // replaces a file that does only with `force`.
  SaveResult Save(const std::string& name, const std::string& text, bool force) const;

 private:
  std::filesystem::path root_;
};

// The first error of loading `text` as the model file `file` (relative
// submodel paths are the file's), or nullopt-like: an empty message.
Diagnostic LoadProblem(const std::string& text, const std::filesystem::path& file);

}  // namespace paynter::studio
