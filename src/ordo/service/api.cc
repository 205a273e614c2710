#include "ordo/service/api.h"

#include <httplib.h>

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
using httplib::Request;
using httplib::Response;

constexpr const char* kJson = "application/json";
// What the dashboard may load: only this server, no inline script (the assets are files).
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

using RouteFn = std::function<ApiResult<Json>(const Principal&, const Request&)>;

void WriteJson(Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), kJson);
}

std::optional<std::string> BearerToken(const Request& req) {
  if (!req.has_header("Authorization")) return std::nullopt;
  const std::string value = req.get_header_value("Authorization");
  constexpr std::string_view kPrefix = "Bearer ";
  if (value.size() <= kPrefix.size() || value.compare(0, kPrefix.size(), kPrefix) != 0) {
    return std::nullopt;
  }
  return value.substr(kPrefix.size());
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
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return ApiFail(400, name,
                   "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                       " (got \"" + text + "\")");
  }
  return value;
}

}  // namespace

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
    : engine_(engine),
      log_(log),
      options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  const int threads = std::max(1, options_.threads);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(options_.max_body_bytes);
  // Without TCP_NODELAY a response written in two pieces (headers, then body) waits for the
  // client's delayed ACK of the first: ~40 ms per request on Linux, whatever the work took.
  server_->set_tcp_nodelay(true);
  server_->set_keep_alive_max_count(100'000);
  // An idle keep-alive connection holds a handler thread until this timeout, and shutdown waits
  // for the handlers: 5 s bounds how long SIGTERM can take.
  server_->set_keep_alive_timeout(5);
  server_->set_read_timeout(30);
  server_->set_write_timeout(30);
  server_->set_default_headers(
      {{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}});
  Routes();
}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind() {
  int port = options_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
    if (port < 0) {
      return Fail(Error{ErrorCode::kIo, "--listen", "cannot listen on " + options_.host});
    }
  } else if (!server_->bind_to_port(options_.host, port)) {
    return Fail(Error{ErrorCode::kIo, "--listen",
                      "cannot listen on " + options_.host + ":" + std::to_string(port) +
                          " (in use, or not an address of this host)"});
  }
  return port;
}

void HttpServer::Run() { server_->listen_after_bind(); }

void HttpServer::Stop() {
  if (server_ && server_->is_running()) server_->stop();
}

