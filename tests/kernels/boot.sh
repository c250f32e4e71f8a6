#!/bin/bash
# Boots a Debian kernel package's kernel under qemu and runs one command
# inside it, in this directory, on the host's own files.
#
#   tests/kernels/boot.sh KERNEL_ROOT RESULTS_DIR COMMAND...
#
# KERNEL_ROOT is a kernel package unpacked with dpkg-deb -x (boot/vmlinuz-*,
# lib/modules/*). The guest sees the host's / read-only (9p) under a tmpfs
# overlay, so it runs this checkout's build and the host's JDKs; RESULTS_DIR
# is shared writable at /jbpf-results. The guest's console goes to
# RESULTS_DIR/console.log and to standard output; the exit status is the
# command's (125: the guest did not come up; 124: BOOT_TIMEOUT passed).
#
# Environment: BOOT_TIMEOUT (seconds, default 1800), GUEST_MEMORY (default
# 4G), GUEST_CPUS (default 2).
#
# The vCPUs share one host thread (tcg,thread=single): with one thread
# each, a kernel patching its own code (a tracepoint's static branch, as
# attaching a BPF program to sched_switch does) was seen to trap on a
# half-patched instruction on the other vCPU (6.12, "Oops: int3" in
# __schedule): qemu's emulation, not the kernel, which keeps that safe on
# real CPUs.
set -euo pipefail
if [ $# -lt 3 ]; then
	echo "usage: $0 KERNEL_ROOT RESULTS_DIR COMMAND..." >&2
	exit 2
fi
kroot=$(realpath "$1")
results=$(realpath -m "$2")
shift 2
here=$(dirname "$(realpath "$0")")
vmlinuz=$(ls "$kroot"/boot/vmlinuz-* 2>/dev/null | head -1)
release=$(ls "$kroot/lib/modules" 2>/dev/null | head -1)
if [ -z "$vmlinuz" ] || [ -z "$release" ]; then
	echo "boot.sh: $kroot is not an unpacked kernel package (no boot/vmlinuz-* or lib/modules/)" >&2
	exit 2
fi
for tool in qemu-system-x86_64 busybox; do
	command -v "$tool" >/dev/null || { echo "boot.sh: $tool is missing (./install-deps.sh installs it)" >&2; exit 2; }
done
busybox=$(command -v busybox)
! readelf -l "$busybox" 2>/dev/null | grep -q INTERP ||
	{ echo "boot.sh: $busybox is not static (Debian's busybox-static is)" >&2; exit 2; }

# The initramfs: busybox, /init, and the modules 9p and overlayfs need, in
# load order, uncompressed (busybox's insmod reads plain .ko files). A module
# not found is built in.
mkdir -p "$results"
initramfs="$kroot/jbpf-initramfs.cpio.gz"
if [ ! -s "$initramfs" ] || [ "$here/guest-init" -nt "$initramfs" ]; then
	staging=$(mktemp -d)
	trap 'rm -rf "$staging"' EXIT
	mkdir -p "$staging/bin" "$staging/modules"
	cp "$busybox" "$staging/bin/busybox"
	cp "$here/guest-init" "$staging/init"
	: >"$staging/modules.order"
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache \
		 9pnet 9pnet_virtio 9p overlay; do
		ko=$(find "$kroot/lib/modules/$release/kernel" -name "$m.ko" -o -name "$m.ko.xz" | head -1)
		[ -n "$ko" ] || continue
		case $ko in
		*.xz) xz -dc "$ko" >"$staging/modules/$m.ko" ;;
		*) cp "$ko" "$staging/modules/$m.ko" ;;
		esac
		echo "$m.ko" >>"$staging/modules.order"
	done
	(cd "$staging" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1) >"$initramfs.tmp"
	mv "$initramfs.tmp" "$initramfs"
fi

# The guest mounts a /tmp of its own; guest-init keeps a checkout under
# the host's /tmp (a clone in a mktemp -d directory) in sight through it.
printf '%s\n' "$PWD" >"$results/checkout"
{
	echo "cd $(printf '%q' "$PWD") || exit 126"
	printf '%q ' "$@"
	echo
} >"$results/command.sh"

status=0
timeout "${BOOT_TIMEOUT:-1800}" qemu-system-x86_64 -nodefaults -nographic -no-reboot \
	-machine q35 -accel tcg,thread=single -cpu max -smp "${GUEST_CPUS:-2}" -m "${GUEST_MEMORY:-4G}" \
	-kernel "$vmlinuz" -initrd "$initramfs" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3 mitigations=off" \
	-serial stdio -monitor none \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$results",mount_tag=results,security_model=none,multidevs=remap \
	</dev/null | tr -d '\r' | tee "$results/console.log" || status=$?
[ "$status" -eq 124 ] && { echo "boot.sh: the guest ran past BOOT_TIMEOUT" >&2; exit 124; }
code=$(sed -n 's/^jbpf-guest-exit: \([0-9]*\)$/\1/p' "$results/console.log" | tail -1)
[ -n "$code" ] || { echo "boot.sh: the guest never ran the command (see $results/console.log)" >&2; exit 125; }
exit "$code"
