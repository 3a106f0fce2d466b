// The network faults of a chaos schedule (loss, delay, reorder, partition) on
// a scenario whose components run on virtual hosts: what they read, the
// errors that name the key that is wrong, the deployment config of the hosts
// and the commands that put a fault in place and take it away.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "bench/axon_bench/chaos/chaos_deployment.hpp"
#include "bench/axon_bench/chaos/fault_schedule.hpp"
#include "bench/axon_bench/chaos/net_faults.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon_bench {
namespace {

constexpr const char* kOnHosts = R"(name: t
duration_s: 20
topics:
  - {name: a, payload: 64, rate_hz: 100, reliable: true}
  - {name: b, payload: 2 KiB, rate_hz: 20}
components:
  - {name: p, host: h0, publishes: [a, b]}
  - {name: q, host: h1, subscribes: [a]}
  - {name: r, host: h2, subscribes: [b]}
)";

constexpr const char* kOneMachine = R"(name: t
duration_s: 20
topics:
  - {name: a, payload: 64, rate_hz: 100}
components:
  - {name: p, publishes: [a]}
  - {name: q, subscribes: [a]}
)";

class NetFaultSchedule : public ::testing::Test {
 protected:
  FaultPlan load(const std::string& scenario, const std::string& faults) {
    path_ = dir_.write("s.yaml", scenario + faults);
    scenario_ = load_scenario(path_);
    return load_fault_plan(path_, scenario_);
  }

  /// The message of the ScenarioError that loading them throws ("" when none).
  std::string error_of(const std::string& scenario, const std::string& faults) {
    try {
      (void)load(scenario, faults);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  }

  axon::test::TempDir dir_{"axon-chaos-net"};
  std::string path_;
  Scenario scenario_;
};

TEST_F(NetFaultSchedule, ReadsTheHostsOfTheComponents) {
  (void)load(kOnHosts, "");

  ASSERT_EQ(scenario_.hosts, (std::vector<std::string>{"h0", "h1", "h2"}));
  EXPECT_EQ(scenario_.components[0].host, 0);
  EXPECT_EQ(scenario_.components[2].host, 2);
}

TEST_F(NetFaultSchedule, ReadsEveryNetworkKindWithItsFields) {
  const FaultPlan sut = load(kOnHosts, R"(faults:
  - {at_s: 1, kind: loss, host: h1, percent: 20, for_s: 2}
  - {at_s: 4, kind: delay, component: q, delay_ms: 30, jitter_ms: 5, for_s: 1}
  - {at_s: 6, kind: reorder, host: h2, delay_ms: 10, percent: 25, for_s: 1}
  - {at_s: 8, kind: partition, host: h2, for_s: 3}
  - {at_s: 12, kind: partition, between: [h0, h1], for_s: 2}
)");

  ASSERT_EQ(sut.fixed.size(), 5U);
  EXPECT_EQ(sut.fixed[0].kind, FaultKind::kLoss);
  EXPECT_EQ(sut.fixed[0].host, 1);
  EXPECT_DOUBLE_EQ(sut.fixed[0].percent, 20);
  EXPECT_EQ(sut.fixed[1].kind, FaultKind::kDelay);
  EXPECT_EQ(sut.fixed[1].host, 1);  // q's host
  EXPECT_EQ(sut.fixed[1].component, -1);
  EXPECT_DOUBLE_EQ(sut.fixed[1].delay_ms, 30);
  EXPECT_DOUBLE_EQ(sut.fixed[1].jitter_ms, 5);
  EXPECT_EQ(sut.fixed[2].kind, FaultKind::kReorder);
  EXPECT_DOUBLE_EQ(sut.fixed[2].percent, 25);
  EXPECT_EQ(sut.fixed[3].kind, FaultKind::kPartition);
  EXPECT_EQ(sut.fixed[3].host, 2);
  EXPECT_EQ(sut.fixed[3].peer, -1);
  EXPECT_EQ(sut.fixed[4].host, 0);
  EXPECT_EQ(sut.fixed[4].peer, 1);
  for (const Fault& f : sut.fixed) {
    EXPECT_TRUE(is_network_fault(f.kind));
  }
}

TEST_F(NetFaultSchedule, EachEntryPrintsAsTheYamlThatGivesItAgain) {
  const FaultPlan first = load(kOnHosts, R"(faults:
  - {at_s: 1, kind: delay, component: q, delay_ms: 30, jitter_ms: 5, for_s: 1}
  - {at_s: 3, kind: partition, between: [h2, h0], for_s: 2}
)");
  std::string lines;
  for (const Fault& f : first.fixed) {
    lines += "  - " + f.yaml(scenario_) + "\n";
  }

  const FaultPlan again = load(kOnHosts, "faults:\n" + lines);

  EXPECT_EQ(first.fixed[0].yaml(scenario_), "{at_s: 1, kind: delay, host: h1, delay_ms: 30, jitter_ms: 5, for_s: 1}");
  EXPECT_EQ(first.fixed[1].yaml(scenario_), "{at_s: 3, kind: partition, between: [h2, h0], for_s: 2}");
  ASSERT_EQ(again.fixed.size(), 2U);
  EXPECT_EQ(again.fixed[1].yaml(scenario_), first.fixed[1].yaml(scenario_));
}

TEST_F(NetFaultSchedule, RefusesANetworkFaultOnAComponentWithoutAHost) {
  const std::string error =
      error_of(kOneMachine, "faults:\n  - {at_s: 1, kind: loss, component: q, percent: 5, for_s: 1}\n");

  EXPECT_NE(error.find("s.yaml:9:38:"), std::string::npos) << error;  // the entry's component value
  EXPECT_NE(error.find("faults #1 (loss) component: 'q' runs on no virtual host"), std::string::npos) << error;
}

TEST_F(NetFaultSchedule, RefusesAHostOfAScenarioOnOneMachine) {
  const std::string error = error_of(kOneMachine, "faults:\n  - {at_s: 1, kind: partition, host: h1, for_s: 1}\n");

  EXPECT_NE(error.find("faults #1 (partition) host: no host 'h1'"), std::string::npos) << error;
  EXPECT_NE(error.find("name no `host:`"), std::string::npos) << error;
}

TEST_F(NetFaultSchedule, ErrorsNameTheKey) {
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: loss, host: h9, percent: 5, for_s: 1}\n")
                .find("host: no host 'h9' in the scenario (hosts: h0, h1, h2)"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: loss, host: h1, for_s: 1}\n").find("percent"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: loss, host: h1, percent: 150, for_s: 1}\n")
                .find("percent must be above 0 and at most 100, found 150"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: loss, percent: 5, for_s: 1}\n")
                .find("needs exactly one of host:"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: delay, host: h1, delay_ms: 5, jitter_ms: 9, for_s: 1}\n")
                .find("jitter_ms (9) must not exceed delay_ms (5)"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: reorder, host: h1, delay_ms: 0, percent: 5, for_s: 1}\n")
                .find("delay_ms must be above 0"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: partition, between: [h1, h1], for_s: 1}\n")
                .find("cut off from itself"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: partition, between: [h1], for_s: 1}\n")
                .find("between must be a list of two hosts"),
            std::string::npos);
  EXPECT_NE(error_of(kOnHosts, "faults:\n  - {at_s: 1, kind: loss, host: h1, percent: 5, for_s: 1, delay_ms: 3}\n")
                .find("delay_ms"),
            std::string::npos);
  EXPECT_NE(error_of(kOneMachine, "random: {seed: 1, kinds: [kill, partition]}\n")
                .find("random kinds: partition acts between virtual hosts"),
            std::string::npos);
}