void HttpServer::Routes() {
  httplib::Server& s = *server_;
  Engine* engine = &engine_;  // captured by value: the routes outlive this function

  // The caller's principal from its bearer token; without one, the 401 is already written.
  auto authenticate = [this](const Request& req, Response& res) -> std::optional<Principal> {
    const std::optional<std::string> token = BearerToken(req);
    std::optional<Principal> principal =
        token ? engine_.config().Authenticate(*token) : std::nullopt;
    if (!principal) {
      res.set_header("WWW-Authenticate", "Bearer");
      WriteJson(res, 401,
                ErrorJson(Error{ErrorCode::kInvalidInput, "Authorization",
                                token ? "unknown bearer token" : "missing bearer token"}));
    }
    return principal;
  };

  // Every API route: authenticate, run, answer JSON, count and log.
  auto api = [this, authenticate](std::string route, int ok_status,
                                  RouteFn fn) -> httplib::Server::Handler {
    return [this, authenticate, route = std::move(route), ok_status, fn = std::move(fn)](
               const Request& req, Response& res) {
      const auto start = std::chrono::steady_clock::now();
      std::string who = "-";
      const std::optional<Principal> principal = authenticate(req, res);
      if (principal) {
        who = principal->name;
        ApiResult<Json> result = [&]() -> ApiResult<Json> {
          try {
            return fn(*principal, req);
          } catch (const std::exception& ex) {
            return ApiFail(500, "", std::string("internal error: ") + ex.what());
          }
        }();
        if (result) {
          WriteJson(res, ok_status, *result);
        } else {
          WriteJson(res, result.error().status, ErrorJson(result.error().error));
        }
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::string code = std::to_string(res.status);
      engine_.http_requests().Inc(
          Labels({{"route", route}, {"method", req.method}, {"code", code}}));
      engine_.http_latency().Observe(Labels({{"route", route}}), seconds);
      const LogLevel level =
          req.method == "GET" && res.status < 400 ? LogLevel::kDebug : LogLevel::kInfo;
      if (log_.Enabled(level)) {
        log_.Log(level, "http",
                 {{"method", req.method},
                  {"path", req.path},
                  {"status", res.status},
                  {"principal", who},
                  {"ms", std::round(seconds * 1e6) / 1000}});
      }
    };
  };

  auto asset = [](std::string_view body, const char* type) -> httplib::Server::Handler {
    return [body, type](const Request&, Response& res) {
      res.set_header("Content-Security-Policy", kContentSecurityPolicy);
      res.set_content(std::string(body), type);
    };
  };
  s.Get("/", asset(web::IndexHtml(), "text/html; charset=utf-8"));
  s.Get("/index.html", asset(web::IndexHtml(), "text/html; charset=utf-8"));
  s.Get("/assets/dashboard.js", asset(web::DashboardJs(), "text/javascript; charset=utf-8"));
  s.Get("/assets/dashboard.css", asset(web::DashboardCss(), "text/css; charset=utf-8"));

  s.Get("/v1/health",
        api("/v1/health", 200, [engine](const Principal&, const Request&) -> ApiResult<Json> {
          return engine->HealthJson();
        }));

  // Metrics are text, not JSON: answered here with the same authentication.
  s.Get("/metrics", [this, authenticate](const Request& req, Response& res) {
    const std::optional<Principal> principal = authenticate(req, res);
    if (!principal) return;
    if (!principal->admin) {
      WriteJson(res, 403,
                ErrorJson(Error{ErrorCode::kInvalidInput, "",
                                "metrics cover every tenant: use the admin token"}));
      return;
    }
    res.set_content(engine_.MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
  });

  s.Post("/v1/jobs", api("/v1/jobs", 201,
                         [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
                           auto body = ParseBody(req);
                           if (!body) return body;
                           return engine->SubmitJob(who, *body);
                         }));
  s.Get("/v1/jobs",
        api("/v1/jobs", 200, [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
          JobFilter filter;
          if (req.has_param("state")) {
            filter.state = ParseJobState(req.get_param_value("state"));
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
          return engine->ListJobs(who, filter);
        }));
  const std::string id = "([A-Za-z0-9._:-]{1,128})";
  s.Get("/v1/jobs/" + id,
        api("/v1/jobs/{id}", 200, [engine](const Principal& who, const Request& req) {
          return engine->GetJob(who, req.matches[1].str());
        }));
  s.Delete("/v1/jobs/" + id,
           api("/v1/jobs/{id}", 200, [engine](const Principal& who, const Request& req) {
             return engine->CancelJob(who, req.matches[1].str());
           }));

  s.Post("/v1/services", api("/v1/services", 201,
                             [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
                               auto body = ParseBody(req);
                               if (!body) return body;
                               return engine->PutService(who, *body, std::nullopt, /*create=*/true);
                             }));
  s.Get("/v1/services", api("/v1/services", 200, [engine](const Principal& who, const Request&) {
          return engine->ListServices(who);
        }));
  s.Get("/v1/services/" + id,
        api("/v1/services/{id}", 200, [engine](const Principal& who, const Request& req) {
          return engine->GetService(who, req.matches[1].str());
        }));
  s.Put("/v1/services/" + id,
        api("/v1/services/{id}", 200,
            [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
              auto body = ParseBody(req);
              if (!body) return body;
              const std::string path_id = req.matches[1].str();
              return engine->PutService(who, *body, path_id, /*create=*/false);
            }));
  s.Post("/v1/services/" + id + "/traffic",
         api("/v1/services/{id}/traffic", 200,
             [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
               auto body = ParseBody(req);
               if (!body) return body;
               return engine->PostTraffic(who, req.matches[1].str(), *body);
             }));

  s.Get("/v1/plan", api("/v1/plan", 200, [engine](const Principal& who, const Request&) {
          return engine->PlanJson(who);
        }));
  s.Get("/v1/plan/committed",
        api("/v1/plan/committed", 200,
            [engine](const Principal& who, const Request&) { return engine->CommittedJson(who); }));
  s.Get("/v1/plan/history",
        api("/v1/plan/history", 200,
            [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
              const int64_t next = engine->NextStep();
              auto to = QueryInt(req, "to", next, 0, INT64_MAX);
              if (!to) return tl::unexpected(to.error());
              auto from = QueryInt(req, "from", std::max<int64_t>(0, *to - 24), 0, INT64_MAX);
              if (!from) return tl::unexpected(from.error());
              return engine->HistoryJson(who, *from, *to);
            }));
  s.Post("/v1/whatif", api("/v1/whatif", 200,
                           [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
                             auto body = ParseBody(req);
                             if (!body) return body;
                             return engine->WhatIf(who, *body);
                           }));
  s.Post("/v1/clock/advance",
         api("/v1/clock/advance", 200,
             [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
               auto body = ParseBody(req);
               if (!body) return body;
               auto obj = io::internal::ObjectReader::Make(*body, "", "a clock advance");
               if (!obj) return ApiFail(obj.error());
               if (auto ok = obj->AllowOnly({"steps"}); !ok) return ApiFail(ok.error());
               auto steps = obj->Int("steps", 1, engine->options().max_advance_steps);
               if (!steps) return ApiFail(steps.error());
               return engine->Advance(who, static_cast<int>(*steps));
             }));
  s.Get("/v1/dashboard", api("/v1/dashboard", 200,
                             [engine](const Principal& who, const Request& req) -> ApiResult<Json> {
                               auto history = QueryInt(req, "history", 48, 0,
                                                       static_cast<int64_t>(kRecentSteps));
                               if (!history) return tl::unexpected(history.error());
                               return engine->DashboardJson(who, static_cast<int>(*history));
                             }));

  // A path under /v1/jobs/ or /v1/services/ whose id is not a valid id: 400 naming it (after
  // authentication, as any API route), rather than "no such route". Registered after the routes
  // above, so only what they did not match arrives here.
  auto bad_id = [](const Principal&, const Request& req) -> ApiResult<Json> {
    std::string got = req.matches.size() > 1 ? req.matches[1].str() : std::string();
    if (IsSafeId(got.substr(0, got.find('/')), kMaxIdLength)) {
      // The id is fine; the method or the rest of the path is not a route.
      return ApiFail(404, "", "no such route: " + req.method + " " + req.path);
    }
    if (got.size() > 40) got = got.substr(0, 40) + "...";
    return ApiFail(400, "id",
                   "must be 1 to 128 letters, digits, '.', '_', '-' or ':' (got \"" + got + "\")");
  };
  for (const char* prefix : {"/v1/jobs/", "/v1/services/"}) {
    const std::string pattern = std::string(prefix) + "(.*)";
    const std::string route = std::string(prefix) + "{id}";
    s.Get(pattern, api(route, 400, bad_id));
    s.Delete(pattern, api(route, 400, bad_id));
    s.Put(pattern, api(route, 400, bad_id));
    s.Post(pattern, api(route, 400, bad_id));
  }

  // Anything that reached no route, or failed inside the library (413, 400), answers JSON too.
  s.set_error_handler([this](const Request& req, Response& res) {
    if (!res.body.empty()) return;
    std::string message;
    switch (res.status) {
      case 404:
        message = "no such route: " + req.method + " " + req.path;
        break;
      case 413:
        message = "the body exceeds " + std::to_string(options_.max_body_bytes) + " bytes";
        break;
      default:
        message = "the request failed (HTTP " + std::to_string(res.status) + ")";
        break;
    }
    WriteJson(res, res.status, ErrorJson(Error{ErrorCode::kInvalidInput, "", message}));
    engine_.http_requests().Inc(
        Labels({{"route", "other"}, {"method", req.method}, {"code", std::to_string(res.status)}}));
  });
  s.set_exception_handler([](const Request&, Response& res, std::exception_ptr) {
    WriteJson(res, 500, ErrorJson(Error{ErrorCode::kInternal, "", "internal error"}));
  });
}

}  // namespace ordo::service
