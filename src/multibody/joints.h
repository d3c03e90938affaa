// src/multibody/joints.h — the joint types of a `multibody:` section.
//
// A joint type says which directions it constrains and which it leaves free,
// in translation and in rotation. The directions are fixed in body1's frame:
// the joint's axis and two unit normals completing it to a right-handed basis
// (axis x first normal = second normal). The expansion (joints.cc, AddJoint)
// turns each constrained direction into a row with a constraint force or
// moment, and each free direction into a row with the joint's coordinate (and
// its spring, damper and actuator when the joint has one free direction).
//
// To add a joint type, add its definition to the table in joints.cc; the
// error messages listing the types follow the table.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace paynter::multibody {

// A direction of the joint basis; its value indexes (axis, first normal, second normal).
enum class Direction { kAxis = 0, kFirstNormal = 1, kSecondNormal = 2 };

// The single coordinate of a joint with one free direction, about or along its axis.
enum class Coordinate {
  kNone,   // no single coordinate: no `initial:`, no stiffness, damping or actuator
  kAngle,  // rotation about the axis: <J>_angle, periodic; initial rotates body2 about point1
  kSlide,  // translation along the axis: <J>_s; initial slides body2 along the axis
};

struct JointType {
  const char* name;
  // Constraint rows, in this order: translations, rotations, then the axis2 row.
  std::vector<Direction> constrained_translations = {};
  std::vector<Direction> constrained_rotations = {};
  // The row R1 axis . R2 axis2 = 0 (axis2 given in body2's frame): two rotations
  // stay free about the two axes (universal joint).
  bool axis2_row = false;
  // Free rows, in this order: translations (<J>_s...), then rotations
  // (<J>_angle...). A free motion without a row (a spherical joint's
  // rotations) has no coordinate.
  std::vector<Direction> free_translations = {};
  std::vector<Direction> free_rotations = {};
  // Set only for one free row about or along the axis (the coordinate's
  // initial value, its position from the poses, the initial-pose propagation).
  Coordinate coordinate = Coordinate::kNone;

  size_t FreeCount() const { return free_translations.size() + free_rotations.size(); }
};

// Every joint type, in the order the documentation and the messages list them.
const std::vector<JointType>& JointTypes();

// The joint type of this name, or nullptr.
const JointType* FindJointType(const std::string& name);

// The names of the joint types `keep` accepts, joined by ", " and the last by
// `last`: JointTypeNames(All, " or ") is "revolute, prismatic, ... or fixed".
std::string JointTypeNames(bool (*keep)(const JointType&), const char* last);

}  // namespace paynter::multibody
