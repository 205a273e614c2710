// The service's core, below HTTP: the state (state.h), its store (store/store.h), the clock and
// the planners, behind a thread-safe API the HTTP layer (api.h) calls. Tests drive it directly.
//
// Threads:
// - the writer applies every change in order. Requests queued while it commits are committed
//   together (group commit: one fsync for many acknowledgements); a request is answered only after
//   its transaction is durable. It alone mutates the state: it works on a private copy and
//   publishes the changed records to the shared one after the commit.
// - the fast planner re-plans after changes (debounced: one plan covers every change made within
//   the debounce of the first) and adopts its plan when it is legal and newer.
// - the full planner runs full mode every full_interval_s under full_time_limit_s; its plan is
//   adopted only when legal, made from the state still current, and better than the adopted one.
// - with the wall clock, a ticker commits each step when it begins.
// Readers (GET requests, metrics, the dashboard) take a shared lock on the published state.
//
// Committing a step: the adopted plan when it was made from the current state, else a fresh fast
// plan; either way checked (planning.h). Running jobs are pinned in every scenario, so a committed
// job keeps its block until it ends.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ordo/io/scenario_io.h"
#include "ordo/policy/registry.h"
#include "ordo/service/codec.h"
#include "ordo/service/config.h"
#include "ordo/service/log.h"
#include "ordo/service/metrics.h"
#include "ordo/service/planning.h"
#include "ordo/service/redact.h"
#include "ordo/service/state.h"
#include "ordo/service/store/store.h"

namespace ordo::service {

struct EngineOptions {
  std::string db_path = "ordo.db";
  /// Steps advance only through Advance(); otherwise a step is committed when the wall clock
  /// reaches it.
  bool manual_clock = false;
  std::string fast_policy = "ordo";
  std::string full_policy = "ordo-full";
  /// The baseline used when a policy fails or returns an illegal plan.
  std::string fallback_policy = "priority-backfill";
  double fast_time_limit_s = 0.05;
  double debounce_s = 0.02;
  double full_interval_s = 300;  // 0: full mode never runs on its own
  double full_time_limit_s = 10;
  size_t max_batch = 512;            // requests per group commit
  size_t max_active_jobs = 100'000;  // pending + running; more is refused (kResourceExhausted)
  int max_advance_steps = 1000;      // per Advance call
  double max_whatif_time_limit_s = 10;
  int max_concurrent_whatif = 2;
  /// Working memory of one what-if's planner (PolicyOptions::memory_budget_bytes); two may run
  /// at once beside full mode's run.
  int64_t whatif_memory_budget_bytes = int64_t{1} << 30;
  /// Job shapes a what-if's hypothetical queue may hold (the active jobs' and the added ones');
  /// more is refused (invalid input naming `jobs`).
  size_t max_whatif_shapes = 200'000;
  /// Holders a what-if's explanations may name in all, over their spans (policy::ExplainBudget):
  /// the answer carries each twice (the plan's spans and the messages), so this bounds its size
  /// (a few MB) and the time taken to write it whatever the machine. The jobs past it are left
  /// unexplained and the answer is cut ("answer_size").
  int64_t whatif_max_explained_holders = 50'000;
  /// Unix seconds now; tests may replace it.
  std::function<double()> wall_clock;
  /// Policies by name; the in-tree registry when null. Must outlive the engine.
  const PolicyRegistry* registry = nullptr;
};

/// How posted jobs are read (submissions and what-ifs alike): a job with `features` and no
/// `duration_steps` gets the forecasters' median duration.
io::ReadOptions JobReadOptions();

/// The qualified id (state.h) of the job `id` names for `who`: an id as submitted is in the
/// caller's own namespace (the admin's too); a qualified `tenant/id` is taken as it is (the admin
/// addresses any tenant's job so; for a tenant, another tenant's is "not found" as any other).
std::string ResolveJobId(const Principal& who, std::string_view id);

/// Filters of ListJobs.
struct JobFilter {
  std::optional<JobState> state;
  int64_t after_seq = 0;  // cursor: jobs submitted after this seq
  size_t limit = 1000;
};

class Engine {
 public:
  /// Opens (or creates) the store, migrates it, loads the state and makes the first plan. The
  /// threads start with Start(). `log` must outlive the engine.
  static Result<std::unique_ptr<Engine>> Open(ServiceConfig config, EngineOptions options,
                                              Logger* log);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void Start();
  /// Stops the threads; requests still queued are answered kUnavailable. Idempotent.
  void Stop();
  /// Tells every plan being made (the fast re-plan, full mode's run, what-ifs) to return its best
  /// so far at once, and every later one to return at its first check; the writer keeps
  /// committing what is queued. For shutdown: call it before waiting for requests in flight.
  /// Thread-safe; Stop() calls it.
  void StopPlanning();

