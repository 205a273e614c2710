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

Response ErrorResponse(const Error& error) {
  return JsonResponse(HttpStatus(error.code), ErrorJson(error));
}

// The body as JSON, whatever its Content-Type claims (codec.h); without a bearer header no
// browser form can reach here.
Result<Json> ParseBody(const Request& req) { return ParseRequestBody(req.body); }

// A query parameter as an integer within [min, max], or `fallback` when absent.
Result<int64_t> QueryInt(const Request& req, const char* name, int64_t fallback, int64_t min,
                         int64_t max) {
  const std::string* text = req.Param(name);
  if (text == nullptr) return fallback;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min || value > max) {
    return FailInput(name, "must be an integer from " + std::to_string(min) + " to " +
                               std::to_string(max) + " (got \"" + *text + "\")");
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
  Response res = ErrorResponse(Error{ErrorCode::kUnauthenticated, "Authorization",
                                     given ? "unknown bearer token" : "missing bearer token"});
  res.headers.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

Error NoSuchRoute(const Request& req) {
  return Error{ErrorCode::kNotFound, "", "no such route: " + req.method + " " + req.path};
}

}  // namespace

int HttpStatus(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput:
    case ErrorCode::kInfeasible:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kIo:
    case ErrorCode::kInternal:
      return 500;
    case ErrorCode::kUnavailable:
      return 503;
  }
  return 500;
}

