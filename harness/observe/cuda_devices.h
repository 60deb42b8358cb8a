// Which GPU is CUDA's device N? CUDA and NVML number GPUs differently:
//
//  - NVML's index is fixed by the driver (in practice PCI bus order).
//  - CUDA enumerates in CUDA_DEVICE_ORDER: FASTEST_FIRST (the default: the
//    fastest device first, equals by PCI bus id) or PCI_BUS_ID. Integer
//    entries of CUDA_VISIBLE_DEVICES index *that* enumeration, and the visible
//    list is then renumbered from 0.
//  - CUDA_VISIBLE_DEVICES, as CUDA 13 with driver 580 reads it (measured on
//    an H100 with aftermath-probe): entries are indices,
//    parsed like strtol (leading blanks and a sign allowed, trailing junk
//    ignored: "0x0" is 0), or UUIDs with a case-sensitive "GPU-" (or "MIG-")
//    prefix and hex in either case, cut short or not: an entry names the GPU
//    whose UUID agrees with it over their common length, if exactly one does.
//    No prefix, "gpu-", or a trailing blank names nothing. The list ends at
//    the first entry that names no device ("0,2,-1,1" shows 0 and 2); the
//    same device named twice the same way ("0,0") makes CUDA see none at all.
//
// The only identity both sides share is the PCI bus id, so mapping is done on
// it: exactly, from the bus ids the CUDA runtime reports (map_by_pci_bus_id,
// fed by the allocation probe), or by prediction from the environment
// (map_cuda_visible), exact for PCI_BUS_ID and for machines of one GPU model.
// Pure functions: no driver needed.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aftermath {

// A PCI address, from any of the spellings in use: NVML's "00000000:3B:00.0",
// CUDA's "0000:3b:00.0", and "3b:00.0" (domain 0).
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;
  auto operator<=>(const PciAddress&) const = default;
  std::string to_string() const;  // "0000:3b:00.0"
};
std::optional<PciAddress> parse_pci_bus_id(std::string_view text);

enum class CudaDeviceOrder { FastestFirst, PciBusId };
// CUDA_DEVICE_ORDER's value: unset, empty or unknown -> FastestFirst, CUDA's default.
CudaDeviceOrder parse_cuda_device_order(std::optional<std::string_view> value);

// One GPU as both sides can see it.
struct GpuIdentity {
  int nvml_index = 0;
  std::string uuid;  // "GPU-..."
  std::string pci_bus_id;
  std::string name;  // the model: devices of one model are equally fast
  double speed = 0;  // larger is faster, when known (e.g. SMs x clock); 0: unknown
};

struct CudaDeviceMap {
  std::vector<int> nvml_index;  // [cuda ordinal] -> NVML index
  // False when the prediction may be wrong: FASTEST_FIRST over GPUs of
  // several models whose speeds are unknown.
  bool exact = true;
  std::string note;  // why not exact, or where CUDA_VISIBLE_DEVICES stopped
};

// CUDA's enumeration of every GPU, before CUDA_VISIBLE_DEVICES: NVML indices.
CudaDeviceMap cuda_enumeration(const std::vector<GpuIdentity>& gpus, CudaDeviceOrder order);

// The devices a process sees under `visible` (CUDA_VISIBLE_DEVICES's value;
// nullopt when unset: all of them) and `order`.
CudaDeviceMap map_cuda_visible(const std::vector<GpuIdentity>& gpus,
                               std::optional<std::string_view> visible, CudaDeviceOrder order);

// The exact mapping, from the PCI bus id the CUDA runtime gave for each of its
// ordinals (cudaDeviceGetPCIBusId). An ordinal whose bus id matches no GPU
// maps to -1.
std::vector<int> map_by_pci_bus_id(const std::vector<GpuIdentity>& gpus,
                                   const std::vector<std::string>& cuda_bus_ids);

}  // namespace aftermath
