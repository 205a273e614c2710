// The engine's life cycle, its writer (group commit) and its planners. The read side (views of
// jobs, plans, the dashboard, metrics) is in engine_views.cc.
#include "ordo/service/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/forecast/duration_resolver.h"
#include "ordo/io/json_fields.h"
#include "ordo/policy/common/explain.h"
#include "ordo/service/codec.h"

namespace ordo::service {

using Json = nlohmann::json;

struct Engine::Op {
  std::function<Result<Json>(Txn&)> run;
  std::promise<Result<Json>> promise;
};

/// One group commit: the writer's working state and what changed in it, to publish afterwards.
struct Engine::Txn {
  State& work;
  store::Store& store;
  std::set<int64_t> changed_jobs;
  std::set<std::string> changed_services;
  size_t new_steps = 0;
  bool changed = false;
};

namespace {

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A priority as written in a config or a body: 8, 7.5.
std::string PriorityText(double priority) {
  std::ostringstream out;
  out << priority;
  return out.str();
}

Error Internal(std::string message) { return Error{ErrorCode::kInternal, "", std::move(message)}; }

// A failure of the store or of the planners while a change is applied leaves the transaction and
// the working state half-done: the writer abandons the whole batch. A request refused on its
// merits (any other code) changed nothing.
bool AbandonsBatch(const Error& error) {
  return error.code == ErrorCode::kInternal || error.code == ErrorCode::kIo;
}

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, s)));
}

}  // namespace

Engine::Engine(ServiceConfig config, EngineOptions options, Logger* log)
    : config_(std::move(config)), options_(std::move(options)), log_(log) {
  tenancy_.options = config_.planning;
  for (const Tenant& tenant : config_.tenants) {
    tenancy_.names.push_back(tenant.name);
    tenancy_.shares.push_back(tenant.ShareFraction(config_.base.cluster.total_gpus()));
  }
  if (!options_.wall_clock) options_.wall_clock = SystemNow;
  if (options_.registry == nullptr) {
    own_registry_ = MakeInTreeRegistry();
    registry_ = &own_registry_;
  } else {
    registry_ = options_.registry;
  }
}

Engine::~Engine() { Stop(); }

double Engine::Now() const { return options_.wall_clock(); }

Result<std::unique_ptr<Policy>> Engine::MakePolicy(const std::string& name) const {
  return registry_->Create(name);
}

Result<std::unique_ptr<Engine>> Engine::Open(ServiceConfig config, EngineOptions options,
                                             Logger* log) {
  std::unique_ptr<Engine> engine(new Engine(std::move(config), std::move(options), log));
  for (const std::string* name : {&engine->options_.fast_policy, &engine->options_.full_policy,
                                  &engine->options_.fallback_policy}) {
    if (auto p = engine->MakePolicy(*name); !p) return Fail(p.error());
  }
  auto store = store::Store::Open(engine->options_.db_path);
  if (!store) return Fail(store.error());
  engine->store_ = std::move(*store);
  engine->started_unix_ = engine->Now();
  if (auto ok = engine->LoadState(); !ok) return Fail(ok.error());

  // The first plan, before any request is served, so every answer has a plan behind it.
  auto fast = engine->MakePolicy(engine->options_.fast_policy);
  auto fallback = engine->MakePolicy(engine->options_.fallback_policy);
  if (!fast || !fallback) return Fail(!fast ? fast.error() : fallback.error());
  auto scenario =
      std::make_shared<const Scenario>(BuildScenario(engine->published_, engine->frame()));
  auto planned = std::make_shared<const Scenario>(
      PlanningScenario(*scenario, engine->published_, engine->frame()));
  PolicyOptions popts;
  popts.time_limit_s = engine->options_.fast_time_limit_s;
  auto checked = SolveChecked(**fast, fallback->get(), kModeFast, *planned, popts, scenario.get());
  if (!checked) return Fail(checked.error());
  engine->plan_ =
      std::make_shared<const AdoptedPlan>(engine->published_.version, engine->published_.next_step,
                                          scenario, planned, std::move(*checked), engine->Now());
  return engine;
}

// A stored service as the state keeps it: its spec read again under the config, its traffic
// re-fitted (a fit that fails leaves the profile, with a warning) and its forecast refreshed.
Result<ServiceRecord> Engine::RestoreService(const store::StoredService& stored, int64_t next_step,
                                             double origin_unix) {
  auto body = ReadServiceSpec(stored.spec, config_);
  if (!body) {
    Error error = body.error();
    error.message = "stored service \"" + stored.id + "\": " + error.ToString();
    error.field = "db";
    return Fail(std::move(error));
  }
  ServiceRecord record;
  record.seq = stored.seq;
  record.service = std::move(body->service);
  record.traffic = body->traffic;
  record.anchor_step = stored.anchor_step;
  record.committed_gpus = stored.committed_gpus;
  auto traffic = store_->LoadTraffic(stored.id);
  if (!traffic) return Fail(traffic.error());
  if (!traffic->empty()) {
    auto forecaster = std::make_shared<forecast::DemandForecaster>(
        record.traffic.value_or(TrafficDemand{}).ForecastOptions());
    if (auto ok = forecaster->Fit(*traffic); !ok) {
      log_->Warn("forecast_fit_failed", {{"service", stored.id}, {"error", ok.error().ToString()}});
    } else {
      record.forecaster = std::move(forecaster);
    }
    record.traffic_points = static_cast<int64_t>(traffic->size());
    record.last_traffic_s = traffic->back().time_s;
  }
  RefreshForecast(record, next_step, origin_unix);
  return record;
}

