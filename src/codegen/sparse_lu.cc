// codegen/sparse_lu.cc — SparseLU on KLU (see sparse_lu.h).
#include "sparse_lu.h"

#include <klu.h>

#include <cmath>

#include "paynter/error.h"

namespace paynter::codegen {

struct SparseLU::Klu {
  klu_common common;
  klu_symbolic* symbolic = nullptr;
  klu_numeric* numeric = nullptr;
};

namespace {
// A refactorization (old pivots) whose smallest pivot falls below this fraction
// of the largest is redone with new pivots; a fresh factorization below
// kSingular is singular.
constexpr double kRefactorLimit = 1e-10;
constexpr double kSingular = 1e-14;
constexpr int kScale = 2;  // KLU's default: rows scaled by their largest entry
}  // namespace

SparseLU::SparseLU(int n, std::vector<int> ap, std::vector<int> ai)
    : n_(n), ap_(std::move(ap)), ai_(std::move(ai)), klu_(new Klu) {
  klu_defaults(&klu_->common);
  klu_->common.scale = kScale;
  klu_->common.halt_if_singular = 0;  // report through the pivots instead
  klu_->symbolic = klu_analyze(n_, ap_.data(), ai_.data(), &klu_->common);
  if (!klu_->symbolic) {
    const int status = klu_->common.status;
    delete klu_;
    ThrowAt({}, "", "the sparse solver could not analyse the pattern of an implicit block", "",
            "KLU status " + std::to_string(status));
  }
}

SparseLU::~SparseLU() {
  if (klu_->numeric) klu_free_numeric(&klu_->numeric, &klu_->common);
  if (klu_->symbolic) klu_free_symbolic(&klu_->symbolic, &klu_->common);
  delete klu_;
}

bool SparseLU::Factor(const double* ax) {
  for (int k = 0; k < nnz(); ++k)
    if (!std::isfinite(ax[k])) return false;
  double* values = const_cast<double*>(ax);  // KLU does not write them
  klu_common* c = &klu_->common;
  if (klu_->numeric) {
    ++refactorizations_;
    // With the pivot order fixed, row scaling changes only the rounding: the
    // refactorization goes without it (and without KLU's checks of the pattern,
    // which is the one analysed); a fresh factorization (below) chooses its
    // pivots on scaled rows.
    c->scale = -1;
    const bool refactored = klu_refactor(ap_.data(), ai_.data(), values, klu_->symbolic, klu_->numeric, c);
    c->scale = kScale;
    if (refactored && klu_rcond(klu_->symbolic, klu_->numeric, c) && c->status == KLU_OK &&
        c->rcond > kRefactorLimit) {
      rcond_ = c->rcond;
      return true;
    }
    klu_free_numeric(&klu_->numeric, c);
  }
  ++factorizations_;
  klu_->numeric = klu_factor(ap_.data(), ai_.data(), values, klu_->symbolic, c);
  if (!klu_->numeric) return false;
  if (!klu_rcond(klu_->symbolic, klu_->numeric, c) || c->status != KLU_OK || !(c->rcond > kSingular)) {
    klu_free_numeric(&klu_->numeric, c);
    return false;
  }
  rcond_ = c->rcond;
  return true;
}

void SparseLU::Forget() {
  if (klu_->numeric) klu_free_numeric(&klu_->numeric, &klu_->common);
}

void SparseLU::Solve(double* b) { klu_solve(klu_->symbolic, klu_->numeric, n_, 1, b, &klu_->common); }

void SparseLU::Multiply(const double* ax, const double* x, double* y) const {
  for (int i = 0; i < n_; ++i) y[i] = 0;
  for (int j = 0; j < n_; ++j) {
    const double xj = x[j];
    if (xj == 0) continue;
    for (int k = ap_[j]; k < ap_[j + 1]; ++k) y[ai_[k]] += ax[k] * xj;
  }
}

}  // namespace paynter::codegen
