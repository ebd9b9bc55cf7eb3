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

/// One decoded event. The header is inside each alternative, as in the ABI.
/// Thread-safety: a plain value.
using Event =
    std::variant<gpuq_queue_create_event, gpuq_queue_destroy_event,
                 gpuq_process_exit_event, gpuq_queue_create_failed_event,
                 gpuq_gpu_info_record, CgroupPathRecord, ContainerMetaRecord,
                 gpuq_runlist_event, gpuq_eviction_event,
                 gpuq_queue_sample_record, gpuq_doorbell_count_record>;

/// The header of any decoded event.
const gpuq_event_header& Header(const Event& event);

/// Stable lower-case name of an event type ("queue_create", ...), the
/// `type` label of gpuq_events_total. "invalid" for out-of-range values.
const char* EventTypeName(uint16_t type);

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

}  // namespace gpuq
