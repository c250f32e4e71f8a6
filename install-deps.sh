#!/bin/sh
# Installs what building and testing jbpfprof needs, from Debian 12's own
# packages, and the browser tests' Node packages (playwright-core, at the
# version tests/browser/package-lock.json pins) with npm ci. Run as root.
# Safe to run again.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (sudo ./install-deps.sh)" >&2
	exit 1
fi
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	make gcc g++ libc6-dev pkg-config binutils \
	clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev linux-libc-dev \
	libcmocka-dev libcurl4-openssl-dev libssl-dev util-linux passwd protobuf-c-compiler libprotobuf-c-dev golang-go nodejs \
	openjdk-17-jdk-headless openjdk-17-source unzip >/dev/null
# The unwind table tests profile Debian's own python3 (built without frame
# pointers) and compare with perf's DWARF unwinder (linux-perf).
apt-get install -y -qq --no-install-recommends python3 linux-perf >/dev/null
# The kernel matrix (tests/kernels/) boots Debian's kernels under qemu, with
# a busybox initramfs, and reads their modules (some .ko.xz).
apt-get install -y -qq --no-install-recommends qemu-system-x86 busybox-static xz-utils >/dev/null
# The flame graph page's browser tests run in both of Debian's browsers.
apt-get install -y -qq --no-install-recommends chromium firefox-esr >/dev/null
# Debian's nodejs comes without npm; a nodejs package that bundles npm
# conflicts with Debian's npm package, so install it only when missing.
if ! command -v npm >/dev/null 2>&1; then
	apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
# npm ci installs exactly the lock, and never downloads a browser: the tests
# drive Debian's /usr/bin/chromium and /usr/bin/firefox-esr.
(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
echo "install-deps.sh: build and test dependencies are installed"
