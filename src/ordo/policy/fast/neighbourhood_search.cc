#include "ordo/policy/fast/neighbourhood_search.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "ordo/policy/fast/neighbourhood_operators.h"
#include "ordo/policy/fast/service_variants.h"

namespace ordo::policy::fast {
namespace {

enum Destroy { kRegion, kCompetitors, kCheapest, kRandom, kDestroys };
enum Repair { kGreedy, kRegret, kNoisy, kRepairs };
// The services' counts kept, or planned again on what the other jobs (and the focus job) leave:
// under caps at the most GPUs each holds now (the cap the outcome's service variant may have
// set), free to cover all their demand, priced to give way where a job of the focus job's
// priority (or a random job's to place) earns more than the demand served is worth, or capped as
// low as the unmet cap allows (BudgetCountsOn: the most room for batch work).
enum ServiceMode {
  kKeepServices,
  kReplanCapped,
  kReplanFree,
  kReplanPriced,
  kReplanBudget,
  kServiceModes
};

// Ropke and Pisinger's scores for an iteration's outcome, and how the weights follow them.
constexpr double kScoreBest = 33, kScoreBetter = 9, kScoreAccepted = 13;
constexpr int kSegmentIterations = 32;
constexpr double kReaction = 0.2, kMinWeight = 0.1;
// Simulated annealing: at first a solution this much worse is accepted half the time; the
// temperature falls a hundredfold over the budget.
constexpr double kStartWorse = 0.005, kCooling = 0.01;
// Planning the services' curves again costs about as much as searching eight jobs, per service
// (callgrind on the benchmark's 8-GPU instance), so the budget stays proportional to time.
constexpr long long kServicePlanCost = 8 * kSearchCost;
// The budget: this much per waiting job, at most kMaxBudget, and none where it would not pay for
// kMinIterations iterations of one unit per waiting job (an iteration searches every job it has
// to place, so its cost grows with them).
constexpr long long kBudgetPerJob = 100, kMaxBudget = 32'000, kMinIterations = 64;

// An operator drawn in proportion to its weight; the weights follow each segment's scores.
class Roulette {
 public:
  explicit Roulette(int operators) : weight_(operators, 1.0), score_(operators), uses_(operators) {}

  int Draw(OperatorContext& op) const {
    double total = 0;
    for (double w : weight_) total += w;
    double pick = total * op.Uniform();
    for (size_t k = 0; k + 1 < weight_.size(); ++k) {
      if (pick < weight_[k]) return static_cast<int>(k);
      pick -= weight_[k];
    }
    return static_cast<int>(weight_.size()) - 1;
  }

  void Score(int op, double score) {
    score_[op] += score;
    ++uses_[op];
  }

  void EndSegment() {
    for (size_t k = 0; k < weight_.size(); ++k) {
      if (uses_[k] > 0) {
        weight_[k] =
            std::max(kMinWeight, (1 - kReaction) * weight_[k] + kReaction * score_[k] / uses_[k]);
      }
      score_[k] = 0;
      uses_[k] = 0;
    }
  }

 private:
  std::vector<double> weight_;
  std::vector<double> score_;
  std::vector<int> uses_;
};

// A solution: the batch placements and the services' counts, and what the counts cost.
struct Solution {
  PassResult pass;
  std::shared_ptr<const ServiceCounts> counts;  // shared: most iterations keep them
  double penalty = 0;
  long long unmet = 0;
  [[nodiscard]] double objective() const { return pass.reward - penalty; }
};

class NeighbourhoodSearch {
 public:
  NeighbourhoodSearch(const SearchContext& ctx, const BatchPasses& batch, long long unmet_cap)
      : ctx_(ctx),
        s_(ctx.scenario),
        op_(ctx, batch),
        base_(ctx.pinned),
        jobs_(ctx.pinned),
        full_(ctx.pinned),
        grid_(ctx.pinned),
        floored_(ctx.pinned),
        unmet_cap_(unmet_cap) {
    all_floors_.floor_only.assign(s_.services.size(), 1);
    served_worth_ = ServedWorth(s_);
  }

