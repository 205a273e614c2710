#include "ordo/policy/common/explain.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ordo::policy {
namespace {

constexpr int kFree = -1;

// "3", "2.5": priorities are numbers; whole ones read best without decimals.
std::string PriorityText(double priority) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", priority);
  return text;
}

std::string Steps(int from, int to) {
  return to - from == 1 ? "step " + std::to_string(from)
                        : "steps " + std::to_string(from) + "-" + std::to_string(to - 1);
}

bool NearPeak(const Service& service, int step) {
  const int peak = *std::max_element(service.demand.begin(), service.demand.end());
  return peak > 0 && service.demand[step] >= kNearPeakShare * peak;
}

int Peak(const Service& service) {
  return service.demand.empty() ? 0
                                : *std::max_element(service.demand.begin(), service.demand.end());
}

// Max flow of the services' floors into the groups they match, each group offering `free[g]`
// GPUs; true when every floor fits.
bool FloorsFit(const Scenario& s, const std::vector<int>& free) {
  const int services = static_cast<int>(s.services.size());
  const int groups = static_cast<int>(s.cluster.groups.size());
  const int n = services + groups + 2;
  const int source = n - 2, sink = n - 1;
  std::vector<std::vector<long long>> cap(n, std::vector<long long>(n, 0));
  long long need = 0;
  for (int i = 0; i < services; ++i) {
    cap[source][i] = s.services[i].min_gpus;
    need += s.services[i].min_gpus;
    for (int g = 0; g < groups; ++g) {
      if (s.services[i].requirement.Matches(s.cluster.groups[g])) {
        cap[i][services + g] = std::numeric_limits<int>::max();
      }
    }
  }
  for (int g = 0; g < groups; ++g) cap[services + g][sink] = free[g];
  long long flow = 0;
  for (;;) {
    std::vector<int> parent(n, -1);
    parent[source] = source;
    std::vector<int> queue{source};
    for (size_t k = 0; k < queue.size() && parent[sink] < 0; ++k) {
      for (int v = 0; v < n; ++v) {
        if (parent[v] < 0 && cap[queue[k]][v] > 0) {
          parent[v] = queue[k];
          queue.push_back(v);
        }
      }
    }
    if (parent[sink] < 0) break;
    long long push = std::numeric_limits<long long>::max();
    for (int v = sink; v != source; v = parent[v]) push = std::min(push, cap[parent[v]][v]);
    for (int v = sink; v != source; v = parent[v]) {
      cap[parent[v]][v] -= push;
      cap[v][parent[v]] += push;
    }
    flow += push;
  }
  return flow >= need;
}

std::vector<Shape> CandidateShapes(const Job& job, bool first_only) {
  if (first_only) return {job.shapes.front()};
  return job.shapes;
}

// The occupancy of a plan: who holds each GPU at each step, and for each (step, GPU) the first
// step at or after it where the GPU is held (the horizon when never).
struct Occupancy {
  int gpus = 0;
  int horizon = 0;
  int jobs = 0;
  std::vector<int> owner;      // [t * gpus + g]: job index, jobs + service index, or kFree
  std::vector<int> next_busy;  // [t * gpus + g], t in [0, horizon]
  std::vector<int> next_peak;  // the same, counting only services at or near their peak

  int Owner(int t, int g) const { return owner[static_cast<size_t>(t) * gpus + g]; }
  int NextBusy(int t, int g) const { return next_busy[static_cast<size_t>(t) * gpus + g]; }
  int NextPeak(int t, int g) const { return next_peak[static_cast<size_t>(t) * gpus + g]; }
};

Occupancy Occupy(const Scenario& s, const Plan& plan,
                 const std::vector<const JobPlacement*>& placement) {
  Occupancy o;
  o.gpus = s.cluster.total_gpus();
  o.horizon = s.horizon_steps;
  o.jobs = static_cast<int>(s.jobs.size());
  const size_t cells = static_cast<size_t>(o.gpus) * o.horizon;
  o.owner.assign(cells, kFree);
  for (int j = 0; j < o.jobs; ++j) {
    const JobPlacement* p = placement[j];
    if (p == nullptr || !p->started()) continue;
    for (int t = std::max(0, *p->start_step); t < std::min(o.horizon, p->end_step()); ++t) {
      for (int g = p->first_gpu; g < p->first_gpu + p->gpus; ++g) {
        o.owner[static_cast<size_t>(t) * o.gpus + g] = j;
      }
    }
  }
  std::vector<char> peak_cell(cells, 0);
  for (size_t i = 0; i < plan.services.size() && i < s.services.size(); ++i) {
    for (int t = 0; t < o.horizon && t < static_cast<int>(plan.services[i].gpus.size()); ++t) {
      const bool near_peak = NearPeak(s.services[i], t);
      for (int gpu : plan.services[i].gpus[t]) {
        o.owner[static_cast<size_t>(t) * o.gpus + gpu] = o.jobs + static_cast<int>(i);
        peak_cell[static_cast<size_t>(t) * o.gpus + gpu] = near_peak ? 1 : 0;
      }
    }
  }
  o.next_busy.assign(cells + o.gpus, o.horizon);
  o.next_peak.assign(cells + o.gpus, o.horizon);
  for (int t = o.horizon - 1; t >= 0; --t) {
    for (int g = 0; g < o.gpus; ++g) {
      const size_t k = static_cast<size_t>(t) * o.gpus + g;
      o.next_busy[k] = o.owner[k] != kFree ? t : o.next_busy[k + o.gpus];
      o.next_peak[k] = peak_cell[k] ? t : o.next_peak[k + o.gpus];
    }
  }
  return o;
}

