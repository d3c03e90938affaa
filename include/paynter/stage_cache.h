// paynter/stage_cache.h — the symbolic stages' result kept between runs.
//
// A run of an unchanged model (the same file contents, the same options that
// shape its equations, the same build of paynter) loads its lowered programs
// from the cache instead of expanding, building and lowering the model again:
// no GiNaC work unless an error message needs an expression. The entries live
// in the native code's private cache directory and are data only: each is read
// only if it is a regular file of the user's own that nobody else may write,
// is checksummed, and is validated (every index in range) before use; an entry
// that fails any check is ignored and rebuilt. Parameter values are slots, so
// --param does not change the key, except for models whose build computes
// numbers from parameters (see StagedModel::overrides_in_key).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "paynter/model.h"
#include "paynter/simulation.h"

namespace paynter {

struct StageCacheOptions {
  bool enabled = true;
  // Empty: the native code's directory ($XDG_CACHE_HOME/paynter or ~/.cache/paynter),
  // with the same checks (the user's own, not writable by group or others).
  std::string dir;
  // Empty: this build's identity (the device, inode, size and modification time
  // of the file holding paynter's code — the running executable, or the shared
  // object it was linked into — and the version). Tests set their own.
  std::string build_id;
};

// A model ready for CompiledModel, with what the driver needs of its Model.
struct StagedModel {
  LoweredModel lowered;
  // What the constraint method prepares beyond the model's own equations
  // (ConstraintMethodStrategy::Prepare: zcp's break-variable model), if anything.
  std::optional<LoweredModel> method_lowered;
  bool assemble = false;  // Model::assemble
  // The build computes numbers from parameter values (a parameter written as an
  // expression of others, an initial value that uses parameters): --param
  // values then enter the cache key, so that an entry holds what was built
  // with them, however the build applies them.
  bool overrides_in_key = false;
  // The model file has a multibody section: every parameter then shapes the
  // build (poses, inertias), and --param values enter the key. Kept so that a
  // warm run need not read the model file to know it.
  bool mechanism = false;
  // The parameters that numbers of the build are computed from (derived
  // parameters and those their texts or computed initial values name): a new
  // value for one of these needs a new build; the others are slots.
  std::vector<std::string> derived_from;
  // CheckPhysicalParameters without the Model: the constant inertances and
  // capacitances as a program over the parameters (slots 0..n-1: the model's
  // parameters, in order; then one slot per law). Null when there are none.
  std::shared_ptr<const LoweredProgram> physical;
  std::vector<std::string> physical_parameters;  // the model's parameters, in order
  std::vector<double> physical_values;           // their values
  bool physical_complete = true;                 // false: some law could not be lowered
};

// The parts of `model` the driver needs, with its lowered equations.
StagedModel StageModel(const Model& model, LoweredModel lowered);

// True when every constant inertance and capacitance of `staged` stays positive
// and finite with `overrides`; false when the Model must be checked (by
// CheckPhysicalParameters, whose error names the parameter or element).
bool PhysicalParametersHold(const StagedModel& staged, const std::map<std::string, double>& overrides);
// The same with staged.physical compiled beforehand (Compile, tape backend), for
// a caller that checks many sets of overrides; `physical` may be null when
// staged.physical is.
bool PhysicalParametersHold(const StagedModel& staged, const CompiledProgram* physical,
                            const std::map<std::string, double>& overrides);

class StageCache {
 public:
  explicit StageCache(StageCacheOptions options);
  // The key of a model file (its bytes are read, and those of the files its
  // submodels come from) and the options that shape its equations, as text,
  // and the build's identity. Empty when the file cannot be
  // read (the loader then gives its own error) or the cache is disabled.
  std::string Key(const std::string& file, const std::vector<std::string>& settings) const;
  // The entry for `key`, or nothing (absent, unsafe, corrupt or truncated).
  std::optional<StagedModel> Load(const std::string& key);
  // Stores an entry atomically; a failure only leaves a note.
  void Store(const std::string& key, const StagedModel& staged);
  // Why the cache was not used (no safe directory, an entry ignored), or "".
  const std::string& note() const { return note_; }

 private:
  std::string EntryPath(const std::string& key) const;
  StageCacheOptions options_;
  std::string dir_;  // empty: no usable directory
  std::string note_;
};

}  // namespace paynter