Result<void> Engine::LoadState() {
  auto snap = store_->Load();
  if (!snap) return Fail(snap.error());
  State state;
  const std::string fingerprint = config_.cluster_json.dump();
  if (snap->fresh) {
    state.origin_unix = Now();
    if (auto ok = store_->Begin(); !ok) return ok;
    if (auto ok = store_->InitClock(state.origin_unix, fingerprint); !ok) {
      store_->Rollback();
      return ok;
    }
    if (auto ok = store_->Commit(); !ok) {
      store_->Rollback();
      return ok;
    }
    log_->Info("store_created", {{"db", options_.db_path}});
  } else {
    state.next_step = snap->next_step;
    state.origin_unix = snap->origin_unix;
    state.next_generated_id = snap->next_generated_id;
    state.committed_value_total = snap->committed_value_total;
    if (snap->cluster_fingerprint != fingerprint) {
      log_->Warn("cluster_changed",
                 {{"message",
                   "the config's cluster differs from the one this database was "
                   "created with; running jobs are checked against the new one"}});
    }
  }
  for (store::StoredJob& stored : snap->jobs) {
    auto job = ReadJobSpec(stored.spec, config_);
    if (!job) {
      Error error = job.error();
      error.message = "stored job \"" + stored.record.job.id + "\": " + error.ToString();
      error.field = "db";
      return Fail(std::move(error));
    }
    JobRecord record = std::move(stored.record);
    job->id = std::move(record.job.id);  // the row's qualified id is the job's key
    record.job = std::move(*job);
    state.PutJob(std::move(record));
  }
  for (store::StoredService& stored : snap->services) {
    auto record = RestoreService(stored, state.next_step, state.origin_unix);
    if (!record) return Fail(record.error());
    state.services.push_back(std::move(*record));
  }
  // Fair share starts from the use the kept steps show (the last kRecentSteps).
  for (CommittedStep& step : snap->recent) {
    RecordUsage(state, step, frame());
    state.recent.push_back(std::move(step));
  }

  // The restored world must still admit a legal plan (a changed config might not).
  Scenario check = BuildScenario(state, frame());
  if (auto ok = ValidateScenario(check); !ok) {
    Error error = ok.error();
    error.message = "the stored state does not fit the config: " + error.ToString();
    error.field = "db";
    return Fail(std::move(error));
  }
  state.version = 1;
  published_ = state;
  work_ = std::move(state);
  if (!snap->fresh) {
    log_->Info("state_restored", {{"db", options_.db_path},
                                  {"next_step", work_.next_step},
                                  {"jobs", work_.jobs.size()},
                                  {"active_jobs", work_.active.size()},
                                  {"services", work_.services.size()}});
  }
  return {};
}

void Engine::Start() {
  if (started_) return;
  started_ = true;
  writer_ = std::thread([this] { WriterLoop(); });
  // With the wall clock, the steps that are due (step 0 on a fresh start, the ones missed while the
  // service was down) are committed before Start returns, so the first request already sees them.
  if (!options_.manual_clock) {
    if (auto caught_up = CatchUp(); !caught_up) {
      log_->Error("tick_failed", {{"error", caught_up.error().ToString()}});
    }
  }
  fast_ = std::thread([this] { FastLoop(); });
  if (options_.full_interval_s > 0) full_ = std::thread([this] { FullLoop(); });
  if (!options_.manual_clock) ticker_ = std::thread([this] { TickerLoop(); });
  ready_ = true;
  log_->Info("engine_started", {{"manual_clock", options_.manual_clock},
                                {"fast_policy", options_.fast_policy},
                                {"full_policy", options_.full_policy},
                                {"full_interval_s", options_.full_interval_s}});
}

void Engine::Stop() {
  ready_ = false;
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_ && !started_) return;
    stopping_ = true;
  }
  StopPlanning();
  stop_ = true;
  queue_cv_.notify_all();
  { std::lock_guard lock(dirty_mutex_); }
  dirty_cv_.notify_all();
  plan_cv_.notify_all();
  for (std::thread* t : {&ticker_, &full_, &fast_, &writer_}) {
    if (t->joinable()) t->join();
  }
  // Anything left in the queue is answered, never dropped silently.
  std::lock_guard lock(queue_mutex_);
  while (!queue_.empty()) {
    queue_.front()->promise.set_value(
        Fail(Error{ErrorCode::kUnavailable, "", "the service is shutting down"}));
    queue_.pop_front();
  }
  started_ = false;
}

void Engine::StopPlanning() {
  planning_stop_ = true;
  full_stop_ = true;
}

// ---------------------------------------------------------------------------------------------
// The writer.

