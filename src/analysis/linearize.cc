// Linearization of the state equations by forward-mode differentiation of the
// rhs and outputs programs (paynter/linear.h): each step's expression is
// differentiated by GiNaC once; at an operating point the partial derivatives
// are evaluated and chained, an implicit block by the implicit function theorem.
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "paynter/codegen.h"
#include "paynter/linear.h"

namespace paynter {
namespace {

using SlotMap = std::map<GiNaC::ex, int, GiNaC::ex_is_less>;

// The symbols of `e`, once each.
std::vector<GiNaC::symbol> SymbolsOf(const GiNaC::ex& e) {
  std::vector<GiNaC::symbol> out;
  GiNaC::exset seen;
  for (auto it = e.preorder_begin(); it != e.preorder_end(); ++it)
    if (GiNaC::is_a<GiNaC::symbol>(*it) && seen.insert(*it).second) out.push_back(GiNaC::ex_to<GiNaC::symbol>(*it));
  return out;
}

// A partial derivative d(value)/d(slot), kept symbolic and evaluated at each
// operating point.
struct Term {
  int slot = -1;
  GiNaC::ex partial;
};

struct StepDerivative {
  bool block = false;
  int target = -1;                       // assign
  std::vector<Term> terms;               // assign: d value / d slot
  std::vector<int> unknowns;             // block
  std::vector<GiNaC::ex> jacobian;       // block: d r_i / d u_j, row-major
  std::vector<std::vector<Term>> rterms; // block: d r_i / d w for the other slots w
  std::string label;
};

std::string Text(const GiNaC::ex& e) {
  std::ostringstream os;
  os << e;
  std::string s = os.str();
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

class Differentiator {
 public:
  Differentiator(const EquationSystem& sys, const std::vector<std::string>& input_parameters)
      : sys_(sys), n_(static_cast<int>(sys.states.size())), m_(static_cast<int>(input_parameters.size())) {
    const Program& p = sys.rhs;
    for (size_t i = 0; i < p.symbols.size(); ++i) slot_of_[p.symbols[i]] = static_cast<int>(i);
    active_.assign(sys.num_slots, 0);
    for (int i = 0; i < n_; ++i) active_[sys.first_state_slot + i] = 1;
    for (const auto& name : input_parameters) {
      const auto it = std::find(sys.parameter_names.begin(), sys.parameter_names.end(), name);
      if (it == sys.parameter_names.end()) throw Error("linearize: no input parameter '" + name + "' in the equations");
      const int slot = sys.first_parameter_slot + static_cast<int>(it - sys.parameter_names.begin());
      input_slots_.push_back(slot);
      active_[slot] = 1;
    }
    Prepare(sys.rhs, &rhs_);
    Prepare(sys.outputs, &outputs_);
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    rhs_program_ = Compile(sys.rhs, cg);
    outputs_program_ = Compile(sys.outputs, cg);
  }

  int num_states() const { return n_; }

  // The slot values at (t, x), parameters as the equations hold them.
  std::vector<double> Values(double t, const std::vector<double>& x) const {
    std::vector<double> slots(sys_.num_slots, 0.0);
    slots[sys_.time_slot] = t;
    for (size_t i = 0; i < sys_.parameter_values.size(); ++i)
      slots[sys_.first_parameter_slot + i] = sys_.parameter_values[i];
    for (int i = 0; i < n_; ++i) slots[sys_.first_state_slot + i] = x[i];
    rhs_program_->Run(slots.data());
    outputs_program_->Run(slots.data());
    return slots;
  }

  std::vector<double> Derivatives(double t, const std::vector<double>& x) const {
    const auto s = Values(t, x);
    return std::vector<double>(s.begin() + sys_.first_derivative_slot, s.begin() + sys_.first_derivative_slot + n_);
  }

  // d slot / d (x, u) for every slot, at (t, x): rows of n + m.
  std::vector<std::vector<double>> Sensitivities(const std::vector<double>& slots) const {
    const int nd = n_ + m_;
    std::vector<std::vector<double>> d(sys_.num_slots);
    for (int i = 0; i < n_; ++i) {
      d[sys_.first_state_slot + i].assign(nd, 0.0);
      d[sys_.first_state_slot + i][i] = 1;
    }
    for (int j = 0; j < m_; ++j) {
      d[input_slots_[j]].assign(nd, 0.0);
      d[input_slots_[j]][n_ + j] = 1;
    }
    for (const auto* steps : {&rhs_, &outputs_})
      for (const auto& st : *steps) Apply(st, slots, &d);
    return d;
  }

 private:
  void Prepare(const Program& p, std::vector<StepDerivative>* out) {
    for (const auto& st : p.steps) {
      StepDerivative sd;
      sd.label = st.label;
      if (st.kind == ProgramStep::Kind::kAssign) {
        sd.target = st.target;
        for (const auto& s : SymbolsOf(st.value)) {
          const int k = SlotOf(s);
          if (active_[k]) sd.terms.push_back({k, st.value.diff(s)});
        }
        if (!sd.terms.empty()) active_[st.target] = 1;
        out->push_back(std::move(sd));
        continue;
      }
      sd.block = true;
      sd.unknowns = st.unknowns;
      sd.jacobian = st.jacobian;
      const std::set<int> unknown(st.unknowns.begin(), st.unknowns.end());
      bool any = false;
      for (const auto& r : st.residuals) {
        std::vector<Term> terms;
        for (const auto& s : SymbolsOf(r)) {
          const int k = SlotOf(s);
          if (!unknown.count(k) && active_[k]) terms.push_back({k, r.diff(s)});
        }
        any = any || !terms.empty();
        sd.rterms.push_back(std::move(terms));
      }
      if (any)
        for (int u : st.unknowns) active_[u] = 1;
      out->push_back(std::move(sd));
    }
  }

  int SlotOf(const GiNaC::symbol& s) const {
    const auto it = slot_of_.find(s);
    if (it == slot_of_.end()) throw Error("linearize: a symbol of the equations has no slot: " + s.get_name());
    return it->second;
  }

  // The value of `e` with every symbol at its slot's value.
  double Eval(const GiNaC::ex& e, const std::vector<double>& slots, const std::string& what) const {
    if (GiNaC::is_a<GiNaC::numeric>(e)) return GiNaC::ex_to<GiNaC::numeric>(e).to_double();
    GiNaC::exmap values;
    for (const auto& s : SymbolsOf(e)) values[s] = GiNaC::numeric(slots[SlotOf(s)]);
    GiNaC::ex v;
    try {
      v = GiNaC::evalf(e.subs(values, GiNaC::subs_options::no_pattern));
    } catch (const std::exception& ex) {
      v = GiNaC::ex();  // a pole: reported below
    }
    if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real() ||
        !std::isfinite(GiNaC::ex_to<GiNaC::numeric>(v).to_double())) {
      Diagnostic d;
      d.message = fmt::format("linearize: {} has no finite value at the operating point", what);
      d.expected = "a differentiable expression there";
      d.got = Text(e);
      d.hint = "abs(), step() and the like have no derivative at their kink; choose another operating point";
      throw Error(std::move(d));
    }
    return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
  }

  std::string SlotName(int k) const {
    return k < static_cast<int>(sys_.rhs.slot_names.size()) ? sys_.rhs.slot_names[k] : std::to_string(k);
  }

  void Apply(const StepDerivative& st, const std::vector<double>& slots, std::vector<std::vector<double>>* d) const {
    const int nd = n_ + m_;
    if (!st.block) {
      if (st.terms.empty()) return;
      std::vector<double> row(nd, 0.0);
      for (const auto& term : st.terms) {
        const auto& dk = (*d)[term.slot];
        if (dk.empty()) continue;
        const double c =
            Eval(term.partial, slots, fmt::format("d {} / d {}", SlotName(st.target), SlotName(term.slot)));
        if (c == 0) continue;
        for (int j = 0; j < nd; ++j) row[j] += c * dk[j];
      }
      (*d)[st.target] = std::move(row);
      return;
    }
    const int nu = static_cast<int>(st.unknowns.size());
    bool any = false;
    for (const auto& t : st.rterms) any = any || !t.empty();
    if (!any) return;
    Eigen::MatrixXd J(nu, nu), R = Eigen::MatrixXd::Zero(nu, nd);
    for (int i = 0; i < nu; ++i)
      for (int j = 0; j < nu; ++j) J(i, j) = Eval(st.jacobian[i * nu + j], slots, "the Jacobian of " + st.label);
    for (int i = 0; i < nu; ++i)
      for (const auto& term : st.rterms[i]) {
        const auto& dk = (*d)[term.slot];
        if (dk.empty()) continue;
        const double c = Eval(term.partial, slots, fmt::format("d r / d {} in {}", SlotName(term.slot), st.label));
        for (int j = 0; j < nd; ++j) R(i, j) -= c * dk[j];
      }
    Eigen::FullPivLU<Eigen::MatrixXd> lu(J);
    if (lu.rank() < nu) {
      Diagnostic dg;
      dg.message = fmt::format("linearize: the implicit block '{}' is singular at the operating point", st.label);
      dg.expected = "a block whose Jacobian is invertible, so that the implicit function theorem applies";
      dg.got = fmt::format("rank {} of {}", lu.rank(), nu);
      dg.hint = "its unknowns are not locally determined there (a redundant constraint, a singular configuration); "
                "choose another operating point";
      throw Error(std::move(dg));
    }
    const Eigen::MatrixXd X = lu.solve(R);
    for (int i = 0; i < nu; ++i) {
      std::vector<double> row(nd);
      for (int j = 0; j < nd; ++j) row[j] = X(i, j);
      (*d)[st.unknowns[i]] = std::move(row);
    }
  }

  const EquationSystem& sys_;
  int n_, m_;
  SlotMap slot_of_;
  std::vector<char> active_;
  std::vector<int> input_slots_;
  std::vector<StepDerivative> rhs_, outputs_;
  std::unique_ptr<CompiledProgram> rhs_program_, outputs_program_;
};

LinearModel LinearizeWith(const Differentiator& diff, const EquationSystem& sys, const std::vector<std::string>& inputs,
                          double t, const std::vector<double>& x) {
  const int n = diff.num_states(), m = static_cast<int>(inputs.size());
  if (static_cast<int>(x.size()) != n)
    throw Error(fmt::format("linearize: an operating point of {} states for a model of {}", x.size(), n));
  const auto slots = diff.Values(t, x);
  const auto d = diff.Sensitivities(slots);
  LinearModel lin;
  lin.states = sys.state_names;
  lin.inputs = inputs;
  lin.t = t;
  lin.x = x;
  std::vector<int> out_slots = sys.output_slots;
  lin.outputs = sys.output_names;
  if (lin.outputs.empty()) {  // no outputs declared: the states
    lin.outputs = sys.state_names;
    for (int i = 0; i < n; ++i) out_slots.push_back(sys.first_state_slot + i);
  }
  const int p = static_cast<int>(out_slots.size());
  lin.A = Matrix(n, n);
  lin.B = Matrix(n, m);
  lin.C = Matrix(p, n);
  lin.D = Matrix(p, m);
  auto fill = [&](int slot, Matrix* left, Matrix* right, int row) {
    const auto& dk = d[slot];
    if (dk.empty()) return;
    for (int j = 0; j < n; ++j) (*left)(row, j) = dk[j];
    for (int j = 0; j < m; ++j) (*right)(row, j) = dk[n + j];
  };
  for (int i = 0; i < n; ++i) {
    fill(sys.first_derivative_slot + i, &lin.A, &lin.B, i);
    lin.dx.push_back(slots[sys.first_derivative_slot + i]);
  }
  for (int i = 0; i < p; ++i) {
    fill(out_slots[i], &lin.C, &lin.D, i);
    lin.y.push_back(slots[out_slots[i]]);
  }
  return lin;
}

}  // namespace

Model WithInputs(const Model& model, std::vector<std::string>* inputs, std::vector<std::string>* input_parameters) {
  Model m = model;
  for (auto& e : m.elements) {
    if (!e.input) continue;
    if (!IsSource(e.kind) || e.form == LawForm::kConstraint)
      ThrowAt(e.where, e.name, "'input: true' marks a source as an input of the linear model",
              "an Se, Sf, MSe or MSf element with 'effort:' or 'flow:'",
              fmt::format("a {} element{}", KindName(e.kind), e.form == LawForm::kConstraint ? " with 'constraint:'" : ""),
              "remove 'input: true'");
    std::string name = "u_" + e.name;
    while (m.symbols.count(name)) name += "_";
    GiNaC::symbol u(name);
    m.symbols.emplace(name, u);
    Parameter par;
    par.name = name;
    par.value = 0;
    par.text = "0";
    par.where = e.where;
    m.parameters.push_back(par);
    e.law = e.law + u;
    inputs->push_back(e.name);
    input_parameters->push_back(name);
  }
  return m;
}

LinearModel Linearize(const EquationSystem& system, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& input_parameters, double t, const std::vector<double>& x) {
  const Differentiator diff(system, input_parameters);
  return LinearizeWith(diff, system, inputs, t, x);
}

std::vector<double> SteadyState(const EquationSystem& system, const std::vector<std::string>& input_parameters,
                                double t, const std::vector<double>& start, const SteadyStateOptions& options) {
  const Differentiator diff(system, input_parameters);
  const int n = diff.num_states();
  std::vector<double> x = start;
  auto norm = [](const std::vector<double>& v) {
    double m = 0;
    for (double a : v) m = std::max(m, std::fabs(a));
    return m;
  };
  std::vector<double> f = diff.Derivatives(t, x);
  const double target = options.tol * (1 + norm(f));
  for (int it = 0; it < options.max_iter; ++it) {
    if (norm(f) <= target) return x;
    const LinearModel lin = LinearizeWith(diff, system, input_parameters, t, x);
    Eigen::MatrixXd A(n, n);
    Eigen::VectorXd rhs(n);
    for (int i = 0; i < n; ++i) {
      rhs(i) = -f[i];
      for (int j = 0; j < n; ++j) A(i, j) = lin.A(i, j);
    }
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(A);
    const Eigen::VectorXd step = cod.solve(rhs);
    // Backtracking: halve the step until the largest derivative decreases.
    double alpha = 1;
    bool moved = false;
    for (int k = 0; k < 40; ++k, alpha /= 2) {
      std::vector<double> trial = x;
      for (int i = 0; i < n; ++i) trial[i] += alpha * step(i);
      std::vector<double> ft;
      try {
        ft = diff.Derivatives(t, trial);
      } catch (const Error&) {
        continue;  // no value there: a shorter step
      }
      if (norm(ft) < norm(f)) {
        x = std::move(trial);
        f = std::move(ft);
        moved = true;
        break;
      }
    }
    if (!moved) break;
  }
  if (norm(f) <= target) return x;
  int worst = 0;
  for (int i = 1; i < n; ++i)
    if (std::fabs(f[i]) > std::fabs(f[worst])) worst = i;
  Diagnostic d;
  d.message = "--steady: Newton's method found no steady state f(x, u) = 0";
  d.expected = fmt::format("every state derivative below {:.3g}", target);
  d.got = n == 0 ? "no states" : fmt::format("d{}/dt = {:.6g} after the last step, at {} = {:.6g}",
                                             system.state_names[worst], f[worst], system.state_names[worst], x[worst]);
  d.hint = "the model may have no steady state for these inputs (a constant force on a free mass, a motor "
           "running at speed), or Newton started too far from it: give a start with --state NAME=VALUE, "
           "or linearize along a trajectory with --at T";
  throw Error(std::move(d));
}

std::vector<Mode> Modes(const Matrix& A) {
  std::vector<Mode> out;
  if (A.rows == 0) return out;
  Eigen::MatrixXd M(A.rows, A.cols);
  for (int i = 0; i < A.rows; ++i)
    for (int j = 0; j < A.cols; ++j) M(i, j) = A(i, j);
  Eigen::EigenSolver<Eigen::MatrixXd> es(M, false);
  if (es.info() != Eigen::Success) throw Error("linearize: the eigenvalue iteration did not converge");
  for (int i = 0; i < A.rows; ++i) {
    Mode md;
    md.lambda = es.eigenvalues()(i);
    md.wn = std::abs(md.lambda);
    md.zeta = md.wn > 0 ? -md.lambda.real() / md.wn : std::nan("");
    out.push_back(md);
  }
  std::sort(out.begin(), out.end(), [](const Mode& a, const Mode& b) {
    if (a.wn != b.wn) return a.wn < b.wn;
    return a.lambda.imag() < b.lambda.imag();
  });
  return out;
}

std::complex<double> FrequencyResponse(const LinearModel& lin, int input, int output, double w) {
  const int n = lin.A.rows;
  std::complex<double> h = lin.D(output, input);
  if (n == 0) return h;
  Eigen::MatrixXcd M(n, n);
  Eigen::VectorXcd b(n);
  for (int i = 0; i < n; ++i) {
    b(i) = lin.B(i, input);
    for (int j = 0; j < n; ++j) M(i, j) = std::complex<double>(i == j ? 0 : 0, i == j ? w : 0) - lin.A(i, j);
  }
  Eigen::FullPivLU<Eigen::MatrixXcd> lu(M);
  if (lu.rank() < n) {
    Diagnostic d;
    d.message = fmt::format("bode: jw is an eigenvalue of A at w = {:g} rad/s: the response is infinite there", w);
    d.hint = "leave out that frequency (a pure integrator at w = 0, an undamped mode at its frequency)";
    throw Error(std::move(d));
  }
  const Eigen::VectorXcd x = lu.solve(b);
  for (int j = 0; j < n; ++j) h += lin.C(output, j) * x(j);
  return h;
}

std::vector<BodePoint> Bode(const LinearModel& lin, int input, int output, double w0, double w1, int points) {
  if (!(w0 > 0) || !(w1 > w0) || !std::isfinite(w1) || points < 2 || points > 1000000) {
    Diagnostic d;
    d.message = "bode: a frequency range needs 0 < from < to and at least 2 points (at most 1000000)";
    d.expected = "--from W0 --to W1 --points N with 0 < W0 < W1, N >= 2";
    d.got = fmt::format("--from {:g} --to {:g} --points {}", w0, w1, points);
    throw Error(std::move(d));
  }
  std::vector<BodePoint> out;
  double previous = 0;
  for (int k = 0; k < points; ++k) {
    const double w = w0 * std::pow(w1 / w0, static_cast<double>(k) / (points - 1));
    const std::complex<double> h = FrequencyResponse(lin, input, output, w);
    BodePoint p;
    p.w = w;
    p.magnitude_db = 20 * std::log10(std::abs(h));
    double phase = std::arg(h) * 180 / M_PI;
    if (k > 0) phase += 360 * std::round((previous - phase) / 360);  // continuous
    p.phase_deg = phase;
    previous = phase;
    out.push_back(p);
  }
  return out;
}

void DefaultFrequencyRange(const LinearModel& lin, double* w0, double* w1) {
  double lo = 0, hi = 0;
  for (const auto& md : Modes(lin.A)) {
    if (!(md.wn > 0)) continue;
    lo = lo == 0 ? md.wn : std::min(lo, md.wn);
    hi = std::max(hi, md.wn);
  }
  *w0 = lo > 0 ? std::pow(10, std::floor(std::log10(lo)) - 1) : 1e-2;
  *w1 = hi > 0 ? std::pow(10, std::ceil(std::log10(hi)) + 1) : 1e2;
}

}  // namespace paynter
