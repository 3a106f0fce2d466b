#!/bin/bash
# run_on_softroce.sh RUNNER CMD [ARGS...]: runs CMD inside the Soft-RoCE guest that RUNNER
# (run-softroce.sh) boots, and exits with its status; exits 77 (ctest: skipped) with a message
# naming what is missing when this machine cannot boot the guest.
set -u
runner=$1
shift
missing=()
[[ -x "${runner}" ]] || missing+=("${runner} (the Soft-RoCE harness)")
[[ "$(id -u)" -eq 0 ]] || missing+=("root (the harness loads modules into its guest and mounts /)")
for tool in qemu-system-x86_64 busybox cpio depmod rdma; do
  command -v "${tool}" >/dev/null 2>&1 || missing+=("${tool} (apt: qemu-system-x86 busybox-static cpio kmod iproute2)")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  printf 'skipped: the Soft-RoCE test needs %s\n' "${missing[@]}"
  exit 77
fi
exec "${runner}" "$@"
