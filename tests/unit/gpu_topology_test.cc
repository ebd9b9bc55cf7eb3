// Tests ReadGpuTopology against the fixture tree (tests/fixtures/root) and
// against broken layouts built in a temporary directory.
#include "resolver/gpu_topology.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/host_paths.h"
#include "test_support.h"

#ifndef GPUQ_FIXTURE_ROOT
#error "GPUQ_FIXTURE_ROOT must be the absolute path of tests/fixtures/root"
#endif

namespace gpuq {
namespace {

// Writes a minimal GPU node `n` under <kfd>/topology/nodes.
void WriteGpuNode(const TempDir& kfd, int n, const std::string& gpu_id,
                  const std::string& properties) {
  const std::string dir = "topology/nodes/" + std::to_string(n);
  kfd.Write(dir + "/gpu_id", gpu_id + "\n");
  kfd.Write(dir + "/name", "gfx942\n");
  kfd.Write(dir + "/properties", properties);
}

void WriteCpuNode(const TempDir& kfd, int n) {
  const std::string dir = "topology/nodes/" + std::to_string(n);
  kfd.Write(dir + "/gpu_id", "0\n");
  kfd.Write(dir + "/name", "\n");
  kfd.Write(dir + "/properties", "cpu_cores_count 8\nsimd_count 0\n");
}

TEST(GpuTopologyTest, ReadsBothGpuNodesOfTheFixtureAndSkipsTheCpuNode) {
  std::vector<GpuNode> nodes;
  std::string error;
  ASSERT_TRUE(ReadGpuTopology(FixtureKfd(), &nodes, &error)) << error;
  EXPECT_EQ(error, "");
  ASSERT_EQ(nodes.size(), 2u);

  const GpuNode& a = nodes[0];
  EXPECT_EQ(a.node, 1u);
  EXPECT_EQ(a.gpu_id, 45412u);
  EXPECT_EQ(a.name, "ip discovery");  // the real MI300 name, space included
  EXPECT_EQ(a.vendor_id, 4098u);
  EXPECT_EQ(a.device_id, 29857u);
  EXPECT_EQ(a.location_id, 4352u);
  EXPECT_EQ(a.domain, 0u);
  EXPECT_EQ(a.drm_render_minor, 128u);
  EXPECT_EQ(a.gfx_target_version, 90402u);
  EXPECT_EQ(a.unique_id, 4208873373437297834u);
  EXPECT_EQ(a.simd_count, 1216u);
  EXPECT_EQ(a.num_xcc, 8u);
  EXPECT_EQ(a.PciAddress(), "0000:11:00.0");

  const GpuNode& b = nodes[1];
  EXPECT_EQ(b.node, 2u);
  EXPECT_EQ(b.gpu_id, 52963u);
  EXPECT_EQ(b.name, "ip discovery");
  EXPECT_EQ(b.vendor_id, 4098u);
  EXPECT_EQ(b.device_id, 29857u);
  EXPECT_EQ(b.location_id, 49664u);
  EXPECT_EQ(b.domain, 0u);
  EXPECT_EQ(b.drm_render_minor, 136u);
  EXPECT_EQ(b.gfx_target_version, 90402u);
  EXPECT_EQ(b.unique_id, 17230282187963629826u);  // above 2^63
  EXPECT_EQ(b.simd_count, 1216u);
  EXPECT_EQ(b.num_xcc, 8u);
  EXPECT_EQ(b.PciAddress(), "0000:c2:00.0");
}

TEST(GpuTopologyTest, PciAddressSplitsDevfnAndKeepsWideDomains) {
  GpuNode n;
  n.domain = 0x10000;  // VMD domains have five hex digits
  n.location_id = (0x03 << 8) | (5 << 3) | 3;
  EXPECT_EQ(n.PciAddress(), "10000:03:05.3");

  n.domain = 0x1;
  n.location_id = 0xffff;
  EXPECT_EQ(n.PciAddress(), "0001:ff:1f.7");
}

TEST(GpuTopologyTest, PciAddressIgnoresPartitionIdAboveBit16) {
  // kfd_topology_add_device() ORs a partition's node_id in at bit 28 on some
  // kernels; it must not change the bus.
  GpuNode n;
  n.location_id = (3u << 28) | 0xc200;
  EXPECT_EQ(n.PciAddress(), "0000:c2:00.0");
}

TEST(GpuTopologyTest, MissingTopologyDirectoryIsAnError) {
  TempDir kfd;  // exists, but has no topology/
  std::vector<GpuNode> nodes;
  std::string error;
  EXPECT_FALSE(ReadGpuTopology(kfd.path(), &nodes, &error));
  EXPECT_NE(error.find(kfd.path() + "/topology/nodes"), std::string::npos)
      << error;

  error.clear();
  EXPECT_FALSE(ReadGpuTopology("/nonexistent/gpuq/kfd", &nodes, &error));
  EXPECT_FALSE(error.empty());
}

TEST(GpuTopologyTest, MalformedPropertiesLineIsAnErrorNamingFileAndLine) {
  TempDir kfd;
  WriteCpuNode(kfd, 0);
  WriteGpuNode(kfd, 1, "45412", "simd_count 1216\nvendor_id 0x1002\n");
  std::vector<GpuNode> nodes;
  std::string error;
  EXPECT_FALSE(ReadGpuTopology(kfd.path(), &nodes, &error));
  const std::string file = kfd.path() + "/topology/nodes/1/properties";
  EXPECT_NE(error.find(file + ":2"), std::string::npos) << error;
  EXPECT_NE(error.find("vendor_id 0x1002"), std::string::npos) << error;
}

TEST(GpuTopologyTest, OtherMalformedPropertiesAreErrors) {
  const char* const kBad[] = {
      "simd_count\n",                      // no value
      " 12\n",                             // no key
      "simd_count -1\n",                   // signed
      "simd_count 12 13\n",                // trailing junk
      "simd_count 4294967296\n",           // a 32-bit key out of range
      "unique_id 18446744073709551616\n",  // overflows 64 bits
  };
  for (const char* bad : kBad) {
    TempDir kfd;
    WriteGpuNode(kfd, 1, "45412", bad);
    std::vector<GpuNode> nodes;
    std::string error;
    EXPECT_FALSE(ReadGpuTopology(kfd.path(), &nodes, &error)) << bad;
    EXPECT_NE(error.find("nodes/1/properties:1"), std::string::npos) << error;
  }
}

TEST(GpuTopologyTest, MissingKeysStayZeroAndUnknownKeysAreIgnored) {
  TempDir kfd;
  WriteGpuNode(kfd, 0, "7", "future_key 99\n\ndevice_id 29857\n");
  std::vector<GpuNode> nodes;
  std::string error;
  ASSERT_TRUE(ReadGpuTopology(kfd.path(), &nodes, &error)) << error;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].gpu_id, 7u);
  EXPECT_EQ(nodes[0].name, "gfx942");
  EXPECT_EQ(nodes[0].device_id, 29857u);
  EXPECT_EQ(nodes[0].vendor_id, 0u);
  EXPECT_EQ(nodes[0].unique_id, 0u);
  EXPECT_EQ(nodes[0].num_xcc, 0u);
}

