// paynter/linear.h — linear analysis: A, B, C, D at an operating point, the
// eigenvalues with their damping and natural frequency, and the frequency
// response C (jwI - A)^-1 B + D.
//
// The matrices are the exact Jacobians of the state equations as the pipeline
// builds them (EquationSystem::rhs and ::outputs): every step's expression is
// differentiated symbolically (GiNaC) and the partial derivatives, evaluated at
// the operating point, are chained through the program in forward mode. An
// implicit block r(u, w) = 0 (an algebraic loop, derivative causality, the
// constraint forces of a mechanism) is differentiated by the implicit function
// theorem: du/dz = -(dr/du)^-1 (dr/dw) dw/dz. No finite differences.
//
// Inputs are the sources marked `input: true` in the model (Se, Sf, MSe,
// MSf): each becomes its law plus an input variable u_<source>, whose nominal
// value is 0 (so u is the deviation from the law's value); outputs are the
// model's outputs.
//
// A mechanism (a system with constraint rows, joint coordinates or body
// quaternions) is linearized in independent coordinates: the states are k of
// the model's states chosen at the operating point so that the others follow
// from the invariants of the state (flow and position constraints, joint
// coordinates against the poses, unit quaternions), and A is the Jacobian of
// the independent states' equations with the dependent ones solved from
// those invariants: 2 x (degrees of freedom) + (other states) wide, with the
// eigenvalues of the motion only.
#pragma once

#include <complex>
#include <optional>
#include <string>
#include <vector>

#include "paynter/equations.h"
#include "paynter/model.h"

namespace paynter {

// A dense matrix, row-major.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> data;
  Matrix() = default;
  Matrix(int r, int c) : rows(r), cols(c), data(static_cast<size_t>(r) * c, 0.0) {}
  double& operator()(int i, int j) { return data[static_cast<size_t>(i) * cols + j]; }
  double operator()(int i, int j) const { return data[static_cast<size_t>(i) * cols + j]; }
};

// The model with each source marked `input: true` given an input variable:
// its law becomes law + u_<source>, u_<source> a parameter of value 0. The
// names of those parameters, in model order, go to *input_parameters and the
// sources' names to *inputs. Throws a located Error when an input is not a
// source, or is a constraint source.
Model WithInputs(const Model& model, std::vector<std::string>* inputs, std::vector<std::string>* input_parameters);

// The linearization of a model's equations at (t, x) with the inputs at their
// nominal values.
struct LinearModel {
  std::vector<std::string> states, inputs, outputs;
  Matrix A, B, C, D;  // dx' = A dx + B du, dy = C dx + D du
  double t = 0;
  std::vector<double> x;   // the operating point
  std::vector<double> dx;  // the state derivatives there (0 at a steady state)
  std::vector<double> y;   // the outputs there
  // Mechanisms: `states` are the independent coordinates (x holds their
  // values, dx their derivatives); all the model's states, their values at
  // the operating point and the dependent ones; a deviation dz of the
  // independent states moves all states by V dz (n x k). For other models
  // all_states == states, dependent is empty and V is empty (the identity).
  std::vector<std::string> all_states, dependent;
  std::vector<double> all_x;
  Matrix V;
  int constraint_rank = 0;  // rank of the invariants' Jacobian (0 without any)
};

// The Jacobians of `system` (built from a WithInputs model, whose input
// parameters are named in `input_parameters`) at (t, x). Throws Error when a
// partial derivative has no value there, or an implicit block is singular;
// for a mechanism also when x is off the constraint manifold (project it
// first: ProjectOntoConstraints) or at a singular configuration (the rank of
// the constraints' Jacobian drops there).
LinearModel Linearize(const EquationSystem& system, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& input_parameters, double t, const std::vector<double>& x);

// Whether `system` has invariants of the state (constraint rows, joint
// coordinates with a position form, body quaternions): then it is linearized
// on their manifold, in independent coordinates.
bool HasConstraintManifold(const EquationSystem& system);

// A mechanism's state x moved onto its constraint manifold at time t
// (Gauss-Newton with minimum-norm steps on the states not named in `held`,
// exact Jacobians); *correction gets the largest change of a state. Throws a
// Diagnostic naming the invariant furthest off when the held states leave no
// consistent configuration ("off the constraint manifold"). Returns x
// unchanged for a system without invariants.
std::vector<double> ProjectOntoConstraints(const EquationSystem& system, double t, const std::vector<double>& x,
                                           const std::vector<std::string>& held, double* correction = nullptr);

