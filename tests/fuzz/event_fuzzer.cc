// libFuzzer harness: the event decoder (sources/event.cc), which reads
// records from the BPF ring buffer and from captures. Input: records back to
// back, as in a capture after its header. Decode() must never read past the
// bytes it is given, and every record it accepts must encode back to a
// record that decodes to the same event.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sources/event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t offset = 0;
  while (offset < size) {
    // An exact-size copy, so ASan sees any read past the record's bytes.
    const size_t len = size - offset;
    char* copy = static_cast<char*>(std::malloc(len));
    std::memcpy(copy, data + offset, len);
    gpuq::Event event;
    size_t consumed = 0;
    const gpuq::DecodeStatus status =
        gpuq::Decode(copy, len, &event, &consumed);
    std::free(copy);
    (void)gpuq::DecodeStatusName(status);
    if (status != gpuq::DecodeStatus::kOk) break;
    if (consumed == 0 || consumed > len) std::abort();
    const uint16_t type = gpuq::Header(event).type;
    (void)gpuq::EventTypeName(type);

    // Encode -> Decode -> Encode is stable.
    const std::string bytes = gpuq::Encode(event);
    gpuq::Event again;
    size_t again_consumed = 0;
    if (gpuq::Decode(bytes.data(), bytes.size(), &again, &again_consumed) !=
            gpuq::DecodeStatus::kOk ||
        again_consumed != bytes.size() || gpuq::Encode(again) != bytes) {
      std::abort();
    }
    offset += consumed;
  }
  return 0;
}
