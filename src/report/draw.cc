// Bond graph drawings through Graphviz.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "paynter/files.h"
#include "paynter/process.h"
#include "paynter/report.h"

namespace paynter {

namespace {
// A DOT double-quoted string showing `s` literally. Inside one, DOT itself only
// knows \" and a backslash before a line break (a continuation); Graphviz then
// reads backslash escapes in labels (\N, \G, \l, \n ...). So every backslash is
// doubled, quotes are escaped, a newline becomes the label line break \n, and
// other control characters, which a label cannot show, become spaces.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 32 || u == 127) {
      out += ' ';
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// An element's law as a label shows it: as written, or (written by the
// multibody library) as GiNaC prints the expression, broken into lines of
// about `width` characters after an operator or a space -- never cut off.
std::string LawLabel(const Element& e, size_t width = 28) {
  std::string text = e.law_text;
  if (text.empty() && !e.law.is_zero()) text = ExpressionText(e.law);
  std::string out, line;
  for (size_t i = 0; i < text.size(); ++i) {
    line += text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    const bool breakable = text[i] == ' ' || text[i] == '+' || text[i] == '*' || text[i] == '/' ||
                           (text[i] == '-' && i > 0 && text[i - 1] == ' ');
    if (line.size() >= width && breakable && next != '\0') {
      out += line + "\n";
      line.clear();
    }
  }
  return out + line;
}

// Text for a Graphviz HTML-like label: &, <, > and quotes as entities.
std::string HtmlText(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (static_cast<unsigned char>(c) < 32) out += ' ';
    else out += c;
  }
  return out;
}

std::string LabelOf(const Element& e);

// A node's label attribute: a junction's symbol with its name in small type
// right under it (an external label may land far from its node), else the
// kind, name and law.
std::string NodeLabel(const Element& e) {
  if (!IsJunction(e.kind)) return Quote(LabelOf(e));
  return "<<FONT POINT-SIZE=\"18\">" + HtmlText(KindName(e.kind)) + "</FONT><BR/><FONT POINT-SIZE=\"9\">" +
         HtmlText(e.name) + "</FONT>>";
}

std::string LabelOf(const Element& e) {
  if (IsJunction(e.kind)) return KindName(e.kind);
  const std::string law = LawLabel(e);
  return KindName(e.kind) + ":" + e.name + (law.empty() ? "" : "\n" + law);
}

// The signal blocks as boxes and the signal lines as arrows, apart from the
// bonds (dashed, full arrowheads): into a block from what its inputs read (a
// bond's or element's effort, flow or state: that element; another block's
// output: that block), and from a block to each element whose law uses one of
// its outputs. Definitions between them are looked through. `node` names an
// element's node in the drawing.
void SignalLinesDot(const Model& m, const std::function<std::string(int)>& node, std::ostream& os) {
  if (m.blocks.empty()) return;
  std::map<std::string, int> block_of;  // an output's name -> its block
  for (size_t k = 0; k < m.blocks.size(); ++k)
    for (const auto& o : m.blocks[k].outputs) block_of[o] = static_cast<int>(k);
  std::map<std::string, const GiNaC::ex*> definition;
  for (const auto& d : m.definitions) definition[d.name] = &d.value;
  std::map<std::string, const Displacement*> displacement;
  for (const auto& d : m.displacements) displacement[d.name] = &d;
  auto block_node = [&](int k) { return Quote("blk:" + m.blocks[k].name); };
  // The nodes an expression reads from.
  std::function<void(const GiNaC::ex&, std::set<std::string>*, std::set<std::string>*)> sources =
      [&](const GiNaC::ex& e, std::set<std::string>* out, std::set<std::string>* seen) {
        for (auto it = e.preorder_begin(); it != e.preorder_end(); ++it) {
          if (!GiNaC::is_a<GiNaC::symbol>(*it)) continue;
          const std::string n = GiNaC::ex_to<GiNaC::symbol>(*it).get_name();
          if (!seen->insert(n).second) continue;
          if (auto b = block_of.find(n); b != block_of.end()) {
            out->insert(block_node(b->second));
            continue;
          }
          if (auto d = definition.find(n); d != definition.end()) {
            sources(*d->second, out, seen);
            continue;
          }
          std::string of = n.size() > 2 && n[1] == '_' && std::string("efpq").find(n[0]) != std::string::npos
                               ? n.substr(2)
                               : std::string();
          if (auto d = displacement.find(n); d != displacement.end()) of = d->second->of;
          if (of.empty()) continue;
          if (const int el = m.FindElement(of); el >= 0) out->insert(node(el));
          else if (const int b = m.FindBond(of); b >= 0) out->insert(node(m.bonds[b].to));
        }
      };
  std::set<std::pair<std::string, std::string>> lines;
  for (size_t k = 0; k < m.blocks.size(); ++k) {
    const Block& b = m.blocks[k];
    os << "  " << block_node(static_cast<int>(k)) << " [id=" << Quote(fmt::format("blk{}", k))
       << ", label=" << Quote(b.type + "\n" + b.name) << ", shape=box, fontsize=12];\n";
    std::set<std::string> from, seen;
    for (const auto& in : b.inputs) sources(in, &from, &seen);
    for (const auto& f : from) lines.insert({f, block_node(static_cast<int>(k))});
  }
  for (size_t i = 0; i < m.elements.size(); ++i) {
    std::set<std::string> from, seen;
    sources(m.elements[i].law, &from, &seen);
    for (const auto& f : from)
      if (f.rfind("\"blk:", 0) == 0) lines.insert({f, node(static_cast<int>(i))});
  }
  for (const auto& [from, to] : lines)
    if (from != to) os << "  " << from << " -> " << to << " [style=dashed, color=\"#3060c0\", arrowhead=normal];\n";
}
}  // namespace

