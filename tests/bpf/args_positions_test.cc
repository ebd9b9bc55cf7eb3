// Host BPF: every argument the args-kprobe tier (bpf/args_tier.bpf.h)
// reads, checked by position, name and type against the amdgpu BTF of
// Debian's 6.1, 6.12 and 7.3 kernels (extracted by tests/bpf/debian_btf.sh
// from the QEMU tiers' kernel cache), and the uapi ioctl args' field offsets
// the BPF side hard-codes. A position that moves between kernels fails here,
// not silently in production.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <gpuq/args_positions.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "loader/bpf_loader.h"
#include "loader/custom_btf.h"
#include "loader/hooks.h"
#include "loader/kernel_features.h"

namespace gpuq {
namespace {

struct Arg {
  const char* function;
  int position;
  const char* name;     ///< the parameter's name in the BTF prototype
  const char* pointee;  ///< struct it points to; "void" for void *; "" = int
  /// A function of newer kernels only: absent is fine, present is checked.
  bool newer_only = false;
};

// Every argument bpf/args_tier.bpf.h and the args-only kprobe twins read.
const std::vector<Arg>& ArgsRead() {
  static const std::vector<Arg> args = {
      {"kfd_ioctl_create_queue", GPUQ_ARG_IOCTL_PROCESS, "p", "kfd_process"},
      {"kfd_ioctl_create_queue", GPUQ_ARG_IOCTL_DATA, "data", "void"},
      {"kfd_ioctl_update_queue", GPUQ_ARG_IOCTL_PROCESS, "p", "kfd_process"},
      {"kfd_ioctl_update_queue", GPUQ_ARG_IOCTL_DATA, "data", "void"},
      {"kfd_ioctl_set_cu_mask", GPUQ_ARG_IOCTL_PROCESS, "p", "kfd_process"},
      {"kfd_ioctl_set_cu_mask", GPUQ_ARG_IOCTL_DATA, "data", "void"},
      {"kfd_ioctl_alloc_queue_gws", GPUQ_ARG_IOCTL_PROCESS, "p", "kfd_process"},
      {"kfd_ioctl_alloc_queue_gws", GPUQ_ARG_IOCTL_DATA, "data", "void"},
      {"kfd_procfs_add_queue", GPUQ_ARG_QUEUE_Q, "q", "queue"},
      {"uninit_queue", GPUQ_ARG_QUEUE_Q, "q", "queue"},
      {"kfd_process_notifier_release", GPUQ_ARG_NOTIFIER_MM, "mm", "mm_struct"},
      {"create_queue_cpsch", GPUQ_ARG_CREATE_DQM, "dqm",
       "device_queue_manager"},
      {"create_queue_cpsch", GPUQ_ARG_CREATE_Q, "q", "queue"},
      {"create_queue_cpsch", GPUQ_ARG_CREATE_QPD, "qpd", "qcm_process_device"},
      {"create_queue_nocpsch", GPUQ_ARG_CREATE_DQM, "dqm",
       "device_queue_manager"},
      {"create_queue_nocpsch", GPUQ_ARG_CREATE_Q, "q", "queue"},
      {"create_queue_nocpsch", GPUQ_ARG_CREATE_QPD, "qpd",
       "qcm_process_device"},
      {"add_queue_mes", GPUQ_ARG_CREATE_DQM, "dqm", "device_queue_manager"},
      {"add_queue_mes", GPUQ_ARG_CREATE_Q, "q", "queue"},
      {"add_queue_mes", GPUQ_ARG_CREATE_QPD, "qpd", "qcm_process_device"},
      {"destroy_queue_cpsch", GPUQ_ARG_DESTROY_DQM, "dqm",
       "device_queue_manager"},
      {"destroy_queue_cpsch", GPUQ_ARG_DESTROY_QPD, "qpd",
       "qcm_process_device"},
      {"destroy_queue_cpsch", GPUQ_ARG_DESTROY_Q, "q", "queue"},
      {"unmap_queues_cpsch", GPUQ_ARG_RUNLIST_DQM, "dqm",
       "device_queue_manager"},
      {"unmap_queues_cpsch", GPUQ_ARG_RUNLIST_FILTER, "filter", ""},
      {"map_queues_cpsch", GPUQ_ARG_RUNLIST_DQM, "dqm", "device_queue_manager"},
      {"kfd_ioctl", GPUQ_ARG_DISPATCH_FILE, "filep", "file"},
      {"kfd_process_dequeue_from_all_devices", GPUQ_ARG_DEQUEUE_PROCESS, "p",
       "kfd_process"},
      {"kfd_process_evict_queues", GPUQ_ARG_EVICT_PROCESS, "p", "kfd_process"},
      {"kfd_process_evict_queues", GPUQ_ARG_EVICT_TRIGGER, "trigger", ""},
      {"kfd_release", GPUQ_ARG_RELEASE_FILE, "filep", "file"},
      // secondary KFD contexts, 7.2+
      {"kfd_ioctl_create_process", GPUQ_ARG_IOCTL_FILE, "filep", "file", true},
  };
  return args;
}

// The (dqm, qpd) operations: both arguments, every function.
const char* const kDqmQpdOps[] = {
    "process_termination_cpsch",    "process_termination_nocpsch",
    "evict_process_queues_cpsch",   "evict_process_queues_nocpsch",
    "restore_process_queues_cpsch", "restore_process_queues_nocpsch"};

// The hook functions whose args-kprobe body reads no argument: the MES
// removes take the queue from the dqm operation they run under (op_slots).
const char* const kArgsBodiesReadingNoArgument[] = {
    "mes_v11_0_remove_hw_queue", "mes_v12_0_remove_hw_queue",
    "mes_v12_1_remove_hw_queue"};

// The lists above are checked against the hook table (agent/loader/hooks.cc):
// a hook with an args-kprobe body on an amdkfd function has its arguments
// in them, or says it reads none, so a hook added to the table without its
// positions fails here.
TEST(ArgsPositionsTable, EveryArgsKprobeHookFunctionIsListed) {
  std::set<std::string> listed(std::begin(kDqmQpdOps), std::end(kDqmQpdOps));
  for (const Arg& a : ArgsRead()) listed.insert(a.function);
  const std::set<std::string> none(std::begin(kArgsBodiesReadingNoArgument),
                                   std::end(kArgsBodiesReadingNoArgument));
  std::set<std::string> hooked;
  for (const HookSpec& spec : Hooks()) {
    if (spec.args_entry == nullptr || spec.core_kernel ||
        IsTracepointHook(spec)) {
      continue;
    }
    hooked.insert(spec.function);
    EXPECT_TRUE(listed.count(spec.function) || none.count(spec.function))
        << spec.probe << " (" << spec.function
        << ") has an args-kprobe body but no argument position checked here";
    EXPECT_FALSE(listed.count(spec.function) && none.count(spec.function))
        << spec.function << " is listed as reading arguments and none";
  }
  for (const std::string& fn : listed) {
    EXPECT_TRUE(hooked.count(fn)) << fn << " is checked but no hook's";
  }
  for (const std::string& fn : none) {
    EXPECT_TRUE(hooked.count(fn)) << fn << " is listed but no hook's";
  }
}

class DebianBtf : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string dir =
        std::string(GPUQ_DEBIAN_BTF_DIR) + "/" + GetParam() + "/";
    if (access((dir + "amdgpu.btf").c_str(), R_OK) != 0) {
      GTEST_SKIP() << "no Debian " << GetParam() << " amdgpu BTF in " << dir
                   << " (tests/bpf/debian_btf.sh could not fetch it)";
    }
    base_ = btf__parse_raw((dir + "vmlinux.btf").c_str());
    ASSERT_EQ(libbpf_get_error(base_), 0);
    btf_ = btf__parse_raw_split((dir + "amdgpu.btf").c_str(), base_);
    ASSERT_EQ(libbpf_get_error(btf_), 0);
  }
  void TearDown() override {
    if (btf_ != nullptr && libbpf_get_error(btf_) == 0) btf__free(btf_);
    if (base_ != nullptr && libbpf_get_error(base_) == 0) btf__free(base_);
  }

