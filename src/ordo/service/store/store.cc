#include "ordo/service/store/store.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace ordo::service::store {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kNextGeneratedIdKey = "next_generated_id/";

// Migration k (1-based) takes the schema from version k-1 to k. Append only: a migration that has
// shipped is never edited, since files in the field were built by it.
constexpr const char* kMigrations[] = {
    // 1: jobs, services, the committed steps, the clock.
    R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  spec TEXT NOT NULL,
  submitted_step INTEGER NOT NULL,
  submitted_unix REAL NOT NULL,
  state INTEGER NOT NULL,
  start_step INTEGER,
  first_gpu INTEGER,
  gpus INTEGER,
  duration_steps INTEGER,
  finished_step INTEGER
) STRICT;
CREATE TABLE services (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL UNIQUE,
  spec TEXT NOT NULL,
  anchor_step INTEGER NOT NULL,
  committed_gpus INTEGER
) STRICT;
CREATE TABLE steps (step INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;
PRAGMA user_version = 1;
)sql",
    // 2: traffic samples for the demand forecaster; listing a tenant's jobs by index.
    R"sql(
CREATE TABLE traffic (
  service TEXT NOT NULL,
  time_s REAL NOT NULL,
  rate REAL NOT NULL,
  PRIMARY KEY (service, time_s)
) STRICT, WITHOUT ROWID;
CREATE INDEX jobs_by_tenant ON jobs (tenant, seq);
PRAGMA user_version = 2;
)sql",
    // 3: job ids per tenant. A job's id becomes its qualified id `tenant/id` (state.h), in its row,
    // its spec and every committed step that names it; the global counter of generated ids
    // (`job-N`) is dropped, and each tenant counts its own from 1 (a generated id that is taken is
    // skipped).
    R"sql(
UPDATE steps SET body = json_set(body, '$.jobs', json((
  SELECT json_group_array(json_array(
           COALESCE((SELECT tenant FROM jobs WHERE jobs.id = json_extract(e.value, '$[0]')),
                    'unknown') || '/' || json_extract(e.value, '$[0]'),
           json_extract(e.value, '$[1]'),
           json_extract(e.value, '$[2]')))
  FROM json_each(steps.body, '$.jobs') AS e)));
UPDATE jobs SET spec = json_set(spec, '$.id', tenant || '/' || id), id = tenant || '/' || id;
DELETE FROM meta WHERE key = 'next_generated_id';
PRAGMA user_version = 3;
)sql",
    // 4: preemption (jobs with a checkpoint): a job's saved work, the restart steps of its current
    // stay, how often and when it was last preempted, its lost GPU-steps.
    R"sql(
ALTER TABLE jobs ADD COLUMN saved_steps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN stay_restart_steps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN preempted_step INTEGER;
ALTER TABLE jobs ADD COLUMN lost_gpu_steps INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 4;
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

enum Slot : int {
  kInsertJob,
  kUpdateJob,
  kPutService,
  kSetCommittedGpus,
  kInsertTraffic,
  kInsertStep,
  kSetMeta,
  kSlotCount
};

std::string DoubleText(double value) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return {buffer, static_cast<size_t>(n)};
}

Result<int64_t> ToInt64(const std::string& text, std::string_view key) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Fail(Error{ErrorCode::kIo, "db", "meta." + std::string(key) + " is not an integer"});
  }
  return value;
}

Result<double> ToDouble(const std::string& text, std::string_view key) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return Fail(Error{ErrorCode::kIo, "db", "meta." + std::string(key) + " is not a number"});
  }
  return value;
}

Result<void> Migrate(Db& db, int target) {
  auto current_text = db.PragmaValue("user_version");
  if (!current_text) return Fail(current_text.error());
  auto current = ToInt64(*current_text, "user_version");
  if (!current) return Fail(current.error());
  if (*current > kSchemaVersion) {
    return Fail(Error{ErrorCode::kIo, "db",
                      "the database has schema version " + std::to_string(*current) +
                          ", newer than this ordo's " + std::to_string(kSchemaVersion) +
                          "; use a newer ordo or another --db"});
  }
  for (int version = static_cast<int>(*current) + 1; version <= target; ++version) {
    if (auto ok = db.Exec("BEGIN IMMEDIATE"); !ok) return ok;
    if (auto ok = db.Exec(kMigrations[version - 1]); !ok) {
      (void)db.Exec("ROLLBACK");
      Error error = ok.error();
      error.message =
          "migration to schema version " + std::to_string(version) + " failed: " + error.message;
      return Fail(std::move(error));
    }
    if (auto ok = db.Exec("COMMIT"); !ok) {
      (void)db.Exec("ROLLBACK");
      return ok;
    }
  }
  return {};
}

}  // namespace

