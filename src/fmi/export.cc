// fmi/export.cc — ExportFmu: the model loaded and lowered as for `simulate`,
// its variables laid out, the C written and compiled, the FMU zipped.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "fmu.h"
#include "paynter/hash.h"
#include "paynter/causality.h"
#include "paynter/constrained.h"
#include "paynter/constraint_method.h"
#include "paynter/equations.h"
#include "paynter/error.h"
#include "paynter/files.h"
#include "paynter/model.h"
#include "paynter/multibody.h"
#include "paynter/pipeline.h"
#include "paynter/process.h"
#include "paynter/program.h"
#include "paynter/progress.h"
#include "paynter/simulation.h"
#include "paynter/units.h"
#include "paynter/codegen.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const FmuOptions& o, std::string message, std::string expected, std::string got,
                       std::string hint) {
  ThrowAt({o.model_file}, "", std::move(message), std::move(expected), std::move(got), std::move(hint));
}

void CheckOptions(const FmuOptions& o) {
  if (!o.model_exchange && !o.co_simulation)
    Fail(o, "an FMU must be exported for model exchange, co-simulation or both", "--kind me|cs|both", "neither", "");
  if (o.method != "dopri5" && o.method != "rk4")
    Fail(o, fmt::format("--method {} is not an integrator the FMU carries", o.method), "--method dopri5 | rk4",
         "--method " + o.method, "co-simulation FMUs integrate with dopri5 (adaptive) or rk4 (fixed step)");
  if (!(o.rtol > 0 && o.rtol < 1) || !(o.atol > 0) || !std::isfinite(o.atol))
    Fail(o, "the co-simulation tolerances must be positive", "0 < rtol < 1, atol > 0",
         fmt::format("--rtol {} --atol {}", o.rtol, o.atol), "");
  if (!(o.step > 0) || !std::isfinite(o.step))
    Fail(o, "the rk4 step must be a positive number", "--step > 0", fmt::format("--step {}", o.step), "");
  if (o.output.empty()) Fail(o, "no output file given", "-o MODEL.fmu", "nothing", "");
  if (o.fmi_version != 2 && o.fmi_version != 3)
    Fail(o, fmt::format("FMI {} is not a version paynter exports", o.fmi_version), "--fmi-version 2 | 3",
         fmt::format("--fmi-version {}", o.fmi_version), "");
}

// A C identifier from the model's name (letters, digits, '_'): the shared
// object's file name and the modelIdentifier.
std::string Identifier(const std::string& name) {
  std::string id;
  for (char c : name.substr(0, 64)) id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "model_" + id;
  return id;
}

// One build of the model as the FMU runs it: loaded with its parameter
// overrides, each source marked `input: true` made an input, the equations
// lowered.
struct Build {
  Model model;
  EquationSystem eqs;
  LoweredModel lowered;
  std::vector<const Element*> input_sources;
  std::vector<std::string> input_parameters;  // the parameter standing for each input
  std::map<std::string, Dimension> dimensions;  // the unit check's (FindDimensions), with the inputs'
};

// Makes each source marked `input: true` an input of the FMU: its law is
// replaced by a new parameter, the input, whose start value is the law's value
// (the law must not vary by itself: the master gives the input's values).
// The input's dimension is the source's effort's or flow's.
void MakeInputs(Model* m, std::map<std::string, Dimension>* dimensions, std::vector<std::string>* input_parameters) {
  const GiNaC::exmap values = m->ParameterValues();
  for (auto& e : m->elements) {
    if (!e.input) continue;
    if (!IsSource(e.kind) || e.form == LawForm::kConstraint)
      ThrowAt(e.where, e.name, "'input: true' marks a source as an input of the FMU",
              "an Se, Sf, MSe or MSf element with 'effort:' or 'flow:'",
              fmt::format("a {} element{}", KindName(e.kind), e.form == LawForm::kConstraint ? " with 'constraint:'" : ""),
              "remove 'input: true'");
    const GiNaC::ex start = GiNaC::evalf(e.law.subs(values));
    if (!GiNaC::is_a<GiNaC::numeric>(start) || !GiNaC::ex_to<GiNaC::numeric>(start).is_real())
      ThrowAt(e.where, e.name,
              "an input of the FMU takes the place of the source's law, and this law varies by itself",
              "a law that is a number or an expression of parameters (the input's start value)",
              fmt::format("{}: {}", e.law_key, e.law_text),
              "the master gives the input's values at every step: write the variation in the master, or remove "
              "'input: true' to keep the law in the FMU");
    std::string name = "u_" + e.name;
    while (m->symbols.count(name)) name += "_";
    GiNaC::symbol u(name);
    m->symbols.emplace(name, u);
    Parameter par;
    par.name = name;
    par.value = GiNaC::ex_to<GiNaC::numeric>(start).to_double();
    par.text = fmt::format("{}", par.value);
    par.where = e.where;
    m->parameters.push_back(par);
    const bool effort = e.kind == ElementKind::kSe || e.kind == ElementKind::kMSe;
    if (!e.bonds.empty()) {
      const auto d = dimensions->find((effort ? "e_" : "f_") + m->bonds[e.bonds[0]].name);
      if (d != dimensions->end()) (*dimensions)[name] = d->second;
    }
    e.law = u;
    input_parameters->push_back(name);
  }
}

