// Cache keys. A Key is the text that names what a program computes, and the
// only way one is built: an op's name and typed attributes (eager nodes,
// engine/op.h), a planned program over such nodes (engine/plan.h), and a
// captured graph's arguments (compiled graphs). Two keys are equal exactly
// when the values they were built from are equal, because every value goes
// through one encoding:
//   integers and enums in decimal, bools as 0/1;
//   floating point values by their bit pattern, never a rounded decimal
//     (1.0000001 and 1.0000002 lower differently, as do -0.0 and 0.0; a NaN
//     is equal to itself bit for bit, so its programs are found again);
//   complex numbers as their two parts;
//   strings with their length first; dtypes by name; types as dtype and dims;
//   vectors, arrays, optionals, tuples, pairs and structs that list their
//     fields() delimited, so a nesting never reads as another.
// Marks (separators between the parts of a composite key) are appended as
// they are.
#pragma once

#include <array>
#include <charconv>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace engine {

// A version of the encoding, part of the disk cache's identity: a change of
// the text keys are built from must not meet entries written by an older one.
constexpr int kKeyFormat = 2;

// A struct used as an attribute lists its fields once, beside their
// declarations: `auto fields() const { return std::tie(a, b, c); }`.
template <class T>
concept HasFields = requires(const T& t) { t.fields(); };

namespace key_encoding {

inline void put(std::string& k, bool v) { k += v ? '1' : '0'; }
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
void put(std::string& k, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  k.append(buf, r.ptr);
}
inline void put(std::string& k, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  k += 'x';
  put(k, bits);
}
inline void put(std::string& k, float v) { put(k, static_cast<double>(v)); }
inline void put(std::string& k, shlo::DType v) { k += shlo::dtype_name(v); }
template <class T>
  requires(std::is_enum_v<T> && !std::is_same_v<T, shlo::DType>)
void put(std::string& k, T v) {
  put(k, static_cast<std::underlying_type_t<T>>(v));
}
inline void put(std::string& k, std::string_view v) {
  put(k, v.size());
  k += '"';
  k.append(v);
}
inline void put(std::string& k, const std::string& v) { put(k, std::string_view(v)); }
inline void put(std::string& k, const char* v) { put(k, std::string_view(v)); }
inline void put(std::string& k, const shlo::Type& t) {
  put(k, t.dtype);
  for (int64_t d : t.shape) {
    k += 'x';
    put(k, d);
  }
}
template <class T>
void put(std::string& k, const std::complex<T>& v);
template <class T>
void put(std::string& k, const std::vector<T>& v);
template <class T, size_t N>
void put(std::string& k, const std::array<T, N>& v);
template <class T>
void put(std::string& k, const std::optional<T>& v);
template <class... T>
void put(std::string& k, const std::tuple<T...>& v);
template <class A, class B>
void put(std::string& k, const std::pair<A, B>& v);
template <HasFields T>
void put(std::string& k, const T& v) {
  put(k, v.fields());
}

template <class T>
void put(std::string& k, const std::complex<T>& v) {
  put(k, std::make_pair(v.real(), v.imag()));
}
template <class T>
void put(std::string& k, const std::vector<T>& v) {
  k += '[';
  for (const T& x : v) {
    put(k, x);
    k += ',';
  }
  k += ']';
}
template <class T, size_t N>
void put(std::string& k, const std::array<T, N>& v) {
  k += '[';
  for (const T& x : v) {
    put(k, x);
    k += ',';
  }
  k += ']';
}
template <class T>
void put(std::string& k, const std::optional<T>& v) {
  if (!v) {
    k += '-';
    return;
  }
  k += '?';
  put(k, *v);
}
template <class... T>
void put(std::string& k, const std::tuple<T...>& v) {
  k += '{';
  std::apply([&](const auto&... x) { ((put(k, x), k += ','), ...); }, v);
  k += '}';
}
template <class A, class B>
void put(std::string& k, const std::pair<A, B>& v) {
  put(k, std::tie(v.first, v.second));
}

}  // namespace key_encoding

class Key {
 public:
  Key() = default;
  // A name alone (a leaf, a placeholder, the start of a composite key).
  explicit Key(std::string_view name) : text_(name) {}

  // An op's key: its name, then its attributes in parentheses, each followed
  // by a comma (no attributes: the name alone).
  template <class... A>
  static Key op(std::string_view name, const A&... attrs) {
    Key k;
    k.add_op(name, attrs...);
    return k;
  }
  // Appends an op's key (as op() builds it) to this one.
  template <class... A>
  Key& add_op(std::string_view name, const A&... attrs) {
    text_.append(name);
    if constexpr (sizeof...(A) > 0) {
      text_ += '(';
      ((key_encoding::put(text_, attrs), text_ += ','), ...);
      text_ += ')';
    }
    return *this;
  }

  // Appends a value in the key encoding.
  template <class T>
  Key& add(const T& v) {
    key_encoding::put(text_, v);
    return *this;
  }
  // Appends a separator between parts as it is.
  Key& mark(char c) {
    text_ += c;
    return *this;
  }
  // Appends another key whole (a node's key inside its program's).
  Key& append(const Key& k) {
    text_ += k.text_;
    return *this;
  }
  void reserve(size_t n) { text_.reserve(n); }

  // The text: what the compile cache and the disk cache are keyed by.
  const std::string& str() const { return text_; }
  bool empty() const { return text_.empty(); }
  bool operator==(const Key& o) const { return text_ == o.text_; }
  bool operator!=(const Key& o) const { return text_ != o.text_; }
  bool operator<(const Key& o) const { return text_ < o.text_; }

 private:
  std::string text_;
};

}  // namespace engine
