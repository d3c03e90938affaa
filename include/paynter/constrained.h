// paynter/constrained.h — mechanisms with constraints: the simulation methods
// of Boudon et al. (2019) for multibody bond graphs, as strategies.
//
// A constrained mechanism is a bond graph whose joints are constraint sources
// (Se elements with `constraint:`, which the multibody library writes for
// every constrained direction of a joint). The methods differ in where they act
// (each is a strategy, paynter/constraint_method.h, with one file of its own):
//
//   parasitic            rewrites the model: each constraint source becomes a
//                        stiff spring and a damper (src/constrained/parasitic.cc)
//   lagrange-multipliers keeps the unknown constraint forces, solved with the
//                        accelerations (a rank-revealing solve where constraints
//                        are redundant), and projects positions and velocities
//                        back onto the constraints after every step
//                        (src/constrained/lagrange_multipliers.cc, projection.cc)
//   minimal-coordinates  integrates only independent coordinates, chosen from
//                        the constraint Jacobian (coordinate partitioning) and
//                        chosen again when they become ill-conditioned; the
//                        dependent ones are solved from the constraints at every
//                        evaluation (src/constrained/minimal_coordinates.cc)
//   zcp                  joints rigid; the zero-order causal paths through the
//                        joints opened by break variables (the joint efforts),
//                        which become algebraic variables of an index-2 DAE with
//                        the velocity and position constraints (stabilized,
//                        Gear-Gupta-Leimkuhler), integrated by IDA (src/constrained/zcp.cc)
//
// Shared by all (src/constrained/constraint_analysis.cc, projection.cc): the constraint
// rows compiled as a program of their own, their numerical Jacobians, a
// rank-revealing analysis that names redundant joint directions, and the
// projection that assembles an inconsistent start.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "paynter/model.h"
#include "paynter/simulation.h"
#include "paynter/solvers.h"

