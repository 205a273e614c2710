#include "ordo/forecast/correction_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ordo/forecast/stats.h"

namespace ordo::forecast {
namespace {

constexpr double kZ90 = 1.2815515655446004;  // standard normal 0.9 quantile
constexpr std::size_t kMaxGroupRefits = 64;

struct Window {
  double s = 0;         // sum of weighted residuals
  double w = 0;         // sum of weights
  double s_after1 = 0;  // sum of weighted residuals after the coarse effect
};

}  // namespace

double CorrectionModel::Linear(const std::vector<double>& x, const std::string& key1) const {
  if (beta_.empty()) return 0;
  const auto g = group_mean_.find(key1);
  double v = beta_[0];
  for (std::size_t j = 0; j < mean_.size() && j < x.size(); ++j) {
    if (!(scale_[j] > 0)) continue;
    double xj = x[j];
    if (j < kinds_.size() && kinds_[j] == ColumnKind::kWithin) {
      // An unseen group sits at its own (unknown) mean: no within-group deviation.
      xj = g != group_mean_.end() ? x[j] - g->second[j] : 0.0;
    }
    v += beta_[j + 1] * (xj - mean_[j]) / scale_[j];
  }
  return v;
}

CorrectionModel::PoolSummary CorrectionModel::Summarise(const Pool& pool) const {
  PoolSummary out;
  const std::array<double, 3> def = {-kZ90 * options_.default_sigma, 0.0,
                                     kZ90 * options_.default_sigma};
  double w = 0;
  for (double x : pool.weights) w += x;
  out.q = def;
  out.count = static_cast<double>(pool.values.size());
  if (pool.values.empty() || w <= 0) return out;
  out.empty = false;
  const std::array<double, 3> emp = {WeightedQuantile(pool.values, pool.weights, 0.1),
                                     WeightedQuantile(pool.values, pool.weights, 0.5),
                                     WeightedQuantile(pool.values, pool.weights, 0.9)};
  const double k = options_.pool_pseudo_count;
  std::array<double, 3> q{};
  for (std::size_t i = 0; i < 3; ++i) {
    // The default spread is centred on the pool's median: pseudo-counts widen, never shift.
    const double d = i == 1 ? emp[1] : emp[1] + def[i];
    q[i] = (w * emp[i] + k * d) / (w + k);
  }
  out.q = q;
  return out;
}

void CorrectionModel::Fit(const std::vector<CorrectionSample>& input,
                          const std::vector<ColumnKind>& kinds) {
  *this = CorrectionModel(options_);
  n_ = static_cast<int>(input.size());
  if (input.empty()) return;
  const std::size_t n = input.size();
  const std::size_t p = input.front().x.size();
  kinds_ = kinds;
  kinds_.resize(p, ColumnKind::kJob);
  // Centre kWithin columns on their group's weighted mean.
  std::vector<CorrectionSample> samples = input;
  {
    std::map<std::string, std::vector<double>> sums;
    std::map<std::string, double> weights;
    for (const auto& smp : samples) {
      auto& sum = sums[smp.key1];
      sum.resize(p, 0.0);
      for (std::size_t j = 0; j < p; ++j) sum[j] += smp.weight * smp.x[j];
      weights[smp.key1] += smp.weight;
    }
    for (auto& [k, sum] : sums) {
      for (double& v : sum) v /= std::max(weights[k], 1e-12);
      group_mean_[k] = sum;
    }
    for (auto& smp : samples) {
      const auto& m = group_mean_[smp.key1];
      for (std::size_t j = 0; j < p; ++j) {
        if (kinds_[j] == ColumnKind::kWithin) smp.x[j] -= m[j];
      }
    }
  }
  // Standardise the columns (weighted), so one ridge lambda means the same for every feature.
  mean_.assign(p, 0.0);
  scale_.assign(p, 0.0);
  double wsum = 0;
  for (const auto& s : samples) wsum += s.weight;
  for (std::size_t j = 0; j < p; ++j) {
    double m = 0;
    for (const auto& s : samples) m += s.weight * s.x[j];
    m /= wsum;
    double v = 0;
    for (const auto& s : samples) v += s.weight * (s.x[j] - m) * (s.x[j] - m);
    mean_[j] = m;
    scale_[j] = std::sqrt(v / wsum) > 1e-9 ? std::sqrt(v / wsum) : 0.0;
  }
  const std::size_t cols = p + 1;
  std::vector<double> z(n * cols, 0.0);
  std::vector<double> y(n), w(n);
  for (std::size_t i = 0; i < n; ++i) {
    z[i * cols] = 1.0;
    for (std::size_t j = 0; j < p; ++j) {
      z[i * cols + j + 1] = scale_[j] > 0 ? (samples[i].x[j] - mean_[j]) / scale_[j] : 0.0;
    }
    y[i] = samples[i].y;
    w[i] = samples[i].weight;
  }
  std::set<std::string> distinct;
  for (const auto& smp : samples) distinct.insert(smp.key1);
  const double per_group = std::max(1.0, wsum / static_cast<double>(distinct.size()));
  std::vector<double> lambdas(cols, options_.ridge_lambda);
  lambdas[0] = options_.intercept_lambda * per_group;
  for (std::size_t j = 0; j < p; ++j) {
    if (kinds_[j] == ColumnKind::kGroup) lambdas[j + 1] = options_.ridge_lambda * per_group;
  }
  const RidgeFit fit = FitRidge(z, y, w, lambdas);
  beta_ = fit.ok ? fit.beta : std::vector<double>(cols, 0.0);
  std::vector<double> e(n), e_loo(n);
  for (std::size_t i = 0; i < n; ++i) {
    double pred = 0;
    for (std::size_t c = 0; c < cols; ++c) pred += beta_[c] * z[i * cols + c];
    e[i] = y[i] - pred;
    e_loo[i] = e[i] / (1 - fit.leverage[i]);
  }

  // Group effects: shrunk weighted means of the residuals, coarse first, then fine on what the
  // coarse left.
  std::map<std::string, double> s1, w1, s2, w2, s1_part, w1_part;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k1 = samples[i].key1;
    if (k1.empty()) continue;
    s1[k1] += w[i] * e[i];
    w1[k1] += w[i];
  }
  for (const auto& [k, s] : s1) effect1_[k] = s / (w1[k] + options_.shrink1);
  std::vector<double> e_after1(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k1 = samples[i].key1;
    e_after1[i] = e[i] - (k1.empty() ? 0.0 : effect1_[k1]);
    const auto& k2 = samples[i].key2;
    if (k2.empty()) continue;
    s2[k2] += w[i] * e_after1[i];
    w2[k2] += w[i];
    s1_part[k2] += w[i] * e[i];
    w1_part[k2] += w[i];
  }
  for (const auto& [k, s] : s2) effect2_[k] = s / (w2[k] + options_.shrink2);

