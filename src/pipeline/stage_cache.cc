// The stage cache (paynter/stage_cache.h): entries written and read back, and
// what a run needs of the Model without building it.
#include "paynter/stage_cache.h"

#include <fcntl.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "paynter/byte_io.h"
#include "paynter/hash.h"

namespace paynter {

// The stored fields of the structs a LoweredModel holds (found by ADL from the
// byte writer and reader; one line per field).
template <class F>
void Fields(F& f, ConstraintRow& r) {
  f(r.source);
  f(r.joint);
  f(r.direction);
  f(r.multiplier_slot);
  f(r.velocity_slot);
  f(r.position_slot);
}
template <class F>
void Fields(F& f, EquationSystem::CoordinateRow& r) {
  f(r.state);
  f(r.slot);
  f(r.period);
}

template <class F>
void Fields(F& f, ModeRow& r) {
  f(r.text);
  f(r.slot);
  f(r.indicator_slot);
  f(r.strict);
}
template <class F>
void Fields(F& f, EventRow& r) {
  f(r.name);
  f(r.indicator_slot);
  f(r.strict);
  f(r.stop);
  f(r.reset_states);
  f(r.reset_slots);
}
template <class F>
void Fields(F& f, SwitchRow& r) {
  f(r.element);
  f(r.kind);
  f(r.held_slot);
  f(r.direction_slot);
  f(r.effort_slot);
  f(r.flow_slot);
  f(r.limit_slot);
  f(r.indicator_slots[0]);
  f(r.indicator_slots[1]);
}

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "paynter stages 4\n";  // the format; bump it when a stored field changes meaning
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 31;

// 128 bits: two FNV-1a hashes from different offset bases.
std::string Digest(std::string_view text) {
  return fmt::format("{:016x}{:016x}", Fnv1a64(text, kFnv1aOffset), Fnv1a64(text, 0x6a09e667f3bcc908ull));
}

// This build: the file holding this code (any relink changes it) and the
// version. That file is the running executable, or the shared object paynter
// was linked into (the Python module), whose path dladdr gives.
std::string BuildIdentity() {
  struct stat st;
  Dl_info info{};
  const bool in_library = ::dladdr(reinterpret_cast<void*>(&BuildIdentity), &info) != 0 && info.dli_fname &&
                          info.dli_fname[0] == '/' && ::stat(info.dli_fname, &st) == 0;
  if (!in_library && ::stat("/proc/self/exe", &st) != 0) return "";
  return fmt::format("paynter {} exe {}:{}:{}:{}.{}", PAYNTER_VERSION, static_cast<unsigned long>(st.st_dev),
                     static_cast<unsigned long>(st.st_ino), static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec));
}

void WriteProgram(ByteWriter& w, const std::shared_ptr<const LoweredProgram>& p) {
  w(p != nullptr);
  if (!p) return;
  std::string bytes;
  WriteLoweredProgram(*p, &bytes);
  w(bytes);
}

// False when the bytes are not a lowered program (the reader is then failed).
bool ReadProgram(ByteReader& r, std::shared_ptr<const LoweredProgram>* p) {
  bool present = false;
  r(present);
  p->reset();
  if (!r.ok() || !present) return r.ok();
  std::string bytes;
  r(bytes);
  std::string_view view(bytes);
  *p = ReadLoweredProgram(&view);
  if (!*p || !view.empty()) r.Fail();
  return r.ok();
}

template <class F>
void LoweredFields(F& f, LoweredModel& m) {
  f(m.constraint_rows);
  f(m.coordinate_rows);
  f(m.held_states);
  f(m.state_inertia);
  f(m.state_origin);
  f(m.parameter_names);
  f(m.parameter_values);
  f(m.initial_state);
  f(m.state_names);
  f(m.output_names);
  f(m.output_slots);
  f(m.num_slots);
  f(m.first_parameter_slot);
  f(m.first_state_slot);
  f(m.first_derivative_slot);
  f(m.outputs_after_rhs);
  f(m.modes);
  f(m.event_rows);
  f(m.switches);
}

template <class F>
void StagedFields(F& f, StagedModel& s) {
  f(s.assemble);
  f(s.overrides_in_key);
  f(s.mechanism);
  f(s.physical_parameters);
  f(s.physical_values);
  f(s.physical_complete);
  f(s.derived_from);
}

