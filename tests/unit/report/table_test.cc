#include "ordo/report/table.h"

#include <gtest/gtest.h>

namespace ordo::report {
namespace {

TEST(Table, TextAlignsNamesLeftAndFiguresRight) {
  Table t;
  t.header = {"run", "value"};
  t.rows = {{"fifo", "3,289"}, {"ordo-full", "12"}};
  EXPECT_EQ(t.Text(),
            "run        value\n"
            "fifo       3,289\n"
            "ordo-full     12\n");
}

TEST(Table, MarkdownEscapesPipes) {
  Table t;
  t.header = {"run", "note"};
  t.rows = {{"a|b", "1"}};
  EXPECT_EQ(t.Markdown(),
            "| run | note |\n"
            "|---|---:|\n"
            "| a\\|b | 1 |\n");
}

}  // namespace
}  // namespace ordo::report