Result<Json> Engine::Enqueue(std::function<Result<Json>(Txn&)> run) {
  auto op = std::make_unique<Op>();
  op->run = std::move(run);
  std::future<Result<Json>> future = op->promise.get_future();
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_ || !started_) {
      return Fail(Error{ErrorCode::kUnavailable, "", "the service is not accepting changes"});
    }
    queue_.push_back(std::move(op));
  }
  queue_cv_.notify_one();
  return future.get();
}

void Engine::WriterLoop() {
  std::vector<std::unique_ptr<Op>> batch;
  for (;;) {
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
      if (stop_) return;
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    RunBatch(batch);
    batch.clear();
  }
}

void Engine::RunBatch(std::vector<std::unique_ptr<Op>>& batch) {
  const auto start = std::chrono::steady_clock::now();
  Txn txn{work_, *store_, {}, {}, 0, false};
  std::vector<Result<Json>> results;
  results.reserve(batch.size());
  std::optional<Error> abort;
  if (auto ok = store_->Begin(); !ok) {
    abort = ok.error();
  } else {
    for (auto& op : batch) {
      Result<Json> result = [&]() -> Result<Json> {
        try {
          return op->run(txn);
        } catch (const std::exception& ex) {
          return Fail(Internal(std::string("internal error: ") + ex.what()));
        }
      }();
      if (!result && AbandonsBatch(result.error())) {
        abort = result.error();
        break;
      }
      results.push_back(std::move(result));
    }
    if (!abort) {
      if (auto ok = store_->Commit(); !ok) abort = ok.error();
    }
  }
  if (abort) {
    store_->Rollback();
    {
      std::shared_lock lock(state_mutex_);
      work_ = published_;
    }
    log_->Error("commit_failed", {{"error", abort->ToString()}, {"requests", batch.size()}});
    for (auto& op : batch) {
      Error error = *abort;
      error.code = ErrorCode::kInternal;
      error.message = "not stored: " + error.message;
      op->promise.set_value(Fail(std::move(error)));
    }
    return;
  }
  if (txn.changed) Publish(txn);
  const double seconds = SecondsSince(start);
  commit_latency_.Observe("", seconds);
  batch_sizes_.Observe("", static_cast<double>(batch.size()));
  for (size_t k = 0; k < batch.size(); ++k) batch[k]->promise.set_value(std::move(results[k]));
  if (txn.changed) MarkDirty();
}

void Engine::Publish(const Txn& txn) {
  ++work_.version;
  std::unique_lock lock(state_mutex_);
  for (const int64_t seq : txn.changed_jobs) published_.PutJob(work_.jobs.at(seq));
  for (const std::string& id : txn.changed_services) {
    const ServiceRecord* record = work_.FindService(id);
    if (record == nullptr) continue;
    if (ServiceRecord* existing = published_.FindService(id)) {
      *existing = *record;
    } else {
      published_.services.push_back(*record);
    }
  }
  if (txn.new_steps >= work_.recent.size()) {
    published_.recent = work_.recent;
  } else {
    for (size_t k = work_.recent.size() - txn.new_steps; k < work_.recent.size(); ++k) {
      published_.recent.push_back(work_.recent[k]);
    }
    while (published_.recent.size() > kRecentSteps) published_.recent.pop_front();
  }
  published_.next_step = work_.next_step;
  published_.origin_unix = work_.origin_unix;
  published_.next_generated_id = work_.next_generated_id;
  published_.committed_value_total = work_.committed_value_total;
  published_.usage = work_.usage;
  published_.version = work_.version;
  lock.unlock();
  // A full solve of the old state is now wasted work: let it stop.
  if (full_running_) full_stop_ = true;
}

// ---------------------------------------------------------------------------------------------
// Requests that change the state.

std::string ResolveJobId(const Principal& who, std::string_view id) {
  if (id.find(kTenantSeparator) != std::string_view::npos) return std::string(id);
  return QualifiedJobId(who.name, id);
}

io::ReadOptions JobReadOptions() {
  io::ReadOptions read;
  // Durations from features: the forecasters' median, from their built-in calibration (the
  // service records no run times to learn from yet).
  read.resolve_duration = [](const Job& job, std::string_view features, int step_minutes) {
    return forecast::ForecastDurationSteps(job, features, step_minutes);
  };
  return read;
}

Result<void> Engine::Permit(const Principal& who, AdminAction action) const {
  if (who.admin) return {};
  auto denied = [](const char* field, const char* why) {
    return Fail(Error{ErrorCode::kPermissionDenied, field, why});
  };
  switch (action) {
    case AdminAction::kChangeServices:
      return denied("", "registering or changing a service needs the admin token");
    case AdminAction::kWhatIfServices:
      return denied("services", "changing services needs the admin token");
    case AdminAction::kPostTraffic:
      return denied("", "posting traffic needs the admin token");
    case AdminAction::kAdvanceClock:
      return denied("", "advancing the clock needs the admin token");
    case AdminAction::kReadMetrics:
      return denied("", "metrics cover every tenant: use the admin token");
  }
  return denied("", "needs the admin token");  // not reached: every action is a case above
}

