// The correction a forecaster learns from history, in log space: y = log(actual / base), where
// base is the forecaster's prior (physical model, published calibration) or 1 when it has none.
//
//   y ~ x.beta              ridge regression on the features (standardised; beta -> 0 with
//                           little data, so the prior stands until history says otherwise;
//                           group-level columns penalised per group, not per observation)
//     + e1[key1]            a shrunk mean residual per coarse group (a model, a cluster)
//     + e2[key2]            and per fine group (that model on that GPU type and count)
//     + residual            whose quantiles give p10/p50/p90.
//
// The residual quantiles are honest about novelty: for a query whose fine group was seen they come
// from leave-one-out residuals; whose coarse group only was seen, from residuals with the fine
// group left out; for an unseen coarse group, from leave-group-out regressions. Small pools are
// blended with a default log-normal spread (sigma 0.5) by pseudo-counts. Cost: one ridge solve per
// coarse group (up to 64, then leave-one-out approximations), O(n p^2) each.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

namespace ordo::forecast {

struct CorrectionSample {
  std::vector<double> x;  // regressors, the same length for every sample
  double y = 0;           // log(actual / base)
  double weight = 1;      // recency weight in (0, 1]
  std::string key1;       // coarse group ("" for none)
  std::string key2;       // fine group ("" for none)
  double time = 0;        // when (any unit, e.g. days), for CorrectionOptions::leave_out_window
  bool timed = false;     // false: `time` unknown, the sample is left out alone
};

/// How a regressor relates to the coarse groups (key1).
enum class ColumnKind : int {
  kJob = 0,     // varies from job to job: used as given
  kGroup = 1,   // a property of the group (a model's size, its method): learned from as many
                // points as there are groups, so its ridge penalty is scaled by observations per
                // group, as is the intercept's
  kWithin = 2,  // only its variation inside a group is used (the value minus the group's mean;
                // 0 for an unseen group), so differences between groups cannot leak into it
};

struct CorrectionOptions {
  double ridge_lambda = 4;         // in units of weighted observations, on standardised columns
  double intercept_lambda = 1;     // shrinks the overall bias towards the prior's
  double shrink1 = 5;              // pseudo-observations pulling a coarse group's effect to 0
  double shrink2 = 5;              // ... and a fine group's
  double default_sigma = 0.5;      // log-normal spread assumed with no history
  double pool_pseudo_count = 10;   // weight of the default spread against a residual pool
  double group_spread_count = 30;  // a group's own residuals replace the pool's above this many
  // Leave-one-out for the seen pools also leaves out the group's samples within this distance
  // in time (the unit of CorrectionSample::time): repeated runs of one job in a burst would
  // otherwise vouch for each other and make the spread look tighter than for a new job.
  double leave_out_window = 0;
};

/// Three log-space quantiles of y for a query, and which evidence they rest on.
struct CorrectionPrediction {
  std::array<double, 3> q{};  // q10, q50, q90 of y
  int seen = 0;               // 2: fine group seen, 1: coarse only, 0: unseen / no keys
  int samples = 0;            // history size behind it
};

class CorrectionModel {
 public:
  explicit CorrectionModel(CorrectionOptions options = {}) : options_(options) {}

  /// Replaces the model. An empty sample list gives the default (zero correction, default spread).
  /// `kinds` (default: all kJob) says how each column relates to the groups. Without kGroup and
  /// kWithin, a few groups with many runs each let the regression memorise the groups through
  /// group-constant columns and extrapolate wildly to a new one.
  void Fit(const std::vector<CorrectionSample>& samples, const std::vector<ColumnKind>& kinds = {});

  [[nodiscard]] CorrectionPrediction Predict(const std::vector<double>& x, const std::string& key1,
                                             const std::string& key2) const;

  [[nodiscard]] int samples() const { return n_; }
  [[nodiscard]] const std::vector<double>& beta() const { return beta_; }

 private:
  struct Pool {
    std::vector<double> values;
    std::vector<double> weights;
  };
  // A pool's quantiles, computed once at Fit (Predict only looks them up).
  struct PoolSummary {
    std::array<double, 3> q{};
    double count = 0;
    bool empty = true;
  };
  [[nodiscard]] PoolSummary Summarise(const Pool& pool) const;
  [[nodiscard]] double Linear(const std::vector<double>& x, const std::string& key1) const;

  CorrectionOptions options_;
  int n_ = 0;
  std::vector<double> mean_, scale_;  // standardisation of x (after within-group centring)
  std::vector<ColumnKind> kinds_;
  std::map<std::string, std::vector<double>> group_mean_;  // key1 -> means of kWithin columns
  std::vector<double> beta_;                               // intercept first
  std::map<std::string, double> effect1_, effect2_;
  PoolSummary seen2_, seen1_, unseen_;
  std::map<std::string, PoolSummary> group_;  // key1 -> its leave-one-out residuals
  std::map<std::string, PoolSummary> fine_;   // key2 -> its leave-one-out residuals
};

}  // namespace ordo::forecast
