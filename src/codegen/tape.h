// codegen/tape.h — the tape backend: a threaded register-machine interpreter of
// the lowered plan (plan.h), needing no compiler. Its registers are
// [slots | constants | temporaries]; the native backend (native.h) computes the
// same bits from the same plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "paynter/codegen.h"
#include "plan.h"

namespace paynter::codegen {

class NewtonSolver;
class RuntimeChecks;

// Interprets the plan on a register file [slots | constants | temporaries],
// which is the workspace's (TapeWorkspace) with the blocks' Newton solvers.
// Run copies the slots in and out; it allocates nothing.
class TapeProgram final : public CompiledProgram {
 public:
  TapeProgram(Plan plan, const CodegenOptions& options, std::string fallback_reason = {});
  ~TapeProgram() override;

  std::unique_ptr<ProgramWorkspace> NewWorkspace() const override;
  void Run(double* slots, ProgramWorkspace& ws) const override;
  int num_slots() const override { return num_slots_; }
  std::string backend_name() const override { return "tape"; }
  std::string fallback_reason() const override { return fallback_reason_; }

  int num_instructions() const { return static_cast<int>(code_.size()); }
  int num_registers() const { return static_cast<int>(num_registers_); }

  struct Span {
    uint32_t begin = 0, end = 0;
  };
  // Executes instructions [begin, end) on the register file R (used by the block callbacks).
  void Exec(double* R, uint32_t begin, uint32_t end) const;
  // A block's code: its residual and Jacobian, and the registers of their values.
  struct TapeBlock {
    Span res, jac;
    std::vector<uint32_t> res_reg, jac_reg;
  };

 private:
  struct TInstr {
    Op op;
    uint32_t out, a, b;
  };
  uint32_t Reg(const Ref& r) const;
  Span Emit(const Section& s);

  Plan plan_;
  int num_slots_ = 0;
  size_t num_registers_ = 0;
  CodegenOptions options_;  // the blocks' Newton settings
  std::string fallback_reason_;
  std::vector<TInstr> code_;
  std::vector<Span> straight_;  // per group
  std::vector<TapeBlock> tblocks_;
  std::unique_ptr<RuntimeChecks> checks_;
};

// A tape program's workspace: its register file (constants in place) and its
// blocks' Newton solvers.
class TapeWorkspace final : public ProgramWorkspace {
 public:
  TapeWorkspace(const TapeProgram& program, const Plan& plan, const std::vector<double>& registers,
                const std::vector<TapeProgram::TapeBlock>& blocks, const CodegenOptions& options,
                const RuntimeChecks* checks);
  ~TapeWorkspace() override;
  NewtonSolver& solver(int b);  // block b's (its state carries over from run to run)
  double* registers() { return regs_.data(); }

 private:
  friend class TapeProgram;
  struct Block;
  std::vector<double> regs_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace paynter::codegen