TEST(GpuTopologyTest, SortsNumericallyAndIgnoresNonNumericEntries) {
  TempDir kfd;
  WriteGpuNode(kfd, 10, "1010", "simd_count 4\n");
  WriteGpuNode(kfd, 2, "1002", "simd_count 4\n");
  kfd.Write("topology/nodes/README", "not a node\n");
  kfd.MakeDir("topology/nodes/abc");
  std::vector<GpuNode> nodes;
  std::string error;
  ASSERT_TRUE(ReadGpuTopology(kfd.path(), &nodes, &error)) << error;
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, 2u);
  EXPECT_EQ(nodes[0].gpu_id, 1002u);
  EXPECT_EQ(nodes[1].node, 10u);
  EXPECT_EQ(nodes[1].gpu_id, 1010u);
}

TEST(GpuTopologyTest, CpuNodePropertiesAreNotParsed) {
  TempDir kfd;
  kfd.Write("topology/nodes/0/gpu_id", "0\n");
  kfd.Write("topology/nodes/0/properties", "garbage\n");
  WriteGpuNode(kfd, 1, "45412", "simd_count 4\n");
  std::vector<GpuNode> nodes;
  std::string error;
  ASSERT_TRUE(ReadGpuTopology(kfd.path(), &nodes, &error)) << error;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].gpu_id, 45412u);
}