std::string BondGraphDot(const Model& m, const CausalGraph* g, const ZeroOrderPath* highlight) {
  auto on_path = [&](const std::vector<int>& items, int x) {
    return highlight && std::find(items.begin(), items.end(), x) != items.end();
  };
  std::string title = m.name;
  if (highlight)
    title += fmt::format("\nzero-order causal path: class {}, DAE index {}", highlight->cls, highlight->dae_index);
  std::ostringstream os;
  os << "digraph " << Quote(m.name) << " {\n"
     << "  graph [rankdir=LR, fontname=\"Helvetica\", label=" << Quote(title) << ", labelloc=t];\n"
     << "  node [shape=plaintext, fontname=\"Helvetica\", fontsize=14];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=10, arrowsize=1.1];\n";
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    // The ids (el<i>, bond<b>) name the SVG groups, which the report's page
    // finds its elements by.
    os << "  " << Quote(e.name) << " [id=" << Quote(fmt::format("el{}", i)) << ", label=" << NodeLabel(e);
    if (highlight && on_path(highlight->elements, static_cast<int>(i))) os << ", fontcolor=blue";
    os << "];\n";
  }
  for (size_t b = 0; b < m.bonds.size(); ++b) {
    const Bond& bond = m.bonds[b];
    // Half-arrow at the head (power direction); the causal stroke is drawn as a
    // bar ("tee") at the end that receives the effort.
    std::string arrowhead = "lvee", arrowtail = "none";
    if (g && g->effort_to[b] >= 0) {
      if (g->effort_to[b] == bond.to) arrowhead = "teelvee";
      else arrowtail = "tee";
    }
    os << "  " << Quote(m.elements[bond.from].name) << " -> " << Quote(m.elements[bond.to].name)
       << " [id=" << Quote(fmt::format("bond{}", b)) << ", label=" << Quote(bond.name) << ", dir=both, arrowhead=" << arrowhead << ", arrowtail=" << arrowtail;
    if (highlight && on_path(highlight->bonds, static_cast<int>(b))) {
      // The highlighted zero-order causal path: thick and blue.
      os << ", color=blue, fontcolor=blue, penwidth=3";
    } else if (g && g->effort_to[b] >= 0) {
      // Storage in derivative causality is drawn red.
      for (int d : g->derivative_storage)
        if (d == bond.from || d == bond.to) os << ", color=red, fontcolor=red";
    }
    os << "];\n";
  }
  if (g)
    for (const auto& c : g->conflicts)
      os << "  " << Quote(m.elements[c.element].name) << " [fontcolor=red, xlabel=" << Quote("conflict") << "];\n";
  SignalLinesDot(m, [&](int e) { return Quote(m.elements[e].name); }, os);
  os << "}\n";
  return os.str();
}

