// Decoded gpuq events: the ABI records of include/gpuq/abi.h, checked and
// copied out of the ring buffer or capture file.
#pragma once

#include <gpuq/abi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace gpuq {

/// A cgroup path record with its variable-length path.
struct CgroupPathRecord {
  gpuq_event_header hdr;
  std::string path;
};

/// A container metadata record with its JSON payload.
struct ContainerMetaRecord {
  gpuq_event_header hdr;
  std::string json;
};

/// Every event type, once, in the order of enum gpuq_event_type: its ABI
/// value, its name (the `type` label of gpuq_events_total; stable), the
/// alternative of Event that holds it, and the smallest record Decode accepts
/// (a queue_create record from before doorbell_handle was appended is valid,
/// a queue_destroy record from before write_index).
/// Event, TypeOf, EventTypeName, MinSize and Decode are generated from it, so
/// a new type is one line here, its struct in abi.h and its handler in the
/// model (Model::On, which fails to compile without one). Records with a
/// variable payload (cgroup path, container metadata) have a decoded type of
/// their own and an EventCodec specialization in event.cc.
/// A doorbell count of ABI minor 0 or 1 ends before the extended kernel
/// dispatches (GPUQ_PACKET_EXT_DISPATCH, minor 2): read as 0.
inline constexpr size_t kDoorbellCountMinSize =
    offsetof(gpuq_doorbell_count_record, by_packet[GPUQ_PACKET_EXT_DISPATCH]);

#define GPUQ_EVENT_TYPES(X)                                                 \
  X(GPUQ_EV_QUEUE_CREATE, "queue_create", gpuq_queue_create_event,          \
    offsetof(gpuq_queue_create_event, doorbell_handle))                     \
  X(GPUQ_EV_QUEUE_DESTROY, "queue_destroy", gpuq_queue_destroy_event,       \
    offsetof(gpuq_queue_destroy_event, write_index))                        \
  X(GPUQ_EV_PROCESS_EXIT, "process_exit", gpuq_process_exit_event,          \
    sizeof(gpuq_process_exit_event))                                        \
  X(GPUQ_EV_QUEUE_CREATE_FAILED, "queue_create_failed",                     \
    gpuq_queue_create_failed_event, sizeof(gpuq_queue_create_failed_event)) \
  X(GPUQ_EV_GPU_INFO, "gpu_info", gpuq_gpu_info_record,                     \
    offsetof(gpuq_gpu_info_record, simd_per_cu))                            \
  X(GPUQ_EV_CGROUP_PATH, "cgroup_path", CgroupPathRecord,                   \
    sizeof(gpuq_cgroup_path_record))                                        \
  X(GPUQ_EV_CONTAINER_META, "container_meta", ContainerMetaRecord,          \
    sizeof(gpuq_container_meta_record))                                     \
  X(GPUQ_EV_RUNLIST, "runlist", gpuq_runlist_event,                         \
    offsetof(gpuq_runlist_event, processes))                                \
  X(GPUQ_EV_EVICTION, "eviction", gpuq_eviction_event,                      \
    sizeof(gpuq_eviction_event))                                            \
  X(GPUQ_EV_QUEUE_SAMPLE, "queue_sample", gpuq_queue_sample_record,         \
    offsetof(gpuq_queue_sample_record, write_ptr))                          \
  X(GPUQ_EV_DOORBELL_COUNT, "doorbell_count", gpuq_doorbell_count_record,   \
    kDoorbellCountMinSize)                                                  \
  X(GPUQ_EV_QUEUE_UPDATE, "queue_update", gpuq_queue_update_event,          \
    sizeof(gpuq_queue_update_event))                                        \
  X(GPUQ_EV_QUEUE_CU_MASK, "queue_cu_mask", gpuq_queue_cu_mask_event,       \
    sizeof(gpuq_queue_cu_mask_event))                                       \
  X(GPUQ_EV_SOURCE_DROPS, "source_drops", gpuq_source_drops_record,         \
    sizeof(gpuq_source_drops_record))                                       \
  X(GPUQ_EV_PROCESS_KNOBS, "process_knobs", gpuq_process_knobs_record,      \
    sizeof(gpuq_process_knobs_record))

namespace internal {
// The list's X() leaves a comma before every type; `void` takes the first.
template <typename Void, typename... Types>
struct VariantOfList {
  using type = std::variant<Types...>;
};
}  // namespace internal

/// One decoded event. The header is inside each alternative, as in the ABI.
/// Thread-safety: a plain value.
#define GPUQ_EVENT_ALTERNATIVE(value, name, Type, min_size) , Type
using Event = internal::VariantOfList<void GPUQ_EVENT_TYPES(
    GPUQ_EVENT_ALTERNATIVE)>::type;
#undef GPUQ_EVENT_ALTERNATIVE

/// The ABI type (enum gpuq_event_type) of an alternative of Event.
template <typename T>
constexpr uint16_t TypeOf();
#define GPUQ_EVENT_TYPE_OF(value, name, Type, min_size) \
  template <>                                           \
  constexpr uint16_t TypeOf<Type>() {                   \
    return value;                                       \
  }
GPUQ_EVENT_TYPES(GPUQ_EVENT_TYPE_OF)
#undef GPUQ_EVENT_TYPE_OF

/// The header of any decoded event.
const gpuq_event_header& Header(const Event& event);

/// Stable lower-case name of an event type ("queue_create", ...), the
/// `type` label of gpuq_events_total. "invalid" for out-of-range values.
const char* EventTypeName(uint16_t type);

/// Whether records of `type` carry a variable payload after their ABI
/// struct (cgroup paths, container metadata): their size is at least the
/// struct's, not equal to it.
bool HasPayload(uint16_t type);

enum class DecodeStatus {
  kOk,
  kTruncated,    ///< fewer bytes than the header's size says
  kBadSize,      ///< size smaller than the type's struct or not a multiple of 8
  kUnknownType,  ///< type outside 1..GPUQ_EV__MAX-1
};

/// Decodes one record at `data` (len bytes available). On kOk, `*consumed`
/// is the record's size. Never reads past `len`.
DecodeStatus Decode(const void* data, size_t len, Event* out, size_t* consumed);

/// Serializes an event back to its ABI bytes (for capture files).
std::string Encode(const Event& event);

const char* DecodeStatusName(DecodeStatus status);

/// An event's comm field as a string (NUL-terminated, or all
/// GPUQ_COMM_LEN bytes when the kernel filled it).
std::string CommOf(const char (&comm)[GPUQ_COMM_LEN]);

}  // namespace gpuq
