#include "ordo/forecast/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace ordo::forecast {

double Quantile(std::span<const double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

namespace {

// The indices of `values` in increasing order of value, and the total of the (non-negative parts
// of the) weights; nothing when the sizes differ, there are no values or no weight.
struct WeightedOrder {
  std::vector<std::size_t> order;
  double total = 0;
};
std::optional<WeightedOrder> SortByValue(std::span<const double> values,
                                         std::span<const double> weights) {
  if (values.empty() || values.size() != weights.size()) return std::nullopt;
  WeightedOrder out;
  out.order.resize(values.size());
  std::iota(out.order.begin(), out.order.end(), 0);
  std::sort(out.order.begin(), out.order.end(),
            [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  for (double w : weights) out.total += std::max(0.0, w);
  if (out.total <= 0) return std::nullopt;
  return out;
}

}  // namespace

double WeightedQuantile(std::span<const double> values, std::span<const double> weights, double q) {
  const auto sorted = SortByValue(values, weights);
  if (!sorted) return std::numeric_limits<double>::quiet_NaN();
  const auto& [order, total] = *sorted;
  // Each value sits at the middle of its weight's interval on [0, total]; interpolating between
  // those midpoints makes equal weights agree with Quantile() at the extremes' inner points.
  const double target = std::clamp(q, 0.0, 1.0) * total;
  double cum = 0;
  double prev_mid = 0;
  double prev_value = values[order.front()];
  bool have_prev = false;
  for (std::size_t idx : order) {
    const double w = std::max(0.0, weights[idx]);
    if (w <= 0) continue;
    const double mid = cum + w / 2;
    if (target <= mid) {
      if (!have_prev) return values[idx];
      const double span = mid - prev_mid;
      const double frac = span > 0 ? (target - prev_mid) / span : 1.0;
      return prev_value + (values[idx] - prev_value) * frac;
    }
    cum += w;
    prev_mid = mid;
    prev_value = values[idx];
    have_prev = true;
  }
  return prev_value;
}

double WeightedTrimmedMean(std::span<const double> values, std::span<const double> weights,
                           double trim) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto sorted = SortByValue(values, weights);
  if (!sorted) return nan;
  const auto& [order, total] = *sorted;
  // Keep the part of each value's weight interval inside [trim, 1 - trim] of the total.
  const double lo = std::clamp(trim, 0.0, 0.49) * total;
  const double hi = total - lo;
  double cum = 0, sum = 0, kept = 0;
  for (std::size_t idx : order) {
    const double w = std::max(0.0, weights[idx]);
    const double a = std::max(cum, lo);
    const double b = std::min(cum + w, hi);
    if (b > a) {
      sum += values[idx] * (b - a);
      kept += b - a;
    }
    cum += w;
  }
  return kept > 0 ? sum / kept : nan;
}

double TrimmedMean(std::span<const double> values, double trim) {
  const std::vector<double> ones(values.size(), 1.0);
  return WeightedTrimmedMean(values, ones, trim);
}

namespace {

// In-place Cholesky: a = L L^T with L in the lower triangle. False when not positive definite.
bool Cholesky(std::vector<double>& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 1e-12)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  return true;
}

// Solves L z = b in place.
void ForwardSolve(const std::vector<double>& l, std::vector<double>& b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    double s = b[i];
    for (std::size_t k = 0; k < i; ++k) s -= l[i * n + k] * b[k];
    b[i] = s / l[i * n + i];
  }
}

// Solves L^T x = z in place.
void BackwardSolve(const std::vector<double>& l, std::vector<double>& b, std::size_t n) {
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= l[k * n + i] * b[k];
    b[i] = s / l[i * n + i];
  }
}

}  // namespace

bool SolveSpd(std::vector<double> a, std::vector<double> b, std::size_t n, std::vector<double>& x) {
  if (a.size() != n * n || b.size() != n || !Cholesky(a, n)) return false;
  ForwardSolve(a, b, n);
  BackwardSolve(a, b, n);
  x = std::move(b);
  return true;
}

RidgeFit FitRidge(std::span<const double> x, std::span<const double> y,
                  std::span<const double> weights, std::span<const double> lambdas,
                  bool with_leverage) {
  RidgeFit fit;
  const std::size_t n = y.size();
  const std::size_t p = lambdas.size();
  fit.beta.assign(p, 0.0);
  fit.leverage.assign(n, 0.0);
  if (n == 0 || p == 0 || x.size() != n * p || weights.size() != n) return fit;
  std::vector<double> a(p * p, 0.0);
  std::vector<double> b(p, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double w = weights[i];
    if (w <= 0) continue;
    const double* row = &x[i * p];
    for (std::size_t r = 0; r < p; ++r) {
      b[r] += w * row[r] * y[i];
      for (std::size_t c = 0; c <= r; ++c) a[r * p + c] += w * row[r] * row[c];
    }
  }
  for (std::size_t r = 0; r < p; ++r) {
    for (std::size_t c = 0; c < r; ++c) a[c * p + r] = a[r * p + c];
    // A tiny ridge on unpenalised columns keeps an all-zero column from making A singular.
    a[r * p + r] += std::max(lambdas[r], 1e-9);
  }
  if (!Cholesky(a, p)) return fit;
  std::vector<double> beta = b;
  ForwardSolve(a, beta, p);
  BackwardSolve(a, beta, p);
  // Leverage h_ii = w_i x_i^T A^-1 x_i = w_i |L^-1 x_i|^2: one triangular solve per row.
  std::vector<double> z(p);
  for (std::size_t i = 0; i < n && with_leverage; ++i) {
    if (weights[i] <= 0) continue;
    for (std::size_t r = 0; r < p; ++r) z[r] = x[i * p + r];
    ForwardSolve(a, z, p);
    double h = 0;
    for (double v : z) h += v * v;
    fit.leverage[i] = std::clamp(weights[i] * h, 0.0, 0.99);
  }
  fit.beta = std::move(beta);
  fit.ok = true;
  return fit;
}

}  // namespace ordo::forecast