// Whether a step of `p` reads symbol `s`.
bool Reads(const Program& p, const GiNaC::symbol& s) {
  for (const ProgramStep& step : p.steps) {
    if (step.kind == ProgramStep::Kind::kAssign) {
      if (step.value.has(s)) return true;
      continue;
    }
    for (const auto* list : {&step.residuals, &step.jacobian})
      for (const GiNaC::ex& e : *list)
        if (e.has(s)) return true;
  }
  return false;
}

// The derived parameters (an expression of parameters written before them,
// not overridden) as a program over the slots [t, parameters...] that
// computes them from the others': the FMU runs it whenever a parameter
// changes, so that they stay what the model file says. Sets (*calculated)[i]
// for each parameter it computes; a derived parameter whose expression reads
// anything but parameters, numbers and units is left out (and stays fixed).
Program CalculatedParameters(const Build& b, std::vector<bool>* calculated) {
  const LoweredModel& l = b.lowered;
  const size_t n = l.parameter_names.size();
  calculated->assign(n, false);
  Program p;
  const size_t num = static_cast<size_t>(l.first_parameter_slot) + n;
  if (b.eqs.rhs.symbols.size() < num) return p;
  p.symbols.assign(b.eqs.rhs.symbols.begin(), b.eqs.rhs.symbols.begin() + num);
  p.slot_names.assign(b.eqs.rhs.slot_names.begin(), b.eqs.rhs.slot_names.begin() + std::min(num, b.eqs.rhs.slot_names.size()));
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) index[l.parameter_names[i]] = i;
  const GiNaC::exmap values = b.model.ParameterValues();
  for (const Parameter& par : b.model.parameters) {
    if (IsNumberText(par.text) || par.overridden || !index.count(par.name)) continue;
    const size_t i = index.at(par.name);
    if (!p.symbols[l.first_parameter_slot + i].is_equal(b.model.Symbol(par.name))) continue;
    GiNaC::ex value;
    bool derived = false;  // a number with a unit ("(5)*(1/1000)") is not
    try {
      value = ParseExpressionText(par.text, [&](const std::string& id) -> GiNaC::ex {
        if (id == "pi" || id == "Pi") return GiNaC::Pi;
        if (id.size() > 2 && id.front() == '[') {
          const std::optional<Unit> u = ParseUnit(id.substr(1, id.size() - 2));
          if (!u) throw std::invalid_argument("not a unit");
          return u->scale;
        }
        const auto it = index.find(id);
        if (it == index.end() || it->second >= i) throw std::invalid_argument("not a parameter before it");
        derived = true;
        return b.model.Symbol(id);
      });
    } catch (const std::exception&) {
      continue;
    }
    if (!derived) continue;
    // It must give the value the model was built with.
    const GiNaC::ex v = GiNaC::evalf(value.subs(values));
    if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real()) continue;
    const double x = GiNaC::ex_to<GiNaC::numeric>(v).to_double();
    if (!(std::fabs(x - par.value) <= 1e-13 * std::fabs(par.value))) continue;
    ProgramStep step;
    step.target = l.first_parameter_slot + static_cast<int>(i);
    step.value = value;
    step.label = "parameter " + par.name;
    p.steps.push_back(std::move(step));
    (*calculated)[i] = true;
  }
  return p;
}

// Whether the programs of `a`, with `b`'s parameter values in its slots,
// compute what `b`'s compute: the derivatives and outputs at a few states
// near b's initial state. A parameter whose new value the build turned into
// numbers (a mechanism's poses, a signal's time) shows here.
// The slots of a model's event indicators (fmu_model.h's order: modes,
// events, two per switched element) and of its events' reset values.
std::vector<std::vector<int>> EventSlots(const LoweredModel& l) {
  std::vector<int> indicators, resets;
  for (const ModeRow& r : l.modes) indicators.push_back(r.indicator_slot);
  for (const EventRow& r : l.event_rows) {
    indicators.push_back(r.indicator_slot);
    resets.insert(resets.end(), r.reset_slots.begin(), r.reset_slots.end());
  }
  for (const SwitchRow& s : l.switches) indicators.insert(indicators.end(), s.indicator_slots, s.indicator_slots + 2);
  return {indicators, resets};
}

