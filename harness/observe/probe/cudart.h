// The few CUDA runtime entry points aftermath-probe calls, declared by hand so
// the probe builds without the toolkit and loads libcudart with dlopen at run
// time. Where the toolkit is present, cudart_abi_check.cc compares these
// declarations with cuda_runtime_api.h at compile time.
#pragma once

#include <cstddef>

namespace aftermath::cudart {

// cudaError_t values we name (driver_types.h).
constexpr int kSuccess = 0;
constexpr int kErrorMemoryAllocation = 2;
constexpr int kErrorInitializationError = 3;
constexpr int kErrorInsufficientDriver = 35;
constexpr int kErrorNoDevice = 100;

constexpr int kDevAttrMultiProcessorCount = 16;  // cudaDevAttrMultiProcessorCount

// cudaDeviceProp begins with char name[256] then cudaUUID_t uuid (16 bytes),
// in every runtime since CUDA 10; the rest of it changes between versions,
// so the probe reads only these two fields from a buffer larger than any
// version of the struct.
constexpr std::size_t kPropNameOffset = 0;
constexpr std::size_t kPropNameSize = 256;
constexpr std::size_t kPropUuidOffset = 256;
constexpr std::size_t kPropBufferSize = 16384;

using GetDeviceCountFn = int (*)(int*);
using SetDeviceFn = int (*)(int);
using MallocFn = int (*)(void**, std::size_t);
using FreeFn = int (*)(void*);
using MemGetInfoFn = int (*)(std::size_t*, std::size_t*);
using DeviceGetPCIBusIdFn = int (*)(char*, int, int);
using GetDevicePropertiesFn = int (*)(void*, int);
using VersionFn = int (*)(int*);                // cudaRuntimeGetVersion, cudaDriverGetVersion
using GetErrorStringFn = const char* (*)(int);  // cudaGetErrorString, cudaGetErrorName

}  // namespace aftermath::cudart