TEST_F(NetFaultSchedule, RefusesTwoNetworkFaultsOnOneHostAtOnce) {
  const std::string error = error_of(kOnHosts, R"(faults:
  - {at_s: 1, kind: loss, host: h1, percent: 5, for_s: 3}
  - {at_s: 2, kind: partition, between: [h0, h1], for_s: 1}
)");

  EXPECT_NE(error.find("faults #2 overlaps faults #1 on the network of host 'h0'"), std::string::npos) << error;
}

TEST_F(NetFaultSchedule, RefusesComponentsOfWhichOnlySomeNameAHost) {
  const std::string error = error_of(R"(topics:
  - {name: a, payload: 64, rate_hz: 100}
components:
  - {name: p, host: h0, publishes: [a]}
  - {name: q, subscribes: [a]}
)",
                                     "");

  EXPECT_NE(error.find("component 'q' has no host"), std::string::npos) << error;
  EXPECT_NE(error.find("every component needs `host:`"), std::string::npos) << error;
}

TEST_F(NetFaultSchedule, RefusesASingleHost) {
  const std::string error = error_of(R"(topics:
  - {name: a, payload: 64, rate_hz: 100}
components:
  - {name: p, host: h0, publishes: [a]}
  - {name: q, host: h0, subscribes: [a]}
)",
                                     "");

  EXPECT_NE(error.find("name 1 host(s) (h0): virtual hosts run 2 to 8"), std::string::npos) << error;
}

TEST_F(NetFaultSchedule, TheSameSeedDrawsTheSameNetworkFaultsOnTheScenariosHosts) {
  const FaultPlan plan = load(kOnHosts, "random: {seed: 7, count: 6, kinds: [loss, delay, reorder, partition]}\n");

  const auto first = schedule_of(plan, scenario_, 30);
  const auto second = schedule_of(plan, scenario_, 30);

  ASSERT_FALSE(first.empty());
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].yaml(scenario_), second[i].yaml(scenario_));
    EXPECT_TRUE(is_network_fault(first[i].kind));
    EXPECT_GE(first[i].host, 0);
    EXPECT_LT(first[i].host, 3);
  }
}