  /// True from the end of Start() to the beginning of Stop(): loaded, its threads running.
  bool Ready() const { return ready_; }

  const ServiceConfig& config() const { return config_; }
  const EngineOptions& options() const { return options_; }

  // Requests: typed (the codec reads bodies), answered with a view or an Error whose code says
  // what went wrong (api.cc maps codes to HTTP statuses). Each checks what `who` may see and do:
  // another tenant's job is kNotFound, an admin's action by a tenant kPermissionDenied.
  Result<nlohmann::json> SubmitJob(const Principal& who, JobBody body);
  Result<nlohmann::json> GetJob(const Principal& who, std::string_view id,
                                double wait_for_plan_s = 2.0);
  Result<nlohmann::json> ListJobs(const Principal& who, const JobFilter& filter);
  Result<nlohmann::json> CancelJob(const Principal& who, std::string_view id);
  /// Registers (`create`) or replaces a service; admin only.
  Result<nlohmann::json> PutService(const Principal& who, ServiceBody body, bool create);
  Result<nlohmann::json> GetService(const Principal& who, std::string_view id);
  Result<nlohmann::json> ListServices(const Principal& who);
  /// Learns a service's demand from traffic samples; admin only.
  Result<nlohmann::json> PostTraffic(const Principal& who, std::string_view id, TrafficBody body);
  /// Commits `steps` steps (admin, manual clock only). Answers once the plan for the new current
  /// state is adopted (or after `wait_for_plan_s`).
  Result<nlohmann::json> Advance(const Principal& who, int steps, double wait_for_plan_s = 10);
  /// The adopted plan in the plan format, with `x-step` (absolute step of step 0), `x-mode`,
  /// `x-version`, `x-explain`. Waits (up to 2 s) for a plan of the current state. A tenant sees
  /// its own jobs and the services.
  Result<nlohmann::json> PlanJson(const Principal& who);
  /// The allocation of the current step (the last committed one).
  Result<nlohmann::json> CommittedJson(const Principal& who);
  /// Committed steps in [from, to).
  Result<nlohmann::json> HistoryJson(const Principal& who, int64_t from, int64_t to);
  /// The plan a hypothetical change would produce; nothing is committed. Changing services is
  /// for the admin.
  Result<nlohmann::json> WhatIf(const Principal& who, WhatIfRequest request);
  /// Everything the dashboard draws, in one document.
  Result<nlohmann::json> DashboardJson(const Principal& who, int history_steps);
  /// What only the admin may do; kPermissionDenied saying so for anyone else. The requests above
  /// check it themselves; the API also asks before it reads a body's content, so a tenant is
  /// refused as such, not told what is wrong with a service it may not post.
  enum class AdminAction {
    kChangeServices,
    kWhatIfServices,  // a what-if that adds or replaces services
    kPostTraffic,
    kAdvanceClock,
    kReadMetrics,
  };
  [[nodiscard]] Result<void> Permit(const Principal& who, AdminAction action) const;
  /// Set when the engine is stopping: long reads (a what-if's jobs) end early.
  const std::atomic<bool>* stopping() const { return &planning_stop_; }
  nlohmann::json HealthJson();
  /// Prometheus text: the engine's counters and histograms and gauges computed now.
  std::string MetricsText();

  /// The HTTP layer's own figures, rendered with the engine's.
  LabeledCounter& http_requests() { return http_requests_; }
  LabeledHistogram& http_latency() { return http_latency_; }

  // For tests and the load benchmark.
  std::shared_ptr<const AdoptedPlan> CurrentPlan() const;
  /// Waits until a plan made from state version >= `version` is adopted; false on timeout.
  bool WaitForPlan(uint64_t version, double timeout_s);
  uint64_t StateVersion() const;
  /// The next step to commit (the current step is one less).
  int64_t NextStep() const;
  /// Runs full mode once now, on the calling thread; returns the outcome ("adopted", "worse",
  /// "stale", "illegal", "failed", "unchanged").
  std::string RunFullModeOnce();
  /// A copy of the published state.
  State StateCopy() const;

 private:
  struct Op;
  struct Txn;
  Engine(ServiceConfig config, EngineOptions options, Logger* log);

  Result<void> LoadState();
  Result<ServiceRecord> RestoreService(const store::StoredService& stored, int64_t next_step,
                                       double origin_unix);
  double Now() const;
  Frame frame() const { return Frame{&config_.base, &tenancy_}; }
  /// Refuses a job whose priority is above the tenant's max_priority (invalid input naming
  /// `field`).
  Result<void> CheckPriorityCap(const Principal& who, const Job& job,
                                const std::string& field) const;