std::string StepToJson(const CommittedStep& step) {
  Json out = Json::object();
  out["policy"] = step.policy;
  Json jobs = Json::array();
  for (const CommittedJob& job : step.jobs) jobs.push_back({job.id, job.first_gpu, job.gpus});
  out["jobs"] = std::move(jobs);
  Json services = Json::array();
  for (const CommittedService& s : step.services) {
    services.push_back({{"id", s.id}, {"gpus", s.gpus}, {"demand", s.demand}});
  }
  out["services"] = std::move(services);
  out["utilization"] = step.utilization;
  out["allocated_utilization"] = step.allocated_utilization;
  out["value"] = step.value;
  out["unmet_gpus"] = step.unmet_gpus;
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<CommittedStep> StepFromJson(int64_t step_number, std::string_view text) {
  Json doc = Json::parse(text, nullptr, false);
  const std::string where = "steps[" + std::to_string(step_number) + "]";
  if (doc.is_discarded() || !doc.is_object()) {
    return Fail(Error{ErrorCode::kIo, where, "the stored step is not a JSON object"});
  }
  try {
    CommittedStep step;
    step.step = step_number;
    step.policy = doc.at("policy").get<std::string>();
    for (const Json& job : doc.at("jobs")) {
      step.jobs.push_back(
          CommittedJob{job.at(0).get<std::string>(), job.at(1).get<int>(), job.at(2).get<int>()});
    }
    for (const Json& s : doc.at("services")) {
      step.services.push_back(CommittedService{s.at("id").get<std::string>(),
                                               s.at("gpus").get<std::vector<int>>(),
                                               s.at("demand").get<int>()});
    }
    step.utilization = doc.at("utilization").get<double>();
    step.allocated_utilization = doc.at("allocated_utilization").get<double>();
    step.value = doc.at("value").get<double>();
    step.unmet_gpus = doc.at("unmet_gpus").get<int64_t>();
    return step;
  } catch (const std::exception& ex) {
    return Fail(
        Error{ErrorCode::kIo, where, std::string("the stored step is malformed: ") + ex.what()});
  }
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, int target_version) {
  if (target_version < 1 || target_version > kSchemaVersion) {
    return Fail(
        Error{ErrorCode::kInternal, "db", "no schema version " + std::to_string(target_version)});
  }
  auto db = Db::Open(path, true);
  if (!db) return Fail(db.error());
  // WAL: readers never block the writer and a commit appends to one file. synchronous=FULL: the
  // WAL is fsynced at every commit, so "acknowledged" survives power loss, not only a crash of the
  // process (NORMAL would lose the last commits on power loss). Group commit amortises the fsync.
  auto mode = db->PragmaValue("journal_mode = WAL");
  if (!mode) return Fail(mode.error());
  if (*mode != "wal") {
    return Fail(
        Error{ErrorCode::kIo, "db",
              "cannot use WAL journaling on \"" + path + "\" (got journal_mode " + *mode + ")"});
  }
  if (auto ok = db->Exec("PRAGMA synchronous = FULL"); !ok) return Fail(ok.error());
  if (auto ok = Migrate(*db, target_version); !ok) return Fail(ok.error());
  std::unique_ptr<Store> store(new Store(std::move(*db), path));
  store->statements_.resize(kSlotCount);
  store->version_ = target_version;
  return store;
}

Result<Statement*> Store::Cached(int slot, std::string_view sql) {
  auto& entry = statements_[static_cast<size_t>(slot)];
  if (!entry) {
    auto stmt = db_.Prepare(sql);
    if (!stmt) return Fail(stmt.error());
    entry.emplace(std::move(*stmt));
  }
  return &*entry;
}

Result<int> Store::SchemaVersion() {
  auto text = db_.PragmaValue("user_version");
  if (!text) return Fail(text.error());
  auto value = ToInt64(*text, "user_version");
  if (!value) return Fail(value.error());
  return static_cast<int>(*value);
}

Result<void> Store::Begin() { return db_.Exec("BEGIN IMMEDIATE"); }
Result<void> Store::Commit() { return db_.Exec("COMMIT"); }
void Store::Rollback() { (void)db_.Exec("ROLLBACK"); }

Result<int64_t> Store::InsertJob(const JobRecord& record, std::string_view spec) {
  auto stmt = Cached(kInsertJob,
                     "INSERT INTO jobs (seq, id, tenant, spec, submitted_step, submitted_unix, "
                     "state) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return Fail(stmt.error());
  Statement& s = **stmt;
  if (record.seq > 0) {
    s.Bind(1, record.seq);
  } else {
    s.BindNull(1);
  }
  s.Bind(2, std::string_view(record.job.id))
      .Bind(3, std::string_view(record.tenant))
      .Bind(4, spec)
      .Bind(5, record.submitted_step)
      .Bind(6, record.submitted_unix)
      .Bind(7, static_cast<int64_t>(record.state));
  if (auto ok = s.Run(); !ok) return Fail(ok.error());
  return db_.LastInsertRowId();
}

Result<void> Store::UpdateJob(const JobRecord& record) {
  // A store opened at an older version (tests that build old files) has no preemption columns.
  constexpr int kPreemptionColumns = 4;
  const bool preemption = version_ >= kPreemptionColumns;
  auto stmt =
      Cached(kUpdateJob, preemption ? "UPDATE jobs SET state = ?, start_step = ?, first_gpu = ?, "
                                      "gpus = ?, duration_steps = ?, finished_step = ?, "
                                      "saved_steps = ?, stay_restart_steps = ?, preemptions = ?, "
                                      "preempted_step = ?, lost_gpu_steps = ? WHERE seq = ?"
                                    : "UPDATE jobs SET state = ?, start_step = ?, first_gpu = ?, "
                                      "gpus = ?, duration_steps = ?, finished_step = ? "
                                      "WHERE seq = ?");
  if (!stmt) return Fail(stmt.error());
  Statement& s = **stmt;
  // A preempted job waiting to resume keeps the shape it runs in.
  const bool placed = record.state == JobState::kRunning || record.state == JobState::kDone ||
                      record.preemptions > 0 ||
                      (record.state == JobState::kCancelled && record.shape.gpus > 0);
  auto opt = [&](int64_t v) { return placed ? std::optional<int64_t>(v) : std::nullopt; };
  const bool finished = record.state == JobState::kDone || record.state == JobState::kCancelled;
  s.Bind(1, static_cast<int64_t>(record.state))
      .Bind(2, opt(record.start_step))
      .Bind(3, opt(record.first_gpu))
      .Bind(4, opt(record.shape.gpus))
      .Bind(5, opt(record.shape.duration_steps))
      .Bind(6, finished ? std::optional<int64_t>(record.finished_step) : std::nullopt);
  if (!preemption) return s.Bind(7, record.seq).Run();
  s.Bind(7, static_cast<int64_t>(record.saved_steps))
      .Bind(8, static_cast<int64_t>(record.stay_restart_steps))
      .Bind(9, static_cast<int64_t>(record.preemptions))
      .Bind(10, record.preempted_step)
      .Bind(11, record.lost_gpu_steps)
      .Bind(12, record.seq);
  return s.Run();
}

Result<void> Store::PutService(const ServiceRecord& record, std::string_view spec) {
  auto stmt =
      Cached(kPutService,
             "INSERT INTO services (id, seq, spec, anchor_step, committed_gpus) "
             "VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, "
             "anchor_step = excluded.anchor_step, committed_gpus = excluded.committed_gpus");
  if (!stmt) return Fail(stmt.error());
  Statement& s = **stmt;
  s.Bind(1, std::string_view(record.service.id))
      .Bind(2, record.seq)
      .Bind(3, spec)
      .Bind(4, record.anchor_step)
      .Bind(5,
            record.committed_gpus ? std::optional<int64_t>(*record.committed_gpus) : std::nullopt);
  return s.Run();
}

Result<void> Store::SetCommittedGpus(std::string_view service, std::optional<int> gpus) {
  auto stmt = Cached(kSetCommittedGpus, "UPDATE services SET committed_gpus = ? WHERE id = ?");
  if (!stmt) return Fail(stmt.error());
  (*stmt)->Bind(1, gpus ? std::optional<int64_t>(*gpus) : std::nullopt).Bind(2, service);
  return (*stmt)->Run();
}

Result<void> Store::InsertTraffic(std::string_view service,
                                  const std::vector<forecast::RatePoint>& points) {
  auto stmt =
      Cached(kInsertTraffic, "INSERT INTO traffic (service, time_s, rate) VALUES (?, ?, ?)");
  if (!stmt) return Fail(stmt.error());
  for (const forecast::RatePoint& p : points) {
    (*stmt)->Bind(1, service).Bind(2, p.time_s).Bind(3, p.rate);
    if (auto ok = (*stmt)->Run(); !ok) return ok;
  }
  return {};
}

Result<void> Store::InsertStep(const CommittedStep& step) {
  auto stmt = Cached(kInsertStep, "INSERT INTO steps (step, body) VALUES (?, ?)");
  if (!stmt) return Fail(stmt.error());
  const std::string body = StepToJson(step);
  (*stmt)->Bind(1, step.step).Bind(2, std::string_view(body));
  return (*stmt)->Run();
}

Result<void> Store::SetMeta(std::string_view key, std::string_view value) {
  auto stmt = Cached(kSetMeta,
                     "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                     "value = excluded.value");
  if (!stmt) return Fail(stmt.error());
  (*stmt)->Bind(1, key).Bind(2, value);
  return (*stmt)->Run();
}

Result<void> Store::SetClock(int64_t next_step, double committed_value_total) {
  if (auto ok = SetMeta("next_step", std::to_string(next_step)); !ok) return ok;
  return SetMeta("committed_value_total", DoubleText(committed_value_total));
}

Result<void> Store::InitClock(double origin_unix, std::string_view cluster_fingerprint) {
  if (auto ok = SetMeta("origin_unix", DoubleText(origin_unix)); !ok) return ok;
  if (auto ok = SetMeta("cluster", cluster_fingerprint); !ok) return ok;
  return SetClock(0, 0);
}

Result<void> Store::SetNextGeneratedId(std::string_view tenant, int64_t next) {
  return SetMeta(std::string(kNextGeneratedIdKey) + std::string(tenant), std::to_string(next));
}

Result<Snapshot> Store::Load() {
  Snapshot snap;
  {
    auto stmt = db_.Prepare("SELECT key, value FROM meta");
    if (!stmt) return Fail(stmt.error());
    for (;;) {
      auto row = stmt->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      const std::string key = stmt->Text(0);
      const std::string value = stmt->Text(1);
      if (key == "next_step") {
        auto v = ToInt64(value, key);
        if (!v) return Fail(v.error());
        snap.next_step = *v;
        snap.fresh = false;
      } else if (key == "origin_unix") {
        auto v = ToDouble(value, key);
        if (!v) return Fail(v.error());
        snap.origin_unix = *v;
      } else if (key.rfind(kNextGeneratedIdKey, 0) == 0) {
        auto v = ToInt64(value, key);
        if (!v) return Fail(v.error());
        snap.next_generated_id[key.substr(kNextGeneratedIdKey.size())] = *v;
      } else if (key == "committed_value_total") {
        auto v = ToDouble(value, key);
        if (!v) return Fail(v.error());
        snap.committed_value_total = *v;
      } else if (key == "cluster") {
        snap.cluster_fingerprint = value;
      }
    }
  }
  {
    auto stmt = db_.Prepare(
        "SELECT seq, id, tenant, spec, submitted_step, submitted_unix, state, start_step, "
        "first_gpu, gpus, duration_steps, finished_step, saved_steps, stay_restart_steps, "
        "preemptions, preempted_step, lost_gpu_steps FROM jobs ORDER BY seq");
    if (!stmt) return Fail(stmt.error());
    for (;;) {
      auto row = stmt->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      StoredJob job;
      JobRecord& r = job.record;
      r.seq = stmt->Int(0);
      r.job.id = stmt->Text(1);
      r.tenant = stmt->Text(2);
      job.spec = stmt->Text(3);
      r.submitted_step = stmt->Int(4);
      r.submitted_unix = stmt->Double(5);
      const int64_t state = stmt->Int(6);
      if (state < 0 || state > static_cast<int64_t>(JobState::kCancelled)) {
        return Fail(Error{ErrorCode::kIo, "db",
                          "job \"" + r.job.id + "\" has unknown state " + std::to_string(state)});
      }
      r.state = static_cast<JobState>(state);
      r.start_step = stmt->OptionalInt(7).value_or(0);
      r.first_gpu = static_cast<int>(stmt->OptionalInt(8).value_or(0));
      r.shape.gpus = static_cast<int>(stmt->OptionalInt(9).value_or(0));
      r.shape.duration_steps = static_cast<int>(stmt->OptionalInt(10).value_or(0));
      r.finished_step = stmt->OptionalInt(11).value_or(0);
      r.saved_steps = static_cast<int>(stmt->Int(12));
      r.stay_restart_steps = static_cast<int>(stmt->Int(13));
      r.preemptions = static_cast<int>(stmt->Int(14));
      r.preempted_step = stmt->OptionalInt(15);
      r.lost_gpu_steps = stmt->Int(16);
      snap.jobs.push_back(std::move(job));
    }
  }
  {
    auto stmt =
        db_.Prepare("SELECT seq, id, spec, anchor_step, committed_gpus FROM services ORDER BY seq");
    if (!stmt) return Fail(stmt.error());
    for (;;) {
      auto row = stmt->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      StoredService s;
      s.seq = stmt->Int(0);
      s.id = stmt->Text(1);
      s.spec = stmt->Text(2);
      s.anchor_step = stmt->Int(3);
      if (auto gpus = stmt->OptionalInt(4)) s.committed_gpus = static_cast<int>(*gpus);
      snap.services.push_back(std::move(s));
    }
  }
  {
    auto stmt = db_.Prepare("SELECT step, body FROM steps ORDER BY step DESC LIMIT ?");
    if (!stmt) return Fail(stmt.error());
    stmt->Bind(1, static_cast<int64_t>(kRecentSteps));
    for (;;) {
      auto row = stmt->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      auto step = StepFromJson(stmt->Int(0), stmt->Text(1));
      if (!step) return Fail(step.error());
      snap.recent.push_back(std::move(*step));
    }
    std::reverse(snap.recent.begin(), snap.recent.end());
  }
  return snap;
}

Result<std::vector<forecast::RatePoint>> Store::LoadTraffic(std::string_view service) {
  auto stmt = db_.Prepare("SELECT time_s, rate FROM traffic WHERE service = ? ORDER BY time_s");
  if (!stmt) return Fail(stmt.error());
  stmt->Bind(1, service);
  std::vector<forecast::RatePoint> points;
  for (;;) {
    auto row = stmt->Step();
    if (!row) return Fail(row.error());
    if (!*row) break;
    points.push_back({stmt->Double(0), stmt->Double(1)});
  }
  return points;
}

Result<std::vector<CommittedStep>> Store::ReadSteps(int64_t from, int64_t to, int64_t limit) {
  std::lock_guard lock(reader_mutex_);
  if (!reader_) {
    auto db = Db::Open(path_, false, true);
    if (!db) return Fail(db.error());
    reader_.emplace(std::move(*db));
  }
  auto stmt = reader_->Prepare(
      "SELECT step, body FROM steps WHERE step >= ? AND step < ? ORDER BY step LIMIT ?");
  if (!stmt) return Fail(stmt.error());
  stmt->Bind(1, from).Bind(2, to).Bind(3, limit);
  std::vector<CommittedStep> steps;
  for (;;) {
    auto row = stmt->Step();
    if (!row) return Fail(row.error());
    if (!*row) break;
    auto step = StepFromJson(stmt->Int(0), stmt->Text(1));
    if (!step) return Fail(step.error());
    steps.push_back(std::move(*step));
  }
  return steps;
}

}  // namespace ordo::service::store
