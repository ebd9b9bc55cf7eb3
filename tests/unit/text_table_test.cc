// TextTable (common/text_table.h): the one renderer of --once's and
// report's tables.
#include "common/text_table.h"

#include <gtest/gtest.h>

namespace gpuq {
namespace {

TEST(TextTableTest, ColumnsAreAsWideAsTheirWidestCellTheLastUnpadded) {
  TextTable t({"GPU_ID", "TYPE", "N"});
  t.Add({"23582", "compute", "12"});
  t.Add({"1", "sdma", "3"});
  EXPECT_EQ(t.Render(),
            "GPU_ID  TYPE     N\n"
            "23582   compute  12\n"
            "1       sdma     3\n");
}

TEST(TextTableTest, ARowLongerThanTheHeaderWidensItsColumns) {
  TextTable t({"A"});
  t.Add({"x", "longer", "z"});
  t.Add({"yy", "s", "z"});
  EXPECT_EQ(t.Render(),
            "A\n"
            "x   longer  z\n"
            "yy  s       z\n");
}

TEST(TextTableTest, MarkdownEscapesPipes) {
  TextTable t({"WHAT", "VALUE"});
  EXPECT_TRUE(t.empty());
  t.Add({"a|b", "1"});
  EXPECT_FALSE(t.empty());
  EXPECT_EQ(t.RenderMarkdown(),
            "| WHAT | VALUE |\n"
            "|---|---|\n"
            "| a\\|b | 1 |\n");
}

}  // namespace
}  // namespace gpuq
