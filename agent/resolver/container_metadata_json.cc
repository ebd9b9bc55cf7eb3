#include "resolver/container_metadata_json.h"

#include <gpuq/abi.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

namespace gpuq {
namespace {

std::string Dump(const ContainerMetadata& m) {
  nlohmann::ordered_json j = {
      {"name", m.name},     {"pod", m.pod},
      {"namespace", m.ns},  {"container", m.k8s_container},
      {"labels", m.labels}, {"source", m.source}};
  return j.dump();
}

// Bytes a label takes in Dump()'s output: "key":"value", (escapes counted).
size_t LabelBytes(const std::string& key, const std::string& value) {
  return nlohmann::json(key).dump().size() +
         nlohmann::json(value).dump().size() + 2;
}

}  // namespace

std::string MetadataToJson(const ContainerMetadata& m) {
  std::string json = Dump(m);
  if (json.size() <= GPUQ_CONTAINER_META_MAX) return json;
  // Too big for a container_meta record: written anyway, it made the whole
  // capture unreadable ("corrupt", or a record size wrapped at 64 KiB).
  // Labels go first, the largest first (then by key, so the result is
  // reproducible); the names stay unless they alone are too big.
  ContainerMetadata kept = m;
  std::vector<std::tuple<size_t, std::string>> labels;
  for (const auto& [key, value] : m.labels) {
    labels.emplace_back(LabelBytes(key, value), key);
  }
  std::sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b)
                                            : std::get<1>(a) < std::get<1>(b);
  });
  size_t size = json.size();
  for (const auto& [bytes, key] : labels) {
    if (size <= GPUQ_CONTAINER_META_MAX) break;
    kept.labels.erase(key);
    size -= std::min(size, bytes);
  }
  json = Dump(kept);
  if (json.size() <= GPUQ_CONTAINER_META_MAX) return json;
  kept.labels.clear();
  constexpr size_t kMaxNameBytes = 1024;  // far beyond any runtime's names
  for (std::string* field :
       {&kept.name, &kept.pod, &kept.ns, &kept.k8s_container, &kept.source}) {
    if (field->size() > kMaxNameBytes) field->clear();
  }
  return Dump(kept);
}

std::optional<ContainerMetadata> MetadataFromJson(const std::string& json) {
  const auto j =
      nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto text = [&j](const char* key) -> std::string {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  };
  ContainerMetadata m;
  m.name = text("name");
  m.pod = text("pod");
  m.ns = text("namespace");
  m.k8s_container = text("container");
  m.source = text("source");
  const auto labels = j.find("labels");
  if (labels != j.end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) m.labels[key] = value.get<std::string>();
    }
  }
  return m;
}

}  // namespace gpuq
