#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the build, the tests, the demo and the
# benchmarks need.  Does nothing when they are all present.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

packages=(
	# building kernels and the module
	make gcc bc bison flex libelf-dev libssl-dev dwarves cpio kmod
	xz-utils python3 linux-headers-amd64 sparse dkms libibverbs-dev
	# the VM and what runs inside it
	qemu-system-x86 iproute2 iputils-ping procps rdma-core
	ibverbs-utils ibverbs-providers iperf3 ethtool perftest
	# benchmark report
	gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep 'install ok installed' > /dev/null || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0

log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
