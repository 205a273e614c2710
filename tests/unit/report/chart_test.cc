#include <gtest/gtest.h>

#include <string>

#include "ordo/report/render.h"
#include "tests/support/text.h"
#include "tests/unit/core/core_test_util.h"

namespace ordo::report {
namespace {

using testing::Count;

// ckpt runs on GPUs 0-1 over steps 0-2, is preempted at 3 (2 of its 3 steps saved) and resumes on
// GPUs 2-3 at step 5: 1 restart step and 4 steps of work, to step 9. Drawn from start to
// start + duration it would be one block over steps 0-5 on GPUs 0-1.
TEST(PlanSvgTest, APreemptedJobIsDrawnAsItsStays) {
  const std::string svg = RenderPlanSvg(testing::PreemptScenario(), testing::PreemptPlan());
  EXPECT_EQ(Count(svg, "<title>ckpt ("), 2u) << svg;
  EXPECT_EQ(Count(svg, ", priority 2, 2 GPUs from 0, steps 0-2, preempted)"), 1u) << svg;
  EXPECT_EQ(Count(svg, ", priority 2, 2 GPUs from 2, steps 5-9, resumed)"), 1u) << svg;
  EXPECT_EQ(Count(svg, "steps 0-5"), 0u) << svg;
}

}  // namespace
}  // namespace ordo::report