TEST(GpuTopologyTest, VanishedNodeIsSkippedAndMissingNameIsEmpty) {
  TempDir kfd;
  kfd.MakeDir("topology/nodes/1");  // removed while we listed: no files
  kfd.Write("topology/nodes/2/gpu_id", "52963\n");
  kfd.Write("topology/nodes/2/properties", "simd_count 4\n");  // no name
  kfd.Write("topology/nodes/3/gpu_id", "1\n");  // properties gone
  std::vector<GpuNode> nodes;
  std::string error;
  ASSERT_TRUE(ReadGpuTopology(kfd.path(), &nodes, &error)) << error;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].gpu_id, 52963u);
  EXPECT_EQ(nodes[0].name, "");
}

TEST(GpuTopologyTest, UnreadableFileOtherThanMissingIsAnError) {
  TempDir kfd;
  kfd.MakeDir("topology/nodes/1/gpu_id");  // read(2) fails with EISDIR
  std::vector<GpuNode> nodes;
  std::string error;
  EXPECT_FALSE(ReadGpuTopology(kfd.path(), &nodes, &error));
  EXPECT_NE(error.find("nodes/1/gpu_id"), std::string::npos) << error;
}

TEST(GpuTopologyTest, MalformedGpuIdIsAnError) {
  TempDir kfd;
  WriteGpuNode(kfd, 1, "gpu", "simd_count 4\n");
  std::vector<GpuNode> nodes;
  std::string error;
  EXPECT_FALSE(ReadGpuTopology(kfd.path(), &nodes, &error));
  EXPECT_NE(error.find("nodes/1/gpu_id"), std::string::npos) << error;
}

GpuNode SampleNode() {
  GpuNode n;
  n.node = 2;
  n.gpu_id = 52963;
  n.name = "gfx942";
  n.vendor_id = 4098;
  n.device_id = 29857;
  n.location_id = 49664;
  n.domain = 1;
  n.drm_render_minor = 136;
  n.gfx_target_version = 90402;
  n.unique_id = 17230282187963629826u;
  n.simd_count = 1216;
  n.num_xcc = 8;
  return n;
}

TEST(GpuTopologyTest, ToRecordFillsHeaderAndFields) {
  const gpuq_gpu_info_record r = ToRecord(SampleNode());
  EXPECT_EQ(r.hdr.type, GPUQ_EV_GPU_INFO);
  EXPECT_EQ(r.hdr.size, sizeof(gpuq_gpu_info_record));
  EXPECT_EQ(r.hdr.size % 8, 0u);
  EXPECT_EQ(r.hdr.tgid, 0u);
  EXPECT_EQ(r.hdr.ts_ns, 0u);
  EXPECT_EQ(r.hdr.cgroup_id, 0u);
  EXPECT_EQ(r.hdr.process_key, 0u);
  EXPECT_EQ(r.gpu_id, 52963u);
  EXPECT_EQ(r.node, 2u);
  EXPECT_EQ(r.location_id, 49664u);
  EXPECT_EQ(r.domain, 1u);
  EXPECT_EQ(r.unique_id, 17230282187963629826u);
  EXPECT_STREQ(r.name, "gfx942");
  // Bytes after the name are zero, so captures are deterministic.
  for (size_t i = std::strlen(r.name); i < sizeof(r.name); ++i) {
    EXPECT_EQ(r.name[i], '\0') << i;
  }
}