// The first step in [t, horizon) at which `g` is held by someone other than job `self` (whose own
// run is one contiguous interval).
int FirstConflict(const Occupancy& o, int t, int g, int self) {
  int busy = o.NextBusy(t, g);
  while (busy < o.horizon && o.Owner(busy, g) == self) {
    while (busy < o.horizon && o.Owner(busy, g) == self) ++busy;
    if (busy < o.horizon) busy = o.NextBusy(busy, g);
  }
  return busy;
}

struct Candidate {
  int first = 0;
  int gpus = 0;
  int duration = 0;
};

enum class QueueKind { kFifo, kBackfill, kReactive, kOrdo, kOther };

QueueKind KindOf(std::string_view policy) {
  if (policy == "fifo") return QueueKind::kFifo;
  if (policy == "fifo-backfill" || policy == "priority-backfill") return QueueKind::kBackfill;
  if (policy == "reactive") return QueueKind::kReactive;
  if (policy == "ordo" || policy == "ordo-full") return QueueKind::kOrdo;
  return QueueKind::kOther;
}

std::string HolderText(const WaitHolder& h, const HolderNamer& name) {
  const std::optional<std::string> shown = name(h);
  if (h.service) {
    return "service " + shown.value_or("(hidden)") + " (demand " + std::to_string(h.demand) +
           " of its peak " + std::to_string(h.peak) + " at step " + std::to_string(h.step) + ")";
  }
  const std::string run =
      h.step < 0 && h.end_step < 0 ? "not started in the horizon" : Steps(h.step, h.end_step);
  if (!shown) return "another tenant's job (" + run + ")";
  return "job " + *shown + " (priority " + PriorityText(h.priority) + ", " +
         (h.running ? "running, " : "") + run + ")";
}

std::string HolderList(const std::vector<WaitHolder>& holders, const HolderNamer& name) {
  constexpr size_t kShown = 3;
  std::string out;
  for (size_t k = 0; k < holders.size() && k < kShown; ++k) {
    if (k > 0) out += k + 1 == holders.size() ? " and " : ", ";
    out += HolderText(holders[k], name);
  }
  if (holders.size() > kShown) out += " and " + std::to_string(holders.size() - kShown) + " more";
  return out;
}

std::string SpanText(const WaitSpan& span, QueueKind kind, const HolderNamer& name) {
  const std::string steps = Steps(span.from_step, span.to_step);
  const std::string several = span.holders.size() > 1 ? "several holders: " : "";
  switch (span.reason) {
    case WaitReason::kHeadOfLine:
      return steps + ": waits behind " + HolderList(span.holders, name) +
             ", first in the queue (fifo starts jobs in queue order)";
    case WaitReason::kServiceReservation:
      return steps + ": the free blocks are closed by the static peak reservation of " +
             HolderList(span.holders, name);
    case WaitReason::kNotChosen:
      return steps + (kind == QueueKind::kReactive
                          ? ": a block was free for its whole run, but reactive starts jobs by "
                            "priority on what is free at each step and did not start it there"
                          : ": a block was free for its whole run; the planner did not start it "
                            "there");
    case WaitReason::kServicePeak:
      return steps + ": every block it could use is held by real-time " + several +
             HolderList(span.holders, name) + " at or near its peak";
    case WaitReason::kBlockedByService:
      return steps + ": every block it could use is held by " + several +
             HolderList(span.holders, name) +
             (kind == QueueKind::kFifo || kind == QueueKind::kBackfill
                  ? ", which keeps its static peak reservation"
                  : "");
    case WaitReason::kLowValue:
      return steps +
             ": lower value than the planned work holding every block it could use: " + several +
             HolderList(span.holders, name);
    case WaitReason::kBlockedByJob:
    default:
      return steps + ": every block it could use is held by " + several +
             HolderList(span.holders, name);
  }
}

}  // namespace

