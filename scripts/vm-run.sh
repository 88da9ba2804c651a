#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a test kernel under QEMU with the host's own userspace and run one
# command inside it.
#
#   scripts/vm-run.sh [-k KERNEL_BUILD_DIR] [-o OUTDIR] [-t SECONDS]
#                     [-m MEM] [-s CPUS] [-e VAR=VALUE]... [-v]
#                     -- command [args]
#
# The root file system is the host's, read-only over virtio 9p; /tmp, /run,
# /var/tmp and /var/lib are tmpfs inside the guest.  OUTDIR is shared
# writable at /tmp/vmout and receives the console log (console.log), the
# kernel log (dmesg), kmemleak's report (kmemleak) and the exit status (rc).
#
# -v also shows the console on stdout as the VM runs.
#
# KERNEL_BUILD_DIR may also be a stock kernel directory made by
# stock-kernel.sh (Debian 12's own kernel, found by its .stock-kernel
# file): its vmlinuz boots with its initramfs, whose /init loads the 9p
# modules, mounts the host root and lays the directory's
# image/lib/modules/<release> over the guest's /lib/modules/<release>
# (stock_modules= on the command line) before it runs vm-init.sh.
#
# Exit status: the command's, or 1 if the kernel log shows a finding (see
# klog-check.sh) or the guest died or timed out.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=""
outdir=""
timeout=900
mem=2G
cpus=2
envs=()
verbose=0
while getopts "k:o:t:m:s:e:v" opt; do
	case $opt in
	k) kdir=$OPTARG ;;
	o) outdir=$OPTARG ;;
	t) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	s) cpus=$OPTARG ;;
	e) envs+=("$OPTARG") ;;
	v) verbose=1 ;;
	*) die "usage: vm-run.sh [-k kdir] [-o outdir] [-t secs] -- cmd" ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || die "no command given"

[ -n "$kdir" ] || kdir=$(bash "$TOPDIR/scripts/build-kernel.sh" 6.12 debug)
initrd=()
if [ -f "$kdir/.stock-kernel" ]; then
	kdir=$(realpath "$kdir")
	release=$(cat "$kdir/.stock-kernel")
	kernel=$kdir/vmlinuz
	kconfig=$kdir/config
	[ -f "$kdir/initramfs.cpio.gz" ] || die "no initramfs in $kdir"
	[ -f "$kdir/image/lib/modules/$release/modules.dep" ] ||
		die "no modules for $release in $kdir"
	initrd=(-initrd "$kdir/initramfs.cpio.gz")
else
	kernel=$kdir/arch/x86/boot/bzImage
	kconfig=$kdir/.config
fi
[ -f "$kernel" ] || die "no kernel image at $kernel"
[ -n "$outdir" ] || outdir=$(mktemp -d /tmp/ipoib_cm-vm.XXXXXX)
mkdir -p "$outdir"
rm -f "$outdir"/{rc,dmesg,kmemleak,console.log,job.sh,expect-kmemleak} \
	"$outdir/expect-alloc-failures" "$outdir/expect-leaks"
if grep -qx CONFIG_DEBUG_KMEMLEAK=y "$kconfig" 2>/dev/null; then
	touch "$outdir/expect-kmemleak"
fi

# The job the guest's init runs, with the caller's working directory.  It
# first checks that the guest sees the CPUs it was given: races between
# NAPI on one CPU and the CM's handlers on another only show on SMP.
{
	echo "echo \"guest CPUs: \$(nproc) (asked for $cpus)\""
	echo "[ \"\$(nproc)\" = $cpus ] || { echo 'FAIL: the guest does not see $cpus CPUs'; exit 1; }"
	echo "cd $(printf %q "$PWD")"
	for e in "${envs[@]}"; do
		echo "export $(printf %q "$e")"
	done
	printf '%q ' "$@"
	echo
} > "$outdir/job.sh"

accel=$(bash "$TOPDIR/scripts/vm-accel.sh" "$kernel") ||
	die "cannot choose an accelerator (scripts/vm-accel.sh failed)"