namespace {
// The use of the instance at `path` (`drive.motor`), looked up through the
// definitions written in the model's file (an instance of a file or of the
// library has none to look into: "").
std::string UseOf(const ModelSpec& top, const std::vector<std::string>& path) {
  std::vector<const ModelSpec*> scopes{&top};  // the definitions seen from here, innermost last
  const ModelSpec* spec = &top;
  for (size_t i = 0; i < path.size(); ++i) {
    const ModelSpec::InstanceSpec* inst = nullptr;
    for (const auto& x : spec->instances)
      if (x.name == path[i]) inst = &x;
    if (!inst) return "";
    if (i + 1 == path.size()) return inst->use;
    const ModelSpec* def = nullptr;
    for (auto s = scopes.rbegin(); s != scopes.rend() && !def; ++s)
      for (const auto& sub : (*s)->submodels)
        if (sub.name == inst->use) def = &sub;
    if (!def) return "";
    spec = def;
    scopes.push_back(def);
  }
  return "";
}
}  // namespace

DrawComponents FindDrawComponents(const Model& m, const ModelSpec& written, const ModelSpec* hierarchical, int level) {
  DrawComponents d;
  d.level = std::max(level, 1);
  d.component_of.assign(m.elements.size(), -1);
  std::map<std::string, int> by_name;
  auto component = [&](const std::string& name, const std::string& kind, const std::string& label) {
    auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    d.components.push_back({name, kind, label, {}});
    return by_name[name] = static_cast<int>(d.components.size()) - 1;
  };
  // Multibody entries, longest name first (a prefix of another name loses).
  std::vector<std::tuple<std::string, std::string, std::string>> entries;
  auto field = [](const ModelSpec::Entry& e, const std::string& k) {
    auto it = e.fields.find(k);
    if (it == e.fields.end() || it->second.values.empty()) return std::string();
    if (!it->second.is_list) return it->second.values[0];
    std::string s = "[";
    for (size_t i = 0; i < it->second.values.size(); ++i) s += (i ? ", " : "") + it->second.values[i];
    return s + "]";
  };
  if (written.multibody.present) {
    for (const auto& b : written.multibody.bodies)
      entries.emplace_back(field(b, "name"), "body",
                           "body " + field(b, "name") + "\nm = " + field(b, "mass") + "\nI = " + field(b, "inertia"));
    for (const auto& j : written.multibody.joints)
      entries.emplace_back(field(j, "name"), "joint",
                           field(j, "type") + " joint " + field(j, "name") + "\n" + field(j, "body1") + " - " +
                               field(j, "body2"));
    for (const auto& l : written.multibody.loads)
      entries.emplace_back(field(l, "name"), "load", field(l, "type") + " " + field(l, "name"));
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a).size() > std::get<0>(b).size(); });
  // Submodels' instances: their elements are named by instance path.
  std::map<std::string, std::string> instance_use;
  if (hierarchical)
    for (const auto& inst : hierarchical->instances) instance_use[inst.name] = inst.use;
  // The instances an element lies in, outermost first (`drive`, `motor` for
  // `drive.motor.La`), when the first names an instance of the model.
  auto instance_path = [&](const std::string& name) {
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      const size_t dot = name.find('.', start);
      if (dot == std::string::npos) break;
      parts.push_back(name.substr(start, dot - start));
      start = dot + 1;
    }
    if (parts.empty() || !instance_use.count(parts[0])) parts.clear();
    return parts;
  };
  // The block an element is drawn in at this level ("" for none).
  auto instance_of = [&](const std::string& name) -> std::string {
    const std::vector<std::string> parts = instance_path(name);
    if (parts.size() < static_cast<size_t>(d.level)) return "";
    std::string path = parts[0];
    for (int k = 1; k < d.level; ++k) path += "." + parts[k];
    return path;
  };
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    int c = -1;
    const std::vector<std::string> parts = instance_path(e.name);
    d.levels = std::max(d.levels, static_cast<int>(parts.size()));
    if (const std::string inst = instance_of(e.name); !inst.empty()) {
      const std::string use = UseOf(*hierarchical, {parts.begin(), parts.begin() + d.level});
      c = component(inst, "submodel", inst + (use.empty() ? "" : "\n" + use));
    }
    for (const auto& [name, kind, label] : entries) {
      if (c >= 0) break;
      if (!name.empty() && e.name.size() > name.size() && e.name.compare(0, name.size() + 1, name + "_") == 0) {
        c = component(name, kind, label);
        break;
      }
    }
    if (c < 0 && !e.origin.empty()) {
      // A vector element: its kind and name, as written.
      std::string kind = KindName(e.kind);
      for (const auto& w : written.elements)
        if (w.name == e.origin) kind = w.kind;
      c = component(e.origin, "vector element", kind + ":" + e.origin);
    }
    d.component_of[i] = c;
    if (c >= 0) d.components[c].elements.push_back(static_cast<int>(i));
  }
  // Bonds between different nodes of the drawing, grouped by their ends (and
  // by vector bond): each group with more than one bond is a multibond.
  auto node = [&](int e) {
    return d.component_of[e] >= 0 ? "comp:" + d.components[d.component_of[e]].name : m.elements[e].name;
  };
  std::map<std::tuple<std::string, std::string, std::string>, int> groups;
  for (size_t b = 0; b < m.bonds.size(); ++b) {
    const Bond& bond = m.bonds[b];
    const std::string from = node(bond.from), to = node(bond.to);
    if (from == to) continue;  // inside a component
    const bool grouped = d.component_of[bond.from] >= 0 || d.component_of[bond.to] >= 0 || !bond.origin.empty();
    if (!grouped) continue;
    const auto key = std::make_tuple(from, to, bond.origin);
    auto it = groups.find(key);
    if (it == groups.end()) {
      it = groups.emplace(key, static_cast<int>(d.multibonds.size())).first;
      d.multibonds.push_back({from, to, bond.origin, {}});
    }
    d.multibonds[it->second].bonds.push_back(static_cast<int>(b));
  }
  // A bond at a submodel's port: the port's name from the bonds as written
  // (`motor.shaft` joins port shaft of instance motor). A pair of nodes joined
  // by one written bond in one direction gets its port names.
  if (hierarchical && d.level == 1) {
    auto written_node = [&](const std::string& end, std::string* port) {
      const std::string inst = instance_of(end);
      if (inst.empty()) return end;
      *port = end.substr(inst.size() + 1);
      return "comp:" + inst;
    };
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, std::string>>> ports;
    for (const auto& b : hierarchical->bonds) {
      std::string from_port, to_port;
      const std::string from = written_node(b.from, &from_port), to = written_node(b.to, &to_port);
      ports[{from, to}].emplace_back(from_port, to_port);
    }
    for (auto& mb : d.multibonds) {
      const auto it = ports.find({mb.from, mb.to});
      if (mb.bonds.size() != 1 || !mb.label.empty() || it == ports.end() || it->second.size() != 1) continue;
      mb.from_port = it->second[0].first;
      mb.to_port = it->second[0].second;
    }
  }
  for (auto& mb : d.multibonds) {
    if (!mb.from_port.empty() || !mb.to_port.empty()) continue;
    // Below the first level the ports' names are the nested definitions':
    // a single scalar bond is drawn as a bond.
    if (d.level > 1 && mb.bonds.size() == 1 && mb.label.empty()) continue;
    mb.label = (mb.label.empty() ? "" : mb.label + " ") + fmt::format("[{}]", mb.bonds.size());
  }
  return d;
}

