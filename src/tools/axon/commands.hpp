// Every axon subcommand, one factory each: main.cpp registers them in this order.
#pragma once

#include <memory>

#include "src/tools/axon/command.hpp"

namespace axon::tools {

/// `axon doctor`: the real-time checklist of this host (doctor/doctor_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_doctor_command();
/// `axon topic list` / `axon topic info TOPIC` (graph/topic_*_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_list_command();
[[nodiscard]] std::unique_ptr<Command> make_topic_info_command();
/// `axon topic delay TOPIC`: the subscribers' latency histograms (graph/topic_delay_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_delay_command();
/// `axon node list` / `axon node info NODE` (graph/node_*_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_node_list_command();
[[nodiscard]] std::unique_ptr<Command> make_node_info_command();
/// `axon pool [NODE]`: chunks per class and who holds them (graph/pool_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_pool_command();
/// `axon network [NODE]`: the network counters (UDP, RDMA) of the nodes that reach other hosts
/// (graph/network_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_network_command();
/// `axon monitor`: every topic's rate, bandwidth, latency, drops and queues, refreshed like top (graph/monitor_*.cpp).
[[nodiscard]] std::unique_ptr<Command> make_monitor_command();
/// `axon clean`: removes what dead processes left of a domain (graph/clean_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_clean_command();

/// `axon topic echo`: a topic's messages as JSON, from its stored schema (topic/echo_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_echo_command();
/// `axon topic hz`: a topic's rate and period (topic/hz_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_hz_command();
/// `axon topic bw`: a topic's bytes per second and message sizes (topic/bw_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_bw_command();
/// `axon topic pub`: publishes a message given as JSON, built from the topic's stored schema (topic/pub_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_pub_command();

/// `axon play FILE...`: replays MCAP recordings with their recorded types and timing (play/play_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_play_command();
/// `axon record`: topics into MCAP files, zero copy; `--recover FILE` rebuilds a cut file's summary
/// (record/record_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_record_command();
/// `axon info FILE...`: what MCAP files hold, like `mcap info` (info/info_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_info_command();

}  // namespace axon::tools
