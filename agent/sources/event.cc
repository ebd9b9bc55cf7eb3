#include "sources/event.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <utility>

#include "sources/capture_minors.h"

namespace gpuq {
namespace {

// The list names every value of enum gpuq_event_type between INVALID and
// __MAX, in order, so an ABI type without a decoder (or a decoder of a value
// the ABI lacks) fails the build.
#define GPUQ_EVENT_VALUE(value, name, Type, min_size) value,
constexpr uint16_t kListed[] = {GPUQ_EVENT_TYPES(GPUQ_EVENT_VALUE)};
#undef GPUQ_EVENT_VALUE
constexpr bool ListsEveryType() {
  if (std::size(kListed) != GPUQ_EV__MAX - 1) return false;
  for (size_t i = 0; i < std::size(kListed); ++i) {
    if (kListed[i] != i + 1) return false;
  }
  return true;
}
static_assert(ListsEveryType(),
              "GPUQ_EVENT_TYPES lists enum gpuq_event_type in order");

// The fixed part each type puts on the wire: its ABI struct.
template <typename T>
struct WireStruct {
  using type = T;
};
template <>
struct WireStruct<CgroupPathRecord> {
  using type = gpuq_cgroup_path_record;
};
template <>
struct WireStruct<ContainerMetaRecord> {
  using type = gpuq_container_meta_record;
};

// The current minor's row of kRecordSizesByMinor is the structs as they are:
// a struct that grows, or a new type, fails the build until it has a new
// minor and row (docs/abi.md).
#define GPUQ_EVENT_SIZE_IN_ROW(value, name, Type, min_size)               \
  static_assert(kRecordSizesByMinor[GPUQ_ABI_MINOR][value] ==             \
                    sizeof(WireStruct<Type>::type),                       \
                "kRecordSizesByMinor[GPUQ_ABI_MINOR] is not the size of " \
                "the " name                                               \
                " record: add a minor (sources/capture_minors.h)");
GPUQ_EVENT_TYPES(GPUQ_EVENT_SIZE_IN_ROW)
#undef GPUQ_EVENT_SIZE_IN_ROW

// Minimum record size of each type: its ABI struct.
size_t MinSize(uint16_t type) {
  switch (type) {
#define GPUQ_EVENT_MIN_SIZE(value, name, Type, min_size) \
  case value:                                            \
    return min_size;
    GPUQ_EVENT_TYPES(GPUQ_EVENT_MIN_SIZE)
#undef GPUQ_EVENT_MIN_SIZE
    default:
      return 0;
  }
}

size_t AlignUp8(size_t n) { return (n + 7) & ~size_t{7}; }

// Decoding and encoding of one type. A fixed record is copied as it is
// (fields appended after the writer's version stay zero); the records with a
// variable payload specialize it below.
template <typename T>
struct EventCodec {
  // `size` is the record's, at least MinSize and within the buffer.
  static DecodeStatus Decode(const void* data, size_t size, Event* out) {
    T value{};
    std::memcpy(&value, data, std::min(size, sizeof(T)));
    *out = value;
    return DecodeStatus::kOk;
  }
  static std::string Encode(T copy) {
    copy.hdr.type = TypeOf<T>();
    copy.hdr.size = sizeof(T);
    return std::string(reinterpret_cast<const char*>(&copy), sizeof(T));
  }
};

// A fixed record `Wire` followed by `len_field` bytes of payload, padded to
// 8 bytes; decoded into `Decoded{hdr, payload}`.
template <typename Decoded, typename Wire, uint32_t Wire::*len_field,
          std::string Decoded::*payload, uint32_t max_len>
struct PayloadCodec {
  static DecodeStatus Decode(const void* data, size_t size, Event* out) {
    Wire rec;
    std::memcpy(&rec, data, sizeof(rec));
    if (rec.*len_field > max_len || sizeof(rec) + rec.*len_field > size) {
      return DecodeStatus::kBadSize;
    }
    const char* bytes = static_cast<const char*>(data) + sizeof(rec);
    Decoded decoded{rec.hdr, std::string(bytes, rec.*len_field)};
    *out = std::move(decoded);
    return DecodeStatus::kOk;
  }
  static std::string Encode(const Decoded& e) {
    Wire rec{};
    rec.hdr = e.hdr;
    rec.*len_field = static_cast<uint32_t>((e.*payload).size());
    const size_t size = AlignUp8(sizeof(rec) + (e.*payload).size());
    rec.hdr.type = TypeOf<Decoded>();
    rec.hdr.size = static_cast<uint16_t>(size);
    std::string out(size, '\0');
    std::memcpy(out.data(), &rec, sizeof(rec));
    std::memcpy(out.data() + sizeof(rec), (e.*payload).data(),
                (e.*payload).size());
    return out;
  }
};

template <>
struct EventCodec<CgroupPathRecord>
    : PayloadCodec<CgroupPathRecord, gpuq_cgroup_path_record,
                   &gpuq_cgroup_path_record::path_len, &CgroupPathRecord::path,
                   GPUQ_CGROUP_PATH_MAX> {};

template <>
struct EventCodec<ContainerMetaRecord>
    : PayloadCodec<ContainerMetaRecord, gpuq_container_meta_record,
                   &gpuq_container_meta_record::payload_len,
                   &ContainerMetaRecord::json, GPUQ_CONTAINER_META_MAX> {};

}  // namespace

bool HasPayload(uint16_t type) {
  switch (type) {
#define GPUQ_EVENT_HAS_PAYLOAD(value, name, Type, min_size) \
  case value:                                               \
    return !std::is_same_v<WireStruct<Type>::type, Type>;
    GPUQ_EVENT_TYPES(GPUQ_EVENT_HAS_PAYLOAD)
#undef GPUQ_EVENT_HAS_PAYLOAD
    default:
      return false;
  }
}

const gpuq_event_header& Header(const Event& event) {
  return std::visit(
      [](const auto& e) -> const gpuq_event_header& { return e.hdr; }, event);
}

const char* EventTypeName(uint16_t type) {
  switch (type) {
#define GPUQ_EVENT_NAME(value, name, Type, min_size) \
  case value:                                        \
    return name;
    GPUQ_EVENT_TYPES(GPUQ_EVENT_NAME)
#undef GPUQ_EVENT_NAME
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

  DecodeStatus status = DecodeStatus::kUnknownType;  // MinSize knew it
  switch (hdr.type) {
#define GPUQ_EVENT_DECODE(value, name, Type, min_size)      \
  case value:                                               \
    status = EventCodec<Type>::Decode(data, hdr.size, out); \
    break;
    GPUQ_EVENT_TYPES(GPUQ_EVENT_DECODE)
#undef GPUQ_EVENT_DECODE
  }
  if (status == DecodeStatus::kOk) *consumed = hdr.size;
  return status;
}

// Encode writes the type of the alternative, so a header the caller left
// inconsistent cannot produce a record that reads back as another type.
std::string Encode(const Event& event) {
  return std::visit(
      [](const auto& e) -> std::string {
        return EventCodec<std::decay_t<decltype(e)>>::Encode(e);
      },
      event);
}

std::string CommOf(const char (&comm)[GPUQ_COMM_LEN]) {
  return std::string(comm, strnlen(comm, GPUQ_COMM_LEN));
}

}  // namespace gpuq