  // The best solution found from `start` within `budget` work units.
  Solution Run(const Solution& start, long long budget);

  // What `pass` earns, summed afresh.
  [[nodiscard]] double Reward(const PassResult& pass) const {
    double reward = 0;
    for (int j : ctx_.candidates) reward += op_.RewardOf(pass, j);
    return reward;
  }

 private:
  // Takes the neighbourhood's jobs out of `current` and places them again with the unstarted
  // jobs (the focus job first), the services kept or planned again (mode). Empty where the
  // services' floors no longer fit.
  std::optional<Solution> Recreate(const Solution& current, const Neighbourhood& hood, int mode,
                                   int repair);
  // The services planned again on what the placed jobs leave, the focus job placed first beside
  // the services' floors alone (it may take GPUs a service held above its floor); reserved on
  // `grid`. False where the floors do not fit.
  bool ReplanServices(const Solution& current, int focus, int mode, const std::vector<int>& pool,
                      BlockGrid& grid, Solution& next);
  // `next` becomes current; grid_, on which Recreate built it, becomes full_.
  void Adopt(Solution next, Solution& current);
  // Releases, then occupies, on `grid` each started job whose placement differs between `from`
  // and `to`, so a grid holding `from`'s jobs holds `to`'s.
  void MoveJobs(const PassResult& from, const PassResult& to, BlockGrid& grid) const;
  // Per service: the most GPUs it holds at any step.
  [[nodiscard]] std::vector<int> MostHeld(const ServiceCounts& counts) const;