// Whether a LoweredModel read back can be run: every slot and state index in range.
bool ValidLowered(const LoweredModel& m) {
  const int n = m.num_slots;
  const int states = static_cast<int>(m.initial_state.size());
  const int params = static_cast<int>(m.parameter_values.size());
  auto slot = [n](int s) { return s >= 0 && s < n; };
  if (!m.rhs || !m.outputs || n < 1 || m.first_parameter_slot < 0 || params > n - m.first_parameter_slot ||
      m.parameter_names.size() != m.parameter_values.size() || m.state_names.size() != m.initial_state.size() ||
      m.state_inertia.size() != m.initial_state.size() || m.output_names.size() != m.output_slots.size())
    return false;
  if (m.first_state_slot < 0 || m.first_derivative_slot < 0 || states > n - m.first_state_slot ||
      states > n - m.first_derivative_slot)
    return false;
  for (int s : m.output_slots)
    if (!slot(s)) return false;
  for (int s : m.held_states)
    if (s < 0 || s >= states) return false;
  // The programs run on the model's slot array.
  if (NumSlots(*m.rhs) != n || NumSlots(*m.outputs) != n || (m.constraints && NumSlots(*m.constraints) != n))
    return false;
  if (!m.constraint_rows.empty() && !m.constraints) return false;
  for (const ConstraintRow& r : m.constraint_rows)
    if (!slot(r.multiplier_slot) || !slot(r.velocity_slot) || (r.position_slot != -1 && !slot(r.position_slot)))
      return false;
  for (const auto& r : m.coordinate_rows)
    if (!slot(r.slot) || r.state < -1 || r.state >= states) return false;
  const bool any_events = !m.modes.empty() || !m.event_rows.empty() || !m.switches.empty();
  if (any_events != (m.events != nullptr) || (m.events && NumSlots(*m.events) != n)) return false;
  for (const ModeRow& r : m.modes)
    if (!slot(r.slot) || !slot(r.indicator_slot)) return false;
  for (const EventRow& r : m.event_rows) {
    if (!slot(r.indicator_slot) || r.reset_states.size() != r.reset_slots.size()) return false;
    for (size_t k = 0; k < r.reset_states.size(); ++k)
      if (r.reset_states[k] < 0 || r.reset_states[k] >= states || !slot(r.reset_slots[k])) return false;
  }
  for (const SwitchRow& r : m.switches)
    if ((r.kind != 0 && r.kind != 1) || !slot(r.held_slot) || !slot(r.direction_slot) || !slot(r.effort_slot) ||
        !slot(r.flow_slot) || !slot(r.limit_slot) || !slot(r.indicator_slots[0]) || !slot(r.indicator_slots[1]))
      return false;
  return true;
}

void WriteLowered(ByteWriter& w, const LoweredModel& m) {
  WriteProgram(w, m.rhs);
  WriteProgram(w, m.outputs);
  WriteProgram(w, m.constraints);
  WriteProgram(w, m.events);
  LoweredFields(w, const_cast<LoweredModel&>(m));
}

// False when the bytes are not a lowered model that can be run.
bool ReadLowered(ByteReader& r, LoweredModel* m) {
  if (!ReadProgram(r, &m->rhs) || !ReadProgram(r, &m->outputs) || !ReadProgram(r, &m->constraints) ||
      !ReadProgram(r, &m->events))
    return false;
  LoweredFields(r, *m);
  return r.ok() && ValidLowered(*m);
}

std::string Serialize(const std::string& key, const StagedModel& staged) {
  std::string payload;
  ByteWriter w(&payload);
  w(key);
  WriteLowered(w, staged.lowered);
  w(staged.method_lowered.has_value());
  if (staged.method_lowered) WriteLowered(w, *staged.method_lowered);
  WriteProgram(w, staged.physical);
  StagedFields(w, const_cast<StagedModel&>(staged));
  std::string out(kMagic);
  ByteWriter header(&out);
  header(static_cast<uint64_t>(payload.size()));
  header(Fnv1a64(payload, kFnv1aOffset));
  return out + payload;
}

