#include "tests/support/explanation_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace ordo::testing {
namespace {

struct Block {
  int first;
  int gpus;
  int duration;
};

bool IsBaseline(const std::string& policy) {
  return policy == "fifo" || policy == "fifo-backfill" || policy == "priority-backfill" ||
         policy == "reactive";
}

// Aligned blocks by the spec's rule: inside a matching group, at offsets that are multiples of the
// size; a size above a node's GPUs must be a whole number of nodes.
std::vector<Block> BlocksOf(const Scenario& s, const Job& job, bool first_only) {
  std::vector<Block> out;
  int group_start = 0;
  for (const NodeGroup& group : s.cluster.groups) {
    const int size = group.nodes * group.gpus_per_node;
    if (job.requirement.Matches(group)) {
      for (size_t k = 0; k < job.shapes.size() && (!first_only || k == 0); ++k) {
        const Shape& shape = job.shapes[k];
        if (shape.gpus > size) continue;
        if (shape.gpus > group.gpus_per_node && shape.gpus % group.gpus_per_node != 0) continue;
        for (int at = 0; at + shape.gpus <= size; at += shape.gpus) {
          out.push_back({group_start + at, shape.gpus, shape.duration_steps});
        }
      }
    }
    group_start += size;
  }
  return out;
}

// Who holds each GPU at each step: "" free, else "job:<id>" or "service:<id>".
class Grid {
 public:
  Grid(const Scenario& s, const Plan& plan) : steps_(s.horizon_steps) {
    gpus_ = 0;
    for (const NodeGroup& g : s.cluster.groups) gpus_ += g.nodes * g.gpus_per_node;
    cells_.assign(static_cast<size_t>(gpus_) * steps_, "");
    for (const JobPlacement& p : plan.jobs) {
      if (!p.start_step) continue;
      for (int t = std::max(0, *p.start_step);
           t < std::min(steps_, *p.start_step + p.duration_steps); ++t) {
        for (int g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) At(t, g) = "job:" + p.id;
      }
    }
    for (const ServiceAllocation& a : plan.services) {
      for (int t = 0; t < static_cast<int>(a.gpus.size()) && t < steps_; ++t) {
        for (int g : a.gpus[t]) At(t, g) = "service:" + a.id;
      }
    }
  }
  const std::string& Get(int t, int g) const { return cells_[static_cast<size_t>(t) * gpus_ + g]; }
  int steps() const { return steps_; }

  // Free of everyone but `self` over [t, t + duration) inside the horizon.
  bool Free(const Block& b, int t, const std::string& self) const {
    for (int u = t; u < std::min(steps_, t + b.duration); ++u) {
      for (int g = b.first; g < b.first + b.gpus; ++g) {
        const std::string& who = Get(u, g);
        if (!who.empty() && who != self) return false;
      }
    }
    return true;
  }

 private:
  std::string& At(int t, int g) { return cells_[static_cast<size_t>(t) * gpus_ + g]; }
  int steps_;
  int gpus_;
  std::vector<std::string> cells_;
};

// Hall's condition for the floors with `block` taken out: some set of services needs more GPUs
// than the groups they may use offer outside the block.
bool FloorsBlock(const Scenario& s, const Block& block) {
  const size_t n = s.services.size();
  if (n > 16) return false;  // beyond what a brute-force check can enumerate: claim not confirmed
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    long long need = 0;
    std::set<size_t> groups;
    for (size_t i = 0; i < n; ++i) {
      if (!(mask & (1u << i))) continue;
      need += s.services[i].min_gpus;
      for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
        if (s.services[i].requirement.Matches(s.cluster.groups[g])) groups.insert(g);
      }
    }
    long long offer = 0;
    int start = 0;
    for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
      const int size = s.cluster.groups[g].nodes * s.cluster.groups[g].gpus_per_node;
      if (groups.count(g)) {
        const int lo = std::max(start, block.first);
        const int hi = std::min(start + size, block.first + block.gpus);
        offer += size - std::max(0, hi - lo);
      }
      start += size;
    }
    if (need > offer) return true;
  }
  return false;
}

int PeakOf(const Service& s) {
  return s.demand.empty() ? 0 : *std::max_element(s.demand.begin(), s.demand.end());
}

