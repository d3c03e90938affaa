// Signal blocks (docs/model-format.md, "Signal blocks"): each block of a
// spec's `blocks:` written as the model's own parts, as texts, before
// submodels are flattened (docs/architecture.md, "Signal blocks"):
//   - its states are displacements with a `rate:` (`<block>.x1`, `<block>.i`);
//   - its outputs are definitions (`<block>.y`), in which a limit is an if();
//   - a reset is an event.
// Signal lines carry no power: an input is an expression of any model
// variable (a sensor's effort or flow, another block's output, a signal of
// time), so causality never sees them, and the equation builder, the code
// generators, events, linearization and submodels take blocks as they take
// any definition, displacement and event. Adding a type is adding its entry
// to Types() below.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model_internal.h"
#include "paynter/model.h"

namespace paynter {
namespace {

using BlockSpec = ModelSpec::BlockSpec;
using Value = BlockSpec::Value;

std::string Par(const std::string& s) { return "(" + s + ")"; }

// One block being written: its keys read, its parts added to the spec.
class Writer {
 public:
  Writer(BlockSpec* b, ModelSpec* spec) : b_(b), spec_(spec) {}

  const std::string& name() const { return b_->name; }
  bool Has(const std::string& key) const { return b_->values.count(key) > 0; }

  [[noreturn]] void Fail(const std::string& key, const std::string& message, const std::string& expected,
                         const std::string& got, const std::string& hint = "") const {
    const auto it = b_->values.find(key);
    ThrowAt(it == b_->values.end() ? b_->where : it->second.where, b_->name,
            fmt::format("block '{}' ({}): {}", b_->name, b_->type, message), expected, got, hint);
  }

  // A key's text (a number or an expression), in parentheses; `fallback` when
  // the key is absent, an error naming the key when there is none.
  std::string Text(const std::string& key, const std::string& fallback = "") const {
    const auto it = b_->values.find(key);
    if (it == b_->values.end()) {
      if (fallback.empty())
        ThrowAt(b_->where, b_->name, fmt::format("block '{}' ({}) needs '{}'", b_->name, b_->type, key),
                fmt::format("{}: <value>", key), "no value", Needs());
      return Par(fallback);
    }
    if (it->second.depth != 0)
      Fail(key, fmt::format("'{}' is one value", key), fmt::format("{}: <expression>", key), "a list");
    return Par(it->second.rows[0][0]);
  }
  // The signal that feeds input `key`: unconnected is an error.
  std::string Input(const std::string& key) {
    if (!Has(key))
      ThrowAt(b_->where, b_->name, fmt::format("input '{}' of block '{}' ({}) is not connected", key, b_->name, b_->type),
              fmt::format("{}: <signal>", key), "no signal",
              "a signal is any expression: another block's output (name.y), a bond's effort or flow (e_b, f_b), a "
              "state, a function of time (step_at(1))");
    const std::string text = Text(key);
    b_->inputs.push_back(text.substr(1, text.size() - 2));
    return text;
  }
  // A list's texts (a single value is a list of one).
  std::vector<std::string> List(const std::string& key) const {
    const auto it = b_->values.find(key);
    if (it == b_->values.end()) return {};
    if (it->second.depth == 2)
      Fail(key, fmt::format("'{}' is a list", key), fmt::format("{}: [a, b, ...]", key), "a matrix");
    return it->second.rows[0];
  }
  // The signals of `inputs: [...]`.
  std::vector<std::string> Inputs() {
    std::vector<std::string> out = List("inputs");
    if (out.empty())
      ThrowAt(b_->where, b_->name, fmt::format("block '{}' ({}) has no inputs", b_->name, b_->type),
              "inputs: [<signal>, <signal>, ...]", "none", "each signal is any expression (a block's output name.y)");
    for (auto& s : out) {
      b_->inputs.push_back(s);
      s = Par(s);
    }
    return out;
  }
  // A matrix (rows of texts; a list is one row), with `rows` x `cols` when
  // these are >= 0; empty when absent.
  std::vector<std::vector<std::string>> Matrix(const std::string& key, int rows, int cols) const {
    const auto it = b_->values.find(key);
    if (it == b_->values.end()) return {};
    const auto& m = it->second.rows;
    const int r = static_cast<int>(m.size());
    const int c = m.empty() ? 0 : static_cast<int>(m[0].size());
    bool ragged = false;
    for (const auto& row : m) ragged = ragged || static_cast<int>(row.size()) != c;
    if (ragged || r == 0 || c == 0 || (rows >= 0 && r != rows) || (cols >= 0 && c != cols))
      Fail(key, fmt::format("matrix '{}' has the wrong shape", key),
           fmt::format("{} rows of {} values", rows >= 0 ? std::to_string(rows) : std::string("n"),
                       cols >= 0 ? std::to_string(cols) : std::string("n")),
           ragged ? std::string("rows of unequal lengths") : fmt::format("{} rows of {} values", r, c),
           "write it as rows: [[a11, a12], [a21, a22]]");
    return m;
  }