  const SearchContext& ctx_;
  const Scenario& s_;
  OperatorContext op_;
  BlockGrid base_;  // the running jobs and the current solution's services' counts
  BlockGrid jobs_;  // the running jobs and the current solution's started jobs
  BlockGrid full_;  // both: the current solution's whole grid
  // Scratch grids of Recreate, kept so that copies into them reuse their storage.
  BlockGrid grid_, floored_;
  long long unmet_cap_;               // the most unmet real-time GPU-steps a solution may leave
  CurveOptions all_floors_;           // every service at its floor only
  std::vector<double> served_worth_;  // per service, for priced curves
};

Solution NeighbourhoodSearch::Run(const Solution& start, long long budget) {
  ReserveCounts(s_, *start.counts, base_);
  MoveJobs(PassResult{}, start.pass, jobs_);
  full_ = jobs_;
  ReserveCounts(s_, *start.counts, full_);
  Solution current = start, best = start;
  Roulette destroys(kDestroys), repairs(kRepairs),
      services(s_.services.empty() ? 1 : kServiceModes);
  const double start_temperature =
      std::max(1e-6, kStartWorse * std::abs(start.objective()) / std::log(2.0));
  for (int iteration = 1; op_.spent < budget && !ctx_.OutOfTime(); ++iteration) {
    const int d = destroys.Draw(op_), r = repairs.Draw(op_), m = services.Draw(op_);
    Neighbourhood hood;
    switch (d) {
      case kRegion:
        hood = DestroyRegion(op_, current.pass);
        break;
      case kCompetitors:
        hood = DestroyCompetitors(op_, current.pass, m == kKeepServices ? base_ : ctx_.pinned);
        break;
      case kCheapest:
        hood = DestroyCheapest(op_, current.pass);
        break;
      default:
        hood = DestroyRandom(op_, current.pass);
        break;
    }
    op_.spent += kReplayCost;  // no iteration is free, even an empty one
    if (hood.removed.empty() && hood.focus < 0) continue;
    std::optional<Solution> next = Recreate(current, hood, m, r);
    double score = 0;
    if (next && next->unmet <= unmet_cap_) {
      const double delta = next->objective() - current.objective();
      const double temperature =
          start_temperature *
          std::pow(kCooling, static_cast<double>(op_.spent) / static_cast<double>(budget));
      if (next->objective() > best.objective() + 1e-9) {
        score = kScoreBest;
        best = *next;
      } else if (delta > 1e-9) {
        score = kScoreBetter;
      } else if (op_.Uniform() < std::exp(delta / temperature)) {
        score = kScoreAccepted;
      }
      if (score > 0) Adopt(std::move(*next), current);
    }
    destroys.Score(d, score);
    repairs.Score(r, score);
    services.Score(m, score);
    if (iteration % kSegmentIterations == 0) {
      destroys.EndSegment();
      repairs.EndSegment();
      services.EndSegment();
    }
  }
  return best;
}

std::optional<Solution> NeighbourhoodSearch::Recreate(const Solution& current,
                                                      const Neighbourhood& hood, int mode,
                                                      int repair) {
  Solution next;
  next.pass = current.pass;
  for (int j : hood.removed) {
    next.pass.reward -= op_.RewardOf(current.pass, j);
    next.pass.placements[j] = Placement{};
  }
  // The current grid (with its services, or without where they are planned again) without the
  // removed jobs; the jobs not started (but the focus job) to place.
  BlockGrid& grid = grid_;
  grid = mode == kKeepServices ? full_ : jobs_;
  for (int j : hood.removed) {
    const Placement& p = current.pass.placements[j];
    const Shape& shape = s_.jobs[j].shapes[p.shape];
    grid.Release(p.first_gpu, shape.gpus, p.start_step, p.start_step + shape.duration_steps);
    op_.spent += kReplayCost;
  }
  std::vector<int> pool;
  for (int j : ctx_.candidates) {
    if (next.pass.placements[j].shape < 0 && j != hood.focus) pool.push_back(j);
  }
  if (mode == kKeepServices) {
    next.counts = current.counts;
    next.penalty = current.penalty;
    next.unmet = current.unmet;
    if (hood.focus >= 0) RepairInOrder(op_, grid, {hood.focus}, next.pass);
  } else if (!ReplanServices(current, hood.focus, mode, pool, grid, next)) {
    return std::nullopt;
  }
  if (repair == kRegret) {
    RepairRegret(op_, grid, std::move(pool), next.pass);
    return next;
  }
  // Greedy: by priority, then by the reward the job can earn; noisy: by priority with up to half
  // of it again at random.
  std::vector<std::pair<double, int>> keyed;
  keyed.reserve(pool.size());
  for (int j : pool) {
    keyed.emplace_back(s_.jobs[j].priority * (repair == kNoisy ? 1 + 0.5 * op_.Uniform() : 1.0), j);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return op_.ideal[a.second] > op_.ideal[b.second];
  });
  for (size_t k = 0; k < keyed.size(); ++k) pool[k] = keyed[k].second;
  RepairInOrder(op_, grid, pool, next.pass);
  return next;
}

bool NeighbourhoodSearch::ReplanServices(const Solution& current, int focus, int mode,
                                         const std::vector<int>& pool, BlockGrid& grid,
                                         Solution& next) {
  if (focus >= 0) {
    bool floors_fit = true;
    const ServiceCounts floors =
        PlanServiceCounts(s_, LeftBy(s_, ctx_.free, next.pass), all_floors_, &floors_fit);
    op_.spent += kServicePlanCost * static_cast<long long>(s_.services.size());
    if (!floors_fit) return false;
    floored_ = grid;
    ReserveCounts(s_, floors, floored_);
    double reward = 0;
    const Placement p =
        op_.batch.ChooseShape(floored_, s_.jobs[focus], ShapeRule::kMostReward, reward);
    op_.spent += kSearchCost;
    if (p.shape >= 0) Place(s_, grid, focus, p, reward, next.pass);
  }
  const std::vector<std::vector<int>> left = LeftBy(s_, ctx_.free, next.pass);
  const auto services = static_cast<long long>(s_.services.size());
  std::optional<ServiceCounts> counts;
  if (mode == kReplanBudget) {
    int plans = 0;
    counts = BudgetCountsOn(s_, left, unmet_cap_, &plans);
    op_.spent += kServicePlanCost * services * plans;
  } else {
    CurveOptions curves;
    if (mode == kReplanCapped) curves.cap = MostHeld(*current.counts);
    if (mode == kReplanPriced && (focus >= 0 || !pool.empty())) {
      const int priced_for = focus >= 0 ? focus : pool[op_.rng() % pool.size()];
      curves.price = Prices(s_, s_.jobs[priced_for].priority);
      curves.worth = served_worth_;
    }
    bool complete = true;
    counts = PlanServiceCounts(s_, left, curves, &complete);
    op_.spent += kServicePlanCost * services;
    if (!complete) counts.reset();
  }
  if (!counts) return false;
  next.counts = std::make_shared<const ServiceCounts>(std::move(*counts));
  ReserveCounts(s_, *next.counts, grid);
  next.penalty = UnmetPenalty(s_, *next.counts);
  next.unmet = UnmetSteps(s_, *next.counts);
  return true;
}

void NeighbourhoodSearch::Adopt(Solution next, Solution& current) {
  if (next.counts != current.counts) {
    base_ = ctx_.pinned;
    ReserveCounts(s_, *next.counts, base_);
  }
  MoveJobs(current.pass, next.pass, jobs_);
  std::swap(full_, grid_);
  current = std::move(next);
}

void NeighbourhoodSearch::MoveJobs(const PassResult& from, const PassResult& to,
                                   BlockGrid& grid) const {
  auto at = [](const PassResult& pass, int j) {
    return j < static_cast<int>(pass.placements.size()) ? pass.placements[j] : Placement{};
  };
  auto same = [](const Placement& a, const Placement& b) {
    return a.shape == b.shape && a.first_gpu == b.first_gpu && a.start_step == b.start_step;
  };
  // Every release first: a job may move onto a block another leaves.
  for (int j : ctx_.candidates) {
    const Placement a = at(from, j);
    if (a.shape < 0 || same(a, at(to, j))) continue;
    const Shape& shape = s_.jobs[j].shapes[a.shape];
    grid.Release(a.first_gpu, shape.gpus, a.start_step, a.start_step + shape.duration_steps);
  }
  for (int j : ctx_.candidates) {
    const Placement b = at(to, j);
    if (b.shape < 0 || same(at(from, j), b)) continue;
    const Shape& shape = s_.jobs[j].shapes[b.shape];
    grid.Occupy(b.first_gpu, shape.gpus, b.start_step, b.start_step + shape.duration_steps);
  }
}

std::vector<int> NeighbourhoodSearch::MostHeld(const ServiceCounts& counts) const {
  std::vector<int> most(s_.services.size(), 0);
  for (size_t i = 0; i < s_.services.size(); ++i) {
    for (int t = 0; t < s_.horizon_steps; ++t) most[i] = std::max(most[i], HeldAt(counts, i, t));
  }
  return most;
}

}  // namespace

