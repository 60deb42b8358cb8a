#include "harness/observe/cuda_devices.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>

namespace aftermath {

namespace {

bool parse_hex(std::string_view s, std::uint32_t& out) {
  if (s.empty() || s.size() > 8) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A UUID without its "GPU-" prefix, lower case: how entries are compared.
std::string uuid_key(std::string_view s) {
  std::string l = lower(s);
  if (l.rfind("gpu-", 0) == 0) l.erase(0, 4);
  return l;
}
}  // namespace

std::string PciAddress::to_string() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

std::optional<PciAddress> parse_pci_bus_id(std::string_view text) {
  text = trim(text);
  // [domain:]bus:device.function
  auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto head = text.substr(0, dot);
  PciAddress a;
  if (!parse_hex(text.substr(dot + 1), a.function)) return std::nullopt;
  auto c2 = head.rfind(':');
  if (c2 == std::string_view::npos || !parse_hex(head.substr(c2 + 1), a.device))
    return std::nullopt;
  head = head.substr(0, c2);
  auto c1 = head.rfind(':');
  if (c1 == std::string_view::npos) {
    if (!parse_hex(head, a.bus)) return std::nullopt;
  } else if (!parse_hex(head.substr(c1 + 1), a.bus) || !parse_hex(head.substr(0, c1), a.domain)) {
    return std::nullopt;
  }
  if (a.bus > 0xff || a.device > 0x1f || a.function > 7) return std::nullopt;
  return a;
}

CudaDeviceOrder parse_cuda_device_order(std::optional<std::string_view> value) {
  if (value && trim(*value) == "PCI_BUS_ID") return CudaDeviceOrder::PciBusId;
  return CudaDeviceOrder::FastestFirst;
}

CudaDeviceMap cuda_enumeration(const std::vector<GpuIdentity>& gpus, CudaDeviceOrder order) {
  struct Key {
    double speed;
    std::optional<PciAddress> pci;
    size_t pos;
  };
  std::vector<Key> keys;
  for (size_t i = 0; i < gpus.size(); ++i)
    keys.push_back({gpus[i].speed, parse_pci_bus_id(gpus[i].pci_bus_id), i});
  // Unparseable bus ids sort last, in NVML order.
  auto by_pci = [](const Key& a, const Key& b) {
    if (a.pci && b.pci) return *a.pci < *b.pci;
    if (a.pci != b.pci) return a.pci.has_value();
    return a.pos < b.pos;
  };
  CudaDeviceMap m;
  if (order == CudaDeviceOrder::PciBusId) {
    std::stable_sort(keys.begin(), keys.end(), by_pci);
  } else {
    std::stable_sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
      if (a.speed != b.speed) return a.speed > b.speed;
      return by_pci(a, b);
    });
    std::set<std::string> models;
    bool speeds_known = true;
    for (const auto& g : gpus) {
      models.insert(g.name);
      if (g.speed <= 0) speeds_known = false;
    }
    if (models.size() > 1 && !speeds_known) {
      m.exact = false;
      m.note =
          "CUDA_DEVICE_ORDER is FASTEST_FIRST over several GPU models: the order is a guess "
          "(set CUDA_DEVICE_ORDER=PCI_BUS_ID to make it exact)";
    }
  }
  for (const auto& k : keys) m.nvml_index.push_back(gpus[k.pos].nvml_index);
  return m;
}

CudaDeviceMap map_cuda_visible(const std::vector<GpuIdentity>& gpus,
                               std::optional<std::string_view> visible, CudaDeviceOrder order) {
  CudaDeviceMap all = cuda_enumeration(gpus, order);
  if (!visible) return all;
  CudaDeviceMap m;
  m.exact = all.exact;
  m.note = all.note;
  auto add_note = [&](const std::string& n) { m.note = m.note.empty() ? n : m.note + "; " + n; };
  auto stop = [&](std::string_view entry, const std::string& why) {
    add_note("CUDA_VISIBLE_DEVICES stops at '" + std::string(entry) + "': " + why);
  };
  enum class Kind { Index, Uuid };
  std::vector<std::pair<int, Kind>> seen;
  std::string_view rest = *visible;
  for (;;) {
    auto comma = rest.find(',');
    std::string_view raw = rest.substr(0, comma);
    // Leading blanks are skipped; trailing ones are part of a UUID entry.
    std::string_view entry = raw;
    while (!entry.empty() && std::isspace(static_cast<unsigned char>(entry.front())))
      entry.remove_prefix(1);
    int chosen = -1;
    Kind kind = Kind::Index;
    if (!entry.empty() && (std::isdigit(static_cast<unsigned char>(entry[0])) || entry[0] == '+' ||
                           entry[0] == '-')) {
      // Like strtol: a sign, digits, and whatever follows is ignored ("0x0" is 0).
      std::string_view digits = entry.substr(entry[0] == '+' || entry[0] == '-' ? 1 : 0);
      size_t n = 0;
      while (n < digits.size() && std::isdigit(static_cast<unsigned char>(digits[n]))) ++n;
      unsigned long i = 0;
      auto r = std::from_chars(digits.data(), digits.data() + n, i);
      bool negative = entry[0] == '-' && i != 0;
      if (n == 0 || r.ec != std::errc() || negative || i >= all.nvml_index.size()) {
        stop(raw, "no such device index (" + std::to_string(all.nvml_index.size()) + " device(s))");
        break;
      }
      chosen = all.nvml_index[i];
    } else if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) {
      // A UUID, cut short or not: it names the GPU whose UUID agrees with it
      // over their common length. "MIG-" + a GPU's UUID names that GPU when
      // MIG is off. The prefix is case-sensitive, the hex digits are not.
      kind = Kind::Uuid;
      std::string key = lower(entry.substr(4));
      int matches = 0;
      for (const auto& g : gpus) {
        std::string u = uuid_key(g.uuid);
        size_t len = std::min(u.size(), key.size());
        if (!key.empty() && !u.empty() && u.compare(0, len, key, 0, len) == 0) {
          ++matches;
          chosen = g.nvml_index;
        }
      }
      if (matches != 1) {
        stop(raw, matches == 0 ? "no GPU has this UUID" : "this UUID prefix names several GPUs");
        break;
      }
    } else {
      stop(raw, entry.empty() ? "empty entry" : "neither an index nor a GPU-/MIG- UUID");
      break;
    }
    auto again = std::find_if(seen.begin(), seen.end(), [&](auto& s) { return s.first == chosen; });
    if (again != seen.end()) {
      if (again->second == kind) {
        // CUDA rejects the whole variable (cudaErrorInvalidDevice): no device.
        m.nvml_index.clear();
        add_note("CUDA_VISIBLE_DEVICES names a device twice ('" + std::string(raw) +
                 "'): CUDA sees no device at all");
        return m;
      }
      stop(raw, "the device is already listed");
      break;
    }
    seen.emplace_back(chosen, kind);
    m.nvml_index.push_back(chosen);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return m;
}

std::vector<int> map_by_pci_bus_id(const std::vector<GpuIdentity>& gpus,
                                   const std::vector<std::string>& cuda_bus_ids) {
  std::vector<int> out;
  for (const auto& id : cuda_bus_ids) {
    auto want = parse_pci_bus_id(id);
    int found = -1;
    for (const auto& g : gpus) {
      auto have = parse_pci_bus_id(g.pci_bus_id);
      if (want && have && *want == *have) {
        found = g.nvml_index;
        break;
      }
    }
    out.push_back(found);
  }
  return out;
}

}  // namespace aftermath
