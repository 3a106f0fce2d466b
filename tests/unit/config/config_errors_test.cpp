// Invalid deployment files: each class of mistake is refused with the file,
// the line of the offending entry and what is expected.
#include <gtest/gtest.h>

#include <string>

#include "axon/deployment_config.hpp"
#include "tests/support/config_error_case.hpp"

namespace axon {
namespace {

using Case = test::ConfigErrorCase;

class ConfigErrors : public ::testing::TestWithParam<Case> {};

TEST_P(ConfigErrors, NameTheLineAndWhatIsExpected) { test::expect_refused(GetParam()); }

const Case kCases[] = {
    // Syntax.
    {"not YAML", "topics: [a\n", "bad.yaml:", "not valid YAML"},
    {"not a mapping", "- a\n- b\n", "bad.yaml:1:1:", "must be a mapping"},
    // Indentation: the parser's own words, and what to look at.
    {"tab indenting a key", "topics:\n  - name: a\n\tdepth: 3\n",
     "bad.yaml:3:1:", "YAML does not allow tabs for indentation; line 3 has a tab at column 1: indent with spaces"},
    {"tab indenting a list item", "topics:\n\t- name: a\n",
     "bad.yaml:2:", "line 2 has a tab at column 1: indent with spaces"},
    {"key out of line with its mapping", "topics:\n  - name: a\n   depth: 3\n",
     "bad.yaml:3:", "check the indentation of line 3 ('   depth: 3')"},
    {"key indented under a value", "domain: 1\n  hosts: []\n",
     "bad.yaml:2:", "check the indentation of line 2 ('  hosts: []')"},
    // Unknown keys, with a suggestion for a near miss.
    {"unknown top-level key", "domain: 1\nhots: []\n", "bad.yaml:2:1:", "unknown key 'hots' (did you mean 'hosts'?)"},
    {"unknown topic key", "topics:\n  - name: a\n    dept: 4\n",
     "bad.yaml:3:5:", "unknown key 'dept' (did you mean 'depth'?); known keys:"},
    {"unknown key far from any", "udp:\n  zzzzzz: 1\n", "bad.yaml:2:3:", "unknown key 'zzzzzz'; known keys:"},
    {"unknown pool key", "nodes:\n  - name: a\n    pool:\n      huge_page: true\n",
     "bad.yaml:4:7:", "did you mean 'huge_pages'?"},
    {"key given twice", "topics:\n  - name: a\n    depth: 1\n    depth: 2\n", "bad.yaml:", "depth"},
    // Wrong types.
    {"text for a number", "domain: seven\n", "bad.yaml:1:9:", "domain must be a number, found 'seven'"},
    {"mapping for a list", "hosts:\n  name: a\n", "bad.yaml:2:3:", "hosts must be a list"},
    {"number for a boolean", "nodes:\n  - name: a\n    pool: {lock_memory: 3}\n",
     "bad.yaml:3:25:", "lock_memory must be true or false"},
    {"not a size", "udp:\n  send_buffer_bytes: lots\n", "bad.yaml:2:22:", "must be a size such as 2048"},
    {"unknown enum value", "topics:\n  - {name: a, reliability: reliabel}\n",
     "bad.yaml:2:28:", "reliability must be one of best_effort, reliable, found 'reliabel' (did you mean 'reliable'?)"},
    {"unknown transport", "topics:\n  - {name: a, transport: tcp}\n",
     "bad.yaml:2:26:", "transport must be one of auto, shm, udp, rdma"},
    {"missing name", "topics:\n  - depth: 4\n", "bad.yaml:2:5:", "missing required key 'name'"},
    // Out of range.
    {"depth too large", "topics:\n  - name: a\n    depth: 1000\n",
     "bad.yaml:3:12:", "depth must be a whole number from 1 to 256, found 1000"},
    {"strict not a boolean", "strict: sure\n", "bad.yaml:1:9:", "strict must be true or false, found 'sure'"},
    {"negative domain", "domain: -1\n", "bad.yaml:1:9:", "from 0 to 4294967295"},
    {"priority too high", "nodes:\n  - name: a\n    executor: {sched_fifo_priority: 120}\n",
     "bad.yaml:3:37:", "sched_fifo_priority (0: normal scheduling) must be a whole number from 0 to 99"},
    {"port too high", "udp:\n  discovery: {port: 70000}\n", "bad.yaml:2:21:", "from 1 to 65535"},
    {"negative milliseconds", "topics:\n  - {name: a, deadline_ms: -5}\n",
     "bad.yaml:2:28:", "deadline_ms must be from 0 to 3600000 milliseconds"},
    {"no connections", "nodes:\n  - name: a\n    pool: {connections: 0}\n",
     "bad.yaml:3:25:", "connections must be a whole number from 1 to 16384, found 0"},
    {"too many publishers", "nodes:\n  - name: a\n    pool: {publishers: 5000}\n",
     "bad.yaml:3:24:", "node 'a' pool publishers must be a whole number from 1 to 4096, found 5000"},
    {"too many queue slots", "nodes:\n  - name: a\n    pool: {queue_slots: 2000000}\n",
     "bad.yaml:3:25:", "queue_slots must be a whole number from 1 to 1048576"},
    {"chunk classes shrinking",
     "nodes:\n  - name: a\n    pool:\n      chunk_classes:\n        - {payload_bytes: 4 KiB, "
     "count: 8}\n        - {payload_bytes: 256, count: 8}\n",
     "bad.yaml:6:27:", "classes must grow strictly"},
    {"chunk fallback past the last class", "nodes:\n  - name: a\n    pool:\n      chunk_fallback: {max_classes: 16}\n",
     "bad.yaml:4:37:", "chunk_fallback max_classes must be a whole number from 0 to 15"},
    {"tiny socket buffer", "udp:\n  receive_buffer_bytes: 100\n", "bad.yaml:2:25:", "must be from 65536 to"},
    // Unknown references.
    {"unknown host of a node", "hosts: [{name: ecu, address: 10.0.0.1}]\nnodes:\n  - {name: a, host: ceu}\n",
     "bad.yaml:3:21:", "node 'a' runs on unknown host 'ceu' (did you mean 'ecu'?); hosts: ecu"},
    {"host without hosts", "nodes:\n  - {name: a, host: ecu}\n", "bad.yaml:2:21:", "the file lists no hosts"},
    {"node without host among several",
     "hosts:\n  - {name: x, address: 10.0.0.1}\n  - {name: y, address: 10.0.0.2}\nnodes:\n  - {name: a}\n",
     "bad.yaml:5:5:", "node 'a' must say which host it runs on (host: one of x, y)"},
    {"unknown static peer", "hosts: [{name: ecu}]\nudp:\n  discovery: {static_peers: [ecu, euc1]}\n",
     "bad.yaml:3:35:", "'euc1' is neither a host of hosts: nor a numeric IP address"},
    // Duplicates.
    {"duplicate host", "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: a, address: 10.0.0.2}\n",
     "bad.yaml:3:12:", "host 'a' is defined twice (first at line 2)"},
    {"duplicate node", "nodes:\n  - name: a\n  - name: b\n  - name: a\n",
     "bad.yaml:4:11:", "node 'a' is defined twice (first at line 2)"},
    {"duplicate topic", "topics:\n  - name: t\n  - name: t\n", "bad.yaml:3:11:", "topic 't' is defined twice"},
    {"duplicate address", "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: b, address: 10.0.0.1}\n",
     "bad.yaml:3:24:", "host 'b' has address 10.0.0.1, like host 'a'; give each host its own address"},
    {"two hosts on the default address", "hosts: [{name: a}, {name: b}]\n", "bad.yaml:1:20:", "like host 'a'"},
    {"duplicate cpu", "nodes:\n  - {name: a, executor: {cpu_affinity: [1, 1]}}\n",
     "bad.yaml:2:44:", "lists CPU 1 twice"},
    // Conflicting settings.
    {"reliable with drop oldest", "topics:\n  - name: a\n    reliability: reliable\n    overflow: drop_oldest\n",
     "bad.yaml:4:15:",
     "topic 'a': conflicting QoS settings: reliability: reliable never drops a message, but overflow: drop_oldest "
     "does; use overflow: block_publisher (or leave overflow out), or reliability: best_effort"},
    {"keep all with latest only", "topics:\n  - name: a\n    history: keep_all\n    overflow: latest_only\n",
     "bad.yaml:4:15:",
     "history: keep_all keeps every message, but overflow: latest_only drops the oldest; use history: keep_last, "
     "or overflow: reject_newest or block_publisher"},
    {"quarantine without block", "topics:\n  - name: a\n    quarantine_after_ms: 10\n", "bad.yaml:3:26:",
     "quarantine_after_ms applies to overflow: block_publisher only, and overflow is not given (so drop_oldest, "
     "the default with history: keep_last); set overflow: block_publisher or remove quarantine_after_ms"},
    {"quarantine with reliable", "topics:\n  - {name: a, reliability: reliable, quarantine_after_ms: 10}\n",
     "bad.yaml:2:59:",
     "quarantine_after_ms: 10 drops the oldest messages of a subscriber that stays full, which reliability: "
     "reliable never does; remove quarantine_after_ms, or use reliability: best_effort with overflow: "
     "block_publisher"},
    {"durability depth when volatile", "topics:\n  - {name: a, durability_depth: 4}\n",
     "bad.yaml:2:33:", "durability_depth only applies to durability: transient_local"},
    {"too many reserved chunks", "topics:\n  - {name: a, reserved_chunks: 65}\n",
     "bad.yaml:2:32:", "reserved_chunks must be"},
    {"unknown beyond_reservation", "topics:\n  - {name: a, reserved_chunks: 2, beyond_reservation: borrow}\n",
     "bad.yaml:2:55:", "shared"},
    {"beyond_reservation without a reservation", "topics:\n  - {name: a, beyond_reservation: refuse}\n",
     "bad.yaml:2:35:", "beyond_reservation only applies with reserved_chunks"},
    {"rdma on a host without device",
     "hosts:\n  - {name: a, address: 10.0.0.1, rdma_device: mlx5_0}\n  - {name: b, address: 10.0.0.2}\n"
     "topics:\n  - {name: t, transport: rdma}\n",
     "bad.yaml:5:26:", "host 'b' has no rdma_device"},
    {"rdma without hosts", "topics:\n  - {name: t, transport: rdma}\n", "bad.yaml:2:26:", "lists no hosts"},
    {"multicast and static peers", "udp:\n  discovery:\n    multicast_group: 239.1.1.1\n    static_peers: [10.0.0.1]\n",
     "bad.yaml:4:19:", "give either multicast_group or static_peers, not both"},
    {"liveliness shorter than heartbeat", "udp:\n  heartbeat_period_ms: 500\n  liveliness_timeout_ms: 200\n",
     "bad.yaml:3:26:", "must be longer than heartbeat_period_ms"},
    // The UDP transport's own keys.
    {"unknown udp key near mtu", "udp:\n  mut: 1500\n", "bad.yaml:2:3:", "unknown key 'mut' (did you mean 'mtu'?)"},
    {"mtu below the IPv4 minimum", "udp:\n  mtu: 100\n", "bad.yaml:2:8:",
     "udp mtu (IP packet size of the links: 1500, 9000 with jumbo frames) must be a whole number from 576 to 65535, "
     "found 100"},
    {"mtu above the largest IP packet", "udp: {mtu: 70000}\n", "bad.yaml:1:12:", "from 576 to 65535, found 70000"},
    {"mtu not a number", "udp:\n  mtu: jumbo\n", "bad.yaml:2:8:",
     "udp mtu (IP packet size of the links: 1500, 9000 with jumbo frames) must be a number, found 'jumbo'"},
    {"no history", "udp:\n  history_depth: 0\n", "bad.yaml:2:18:",
     "udp history_depth (messages a RELIABLE writer keeps for resends) must be a whole number from 1 to 4096, found 0"},
    {"history too deep", "udp:\n  history_depth: 5000\n", "bad.yaml:2:18:", "from 1 to 4096, found 5000"},
    {"no reassembly timeout", "udp:\n  reassembly_timeout_ms: 0\n",
     "bad.yaml:2:26:", "udp reassembly_timeout_ms must be a whole number from 1 to 60000, found 0"},
    {"fractional reassembly timeout", "udp: {reassembly_timeout_ms: 0.5}\n",
     "bad.yaml:1:30:", "udp reassembly_timeout_ms must be a whole number from 1 to 60000, found 0.5"},
    {"security allow entry not an address", "udp:\n  security: {allow: [10.0.0.0/33]}\n", "bad.yaml:2:22:",
     "udp security allow entry '10.0.0.0/33' is not an IPv4 address or network such as 192.168.1.7 or 10.0.0.0/24"},
    {"security allow empty", "udp:\n  security: {allow: []}\n",
     "bad.yaml:2:21:", "udp security allow is empty, which would refuse every host"},
    {"security previous key without a key", "udp:\n  security: {previous_key_file: old.key}\n",
     "bad.yaml:2:33:", "udp security previous_key_file needs a key_file"},
    {"security encrypt without a key", "udp:\n  security: {encrypt: true}\n", "bad.yaml:2:23:",
     "udp security encrypt: true needs a key_file: the datagrams are encrypted under the domain's key (add key_file: "
     "PATH"},
    {"security encrypt not a boolean", "udp:\n  security: {key_file: a.key, encrypt: yes please}\n",
     "bad.yaml:2:40:", "udp security encrypt must be true or false"},
    {"security unknown key", "udp:\n  security: {keyfile: a.key}\n",
     "bad.yaml:2:14:", "unknown key 'keyfile' (did you mean 'key_file'?)"},
    {"receive polling longer than a second", "udp:\n  receive_poll_us: 2000000\n", "bad.yaml:2:20:",
     "udp receive_poll_us (microseconds the UDP thread polls after data before it sleeps; 0: none) must be a whole "
     "number from 0 to 1000000, found 2000000"},
    {"message larger than UDP carries", "udp:\n  max_message_bytes: 32 MiB\n", "bad.yaml:2:22:",
     "udp max_message_bytes is 33554432 bytes; the UDP transport carries messages of at most 16777216 bytes (16 MiB)"},
    // Nodes on several hosts: what the UDP transport needs to join them.
    {"used host without address",
     "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: b}\nnodes:\n  - {name: n1, host: a}\n"
     "  - {name: n2, host: b}\n",
     "bad.yaml:3:5:",
     "host 'b' needs an address: nodes run on hosts a, b, which reach each other over UDP, and a node binds its "
     "sockets to its host's address; add 'address:'"},
    {"hosts of two IP families",
     "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: b, address: 'fd00::2'}\nnodes:\n  - {name: n1, host: a}\n"
     "  - {name: n2, host: b}\n",
     "bad.yaml:3:24:",
     "host 'b' has the IPv6 address fd00::2 and host 'a' the IPv4 address 10.0.0.1; hosts whose nodes talk over UDP "
     "need addresses of one family"},
    {"loopback and network hosts",
     "hosts:\n  - {name: a, address: 127.0.0.1}\n  - {name: b, address: 10.0.0.2}\nnodes:\n  - {name: n1, host: a}\n"
     "  - {name: n2, host: b}\n",
     "bad.yaml:3:24:",
     "host 'b' has address 10.0.0.2 and host 'a' 127.0.0.1, but a loopback address reaches only its "
     "own machine; give every host a loopback address"},
    {"IPv4 group for IPv6 hosts",
     "hosts:\n  - {name: a, address: 'fd00::1'}\n  - {name: b, address: 'fd00::2'}\nnodes:\n  - {name: n1, host: a}\n"
     "  - {name: n2, host: b}\nudp:\n  discovery: {multicast_group: 239.255.0.9}\n",
     "bad.yaml:8:32:",
     "udp discovery multicast_group 239.255.0.9 is an IPv4 group, but the hosts have IPv6 addresses; give an IPv6 "
     "group (such as ff15::a) or static_peers"},
    {"default IPv4 group for IPv6 hosts",
     "hosts:\n  - {name: a, address: 'fd00::1'}\n  - {name: b, address: 'fd00::2'}\nnodes:\n  - {name: n1, host: a}\n"
     "  - {name: n2, host: b}\n",
     "bad.yaml:2:24:", "udp discovery multicast_group 239.255.0.1 is an IPv4 group, but the hosts have IPv6 addresses"},
    {"IPv6 static peer for IPv4 hosts",
     "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: b, address: 10.0.0.2}\nnodes:\n  - {name: n1, host: a}\n"
     "  - {name: n2, host: b}\nudp:\n  discovery: {static_peers: [a, 'fd00::9']}\n",
     "bad.yaml:8:33:",
     "udp discovery static_peers entry 'fd00::9' is an IPv6 address (fd00::9), but the hosts have IPv4 addresses"},
    // The rdma: section: the port and GID index of the hosts' rdma_device.
    {"rdma port zero", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  port: 0\n", "bad.yaml:3:9:",
     "rdma.port (the port of hosts[].rdma_device, 1-based; `ibv_devinfo` lists them) must be a whole number from 1 "
     "to 255, found 0"},
    {"rdma port past a byte", "hosts: [{name: a, rdma_device: rxe0}]\nrdma: {port: 256}\n", "bad.yaml:2:14:",
     "rdma.port (the port of hosts[].rdma_device, 1-based; `ibv_devinfo` lists them) must be a whole number from 1 "
     "to 255, found 256"},
    {"rdma port not a number", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  port: first\n", "bad.yaml:3:9:",
     "rdma.port (the port of hosts[].rdma_device, 1-based; `ibv_devinfo` lists them) must be a number, found 'first'"},
    {"rdma gid index past a byte", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  gid_index: 256\n", "bad.yaml:3:14:",
     "rdma.gid_index (auto, or the entry of the port's GID table; `show_gids` lists them) must be a whole number from "
     "0 to 255, found 256"},
    {"rdma gid index negative", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  gid_index: -1\n", "bad.yaml:3:14:",
     "rdma.gid_index (auto, or the entry of the port's GID table; `show_gids` lists them) must be a whole number from "
     "0 to 255, found -1"},
    {"rdma gid index a word", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  gid_index: roce2\n", "bad.yaml:3:14:",
     "rdma.gid_index (auto, or the entry of the port's GID table; `show_gids` lists them) must be auto or a whole "
     "number from 0 to 255, found 'roce2'"},
    {"unknown rdma key near port", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  prot: 1\n",
     "bad.yaml:3:3:", "rdma: unknown key 'prot' (did you mean 'port'?); known keys: port, gid_index, cm_port"},
    {"rdma key of a later step", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  credits: 8\n",
     "bad.yaml:3:3:", "rdma: unknown key 'credits'; known keys: port, gid_index, cm_port"},
    {"rdma cm port past 16 bits", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  cm_port: 65536\n", "bad.yaml:3:12:",
     "rdma.cm_port (the rdma_cm port the nodes listen on; 0: rdma_cm picks a free one) must be a whole number from 0 "
     "to 65535, found 65536"},
    {"rdma cm port negative", "hosts: [{name: a, rdma_device: rxe0}]\nrdma: {cm_port: -5}\n", "bad.yaml:2:17:",
     "rdma.cm_port (the rdma_cm port the nodes listen on; 0: rdma_cm picks a free one) must be a whole number from 0 "
     "to 65535, found -5"},
    {"rdma cm port a word", "hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  cm_port: any\n", "bad.yaml:3:12:",
     "rdma.cm_port (the rdma_cm port the nodes listen on; 0: rdma_cm picks a free one) must be a number, found 'any'"},
    {"rdma not a mapping", "hosts: [{name: a, rdma_device: rxe0}]\nrdma: 1\n",
     "bad.yaml:2:7:", "rdma must be a mapping"},
    {"rdma section without a device", "hosts: [{name: a}]\nrdma:\n  port: 1\n", "bad.yaml:3:3:",
     "rdma: sets the port and GID of hosts[].rdma_device, but no host of hosts: names an rdma_device; add "
     "rdma_device to the hosts with an RDMA card, or remove the rdma: section"},
    // Addresses.
    {"host name as address", "hosts:\n  - {name: a, address: ecu.local}\n",
     "bad.yaml:2:24:", "address must be a numeric IPv4 or IPv6 address"},
    {"bad IPv4", "hosts:\n  - {name: a, address: 10.0.0.300}\n", "bad.yaml:2:24:", "found '10.0.0.300'"},
    {"unicast as multicast group", "udp:\n  discovery: {multicast_group: 10.0.0.1}\n",
     "bad.yaml:2:32:", "multicast_group must be a multicast address"},
};

INSTANTIATE_TEST_SUITE_P(EveryClass, ConfigErrors, ::testing::ValuesIn(kCases));

/// Conflicting QoS in a file, one per rule of effective_queue().
const char* const kConflicts[] = {
    "topics:\n  - {name: a, reliability: reliable, overflow: drop_oldest}\n",
    "topics:\n  - {name: a, reliability: reliable, overflow: latest_only, history: keep_last}\n",
    "topics:\n  - {name: a, history: keep_all, overflow: drop_oldest}\n",
    "topics:\n  - {name: a, reliability: reliable, quarantine_after_ms: 2.5}\n",
    "topics:\n  - {name: a, overflow: reject_newest, quarantine_after_ms: 1}\n",
    "topics:\n  - {name: a, history: keep_all, quarantine_after_ms: 1}\n",
};

class ConfigQosConflicts : public ::testing::TestWithParam<const char*> {};

TEST_P(ConfigQosConflicts, SpeakTheFilesKeysNotTheApisNames) {
  auto sut = parse_deployment_config(GetParam(), "bad.yaml");

  ASSERT_FALSE(sut.ok()) << "accepted: " << GetParam();
  const std::string message(sut.error().message());
  for (const char* api : {"SubscriberQos", "Overflow::", "Reliability::", "History::", "_ns", "kBlockPublisher",
                          "kDefault", "kDropOldest"}) {
    EXPECT_EQ(message.find(api), std::string::npos) << "names '" << api << "': " << message;
  }
  EXPECT_NE(message.find("conflicting QoS settings: "), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(EveryRule, ConfigQosConflicts, ::testing::ValuesIn(kConflicts));

TEST(QosConflicts, CallersOfTheApiStillSeeTheApiNames) {
  auto sut = effective_queue({.reliability = Reliability::kReliable, .overflow = Overflow::kDropOldest});

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("Overflow::kBlockPublisher"), std::string_view::npos) << sut.error().message();
}

TEST(ConfigFile, AMissingFileIsAnErrorNamingIt) {
  auto sut = load_deployment_config("/nonexistent/deploy.yaml");

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("/nonexistent/deploy.yaml: cannot open"), std::string_view::npos);
}

}  // namespace
}  // namespace axon