TEST_F(NetFaultSchedule, TheDeploymentConfigPutsEveryNodeOnItsHost) {
  (void)load(kOnHosts, "");

  const std::string yaml = chaos_deployment_yaml(scenario_, {"10.1.2.1", "10.1.2.2", "10.1.2.3"});

  EXPECT_NE(yaml.find("{name: h2, address: 10.1.2.3}"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("{name: \"q\", host: h1}"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("liveliness_timeout_ms: " + std::to_string(kChaosLivelinessTimeoutMs)), std::string::npos);
}

/// A command as one line, for comparing.
std::string line_of(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& a : argv) {
    text += (text.empty() ? "" : " ") + (a.find('/') != std::string::npos ? a.substr(a.rfind('/') + 1) : a);
  }
  return text;
}

TEST_F(NetFaultSchedule, APartitionDropsBothWaysOnBothHostsAndIsRemovedByTheSameRules) {
  const std::vector<axon::test::VirtualHost> hosts{{.netns = "n0", .address = "10.0.0.1", .interface = "eth0"},
                                                   {.netns = "n1", .address = "10.0.0.2", .interface = "eth0"}};
  Fault f;
  f.kind = FaultKind::kPartition;
  f.host = 0;
  f.peer = 1;

  const NetFaultCommands sut = net_fault_commands(hosts, f);

  ASSERT_EQ(sut.apply.size(), 4U);
  ASSERT_EQ(sut.remove.size(), 4U);
  EXPECT_EQ(line_of(sut.apply[0]), "ip netns exec n0 iptables -I INPUT -s 10.0.0.2 -j DROP");
  EXPECT_EQ(line_of(sut.apply[3]), "ip netns exec n1 iptables -I OUTPUT -d 10.0.0.1 -j DROP");
  for (std::size_t i = 0; i < sut.apply.size(); ++i) {
    std::string removed = line_of(sut.remove[i]);
    removed.replace(removed.find(" -D "), 4, " -I ");
    EXPECT_EQ(removed, line_of(sut.apply[i]));
  }
}

TEST_F(NetFaultSchedule, DelayAndReorderStartADelayerAndHandItTheHostsOutgoingUdp) {
  const std::vector<axon::test::VirtualHost> hosts{{.netns = "n0", .address = "10.0.0.1", .interface = "eth0"},
                                                   {.netns = "n1", .address = "10.0.0.2", .interface = "eth0"}};
  Fault delay;
  delay.kind = FaultKind::kDelay;
  delay.host = 1;
  delay.delay_ms = 20;
  delay.jitter_ms = 5;
  Fault reorder = delay;
  reorder.kind = FaultKind::kReorder;
  reorder.jitter_ms = 0;
  reorder.percent = 25;

  const NetFaultCommands sut = net_fault_commands(hosts, delay);
  const NetFaultCommands reordered = net_fault_commands(hosts, reorder);

  EXPECT_EQ(line_of(sut.delayer), fmt::format("ip netns exec n1 axon-net-delay --queue 19 --delay-ms 20 --jitter-ms 5 "
                                              "--immediate-percent 0 --seed {}",
                                              delayer_seed(delay)));
  EXPECT_EQ(line_of(reordered.delayer), fmt::format("ip netns exec n1 axon-net-delay --queue 19 --delay-ms 20 "
                                                    "--jitter-ms 0 --immediate-percent 25 --seed {}",
                                                    delayer_seed(reorder)));
  ASSERT_EQ(sut.apply.size(), 1U);
  ASSERT_EQ(sut.remove.size(), 1U);
  EXPECT_EQ(line_of(sut.apply[0]),
            "ip netns exec n1 iptables -A OUTPUT -o eth0 -p udp -j NFQUEUE --queue-num 19 --queue-bypass");
  EXPECT_EQ(line_of(sut.remove[0]),
            "ip netns exec n1 iptables -D OUTPUT -o eth0 -p udp -j NFQUEUE --queue-num 19 --queue-bypass");
  EXPECT_EQ(line_of(reordered.apply.at(0)), line_of(sut.apply[0]));
}

TEST_F(NetFaultSchedule, PartitionsAndLossStartNoDelayer) {
  const std::vector<axon::test::VirtualHost> hosts{{.netns = "n0", .address = "10.0.0.1", .interface = "eth0"},
                                                   {.netns = "n1", .address = "10.0.0.2", .interface = "eth0"}};
  Fault partition;
  partition.kind = FaultKind::kPartition;
  partition.host = 0;
  Fault loss = partition;
  loss.kind = FaultKind::kLoss;
  loss.percent = 10;

  EXPECT_TRUE(net_fault_commands(hosts, partition).delayer.empty());
  EXPECT_TRUE(net_fault_commands(hosts, loss).delayer.empty());
  EXPECT_TRUE(net_fault_commands(hosts, loss).apply.empty());  // VirtualHosts::add_packet_loss does it
}

TEST_F(NetFaultSchedule, TheDelayersSeedFollowsTheFaultsEntry) {
  Fault f;
  f.kind = FaultKind::kDelay;
  f.host = 1;
  f.at_s = 4;
  f.delay_ms = 20;
  Fault later = f;
  later.at_s = 5;

  EXPECT_EQ(delayer_seed(f), delayer_seed(Fault(f)));
  EXPECT_NE(delayer_seed(f), delayer_seed(later));
}

}  // namespace
}  // namespace axon_bench
