// RuntimeKnobsParser and RuntimeKnobsLabel (sources/runtime_knobs.h): the
// knobs picked out of /proc/PID/environ's bytes, however they are split,
// with memory bounded and nothing outside the list kept.
#include "sources/runtime_knobs.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuq {
namespace {

std::string Environ(std::initializer_list<const char*> entries) {
  std::string out;
  for (const char* e : entries) {
    out += e;
    out += '\0';
  }
  return out;
}

gpuq_process_knobs_record ParseWhole(const std::string& bytes) {
  RuntimeKnobsParser p;
  p.Feed(bytes.data(), bytes.size());
  return p.Finish();
}

TEST(RuntimeKnobsTest, NamesComeFromTheAbiList) {
  EXPECT_STREQ(RuntimeKnobName(GPUQ_KNOB_GPU_MAX_HW_QUEUES),
               "GPU_MAX_HW_QUEUES");
  EXPECT_STREQ(RuntimeKnobName(GPUQ_KNOB_CUDA_VISIBLE_DEVICES),
               "CUDA_VISIBLE_DEVICES");
  EXPECT_STREQ(RuntimeKnobName(GPUQ_KNOB__MAX), "");
}

TEST(RuntimeKnobsTest, KeepsOnlyTheListedNamesExactly) {
  const auto r = ParseWhole(
      Environ({"PATH=/usr/bin", "GPU_MAX_HW_QUEUES=8", "GPU_MAX_HW_QUEUES_X=3",
               "XGPU_MAX_HW_QUEUES=2", "SECRET=GPU_MAX_HW_QUEUES=9",
               "HIP_VISIBLE_DEVICES=0,1", "noequals"}));
  EXPECT_EQ(r.set, (1u << GPUQ_KNOB_GPU_MAX_HW_QUEUES) |
                       (1u << GPUQ_KNOB_HIP_VISIBLE_DEVICES));
  EXPECT_EQ(r.cut, 0u);
  EXPECT_EQ(RuntimeKnobsLabel(r),
            "GPU_MAX_HW_QUEUES=8 HIP_VISIBLE_DEVICES=0,1");
}

TEST(RuntimeKnobsTest, TheFirstOfTwoCountsAsGetenvReturnsIt) {
  const auto r =
      ParseWhole(Environ({"HSA_ENABLE_SDMA=0", "HSA_ENABLE_SDMA=1"}));
  EXPECT_EQ(RuntimeKnobsLabel(r), "HSA_ENABLE_SDMA=0");
}

TEST(RuntimeKnobsTest, EmptyValueIsSet) {
  const auto r = ParseWhole(Environ({"ROCR_VISIBLE_DEVICES="}));
  EXPECT_EQ(r.set, 1u << GPUQ_KNOB_ROCR_VISIBLE_DEVICES);
  EXPECT_EQ(RuntimeKnobsLabel(r), "ROCR_VISIBLE_DEVICES=");
}

TEST(RuntimeKnobsTest, LongValuesAreCutAndSaySo) {
  const std::string exact(GPUQ_KNOB_VALUE_LEN - 1, '7');
  const std::string longer(GPUQ_KNOB_VALUE_LEN, '7');
  const std::string huge(100000, '7');
  const auto r = ParseWhole(Environ({("GPU_MAX_HW_QUEUES=" + exact).c_str(),
                                     ("HSA_ENABLE_SDMA=" + longer).c_str(),
                                     ("ROC_GLOBAL_CU_MASK=" + huge).c_str()}));
  EXPECT_EQ(r.cut, (1u << GPUQ_KNOB_HSA_ENABLE_SDMA) |
                       (1u << GPUQ_KNOB_ROC_GLOBAL_CU_MASK));
  EXPECT_EQ(RuntimeKnobsLabel(r), "GPU_MAX_HW_QUEUES=" + exact +
                                      " ROC_GLOBAL_CU_MASK=" + exact +
                                      "... HSA_ENABLE_SDMA=" + exact + "...");
}

TEST(RuntimeKnobsTest, EverySplitGivesTheSameRecord) {
  const std::string bytes =
      Environ({"A=1", "GPU_MAX_HW_QUEUES=4", "B=x", "HSA_ENABLE_SDMA=0",
               "ROC_GLOBAL_CU_MASK=0x123456789abcdef0123456789"});
  const auto whole = ParseWhole(bytes);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    RuntimeKnobsParser p;
    p.Feed(bytes.data(), cut);
    p.Feed(bytes.data() + cut, bytes.size() - cut);
    const auto split = p.Finish();
    EXPECT_EQ(RuntimeKnobsLabel(split), RuntimeKnobsLabel(whole)) << cut;
    EXPECT_EQ(split.cut, whole.cut) << cut;
  }
  RuntimeKnobsParser bytewise;
  for (char c : bytes) bytewise.Feed(&c, 1);
  EXPECT_EQ(RuntimeKnobsLabel(bytewise.Finish()), RuntimeKnobsLabel(whole));
}

TEST(RuntimeKnobsTest, AnEntryEndedByTheInputCounts) {
  const std::string bytes = "X=1";
  const std::string last = std::string("X=1") + '\0' + "HSA_ENABLE_SDMA=0";
  EXPECT_EQ(RuntimeKnobsLabel(ParseWhole(last)), "HSA_ENABLE_SDMA=0");
  EXPECT_EQ(ParseWhole(bytes).set, 0u);
}

TEST(RuntimeKnobsTest, LabelShowsUnprintableBytesAsQuestionMarks) {
  const auto r = ParseWhole(Environ({"HIP_VISIBLE_DEVICES=0 1\n\x01"}));
  EXPECT_EQ(RuntimeKnobsLabel(r), "HIP_VISIBLE_DEVICES=0?1??");
}

TEST(RuntimeKnobsTest, TextSaysNotReadNoneOrTheLabel) {
  EXPECT_EQ(RuntimeKnobsText(std::nullopt), "-");
  EXPECT_EQ(RuntimeKnobsText(std::string()), "none");
  EXPECT_EQ(RuntimeKnobsText(std::string("GPU_MAX_HW_QUEUES=1")),
            "GPU_MAX_HW_QUEUES=1");
}

TEST(RuntimeKnobsTest, FinishStartsAnew) {
  RuntimeKnobsParser p;
  const std::string bytes = Environ({"GPU_MAX_HW_QUEUES=2"});
  p.Feed(bytes.data(), bytes.size());
  EXPECT_NE(p.Finish().set, 0u);
  EXPECT_EQ(p.Finish().set, 0u);
}

}  // namespace
}  // namespace gpuq
