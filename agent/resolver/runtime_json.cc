// The checks and readers the runtime clients share (runtime_json.h).
#include "resolver/runtime_json.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace gpuq::runtime_json {

// Ids end up in a URL path and in a file path: accept only the characters
// runtimes generate (hex for all of them) so "../" or "?" cannot steer either.
bool IsSafeId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
           c == '-' || c == '.';
  });
}

// Error strings become log lines: one line of printable text, bounded (a
// 64-hex bundle path alone is 150 characters, so the bound is generous).
std::string OneLine(std::string text) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  constexpr size_t kMaxLen = 400;
  if (text.size() > kMaxLen) text = text.substr(0, kMaxLen) + "...";
  return text;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Label values are kept forever and recorded into captures; real ones are
// short, while annotations can carry whole documents (kubectl's
// last-applied-configuration, CRI-O's io.kubernetes.cri-o.Annotations copy
// of all of them). Longer values are dropped.
constexpr size_t kMaxLabelValueBytes = 1024;

// Docker labels and OCI annotations are string maps; anything else in them is
// skipped rather than failing the whole lookup.
Labels StringMap(const nlohmann::json& value) {
  Labels out;
  if (!value.is_object()) return out;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) continue;
    const auto& text = v.get_ref<const std::string&>();
    if (text.size() <= kMaxLabelValueBytes) out.emplace(key, text);
  }
  return out;
}

std::string ValueOf(const Labels& labels, const char* key) {
  const auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

void FillKubernetes(const Labels& labels, const char* pod_key,
                    const char* ns_key, const char* container_key,
                    ContainerMetadata* meta) {
  if (meta->pod.empty()) meta->pod = ValueOf(labels, pod_key);
  if (meta->ns.empty()) meta->ns = ValueOf(labels, ns_key);
  if (meta->k8s_container.empty()) {
    meta->k8s_container = ValueOf(labels, container_key);
  }
}

bool HasIdentity(const ContainerMetadata& meta) {
  return !meta.name.empty() || !meta.pod.empty() || !meta.k8s_container.empty();
}

}  // namespace gpuq::runtime_json
