// Small robust statistics and least squares used by the forecasters: weighted quantiles, the
// pinball loss, and ridge regression with leave-one-out residuals. Hand-written: the systems are
// tiny (tens of columns), so a dense Cholesky is all that is needed and no library is pulled in.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace ordo::forecast {

/// The q-quantile (0 <= q <= 1) of `values`, linear between order statistics. NaN when empty.
double Quantile(std::span<const double> values, double q);

/// The weighted q-quantile: the smallest value whose cumulative weight reaches q of the total,
/// interpolated between neighbours. Weights must be >= 0; NaN when empty or all weights are 0.
double WeightedQuantile(std::span<const double> values, std::span<const double> weights, double q);

inline double Median(std::span<const double> values) { return Quantile(values, 0.5); }

/// The mean of the values between the `trim` and 1 - `trim` quantiles (by weight): a robust level
/// that, unlike the median, stays above zero for mostly-zero data. NaN when empty.
double WeightedTrimmedMean(std::span<const double> values, std::span<const double> weights,
                           double trim);
double TrimmedMean(std::span<const double> values, double trim);

/// Pinball (quantile) loss of forecasting `forecast` for quantile q when `actual` happened.
inline double Pinball(double actual, double forecast, double q) {
  const double d = actual - forecast;
  return d >= 0 ? q * d : (q - 1) * d;
}

/// Weighted ridge regression: minimises sum_i w_i (y_i - x_i.beta)^2 + sum_j lambda_j beta_j^2.
/// Columns are used as given (callers standardise). Also returns each row's leverage h_ii, so a
/// caller gets the leave-one-out residual (y_i - x_i.beta) / (1 - h_ii) without refitting.
struct RidgeFit {
  std::vector<double> beta;
  std::vector<double> leverage;  // one per row
  bool ok = false;               // false when the system was singular (then beta is zeros)
};

/// `x` is row-major, rows = y.size(), cols = lambdas.size(). A lambda of 0 leaves the column
/// unpenalised (a tiny ridge still keeps an all-zero column from making the system singular).
/// `with_leverage` false skips the leverages (they stay 0).
RidgeFit FitRidge(std::span<const double> x, std::span<const double> y,
                  std::span<const double> weights, std::span<const double> lambdas,
                  bool with_leverage = true);

/// Solves A x = b for a symmetric positive definite n x n matrix (row-major) by Cholesky.
/// Returns false when A is not positive definite.
bool SolveSpd(std::vector<double> a, std::vector<double> b, std::size_t n, std::vector<double>& x);

}  // namespace ordo::forecast
