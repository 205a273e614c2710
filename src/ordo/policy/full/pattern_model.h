// The allocation MILP in its pattern form (../shared/docs/milp-notes.md): one binary per legal
// (job, shape, start, aligned block) pattern, integer service GPU counts per node group and step,
// continuous unmet-demand slacks. Rules 3 and 5 hold by construction of the patterns; rule 1 is a
// clique per (GPU atom, step) for batch work plus a capacity row per (group, step) where services
// share the group; rules 2 and 4 bound the services' totals and their steps.
//
// The same builder serves the whole problem and the neighbourhoods of large-neighbourhood search:
// a Window names the jobs the model decides, the starts and the GPU range their patterns may use;
// every other job is fixed (its GPU-steps are `blocked`, its reward the objective offset). Service
// counts are always decided in full, over every step and group (they are few variables).
//
// Preemption (spec "Preemption: checkpoints and migration"), whole problem only: a checkpointed
// job also has one column per (first stay, preemption step, no resume or a resume step and block),
// and a running checkpointed job is decided too — keep its block (one column) or give it back at
// some step, resumed or not — under a row that picks exactly one. A column's reward and value are
// its kept work (StaysOf, as the metrics count it); its GPU-steps are its stays'.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ordo/core/scenario.h"
#include "ordo/policy/common/promises.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/solver/milp_model.h"

namespace ordo::policy::full {

/// A job's placement up to its block's position: which shape, when, in which node group.
struct GroupPlacement {
  int shape = 0;
  int start = 0;
  int group = 0;
};

struct Window {
  /// Job indices the model decides: jobs not running, and with `preemption` the running
  /// checkpointed ones.
  std::vector<int> jobs;
  /// Checkpointed jobs get preemption columns.
  bool preemption = false;
  int first_start = 0;  // patterns start in [first_start, end_start)
  int end_start = 0;
  int first_gpu = 0;  // patterns' blocks lie in [first_gpu, end_gpu)
  int end_gpu = 0;
  /// When not empty (indexed like Scenario::jobs): a job's patterns keep the shape, start and
  /// group given here and only choose the block; a job given none has no patterns. This packs
  /// the pooled model's solution (pooled_model.h) into blocks.
  std::vector<std::optional<GroupPlacement>> pinned;
};

/// Columns of the service part of a model: [service][group][step] GPU counts and [service][step]
/// unmet slacks, -1 where there is none.
struct ServiceColumns {
  std::vector<std::vector<std::vector<int>>> gpus;
  std::vector<std::vector<int>> unmet;
};

/// Per group and step, the GPUs not in `blocked` ([gpu * T + step]).
std::vector<std::vector<int>> FreeGpus(const Scenario& scenario,
                                       const std::vector<uint8_t>& blocked);

/// Adds the services (integer counts per matching group and step, rules 2 and 4, unmet slacks
/// with their penalties) and the capacity rows per (group, step): `batch_terms[g][t]` (batch
/// columns times their GPUs) + service counts <= free_gpus[g][t]. Without `capacity_everywhere`,
/// only groups some service matches get capacity rows (elsewhere batch cliques already hold).
/// With `slack_everywhere` every step with demand gets an unmet slack, even where it costs nothing.
ServiceColumns AddServicesAndCapacity(
    const Scenario& scenario, const std::vector<std::vector<int>>& free_gpus,
    std::vector<std::vector<std::vector<solver::Term>>> batch_terms, bool capacity_everywhere,
    solver::MilpModel& milp, bool slack_everywhere = false);

/// Adds fast mode's two promises as rows (whole problem only: the running jobs not `decided` are
/// all that is fixed). `batch_value` holds each batch column with the value (priority x kept
/// GPU-steps inside the horizon, undecayed) it earns; services' value is modelled as priority x
/// (demand - unmet slack), a lower bound, so a solution keeping the rows keeps the promises.
/// `decided` (indexed like Scenario::jobs, may be null) marks running jobs the columns decide.
void AddPromiseRows(const Scenario& scenario, const Promises& promises,
                    const std::vector<solver::Term>& batch_value, const ServiceColumns& services,
                    solver::MilpModel& milp, const std::vector<char>* decided = nullptr);

/// Sets the service columns of `x` to `decisions`' counts and each unmet slack to the shortfall.
/// False when a count has no column (the decisions do not fit the model).
bool ServiceStart(const Scenario& scenario, const ServiceColumns& columns,
                  const Decisions& decisions, std::vector<double>& x);

/// Every non-running job, every start, every GPU; when some job has a checkpoint, preemption and
/// the running checkpointed jobs too.
Window WholeProblem(const Scenario& scenario);

/// The GPU-steps and the reward of the jobs a whole-problem window does not decide (the running
/// jobs it leaves fixed): the model's `blocked` and `fixed_reward`.
std::vector<uint8_t> FixedOccupancy(const Scenario& scenario, const Window& window);
double FixedReward(const Scenario& scenario, const Window& window);

/// GPU-steps held outside a model ([gpu * T + step], as BatchOccupancy), indexed so that "is this
/// block free over [from, to)" costs O(gpus): per GPU, prefix counts over steps.
class BlockedIndex {
 public:
  BlockedIndex(const Scenario& scenario, const std::vector<uint8_t>& blocked);
  [[nodiscard]] bool Free(int first_gpu, int gpus, int from, int to) const;