std::string ComponentGraphDot(const Model& m, const CausalGraph* g, const DrawComponents& d) {
  std::ostringstream os;
  const std::string id = d.level > 1 ? fmt::format("l{}", d.level) : "";  // ids unique across the levels' drawings
  const std::string title = d.level > 1 ? fmt::format(" (components, level {})", d.level) : " (components)";
  os << "digraph " << Quote(m.name) << " {\n"
     << "  graph [rankdir=LR, fontname=\"Helvetica\", label=" << Quote(m.name + title) << ", labelloc=t];\n"
     << "  node [shape=plaintext, fontname=\"Helvetica\", fontsize=14];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=10, arrowsize=1.1];\n";
  for (size_t c = 0; c < d.components.size(); ++c) {
    const auto& comp = d.components[c];
    os << "  " << Quote("comp:" + comp.name) << " [id=" << Quote(fmt::format("{}comp{}", id, c)) << ", label=" << Quote(comp.label)
       << ", shape=box, style=rounded, penwidth=1.5];\n";
  }
  for (size_t i = 0; i < m.elements.size(); ++i) {
    if (d.component_of[i] >= 0) continue;
    const Element& e = m.elements[i];
    os << "  " << Quote(e.name) << " [id=" << Quote(fmt::format("el{}", i)) << ", label=" << NodeLabel(e);
    os << "];\n";
  }
  std::set<int> in_multibond;
  for (size_t k = 0; k < d.multibonds.size(); ++k) {
    const auto& mb = d.multibonds[k];
    for (int b : mb.bonds) in_multibond.insert(b);
    if (!mb.from_port.empty() || !mb.to_port.empty() || mb.label.empty()) {
      // One bond at a submodel's port(s): drawn as a bond, its causal stroke
      // where the flat graph has it, the port's name at the block's end.
      const int b = mb.bonds[0];
      const Bond& bond = m.bonds[b];
      std::string arrowhead = "lvee", arrowtail = "none";
      if (g && g->effort_to[b] >= 0) {
        if (g->effort_to[b] == bond.to) arrowhead = "teelvee";
        else arrowtail = "tee";
      }
      os << "  " << Quote(mb.from) << " -> " << Quote(mb.to) << " [id=" << Quote(fmt::format("{}mb{}", id, k))
         << ", taillabel=" << Quote(mb.from_port) << ", headlabel=" << Quote(mb.to_port)
         << ", dir=both, arrowhead=" << arrowhead << ", arrowtail=" << arrowtail << "];\n";
      continue;
    }
    // A multibond: a double line (Graphviz draws "black:invis:black" as two
    // parallel strokes) labelled with its dimension.
    os << "  " << Quote(mb.from) << " -> " << Quote(mb.to) << " [id=" << Quote(fmt::format("{}mb{}", id, k))
       << ", label=" << Quote(mb.label) << ", color=\"black:invis:black\", penwidth=1.2, arrowhead=lvee];\n";
  }
  for (size_t b = 0; b < m.bonds.size(); ++b) {
    const Bond& bond = m.bonds[b];
    if (in_multibond.count(static_cast<int>(b)) || d.component_of[bond.from] >= 0 || d.component_of[bond.to] >= 0)
      continue;
    std::string arrowhead = "lvee", arrowtail = "none";
    if (g && g->effort_to[b] >= 0) {
      if (g->effort_to[b] == bond.to) arrowhead = "teelvee";
      else arrowtail = "tee";
    }
    os << "  " << Quote(m.elements[bond.from].name) << " -> " << Quote(m.elements[bond.to].name)
       << " [id=" << Quote(fmt::format("bond{}", b)) << ", label=" << Quote(bond.name)
       << ", dir=both, arrowhead=" << arrowhead << ", arrowtail=" << arrowtail << "];\n";
  }
  SignalLinesDot(
      m,
      [&](int e) {
        return Quote(d.component_of[e] >= 0 ? "comp:" + d.components[d.component_of[e]].name : m.elements[e].name);
      },
      os);
  os << "}\n";
  return os.str();
}