namespace paynter {

enum class ConstraintMethod { kAuto, kZcp, kParasitic, kLagrangeMultipliers, kMinimalCoordinates };
// "auto" | "zcp" | "parasitic" | "lagrange-multipliers" | "minimal-coordinates"; throws Error.
ConstraintMethod ParseConstraintMethod(const std::string& name);
std::string ConstraintMethodName(ConstraintMethod m);
// The methods a user may name besides auto, in the order the documentation
// lists them (each a strategy: StrategyFor, paynter/constraint_method.h).
const std::vector<ConstraintMethod>& ConstraintMethods();

// ---- parasitic: a model rewrite ----------------------------------------------
struct ParasiticOptions {
  // Overrides for every joint (0 = per joint, else the model's setting, else the defaults).
  double stiffness = 0;
  double damping = 0;
};
// The defaults where neither the joint nor the model gives values (those of
// benchmark B1: 1e6 N/m or N m/rad, 200 N s/m or N m s/rad).
inline constexpr double kDefaultParasiticStiffness = 1e6;
inline constexpr double kDefaultParasiticDamping = 200;
// Replaces every constraint source `S` of an expanded spec by a 1-junction `S`
// carrying a spring `S_k` (a C: its state is the stretch of the joint in that
// direction) and a damper `S_c` (an R). Returns the number replaced.
int ApplyParasitic(ModelSpec* spec, const ParasiticOptions& options);

// The energy balance as outputs: `energy_stored` (the storage elements'
// energy), `energy_delivered` and `energy_dissipated` (integrals of the
// sources' and resistors' power, as displacements of the same names). For an
// expanded scalar spec whose storage laws are linear moduli; returns false
// (and changes nothing) otherwise, saying why in `why` when given.
struct EnergyRefusal {
  std::string element;  // the element that stops it ("" for the model)
  std::string reason;
};
bool AddEnergyAccounting(ModelSpec* spec, EnergyRefusal* why = nullptr);

// ---- analysis ----------------------------------------------------------------
struct ConstraintAnalysis {
  int coordinates = 0;      // velocity coordinates (momentum states of the inertias)
  int position_states = 0;  // position-like states the position constraints use
  int constraints = 0;      // constraint rows
  int rank = 0;             // numerical rank of the constraint Jacobian
  int mobility = 0;         // coordinates - rank
  int grubler = 0;          // coordinates - constraints (Gruebler-Kutzbach count)
  double condition = 0;     // largest / smallest nonzero singular value (0: not computed, a large Jacobian)
  double max_position_error = 0, max_velocity_error = 0;
  struct Row {
    std::string source, joint, direction;
    bool redundant = false;   // implied by the rows before it (model order)
    bool has_position = false;
    double position_error = 0, velocity_error = 0;
  };
  std::vector<Row> rows;
  // Per joint: rows and redundant rows, in model order.
  std::string ToText() const;
  bool redundant() const { return rank < constraints; }
};
// The analysis at (t, x): Jacobians by differences of the compiled constraint
// program (evaluated with the run's workspace), rank and redundant rows by a
// sparse QR of its rows in model order.
ConstraintAnalysis AnalyzeConstraints(ModelWorkspace& workspace, double t, const std::vector<double>& x);

// ---- projection and assembly ------------------------------------------------
struct AssemblyReport {
  double position_correction = 0;  // largest change of a position state
  double velocity_correction = 0;  // largest change of a momentum state
  double position_error_before = 0, velocity_error_before = 0;
  std::string worst_joint;         // the joint whose constraint was furthest off
  int iterations = 0;
};

// Moves positions onto the position constraints (Gauss-Newton, minimum-norm
// steps) and momenta onto the velocity constraints (the mass-weighted
// projection: an impulse along the constraint directions). Works with
// redundant constraints. Evaluates the model with a run's workspace; one
// thread at a time.
class ConstraintProjector {
 public:
  explicit ConstraintProjector(ModelWorkspace& workspace);
  ~ConstraintProjector();
  // Returns true when x changed. Throws Error (naming the joint) when the
  // positions cannot be brought within tolerance.
  bool Project(double t, double* x, AssemblyReport* report = nullptr);
  // Largest |position constraint| and |velocity constraint| at (t, x), and
  // the rows where they are (-1 when there is none).
  void Errors(double t, const double* x, double* position, double* velocity, int* worst = nullptr,
              int* worst_velocity = nullptr);
  // Assembly: the model's held states (bodies placed by joint initial
  // values) are not moved, and joint coordinates are set from the poses.
  bool assembly = false;
  // |g| and |c| below which nothing is moved; raised to 1e-14 (1 + the largest
  // position or momentum) where rounding allows no better.
  double position_tolerance = 1e-12;
  double velocity_tolerance = 1e-12;
  int max_iterations = 20;
  // Another projector of the same model (the one run after every step) whose
  // Jacobians this one adopts, outside an assembly and below the sparse size,
  // whenever they were formed nearer in time than its own; it is not changed.
  const ConstraintProjector* jacobians_from = nullptr;
  const std::vector<int>& position_states() const { return pos_; }
  const std::vector<int>& momentum_states() const { return mom_; }

