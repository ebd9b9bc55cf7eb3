// Host BPF: the tracepoint tier (bpf/tracepoint_tier.bpf.h) loaded
// and attached for real on this kernel, which has raw tracepoints. There is
// no /dev/kfd here, so /dev/ptmx stands in for it (its major is handed in
// as kfd_major): a CREATE_QUEUE ioctl on it fails with ENOTTY, which the
// tier must report with the uapi args it decoded, while the same ioctl on a
// pipe and other ioctls on /dev/ptmx must not be seen. Not /dev/null: the
// tier keys a process by its file's private_data (amdkfd's kfd_process on
// /dev/kfd), which /dev/ptmx sets at open (its tty_file_private) and
// /dev/null leaves NULL, so no process would be known and no exit seen.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <variant>
#include <vector>

#include "gpuq.skel.h"
#include "loader/hooks.h"
#include "loader/kernel_features.h"
#include "sources/bpf_source.h"

namespace gpuq {
namespace {

// The stand-in for /dev/kfd: a device whose files carry private_data.
constexpr const char* kStandIn = "/dev/ptmx";

// uapi struct kfd_ioctl_create_queue_args of 6.12 (96 bytes).
struct CreateArgs {
  uint64_t ring_base_address, write_pointer_address, read_pointer_address,
      doorbell_offset;
  uint32_t ring_size, gpu_id, queue_type, queue_percentage, queue_priority,
      queue_id;
  uint64_t eop_buffer_address, eop_buffer_size, ctx_save_restore_address;
  uint32_t ctx_save_restore_size, ctl_stack_size, sdma_engine_id, pad;
};
static_assert(sizeof(CreateArgs) == 96, "uapi size of 6.12");

class TracepointTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasBpfPrivileges()) GTEST_SKIP() << "needs root to load BPF";
    struct stat st {};
    ASSERT_EQ(stat(kStandIn, &st), 0);
    skel_ = gpuq_bpf__open();
    ASSERT_NE(skel_, nullptr);
    bpf_program* prog = nullptr;
    bpf_object__for_each_program(prog, skel_->obj) {
      bpf_program__set_autoload(prog, false);
    }
    // The programs the planner names for the tracepoint tier.
    for (const HookSpec& spec : Hooks()) {
      for (const std::string& name : ProgramsOf(spec, ProbeTier::kTracepoint)) {
        bpf_program* p =
            bpf_object__find_program_by_name(skel_->obj, name.c_str());
        ASSERT_NE(p, nullptr) << name;
        bpf_program__set_autoload(p, true);
        programs_.push_back(p);
      }
    }
    ASSERT_EQ(programs_.size(), 3u);
    skel_->rodata->kfd_major = major(st.st_rdev);
    skel_->rodata->create_via_ioctl = true;
    ASSERT_EQ(gpuq_bpf__load(skel_), 0);
    for (bpf_program* p : programs_) {
      bpf_link* link = bpf_program__attach(p);
      ASSERT_NE(link, nullptr) << bpf_program__name(p);
      links_.push_back(link);
    }
  }
  void TearDown() override {
    for (bpf_link* link : links_) bpf_link__destroy(link);
    if (skel_ != nullptr) gpuq_bpf__destroy(skel_);
  }
  // The events of the processes `pids`: the tracepoints are system-wide,
  // and another test running beside this one (ctest -j) opens the stand-in
  // device too.
  std::vector<Event> Drain(BpfEventSource* source,
                           const std::set<pid_t>& pids) {
    std::vector<Event> events;
    for (;;) {
      Event e;
      if (source->Next(&e, std::chrono::milliseconds(300)) != NextStatus::kOk) {
        break;
      }
      const uint32_t tgid =
          std::visit([](const auto& ev) { return ev.hdr.tgid; }, e);
      if (pids.count(static_cast<pid_t>(tgid)) != 0) events.push_back(e);
    }
    return events;
  }
  gpuq_bpf* skel_ = nullptr;
  std::vector<bpf_program*> programs_;
  std::vector<bpf_link*> links_;
};

