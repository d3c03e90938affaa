// paynter/model.h — the Model: elements, bonds, parameters, displacements, outputs.
//
// This is the first stage's output. A Model is built from a YAML file
// (LoadModel) or in code (AddElement/AddBond/...), and is checked by Validate().
// Every bond carries a dimension (1 for scalar bonds); vector bonds use the same
// struct with dim 3 or 6.
//
// Expressions are GiNaC expressions over the model's symbols:
//   t                      time
//   <parameter>            every parameter, by name
//   <displacement>         every named displacement (a state)
//   p_<I>, q_<C>           the state of each storage element (momentum, displacement)
//   e_<bond>, f_<bond>     effort and flow of each bond
//   e_<elem>, f_<elem>     effort and flow of a one-port element's bond
//   f_<1-junction>         the common flow of a 1-junction
//   e_<0-junction>         the common effort of a 0-junction
// Inside an element's own law, the local names p (I), q (C), e and f (R) stand
// for that element's state or port variables.
#pragma once

#include <ginac/ginac.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paynter/error.h"

namespace paynter {

enum class ElementKind { kSe, kSf, kMSe, kMSf, kC, kI, kR, kTF, kMTF, kGY, kMGY, kZero, kOne };

// "Se", "0", ... ; ParseElementKind returns nullopt for unknown names.
std::string KindName(ElementKind k);
std::optional<ElementKind> ParseElementKind(const std::string& s);
bool IsJunction(ElementKind k);
bool IsSource(ElementKind k);       // Se Sf MSe MSf
bool IsStorage(ElementKind k);      // C I
bool IsTwoPort(ElementKind k);      // TF MTF GY MGY
bool IsOnePort(ElementKind k);      // sources, storage, R

// How an element's constitutive law is written.
enum class LawForm {
  kNone,      // junctions
  kLinear,    // modulus: I inertance (f = p/I), C capacitance (e = q/C), R resistance (e = R f),
              //          TF/MTF ratio (e1 = m e2, f2 = m f1), GY/MGY ratio (e1 = r f2, e2 = r f1)
  kStiffness, // C only: e = k q
  kEffort,    // Se/MSe: e = expr; C: e = expr(q); R: e = expr(f)
  kFlow,      // Sf/MSf: f = expr; I: f = expr(p); R: f = expr(e)
  kConstraint,// Se only: an unknown effort (a constraint force, a Lagrange
              // multiplier) that makes the bond's flow equal `law` (seed 001:
              // joint constraint forces as unknown effort sources)
  kCoulomb,   // R only: Coulomb friction with stick-slip, `law` the sliding
              // (dynamic) force, `static_limit` the static one (docs/events.md)
  kDiode,     // R only: an ideal diode, `law` its forward voltage
  kField,     // I or C: a port of a multiport storage field (Model::fields);
              // `law` unused, the field holds the constitutive law
};

// Sources a causality procedure adds (Marquis-Favre & Scavarda 2002): an
// artificial source of flow (ASF, zero effort) imposing a generalized velocity
// on a generalized 1-junction, and an artificial effort source (AES, zero
// flow) carrying a Lagrange multiplier on a constrained 0-junction.
enum class Artificial { kNone, kASF, kAES };

struct Element {
  std::string name;
  ElementKind kind = ElementKind::kOne;
  Artificial artificial = Artificial::kNone;
  int attached_to = -1;  // artificial sources: the junction they sit on
  // Causality fixed by the vector element this scalar element came from
  // (seed 003, constraint C2): cross-product transformers take flow in and
  // give flow out; gyrators take both flows in.
  enum class Fixed { kNone, kFlowInFlowOut, kFlowInBoth } fixed = Fixed::kNone;
  std::string origin;    // the vector element it came from ("" = written as is)
  SourceLocation where;
  LawForm form = LawForm::kNone;
  GiNaC::ex law;             // modulus or law expression (see LawForm)
  std::string law_text;      // as written, for reports
  std::string law_key;       // the YAML key it came from ("inertance", "effort", ...)
  std::optional<GiNaC::ex> initial;  // initial state of a storage element (default 0)
  std::vector<int> bonds;    // incident bonds, in the order they were declared
  // An Se with `constraint:` (an unknown constraint force) may also give the
  // position-level constraint `position = 0` whose time derivative is its
  // flow constraint: paynter then keeps positions on it (projection, assembly).
  std::optional<GiNaC::ex> position;
  std::string position_text;
  // An R with `coulomb:`: the static friction limit (`static:`, default the
  // sliding force).
  std::optional<GiNaC::ex> static_limit;
  // For reports: the joint (or group) the constraint belongs to and the
  // direction it constrains ("translation along x1"); the element's own name
  // and "" when written by hand.
  std::string joint, direction;
  // A source marked `input: true`: an input of the linear model (paynter/linear.h).
  bool input = false;
  // The domain(s) declared with `domain:` (one, or one per port of a two-port);
  // empty when none was declared.
  std::vector<std::string> domain;
  // A port of a storage field (form kField): its index in Model::fields, and
  // the port's index in the field; -1 otherwise.
  int field = -1, field_port = -1;
};

// A multiport storage field (docs/model-format.md, "Storage fields"): each
// port is a one-port element of the field's kind (form kField) with a bond of
// its own, and a coordinate, the time integral of the port's flow.
// - I field: the momenta p are states; the flows solve M(q) f = p with M the
//   symmetric inertia matrix, a function of the coordinates (solved
//   numerically, never inverted symbolically); the efforts give
//   dp_k/dt = e_k + 1/2 f^T dM/dq_k f (Hamilton's equations of the field's
//   kinetic energy T = 1/2 p^T M^-1 p). Integral causality only.
// - C field: the displacements q are states; e_k = dU/dq_k of the energy U(q).
//   Integral causality only.
struct StorageField {
  std::string name;
  ElementKind kind = ElementKind::kI;
  std::vector<int> ports;                       // element indices
  std::vector<GiNaC::symbol> coordinates;       // I: displacements; C: the ports' q_ states
  std::vector<std::vector<GiNaC::ex>> inertia;  // I field: M(q)
  GiNaC::ex energy;                             // C field: U(q)
  SourceLocation where;
};

struct Bond {
  std::string name;
  int from = -1;  // element the half-arrow leaves (power is positive from -> to)
  int to = -1;    // element the half-arrow points at
  int dim = 1;
  SourceLocation where;
  std::string origin;     // the vector bond this scalar bond is a component of ("" = none)
  int component = 0;      // its component in that vector bond
  // Its physical domain as found by the unit check (paynter/units.h):
  // "electrical", "translational", "rotational", "hydraulic", "thermal", or
  // "" when unknown; and the SI units of its effort and flow ("" = unknown).
  std::string domain, effort_unit, flow_unit;
};

// The time integral of a flow, named and used as a state (an angle from an
// angular velocity, a position from a velocity).
struct Displacement {
  std::string name;
  std::string of;     // a 1-junction, a bond or a one-port element whose flow is integrated
  GiNaC::ex rate;     // what is integrated: f_<of>, or any expression given as `rate:`
  GiNaC::ex initial;  // default 0
  SourceLocation where;
  // Optional: the displacement as a function of other states (a joint's
  // coordinate from the bodies' poses), used to make it consistent after an
  // assembly; `period` (2 pi for angles, 0 otherwise) keeps its turns.
  std::optional<GiNaC::ex> position;
  double period = 0;
};

struct Output {
  std::string name;
  GiNaC::ex value;
  std::string text;
  SourceLocation where;
  std::string unit = "";  // the unit it is reported in, as written ("" = SI, unchecked)
  // Definitions only: the time derivative of `value` in closed form, when the
  // code that wrote it knows one shorter than the chain rule gives (a rotation
  // matrix's R [w]x); the equation builder then uses it for d/dt.
  std::optional<GiNaC::ex> rate = std::nullopt;
};

// A named expression; expressions that use it keep its symbol, and the
// equation builder gives it an equation of its own (so that time derivatives
// of, say, a rotation matrix entry are formed once, locally).
using Definition = Output;

// An event (docs/events.md): when the condition `when` becomes true — its
// indicator crosses zero upwards — the listed states take new values,
// computed from the values just before, and/or the run stops.
struct Event {
  std::string name;
  GiNaC::ex indicator;  // the condition holds where it is > 0 (>= 0 when !strict)
  bool strict = true;
  std::string when_text;
  struct Reset {
    std::string state;  // p_<I>, q_<C> or a displacement
    GiNaC::ex value;
    std::string text;
    SourceLocation where;
  };
  std::vector<Reset> resets;
  bool stop = false;
  SourceLocation where;
};

// A signal block as the drawings and reports see it (docs/model-format.md,
// "Signal blocks"): its inputs (the expressions that feed it) and the names of
// its outputs. Its states, outputs and resets are the model's displacements,
// definitions and events (ExpandBlocks), so nothing else treats it apart.
struct Block {
  std::string name, type;
  std::vector<GiNaC::ex> inputs;
  std::vector<std::string> outputs;
  SourceLocation where;
};

struct Parameter {
  std::string name;
  double value = 0;
  std::string text;  // as written
  SourceLocation where;
  bool overridden = false;  // the value was given on the command line (ModelSpec::parameter_overrides)
  std::string unit = "";  // its unit as written ("" = none); `value` is in SI units
  // A number as written, with or without a unit (`2`, `5 mH`), not an
  // expression of other parameters: a run may set it without a rebuild.
  bool literal = false;
};

struct Model {
  std::string name;
  std::string file;  // source file, if loaded from one
  std::vector<Parameter> parameters;
  std::vector<Element> elements;
  std::vector<Bond> bonds;
  std::vector<Displacement> displacements;
  std::vector<Output> outputs;
  std::vector<Definition> definitions;
  std::vector<Event> events;
  std::vector<StorageField> fields;
  std::vector<Block> blocks;  // signal blocks (already expanded into the parts above)
  // Generalized 1-junctions (their flows are generalized velocities) for the
  // Lagrange and Hamilton procedures, and the independent subset of them.
  // Empty = paynter proposes them.
  std::vector<int> generalized;
  std::vector<int> independent;
  // Quasi-velocity 1-junctions for BHCAP (Boltzmann-Hamel): their flows w
  // need not be rates of coordinates; the displacements' rates give q' = B(q) w.
  std::vector<int> quasi_velocities;
  std::vector<std::string> assembly_held;  // state names (see ModelSpec)
  bool assemble = false;                   // ModelSpec::assemble