  // Members of each group in time order, for the leave-out windows.
  std::map<std::string, std::vector<std::size_t>> by1, by2;
  for (std::size_t i = 0; i < n; ++i) {
    if (!samples[i].timed) continue;
    if (!samples[i].key1.empty()) by1[samples[i].key1].push_back(i);
    if (!samples[i].key2.empty()) by2[samples[i].key2].push_back(i);
  }
  for (auto* by : {&by1, &by2}) {
    for (auto& [k, members] : *by) {
      std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
        return samples[a].time < samples[b].time;
      });
    }
  }
  const double window = options_.leave_out_window;
  // Sums over sample i and the timed members of its group within `window` of it.
  const auto around = [&](const std::vector<std::size_t>& members, std::size_t i,
                          const std::vector<double>& res, const std::vector<double>& res_after1,
                          const std::vector<double>& wt) {
    Window out;
    if (!samples[i].timed || window <= 0) {
      out.s = wt[i] * res[i];
      out.s_after1 = wt[i] * res_after1[i];
      out.w = wt[i];
      return out;
    }
    const double t = samples[i].time;
    const auto lo = std::lower_bound(members.begin(), members.end(), t - window,
                                     [&](std::size_t a, double v) { return samples[a].time < v; });
    for (auto it = lo; it != members.end() && samples[*it].time <= t + window; ++it) {
      out.s += wt[*it] * res[*it];
      out.s_after1 += wt[*it] * res_after1[*it];
      out.w += wt[*it];
    }
    return out;
  };

  // Residual pools, each as a query of that kind would see the history.
  Pool seen2, seen1, unseen;
  std::map<std::string, Pool> group_pool, fine_pool;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k1 = samples[i].key1;
    const auto& k2 = samples[i].key2;
    const double wi = w[i];
    // Leave out the sample and its neighbours in time within the same groups (a burst of runs of
    // one job is one piece of evidence, not many).
    const Window out1 = k1.empty() ? Window{} : around(by1[k1], i, e, e_after1, w);
    const Window out2 = k2.empty() ? Window{} : around(by2[k2], i, e, e_after1, w);
    if (!k2.empty() && w2[k2] - out2.w > 1e-12) {
      const double e1 = k1.empty() ? 0.0 : (s1[k1] - out1.s) / (w1[k1] - out1.w + options_.shrink1);
      const double e2 = (s2[k2] - out2.s_after1) / (w2[k2] - out2.w + options_.shrink2);
      const double r = e_loo[i] - e1 - e2;
      seen2.values.push_back(r);
      seen2.weights.push_back(wi);
      if (!k1.empty()) {
        group_pool[k1].values.push_back(r);
        group_pool[k1].weights.push_back(wi);
      }
      fine_pool[k2].values.push_back(r);
      fine_pool[k2].weights.push_back(wi);
    }
    if (!k1.empty()) {
      const double out_s = k2.empty() ? wi * e[i] : s1_part[k2];
      const double out_w = k2.empty() ? wi : w1_part[k2];
      if (w1[k1] - out_w > 1e-12) {
        const double e1 = (s1[k1] - out_s) / (w1[k1] - out_w + options_.shrink1);
        seen1.values.push_back(e_loo[i] - e1);
        seen1.weights.push_back(wi);
      }
    }
  }
  // Unseen coarse groups: refit the regression without each group and score the group on it.
  std::set<std::string> groups;
  for (const auto& s : samples) {
    if (!s.key1.empty()) groups.insert(s.key1);
  }
  std::vector<bool> done(n, false);
  if (groups.size() >= 2 && groups.size() <= kMaxGroupRefits) {
    for (const std::string& g : groups) {
      std::vector<double> w_out = w;
      for (std::size_t i = 0; i < n; ++i) {
        if (samples[i].key1 == g) w_out[i] = 0;
      }
      const RidgeFit out = FitRidge(z, y, w_out, lambdas, /*with_leverage=*/false);
      if (!out.ok) continue;
      for (std::size_t i = 0; i < n; ++i) {
        if (samples[i].key1 != g) continue;
        double pred = 0;
        for (std::size_t c = 0; c < cols; ++c) pred += out.beta[c] * z[i * cols + c];
        unseen.values.push_back(y[i] - pred);
        unseen.weights.push_back(w[i]);
        done[i] = true;
      }
    }
  }
  // Without a second group to learn from, a new group's error can only be judged by the spread
  // inside the groups seen, centred on their own effects (the default spread widens it).
  for (std::size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    const auto& k1 = samples[i].key1;
    unseen.values.push_back(e_loo[i] - (k1.empty() ? 0.0 : effect1_[k1]));
    unseen.weights.push_back(w[i]);
  }
  seen2_ = Summarise(seen2);
  seen1_ = Summarise(seen1);
  unseen_ = Summarise(unseen);
  for (const auto& [k, pool] : group_pool) group_[k] = Summarise(pool);
  for (const auto& [k, pool] : fine_pool) fine_[k] = Summarise(pool);
}

