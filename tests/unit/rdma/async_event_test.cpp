// The device's asynchronous events as what the RDMA participant does about
// them (transports/rdma/async_event.hpp), from made-up events: no device.
#include "transports/rdma/async_event.hpp"

#include <gtest/gtest.h>

#include <string>

namespace axon::rdma {
namespace {

// Stand-ins whose addresses the events carry: compared, never read.
ibv_qp some_qp{};
ibv_cq our_cq{};
ibv_cq other_cq{};

constexpr AsyncEventScope kScope{.device = "rxe0", .port = 1, .cq = &our_cq};

ibv_async_event qp_event(ibv_event_type type) {
  ibv_async_event e{};
  e.event_type = type;
  e.element.qp = &some_qp;
  return e;
}

ibv_async_event port_event(ibv_event_type type, int port) {
  ibv_async_event e{};
  e.event_type = type;
  e.element.port_num = port;
  return e;
}

ibv_async_event cq_event(ibv_cq* cq) {
  ibv_async_event e{};
  e.event_type = IBV_EVENT_CQ_ERR;
  e.element.cq = cq;
  return e;
}

TEST(RdmaAsyncEvent, AQueuePairInErrorFailsItsLinkSayingWhy) {
  for (const ibv_event_type type :
       {IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR, IBV_EVENT_PATH_MIG_ERR}) {
    const AsyncEventOutcome sut = classify_async_event(qp_event(type), kScope);

    EXPECT_EQ(sut.action, AsyncEventAction::kFailLink) << async_event_name(type);
    EXPECT_EQ(sut.qp, &some_qp);
    EXPECT_NE(sut.why.find("queue pair"), std::string::npos) << sut.why;
    EXPECT_NE(sut.why.find(async_event_name(type)), std::string::npos) << sut.why;
  }
  EXPECT_NE(classify_async_event(qp_event(IBV_EVENT_QP_ACCESS_ERR), kScope).why.find("remote access"),
            std::string::npos);
}

TEST(RdmaAsyncEvent, EventsOfAWorkingQueuePairChangeNothing) {
  for (const ibv_event_type type :
       {IBV_EVENT_COMM_EST, IBV_EVENT_SQ_DRAINED, IBV_EVENT_QP_LAST_WQE_REACHED, IBV_EVENT_PATH_MIG}) {
    const AsyncEventOutcome sut = classify_async_event(qp_event(type), kScope);

    EXPECT_EQ(sut.action, AsyncEventAction::kNone) << async_event_name(type);
    EXPECT_EQ(sut.qp, nullptr);
  }
}

TEST(RdmaAsyncEvent, OurPortGoingDownEndsEveryLinkNamingThePortAndDevice) {
  const AsyncEventOutcome sut = classify_async_event(port_event(IBV_EVENT_PORT_ERR, 1), kScope);

  EXPECT_EQ(sut.action, AsyncEventAction::kPortDown);
  EXPECT_EQ(sut.why, "port 1 of rxe0 went down (IBV_EVENT_PORT_ERR)");
}

TEST(RdmaAsyncEvent, OurPortComingBackRetriesTheConnections) {
  const AsyncEventOutcome sut = classify_async_event(port_event(IBV_EVENT_PORT_ACTIVE, 1), kScope);

  EXPECT_EQ(sut.action, AsyncEventAction::kPortUp);
  EXPECT_EQ(sut.why, "port 1 of rxe0 is up (IBV_EVENT_PORT_ACTIVE)");
}

TEST(RdmaAsyncEvent, AnotherPortsEventsChangeNothing) {
  EXPECT_EQ(classify_async_event(port_event(IBV_EVENT_PORT_ERR, 2), kScope).action, AsyncEventAction::kNone);
  EXPECT_EQ(classify_async_event(port_event(IBV_EVENT_PORT_ACTIVE, 2), kScope).action, AsyncEventAction::kNone);
  const AsyncEventScope on_port_two{.device = "mlx5_0", .port = 2, .cq = &our_cq};
  EXPECT_EQ(classify_async_event(port_event(IBV_EVENT_PORT_ERR, 2), on_port_two).action, AsyncEventAction::kPortDown);
  EXPECT_EQ(classify_async_event(port_event(IBV_EVENT_PORT_ERR, 1), on_port_two).action, AsyncEventAction::kNone);
}

TEST(RdmaAsyncEvent, AddressAndSubnetChangesAreOnlyLogged) {
  for (const ibv_event_type type : {IBV_EVENT_LID_CHANGE, IBV_EVENT_PKEY_CHANGE, IBV_EVENT_GID_CHANGE,
                                    IBV_EVENT_CLIENT_REREGISTER, IBV_EVENT_SM_CHANGE}) {
    const AsyncEventOutcome sut = classify_async_event(port_event(type, 1), kScope);

    EXPECT_EQ(sut.action, AsyncEventAction::kLog) << async_event_name(type);
    EXPECT_NE(sut.why.find(async_event_name(type)), std::string::npos) << sut.why;
  }
}

TEST(RdmaAsyncEvent, OurCompletionQueueInErrorStopsRdmaAnotherOnesDoesNot) {
  const AsyncEventOutcome ours = classify_async_event(cq_event(&our_cq), kScope);
  const AsyncEventOutcome theirs = classify_async_event(cq_event(&other_cq), kScope);

  EXPECT_EQ(ours.action, AsyncEventAction::kStop);
  EXPECT_NE(ours.why.find("completion queue"), std::string::npos) << ours.why;
  EXPECT_EQ(theirs.action, AsyncEventAction::kNone);
}

TEST(RdmaAsyncEvent, AFatalDeviceStopsRdmaNamingTheDevice) {
  ibv_async_event e{};
  e.event_type = IBV_EVENT_DEVICE_FATAL;

  const AsyncEventOutcome sut = classify_async_event(e, kScope);

  EXPECT_EQ(sut.action, AsyncEventAction::kStop);
  EXPECT_NE(sut.why.find("rxe0"), std::string::npos) << sut.why;
  EXPECT_NE(sut.why.find("IBV_EVENT_DEVICE_FATAL"), std::string::npos) << sut.why;
}

}  // namespace
}  // namespace axon::rdma