Result<void> Engine::CheckPriorityCap(const Principal& who, const Job& job,
                                      const std::string& field) const {
  const Tenant* tenant = config_.FindTenant(who.name);
  if (tenant == nullptr || !tenant->max_priority || job.priority <= *tenant->max_priority) {
    return {};
  }
  return FailInput(field, "is above tenant " + tenant->name + "'s max_priority (" +
                              PriorityText(job.priority) + " > " +
                              PriorityText(*tenant->max_priority) + ")");
}

Result<Json> Engine::SubmitJob(const Principal& who, JobBody job_body) {
  ORDO_RETURN_IF_ERROR(CheckPriorityCap(who, job_body.job, "priority"));
  ORDO_RETURN_IF_ERROR(CheckCanEverRunNow(job_body.job));
  const double now = Now();
  return Enqueue([this, who, job_body = std::move(job_body), now](Txn& txn) -> Result<Json> {
    State& work = txn.work;
    if (work.active.size() >= options_.max_active_jobs) {
      return Fail(Error{ErrorCode::kResourceExhausted, "",
                        "the queue is full (" + std::to_string(options_.max_active_jobs) +
                            " pending or running jobs)"});
    }
    JobRecord record;
    record.job = job_body.job;
    // Ids are per tenant (state.h): only the caller's own jobs can hold its id.
    std::string local = record.job.id;
    if (job_body.id_given) {
      if (work.FindJob(QualifiedJobId(who.name, local)) != nullptr) {
        // A retry of an acknowledged submission gets this answer, so submitting with an id is
        // idempotent; it concerns the caller's own job only.
        return Fail(
            Error{ErrorCode::kConflict, "id", "you already have a job with id \"" + local + "\""});
      }
    } else {
      int64_t& next = work.next_generated_id[who.name];
      if (next < 1) next = 1;
      do {
        local = "job-" + std::to_string(next++);
      } while (work.FindJob(QualifiedJobId(who.name, local)) != nullptr);
      if (auto ok = txn.store.SetNextGeneratedId(who.name, next); !ok) {
        return Fail(Internal(ok.error().ToString()));
      }
    }
    record.job.id = QualifiedJobId(who.name, local);
    record.tenant = who.name;
    record.submitted_step = work.next_step;
    record.submitted_unix = now;
    record.state = JobState::kPending;
    const std::string spec = JobSpecJson(record.job).dump();
    auto seq = txn.store.InsertJob(record, spec);
    if (!seq) return Fail(Internal(seq.error().ToString()));
    record.seq = *seq;
    work.PutJob(std::move(record));
    txn.changed_jobs.insert(*seq);
    txn.changed = true;
    submissions_.Inc(Labels({{"tenant", who.name}}));
    // The id as the caller addresses it (the admin's own jobs too are in its namespace).
    return Json{{"id", local}};
  });
}

Result<void> Engine::CheckCanEverRunNow(const Job& job) const {
  // Only the cluster and the services' floors matter: they hold at every step, running jobs end.
  Scenario floors;
  floors.horizon_steps = config_.base.horizon_steps;
  floors.cluster = config_.base.cluster;
  {
    std::shared_lock lock(state_mutex_);
    for (const ServiceRecord& record : published_.services) {
      floors.services.push_back(record.service);
    }
  }
  return policy::CheckCanEverRun(floors, job);
}

Result<Json> Engine::CancelJob(const Principal& who, std::string_view id_view) {
  std::string id(id_view);
  const std::string qualified = ResolveJobId(who, id);
  auto result = Enqueue([this, who, id, qualified](Txn& txn) -> Result<Json> {
    JobRecord* record = txn.work.FindJob(qualified);
    if (record == nullptr || !CanSee(who, *record)) {
      return Fail(Error{ErrorCode::kNotFound, "id", "no job \"" + id + "\""});
    }
    if (record->state == JobState::kDone) {
      return Fail(Error{ErrorCode::kConflict, "id", "job \"" + id + "\" is done"});
    }
    if (record->state == JobState::kCancelled) {
      return Json{{"id", id}, {"state", "cancelled"}};
    }
    JobRecord updated = *record;
    updated.state = JobState::kCancelled;
    // It held its GPUs through the current step, which is committed; they are free from the next.
    updated.finished_step = txn.work.next_step;
    if (auto ok = txn.store.UpdateJob(updated); !ok) return Fail(Internal(ok.error().ToString()));
    const int64_t seq = updated.seq;
    txn.work.PutJob(std::move(updated));
    txn.changed_jobs.insert(seq);
    txn.changed = true;
    return Json{{"id", id}, {"state", "cancelled"}};
  });
  if (result) log_->Info("job_cancelled", {{"id", id}, {"by", who.name}});
  return result;
}

