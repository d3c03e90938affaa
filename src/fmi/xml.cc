// fmi/xml.cc — modelDescription.xml (FMI 2.0, section 2.2; FMI 3.0, section
// 2.4): the model's variables, their value references, causality, variability
// and initial attributes, and the ModelStructure; FMI 3.0's
// buildDescription.xml. Every text from the model is escaped.
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

// The <UnitDefinitions> of both versions (FMI 3.0 adds a base unit `rad`,
// which paynter's units do not use).
std::string UnitDefinitions(const FmuModel& m) {
  std::string x = "  <UnitDefinitions>\n";
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
  return x + "  </UnitDefinitions>\n";
}

std::string ModelDescription3(const FmuModel& m);

}  // namespace

std::string ModelDescription(const FmuModel& m) {
  if (m.options.fmi_version == 3) return ModelDescription3(m);
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
  for (const std::string& f : CFileNames(2)) files += fmt::format("      <File name=\"{}\"/>\n", f);
  files += "    </SourceFiles>\n";
  if (o.model_exchange)
    x += fmt::format("  <ModelExchange {} completedIntegratorStepNotNeeded=\"true\">\n", common) + files +
         "  </ModelExchange>\n";
  if (o.co_simulation)
    x += fmt::format("  <CoSimulation {} canHandleVariableCommunicationStepSize=\"true\" canInterpolateInputs=\"false\" "
                     "maxOutputDerivativeOrder=\"0\" canRunAsynchronuously=\"false\">\n",
                     common) +
         files + "  </CoSimulation>\n";
  x += UnitDefinitions(m);
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

namespace {

// FMI 3.0 (sections 2.4, 3.4, 4.4): the same variables as FMI 2.0's, as
// <Float64> elements, with the event indicators as variables; the model
// structure by value references.
std::string ModelDescription3(const FmuModel& m) {
  const FmuOptions& o = m.options;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format(
      "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"{}\" instantiationToken=\"{}\" description=\"{}\" "
      "generationTool=\"paynter\" variableNamingConvention=\"flat\">\n",
      Escape(m.name), m.guid, Escape(m.description));
  const std::string common = fmt::format(
      "modelIdentifier=\"{}\" needsExecutionTool=\"false\" canBeInstantiatedOnlyOncePerProcess=\"false\" "
      "canGetAndSetFMUState=\"false\" canSerializeFMUState=\"false\" providesDirectionalDerivatives=\"false\" "
      "providesAdjointDerivatives=\"false\" providesPerElementDependencies=\"false\" "
      "providesEvaluateDiscreteStates=\"false\"",
      m.identifier);
  bool stops = false;  // an event with `stop: true` ends a step early
  for (const EventRow& r : m.lowered.event_rows) stops = stops || r.stop;
  if (o.model_exchange) x += fmt::format("  <ModelExchange {} needsCompletedIntegratorStep=\"false\"/>\n", common);
  if (o.co_simulation)
    x += fmt::format("  <CoSimulation {} canHandleVariableCommunicationStepSize=\"true\" maxOutputDerivativeOrder=\"0\" "
                     "providesIntermediateUpdate=\"false\" mightReturnEarlyFromDoStep=\"{}\" "
                     "canReturnEarlyAfterIntermediateUpdate=\"false\" hasEventMode=\"false\"/>\n",
                     common, stops ? "true" : "false");
  x += UnitDefinitions(m);
  x += "  <LogCategories>\n"
       "    <Category name=\"logStatusError\" description=\"errors: a bad call, a failed evaluation\"/>\n"
       "    <Category name=\"logEvents\" description=\"events that end the run\"/>\n  </LogCategories>\n";
  x += fmt::format("  <DefaultExperiment startTime=\"0\" tolerance=\"{}\"/>\n", Real(o.rtol));
  x += "  <ModelVariables>\n";
  for (const Variable& v : m.variables) {
    if (v.array_component) continue;
    x += fmt::format("    <Float64 name=\"{}\" valueReference=\"{}\" description=\"{}\" causality=\"{}\" "
                     "variability=\"{}\"",
                     Escape(v.name), v.value_reference, Escape(v.description), v.causality, v.variability);
    // An input's initial is exact, the only value allowed (the attribute may be left out).
    if (!v.initial.empty()) x += fmt::format(" initial=\"{}\"", v.initial);
    if (!v.unit.empty()) x += fmt::format(" unit=\"{}\"", Escape(v.unit));
    if (!v.display_unit.empty()) x += fmt::format(" displayUnit=\"{}\"", Escape(v.display_unit));
    if (v.start) x += fmt::format(" start=\"{}\"", Real(*v.start));
    if (v.derivative_of > 0) x += fmt::format(" derivative=\"{}\"", m.variables[v.derivative_of - 1].value_reference);
    if (v.reinit) x += " reinit=\"true\"";
    x += v.dimension > 0 ? fmt::format(">\n      <Dimension start=\"{}\"/>\n    </Float64>\n", v.dimension) : "/>\n";
  }
  x += "  </ModelVariables>\n  <ModelStructure>\n";
  auto unknowns = [&](const char* tag, auto wanted) {
    for (const Variable& v : m.variables)
      if (!v.array_component && wanted(v)) x += fmt::format("    <{} valueReference=\"{}\"/>\n", tag, v.value_reference);
  };
  unknowns("Output", [](const Variable& v) { return v.causality == "output"; });
  unknowns("ContinuousStateDerivative", [](const Variable& v) { return v.derivative_of > 0; });
  unknowns("InitialUnknown", [](const Variable& v) {
    return ((v.causality == "output" || v.derivative_of > 0) && (v.initial == "approx" || v.initial == "calculated")) ||
           v.causality == "calculatedParameter";
  });
  unknowns("EventIndicator", [](const Variable& v) { return v.event_indicator; });
  x += "  </ModelStructure>\n</fmiModelDescription>\n";
  return x;
}

}  // namespace

std::string BuildDescription(const FmuModel& m) {
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiBuildDescription fmiVersion=\"3.0\">\n";
  x += fmt::format("  <BuildConfiguration modelIdentifier=\"{}\">\n", m.identifier);
  x += "    <SourceFileSet language=\"C99\">\n";
  for (const std::string& f : CFileNames(3)) x += fmt::format("      <SourceFile name=\"{}\"/>\n", f);
  x += "    </SourceFileSet>\n";
  x += "    <Library name=\"m\" external=\"true\" description=\"the C library's mathematical functions (-lm)\"/>\n";
  x += "  </BuildConfiguration>\n</fmiBuildDescription>\n";
  return x;
}

std::string BinaryDirectory(int version) {
  if (version != 3) return "binaries/linux64";
  // FMI 3.0's platform tuple: the architecture and the system of the machine that compiled the shared object.
#if defined(__x86_64__)
  const char* arch = "x86_64";
#elif defined(__aarch64__)
  const char* arch = "aarch64";
#elif defined(__i386__)
  const char* arch = "x86";
#elif defined(__arm__)
  const char* arch = "aarch32";
#elif defined(__riscv) && __riscv_xlen == 64
  const char* arch = "riscv64";
#else
  const char* arch = "unknown";
#endif
#if defined(__APPLE__)
  return fmt::format("binaries/{}-darwin", arch);
#else
  return fmt::format("binaries/{}-linux", arch);
#endif
}

}  // namespace paynter::fmi
