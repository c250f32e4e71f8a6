#!/bin/sh
# Installs what building and testing jbpfprof needs, from Debian 12's own
# packages. Run as root. Safe to run again.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (sudo ./install-deps.sh)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	make gcc g++ libc6-dev pkg-config binutils \
	clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev linux-libc-dev \
	libcmocka-dev util-linux protobuf-c-compiler libprotobuf-c-dev golang-go chromium \
	openjdk-17-jdk-headless openjdk-17-source unzip >/dev/null
echo "install-deps.sh: build and test dependencies are installed"