  // Writer.
  Result<nlohmann::json> Enqueue(std::function<Result<nlohmann::json>(Txn&)> run);
  void WriterLoop();
  void RunBatch(std::vector<std::unique_ptr<Op>>& batch);
  void Publish(const Txn& txn);
  Result<nlohmann::json> DoAdvance(Txn& txn, int64_t target, int64_t quiet_until);
  void RefreshForecast(ServiceRecord& record, int64_t next_step, double origin_unix) const;

  // Planners.
  void MarkDirty();
  void FastLoop();
  void FullLoop();
  void TickerLoop();
  /// With the wall clock: commits every step that has begun and is not committed yet (at most
  /// max_advance_steps). True when it committed some, false when none was due.
  Result<bool> CatchUp();
  bool Adopt(std::shared_ptr<const AdoptedPlan> plan, bool require_better);
  Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name) const;

  std::shared_ptr<const AdoptedPlan> ExplainedPlan() const;
  // The what-if's parts (engine_views.cc).
  struct WhatIfWorld;
  Result<WhatIfWorld> MakeWhatIfWorld(const Principal& who, const WhatIfRequest& request) const;
  /// The limits on a what-if's hypothetical queue: its size, and that it admits a legal plan.
  Result<void> CheckWhatIfScenario(const Scenario& scenario) const;
  /// `explain_timed_out`: the deadline, not the size bound, ended the explanations (when they
  /// leave jobs out).
  nlohmann::json WhatIfAnswer(const Principal& who, const std::string& policy,
                              const WhatIfWorld& world, const Plan& plan,
                              const std::vector<JobExplanation>& explanations,
                              bool explain_timed_out, std::optional<Cut> cut);
  /// The added jobs' views; the caller holds a shared lock on the state.
  nlohmann::json AddedJobViews(const WhatIfWorld& world, const Plan& plan,
                               const std::vector<JobExplanation>& explanations, bool explained_all,
                               const Redactor& redact) const;
  /// A job that can never run beside the services' floors is refused at submission (the field
  /// `gpus` or `shapes` named), not left to wait forever.
  Result<void> CheckCanEverRunNow(const Job& job) const;
  /// The world of `work` with `record` added or replaced must admit a legal plan: invalid input
  /// naming the service's field otherwise.
  Result<void> CheckServiceFits(const State& work, const ServiceRecord& record) const;
  nlohmann::json JobView(const JobRecord& record, const State& state, const AdoptedPlan* plan,
                         const Redactor& redact) const;
  bool CanSee(const Principal& who, const JobRecord& record) const {
    return who.admin || record.tenant == who.name;
  }

  ServiceConfig config_;
  Tenancy tenancy_;  // from config_: what planning priorities are made with
  EngineOptions options_;
  Logger* log_;
  PolicyRegistry own_registry_;
  const PolicyRegistry* registry_;
  std::unique_ptr<store::Store> store_;
  double started_unix_ = 0;

  // The published state and its lock. The writer's private copy lives in WriterLoop.
  mutable std::shared_mutex state_mutex_;
  State published_;
  State work_;  // writer thread only (and Open, before the threads start)

  // The writer's queue.
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::unique_ptr<Op>> queue_;
  bool stopping_ = false;

  // The adopted plan.
  mutable std::mutex plan_mutex_;
  std::condition_variable plan_cv_;
  std::shared_ptr<const AdoptedPlan> plan_;

  // Planner wake-ups.
  std::mutex dirty_mutex_;
  std::condition_variable dirty_cv_;
  bool dirty_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> planning_stop_{false};  // StopPlanning(): every planner returns early
  std::atomic<bool> full_stop_{false};      // tells a running full solve to return early
  std::atomic<bool> full_running_{false};
  std::mutex full_mutex_;  // one full solve at a time

  std::atomic<int> whatif_running_{0};

  std::thread writer_;
  std::thread fast_;
  std::thread full_;
  std::thread ticker_;
  bool started_ = false;
  std::atomic<bool> ready_{false};

  // Figures.
  LabeledCounter http_requests_;
  LabeledHistogram http_latency_{LatencyBuckets()};
  LabeledHistogram planning_latency_{LatencyBuckets()};
  LabeledHistogram commit_latency_{LatencyBuckets()};
  LabeledCounter plans_;        // by mode and outcome
  LabeledCounter submissions_;  // by tenant
  LabeledCounter whatifs_;      // by what cut them short
  LabeledHistogram batch_sizes_{{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}};
  mutable std::mutex forecast_error_mutex_;
  struct ForecastError {
    double abs_error = 0;
    double actual = 0;
    int64_t samples = 0;
  };
  std::map<std::string, ForecastError> forecast_errors_;
};

}  // namespace ordo::service
