// SocketPair: two UDP sockets on 127.0.0.1, each connected to the other,
// for tests of waits that watch or read a socket.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace axon::test {

/// Two UDP sockets on 127.0.0.1, each connected to the other.
class SocketPair {
 public:
  SocketPair() {
    sockaddr_in address[2] = {};
    for (int i = 0; i < 2; ++i) {
      fd[i] = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      address[i].sin_family = AF_INET;
      address[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t length = sizeof(address[i]);
      EXPECT_EQ(::bind(fd[i], reinterpret_cast<sockaddr*>(&address[i]), sizeof(address[i])), 0);
      EXPECT_EQ(::getsockname(fd[i], reinterpret_cast<sockaddr*>(&address[i]), &length), 0);
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(::connect(fd[i], reinterpret_cast<sockaddr*>(&address[1 - i]), sizeof(address[i])), 0);
    }
  }
  ~SocketPair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  void send_to_receiver() const { EXPECT_EQ(::send(fd[0], "x", 1, 0), 1); }
  void drain_receiver() const {
    char byte = 0;
    while (::recv(fd[1], &byte, 1, MSG_DONTWAIT) == 1) {
    }
  }
  [[nodiscard]] int receiver() const { return fd[1]; }
  int fd[2] = {-1, -1};
};

}  // namespace axon::test