std::string_view WaitReasonName(WaitReason reason) {
  switch (reason) {
    case WaitReason::kNone:
      return "none";
    case WaitReason::kNotArrived:
      return "not_arrived";
    case WaitReason::kBlockedByJob:
      return "blocked_by_job";
    case WaitReason::kServicePeak:
      return "service_peak";
    case WaitReason::kNoBlockOfSize:
      return "no_block_of_size";
    case WaitReason::kGpuType:
      return "gpu_type";
    case WaitReason::kFragmented:
      return "fragmented";
    case WaitReason::kLowValue:
      return "low_value";
    case WaitReason::kServiceFloor:
      return "service_floor";
    case WaitReason::kHeadOfLine:
      return "head_of_line";
    case WaitReason::kServiceReservation:
      return "service_reservation";
    case WaitReason::kNotChosen:
      return "not_chosen";
    case WaitReason::kBlockedByService:
      return "blocked_by_service";
  }
  return "unknown";
}

bool UsesFirstShapeOnly(std::string_view policy) {
  const QueueKind kind = KindOf(policy);
  return kind == QueueKind::kFifo || kind == QueueKind::kBackfill || kind == QueueKind::kReactive;
}

std::optional<std::string> NameEveryHolder(const WaitHolder& holder) {
  return "\"" + holder.id + "\"";
}

std::optional<NeverRuns> WhyNeverRuns(const Scenario& s, const Job& job, bool first_shape_only) {
  const bool any_group =
      std::any_of(s.cluster.groups.begin(), s.cluster.groups.end(),
                  [&](const NodeGroup& g) { return job.requirement.Matches(g); });
  if (!any_group) {
    return NeverRuns{
        WaitReason::kGpuType,
        "no node group matches its gpu_type " + job.requirement.gpu_type.value_or("(any)") +
            " / min_gpu_memory_gb " +
            (job.requirement.min_gpu_memory_gb ? PriorityText(*job.requirement.min_gpu_memory_gb)
                                               : std::string("(any)"))};
  }
  const int groups = static_cast<int>(s.cluster.groups.size());
  bool any_block = false;
  std::string sizes;
  for (const Shape& shape : CandidateShapes(job, first_shape_only)) {
    sizes += (sizes.empty() ? "" : " or ") + std::to_string(shape.gpus);
    bool fits = false;
    s.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int first) {
      any_block = true;
      if (fits) return;
      std::vector<int> free(groups);
      for (int g = 0; g < groups; ++g) free[g] = s.cluster.group_gpus(g);
      free[s.cluster.group_of(first)] -= shape.gpus;
      fits = FloorsFit(s, free);
    });
    if (fits) return std::nullopt;
  }
  if (!any_block) {
    return NeverRuns{WaitReason::kNoBlockOfSize,
                     "no aligned block of " + sizes + " GPUs exists in the node groups it may use"};
  }
  int floors = 0;
  for (const Service& service : s.services) floors += service.min_gpus;
  return NeverRuns{WaitReason::kServiceFloor,
                   "the services' floors (min_gpus, " + std::to_string(floors) +
                       " GPUs in all, held at every step) leave no block of " + sizes +
                       " GPUs free at any step"};
}

Result<void> CheckCanEverRun(const Scenario& scenario, const Job& job) {
  const std::optional<NeverRuns> never = WhyNeverRuns(scenario, job);
  if (!never) return {};
  return FailInput(job.shapes.size() == 1 ? "gpus" : "shapes",
                   "the job can never run: " + never->message);
}

std::string ExplanationMessage(const JobExplanation& e, std::string_view policy,
                               const HolderNamer& name) {
  const std::string planned = e.planned_start
                                  ? "planned start: step " + std::to_string(*e.planned_start)
                                  : std::string("not in the horizon");
  if (e.spans.empty()) return e.message;
  const QueueKind kind = KindOf(policy);
  std::string out;
  for (const WaitSpan& span : e.spans) out += SpanText(span, kind, name) + "; ";
  return out + planned;
}

