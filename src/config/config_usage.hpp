// What a node used of its deployment config, so that an entry matching
// nothing is reported instead of silently not applying: a misspelt node name
// (its pool and executor settings), a misspelt topic name (its QoS and
// transport). Warnings only: a file is shared by many nodes, and one node
// cannot tell a topic entry of another node from a typo, except by its
// likeness to a topic it uses. Not public API.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "axon/deployment_config.hpp"

namespace axon::detail {

/// Thread safety: every method from any thread (one mutex). Slow path:
/// allocates and logs.
class ConfigUsage {
 public:
  /// `warnings`: those of Node::create (an unlisted node); logged here.
  ConfigUsage(std::shared_ptr<const DeploymentConfig> config, std::string node_name, std::vector<std::string> warnings);
  /// Logs unused_topic_warnings() (the node's end).
  ~ConfigUsage();
  ConfigUsage(const ConfigUsage&) = delete;
  ConfigUsage& operator=(const ConfigUsage&) = delete;

  /// An endpoint of `topic` was created. When the file has no entry for it
  /// but an entry no endpoint used that looks like a misspelling of it,
  /// warns (once per entry) with "did you mean".
  void note_topic(std::string_view topic);
  /// The warnings so far, each "FILE[:LINE:COLUMN]: ..." as logged.
  [[nodiscard]] std::vector<std::string> warnings() const;
  /// For the node's end: the topic entries no endpoint matched, when the
  /// file lists this node and no other under nodes: (then no other node can
  /// be using them), and the node used at least one topic. Without warnings
  /// already given for the same entry.
  [[nodiscard]] std::vector<std::string> unused_topic_warnings() const;

 private:
  void warn(const std::lock_guard<std::mutex>& held, std::string text);

  std::shared_ptr<const DeploymentConfig> config_;
  std::string node_name_;
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> used_topics_;
  std::set<std::string, std::less<>> warned_entries_;
  std::vector<std::string> warnings_;
};

}  // namespace axon::detail
