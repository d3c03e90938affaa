// paynter/multibody.h — 3D mechanisms from bodies, joints and loads.
//
// The `multibody:` section of a model file (docs/multibody.md) is turned into
// a bond graph before the pipeline runs, after Tiernego and Bos's modular
// approach (seed 003): each rigid body is Newton–Euler — translation of its
// centre of mass G in the world frame W, rotation in its body frame B with the
// Euler junction structure (EJS, a ring of gyrators modulated by the angular
// momenta, seed 004 Figs. 9.35–9.36) — and each joint is a set of constraint
// rows: relative velocities along directions fixed in the first body, summed
// at 0-junctions. A constrained row carries an unknown effort source, the
// joint's constraint force or moment (seed 001: it removes derivative
// causality); a free row carries the joint's spring, damper and actuator.
//
// Frames and monograms: R_WB rotates body B's frame into the world
// (definitions <B>_R11 ... <B>_R33), p_WG is the position of G in the world
// (displacements <B>_x, <B>_y, <B>_z), w_B the angular velocity in B (flows of
// the 1-junctions <B>_wx, <B>_wy, <B>_wz). Orientation is a unit quaternion
// (<B>_q0..<B>_q3, the default) or XYZ Cardan angles (<B>_a, <B>_b, <B>_g).
#pragma once

#include "paynter/model.h"

namespace paynter {

// Adds to `spec` the elements, bonds, displacements and definitions of its
// multibody section. Throws Error (file, line, body or joint, hint) on bad input.
void ExpandMultibody(ModelSpec* spec);

// The multibody section in joint coordinates, for Lagrange's equations
// (--form lagrange1|lagrange2): ExpandMultibody, then the joints of a tree
// from the ground become generalized 1-junctions (<J>_angledot, <J>_sdot, in
// `generalized:` and `independent:`) and each body's velocity junctions take
// their flows from them through transformers (the Jacobian's columns); poses
// become definitions of the joint coordinates. Trees of revolute,
// prismatic, cylindrical and fixed joints. A joint that closes a loop keeps
// its constraint rows when `cut_joints_as_multipliers` (lagrange1), else
// throws Error naming the loop's joints; a spherical, universal or planar
// joint on the tree or a free body throws Error naming it.
// Implemented in src/multibody/joint_coordinates.cc.
void ExpandMultibodyInJointCoordinates(ModelSpec* spec, bool cut_joints_as_multipliers = false);

// The multibody section for Hamilton's equations in joint coordinates
// (--form hamilton): the tree of ExpandMultibodyInJointCoordinates (a joint
// that closes a loop keeps its constraint rows, as multipliers), with the bodies' inertias
// replaced by one I field `joint_inertia` (ports I_<coordinate>, bonded from
// the generalized junctions) whose inertia matrix is the mechanism's mass
// matrix M(q), so that the states are the generalized momenta p = M(q) q'.
// The bodies' inertias stay as observers of the joints' forces
// (ModelSpec::observers). Implemented in src/multibody/joint_coordinates.cc.
void ExpandMultibodyForHamilton(ModelSpec* spec);

// The multibody section for the Boltzmann-Hamel equations (--form
// boltzmann-hamel): the tree of ExpandMultibodyInJointCoordinates, whose
// junctions are quasi-velocities (ModelSpec::quasi_velocities): a spherical
// joint's relative angular velocity along body2's axes (junctions <J>_wx,
// <J>_wy, <J>_wz; its Cardan angles <J>_angle1..3 integrate q' = B(q) w), or
// its angles' rates with `quasi_velocities: rates`; every other joint's rates.
// A joint that closes a loop is an error naming the loop.
void ExpandMultibodyForBoltzmannHamel(ModelSpec* spec);

// Turns vector bonds (dim > 1) and the multiport elements on them — vector
// junctions, sources, diagonal I/C/R fields, TF/MTF and GY/MGY with matrix
// moduli (cross([rx, ry, rz]) for a cross product), EJS — into scalar bonds and
// elements. Each scalar bond keeps its vector bond's name as `origin`; the
// scalar parts of cross-product transformers and of gyrators carry their fixed
// causality (seed 003, constraint C2). A spec without vector bonds is unchanged.
void ExpandVectorBonds(ModelSpec* spec);

// Adds to a spec with a multibody section the outputs its 3D view needs (the
// report's): per body B pose_B_x, _y, _z (p_WG), pose_B_R11 .. _R33 (R_WB),
// pose_B_mass and pose_B_I1 .. _I3 (the diagonal of the inertia written); per
// joint J pose_J_x, _y, _z, the joint's point in W. An output of the same
// name already in the spec is kept. Returns the names added.
std::vector<std::string> AddPoseOutputs(ModelSpec* spec);

// Writes a ModelSpec as a model file (after the expansions it is all scalar):
// `paynter expand`. Reading it back gives the same model.
std::string ModelSpecToYaml(const ModelSpec& spec);

}  // namespace paynter
