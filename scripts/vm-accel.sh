#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Choose QEMU's accelerator for the test VMs by trying it.
#
#   scripts/vm-accel.sh KERNEL_IMAGE
#
# Prints "kvm" or "tcg" on stdout and why on stderr.  IPOIB_CM_ACCEL=kvm or
# tcg decides without a probe.  Otherwise KVM is used only if /dev/kvm is
# writable and a probe boot of KERNEL_IMAGE under KVM gets as far as
# mounting its root file system within IPOIB_CM_ACCEL_PROBE_SECS (30 s):
# /dev/kvm can exist on a host without working nested virtualisation, where
# QEMU aborts ("failed to set MSR ...") or hangs in the firmware.  TCG is
# the fallback that always works.  The result is kept per boot of the host
# in $IPOIB_CM_CACHE/accel.BOOT_ID.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=${1:?usage: vm-accel.sh KERNEL_IMAGE}
kvm_dev=${IPOIB_CM_KVM_DEV:-/dev/kvm}

case ${IPOIB_CM_ACCEL:-} in
kvm|tcg)
	log "accelerator: $IPOIB_CM_ACCEL (IPOIB_CM_ACCEL)"
	echo "$IPOIB_CM_ACCEL"
	exit 0
	;;
"")	;;
*)	die "IPOIB_CM_ACCEL must be kvm or tcg, not '$IPOIB_CM_ACCEL'" ;;
esac

if [ ! -w "$kvm_dev" ]; then
	log "accelerator: tcg ($kvm_dev is missing or not writable)"
	echo tcg
	exit 0
fi

mkdir -p "$CACHE"
boot_id=$(cat /proc/sys/kernel/random/boot_id)
result=$CACHE/accel.$boot_id
# One probe per boot of the host, even with several VMs starting at once.
exec 8> "$CACHE/accel.lock"
flock 8
if [ -s "$result" ]; then
	read -r accel why < "$result"
	log "accelerator: $accel ($why, probed earlier this boot)"
	echo "$accel"
	exit 0
fi

secs=${IPOIB_CM_ACCEL_PROBE_SECS:-30}
probe_log=$(mktemp /tmp/ipoib_cm-accel.XXXXXX)
# No root device: a kernel that boots to the end panics when it looks for
# one (or, without block devices, for an init), and -no-reboot then ends
# QEMU.
status=0
timeout -k 5 "$secs" qemu-system-x86_64 -accel kvm -cpu host -m 512M \
	-smp 2 -nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$kernel" \
	-append "console=ttyS0 acpi=noirq panic=-1 root=/dev/ipoib-cm-probe" \
	< /dev/null > "$probe_log" 2>&1 || status=$?
if grep -q 'Kernel panic - not syncing: \(VFS\|No working init\)' "$probe_log"; then
	accel=kvm
	why="a probe boot under KVM ran to its root mount"
else
	accel=tcg
	why="KVM probe failed: QEMU exit status $status"
	if [ $status = 124 ]; then
		why+=", not at its root mount within $secs s"
	fi
	last=$(tr -d '\r' < "$probe_log" | grep . | tail -n1 | cut -c1-120) || true
	why+=", last output: ${last:-none}"
fi
rm -f "$probe_log"
echo "$accel $why" > "$result"
log "accelerator: $accel ($why)"
echo "$accel"
