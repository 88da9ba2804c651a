#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian 12's stock kernel, the module installed as an administrator
# installs it (vm-run.sh -k on a directory of scripts/stock-kernel.sh):
#
#   scripts/vm/stock-dkms.sh SCENARIO...
#
# 1. The host root is read-only: /usr/src and /lib/modules/<release> get
#    overlays whose upper layers are tmpfs (/var/lib, DKMS's tree, is a
#    tmpfs already: /var/lib/dkms, which the dkms package makes, is made
#    again), and /lib/modules/<release>/build points at the headers
#    package of this kernel, as linux-headers-<release> makes it.
# 2. The admin guide's DKMS recipe, the literal block of its "Installing"
#    section, is read from Documentation/admin-guide.rst and run as it
#    stands, in a copy of the tree's files (git ls-files), by bash -e.
# 3. modprobe ipoib_cm with no RDMA module loaded: depmod's index, which
#    dkms install brought up to date, must lead modprobe to ib_core and
#    ib_cm among the kernel's own modules.  modprobe -r takes it out again.
# 4. Each SCENARIO (scripts/vm/stock.sh SCENARIO) with IPOIB_CM_MODPROBE=1:
#    the scenario loads and unloads the module with modprobe.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

topdir=$(cd "$(dirname "$0")/../.." && pwd)
release=$(uname -r)
modules=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^stock_modules=//p')
[ -n "$modules" ] || fail "not Debian's stock kernel (no stock_modules=)"
kdir=$(realpath "${modules%/image/lib/modules/*}/kdir")
[ -f "$kdir/Makefile" ] || fail "no headers for $release at $kdir"

# 1. Writable /usr/src and /lib/modules/<release>.
modprobe overlay
for d in /usr/src "/lib/modules/$release"; do
	o=/run/overlay$d
	mkdir -p "$o/upper" "$o/work"
	mount -t overlay overlay \
		-o "lowerdir=$d,upperdir=$o/upper,workdir=$o/work" "$d" ||
		fail "cannot lay an overlay on $d"
done
ln -sfn "$kdir" "/lib/modules/$release/build"
# The dkms package's own directory, hidden by vm-init.sh's tmpfs on /var/lib.
mkdir -p /var/lib/dkms
lsmod | awk 'NR > 1 { print $1 }' | matches -E '^(ib_|rdma_)' &&
	fail "RDMA modules loaded before the module was: $(lsmod | grep -E '^(ib_|rdma_)')"

# 2. The recipe, word for word.
recipe=$VMOUT/dkms-recipe.sh
# The section's first literal block: its indented lines after a "::".
awk '/^Installing$/ { sec = 1; next }
     !sec { next }
     /^=+$/ && body { exit }
     { body = 1 }
     !lit && /::$/ { lit = 1; next }
     lit && /^    / { sub(/^    /, ""); print; got = 1; next }
     lit && got && /^[^ ]/ { exit }' \
	"$topdir/Documentation/admin-guide.rst" > "$recipe"
matches '^dkms install ' "$recipe" || fail "no dkms recipe in the admin guide: $(cat "$recipe")"
say "the admin guide's recipe:"
sed 's/^/    /' "$recipe"
src=$(mktemp -d)
git -c safe.directory="$topdir" -C "$topdir" ls-files -z |
	tar -C "$topdir" --null -T - -cf - | tar -C "$src" -xf -
t0=$SECONDS
(cd "$src" && bash -ex "$recipe") || {
	cat /var/lib/dkms/ipoib_cm/*/build/make.log 2>/dev/null || true
	fail "the admin guide's recipe failed"
}
say "recipe done in $((SECONDS - t0)) s: $(dkms status ipoib_cm)"
installed=$(modinfo -n ipoib_cm) || fail "modinfo does not find ipoib_cm"
say "installed: $installed, vermagic $(modinfo -F vermagic ipoib_cm)"
[[ $installed == /lib/modules/$release/updates/* ]] ||
	fail "ipoib_cm is not the one DKMS installed: $installed"

# 3. modprobe resolves the dependencies from the kernel's modules.
modprobe ipoib_cm || fail "modprobe ipoib_cm"
deps=$(lsmod | awk 'NR > 1 { print $1 }' | grep -E '^(ib_|rdma_|ipoib)' | sort | tr '\n' ' ')
say "after modprobe ipoib_cm: $deps"
for m in ipoib_cm ib_core ib_cm; do
	[[ " $deps" == *" $m "* ]] || fail "modprobe ipoib_cm did not load $m"
done
modprobe -r ipoib_cm || fail "modprobe -r ipoib_cm"
lsmod | awk 'NR > 1 { print $1 }' | matches -x ipoib_cm && fail "ipoib_cm still loaded"
say "after modprobe -r ipoib_cm: $(lsmod | awk 'NR > 1 { print $1 }' |
	grep -E '^(ib_|rdma_)' | tr '\n' ' ')"

# 4. The scenarios, with the installed module.
export IPOIB_CM_MODPROBE=1
for t in "$@"; do
	say "== $t (module by modprobe)"
	"$(dirname "$0")/stock.sh" "$t"
	! lsmod | awk 'NR > 1 { print $1 }' | matches -x ipoib_cm ||
		fail "$t left ipoib_cm loaded"
	fabric_gone
done
say "stock-dkms: ok"