  // Adds the output `<block>.<out>` with its value.
  void Output(const std::string& out, const std::string& text) {
    spec_->definitions.push_back({name() + "." + out, text, b_->where});
    b_->outputs.push_back(name() + "." + out);
  }
  // Adds the state `<block>.<state>`; returns its name.
  std::string State(const std::string& state, const std::string& rate, const std::string& initial, bool output = false) {
    const std::string n = name() + "." + state;
    spec_->displacements.push_back({n, "", rate, initial, b_->where});
    if (output) b_->outputs.push_back(n);
    return n;
  }
  void Reset(const std::string& when, const std::string& state, const std::string& value) {
    ModelSpec::EventSpec e;
    e.name = name() + ".reset";
    e.when = when;
    e.resets.push_back({state, value, b_->where});
    e.where = b_->values.at("reset").where;
    spec_->events.push_back(std::move(e));
  }
  // An event `<block>.<label>` that sets `state` to `value` when `when` becomes true.
  void Switch(const std::string& label, const std::string& when, const std::string& state, const std::string& value) {
    ModelSpec::EventSpec e;
    e.name = name() + "." + label;
    e.when = when;
    e.resets.push_back({state, value, b_->where});
    e.where = b_->where;
    spec_->events.push_back(std::move(e));
  }
  // A sampled block's clock: the state `<block>.tk`, the time of its next
  // sample (first at t0, by default Ts), and the event at each sample that
  // sets the given states (values from just before, all at once) and moves
  // tk on by Ts. Its indicator t - tk rises through zero once per sample, so
  // no sample is missed whatever the integrator's steps.
  void Sample(std::vector<std::pair<std::string, std::string>> resets) {
    const std::string ts = Text("Ts");
    if (IsNumberText(b_->values.at("Ts").rows[0][0]) && !(std::stod(b_->values.at("Ts").rows[0][0]) > 0))
      Fail("Ts", "the sample period is not positive", "Ts > 0", b_->values.at("Ts").rows[0][0]);
    const std::string tk = State("tk", "0", Text("t0", ts));
    ModelSpec::EventSpec e;
    e.name = name() + ".sample";
    e.when = "t >= " + tk;
    resets.emplace_back(tk, tk + " + " + ts);
    for (auto& [state, value] : resets) e.resets.push_back({state, value, b_->where});
    e.where = b_->where;
    spec_->events.push_back(std::move(e));
  }

  std::string Needs() const;