case $accel in
kvm)	accel=(-accel kvm -cpu host) ;;
*)	accel=(-accel tcg -cpu max) ;;
esac

cmdline="console=ttyS0 earlyprintk=serial,ttyS0 root=hostroot rootfstype=9p"
# The root is read-only and nothing changes it while the VM runs, so the
# guest may cache it fully (this halves the boot under TCG).
cmdline+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
# acpi=noirq: ACPI enumerates the CPUs (the MP table alone lists one) but
# does not route PCI interrupts, whose AML loops time out under TCG with
# KASAN.
cmdline+=" init=$TOPDIR/scripts/vm-init.sh panic=-1 oops=panic acpi=noirq"
cmdline+=" nokaslr quiet loglevel=5 hung_task_panic=0 kmemleak=on"
# tsc=nowatchdog: no clocksource watchdog on the TSC.  Under TCG every
# vCPU's TSC is QEMU's one virtual clock, so the watchdog cannot find a
# real skew there, but 7.2's check of each other CPU gives that CPU 50 us
# to answer an IPI, which a vCPU thread on a busy host often misses
# ("Watchdog remote CPU 1 read timed out" at boot).  Under KVM the guest
# uses kvm-clock and the TSC watchdog does not matter.
cmdline+=" tsc=nowatchdog"
# The log is checked whole: room for the bench's thousand interfaces
# (128 KiB wrapped there).
cmdline+=" log_buf_len=8M"
# A stock kernel's initramfs mounts the root itself (the parameters above
# tell it how) and binds the kernel's own modules from the host root.
if [ ${#initrd[@]} -gt 0 ]; then
	cmdline+=" stock_modules=$kdir/image/lib/modules/$release"
fi

set +e
timeout --foreground -k 10 "$timeout" \
	qemu-system-x86_64 "${accel[@]}" -m "$mem" -smp "$cpus" \
	-nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$kernel" "${initrd[@]}" -append "$cmdline" \
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
	-fsdev local,id=out,path="$outdir",security_model=none \
	-device virtio-9p-pci,fsdev=out,mount_tag=vmout \
	-device virtio-rng-pci \
	${IPOIB_CM_QEMU_EXTRA:-} \
	< /dev/null 2>&1 | if [ $verbose = 1 ]; then
		tee "$outdir/console.log"
	else
		cat > "$outdir/console.log"
	fi
status=${PIPESTATUS[0]}
set -e

if [ $status = 124 ] || [ $status = 137 ]; then
	log "VM timed out after $timeout s"
	echo "VM timeout after $timeout s" >> "$outdir/console.log"
fi
if [ ! -f "$outdir/rc" ]; then
	log "the guest did not finish its job (crash, panic or timeout); see $outdir/console.log"
	tail -n 40 "$outdir/console.log" >&2
	exit 1
fi
rc=$(cat "$outdir/rc")
# The whole kernel log is checked, not what was left of a wrapped buffer.
if ! grep -q 'Linux version' "$outdir/dmesg"; then
	log "the kernel log wrapped: its start is missing from $outdir/dmesg"
	[ "$rc" != 0 ] || rc=1
fi
# A scenario that injects allocation failures says so (it creates
# /tmp/vmout/expect-alloc-failures): the memory manager's reports of them
# are expected, nothing else is.
check_args=()
[ ! -f "$outdir/expect-alloc-failures" ] || check_args+=(--alloc-failures)
# One that makes teardown leak QPs (expect-leaks): the driver's warnings
# about that leak are expected.
[ ! -f "$outdir/expect-leaks" ] || check_args+=(--leaks)
# One on a kernel whose rdma_rxe never raises Last WQE Reached
# (expect-no-last-wqe, scripts/vm/stock.sh): the driver's notice is expected.
[ ! -f "$outdir/expect-no-last-wqe" ] || check_args+=(--no-last-wqe)
if ! bash "$TOPDIR/scripts/klog-check.sh" "${check_args[@]}" \
		"$outdir/console.log" "$outdir/dmesg" "$outdir/kmemleak"; then
	log "kernel log findings; see $outdir"
	[ "$rc" != 0 ] || rc=1
fi
exit "$rc"