// Which event indicators are time events (fmi::FmuModel::time_slope): with
// the assignments of the right-hand side and the event program substituted,
// the indicator reads only time, parameters that are not inputs, modes and
// states whose derivative is zero (a sampled block's next sample time), and
// its derivative in t is 1 or -1. Its crossing time is then t - g/slope,
// known in advance; any other indicator is a state event (0).
std::vector<int> TimeSlopes(const EquationSystem& eqs, const LoweredModel& l,
                            const std::vector<fmi::ParameterKind>& kinds) {
  const std::vector<int> slots = EventSlots(l)[0];
  std::vector<int> slopes(slots.size(), 0);
  const std::vector<GiNaC::symbol>& sym = eqs.event_program.symbols;
  auto symbol_at = [&](int slot) -> const GiNaC::symbol* {
    return slot >= 0 && static_cast<size_t>(slot) < sym.size() ? &sym[slot] : nullptr;
  };
  GiNaC::exmap defs;
  for (const Program* p : {&eqs.rhs, &eqs.event_program})
    for (const ProgramStep& step : p->steps)
      if (step.kind == ProgramStep::Kind::kAssign && symbol_at(step.target)) defs[*symbol_at(step.target)] = step.value;
  // The expression with the assignments substituted; empty (a state event)
  // when it grows beyond kMaxNodes (a mechanism's kinematics) or does not settle.
  constexpr int kMaxNodes = 20000;
  auto resolve = [&](GiNaC::ex e) -> std::optional<GiNaC::ex> {
    for (int round = 0; round < 64; ++round) {
      const GiNaC::ex next = e.subs(defs);
      if (next.is_equal(e)) return e;
      int nodes = 0;
      for (GiNaC::const_preorder_iterator it = next.preorder_begin(); it != next.preorder_end(); ++it)
        if (++nodes > kMaxNodes) return std::nullopt;
      e = next;
    }
    return std::nullopt;
  };
  const GiNaC::symbol* t = symbol_at(eqs.time_slot);
  if (!t) return slopes;
  std::set<std::string> allowed = {t->get_name()};
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] != fmi::kInput)
      if (const GiNaC::symbol* p = symbol_at(l.first_parameter_slot + static_cast<int>(i))) allowed.insert(p->get_name());
  for (const ModeRow& r : l.modes)
    if (const GiNaC::symbol* p = symbol_at(r.slot)) allowed.insert(p->get_name());
  for (const SwitchRow& s : l.switches)
    for (int slot : {s.held_slot, s.direction_slot})
      if (const GiNaC::symbol* p = symbol_at(slot)) allowed.insert(p->get_name());
  try {
    for (size_t i = 0; i < l.initial_state.size(); ++i) {
      const GiNaC::symbol* x = symbol_at(l.first_state_slot + static_cast<int>(i));
      const GiNaC::symbol* dx = symbol_at(l.first_derivative_slot + static_cast<int>(i));
      if (!x || !dx || !defs.count(*dx)) continue;
      const std::optional<GiNaC::ex> rate = resolve(defs.at(*dx));
      if (rate && rate->is_zero()) allowed.insert(x->get_name());
    }
    for (size_t k = 0; k < slots.size(); ++k) {
      const GiNaC::symbol* g = symbol_at(slots[k]);
      if (!g || !defs.count(*g)) continue;
      const std::optional<GiNaC::ex> resolved = resolve(defs.at(*g));
      if (!resolved) continue;
      const GiNaC::ex& e = *resolved;
      bool only_allowed = true;
      for (GiNaC::const_preorder_iterator it = e.preorder_begin(); it != e.preorder_end() && only_allowed; ++it)
        if (GiNaC::is_a<GiNaC::symbol>(*it)) only_allowed = allowed.count(GiNaC::ex_to<GiNaC::symbol>(*it).get_name()) > 0;
      if (!only_allowed) continue;
      const GiNaC::ex d = e.diff(*t);
      if (d.is_equal(1)) slopes[k] = 1;
      else if (d.is_equal(-1)) slopes[k] = -1;
    }
  } catch (const std::exception&) {  // an expression GiNaC cannot differentiate: state events
    std::fill(slopes.begin(), slopes.end(), 0);
  }
  return slopes;
}

bool SameFunctions(const LoweredModel& a, const LoweredModel& b) {
  if (a.initial_state.size() != b.initial_state.size() || a.output_names.size() != b.output_names.size()) return false;
  CodegenOptions tape;
  tape.backend = Backend::kTape;
  try {
    const CompiledModel ca(a, tape), cb(b, tape);
    ModelWorkspace wa(ca), wb(cb);
    for (size_t i = 0; i < b.parameter_values.size(); ++i) wa.SetParameterAt(static_cast<int>(i), b.parameter_values[i]);
    const size_t n = b.initial_state.size(), k = b.output_names.size();
    std::vector<double> x(n), da(n), db(n), ya(k), yb(k);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    auto next = [&] {  // in [-1, 1)
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<double>(r >> 11) / 4503599627370496.0 - 1;
    };
    auto close = [](const std::vector<double>& u, const std::vector<double>& v) {
      for (size_t i = 0; i < u.size(); ++i)
        if (!(std::fabs(u[i] - v[i]) <= 1e-9 * (1 + std::fabs(u[i]) + std::fabs(v[i])))) return false;
      return true;
    };
    for (int point = 0; point < 3; ++point) {
      const double t = 0.1 * point;
      for (size_t i = 0; i < n; ++i) x[i] = b.initial_state[i] + (point ? 0.05 * next() * (1 + std::fabs(b.initial_state[i])) : 0);
      wb.CalcDerivatives(t, x.data(), db.data());
      wa.CalcDerivatives(t, x.data(), da.data());
      if (k) {
        wb.CalcOutputs(t, x.data(), yb.data());
        wa.CalcOutputs(t, x.data(), ya.data());
      }
      if (!close(da, db) || !close(ya, yb)) return false;
      if (a.events && b.events) {  // the event indicators and reset values (with the modes at 0)
        std::vector<double> ea, eb;
        wa.CalcEventSlots(t, x.data());
        wb.CalcEventSlots(t, x.data());
        for (const std::vector<int>& slots : EventSlots(b)) {
          for (int slot : slots) {
            ea.push_back(wa.Slot(slot));
            eb.push_back(wb.Slot(slot));
          }
        }
        if (!close(ea, eb)) return false;
      }
    }
  } catch (const Error&) {
    return false;
  }
  return true;
}

