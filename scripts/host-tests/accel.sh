#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM runner chooses its accelerator by trying it.  A stand-in for QEMU
# (first on PATH) plays KVM that aborts, KVM that hangs and KVM that works
# (it runs TCG in its place); a writable file plays /dev/kvm.
#
#   scripts/host-tests/accel.sh KDIR

set -euo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${1:?usage: accel.sh KDIR}
kernel=$kdir/arch/x86/boot/bzImage
tmp=$(mktemp -d /tmp/ipoib_cm-accel-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
real_qemu=$(command -v qemu-system-x86_64)

mkdir -p "$tmp/bin"
cat > "$tmp/bin/qemu-system-x86_64" <<END
#!/bin/bash
echo "\$*" >> "$tmp/qemu-calls"
args=("\$@")
if [[ " \$* " = *" -accel kvm "* ]]; then
	case \$FAKE_KVM in
	abort)	echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
		kill -ABRT \$\$ ;;
	hang)	exec sleep 600 ;;
	works)	for i in "\${!args[@]}"; do
			case \${args[i]} in
			kvm) args[i]=tcg ;;
			host) args[i]=max ;;
			esac
		done ;;
	esac
fi
exec $real_qemu "\${args[@]}"
END
chmod +x "$tmp/bin/qemu-system-x86_64"
touch "$tmp/kvm"
export PATH=$tmp/bin:$PATH IPOIB_CM_KVM_DEV=$tmp/kvm

# accel CASE: vm-accel.sh's choice with a fresh probe cache.
accel() {
	IPOIB_CM_CACHE=$tmp/cache-$1 bash "$TOPDIR/scripts/vm-accel.sh" \
		"$kernel" 2> "$tmp/$1.log"
}
expect() {
	local case=$1 wanted=$2 why=$3 got

	got=$(FAKE_KVM=$case accel "$case")
	if [ "$got" != "$wanted" ] || ! grep -q -- "$why" "$tmp/$case.log"; then
		cat "$tmp/$case.log"
		die "$case: wanted $wanted ($why), got $got"
	fi
	echo "ok   $case: $(cat "$tmp/$case.log")"
}

# The whole runner on a host whose KVM aborts: it boots under TCG.
out=$tmp/vm
FAKE_KVM=abort IPOIB_CM_CACHE=$tmp/cache-vm bash "$TOPDIR/scripts/vm-run.sh" \
	-k "$kdir" -o "$out" -- true > "$tmp/vm.log" 2>&1 ||
	{ cat "$tmp/vm.log"; die "the runner failed when KVM aborts"; }
grep -q 'accelerator: tcg (KVM probe failed' "$tmp/vm.log" ||
	{ cat "$tmp/vm.log"; die "the runner did not say it fell back to TCG"; }
tail -n1 "$tmp/qemu-calls" | grep -- '-accel tcg' > /dev/null ||
	die "the VM itself did not run under TCG: $(tail -n1 "$tmp/qemu-calls")"
grep -q 'guest CPUs: 2' "$out/console.log" || die "the guest did not see 2 CPUs"
echo "ok   runner: KVM aborts, the VM ran under TCG with 2 CPUs"

# The probe result is kept for this boot of the host: no second probe.
calls=$(wc -l < "$tmp/qemu-calls")
[ "$(FAKE_KVM=abort accel vm)" = tcg ] && grep -q 'probed earlier' "$tmp/vm.log" ||
	die "the probe result was not reused"
[ "$(wc -l < "$tmp/qemu-calls")" = "$calls" ] || die "a second probe ran"
echo "ok   cached: $(cat "$tmp/vm.log")"

expect abort tcg 'failed to set MSR'
IPOIB_CM_ACCEL_PROBE_SECS=5 expect hang tcg 'not at its root mount within 5 s'
IPOIB_CM_ACCEL_PROBE_SECS=120 expect works kvm 'ran to its root mount'
IPOIB_CM_ACCEL=tcg expect works tcg 'IPOIB_CM_ACCEL'
rm "$tmp/kvm"
expect works tcg 'missing or not writable'
