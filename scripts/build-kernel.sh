#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a test kernel from Debian's linux-source package.
#
#   scripts/build-kernel.sh [--prepare] <version> <debug|bench>
#
# debug: tinyconfig + kconfig/base.config + kconfig/debug.config (KASAN,
#        lockdep, kmemleak, UBSAN, ...); every functional test runs on it.
# bench: tinyconfig + kconfig/base.config only, for benchmarks.
# --prepare: configure and run modules_prepare only (enough to compile
#        ipoib_cm.ko against that version).
#
# The build is cached under $IPOIB_CM_CACHE/kernels, keyed by the Debian
# package version, the flavour and a hash of the config fragments and of
# the kernel patches (scripts/kernel-patches/<version>/), so a second run
# reuses it.  A new key starts from a copy of the newest build
# of the same version and flavour, which keeps fragment changes incremental.
# Prints the build directory (usable as KDIR) on stdout.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

prepare=0
if [ "${1:-}" = --prepare ]; then
	prepare=1
	shift
fi
version=${1:?usage: build-kernel.sh [--prepare] <version> <debug|bench>}
flavour=${2:?usage: build-kernel.sh [--prepare] <version> <debug|bench>}

fragments=("$TOPDIR/scripts/kconfig/base.config")
case $flavour in
debug)	fragments+=("$TOPDIR/scripts/kconfig/debug.config") ;;
bench)	;;
*)	die "unknown flavour '$flavour' (debug or bench)" ;;
esac

src=$(bash "$TOPDIR/scripts/debian-source.sh" "$version")
debver=$(cat "$src/.debian-version")
what=$([ $prepare = 1 ] && echo prepare || echo full)

# Fixes the project's test kernels carry, scripts/kernel-patches/<version>/
# (each file says why), applied to the unpacked source, which records the
# hash of the set it carries in .patches.  A source carrying another set
# (a patch changed, added or removed) is unpacked again first.  Under a
# lock: the debug and bench builds share the source.
patches=()
for p in "$TOPDIR/scripts/kernel-patches/$version"/*.patch; do
	[ -f "$p" ] && patches+=("$p")
done
want=
[ ${#patches[@]} = 0 ] || want=$(cat "${patches[@]}" | sha256sum | cut -c1-12)
exec 8> "$CACHE/src/.patch-lock-$version"
flock 8
if [ "$(cat "$src/.patches" 2>/dev/null)" != "$want" ]; then
	if [ -f "$src/.patches" ]; then
		log "$src carries other patches: unpacking it again"
		rm -f "$src/.unpacked"
		src=$(bash "$TOPDIR/scripts/debian-source.sh" "$version")
	fi
	for p in ${patches[@]+"${patches[@]}"}; do
		log "patching linux $debver: $(basename "$p")"
		patch -s -p1 -N -d "$src" < "$p" ||
			die "$(basename "$p") does not apply to $src"
	done
	[ -z "$want" ] || echo "$want" > "$src/.patches"
fi
exec 8>&-
key=$( (echo "$debver $flavour $what"; cat "${fragments[@]}" ${patches[@]+"${patches[@]}"}) |
	sha256sum | cut -c1-12)
name=$version-$flavour-$what
out=$CACHE/kernels/$name-$key

# One build per directory at a time: a second caller waits for the first
# and then finds its result.  The locks live apart from the builds, so
# nothing but a build directory ever matches "$name-*".
mkdir -p "$CACHE/kernels/.locks"
exec 9> "$CACHE/kernels/.locks/$name-$key"
flock 9
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

# Heal what an earlier run left: a copy it did not finish, or anything at
# $out that is not a directory.  A directory without .done is a build that
# was interrupted; make carries on from where it stopped.
rm -rf "$out.tmp"
[ ! -e "$out" ] || [ -d "$out" ] || rm -f "$out"

# A new key starts from a copy of the newest finished build of the same
# version and flavour: only a directory holding .done is a seed.
if [ ! -d "$out" ]; then
	seed=$(ls -td "$CACHE/kernels/$name"-*/.done 2>/dev/null | sed -n 1p) || true
	seed=${seed%/.done}
	if [ -n "$seed" ] && [ -d "$seed" ]; then
		log "seeding $name-$key from $(basename "$seed")"
		cp -a "$seed" "$out.tmp"
		rm -f "$out.tmp/.done"
		mv "$out.tmp" "$out"
	fi
fi
mkdir -p "$out"

kmake() {
	make -s -C "$src" O="$out" ARCH=x86_64 "$@"
}

log "configuring linux $debver ($flavour) in $out"
kmake tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
	"${fragments[@]}" > "$out/merge.log"
kmake olddefconfig

# The options the fragments ask for, as merge_config.sh takes them: a
# later fragment's line for a symbol replaces an earlier one's.
wanted_options() {
	awk '/^CONFIG_[A-Za-z0-9_]*=/ { s = $0; sub(/=.*/, "", s) }
	     /^# CONFIG_[A-Za-z0-9_]* is not set$/ { s = $2 }
	     s != "" { if (!(s in v)) order[++n] = s; v[s] = $0; s = "" }
	     END { for (i = 1; i <= n; i++) print v[order[i]] }' "$@"
}

# Every option a fragment asks for must survive olddefconfig.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)	grep -qxF "$line" "$out/.config" ||
				{ echo "  wanted $line" >&2; missing=1; } ;;
	"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			! grep -q "^$sym=" "$out/.config" ||
				{ echo "  wanted $line" >&2; missing=1; } ;;
	esac
done < <(wanted_options "${fragments[@]}")
# A test relies on each of them (KASAN, lockdep, kmemleak, ...): a kernel
# without one is not the kernel the tests claim to run on.
[ $missing = 0 ] || die "requested options missing from $out/.config (see above)"

start=$SECONDS
if [ $prepare = 1 ]; then
	log "modules_prepare"
	kmake -j"$(nproc)" modules_prepare
else
	log "building bzImage and modules (this takes a while)"
	kmake -j"$(nproc)" bzImage modules
fi
log "kernel $name built in $((SECONDS - start)) s"
touch "$out/.done"
echo "$out"
