// libFuzzer target: a model file through the loader and the pipeline up to
// code generation (tape backend: no compiler is run) and one evaluation of the
// right-hand side at the start. Bad input must end in paynter::Error; any
// other exception, an internal error's message, a crash, a sanitizer report, a
// leak or a hang is a finding.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "paynter/causality.h"
#include "paynter/codegen.h"
#include "paynter/equations.h"
#include "fuzz_common.h"
#include "paynter/error.h"
#include "paynter/model.h"
#include "paynter/multibody.h"
#include "paynter/pipeline.h"
#include "paynter/simulation.h"

namespace {

void Pipeline(const std::string& text) {
  paynter::Model model = paynter::LoadModelFromString(text, "fuzz.yaml");
  paynter::CausalGraph graph = paynter::AssignCausality(model);
  if (!graph.conflicts.empty()) return;  // reported to the user, no equations to form
  paynter::EquationSystem eqs = paynter::BuildEquations(model, graph);
  paynter::CodegenOptions cg;
  cg.backend = paynter::Backend::kTape;
  const paynter::CompiledModel cm(eqs, cg);
  paynter::ModelWorkspace ws(cm);
  std::vector<double> dx(cm.num_states());
  ws.CalcDerivatives(0, cm.initial_state().data(), dx.data());
  std::vector<double> out(cm.num_outputs());
  ws.CalcOutputs(0, cm.initial_state().data(), out.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    Pipeline(text);
  } catch (const paynter::Error& e) {
    // The expected end of bad input: a located message, unless it is an
    // internal error's.
    if (paynter_fuzz::IsInternal(e.diagnostic().message))
      paynter_fuzz::Finding("fuzz_model", "an internal error", e.what());
  } catch (const std::exception& e) {
    // The program would say "internal error" (exit 2): a finding.
    std::fprintf(stderr, "fuzz_model: not a paynter::Error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
