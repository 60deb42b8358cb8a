// The few NVML entry points the harness calls, declared by hand: no NVML
// header is used, so the harness builds on machines without the driver and
// loads libnvidia-ml.so.1 at run time (dlopen). Layouts and values are NVML's
// stable C ABI (nvml.h); tests implement these signatures to drive DlNvml.
#pragma once

#include <cstdint>

namespace aftermath::nvml_abi {

// nvmlReturn_t values we act on.
constexpr int kSuccess = 0;
constexpr int kErrorUninitialized = 1;
constexpr int kErrorInvalidArgument = 2;
constexpr int kErrorNotSupported = 3;
constexpr int kErrorNoPermission = 4;
constexpr int kErrorNotFound = 6;
constexpr int kErrorInsufficientSize = 7;
constexpr int kErrorDriverNotLoaded = 9;
constexpr int kErrorLibraryNotFound = 12;
constexpr int kErrorFunctionNotFound = 13;
constexpr int kErrorGpuIsLost = 15;
constexpr int kErrorLibRmVersionMismatch = 18;
constexpr int kErrorUnknown = 999;

// usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE).
constexpr unsigned long long kValueNotAvailable = ~0ULL;

constexpr unsigned kUuidBufferSize = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

using Device = void*;  // nvmlDevice_t: an opaque handle

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t: the unsuffixed query's layout
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t == nvmlProcessInfo_t: _v2 and _v3 queries
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct PciInfo {  // nvmlPciInfo_t (_v2 and _v3 queries)
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(ProcessInfoV1) == 16);
static_assert(sizeof(ProcessInfoV2) == 24);
static_assert(sizeof(PciInfo) == 68);

using InitFn = int (*)();
using ShutdownFn = int (*)();
using ErrorStringFn = const char* (*)(int);
using GetCountFn = int (*)(unsigned int*);
using GetHandleByIndexFn = int (*)(unsigned int, Device*);
using GetStringFn = int (*)(Device, char*, unsigned int);  // UUID, name
using GetPciInfoFn = int (*)(Device, PciInfo*);
using GetMemoryInfoFn = int (*)(Device, Memory*);
using GetProcessesV1Fn = int (*)(Device, unsigned int*, ProcessInfoV1*);
using GetProcessesV2Fn = int (*)(Device, unsigned int*, ProcessInfoV2*);
using GetDriverVersionFn = int (*)(char*, unsigned int);

}  // namespace aftermath::nvml_abi
