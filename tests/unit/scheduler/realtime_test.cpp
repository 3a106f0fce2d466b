// ThreadOptions: errors that name what is missing.
#include "axon/realtime.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace axon {
namespace {

TEST(ThreadOptions, DefaultOptionsChangeNothing) { EXPECT_TRUE(apply_thread_options({}).ok()); }

TEST(ThreadOptions, AnUnavailableCpuIsNamedWithTheAllowedSet) {
  auto result = apply_thread_options({.cpu_affinity = {CPU_SETSIZE + 5}});

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(result.error().message());
  EXPECT_NE(message.find("CPU " + std::to_string(CPU_SETSIZE + 5)), std::string::npos) << message;
  EXPECT_NE(message.find("allowed CPUs: "), std::string::npos) << message;
}

TEST(ThreadOptions, PinsToAnAllowedCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) {
    ++first;
  }
  // In a child: the pin must not leak into the other tests' threads.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    _exit(apply_thread_options({.cpu_affinity = {first}}).ok() && sched_getcpu() == first ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(ThreadOptions, RefusesAPriorityOutsideTheFifoRange) {
  auto result = apply_thread_options({.sched_fifo_priority = 500});

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message().find("1..99"), std::string_view::npos) << result.error().message();
}

TEST(ThreadOptions, SaysWhatIsMissingForSchedFifo) {
  // In a child without privilege: as nobody, with RLIMIT_RTPRIO 0.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    const rlimit none{0, 0};
    setrlimit(RLIMIT_RTPRIO, &none);
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(3);
    }
    auto result = apply_thread_options({.sched_fifo_priority = 10});
    const std::string message = result.ok() ? "OK" : std::string(result.error().message());
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) {
    message.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "could not drop privileges";

  EXPECT_NE(message.find("CAP_SYS_NICE"), std::string::npos) << message;
  EXPECT_NE(message.find("RLIMIT_RTPRIO is 0"), std::string::npos) << message;
  EXPECT_NE(message.find("ulimit -r 10"), std::string::npos) << message;
  EXPECT_NE(message.find("limits.conf"), std::string::npos) << message;
}

}  // namespace
}  // namespace axon
