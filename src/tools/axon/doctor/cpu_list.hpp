// CPU lists as the kernel writes them ("0-3,8,10-11": /sys/devices/system/cpu/online, isolcpus=).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace axon::tools::doctor {

/// The CPUs of `text`, sorted, without duplicates; nullopt when it is not a CPU list. Empty text is no CPU.
[[nodiscard]] std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view text);

/// `cpus` (sorted) written as the kernel writes a list, runs as ranges: {0,1,2,3,8,10,11} is "0-3,8,10-11".
[[nodiscard]] std::string format_cpu_list(const std::vector<unsigned>& cpus);

}  // namespace axon::tools::doctor
