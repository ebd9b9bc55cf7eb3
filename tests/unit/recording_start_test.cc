// A recording started on a running pipeline (the recording API) is exact:
// replayed alone, its capture gives every gauge the recording agent had when
// it stopped, and every counter as it grew while the recording ran (its
// value at the stop less its value at the start). Checked over every named
// scenario and a scale one, cut at several points; the agent's own
// self-metrics (events by type, decode errors, probes) describe the
// process, not the GPUs, and are left out by name; what a start does not
// carry yet is compared at every cut where the agent held none of it
// (UncarriedFamily).
#include <gtest/gtest.h>
#include <prometheus/metric_family.h>

#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "export/collector.h"
#include "model/pipeline.h"
#include "scenario.h"
#include "sources/capture.h"
#include "test_support.h"

namespace gpuq {
namespace {

PipelineOptions WithoutSysfs() {
  PipelineOptions options;
  options.use_sysfs = false;
  return options;
}

/// A series, keyed as the exposition format names it (family{name="value",
/// ...}, labels in the order BuildFamilies gives them): one string compare
/// per lookup, where a family and a map of labels took one per label (this
/// test checks thousands of cuts, under ASan too).
struct Series {
  std::string family;
  std::optional<std::string> container;  // its container label, if it has one
  double value = 0;
};
using SeriesMap = std::map<std::string, Series>;
struct Values {
  SeriesMap counters;
  SeriesMap gauges;
};

// The families the agent keeps about itself rather than the GPUs: what a
// replay of any capture counts differently from the run that wrote it.
const std::set<std::string>& SelfFamilies() {
  static const std::set<std::string> names = {
      "gpuq_build_info",  "gpuq_events_total",   "gpuq_probe_attached",
      "gpuq_source_info", "gpuq_cgroup_lookups", "gpuq_queue_samples_total",
  };
  return names;
}

// What a recording's start does not carry yet (docs/recording-api.md,
// "Not carried"), each with the families it shows in: at a cut where the
// agent held such state (Model::Unrecordable), those families are seen from
// their next record on, not from the start, and are not compared; at every
// other cut they are.
enum class Uncarried { kHeldOff, kEviction, kRunlistShape };
std::optional<Uncarried> UncarriedFamily(const std::string& name) {
  static const std::map<std::string, Uncarried> families = {
      {"gpuq_queue_preemptions_total", Uncarried::kHeldOff},
      {"gpuq_queue_preempted_seconds_total", Uncarried::kHeldOff},
      {"gpuq_eviction_duration_seconds_count", Uncarried::kEviction},
      {"gpuq_eviction_duration_seconds_sum", Uncarried::kEviction},
      {"gpuq_runlist_oversubscribed_seconds_total", Uncarried::kRunlistShape},
      {"gpuq_runlist_oversubscribed", Uncarried::kRunlistShape},
      {"gpuq_runlist_entries", Uncarried::kRunlistShape},
      {"gpuq_runlist_entry_limit", Uncarried::kRunlistShape},
  };
  const auto it = families.find(name);
  if (it == families.end()) return std::nullopt;
  return it->second;
}

Values ValuesOf(Pipeline* pipeline) {
  Values out;
  for (const prometheus::MetricFamily& f :
       BuildFamilies(pipeline->TakeSnapshot())) {
    if (SelfFamilies().count(f.name) != 0) continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      // The labels in the order BuildFamilies gives them: the same for the
      // agent and the replay, as the same code builds both.
      std::string key = "{";
      std::optional<std::string> container;
      for (const auto& l : m.label) {
        key += l.name + "=\"" + l.value + "\",";
        if (l.name == "container") container = l.value;
      }
      key += "}";
      switch (f.type) {
        case prometheus::MetricType::Counter:
          out.counters[f.name + key] = {f.name, container, m.counter.value};
          break;
        case prometheus::MetricType::Gauge:
          out.gauges[f.name + key] = {f.name, container, m.gauge.value};
          break;
        case prometheus::MetricType::Histogram:
          out.counters[f.name + "_count" + key] = {
              f.name + "_count", container,
              static_cast<double>(m.histogram.sample_count)};
          out.counters[f.name + "_sum" + key] = {f.name + "_sum", container,
                                                 m.histogram.sample_sum};
          break;
        default:
          break;
      }
    }
  }
  return out;
}

// Every series of either map, in key order, with its value in each (0
// where absent: a counter that never grew is not exported by some
// families). Both maps are sorted, so one walk over the two.
template <class F>
void ForEachSeries(const SeriesMap& a, const SeriesMap& b, F f) {
  auto ia = a.begin();
  auto ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      f(ia->first, ia->second, ia->second.value, 0.0);
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      f(ib->first, ib->second, 0.0, ib->second.value);
      ++ib;
    } else {
      f(ia->first, ia->second, ia->second.value, ib->second.value);
      ++ia;
      ++ib;
    }
  }
}

// Cuts checked, and those where the uncarried families were compared too.
size_t g_cuts = 0, g_preemption_cuts = 0, g_runlist_cuts = 0;

