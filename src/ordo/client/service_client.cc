#include "ordo/client/service_client.h"

namespace ordo::client {
namespace {

std::string ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not found";
    case 409:
      return "conflict";
    case 413:
      return "request too large";
    case 429:
      return "too many requests";
    case 500:
      return "internal server error";
    case 503:
      return "unavailable";
    default:
      return "HTTP " + std::to_string(status);
  }
}

}  // namespace

std::string RefusalMessage(const Reply& reply) {
  std::string out = std::to_string(reply.status) + " " + ReasonPhrase(reply.status);
  const nlohmann::json* error = nullptr;
  if (reply.json.is_object() && reply.json.contains("error") && reply.json["error"].is_object()) {
    error = &reply.json["error"];
  }
  if (error == nullptr) return out;
  const auto text = [&](const char* key) {
    return error->contains(key) && (*error)[key].is_string() ? (*error)[key].get<std::string>()
                                                             : std::string();
  };
  const std::string field = text("field"), message = text("message");
  if (!field.empty()) out += ": " + field;
  if (!message.empty()) out += ": " + message;
  return out;
}

std::string EncodePathSegment(const std::string& id) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : id) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '~' || c == '-';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<Reply> ServiceClient::Call(const std::string& method, const std::string& target,
                                  const std::string& body) const {
  Result<HttpReply> http =
      HttpExchange(connection_.server, {method, target, connection_.token, body}, timeout_s_);
  if (!http) return tl::unexpected(http.error());
  Reply reply;
  reply.status = http->status;
  reply.json = nlohmann::json::parse(http->body, nullptr, false);
  reply.body = std::move(http->body);
  if (reply.json.is_discarded()) {
    // Some refusals (a proxy's, a 413 sent before the body is read) carry no JSON: the status
    // says enough. A success without JSON is not ordo answering.
    if (reply.ok()) {
      return Fail(Error{ErrorCode::kInternal, "",
                        connection_.server.Url() + " answered " + method + " " + target +
                            " with something that is not JSON: is it ordo serve?"});
    }
    reply.json = nullptr;
  }
  return reply;
}

Result<Reply> ServiceClient::Submit(const nlohmann::json& job) const {
  return Call("POST", "/v1/jobs", job.dump());
}

Result<Reply> ServiceClient::ListJobs(const std::optional<std::string>& state) const {
  nlohmann::json all = nlohmann::json::array();
  std::optional<int64_t> cursor;
  // A page is at most 10,000 jobs and the queue at most 100,000: the bound only guards against
  // a server that keeps answering the same cursor.
  for (int page = 0; page < 1000; ++page) {
    std::string target = "/v1/jobs?limit=10000";
    if (state) target += "&state=" + EncodePathSegment(*state);
    if (cursor) target += "&cursor=" + std::to_string(*cursor);
    Result<Reply> reply = Call("GET", target, "");
    if (!reply || !reply->ok()) return reply;
    const nlohmann::json& body = reply->json;
    if (!body.is_object()) break;
    if (auto jobs = body.find("jobs"); jobs != body.end() && jobs->is_array()) {
      all.insert(all.end(), jobs->begin(), jobs->end());
    }
    auto next = body.find("next_cursor");
    if (next == body.end() || !next->is_number_integer()) break;
    cursor = next->get<int64_t>();
  }
  Reply merged{200, {{"jobs", std::move(all)}, {"next_cursor", nullptr}}, ""};
  merged.body = merged.json.dump();
  return merged;
}

Result<Reply> ServiceClient::Job(const std::string& id) const {
  return Call("GET", "/v1/jobs/" + EncodePathSegment(id), "");
}

Result<Reply> ServiceClient::Cancel(const std::string& id) const {
  return Call("DELETE", "/v1/jobs/" + EncodePathSegment(id), "");
}

Result<Reply> ServiceClient::Plan() const { return Call("GET", "/v1/plan", ""); }

Result<Reply> ServiceClient::Advance(int steps) const {
  return Call("POST", "/v1/clock/advance", nlohmann::json{{"steps", steps}}.dump());
}

}  // namespace ordo::client
