#include "sources/event.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace gpuq {
namespace {

// Minimum record size of each type: its ABI struct.
size_t MinSize(uint16_t type) {
  switch (type) {
    case GPUQ_EV_QUEUE_CREATE:
      // Records written before doorbell_handle was appended are valid: the
      // appended fields read as 0 ("unknown").
      return offsetof(gpuq_queue_create_event, doorbell_handle);
    case GPUQ_EV_QUEUE_DESTROY:
      return sizeof(gpuq_queue_destroy_event);
    case GPUQ_EV_PROCESS_EXIT:
      return sizeof(gpuq_process_exit_event);
    case GPUQ_EV_QUEUE_CREATE_FAILED:
      return sizeof(gpuq_queue_create_failed_event);
    case GPUQ_EV_GPU_INFO:
      return sizeof(gpuq_gpu_info_record);
    case GPUQ_EV_CGROUP_PATH:
      return sizeof(gpuq_cgroup_path_record);
    case GPUQ_EV_CONTAINER_META:
      return sizeof(gpuq_container_meta_record);
    case GPUQ_EV_RUNLIST:
      return sizeof(gpuq_runlist_event);
    case GPUQ_EV_EVICTION:
      return sizeof(gpuq_eviction_event);
    case GPUQ_EV_QUEUE_SAMPLE:
      return sizeof(gpuq_queue_sample_record);
    case GPUQ_EV_DOORBELL_COUNT:
      return sizeof(gpuq_doorbell_count_record);
    default:
      return 0;
  }
}

// Copies a record of `size` bytes (at least MinSize); fields appended after
// the writer's version stay zero.
template <typename T>
Event CopyOut(const void* data, size_t size) {
  T value{};
  std::memcpy(&value, data, std::min(size, sizeof(T)));
  return value;
}

size_t AlignUp8(size_t n) { return (n + 7) & ~size_t{7}; }

// The record type of each alternative: Encode() writes it, so a header the
// caller left inconsistent cannot produce a record that reads back as
// another type.
template <typename T>
constexpr uint16_t TypeOf() {
  if constexpr (std::is_same_v<T, gpuq_queue_create_event>) {
    return GPUQ_EV_QUEUE_CREATE;
  } else if constexpr (std::is_same_v<T, gpuq_queue_destroy_event>) {
    return GPUQ_EV_QUEUE_DESTROY;
  } else if constexpr (std::is_same_v<T, gpuq_process_exit_event>) {
    return GPUQ_EV_PROCESS_EXIT;
  } else if constexpr (std::is_same_v<T, gpuq_queue_create_failed_event>) {
    return GPUQ_EV_QUEUE_CREATE_FAILED;
  } else if constexpr (std::is_same_v<T, gpuq_gpu_info_record>) {
    return GPUQ_EV_GPU_INFO;
  } else if constexpr (std::is_same_v<T, ContainerMetaRecord>) {
    return GPUQ_EV_CONTAINER_META;
  } else if constexpr (std::is_same_v<T, gpuq_runlist_event>) {
    return GPUQ_EV_RUNLIST;
  } else if constexpr (std::is_same_v<T, gpuq_eviction_event>) {
    return GPUQ_EV_EVICTION;
  } else if constexpr (std::is_same_v<T, gpuq_queue_sample_record>) {
    return GPUQ_EV_QUEUE_SAMPLE;
  } else if constexpr (std::is_same_v<T, gpuq_doorbell_count_record>) {
    return GPUQ_EV_DOORBELL_COUNT;
  } else {
    return GPUQ_EV_CGROUP_PATH;
  }
}

// A fixed record followed by a variable payload, padded to 8 bytes.
template <typename Record>
std::string EncodeWithPayload(Record rec, uint16_t type,
                              const std::string& payload) {
  const size_t size = AlignUp8(sizeof(rec) + payload.size());
  rec.hdr.type = type;
  rec.hdr.size = static_cast<uint16_t>(size);
  std::string out(size, '\0');
  std::memcpy(out.data(), &rec, sizeof(rec));
  std::memcpy(out.data() + sizeof(rec), payload.data(), payload.size());
  return out;
}

}  // namespace

const gpuq_event_header& Header(const Event& event) {
  return std::visit(
      [](const auto& e) -> const gpuq_event_header& { return e.hdr; }, event);
}

