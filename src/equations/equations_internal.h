// Helpers shared by the equations stage's files.
#pragma once

#include <ginac/ginac.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace paynter {

void CollectSymbols(const GiNaC::ex& e, std::set<GiNaC::ex, GiNaC::ex_is_less>* out);

// Symbol <-> slot index.
struct SlotLayout {
  std::vector<GiNaC::symbol> symbols;
  std::vector<std::string> names;
  std::map<GiNaC::ex, int, GiNaC::ex_is_less> index;
  void Add(const GiNaC::symbol& s, const std::string& name) {
    if (index.count(s)) return;
    index[s] = static_cast<int>(symbols.size());
    symbols.push_back(s);
    names.push_back(name);
  }
  int Slot(const GiNaC::ex& s) const { return index.at(s); }
  int size() const { return static_cast<int>(symbols.size()); }
};

}  // namespace paynter