std::optional<StagedModel> Deserialize(const std::string& key, std::string_view bytes) {
  const std::string_view magic(kMagic);
  if (bytes.substr(0, magic.size()) != magic) return std::nullopt;
  ByteReader header(bytes.substr(magic.size()));
  uint64_t size = 0, sum = 0;
  header(size);
  header(sum);
  const std::string_view payload = header.Rest();
  if (!header.ok() || payload.size() != size || Fnv1a64(payload, kFnv1aOffset) != sum) return std::nullopt;
  ByteReader r(payload);
  std::string stored_key;
  r(stored_key);
  if (!r.ok() || stored_key != key) return std::nullopt;
  StagedModel s;
  if (!ReadLowered(r, &s.lowered)) return std::nullopt;
  bool method_lowered = false;
  r(method_lowered);
  if (!r.ok()) return std::nullopt;
  if (method_lowered && !ReadLowered(r, &s.method_lowered.emplace())) return std::nullopt;
  if (!ReadProgram(r, &s.physical)) return std::nullopt;
  StagedFields(r, s);
  if (!r.ok() || r.remaining() != 0) return std::nullopt;
  if (s.physical_parameters.size() != s.physical_values.size()) return std::nullopt;
  if (s.physical && static_cast<size_t>(NumSlots(*s.physical)) < s.physical_parameters.size()) return std::nullopt;
  return s;
}

// The whole of a file that is safe to read as an entry: a regular file (not a
// link) of the user's own that nobody else may write. Empty otherwise.
std::optional<std::string> ReadEntry(const std::string& path, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // absent: a miss, no note
  struct stat st;
  std::optional<std::string> out;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = fmt::format("'{}' is not a regular file", path);
  } else if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    *why = fmt::format("'{}' is not the user's own, or is writable by others", path);
  } else if (static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) {
    *why = fmt::format("'{}' is too large", path);
  } else {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.resize(got);
    out = std::move(bytes);
  }
  ::close(fd);
  return out;
}

}  // namespace

StageCache::StageCache(StageCacheOptions options) : options_(std::move(options)) {
  if (!options_.enabled) return;
  if (options_.build_id.empty()) options_.build_id = BuildIdentity();
  if (options_.build_id.empty()) {
    note_ = "stage cache not used: this build's identity is unknown (no /proc/self/exe)";
    return;
  }
  // The native code's cache directory, under the same rules.
  std::string reasons;
  dir_ = PrivateCacheDir(options_.dir, &reasons);
  if (dir_.empty()) note_ = "stage cache not used: " + reasons;
}

std::string StageCache::Key(const std::string& file, const std::vector<std::string>& settings) const {
  if (dir_.empty()) return "";
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  // Each part length-prefixed, so that no two different inputs run together the same way.
  std::string text = kMagic;
  auto add = [&text](const std::string& part) { text += fmt::format("{}:{}\n", part.size(), part); };
  add(options_.build_id);
  add(bytes.str());
  for (const std::string& s : settings) add(s);
  // The files its submodels come from (docs/model-format.md, "Submodels and
  // ports"), each by name and bytes: editing a component changes the key.
  // Only a file that has instances can have any.
  if (bytes.str().find("instances") != std::string::npos) {
    try {
      for (const std::string& dep : ModelFileImports(file)) {
        std::ifstream din(dep, std::ios::binary);
        if (!din) return "";
        std::ostringstream dbytes;
        dbytes << din.rdbuf();
        add(dep);
        add(dbytes.str());
      }
    } catch (const Error&) {
      return "";  // the loader gives its own error
    }
  }
  return Digest(text);
}

std::string StageCache::EntryPath(const std::string& key) const {
  return (fs::path(dir_) / fmt::format("stages_{}.bin", key)).string();
}

std::optional<StagedModel> StageCache::Load(const std::string& key) {
  if (dir_.empty() || key.empty()) return std::nullopt;
  std::string why;
  const std::optional<std::string> bytes = ReadEntry(EntryPath(key), &why);
  if (!bytes) {
    if (!why.empty()) note_ = "stage cache entry ignored: " + why;
    return std::nullopt;
  }
  std::optional<StagedModel> staged = Deserialize(key, *bytes);
  if (!staged) note_ = fmt::format("stage cache entry '{}' ignored: corrupt or truncated; rebuilt", EntryPath(key));
  return staged;
}

void StageCache::Store(const std::string& key, const StagedModel& staged) {
  if (dir_.empty() || key.empty()) return;
  const std::string path = EntryPath(key);
  std::string tmp = (fs::path(dir_) / "stages_XXXXXX.tmp").string();
  const int fd = ::mkstemps(tmp.data(), 4);  // created 0600, exclusively
  if (fd < 0) {
    note_ = fmt::format("stage cache entry not written: {}", std::strerror(errno));
    return;
  }
  const std::string bytes = Serialize(key, staged);
  size_t put = 0;
  while (put < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + put, bytes.size() - put);
    if (n <= 0) break;
    put += static_cast<size_t>(n);
  }
  const bool ok = ::close(fd) == 0 && put == bytes.size();
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    note_ = fmt::format("stage cache entry '{}' not written", path);
  }
}