 private:
  BlockSpec* b_;
  ModelSpec* spec_;
};

struct BlockType {
  std::string name;
  std::vector<std::string> keys;  // every key it takes besides name and type
  std::function<void(Writer&)> write;
};

// u clipped to [lo, hi].
std::string Clip(const std::string& u, const std::string& lo, const std::string& hi) {
  return fmt::format("if({0} > {2}, {2}, if({0} < {1}, {1}, {0}))", u, lo, hi);
}

// The lower limit: `min`, or -max.
std::string Lower(const Writer& w) { return w.Has("min") ? w.Text("min") : Par("-" + w.Text("max")); }

void WritePid(Writer& w) {
  const std::string e = w.Input("input");
  const bool ideal = w.Has("form") && w.Text("form") == "(ideal)";
  if (w.Has("form") && !ideal && w.Text("form") != "(parallel)")
    w.Fail("form", "unknown form", "form: parallel (kp, ki, kd) or ideal (k, Ti, Td)", w.Text("form"));
  for (const char* k : {"kp", "ki", "kd"})
    if (ideal && w.Has(k)) w.Fail(k, fmt::format("'{}' belongs to the parallel form", k), "k, Ti, Td", k);
  for (const char* k : {"k", "Ti", "Td"})
    if (!ideal && w.Has(k)) w.Fail(k, fmt::format("'{}' belongs to the ideal form", k), "kp, ki, kd", k, "form: ideal");
  // Both forms as gains: y = kp e + ki ∫e + kd de/dt.
  std::string kp, ki, kd;
  if (ideal) {
    kp = w.Text("k");
    if (w.Has("Ti")) ki = Par(kp + "/" + w.Text("Ti"));
    if (w.Has("Td")) kd = Par(kp + "*" + w.Text("Td"));
  } else {
    kp = w.Text("kp", "0");
    if (w.Has("ki")) ki = w.Text("ki");
    if (w.Has("kd")) kd = w.Text("kd");
  }
  const bool limited = w.Has("max") || w.Has("min");
  std::string aw = "backcalculation";
  if (w.Has("antiwindup")) {
    aw = w.Text("antiwindup");
    aw = aw.substr(1, aw.size() - 2);
    if (aw != "backcalculation" && aw != "none")
      w.Fail("antiwindup", "unknown anti-windup", "antiwindup: backcalculation (default) or none", aw);
  }
  std::string v = kp + "*" + e;
  if (!kd.empty()) {
    // The filtered derivative kd s / (Tf s + 1): state d follows e with lag Tf.
    const std::string tf = w.Text("Tf", ideal ? w.Text("Td") + "/" + w.Text("N", "10") : "");
    const std::string d = w.State("d", fmt::format("({} - {}.d)/{}", e, w.name(), tf), "0");
    v += fmt::format(" + {}*({} - {})/{}", kd, e, d, tf);
  }
  const std::string y = w.name() + ".y", vn = w.name() + ".v";
  if (!ki.empty()) {
    std::string rate = ki + "*" + e;
    // Back-calculation: the integrator is pulled back by (y - v)/Tt while the output is limited.
    if (limited && aw == "backcalculation") rate += fmt::format(" + ({} - {})/{}", y, vn, w.Text("Tt", ki.empty() ? "" : kp + "/" + ki));
    v += " + " + w.State("i", rate, w.Text("initial", "0"));
  }
  w.Output("v", v);
  w.Output("y", limited ? Clip(vn, Lower(w), w.Text("max", "1e300")) : vn);
}

void WriteTransferFunction(Writer& w) {
  const std::string u = w.Input("input");
  const std::vector<std::string> num = w.List("num"), den = w.List("den");
  if (den.empty()) w.Fail("den", "no denominator", "den: [a_n, ..., a_1, a_0] (descending powers of s)", "none");
  if (num.empty()) w.Fail("num", "no numerator", "num: [b_m, ..., b_0] (descending powers of s)", "none");
  if (num.size() > den.size())
    w.Fail("num", "the transfer function is not proper", "a numerator of degree <= the denominator's",
           fmt::format("degree {} over degree {}", num.size() - 1, den.size() - 1));
  if (IsNumberText(den[0]) && std::stod(den[0]) == 0)
    w.Fail("den", "the leading coefficient of the denominator is 0", "a_n != 0", den[0]);
  const size_t n = den.size() - 1;
  // Monic: s^n + a[n-1] s^(n-1) + ... + a[0]; b[k] the coefficient of s^k (b[n] the feedthrough).
  std::vector<std::string> a(n), b(n + 1, "0");
  for (size_t k = 0; k < n; ++k) a[k] = Par(Par(den[n - k]) + "/" + Par(den[0]));
  for (size_t k = 0; k < num.size(); ++k) b[k] = Par(Par(num[num.size() - 1 - k]) + "/" + Par(den[0]));
  const std::vector<std::string> init = w.List("initial");
  if (!init.empty() && init.size() != n)
    w.Fail("initial", "one initial value per state", fmt::format("{} values", n), fmt::format("{}", init.size()));
  // Controllable canonical form: x1 = z, x(k+1) = z^(k), z^(n) = u - sum a[k] x(k+1).
  std::vector<std::string> x(n);
  for (size_t k = 0; k < n; ++k) x[k] = w.name() + ".x" + std::to_string(k + 1);
  std::string y = b[n] + "*" + u;
  for (size_t k = 0; k < n; ++k) {
    std::string rate;
    if (k + 1 < n) rate = x[k + 1];
    else {
      rate = u;
      for (size_t j = 0; j < n; ++j) rate += " - " + a[j] + "*" + x[j];
    }
    w.State("x" + std::to_string(k + 1), rate, init.empty() ? "0" : init[k]);
    y += fmt::format(" + ({} - {}*{})*{}", b[k], b[n], a[k], x[k]);
  }
  w.Output("y", y);
}

void WriteStateSpace(Writer& w) {
  const std::vector<std::string> u = w.Has("inputs") ? w.Inputs() : std::vector<std::string>{};
  const auto A = w.Matrix("A", -1, -1);
  if (A.empty()) w.Fail("A", "no matrix A", "A: [[a11, a12], [a21, a22]]", "none");
  const int n = static_cast<int>(A.size()), m = static_cast<int>(u.size());
  w.Matrix("A", n, n);
  const auto B = m > 0 ? w.Matrix("B", n, m) : w.Matrix("B", n, 0);
  if (m > 0 && B.empty()) w.Fail("B", "no matrix B", fmt::format("B: {} rows of {} values", n, m), "none");
  const auto C = w.Matrix("C", -1, n);
  if (C.empty()) w.Fail("C", "no matrix C", fmt::format("C: rows of {} values", n), "none");
  const int p = static_cast<int>(C.size());
  const auto D = m > 0 ? w.Matrix("D", p, m) : std::vector<std::vector<std::string>>{};
  const std::vector<std::string> init = w.List("initial");
  if (!init.empty() && static_cast<int>(init.size()) != n)
    w.Fail("initial", "one initial value per state", fmt::format("{} values", n), fmt::format("{}", init.size()));
  auto x = [&](int k) { return w.name() + ".x" + std::to_string(k + 1); };
  for (int i = 0; i < n; ++i) {
    std::string rate = "0";
    for (int j = 0; j < n; ++j) rate += fmt::format(" + {}*{}", Par(A[i][j]), x(j));
    for (int j = 0; j < m; ++j) rate += fmt::format(" + {}*{}", Par(B[i][j]), u[j]);
    w.State("x" + std::to_string(i + 1), rate, init.empty() ? "0" : init[i]);
  }
  for (int i = 0; i < p; ++i) {
    std::string y = "0";
    for (int j = 0; j < n; ++j) y += fmt::format(" + {}*{}", Par(C[i][j]), x(j));
    for (int j = 0; j < m && !D.empty(); ++j) y += fmt::format(" + {}*{}", Par(D[i][j]), u[j]);
    w.Output("y" + std::to_string(i + 1), y);
  }
}

// A key's text as written, without the parentheses Text adds.
std::string Raw(const Writer& w, const std::string& key) {
  const std::string t = w.Text(key);
  return t.substr(1, t.size() - 2);
}

// A transport delay e^(-sT) by its Pade approximant of order n (1 to 10),
// D(-s)/D(s) with D(s) = sum_k c_k (sT)^k, c_k = (2n-k)! n! / ((2n)! k! (n-k)!):
// an all-pass (|H(jw)| = 1) whose phase is -wT up to a term in (wT)^(2n+1).
// It starts at rest with the input held at `initial` before t = 0.
void WritePadeDelay(Writer& w) {
  const std::string u = w.Input("input"), T = w.Text("T");
  if (IsNumberText(Raw(w, "T")) && !(std::stod(Raw(w, "T")) > 0))
    w.Fail("T", "the delay is not positive", "T > 0 (seconds)", Raw(w, "T"));
  int n = 3;
  if (w.Has("order")) {
    const std::string o = Raw(w, "order");
    if (!IsNumberText(o) || o.find_first_not_of("0123456789") != std::string::npos || o.size() > 2 ||
        std::stoi(o) < 1 || std::stoi(o) > 10)
      w.Fail("order", "the order of a Pade approximant is a whole number from 1 to 10", "order: 1 ... 10", o,
             "a higher order follows the delay to higher frequencies: its phase is within 1e-3 rad of -w T up to "
             "w T = 0.23, 0.95, 1.98, 3.19, 4.53, 5.96, 7.45, 8.98, 10.6, 12.2 for orders 1 to 10");
    n = std::stoi(o);
  }
  // Realized in the states x_k = c_(k-1) (T d/dt)^(k-1) z, D(s) z = u (a
  // controllable canonical form with time in units of T and each state
  // scaled by its coefficient, so that every rate's coefficient is at most
  // n (n + 1)/T, however high the order):
  //   T x_k' = c_(k-1)/c_k x_(k+1) (k < n),  T x_n' = c_(n-1)/c_n (u - x_1 - ... - x_n),
  //   y = N(s) z = (-1)^n u + sum_k ((-1)^(k-1) - (-1)^n) x_k.
  // At rest with the input `initial`: x_1 = z = initial (c_0 = 1), the others 0.
  const std::string name = w.name();
  auto x = [&](int k) { return name + ".x" + std::to_string(k); };
  // c_(k-1)/c_k = k (2n - k + 1)/(n - k + 1), as a fraction.
  auto ratio = [&](int k) { return fmt::format("{}/{}", k * (2 * n - k + 1), n - k + 1); };
  std::string y = (n % 2 ? "-" : "") + u, sum = u;
  for (int k = 1; k <= n; ++k) {
    sum += " - " + x(k);
    const int factor = ((k - 1) % 2 ? -1 : 1) - (n % 2 ? -1 : 1);  // 0 or +-2
    if (factor != 0) y += fmt::format(" + {}*{}", factor, x(k));
  }
  for (int k = 1; k <= n; ++k) {
    const std::string rate = k < n ? fmt::format("{}*{}/{}", ratio(k), x(k + 1), T)
                                   : fmt::format("{}*({})/{}", ratio(n), sum, T);
    w.State("x" + std::to_string(k), rate, k == 1 ? w.Text("initial", "0") : "0");
  }
  w.Output("y", y);
}

std::string ListText(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + v[k];
  return s + "]";
}

void WriteLookup2d(Writer& w) {
  const std::vector<std::string> u = w.Inputs();
  if (u.size() != 2) w.Fail("inputs", "a 2D table takes two inputs", "inputs: [u1, u2]", fmt::format("{}", u.size()));
  const std::vector<std::string> xs = w.List("x"), ys = w.List("y");
  if (xs.size() < 2 || ys.size() < 2)
    w.Fail(xs.size() < 2 ? "x" : "y", "a 2D table needs two points or more along each input", "x: [x0, x1, ...], y: [y0, y1, ...]",
           fmt::format("{} and {} points", xs.size(), ys.size()));
  const auto z = w.Matrix("z", static_cast<int>(xs.size()), static_cast<int>(ys.size()));
  if (z.empty()) w.Fail("z", "no table values", "z: one row per x, one value per y", "none");
  // Bilinear: sum over the columns j of hat_j(u2) * (column j linear in u1),
  // hat_j the linear interpolation of the j-th unit vector.
  std::string out;
  for (size_t j = 0; j < ys.size(); ++j) {
    std::vector<std::string> hat(ys.size(), "0"), col;
    hat[j] = "1";
    for (const auto& row : z) col.push_back(row[j]);
    out += fmt::format("{}table({}, {}, {})*table({}, {}, {})", j ? " + " : "", u[1], ListText(ys), ListText(hat), u[0],
                       ListText(xs), ListText(col));
  }
  w.Output("y", out);
}

void WriteSensor(Writer& w) {
  if (!w.Has("of")) w.Fail("of", "a sensor needs 'of'", "of: <bond, one-port element or junction>", "none");
  std::string of = w.Text("of");
  of = of.substr(1, of.size() - 2);
  const std::string q = w.Has("quantity") ? w.Text("quantity") : "(flow)";
  if (q == "(effort)") w.Output("y", "e_" + of);
  else if (q == "(flow)") w.Output("y", "f_" + of);
  else if (q == "(momentum)") w.State("y", "e_" + of, w.Text("initial", "0"), true);
  else if (q == "(displacement)") w.State("y", "f_" + of, w.Text("initial", "0"), true);
  else
    w.Fail("quantity", "unknown quantity", "effort, flow, momentum (the time integral of the effort) or displacement "
           "(that of the flow)", q.substr(1, q.size() - 2));
}

// A discrete PID at the sample period Ts (backward Euler): at each sample
// e = u, i := i + ki Ts e, y := kp e + i + kd (e - e_prev)/Ts, e_prev := e;
// with limits, y is clipped and the integral holds while the output would
// pass a limit (conditional integration).
void WriteDiscretePid(Writer& w) {
  const std::string e = w.Input("input"), ts = w.Text("Ts"), n = w.name();
  const std::string kp = w.Text("kp", "0"), ki = w.Text("ki", "0"), kd = w.Text("kd", "0");
  const std::string i = n + ".i", ep = n + ".e", y = n + ".y";
  w.State("i", "0", w.Text("initial", "0"));
  w.State("e", "0", "0");
  w.State("y", "0", "0", true);
  const std::string pd = fmt::format("{}*{} + {}*({} - {})/{}", kp, e, kd, e, ep, ts);
  const std::string i_next = fmt::format("{} + {}*{}*{}", i, ki, ts, e);
  const std::string v = fmt::format("{} + {}", pd, i_next);
  std::string i_new = i_next, y_new = v;
  if (w.Has("max") || w.Has("min")) {
    const std::string hi = w.Text("max", "1e300"), lo = Lower(w);
    i_new = fmt::format("if({0} > {1}, {3}, if({0} < {2}, {3}, {4}))", v, hi, lo, i, i_next);
    y_new = Clip(Par(v), lo, hi);
  }
  w.Sample({{i, i_new}, {ep, e}, {y, y_new}});
}

const std::vector<BlockType>& Types() {
  static const std::vector<BlockType> types = {
      {"gain", {"input", "k"}, [](Writer& w) { w.Output("y", w.Text("k") + "*" + w.Input("input")); }},
      {"sum", {"inputs", "signs"},
       [](Writer& w) {
         const std::vector<std::string> u = w.Inputs();
         std::string signs;
         for (const auto& s : w.List("signs")) signs += s;
         signs.erase(std::remove(signs.begin(), signs.end(), ' '), signs.end());
         if (signs.empty()) signs.assign(u.size(), '+');
         if (signs.size() != u.size() || signs.find_first_not_of("+-") != std::string::npos)
           w.Fail("signs", "one sign per input", fmt::format("{} signs, each + or - (signs: \"+-\")", u.size()), signs);
         std::string y;
         for (size_t k = 0; k < u.size(); ++k) y += (k || signs[k] == '-' ? std::string(" ") + signs[k] + " " : "") + u[k];
         w.Output("y", y);
       }},
      {"product", {"inputs"},
       [](Writer& w) {
         std::string y;
         for (const auto& u : w.Inputs()) y += (y.empty() ? "" : "*") + u;
         w.Output("y", y);
       }},
      {"integrator", {"input", "k", "initial", "max", "min", "reset", "reset_value"},
       [](Writer& w) {
         const std::string r = w.Text("k", "1") + "*" + w.Input("input"), y = w.name() + ".y";
         std::string rate = r;
         // At a limit, the state holds while the input drives it further (a mode held between events).
         if (w.Has("min")) rate = fmt::format("if({} <= {}, if({} < 0, 0, {}), {})", y, w.Text("min"), r, r, rate);
         if (w.Has("max")) rate = fmt::format("if({} >= {}, if({} > 0, 0, {}), {})", y, w.Text("max"), r, r, rate);
         w.State("y", rate, w.Text("initial", "0"), true);
         if (w.Has("reset")) {
           const std::string when = w.Text("reset");
           w.Reset(when.substr(1, when.size() - 2), y, w.Text("reset_value", w.Text("initial", "0")));
         } else if (w.Has("reset_value")) {
           w.Fail("reset_value", "'reset_value' without 'reset'", "reset: <condition> beside it", "no reset");
         }
       }},
      {"derivative", {"input", "k", "T", "initial"},
       [](Writer& w) {
         const std::string u = w.Input("input"), T = w.Text("T");
         const std::string x = w.State("x", fmt::format("({} - {}.x)/{}", u, w.name(), T), w.Text("initial", "0"));
         w.Output("y", fmt::format("{}*({} - {})/{}", w.Text("k", "1"), u, x, T));
       }},
      {"pid", {"input", "form", "kp", "ki", "kd", "k", "Ti", "Td", "Tf", "N", "max", "min", "antiwindup", "Tt", "initial"},
       WritePid},
      {"transfer_function", {"input", "num", "den", "initial"}, WriteTransferFunction},
      {"pade_delay", {"input", "T", "order", "initial"}, WritePadeDelay},
      {"state_space", {"inputs", "A", "B", "C", "D", "initial"}, WriteStateSpace},
      {"saturation", {"input", "max", "min"},
       [](Writer& w) { w.Output("y", Clip(w.Input("input"), Lower(w), w.Text("max"))); }},
      {"dead_zone", {"input", "max", "min"},
       [](Writer& w) {
         const std::string u = w.Input("input"), hi = w.Text("max"), lo = Lower(w);
         w.Output("y", fmt::format("if({0} > {2}, {0} - {2}, if({0} < {1}, {0} - {1}, 0))", u, lo, hi));
       }},
      {"lookup", {"input", "x", "y"},
       [](Writer& w) {
         const std::string u = w.Input("input");
         w.Output("y", fmt::format("table({}, {}, {})", u, ListText(w.List("x")), ListText(w.List("y"))));
       }},
      {"lookup2d", {"inputs", "x", "y", "z"}, WriteLookup2d},
      {"sensor", {"of", "quantity", "initial"}, WriteSensor},
      {"rate_limiter", {"input", "rising", "falling", "T", "initial"},
       [](Writer& w) {
         // y follows u as a first-order lag of time constant T (small), its
         // rate clipped to [falling, rising]: a slope-limited copy of u.
         const std::string u = w.Input("input"), n = w.name() + ".y", rise = w.Text("rising");
         const std::string fall = w.Has("falling") ? w.Text("falling") : Par("-" + rise);
         w.State("y", Clip(fmt::format("({} - {})/{}", u, n, w.Text("T", "1e-3")), fall, rise), w.Text("initial", "0"),
                 true);
       }},
      {"relay", {"input", "on", "off", "high", "low", "initial"},
       [](Writer& w) {
         // Hysteresis: y switches to high when u rises above `on`, to low
         // when it falls below `off` (off < on), and keeps its value between.
         const std::string u = w.Input("input"), on = w.Text("on"), off = w.Text("off");
         const std::string high = w.Text("high", "1"), low = w.Text("low", "0");
         const std::string y = w.State("y", "0", w.Text("initial", low.substr(1, low.size() - 2)), true);
         w.Switch("on", fmt::format("{} > {}", u, on), y, high);
         w.Switch("off", fmt::format("{} < {}", u, off), y, low);
       }},
      {"zero_order_hold", {"input", "Ts", "t0", "initial"},
       [](Writer& w) {
         const std::string u = w.Input("input");
         w.Sample({{w.State("y", "0", w.Text("initial", "0"), true), u}});
       }},
      {"unit_delay", {"input", "Ts", "t0", "initial"},
       [](Writer& w) {
         // y[k] = u[k-1]: s holds the last sample, y the one before.
         const std::string u = w.Input("input"), init = w.Text("initial", "0");
         const std::string s = w.State("s", "0", init);
         w.Sample({{w.State("y", "0", init, true), s}, {s, u}});
       }},
      {"discrete_pid", {"input", "Ts", "t0", "kp", "ki", "kd", "max", "min", "initial"}, WriteDiscretePid},
  };
  return types;
}

std::string Writer::Needs() const {
  for (const auto& t : Types())
    if (t.name == b_->type) return "a " + t.name + " block takes: " + JoinNames(t.keys);
  return "";
}

// The outputs a block of each type has, for the check of `<block>.<name>`.
void CheckReferences(const ModelSpec& spec) {
  std::map<std::string, const BlockSpec*> blocks;
  for (const auto& b : spec.blocks) blocks[b.name] = &b;
  std::set<std::string> declared;
  for (const auto& d : spec.definitions) declared.insert(d.name);
  for (const auto& d : spec.displacements) declared.insert(d.name);
  auto check = [&](const std::string& text, const SourceLocation& where, const std::string& element) {
    MapNames(text, [&](const std::string& n, bool) -> std::string {
      const size_t dot = n.find('.');
      if (dot == std::string::npos || declared.count(n)) return n;
      const auto it = blocks.find(n.substr(0, dot));
      if (it == blocks.end()) return n;
      std::vector<std::string> outs;
      for (const auto& o : it->second->outputs) outs.push_back(o.substr(dot + 1));
      const std::string h = DidYouMean(n.substr(dot + 1), outs);
      ThrowAt(where, element, fmt::format("block '{}' has no output '{}'", it->first, n.substr(dot + 1)),
              fmt::format("one of its outputs: {}", JoinNames(it->second->outputs)), n, h);
    });
  };
  for (const auto& e : spec.elements)
    for (const auto& law : e.laws) check(law.second, e.where, e.name);
  for (const auto& d : spec.definitions) check(d.text, d.where, d.name);
  for (const auto& d : spec.displacements) check(d.rate, d.where, d.name);
  for (const auto& o : spec.outputs) check(o.text, o.where, "");
  for (const auto& ev : spec.events) {
    check(ev.when, ev.where, ev.name);
    for (const auto& r : ev.resets) check(r.text, r.where, ev.name);
  }
  for (const auto& inst : spec.instances)
    for (const auto& p : inst.parameters) check(p.text, p.where, inst.name);
}

}  // namespace

std::vector<std::string> BlockTypeNames() {
  std::vector<std::string> names;
  for (const auto& t : Types()) names.push_back(t.name);
  return names;
}

std::set<std::string> BlockSignals(const ModelSpec& spec) {
  std::set<std::string> signals;
  for (const auto& b : spec.blocks) signals.insert(b.outputs.begin(), b.outputs.end());
  if (signals.empty()) return signals;
  // Definitions that use a signal, until no more join (definitions may be in any order).
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& d : spec.definitions)
      if (!signals.count(d.name) && UsesAny(d.text, signals)) grew = signals.insert(d.name).second;
  }
  return signals;
}

