// Error values for every fallible call across module APIs (no exceptions cross them).
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace ordo {

/// What kind of failure an Error reports. Stored and sent over the wire: values only grow at the
/// end.
enum class ErrorCode : int {
  kInvalidInput = 1,        // a file, request or command line broke the formats or rules
  kIo = 2,                  // a file or socket could not be read or written
  kNotFound = 3,            // a named thing (policy, job, file) does not exist
  kInfeasible = 4,          // the input admits no legal plan
  kInternal = 5,            // a bug or an unexpected library failure, caught at an edge
  kUnavailable = 6,         // not available now: a capability not built in, a service shutting down
  kConflict = 7,            // the request contradicts the state: an id in use, a job already done
  kPermissionDenied = 8,    // the caller is known but may not do this (a tenant, not the admin)
  kUnauthenticated = 9,     // the caller is not known: no credentials, or unknown ones
  kResourceExhausted = 10,  // a limit on load: a full queue, too many what-ifs at once
};

/// A failure: a code, the field it concerns (a path such as `jobs[3].gpus`, empty when none) and a
/// message for a person.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string field;
  std::string message;

  /// "jobs[3].gpus: must be a power of two (got 3)" — or the bare message when there is no field.
  [[nodiscard]] std::string ToString() const {
    return field.empty() ? message : field + ": " + message;
  }
};

inline Error InvalidInput(std::string field, std::string message) {
  return Error{ErrorCode::kInvalidInput, std::move(field), std::move(message)};
}

template <typename T>
using Result = tl::expected<T, Error>;

/// Shorthand for returning an error from a function that returns Result<T>.
inline tl::unexpected<Error> Fail(Error error) { return tl::unexpected<Error>(std::move(error)); }
inline tl::unexpected<Error> FailInput(std::string field, std::string message) {
  return Fail(InvalidInput(std::move(field), std::move(message)));
}

}  // namespace ordo

// ORDO_ASSIGN_OR_RETURN(lhs, expr): evaluates a Result-returning expr; on error returns the error
// from the enclosing function (which returns some Result<T>), else moves the value into lhs (a
// declaration or an existing variable). ORDO_RETURN_IF_ERROR(expr) does the same for Result<void>.
// Readers check dozens of fields; these keep each check to one line.
#define ORDO_CONCAT_INNER_(a, b) a##b
#define ORDO_CONCAT_(a, b) ORDO_CONCAT_INNER_(a, b)
// NOLINTBEGIN(bugprone-macro-parentheses): `lhs` may be a declaration, `tmp` a name.
#define ORDO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp) return ::ordo::Fail(tmp.error());       \
  lhs = std::move(*(tmp))
// NOLINTEND(bugprone-macro-parentheses)
#define ORDO_ASSIGN_OR_RETURN(lhs, ...) \
  ORDO_ASSIGN_OR_RETURN_IMPL_(ORDO_CONCAT_(ordo_result_, __LINE__), lhs, (__VA_ARGS__))
#define ORDO_RETURN_IF_ERROR(...)                           \
  do {                                                      \
    if (auto ordo_status_ = (__VA_ARGS__); !ordo_status_) { \
      return ::ordo::Fail(ordo_status_.error());            \
    }                                                       \
  } while (false)
