// Linearization of the state equations by forward-mode differentiation of the
// rhs and outputs programs (paynter/linear.h): each step's expression is
// differentiated by GiNaC once; at an operating point the partial derivatives
// are evaluated and chained, an implicit block by the implicit function theorem.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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
    rhs_ws_ = rhs_program_->NewWorkspace();
    outputs_ws_ = outputs_program_->NewWorkspace();
    if (!sys.constraint_program.steps.empty()) {
      Prepare(sys.constraint_program, &constraints_);
      constraint_program_ = Compile(sys.constraint_program, cg);
      constraint_ws_ = constraint_program_->NewWorkspace();
    }
  }

  int num_states() const { return n_; }
  int num_inputs() const { return m_; }
  // Along a tangent space a block of redundant constraint forces is solved
  // with its minimum-norm solution when consistent (see Apply).
  void set_tangent(bool on) const { tangent_ = on; }

  // The slot values at (t, x), parameters as the equations hold them.
  std::vector<double> Values(double t, const std::vector<double>& x) const {
    std::vector<double> slots(sys_.num_slots, 0.0);
    slots[sys_.time_slot] = t;
    for (size_t i = 0; i < sys_.parameter_values.size(); ++i)
      slots[sys_.first_parameter_slot + i] = sys_.parameter_values[i];
    for (int i = 0; i < n_; ++i) slots[sys_.first_state_slot + i] = x[i];
    rhs_program_->Run(slots.data(), *rhs_ws_);
    outputs_program_->Run(slots.data(), *outputs_ws_);
    if (constraint_program_) constraint_program_->Run(slots.data(), *constraint_ws_);
    return slots;
  }

  std::vector<double> Derivatives(double t, const std::vector<double>& x) const {
    const auto s = Values(t, x);
    return std::vector<double>(s.begin() + sys_.first_derivative_slot, s.begin() + sys_.first_derivative_slot + n_);
  }

  // d slot / d (z, u) for every slot the programs compute, at the slot
  // values `slots`, the states moving as dx = seed dz (seed: n x k; null: the
  // identity, z = x): rows of k + m. `constraints`: the constraint program's
  // slots only (they depend on (t, x) alone), else the rhs's and outputs'.
  std::vector<std::vector<double>> Sensitivities(const std::vector<double>& slots,
                                                 const Eigen::MatrixXd* seed = nullptr,
                                                 bool constraints = false) const {
    const int k = seed ? static_cast<int>(seed->cols()) : n_;
    const int nd = k + m_;
    std::vector<std::vector<double>> d(sys_.num_slots);
    for (int i = 0; i < n_; ++i) {
      auto& row = d[sys_.first_state_slot + i];
      row.assign(nd, 0.0);
      if (seed)
        for (int j = 0; j < k; ++j) row[j] = (*seed)(i, j);
      else
        row[i] = 1;
    }
    for (int j = 0; j < m_; ++j) {
      d[input_slots_[j]].assign(nd, 0.0);
      d[input_slots_[j]][k + j] = 1;
    }
    if (constraints) {
      for (const auto& st : constraints_) Apply(st, slots, nd, &d);
      return d;
    }
    for (const auto* steps : {&rhs_, &outputs_})
      for (const auto& st : *steps) Apply(st, slots, nd, &d);
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
      ThrowAt({}, "", fmt::format("linearize: {} has no finite value at the operating point", what),
              "a differentiable expression there", Text(e),
              "abs(), step() and the like have no derivative at their kink; choose another operating point");
    }
    return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
  }

  std::string SlotName(int k) const {
    return k < static_cast<int>(sys_.rhs.slot_names.size()) ? sys_.rhs.slot_names[k] : std::to_string(k);
  }

  void Apply(const StepDerivative& st, const std::vector<double>& slots, int nd,
             std::vector<std::vector<double>>* d) const {
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
    Eigen::MatrixXd X;
    Eigen::FullPivLU<Eigen::MatrixXd> lu(J);
    if (lu.rank() == nu) {
      X = lu.solve(R);
    } else if (tangent_) {
      // Redundant constraint forces: along the tangent space the block stays
      // consistent and the accelerations are determined; the forces of the
      // redundant rows are not (their minimum-norm change is taken, as the
      // simulation's rank-revealing solve takes the minimum-norm forces).
      Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(J);
      X = cod.solve(R);
      const double scale = 1 + R.lpNorm<Eigen::Infinity>() + J.lpNorm<Eigen::Infinity>() * X.lpNorm<Eigen::Infinity>();
      if (!((J * X - R).lpNorm<Eigen::Infinity>() <= 1e-8 * scale)) X.resize(0, 0);
    }
    if (X.rows() == 0) {
      ThrowAt({}, "", fmt::format("linearize: the implicit block '{}' is singular at the operating point", st.label),
              "a block whose Jacobian is invertible, so that the implicit function theorem applies",
              fmt::format("rank {} of {}", lu.rank(), nu),
              "its unknowns are not locally determined there (a redundant constraint, a singular configuration); "
              "choose another operating point");
    }
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
  std::vector<StepDerivative> rhs_, outputs_, constraints_;
  std::unique_ptr<CompiledProgram> rhs_program_, outputs_program_, constraint_program_;
  std::unique_ptr<ProgramWorkspace> rhs_ws_, outputs_ws_, constraint_ws_;  // their Newton state carries over
  mutable bool tangent_ = false;
};

