// The one error shape of the library: an operation either gives its value or
// an Error that says, in words a user can act on, why it could not. `errnum`
// keeps the errno when a system call failed, so a caller can tell "gone"
// (ESRCH) from "not allowed" (EPERM) without parsing the text.
//
// Expected<T> holds a T or an Error; Status (Expected<void>) holds nothing or
// an Error. Both are [[nodiscard]]: an ignored failure is a compile warning.
// A parser that reports every problem at once names its own error type, the
// second parameter (the scenario parser's Expected<Scenario, Diagnostics>).
#pragma once

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace aftermath {

struct Error {
  std::string what;  // one sentence, no trailing period
  int errnum = 0;    // the errno of a failed system call, else 0
};

// An Error for a failed system call: "WHAT: strerror(errnum)".
inline Error sys_error(std::string what, int errnum = errno) {
  return Error{std::move(what) + ": " + std::strerror(errnum), errnum};
}

template <typename T, typename E = Error>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Expected(E error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition for value(), * and ->: ok(). For error(): !ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(v_); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }
  // The value as an optional, the error dropped (for callers that only ask "is there one").
  std::optional<T> as_optional() const& { return ok() ? std::optional<T>(value()) : std::nullopt; }

 private:
  std::variant<T, E> v_;
};

template <typename E>
class [[nodiscard]] Expected<void, E> {
 public:
  Expected() = default;
  Expected(E error) : error_(std::move(error)) {}

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  const E& error() const { return *error_; }

 private:
  std::optional<E> error_;
};

using Status = Expected<void>;

}  // namespace aftermath