// A route: a method and a path (exact, or a prefix and suffix around an id), its name in metrics
// and logs, and what answers it.
struct HttpServer::Route {
  enum class Kind { kExact, kId, kUnder };
  std::string method;
  Kind kind = Kind::kExact;
  std::string prefix;  // the whole path for kExact
  std::string suffix;  // after the id (kId)
  std::string name;
  std::function<Result<Response>(const Principal&, const Request&, const std::string& id)> fn;
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

namespace {

using RouteFn =
    std::function<Result<Response>(const Principal&, const Request&, const std::string&)>;
using JsonFn = std::function<Result<Json>(const Principal&, const Request&, const std::string&)>;

// A route answering JSON with `ok_status` on success.
RouteFn JsonRoute(int ok_status, JsonFn fn) {
  return [ok_status, fn = std::move(fn)](const Principal& who, const Request& req,
                                         const std::string& id) -> Result<Response> {
    Result<Json> result = fn(who, req, id);
    if (!result) return Fail(std::move(result.error()));
    return JsonResponse(ok_status, *result);
  };
}

// A path under /v1/jobs/ or /v1/services/ whose id is not a valid id: 400 naming it (after
// authentication, as any API route), rather than "no such route".
Result<Response> BadId(const Principal&, const Request& req, const std::string& rest) {
  std::string got = rest;
  if (IsSafeId(got.substr(0, got.find('/')), kMaxIdLength)) {
    // The id is fine; the method or the rest of the path is not a route.
    return Fail(NoSuchRoute(req));
  }
  if (got.size() > 40) got = got.substr(0, 40) + "...";
  return FailInput("id",
                   "must be 1 to 128 letters, digits, '.', '_', '-' or ':' (got \"" + got + "\")");
}

}  // namespace

namespace api {

Result<Json> SubmitJob(Engine& engine, const Principal& who, const Json& body) {
  ORDO_ASSIGN_OR_RETURN(JobBody job, ReadJobBody(body, engine.config(), JobReadOptions()));
  return engine.SubmitJob(who, std::move(job));
}

Result<Json> PutService(Engine& engine, const Principal& who, const Json& body,
                        std::optional<std::string_view> path_id, bool create) {
  ORDO_RETURN_IF_ERROR(engine.Permit(who, Engine::AdminAction::kChangeServices));
  ORDO_ASSIGN_OR_RETURN(ServiceBody service, ReadServiceBody(body, engine.config(), path_id));
  return engine.PutService(who, std::move(service), create);
}

Result<Json> PostTraffic(Engine& engine, const Principal& who, std::string_view id,
                         const Json& body) {
  ORDO_RETURN_IF_ERROR(engine.Permit(who, Engine::AdminAction::kPostTraffic));
  ORDO_ASSIGN_OR_RETURN(TrafficBody traffic, ReadTrafficBody(body));
  return engine.PostTraffic(who, id, std::move(traffic));
}

Result<Json> WhatIf(Engine& engine, const Principal& who, const Json& body,
                    std::chrono::steady_clock::time_point received) {
  if (WhatIfChangesServices(body)) {
    ORDO_RETURN_IF_ERROR(engine.Permit(who, Engine::AdminAction::kWhatIfServices));
  }
  ORDO_ASSIGN_OR_RETURN(
      WhatIfRequest request,
      ReadWhatIfBody(body, engine.config(), JobReadOptions(),
                     engine.options().max_whatif_time_limit_s, engine.stopping()));
  request.received = received;
  return engine.WhatIf(who, std::move(request));
}

Result<Json> Advance(Engine& engine, const Principal& who, const Json& body) {
  ORDO_ASSIGN_OR_RETURN(const int steps, ReadAdvanceBody(body, engine.options().max_advance_steps));
  return engine.Advance(who, steps);
}

}  // namespace api

void HttpServer::AddRoute(Route route) { routes_.push_back(std::move(route)); }

// Each route reads its input (the body through codec.h, the query here) and hands the engine a
// typed request; permission for an admin-only route is asked before its body is read.
void HttpServer::AddJobRoutes() {
  Engine* e = &engine_;
  using Kind = Route::Kind;
  using Id = const std::string&;
  AddRoute({"POST", Kind::kExact, "/v1/jobs", "", "/v1/jobs",
            JsonRoute(201, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(Json body, ParseBody(req));
              return api::SubmitJob(*e, who, body);
            })});
  AddRoute({"GET", Kind::kExact, "/v1/jobs", "", "/v1/jobs",
            JsonRoute(200, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
              JobFilter filter;
              if (const std::string* state = req.Param("state")) {
                filter.state = ParseJobState(*state);
                if (!filter.state) {
                  return FailInput("state", "must be pending, running, done or cancelled");
                }
              }
              ORDO_ASSIGN_OR_RETURN(const int64_t limit, QueryInt(req, "limit", 1000, 1, 10'000));
              filter.limit = static_cast<size_t>(limit);
              ORDO_ASSIGN_OR_RETURN(filter.after_seq, QueryInt(req, "cursor", 0, 0, INT64_MAX));
              return e->ListJobs(who, filter);
            })});
  AddRoute({"GET", Kind::kId, "/v1/jobs/", "", "/v1/jobs/{id}",
            JsonRoute(200, [e](const Principal& who, const Request&, Id id) {
              return e->GetJob(who, id);
            })});
  AddRoute({"DELETE", Kind::kId, "/v1/jobs/", "", "/v1/jobs/{id}",
            JsonRoute(200, [e](const Principal& who, const Request&, Id id) {
              return e->CancelJob(who, id);
            })});
}

void HttpServer::AddServiceRoutes() {
  Engine* e = &engine_;
  using Kind = Route::Kind;
  using Id = const std::string&;
  AddRoute({"POST", Kind::kExact, "/v1/services", "", "/v1/services",
            JsonRoute(201, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(Json body, ParseBody(req));
              return api::PutService(*e, who, body, std::nullopt, /*create=*/true);
            })});
  AddRoute({"GET", Kind::kExact, "/v1/services", "", "/v1/services",
            JsonRoute(200, [e](const Principal& who, const Request&, Id) {
              return e->ListServices(who);
            })});
  AddRoute({"GET", Kind::kId, "/v1/services/", "", "/v1/services/{id}",
            JsonRoute(200, [e](const Principal& who, const Request&, Id id) {
              return e->GetService(who, id);
            })});
  AddRoute({"PUT", Kind::kId, "/v1/services/", "", "/v1/services/{id}",
            JsonRoute(200, [e](const Principal& who, const Request& req, Id id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(Json body, ParseBody(req));
              return api::PutService(*e, who, body, id, /*create=*/false);
            })});
  AddRoute({"POST", Kind::kId, "/v1/services/", "/traffic", "/v1/services/{id}/traffic",
            JsonRoute(200, [e](const Principal& who, const Request& req, Id id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(Json body, ParseBody(req));
              return api::PostTraffic(*e, who, id, body);
            })});
}