StagedModel StageModel(const Model& model, LoweredModel lowered) {
  StagedModel s;
  s.lowered = std::move(lowered);
  s.assemble = model.assemble;
  GiNaC::exmap values;
  for (const auto& p : model.parameters) {
    if (!p.literal) s.overrides_in_key = true;
    s.physical_parameters.push_back(p.name);
    s.physical_values.push_back(p.value);
    values[model.Symbol(p.name)] = p.value;
  }
  for (const auto& e : model.elements)
    if (e.initial && !GiNaC::is_a<GiNaC::numeric>(*e.initial)) s.overrides_in_key = true;
  for (const auto& d : model.displacements)
    if (!GiNaC::is_a<GiNaC::numeric>(d.initial)) s.overrides_in_key = true;
  // The parameters the build computes numbers from: the derived ones, and
  // those a derived parameter's text or a computed initial value names.
  auto names_in = [](const std::string& text, const std::string& name) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      auto ident = [&](size_t i) { return i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'); };
      if ((at == 0 || !ident(at - 1)) && !ident(at + name.size())) return true;
    }
    return false;
  };
  for (const auto& p : model.parameters) {
    bool used = !p.literal;
    for (const auto& q : model.parameters) used = used || (!q.literal && names_in(q.text, p.name));
    for (const auto& e : model.elements)
      used = used || (e.initial && !GiNaC::is_a<GiNaC::numeric>(*e.initial) && e.initial->has(model.Symbol(p.name)));
    for (const auto& d : model.displacements)
      used = used || (!GiNaC::is_a<GiNaC::numeric>(d.initial) && d.initial.has(model.Symbol(p.name)));
    if (used) s.derived_from.push_back(p.name);
  }
  // The laws CheckPhysicalParameters checks: constant inertances and capacitances.
  Program check;
  for (const auto& p : model.parameters) {
    check.symbols.push_back(model.Symbol(p.name));
    check.slot_names.push_back(p.name);
  }
  for (const auto& e : model.elements) {
    const bool inertance = e.kind == ElementKind::kI && e.law_key == "inertance";
    const bool capacitance = e.kind == ElementKind::kC && e.law_key == "capacitance";
    if (!inertance && !capacitance) continue;
    const GiNaC::ex v = GiNaC::evalf(e.law.subs(values));
    if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real()) continue;  // not constant
    ProgramStep step;
    step.target = static_cast<int>(check.symbols.size());
    step.value = e.law;
    check.symbols.push_back(GiNaC::symbol(e.name + "_law"));
    check.slot_names.push_back(e.name);
    check.steps.push_back(std::move(step));
  }
  if (check.steps.empty()) return s;
  try {
    s.physical = LowerProgram(check);
  } catch (const Error&) {
    s.physical_complete = false;
  }
  return s;
}

bool PhysicalParametersHold(const StagedModel& staged, const std::map<std::string, double>& overrides) {
  // Without overrides the values are those the Model was checked with.
  if (overrides.empty() || !staged.physical) return true;
  if (!staged.physical_complete) return false;
  CodegenOptions tape;
  tape.backend = Backend::kTape;
  std::unique_ptr<CompiledProgram> program;
  try {
    program = Compile(*staged.physical, tape);
  } catch (const Error&) {
    return false;
  }
  return PhysicalParametersHold(staged, program.get(), overrides);
}

bool PhysicalParametersHold(const StagedModel& staged, const CompiledProgram* program,
                            const std::map<std::string, double>& overrides) {
  if (overrides.empty() || !staged.physical) return true;
  if (!staged.physical_complete || !program) return false;
  try {
    std::vector<double> slots(program->num_slots(), 0.0);
    const size_t n = staged.physical_parameters.size();
    for (size_t i = 0; i < n; ++i) {
      const auto o = overrides.find(staged.physical_parameters[i]);
      slots[i] = o == overrides.end() ? staged.physical_values[i] : o->second;
    }
    program->Run(slots.data(), *program->NewWorkspace());
    for (size_t k = n; k < slots.size(); ++k)
      if (!(slots[k] > 0 && std::isfinite(slots[k]))) return false;
  } catch (const Error&) {
    return false;  // a law that is not finite: the Model's check says which
  }
  return true;
}

}  // namespace paynter