// The units of the FMU: each variable's SI unit (a <Unit> with the exponents
// of its <BaseUnit>) and the unit written in the model as its display unit.
class Units {
 public:
  Units() { Find(Dimension{{0, 0, 6, 0, 0, 0, 0}}); }
  // Sets v.unit (and v.display_unit) for a quantity of dimension `dim`
  // written in `written` ("" for SI); nothing for a dimension FMI cannot
  // write (a fractional exponent), or a number without a display unit.
  void Set(fmi::Variable* v, const std::optional<std::array<int, 7>>& dim, const std::string& written) {
    std::optional<Unit> w;
    if (!written.empty()) w = ParseUnit(written);
    Dimension d;
    if (dim) {
      d.e = *dim;
    } else if (w) {
      d = w->dim;
    } else {
      return;
    }
    for (int e : d.e)
      if (e % 6 != 0) return;
    double scale = 1;
    if (w) {
      const GiNaC::ex s = GiNaC::evalf(w->scale);
      if (GiNaC::is_a<GiNaC::numeric>(s)) scale = GiNaC::ex_to<GiNaC::numeric>(s).to_double();
    }
    const bool display = w && w->dim == d && scale != 1 && std::isfinite(scale) && scale > 0;
    if (d.dimensionless() && !display) return;
    fmi::UnitDefinition& u = Find(d);
    v->unit = u.name;
    if (!display) return;
    v->display_unit = written;
    for (const auto& du : u.display)
      if (du.name == written) return;
    u.display.push_back({written, 1 / scale});
  }
  std::vector<fmi::UnitDefinition> definitions;

 private:
  fmi::UnitDefinition& Find(const Dimension& d) {
    const std::string name = DimensionText(d);
    for (auto& u : definitions)
      if (u.name == name) return u;
    fmi::UnitDefinition u;
    u.name = name;
    for (int i = 0; i < 7; ++i) u.exponents[i] = d.e[i] / 6;
    definitions.push_back(u);
    return definitions.back();
  }
};

std::optional<std::array<int, 7>> DimensionOf(const Build& b, const std::string& name) {
  const auto it = b.dimensions.find(name);
  if (it == b.dimensions.end()) return std::nullopt;
  return it->second.e;
}

// Per time: a dimension divided by seconds.
std::optional<std::array<int, 7>> PerSecond(std::optional<std::array<int, 7>> d) {
  if (d) (*d)[2] -= 6;
  return d;
}

// An output's expression as written, without the unit's scale SplitUnits put
// around it ("(f_rotor)/(pi/30)" -> "f_rotor").
std::string OutputText(const Output& o) {
  if (o.unit.empty() || o.text.empty() || o.text.front() != '(') return o.text;
  int depth = 0;
  for (size_t i = 0; i < o.text.size(); ++i) {
    if (o.text[i] == '(') ++depth;
    if (o.text[i] == ')' && --depth == 0) return o.text.compare(i, 3, ")/(") == 0 ? o.text.substr(1, i - 1) : o.text;
  }
  return o.text;
}

// Names are unique in an FMU: a name already taken gets `suffix`, then a number.
std::string Unique(std::set<std::string>& taken, const std::string& name, const std::string& suffix) {
  std::string n = name;
  if (taken.count(n)) n = name + suffix;
  for (int k = 2; taken.count(n); ++k) n = fmt::format("{}{}_{}", name, suffix, k);
  taken.insert(n);
  return n;
}

// The length of the vector that the outputs from k on form by their names,
// as paynter names the components of a vector (docs/model-format.md, "Vector
// bonds"; docs/multibody.md): `<P>x, <P>y` and `<P>z` if it follows, or
// `<P>_1, <P>_2, ..., <P>_n`; 0 when they form none. *name: the vector's
// (P, without a trailing '_').
size_t VectorAt(const std::vector<std::string>& names, size_t k, std::string* name) {
  const std::string& first = names[k];
  size_t n = 0;
  std::string p;
  if (first.size() > 1 && first.back() == 'x') {
    p = first.substr(0, first.size() - 1);
    for (const char* c : {"y", "z"})
      if (k + n + 1 < names.size() && names[k + n + 1] == p + c) ++n;
      else break;
    n = n > 0 ? n + 1 : 0;
  } else if (first.size() > 2 && first.compare(first.size() - 2, 2, "_1") == 0) {
    p = first.substr(0, first.size() - 2);
    while (k + n + 1 < names.size() && names[k + n + 1] == p + "_" + std::to_string(n + 2)) ++n;
    n = n > 0 ? n + 1 : 0;
  }
  if (!p.empty() && p.back() == '_') p.pop_back();
  *name = p;
  return p.empty() ? 0 : n;
}

