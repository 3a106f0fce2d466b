// Every axon subcommand, one factory each: main.cpp registers them in this order.
#pragma once

#include <memory>

#include "src/tools/axon/command.hpp"

namespace axon::tools {

/// `axon doctor`: the real-time checklist of this host (doctor/doctor_command.cpp).
[[nodiscard]] std::unique_ptr<Command> make_doctor_command();

}  // namespace axon::tools
