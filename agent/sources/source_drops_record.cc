#include "sources/source_drops_record.h"

namespace gpuq {
namespace {

using Count = __u64 gpuq_source_drops_record::*;
constexpr Count kCounts[] = {
    &gpuq_source_drops_record::ringbuf_full,
    &gpuq_source_drops_record::map_full,
    &gpuq_source_drops_record::decode_error,
    &gpuq_source_drops_record::prog_skipped,
    &gpuq_source_drops_record::kfd_exit_skipped,
    &gpuq_source_drops_record::args_unreadable,
    &gpuq_source_drops_record::doorbell_map_full,
};
static_assert(sizeof(kCounts) / sizeof(kCounts[0]) * 8 + 32 ==
                  sizeof(gpuq_source_drops_record),
              "every count of the record is listed");

}  // namespace

gpuq_source_drops_record SourceDropsRecord(const SourceDrops& source,
                                           uint64_t doorbell_map_full,
                                           uint64_t ts_ns) {
  gpuq_source_drops_record r{};
  r.hdr.type = GPUQ_EV_SOURCE_DROPS;
  r.hdr.size = sizeof(r);
  r.hdr.ts_ns = ts_ns;
  r.ringbuf_full = source.ringbuf_full;
  r.map_full = source.map_full;
  r.decode_error = source.decode_error;
  r.prog_skipped = source.prog_skipped;
  r.kfd_exit_skipped = source.kfd_exit_skipped;
  r.args_unreadable = source.args_unreadable;
  r.doorbell_map_full = doorbell_map_full;
  return r;
}

gpuq_source_drops_record SourceDropsSince(
    const gpuq_source_drops_record& now,
    const gpuq_source_drops_record& before) {
  gpuq_source_drops_record r = now;
  for (Count c : kCounts) r.*c = now.*c > before.*c ? now.*c - before.*c : 0;
  return r;
}

void AddSourceDropsRecord(const gpuq_source_drops_record& record,
                          SourceDrops* source, uint64_t* doorbell_map_full) {
  source->ringbuf_full += record.ringbuf_full;
  source->map_full += record.map_full;
  source->decode_error += record.decode_error;
  source->prog_skipped += record.prog_skipped;
  source->kfd_exit_skipped += record.kfd_exit_skipped;
  source->args_unreadable += record.args_unreadable;
  *doorbell_map_full += record.doorbell_map_full;
}

}  // namespace gpuq
