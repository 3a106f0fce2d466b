// Camera frames whose size is known only at run time, without a schema: a
// Slice<std::uint8_t> topic loaned at the frame's size and read in place by a
// viewer callback, and a recorder that joins the same topic as bytes (as a
// bridge or logger would). The resolution changes half way to show that
// every message has its own size.
//   axon-example-camera-frame [WIDTH HEIGHT [FRAMES]]      (default 640 480 8)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "axon/axon.hpp"

namespace {

/// What a camera driver would write: a gradient that moves with the frame.
void capture(std::span<std::uint8_t> rgb, std::uint32_t width, std::uint64_t frame) {
  for (std::size_t i = 0; i < rgb.size(); ++i) {
    rgb[i] = static_cast<std::uint8_t>((i / 3 % width + frame) % 256);
  }
}

int fail(const axon::Error& error) {
  std::fprintf(stderr, "camera_frame: %s\n", std::string(error.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t width = argc > 2 ? static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 640;
  std::uint32_t height = argc > 2 ? static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 480;
  const std::uint64_t frames = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 8;

  auto node = axon::Node::create("camera");  // domain: AXON_DOMAIN, or 0
  if (!node) {
    return fail(node.error());
  }
  auto camera = (*node)->advertise<axon::Slice<std::uint8_t>>("camera/image");
  if (!camera) {
    return fail(camera.error());
  }

  // The viewer: a callback an executor runs with each frame, a
  // std::span<const std::uint8_t> over the camera's shared memory.
  std::uint64_t shown = 0;
  auto viewer = (*node)->subscribe<axon::Slice<std::uint8_t>>(
      "camera/image", [&](const axon::Sample<axon::Slice<std::uint8_t>>& frame) {
        ++shown;
        std::printf("viewer: frame %llu, %zu bytes, first pixel %u\n",
                    static_cast<unsigned long long>(frame.info().sequence), frame.size(),
                    frame.empty() ? 0U : frame[0]);
      });
  if (!viewer) {
    return fail(viewer.error());
  }
  axon::SingleThreadedExecutor executor;
  if (auto added = executor.add(*viewer); !added) {
    return fail(added.error());
  }

  // The recorder: untyped bytes, joined as the topic's declared type, so
  // that the same endpoint could also publish them back (a replay tool).
  auto recorder =
      (*node)->subscribe_bytes("camera/image", axon::type_identity_of<axon::Slice<std::uint8_t>>(), {.depth = 16});
  if (!recorder) {
    return fail(recorder.error());
  }

  std::printf("camera: %s, %s\n", std::string(axon::to_string((*camera)->data_path())).c_str(),
              (*node)->transport_for("camera/image") == axon::TransportKind::kShm ? "shared memory" : "udp");
  std::uint64_t recorded_bytes = 0;
  for (std::uint64_t frame = 1; frame <= frames; ++frame) {
    if (frame == frames / 2 + 1) {  // the driver switched modes: frames of another size from now on
      width = width * 2;
      height = height * 2;
    }
    auto loan = (*camera)->loan(std::size_t{width} * height * 3);  // uninitialised: capture() writes every byte
    if (!loan) {
      return loan.exhausted() ? 1 : fail(loan.error());
    }
    capture(**loan, width, frame);
    if (auto sent = (*camera)->publish(std::move(*loan)); !sent) {
      return fail(sent.error());
    }
    if (auto ran = executor.spin_some(); !ran) {
      return fail(ran.error());
    }
    while (auto bytes = (*recorder)->take()) {
      recorded_bytes += bytes->size();
    }
  }
  std::printf("camera: %llu frames shown, %llu bytes recorded\n", static_cast<unsigned long long>(shown),
              static_cast<unsigned long long>(recorded_bytes));
  return shown == frames ? 0 : 1;
}