// ---- the constraint manifold of a mechanism -----------------------------------

// One invariant of the state: a constraint's flow or position (a slot of the
// constraint program, = 0), a joint coordinate against its position form
// (state - slot = 0 modulo the period), or a body quaternion's norm
// (q0^2 + ... + q3^2 - 1 = 0, four consecutive states).
struct Invariant {
  int slot = -1, state = -1, quaternion = -1;
  double period = 0;
  std::string what;
};

std::vector<Invariant> Invariants(const EquationSystem& sys) {
  std::vector<Invariant> out;
  for (const auto& r : sys.constraint_rows) {
    const std::string joint = r.joint.empty() ? r.source : r.joint + (r.direction.empty() ? "" : " " + r.direction);
    out.push_back({r.velocity_slot, -1, -1, 0, "the flow constraint of " + joint});
    if (r.position_slot >= 0) out.push_back({r.position_slot, -1, -1, 0, "the position constraint of " + joint});
  }
  for (const auto& c : sys.coordinate_rows)
    if (c.state >= 0 && c.slot >= 0)
      out.push_back({c.slot, c.state, -1, c.period, "the joint coordinate " + sys.state_names[c.state] + " against the poses"});
  // The bodies' orientation quaternions: <B>_q0 .. <B>_q3, consecutive
  // states, as the multibody front-end names them.
  const auto& names = sys.state_names;
  for (size_t i = 0; i + 3 < names.size(); ++i) {
    const std::string& s = names[i];
    if (s.size() < 4 || s.compare(s.size() - 3, 3, "_q0") != 0) continue;
    const std::string base = s.substr(0, s.size() - 1);
    if (names[i + 1] == base + "1" && names[i + 2] == base + "2" && names[i + 3] == base + "3")
      out.push_back({-1, -1, static_cast<int>(i), 0, "the unit norm of the quaternion " + base.substr(0, base.size() - 2)});
  }
  return out;
}

// The invariants' values and Jacobian (rows x n) at (t, x).
struct InvariantValues {
  Eigen::VectorXd h;
  Eigen::MatrixXd H;
};

InvariantValues EvaluateInvariants(const Differentiator& diff, const std::vector<Invariant>& rows, double t,
                                   const std::vector<double>& x) {
  const int n = diff.num_states();
  const auto slots = diff.Values(t, x);
  const auto d = diff.Sensitivities(slots, nullptr, true);
  InvariantValues v;
  v.h = Eigen::VectorXd::Zero(static_cast<int>(rows.size()));
  v.H = Eigen::MatrixXd::Zero(static_cast<int>(rows.size()), n);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Invariant& iv = rows[r];
    const int i = static_cast<int>(r);
    if (iv.quaternion >= 0) {
      for (int k = 0; k < 4; ++k) {
        const double q = x[iv.quaternion + k];
        v.h(i) += q * q;
        v.H(i, iv.quaternion + k) = 2 * q;
      }
      v.h(i) -= 1;
      continue;
    }
    const auto& dk = d[iv.slot];
    for (int j = 0; j < static_cast<int>(dk.size()) && j < n; ++j) v.H(i, j) = iv.state >= 0 ? -dk[j] : dk[j];
    if (iv.state < 0) {
      v.h(i) = slots[iv.slot];
      continue;
    }
    double e = x[iv.state] - slots[iv.slot];
    if (iv.period > 0) e -= iv.period * std::round(e / iv.period);  // the turns are free
    v.h(i) = e;
    v.H(i, iv.state) += 1;
  }
  return v;
}

// Columns in positions and velocities: a momentum's column times its inertia.
Eigen::VectorXd ColumnScale(const EquationSystem& sys) {
  Eigen::VectorXd s = Eigen::VectorXd::Ones(static_cast<int>(sys.states.size()));
  for (size_t i = 0; i < sys.state_inertia.size() && i < sys.states.size(); ++i)
    if (sys.state_inertia[i] > 0) s(static_cast<int>(i)) = sys.state_inertia[i];
  return s;
}