Result<void> Engine::CheckServiceFits(const State& work, const ServiceRecord& record) const {
  // BuildScenario lists services in the state's order, so the service's index in the scenario is
  // its index in work.services.
  Scenario trial = BuildScenario(work, frame(), /*new_starts=*/false);
  Service candidate = record.service;
  for (int t = 0; t < config_.base.horizon_steps; ++t) {
    candidate.demand[t] = record.DemandAt(work.next_step + t);
  }
  if (record.committed_gpus) candidate.current_gpus = record.committed_gpus;
  size_t index = trial.services.size();
  for (size_t i = 0; i < trial.services.size(); ++i) {
    if (trial.services[i].id == record.service.id) index = i;
  }
  if (index == trial.services.size()) {
    trial.services.push_back(std::move(candidate));
  } else {
    trial.services[index] = std::move(candidate);
  }
  auto ok = ValidateScenario(trial);
  if (ok) return {};
  Error error = ok.error();
  const std::string prefix = "services[" + std::to_string(index) + "]";
  if (error.field.rfind(prefix + ".", 0) == 0) {
    error.field = error.field.substr(prefix.size() + 1);
  } else if (error.field == prefix) {
    error.field.clear();
  }
  return FailInput(error.field,
                   "the cluster cannot hold this service beside the running jobs and the other "
                   "services: " +
                       error.message);
}

Result<Json> Engine::PutService(const Principal& who, ServiceBody service_body, bool create) {
  ORDO_RETURN_IF_ERROR(Permit(who, AdminAction::kChangeServices));
  return Enqueue([this, service_body = std::move(service_body), create](Txn& txn) -> Result<Json> {
    State& work = txn.work;
    const std::string& id = service_body.service.id;
    const ServiceRecord* existing = work.FindService(id);
    // Service ids are cluster-wide and apart from the tenants' job ids (state.h).
    if (create && existing != nullptr) {
      return Fail(
          Error{ErrorCode::kConflict, "id", "a service with id \"" + id + "\" already exists"});
    }
    if (!create && existing == nullptr) {
      return Fail(Error{ErrorCode::kNotFound, "id", "no service \"" + id + "\""});
    }
    ServiceRecord record;
    if (existing != nullptr) {
      record = *existing;  // keeps the seq, the committed GPUs, the forecaster
    } else {
      int64_t seq = 0;
      for (const ServiceRecord& s : work.services) seq = std::max(seq, s.seq);
      record.seq = seq + 1;
    }
    record.service = service_body.service;
    record.traffic = service_body.traffic;
    if (record.traffic && record.forecaster &&
        record.forecaster->options().method != record.traffic->method) {
      // A changed `forecast.method` refits the posted traffic with the new method.
      auto switched = std::make_shared<forecast::DemandForecaster>(*record.forecaster);
      if (auto ok = switched->SetMethod(record.traffic->method); !ok) {
        return FailInput("forecast.method", ok.error().message);
      }
      record.forecaster = std::move(switched);
    }
    record.anchor_step = work.next_step;
    RefreshForecast(record, work.next_step, work.origin_unix);
    // The world with this service must still admit a legal plan.
    ORDO_RETURN_IF_ERROR(CheckServiceFits(work, record));
    const std::string spec = ServiceSpecJson(record.service, record.traffic).dump();
    if (auto ok = txn.store.PutService(record, spec); !ok) {
      return Fail(Internal(ok.error().ToString()));
    }
    if (ServiceRecord* target = work.FindService(id)) {
      *target = record;
    } else {
      work.services.push_back(record);
    }
    txn.changed_services.insert(id);
    txn.changed = true;
    return ServiceSpecJson(record.service, record.traffic);
  });
}

Result<Json> Engine::PostTraffic(const Principal& who, std::string_view id_view, TrafficBody body) {
  ORDO_RETURN_IF_ERROR(Permit(who, AdminAction::kPostTraffic));
  std::string id(id_view);
  std::vector<forecast::RatePoint> points = std::move(body.samples);
  if (points.empty()) return FailInput("samples", "must list at least one sample");
  return Enqueue([this, id, points = std::move(points)](Txn& txn) -> Result<Json> {
    ServiceRecord* existing = txn.work.FindService(id);
    if (existing == nullptr) {
      return Fail(Error{ErrorCode::kNotFound, "id", "no service \"" + id + "\""});
    }
    if (existing->traffic_points > 0 && points.front().time_s <= existing->last_traffic_s) {
      return FailInput("samples[0].time", "must be later than the latest sample already posted (" +
                                              IsoTime(existing->last_traffic_s) + ")");
    }
    // How wrong the forecaster was about these samples before learning from them.
    ForecastError error_now;
    if (existing->forecaster && existing->forecaster->fitted()) {
      for (const forecast::RatePoint& p : points) {
        auto q = existing->forecaster->Predict(p.time_s);
        if (!q) continue;
        error_now.abs_error += std::abs(p.rate - q->p50);
        error_now.actual += p.rate;
        ++error_now.samples;
      }
    }
    auto forecaster = existing->forecaster
                          ? std::make_shared<forecast::DemandForecaster>(*existing->forecaster)
                          : std::make_shared<forecast::DemandForecaster>(
                                existing->traffic.value_or(TrafficDemand{}).ForecastOptions());
    auto fitted = forecaster->fitted() ? forecaster->Refit(points) : forecaster->Fit(points);
    if (!fitted) {
      return FailInput(fitted.error().field,
                       "the demand forecaster rejected the samples: " + fitted.error().message);
    }
    if (auto ok = txn.store.InsertTraffic(id, points); !ok) {
      return Fail(Internal(ok.error().ToString()));
    }
    existing->forecaster = std::move(forecaster);
    existing->traffic_points += static_cast<int64_t>(points.size());
    existing->last_traffic_s = points.back().time_s;
    RefreshForecast(*existing, txn.work.next_step, txn.work.origin_unix);
    txn.changed_services.insert(id);
    txn.changed = true;
    if (error_now.samples > 0) {
      std::lock_guard lock(forecast_error_mutex_);
      ForecastError& total = forecast_errors_[id];
      total.abs_error += error_now.abs_error;
      total.actual += error_now.actual;
      total.samples += error_now.samples;
    }
    Json out = {
        {"id", id}, {"samples", points.size()}, {"total_samples", existing->traffic_points}};
    if (existing->traffic) {
      Json demand = Json::array();
      for (int t = 0; t < config_.base.horizon_steps; ++t) {
        demand.push_back(existing->DemandAt(txn.work.next_step + t));
      }
      out["demand"] = std::move(demand);
    }
    return out;
  });
}

