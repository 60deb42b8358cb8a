// Unit tests for harness/observe/cuda_devices: PCI bus ids in every spelling,
// CUDA's device order, CUDA_VISIBLE_DEVICES (indices, UUIDs with and without
// "GPU-", partial UUIDs, where the list stops), and the exact mapping by bus id.
#include "harness/observe/cuda_devices.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

// Four GPUs whose NVML order is not their bus order, of two models.
std::vector<GpuIdentity> machine() {
  return {
      {0, "GPU-aaaa1111-0000-0000-0000-000000000000", "00000000:3B:00.0", "NVIDIA A100", 0},
      {1, "GPU-bbbb2222-0000-0000-0000-000000000000", "00000000:18:00.0", "NVIDIA A100", 0},
      {2, "GPU-aaaa3333-0000-0000-0000-000000000000", "00000000:86:00.0", "NVIDIA A100", 0},
      {3, "GPU-cccc4444-0000-0000-0000-000000000000", "00000001:01:00.0", "NVIDIA A100", 0},
  };
}

TEST(DevicePci, ParsesEverySpelling) {
  auto nvml = parse_pci_bus_id("00000000:3B:00.0");
  auto cuda = parse_pci_bus_id("0000:3b:00.0");
  auto bare = parse_pci_bus_id("3b:00.0");
  ASSERT_TRUE(nvml && cuda && bare);
  EXPECT_EQ(*nvml, *cuda);
  EXPECT_EQ(*nvml, *bare);
  EXPECT_EQ(nvml->bus, 0x3bu);
  EXPECT_EQ(nvml->to_string(), "0000:3b:00.0");
  auto dom = parse_pci_bus_id("00000001:01:1f.7");
  ASSERT_TRUE(dom);
  EXPECT_EQ(dom->domain, 1u);
  EXPECT_EQ(dom->device, 0x1fu);
  EXPECT_EQ(dom->function, 7u);
  EXPECT_LT(*nvml, *dom) << "domain sorts first";
}

TEST(DevicePci, RejectsNonsense) {
  for (const char* bad :
       {"", "3b", "3b:00", "zz:00.0", "0000:3b:20.0", "0000:3b:00.8", "0000:100:00.0", "GPU-1234"})
    EXPECT_FALSE(parse_pci_bus_id(bad)) << bad;
}

TEST(DeviceOrder, DeviceOrderVariable) {
  EXPECT_EQ(parse_cuda_device_order(std::nullopt), CudaDeviceOrder::FastestFirst);
  EXPECT_EQ(parse_cuda_device_order("FASTEST_FIRST"), CudaDeviceOrder::FastestFirst);
  EXPECT_EQ(parse_cuda_device_order("PCI_BUS_ID"), CudaDeviceOrder::PciBusId);
  EXPECT_EQ(parse_cuda_device_order("bogus"), CudaDeviceOrder::FastestFirst);
}

TEST(DeviceOrder, PciBusOrderIgnoresNvmlOrder) {
  auto m = cuda_enumeration(machine(), CudaDeviceOrder::PciBusId);
  EXPECT_EQ(m.nvml_index, (std::vector<int>{1, 0, 2, 3}));
  EXPECT_TRUE(m.exact);
}

TEST(DeviceOrder, FastestFirstOnOneModelIsBusOrder) {
  auto m = cuda_enumeration(machine(), CudaDeviceOrder::FastestFirst);
  EXPECT_EQ(m.nvml_index, (std::vector<int>{1, 0, 2, 3}));
  EXPECT_TRUE(m.exact);
}

TEST(DeviceOrder, FastestFirstPutsTheFasterModelFirst) {
  auto gpus = machine();
  gpus[2].name = "NVIDIA H100";
  gpus[2].speed = 2;
  for (auto& g : gpus)
    if (g.speed == 0) g.speed = 1;
  auto m = cuda_enumeration(gpus, CudaDeviceOrder::FastestFirst);
  EXPECT_EQ(m.nvml_index, (std::vector<int>{2, 1, 0, 3}));
  EXPECT_TRUE(m.exact);
}

TEST(DeviceOrder, FastestFirstOverMixedModelsWithoutSpeedsIsFlaggedAsAGuess) {
  auto gpus = machine();
  gpus[3].name = "NVIDIA T4";
  auto m = cuda_enumeration(gpus, CudaDeviceOrder::FastestFirst);
  EXPECT_FALSE(m.exact);
  EXPECT_NE(m.note.find("PCI_BUS_ID"), std::string::npos);
  EXPECT_TRUE(cuda_enumeration(gpus, CudaDeviceOrder::PciBusId).exact);
}

TEST(DeviceOrder, UnsetMeansAllDevicesSetButEmptyMeansNone) {
  EXPECT_EQ(map_cuda_visible(machine(), std::nullopt, CudaDeviceOrder::PciBusId).nvml_index.size(),
            4u);
  EXPECT_TRUE(map_cuda_visible(machine(), "", CudaDeviceOrder::PciBusId).nvml_index.empty());
  EXPECT_TRUE(map_cuda_visible(machine(), "  ", CudaDeviceOrder::PciBusId).nvml_index.empty());
}