TEST_F(TracepointTierTest, DecodesAFailedCreateOnlyOnTheKfdDevice) {
  BpfEventSource source(bpf_map__fd(skel_->maps.events),
                        bpf_map__fd(skel_->maps.drops));
  ASSERT_TRUE(source.Ok()) << source.Error();
  const unsigned long create = _IOWR('K', 0x02, CreateArgs);
  CreateArgs args{};
  args.gpu_id = 0x4242;
  args.queue_type = 1;  // KFD_IOC_QUEUE_TYPE_SDMA
  // A child asks for a queue and exits: the failure and its exit are seen.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int kfd_fd = open(kStandIn, O_RDWR | O_NOCTTY);
    int pipe_fds[2];
    int n = 0;
    if (kfd_fd < 0 || pipe(pipe_fds) != 0) _exit(2);
    const bool enotty = ioctl(kfd_fd, create, &args) == -1 && errno == ENOTTY;
    ioctl(pipe_fds[0], create, &args);         // not the device: unseen
    ioctl(kfd_fd, FIONREAD, &n);               // another command: unseen
    ioctl(kfd_fd, _IOWR('K', 0x05, int), &n);  // another KFD command: unseen
    _exit(enotty ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::vector<Event> events = Drain(&source, {child});
  ASSERT_EQ(events.size(), 2u);
  const auto* e = std::get_if<gpuq_queue_create_failed_event>(&events[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->gpu_id, 0x4242u);
  EXPECT_EQ(e->queue_type, static_cast<uint32_t>(GPUQ_QUEUE_SDMA));
  EXPECT_EQ(e->error, -ENOTTY);
  EXPECT_EQ(e->hdr.tgid, static_cast<uint32_t>(child));
  EXPECT_NE(e->hdr.process_key, 0u);  // the file's private_data: the key
  const auto* x = std::get_if<gpuq_process_exit_event>(&events[1]);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->hdr.tgid, static_cast<uint32_t>(child));
  EXPECT_EQ(x->hdr.process_key, e->hdr.process_key);
  EXPECT_EQ(x->hdr.cgroup_id, e->hdr.cgroup_id);
}

// A program cannot fault a page in: args on a page the process never
// touched cannot be read. The call is counted as lost, never reported as a
// create on GPU 0 (the helper zeroes what it failed to read).
TEST_F(TracepointTierTest, UnreadableArgsAreCountedNotMadeUp) {
  BpfEventSource source(bpf_map__fd(skel_->maps.events),
                        bpf_map__fd(skel_->maps.drops));
  ASSERT_TRUE(source.Ok()) << source.Error();
  const unsigned long create = _IOWR('K', 0x02, CreateArgs);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int kfd_fd = open(kStandIn, O_RDWR | O_NOCTTY);
    // Anonymous memory not yet touched has no page behind it.
    void* untouched = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (kfd_fd < 0 || untouched == MAP_FAILED) _exit(2);
    const bool enotty =
        ioctl(kfd_fd, create, untouched) == -1 && errno == ENOTTY;
    _exit(enotty ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::vector<Event> events = Drain(&source, {child});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(std::get_if<gpuq_process_exit_event>(&events[0]), nullptr)
      << "only the exit: no create (failed or not) from unread args";
  EXPECT_EQ(source.Drops().args_unreadable, 1u);
}

TEST_F(TracepointTierTest, AnyKfdIoctlMakesTheExitSeen) {
  BpfEventSource source(bpf_map__fd(skel_->maps.events),
                        bpf_map__fd(skel_->maps.drops));
  ASSERT_TRUE(source.Ok()) << source.Error();
  // One child issues only AMDKFD_IOC_GET_VERSION on the device (as hsa_init
  // does first), another the same command on a pipe: only the first one's
  // exit is a KFD process exit, and nothing else is reported.
  pid_t children[2];
  for (int i = 0; i < 2; ++i) {
    children[i] = fork();
    ASSERT_GE(children[i], 0);
    if (children[i] == 0) {
      int pipe_fds[2];
      uint32_t version[2] = {};
      const int kfd_fd = open(kStandIn, O_RDWR | O_NOCTTY);
      if (kfd_fd < 0 || pipe(pipe_fds) != 0) _exit(2);
      ioctl(i == 0 ? kfd_fd : pipe_fds[0], _IOR('K', 0x01, version), version);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(children[i], &status, 0), children[i]);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  const std::vector<Event> events = Drain(&source, {children[0], children[1]});
  ASSERT_EQ(events.size(), 1u);
  const auto* x = std::get_if<gpuq_process_exit_event>(&events[0]);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->hdr.tgid, static_cast<uint32_t>(children[0]));
  EXPECT_NE(x->hdr.process_key, 0u);
}

}  // namespace
}  // namespace gpuq
