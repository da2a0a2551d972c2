// Typed op nodes. An op is recorded from its name, its inputs, its output
// types, a lowering with no captured state and a list of typed attributes.
// The lowering receives exactly those attributes, and the node's cache key
// is the name followed by the attributes in the key encoding (engine/key.h,
// encoded from the held attributes when a program is planned),
// so "the key carries everything the lowering depends on" holds by
// construction: a lowering that wanted a value not in the key would have to
// capture it, and a capturing lambda does not compile here.
//
//   Ref r = engine::op1("softmax", {x}, out_type,
//                       [](Builder& b, const Vals& in, int64_t dim, DType t) { ... }, dim, dtype);
//
// A name belongs to one call site: two places recording the same name would
// share compiled programs whenever their attributes and inputs agree, so the
// first use of a name at a second site is an error. (Instances of one
// template share their call site.)
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/graph.h"
#include "engine/key.h"

namespace engine {

using Vals = std::vector<shlo::Value>;

// ---- recording

namespace detail {

// Holds a node's attributes; the lowering thunk reads them back typed.
template <class... A>
struct AttrsOf final : Attrs {
  explicit AttrsOf(A... a) : values(std::move(a)...) {}
  std::tuple<A...> values;
};

template <class F, class... A>
Vals lower_thunk(shlo::Builder& b, const Vals& in, const Attrs* attrs) {
  if constexpr (sizeof...(A) == 0) {
    return F{}(b, in);
  } else {
    const auto& t = static_cast<const AttrsOf<A...>*>(attrs)->values;
    return std::apply([&](const A&... a) { return F{}(b, in, a...); }, t);
  }
}

template <class... A>
void key_thunk(Key& into, const char* name, const Attrs* attrs) {
  if constexpr (sizeof...(A) == 0) {
    into.add_op(name);
  } else {
    const auto& t = static_cast<const AttrsOf<A...>*>(attrs)->values;
    std::apply([&](const A&... a) { into.add_op(name, a...); }, t);
  }
}

// Checks that `name` is recorded from one call site only.
void claim_name(const char* name, const std::source_location& where);

}  // namespace detail

// An op's name (a string literal) and where it is recorded from. Helpers
// that record on behalf of their callers take an OpName too, so the site is
// the caller's.
struct OpName {
  OpName(const char* n, std::source_location w = std::source_location::current()) : name(n), where(w) {}
  const char* name;
  std::source_location where;
};

namespace detail {
// What op() and op1() share: the checks and the typed thunks.
template <class F, class... A>
struct Typed {
  static_assert(std::is_empty_v<F> && std::is_default_constructible_v<F>,
                "an op's lowering may not capture anything: pass what it needs as attributes");
  static constexpr LowerThunk lower = &lower_thunk<F, std::decay_t<A>...>;
  static constexpr KeyThunk key = &key_thunk<std::decay_t<A>...>;
  static void claim(const OpName& name) {
    // One check per instance and name.
    thread_local const char* checked = nullptr;
    if (checked != name.name) {
      claim_name(name.name, name.where);
      checked = name.name;
    }
  }
  static std::unique_ptr<Attrs> hold(A&&... attrs) {
    if constexpr (sizeof...(A) == 0)
      return nullptr;
    else
      return std::make_unique<AttrsOf<std::decay_t<A>...>>(std::move(attrs)...);
  }
};
}  // namespace detail

// Records an op computing `out_types` from `inputs` with `lower`, which is
// called as lower(builder, input values, attrs...) and must not capture.
template <class F, class... A>
std::vector<Ref> op(OpName name, std::vector<Ref> inputs, std::vector<shlo::Type> out_types, F, A... attrs) {
  using T = detail::Typed<F, A...>;
  T::claim(name);
  return record(name.name, T::key, std::move(inputs), std::move(out_types), T::lower, T::hold(std::move(attrs)...));
}

template <class F, class... A>
Ref op1(OpName name, std::vector<Ref> inputs, shlo::Type out, F, A... attrs) {
  using T = detail::Typed<F, A...>;
  T::claim(name);
  return record1(name.name, T::key, std::move(inputs), std::move(out), T::lower, T::hold(std::move(attrs)...));
}

}  // namespace engine