const char* EventTypeName(uint16_t type) {
  switch (type) {
    case GPUQ_EV_QUEUE_CREATE:
      return "queue_create";
    case GPUQ_EV_QUEUE_DESTROY:
      return "queue_destroy";
    case GPUQ_EV_PROCESS_EXIT:
      return "process_exit";
    case GPUQ_EV_QUEUE_CREATE_FAILED:
      return "queue_create_failed";
    case GPUQ_EV_GPU_INFO:
      return "gpu_info";
    case GPUQ_EV_CGROUP_PATH:
      return "cgroup_path";
    case GPUQ_EV_CONTAINER_META:
      return "container_meta";
    case GPUQ_EV_RUNLIST:
      return "runlist";
    case GPUQ_EV_EVICTION:
      return "eviction";
    case GPUQ_EV_QUEUE_SAMPLE:
      return "queue_sample";
    case GPUQ_EV_DOORBELL_COUNT:
      return "doorbell_count";
    default:
      return "invalid";
  }
}

const char* DecodeStatusName(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::kOk:
      return "ok";
    case DecodeStatus::kTruncated:
      return "truncated record";
    case DecodeStatus::kBadSize:
      return "record size does not fit its type";
    case DecodeStatus::kUnknownType:
      return "unknown record type";
  }
  return "unknown";
}

DecodeStatus Decode(const void* data, size_t len, Event* out,
                    size_t* consumed) {
  gpuq_event_header hdr;
  if (len < sizeof(hdr)) return DecodeStatus::kTruncated;
  std::memcpy(&hdr, data, sizeof(hdr));
  const size_t min = MinSize(hdr.type);
  if (min == 0) return DecodeStatus::kUnknownType;
  if (hdr.size < min || hdr.size % 8 != 0) return DecodeStatus::kBadSize;
  if (len < hdr.size) return DecodeStatus::kTruncated;

  switch (hdr.type) {
    case GPUQ_EV_QUEUE_CREATE:
      *out = CopyOut<gpuq_queue_create_event>(data, hdr.size);
      break;
    case GPUQ_EV_QUEUE_DESTROY:
      *out = CopyOut<gpuq_queue_destroy_event>(data, hdr.size);
      break;
    case GPUQ_EV_PROCESS_EXIT:
      *out = CopyOut<gpuq_process_exit_event>(data, hdr.size);
      break;
    case GPUQ_EV_QUEUE_CREATE_FAILED:
      *out = CopyOut<gpuq_queue_create_failed_event>(data, hdr.size);
      break;
    case GPUQ_EV_GPU_INFO:
      *out = CopyOut<gpuq_gpu_info_record>(data, hdr.size);
      break;
    case GPUQ_EV_CGROUP_PATH: {
      gpuq_cgroup_path_record rec;
      std::memcpy(&rec, data, sizeof(rec));
      if (rec.path_len > GPUQ_CGROUP_PATH_MAX ||
          sizeof(rec) + rec.path_len > hdr.size) {
        return DecodeStatus::kBadSize;
      }
      const char* path = static_cast<const char*>(data) + sizeof(rec);
      *out = CgroupPathRecord{rec.hdr, std::string(path, rec.path_len)};
      break;
    }
    case GPUQ_EV_CONTAINER_META: {
      gpuq_container_meta_record rec;
      std::memcpy(&rec, data, sizeof(rec));
      if (rec.payload_len > GPUQ_CONTAINER_META_MAX ||
          sizeof(rec) + rec.payload_len > hdr.size) {
        return DecodeStatus::kBadSize;
      }
      const char* json = static_cast<const char*>(data) + sizeof(rec);
      *out = ContainerMetaRecord{rec.hdr, std::string(json, rec.payload_len)};
      break;
    }
    case GPUQ_EV_RUNLIST:
      *out = CopyOut<gpuq_runlist_event>(data, hdr.size);
      break;
    case GPUQ_EV_EVICTION:
      *out = CopyOut<gpuq_eviction_event>(data, hdr.size);
      break;
    case GPUQ_EV_QUEUE_SAMPLE:
      *out = CopyOut<gpuq_queue_sample_record>(data, hdr.size);
      break;
    case GPUQ_EV_DOORBELL_COUNT:
      *out = CopyOut<gpuq_doorbell_count_record>(data, hdr.size);
      break;
  }
  *consumed = hdr.size;
  return DecodeStatus::kOk;
}

std::string Encode(const Event& event) {
  return std::visit(
      [](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, CgroupPathRecord>) {
          gpuq_cgroup_path_record rec{};
          rec.hdr = e.hdr;
          rec.path_len = static_cast<uint32_t>(e.path.size());
          return EncodeWithPayload(rec, TypeOf<T>(), e.path);
        } else if constexpr (std::is_same_v<T, ContainerMetaRecord>) {
          gpuq_container_meta_record rec{};
          rec.hdr = e.hdr;
          rec.payload_len = static_cast<uint32_t>(e.json.size());
          return EncodeWithPayload(rec, TypeOf<T>(), e.json);
        } else {
          T copy = e;
          copy.hdr.type = TypeOf<T>();
          copy.hdr.size = sizeof(T);
          return std::string(reinterpret_cast<const char*>(&copy), sizeof(T));
        }
      },
      event);
}

}  // namespace gpuq