 private:
  int steps_;
  std::vector<int32_t> prefix_;
};

/// How many pattern columns the window has (without building anything); counting stops once it
/// passes `stop_above`.
int64_t CountPatterns(const Scenario& scenario, const Window& window,
                      const std::vector<uint8_t>& blocked, int64_t stop_above = INT64_MAX);
int64_t CountPatterns(const Scenario& scenario, const Window& window, const BlockedIndex& index,
                      int64_t stop_above = INT64_MAX);
/// As above, also adding to `*nonzeros` a bound on each counted pattern's non-zeros: its
/// assignment row, plus per step it runs inside the horizon one clique per GPU and a capacity row.
int64_t CountPatterns(const Scenario& scenario, const Window& window, const BlockedIndex& index,
                      int64_t stop_above, double* nonzeros);

class PatternModel {
 public:
  /// Builds the model of `window`. `blocked` holds the GPU-steps of every job outside the window
  /// (running jobs included); `fixed_reward` is their reward, set as the objective offset so the
  /// model's objective is the plan's. With `promises` (whole problem only: `blocked` holds the
  /// running jobs alone) the model keeps fast mode's two promises as rows: the MILP's optimum
  /// under them is the best plan fast mode may return.
  PatternModel(const Scenario& scenario, const Window& window, const std::vector<uint8_t>& blocked,
               double fixed_reward, const Promises* promises = nullptr);

  struct Pattern {
    int job;
    int shape;
    int start;
    int first_gpu;
    std::optional<Preemption> preemption;
  };

  [[nodiscard]] const solver::MilpModel& milp() const { return milp_; }
  [[nodiscard]] int num_patterns() const { return static_cast<int>(patterns_.size()); }
  /// Column c < num_patterns() places pattern(c).
  [[nodiscard]] const Pattern& pattern(int c) const { return patterns_[c]; }

  /// The column vector of `decisions` (a MIP start). A window job whose placement is not one of
  /// the model's patterns is left unstarted; `complete` (when given) is then set false.
  [[nodiscard]] std::vector<double> ToColumns(const Decisions& decisions,
                                              bool* complete = nullptr) const;

  /// Writes a solution back: the window's jobs and every service count.
  void Apply(std::span<const double> solution, Decisions& decisions) const;

 private:
  const Scenario& scenario_;
  Window window_;
  solver::MilpModel milp_{solver::Sense::kMaximize};
  std::vector<Pattern> patterns_;         // column i < patterns_.size() is patterns_[i]
  std::vector<int> job_first_, job_end_;  // per window job (same order): its pattern range
  ServiceColumns services_;
};

}  // namespace ordo::policy::full