TEST(DeviceOrder, IndicesCountInCudaOrderNotNvmlOrder) {
  // CUDA index 0 is the lowest bus id (NVML index 1).
  auto m = map_cuda_visible(machine(), "2,0", CudaDeviceOrder::PciBusId);
  EXPECT_EQ(m.nvml_index, (std::vector<int>{2, 1}));
  EXPECT_TRUE(m.note.empty()) << m.note;
}

TEST(DeviceOrder, ListStopsAtTheFirstInvalidEntry) {
  auto m = map_cuda_visible(machine(), "0,2,-1,1", CudaDeviceOrder::PciBusId);
  EXPECT_EQ(m.nvml_index, (std::vector<int>{1, 2}));
  EXPECT_NE(m.note.find("'-1'"), std::string::npos) << m.note;
  EXPECT_EQ(map_cuda_visible(machine(), "1,7,2", CudaDeviceOrder::PciBusId).nvml_index,
            (std::vector<int>{0}));
  EXPECT_TRUE(map_cuda_visible(machine(), "x", CudaDeviceOrder::PciBusId).nvml_index.empty());
  EXPECT_EQ(map_cuda_visible(machine(), "1,,2", CudaDeviceOrder::PciBusId).nvml_index,
            (std::vector<int>{0}));
}

// The cases below are what CUDA 13 / driver 580 did on an H100 with aftermath-probe.

TEST(DeviceOrder, IndicesParseLikeStrtol) {
  auto order = CudaDeviceOrder::PciBusId;
  for (const char* v : {"0x0", "0abc", "0.9", "00", "+0", "-0", " 0", "0 "})
    EXPECT_EQ(map_cuda_visible(machine(), v, order).nvml_index, (std::vector<int>{1})) << v;
  EXPECT_TRUE(map_cuda_visible(machine(), "-1", order).nvml_index.empty());
  EXPECT_TRUE(map_cuda_visible(machine(), "+", order).nvml_index.empty());
}

TEST(DeviceOrder, TheSameDeviceTwiceTheSameWayHidesEverything) {
  auto order = CudaDeviceOrder::PciBusId;
  for (const char* v : {"0,0", "0, 0", "1,0,0", "GPU-bbbb,GPU-bbbb2"}) {
    auto m = map_cuda_visible(machine(), v, order);
    EXPECT_TRUE(m.nvml_index.empty()) << v;
    EXPECT_NE(m.note.find("names a device twice"), std::string::npos) << m.note;
  }
  // Named once by index and once by UUID: the list just ends there.
  EXPECT_EQ(map_cuda_visible(machine(), "0,GPU-bbbb,2", order).nvml_index, (std::vector<int>{1}));
  EXPECT_EQ(map_cuda_visible(machine(), "GPU-bbbb,0", order).nvml_index, (std::vector<int>{1}));
}

TEST(DeviceOrder, UuidsNeedTheirPrefixAndMayBeShortOrLong) {
  auto order = CudaDeviceOrder::PciBusId;
  const std::string full = "GPU-cccc4444-0000-0000-0000-000000000000";
  EXPECT_EQ(map_cuda_visible(machine(), full, order).nvml_index, (std::vector<int>{3}));
  EXPECT_EQ(map_cuda_visible(machine(), full + "0", order).nvml_index, (std::vector<int>{3}))
      << "longer than the UUID: compared over the UUID's length";
  EXPECT_EQ(map_cuda_visible(machine(), "GPU-bbbb", order).nvml_index, (std::vector<int>{1}));
  EXPECT_EQ(map_cuda_visible(machine(), "GPU-b", order).nvml_index, (std::vector<int>{1}));
  EXPECT_EQ(map_cuda_visible(machine(), "GPU-CCCC", order).nvml_index, (std::vector<int>{3}));
  EXPECT_EQ(map_cuda_visible(machine(), " GPU-cccc, 0", order).nvml_index,
            (std::vector<int>{3, 1}));
  for (const char* v : {"bbbb2222", "gpu-bbbb", "GPU-bbbb ", "GPU", "GPU-", "GPU-zzzz"})
    EXPECT_TRUE(map_cuda_visible(machine(), v, order).nvml_index.empty()) << v;
}

TEST(DeviceOrder, AmbiguousOrUnknownUuidStopsTheList) {
  auto order = CudaDeviceOrder::PciBusId;
  auto amb = map_cuda_visible(machine(), "GPU-bbbb,GPU-aaaa,0", order);
  EXPECT_EQ(amb.nvml_index, (std::vector<int>{1}));
  EXPECT_NE(amb.note.find("several"), std::string::npos) << amb.note;
  EXPECT_EQ(map_cuda_visible(machine(), "GPU-aaaa3,GPU-ffff", order).nvml_index,
            (std::vector<int>{2}));
}

TEST(DeviceOrder, MigPrefixWithAGpuUuidNamesThatGpu) {
  auto order = CudaDeviceOrder::PciBusId;
  EXPECT_EQ(map_cuda_visible(machine(), "MIG-cccc", order).nvml_index, (std::vector<int>{3}));
  EXPECT_TRUE(map_cuda_visible(machine(), "MIG-GPU-cccc", order).nvml_index.empty());
}

TEST(DeviceOrder, ExactMappingByTheBusIdsCudaReports) {
  auto m = map_by_pci_bus_id(machine(), {"0000:86:00.0", "0000:18:00.0", "0000:ff:00.0"});
  EXPECT_EQ(m, (std::vector<int>{2, 1, -1}));
}

}  // namespace
}  // namespace aftermath
