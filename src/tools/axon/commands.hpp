// Every axon subcommand, one factory each: main.cpp registers them in this order.
#pragma once

#include <memory>

#include "src/tools/axon/command.hpp"

namespace axon::tools {

/// `axon doctor`: the real-time checklist of this host (doctor/doctor_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_doctor_command();

/// `axon topic echo`: a topic's messages as JSON, from its stored schema (topic/echo_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_echo_command();
/// `axon topic hz`: a topic's rate and period (topic/hz_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_hz_command();
/// `axon topic bw`: a topic's bytes per second and message sizes (topic/bw_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_topic_bw_command();

}  // namespace axon::tools