  // Every symbol an expression may use, by name (see the header comment).
  std::map<std::string, GiNaC::symbol> symbols;
  GiNaC::symbol time{"t"};

  int FindElement(const std::string& name) const;  // -1 if absent
  int FindBond(const std::string& name) const;     // -1 if absent
  const GiNaC::symbol& Symbol(const std::string& name) const;  // throws if absent
  // Numeric values of all parameters, for substitution.
  GiNaC::exmap ParameterValues() const;
};

// A model as written: names and expression texts, not yet parsed. The YAML
// loader produces one; C++ users may fill one directly and call BuildModel.
//
// Expressions formed in code (the multibody library's) need not be texts: a
// `value` (or `*_value`) beside a text is the expression itself, over symbols
// named as the model's variables (see Model; `pi` is GiNaC::Pi). BuildModel
// takes it as it is, with the checks it makes on a text (every name known,
// parameters only where a constant is due), instead of parsing the text,
// which may then stay empty: ModelSpecToYaml and the reports print the value.
struct ModelSpec {
  // Each part has a constructor taking its leading members in order (the rest
  // keep their defaults), so that `{"m", "2"}` or `{"mass", "I", {{"inertance",
  // "m"}}}` builds one without warnings about missing initializers.
  struct Item {  // a named text with its location (parameter, output)
    Item() = default;
    Item(std::string name_, std::string text_, SourceLocation where_ = {}, std::optional<GiNaC::ex> value_ = std::nullopt)
        : name(std::move(name_)), text(std::move(text_)), where(std::move(where_)), value(std::move(value_)) {}
    std::string name, text;
    SourceLocation where;
    std::optional<GiNaC::ex> value = std::nullopt;  // definitions and outputs: the expression itself
    // Definitions written in code: value's time derivative in closed form
    // (Definition::rate), over the model's variables like value.
    std::optional<GiNaC::ex> rate = std::nullopt;
    // A parameter's or output's unit as written (`m: 2 kg`); `text` then holds
    // the value in SI units (SplitUnits, paynter/units.h).
    std::string unit = "";
    bool number = false;  // a parameter: `text` is a number written with `unit` (SplitUnits)
  };
  struct ElementSpec {
    ElementSpec() = default;
    ElementSpec(std::string name_, std::string kind_, std::vector<std::pair<std::string, std::string>> laws_ = {},
                std::string initial_ = "", SourceLocation where_ = {})
        : name(std::move(name_)), kind(std::move(kind_)), laws(std::move(laws_)), initial(std::move(initial_)),
          where(std::move(where_)) {}
    std::string name, kind;
    // law keys as written: inertance, capacitance, stiffness, resistance, ratio,
    // effort, flow (at most one per element)
    std::vector<std::pair<std::string, std::string>> laws;
    std::string initial;  // empty = 0
    SourceLocation where;
    std::string fixed;    // "flow-in-flow-out" | "flow-in" | "" (vector expansion sets it)
    std::string origin;   // vector element it came from
    // Se with `constraint:` only: the position-level constraint (`position:`),
    // and the joint and direction it belongs to (set by the multibody library).
    std::string position, joint, direction;
    // The stiffness and damping that replace it under the parasitic method
    // (texts; empty = the defaults).
    std::string parasitic_stiffness, parasitic_damping;
    std::string static_friction;  // an R with `coulomb:`: `static:` (empty = the sliding force)
    // The expressions themselves (see above): of laws[0] (whose key stays),
    // `initial` and `position`.
    std::optional<GiNaC::ex> law_value, initial_value, position_value;
    bool input = false;               // `input: true` (sources)
    std::vector<std::string> domain;  // `domain:` as written
  };
  struct BondSpec {
    BondSpec() = default;
    BondSpec(std::string name_, std::string from_, std::string to_, int dim_ = 1, SourceLocation where_ = {},
             std::string origin_ = "", int component_ = 0)
        : name(std::move(name_)), from(std::move(from_)), to(std::move(to_)), dim(dim_), where(std::move(where_)),
          origin(std::move(origin_)), component(component_) {}
    std::string name, from, to;
    int dim = 1;
    SourceLocation where;
    std::string origin;   // vector bond it came from
    int component = 0;
  };
  struct DisplacementSpec {
    DisplacementSpec() = default;
    DisplacementSpec(std::string name_, std::string of_, std::string rate_ = "", std::string initial_ = "",
                     SourceLocation where_ = {})
        : name(std::move(name_)), of(std::move(of_)), rate(std::move(rate_)), initial(std::move(initial_)),
          where(std::move(where_)) {}
    std::string name, of, rate, initial;  // `of` or `rate`, not both
    SourceLocation where;
    std::string position;  // multibody library only: the coordinate from the poses
    double period = 0;
    std::optional<GiNaC::ex> rate_value, initial_value, position_value;  // the expressions themselves
  };
  // The `multibody:` section as written (see docs/multibody.md): settings and
  // lists of bodies, joints and loads, each a set of fields whose values are
  // texts (a list field holds one text per entry). src/multibody/ turns it into
  // elements and bonds.
  struct Field {
    std::vector<std::string> values;
    bool is_list = false;
    SourceLocation where;
  };
  struct Entry {
    std::map<std::string, Field> fields;
    SourceLocation where;
  };
  struct MultibodySpec {
    std::map<std::string, Field> settings;
    std::vector<Entry> bodies, joints, loads;
    SourceLocation where;
    bool present = false;
  };