int Worst(const Eigen::VectorXd& h) {
  int w = 0;
  for (int i = 1; i < h.size(); ++i)
    if (std::fabs(h(i)) > std::fabs(h(w))) w = i;
  return w;
}

constexpr double kRankTolerance = 1e-9;  // singular values below this times the largest are zero

// Moves the states not held onto the manifold; throws when it cannot.
std::vector<double> Project(const Differentiator& diff, const EquationSystem& sys, const std::vector<Invariant>& rows,
                            double t, std::vector<double> x, const std::vector<char>& held) {
  const int n = diff.num_states();
  std::vector<int> free;
  for (int i = 0; i < n; ++i)
    if (!held[i]) free.push_back(i);
  const Eigen::VectorXd scale = ColumnScale(sys);
  double xmax = 0;
  for (double a : x) xmax = std::max(xmax, std::fabs(a));
  const double tol = 1e-12 * (1 + xmax), accept = 1e-9 * (1 + xmax);
  InvariantValues v = EvaluateInvariants(diff, rows, t, x);
  for (int it = 0; it < 50 && !free.empty() && v.h.size() > 0 && v.h.lpNorm<Eigen::Infinity>() > tol; ++it) {
    Eigen::MatrixXd Hf(v.H.rows(), static_cast<int>(free.size()));
    for (size_t j = 0; j < free.size(); ++j) Hf.col(static_cast<int>(j)) = v.H.col(free[j]) * scale(free[j]);
    // The threshold before the decomposition: it decides the rank the
    // decomposition's transformations are computed for.
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(Hf.rows(), Hf.cols());
    cod.setThreshold(kRankTolerance);
    cod.compute(Hf);
    const Eigen::VectorXd step = cod.solve(v.h);
    std::vector<double> trial = x;
    for (size_t j = 0; j < free.size(); ++j) trial[free[j]] -= step(static_cast<int>(j)) * scale(free[j]);
    InvariantValues next;
    try {
      next = EvaluateInvariants(diff, rows, t, trial);
    } catch (const Error&) {
      break;
    }
    if (!(next.h.lpNorm<Eigen::Infinity>() < v.h.lpNorm<Eigen::Infinity>()) && it > 10) break;  // no progress
    x = std::move(trial);
    v = std::move(next);
  }
  if (v.h.size() == 0 || v.h.lpNorm<Eigen::Infinity>() <= accept) return x;
  const int w = Worst(v.h);
  ThrowAt({}, "",
          "linearize: the operating point is off the constraint manifold of the mechanism, and no "
          "configuration there meets the constraints",
          fmt::format("every constraint within {:.3g} (the joints assembled)", accept),
          fmt::format("{} is {:.6g} after Gauss-Newton on the states not given", rows[w].what, v.h(w)),
          "the states given with --state (held as given) contradict the joints: give fewer, or values a "
          "configuration of the mechanism can take (a joint coordinate such as <J>_angle moves the bodies)");
}