std::vector<JobExplanation> ExplainPlan(const Scenario& s, const Plan& plan,
                                        const ExplainBudget& budget) {
  const int horizon = s.horizon_steps;
  const int jobs = static_cast<int>(s.jobs.size());
  const QueueKind kind = KindOf(plan.policy);
  const bool first_only = UsesFirstShapeOnly(plan.policy);
  std::vector<const JobPlacement*> placement(s.jobs.size(), nullptr);
  std::unordered_map<std::string_view, int> job_index;
  for (int j = 0; j < jobs; ++j) job_index.emplace(s.jobs[j].id, j);
  for (const JobPlacement& p : plan.jobs) {
    if (auto it = job_index.find(p.id); it != job_index.end()) placement[it->second] = &p;
  }
  const Occupancy o = Occupy(s, plan, placement);
  auto start_of = [&](int j) -> std::optional<int> {
    if (placement[j] == nullptr || !placement[j]->started()) return std::nullopt;
    return *placement[j]->start_step;
  };
  auto holder = [&](int h, int step) {
    WaitHolder w;
    if (h < jobs) {
      w.id = s.jobs[h].id;
      // A job ahead in fifo's queue may be unstarted: its run is then [-1, -1).
      w.step = start_of(h).value_or(-1);
      w.end_step = start_of(h) ? placement[h]->end_step() : -1;
      w.priority = s.jobs[h].priority;
      w.running = s.jobs[h].running.has_value();
    } else {
      const Service& service = s.services[h - jobs];
      w.id = service.id;
      w.service = true;
      w.step = step;
      w.demand = service.demand[step];
      w.peak = Peak(service);
    }
    return w;
  };
  // fifo's queue: the jobs not running, by arrival then file order.
  std::vector<int> fifo_queue;
  if (kind == QueueKind::kFifo) {
    for (int j = 0; j < jobs; ++j) {
      if (!s.jobs[j].running) fifo_queue.push_back(j);
    }
    std::stable_sort(fifo_queue.begin(), fifo_queue.end(),
                     [&](int a, int b) { return s.jobs[a].arrival_step < s.jobs[b].arrival_step; });
  }
  // Which GPUs each service holds at any step (a baseline's reservation is held whole), with the
  // first such step.
  std::vector<std::map<int, int>> service_gpu_step(s.services.size());
  for (size_t i = 0; i < plan.services.size() && i < s.services.size(); ++i) {
    for (int t = 0; t < static_cast<int>(plan.services[i].gpus.size()); ++t) {
      for (int gpu : plan.services[i].gpus[t]) service_gpu_step[i].emplace(gpu, t);
    }
  }

  std::vector<JobExplanation> out;
  const bool timed = budget.deadline != std::chrono::steady_clock::time_point::max();
  int64_t holders_named = 0;
  // One job's explanation scans its wait over every block: the clock is read before each step.
  auto out_of_budget = [&](int64_t job_holders) {
    return holders_named + job_holders > budget.max_holders ||
           (timed && std::chrono::steady_clock::now() >= budget.deadline);
  };
  for (int j = 0; j < jobs; ++j) {
    const Job& job = s.jobs[j];
    const std::optional<int> start = start_of(j);
    if (job.running || (start && *start == 0)) continue;
    if (out_of_budget(0)) break;
    JobExplanation e;
    e.id = job.id;
    e.planned_start = start;
    const int earliest = std::max(0, job.arrival_step);
    if (job.arrival_step > 0 && (earliest >= horizon || start == earliest)) {
      e.reason = WaitReason::kNotArrived;
      e.message = "arrives at step " + std::to_string(job.arrival_step) + "; " +
                  (start ? "planned start: step " + std::to_string(*start)
                         : std::string("not in the horizon"));
      out.push_back(std::move(e));
      continue;
    }
    if (!start) {
      if (std::optional<NeverRuns> never = WhyNeverRuns(s, job, first_only)) {
        e.reason = never->reason;
        e.message = "can never run: " + never->message;
        out.push_back(std::move(e));
        continue;
      }
    }
    std::vector<Candidate> candidates;
    for (const Shape& shape : CandidateShapes(job, first_only)) {
      s.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int first) {
        candidates.push_back({first, shape.gpus, shape.duration_steps});
      });
    }
    const int until = start.value_or(horizon);
    int64_t job_holders = 0;
    bool cut = false;
    for (int t = earliest; t < until && !(cut = out_of_budget(job_holders)); ++t) {
      WaitSpan span;
      span.from_step = t;
      span.to_step = t + 1;
      std::vector<int> free_blocks;      // indexes into candidates
      std::map<int, int> first_holders;  // holder -> the step of its first conflict
      for (size_t c = 0; c < candidates.size(); ++c) {
        const Candidate& b = candidates[c];
        const int end = std::min(horizon, t + b.duration);
        int conflict = horizon, conflict_gpu = -1;
        for (int g = b.first; g < b.first + b.gpus; ++g) {
          const int at = FirstConflict(o, t, g, j);
          if (at < conflict) {
            conflict = at;
            conflict_gpu = g;
          }
        }
        if (conflict >= end) {
          free_blocks.push_back(static_cast<int>(c));
        } else {
          first_holders.emplace(o.Owner(conflict, conflict_gpu), conflict);
        }
      }
      if (!free_blocks.empty()) {
        std::optional<int> head;
        if (kind == QueueKind::kFifo) {
          for (int q : fifo_queue) {
            const std::optional<int> q_start = start_of(q);
            if (!q_start || *q_start > t) {
              if (q != j) head = q;
              break;
            }
          }
        }
        if (head) {
          span.reason = WaitReason::kHeadOfLine;
          span.holders.push_back(holder(*head, 0));
        } else {
          // A baseline's static reservation closes GPUs at every step, held or not.
          std::map<int, int> reservers;
          bool all_reserved = kind == QueueKind::kFifo || kind == QueueKind::kBackfill;
          for (size_t f = 0; f < free_blocks.size() && all_reserved; ++f) {
            const Candidate& b = candidates[free_blocks[f]];
            bool found = false;
            for (size_t i = 0; i < service_gpu_step.size() && !found; ++i) {
              for (int g = b.first; g < b.first + b.gpus && !found; ++g) {
                if (auto it = service_gpu_step[i].find(g); it != service_gpu_step[i].end()) {
                  reservers.emplace(jobs + static_cast<int>(i), it->second);
                  found = true;
                }
              }
            }
            all_reserved = found;
          }
          if (all_reserved) {
            span.reason = WaitReason::kServiceReservation;
            for (const auto& [h, step] : reservers) span.holders.push_back(holder(h, step));
          } else {
            span.reason = WaitReason::kNotChosen;
          }
        }
      } else {
        bool any_job = false, only_planned_higher = true;
        for (const auto& [h, step] : first_holders) {
          if (h < jobs) {
            any_job = true;
            if (s.jobs[h].running || s.jobs[h].priority < job.priority) only_planned_higher = false;
          } else {
            only_planned_higher = false;
          }
        }
        if (!any_job) {
          // Services only: at their peak when, for every block, a service near its peak takes a
          // GPU of it during the run.
          std::map<int, int> peak_holders;
          bool at_peak = true;
          for (size_t c = 0; c < candidates.size() && at_peak; ++c) {
            const Candidate& b = candidates[c];
            const int end = std::min(horizon, t + b.duration);
            int best = horizon, best_gpu = -1;
            for (int g = b.first; g < b.first + b.gpus; ++g) {
              if (o.NextPeak(t, g) < best) {
                best = o.NextPeak(t, g);
                best_gpu = g;
              }
            }
            if (best >= end) {
              at_peak = false;
            } else {
              peak_holders.emplace(o.Owner(best, best_gpu), best);
            }
          }
          span.reason = at_peak ? WaitReason::kServicePeak : WaitReason::kBlockedByService;
          for (const auto& [h, step] : at_peak ? peak_holders : first_holders) {
            span.holders.push_back(holder(h, step));
          }
        } else {
          span.reason = kind == QueueKind::kOrdo && only_planned_higher ? WaitReason::kLowValue
                                                                        : WaitReason::kBlockedByJob;
          for (const auto& [h, step] : first_holders) span.holders.push_back(holder(h, step));
        }
      }
      auto same_holders = [](const WaitSpan& a, const WaitSpan& b) {
        if (a.reason != b.reason || a.holders.size() != b.holders.size()) return false;
        for (size_t k = 0; k < a.holders.size(); ++k) {
          if (a.holders[k].id != b.holders[k].id) return false;
        }
        return true;
      };
      if (!e.spans.empty() && e.spans.back().to_step == t && same_holders(e.spans.back(), span)) {
        e.spans.back().to_step = t + 1;
      } else {
        job_holders += static_cast<int64_t>(span.holders.size());
        e.spans.push_back(std::move(span));
      }
    }
    // The last step's span may have taken the job past the bound.
    if (cut || holders_named + job_holders > budget.max_holders) break;
    holders_named += job_holders;
    // The longest span (the earliest of equals) gives the job's reason.
    const WaitSpan* main = nullptr;
    for (const WaitSpan& span : e.spans) {
      if (main == nullptr || span.to_step - span.from_step > main->to_step - main->from_step) {
        main = &span;
      }
    }
    if (main != nullptr) {
      e.reason = main->reason;
      if (!main->holders.empty()) e.blocking_id = main->holders.front().id;
    }
    e.message = ExplanationMessage(e, plan.policy, NameEveryHolder);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ordo::policy
