// libFuzzer target: the text of one expression, condition or unit as a model
// file holds it, through the readers the model builder uses
// (CheckExpressionText, ParseExpressionText, ParseConditionText, ParseUnit).
// The first byte chooses the reader; the rest is the text.
//
// What the readers may throw is what BuildModel turns into a located error:
// paynter::Error and the std::exceptions of ParseExpressionText's contract
// (a syntax error, an expression without a value, the algebra library's own
// value errors). A crash, a sanitizer report, a hang, an exception of no std
// type, a message of an internal error, or an expression the parser read
// whose printed form (ExpressionText, as `paynter expand` writes it) does not
// read back is a finding.
#include <ginac/ginac.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "fuzz_common.h"
#include "paynter/error.h"
#include "paynter/model.h"
#include "paynter/units.h"

namespace {

[[noreturn]] void Finding(const char* what, const std::string& detail) {
  paynter_fuzz::Finding("fuzz_expression", what, detail);
}

void CheckMessage(const std::string& message) {
  if (paynter_fuzz::IsInternal(message)) Finding("an internal error", message);
}

// Names as the builder knows them: a fixed set of parameters and variables,
// and a unit in brackets as its SI scale (the builder's symbol for it is
// replaced by that scale everywhere); any other name is unknown (the
// builder's "undefined symbol").
GiNaC::ex Name(const std::string& id) {
  static std::map<std::string, GiNaC::symbol> symbols;
  static const char* const known[] = {"t", "m", "g", "k", "b", "theta", "x", "v", "p_I1", "q_C1", "e_1", "f_1", "R",
                                      "C", "L", "r", "omega", "mu"};
  if (!id.empty() && id[0] == '[') {
    std::string why;
    const auto unit = paynter::ParseUnit(id.substr(1, id.size() >= 2 ? id.size() - 2 : 0), &why);
    if (!unit) throw std::invalid_argument("not a unit: " + why);
    return unit->scale;
  }
  if (id == "pi" || id == "Pi") return GiNaC::Pi;  // as the builder's table
  bool is_known = false;
  for (const char* k : known) is_known = is_known || id == k;
  if (!is_known) throw std::invalid_argument("unknown name '" + id + "'");
  auto it = symbols.find(id);
  if (it == symbols.end()) it = symbols.emplace(id, GiNaC::symbol(id)).first;
  return it->second;
}

// The builder's `constant`: a value for an expression of numbers (names have
// none here).
std::optional<double> Constant(const GiNaC::ex& e) {
  const GiNaC::ex x = GiNaC::evalf(e);
  if (!GiNaC::is_a<GiNaC::numeric>(x) || !GiNaC::ex_to<GiNaC::numeric>(x).is_real()) return std::nullopt;
  return GiNaC::ex_to<GiNaC::numeric>(x).to_double();
}

void Read(uint8_t mode, const std::string& text) {
  const paynter::ExpressionNames names = Name;
  const paynter::ConstantValue constant = Constant;
  switch (mode % 3) {
    case 0:
    case 1: {
      paynter::CheckExpressionText(text, {"fuzz.yaml"}, "fuzz", "expression");
      bool strict = false;
      GiNaC::ex e;
      try {
        e = mode % 3 == 0 ? paynter::ParseExpressionText(text, names, &constant)
                          : paynter::ParseConditionText(text, names, &strict, &constant);
      } catch (const paynter::Error&) {
        throw;
      } catch (const std::exception& ex) {
        CheckMessage(ex.what());
        return;  // the builder's "cannot parse" / "has no finite value"
      }
      // What was read prints (as `paynter expand` writes it) and reads back;
      // a value that is not real (log(-1) = I*Pi) has no text paynter reads.
      if (e.has(GiNaC::I)) return;
      const std::string printed = paynter::ExpressionText(e);
      try {
        paynter::ParseExpressionText(printed, names);
      } catch (const std::invalid_argument& ex) {
        if (printed.size() <= paynter::kMaxExpressionLength)
          Finding("the printed form does not read back", "'" + text + "' -> '" + printed + "': " + ex.what());
      } catch (const std::exception&) {
        // A value error on the way back (a float beyond 1e308 printed exactly).
      }
      return;
    }
    default: {
      std::string why;
      if (!paynter::ParseUnit(text, &why)) CheckMessage(why);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    Read(data[0], text);
  } catch (const paynter::Error& e) {
    CheckMessage(e.diagnostic().message);  // a located message: the expected end of bad input
  } catch (const std::exception& e) {
    Finding("not a paynter::Error", e.what());
  } catch (...) {
    Finding("an exception of no std type", "");
  }
  return 0;
}