  // Skips typedefs and modifiers.
  const btf_type* Resolved(__u32 id) const {
    const btf_type* t = btf__type_by_id(btf_, id);
    while (t != nullptr && (btf_is_typedef(t) || btf_is_mod(t))) {
      id = t->type;
      t = btf__type_by_id(btf_, id);
    }
    return t;
  }

  // "" when position `a.position` of a.function is as expected, else why.
  std::string Check(const Arg& a) const {
    const int id = btf__find_by_name_kind(btf_, a.function, BTF_KIND_FUNC);
    if (id <= 0 && a.newer_only) return "";
    if (id <= 0) return std::string("no FUNC ") + a.function;
    const btf_type* proto =
        btf__type_by_id(btf_, btf__type_by_id(btf_, id)->type);
    if (proto == nullptr || !btf_is_func_proto(proto)) return "no prototype";
    if (a.position >= btf_vlen(proto)) return "too few parameters";
    const btf_param& p = btf_params(proto)[a.position];
    const std::string name = btf__name_by_offset(btf_, p.name_off);
    if (name != a.name) return "parameter is '" + name + "'";
    const btf_type* t = Resolved(p.type);
    if (std::string(a.pointee).empty()) {
      if (t == nullptr || !(btf_is_int(t) || btf_is_enum(t))) {
        return "not an integer or enum";
      }
      return "";
    }
    if (t == nullptr || !btf_is_ptr(t)) return "not a pointer";
    const btf_type* target = t->type == 0 ? nullptr : Resolved(t->type);
    const std::string pointee =
        target == nullptr ? "void"
                          : btf__name_by_offset(btf_, target->name_off);
    if (pointee != a.pointee) return "points to '" + pointee + "'";
    return "";
  }

