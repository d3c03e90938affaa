// codegen/sparse_lu.h — a sparse LU factorization (KLU of SuiteSparse) for the
// Newton block solver: the pattern is analysed once, the values refactored at
// every call with the pivot order found before, and factored afresh (new
// pivots) only when a refactorization's pivots have degraded.
#pragma once

#include <vector>

namespace paynter::codegen {

class SparseLU {
 public:
  // The n×n pattern in compressed columns: rows ai[ap[j] .. ap[j+1]) of column j,
  // increasing. The pattern is fixed for the object's life.
  SparseLU(int n, std::vector<int> ap, std::vector<int> ai);
  ~SparseLU();
  SparseLU(const SparseLU&) = delete;
  SparseLU& operator=(const SparseLU&) = delete;

  // Factors the matrix with values ax (one per pattern entry). False when it is
  // singular to working precision: a pivot below 1e-14 of the largest (after
  // choosing new pivots), or not finite.
  bool Factor(const double* ax);
  // The reciprocal pivot growth of the last successful factorization (smallest
  // over largest pivot magnitude).
  double rcond() const { return rcond_; }
  // Drops the factors, so that the next Factor chooses its pivots afresh.
  void Forget();
  // b := A^-1 b with the last successful factorization.
  void Solve(double* b);
  // y = A x with the values of the last Factor call, or given values.
  void Multiply(const double* ax, const double* x, double* y) const;

  int n() const { return n_; }
  int nnz() const { return static_cast<int>(ai_.size()); }
  const std::vector<int>& ap() const { return ap_; }
  const std::vector<int>& ai() const { return ai_; }
  long factorizations() const { return factorizations_; }  // with new pivots
  long refactorizations() const { return refactorizations_; }

 private:
  struct Klu;
  int n_;
  std::vector<int> ap_, ai_;
  Klu* klu_;
  long factorizations_ = 0, refactorizations_ = 0;
  double rcond_ = 0;
};

}  // namespace paynter::codegen