void Engine::RefreshForecast(ServiceRecord& record, int64_t next_step, double origin_unix) const {
  record.forecast_demand.clear();
  record.forecast_base = next_step;
  if (!record.traffic || !record.forecaster || !record.forecaster->fitted()) return;
  const double start_s = origin_unix + static_cast<double>(next_step) * frame().step_seconds();
  auto steps = forecast::ForecastSteps(*record.forecaster, start_s, config_.base.horizon_steps,
                                       config_.base.step_minutes, record.traffic->per_gpu_rate,
                                       record.traffic->headroom);
  if (!steps) {
    log_->Warn("forecast_failed",
               {{"service", record.service.id}, {"error", steps.error().ToString()}});
    return;
  }
  for (const forecast::DemandStep& s : *steps) record.forecast_demand.push_back(s.gpus);
}

Result<Json> Engine::Advance(const Principal& who, int steps, double wait_for_plan_s) {
  ORDO_RETURN_IF_ERROR(Permit(who, AdminAction::kAdvanceClock));
  if (!options_.manual_clock) {
    return Fail(Error{ErrorCode::kConflict, "",
                      "the service runs on the wall clock; start it with --manual-clock to "
                      "advance the clock by hand"});
  }
  if (steps < 1 || steps > options_.max_advance_steps) {
    return FailInput("steps",
                     "must be an integer from 1 to " + std::to_string(options_.max_advance_steps));
  }
  auto result = Enqueue([this, steps](Txn& txn) {
    return DoAdvance(txn, txn.work.next_step + steps, std::numeric_limits<int64_t>::min());
  });
  if (!result) return result;
  WaitForPlan(StateVersion(), wait_for_plan_s);
  if (auto plan = CurrentPlan()) {
    (*result)["plan_version"] = plan->version();
    (*result)["plan_mode"] = plan->mode();
  }
  return result;
}

Result<Json> Engine::DoAdvance(Txn& txn, int64_t target, int64_t quiet_until) {
  State& work = txn.work;
  const int64_t first = work.next_step;
  if (target <= first) return Json{{"step", first - 1}, {"next_step", first}, {"committed", 0}};
  auto fast = MakePolicy(options_.fast_policy);
  auto fallback = MakePolicy(options_.fallback_policy);
  if (!fast || !fallback) return Fail(Internal("cannot create the planners"));
  PolicyOptions popts;
  popts.time_limit_s = options_.fast_time_limit_s;
  popts.stop = &planning_stop_;  // cuts every plan short on shutdown; the result is still checked
  Json policies = Json::array();
  while (work.next_step < target) {
    const bool starts = work.next_step >= quiet_until;
    Scenario scenario = BuildScenario(work, frame(), starts);
    Plan plan;
    std::string mode;
    auto adopted = CurrentPlan();
    if (starts && !txn.changed && adopted && adopted->version() == work.version &&
        adopted->base_step() == work.next_step) {
      // The adopted plan was made from exactly this state (and checked then).
      plan = adopted->plan();
      mode = adopted->mode();
    } else {
      const Scenario planned = PlanningScenario(scenario, work, frame());
      auto checked = SolveChecked(**fast, fallback->get(), kModeFast, planned, popts, &scenario);
      if (!checked) {
        plans_.Inc(Labels({{"mode", "commit"}, {"outcome", "failed"}}));
        return Fail(Internal("no legal plan to commit step " + std::to_string(work.next_step) +
                             ": " + checked.error().ToString()));
      }
      if (!checked->problem.empty()) {
        log_->Error("plan_replaced_by_fallback", {{"problem", checked->problem}});
      }
      plan = std::move(checked->plan);
      mode = checked->mode;
    }
    std::vector<int64_t> changed;
    const CommittedStep step =
        CommitStep(work, scenario, plan, starts ? mode : std::string("hold"), changed);
    RecordUsage(work, step, frame());
    for (const int64_t seq : changed) {
      if (auto ok = txn.store.UpdateJob(work.jobs.at(seq)); !ok) {
        return Fail(Internal(ok.error().ToString()));
      }
      txn.changed_jobs.insert(seq);
    }
    for (ServiceRecord& record : work.services) {
      if (auto ok = txn.store.SetCommittedGpus(record.service.id, record.committed_gpus); !ok) {
        return Fail(Internal(ok.error().ToString()));
      }
      RefreshForecast(record, work.next_step, work.origin_unix);
      txn.changed_services.insert(record.service.id);
    }
    if (auto ok = txn.store.InsertStep(step); !ok) return Fail(Internal(ok.error().ToString()));
    ++txn.new_steps;
    txn.changed = true;
    policies.push_back(step.policy);
    log_->Info("step_committed", {{"step", step.step},
                                  {"policy", step.policy},
                                  {"jobs", step.jobs.size()},
                                  {"utilization", step.utilization},
                                  {"unmet_gpus", step.unmet_gpus}});
  }
  if (auto ok = txn.store.SetClock(work.next_step, work.committed_value_total); !ok) {
    return Fail(Internal(ok.error().ToString()));
  }
  return Json{{"step", work.next_step - 1},
              {"next_step", work.next_step},
              {"committed", work.next_step - first}};
}

