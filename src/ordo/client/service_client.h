// The REST calls of `ordo serve` (docs/openapi.yaml) that the client commands make. Every answer
// the server gives is a Reply (its status decides); an Error means no answer (code kIo: cannot
// reach the server) or an answer that is not JSON where JSON was due (kInternal).
//
//   ServiceClient service(connection);
//   Result<Reply> reply = service.Submit({{"kind", "training"}, {"priority", 5}, ...});
//   if (reply && reply->ok()) std::cout << reply->json["id"];
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ordo/client/connection.h"
#include "ordo/core/error.h"

namespace ordo::client {

struct Reply {
  int status = 0;
  nlohmann::json json;  // the body, parsed
  std::string body;     // the body as it came (what --json prints)

  [[nodiscard]] bool ok() const { return status >= 200 && status < 300; }
};

/// What the server said when it said no: "STATUS: FIELD: MESSAGE" from its
/// `{"error": {"field", "message"}}`, or the status and its reason phrase when the body has none.
[[nodiscard]] std::string RefusalMessage(const Reply& reply);

class ServiceClient {
 public:
  explicit ServiceClient(Connection connection, double timeout_s = 30)
      : connection_(std::move(connection)), timeout_s_(timeout_s) {}

  /// POST /v1/jobs.
  [[nodiscard]] Result<Reply> Submit(const nlohmann::json& job) const;
  /// GET /v1/jobs[?state=], every page (next_cursor followed): {"jobs": [...], "next_cursor":
  /// null}. A refused page is returned as it is.
  [[nodiscard]] Result<Reply> ListJobs(const std::optional<std::string>& state) const;
  /// GET /v1/jobs/{id}.
  [[nodiscard]] Result<Reply> Job(const std::string& id) const;
  /// DELETE /v1/jobs/{id}.
  [[nodiscard]] Result<Reply> Cancel(const std::string& id) const;
  /// GET /v1/plan.
  [[nodiscard]] Result<Reply> Plan() const;
  /// POST /v1/clock/advance {"steps": steps}.
  [[nodiscard]] Result<Reply> Advance(int steps) const;

  [[nodiscard]] const Connection& connection() const { return connection_; }

 private:
  [[nodiscard]] Result<Reply> Call(const std::string& method, const std::string& target,
                                   const std::string& body) const;

  Connection connection_;
  double timeout_s_;
};

/// `id` for a path segment: every byte outside [A-Za-z0-9._~-] percent-encoded.
[[nodiscard]] std::string EncodePathSegment(const std::string& id);

}  // namespace ordo::client
