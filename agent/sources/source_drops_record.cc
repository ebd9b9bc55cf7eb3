#include "sources/source_drops_record.h"

namespace gpuq {

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