TEST(GpuTopologyTest, RecordRoundTripKeepsEveryField) {
  const GpuNode in = SampleNode();
  const GpuNode out = FromRecord(ToRecord(in));
  EXPECT_EQ(out.node, in.node);
  EXPECT_EQ(out.gpu_id, in.gpu_id);
  EXPECT_EQ(out.name, in.name);
  EXPECT_EQ(out.vendor_id, in.vendor_id);
  EXPECT_EQ(out.device_id, in.device_id);
  EXPECT_EQ(out.location_id, in.location_id);
  EXPECT_EQ(out.domain, in.domain);
  EXPECT_EQ(out.drm_render_minor, in.drm_render_minor);
  EXPECT_EQ(out.gfx_target_version, in.gfx_target_version);
  EXPECT_EQ(out.unique_id, in.unique_id);
  EXPECT_EQ(out.simd_count, in.simd_count);
  EXPECT_EQ(out.num_xcc, in.num_xcc);
  EXPECT_EQ(out.PciAddress(), in.PciAddress());
}

TEST(GpuTopologyTest, ToRecordTruncatesLongNames) {
  GpuNode n = SampleNode();
  n.name = std::string(GPUQ_GPU_NAME_LEN + 10, 'x');
  const gpuq_gpu_info_record r = ToRecord(n);
  EXPECT_EQ(r.name[GPUQ_GPU_NAME_LEN - 1], '\0');
  EXPECT_EQ(std::strlen(r.name), GPUQ_GPU_NAME_LEN - 1u);
  EXPECT_EQ(FromRecord(r).name, std::string(GPUQ_GPU_NAME_LEN - 1, 'x'));

  n.name = std::string(GPUQ_GPU_NAME_LEN - 1, 'y');  // fits exactly
  EXPECT_EQ(FromRecord(ToRecord(n)).name, n.name);
}

TEST(GpuTopologyTest, FromRecordStopsAtTheArrayWithoutNul) {
  // A corrupt capture file may hold a name with no NUL.
  gpuq_gpu_info_record r = ToRecord(SampleNode());
  std::memset(r.name, 'z', sizeof(r.name));
  EXPECT_EQ(FromRecord(r).name, std::string(GPUQ_GPU_NAME_LEN, 'z'));
}

GpuNode NodeAt(uint32_t node, uint32_t gpu_id, uint32_t domain,
               uint32_t location_id) {
  GpuNode n;
  n.node = node;
  n.gpu_id = gpu_id;
  n.domain = domain;
  n.location_id = location_id;
  return n;
}

TEST(GpuTopologyTest, PartitionIdFromFunctionBitsOrBit28) {
  EXPECT_EQ(NodeAt(1, 1, 0, 0xc100).PartitionId(), 0u);  // 0000:c1:00.0
  EXPECT_EQ(NodeAt(2, 2, 0, 0xc105).PartitionId(), 5u);  // mainline: devfn
  EXPECT_EQ(NodeAt(3, 3, 0, (3u << 28) | 0xc100).PartitionId(), 3u);
}

// amd-smi's index, what AMD's device-metrics-exporter labels gpu_id: KFD
// node order stably sorted by PCI address, so KFD's node numbers and gpu_id
// hashes say nothing about it.
TEST(GpuTopologyTest, AmdSmiIndexesArePciOrderWithPartitionsTogether) {
  std::map<uint32_t, GpuNode> gpus;
  for (GpuNode n : {NodeAt(1, 900, 0, 0xc100), NodeAt(2, 100, 0, 0x0300),
                    NodeAt(3, 500, 1, 0x0100), NodeAt(4, 300, 0, 0x4100)}) {
    gpus[n.gpu_id] = n;
  }
  const std::map<uint32_t, uint32_t> want = {
      {100, 0}, {300, 1}, {900, 2}, {500, 3}};
  EXPECT_EQ(AmdSmiIndexes(gpus), want);
}