  // Byte offset of `member` in struct `type`, or -1.
  long Offset(const char* type, const char* member) const {
    const int id = btf__find_by_name_kind(btf_, type, BTF_KIND_STRUCT);
    if (id <= 0) return -1;
    const btf_type* t = btf__type_by_id(btf_, id);
    const btf_member* m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); ++i, ++m) {
      if (member == std::string(btf__name_by_offset(btf_, m->name_off))) {
        return btf_member_bit_offset(t, i) / 8;
      }
    }
    return -1;
  }

  btf* base_ = nullptr;
  btf* btf_ = nullptr;
};

TEST_P(DebianBtf, EveryArgumentTheArgsTierReadsIsWhereItExpects) {
  for (const Arg& a : ArgsRead()) {
    EXPECT_EQ(Check(a), "") << a.function << " argument " << a.position << " ("
                            << a.name << ") on " << GetParam();
  }
  for (const char* fn : kDqmQpdOps) {
    EXPECT_EQ(Check({fn, GPUQ_ARG_OP_DQM, "dqm", "device_queue_manager"}), "")
        << fn << " on " << GetParam();
    EXPECT_EQ(Check({fn, GPUQ_ARG_OP_QPD, "qpd", "qcm_process_device"}), "")
        << fn << " on " << GetParam();
  }
}

TEST_P(DebianBtf, UapiFieldsAreWhereTheBpfSideReadsThem) {
  // bpf/gpuq.bpf.c struct gpuq_kfd_create_queue_args and
  // bpf/runlist.bpf.h struct gpuq_kfd_update_queue_args.
  const struct {
    const char* type;
    const char* member;
    long offset;
  } fields[] = {
      {"kfd_ioctl_create_queue_args", "ring_base_address", 0},
      {"kfd_ioctl_create_queue_args", "write_pointer_address", 8},
      {"kfd_ioctl_create_queue_args", "read_pointer_address", 16},
      {"kfd_ioctl_create_queue_args", "doorbell_offset", 24},
      {"kfd_ioctl_create_queue_args", "ring_size", 32},
      {"kfd_ioctl_create_queue_args", "gpu_id", 36},
      {"kfd_ioctl_create_queue_args", "queue_type", 40},
      {"kfd_ioctl_create_queue_args", "queue_percentage", 44},
      {"kfd_ioctl_create_queue_args", "queue_priority", 48},
      {"kfd_ioctl_create_queue_args", "queue_id", 52},
      {"kfd_ioctl_update_queue_args", "ring_base_address", 0},
      {"kfd_ioctl_update_queue_args", "queue_id", 8},
      {"kfd_ioctl_update_queue_args", "ring_size", 12},
      {"kfd_ioctl_update_queue_args", "queue_percentage", 16},
      {"kfd_ioctl_update_queue_args", "queue_priority", 20},
      {"kfd_ioctl_set_cu_mask_args", "queue_id", 0},
      {"kfd_ioctl_set_cu_mask_args", "num_cu_mask", 4},
      {"kfd_ioctl_set_cu_mask_args", "cu_mask_ptr", 8},
      {"kfd_ioctl_alloc_queue_gws_args", "queue_id", 0},
      {"kfd_ioctl_alloc_queue_gws_args", "num_gws", 4},
  };
  for (const auto& f : fields) {
    EXPECT_EQ(Offset(f.type, f.member), f.offset)
        << f.type << "." << f.member << " on " << GetParam();
  }
}