  // An event as written (docs/events.md): `when:` a condition, `reset:`
  // state: expression lines (Item::name the state), `stop: true`.
  struct EventSpec {
    std::string name, when;
    std::vector<Item> resets;
    bool stop = false;
    SourceLocation where;
  };
  std::string name, file;
  MultibodySpec multibody;
  std::vector<EventSpec> events;
  std::vector<Item> parameters;
  std::vector<ElementSpec> elements;
  std::vector<BondSpec> bonds;
  std::vector<DisplacementSpec> displacements;
  std::vector<Item> outputs;
  // `simulation:` — the run settings the model carries (t_end, method,
  // rtol, ...: docs/model-format.md, "Run settings"), as written; the
  // command line's and Python's options override them (ApplyModelSettings).
  std::vector<Item> simulation;
  // Named expressions of any model variable, usable in later definitions, laws
  // and outputs (substituted where used; not CSV columns).
  std::vector<Item> definitions;
  // Multiport storage fields (`kind: IF` / `kind: CF`, docs/model-format.md,
  // "Storage fields"); their ports are elements `<name>_1` ... unless `ports`
  // names them.
  struct FieldSpec {
    std::string name, kind;                          // kind "IF" or "CF"
    std::vector<std::string> ports;                  // empty = <name>_1 ... <name>_n
    std::vector<std::string> coordinates;            // one per port
    std::vector<std::vector<std::string>> inertia;   // IF: the matrix, n x n texts
    std::string energy;                              // CF: the energy function
    std::vector<std::string> initial;                // per port (momenta or displacements); empty = 0
    SourceLocation where;
    // Code-built fields: the expressions themselves (over the model's symbols).
    std::optional<std::vector<std::vector<GiNaC::ex>>> inertia_value;
    std::vector<GiNaC::ex> initial_value;
  };
  std::vector<FieldSpec> fields;
  // Elements that only compute the inertial forces of reaction outputs (the
  // multibody Hamilton form's observers of the bodies' accelerations): they
  // hold none of the model's energy, and energy accounting leaves them out.
  std::vector<std::string> observers;
  std::vector<Item> generalized;   // 1-junction names (text unused)
  std::vector<Item> independent;   // a subset of `generalized`
  std::vector<Item> quasi_velocities;  // 1-junctions whose flows are quasi-velocities (BHCAP)
  // States an assembly of the start must not move (the multibody library:
  // the bodies placed by joints with initial coordinates).
  std::vector<std::string> assembly_held;
  bool assemble = false;  // `assemble: true` under multibody: the start may be far from the joints
  // Parameter values that replace the values written (paynter simulate
  // --param), set by ApplyParameterOverrides: every parameter, initial value
  // and pose written as an expression of them follows.
  std::map<std::string, double> parameter_overrides;

