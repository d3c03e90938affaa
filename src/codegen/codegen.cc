// codegen/codegen.cc — Compile(): lowering, then the requested backend.
#include "paynter/codegen.h"

#include "native.h"
#include "paynter/error.h"
#include "plan_io.h"
#include "tape.h"

namespace paynter {

std::recursive_mutex& SymbolicMutex() {
  static std::recursive_mutex m;
  return m;
}

std::unique_ptr<CompiledProgram> Compile(const Program& program, const CodegenOptions& options) {
  // Lowering errors (unsupported function, malformed block) are the user's and
  // propagate whatever the backend; only failing to build native code falls back.
  return codegen::CompilePlan(codegen::Lower(program), options);
}

std::unique_ptr<CompiledProgram> codegen::CompilePlan(Plan plan, const CodegenOptions& options) {
  switch (options.backend) {
    case Backend::kTape:
      return std::make_unique<codegen::TapeProgram>(std::move(plan), options);
    case Backend::kNative:
      return codegen::NativeProgram::Create(plan, options);
    case Backend::kTiered: {
      std::vector<codegen::Plan> plans;
      plans.push_back(std::move(plan));
      return std::move(codegen::CompilePlans(std::move(plans), options)[0]);
    }
    case Backend::kAuto:
      break;
  }
  std::string reason;
  try {
    return codegen::NativeProgram::Create(plan, options);  // leaves `plan` intact on failure
  } catch (const Error& e) {
    reason = e.diagnostic().message;
  }
  return std::make_unique<codegen::TapeProgram>(std::move(plan), options,
                                                "native code unavailable, using the tape: " + reason);
}

}  // namespace paynter
