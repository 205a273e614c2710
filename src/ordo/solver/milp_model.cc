#include "ordo/solver/milp_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ordo/core/assert.h"

namespace ordo::solver {

int MilpModel::AddVariable(double lower, double upper, double objective, bool integer) {
  lower_.push_back(lower);
  upper_.push_back(upper);
  objective_.push_back(objective);
  integer_.push_back(integer ? 1 : 0);
  return num_variables() - 1;
}

int MilpModel::AddRow(double lower, double upper, std::span<const Term> terms) {
  for (const Term& term : terms) {
    row_index_.push_back(term.column);
    row_value_.push_back(term.coefficient);
  }
  row_start_.push_back(static_cast<int64_t>(row_index_.size()));
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return num_rows() - 1;
}

void MilpModel::SetBounds(int column, double lower, double upper) {
  ORDO_ASSERT(column >= 0 && column < num_variables());
  lower_[column] = lower;
  upper_[column] = upper;
}

int MilpModel::num_integers() const {
  return static_cast<int>(std::count(integer_.begin(), integer_.end(), 1));
}

double MilpModel::ObjectiveValue(std::span<const double> x) const {
  ORDO_ASSERT(static_cast<int>(x.size()) == num_variables());
  double value = objective_offset_;
  for (size_t j = 0; j < x.size(); ++j) value += objective_[j] * x[j];
  return value;
}

double MilpModel::MaxViolation(std::span<const double> x) const {
  if (static_cast<int>(x.size()) != num_variables()) return kInfinity;
  double worst = 0;
  for (size_t j = 0; j < x.size(); ++j) {
    if (!std::isfinite(x[j])) return kInfinity;
    worst = std::max({worst, lower_[j] - x[j], x[j] - upper_[j]});
    if (integer_[j]) worst = std::max(worst, std::abs(x[j] - std::round(x[j])));
  }
  for (int r = 0; r < num_rows(); ++r) {
    double activity = 0;
    for (int64_t k = row_start_[r]; k < row_start_[r + 1]; ++k) {
      const int column = row_index_[k];
      if (column < 0 || column >= num_variables()) return kInfinity;
      activity += row_value_[k] * x[column];
    }
    worst = std::max({worst, row_lower_[r] - activity, activity - row_upper_[r]});
  }
  return worst;
}

Result<void> FindErrorInModel(const MilpModel& model) {
  const auto where = [](const char* what, int64_t i, const char* field) {
    return std::string(what) + "[" + std::to_string(i) + "]." + field;
  };
  if (!std::isfinite(model.objective_offset())) {
    return FailInput("objective_offset", "must be finite");
  }
  for (int j = 0; j < model.num_variables(); ++j) {
    const double lo = model.lower()[j];
    const double up = model.upper()[j];
    if (std::isnan(lo) || lo == kInfinity) {
      return FailInput(where("variables", j, "lower"), "must be a number below +infinity");
    }
    if (std::isnan(up) || up == -kInfinity) {
      return FailInput(where("variables", j, "upper"), "must be a number above -infinity");
    }
    if (lo > up) {
      return FailInput(
          where("variables", j, "lower"),
          "is above the upper bound (" + std::to_string(lo) + " > " + std::to_string(up) + ")");
    }
    if (!std::isfinite(model.objective()[j])) {
      return FailInput(where("variables", j, "objective"), "must be finite");
    }
  }
  std::vector<int64_t> last_row(static_cast<size_t>(model.num_variables()), -1);
  for (int r = 0; r < model.num_rows(); ++r) {
    const double lo = model.row_lower()[r];
    const double up = model.row_upper()[r];
    if (std::isnan(lo) || lo == kInfinity) {
      return FailInput(where("rows", r, "lower"), "must be a number below +infinity");
    }
    if (std::isnan(up) || up == -kInfinity) {
      return FailInput(where("rows", r, "upper"), "must be a number above -infinity");
    }
    if (lo > up) {
      return FailInput(where("rows", r, "lower"), "is above the row's upper bound");
    }
    for (int64_t k = model.row_start()[r]; k < model.row_start()[r + 1]; ++k) {
      const int64_t term = k - model.row_start()[r];
      const std::string field =
          "rows[" + std::to_string(r) + "].terms[" + std::to_string(term) + "]";
      const int column = model.row_index()[k];
      if (column < 0 || column >= model.num_variables()) {
        return FailInput(field,
                         "names column " + std::to_string(column) + ", which does not exist");
      }
      if (!std::isfinite(model.row_value()[k])) {
        return FailInput(field, "coefficient must be finite");
      }
      if (last_row[column] == r) {
        return FailInput(field, "names column " + std::to_string(column) + " a second time");
      }
      last_row[column] = r;
    }
  }
  return {};
}

}  // namespace ordo::solver