// FMI 3.0: outputs that form a vector by their names (VectorAt), in one unit,
// are one array output named as the vector, with the value reference of its
// first component; its components are no variables of their own. The
// outputs are m's variables from `first` on.
void GroupVectorOutputs(fmi::FmuModel* m, size_t first, std::set<std::string>& taken) {
  const size_t num = m->output_slots.size();
  std::vector<std::string> names;
  for (size_t k = 0; k < num; ++k) names.push_back(m->variables[first + k].name);
  m->output_length.assign(num, 1);
  for (size_t k = 0; k < num;) {
    std::string name;
    size_t n = VectorAt(names, k, &name);
    for (size_t j = 1; j < n; ++j) {
      const fmi::Variable &a = m->variables[first + k], &b = m->variables[first + k + j];
      if (b.unit != a.unit || b.display_unit != a.display_unit || m->output_scale[k + j] != m->output_scale[k]) n = 0;
    }
    if (n == 0) {
      ++k;
      continue;
    }
    fmi::Variable& v = m->variables[first + k];
    std::string parts, laws;
    for (size_t j = 0; j < n; ++j) {
      fmi::Variable& c = m->variables[first + k + j];
      parts += (j ? ", " : "") + c.name;
      laws += (j ? "; " : "") + c.description.substr(c.description.rfind("output: ", 0) == 0 ? 8 : 0);
      c.array_component = j > 0;
      m->output_length[k + j] = j == 0 ? static_cast<int>(n) : 0;
    }
    v.name = Unique(taken, name, "_vector");
    v.description = fmt::format("output: the vector ({}): {}", parts, laws);
    v.dimension = static_cast<int>(n);
    k += n;
  }
}