CorrectionPrediction CorrectionModel::Predict(const std::vector<double>& x, const std::string& key1,
                                              const std::string& key2) const {
  CorrectionPrediction out;
  out.samples = n_;
  double mean = Linear(x, key1);
  const auto it1 = key1.empty() ? effect1_.end() : effect1_.find(key1);
  const auto it2 = key2.empty() ? effect2_.end() : effect2_.find(key2);
  if (it1 != effect1_.end()) mean += it1->second;
  if (it2 != effect2_.end()) mean += it2->second;
  const PoolSummary* pool = &unseen_;
  if (it2 != effect2_.end() && !seen2_.empty) {
    out.seen = 2;
    pool = &seen2_;
  } else if (it1 != effect1_.end() && !seen1_.empty) {
    out.seen = 1;
    pool = &seen1_;
  }
  // With no history at all, the default spread (Summarise of an empty pool).
  std::array<double, 3> q = pool->empty ? Summarise(Pool{}).q : pool->q;
  // A group's own errors describe it better than everyone's once there are enough of them: the
  // coarse group's, then the fine group's, each blended in by its count.
  const auto blend = [&](const std::map<std::string, PoolSummary>& own, const std::string& key) {
    const auto g = own.find(key);
    if (g == own.end() || g->second.empty) return;
    const double m = g->second.count;
    const double k = options_.group_spread_count;
    for (std::size_t i = 0; i < 3; ++i) q[i] = (m * g->second.q[i] + k * q[i]) / (m + k);
  };
  if (out.seen >= 1) blend(group_, key1);
  if (out.seen >= 2) blend(fine_, key2);
  for (std::size_t i = 0; i < 3; ++i) out.q[i] = mean + q[i];
  out.q[0] = std::min(out.q[0], out.q[1]);
  out.q[2] = std::max(out.q[2], out.q[1]);
  return out;
}

}  // namespace ordo::forecast
