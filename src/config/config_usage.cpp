#include "src/config/config_usage.hpp"

#include <fmt/format.h>

#include "src/base/log.hpp"
#include "src/config/yaml_reader.hpp"

namespace axon::detail {
namespace {

std::string where(const DeploymentConfig& config, const ConfigLocation& location) {
  return location.line > 0 ? fmt::format("{}:{}:{}", config.file, location.line, location.column) : config.file;
}

std::string join(const std::set<std::string, std::less<>>& names) {
  std::string list;
  for (const auto& name : names) {
    list += list.empty() ? "" : ", ";
    list += name;
  }
  return list;
}

}  // namespace

ConfigUsage::ConfigUsage(std::shared_ptr<const DeploymentConfig> config, std::string node_name,
                         std::vector<std::string> warnings)
    : config_(std::move(config)), node_name_(std::move(node_name)) {
  // Creates the logger now, so that it outlives a node kept in a static
  // (statics are destroyed in reverse order) and the destructor can log.
  (void)logger();
  const std::lock_guard<std::mutex> held(mutex_);
  for (auto& text : warnings) {
    warn(held, std::move(text));
  }
}

ConfigUsage::~ConfigUsage() {
  for (const auto& text : unused_topic_warnings()) {
    logger().warn("{}", text);
  }
}

void ConfigUsage::note_topic(std::string_view topic) {
  const std::lock_guard<std::mutex> held(mutex_);
  if (!used_topics_.emplace(topic).second || config_->find_topic(topic) != nullptr) {
    return;
  }
  // Only entries no endpoint matched can be misspellings of this topic.
  std::vector<std::string> unused;
  for (const auto& entry : config_->topics) {
    if (!used_topics_.contains(entry.name) && !warned_entries_.contains(entry.name)) {
      unused.push_back(entry.name);
    }
  }
  const std::string near = closest_match(topic, unused);
  if (near.empty()) {
    return;
  }
  warned_entries_.insert(near);
  warn(held, fmt::format("{}: topic '{}' of the file matches no topic of node '{}' (did you mean '{}', which it "
                         "uses?); '{}' gets the default QoS and transport: correct the name in the file or in the "
                         "code",
                         where(*config_, config_->find_topic(near)->location), near, node_name_, topic, topic));
}

std::vector<std::string> ConfigUsage::warnings() const {
  const std::lock_guard<std::mutex> held(mutex_);
  return warnings_;
}

std::vector<std::string> ConfigUsage::unused_topic_warnings() const {
  const std::lock_guard<std::mutex> held(mutex_);
  const bool only_node = config_->nodes.size() == 1 && config_->nodes.front().name == node_name_;
  std::vector<std::string> out;
  if (!only_node || used_topics_.empty()) {
    return out;  // other nodes may use the entries this one did not
  }
  for (const auto& entry : config_->topics) {
    if (used_topics_.contains(entry.name) || warned_entries_.contains(entry.name)) {
      continue;
    }
    const std::string near =
        closest_match(entry.name, std::vector<std::string>(used_topics_.begin(), used_topics_.end()));
    out.push_back(
        fmt::format("{}: topic '{}' of the file matched no topic of node '{}', the only node the file "
                    "lists{}; it used {}: correct the entry's name or remove it",
                    where(*config_, entry.location), entry.name, node_name_,
                    near.empty() ? std::string() : " (did you mean '" + near + "'?)", join(used_topics_)));
  }
  return out;
}

void ConfigUsage::warn(const std::lock_guard<std::mutex>& /*held*/, std::string text) {
  logger().warn("{}", text);
  warnings_.push_back(std::move(text));
}

}  // namespace axon::detail
