// A capture's record of the events its recording lost (include/gpuq/abi.h's
// gpuq_source_drops_record), to and from the counts it stands for: the one
// place its seven reasons are mapped.
#pragma once

#include <cstdint>

#include "sources/event_source.h"

namespace gpuq {

/// The record `record` ends a capture with: `source`'s drops and the
/// doorbells the doorbell map had no room for, at `ts_ns`.
gpuq_source_drops_record SourceDropsRecord(const SourceDrops& source,
                                           uint64_t doorbell_map_full,
                                           uint64_t ts_ns);

/// `now`'s counts less `before`'s (each at least 0), at `now`'s time: what
/// was lost between the two.
gpuq_source_drops_record SourceDropsSince(
    const gpuq_source_drops_record& now,
    const gpuq_source_drops_record& before);

/// Adds a replayed capture's record to the replay's own drops.
void AddSourceDropsRecord(const gpuq_source_drops_record& record,
                          SourceDrops* source, uint64_t* doorbell_map_full);

}  // namespace gpuq
