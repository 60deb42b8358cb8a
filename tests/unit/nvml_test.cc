// Unit tests for harness/observe/nvml: the real DlNvml driven through fake
// NVML entry points (its symbol-lookup seam): which versioned process query it
// picks and how it falls back, buffer growth, NVML_VALUE_NOT_AVAILABLE, init
// failures; the FakeNvml double; and the real dlopen on this machine.
#include "harness/observe/nvml.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "harness/observe/nvml_abi.h"
#include "harness/observe/nvml_fake.h"

namespace aftermath {
namespace {

namespace abi = nvml_abi;

// One fake driver, shared by the C-style entry points below.
struct FakeDriver {
  int init_result = abi::kSuccess;
  unsigned count = 2;
  std::vector<abi::ProcessInfoV2> procs;  // what every GPU runs
  int v3_result_override = -1;            // e.g. FUNCTION_NOT_FOUND from an old driver
  unsigned grow_after_sizing = 0;         // processes that start between the two calls
  std::map<std::string, int> calls;
  bool shutdown = false;
};
FakeDriver g;

int f_init() {
  ++g.calls["init"];
  return g.init_result;
}
int f_shutdown() {
  g.shutdown = true;
  return abi::kSuccess;
}
const char* f_error_string(int code) {
  return code == abi::kErrorDriverNotLoaded ? "Driver Not Loaded" : "Fake Error";
}
int f_count(unsigned* n) {
  *n = g.count;
  return abi::kSuccess;
}
int f_handle(unsigned i, abi::Device* d) {
  if (i >= g.count) return abi::kErrorInvalidArgument;
  *d = reinterpret_cast<abi::Device>(static_cast<std::uintptr_t>(0x1000 + i));
  return abi::kSuccess;
}
unsigned index_of(abi::Device d) {
  return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(d) - 0x1000);
}
int f_uuid(abi::Device d, char* buf, unsigned len) {
  std::snprintf(buf, len, "GPU-0000000%u-aaaa-bbbb-cccc-dddddddddddd", index_of(d));
  return abi::kSuccess;
}
int f_name(abi::Device d, char* buf, unsigned len) {
  std::snprintf(buf, len, "Fake H100");
  return abi::kSuccess;
}
int f_pci(abi::Device d, abi::PciInfo* p) {
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", 0x18 + index_of(d));
  return abi::kSuccess;
}
int f_memory(abi::Device d, abi::Memory* m) {
  m->total = 80ull << 30;
  m->used = (1ull << 30) * (index_of(d) + 1);
  m->free = m->total - m->used;
  return abi::kSuccess;
}
template <typename Info>
int fill(unsigned* count, Info* infos) {
  unsigned have = static_cast<unsigned>(g.procs.size());
  if (!infos || *count < have) {
    *count = have;
    // The sizing call: more processes start before the real one.
    if (!infos && g.grow_after_sizing) {
      for (unsigned i = 0; i < g.grow_after_sizing; ++i)
        g.procs.push_back({900u + i, 1ull << 20, 0xFFFFFFFF, 0xFFFFFFFF});
      g.grow_after_sizing = 0;
    }
    return have ? abi::kErrorInsufficientSize : abi::kSuccess;
  }
  for (unsigned i = 0; i < have; ++i) {
    infos[i].pid = g.procs[i].pid;
    infos[i].usedGpuMemory = g.procs[i].usedGpuMemory;
  }
  *count = have;
  return abi::kSuccess;
}
int f_procs_v3(abi::Device, unsigned* c, abi::ProcessInfoV2* i) {
  ++g.calls["v3"];
  if (g.v3_result_override >= 0) return g.v3_result_override;
  return fill(c, i);
}
int f_procs_v2(abi::Device, unsigned* c, abi::ProcessInfoV2* i) {
  ++g.calls["v2"];
  return fill(c, i);
}
int f_procs_v1(abi::Device, unsigned* c, abi::ProcessInfoV1* i) {
  ++g.calls["v1"];
  return fill(c, i);
}
int f_driver(char* buf, unsigned len) {
  std::snprintf(buf, len, "580.159.04");
  return abi::kSuccess;
}

// A lookup that knows every entry point except those in `missing`.
NvmlSymbolLookup lookup_without(std::vector<std::string> missing) {
  return [missing](const char* name) -> void* {
    for (const auto& m : missing)
      if (m == name) return nullptr;
    static const std::map<std::string, void*> kSymbols = {
        {"nvmlInit_v2", reinterpret_cast<void*>(&f_init)},
        {"nvmlShutdown", reinterpret_cast<void*>(&f_shutdown)},
        {"nvmlErrorString", reinterpret_cast<void*>(&f_error_string)},
        {"nvmlDeviceGetCount_v2", reinterpret_cast<void*>(&f_count)},
        {"nvmlDeviceGetHandleByIndex_v2", reinterpret_cast<void*>(&f_handle)},
        {"nvmlDeviceGetUUID", reinterpret_cast<void*>(&f_uuid)},
        {"nvmlDeviceGetName", reinterpret_cast<void*>(&f_name)},
        {"nvmlDeviceGetPciInfo_v3", reinterpret_cast<void*>(&f_pci)},
        {"nvmlDeviceGetMemoryInfo", reinterpret_cast<void*>(&f_memory)},
        {"nvmlDeviceGetComputeRunningProcesses_v3", reinterpret_cast<void*>(&f_procs_v3)},
        {"nvmlDeviceGetComputeRunningProcesses_v2", reinterpret_cast<void*>(&f_procs_v2)},
        {"nvmlDeviceGetComputeRunningProcesses", reinterpret_cast<void*>(&f_procs_v1)},
        {"nvmlSystemGetDriverVersion", reinterpret_cast<void*>(&f_driver)},
    };
    auto it = kSymbols.find(name);
    return it == kSymbols.end() ? nullptr : it->second;
  };
}

class NvmlDl : public ::testing::Test {
 protected:
  void SetUp() override { g = FakeDriver{}; }
};

TEST_F(NvmlDl, ReadsIdentityMemoryAndProcessesWithTheNewestQuery) {
  g.procs = {{4242, 3ull << 30, 0xFFFFFFFF, 0xFFFFFFFF}, {4343, abi::kValueNotAvailable, 0, 0}};
  {
    DlNvml nvml(lookup_without({}));
    ASSERT_EQ(nvml.init(), "");
    EXPECT_EQ(nvml.driver_version(), "580.159.04");
    auto devs = nvml.devices();
    ASSERT_EQ(devs.size(), 2u);
    EXPECT_EQ(devs[1].index, 1u);
    EXPECT_EQ(devs[1].uuid, "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd");
    EXPECT_EQ(devs[1].pci_bus_id, "00000000:19:00.0");
    EXPECT_EQ(devs[1].name, "Fake H100");
    EXPECT_EQ(devs[1].total, 80ull << 30);
    EXPECT_EQ(devs[1].used, 2ull << 30);
    EXPECT_EQ(devs[1].free, 78ull << 30);
    ASSERT_EQ(devs[0].processes.size(), 2u);
    EXPECT_EQ(devs[0].processes[0].pid, 4242u);
    EXPECT_EQ(devs[0].processes[0].used_bytes, 3ull << 30);
    // NVML_VALUE_NOT_AVAILABLE is "unknown", never 16 EiB.
    EXPECT_FALSE(devs[0].processes[1].used_bytes.has_value());
    EXPECT_EQ(nvml.process_api(), "v3");
    EXPECT_EQ(g.calls["v2"], 0);
    EXPECT_EQ(g.calls["v1"], 0);
    EXPECT_TRUE(devs[0].error.empty());
  }
  EXPECT_TRUE(g.shutdown) << "the destructor shuts NVML down";
}

TEST_F(NvmlDl, FallsBackToV2WhenTheLibraryLacksV3) {
  g.procs = {{7, 1ull << 20, 0, 0}};
  DlNvml nvml(lookup_without({"nvmlDeviceGetComputeRunningProcesses_v3"}));
  ASSERT_EQ(nvml.init(), "");
  auto devs = nvml.devices();
  ASSERT_EQ(devs[0].processes.size(), 1u);
  EXPECT_EQ(devs[0].processes[0].pid, 7u);
  EXPECT_EQ(nvml.process_api(), "v2");
}

TEST_F(NvmlDl, FallsBackToThePlainV1LayoutLast) {
  // The v1 struct is 16 bytes, not 24: reading it with the wrong layout would
  // scramble the second entry.
  g.procs = {{11, 5ull << 20, 0, 0}, {12, 6ull << 20, 0, 0}};
  DlNvml nvml(lookup_without(
      {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}));
  ASSERT_EQ(nvml.init(), "");
  auto devs = nvml.devices();
  ASSERT_EQ(devs[0].processes.size(), 2u);
  EXPECT_EQ(devs[0].processes[1].pid, 12u);
  EXPECT_EQ(devs[0].processes[1].used_bytes, 6ull << 20);
  EXPECT_EQ(nvml.process_api(), "v1");
}

TEST_F(NvmlDl, FallsBackWhenTheDriverRejectsTheNewerName) {
  // A library newer than the kernel driver: the symbol exists, the call fails.
  g.procs = {{21, 1ull << 20, 0, 0}};
  g.v3_result_override = abi::kErrorFunctionNotFound;
  DlNvml nvml(lookup_without({}));
  ASSERT_EQ(nvml.init(), "");
  auto devs = nvml.devices();
  ASSERT_EQ(devs[0].processes.size(), 1u);
  EXPECT_EQ(nvml.process_api(), "v2");
  nvml.devices();
  EXPECT_EQ(g.calls["v3"], 1) << "the rejected query is not retried on every sample";
}

TEST_F(NvmlDl, GrowsTheBufferWhenProcessesStartBetweenCalls) {
  g.procs = {{31, 1ull << 20, 0, 0}};
  g.grow_after_sizing = 20;
  DlNvml nvml(lookup_without({}));
  ASSERT_EQ(nvml.init(), "");
  auto devs = nvml.devices();
  EXPECT_EQ(devs[0].processes.size(), 21u);
  EXPECT_TRUE(devs[0].error.empty());
}

TEST_F(NvmlDl, NoProcessQueryAtAllIsAnErrorNotAnEmptyList) {
  DlNvml nvml(lookup_without({"nvmlDeviceGetComputeRunningProcesses_v3",
                              "nvmlDeviceGetComputeRunningProcesses_v2",
                              "nvmlDeviceGetComputeRunningProcesses"}));
  ASSERT_EQ(nvml.init(), "");
  auto devs = nvml.devices();
  ASSERT_FALSE(devs.empty());
  EXPECT_NE(devs[0].error.find("nvmlDeviceGetComputeRunningProcesses"), std::string::npos);
  EXPECT_EQ(devs[0].used, 1ull << 30) << "memory is still reported";
}

TEST_F(NvmlDl, InitFailureSaysWhy) {
  g.init_result = abi::kErrorDriverNotLoaded;
  DlNvml nvml(lookup_without({}));
  std::string why = nvml.init();
  EXPECT_NE(why.find("no NVIDIA driver loaded"), std::string::npos) << why;
  EXPECT_NE(why.find("Driver Not Loaded"), std::string::npos) << why;
  EXPECT_TRUE(nvml.devices().empty());
  EXPECT_EQ(nvml.init(), why) << "init is idempotent";
  EXPECT_EQ(g.calls["init"], 1);
}

TEST_F(NvmlDl, MissingEntryPointIsNamed) {
  DlNvml nvml(lookup_without({"nvmlDeviceGetMemoryInfo"}));
  EXPECT_NE(nvml.init().find("nvmlDeviceGetMemoryInfo"), std::string::npos);
}

TEST(NvmlReal, WithoutADriverItIsUnavailableWithAReason) {
  DlNvml nvml;
  std::string why = nvml.init();
  if (why.empty()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  EXPECT_NE(why.find("libnvidia-ml.so.1"), std::string::npos) << why;
  EXPECT_TRUE(nvml.devices().empty());
}

TEST(NvmlFake, ScriptAdvancesAndStaysOnTheLastSnapshot) {
  FakeNvml f({{FakeNvml::gpu(0, 100)}, {FakeNvml::gpu(0, 200)}});
  EXPECT_EQ(f.init(), "");
  EXPECT_EQ(f.devices()[0].used, 100ull << 20);
  EXPECT_EQ(f.devices()[0].used, 200ull << 20);
  EXPECT_EQ(f.devices()[0].used, 200ull << 20);
  EXPECT_EQ(f.device_calls(), 3);
  EXPECT_EQ(FakeNvml::unavailable("no driver").init(), "no driver");
}

}  // namespace
}  // namespace aftermath
