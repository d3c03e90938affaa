// fmt's out-of-line functions (formatting into a string, its error), for the
// paynter program linked statically (app/CMakeLists.txt): fmt's own
// definitions, compiled here once because Debian ships fmt only as a shared
// library. Without FMT_HEADER_ONLY these are ordinary, external definitions.
#include <fmt/format-inl.h>

// The templates fmt's inline code calls for char, instantiated here as its
// library would hold them.
FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
