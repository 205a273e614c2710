#include "ordo/service/api.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>

#include "ordo/io/document.h"
#include "ordo/io/json_fields.h"
#include "ordo/service/codec.h"
#include "ordo/service/web/assets.h"

namespace ordo::service {
namespace {

using Json = nlohmann::json;
using http::Request;
using http::Response;

constexpr const char* kJson = "application/json";
// What the dashboard may load: only this server, no inline script (the assets are files).
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

Response JsonResponse(int status, const Json& body) {
  Response res;
  res.status = status;
  res.content_type = kJson;
  res.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return res;
}

Response ErrorResponse(int status, const Error& error) {
  return JsonResponse(status, ErrorJson(error));
}

// The body as JSON. The Content-Type is not checked (curl -d sends form encoding): the body must
// parse as JSON whatever it claims, and without a bearer header no browser form can reach here.
ApiResult<Json> ParseBody(const Request& req) {
  if (req.body.empty()) return ApiFail(400, "", "the body must be a JSON object");
  auto doc = io::ParseDocument(req.body, false);
  if (!doc) return ApiFail(400, doc.error().field, "invalid JSON: " + doc.error().message);
  return std::move(*doc);
}

// A query parameter as an integer within [min, max], or `fallback` when absent.
ApiResult<int64_t> QueryInt(const Request& req, const char* name, int64_t fallback, int64_t min,
                            int64_t max) {
  const std::string* text = req.Param(name);
  if (text == nullptr) return fallback;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min || value > max) {
    return ApiFail(400, name,
                   "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                       " (got \"" + *text + "\")");
  }
  return value;
}

// The static files of the dashboard: public, they hold no data.
std::optional<Response> Asset(const std::string& path) {
  std::string_view body;
  const char* type = nullptr;
  if (path == "/" || path == "/index.html") {
    body = web::IndexHtml();
    type = "text/html; charset=utf-8";
  } else if (path == "/assets/dashboard.js") {
    body = web::DashboardJs();
    type = "text/javascript; charset=utf-8";
  } else if (path == "/assets/dashboard.css") {
    body = web::DashboardCss();
    type = "text/css; charset=utf-8";
  } else {
    return std::nullopt;
  }
  Response res;
  res.content_type = type;
  res.body = std::string(body);
  res.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  return res;
}

// 401 with the challenge; `given`: a bearer token was sent but matches no principal.
Response Unauthorized(bool given) {
  Response res = ErrorResponse(401, Error{ErrorCode::kInvalidInput, "Authorization",
                                          given ? "unknown bearer token" : "missing bearer token"});
  res.headers.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

}  // namespace

// A route: a method and a path (exact, or a prefix and suffix around an id), its name in metrics
// and logs, and what answers it.
struct HttpServer::Route {
  enum class Kind { kExact, kId, kUnder };
  std::string method;
  Kind kind = Kind::kExact;
  std::string prefix;  // the whole path for kExact
  std::string suffix;  // after the id (kId)
  std::string name;
  std::function<ApiResult<Response>(const Principal&, const Request&, const std::string& id)> fn;
};

struct HttpServer::Match {
  const Route* route = nullptr;
  std::string id;
};

HttpServer::Match HttpServer::Find(const Request& request) const {
  const std::string& path = request.path;
  for (const Route& route : routes_) {
    if (route.method != request.method) continue;
    switch (route.kind) {
      case Route::Kind::kExact:
        if (path == route.prefix) return {&route, {}};
        break;
      case Route::Kind::kId: {
        if (path.size() <= route.prefix.size() + route.suffix.size() ||
            path.compare(0, route.prefix.size(), route.prefix) != 0 ||
            path.compare(path.size() - route.suffix.size(), route.suffix.size(), route.suffix) !=
                0) {
          break;
        }
        std::string id = path.substr(route.prefix.size(),
                                     path.size() - route.prefix.size() - route.suffix.size());
        if (IsSafeId(id, kMaxIdLength)) return {&route, std::move(id)};
        // A job may be named by its qualified id `tenant/id` (state.h), as the admin sees it.
        if (const size_t cut = id.find('/'); route.prefix == "/v1/jobs/" &&
                                             cut != std::string::npos &&
                                             IsSafeId(id.substr(0, cut), kMaxIdLength) &&
                                             IsSafeId(id.substr(cut + 1), kMaxIdLength)) {
          return {&route, std::move(id)};
        }
        break;
      }
      case Route::Kind::kUnder:
        if (path.size() >= route.prefix.size() &&
            path.compare(0, route.prefix.size(), route.prefix) == 0) {
          return {&route, path.substr(route.prefix.size())};
        }
        break;
    }
  }
  return {};
}

Result<std::pair<std::string, int>> ParseListen(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return FailInput("--listen",
                     "must be ADDR:PORT, such as 127.0.0.1:8080 (got \"" + text + "\")");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = text.substr(colon + 1);
  int port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    return FailInput("--listen", "the port must be 0..65535 (got \"" + port_text + "\")");
  }
  return std::make_pair(host, port);
}

HttpServer::HttpServer(Engine& engine, Logger& log, HttpOptions options)
    : engine_(engine), log_(log), options_(std::move(options)) {
  Engine* e = &engine_;
  using Kind = Route::Kind;
  // A route answering JSON with `ok_status` on success.
  auto json = [](int ok_status, auto fn) {
    return [ok_status, fn = std::move(fn)](const Principal& who, const Request& req,
                                           const std::string& id) -> ApiResult<Response> {
      ApiResult<Json> result = fn(who, req, id);
      if (!result) return tl::unexpected(std::move(result.error()));
      return JsonResponse(ok_status, *result);
    };
  };
  auto add = [this](std::string method, Kind kind, std::string prefix, std::string suffix,
                    std::string name, auto fn) {
    routes_.push_back(Route{std::move(method), kind, std::move(prefix), std::move(suffix),
                            std::move(name), std::move(fn)});
  };
  using Id = const std::string&;

  add("GET", Kind::kExact, "/v1/health", "", "/v1/health",
      json(200, [e](const Principal&, const Request&, Id) -> ApiResult<Json> {
        return e->HealthJson();
      }));
  // Metrics are text, not JSON, with the same authentication.
  add("GET", Kind::kExact, "/metrics", "", "/metrics",
      [e](const Principal& who, const Request&, Id) -> ApiResult<Response> {
        if (!who.admin) return ApiFail(403, "", "metrics cover every tenant: use the admin token");
        Response res;
        res.content_type = "text/plain; version=0.0.4; charset=utf-8";
        res.body = e->MetricsText();
        return res;
      });
  add("POST", Kind::kExact, "/v1/jobs", "", "/v1/jobs",
      json(201, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        auto body = ParseBody(req);
        if (!body) return body;
        return e->SubmitJob(who, *body);
      }));
  add("GET", Kind::kExact, "/v1/jobs", "", "/v1/jobs",
      json(200, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        JobFilter filter;
        if (const std::string* state = req.Param("state")) {
          filter.state = ParseJobState(*state);
          if (!filter.state) {
            return ApiFail(400, "state", "must be pending, running, done or cancelled");
          }
        }
        auto limit = QueryInt(req, "limit", 1000, 1, 10'000);
        if (!limit) return tl::unexpected(limit.error());
        filter.limit = static_cast<size_t>(*limit);
        auto cursor = QueryInt(req, "cursor", 0, 0, INT64_MAX);
        if (!cursor) return tl::unexpected(cursor.error());
        filter.after_seq = *cursor;
        return e->ListJobs(who, filter);
      }));
  add("GET", Kind::kId, "/v1/jobs/", "", "/v1/jobs/{id}",
      json(200, [e](const Principal& who, const Request&, Id id) { return e->GetJob(who, id); }));
  add("DELETE", Kind::kId, "/v1/jobs/", "", "/v1/jobs/{id}",
      json(200,
           [e](const Principal& who, const Request&, Id id) { return e->CancelJob(who, id); }));

