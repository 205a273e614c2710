// Errors as the HTTP API reports them: a status and `{"error": {"field", "message"}}`.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>

#include "ordo/core/error.h"

namespace ordo::service {

struct ApiError {
  int status = 500;
  Error error;
};

template <typename T>
using ApiResult = tl::expected<T, ApiError>;

inline tl::unexpected<ApiError> ApiFail(int status, std::string field, std::string message) {
  return tl::unexpected<ApiError>(
      ApiError{status, Error{status == 400 ? ErrorCode::kInvalidInput : ErrorCode::kInternal,
                             std::move(field), std::move(message)}});
}

/// The HTTP status of an error code: invalid input 400, not found 404, unavailable 503, else 500.
/// The one mapping of codes to statuses (tests/unit/service/http_test.cc covers every code).
inline int HttpStatus(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput:
    case ErrorCode::kInfeasible:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kIo:
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

inline int StatusFor(const Error& error) { return HttpStatus(error.code); }

inline tl::unexpected<ApiError> ApiFail(Error error) {
  const int status = StatusFor(error);
  return tl::unexpected<ApiError>(ApiError{status, std::move(error)});
}

}  // namespace ordo::service