// Runs `events` through a pipeline, recording from record `cut` on into a
// capture compressed as `compression`, and checks the replayed capture
// against the recording pipeline.
void CheckCut(const std::vector<Event>& events, size_t cut,
              const std::string& name, CaptureCompression compression) {
  SCOPED_TRACE(name + " cut at record " + std::to_string(cut) + " of " +
               std::to_string(events.size()));
  TempDir tmp;
  const std::string path = tmp.path() + "/api.gpuqcap";
  std::string error;
  Values at_start, at_stop;
  Model::Unrecorded unrecorded;
  {
    Pipeline live(WithoutSysfs(), nullptr);
    for (size_t i = 0; i < cut; ++i) live.Handle(events[i]);
    at_start = ValuesOf(&live);
    auto writer = CaptureWriter::Create(path, &error, 0, compression);
    ASSERT_NE(writer, nullptr) << error;
    ASSERT_TRUE(live.StartRecording(writer.get(), "", &unrecorded));
    EXPECT_FALSE(live.StartRecording(writer.get(), ""))
        << "one recording at a time";
    for (size_t i = cut; i < events.size(); ++i) live.Handle(events[i]);
    live.StopRecording();
    at_stop = ValuesOf(&live);
    ASSERT_TRUE(writer->Close(&error)) << error;
  }
  Capture capture;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  Pipeline replay(WithoutSysfs(), nullptr);
  for (const Event& e : capture.events) replay.Handle(e);
  const Values replayed = ValuesOf(&replay);

  // A container that did nothing while recording is not in the capture:
  // the agent still names it (gpuq_container_info) until its grace ends.
  std::set<std::string> in_capture, with_queues;
  for (const auto& [k, g] : replayed.gauges) {
    if (g.family == "gpuq_container_info" && g.container)
      in_capture.insert(*g.container);
  }
  for (const auto& [k, g] : at_stop.gauges) {
    if (g.family == "gpuq_queues" && g.container && g.value != 0)
      with_queues.insert(*g.container);
  }
  auto idle_elsewhere = [&](const Series& s) {
    return s.family == "gpuq_container_info" && s.container &&
           in_capture.count(*s.container) == 0 &&
           with_queues.count(*s.container) == 0;
  };
  // Durations are counted in whole nanoseconds and exported as seconds:
  // compared in the unit they are counted in, so that the subtraction of
  // two doubles cannot tell them apart.
  auto same = [](const Series& s, double a, double b) {
    const bool seconds = s.family.find("seconds") != std::string::npos;
    return seconds ? std::llround(a * 1e9) == std::llround(b * 1e9) : a == b;
  };
  // Whether `family` is held to exactness at this cut.
  auto compared = [&](const std::string& family) {
    const auto group = UncarriedFamily(family);
    if (!group) return true;
    switch (*group) {
      case Uncarried::kHeldOff:
        // An eviction takes queues off the runlist too.
        return unrecorded.held_off == 0 && unrecorded.evictions == 0;
      case Uncarried::kEviction:
        return unrecorded.evictions == 0;
      case Uncarried::kRunlistShape:
        return unrecorded.runlist_shapes == 0;
    }
    return true;
  };
  ++g_cuts;
  if (unrecorded.held_off == 0 && unrecorded.evictions == 0)
    ++g_preemption_cuts;
  if (unrecorded.runlist_shapes == 0) ++g_runlist_cuts;
  int wrong = 0;
  ForEachSeries(
      at_stop.gauges, replayed.gauges,
      [&](const std::string& k, const Series& s, double live, double got) {
        if (!compared(s.family) || idle_elsewhere(s)) return;
        if (!same(s, live, got) && ++wrong <= 20) {
          ADD_FAILURE() << "gauge " << k << ": agent " << live << ", replay "
                        << got;
        }
      });
  SeriesMap grew;
  ForEachSeries(
      at_stop.counters, at_start.counters,
      [&](const std::string& k, const Series& s, double stop, double start) {
        grew.emplace_hint(grew.end(), k,
                          Series{s.family, s.container, stop - start});
      });
  ForEachSeries(
      grew, replayed.counters,
      [&](const std::string& k, const Series& s, double live, double got) {
        if (!compared(s.family)) return;
        if (!same(s, live, got) && ++wrong <= 20) {
          ADD_FAILURE() << "counter " << k << ": grew by " << live
                        << " while recording, replay " << got;
        }
      });
  EXPECT_EQ(wrong, 0);
}

std::vector<Event> Collect(const std::string& scenario) {
  std::vector<Event> events;
  EXPECT_TRUE(BuildNamedScenario(scenario, [&](const Event& e) {
    events.push_back(e);
    return true;
  }));
  return events;
}

TEST(RecordingStartTest, EveryScenarioCutAnywhereReplaysExactly) {
  for (const std::string& name : NamedScenarios()) {
    const std::vector<Event> events = Collect(name);
    ASSERT_FALSE(events.empty()) << name;
    // Uncompressed: what a start carries does not depend on the
    // compression, and a zstd context per cut was a fifth of this test's
    // time under ASan (the scale test below and CaptureZstdTest record
    // compressed).
    for (size_t cut = 0; cut <= events.size(); ++cut) {
      CheckCut(events, cut, name, CaptureCompression::kNone);
    }
  }
  // The exemptions are not the rule: most cuts compare every family.
  std::cout << "cuts " << g_cuts << ", preemptions compared at "
            << g_preemption_cuts << ", runlist shapes at " << g_runlist_cuts
            << "\n";
  EXPECT_GT(g_preemption_cuts * 10, g_cuts * 9);
  EXPECT_GT(g_runlist_cuts * 2, g_cuts);
}

TEST(RecordingStartTest, ScaleScenarioWithChurnReplaysExactly) {
  ScaleParams params;
  params.containers = 40;
  params.churn = 3000;
  const std::vector<Event> events = ScaleScenarioEvents(params);
  for (size_t cut : {events.size() / 5, events.size() / 2}) {
    CheckCut(events, cut, "scale", CaptureCompression::kZstd);
  }
}

}  // namespace
}  // namespace gpuq