TEST_P(DebianBtf, NegativeControlAWrongPositionIsCaught) {
  // The check must be able to fail: dqm is not create_queue_cpsch's q.
  EXPECT_NE(Check({"create_queue_cpsch", GPUQ_ARG_CREATE_DQM, "q", "queue"}),
            "");
  EXPECT_NE(Check({"destroy_queue_cpsch", 1, "q", "queue"}), "");
}

TEST_P(DebianBtf, BtfFlagRelocatesTheFullKprobeBodiesAgainstRealAmdgpu) {
  // --btf with the module's split BTF (what pahole --btf_encode_detached
  // writes): flattened over vmlinux, then the BTF tier's kprobe bodies are
  // relocated against the real amdgpu layout and pass this kernel's
  // verifier.
  if (!HasBpfPrivileges()) GTEST_SKIP() << "needs root to load BPF programs";
  const std::string dir =
      std::string(GPUQ_DEBIAN_BTF_DIR) + "/" + GetParam() + "/";
  CustomBtf flat;
  std::string error;
  ASSERT_TRUE(
      PrepareCustomBtf(dir + "amdgpu.btf", dir + "vmlinux.btf", &flat, &error))
      << error;
  EXPECT_TRUE(flat.kfd_types);
  EXPECT_TRUE(flat.temporary);
  EXPECT_EQ(BpfLoader::VerifyPrograms(ProbeTier::kBtfKprobe, flat.path), "");
  // A flat file is used as it is.
  CustomBtf again;
  ASSERT_TRUE(PrepareCustomBtf(flat.path, dir + "vmlinux.btf", &again, &error))
      << error;
  EXPECT_EQ(again.path, flat.path);
  EXPECT_TRUE(again.kfd_types);
  EXPECT_FALSE(again.temporary);
  unlink(flat.path.c_str());
  // Garbage is one clear error.
  EXPECT_FALSE(
      PrepareCustomBtf("/dev/null", dir + "vmlinux.btf", &again, &error));
  EXPECT_NE(error.find("--btf /dev/null"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Debian, DebianBtf,
                         ::testing::Values("6.1", "6.12", "7.3"),
                         [](const auto& param_info) {
                           std::string name =
                               "v" + std::string(param_info.param);
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

TEST(DebianBtfNewest, ContextsArgumentIsCheckedWhereTheKernelHasIt) {
  // The newer_only entry above must not pass vacuously on every kernel:
  // 7.3 has kfd_ioctl_create_process (when its BTF could be fetched).
  const std::string dir = std::string(GPUQ_DEBIAN_BTF_DIR) + "/7.3/";
  if (access((dir + "amdgpu.btf").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no Debian 7.3 amdgpu BTF in " << dir;
  }
  btf* base = btf__parse_raw((dir + "vmlinux.btf").c_str());
  ASSERT_EQ(libbpf_get_error(base), 0);
  btf* types = btf__parse_raw_split((dir + "amdgpu.btf").c_str(), base);
  ASSERT_EQ(libbpf_get_error(types), 0);
  EXPECT_GT(
      btf__find_by_name_kind(types, "kfd_ioctl_create_process", BTF_KIND_FUNC),
      0);
  btf__free(types);
  btf__free(base);
}

}  // namespace
}  // namespace gpuq