 private:
  void Evaluate(double t, const double* x);
  struct Cache;
  ModelWorkspace& w_;
  const CompiledModel& m_;
  std::unique_ptr<Cache> cache_;
  std::vector<int> pos_, mom_, rows_with_position_;
  std::vector<int> quaternions_;  // first state of each body's quaternion <B>_q0..<B>_q3 (multibody library)
  std::vector<double> g_, c_, work_;
};

// ---- what a method works on (paynter causality/equations/draw --constraints) ----
// zcp: the model with every constraint source `S` an effort source whose
// effort is the parameter `zcp_S`, a break variable of the zero-order causal
// paths and an algebraic variable of the DAE (set by it at each evaluation).
// `names` receives the break variables, in model order. Throws Error when a
// name `zcp_S` is taken.
Model BreakVariableModel(const Model& source, std::vector<std::string>* names);

// minimal-coordinates: the partition of the states chosen at (t, x) (an
// assembled start): the dependent positions and momenta (the columns of the
// position and velocity constraint Jacobians a pivoted QR picks first, solved
// from the constraints) and the independent states (integrated).
struct CoordinatePartition {
  std::vector<std::string> independent, dependent_positions, dependent_momenta;
};
CoordinatePartition ChooseCoordinatePartition(ModelWorkspace& workspace, double t, const std::vector<double>& x);

// ---- simulation --------------------------------------------------------------
struct ConstrainedOptions {
  ConstraintMethod method = ConstraintMethod::kAuto;
  bool assemble = false;          // correct an inconsistent start whatever its size
  double assembly_tolerance = 1e-6;  // a larger correction is an error unless `assemble`
  bool stabilize = true;          // lagrange-multipliers: project after every step
  // lagrange-multipliers: after each projection onto the joints, scale the
  // momenta so that the energy balance holds (the model must have the energy
  // pass's outputs: RunOptions::project_energy adds them; docs/constraints.md).
  bool project_energy = false;
  // The largest constraint drift (position, and velocity) an output may show:
  // beyond it the run stops with an error naming the joint (0: no check;
  // negative: the larger of 1e-6 and 10 rtol). Not checked without
  // stabilization (the drift is then what was asked to see).
  double drift_tolerance = -1;
  double condition_limit = 1e4;   // minimal-coordinates: repartition beyond this
  // zcp: the model the compiled one was built from (paynter derives from it
  // the model whose joint efforts are the DAE's algebraic variables), and how
  // to compile that one.
  const Model* source = nullptr;
  CodegenOptions codegen;
  // zcp: that model compiled beforehand (PreparedModel::method_model(), made
  // with the symbolic stages): no symbolic work in the run. Null: made from `source`.
  const CompiledModel* method_model = nullptr;
  // Where the rows go as they are recorded (a CsvWriter, say); the Solution
  // returned then keeps none. Null: into Solution::rows.
  RowSink* output = nullptr;
};

struct ConstrainedReport {
  ConstraintMethod method = ConstraintMethod::kAuto;  // the method used
  std::string why;                // why auto chose it
  ConstraintAnalysis analysis;    // at the start (after assembly)
  AssemblyReport assembly;
  double max_position_drift = 0;  // largest |position constraint| seen at the output times
  double max_velocity_drift = 0;
  int partitions = 0;             // minimal-coordinates: partitions used
  int algebraic = 0;              // zcp: algebraic variables of the DAE (joint efforts, GGL multipliers)
  std::vector<std::string> zcp_dropped, zcp_dropped_positions;  // zcp: redundant rows left out (sources)
  std::string zcp_note;           // zcp: why position stabilization was dropped, if it was
  // zcp: singular configurations passed by lagrange-multipliers' steps (IDA's
  // Newton iteration failed there), the first failure's time and the time
  // the bridges took in all.
  int zcp_bridges = 0;
  double zcp_first_bridge = 0, zcp_bridge_time = 0;
  std::vector<std::string> independent;  // minimal-coordinates: the last independent states
  // lagrange-multipliers with project_energy: steps and outputs whose momenta
  // were scaled, those left as they were (kinetic energy too small to carry
  // the error), the largest relative change of the kinetic energy applied, and
  // the largest energy error met relative to the largest stored energy.
  bool energy_projected = false;
  int energy_corrections = 0, energy_skipped = 0;
  double energy_largest_correction = 0, energy_largest_error = 0;
  std::string ToText() const;
};

// Which method `auto` picks for a compiled model (and why): kAuto (the model
// as it is) without constraint sources, else lagrange-multipliers.
ConstraintMethod ChooseConstraintMethod(const CompiledModel& model, std::string* why);

// Simulates a compiled model by a method: lagrange-multipliers,
// minimal-coordinates, zcp (needs options.method_model or options.source), or
// parasitic (a model loaded with LoadOptions::method = kParasitic: simulated as
// it is, the springs' stretch reported). Assembles the start first, then
// calls the method's strategy (StrategyFor, paynter/constraint_method.h).
// Runs with `workspace` (its parameters as set), or with a fresh one.
Solution SimulateConstrained(ModelWorkspace& workspace, const SolverOptions& solver,
                             const ConstrainedOptions& options, ConstrainedReport* report = nullptr);
Solution SimulateConstrained(const CompiledModel& model, const SolverOptions& solver,
                             const ConstrainedOptions& options, ConstrainedReport* report = nullptr);

}  // namespace paynter
