// libFuzzer harness: what the agent reads from container runtimes
// (resolver/docker_api_client.cc, oci_bundle_client.cc,
// container_metadata_json.cc, runtime_events.cc): a Docker Engine API inspect
// document, an OCI bundle's config.json, one line of the Docker events stream,
// and the JSON payload of a capture's container_meta record. Input: one JSON
// document. Whatever metadata comes out must survive a capture: its record
// encodes, decodes and reads back as the same metadata.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "resolver/container_metadata.h"
#include "resolver/container_metadata_json.h"
#include "resolver/docker_api_client.h"
#include "resolver/oci_bundle_client.h"
#include "sources/event.h"

namespace {

bool Same(const gpuq::ContainerMetadata& a, const gpuq::ContainerMetadata& b) {
  return a.name == b.name && a.pod == b.pod && a.ns == b.ns &&
         a.k8s_container == b.k8s_container && a.labels == b.labels &&
         a.source == b.source;
}

// What `record` writes for `meta`, read back as `--replay` reads it: the
// same metadata, or (when it does not fit a record) the same names and a
// subset of its labels.
void RoundTrip(const gpuq::ContainerMetadata& meta) {
  const std::string json = gpuq::MetadataToJson(meta);
  const std::optional<gpuq::ContainerMetadata> back =
      gpuq::MetadataFromJson(json);
  const std::string whole =
      nlohmann::ordered_json{
          {"name", meta.name},     {"pod", meta.pod},
          {"namespace", meta.ns},  {"container", meta.k8s_container},
          {"labels", meta.labels}, {"source", meta.source}}
          .dump();
  bool ok = back.has_value() && json.size() <= GPUQ_CONTAINER_META_MAX;
  if (ok && whole.size() <= GPUQ_CONTAINER_META_MAX) {
    ok = json == whole && Same(*back, meta);
  } else if (ok) {
    for (const auto& [key, value] : back->labels) {
      const auto it = meta.labels.find(key);
      ok = ok && it != meta.labels.end() && it->second == value;
    }
  }
  if (!ok) {
    std::fprintf(stderr, "metadata does not survive its JSON: %s\n",
                 json.c_str());
    std::abort();
  }
  gpuq_event_header hdr{};
  hdr.type = GPUQ_EV_CONTAINER_META;
  hdr.cgroup_id = 1;
  const std::string bytes = gpuq::Encode(gpuq::ContainerMetaRecord{hdr, json});
  gpuq::Event event;
  size_t consumed = 0;
  if (gpuq::Decode(bytes.data(), bytes.size(), &event, &consumed) !=
          gpuq::DecodeStatus::kOk ||
      std::get<gpuq::ContainerMetaRecord>(event).json != json) {
    std::fprintf(stderr,
                 "a %zu-byte container_meta record does not read back\n",
                 json.size());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  if (const auto meta = gpuq::ParseDockerInspect(text, &error)) {
    RoundTrip(*meta);
  }
  if (const auto meta =
          gpuq::ParseOciBundle(text, "containerd-bundle", &error)) {
    RoundTrip(*meta);
  }
  std::string id, action;
  gpuq::ContainerMetadata said;
  if (gpuq::ParseDockerEvent(text, &id, &action, &said)) RoundTrip(said);
  if (const auto meta = gpuq::MetadataFromJson(text)) RoundTrip(*meta);
  return 0;
}
