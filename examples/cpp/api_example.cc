// The C++ API end to end: build a model in code, look at its causality and
// equations, simulate it, read the results. Build: part of the CMake project
// (target paynter_api_example). Run: ./build/examples/cpp/paynter_api_example
#include <cmath>
#include <iostream>

#include "paynter/paynter.h"

int main() {
  using namespace paynter;
  try {
    // A mass-spring-damper, built without a file: Se (force) -> 1 <- I, C, R.
    ModelSpec spec;
    spec.name = "msd_from_code";
    spec.parameters = {{"m", "2"}, {"k", "50"}, {"c", "4"}, {"F", "10"}};
    spec.elements = {{"force", "Se", {{"effort", "F"}}},
                     {"v", "1", {}},
                     {"mass", "I", {{"inertance", "m"}}},
                     {"spring", "C", {{"stiffness", "k"}}},
                     {"damper", "R", {{"resistance", "c"}}}};
    spec.bonds = {{"", "force", "v"}, {"", "v", "mass"}, {"", "v", "spring"}, {"", "v", "damper"}};
    spec.outputs = {{"x", "q_spring"}, {"velocity", "f_v"}};
    Model model = BuildModel(spec);

    CausalGraph graph = AssignCausality(model);
    EquationSystem eqs = BuildEquations(model, graph);
    std::cout << CausalityReport(model, graph, &eqs) << "\n" << eqs.ToText(model) << "\n";

    CompiledModel compiled(eqs);
    SolverOptions options;
    options.t_end = 5;
    options.rtol = 1e-8;
    options.atol = 1e-10;
    Solution sol = Simulate(compiled, options);

    // The static deflection F/k is where the motion settles.
    const double x_end = sol.Column("x").back();
    std::cout << "x(5) = " << x_end << " (static deflection F/k = " << 10.0 / 50.0 << ")\n";
    std::cout << sol.stats.steps << " steps, backend " << sol.backend << "\n";
    return std::abs(x_end - 0.2) < 1e-2 ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