struct SteadyStateOptions {
  double tol = 1e-10;   // on max |f(x)| relative to the scale of the derivatives' terms
  int max_iter = 100;
};
// A steady state f(x, u0) = 0 at time t by Newton's method from `start`, with
// the exact Jacobian and a backtracking line search; a rank-deficient Jacobian
// (a state that is free at a steady state, such as an angle nothing depends
// on) takes the minimum-norm step. Throws Error naming the largest derivative
// left when it does not converge. A mechanism: Newton in its independent
// coordinates from `start` (on the constraint manifold), each step projected
// back onto it, so that the steady state is a static equilibrium there.
std::vector<double> SteadyState(const EquationSystem& system, const std::vector<std::string>& input_parameters,
                                double t, const std::vector<double>& start, const SteadyStateOptions& options = {});

// An eigenvalue with its damping ratio zeta = -Re/|lambda| and natural
// frequency wn = |lambda| (rad/s); for lambda = 0, zeta is reported as NaN.
struct Mode {
  std::complex<double> lambda;
  double zeta = 0, wn = 0;
};
// The eigenvalues of A, sorted by natural frequency, then imaginary part.
std::vector<Mode> Modes(const Matrix& A);

// H(jw) = C (jwI - A)^-1 B + D for input column `input` and output row `output`.
std::complex<double> FrequencyResponse(const LinearModel& lin, int input, int output, double w);

struct BodePoint {
  double w = 0, magnitude_db = 0, phase_deg = 0;
};
// H at `points` frequencies spaced logarithmically from w0 to w1 (rad/s), the
// phase unwrapped to be continuous from the first point.
std::vector<BodePoint> Bode(const LinearModel& lin, int input, int output, double w0, double w1, int points);

// The default frequency range: a decade below the smallest and above the
// largest non-zero natural frequency (1e-2 to 1e2 rad/s without one).
void DefaultFrequencyRange(const LinearModel& lin, double* w0, double* w1);
// The smallest and largest non-zero natural frequency of A's eigenvalues
// into *lo and *hi, with the values they hold (0: none yet); an eigenvalue
// below kZeroEigenvalue times the largest is zero (to rounding).
inline constexpr double kZeroEigenvalue = 1e-10;
void NaturalFrequencyRange(const Matrix& A, double* lo, double* hi);

// ---- Loops: the open-loop transfer function at a cut (docs/linear.md, "Loops")

// The model with its loop opened at `signal`: a definition (a block's output
// such as `ctl.c.y`, a control component's signal input such as lib:control's
// `ctl.u`, any named expression), a block's state (an integrator's `y`, a
// PID's integral `i`), or an output that is one of these under another name
// (an instance's output `ctl.y`). Every expression that reads the signal — laws, rates,
// definitions, events — reads a new parameter instead (its name in
// *cut_parameter, its value `value`: the signal's value at the operating
// point), except the signal's own definition (or rate), which goes on
// computing it; the model's outputs are replaced by the one output `signal`.
// Throws a located Error when `signal` names no signal of the model: an
// unknown name (with the nearest signals as a hint), or a name that is no
// signal line (a parameter, a bond's effort or flow, a storage element's state).
Model OpenLoopAt(const Model& model, const std::string& signal, double value, std::string* cut_parameter);

// Where the loop gain L(jw) crosses |L| = 1 (gain crossover; `margin` the
// phase margin there, arg(-L) in degrees, in (-180, 180]) or the negative real
// axis (phase crossover, arg L = -180 deg modulo 360; `margin` the gain
// margin there, -20 log10 |L| in dB).
struct Crossover {
  double w = 0, margin = 0;
};
struct LoopMargins {
  std::vector<Crossover> gain_crossovers, phase_crossovers;  // by frequency
  // The smallest phase margin and the gain margin of smallest magnitude (dB);
  // empty when L does not cross there.
  std::optional<Crossover> phase_margin, gain_margin;
  double w0 = 0, w1 = 0;  // the range searched, rad/s
};
// The crossovers of L(jw) = H(jw) of `loop` (input 0 to output 0) in
// [w0, w1]: sign changes of log|L| and of Im L (where Re L < 0) between 100
// points per decade, each refined by bisection to the rounding of w.
LoopMargins Margins(const LinearModel& loop, double w0, double w1);

// Whether input 0 of `lin` reaches output 0 through the nonzero entries of
// A, B, C, D (false: its transfer function is zero whatever the frequency).
bool InputReachesOutput(const LinearModel& lin);

}  // namespace paynter
