// paynter/equations.h — the EquationSystem: a causal bond graph's equations.
//
// Each element contributes the equations its causality asks for (one per
// variable it computes); storage elements in integral causality contribute the
// state equations dp/dt = e, dq/dt = f; displacements dx/dt = f. Storage
// elements in derivative causality contribute e = d/dt(I f) (or f = d/dt(C e)),
// whose time derivatives are formed locally by the chain rule, equation by
// equation, in terms of the unknown state derivatives. The equations are then
// sorted (Tarjan); a cyclic group — an algebraic loop, or state derivatives
// coupled through derivative causality — is torn and becomes an implicit block
// r(u) = 0, affine in u when the model is linear in it (M(x) u = f(x, t)),
// solved numerically at each evaluation: never inverted symbolically.
#pragma once

#include <string>
#include <vector>

#include "paynter/causality.h"
#include "paynter/model.h"
#include "paynter/program.h"

namespace paynter {

// One causal equation: `var` is computed from the others. Explicit: var = value.
// Implicit (a law that must be inverted numerically): residual = 0 defines var.
struct CausalEquation {
  GiNaC::symbol var;
  bool is_explicit = true;
  GiNaC::ex value;     // explicit
  GiNaC::ex residual;  // implicit
  std::string origin;  // element (or displacement) it comes from
};

struct ImplicitBlock {
  std::vector<std::string> unknowns;  // torn variables solved by Newton
  std::vector<std::string> variables; // every variable of the cyclic group
  bool linear = false;
  bool derivative_causality = false;  // couples state derivatives
  std::string label;
};

// Which classical formulation the causal graph gives (from its procedure).
enum class Formulation { kState, kHamilton, kLagrange1, kLagrange2, kBoltzmannHamel };
// state|hamilton|lagrange1|lagrange2|boltzmann-hamel; throws
Formulation ParseFormulation(const std::string& name);
std::string FormulationName(Formulation f);
// The causality procedure (and generalized junctions) a formulation needs.
CausalityOptions OptionsFor(Formulation f, const Model& model);

// A constraint source (an Se with `constraint:`, a joint's constraint force
// or moment) as the numerical methods for constrained mechanisms see it: the
// slots, computed by the outputs program, of its multiplier (the unknown
// effort), of its flow constraint (= 0) and of its position constraint (= 0;
// -1 when the model gives none).
struct ConstraintRow {
  std::string source;            // the Se element
  std::string joint, direction;  // for reports
  int multiplier_slot = -1;
  int velocity_slot = -1;
  int position_slot = -1;
};

// Events and modes (docs/events.md). A mode is a slot that the event handling
// sets and that stays constant between events; the expressions select on it
// (pn_select, paynter/conditionals.h). The slots named here are computed by
// EquationSystem::event_program, which runs after the rhs.
struct ModeRow {
  std::string text;        // the condition as written, for reports
  int slot = -1;           // the mode: 1 while the condition holds, else 0
  int indicator_slot = -1; // the condition's indicator (> 0 where it holds)
  int strict = 1;          // 0: the condition holds at indicator = 0 too (>=, <=)
};
struct EventRow {
  std::string name;
  int indicator_slot = -1;  // the `when` condition's indicator: the event fires when it crosses zero upwards
  int strict = 1;
  int stop = 0;
  std::vector<int> reset_states;  // state indices
  std::vector<int> reset_slots;   // their new values, from the values before the event
};
// A switched element (an R with law: coulomb or law: diode): in its stuck or
// blocking mode its flow is held (its effort is then solved for), otherwise
// its effort is the sliding or forward law. See docs/events.md.
struct SwitchRow {
  std::string element;
  int kind = 0;            // 0: Coulomb friction (two-sided), 1: ideal diode (one-sided)
  int held_slot = -1;      // mode: 1 stuck (friction) or blocking (diode), 0 sliding or conducting
  int direction_slot = -1; // mode: +1 or -1, the sliding direction (friction; 1 for a diode)
  int effort_slot = -1;    // the element's effort (its unknown while held)
  int flow_slot = -1;      // the flow into the element
  int limit_slot = -1;     // static friction limit (friction) or forward voltage (diode)
  int indicator_slots[2] = {-1, -1};  // the event indicators, per mode (see events.md)
};

struct EquationSystem {
  std::string model_name;
  Formulation form = Formulation::kState;
  // Lagrange forms: the generalized velocities (states v_<junction>) and the
  // multipliers (lambda_<junction>) with their velocity constraints f = 0.
  std::vector<std::string> generalized_velocities;
  std::vector<GiNaC::symbol> multipliers;
  std::vector<GiNaC::ex> constraints;  // flows of the AES bonds, = 0
  // Modulus variables of MTF/MGY elements (named after the element) and their
  // time derivatives, kept as names when equations are printed.
  std::vector<std::pair<GiNaC::symbol, GiNaC::ex>> moduli;
  // States, in order: integral I (p_), integral C (q_), generalized velocities, displacements.
  std::vector<GiNaC::symbol> states;
  std::vector<GiNaC::symbol> derivatives;  // d<state>
  std::vector<std::string> state_names;
  std::vector<std::string> state_origin;   // "I L1", "C C1", "displacement gamma"
  std::vector<double> initial_state;
  // Per state: the inertance of a momentum state (I element in integral
  // causality; 1 when its law is not a constant modulus), 0 for other states.
  std::vector<double> state_inertia;
  std::vector<std::string> parameter_names;
  std::vector<double> parameter_values;
  std::vector<std::string> output_names;

