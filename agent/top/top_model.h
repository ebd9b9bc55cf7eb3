// `gpuq-agent top` without the terminal: rows per container and GPU built
// from the pipeline's Snapshot (the same one /metrics and --once read),
// rates from two snapshots, sorting, and the screen's text lines at a given
// width. agent/top/top_screen.h draws these lines with ncurses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "model/container_rows.h"
#include "model/snapshot.h"
#include "sources/capture.h"

namespace gpuq {

/// What the rows are sorted by (keys 1-6 on the screen, `s` cycles).
enum class TopSort {
  kQueues,
  kSubmitRate,
  kPending,
  kUnmapRate,
  kEvictRate,
  kPreemptRate,
  kName
};
inline constexpr int kTopSortCount = 7;
/// The column header of a sort key ("QUEUES", "SUBMIT/S", ..., "NAME").
const char* TopSortName(TopSort sort);
TopSort NextTopSort(TopSort sort);

/// A key top answers, as its help screen (`?`) and docs/top.md list it.
struct TopKey {
  const char* keys;  ///< "1 .. 7", "p, space"
  const char* does;
};
/// Every key, in the order the help lists them.
const std::vector<TopKey>& TopKeys();

/// One container on one GPU, on one physical GPU (its partitions summed), or
/// (gpu_id 0, no physical) a container's total.
struct TopRow {
  std::string container;  ///< `container` label; "" = host processes
  std::string pod;
  std::string ns;
  uint32_t gpu_id = 0;
  /// On a partitioned GPU (CPX, DPX): "P.N", partition N of physical GPU P
  /// (gpuq_gpu_info's gpu_physical_index and gpu_partition_id); else "".
  std::string partition;
  /// A partition's row and a physical GPU's row: the physical GPU's index.
  std::optional<uint32_t> physical;
  /// A physical GPU's row, which sums the container's rows of its
  /// partitions: how many partitions the GPU has. 0 for any other row.
  uint32_t partitions = 0;
  /// amd-smi's index of the GPU, which keeps a GPU's partitions together
  /// (the last where the topology does not know the GPU).
  uint32_t gpu_order = UINT32_MAX;
  /// The figures `--once` and `report` show for the same row; the rates
  /// below are deltas of its counters.
  RowTotals totals;
  /// Per second of the source's clock since the previous Update(); nullopt
  /// before there are two snapshots.
  std::optional<double> submit_rate;
  std::optional<double> unmap_rate;
  std::optional<double> evict_rate;
  std::optional<double> preempt_rate;
};

/// A container's total row and its per-GPU rows, in the order shown: a
/// partitioned GPU as its physical row followed by its partitions' rows.
/// The total sums the GPU rows (not the physical ones).
struct TopGroup {
  TopRow total;
  std::vector<TopRow> gpus;
};

/// What the header shows besides the rows.
struct TopSummary {
  std::string source;  ///< Snapshot::source
  std::string probes;  ///< "fentry 19/19", "kprobe 12/19", "replay", ...
  uint64_t live_queues = 0;
  uint64_t events = 0;
  size_t gpus = 0;
  size_t containers = 0;
  /// Whether the HWS GPUs' runlists are oversubscribed now, as the last
  /// map that read one left it: nullopt when none was read (MES, the
  /// args-kprobe tier), else each oversubscribed GPU with why
  /// ("gpu 4660 (compute_queues 3/2)"), empty for none.
  std::optional<std::vector<std::string>> oversubscribed;
};

/// "fentry 19/19" (attached modes and attached/total), "replay" for a
/// capture, "none (sysfs only)" without probes.
std::string ProbeSummary(const Snapshot& snapshot);

/// Thread-safety: a plain value.
class TopModel {
 public:
  /// Takes in a snapshot taken at `now_ns` on the source's clock (the
  /// steady clock live, the capture's clock in a replay). Rates are counter
  /// deltas over the time since the previous Update(); when no time passed
  /// (a finished replay) the previous rates stay.
  void Update(const Snapshot& snapshot, uint64_t now_ns);

  /// Groups sorted by `sort` (numbers descending, names ascending; ties by
  /// name), and each group's GPUs by the same key (ties in amd-smi's
  /// order): a physical GPU's row sorted among them, its partitions by the
  /// same key after it.
  std::vector<TopGroup> Groups(TopSort sort) const;
  const TopSummary& Summary() const { return summary_; }
  /// The source's clock at the last Update() (0: none yet).
  uint64_t NowNs() const { return now_ns_; }

 private:
  std::map<ContainerGpu, TopRow> rows_;
  /// Per container and physical GPU (gpu_id: its index), where the topology
  /// has a partitioned GPU: processes counted once, rates left to Groups().
  std::map<ContainerGpu, RowTotals> physical_;
  std::map<uint32_t, uint32_t> partitions_;  ///< physical index -> count
  std::map<ContainerGpu, RowTotals> previous_;
  uint64_t previous_ns_ = 0;
  bool have_previous_ = false;
  uint64_t now_ns_ = 0;
  TopSummary summary_;
};

/// The replay clock line of `top --replay`: where in the capture the rows
/// shown are.
struct ReplayClock {
  CaptureSpan span;
  double speed = 1;  ///< --speed; 0: as fast as it can be read
};

/// What the screen shows besides the model's rows.
struct TopView {
  std::string status;   ///< the status line's message; "" for none
  bool paused = false;  ///< the rows are frozen (p or space)
  std::optional<ReplayClock> replay;  ///< top --replay
};

/// The screen as text: title and summary lines, in a replay the capture's
/// clock at the model's last Update(), the status line (paused or not, and
/// `view.status`), then the column header (line `*header_line`), then a
/// container's total row followed by its GPUs' rows. Columns that do not
/// fit `width` are left out (the sort column never); names are cut to fit.
std::vector<std::string> RenderTop(const TopModel& model, TopSort sort,
                                   int width, const TopView& view,
                                   size_t* header_line);
/// The same with `status` alone (live, not paused).
std::vector<std::string> RenderTop(const TopModel& model, TopSort sort,
                                   int width, const std::string& status,
                                   size_t* header_line);

/// The help screen (`?`): every key of TopKeys() and what it does, cut to
/// `width`.
std::vector<std::string> RenderTopHelp(int width);

}  // namespace gpuq