  add("POST", Kind::kExact, "/v1/services", "", "/v1/services",
      json(201, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        auto body = ParseBody(req);
        if (!body) return body;
        return e->PutService(who, *body, std::nullopt, /*create=*/true);
      }));
  add("GET", Kind::kExact, "/v1/services", "", "/v1/services",
      json(200, [e](const Principal& who, const Request&, Id) { return e->ListServices(who); }));
  add("GET", Kind::kId, "/v1/services/", "", "/v1/services/{id}",
      json(200,
           [e](const Principal& who, const Request&, Id id) { return e->GetService(who, id); }));
  add("PUT", Kind::kId, "/v1/services/", "", "/v1/services/{id}",
      json(200, [e](const Principal& who, const Request& req, Id id) -> ApiResult<Json> {
        auto body = ParseBody(req);
        if (!body) return body;
        return e->PutService(who, *body, id, /*create=*/false);
      }));
  add("POST", Kind::kId, "/v1/services/", "/traffic", "/v1/services/{id}/traffic",
      json(200, [e](const Principal& who, const Request& req, Id id) -> ApiResult<Json> {
        auto body = ParseBody(req);
        if (!body) return body;
        return e->PostTraffic(who, id, *body);
      }));

  add("GET", Kind::kExact, "/v1/plan", "", "/v1/plan",
      json(200, [e](const Principal& who, const Request&, Id) { return e->PlanJson(who); }));
  add("GET", Kind::kExact, "/v1/plan/committed", "", "/v1/plan/committed",
      json(200, [e](const Principal& who, const Request&, Id) { return e->CommittedJson(who); }));
  add("GET", Kind::kExact, "/v1/plan/history", "", "/v1/plan/history",
      json(200, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        const int64_t next = e->NextStep();
        auto to = QueryInt(req, "to", next, 0, INT64_MAX);
        if (!to) return tl::unexpected(to.error());
        auto from = QueryInt(req, "from", std::max<int64_t>(0, *to - 24), 0, INT64_MAX);
        if (!from) return tl::unexpected(from.error());
        return e->HistoryJson(who, *from, *to);
      }));
  add("POST", Kind::kExact, "/v1/whatif", "", "/v1/whatif",
      json(200, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        auto body = ParseBody(req);
        if (!body) return body;
        return e->WhatIf(who, *body);
      }));
  add("POST", Kind::kExact, "/v1/clock/advance", "", "/v1/clock/advance",
      json(200, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        auto body = ParseBody(req);
        if (!body) return body;
        auto obj = io::internal::ObjectReader::Make(*body, "", "a clock advance");
        if (!obj) return ApiFail(obj.error());
        if (auto ok = obj->AllowOnly({"steps"}); !ok) return ApiFail(ok.error());
        auto steps = obj->Int("steps", 1, e->options().max_advance_steps);
        if (!steps) return ApiFail(steps.error());
        return e->Advance(who, static_cast<int>(*steps));
      }));
  add("GET", Kind::kExact, "/v1/dashboard", "", "/v1/dashboard",
      json(200, [e](const Principal& who, const Request& req, Id) -> ApiResult<Json> {
        auto history = QueryInt(req, "history", 48, 0, static_cast<int64_t>(kRecentSteps));
        if (!history) return tl::unexpected(history.error());
        return e->DashboardJson(who, static_cast<int>(*history));
      }));

  // A path under /v1/jobs/ or /v1/services/ whose id is not a valid id: 400 naming it (after
  // authentication, as any API route), rather than "no such route". Listed after the routes
  // above, so only what they did not match arrives here.
  auto bad_id = [](const Principal&, const Request& req, Id rest) -> ApiResult<Response> {
    std::string got = rest;
    if (IsSafeId(got.substr(0, got.find('/')), kMaxIdLength)) {
      // The id is fine; the method or the rest of the path is not a route.
      return ApiFail(404, "", "no such route: " + req.method + " " + req.path);
    }
    if (got.size() > 40) got = got.substr(0, 40) + "...";
    return ApiFail(400, "id",
                   "must be 1 to 128 letters, digits, '.', '_', '-' or ':' (got \"" + got + "\")");
  };
  for (const char* prefix : {"/v1/jobs/", "/v1/services/"}) {
    for (const char* method : {"GET", "DELETE", "PUT", "POST"}) {
      add(method, Kind::kUnder, prefix, "", std::string(prefix) + "{id}", bad_id);
    }
  }

  http::Handlers handlers;
  handlers.on_head = [this](const Request& head) { return OnHead(head); };
  handlers.handle = [this](const Request& request) { return Handle(request); };
  handlers.refuse = [this](int status, std::string_view field, std::string_view message) {
    return Refuse(status, field, message);
  };
  server_ = std::make_unique<http::Server>(options_.limits, std::move(handlers), &log_);
}