std::string DotToSvg(const std::string& dot_source) {
  namespace fs = std::filesystem;
  const std::string path = TemporaryBeside((fs::temp_directory_path() / "paynter_drawing.svg").string(), ".svg");
  try {
    RenderDot(dot_source, path);
  } catch (...) {
    std::error_code ec;
    fs::remove(path, ec);
    throw;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::error_code ec;
  fs::remove(path, ec);
  return ss.str();
}

void RenderDot(const std::string& dot_source, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::string ext = target.extension().string();
  if (!ext.empty()) ext = ext.substr(1);
  if (ext != "svg" && ext != "png" && ext != "pdf" && ext != "dot") {
    ThrowAt({path, 0, 0}, "", "unknown drawing format", "a file name ending in .svg, .png, .pdf or .dot",
            ext.empty() ? "no extension" : "." + ext);
  }
  if (ext == "dot") return WriteFileAtomically(path, dot_source, "drawing");
  if (FindProgram("dot").empty())
    throw Error(fmt::format("{}: error: Graphviz 'dot' is not installed\n  hint: run scripts/setup.sh (apt-get install graphviz)", path));
  const std::string tmp_out = TemporaryBeside(path);
  std::error_code ec;
  std::string tmp_dot;
  try {
    tmp_dot = TemporaryBeside(path, ".gv");
    WriteFileAtomically(tmp_dot, dot_source, "drawing's Graphviz source");
  } catch (...) {
    fs::remove(tmp_out, ec);
    if (!tmp_dot.empty()) fs::remove(tmp_dot, ec);
    throw;
  }
  // Paths are made absolute: Graphviz would take a name starting with '-' for an option.
  std::string msg;
  const int rc = RunTool({"dot", "-T" + ext, "-o" + fs::absolute(tmp_out).string(), fs::absolute(tmp_dot).string()}, &msg);
  fs::remove(tmp_dot, ec);
  if (rc != 0) {
    fs::remove(tmp_out, ec);
    throw Error(fmt::format("{}: error: Graphviz failed: {}", path, msg));
  }
  MoveIntoPlace(tmp_out, path, "drawing");
}

}  // namespace paynter