// The linearization at (t, x); for a mechanism in independent coordinates.
// `check_singular`: compare the rank of the invariants' Jacobian with its rank
// nearby (a singular configuration is an error); Newton's steps skip it.
LinearModel LinearizeWith(const Differentiator& diff, const EquationSystem& sys, const std::vector<std::string>& inputs,
                          double t, const std::vector<double>& x, bool check_singular = true) {
  const int n = diff.num_states(), m = static_cast<int>(inputs.size());
  if (static_cast<int>(x.size()) != n)
    throw Error(fmt::format("linearize: an operating point of {} states for a model of {}", x.size(), n));
  const auto slots = diff.Values(t, x);
  LinearModel lin;
  lin.inputs = inputs;
  lin.t = t;
  lin.all_states = sys.state_names;
  lin.all_x = x;
  // The independent states I and V = d x / d x_I (none: all states).
  std::vector<int> independent;
  Eigen::MatrixXd V;
  const auto rows = Invariants(sys);
  if (!rows.empty()) {
    const InvariantValues v = EvaluateInvariants(diff, rows, t, x);
    double xmax = 0;
    for (double a : x) xmax = std::max(xmax, std::fabs(a));
    if (v.h.lpNorm<Eigen::Infinity>() > 1e-7 * (1 + xmax)) {
      const int w = Worst(v.h);
      ThrowAt({}, "", "linearize: the operating point is off the constraint manifold of the mechanism",
              "a state where every constraint holds (|value| below 1e-7)",
              fmt::format("{} = {:.6g}", rows[w].what, v.h(w)),
              "move it onto the constraints first (ProjectOntoConstraints; the commands do)");
    }
    const Eigen::VectorXd scale = ColumnScale(sys);
    const Eigen::MatrixXd Hs = v.H * scale.asDiagonal();
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(Hs, Eigen::ComputeFullV);
    const auto& sv = svd.singularValues();
    int rank = 0;
    while (rank < sv.size() && sv(rank) > kRankTolerance * sv(0)) ++rank;
    const int k = n - rank;
    const Eigen::MatrixXd N = svd.matrixV().rightCols(k);  // tangent space, scaled coordinates
    // Independent states: pivoted Gram-Schmidt on the rows of N, first the
    // states no invariant involves and the joint coordinates, then momenta,
    // then the rest (body poses), each time the largest component left.
    std::vector<int> rank_class(n, 2);
    for (int i = 0; i < n; ++i) {
      if (sys.state_inertia.size() > static_cast<size_t>(i) && sys.state_inertia[i] > 0) rank_class[i] = 1;
      if (Hs.col(i).lpNorm<Eigen::Infinity>() == 0) rank_class[i] = 0;
    }
    for (const auto& c : sys.coordinate_rows)
      if (c.state >= 0) rank_class[c.state] = 0;
    Eigen::MatrixXd left = N;
    std::vector<char> picked(n, 0);
    for (int cls = 0; cls < 3 && static_cast<int>(independent.size()) < k; ++cls) {
      while (static_cast<int>(independent.size()) < k) {
        int best = -1;
        double bnorm = 1e-6;
        for (int i = 0; i < n; ++i)
          if (!picked[i] && rank_class[i] == cls && left.row(i).norm() > bnorm) {
            best = i;
            bnorm = left.row(i).norm();
          }
        if (best < 0) break;
        picked[best] = 1;
        independent.push_back(best);
        const Eigen::RowVectorXd u = left.row(best) / bnorm;
        left -= (left * u.transpose()) * u;
      }
    }
    std::sort(independent.begin(), independent.end());
    if (static_cast<int>(independent.size()) < k)
      throw Error("linearize: no independent coordinates found for the tangent space of the constraints");
    Eigen::MatrixXd NI(k, k);
    for (int a = 0; a < k; ++a) NI.row(a) = N.row(independent[a]);
    // V = Sc N NI^-1 Sc_I^-1: from deviations of the independent states to all.
    V = scale.asDiagonal() * (N * NI.inverse());
    for (int a = 0; a < k; ++a) V.col(a) /= scale(independent[a]);
    for (int a = 0; a < k; ++a) {  // exactly the identity on the independent rows (not 1 +- rounding)
      V.row(independent[a]).setZero();
      V(independent[a], a) = 1;
    }
    lin.constraint_rank = rank;
    // A singular configuration: the rank is higher a small step away along
    // the tangent space (projected back onto the manifold).
    if (k > 0 && check_singular) {
      Eigen::VectorXd w(k);
      for (int a = 0; a < k; ++a) w(a) = (a % 2 ? -1.0 : 1.0) / (a + 1);
      const Eigen::VectorXd step = scale.asDiagonal() * (N * w.normalized());
      std::vector<double> near = x;
      const double eps = 1e-4 * (1 + xmax);
      for (int i = 0; i < n; ++i) near[i] += eps * step(i);
      int near_rank = rank;
      try {
        near = Project(diff, sys, rows, t, near, std::vector<char>(n, 0));
        const Eigen::MatrixXd Hn = EvaluateInvariants(diff, rows, t, near).H * scale.asDiagonal();
        Eigen::JacobiSVD<Eigen::MatrixXd> s2(Hn);
        near_rank = 0;
        while (near_rank < s2.singularValues().size() &&
               s2.singularValues()(near_rank) > kRankTolerance * s2.singularValues()(0))
          ++near_rank;
      } catch (const Error&) {
        // no point nearby to compare with: no verdict
      }
      if (near_rank > rank) {
        ThrowAt(
            {}, "",
            "linearize: the mechanism is at a singular configuration: the Jacobian of its constraints loses "
            "rank at the operating point",
            fmt::format("rank {} of the {} constraint rows, as a small step away on the constraints", near_rank,
                        rows.size()),
            fmt::format("rank {} (a direction that looks free to first order is not a motion of the mechanism)", rank),
            "links are aligned there (a change point or a dead centre of the loop); linearize a little "
            "away from it (--state, --param, --at)");
      }
    }
    diff.set_tangent(true);
  } else {
    for (int i = 0; i < n; ++i) independent.push_back(i);
  }
  const int k = static_cast<int>(independent.size());
  const auto d = diff.Sensitivities(slots, rows.empty() ? nullptr : &V);
  diff.set_tangent(false);
  for (int i : independent) {
    lin.states.push_back(sys.state_names[i]);
    lin.x.push_back(x[i]);
  }
  std::vector<char> is_independent(n, 0);
  for (int i : independent) is_independent[i] = 1;
  for (int i = 0; i < n; ++i)
    if (!is_independent[i]) lin.dependent.push_back(sys.state_names[i]);
  if (!rows.empty()) {
    lin.V = Matrix(n, k);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < k; ++j) lin.V(i, j) = V(i, j);
  }
  std::vector<int> out_slots = sys.output_slots;
  lin.outputs = sys.output_names;
  if (lin.outputs.empty()) {  // no outputs declared: the states
    lin.outputs = lin.states;
    for (int i : independent) out_slots.push_back(sys.first_state_slot + i);
  }
  const int p = static_cast<int>(out_slots.size());
  lin.A = Matrix(k, k);
  lin.B = Matrix(k, m);
  lin.C = Matrix(p, k);
  lin.D = Matrix(p, m);
  auto fill = [&](int slot, Matrix* left, Matrix* right, int row) {
    const auto& dk = d[slot];
    if (dk.empty()) return;
    for (int j = 0; j < k; ++j) (*left)(row, j) = dk[j];
    for (int j = 0; j < m; ++j) (*right)(row, j) = dk[k + j];
  };
  for (int a = 0; a < k; ++a) {
    fill(sys.first_derivative_slot + independent[a], &lin.A, &lin.B, a);
    lin.dx.push_back(slots[sys.first_derivative_slot + independent[a]]);
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

bool HasConstraintManifold(const EquationSystem& system) { return !Invariants(system).empty(); }

std::vector<double> ProjectOntoConstraints(const EquationSystem& system, double t, const std::vector<double>& x,
                                           const std::vector<std::string>& held, double* correction) {
  if (correction) *correction = 0;
  const auto rows = Invariants(system);
  if (rows.empty()) return x;
  const Differentiator diff(system, {});
  const int n = diff.num_states();
  if (static_cast<int>(x.size()) != n)
    throw Error(fmt::format("linearize: an operating point of {} states for a model of {}", x.size(), n));
  std::vector<char> hold(n, 0);
  for (const auto& name : held) {
    const auto it = std::find(system.state_names.begin(), system.state_names.end(), name);
    if (it != system.state_names.end()) hold[it - system.state_names.begin()] = 1;
  }
  std::vector<double> out = Project(diff, system, rows, t, x, hold);
  if (correction)
    for (int i = 0; i < n; ++i) *correction = std::max(*correction, std::fabs(out[i] - x[i]));
  return out;
}

std::vector<double> SteadyState(const EquationSystem& system, const std::vector<std::string>& input_parameters,
                                double t, const std::vector<double>& start, const SteadyStateOptions& options) {
  const Differentiator diff(system, input_parameters);
  const int n = diff.num_states();
  const auto rows = Invariants(system);
  std::vector<double> x = start;
  auto norm = [](const std::vector<double>& v) {
    double m = 0;
    for (double a : v) m = std::max(m, std::fabs(a));
    return m;
  };
  std::vector<double> f = diff.Derivatives(t, x);
  const double target = options.tol * (1 + norm(f));
  int slow = 0;  // steps in a row that took off less than 1% of the merit
  int steps = 0;
  for (int it = 0; it < options.max_iter; ++it) {
    if (norm(f) <= target) return x;
    // Newton in the independent coordinates (all states for a model without
    // invariants): A dz = -f_I, then dx = V dz, back onto the manifold.
    const LinearModel lin = LinearizeWith(diff, system, input_parameters, t, x, false);
    const int k = lin.A.rows;
    std::vector<int> independent;
    for (const auto& name : lin.states)
      independent.push_back(static_cast<int>(
          std::find(system.state_names.begin(), system.state_names.end(), name) - system.state_names.begin()));
    Eigen::MatrixXd A(k, k);
    Eigen::VectorXd rhs(k);
    for (int i = 0; i < k; ++i) {
      rhs(i) = -f[independent[i]];
      for (int j = 0; j < k; ++j) A(i, j) = lin.A(i, j);
    }
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(A);
    const Eigen::VectorXd dz = cod.solve(rhs);
    Eigen::VectorXd step(n);
    if (rows.empty()) {
      step = dz;
    } else {
      for (int i = 0; i < n; ++i) {
        step(i) = 0;
        for (int j = 0; j < k; ++j) step(i) += lin.V(i, j) * dz(j);
      }
    }
    std::vector<char> held(n, 0);
    for (int i : independent) held[i] = 1;
    // Backtracking: halve the step until the largest derivative decreases.
    double alpha = 1;
    bool moved = false;
    for (int b = 0; b < 40; ++b, alpha /= 2) {
      std::vector<double> trial = x;
      for (int i = 0; i < n; ++i) trial[i] += alpha * step(i);
      std::vector<double> ft;
      try {
        if (!rows.empty()) trial = Project(diff, system, rows, t, trial, held);
        ft = diff.Derivatives(t, trial);
      } catch (const Error&) {
        continue;  // no value there: a shorter step
      }
      // The merit: the independent states' derivatives (on the manifold they
      // vanish together with all the others).
      auto merit = [&](const std::vector<double>& v) {
        double m = 0;
        for (int i : independent) m = std::max(m, std::fabs(v[i]));
        return m;
      };
      if (merit(ft) < merit(f)) {
        slow = merit(ft) > 0.99 * merit(f) ? slow + 1 : 0;
        ++steps;
        x = std::move(trial);
        f = std::move(ft);
        moved = true;
        break;
      }
    }
    // Newton converges fast near a root; three steps in a row that each
    // take off less than 1% of the derivatives stall on a floor they cannot
    // pass (a model with no steady state: a torque no configuration
    // balances): stop there rather than creep on for the remaining steps.
    if (!moved || slow == 3) break;
  }
  if (norm(f) <= target) return x;
  int worst = 0;
  for (int i = 1; i < n; ++i)
    if (std::fabs(f[i]) > std::fabs(f[worst])) worst = i;
  ThrowAt({}, "", "--steady: Newton's method found no steady state f(x, u) = 0",
          fmt::format("every state derivative below {:.3g}", target),
          n == 0 ? "no states"
                 : fmt::format("d{}/dt = {:.6g} after {} step(s){}, at {} = {:.6g}", system.state_names[worst],
                               f[worst], steps, slow == 3 ? " (the last 3 took off less than 1% each)" : "",
                               system.state_names[worst], x[worst]),
          "the model may have no steady state for these inputs (a constant force on a free mass, a motor "
          "running at speed), or Newton started too far from it: give a start with --state NAME=VALUE, "
          "or linearize along a trajectory with --at T");
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
    ThrowAt({}, "", fmt::format("bode: jw is an eigenvalue of A at w = {:g} rad/s: the response is infinite there", w),
            "", "", "leave out that frequency (a pure integrator at w = 0, an undamped mode at its frequency)");
  }
  const Eigen::VectorXcd x = lu.solve(b);
  for (int j = 0; j < n; ++j) h += lin.C(output, j) * x(j);
  return h;
}