long long NeighbourhoodBudget(size_t jobs, int effort) {
  const long long budget =
      effort * std::min(kMaxBudget, kBudgetPerJob * static_cast<long long>(jobs));
  const long long iteration = static_cast<long long>(jobs) * kReplayCost;
  return jobs < 2 || iteration * kMinIterations > budget ? 0 : budget;
}

void SearchNeighbourhoods(const SearchContext& ctx, const BatchPasses& batch, long long budget,
                          long long unmet_limit, Outcome& outcome) {
  if (budget <= 0 || outcome.pass.placements.empty()) return;
  const Scenario& s = ctx.scenario;
  Solution start;
  start.pass = outcome.pass;
  start.counts = std::make_shared<const ServiceCounts>(outcome.counts);
  start.penalty = UnmetPenalty(s, outcome.counts);
  start.unmet = UnmetSteps(s, outcome.counts);
  NeighbourhoodSearch search(ctx, batch, std::max(unmet_limit, start.unmet));
  Solution best = search.Run(start, budget);
  const double reward = search.Reward(best.pass);  // free of the loop's running sums' rounding
  const double objective = reward - best.penalty;
  if (objective <= outcome.objective + 1e-9) return;
  best.pass.reward = reward;
  outcome.pass = std::move(best.pass);
  outcome.counts = *best.counts;
  outcome.objective = objective;
}

}  // namespace ordo::policy::fast
