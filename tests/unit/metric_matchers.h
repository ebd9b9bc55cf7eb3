// Lookups over metric families for tests: find a family, match series by a
// subset of labels, and read or sum their values.
#pragma once

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>

#include <map>
#include <string>
#include <vector>

namespace gpuq {

using LabelMap = std::map<std::string, std::string>;

inline const prometheus::MetricFamily* Find(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name) {
  for (const prometheus::MetricFamily& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

inline LabelMap LabelsOf(const prometheus::ClientMetric& m) {
  LabelMap labels;
  for (const auto& l : m.label) labels[l.name] = l.value;
  return labels;
}

inline std::vector<std::string> LabelNames(const prometheus::ClientMetric& m) {
  std::vector<std::string> names;
  for (const auto& l : m.label) names.push_back(l.name);
  return names;
}

inline double ValueOf(const prometheus::MetricFamily& f,
                      const prometheus::ClientMetric& m) {
  return f.type == prometheus::MetricType::Counter ? m.counter.value
                                                   : m.gauge.value;
}

// Series of `family` whose labels include every pair of `match`.
inline std::vector<const prometheus::ClientMetric*> Matching(
    const prometheus::MetricFamily& f, const LabelMap& match) {
  std::vector<const prometheus::ClientMetric*> out;
  for (const prometheus::ClientMetric& m : f.metric) {
    const LabelMap labels = LabelsOf(m);
    bool all = true;
    for (const auto& [k, v] : match) {
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v) all = false;
    }
    if (all) out.push_back(&m);
  }
  return out;
}

// The value of the one series of `name` matching `match`; fails the test if
// there is not exactly one.
inline double One(const std::vector<prometheus::MetricFamily>& families,
                  const std::string& name, const LabelMap& match) {
  const prometheus::MetricFamily* f = Find(families, name);
  if (f == nullptr) {
    ADD_FAILURE() << "no family " << name;
    return -1;
  }
  const auto series = Matching(*f, match);
  if (series.size() != 1) {
    ADD_FAILURE() << name << ": " << series.size()
                  << " series match, expected 1";
    return -1;
  }
  return ValueOf(*f, *series[0]);
}

// Sum over every series of `name` matching `match`.
inline double Sum(const std::vector<prometheus::MetricFamily>& families,
                  const std::string& name, const LabelMap& match = {}) {
  const prometheus::MetricFamily* f = Find(families, name);
  if (f == nullptr) {
    ADD_FAILURE() << "no family " << name;
    return -1;
  }
  double total = 0;
  for (const prometheus::ClientMetric* m : Matching(*f, match))
    total += ValueOf(*f, *m);
  return total;
}

inline size_t Count(const std::vector<prometheus::MetricFamily>& families,
                    const std::string& name, const LabelMap& match = {}) {
  const prometheus::MetricFamily* f = Find(families, name);
  return f == nullptr ? 0 : Matching(*f, match).size();
}

}  // namespace gpuq
