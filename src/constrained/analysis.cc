// AnalyzeConstraints: counts, rank, mobility and the redundant joint
// directions of a constrained mechanism (see paynter/constrained.h), as the
// tables of a structural analysis: coordinates, constraint equations, their
// rank at this configuration, mobility by count and by rank.
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

#include "paynter/constrained.h"

namespace paynter {

ConstraintAnalysis AnalyzeConstraints(const CompiledModel& model, double t, const std::vector<double>& x0) {
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
  model.CalcConstraints(t, x.data(), nullptr, c0.data(), g0.data());
  // The velocity Jacobian in velocities (not momenta): G = dc/dp * diag(I).
  Eigen::MatrixXd G(nc, nm);
  for (int j = 0; j < nm; ++j) {
    const double save = x[mom[j]];
    x[mom[j]] = save + 1;
    model.CalcConstraints(t, x.data(), nullptr, c1.data(), nullptr);
    x[mom[j]] = save;
    for (int r = 0; r < nc; ++r) G(r, j) = (c1[r] - c0[r]) * model.state_inertia()[mom[j]];
  }
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(G);
  const auto& sv = svd.singularValues();
  const double smax = sv.size() ? sv[0] : 0;
  double smin = smax;
  for (int k = 0; k < sv.size(); ++k)
    if (sv[k] > 1e-9 * smax) {
      ++a.rank;
      smin = sv[k];
    }
  a.condition = smin > 0 ? smax / smin : 0;
  a.mobility = nm - a.rank;
  // Redundant rows, in model order: a row in the span of the rows before it.
  std::vector<Eigen::VectorXd> basis;
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
    Eigen::VectorXd v = G.row(r).transpose();
    const double norm = v.norm();
    if (norm == 0) {
      row.redundant = true;
    } else {
      v /= norm;
      for (int pass = 0; pass < 2; ++pass)
        for (const auto& b : basis) v -= b.dot(v) * b;
      if (v.norm() < 1e-8) row.redundant = true;
      else basis.push_back(v / v.norm());
    }
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
  for (const auto& j : joints) {
    int red = 0;
    for (const Row* r : of[j]) red += r->redundant;
    out += fmt::format("  joint {}: {} constraint(s){}\n", j, of[j].size(),
                       red ? fmt::format(", {} redundant", red) : "");
    for (const Row* r : of[j])
      if (r->redundant)
        out += fmt::format("    redundant: {} ({}) — implied by the joints listed before it\n",
                           r->direction.empty() ? r->source : r->direction, r->source);
  }
  out += fmt::format("constraint errors at the start: position {:.3g}, velocity {:.3g}\n", max_position_error,
                     max_velocity_error);
  if (rank < constraints)
    out += "the constraint forces of redundant directions are not unique: paynter reports the minimum-norm choice\n";
  return out;
}

}  // namespace paynter
