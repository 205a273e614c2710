#include "ordo/solver/milp_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ordo::solver {
namespace {

TEST(MilpModel, CountsAndCsrLayout) {
  MilpModel m(Sense::kMaximize);
  const int x = m.AddBinary(3);
  const int y = m.AddVariable(0, 5, 1, false);
  EXPECT_EQ(x, 0);
  EXPECT_EQ(y, 1);
  EXPECT_EQ(m.AddRow(-kInfinity, 4, {{x, 2}, {y, 1}}), 0);
  EXPECT_EQ(m.AddRow(1, kInfinity, {{y, 1}}), 1);
  EXPECT_EQ(m.num_variables(), 2);
  EXPECT_EQ(m.num_rows(), 2);
  EXPECT_EQ(m.num_nonzeros(), 3);
  EXPECT_EQ(m.num_integers(), 1);
  EXPECT_EQ(m.row_start(), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(m.row_index(), (std::vector<int>{0, 1, 1}));
}

TEST(MilpModel, ObjectiveIncludesOffset) {
  MilpModel m;
  m.AddVariable(0, 10, 2, false);
  m.AddVariable(0, 10, -1, false);
  m.set_objective_offset(5);
  const std::vector<double> x{3, 4};
  EXPECT_DOUBLE_EQ(m.ObjectiveValue(x), 5 + 6 - 4);
}

TEST(MilpModel, MaxViolationSeesBoundsRowsAndIntegrality) {
  MilpModel m;
  const int x = m.AddVariable(0, 1, 1, true);
  const int y = m.AddVariable(0, 3, 1, false);
  m.AddRow(-kInfinity, 2, {{x, 1}, {y, 1}});
  EXPECT_DOUBLE_EQ(m.MaxViolation(std::vector<double>{1, 1}), 0);
  EXPECT_TRUE(m.IsFeasible(std::vector<double>{1, 1}));
  EXPECT_NEAR(m.MaxViolation(std::vector<double>{1, 1.5}), 0.5, 1e-12);     // the row
  EXPECT_NEAR(m.MaxViolation(std::vector<double>{0.5, 0}), 0.5, 1e-12);     // integrality
  EXPECT_NEAR(m.MaxViolation(std::vector<double>{0, -0.25}), 0.25, 1e-12);  // a bound
  EXPECT_EQ(m.MaxViolation(std::vector<double>{0}), kInfinity);             // wrong size
  EXPECT_EQ(m.MaxViolation(std::vector<double>{NAN, 0}), kInfinity);
}

TEST(FindErrorInModel, AcceptsAValidModel) {
  MilpModel m;
  const int x = m.AddBinary(1);
  m.AddRow(-kInfinity, 1, {{x, 1}});
  EXPECT_TRUE(FindErrorInModel(m).has_value());
}

struct BadModelCase {
  const char* name;
  void (*build)(MilpModel&);
  const char* field;
};

TEST(FindErrorInModel, NamesTheFieldAtFault) {
  const BadModelCase cases[] = {
      {"lower above upper", [](MilpModel& m) { m.AddVariable(2, 1, 0, false); },
       "variables[0].lower"},
      {"nan objective", [](MilpModel& m) { m.AddVariable(0, 1, NAN, false); },
       "variables[0].objective"},
      {"+inf lower", [](MilpModel& m) { m.AddVariable(kInfinity, kInfinity, 0, false); },
       "variables[0].lower"},
      {"-inf upper",
       [](MilpModel& m) {
         m.AddVariable(0, 1, 0, false);
         m.AddVariable(-kInfinity, -kInfinity, 0, false);
       },
       "variables[1].upper"},
      {"unknown column",
       [](MilpModel& m) {
         m.AddBinary(1);
         m.AddRow(0, 1, {{0, 1}, {3, 1}});
       },
       "rows[0].terms[1]"},
      {"column twice",
       [](MilpModel& m) {
         m.AddBinary(1);
         m.AddBinary(1);
         m.AddRow(0, 1, {{0, 1}});
         m.AddRow(0, 1, {{1, 1}, {0, 1}, {1, 2}});
       },
       "rows[1].terms[2]"},
      {"infinite coefficient",
       [](MilpModel& m) {
         m.AddBinary(1);
         m.AddRow(0, 1, {{0, kInfinity}});
       },
       "rows[0].terms[0]"},
      {"row lower above upper",
       [](MilpModel& m) {
         m.AddBinary(1);
         m.AddRow(2, 1, {{0, 1}});
       },
       "rows[0].lower"},
  };
  for (const BadModelCase& c : cases) {
    MilpModel m;
    c.build(m);
    auto result = FindErrorInModel(m);
    ASSERT_FALSE(result.has_value()) << c.name;
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidInput) << c.name;
    EXPECT_EQ(result.error().field, c.field) << c.name;
  }
}

}  // namespace
}  // namespace ordo::solver
