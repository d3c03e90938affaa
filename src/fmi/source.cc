// fmi/source.cc — the model-specific C of an FMU: model.h (sizes, the types
// the runtime shares with it) and model.c (start values, the blocks' tables
// and the functions that run the right-hand side and the outputs). Only
// numbers and generated identifiers are printed: no name from the model (the
// events' names, for messages, are arrays of byte values).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "fmu.h"

namespace paynter::fmi {
namespace {

std::string Number(double v) {
  if (!std::isfinite(v)) return "0.0";  // start values are finite (checked by the export)
  std::string s = fmt::format("{:.17g}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

struct Sizes {
  int slots = 0, max_block = 1, max_nz = 1;
};

Sizes SizesOf(const FmuModel& m) {
  Sizes z;
  z.slots = m.lowered.num_slots;
  for (const CSource* c : {&m.rhs, &m.outputs, &m.parameters, &m.events}) {
    z.slots = std::max(z.slots, c->num_slots);
    for (const CSource::Block& b : c->blocks) {
      z.max_block = std::max<int>(z.max_block, static_cast<int>(b.unknowns.size()));
      z.max_nz = std::max<int>(z.max_nz, static_cast<int>(b.jacobian_nz.size()));
    }
  }
  return z;
}

// Prototypes, block tables and the run function of one program.
std::string ProgramCode(const CSource& src, const std::string& prefix, const std::string& run) {
  std::string out;
  for (const auto& g : src.groups)
    for (const std::string& f : g.fns) out += fmt::format("int {}(double* s, double* w);\n", f);
  for (const auto& b : src.blocks)
    for (const auto* list : {&b.residual_fns, &b.jacobian_fns})
      for (const std::string& f : *list) out += fmt::format("void {}(double* s, double* w, double* r);\n", f);
  auto join = [](const auto& v, auto fmt1) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + fmt1(x);
    return s.empty() ? std::string("0") : s;
  };
  for (size_t b = 0; b < src.blocks.size(); ++b) {
    const CSource::Block& bp = src.blocks[b];
    auto num = [](int x) { return std::to_string(x); };
    auto name = [](const std::string& x) { return x; };
    out += fmt::format("static const int {}u{}[] = {{{}}};\n", prefix, b, join(bp.unknowns, num));
    out += fmt::format("static const int {}nz{}[] = {{{}}};\n", prefix, b, join(bp.jacobian_nz, num));
    out += fmt::format("static const PnBlockFn {}res{}[] = {{{}}};\n", prefix, b, join(bp.residual_fns, name));
    out += fmt::format("static const PnBlockFn {}jac{}[] = {{{}}};\n", prefix, b, join(bp.jacobian_fns, name));
    out += fmt::format("static const PnBlock {}block{} = {{{}, {}, {}, {}u{}, {}nz{}, {}, {}res{}, {}, {}jac{}}};\n",
                       prefix, b, bp.unknowns.size(), bp.linear ? 1 : 0, bp.jacobian_nz.size(), prefix, b, prefix, b,
                       bp.residual_fns.size(), prefix, b, bp.jacobian_fns.size(), prefix, b);
  }
  out += fmt::format("\nint {}(double* s, double* w, PnSolver* ns) {{\n  (void)s;\n  (void)w;\n  (void)ns;\n", run);
  for (const auto& g : src.groups) {
    for (const std::string& f : g.fns) out += fmt::format("  if ({}(s, w)) return 1;\n", f);
    if (g.block >= 0) out += fmt::format("  if (pn_solve_block(&{}block{}, s, w, ns)) return 2;\n", prefix, g.block);
  }
  out += "  return 0;\n}\n\n";
  return out;
}

// The event tables of model.c (fmu_model.h): conditions, events and their
// resets, switched elements, and which indicators are time events.
std::string EventTables(const FmuModel& m) {
  const LoweredModel& l = m.lowered;
  auto table = [](const std::string& decl, const std::vector<std::string>& rows, const std::string& empty) {
    std::string t = decl + " = {";
    for (size_t k = 0; k < rows.size(); ++k) t += (k ? ",\n  " : "\n  ") + rows[k];
    if (rows.empty()) t += empty;
    return t + "};\n";
  };
  std::vector<std::string> modes, events, reset_state, reset_slot, switches, slopes;
  for (const ModeRow& r : l.modes) modes.push_back(fmt::format("{{{}, {}, {}}}", r.slot, r.indicator_slot, r.strict));
  for (const EventRow& r : l.event_rows) {
    events.push_back(fmt::format("{{{}, {}, {}, {}}}", r.indicator_slot, r.stop, reset_state.size(), r.reset_states.size()));
    for (size_t k = 0; k < r.reset_states.size(); ++k) {
      reset_state.push_back(std::to_string(r.reset_states[k]));
      reset_slot.push_back(std::to_string(r.reset_slots[k]));
    }
  }
  for (const SwitchRow& s : l.switches)
    switches.push_back(fmt::format("{{{}, {}, {}, {}, {}, {}, {{{}, {}}}}}", s.kind, s.held_slot, s.direction_slot,
                                   s.effort_slot, s.flow_slot, s.limit_slot, s.indicator_slots[0], s.indicator_slots[1]));
  for (int slope : m.time_slope) slopes.push_back(std::to_string(slope));
  // The events' names, for the runtime's messages, as byte values: a control
  // character becomes '?', and a name is cut at 120 bytes.
  std::string names, name_at;
  size_t at = 0;
  for (const EventRow& r : l.event_rows) {
    name_at += (name_at.empty() ? "" : ", ") + std::to_string(at);
    const std::string name = r.name.substr(0, 120);
    for (unsigned char ch : name) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", ch < 32 || ch == 127 ? int('?') : int(ch));
      ++at;
    }
    names += names.empty() ? "0" : ", 0";
    ++at;
  }
  std::string c = "\n/* events (fmu_model.h) */\n";
  c += table("const PnMode pn_modes[PN_DIM(PN_NUM_MODES)]", modes, "{0, 0, 0}");
  c += table("const PnEvent pn_events[PN_DIM(PN_NUM_EVENTS)]", events, "{0, 0, 0, 0}");
  c += "const unsigned char pn_event_names[] = {" + (names.empty() ? std::string("0") : names) + "};\n";
  c += "const int pn_event_name_at[PN_DIM(PN_NUM_EVENTS)] = {" + (name_at.empty() ? std::string("0") : name_at) + "};\n";
  c += table("const int pn_reset_state[PN_DIM(PN_NUM_RESETS)]", reset_state, "0");
  c += table("const int pn_reset_slot[PN_DIM(PN_NUM_RESETS)]", reset_slot, "0");
  c += table("const PnSwitch pn_switches[PN_DIM(PN_NUM_SWITCHES)]", switches, "{0, 0, 0, 0, 0, 0, {0, 0}}");
  c += table("const signed char pn_time_slope[PN_DIM(PN_NUM_INDICATORS)]", slopes, "0");
  return c;
}

}  // namespace

std::string ModelHeader(const FmuModel& m) {
  const Sizes z = SizesOf(m);
  const LoweredModel& l = m.lowered;
  std::string h = "/* the model's sizes and the types shared with fmu.c: generated by paynter; do not edit */\n";
  h += "#ifndef PN_MODEL_H\n#define PN_MODEL_H\n\n";
  h += fmt::format("#define PN_GUID \"{}\"\n", m.guid);  // hexadecimal digits and dashes only
  h += fmt::format("#define PN_NUM_SLOTS {}\n", z.slots);
  h += fmt::format("#define PN_NUM_STATES {}\n", l.initial_state.size());
  h += fmt::format("#define PN_FIRST_STATE {}\n", l.first_state_slot);
  h += fmt::format("#define PN_FIRST_DERIVATIVE {}\n", l.first_derivative_slot);
  h += fmt::format("#define PN_FIRST_PARAMETER {}\n", l.first_parameter_slot);
  h += fmt::format("#define PN_NUM_PARAMETERS {}\n", l.parameter_values.size());
  h += fmt::format("#define PN_NUM_OUTPUTS {}\n", m.output_slots.size());
  h += fmt::format("#define PN_OUTPUTS_AFTER_RHS {}\n", l.outputs_after_rhs ? 1 : 0);
  h += fmt::format("#define PN_RHS_W {}\n", std::max(1, m.rhs.num_w));
  h += fmt::format("#define PN_OUT_W {}\n", std::max(1, m.outputs.num_w));
  h += fmt::format("#define PN_PAR_W {}\n", std::max(1, m.parameters.num_w));
  h += fmt::format("#define PN_MAX_BLOCK {}\n#define PN_MAX_NZ {}\n", z.max_block, z.max_nz);
  h += fmt::format("#define PN_KIND_ME {}\n#define PN_KIND_CS {}\n", m.options.model_exchange ? 1 : 0,
                   m.options.co_simulation ? 1 : 0);
  h += fmt::format("#define PN_CS_METHOD {} /* 0 dopri5, 1 rk4 */\n", m.options.method == "rk4" ? 1 : 0);
  h += fmt::format("#define PN_RTOL {}\n#define PN_ATOL {}\n#define PN_CS_STEP {}\n", Number(m.options.rtol),
                   Number(m.options.atol), Number(m.options.step));
  h += fmt::format("#define PN_EVT_W {}\n", std::max(1, m.events.num_w));
  h += fmt::format("#define PN_NUM_MODES {}\n#define PN_NUM_EVENTS {}\n#define PN_NUM_SWITCHES {}\n", l.modes.size(),
                   l.event_rows.size(), l.switches.size());
  size_t resets = 0;
  for (const EventRow& r : l.event_rows) resets += r.reset_states.size();
  h += fmt::format("#define PN_NUM_RESETS {}\n", resets);
  // The types and declarations shared with the runtime: a file of the runtime.
  h += "\n#include \"fmu_model.h\"\n\n#endif\n";
  return h;
}

std::string ModelSource(const FmuModel& m) {
  const Sizes z = SizesOf(m);
  const LoweredModel& l = m.lowered;
  std::string c = "/* the model's tables and programs: generated by paynter; do not edit */\n#include \"model.h\"\n\n";
  c += ProgramCode(m.rhs, "pn_rhs_", "pn_run_rhs");
  c += ProgramCode(m.outputs, "pn_out_", "pn_run_outputs");
  c += ProgramCode(m.parameters, "pn_par_", "pn_run_parameters");
  c += ProgramCode(m.events, "pn_evt_", "pn_run_events");
  std::vector<double> start(z.slots, 0.0);
  for (size_t i = 0; i < l.parameter_values.size(); ++i) start[l.first_parameter_slot + i] = l.parameter_values[i];
  for (size_t i = 0; i < l.initial_state.size(); ++i) start[l.first_state_slot + i] = l.initial_state[i];
  c += "const double pn_slot_start[PN_NUM_SLOTS] = {";
  for (int i = 0; i < z.slots; ++i) c += (i % 6 ? " " : "\n  ") + Number(start[i]) + ",";
  c += "\n};\n\nconst int pn_output_slot[PN_NUM_OUTPUTS > 0 ? PN_NUM_OUTPUTS : 1] = {";
  for (size_t k = 0; k < m.output_slots.size(); ++k) c += fmt::format("{}{}", k ? ", " : "", m.output_slots[k]);
  if (m.output_slots.empty()) c += "0";
  c += "};\n\nconst double pn_output_scale[PN_NUM_OUTPUTS > 0 ? PN_NUM_OUTPUTS : 1] = {";
  for (size_t k = 0; k < m.output_scale.size(); ++k) c += (k ? ", " : "") + Number(m.output_scale[k]);
  if (m.output_scale.empty()) c += "1.0";
  c += "};\n\nconst int pn_output_length[PN_NUM_OUTPUTS > 0 ? PN_NUM_OUTPUTS : 1] = {";
  for (size_t k = 0; k < m.output_slots.size(); ++k)
    c += fmt::format("{}{}", k ? ", " : "", k < m.output_length.size() ? m.output_length[k] : 1);
  if (m.output_slots.empty()) c += "1";
  c += "};\n\nconst unsigned char pn_parameter_kind[PN_NUM_PARAMETERS > 0 ? PN_NUM_PARAMETERS : 1] = {";
  for (size_t k = 0; k < m.parameter_kind.size(); ++k) c += fmt::format("{}{}", k ? ", " : "", int(m.parameter_kind[k]));
  if (m.parameter_kind.empty()) c += "0";
  c += "};\n";
  c += EventTables(m);
  return c;
}

std::vector<std::pair<std::string, std::string>> ModelFiles(const FmuModel& m) {
  // A program the model does not have (no calculated parameters, no events)
  // is a unit with one declaration: ISO C has no empty translation unit.
  auto unit = [](const CSource& c, const char* none) {
    return c.text.empty() ? fmt::format("/* {}: nothing to compute */\ntypedef int pn_empty_unit;\n", none) : c.text;
  };
  return {{"model.h", ModelHeader(m)},
          {"model.c", ModelSource(m)},
          {"rhs.c", m.rhs.text},
          {"outputs.c", m.outputs.text},
          {"parameters.c", unit(m.parameters, "no calculated parameters")},
          {"events.c", unit(m.events, "no events")}};
}

std::vector<std::pair<std::string, std::string>> RuntimeFiles(int version) {
  // The other version's functions stay out; this version's come first.
  const std::set<std::string> other = version == 3 ? std::set<std::string>{"fmu.c", "paynter_fmi2.h"}
                                                   : std::set<std::string>{"fmu3.c", "paynter_fmi3.h"};
  const std::string api = version == 3 ? "fmu3.c" : "fmu.c";
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < kRuntimeFilesCount; ++i) {
    const std::string name = kRuntimeFiles[i].name;
    if (other.count(name)) continue;
    auto at = name == api ? files.begin() : files.end();
    files.emplace(at, name, std::string(kRuntimeFiles[i].text, kRuntimeFiles[i].size));
  }
  return files;
}

std::vector<std::string> CFileNames(int version) {
  std::vector<std::string> names;
  for (const auto& [name, text] : RuntimeFiles(version))
    if (name.size() > 2 && name.compare(name.size() - 2, 2, ".c") == 0) names.push_back(name);
  for (const char* name : {"model.c", "rhs.c", "outputs.c", "parameters.c", "events.c"}) names.push_back(name);
  return names;
}

}  // namespace paynter::fmi
