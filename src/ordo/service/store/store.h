// The service's durable state in one SQLite file: jobs, services, traffic, the committed steps and
// the clock. WAL journal with synchronous=FULL: a transaction is on disk (the WAL fsynced) when
// Commit returns, so an acknowledged request survives a crash of the process or of the machine.
// The schema is versioned (PRAGMA user_version) and migrated forward on open, one transaction per
// migration; a file newer than this build is refused rather than misread.
//
// Threading: one writer thread calls the write methods (Begin .. Commit); ReadSteps may be called
// from any thread (it uses its own read-only connection under a mutex, which WAL lets run beside
// the writer).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/forecast/time_series.h"
#include "ordo/service/state.h"
#include "ordo/service/store/sqlite.h"

namespace ordo::service::store {

/// The schema version this build writes. Migrations 1..kSchemaVersion are in store.cc.
inline constexpr int kSchemaVersion = 4;

/// What the store holds, as read at start-up. Job and service specs are JSON text (codec.h reads
/// them with the config's cluster).
struct StoredJob {
  JobRecord record;  // all fields but record.job, which is read from `spec`
  std::string spec;
};
struct StoredService {
  int64_t seq = 0;
  std::string id;
  std::string spec;
  int64_t anchor_step = 0;
  std::optional<int> committed_gpus;
};
struct Snapshot {
  bool fresh = true;  // no clock stored yet: a new database
  int64_t next_step = 0;
  double origin_unix = 0;
  std::map<std::string, int64_t> next_generated_id;  // by tenant
  double committed_value_total = 0;
  std::string cluster_fingerprint;
  std::vector<StoredJob> jobs;          // by seq
  std::vector<StoredService> services;  // by seq
  std::vector<CommittedStep> recent;    // the last kRecentSteps steps, oldest first
};

class Store {
 public:
  /// Opens or creates the database at `path`, sets WAL and synchronous=FULL and migrates the
  /// schema up to `target_version` (tests use a lower one to build old files).
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             int target_version = kSchemaVersion);

  [[nodiscard]] Result<Snapshot> Load();
  [[nodiscard]] Result<std::vector<forecast::RatePoint>> LoadTraffic(std::string_view service);
  [[nodiscard]] Result<int> SchemaVersion();
  /// A pragma's value ("journal_mode" -> "wal"), for checks and tests.
  [[nodiscard]] Result<std::string> PragmaValue(const char* pragma) {
    return db_.PragmaValue(pragma);
  }

  // Writes, inside Begin/Commit. Each returns the SQLite failure as kIo.
  [[nodiscard]] Result<void> Begin();
  [[nodiscard]] Result<void> Commit();
  void Rollback();

  /// Inserts a new job; returns its seq (row id).
  [[nodiscard]] Result<int64_t> InsertJob(const JobRecord& record, std::string_view spec);
  /// Writes a job's state, placement and finish.
  [[nodiscard]] Result<void> UpdateJob(const JobRecord& record);
  /// Inserts or replaces a service (by id).
  [[nodiscard]] Result<void> PutService(const ServiceRecord& record, std::string_view spec);
  [[nodiscard]] Result<void> SetCommittedGpus(std::string_view service, std::optional<int> gpus);
  [[nodiscard]] Result<void> InsertTraffic(std::string_view service,
                                           const std::vector<forecast::RatePoint>& points);
  [[nodiscard]] Result<void> InsertStep(const CommittedStep& step);
  [[nodiscard]] Result<void> SetClock(int64_t next_step, double committed_value_total);
  [[nodiscard]] Result<void> InitClock(double origin_unix, std::string_view cluster_fingerprint);
  /// The next generated id of `tenant` (meta key `next_generated_id/<tenant>`).
  [[nodiscard]] Result<void> SetNextGeneratedId(std::string_view tenant, int64_t next);

  /// Committed steps in [from, to), oldest first, at most `limit`. Thread-safe.
  [[nodiscard]] Result<std::vector<CommittedStep>> ReadSteps(int64_t from, int64_t to,
                                                             int64_t limit);

 private:
  Store(Db writer, std::string path) : db_(std::move(writer)), path_(std::move(path)) {}
  Result<void> SetMeta(std::string_view key, std::string_view value);
  Result<Statement*> Cached(int slot, std::string_view sql);

  Db db_;
  std::string path_;
  int version_ = kSchemaVersion;                      // the schema it was opened at
  std::vector<std::optional<Statement>> statements_;  // prepared once, by slot
  std::mutex reader_mutex_;
  std::optional<Db> reader_;
};

/// A committed step as the JSON text the store keeps (and back).
std::string StepToJson(const CommittedStep& step);
[[nodiscard]] Result<CommittedStep> StepFromJson(int64_t step, std::string_view text);

}  // namespace ordo::service::store
