// An op family's enum and its names from one X-macro list of
// X(Enumerator, "pytorch_name") entries: OPS_NAMED_ENUM(Unary, OPS_UNARY_LIST)
// declares `enum class Unary` and `const char* name(Unary)`, so a family
// writes its list once and neither the enum nor the name table again.
#pragma once

#define OPS_NAMED_ENUM_ITEM_(e, n) e,
#define OPS_NAMED_ENUM_NAME_(e, n) n,
#define OPS_NAMED_ENUM(Enum, LIST)                                        \
  enum class Enum { LIST(OPS_NAMED_ENUM_ITEM_) };                         \
  inline const char* name(Enum op) {                                      \
    static constexpr const char* kNames[] = {LIST(OPS_NAMED_ENUM_NAME_)}; \
    const auto i = static_cast<unsigned>(op);                             \
    return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";      \
  }
