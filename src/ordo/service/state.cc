#include "ordo/service/state.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "ordo/core/assert.h"
#include "ordo/forecast/ramp_reserve.h"

namespace ordo::service {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 4> kStateNames = {{
    {JobState::kPending, "pending"},
    {JobState::kRunning, "running"},
    {JobState::kDone, "done"},
    {JobState::kCancelled, "cancelled"},
}};

int64_t Clamp(int64_t value, int64_t lo, int64_t hi) { return std::min(std::max(value, lo), hi); }

}  // namespace

std::string_view JobStateName(JobState state) {
  for (const auto& [value, name] : kStateNames) {
    if (value == state) return name;
  }
  return "unknown";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (const auto& [value, known] : kStateNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

std::string QualifiedJobId(std::string_view tenant, std::string_view id) {
  std::string out;
  out.reserve(tenant.size() + 1 + id.size());
  out.append(tenant).push_back(kTenantSeparator);
  out.append(id);
  return out;
}

std::string_view JobIdTenant(std::string_view qualified) {
  const size_t cut = qualified.find(kTenantSeparator);
  return cut == std::string_view::npos ? std::string_view() : qualified.substr(0, cut);
}

std::string_view LocalJobId(std::string_view qualified) {
  const size_t cut = qualified.find(kTenantSeparator);
  return cut == std::string_view::npos ? qualified : qualified.substr(cut + 1);
}

int ServiceRecord::DemandAt(int64_t step) const {
  if (traffic && forecaster && step >= forecast_base &&
      step - forecast_base < static_cast<int64_t>(forecast_demand.size())) {
    return forecast_demand[static_cast<size_t>(step - forecast_base)];
  }
  const auto& profile = service.demand;
  if (profile.empty()) return 0;
  const auto n = static_cast<int64_t>(profile.size());
  const int64_t offset = ((step - anchor_step) % n + n) % n;
  return profile[static_cast<size_t>(offset)];
}

const JobRecord* State::FindJob(std::string_view id) const {
  auto it = job_seq.find(std::string(id));
  if (it == job_seq.end()) return nullptr;
  auto job = jobs.find(it->second);
  return job == jobs.end() ? nullptr : &job->second;
}

JobRecord* State::FindJob(std::string_view id) {
  return const_cast<JobRecord*>(std::as_const(*this).FindJob(id));
}

const ServiceRecord* State::FindService(std::string_view id) const {
  for (const ServiceRecord& s : services) {
    if (s.service.id == id) return &s;
  }
  return nullptr;
}

ServiceRecord* State::FindService(std::string_view id) {
  return const_cast<ServiceRecord*>(std::as_const(*this).FindService(id));
}

void State::PutJob(JobRecord record) {
  const int64_t seq = record.seq;
  job_seq[record.job.id] = seq;
  if (record.active()) {
    active.insert(seq);
  } else {
    active.erase(seq);
  }
  jobs[seq] = std::move(record);
}

int Tenancy::Index(std::string_view tenant) const {
  for (size_t t = 0; t < names.size(); ++t) {
    if (names[t] == tenant) return static_cast<int>(t);
  }
  return -1;
}

namespace {

// Raises each service with posted traffic and a churn limit by its ramp reserve
// (forecast/ramp_reserve.h), taken from the GPUs its observed hourly traffic needed over the last
// `hours` hours: the largest rise from one observed hour to the next, less what its churn limit
// lets it rise in an hour.
void AddRampReserves(Scenario& scenario, const State& state, const Frame& frame, double hours) {
  const double now_s = StepStartUnix(state, frame, state.next_step);
  const int step_minutes = frame.base->step_minutes;
  for (Service& service : scenario.services) {
    const ServiceRecord* record = state.FindService(service.id);
    if (record == nullptr || !record->traffic || !record->forecaster ||
        !service.max_change_per_step) {
      continue;
    }
    const int churn = *service.max_change_per_step;
    const int churn_per_hour = std::max(churn, churn * 60 / step_minutes);
    int reserve = 0;
    std::optional<int> previous;  // GPUs of the hour before, when it was observed
    for (const double rate :
         record->forecaster->ObservedHourMeans(now_s, static_cast<int>(std::ceil(hours)))) {
      if (std::isnan(rate)) {
        previous.reset();
        continue;
      }
      const int gpus =
          forecast::GpusForRate(rate, record->traffic->per_gpu_rate, record->traffic->headroom);
      if (previous) {
        const std::array<int, 2> pair = {*previous, gpus};
        reserve = std::max(reserve, forecast::RampReserve(pair, churn_per_hour));
      }
      previous = gpus;
    }
    forecast::AddRampReserve(service, reserve);
  }
}

}  // namespace

Scenario PlanningScenario(const Scenario& scenario, const State& state, const Frame& frame) {
  Scenario out = scenario;
  if (frame.tenancy == nullptr) return out;
  const Tenancy& tenancy = *frame.tenancy;
  const double step_hours = frame.step_seconds() / 3600.0;
  // One factor per tenant: every job of a tenant shares it.
  std::vector<double> fair_share(tenancy.names.size(), 1.0);
  for (size_t t = 0; t < tenancy.names.size(); ++t) {
    const double usage = state.usage ? state.usage->UsageFraction(static_cast<int>(t)) : 0;
    fair_share[t] = priority::FairShareFactor(usage, tenancy.shares[t], tenancy.options.fair_share);
  }
  for (Job& job : out.jobs) {
    if (job.running) continue;
    const JobRecord* record = state.FindJob(job.id);
    const int64_t submitted = record != nullptr ? record->submitted_step : state.next_step;
    const double waited_hours =
        static_cast<double>(std::max<int64_t>(0, state.next_step - submitted)) * step_hours;
    const int t = tenancy.Index(JobIdTenant(job.id));
    job.priority = priority::JobPlanningPriority(job, waited_hours,
                                                 t < 0 ? 1.0 : fair_share[static_cast<size_t>(t)],
                                                 tenancy.options, step_hours);
  }
  if (tenancy.options.borrowing_factor < 1) {
    std::vector<int> tenant_of;
    tenant_of.reserve(out.jobs.size());
    for (const Job& job : out.jobs) tenant_of.push_back(tenancy.Index(JobIdTenant(job.id)));
    priority::ApplyShareGuarantee(out, tenant_of, tenancy.shares, tenancy.options.borrowing_factor);
  }
  if (tenancy.options.ramp_reserve_hours > 0) {
    AddRampReserves(out, state, frame, tenancy.options.ramp_reserve_hours);
  }
  return out;
}

void RecordUsage(State& state, const CommittedStep& step, const Frame& frame) {
  if (frame.tenancy == nullptr) return;
  const Tenancy& tenancy = *frame.tenancy;
  if (!state.usage) {
    state.usage.emplace(static_cast<int>(tenancy.names.size()),
                        tenancy.options.fair_share.half_life_hours);
  }
  std::vector<double> used(tenancy.names.size(), 0);
  for (const CommittedJob& job : step.jobs) {
    const int t = tenancy.Index(JobIdTenant(job.id));
    if (t >= 0) used[static_cast<size_t>(t)] += job.gpus;
  }
  state.usage->Add(frame.step_seconds() / 3600.0, used, frame.base->cluster.total_gpus());
}

double StepStartUnix(const State& state, const Frame& frame, int64_t step) {
  return state.origin_unix + static_cast<double>(step) * frame.step_seconds();
}

Scenario BuildScenario(const State& state, const Frame& frame, bool new_starts) {
  const Scenario& base = *frame.base;
  Scenario scenario;
  scenario.version = 1;
  scenario.name = base.name.empty() ? "ordo-serve" : base.name;
  scenario.step_minutes = base.step_minutes;
  scenario.horizon_steps = base.horizon_steps;
  scenario.cluster = base.cluster;
  scenario.cluster.Index();
  scenario.objective = base.objective;
  scenario.jobs.reserve(state.active.size());
  const int64_t now = state.next_step;
  for (const int64_t seq : state.active) {
    const JobRecord& record = state.jobs.at(seq);
    if (record.state == JobState::kPending && !new_starts) continue;
    Job job = record.job;
    if (record.state == JobState::kRunning) {
      const int64_t start = record.start_step - now;  // < 0: it started at a committed step
      ORDO_ASSERT(start <= 0 && record.stay_end_step() > now);
      job.shapes = {record.shape};
      job.running = RunningPlacement{static_cast<int>(start), record.first_gpu};
      if (record.preemptions > 0) {
        // A resumed stay: the planner counts its progress and the restart steps still to spend.
        job.running->progress_steps = record.ProgressAt(now);
        const int64_t restart_left = record.start_step + record.stay_restart_steps - now;
        if (restart_left > 0) job.running->restart_steps_left = static_cast<int>(restart_left);
      }
      job.arrival_step = static_cast<int>(start);
    } else {
      job.running.reset();
      if (record.preemptions > 0 && job.checkpoint) {
        // Waiting to resume, on a block of the size it had: the work it has not saved plus its
        // restart (a waiting job has no field for either, so its duration carries both).
        job.shapes = {Shape{
            record.shape.gpus,
            job.checkpoint->ResumedStaySteps(record.shape.duration_steps, record.saved_steps)}};
      }
      job.arrival_step = static_cast<int>(
          Clamp(record.submitted_step - now, -Limits::kMaxAbsStep, Limits::kMaxAbsStep));
    }
    scenario.jobs.push_back(std::move(job));
  }
  scenario.services.reserve(state.services.size());
  for (const ServiceRecord& record : state.services) {
    Service service = record.service;
    service.demand.assign(static_cast<size_t>(base.horizon_steps), 0);
    for (int t = 0; t < base.horizon_steps; ++t) service.demand[t] = record.DemandAt(now + t);
    if (record.committed_gpus) service.current_gpus = record.committed_gpus;
    scenario.services.push_back(std::move(service));
  }
  return scenario;
}

namespace {

// Running job `record` gives its block back at step `now`: it keeps the work its checkpoints
// saved, the work since its last save is lost, and it waits to resume.
void Preempt(JobRecord& record, int64_t now) {
  const int progress = record.ProgressAt(now);
  const int saved = record.job.checkpoint->SavedProgress(progress);
  record.lost_gpu_steps += static_cast<int64_t>(progress - saved) * record.shape.gpus;
  record.saved_steps = saved;
  record.stay_restart_steps = 0;
  record.preemptions += 1;
  record.preempted_step = now;
  record.state = JobState::kPending;
}

// Pending job `record` starts a stay at step `now` on the block at `first_gpu`: its first, in the
// plan's shape, or a resume of a preempted job, which first spends its restart steps.
void StartStay(JobRecord& record, const JobPlacement& placement, int first_gpu, int64_t now) {
  if (record.preemptions == 0) {
    record.shape = Shape{placement.gpus, placement.duration_steps};
  } else {
    ORDO_ASSERT(placement.gpus == record.shape.gpus);
    record.stay_restart_steps = record.job.checkpoint->restart_steps;
  }
  record.state = JobState::kRunning;
  record.start_step = now;
  record.first_gpu = first_gpu;
}

}  // namespace

CommittedStep CommitStep(State& state, const Scenario& scenario, const Plan& plan,
                         std::string_view policy, std::vector<int64_t>& changed_jobs) {
  const int64_t now = state.next_step;
  const int total_gpus = scenario.cluster.total_gpus();
  CommittedStep step;
  step.step = now;
  step.policy = std::string(policy);

  // Preemptions first: a job may move to a block another leaves at this step (migration).
  for (const JobPlacement& placement : plan.jobs) {
    if (placement.preempt_step != 0) continue;
    JobRecord* record = state.FindJob(placement.id);
    ORDO_ASSERT(record != nullptr && record->state == JobState::kRunning && record->job.checkpoint);
    if (record == nullptr || record->state != JobState::kRunning || !record->job.checkpoint) {
      continue;
    }
    Preempt(*record, now);
    changed_jobs.push_back(record->seq);
  }
  long long batch_gpus = 0;
  for (const JobPlacement& placement : plan.jobs) {
    // The stay that holds a block at this step: a running job's (unless preempted now), a start
    // now, or a resume now.
    std::optional<int> starts_on;
    if (placement.resume && placement.resume->start_step == 0) {
      starts_on = placement.resume->first_gpu;
    } else if (placement.started() && placement.start_step == 0) {
      starts_on = placement.first_gpu;
    } else if (!placement.started() || *placement.start_step > 0 || placement.preempt_step == 0) {
      continue;
    }
    JobRecord* record = state.FindJob(placement.id);
    ORDO_ASSERT(record != nullptr && record->active());
    if (record == nullptr || !record->active()) continue;
    if (starts_on) {
      ORDO_ASSERT(record->state == JobState::kPending);
      if (record->state != JobState::kPending) continue;
      StartStay(*record, placement, *starts_on, now);
      changed_jobs.push_back(record->seq);
    } else if (record->state != JobState::kRunning || record->stay_end_step() <= now) {
      continue;
    }
    step.jobs.push_back(CommittedJob{record->job.id, record->first_gpu, record->shape.gpus});
    batch_gpus += record->shape.gpus;
    // The base priority: a planning priority only steers the planner (state.h, PlanningScenario).
    // Restart steps do no work and earn nothing.
    if (now >= record->start_step + record->stay_restart_steps) {
      step.value += record->job.priority * record->shape.gpus;
    } else {
      // Stored with the job at every restart step, not only when the stay starts.
      record->lost_gpu_steps += record->shape.gpus;
      if (!starts_on) changed_jobs.push_back(record->seq);
    }
  }

  long long useful_service = 0;
  long long allocated_service = 0;
  for (const ServiceAllocation& allocation : plan.services) {
    ServiceRecord* record = state.FindService(allocation.id);
    ORDO_ASSERT(record != nullptr);
    if (record == nullptr) continue;
    CommittedService committed;
    committed.id = allocation.id;
    if (!allocation.gpus.empty()) committed.gpus = allocation.gpus.front();
    committed.demand = record->DemandAt(now);
    const int held = static_cast<int>(committed.gpus.size());
    record->committed_gpus = held;
    useful_service += std::min(held, committed.demand);
    allocated_service += held;
    step.unmet_gpus += std::max(0, committed.demand - held);
    step.value += record->service.priority * std::min(held, committed.demand);
    step.services.push_back(std::move(committed));
  }
  if (total_gpus > 0) {
    step.utilization = static_cast<double>(batch_gpus + useful_service) / total_gpus;
    step.allocated_utilization = static_cast<double>(batch_gpus + allocated_service) / total_gpus;
  }

  state.next_step = now + 1;
  // Jobs whose last step was `now` are done once it is committed.
  for (auto it = state.active.begin(); it != state.active.end();) {
    JobRecord& record = state.jobs.at(*it);
    if (record.state == JobState::kRunning && record.stay_end_step() <= state.next_step) {
      record.state = JobState::kDone;
      record.finished_step = record.stay_end_step();
      changed_jobs.push_back(record.seq);
      it = state.active.erase(it);
    } else {
      ++it;
    }
  }
  state.committed_value_total += step.value;
  state.recent.push_back(step);
  while (state.recent.size() > kRecentSteps) state.recent.pop_front();
  return step;
}

}  // namespace ordo::service
