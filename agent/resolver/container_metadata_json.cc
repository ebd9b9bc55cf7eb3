#include "resolver/container_metadata_json.h"

#include <nlohmann/json.hpp>

namespace gpuq {

std::string MetadataToJson(const ContainerMetadata& m) {
  nlohmann::ordered_json j = {
      {"name", m.name},     {"pod", m.pod},
      {"namespace", m.ns},  {"container", m.k8s_container},
      {"labels", m.labels}, {"source", m.source}};
  return j.dump();
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
