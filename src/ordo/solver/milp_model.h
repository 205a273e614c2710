// A plain, solver-neutral mixed-integer linear program: variables with bounds, integrality and an
// objective coefficient; sparse rows with lower and upper bounds; a sense. No solver types appear
// here, so policies build models without knowing which backend (milp_backend.h) solves them.
//
// Example:
//   MilpModel m(Sense::kMaximize);
//   const int x = m.AddVariable(0, 1, 3.0, /*integer=*/true);
//   const int y = m.AddVariable(0, 1, 2.0, /*integer=*/true);
//   m.AddRow(-kInfinity, 1, {{x, 1.0}, {y, 1.0}});   // x + y <= 1
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ordo/core/error.h"

namespace ordo::solver {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class Sense : int { kMinimize = 0, kMaximize = 1 };

/// One term of a row: coefficient times column.
struct Term {
  int column = 0;
  double coefficient = 0;
};

/// Rows are stored compressed (CSR), so a model with millions of non-zeros stays compact. Not
/// thread-safe for writing; const access is.
class MilpModel {
 public:
  explicit MilpModel(Sense sense = Sense::kMaximize) : sense_(sense) {}

  /// Adds a variable and returns its column index (0, 1, 2, ... in order of addition).
  int AddVariable(double lower, double upper, double objective, bool integer);
  int AddBinary(double objective) { return AddVariable(0, 1, objective, true); }

  /// Adds `lower <= sum(terms) <= upper` and returns its row index. Use -kInfinity / kInfinity
  /// for a one-sided row. Terms may name a column twice; FindErrorInModel reports it.
  int AddRow(double lower, double upper, std::span<const Term> terms);
  int AddRow(double lower, double upper, std::initializer_list<Term> terms) {
    return AddRow(lower, upper, std::span<const Term>(terms.begin(), terms.size()));
  }

  /// A constant added to the objective (the value of decisions fixed outside the model).
  void set_objective_offset(double offset) { objective_offset_ = offset; }
  void set_sense(Sense sense) { sense_ = sense; }
  /// Changes a column's bounds (used to fix variables between solves).
  void SetBounds(int column, double lower, double upper);

  [[nodiscard]] Sense sense() const { return sense_; }
  [[nodiscard]] double objective_offset() const { return objective_offset_; }
  [[nodiscard]] int num_variables() const { return static_cast<int>(lower_.size()); }
  [[nodiscard]] int num_rows() const { return static_cast<int>(row_lower_.size()); }
  [[nodiscard]] int64_t num_nonzeros() const { return static_cast<int64_t>(row_index_.size()); }
  [[nodiscard]] int num_integers() const;

  [[nodiscard]] const std::vector<double>& lower() const { return lower_; }
  [[nodiscard]] const std::vector<double>& upper() const { return upper_; }
  [[nodiscard]] const std::vector<double>& objective() const { return objective_; }
  [[nodiscard]] const std::vector<char>& integer() const { return integer_; }
  [[nodiscard]] const std::vector<double>& row_lower() const { return row_lower_; }
  [[nodiscard]] const std::vector<double>& row_upper() const { return row_upper_; }
  /// CSR: row r's terms are row_index()[row_start()[r] .. row_start()[r+1]).
  [[nodiscard]] const std::vector<int64_t>& row_start() const { return row_start_; }
  [[nodiscard]] const std::vector<int>& row_index() const { return row_index_; }
  [[nodiscard]] const std::vector<double>& row_value() const { return row_value_; }

  /// sum(objective * x) + offset. `x` must have num_variables() entries.
  [[nodiscard]] double ObjectiveValue(std::span<const double> x) const;

  /// The largest violation by `x` of a bound, a row or integrality (0 for a feasible point);
  /// infinity when x has the wrong size or holds a non-finite value.
  [[nodiscard]] double MaxViolation(std::span<const double> x) const;
  [[nodiscard]] bool IsFeasible(std::span<const double> x, double tolerance = 1e-6) const {
    return MaxViolation(x) <= tolerance;
  }

 private:
  Sense sense_;
  double objective_offset_ = 0;
  std::vector<double> lower_, upper_, objective_;
  std::vector<char> integer_;
  std::vector<double> row_lower_, row_upper_;
  std::vector<int64_t> row_start_{0};
  std::vector<int> row_index_;
  std::vector<double> row_value_;
};

/// Checks a model before any solver sees it (as OR-Tools' FindErrorInMPModelProto): NaN anywhere,
/// an infinite objective coefficient or coefficient, lower > upper, a column index out of range or
/// twice in one row, a bound of +inf as a lower or -inf as an upper. The error's field names the
/// variable or row (`variables[3].lower`, `rows[7].terms[2]`).
[[nodiscard]] Result<void> FindErrorInModel(const MilpModel& model);

}  // namespace ordo::solver
