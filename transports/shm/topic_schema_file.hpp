// A topic's schema in a file of the shm directory (docs/design/schemas.md):
// written once, under the domain lock, by the first publisher of the topic
// that has one; read by any process (tools), which checks it before use.
// Named from the domain, the topic's slot and the slot's generation, so a
// topic that is freed and taken again never reads its predecessor's file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "axon/result.hpp"

namespace axon::shm {

inline constexpr std::uint64_t kSchemaFileMagic = 0x314D4843'53584F41ULL;  // "AOXSCHM1"

/// The first bytes of a schema file; the schema follows.
struct SchemaFileHeader {
  std::uint64_t magic = kSchemaFileMagic;
  std::uint32_t schema_bytes = 0;
  std::uint32_t topic_generation = 0;  ///< The topic slot's generation it was written for.
  std::uint64_t schema_hash = 0;       ///< schema_hash() of the bytes that follow.
};
static_assert(sizeof(SchemaFileHeader) == 24 && std::is_trivially_copyable_v<SchemaFileHeader>);

/// `<shm_dir>/axon_d<domain>_t<slot>_g<generation>.schema`.
[[nodiscard]] std::string schema_file_path(std::string_view shm_dir, std::uint32_t domain_id, std::uint32_t topic_slot,
                                           std::uint32_t generation);

/// Unlinks that file, if any. Does not allocate (runs in noexcept cleanup).
void unlink_schema_file(const char* shm_dir, std::uint32_t domain_id, std::uint32_t topic_slot,
                        std::uint32_t generation) noexcept;

/// FNV-1a over the bytes: what the registry and the file's header record.
[[nodiscard]] std::uint64_t schema_hash(std::span<const std::byte> schema) noexcept;

/// Creates `path` with `mode` (and `group`) and writes the header and the
/// schema; a file left by a writer that died is replaced. On failure
/// nothing stays at `path`. The caller holds the domain lock.
Result<void> write_schema_file(const std::string& path, std::span<const std::byte> schema,
                               std::uint32_t topic_generation, mode_t mode, const std::string& group);

/// The schema in `path`, checked against what the registry says of it: the
/// magic, the generation, the length (header and file size) and the hash
/// of the bytes. kMalformed naming the file and what is wrong otherwise.
Result<std::vector<std::byte>> read_schema_file(const std::string& path, std::uint32_t expected_bytes,
                                                std::uint64_t expected_hash, std::uint32_t topic_generation);

}  // namespace axon::shm
