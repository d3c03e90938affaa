// The poses of a mechanism's bodies and joints as outputs (for the 3D view of
// `paynter report`): expressions of the names the expansion defines.
#include <fmt/format.h>

#include <set>

#include "paynter/multibody.h"

namespace paynter {

namespace {
const ModelSpec::Field* FieldOf(const ModelSpec::Entry& e, const std::string& key) {
  auto it = e.fields.find(key);
  return it == e.fields.end() ? nullptr : &it->second;
}

std::string TextOf(const ModelSpec::Entry& e, const std::string& key) {
  const auto* f = FieldOf(e, key);
  return f && !f->values.empty() ? f->values[0] : "";
}

// The world position of a point given in a body's frame: p_WG + R_WB r.
std::vector<std::string> WorldPoint(const std::string& body, const ModelSpec::Field* point) {
  std::vector<std::string> out;
  for (int i = 1; i <= 3; ++i) {
    std::string s = body + "_" + std::string(1, "xyz"[i - 1]);
    if (point && point->is_list && point->values.size() == 3)
      for (int j = 1; j <= 3; ++j) s += fmt::format(" + {}_R{}{}*({})", body, i, j, point->values[j - 1]);
    out.push_back(s);
  }
  return out;
}
}  // namespace

std::vector<std::string> AddPoseOutputs(ModelSpec* spec) {
  std::vector<std::string> added;
  if (!spec->multibody.present) return added;
  std::set<std::string> taken;
  for (const auto& o : spec->outputs) taken.insert(o.name);
  auto add = [&](const std::string& name, const std::string& text) {
    if (!taken.insert(name).second) return;
    ModelSpec::Item item;
    item.name = name;
    item.text = text;
    spec->outputs.push_back(item);
    added.push_back(name);
  };
  for (const auto& b : spec->multibody.bodies) {
    const std::string n = TextOf(b, "name");
    if (n.empty()) continue;
    for (const char* c : {"x", "y", "z"}) add(fmt::format("pose_{}_{}", n, c), fmt::format("{}_{}", n, c));
    for (int i = 1; i <= 3; ++i)
      for (int j = 1; j <= 3; ++j) add(fmt::format("pose_{}_R{}{}", n, i, j), fmt::format("{}_R{}{}", n, i, j));
    add(fmt::format("pose_{}_mass", n), TextOf(b, "mass"));
    const auto* inertia = FieldOf(b, "inertia");
    if (inertia && inertia->is_list && inertia->values.size() >= 3)
      for (int i = 0; i < 3; ++i) add(fmt::format("pose_{}_I{}", n, i + 1), inertia->values[i]);
  }
  for (const auto& j : spec->multibody.joints) {
    const std::string n = TextOf(j, "name"), b1 = TextOf(j, "body1"), b2 = TextOf(j, "body2");
    if (n.empty()) continue;
    const bool on2 = !b2.empty() && b2 != "ground";
    if (!on2 && (b1.empty() || b1 == "ground")) continue;
    const auto p = on2 ? WorldPoint(b2, FieldOf(j, "point2")) : WorldPoint(b1, FieldOf(j, "point1"));
    for (int i = 0; i < 3; ++i) add(fmt::format("pose_{}_{}", n, "xyz"[i]), p[i]);
  }
  return added;
}

}  // namespace paynter