TEST(GpuTopologyTest, AmdSmiIndexesOfCpxPartitionsFollowTheirGpu) {
  // Two MI300X in CPX, partitions as KFD nodes 1-8 and 9-16 (devfn .0-.7),
  // the second GPU at the lower bus; with the partition at bit 28 instead,
  // the KFD node order keeps them in order.
  std::map<uint32_t, GpuNode> gpus;
  for (uint32_t p = 0; p < 8; ++p) {
    GpuNode a = NodeAt(1 + p, 1000 + p, 0, 0xc100 | p);
    GpuNode b = NodeAt(9 + p, 2000 + p, 0, (p << 28) | 0x0500);
    gpus[a.gpu_id] = a;
    gpus[b.gpu_id] = b;
  }
  const std::map<uint32_t, uint32_t> index = AmdSmiIndexes(gpus);
  for (uint32_t p = 0; p < 8; ++p) {
    EXPECT_EQ(index.at(2000 + p), p) << "partition " << p << " of 0000:05:00";
    EXPECT_EQ(index.at(1000 + p), 8 + p)
        << "partition " << p << " of 0000:c1:00";
    EXPECT_EQ(gpus.at(1000 + p).PartitionId(), p);
    EXPECT_EQ(gpus.at(2000 + p).PartitionId(), p);
  }
}

TEST(GpuTopologyTest, PhysicalGpusGroupCpxAndDpxPartitionsByPciDevice) {
  // A GPU in CPX (8 partitions, devfn .0-.7), one in DPX with the partition
  // at bit 28 (2 nodes at 0000:05:00.0), and an unpartitioned one between
  // them by PCI address, in another domain's order.
  std::map<uint32_t, GpuNode> gpus;
  for (uint32_t p = 0; p < 8; ++p) {
    GpuNode n = NodeAt(1 + p, 1000 + p, 0, 0xc100 | p);
    gpus[n.gpu_id] = n;
  }
  for (uint32_t p = 0; p < 2; ++p) {
    GpuNode n = NodeAt(9 + p, 2000 + p, 0, (p << 28) | 0x0500);
    gpus[n.gpu_id] = n;
  }
  GpuNode single = NodeAt(11, 3000, 0, 0x6500);
  gpus[single.gpu_id] = single;
  const std::vector<PhysicalGpu> physical = PhysicalGpus(gpus);
  ASSERT_EQ(physical.size(), 3u);
  EXPECT_EQ(physical[0].index, 0u);
  EXPECT_EQ(physical[0].pci, "0000:05:00");
  EXPECT_EQ(physical[0].gpu_ids, (std::vector<uint32_t>{2000, 2001}));
  EXPECT_EQ(physical[1].pci, "0000:65:00");
  EXPECT_EQ(physical[1].gpu_ids, (std::vector<uint32_t>{3000}));
  EXPECT_EQ(physical[2].index, 2u);
  EXPECT_EQ(physical[2].pci, "0000:c1:00");
  EXPECT_EQ(
      physical[2].gpu_ids,
      (std::vector<uint32_t>{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007}));
  const std::map<uint32_t, uint32_t> index = PhysicalGpuIndexes(physical);
  EXPECT_EQ(index.size(), gpus.size());
  EXPECT_EQ(index.at(2001), 0u);
  EXPECT_EQ(index.at(3000), 1u);
  EXPECT_EQ(index.at(1007), 2u);
  // A wide domain stays in the address; the function never does.
  GpuNode wide = NodeAt(12, 4000, 0, 0x0b13);
  wide.domain = 0x10002;
  EXPECT_EQ(wide.PhysicalPci(), "10002:0b:02");
}

TEST(GpuTopologyTest, NoGpusNoPhysicalGpus) {
  EXPECT_TRUE(PhysicalGpus({}).empty());
}

}  // namespace
}  // namespace gpuq
