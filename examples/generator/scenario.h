// Synthetic capture scenarios: deterministic streams of the records a real
// `gpuq-agent record` would write. The generator writes them to a file; the
// benchmarks feed the "scale" scenario straight into the model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sources/event.h"

namespace gpuq {

/// Both start clocks of a generated capture (CaptureWriter::Create's
/// fixed_start_ns) and the monotonic time of the agent's start records.
/// Fixed, so the same arguments give the same bytes.
inline constexpr uint64_t kScenarioStartNs = 1700000000000000000ull;

/// Receives each record in file order. Returning false stops the scenario
/// (e.g. a write failed).
using EventSink = std::function<bool(const Event&)>;

/// What a scenario emitted, counted as the agent's model would see it.
struct ScenarioSummary {
  uint64_t records = 0;
  uint64_t gpu_infos = 0;
  uint64_t cgroup_paths = 0;
  uint64_t creates = 0;  ///< QUEUE_CREATE records, seeded ones included
  uint64_t seeded_creates = 0;
  uint64_t destroys_ioctl = 0;
  uint64_t destroys_process_exit = 0;
  uint64_t untracked_destroys = 0;
  uint64_t create_failures = 0;
  uint64_t process_exits = 0;
  uint64_t processes = 0;
  uint64_t live_queues = 0;  ///< queues still alive after the last record
};

/// Parameters of the "scale" scenario (see examples/README.md).
struct ScaleParams {
  uint32_t containers = 100;
  uint32_t queues_per_container = 10;
  uint64_t churn = 0;
  uint64_t seed = 1;
};

/// Limits that keep the synthetic identities (pids, cgroup ids, process
/// keys, KFD queue ids) distinct and realistic.
inline constexpr uint32_t kMaxScaleContainers = 1000000;
/// KFD_MAX_NUM_OF_QUEUES_PER_PROCESS: the kernel refuses more.
inline constexpr uint32_t kMaxQueuesPerProcess = 1024;
inline constexpr uint64_t kMaxScaleChurn = 1000000000ull;

/// Empty if `params` is usable, else one line saying which value is wrong.
std::string ValidateScaleParams(const ScaleParams& params);

/// The bundled example: an 8-GPU MI300X node with a vLLM container, a
/// Kubernetes trainer that exits, and a host process (examples/README.md).
/// Returns false if the sink stopped it.
bool BuildDefaultScenario(const EventSink& sink,
                          ScenarioSummary* summary = nullptr);

/// The report scenarios (examples/README.md, "Report scenarios"): fixed
/// timestamps, so every figure is a whole number of seconds and packets.
/// Case-A: one compute queue on one GPU, 121 s, 127,099 packets.
bool BuildCnnScenario(const EventSink& sink,
                      ScenarioSummary* summary = nullptr);
/// Case-B: three queues (two compute, one SDMA) on one GPU, 261,809 packets.
bool BuildTransformerScenario(const EventSink& sink,
                              ScenarioSummary* summary = nullptr);
/// Eight workers on eight GPUs, three queues each, 60 s.
bool BuildDeepseek8Scenario(const EventSink& sink,
                            ScenarioSummary* summary = nullptr);
/// ResNet-18 and ResNet-50 sharing one GPU, with preemptions, 30 s.
bool BuildSharedGpuScenario(const EventSink& sink,
                            ScenarioSummary* summary = nullptr);
/// The users' experiment: a latency container with a high-priority queue
/// beside a batch container on one HWS GPU, 30 s; with 2 CP queue slots
/// its runlist is oversubscribed from the latency queue's create on, with
/// 24 it fits.
bool BuildPairOversubscribedScenario(const EventSink& sink,
                                     ScenarioSummary* summary = nullptr);
bool BuildPairFitsScenario(const EventSink& sink,
                           ScenarioSummary* summary = nullptr);
/// An 8-GPU MI300X node in CPX mode, 64 KFD nodes (examples/README.md).
bool BuildCpxScenario(const EventSink& sink, ScenarioSummary* summary);
/// Any fixed scenario by name: default, cnn, transformer, deepseek8,
/// shared-gpu, pair-oversubscribed, pair-fits, cpx. False for another name
/// or a stopped sink.
bool BuildNamedScenario(const std::string& name, const EventSink& sink,
                        ScenarioSummary* summary = nullptr);
/// The names BuildNamedScenario takes, in that order.
const std::vector<std::string>& NamedScenarios();

/// N single-process Docker containers on 8 GPUs, M queues each, then K
/// destroy+create churn operations. `params` must pass ValidateScaleParams.
bool BuildScaleScenario(const ScaleParams& params, const EventSink& sink,
                        ScenarioSummary* summary = nullptr);

/// Convenience for benchmarks: the whole scenario in memory.
std::vector<Event> ScaleScenarioEvents(const ScaleParams& params,
                                       ScenarioSummary* summary = nullptr);

}  // namespace gpuq