  std::vector<CausalEquation> equations;  // after elimination of trivial copies
  GiNaC::exmap aliases;                   // the copies eliminated: variable -> variable
  std::vector<ImplicitBlock> blocks;      // cyclic groups found when sorting

  // Ready for codegen. Slot layout of both programs: [t, parameters..., states...,
  // derivatives..., other variables..., outputs...]. `rhs` computes the
  // derivatives; `outputs` (run after rhs on the same slots) the outputs.
  Program rhs;
  Program outputs;
  // The flow and position constraints of constraint_rows from (t, x) alone
  // (multipliers: the rhs's slots). Empty without constraint sources.
  Program constraint_program;
  bool outputs_after_rhs = false;  // run rhs before outputs (outputs then omits rhs steps)
  int num_slots = 0;
  int time_slot = 0;
  int first_parameter_slot = 1;
  int first_state_slot = 0;
  int first_derivative_slot = 0;
  std::vector<int> output_slots;
  std::vector<ConstraintRow> constraint_rows;  // constraint sources, in model order
  // Displacements with a position form: (state index, slot of the form in
  // constraint_program, period).
  struct CoordinateRow {
    int state = -1, slot = -1;
    double period = 0;
  };
  std::vector<CoordinateRow> coordinate_rows;
  std::vector<int> held_states;  // Model::assembly_held, as state indices
  // Events (docs/events.md); all empty for a model without conditions,
  // events or switched elements.
  std::vector<ModeRow> modes;
  std::vector<EventRow> events;
  std::vector<SwitchRow> switches;
  Program event_program;  // indicators and reset values; run after rhs

