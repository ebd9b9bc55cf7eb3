// Reads the queue inventory amdkfd publishes under /sys/class/kfd/kfd/proc.
//
// Layout, checked against drivers/gpu/drm/amd/amdkfd/kfd_process.c
// (mainline):
//  - proc/ itself is created at module init (kfd_procfs_init()), so it exists
//    whenever amdkfd is loaded, even with no GPU process.
//  - proc/<pid>/: kfd_create_process(), kobject_init_and_add(.., "%d",
//    lead_thread->pid), i.e. the thread-group leader's pid in the init pid
//    namespace. Besides queues/ it holds `pasid` (gone from 6.14),
//    vram_<gpuid>, sdma_<gpuid>, stats_<gpuid>/ and counters_<gpuid>/, none of
//    which we read.
//  - proc/<pid>/queues/<qid>/: kfd_procfs_add_queue(),
//    kobject_init_and_add(.., "%u", q->properties.queue_id).
//  - proc/<pid>/context_<id>/: a secondary context of that process
//    (AMDKFD_IOC_CREATE_PROCESS, 7.2+: kfd_create_process_sysfs() makes it
//    a child of the primary's directory, "context_%u"), with its own
//    queues/, whose ids are unique within the context only.
//  - queues/<qid>/{size,type,gpuid}: kfd_procfs_queue_show() prints "%llu"
//    (queue_size, bytes), "%d" (the internal enum kfd_queue_type) and "%u"
//    (q->device->id, the topology gpu_id), all WITHOUT a trailing newline.
//    We accept either, so hand-written fixtures with a newline parse too.
//
// Everything here races with processes creating and destroying queues and
// exiting (kfd_procfs_del_queue(), kfd_process_wq teardown), so anything that
// cannot be read is skipped: the next reconciliation sees it again.
#include "sources/kfd_sysfs.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "common/sysfs_read.h"

namespace gpuq {
namespace {

// Reads one decimal attribute of a queue directory. False if the file is
// gone (ENOENT at open, ENODEV when the kernfs node is removed after open:
// fs/kernfs/file.c, kernfs_seq_start()), unreadable (e.g. EPERM from
// kfd_devcgroup_check_permission() in kernels that have it) or empty (the
// show() hit "Invalid attribute" and returned 0).
bool ReadU64Attr(const std::string& path, uint64_t* value) {
  std::string text;
  return ReadWholeFile(path, &text) == 0 &&
         ParseDecimal(TrimTrailingSpace(text), value);
}

bool ReadU32Attr(const std::string& path, uint32_t* value) {
  std::string text;
  return ReadWholeFile(path, &text) == 0 &&
         ParseU32(TrimTrailingSpace(text), value);
}

// Reads proc/<pid>/queues/<qid>/. False if any of its files cannot be read.
bool ReadQueue(const std::string& dir, uint32_t pid, uint32_t context,
               uint32_t qid, SysfsQueue* out) {
  SysfsQueue q;
  q.pid = pid;
  q.context = context;
  q.queue_id = qid;
  if (!ReadU32Attr(dir + "/gpuid", &q.gpu_id) ||
      !ReadU32Attr(dir + "/type", &q.type) ||
      !ReadU64Attr(dir + "/size", &q.size)) {
    return false;
  }
  *out = q;
  return true;
}

// Appends the queues of one context's directory. A process that exited (or
// whose queues/ kobject the kernel failed to create) contributes nothing.
void ReadContextQueues(const std::string& dir, uint32_t pid, uint32_t context,
                       std::vector<SysfsQueue>* out) {
  const std::string queues_dir = dir + "/queues";
  std::vector<uint32_t> qids;
  if (ListNumericEntries(queues_dir, &qids) != 0) return;
  for (uint32_t qid : qids) {
    SysfsQueue q;
    if (ReadQueue(fmt::format("{}/{}", queues_dir, qid), pid, context, qid,
                  &q)) {
      out->push_back(q);
    }
  }
}

// The ids of pid_dir's context_<id> directories, ascending.
std::vector<uint32_t> SecondaryContexts(const std::string& pid_dir) {
  std::vector<uint32_t> ids;
  DIR* dir = opendir(pid_dir.c_str());
  if (dir == nullptr) return ids;
  constexpr std::string_view kPrefix = "context_";
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    uint32_t id = 0;
    if (name.substr(0, kPrefix.size()) == kPrefix &&
        ParseU32(name.substr(kPrefix.size()), &id)) {
      ids.push_back(id);
    }
  }
  closedir(dir);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Appends the queues of one process: its primary context's, then each
// secondary context's.
void ReadProcessQueues(const std::string& pid_dir, uint32_t pid,
                       std::vector<SysfsQueue>* out) {
  ReadContextQueues(pid_dir, pid, kPrimaryContext, out);
  for (uint32_t context : SecondaryContexts(pid_dir)) {
    ReadContextQueues(fmt::format("{}/context_{}", pid_dir, context), pid,
                      context, out);
  }
}

}  // namespace

bool KfdPresent(const std::string& kfd_dir) {
  struct stat st;
  return stat(kfd_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ReadKfdQueues(const std::string& kfd_dir, std::vector<SysfsQueue>* out,
                   std::string* error) {
  const std::string proc_dir = kfd_dir + "/proc";
  std::vector<uint32_t> pids;
  if (int err = ListNumericEntries(proc_dir, &pids); err != 0) {
    *error = fmt::format("{}: {}", proc_dir, std::strerror(err));
    return false;
  }
  std::vector<SysfsQueue> queues;
  for (uint32_t pid : pids) {
    ReadProcessQueues(fmt::format("{}/{}", proc_dir, pid), pid, &queues);
  }
  *out = std::move(queues);  // sorted: pids, contexts and qids were listed so
  return true;
}

}  // namespace gpuq