bool UsesAny(const std::string& text, const std::set<std::string>& names) {
  bool found = false;
  MapNames(text, [&](const std::string& n, bool call) {
    found = found || (!call && names.count(n));
    return n;
  });
  return found;
}

void ExpandBlocks(ModelSpec* spec) {
  std::set<std::string> taken, seen;
  for (const auto& e : spec->elements) taken.insert(e.name);
  for (const auto& i : spec->instances) taken.insert(i.name);
  for (const auto& p : spec->parameters) taken.insert(p.name);
  bool any = false;
  for (auto& b : spec->blocks) {
    if (b.expanded) continue;
    any = true;
    if (!IsIdentifier(b.name) || b.name.find('.') != std::string::npos)
      ThrowAt(b.where, b.name, fmt::format("block name '{}' is not an identifier", b.name),
              "letters, digits and underscores, not starting with a digit", b.name);
    if (taken.count(b.name) || !seen.insert(b.name).second)
      ThrowAt(b.where, b.name, fmt::format("the name '{}' is used twice", b.name),
              "each block named apart from the other blocks, the elements, instances and parameters", b.name,
              "rename the block");
    const BlockType* type = nullptr;
    for (const auto& t : Types())
      if (t.name == b.type) type = &t;
    if (!type) {
      const std::string h = DidYouMean(b.type, BlockTypeNames());
      ThrowAt(b.where, b.name, fmt::format("block '{}' has the unknown type '{}'", b.name, b.type),
              "one of: " + JoinNames(BlockTypeNames()), b.type, h);
    }
    for (const auto& [key, value] : b.values)
      if (std::find(type->keys.begin(), type->keys.end(), key) == type->keys.end()) {
        const std::string h = DidYouMean(key, type->keys);
        ThrowAt(value.where, b.name, fmt::format("'{}' is not a key of a {} block", key, b.type),
                "one of: " + JoinNames(type->keys), key, h);
      }
    Writer w(&b, spec);
    type->write(w);
    b.expanded = true;
  }
  if (any) CheckReferences(*spec);
}

}  // namespace paynter