  // Closed forms dx/dt = f(x, t) when the right-hand side is explicit (no block);
  // otherwise the block residuals are given with the equations feeding them.
  std::string ToText(const Model& model) const;
  // Lagrange subsystem (Mechatronics Handbook §9, seed 002): transforming
  // relations, generalized momenta dT/dqdot, conservative and non-conservative efforts.
  std::string ExplainLagrange(const Model& model) const;
  // The Boltzmann-Hamel terms of a boltzmann-hamel system (BoltzmannHamelTerms):
  // the transformation w = A(q) q', q' = B(q) w, the kinetic co-energy T*(q, w),
  // the quasi-momenta, the Hamel coefficients and the equations they give.
  std::string ExplainBoltzmannHamel(const Model& model, bool latex = false) const;
  // What `equations --form boltzmann-hamel` adds to the equations: the Hamel
  // coefficients (cheap: no kinetic co-energy), or that there are none.
  std::string HamelText(const Model& model, bool latex = false) const;
  std::string ToLatex(const Model& model) const;
  // One expression in LaTeX as ToLatex prints it (names by LatexName, this
  // system's derivatives d<x> as \dot{x}).
  std::string Latex(const GiNaC::ex& e) const;
};

EquationSystem BuildEquations(const Model& model, const CausalGraph& graph);

// What `paynter check` shows of the equations, without what it does not: the
// builder's passes up to the sorting into components, which give the states,
// the implicit blocks (algebraic loops, derivative causality: their variables,
// unknowns and labels) and every error BuildEquations raises; none of the
// programs, slot layout or blocks' Jacobians (a block's `linear` is left
// false). For a model with constraint sources use BuildEquations: their rows
// need the programs.
EquationSystem BuildEquationStructure(const Model& model, const CausalGraph& graph);

// A model's name as a reader writes it in LaTeX: a Greek letter's name as the
// letter, trailing digits and the parts after underscores as one subscript
// (theta1 -> \theta_{1}, J2_c1_8 -> \mathrm{J2}_{\mathrm{c1}8}... see print.cc),
// a trailing "dot" as the time derivative (gammadot -> \dot{\gamma}), longer
// words upright; DottedLatexName is the time derivative of the name.
std::string LatexName(const std::string& name);
std::string DottedLatexName(const std::string& name);

// The Boltzmann-Hamel equations of a boltzmann-hamel system, symbolically
// (see ExplainBoltzmannHamel): with quasi-velocities w (the ASF flows) and
// coordinates q (the displacements, q' = B(q) w, A = B^-1),
//   P_r = dT*/dw_r,
//   gamma^l_rs = sum_ij (dA_li/dq_j - dA_lj/dq_i) B_ir B_js   (Hamel coefficients),
//   dP_r/dt + sum_sl gamma^l_rs w_s P_l - sum_i B_ir dT*/dq_i + dU/dq terms = sum_i B_ir Q_i.
struct BoltzmannHamelTerms {
  std::vector<GiNaC::symbol> velocities;   // w (states v_<junction>)
  std::vector<GiNaC::symbol> accelerations;  // their derivatives
  std::vector<GiNaC::symbol> coordinates;  // q (displacement states)
  std::vector<std::string> coordinate_names, velocity_names;
  std::vector<std::vector<GiNaC::ex>> B, A;  // q' = B w, w = A q' (A empty when B is not square)
  GiNaC::ex kinetic_coenergy;                // T*(q, w)
  std::vector<GiNaC::ex> momenta;            // P_r
  std::vector<std::vector<std::vector<GiNaC::ex>>> hamel;  // [l][r][s]
  std::vector<GiNaC::ex> hamel_terms;        // sum_sl gamma^l_rs w_s P_l
  // Equation r: lhs = rhs, lhs = sum_s dP_r/dw_s w'_s + (dP_r/dq) B w + Hamel
  // term - B^T dT*/dq + the C elements' efforts; rhs = the other one-ports'.
  std::vector<GiNaC::ex> lhs, rhs;
};
// `equations` false: the kinematics (B, A) and the Hamel coefficients only,
// without the kinetic co-energy and the equations (which take seconds for a
// spatial chain).
BoltzmannHamelTerms DeriveBoltzmannHamel(const EquationSystem& sys, const Model& model, bool equations = true);

// The Lagrange subsystem of a lagrange2 system, symbolically (see ExplainLagrange).
struct LagrangeSubsystem {
  std::vector<GiNaC::symbol> velocities;              // generalized velocities v
  std::vector<std::string> elements;                  // one-port elements
  std::vector<std::vector<GiNaC::ex>> transforming;   // [element][i] = d f_element / d v_i
  GiNaC::ex kinetic_coenergy;                         // T
  std::vector<GiNaC::ex> momenta;                     // p~_i = dT/dv_i
  std::vector<GiNaC::ex> conservative;                // e~_q,i = -dT/dq_i + dU/dq_i
  std::vector<GiNaC::ex> nonconservative;             // E_q,i = e_x T(q)
};
LagrangeSubsystem DeriveLagrangeSubsystem(const EquationSystem& system, const Model& model);

// Rewrites sin(x)^2 as 1 - cos(x)^2 and normalizes: enough to make identities
// of mechanism kinematics visible, and to compare two derivations.
GiNaC::ex TrigNormal(const GiNaC::ex& e);

}  // namespace paynter