std::vector<BodePoint> Bode(const LinearModel& lin, int input, int output, double w0, double w1, int points) {
  if (!(w0 > 0) || !(w1 > w0) || !std::isfinite(w1) || points < 2 || points > 1000000) {
    ThrowAt({}, "", "bode: a frequency range needs 0 < from < to and at least 2 points (at most 1000000)",
            "--from W0 --to W1 --points N with 0 < W0 < W1, N >= 2",
            fmt::format("--from {:g} --to {:g} --points {}", w0, w1, points));
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

void NaturalFrequencyRange(const Matrix& A, double* lo, double* hi) {
  const std::vector<Mode> modes = Modes(A);
  double largest = 0;
  for (const auto& md : modes) largest = std::max(largest, md.wn);
  for (const auto& md : modes) {
    if (!(md.wn > kZeroEigenvalue * largest)) continue;  // zero up to rounding
    *lo = *lo == 0 ? md.wn : std::min(*lo, md.wn);
    *hi = std::max(*hi, md.wn);
  }
}

void DefaultFrequencyRange(const LinearModel& lin, double* w0, double* w1) {
  double lo = 0, hi = 0;
  NaturalFrequencyRange(lin.A, &lo, &hi);
  *w0 = lo > 0 ? std::pow(10, std::floor(std::log10(lo)) - 1) : 1e-2;
  *w1 = hi > 0 ? std::pow(10, std::ceil(std::log10(hi)) + 1) : 1e2;
}

}  // namespace paynter

// ---- Loops --------------------------------------------------------------------

namespace paynter {

namespace {

// What a name that is no signal is, and where it is declared, for the error.
std::pair<std::string, SourceLocation> NotASignal(const Model& model, const std::string& name) {
  const SourceLocation file{model.file};
  for (const auto& p : model.parameters)
    if (p.name == name) return {"a parameter (a constant, no signal line)", p.where};
  for (const auto& d : model.displacements)
    if (d.name == name) return {"a displacement, a state of the bond graph (no signal line)", d.where};
  if (name.size() > 2 && name[1] == '_') {
    const std::string rest = name.substr(2);
    const int e = model.FindElement(rest), b = model.FindBond(rest);
    if ((name[0] == 'p' || name[0] == 'q') && e >= 0)
      return {fmt::format("the state of the storage element '{}' (no signal line)", rest), model.elements[e].where};
    if ((name[0] == 'e' || name[0] == 'f') && e >= 0)
      return {fmt::format("the {} of the element '{}', a power variable (no signal line)",
                          name[0] == 'e' ? "effort" : "flow", rest),
              model.elements[e].where};
    if ((name[0] == 'e' || name[0] == 'f') && b >= 0)
      return {fmt::format("the {} of the bond '{}', a power variable (no signal line)", name[0] == 'e' ? "effort" : "flow",
                          rest),
              model.bonds[b].where};
  }
  if (name == "t") return {"time (no signal line)", file};
  if (model.symbols.count(name)) return {"a variable of the bond graph (no signal line)", file};
  return {"", file};
}

}  // namespace

Model OpenLoopAt(const Model& model, const std::string& signal, double value, std::string* cut_parameter) {
  // The model's signals: its definitions and its blocks' states (by name:
  // the index of the definition, or -1 - the index of the displacement).
  std::map<std::string, int> signals;
  for (size_t i = 0; i < model.definitions.size(); ++i) signals[model.definitions[i].name] = static_cast<int>(i);
  for (size_t i = 0; i < model.displacements.size(); ++i)
    for (const auto& b : model.blocks)
      if (model.displacements[i].name.rfind(b.name + ".", 0) == 0) signals[model.displacements[i].name] = -1 - static_cast<int>(i);
  // An output that is a signal under another name (an instance's output
  // `ctl.y` for its block's `ctl.c.y`, an output `voltage: ctl.y`) names it too.
  std::map<std::string, std::string> aliases;
  for (const auto& o : model.outputs)
    if (GiNaC::is_a<GiNaC::symbol>(o.value) && !signals.count(o.name))
      for (const auto& [n, sym] : model.symbols)
        if (o.value.is_equal(sym) && signals.count(n)) aliases[o.name] = n;
  std::string target = signal;
  if (aliases.count(signal)) target = aliases[signal];
  const auto it = signals.find(target);
  if (it == signals.end()) {
    std::vector<std::string> names;
    for (const auto& [n, k] : signals) names.push_back(n);
    for (const auto& [n, k] : aliases) names.push_back(n);
    std::sort(names.begin(), names.end());
    auto [what, where] = NotASignal(model, signal);
    for (const auto& o : model.outputs)
      if (what.empty() && o.name == signal) {
        what = "an output that is no signal (an expression of the bond graph's variables)";
        where = o.where;
      }
    const std::string near = DidYouMean(signal, names);
    const std::string hint =
        names.empty() ? "the model has no signals: write its controller as signal blocks "
                        "(docs/model-format.md, \"Signal blocks\")"
                      : fmt::format("{}the loop is cut on a signal line; this model's signals: {}",
                                    near.empty() ? "" : near + " ", fmt::join(names, ", "));
    ThrowAt(where, "",
            fmt::format("--loop-at {}: {}", signal,
                        what.empty() ? "the model has no signal of that name" : "'" + signal + "' is " + what),
            "a signal: a block's output (ctl.y), a control component's input (ctl.u), a definition", signal, hint);
  }
  const int def = it->second >= 0 ? it->second : -1, disp = it->second < 0 ? -1 - it->second : -1;
  Model m = model;
  std::string name = "loop_" + signal;
  while (m.symbols.count(name)) name += "_";
  const GiNaC::symbol cut(name);
  m.symbols.emplace(name, cut);
  Parameter par;
  par.name = name;
  par.value = value;
  par.text = fmt::format("{}", value);
  par.where = def >= 0 ? model.definitions[def].where : model.displacements[disp].where;
  m.parameters.push_back(par);
  const GiNaC::ex s = model.Symbol(target);
  GiNaC::exmap to_cut;
  to_cut[s] = cut;
  auto sub = [&](GiNaC::ex& e) { e = e.subs(to_cut); };
  for (auto& e : m.elements) {
    sub(e.law);
    if (e.initial) sub(*e.initial);
    if (e.position) sub(*e.position);
    if (e.static_limit) sub(*e.static_limit);
  }
  for (size_t i = 0; i < m.displacements.size(); ++i) {
    auto& d = m.displacements[i];
    if (static_cast<int>(i) != disp) sub(d.rate);
    if (d.position) sub(*d.position);
  }
  for (size_t i = 0; i < m.definitions.size(); ++i) {
    if (static_cast<int>(i) == def) continue;
    sub(m.definitions[i].value);
    if (m.definitions[i].rate) sub(*m.definitions[i].rate);
  }
  for (auto& ev : m.events) {
    sub(ev.indicator);
    for (auto& r : ev.resets) sub(r.value);
  }
  for (auto& f : m.fields) {
    for (auto& row : f.inertia)
      for (auto& v : row) sub(v);
    sub(f.energy);
  }
  Output out;
  out.name = signal;
  out.value = s;
  out.text = signal;
  out.where = par.where;
  m.outputs = {out};
  *cut_parameter = name;
  return m;
}

LoopMargins Margins(const LinearModel& loop, double w0, double w1) {
  if (!(w0 > 0) || !(w1 > w0) || !std::isfinite(w1))
    ThrowAt({}, "", "margins: a frequency range needs 0 < from < to", "0 < W0 < W1", fmt::format("{:g} to {:g}", w0, w1));
  LoopMargins r;
  r.w0 = w0;
  r.w1 = w1;
  // L at w; not a number where jw is (to rounding) a pole, so that no
  // crossover is taken there.
  auto L = [&](double w) {
    try {
      return FrequencyResponse(loop, 0, 0, w);
    } catch (const Error&) {
      return std::complex<double>(std::nan(""), std::nan(""));
    }
  };
  auto gain = [&](double w) { return std::log(std::abs(L(w))); };  // 0 at a gain crossover
  auto imag = [&](double w) { return L(w).imag(); };                 // 0 at a phase crossover (where Re L < 0)
  // The root of f between a and b (f(a), f(b) of opposite signs), by
  // bisection in log w until the interval is down to the rounding of w.
  auto bisect = [](const std::function<double(double)>& f, double a, double b, double fa) {
    for (int it = 0; it < 200 && b - a > 4 * std::numeric_limits<double>::epsilon() * b; ++it) {
      const double c = std::sqrt(a * b);
      if (c <= a || c >= b) break;
      const double fc = f(c);
      if (fc == 0) return c;
      if ((fc < 0) == (fa < 0)) {
        a = c;
        fa = fc;
      } else {
        b = c;
      }
    }
    return std::sqrt(a * b);
  };
  const int points = std::max(200, static_cast<int>(std::ceil(100 * std::log10(w1 / w0)))) + 1;
  double wa = w0, ga = gain(wa), ia = imag(wa);
  for (int k = 1; k < points; ++k) {
    const double wb = w0 * std::pow(w1 / w0, static_cast<double>(k) / (points - 1));
    const double gb = gain(wb), ib = imag(wb);
    if (std::isfinite(ga) && std::isfinite(gb) && (ga < 0) != (gb < 0)) {
      const double wc = ga == 0 ? wa : bisect(gain, wa, wb, ga);
      r.gain_crossovers.push_back({wc, std::arg(-L(wc)) * 180 / M_PI});
    }
    if (std::isfinite(ia) && std::isfinite(ib) && (ia < 0) != (ib < 0)) {
      const double wp = ia == 0 ? wa : bisect(imag, wa, wb, ia);
      const std::complex<double> h = L(wp);
      if (h.real() < 0) r.phase_crossovers.push_back({wp, -20 * std::log10(std::abs(h))});
    }
    wa = wb;
    ga = gb;
    ia = ib;
  }
  for (const auto& c : r.gain_crossovers)
    if (!r.phase_margin || c.margin < r.phase_margin->margin) r.phase_margin = c;
  for (const auto& c : r.phase_crossovers)
    if (!r.gain_margin || std::fabs(c.margin) < std::fabs(r.gain_margin->margin)) r.gain_margin = c;
  return r;
}

bool InputReachesOutput(const LinearModel& lin) {
  if (lin.B.cols < 1 || lin.C.rows < 1) return false;
  if (lin.D(0, 0) != 0) return true;
  const int n = lin.A.rows;
  std::vector<char> reached(n, 0);
  std::vector<int> todo;
  for (int i = 0; i < n; ++i)
    if (lin.B(i, 0) != 0) {
      reached[i] = 1;
      todo.push_back(i);
    }
  while (!todo.empty()) {
    const int j = todo.back();
    todo.pop_back();
    if (lin.C(0, j) != 0) return true;
    for (int i = 0; i < n; ++i)
      if (!reached[i] && lin.A(i, j) != 0) {
        reached[i] = 1;
        todo.push_back(i);
      }
  }
  return false;
}

}  // namespace paynter
