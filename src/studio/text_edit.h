// The studio's graphical edits as edits of a model's text (docs/studio.md):
// each finds what it changes through the YAML parser's positions and replaces
// or inserts only those characters, so that every other line — comments,
// order, flow or block style — stays as it was written. No HTTP and no page
// here (api.cc, server.cc).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace paynter::studio {

// What an edit names: the model's text, and the file it is read as (for the
// errors' locations).
struct EditInput {
  std::string text, file;
};

// The bond from `from` to `to` as written in `bonds:` (`[from, to]` or
// `{from:, to:}`) turned round: the two names exchanged. `line` (1-based, 0 =
// any) chooses among bonds written twice between the same elements.
std::string FlipBond(const EditInput& in, const std::string& from, const std::string& to, int line = 0);

// Sets `key: value` in the element `element` of `elements:` (its law key, or
// `initial`): the value written in place of the old one, or the key added at
// the end of the element's mapping. An empty value removes the key.
std::string SetElementField(const EditInput& in, const std::string& element, const std::string& key,
                            const std::string& value);

// Sets the parameter `name` of `parameters:` to `value` (added at the end of
// the section when it is not there; the section made when there is none).
std::string SetParameter(const EditInput& in, const std::string& name, const std::string& value);

// Sets the drawing's positions in `layout:` (name: [x, y], in points, x to
// the right and y up, as Graphviz places them): each name's position written
// in place of the old one or added at the end; the section made at the end
// of the text when there is none.
std::string SetLayout(const EditInput& in, const std::map<std::string, std::pair<double, double>>& positions);

// The value as the model file writes it: plain when the YAML reads it back
// as the same text in a flow or block mapping, else double-quoted.
std::string YamlValue(const std::string& value);

}  // namespace paynter::studio