HttpServer::~HttpServer() = default;

std::optional<Principal> HttpServer::Authenticate(const Request& request) const {
  const std::string_view token = http::BearerToken(request.Header("Authorization"));
  if (token.empty()) return std::nullopt;
  return engine_.config().Authenticate(token);
}

void HttpServer::Record(const Request& req, const std::string& route, const std::string& who,
                        int status, double seconds) {
  engine_.http_requests().Inc(
      Labels({{"route", route}, {"method", req.method}, {"code", std::to_string(status)}}));
  engine_.http_latency().Observe(Labels({{"route", route}}), seconds);
  const LogLevel level = req.method == "GET" && status < 400 ? LogLevel::kDebug : LogLevel::kInfo;
  if (log_.Enabled(level)) {
    log_.Log(level, "http",
             {{"method", req.method},
              {"path", req.path},
              {"status", status},
              {"principal", who},
              {"ms", std::round(seconds * 1e6) / 1000}});
  }
}

std::optional<Response> HttpServer::OnHead(const Request& head) {
  if (head.method == "GET") {
    if (std::optional<Response> asset = Asset(head.path)) return asset;
    // Liveness and readiness for probes: public, so they carry a status word and nothing else.
    if (head.path == "/healthz") {
      Record(head, "/healthz", "-", 200, 0);
      return JsonResponse(200, {{"status", "ok"}});
    }
    if (head.path == "/readyz") {
      const bool ready = engine_.Ready();
      Record(head, "/readyz", "-", ready ? 200 : 503, 0);
      return JsonResponse(ready ? 200 : 503, {{"status", ready ? "ready" : "unavailable"}});
    }
  }
  const Match match = Find(head);
  if (match.route == nullptr) {
    engine_.http_requests().Inc(
        Labels({{"route", "other"}, {"method", head.method}, {"code", "404"}}));
    return ErrorResponse(404, InvalidInput("", "no such route: " + head.method + " " + head.path));
  }
  if (Authenticate(head)) return std::nullopt;
  // Refused before the body is read: an unauthenticated client cannot make the server read, or
  // hold, a body.
  Response res = Unauthorized(!http::BearerToken(head.Header("Authorization")).empty());
  Record(head, match.route->name, "-", res.status, 0);
  return res;
}

