// What write-index sampling costs the agent: CPU time of one sampling round
// at 10, 1,000 and 10,000 live queues, held by tests/sampler/queue_writer
// processes with amd_queue_t-shaped blocks. Two ways, interleaved per
// repetition so both see the same noise:
//
//   read:  QueueSampler::Sample with a sink that drops the records (the
//          process_vm_readv calls and the record building);
//   round: SubmissionReaders::Round on a Pipeline that holds the queues, as
//          the daemon's sampler thread runs it (SampleTargets, the reads,
//          Pipeline::Handle of every record, which the model applies).
//
// CPU time is the sampling thread's own (CLOCK_THREAD_CPUTIME_ID), so the
// writers' work and other processes on the machine are not counted. At
// --sample-interval 1s, CPU per round / 1 s is the share of one core. See
// bench/README.md.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "bench_stats.h"
#include "cli/source_setup.h"
#include "model/pipeline.h"
#include "sampler_queue_writer.h"
#include "submissions/queue_sampler.h"
#include "submissions/submission_readers.h"

namespace {

using gpuq::bench::Median;
using gpuq::bench::ThreadCpuSeconds;

using gpuq::QueueWriterProcess;

/// One size: its writer processes, the pipeline that knows their queues,
/// and both ways of sampling them.
struct Size {
  size_t queues = 0;
  std::vector<std::unique_ptr<QueueWriterProcess>> writers;
  std::vector<gpuq::SampleTarget> targets;
  std::unique_ptr<gpuq::Pipeline> pipeline;
  std::unique_ptr<gpuq::SubmissionReaders> readers;
  std::unique_ptr<gpuq::QueueSampler> sampler;
  std::vector<double> read_cpu, round_cpu;  ///< per round, one per rep
  uint64_t syscalls_per_round = 0;
  double submissions = 0;  ///< sanity: what the model counted
};

bool SetUp(Size* s, size_t per_process) {
  gpuq::PipelineOptions options;
  options.use_sysfs = false;
  s->pipeline = std::make_unique<gpuq::Pipeline>(options, nullptr);
  size_t made = 0;
  uint64_t pkey = 0xffff888100000000ull;
  while (made < s->queues) {
    const size_t n = std::min(per_process, s->queues - made);
    auto writer = std::make_unique<QueueWriterProcess>(GPUQ_QUEUE_WRITER);
    if (!writer->ok()) return false;
    const std::vector<uint64_t> amdq = writer->NewQueues(n, 1000, 1000);
    if (amdq.size() != n) return false;
    pkey += 0x10000;
    for (size_t i = 0; i < n; ++i) {
      gpuq_queue_create_event e{};
      e.hdr.type = GPUQ_EV_QUEUE_CREATE;
      e.hdr.size = sizeof(e);
      e.hdr.tgid = writer->pid();
      e.hdr.cgroup_id = 5000 + made / 100;  // 100 queues per container
      e.hdr.process_key = pkey;
      e.gpu_id = 11437 + static_cast<uint32_t>(i % 8);
      e.queue_id = static_cast<uint32_t>(i);
      e.queue_type = GPUQ_QUEUE_COMPUTE;
      e.queue_format = GPUQ_QUEUE_FORMAT_AQL;
      e.flags = GPUQ_CREATE_F_ROCR_LAYOUT;
      e.write_ptr = amdq[i] + gpuq::kWriteDispatchIdOffset;
      e.read_ptr = amdq[i] + gpuq::kReadDispatchIdOffset;
      e.write_index_at_create = 1000;
      s->pipeline->Handle(gpuq::Event{e});
    }
    made += n;
    s->writers.push_back(std::move(writer));
  }
  s->targets = s->pipeline->SampleTargets();
  if (s->targets.size() != s->queues) return false;
  gpuq::SubmissionOptions cli;
  cli.sample_interval = std::chrono::seconds(1);
  std::vector<std::string> warnings;
  s->readers = std::make_unique<gpuq::SubmissionReaders>(
      cli, gpuq::PipelineSinks(s->pipeline.get(), {}), &warnings);
  gpuq::QueueSampler::Options sampler_options;
  sampler_options.access = gpuq::MemoryAccess::kProcessVmReadv;
  s->sampler = std::make_unique<gpuq::QueueSampler>(sampler_options);
  return true;
}

/// CPU seconds per round of `rounds` back-to-back rounds of `fn`.
template <typename Fn>
double CpuPerRound(int rounds, Fn&& fn) {
  const double start = ThreadCpuSeconds();
  for (int i = 0; i < rounds; ++i) fn();
  return (ThreadCpuSeconds() - start) / rounds;
}

}  // namespace

