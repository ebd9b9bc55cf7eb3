// The EventSource contract (sources/event_source.h), run against every source
// that works without a kernel: FakeEventSource and ReplayEventSource (over a
// capture written to and read back from a temp file). The live BpfEventSource
// needs the BPF program loaded; the host BPF tier (tests/bpf) covers it.
#include "sources/event_source.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "event_builders.h"
#include "log_capture.h"
#include "sources/bpf_source.h"
#include "sources/capture.h"
#include "sources/event.h"
#include "sources/fake_source.h"
#include "sources/replay_source.h"
#include "test_support.h"

namespace gpuq::event_source_test {
namespace {

using std::chrono::milliseconds;

struct FakeFactory {
  static constexpr const char* kName = "fake";
  static std::unique_ptr<EventSource> Make(const std::vector<Event>& events,
                                           const TempDir& /*dir*/) {
    return std::make_unique<FakeEventSource>(events);
  }
};

struct ReplayFactory {
  static constexpr const char* kName = "replay";
  static std::unique_ptr<EventSource> Make(const std::vector<Event>& events,
                                           const TempDir& dir) {
    const std::string path = dir.path() + "/source.gpuqcap";
    std::string error;
    auto writer = CaptureWriter::Create(path, &error, 1);
    EXPECT_NE(writer, nullptr) << error;
    if (writer == nullptr) return nullptr;
    for (const Event& e : events) EXPECT_TRUE(writer->Write(e));
    EXPECT_TRUE(writer->Close(&error)) << error;
    Capture capture;
    EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone)
        << error;
    return std::make_unique<ReplayEventSource>(std::move(capture));
  }
};

// Every record comes from one process of cgroup 5861.
gpuq_event_header Hdr(uint16_t type, uint64_t ts) {
  return gpuq::Hdr(type, 0xffff88811d208000ull, 100, 5861, ts);
}

std::vector<Event> Events() {
  gpuq_queue_create_event create{};
  create.hdr = Hdr(GPUQ_EV_QUEUE_CREATE, 1);
  create.gpu_id = 11437;
  create.queue_id = 4;
  std::strncpy(create.comm, "pt_main_thread", sizeof(create.comm) - 1);

  gpuq_queue_destroy_event destroy{};
  destroy.hdr = Hdr(GPUQ_EV_QUEUE_DESTROY, 2);
  destroy.gpu_id = 11437;
  destroy.queue_id = 4;
  destroy.reason = GPUQ_DESTROY_IOCTL;

  gpuq_process_exit_event exit{};
  exit.hdr = Hdr(GPUQ_EV_PROCESS_EXIT, 3);

  CgroupPathRecord path{Hdr(GPUQ_EV_CGROUP_PATH, 0), "/user.slice"};
  return {path, create, destroy, exit};
}

template <typename Factory>
class EventSourceContractTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventSource> Make(const std::vector<Event>& events) {
    return Factory::Make(events, dir_);
  }
  TempDir dir_;
};

using SourceFactories = ::testing::Types<FakeFactory, ReplayFactory>;
// The empty third argument: clang -Wpedantic (the sanitizer build) refuses
// a variadic macro called with no variadic argument at all.
TYPED_TEST_SUITE(EventSourceContractTest, SourceFactories, );

TYPED_TEST(EventSourceContractTest, YieldsEventsInOrderThenEofForever) {
  const std::vector<Event> events = Events();
  std::unique_ptr<EventSource> source = this->Make(events);
  ASSERT_NE(source, nullptr);
  for (size_t i = 0; i < events.size(); ++i) {
    Event got;
    // Offline sources never time out, even with a zero timeout.
    ASSERT_EQ(source->Next(&got, milliseconds(0)), NextStatus::kOk) << i;
    EXPECT_EQ(got.index(), events[i].index()) << i;
    EXPECT_EQ(Encode(got), Encode(events[i])) << i;
  }
  // Exhausted: kEof, and it stays so (the pipeline may ask again).
  for (int i = 0; i < 3; ++i) {
    Event got;
    EXPECT_EQ(source->Next(&got, milliseconds(10)), NextStatus::kEof);
  }
  EXPECT_EQ(source->Error(), "");
}

TYPED_TEST(EventSourceContractTest, EmptySourceIsEof) {
  std::unique_ptr<EventSource> source = this->Make({});
  ASSERT_NE(source, nullptr);
  Event got;
  EXPECT_EQ(source->Next(&got, milliseconds(0)), NextStatus::kEof);
  EXPECT_EQ(source->Next(&got, milliseconds(0)), NextStatus::kEof);
}

TYPED_TEST(EventSourceContractTest, NameIsTheSourceLabel) {
  std::unique_ptr<EventSource> source = this->Make({});
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->Name(), TypeParam::kName);
}

TYPED_TEST(EventSourceContractTest, NoDropsWhenNothingWasLost) {
  std::unique_ptr<EventSource> source = this->Make(Events());
  ASSERT_NE(source, nullptr);
  const SourceDrops drops = source->Drops();
  EXPECT_EQ(drops.ringbuf_full, 0u);
  EXPECT_EQ(drops.map_full, 0u);
  EXPECT_EQ(drops.decode_error, 0u);
}

// Fake-only: the drops it is given are what it reports (tests use this to
// exercise gpuq_events_dropped_total without a kernel).
TEST(FakeEventSourceTest, ReportsGivenDrops) {
  SourceDrops drops;
  drops.ringbuf_full = 3;
  drops.map_full = 2;
  drops.decode_error = 1;
  FakeEventSource source({}, drops);
  EXPECT_EQ(source.Drops().ringbuf_full, 3u);
  EXPECT_EQ(source.Drops().map_full, 2u);
  EXPECT_EQ(source.Drops().decode_error, 1u);
}

// The live source's decoding (BpfEventSource::OnRecord calls it; the host
// BPF tier runs the source itself): a record that does not decode is said,
// naming its status, type and size, and one that does is not.
TEST(KernelRecordTest, AnUndecodableRecordIsSaidWithItsStatus) {
  const LogCapture log;
  gpuq_event_header hdr{};
  hdr.type = 999;
  hdr.size = sizeof(hdr);
  Event event;
  EXPECT_FALSE(DecodeKernelRecord(&hdr, sizeof(hdr), &event));
  const std::vector<Event> ok = Events();
  const std::string bytes = Encode(ok.front());
  EXPECT_TRUE(DecodeKernelRecord(bytes.data(), bytes.size(), &event));
  const std::vector<std::string> said = log.Lines();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("warn:"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find(DecodeStatusName(DecodeStatus::kUnknownType)),
            std::string::npos)
      << said[0];
  EXPECT_NE(said[0].find("type 999"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("decode_error"), std::string::npos) << said[0];
}

}  // namespace
}  // namespace gpuq::event_source_test