  // Submodels (docs/model-format.md, "Submodels and ports"). A model file may
  // name power ports (each an element of its own that a bond from outside
  // joins), define submodels inline and instantiate submodels (defined inline,
  // in another file, or in paynter's component library). FlattenSubmodels
  // turns such a spec into a flat one, whose names are instance paths
  // (`motor.armature.L`); ReadModelSpec and ReadModelSpecFile return it flat.
  struct PortSpec {
    std::string name;
    std::string element;  // the element the outside bond joins (or `instance.port`)
    int dim = 1;          // a vector port carries a vector bond of this dimension
    bool required = true; // must be joined by exactly one bond (else at most one)
    SourceLocation where;
    // Ports of a mechanism (docs/model-format.md, "Mechanisms in submodels");
    // at most one of `element`, `body`, `joint` is set, or `frame`:
    std::string body;                // a frame of this body (of the multibody section, or `ground`) ...
    std::vector<std::string> point;  // ... at this point in its frame (three texts; empty = its centre of mass)
    bool frame = false;              // an open frame: the submodel's joints and loads name it as a body
    std::string joint;               // the rate 1-junction of this revolute or prismatic joint
  };
  struct InstanceSpec {
    std::string name;
    std::string use;           // a submodel's name, a file's path, or lib:<component>
    std::vector<Item> parameters;  // values given to its parameters (texts in the parent's names)
    bool outputs = true;       // its outputs become columns of the model
    SourceLocation where;
  };
  // Signal blocks (docs/model-format.md, "Signal blocks"), as written: each
  // key's value a text, a list of texts or a matrix (rows of texts).
  // ExpandBlocks writes each one's states as displacements, its outputs as
  // definitions and its resets as events, and fills `inputs` and `outputs`.
  struct BlockSpec {
    struct Value {
      std::vector<std::vector<std::string>> rows;  // a text: one row of one; a list: one row
      int depth = 0;                               // 0 a text, 1 a list, 2 a matrix
      SourceLocation where;
    };
    std::string name, type;
    std::map<std::string, Value> values;
    SourceLocation where;
    std::vector<std::string> inputs, outputs;  // set by ExpandBlocks: input texts, output names
    bool expanded = false;
  };
  std::vector<BlockSpec> blocks;
  std::vector<PortSpec> ports;
  std::vector<InstanceSpec> instances;
  std::vector<ModelSpec> submodels;  // definitions written in this file, each named by `name`
  // Parameters written with no value (`R: ~`): a submodel's instance must set them.
  std::vector<std::string> required_parameters;
};

// Gives parameters of `spec` new values (NAME -> value, e.g. from --param):
// records them in spec->parameter_overrides and writes each value as its
// parameter's text, so that everything derived from the parameters before the
// model is built (the multibody library's initial poses) and after it (other
// parameters, initial values, the inertias) uses it. Throws a located Error for
// a name that is not a parameter of the spec, or a value that is not finite.
void ApplyParameterOverrides(ModelSpec* spec, const std::map<std::string, double>& overrides);

// Parses the expressions of a spec, registers every symbol and validates.
Model BuildModel(const ModelSpec& spec);

// The elements (name, kind, place, law as written) and bonds of a spec only:
// no parameters, laws or outputs read, and no check of how many bonds each
// element has. For a drawing of a model still being written (paynter
// studio), which BuildModel refuses, say for an element not bonded yet.
// Throws Error for what makes even that impossible (an unknown kind, a bond
// naming no element, a name given twice).
Model BuildModelTopology(const ModelSpec& spec);

// The keys of a model's `simulation:` section, named as the command line's
// options are without their dashes (t_end for --t-end): t_end, t0, method,
// form, constraints, rtol, atol, dt_out, step, max_steps, drift_tolerance.
const std::set<std::string>& RunSettingNames();

// An expression as a model file holds it (GiNaC's printing, which
// ParseExpressionText reads back to the same expression).
std::string ExpressionText(const GiNaC::ex& e);

// Limits on what a model may contain, so that no input, however hostile, can
// exhaust the stack or flood a message: a name has at most kMaxNameLength
// characters; one expression at most kMaxExpressionLength characters and
// kMaxNesting levels of parentheses, brackets, function calls and signs (each
// sign in front of an operand counts as a level until its parenthesis closes).
inline constexpr size_t kMaxNameLength = 256;
inline constexpr size_t kMaxExpressionLength = 100000;
inline constexpr int kMaxNesting = 100;
// The largest `dim:` of a bond (each becomes that many scalar bonds).
inline constexpr int kMaxBondDimension = 64;
// A model file (or submodel file) has at most kMaxModelFileBytes bytes and is
// a regular file (not a device or a pipe); its YAML, with every alias counted
// at each use, expands to at most kMaxYamlNodes nodes (anchors and aliases
// could otherwise make a small file describe an astronomically large tree).
inline constexpr size_t kMaxModelFileBytes = 16u << 20;
inline constexpr size_t kMaxYamlNodes = 1'000'000;

// Letters, digits and underscores, not starting with a digit, and not longer
// than kMaxNameLength.
bool IsIdentifier(const std::string& name);

// Throws a located Error (naming `what`, e.g. "element name") if `name` is
// longer than kMaxNameLength.
void CheckNameLength(const std::string& name, const SourceLocation& where, const std::string& element,
                     const std::string& what);

// Throws a located Error if `text` breaks a limit above or calls a function with
// no argument (or a known function with the wrong number of arguments). Called
// on every expression before it is parsed.
void CheckExpressionText(const std::string& text, const SourceLocation& where, const std::string& element,
                         const std::string& what);

// The value of a name in an expression; throws (any std::exception) for a name
// it does not know.
using ExpressionNames = std::function<GiNaC::ex(const std::string&)>;

// Reads an expression text (checked by CheckExpressionText first) with the
// precedence of mathematics: ^ before signs before * and / before + and -;
// a sign applies to the power that follows it (-2^2 = -4, 2^-1 = 1/2,
// a*-b^2 = -(a*b^2)); powers group from the right (2^3^2 = 2^9); * / + -
// from the left. Numbers are exact unless written with a point or an exponent
// (1e-3, 2.5E+2); names are looked up through `names`; the functions are those
// of docs/model-format.md. A syntax error throws std::invalid_argument with a
// printable reason that gives the character; a text that reads but has no
// value (a division by zero, zero to a negative power, a power of numbers
// beyond 1e308, YAML's .nan and .inf) throws std::domain_error alike. A
// number with an exponent beyond 1024 (1e5000) is read in double precision:
// beyond 1e308 in magnitude it has no value (std::domain_error), and it reads
// as 0 below the smallest double. A power
// of numbers with more than 4096 bits is taken in double precision, and an
// integer exponent beyond 1024 of anything else is a floating-point number, so
// that no text makes exact arithmetic grow without bound.
//
// A number followed by a unit in brackets (`9.81 [m/s^2]`, `(1/3) [mm]`) reads
// as the number times names("[m/s^2]"): the caller decides what a unit is
// (BuildModel: a symbol that the unit check knows, replaced by its SI scale).
// The signal functions step_at, ramp, pulse, square and table
// (docs/model-format.md, "Signals") read as if()s of names("t"); their
// arguments other than table's input must be constants: `constant` gives an
// argument's value (nullopt: not a constant, an error), and without it only
// arguments that are numbers are checked. A bad argument (a period that is
// not positive, table times out of order, lists of unequal lengths) throws
// ArgumentError.
using ConstantValue = std::function<std::optional<double>(const GiNaC::ex&)>;
struct ArgumentError : std::invalid_argument {
  ArgumentError(const std::string& message, std::string expected_, std::string got_, std::string hint_)
      : std::invalid_argument(message), expected(std::move(expected_)), got(std::move(got_)), hint(std::move(hint_)) {}
  std::string expected, got, hint;
};
GiNaC::ex ParseExpressionText(const std::string& text, const ExpressionNames& names,
                              const ConstantValue* constant = nullptr);
// Reads a condition `a < b` (or > <= >=) as ParseExpressionText reads an
// expression; returns its indicator (b - a for `a < b`: positive where the
// condition holds) and sets *strict (false for <= and >=).
GiNaC::ex ParseConditionText(const std::string& text, const ExpressionNames& names, bool* strict,
                             const ConstantValue* constant = nullptr);
// A plain number (no names, trailing blanks allowed): a parameter written so
// is not derived from others.
bool IsNumberText(const std::string& text);

// Reads a YAML model file into a ModelSpec (no expressions parsed yet); a
// model with submodels comes back flat (FlattenSubmodels).
ModelSpec ReadModelSpec(const std::string& yaml_text, const std::string& file_label);
ModelSpec ReadModelSpecFile(const std::string& path);

// The YAML text or file as written: instances of submodels not yet flattened
// (the front end's `read` pass, paynter/pipeline.h; FlattenSubmodels is the next).
ModelSpec ReadHierarchicalModelSpec(const std::string& yaml_text, const std::string& file_label);
ModelSpec ReadHierarchicalModelSpecFile(const std::string& path);

// Replaces the instances of `spec` by their elements, bonds, parameters,
// displacements, definitions and outputs, named by instance path (src/model/
// submodels.cc). Submodels are looked up among the definitions of the file,
// as files relative to the importing file, or as lib:<component> in the
// component library (LibraryDirectory()). Throws Error (file, line, instance
// path, hint) for an unknown submodel or port, a port joined twice or not at
// all, an undeclared parameter, an import cycle or a missing file.
void FlattenSubmodels(ModelSpec* spec);

// Writes the signal blocks of `spec` (not yet expanded) as its parts: each
// block's states as displacements with a `rate:`, its outputs as definitions
// `<block>.<output>`, its resets as events (src/model/blocks.cc). The YAML
// reader calls it on every model and submodel it reads, before flattening.
// Throws a located Error for an unknown type or key, a missing input, a
// matrix of the wrong shape, or a name `<block>.<x>` that is no output.
void ExpandBlocks(ModelSpec* spec);

// The names of the block types ExpandBlocks knows.
std::vector<std::string> BlockTypeNames();

// The signals of a spec's blocks: their outputs, and the definitions that use
// them. A source's law may use them (as it may use time): `paynter expand`
// writes such a source as a modulated one (MSe, MSf), since the file it
// writes has no blocks left.
std::set<std::string> BlockSignals(const ModelSpec& spec);
// Whether `text` names one of `names` (not as a function).
bool UsesAny(const std::string& text, const std::set<std::string>& names);

// The directory of paynter's component library: $PAYNTER_LIBRARY when set,
// else an installed paynter's <prefix>/share/paynter/library, else the
// library/ directory of paynter's sources (fixed at build time).
std::string LibraryDirectory();

// The files a model file's submodels are read from (resolved paths, each once,
// without the file itself); empty for a model without instances. Throws Error
// as ReadModelSpecFile does.
std::vector<std::string> ModelFileImports(const std::string& path);

// LoadModel (a file to a Model, every pass of the front end) is declared in
// paynter/pipeline.h.

// Structural checks (bond counts per kind, dangling elements, names, dims).
// Called by LoadModel; call it after building a Model in code.
void ValidateModel(const Model& model);

// Throws a located Error when an inertance or a capacitance (a mass, an inertia,
// a compliance) that depends on parameters only is zero, negative or not
// finite: at the parameter when the law is that parameter, else at the
// element. `overrides` replaces parameter values (paynter simulate --param);
// an error that comes from one names it. BuildModel calls it without.
void CheckPhysicalParameters(const Model& model, const std::map<std::string, double>& overrides = {});

// One-paragraph summary: counts of elements by kind, bonds, states.
std::string DescribeModel(const Model& model);

}  // namespace paynter
