#!/bin/bash
# softroce_stage.sh TEST_BINARY: what ctest rdma.softroce_devices runs inside the Soft-RoCE guest
# (rxe0 on 10.0.2.15): the device and verbs tests as root, then the pin tests as an unprivileged user
# under `ulimit -l 64`, where registration must fail as the pin check predicts (AXON_RDMA_EXPECT_PIN_REFUSAL:
# the pool registration test asserts the refusal). Fails if either fails.
# The rdma_cm tests (RdmaCmOnDevice) need a second "host" on the same rxe0: 10.0.2.16 (its GID, 3, appears
# once the kernel has the address). RdmaMixedOnDevice adds a third, 10.0.2.17, host c of its config, which
# names no rdma_device there (UDP only).
# RdmaLinkOnDevicePortDown takes eth0 down and up again (the port events); it puts it up again and waits for both
# GIDs before it ends, pass or fail, so the suites after it find the device as before.
set -u
binary=$1
ip addr add 10.0.2.16/24 dev eth0 || exit 1
ip addr add 10.0.2.17/24 dev eth0 || exit 1
for _ in $(seq 50); do
  grep -q '0000:0000:0000:0000:0000:ffff:0a00:0210' /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break
  sleep 0.1
done
export AXON_RDMA_EXPECT_DEVICE=rxe0 AXON_RDMA_EXPECT_IPV4=10.0.2.15
"${binary}" --gtest_brief=1 '--gtest_filter=RdmaDevicesHere.*:RdmaPinLimit.*:RdmaVerbsOnDevice.*:RdmaCmOnDevice.*:RdmaPoolOnDevice.*:RdmaDataPlaneOnDevice.*:RdmaNodeStartOnDevice.*:RdmaPeerLinksOnDevice*:RdmaNodeLinksOnDevice.*:RdmaLinkOnDevice*:RdmaLinkOnDevicePortDown.*:RdmaNodeDataOnDevice.*:RdmaNodeCreditOnDevice.*:RdmaNodeFanOutOnDevice.*:RdmaNodeTransportsOnDevice.*:RdmaMixedOnDevice.*' || exit 1
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
  bash -c 'ulimit -l 64 && AXON_RDMA_EXPECT_PIN_REFUSAL=1 exec "$0" --gtest_brief=1 \
    "--gtest_filter=RdmaPinLimit.*:RdmaVerbsOnDevice.ThePinCheck*:RdmaPoolOnDevice.ThePinCheck*:RdmaNodeStartOnDevice.ThePinCheck*"' \
  "${binary}" || exit 1
