// The descriptor channel never blocks: a silent client is closed at its
// deadline without delaying a real request, and a deposited descriptor
// survives its sender closing everything.
#include "transports/shm/fd_channel.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/common/temp_dir.hpp"

namespace axon::shm {
namespace {

bool same_file(int a, int b) {
  struct stat sa {};
  struct stat sb {};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

int connect_silently(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

class FdChannel : public ::testing::Test {
 protected:
  void SetUp() override {
    shared_ = ::memfd_create("fd-channel-test", MFD_CLOEXEC);
    ASSERT_GE(shared_, 0);
    auto server = FdServer::listen(path_, 0600, shared_, static_cast<gid_t>(-1));
    ASSERT_TRUE(server.ok()) << server.error().message();
    sut = std::move(*server);
  }
  void TearDown() override { ::close(shared_); }

  test::TempDir dir_{"axon-fd-channel"};
  std::string path_ = dir_.path() + "/node.sock";
  int shared_ = -1;
  FdServer sut;
  std::vector<Deposit> deposits;
};

TEST_F(FdChannel, AnswersARequestWhileASilentClientWaits) {
  const int silent = connect_silently(path_);
  auto request = start_fd_request(path_);
  ASSERT_TRUE(request.ok()) << request.error().message();

  sut.serve(0, deposits);

  auto answer = try_receive_fd(*request, path_);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  ASSERT_GE(*answer, 0) << "answered in the same serve() call as the silent client was accepted";
  EXPECT_TRUE(same_file(*answer, shared_));
  EXPECT_EQ(sut.timed_out_clients(), 0U);
  ::close(*answer);
  ::close(*request);
  ::close(silent);
}

TEST_F(FdChannel, ClosesASilentClientAtItsDeadline) {
  const int silent = connect_silently(path_);
  sut.serve(0, deposits);
  EXPECT_EQ(sut.next_deadline_ns(), FdServer::kClientDeadlineNs);

  sut.serve(FdServer::kClientDeadlineNs, deposits);

  EXPECT_EQ(sut.timed_out_clients(), 1U);
  char byte = 0;
  EXPECT_EQ(::recv(silent, &byte, 1, 0), 0) << "the server closed its end";
  EXPECT_EQ(sut.next_deadline_ns(), INT64_MAX);
  ::close(silent);
}

TEST_F(FdChannel, ARequestWithoutAnAnswerYetIsNoError) {
  auto request = start_fd_request(path_);
  ASSERT_TRUE(request.ok());

  auto answer = try_receive_fd(*request, path_);

  ASSERT_TRUE(answer.ok()) << answer.error().message();
  EXPECT_EQ(*answer, -1);
  ::close(*request);
}

TEST_F(FdChannel, KeepsADepositedDescriptorAfterTheSenderClosedIt) {
  const int pool = ::memfd_create("deposited", MFD_CLOEXEC);
  ASSERT_GE(pool, 0);
  struct stat before {};
  ASSERT_EQ(::fstat(pool, &before), 0);

  ASSERT_TRUE(deposit_fd(path_, pool, 3, 7).ok());
  ::close(pool);  // as if the sender exited
  sut.serve(0, deposits);

  ASSERT_EQ(deposits.size(), 1U);
  EXPECT_EQ(deposits[0].participant, 3U);
  EXPECT_EQ(deposits[0].generation, 7U);
  struct stat after {};
  ASSERT_EQ(::fstat(deposits[0].fd, &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  ::close(deposits[0].fd);
}

TEST_F(FdChannel, SaysWhenNobodyListens) {
  sut.close();

  auto request = start_fd_request(path_);

  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.error().code(), ErrorCode::kClosed);
  EXPECT_NE(request.error().message().find(path_), std::string::npos);
}

}  // namespace
}  // namespace axon::shm