void HttpServer::AddPlanRoutes() {
  Engine* e = &engine_;
  using Kind = Route::Kind;
  using Id = const std::string&;
  AddRoute(
      {"GET", Kind::kExact, "/v1/plan", "", "/v1/plan",
       JsonRoute(200, [e](const Principal& who, const Request&, Id) { return e->PlanJson(who); })});
  AddRoute({"GET", Kind::kExact, "/v1/plan/committed", "", "/v1/plan/committed",
            JsonRoute(200, [e](const Principal& who, const Request&, Id) {
              return e->CommittedJson(who);
            })});
  AddRoute(
      {"GET", Kind::kExact, "/v1/plan/history", "", "/v1/plan/history",
       JsonRoute(200, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
         ORDO_ASSIGN_OR_RETURN(const int64_t to, QueryInt(req, "to", e->NextStep(), 0, INT64_MAX));
         ORDO_ASSIGN_OR_RETURN(const int64_t from,
                               QueryInt(req, "from", std::max<int64_t>(0, to - 24), 0, INT64_MAX));
         return e->HistoryJson(who, from, to);
       })});
  AddRoute({"POST", Kind::kExact, "/v1/whatif", "", "/v1/whatif",
            JsonRoute(200, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(Json body, ParseBody(req));
              return api::WhatIf(*e, who, body, req.received);
            })});
  AddRoute({"POST", Kind::kExact, "/v1/clock/advance", "", "/v1/clock/advance",
            JsonRoute(200, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(Json body, ParseBody(req));
              return api::Advance(*e, who, body);
            })});
  AddRoute({"GET", Kind::kExact, "/v1/dashboard", "", "/v1/dashboard",
            JsonRoute(200, [e](const Principal& who, const Request& req, Id) -> Result<Json> {
              ORDO_ASSIGN_OR_RETURN(
                  const int64_t history,
                  QueryInt(req, "history", 48, 0, static_cast<int64_t>(kRecentSteps)));
              return e->DashboardJson(who, static_cast<int>(history));
            })});
}

HttpServer::HttpServer(Engine& engine, Logger& log, HttpOptions options)
    : engine_(engine), log_(log), options_(std::move(options)) {
  Engine* e = &engine_;
  using Kind = Route::Kind;
  AddRoute(
      {"GET", Kind::kExact, "/v1/health", "", "/v1/health",
       JsonRoute(200, [e](const Principal&, const Request&, const std::string&) -> Result<Json> {
         return e->HealthJson();
       })});
  // Metrics are text, not JSON, with the same authentication.
  AddRoute({"GET", Kind::kExact, "/metrics", "", "/metrics",
            [e](const Principal& who, const Request&, const std::string&) -> Result<Response> {
              ORDO_RETURN_IF_ERROR(e->Permit(who, Engine::AdminAction::kReadMetrics));
              Response res;
              res.content_type = "text/plain; version=0.0.4; charset=utf-8";
              res.body = e->MetricsText();
              return res;
            }});
  AddJobRoutes();
  AddServiceRoutes();
  AddPlanRoutes();
  // Listed after the routes above, so only what they did not match arrives here.
  for (const char* prefix : {"/v1/jobs/", "/v1/services/"}) {
    for (const char* method : {"GET", "DELETE", "PUT", "POST"}) {
      AddRoute({method, Kind::kUnder, prefix, "", std::string(prefix) + "{id}", BadId});
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
    return ErrorResponse(NoSuchRoute(head));
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
  Result<Response> result = [&]() -> Result<Response> {
    try {
      return match.route->fn(*principal, request, match.id);
    } catch (const std::exception& ex) {
      return Fail(Error{ErrorCode::kInternal, "", std::string("internal error: ") + ex.what()});
    }
  }();
  Response res = result ? std::move(*result) : ErrorResponse(result.error());
  const double seconds = SecondsSince(start);
  Record(request, match.route->name, principal->name, res.status, seconds);
  return res;
}

Response HttpServer::Refuse(int status, std::string_view field, std::string_view message) {
  engine_.http_requests().Inc(
      Labels({{"route", "other"}, {"method", "-"}, {"code", std::to_string(status)}}));
  // The transport's refusals (framing, limits, deadlines) come with their status.
  return JsonResponse(status, ErrorJson(InvalidInput(std::string(field), std::string(message))));
}

Result<int> HttpServer::Bind() { return server_->Bind(options_.host, options_.port); }

void HttpServer::Run() { server_->Run(); }

void HttpServer::Stop() { server_->Stop(); }

bool HttpServer::WaitIdle(double timeout_s) { return server_->WaitIdle(timeout_s); }

}  // namespace ordo::service