Response HttpServer::Handle(const Request& request) {
  const auto start = std::chrono::steady_clock::now();
  const Match match = Find(request);
  const std::optional<Principal> principal = Authenticate(request);
  if (match.route == nullptr || !principal) {
    // The transport never hands these over (OnHead answered them); a direct caller gets the same.
    std::optional<Response> early = OnHead(request);
    return early ? std::move(*early) : Unauthorized(false);
  }
  ApiResult<Response> result = [&]() -> ApiResult<Response> {
    try {
      return match.route->fn(*principal, request, match.id);
    } catch (const std::exception& ex) {
      return ApiFail(500, "", std::string("internal error: ") + ex.what());
    }
  }();
  Response res =
      result ? std::move(*result) : ErrorResponse(result.error().status, result.error().error);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Record(request, match.route->name, principal->name, res.status, seconds);
  return res;
}

Response HttpServer::Refuse(int status, std::string_view field, std::string_view message) {
  engine_.http_requests().Inc(
      Labels({{"route", "other"}, {"method", "-"}, {"code", std::to_string(status)}}));
  return ErrorResponse(status, InvalidInput(std::string(field), std::string(message)));
}

Result<int> HttpServer::Bind() { return server_->Bind(options_.host, options_.port); }

void HttpServer::Run() { server_->Run(); }

void HttpServer::Stop() { server_->Stop(); }

bool HttpServer::WaitIdle(double timeout_s) { return server_->WaitIdle(timeout_s); }

}  // namespace ordo::service
