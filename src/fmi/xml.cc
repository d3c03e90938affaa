// fmi/xml.cc — modelDescription.xml (FMI 2.0, section 2.2): the model's
// variables, their value references, causality, variability and initial
// attributes, and the ModelStructure. Every text from the model is escaped.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fmu.h"

namespace paynter::fmi {
namespace {

// Text for an attribute value: markup characters as entities, control
// characters (which XML 1.0 cannot hold) as '?'.
std::string Escape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (c < 0x20) ? '?' : static_cast<char>(c);
    }
  }
  return out;
}

// The shortest text that reads back as the same double.
std::string Real(double v) { return fmt::format("{}", v); }

}  // namespace

std::string ModelDescription(const FmuModel& m) {
  const FmuOptions& o = m.options;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format(
      "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"{}\" guid=\"{}\" description=\"{}\" "
      "generationTool=\"paynter\" variableNamingConvention=\"flat\" numberOfEventIndicators=\"{}\">\n",
      Escape(m.name), m.guid, Escape(m.description), m.time_slope.size());
  const std::string common = fmt::format(
      "modelIdentifier=\"{}\" needsExecutionTool=\"false\" canBeInstantiatedOnlyOncePerProcess=\"false\" "
      "canNotUseMemoryManagementFunctions=\"true\" canGetAndSetFMUstate=\"false\" canSerializeFMUstate=\"false\" "
      "providesDirectionalDerivative=\"false\"",
      m.identifier);
  std::string files = "    <SourceFiles>\n";
  for (const std::string& f : CFileNames()) files += fmt::format("      <File name=\"{}\"/>\n", f);
  files += "    </SourceFiles>\n";
  if (o.model_exchange)
    x += fmt::format("  <ModelExchange {} completedIntegratorStepNotNeeded=\"true\">\n", common) + files +
         "  </ModelExchange>\n";
  if (o.co_simulation)
    x += fmt::format("  <CoSimulation {} canHandleVariableCommunicationStepSize=\"true\" canInterpolateInputs=\"false\" "
                     "maxOutputDerivativeOrder=\"0\" canRunAsynchronuously=\"false\">\n",
                     common) +
         files + "  </CoSimulation>\n";
  x += "  <UnitDefinitions>\n";
  for (const UnitDefinition& u : m.units) {
    static const char* base[] = {"kg", "m", "s", "A", "K", "mol", "cd"};
    std::string exponents;
    for (int i = 0; i < 7; ++i)
      if (u.exponents[i]) exponents += fmt::format(" {}=\"{}\"", base[i], u.exponents[i]);
    x += fmt::format("    <Unit name=\"{}\">\n      <BaseUnit{}/>\n", Escape(u.name), exponents);
    for (const auto& d : u.display)
      x += fmt::format("      <DisplayUnit name=\"{}\" factor=\"{}\"/>\n", Escape(d.name), Real(d.factor));
    x += "    </Unit>\n";
  }
  x += "  </UnitDefinitions>\n";
  x += "  <LogCategories>\n"
       "    <Category name=\"logStatusError\" description=\"errors: a bad call, a failed evaluation\"/>\n"
       "    <Category name=\"logAll\" description=\"every message\"/>\n  </LogCategories>\n";
  x += fmt::format("  <DefaultExperiment startTime=\"0\" tolerance=\"{}\"/>\n", Real(o.rtol));
  x += "  <ModelVariables>\n";
  for (size_t i = 0; i < m.variables.size(); ++i) {
    const Variable& v = m.variables[i];
    x += fmt::format("    <!-- index {} -->\n", i + 1);
    x += fmt::format("    <ScalarVariable name=\"{}\" valueReference=\"{}\" description=\"{}\" causality=\"{}\" "
                     "variability=\"{}\"{}>\n",
                     Escape(v.name), v.value_reference, Escape(v.description), v.causality, v.variability,
                     v.initial.empty() ? "" : fmt::format(" initial=\"{}\"", v.initial));
    std::string real = "      <Real";
    if (!v.unit.empty()) real += fmt::format(" unit=\"{}\"", Escape(v.unit));
    if (!v.display_unit.empty()) real += fmt::format(" displayUnit=\"{}\"", Escape(v.display_unit));
    if (v.derivative_of > 0) real += fmt::format(" derivative=\"{}\"", v.derivative_of);
    if (v.start) real += fmt::format(" start=\"{}\"", Real(*v.start));
    x += real + "/>\n    </ScalarVariable>\n";
  }
  x += "  </ModelVariables>\n  <ModelStructure>\n";
  std::vector<int> outputs, derivatives, initial;
  for (size_t i = 0; i < m.variables.size(); ++i) {
    const Variable& v = m.variables[i];
    const int index = static_cast<int>(i) + 1;
    if (v.causality == "output") outputs.push_back(index);
    if (v.derivative_of > 0) derivatives.push_back(index);
    if (((v.causality == "output" || v.derivative_of > 0) && (v.initial == "approx" || v.initial == "calculated")) ||
        v.causality == "calculatedParameter")
      initial.push_back(index);
  }
  auto list = [&](const char* tag, const std::vector<int>& idx) {
    if (idx.empty()) return;
    x += fmt::format("    <{}>\n", tag);
    for (int i : idx) x += fmt::format("      <Unknown index=\"{}\"/>\n", i);
    x += fmt::format("    </{}>\n", tag);
  };
  list("Outputs", outputs);
  list("Derivatives", derivatives);
  list("InitialUnknowns", initial);
  x += "  </ModelStructure>\n</fmiModelDescription>\n";
  return x;
}

}  // namespace paynter::fmi