// ---------------------------------------------------------------------------------------------
// Planners.

void Engine::MarkDirty() {
  {
    std::lock_guard lock(dirty_mutex_);
    dirty_ = true;
  }
  dirty_cv_.notify_all();
}

bool Engine::Adopt(std::shared_ptr<const AdoptedPlan> plan, bool require_better) {
  {
    std::lock_guard lock(plan_mutex_);
    bool accept = false;
    if (!plan_) {
      accept = true;
    } else if (require_better) {
      accept = plan->version() == plan_->version() && plan->base_step() == plan_->base_step() &&
               IsBetter(plan->planning_objective(), plan_->planning_objective());
    } else {
      accept = plan->version() > plan_->version();
    }
    if (!accept) return false;
    plan_ = std::move(plan);
  }
  plan_cv_.notify_all();
  return true;
}

std::shared_ptr<const AdoptedPlan> Engine::CurrentPlan() const {
  std::lock_guard lock(plan_mutex_);
  return plan_;
}

bool Engine::WaitForPlan(uint64_t version, double timeout_s) {
  std::unique_lock lock(plan_mutex_);
  return plan_cv_.wait_for(lock, Seconds(timeout_s),
                           [&] { return stop_ || (plan_ && plan_->version() >= version); }) &&
         plan_ && plan_->version() >= version;
}

uint64_t Engine::StateVersion() const {
  std::shared_lock lock(state_mutex_);
  return published_.version;
}

int64_t Engine::NextStep() const {
  std::shared_lock lock(state_mutex_);
  return published_.next_step;
}

State Engine::StateCopy() const {
  std::shared_lock lock(state_mutex_);
  return published_;
}

void Engine::FastLoop() {
  auto fast = MakePolicy(options_.fast_policy);
  auto fallback = MakePolicy(options_.fallback_policy);
  if (!fast || !fallback) {
    log_->Error("planner_unavailable", {{"policy", options_.fast_policy}});
    return;
  }
  PolicyOptions popts;
  popts.time_limit_s = options_.fast_time_limit_s;
  popts.stop = &planning_stop_;
  for (;;) {
    {
      std::unique_lock lock(dirty_mutex_);
      dirty_cv_.wait(lock, [&] { return dirty_ || stop_; });
      if (stop_) return;
      // Debounce: every change made within the debounce of the first is in the same plan.
      dirty_cv_.wait_for(lock, Seconds(options_.debounce_s), [&] { return stop_.load(); });
      if (stop_) return;
      dirty_ = false;
    }
    std::shared_ptr<const Scenario> scenario;
    std::shared_ptr<const Scenario> planned;
    uint64_t version = 0;
    int64_t base = 0;
    {
      std::shared_lock lock(state_mutex_);
      version = published_.version;
      base = published_.next_step;
      if (auto current = CurrentPlan(); current && current->version() >= version) continue;
      scenario = std::make_shared<const Scenario>(BuildScenario(published_, frame()));
      planned = std::make_shared<const Scenario>(PlanningScenario(*scenario, published_, frame()));
    }
    auto checked =
        SolveChecked(**fast, fallback->get(), kModeFast, *planned, popts, scenario.get());
    if (!checked) {
      plans_.Inc(Labels({{"mode", "fast"}, {"outcome", "failed"}}));
      log_->Error("plan_failed", {{"mode", "fast"}, {"error", checked.error().ToString()}});
      continue;
    }
    planning_latency_.Observe(Labels({{"mode", "fast"}}), checked->solve_s);
    if (!checked->problem.empty()) {
      plans_.Inc(Labels({{"mode", "fast"}, {"outcome", "illegal"}}));
      log_->Error("plan_replaced_by_fallback", {{"problem", checked->problem}});
    }
    const double objective = checked->plan.metrics.objective;
    const size_t jobs = checked->plan.jobs.size();
    const bool adopted = Adopt(std::make_shared<const AdoptedPlan>(version, base, scenario, planned,
                                                                   std::move(*checked), Now()),
                               false);
    plans_.Inc(Labels({{"mode", "fast"}, {"outcome", adopted ? "adopted" : "stale"}}));
    log_->Debug("plan_adopted", {{"mode", "fast"},
                                 {"version", version},
                                 {"jobs", jobs},
                                 {"objective", objective},
                                 {"adopted", adopted}});
  }
}