int main(int argc, char** argv) {
  gpuq::bench::Args args{"CPU cost of write-index sampling (bench/README.md)"};
  std::vector<size_t> sizes = {10, 1000, 10000};
  size_t per_process = 100;
  int reps = 5, rounds = 20;
  args.Add("--queues", sizes, "Live queue counts to measure.");
  args.Add("--queues-per-process", per_process, size_t{1}, size_t{100000},
           "Queues per writer process (ROCr processes hold a few to a few "
           "hundred).");
  args.Add("--reps", reps, 1, 1000, "Repetitions; medians are reported.");
  args.Add("--rounds", rounds, 1, 100000, "Sampling rounds per repetition.");
  if (const auto status = args.Parse(argc, argv)) return *status;

  std::vector<Size> all(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    all[i].queues = sizes[i];
    if (!SetUp(&all[i], per_process)) {
      fmt::print(stderr,
                 "sampler bench: could not set up {} queues (is {} built, "
                 "and may this process read its children's memory?)\n",
                 sizes[i], GPUQ_QUEUE_WRITER);
      return 1;
    }
  }

  auto drop = [](const gpuq::Event&) {};
  for (int rep = 0; rep < reps; ++rep) {
    for (Size& s : all) {
      // Every queue moves between rounds, so every sample is a real delta.
      for (auto& w : s.writers) w->AdvanceAll(1, 1);
      const uint64_t before = s.sampler->read_stats().syscalls;
      s.read_cpu.push_back(
          CpuPerRound(rounds, [&] { s.sampler->Sample(s.targets, drop); }));
      s.syscalls_per_round =
          (s.sampler->read_stats().syscalls - before) / rounds;
      for (auto& w : s.writers) w->AdvanceAll(1, 1);
      s.round_cpu.push_back(CpuPerRound(rounds, [&] { s.readers->Round(); }));
    }
  }
  // Each rep advanced every queue twice; the model counted every packet.
  for (Size& s : all) {
    s.submissions = 0;
    const gpuq::Snapshot snap = s.pipeline->TakeSnapshot();
    for (const auto& [key, series] : snap.queue_series) {
      s.submissions += static_cast<double>(series.submissions);
    }
  }

  fmt::print(
      "write-index sampling, {} rounds x {} reps, medians of thread CPU time "
      "per round; {} queues per writer process\n",
      rounds, reps, per_process);
  fmt::print("{:>7} {:>6} {:>9} {:>11} {:>11} {:>9} {:>9} {:>12}\n", "queues",
             "procs", "syscalls", "read us", "round us", "read ns/q",
             "round ns/q", "%core @1s");
  bool ok = true;
  for (const Size& s : all) {
    const double read = Median(s.read_cpu), round = Median(s.round_cpu);
    const double q = static_cast<double>(s.queues);
    fmt::print(
        "{:>7} {:>6} {:>9} {:>11.1f} {:>11.1f} {:>9.0f} {:>9.0f} {:>11.4f}%\n",
        s.queues, s.writers.size(), s.syscalls_per_round, read * 1e6,
        round * 1e6, read * 1e9 / q, round * 1e9 / q, round * 100);
    const double want = 2.0 * reps * q;
    if (s.submissions != want) {
      fmt::print("  model counted {} submissions, expected {}\n", s.submissions,
                 want);
      ok = false;
    }
  }
  if (all.size() > 1) {
    const Size& small = all.front();
    const Size& big = all.back();
    fmt::print(
        "ratio round ns/queue, {} vs {} queues: {:.2f} (1.00 = linear)\n",
        big.queues, small.queues,
        (Median(big.round_cpu) / static_cast<double>(big.queues)) /
            (Median(small.round_cpu) / static_cast<double>(small.queues)));
  }
  for (const Size& s : all) {
    if (s.queues != 1000) continue;
    const double pct = Median(s.round_cpu) * 100;
    fmt::print(
        "1000 queues at --sample-interval 1s: {:.4f}% of one core  "
        "[{}: target < 1%]\n",
        pct, pct < 1.0 ? "PASS" : "MISS");
  }
  return ok ? 0 : 1;
}