std::string ReadFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A private directory of this run, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    std::string templ = ((ec ? fs::path("/tmp") : base) / "paynter-fmu-XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw Error(fmt::format("cannot create a private directory in '{}'", templ));
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

FmuReport ExportFmu(const FmuOptions& o) {
  StageScope stage("exporting " + o.model_file + " as an FMU");
  CheckOptions(o);
  const bool mechanism = LoadSpec(ModelSource::File(o.model_file), {}, LoadPass::kSubmodels).multibody.present;
  const Formulation formulation =
      o.form.empty() ? (mechanism ? Formulation::kLagrange2 : Formulation::kState) : ParseFormulation(o.form);
  const std::string form = FormulationName(formulation);
  const ConstraintMethod method = ParseConstraintMethod(o.constraints);
  if (!StrategyFor(method).CarriedByFmu())
    Fail(o, fmt::format("--constraints {} is not available in an FMU", o.constraints),
         "--constraints auto (a model without constraint sources) or parasitic",
         "--constraints " + o.constraints,
         "lagrange-multipliers, minimal-coordinates and zcp need paynter's driver (projection after steps, "
         "coordinate partitioning, a DAE solver), which the FMU does not carry");
  // (Only a mechanism's forms are refused here: the FMU export lets a bond
  // graph written by hand take the parasitic springs in any form.)
  MethodSet carried = 0;
  for (ConstraintMethod m : ConstraintMethods())
    if (StrategyFor(m).CarriedByFmu()) carried |= MethodBit(m);
  if (mechanism) RequireCombination(o.model_file, formulation, method, true, carried);
  LoadOptions lo;
  lo.form = formulation;
  lo.method = method;
  lo.parasitic.stiffness = o.parasitic_stiffness;
  lo.parasitic.damping = o.parasitic_damping;
  auto build = [&](const std::map<std::string, double>& overrides, bool with_units) {
    Build b;
    lo.overrides = overrides;
    b.model = [&] {
      try {
        LoadedModel loaded = Load(ModelSource::File(o.model_file), lo);
        if (with_units) b.dimensions = FindDimensions(loaded.spec, loaded.model);
        return std::move(loaded.model);
      } catch (const Error& e) {
        if (!mechanism || formulation != Formulation::kLagrange2 ||
            e.diagnostic().message.find("closes the kinematic loop") == std::string::npos)
          throw;
        Diagnostic d = e.diagnostic();
        d.hint = "an FMU runs closed chains only with compliant joints: export with --form state --constraints "
                 "parasitic (the other methods keep constraint rows, which need paynter's driver)";
        throw Error(std::move(d));
      }
    }();
    MakeInputs(&b.model, &b.dimensions, &b.input_parameters);
    for (const Element& e : b.model.elements)
      if (e.input) b.input_sources.push_back(&e);
    const CausalGraph graph = AssignCausality(b.model, OptionsFor(formulation, b.model));
    b.eqs = BuildEquations(b.model, graph);
    if (b.eqs.constraint_rows.empty()) b.lowered = LowerModel(b.eqs);
    return b;
  };
  Build base = build(o.overrides, true);
  const Model& model = base.model;
  const EquationSystem& eqs = base.eqs;
  if (!eqs.constraint_rows.empty()) {
    std::string hint;
    if (mechanism && !InJointCoordinates(formulation))
      hint = "an open chain: export with --form lagrange2 (joint coordinates, the default); a closed chain: "
             "--constraints parasitic";
    else if (mechanism)
      hint = "a closed chain keeps its cut joints as constraint rows in joint coordinates: export it with --form state "
             "--constraints parasitic";
    else
      hint = "export with --constraints parasitic (compliant joints), or write the mechanism under 'multibody:'";
    Fail(o,
         fmt::format("the FMU cannot simulate a model with constraint rows ({} of them: joint constraint forces or "
                     "sources with 'constraint:'), which paynter's driver stabilizes by projection",
                     eqs.constraint_rows.size()),
         "a model without constraint rows: a bond graph without constraint sources, a mechanism in joint "
         "coordinates (an open chain, --form lagrange2), or --constraints parasitic",
         fmt::format("{} constraint rows with --form {}", eqs.constraint_rows.size(), form), hint);
  }
  fmi::FmuModel m;
  m.options = o;
  m.options.form = form;
  m.lowered = base.lowered;
  const LoweredModel& l = m.lowered;
  for (double v : l.initial_state)
    if (!std::isfinite(v)) Fail(o, "an initial state is not a finite number", "finite initial values", "NaN or Inf", "");
  m.name = model.name.empty() ? fs::path(o.model_file).stem().string() : model.name;
  m.identifier = Identifier(m.name);
  m.description = fmt::format("paynter model '{}', --form {}", m.name, form);

  // What each parameter is in the FMU: an input, a derived parameter the FMU
  // computes (calculated), one whose new value is exact when set (tunable:
  // the equations keep it as a symbol, read from its slot, and nothing the
  // build computed depends on it), or fixed at export.
  const size_t np = l.parameter_names.size();
  std::vector<bool> calculated;
  const Program parameter_program = CalculatedParameters(base, &calculated);
  if (!parameter_program.steps.empty()) {
    try {
      m.parameters = ProgramCSource(*LowerProgram(parameter_program), "pn_par_");
    } catch (const Error&) {
      calculated.assign(np, false);
    }
  }
  m.parameter_kind.assign(np, fmi::kFixed);
  std::vector<std::string> why(np);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < np; ++i) index[l.parameter_names[i]] = i;
  for (size_t k = 0; k < base.input_parameters.size(); ++k) m.parameter_kind[index.at(base.input_parameters[k])] = fmi::kInput;
  for (size_t i = 0; i < np; ++i)
    if (calculated[i]) m.parameter_kind[i] = fmi::kCalculated;
  // Parameters that a program reads (or a calculated parameter).
  std::vector<bool> read(np, false);
  for (size_t i = 0; i < np; ++i) {
    const GiNaC::symbol& s = model.Symbol(l.parameter_names[i]);
    read[i] = Reads(eqs.rhs, s) || Reads(eqs.outputs, s) || Reads(eqs.event_program, s) || Reads(parameter_program, s);
  }
  // A candidate is tunable when the model built again with other values of
  // candidates gives the same functions of the slots, the same initial state
  // and the same other parameters (but calculated ones): all candidates at
  // once (each by its own factor, so that no ratio stays put), and only when
  // that differs, one at a time.
  std::vector<size_t> candidates;
  for (size_t i = 0; i < np; ++i) {
    if (m.parameter_kind[i] != fmi::kFixed) continue;
    if (read[i])
      candidates.push_back(i);
    else
      why[i] = "not read by the FMU's equations";
  }
  auto exact = [&](const std::vector<size_t>& changed) {
    std::map<std::string, double> overrides = o.overrides;
    std::vector<bool> is_changed(np, false);
    for (size_t k = 0; k < changed.size(); ++k) {
      const size_t i = changed[k];
      const double v = l.parameter_values[i], f = 0.015625 * (1 + static_cast<double>(k) / changed.size());
      overrides[l.parameter_names[i]] = v == 0 ? f : v * (1 + f);
      is_changed[i] = true;
    }
    try {
      const Build other = build(overrides, false);
      const LoweredModel& b = other.lowered;
      bool same = b.rhs && b.parameter_names == l.parameter_names && b.initial_state.size() == l.initial_state.size();
      for (size_t j = 0; same && j < np; ++j)
        same = is_changed[j] || m.parameter_kind[j] == fmi::kCalculated || b.parameter_values[j] == l.parameter_values[j];
      for (size_t j = 0; same && j < l.initial_state.size(); ++j)
        same = std::fabs(b.initial_state[j] - l.initial_state[j]) <= 1e-13 * (1 + std::fabs(l.initial_state[j]));
      return same && SameFunctions(l, b);
    } catch (const Error&) {
      return false;
    }
  };
  const bool all = !candidates.empty() && exact(candidates);
  for (size_t i : candidates) {
    if (all || (candidates.size() > 1 && exact({i})))
      m.parameter_kind[i] = fmi::kTunable;
    else
      why[i] = "values the export computed (initial values, a mechanism's geometry, numbers in the equations) "
               "depend on it";
  }
  // A calculated parameter is tunable when a tunable parameter feeds it.
  std::vector<bool> calculated_tunable(np, false);
  for (const ProgramStep& step : parameter_program.steps) {
    const size_t i = static_cast<size_t>(step.target - l.first_parameter_slot);
    for (size_t j = 0; j < np; ++j)
      if ((m.parameter_kind[j] == fmi::kTunable || calculated_tunable[j]) && step.value.has(model.Symbol(l.parameter_names[j])))
        calculated_tunable[i] = true;
  }

  std::vector<std::string> output_names = l.output_names;
  m.output_slots = l.output_slots;
  if (output_names.empty()) {  // no outputs declared: the states (as simulate reports them)
    output_names = l.state_names;
    for (size_t i = 0; i < l.state_names.size(); ++i) m.output_slots.push_back(l.first_state_slot + int(i));
  }

  m.rhs = ProgramCSource(*l.rhs, "pn_rhs_");
  m.outputs = ProgramCSource(*l.outputs, "pn_out_");
  if (l.events) m.events = ProgramCSource(*l.events, "pn_evt_");
  m.time_slope = TimeSlopes(eqs, l, m.parameter_kind);
  int num_slots = l.num_slots;
  for (const auto* p : {l.rhs.get(), l.outputs.get(), l.events.get()})
    if (p) num_slots = std::max(num_slots, NumSlots(*p));

  // Variables: time, parameters (and inputs), states, derivatives, outputs; a
  // slot's value reference is its index, an output's follows the slots.
  Units units;
  std::set<std::string> taken(output_names.begin(), output_names.end());
  auto add = [&](fmi::Variable v) { m.variables.push_back(std::move(v)); };
  {
    fmi::Variable time{Unique(taken, "time", "_"), "time", "independent", "continuous", "", 0, std::nullopt, 0, ""};
    units.Set(&time, std::array<int, 7>{0, 0, 6, 0, 0, 0, 0}, "");
    add(time);
  }
  std::map<std::string, const Parameter*> parameter_of;
  for (const Parameter& p : model.parameters) parameter_of[p.name] = &p;
  FmuReport report;
  for (size_t i = 0; i < np; ++i) {
    const std::string& name = l.parameter_names[i];
    const Parameter* p = parameter_of.count(name) ? parameter_of.at(name) : nullptr;
    const unsigned vr = static_cast<unsigned>(l.first_parameter_slot + i);
    fmi::Variable v;
    v.value_reference = vr;
    switch (m.parameter_kind[i]) {
      case fmi::kInput: {
        const size_t k = static_cast<size_t>(
            std::find(base.input_parameters.begin(), base.input_parameters.end(), name) - base.input_parameters.begin());
        const Element& e = *base.input_sources[k];
        v = {Unique(taken, e.name, "_input"),
             fmt::format("input: the {} of {} '{}' (its law in the model: {})",
                         e.kind == ElementKind::kSe || e.kind == ElementKind::kMSe ? "effort" : "flow", KindName(e.kind),
                         e.name, e.law_text),
             "input", "continuous", "", vr, l.parameter_values[i], 0, ""};
        ++report.num_inputs;
        break;
      }
      case fmi::kCalculated:
        v = {Unique(taken, name, "_parameter"),
             fmt::format("derived parameter = {}", p ? p->text : name), "calculatedParameter",
             calculated_tunable[i] ? "tunable" : "fixed", "calculated", vr, std::nullopt, 0, ""};
        ++report.num_calculated;
        break;
      case fmi::kTunable:
        v = {Unique(taken, name, "_parameter"), "parameter", "parameter", "tunable", "exact", vr,
             l.parameter_values[i], 0, ""};
        ++report.num_tunable;
        break;
      default:
        v = {Unique(taken, name, "_parameter"), "parameter, fixed at export: " + why[i], "local", "constant", "exact",
             vr, l.parameter_values[i], 0, ""};
    }
    units.Set(&v, DimensionOf(base, name), p && m.parameter_kind[i] != fmi::kInput ? p->unit : "");
    add(v);
  }
  const int first_state_index = static_cast<int>(m.variables.size()) + 1;
  std::set<int> reset_states;  // states an event's reset sets (FMI 3.0's reinit)
  for (const EventRow& r : l.event_rows) reset_states.insert(r.reset_states.begin(), r.reset_states.end());
  for (size_t i = 0; i < l.state_names.size(); ++i) {
    fmi::Variable v{Unique(taken, l.state_names[i], "_state"),
                    "state" + (i < l.state_origin.size() && !l.state_origin[i].empty() ? ": " + l.state_origin[i]
                                                                                        : std::string()),
                    "local", "continuous", "exact", static_cast<unsigned>(l.first_state_slot + i), l.initial_state[i], 0,
                    ""};
    v.reinit = o.fmi_version == 3 && reset_states.count(static_cast<int>(i));
    units.Set(&v, DimensionOf(base, l.state_names[i]), "");
    add(v);
  }
  for (size_t i = 0; i < l.state_names.size(); ++i) {
    fmi::Variable v{Unique(taken, "der(" + l.state_names[i] + ")", "_"),
                    "time derivative of the state " + l.state_names[i], "local", "continuous", "calculated",
                    static_cast<unsigned>(l.first_derivative_slot + i), std::nullopt,
                    first_state_index + static_cast<int>(i), ""};
    units.Set(&v, PerSecond(DimensionOf(base, l.state_names[i])), "");
    add(v);
  }
  std::map<std::string, const Output*> output_of;
  for (const Output& out : model.outputs) output_of[out.name] = &out;
  for (size_t k = 0; k < output_names.size(); ++k) {
    const Output* out = output_of.count(output_names[k]) ? output_of.at(output_names[k]) : nullptr;
    fmi::Variable v{output_names[k], out ? "output: " + OutputText(*out) : "output: the state " + output_names[k],
                    "output", "continuous", "calculated", static_cast<unsigned>(num_slots + k), std::nullopt, 0, ""};
    units.Set(&v, DimensionOf(base, output_names[k]), out ? out->unit : "");
    // The FMU gives an output in its SI unit: the value simulate reports (in
    // the unit written) times that unit's scale.
    double scale = 1;
    if (out && !out->unit.empty())
      if (const std::optional<Unit> u = ParseUnit(out->unit)) {
        const GiNaC::ex s = GiNaC::evalf(u->scale);
        if (GiNaC::is_a<GiNaC::numeric>(s)) scale = GiNaC::ex_to<GiNaC::numeric>(s).to_double();
      }
    m.output_scale.push_back(scale);
    add(v);
  }
  if (o.fmi_version == 3) GroupVectorOutputs(&m, m.variables.size() - output_names.size(), taken);
  // FMI 3.0: the event indicators are variables too (fmu_model.h's order), after the outputs.
  if (o.fmi_version == 3) {
    std::vector<std::string> what;
    for (const ModeRow& r : l.modes) what.push_back(fmt::format("the condition {}", r.text));
    for (const EventRow& r : l.event_rows) what.push_back(fmt::format("the event '{}'", r.name));
    for (const SwitchRow& r : l.switches)
      for (const char* mode : {"while held (stuck or blocking)", "while moving (sliding or conducting)"})
        what.push_back(fmt::format("the switched element '{}', {}", r.element, mode));
    for (size_t i = 0; i < what.size(); ++i) {
      fmi::Variable v{Unique(taken, fmt::format("event_indicator_{}", i + 1), "_"),
                      "event indicator: " + what[i], "local", "continuous", "calculated",
                      static_cast<unsigned>(num_slots + output_names.size() + i), std::nullopt, 0, ""};
      v.event_indicator = true;
      add(v);
    }
  }
  m.units = units.definitions;

  // The GUID: a hash of everything the FMU holds but the compiled code.
  m.guid = "";
  std::string hashed =
      fmi::ModelDescription(m) + fmi::ModelSource(m) + m.rhs.text + m.outputs.text + m.parameters.text + m.events.text;
  const std::vector<std::pair<std::string, std::string>> runtime = fmi::RuntimeFiles(o.fmi_version);
  for (const auto& [name, text] : runtime) hashed += text;
  const uint64_t h1 = Fnv1a64(hashed, kFnv1aOffset), h2 = Fnv1a64(hashed, 0x9e3779b97f4a7c15ull);
  m.guid = fmt::format("{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}", uint32_t(h1 >> 32), uint32_t((h1 >> 16) & 0xFFFF),
                       uint32_t(h1 & 0xFFFF), uint32_t(h2 >> 48), h2 & 0xFFFFFFFFFFFFull);

  // The runtime's files, then the model's (their order in sources/).
  std::vector<std::pair<std::string, std::string>> sources;
  for (const auto& file : runtime) sources.push_back(file);
  for (auto& file : fmi::ModelFiles(m)) sources.push_back(std::move(file));
  TempDir dir;
  for (const auto& [name, text] : sources) {
    std::ofstream f(dir.path / name, std::ios::binary);
    f << text;
    if (!f.flush()) throw Error(fmt::format("cannot write '{}'", (dir.path / name).string()));
  }
  const fs::path so = dir.path / (m.identifier + ".so");
  std::vector<std::string> argv = CommandWords(FindCCompiler());
  for (const std::string& w : CommandWords(NativeCompileFlags(m.rhs.num_ops + m.outputs.num_ops + m.parameters.num_ops)))
    argv.push_back(w);
  for (const char* w : {"-fPIC", "-shared", "-fvisibility=hidden", "-o"}) argv.push_back(w);
  argv.push_back(so.string());
  for (const auto& [name, text] : sources)
    if (fs::path(name).extension() == ".c") argv.push_back((dir.path / name).string());
  argv.push_back("-lm");
  std::string output;
  const auto start = std::chrono::steady_clock::now();
  StageScope compiling("compiling the FMU's code");
  const int status = RunTool(argv, &output);
  report.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  if (status != 0 || !fs::exists(so, ec)) {
    if (output.size() > 2000) output = output.substr(0, 2000) + "\n...";
    std::string cmd;
    for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    ThrowAt({o.model_file}, "", fmt::format("the C compiler failed on the FMU's code: {}\n{}", cmd, output), "", "",
            "set CC to a working C compiler");
  }
  const std::string library = ReadFile(so);
  const std::string library_path = fmi::BinaryDirectory(o.fmi_version) + "/" + m.identifier + ".so";
  std::vector<std::pair<std::string, std::string>> files = {{"modelDescription.xml", fmi::ModelDescription(m)},
                                                            {library_path, library}};
  for (const auto& [name, text] : sources) files.emplace_back("sources/" + name, text);
  if (o.fmi_version == 3) files.emplace_back("sources/buildDescription.xml", fmi::BuildDescription(m));
  const std::string zip = fmi::ZipArchive(files);
  WriteFileAtomically(o.output, zip, "FMU");

  report.model_identifier = m.identifier;
  report.library_path = library_path;
  report.guid = m.guid;
  report.form = form;
  report.num_states = static_cast<int>(l.state_names.size());
  report.num_outputs = static_cast<int>(output_names.size());
  report.num_parameters = static_cast<int>(np) - report.num_inputs;
  report.library_bytes = static_cast<long>(library.size());
  report.fmu_bytes = static_cast<long>(zip.size());
  return report;
}

}  // namespace paynter
