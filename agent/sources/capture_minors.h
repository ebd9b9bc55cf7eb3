// The size in bytes of every record type at every minor of GPUQ_ABI_VERSION
// 1 (gpuq_capture_header.abi_minor), indexed [minor][enum gpuq_event_type].
// What captures hold, so the agent's (the BPF side never reads it). A row
// never changes once a capture of its minor may exist: appending a field or
// a record type bumps GPUQ_ABI_MINOR (include/gpuq/abi.h) and adds a row.
// The agent's build holds the last row to the structs of abi.h
// (sources/event.cc), tests/unit/abi_minor_test.cc holds every row to the
// layout its minor was released with, and the capture reader holds each
// record of a numbered minor to its row. Records with a payload (cgroup
// path, container metadata) list their fixed part. 0: no fixed size (minor
// 0) or no such type at that minor.
#pragma once

#include <gpuq/abi.h>

#include <array>
#include <cstdint>

namespace gpuq {

using RecordSizes = std::array<uint16_t, GPUQ_EV__MAX>;

inline constexpr std::array<RecordSizes, GPUQ_ABI_MINOR + 1>
    kRecordSizesByMinor = {{
        // 0: sizes not fixed (at least the decoder's smallest)
        {},
        // 1
        {
            0,    // GPUQ_EV_INVALID
            128,  // GPUQ_EV_QUEUE_CREATE
            64,   // GPUQ_EV_QUEUE_DESTROY
            48,   // GPUQ_EV_PROCESS_EXIT
            64,   // GPUQ_EV_QUEUE_CREATE_FAILED
            120,  // GPUQ_EV_GPU_INFO
            40,   // GPUQ_EV_CGROUP_PATH, then the path
            40,   // GPUQ_EV_CONTAINER_META, then the JSON
            96,   // GPUQ_EV_RUNLIST
            64,   // GPUQ_EV_EVICTION
            80,   // GPUQ_EV_QUEUE_SAMPLE
            88,   // GPUQ_EV_DOORBELL_COUNT
            64,   // GPUQ_EV_QUEUE_UPDATE
            176,  // GPUQ_EV_QUEUE_CU_MASK
            88,   // GPUQ_EV_SOURCE_DROPS
        },
        // 2: doorbell_count has GPUQ_PACKET_EXT_DISPATCH, barrier_dispatches
        {
            0,    // GPUQ_EV_INVALID
            128,  // GPUQ_EV_QUEUE_CREATE
            64,   // GPUQ_EV_QUEUE_DESTROY
            48,   // GPUQ_EV_PROCESS_EXIT
            64,   // GPUQ_EV_QUEUE_CREATE_FAILED
            120,  // GPUQ_EV_GPU_INFO
            40,   // GPUQ_EV_CGROUP_PATH, then the path
            40,   // GPUQ_EV_CONTAINER_META, then the JSON
            96,   // GPUQ_EV_RUNLIST
            64,   // GPUQ_EV_EVICTION
            80,   // GPUQ_EV_QUEUE_SAMPLE
            104,  // GPUQ_EV_DOORBELL_COUNT
            64,   // GPUQ_EV_QUEUE_UPDATE
            176,  // GPUQ_EV_QUEUE_CU_MASK
            88,   // GPUQ_EV_SOURCE_DROPS
        },
        // 3: GPUQ_EV_PROCESS_KNOBS
        {
            0,    // GPUQ_EV_INVALID
            128,  // GPUQ_EV_QUEUE_CREATE
            64,   // GPUQ_EV_QUEUE_DESTROY
            48,   // GPUQ_EV_PROCESS_EXIT
            64,   // GPUQ_EV_QUEUE_CREATE_FAILED
            120,  // GPUQ_EV_GPU_INFO
            40,   // GPUQ_EV_CGROUP_PATH, then the path
            40,   // GPUQ_EV_CONTAINER_META, then the JSON
            96,   // GPUQ_EV_RUNLIST
            64,   // GPUQ_EV_EVICTION
            80,   // GPUQ_EV_QUEUE_SAMPLE
            104,  // GPUQ_EV_DOORBELL_COUNT
            64,   // GPUQ_EV_QUEUE_UPDATE
            176,  // GPUQ_EV_QUEUE_CU_MASK
            88,   // GPUQ_EV_SOURCE_DROPS
            424,  // GPUQ_EV_PROCESS_KNOBS
        },
        // 4: creates and destroys may be _F_RECOVERED (sizes as in 3)
        {
            0,    // GPUQ_EV_INVALID
            128,  // GPUQ_EV_QUEUE_CREATE
            64,   // GPUQ_EV_QUEUE_DESTROY
            48,   // GPUQ_EV_PROCESS_EXIT
            64,   // GPUQ_EV_QUEUE_CREATE_FAILED
            120,  // GPUQ_EV_GPU_INFO
            40,   // GPUQ_EV_CGROUP_PATH, then the path
            40,   // GPUQ_EV_CONTAINER_META, then the JSON
            96,   // GPUQ_EV_RUNLIST
            64,   // GPUQ_EV_EVICTION
            80,   // GPUQ_EV_QUEUE_SAMPLE
            104,  // GPUQ_EV_DOORBELL_COUNT
            64,   // GPUQ_EV_QUEUE_UPDATE
            176,  // GPUQ_EV_QUEUE_CU_MASK
            88,   // GPUQ_EV_SOURCE_DROPS
            424,  // GPUQ_EV_PROCESS_KNOBS
        },
    }};

}  // namespace gpuq
