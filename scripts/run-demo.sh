#!/usr/bin/env bash
# Runs the perception → planning demo: planning subscribes, perception
# publishes a 2 KiB object list at 100 Hz for SECONDS (default 5), and
# planning prints rate, latency and losses once a second.
#
#   cmake --preset release && cmake --build --preset release
#   scripts/run-demo.sh [SECONDS]
#
# Environment:
#   AXON_BUILD_DIR  build tree holding examples/axon-example-* (default: build/release of this repo)
#   AXON_DOMAIN     domain to run in (default: a random one, so a running system is not disturbed)
#
# Exits non-zero if either process fails (planning fails when it received
# nothing), or if the domain's files stay behind in the shm directory.
set -euo pipefail

duration="${1:-5}"
if ! [[ "$duration" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [SECONDS]   (a whole number of seconds, default 5)" >&2
  exit 2
fi

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="${AXON_BUILD_DIR:-$repo_root/build/release}/examples"
for name in planning perception; do
  if [[ ! -x "$bin_dir/axon-example-$name" ]]; then
    echo "run-demo: $bin_dir/axon-example-$name not found; build it first:" >&2
    echo "  cmake --preset release && cmake --build --preset release   (or set AXON_BUILD_DIR)" >&2
    exit 2
  fi
done

own_domain=0
if [[ -z "${AXON_DOMAIN:-}" ]]; then
  AXON_DOMAIN=$((RANDOM + 1000))
  own_domain=1
fi
export AXON_DOMAIN
shm_dir="${AXON_SHM_DIR:-/dev/shm}"

# Both run in the background so that a signal to this script interrupts
# `wait` at once; the EXIT trap then stops whatever still runs.
planning_pid=""
perception_pid=""
stop_demo() {
  for pid in $perception_pid $planning_pid; do
    kill -TERM "$pid" 2>/dev/null || true  # both handle SIGTERM like Ctrl-C
  done
  for pid in $perception_pid $planning_pid; do
    wait "$pid" 2>/dev/null || true
  done
}
trap stop_demo EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "run-demo: domain $AXON_DOMAIN, ${duration} s, binaries in $bin_dir"

# Planning's own deadline is only a backstop: it is stopped once perception
# is done.
"$bin_dir/axon-example-planning" --duration $((duration + 30)) &
planning_pid=$!
sleep 0.5  # let planning subscribe first, so it sees every scan

"$bin_dir/axon-example-perception" --duration "$duration" &
perception_pid=$!
perception_status=0
wait "$perception_pid" || perception_status=$?
perception_pid=""

sleep 0.3  # let planning take the last scans
kill -TERM "$planning_pid" 2>/dev/null || true  # fails if it already ended on its own
planning_status=0
wait "$planning_pid" || planning_status=$?
planning_pid=""

status=0
if ((perception_status != 0)); then
  echo "run-demo: perception failed (exit status $perception_status)" >&2
  status=1
fi
if ((planning_status != 0)); then
  echo "run-demo: planning failed (exit status $planning_status)" >&2
  status=1
fi
# The last process to leave a domain removes its files; check that it did.
if ((own_domain)); then
  leftovers="$(find "$shm_dir" -maxdepth 1 -name "axon_d${AXON_DOMAIN}[._]*" 2>/dev/null || true)"
  if [[ -n "$leftovers" ]]; then
    echo "run-demo: files of domain $AXON_DOMAIN left behind in $shm_dir:" >&2
    echo "$leftovers" >&2
    status=1
  fi
fi
exit "$status"
