// Compiled only where the CUDA toolkit is found: proves at compile time that
// the hand-written declarations in cudart.h match cuda_runtime_api.h. It adds
// no code to the probe.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "harness/observe/probe/cudart.h"
#include "harness/observe/probe/loader.h"

namespace aftermath::cudart {
namespace {

using cudart_loading::same_abi;

static_assert(same_abi<decltype(&::cudaGetDeviceCount), GetDeviceCountFn>());
static_assert(same_abi<decltype(&::cudaSetDevice), SetDeviceFn>());
static_assert(same_abi<decltype(&::cudaMalloc), MallocFn>());
static_assert(same_abi<decltype(&::cudaFree), FreeFn>());
static_assert(same_abi<decltype(&::cudaMemGetInfo), MemGetInfoFn>());
static_assert(same_abi<decltype(&::cudaDeviceGetPCIBusId), DeviceGetPCIBusIdFn>());
static_assert(same_abi<decltype(&::cudaRuntimeGetVersion), VersionFn>());
static_assert(same_abi<decltype(&::cudaDriverGetVersion), VersionFn>());
static_assert(sizeof(::cudaError_t) == sizeof(int));
static_assert(::cudaSuccess == kSuccess);
static_assert(::cudaErrorMemoryAllocation == kErrorMemoryAllocation);
static_assert(::cudaErrorInitializationError == kErrorInitializationError);
static_assert(::cudaErrorInsufficientDriver == kErrorInsufficientDriver);
static_assert(::cudaErrorNoDevice == kErrorNoDevice);
static_assert(::cudaDevAttrMultiProcessorCount == kDevAttrMultiProcessorCount);
static_assert(offsetof(::cudaDeviceProp, name) == kPropNameOffset);
static_assert(sizeof(::cudaDeviceProp::name) == kPropNameSize);
static_assert(offsetof(::cudaDeviceProp, uuid) == kPropUuidOffset);
static_assert(sizeof(::cudaUUID_t) == 16);
static_assert(sizeof(::cudaDeviceProp) <= kPropBufferSize);

}  // namespace
}  // namespace aftermath::cudart