std::string Engine::RunFullModeOnce() {
  std::lock_guard full_lock(full_mutex_);
  std::shared_ptr<const Scenario> scenario;
  std::shared_ptr<const Scenario> planned;
  uint64_t version = 0;
  int64_t base = 0;
  {
    std::shared_lock lock(state_mutex_);
    version = published_.version;
    base = published_.next_step;
    auto current = CurrentPlan();
    if (current && current->version() == version && current->mode() == kModeFull) {
      return "unchanged";
    }
    scenario = std::make_shared<const Scenario>(BuildScenario(published_, frame()));
    planned = std::make_shared<const Scenario>(PlanningScenario(*scenario, published_, frame()));
  }
  auto policy = MakePolicy(options_.full_policy);
  if (!policy) return "failed";
  PolicyOptions popts;
  popts.time_limit_s = options_.full_time_limit_s;
  full_stop_ = false;
  // StopPlanning() sets planning_stop_ before full_stop_: one racing the line above is seen here.
  if (planning_stop_) full_stop_ = true;
  popts.stop = &full_stop_;
  full_running_ = true;
  const auto start = std::chrono::steady_clock::now();
  auto plan = RunPolicy(**policy, *planned, popts);
  full_running_ = false;
  const double seconds = SecondsSince(start);
  planning_latency_.Observe(Labels({{"mode", "full"}}), seconds);
  std::string outcome;
  std::string detail;
  if (!plan) {
    outcome = "failed";
    detail = plan.error().ToString();
  } else if (std::string problem = PlanProblem(*scenario, *plan); !problem.empty()) {
    outcome = "illegal";
    detail = problem;
  } else if (StateVersion() != version) {
    outcome = "stale";
  } else {
    CheckedPlan checked;
    checked.plan = std::move(*plan);
    MeasurePlan(checked, *planned, *scenario);
    checked.mode = std::string(kModeFull);
    checked.solve_s = seconds;
    auto candidate = std::make_shared<const AdoptedPlan>(version, base, scenario, planned,
                                                         std::move(checked), Now());
    auto current = CurrentPlan();
    if (Adopt(candidate, true)) {
      outcome = "adopted";
    } else {
      outcome = current && current->version() != version ? "stale" : "worse";
    }
    detail = "planning objective " + std::to_string(candidate->planning_objective()) + " vs " +
             (current ? std::to_string(current->planning_objective()) : std::string("none"));
  }
  plans_.Inc(Labels({{"mode", "full"}, {"outcome", outcome}}));
  log_->Info(
      "full_mode",
      {{"outcome", outcome}, {"seconds", seconds}, {"detail", detail}, {"version", version}});
  return outcome;
}

void Engine::FullLoop() {
  for (;;) {
    {
      std::unique_lock lock(dirty_mutex_);
      dirty_cv_.wait_for(lock, Seconds(options_.full_interval_s), [&] { return stop_.load(); });
      if (stop_) return;
    }
    RunFullModeOnce();
  }
}

Result<bool> Engine::CatchUp() {
  int64_t next = 0;
  double origin = 0;
  {
    std::shared_lock lock(state_mutex_);
    next = published_.next_step;
    origin = published_.origin_unix;
  }
  // The step the wall clock is in; every step up to it is committed when it begins. Steps missed
  // while the service was down are committed without new starts (nothing started jobs then), the
  // current one with a plan.
  const int64_t current =
      static_cast<int64_t>(std::floor((Now() - origin) / frame().step_seconds()));
  if (next > current) return false;
  const int64_t target = std::min<int64_t>(current + 1, next + options_.max_advance_steps);
  auto result =
      Enqueue([this, target, current](Txn& txn) { return DoAdvance(txn, target, current); });
  if (!result) return tl::unexpected(result.error());
  return true;
}

void Engine::TickerLoop() {
  const double step_s = frame().step_seconds();
  for (;;) {
    if (stop_) return;
    auto committed = CatchUp();
    if (!committed) {
      if (stop_) return;
      log_->Error("tick_failed", {{"error", committed.error().ToString()}});
      std::unique_lock lock(dirty_mutex_);
      dirty_cv_.wait_for(lock, Seconds(1), [&] { return stop_.load(); });
      continue;
    }
    if (*committed) continue;
    double wake = 0;
    {
      std::shared_lock lock(state_mutex_);
      wake = published_.origin_unix + static_cast<double>(published_.next_step) * step_s;
    }
    std::unique_lock lock(dirty_mutex_);
    dirty_cv_.wait_for(lock, Seconds(std::min(wake - Now(), 1.0)), [&] { return stop_.load(); });
  }
}

}  // namespace ordo::service
