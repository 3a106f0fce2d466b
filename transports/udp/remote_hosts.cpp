#include "transports/udp/remote_hosts.hpp"

#include <algorithm>

namespace axon::udp {
namespace {

bool types_match(const WriterTopic& mine, const AnnounceEntry& theirs) noexcept {
  if (mine.type.hash == theirs.type_hash) {
    return true;
  }
  return mine.evolution && (theirs.flags & kEntryEvolution) != 0 &&
         detail::fnv1a(mine.type.name) == theirs.type_name_hash;
}

bool same_entry(const AnnounceEntry& x, const AnnounceEntry& y) noexcept {
  return x.topic_id == y.topic_id && x.type_hash == y.type_hash && x.flags == y.flags && x.subscribers == y.subscribers;
}

}  // namespace

RemoteHosts::AnnounceOutcome RemoteHosts::on_announce(std::uint64_t sender, const Announce& a, std::int64_t now_ns) {
  const Endpoint endpoint{.ipv4 = a.ipv4, .port = a.port};
  AnnounceOutcome outcome;
  std::lock_guard guard(mutex_);
  auto [it, inserted] = remote_.try_emplace(sender);
  Participant& remote = it->second;
  if (inserted) {
    remote.host = std::string(a.host_name());
    remote.endpoint = endpoint;
    outcome.new_participant = true;
    outcome.new_host = std::none_of(remote_.begin(), remote_.end(), [&](const auto& other) {
      return other.first != sender && other.second.host == remote.host;
    });
  } else if (remote.endpoint != endpoint || remote.host != a.host_name()) {
    outcome.refused = true;  // an id reused from elsewhere: spoofed
    return outcome;
  }
  remote.last_heard_ns = now_ns;
  remote.rdma = a.rdma;
  outcome.changed = store_page(remote, a) || inserted;
  if (outcome.changed) {
    ++generation_;
  }
  return outcome;
}

bool RemoteHosts::store_page(Participant& remote, const Announce& a) {
  const bool resized = remote.pages.size() != a.page_count;  // a page gone takes its entries with it
  if (resized) {
    remote.pages.resize(a.page_count);
  }
  std::vector<AnnounceEntry> page;
  page.reserve(a.entry_count);
  for (std::size_t i = 0; i < a.entry_count; ++i) {
    page.push_back(a.entry(i));
  }
  const std::vector<AnnounceEntry>& old = remote.pages[a.page];
  const bool changed = old.size() != page.size() || !std::equal(page.begin(), page.end(), old.begin(), same_entry);
  if (!changed && !resized) {
    return false;
  }
  remote.pages[a.page] = std::move(page);
  remote.entries.clear();  // keeps its capacity
  for (const auto& each : remote.pages) {
    remote.entries.insert(remote.entries.end(), each.begin(), each.end());
  }
  return true;
}

bool RemoteHosts::heard(std::uint64_t sender, Endpoint from, std::int64_t now_ns) noexcept {
  std::lock_guard guard(mutex_);
  const auto found = remote_.find(sender);
  if (found == remote_.end() || found->second.endpoint != from) {
    return false;
  }
  found->second.last_heard_ns = now_ns;
  return true;
}

template <class Field>
std::optional<Field> RemoteHosts::field_of(std::uint64_t sender, Field Participant::*field) const noexcept {
  std::lock_guard guard(mutex_);
  const auto found = remote_.find(sender);
  if (found == remote_.end()) {
    return std::nullopt;
  }
  return found->second.*field;
}

std::optional<Endpoint> RemoteHosts::endpoint_of(std::uint64_t sender) const noexcept {
  return field_of(sender, &Participant::endpoint);
}

std::optional<RdmaReachability> RemoteHosts::rdma_of(std::uint64_t sender) const noexcept {
  return field_of(sender, &Participant::rdma);
}

void RemoteHosts::rdma_reachable(std::vector<RdmaReachablePeer>& out) const {
  out.clear();
  std::lock_guard guard(mutex_);
  for (const auto& [id, remote] : remote_) {
    if (remote.rdma.reachable) {
      out.push_back(RdmaReachablePeer{
          .participant = id, .host = remote.host, .ipv4 = remote.endpoint.ipv4, .cm_port = remote.rdma.cm_port});
    }
  }
}

std::vector<std::uint64_t> RemoteHosts::silent(std::int64_t now_ns, std::int64_t timeout_ns) const {
  std::vector<std::uint64_t> lost;
  std::lock_guard guard(mutex_);
  for (const auto& [id, remote] : remote_) {
    if (now_ns - remote.last_heard_ns > timeout_ns) {
      lost.push_back(id);
    }
  }
  return lost;
}

std::optional<RemoteHosts::Removed> RemoteHosts::remove(std::uint64_t sender) {
  std::lock_guard guard(mutex_);
  const auto found = remote_.find(sender);
  if (found == remote_.end()) {
    return std::nullopt;
  }
  Removed removed{.host = found->second.host, .host_gone = false};
  remote_.erase(found);
  std::erase_if(mismatch_reported_, [&](const auto& key) { return key.first == sender; });
  removed.host_gone = std::none_of(remote_.begin(), remote_.end(),
                                   [&](const auto& other) { return other.second.host == removed.host; });
  ++generation_;
  return removed;
}

std::vector<RemoteRoute> RemoteHosts::routes(std::uint64_t topic_id) const {
  std::map<std::string, RemoteRoute> by_host;
  std::set<std::string> receiving;  // hosts whose receiver is elected: writers send there (destinations_for)
  {
    std::lock_guard guard(mutex_);
    for (const auto& [id, remote] : remote_) {
      for (const AnnounceEntry& entry : remote.entries) {
        if (entry.topic_id != topic_id || (entry.flags & kEntryPublishers) != 0) {
          continue;
        }
        RemoteRoute& route = by_host[remote.host];
        route.host = remote.host;
        route.subscribers += entry.subscribers;
        route.reliable = route.reliable || (entry.flags & kEntryReliable) != 0;
        if ((entry.flags & kEntryReceiver) != 0) {
          receiving.insert(remote.host);
        }
      }
    }
  }
  std::vector<RemoteRoute> routes;
  routes.reserve(by_host.size());
  for (auto& [host, route] : by_host) {
    if (receiving.contains(host)) {
      routes.push_back(std::move(route));
    }
  }
  return routes;
}

std::vector<RemoteEndpoints> RemoteHosts::endpoints_of(std::uint64_t topic_id, std::string_view own_host) const {
  std::vector<RemoteEndpoints> out;
  std::lock_guard guard(mutex_);
  for (const auto& [id, remote] : remote_) {
    if (remote.host == own_host) {
      continue;  // this host's endpoints are in its registry
    }
    RemoteEndpoints found{.participant = id, .host = remote.host};
    for (const AnnounceEntry& entry : remote.entries) {
      if (entry.topic_id == topic_id) {
        ((entry.flags & kEntryPublishers) != 0 ? found.publishers : found.subscribers) += entry.subscribers;
      }
    }
    if (found.publishers != 0 || found.subscribers != 0) {
      out.push_back(std::move(found));
    }
  }
  return out;
}

RemoteHosts::Destinations RemoteHosts::destinations_for(const WriterTopic& topic) {
  Destinations out;
  std::map<std::string, WriterDestination> by_host;
  std::map<std::string, bool> reliable_host;
  std::lock_guard guard(mutex_);
  out.generation = generation_;
  for (const auto& [id, remote] : remote_) {
    for (const AnnounceEntry& e : remote.entries) {
      if (e.topic_id != topic.topic_id || (e.flags & kEntryPublishers) != 0) {
        continue;
      }
      if (!types_match(topic, e)) {
        if (mismatch_reported_.emplace(id, topic.topic_id).second) {
          out.new_mismatches.push_back(TypeMismatch{.host = remote.host, .their_type_hash = e.type_hash});
        }
        continue;
      }
      reliable_host[remote.host] = reliable_host[remote.host] || (e.flags & kEntryReliable) != 0;
      WriterDestination& d = by_host[remote.host];
      d.subscribers += e.subscribers;
      if ((e.flags & kEntryReceiver) != 0) {
        d.participant = id;
        d.host = remote.host;
        d.to = remote.endpoint;
      }
    }
  }
  for (auto& [host, d] : by_host) {
    if (d.participant != 0) {  // a host whose receiver is not elected yet gets the stream once it is
      d.reliable = reliable_host[host];
      out.destinations.push_back(d);
    }
  }
  return out;
}

}  // namespace axon::udp