bool AtPeak(const Service& s, int t) {
  const int peak = PeakOf(s);
  return peak > 0 && 10 * s.demand[t] >= 9 * peak;
}

}  // namespace

std::vector<std::string> CheckExplanation(const Scenario& s, const Plan& plan,
                                          const JobExplanation& e) {
  std::vector<std::string> problems;
  auto fail = [&](const std::string& what) { problems.push_back("job " + e.id + ": " + what); };
  const Job* job = nullptr;
  for (const Job& j : s.jobs) {
    if (j.id == e.id) job = &j;
  }
  const JobPlacement* placement = nullptr;
  for (const JobPlacement& p : plan.jobs) {
    if (p.id == e.id) placement = &p;
  }
  if (job == nullptr || placement == nullptr) {
    fail("not in the scenario or the plan");
    return problems;
  }
  if (e.planned_start != placement->start_step) fail("planned_start differs from the plan");
  const bool first_only = IsBaseline(plan.policy);
  const std::vector<Block> blocks = BlocksOf(s, *job, first_only);
  const int horizon = s.horizon_steps;
  const int earliest = std::max(0, job->arrival_step);
  const std::string self = "job:" + job->id;
  std::map<std::string, const Job*> jobs_by_id;
  for (const Job& j : s.jobs) jobs_by_id[j.id] = &j;
  std::map<std::string, const Service*> services_by_id;
  for (const Service& svc : s.services) services_by_id[svc.id] = &svc;
  std::map<std::string, const JobPlacement*> placements;
  for (const JobPlacement& p : plan.jobs) placements[p.id] = &p;

  switch (e.reason) {
    case WaitReason::kNotArrived:
      if (!(job->arrival_step > 0 &&
            (job->arrival_step >= horizon || e.planned_start == job->arrival_step))) {
        fail("not_arrived, but it arrives at " + std::to_string(job->arrival_step) +
             " and is planned elsewhere");
      }
      return problems;
    case WaitReason::kGpuType:
    case WaitReason::kNoBlockOfSize:
    case WaitReason::kServiceFloor: {
      if (e.planned_start) fail("said never to run, yet planned");
      bool any_group = false;
      for (const NodeGroup& g : s.cluster.groups)
        any_group = any_group || job->requirement.Matches(g);
      if (e.reason == WaitReason::kGpuType && any_group) fail("gpu_type, yet a group matches");
      if (e.reason == WaitReason::kNoBlockOfSize && !blocks.empty()) {
        fail("no_block_of_size, yet a block exists");
      }
      if (e.reason == WaitReason::kServiceFloor) {
        if (blocks.empty()) fail("service_floor, yet no block exists at all");
        for (const Block& b : blocks) {
          if (!FloorsBlock(s, b)) {
            fail("service_floor, yet the floors fit beside the block at GPU " +
                 std::to_string(b.first));
            break;
          }
        }
      }
      return problems;
    }
    default:
      break;
  }

  // Spans: contiguous from the earliest start to the planned start (or the horizon).
  const int until = e.planned_start.value_or(horizon);
  int at = earliest;
  for (const WaitSpan& span : e.spans) {
    if (span.from_step != at || span.to_step <= span.from_step) {
      fail("spans do not cover the wait in order at step " + std::to_string(at));
      return problems;
    }
    at = span.to_step;
  }
  if (at != until) {
    fail("spans end at " + std::to_string(at) + ", the wait at " + std::to_string(until));
    return problems;
  }
  if (e.spans.empty()) {
    fail("no span explains the wait");
    return problems;
  }
  const WaitSpan* longest = &e.spans.front();
  for (const WaitSpan& span : e.spans) {
    if (span.to_step - span.from_step > longest->to_step - longest->from_step) longest = &span;
  }
  if (e.reason != longest->reason) fail("reason is not the longest span's");
  if (!e.blocking_id.empty() &&
      std::none_of(longest->holders.begin(), longest->holders.end(),
                   [&](const WaitHolder& h) { return h.id == e.blocking_id; })) {
    fail("blocking_id " + e.blocking_id + " is no holder of the longest span");
  }

  const Grid grid(s, plan);
  std::vector<const Job*> fifo_queue;
  for (const Job& j : s.jobs) {
    if (!j.running) fifo_queue.push_back(&j);
  }
  std::stable_sort(fifo_queue.begin(), fifo_queue.end(),
                   [](const Job* a, const Job* b) { return a->arrival_step < b->arrival_step; });
  auto started_by = [&](const std::string& id, int t) {
    const JobPlacement* p = placements.at(id);
    return p->start_step && *p->start_step <= t;
  };

  for (const WaitSpan& span : e.spans) {
    const std::string where =
        " (steps " + std::to_string(span.from_step) + "-" + std::to_string(span.to_step - 1) + ")";
    std::set<std::string> named;
    for (const WaitHolder& h : span.holders) {
      named.insert((h.service ? "service:" : "job:") + h.id);
      if (h.service) {
        auto it = services_by_id.find(h.id);
        if (it == services_by_id.end()) {
          fail("names unknown service " + h.id + where);
          continue;
        }
        if (h.step < 0 || h.step >= horizon || it->second->demand[h.step] != h.demand ||
            PeakOf(*it->second) != h.peak) {
          fail("states wrong demand or peak for service " + h.id + where);
        }
      } else {
        auto it = jobs_by_id.find(h.id);
        if (it == jobs_by_id.end()) {
          fail("names unknown job " + h.id + where);
          continue;
        }
        const JobPlacement* p = placements.at(h.id);
        const int from = p->start_step ? *p->start_step : -1;
        const int to = p->start_step ? p->end_step() : -1;
        if (h.step != from || h.end_step != to || h.priority != it->second->priority ||
            h.running != it->second->running.has_value()) {
          fail("states a wrong run or priority for job " + h.id + where);
        }
      }
    }
    for (int t = span.from_step; t < span.to_step; ++t) {
      std::vector<const Block*> free;
      for (const Block& b : blocks) {
        if (grid.Free(b, t, self)) free.push_back(&b);
      }
      const std::string step = " at step " + std::to_string(t);
      switch (span.reason) {
        case WaitReason::kNotChosen:
          if (free.empty()) fail("not_chosen, yet no block is free" + step);
          break;
        case WaitReason::kHeadOfLine: {
          if (plan.policy != "fifo") fail("head_of_line under " + plan.policy);
          if (free.empty()) fail("head_of_line, yet no block is free" + step);
          if (span.holders.size() != 1 || span.holders[0].service) {
            fail("head_of_line must name one job" + step);
            break;
          }
          const std::string& head = span.holders[0].id;
          bool before_me = false;
          for (const Job* q : fifo_queue) {
            if (q->id == job->id) break;
            if (q->id == head) {
              before_me = true;
              break;
            }
            if (!started_by(q->id, t)) {
              fail("head_of_line names " + head + ", but " + q->id + " is ahead of it" + step);
            }
          }
          if (!before_me) fail("head_of_line: " + head + " is not ahead of it in fifo's queue");
          if (started_by(head, t)) fail("head_of_line: " + head + " has started" + step);
          break;
        }
        case WaitReason::kServiceReservation:
          if (plan.policy != "fifo" && plan.policy != "fifo-backfill" &&
              plan.policy != "priority-backfill") {
            fail("service_reservation under " + plan.policy);
          }
          if (free.empty()) fail("service_reservation, yet no block is free" + step);
          for (const Block* b : free) {
            bool reserved = false;
            for (const ServiceAllocation& a : plan.services) {
              if (!named.count("service:" + a.id)) continue;
              for (const std::vector<int>& gpus : a.gpus) {
                for (int g : gpus) reserved = reserved || (g >= b->first && g < b->first + b->gpus);
              }
            }
            if (!reserved) {
              fail("service_reservation, yet the free block at GPU " + std::to_string(b->first) +
                   " is held by no named service at any step" + step);
              break;
            }
          }
          break;
        case WaitReason::kBlockedByJob:
        case WaitReason::kLowValue:
        case WaitReason::kBlockedByService:
        case WaitReason::kServicePeak: {
          if (!free.empty()) {
            fail(std::string(span.reason == WaitReason::kBlockedByJob ? "blocked_by_job"
                                                                      : "a blocked reason") +
                 ", yet the block at GPU " + std::to_string(free.front()->first) + " is free" +
                 step);
            break;
          }
          const bool peak_only = span.reason == WaitReason::kServicePeak;
          for (const Block& b : blocks) {
            bool hit = false;
            for (int u = t; u < std::min(horizon, t + b.duration) && !hit; ++u) {
              for (int g = b.first; g < b.first + b.gpus && !hit; ++g) {
                const std::string& who = grid.Get(u, g);
                if (who.empty() || who == self || !named.count(who)) continue;
                if (peak_only) {
                  const std::string id = who.substr(8);  // "service:"
                  hit = who.rfind("service:", 0) == 0 && AtPeak(*services_by_id.at(id), u);
                } else {
                  hit = true;
                }
              }
            }
            if (!hit) {
              fail("no named holder" + std::string(peak_only ? " at its peak" : "") +
                   " takes a GPU of the block at " + std::to_string(b.first) + step);
              break;
            }
          }
          bool any_job = false;
          for (const WaitHolder& h : span.holders) {
            if (h.service) continue;
            any_job = true;
            if (span.reason == WaitReason::kLowValue) {
              const Job* other = jobs_by_id.at(h.id);
              if (other->running || other->priority < job->priority) {
                fail("low_value, yet " + h.id + " is running or of lower priority" + step);
              }
            }
          }
          if (span.reason == WaitReason::kLowValue) {
            if (plan.policy != "ordo" && plan.policy != "ordo-full") {
              fail("low_value under " + plan.policy);
            }
            for (const WaitHolder& h : span.holders) {
              if (h.service) fail("low_value names a service" + step);
            }
          }
          if ((span.reason == WaitReason::kBlockedByService || peak_only) && any_job) {
            fail("a service reason names a job" + step);
          }
          if (span.reason == WaitReason::kBlockedByJob && !any_job) {
            fail("blocked_by_job names no job" + step);
          }
          if (peak_only) {
            for (const WaitHolder& h : span.holders) {
              if (h.service && services_by_id.count(h.id) && h.step >= 0 && h.step < horizon &&
                  !AtPeak(*services_by_id.at(h.id), h.step)) {
                fail("service_peak, yet " + h.id + " is not near its peak at its named step");
              }
            }
          }
          break;
        }
        default:
          fail("a span with reason " + std::to_string(static_cast<int>(span.reason)));
          break;
      }
      if (problems.size() > 5) return problems;
    }
  }
  // The message states the planned start and names every visible holder.
  const std::string planned =
      e.planned_start ? "step " + std::to_string(*e.planned_start) : "not in the horizon";
  if (e.message.find(planned) == std::string::npos) fail("the message does not say " + planned);
  for (const WaitSpan& span : e.spans) {
    for (size_t k = 0; k < span.holders.size() && k < 3; ++k) {
      if (!span.holders[k].id.empty() &&
          e.message.find("\"" + span.holders[k].id + "\"") == std::string::npos) {
        fail("the message does not name holder " + span.holders[k].id);
      }
    }
  }
  return problems;
}

std::vector<std::string> CheckExplanations(const Scenario& s, const Plan& plan,
                                           const std::vector<JobExplanation>& explanations) {
  std::vector<std::string> problems;
  std::map<std::string, int> count;
  for (const JobExplanation& e : explanations) ++count[e.id];
  std::map<std::string, const JobPlacement*> placements;
  for (const JobPlacement& p : plan.jobs) placements[p.id] = &p;
  for (const Job& job : s.jobs) {
    const JobPlacement* p = placements.count(job.id) ? placements.at(job.id) : nullptr;
    const bool needs = !job.running && !(p != nullptr && p->start_step && *p->start_step == 0);
    if (needs != (count[job.id] == 1)) {
      problems.push_back("job " + job.id + ": " + std::to_string(count[job.id]) + " explanations");
    }
  }
  for (const JobExplanation& e : explanations) {
    for (std::string& p : CheckExplanation(s, plan, e)) problems.push_back(std::move(p));
  }
  return problems;
}

}  // namespace ordo::testing
