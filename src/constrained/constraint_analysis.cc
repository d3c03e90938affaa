// AnalyzeConstraints: counts, rank, mobility and the redundant joint
// directions of a constrained mechanism (see paynter/constrained.h), as the
// tables of a structural analysis: coordinates, constraint equations, their
// rank at this configuration, mobility by count and by rank.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <Eigen/SparseQR>
#include <algorithm>
#include <cmath>
#include <map>

#include "paynter/constrained.h"

namespace paynter {
namespace {
// Above this many multiply-adds (rows x columns x the smaller of the two)
// the condition number is not computed.
constexpr double kDenseConditionWork = 2e7;
}  // namespace

ConstraintAnalysis AnalyzeConstraints(ModelWorkspace& workspace, double t, const std::vector<double>& x0) {
  const CompiledModel& model = workspace.model();
  ConstraintAnalysis a;
  const int nc = model.num_constraints();
  std::vector<int> mom;
  for (int i = 0; i < model.num_states(); ++i)
    if (model.state_inertia()[i] > 0) mom.push_back(i);
  const int nm = static_cast<int>(mom.size());
  a.coordinates = nm;
  a.constraints = nc;
  a.grubler = nm - nc;
  if (nc == 0) {
    a.mobility = nm;
    return a;
  }
  std::vector<double> x(x0);
  std::vector<double> c0(nc), g0(nc), c1(nc);
  workspace.CalcConstraints(t, x.data(), nullptr, c0.data(), g0.data());
  // The velocity Jacobian in velocities (not momenta): G = dc/dp * diag(I),
  // by unit steps (c is linear in the momenta), kept sparse and transposed:
  // column r of Gt is row r of G.
  std::vector<Eigen::Triplet<double>> entries;
  for (int j = 0; j < nm; ++j) {
    const double save = x[mom[j]];
    x[mom[j]] = save + 1;
    workspace.CalcConstraints(t, x.data(), nullptr, c1.data(), nullptr);
    x[mom[j]] = save;
    for (int r = 0; r < nc; ++r) {
      const double v = (c1[r] - c0[r]) * model.state_inertia()[mom[j]];
      if (v != 0) entries.emplace_back(j, r, v);
    }
  }
  Eigen::SparseMatrix<double> Gt(nm, nc);
  Gt.setFromTriplets(entries.begin(), entries.end());
  // Redundant rows, in model order: a row in the span of the rows before it
  // (its part outside that span below 1e-8 of its norm). A sparse QR of the
  // rows scaled to unit norm, in model order (no reordering of the rows), whose
  // Householder step sets aside a row whose remaining norm is below the
  // threshold: the rows it keeps are a basis, the others redundant, and the
  // rank is the number kept. Cost grows with the fill of R, which for a tree
  // of joints listed along the tree stays near linear in the joints.
  std::vector<bool> redundant(nc, false);
  for (int r = 0; r < nc; ++r) {
    const double norm = Gt.col(r).norm();
    if (norm == 0) redundant[r] = true;
    else Gt.col(r) /= norm;
  }
  Gt.makeCompressed();
  Eigen::SparseQR<Eigen::SparseMatrix<double>, Eigen::NaturalOrdering<int>> qr;
  qr.setPivotThreshold(1e-8);
  qr.compute(Gt);
  a.rank = static_cast<int>(qr.rank());
  const auto& order = qr.colsPermutation().indices();
  for (int k = a.rank; k < nc; ++k) redundant[order[k]] = true;
  a.mobility = nm - a.rank;
  // The condition (largest / smallest nonzero singular value, the rank's
  // threshold 1e-9 of the largest) by a dense SVD, only while that is cheap;
  // 0 (not computed) above.
  if (static_cast<double>(nc) * nm * std::min(nc, nm) <= kDenseConditionWork) {
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(nc, nm);
    for (const auto& e : entries) G(e.col(), e.row()) = e.value();
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(G);
    const auto& sv = svd.singularValues();
    const double smax = sv.size() ? sv[0] : 0;
    double smin = 0;
    for (int k = 0; k < sv.size(); ++k)
      if (sv[k] > 1e-9 * smax) smin = sv[k];
    a.condition = smin > 0 ? smax / smin : 0;
  }
  // The rows, in model order.
  for (int r = 0; r < nc; ++r) {
    const ConstraintRow& cr = model.constraint_rows()[r];
    ConstraintAnalysis::Row row;
    row.source = cr.source;
    row.joint = cr.joint;
    row.direction = cr.direction;
    row.has_position = cr.position_slot >= 0;
    row.position_error = std::fabs(g0[r]);
    row.velocity_error = std::fabs(c0[r]);
    a.max_position_error = std::max(a.max_position_error, row.position_error);
    a.max_velocity_error = std::max(a.max_velocity_error, row.velocity_error);
    row.redundant = redundant[r];
    a.rows.push_back(row);
  }
  return a;
}

std::string ConstraintAnalysis::ToText() const {
  std::string out;
  out += fmt::format("mechanism: {} coordinates (velocities of the bodies), {} constraint equations, rank {}\n",
                     coordinates, constraints, rank);
  out += fmt::format("mobility: {} (count: {} - {} = {}){}\n", mobility, coordinates, constraints, grubler,
                     rank < constraints ? fmt::format("; {} constraint(s) redundant (hyperstatic)", constraints - rank)
                                        : constraints ? "; no redundant constraint (isostatic)" : "");
  if (constraints == 0) return out;
  // Per joint, in model order.
  std::vector<std::string> joints;
  std::map<std::string, std::vector<const Row*>> of;
  for (const auto& r : rows) {
    if (!of.count(r.joint)) joints.push_back(r.joint);
    of[r.joint].push_back(&r);
  }
  // A large mechanism (more than kListedJoints joints): one line per joint
  // with redundant rows, naming them, and a count of the others.
  constexpr size_t kListedJoints = 20;
  const bool brief = joints.size() > kListedJoints;
  int quiet = 0;
  for (const auto& j : joints) {
    int red = 0;
    for (const Row* r : of[j]) red += r->redundant;
    if (brief) {
      if (!red) {
        ++quiet;
        continue;
      }
      std::vector<std::string> names;
      for (const Row* r : of[j])
        if (r->redundant) names.push_back(r->source);
      out += fmt::format("  joint {}: {} constraint(s), {} redundant ({})\n", j, of[j].size(), red,
                         fmt::join(names, ", "));
      continue;
    }
    out += fmt::format("  joint {}: {} constraint(s){}\n", j, of[j].size(),
                       red ? fmt::format(", {} redundant", red) : "");
    for (const Row* r : of[j])
      if (r->redundant)
        out += fmt::format("    redundant: {} ({}) — implied by the joints listed before it\n",
                           r->direction.empty() ? r->source : r->direction, r->source);
  }
  if (brief)
    out += fmt::format("  {} other joint(s) with no redundant constraint; a redundant row is implied by the joints "
                       "listed before it, in model order\n",
                       quiet);
  out += fmt::format("constraint errors at the start: position {:.3g}, velocity {:.3g}\n", max_position_error,
                     max_velocity_error);
  if (rank < constraints)
    out += "the constraint forces of redundant directions are not unique: paynter reports the minimum-norm choice\n";
  return out;
}

}  // namespace paynter
