#!/bin/bash
# run-softroce.sh CMD [ARGS...]   (from ../shared/softroce, the project's Soft-RoCE harness; the RDMA tests'
# ctest rdma.softroce_devices runs through it, see tests/unit/rdma/run_on_softroce.sh)
# Boots a Debian 6.1 kernel under qemu (TCG, no KVM needed) with Soft-RoCE (rdma_rxe) on
# eth0 = 10.0.2.15 (device rxe0, GID 0 = fe80:: link-local, GID 1 = ::ffff:10.0.2.15 RoCEv2),
# runs CMD inside the guest (host / is the guest root: 9p read-only + tmpfs overlay, cwd = $PWD)
# and exits with CMD's exit status (124 = timeout, 125 = guest never reported a status).
# Host needs: qemu-system-x86 busybox-static cpio kmod + the userland you run (rdma-core,
# ibverbs-providers, ibverbs-utils, iproute2, perftest ...). Guest network: qemu user net, restrict=on.
# Env: SOFTROCE_DIR (cache, /tmp/softroce)  SOFTROCE_KVER (default: Debian's current amd64 kernel)  SOFTROCE_TIMEOUT (600 s)
#      SOFTROCE_MEM (2G)  SOFTROCE_SMP (2)  SOFTROCE_VERBOSE=1 (show [softroce] boot lines)
#      SOFTROCE_APPEND (more kernel parameters, e.g. "clocksource=tsc tsc=reliable": scripts/bench-rdma.sh says why)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
D=${SOFTROCE_DIR:-/tmp/softroce}
# The kernel that Debian's linux-image-amd64 points at today, unless one was already unpacked.
KVER=${SOFTROCE_KVER:-$(ls "$D"/kroot/boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | head -n1 || true)}
debian_kernel() { apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n1 || true; }
[ -n "$KVER" ] || KVER=$(debian_kernel)
[ -n "$KVER" ] || { apt-get update -q >&2 && KVER=$(debian_kernel); } || true
[ -n "$KVER" ] || { echo "softroce: cannot tell which Debian kernel to use (run apt-get update?)" >&2; exit 2; }
IMG=$D/initrd-$KVER.img; VMLINUZ=$D/kroot/boot/vmlinuz-$KVER
MODS="virtio_pci virtio_net netfs fscache 9pnet 9pnet_virtio 9p overlay crc32_generic
      udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe ib_cm iw_cm rdma_cm rdma_ucm ib_umad"

build() {   # one-time: fetch kernel .deb, extract, build initramfs (busybox + modules + /init)
  mkdir -p "$D"; cd "$D"
  if [ ! -f "$VMLINUZ" ]; then
    # apt's lists may predate the kernel Debian ships now: update them once and try again.
    ls linux-image-"$KVER"_*.deb >/dev/null 2>&1 || apt-get download "linux-image-$KVER" \
      || { apt-get update -q && apt-get download "linux-image-$KVER"; }
    dpkg -x linux-image-"$KVER"_*.deb kroot
  fi
  depmod -b "$D/kroot" "$KVER"
  local R; R=$(mktemp -d "$D/initrd.XXXX")
  mkdir -p "$R"/{bin,dev,proc,sys,host,rw,newroot,mods}
  cp /usr/bin/busybox "$R/bin/"; for a in sh mount insmod mkdir cat cut sleep poweroff chroot sync; do ln -s busybox "$R/bin/$a"; done
  for m in $MODS; do modprobe -d "$D/kroot" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'; done \
    | awk '!s[$0]++' | while read -r f; do cp "$f" "$R/mods/"; basename "$f" >> "$R/mods/order"; done
  cat > "$R/init" <<'EOF'
#!/bin/sh
export PATH=/bin
log() { [ -f /newroot/run/softroce/verbose ] && echo "[softroce] $(cut -d' ' -f1 /proc/uptime)s: $*"; return 0; }
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod /mods/$m || echo "[softroce] insmod $m failed"; done
O="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o $O,ro,cache=loose hostroot /host || echo "[softroce] 9p root mount failed"
mount -t tmpfs tmpfs /rw; mkdir -p /rw/u /rw/w
mount -t overlay -o lowerdir=/host,upperdir=/rw/u,workdir=/rw/w overlay /newroot || mount --bind /host /newroot
mount -t proc proc /newroot/proc; mount -t sysfs sys /newroot/sys; mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm; mount -t devpts devpts /newroot/dev/pts; mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/run; mkdir -p /newroot/run/softroce
mount -t 9p -o $O out /newroot/run/softroce || echo "[softroce] 9p out mount failed"
log "modules loaded, setting up rxe0"
chroot /newroot /bin/sh -c 'ip link set lo up; ip link set eth0 up; ip addr add 10.0.2.15/24 dev eth0
  rdma link add rxe0 type rxe netdev eth0 || echo "[softroce] rdma link add failed"
  for i in $(seq 50); do grep -q "^0000:0000:0000:0000:0000:ffff:0a00:020f" /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null && break; sleep 0.1; done'
log "running command"
chroot /newroot /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  TERM=dumb SOFTROCE_OUT=/run/softroce /bin/sh -c '/bin/bash /run/softroce/cmd.sh; echo $? > /run/softroce/rc' \
  </dev/null >/dev/console 2>&1
log "done, rc=$(cat /newroot/run/softroce/rc 2>/dev/null)"
sync; poweroff -f
EOF
  chmod +x "$R/init"
  (cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$IMG.tmp" && mv "$IMG.tmp" "$IMG"
  rm -rf "$R"
}
mkdir -p "$D"; ( flock 9; [ -f "$IMG" ] && [ -f "$VMLINUZ" ] || build ) 9>"$D/.lock"

OUT=$(mktemp -d "$D/run.XXXXXX"); trap 'rm -rf "$OUT"' EXIT
{ printf 'cd %q || exit 126\n' "$PWD"; printf '%q ' "$@"; echo; } > "$OUT/cmd.sh"
[ -n "${SOFTROCE_VERBOSE:-}" ] && touch "$OUT/verbose"
set +e
timeout -k 10 "${SOFTROCE_TIMEOUT:-600}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max \
  -m "${SOFTROCE_MEM:-2G}" -smp "${SOFTROCE_SMP:-2}" -nodefaults -display none -serial stdio -no-reboot \
  -kernel "$VMLINUZ" -initrd "$IMG" -append "console=ttyS0 quiet loglevel=3 panic=-1${SOFTROCE_APPEND:+ ${SOFTROCE_APPEND}}" \
  -netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$OUT",mount_tag=out,security_model=none </dev/null | tr -d '\r'
q=${PIPESTATUS[0]}
[ "$q" = 124 ] || [ "$q" = 137 ] && { echo "softroce: timeout" >&2; exit 124; }
[ -s "$OUT/rc" ] || { echo "softroce: guest gave no exit status (qemu rc $q)" >&2; exit 125; }
exit "$(cat "$OUT/rc")"
