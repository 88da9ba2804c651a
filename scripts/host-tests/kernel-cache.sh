#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel cache's cold path, end to end with the real script: a build
# in an empty cache, a hit, a new key seeded from the newest finished
# build (never from a lock, a half-made copy or an unfinished build), and
# an entry broken by an earlier run healed.  The cheapest real build:
# build-kernel.sh --prepare 6.12 debug (configure and modules_prepare).

set -euo pipefail
. "$(dirname "$0")/../lib.sh"

real=$CACHE
src=$(bash "$TOPDIR/scripts/debian-source.sh" 6.12)
tmp=$(mktemp -d /tmp/ipoib_cm-cache.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export IPOIB_CM_CACHE=$tmp/cache
# Only the unpacked source is shared with the real cache.
mkdir -p "$tmp/cache/src"
ln -s "$src" "$tmp/cache/src/$(basename "$src")"
[ "$real" != "$IPOIB_CM_CACHE" ]

build() {
	bash "$TOPDIR/scripts/build-kernel.sh" --prepare 6.12 debug \
		2> "$tmp/build.log"
}
check_done() {
	[ -d "$1" ] && [ -f "$1/.done" ] && [ -f "$1/.config" ] ||
		die "$2: $1 is not a finished build"
	grep -qx CONFIG_KASAN=y "$1/.config" || die "$2: no KASAN in $1/.config"
}

log "cold: an empty cache"
t0=$SECONDS
out=$(build) || { cat "$tmp/build.log"; die "the cold build failed"; }
check_done "$out" cold
log "cold build: $((SECONDS - t0)) s, $out"

log "hit: the same key again"
[ "$(build)" = "$out" ] || die "a second call built elsewhere"
! grep -q configuring "$tmp/build.log" || die "a cache hit configured again"

log "new key: seeded from the newest finished build only"
dir=$(dirname "$out")
seed=$dir/6.12-debug-prepare-000000000000
mv "$out" "$seed"
touch -d '1 hour ago' "$seed/.done"
# Newer than the seed but not builds to copy: an unfinished build, a
# half-made copy, a stray file; and the lock directory is there too.
mkdir "$dir/6.12-debug-prepare-ffffffffffff"
mkdir "$dir/6.12-debug-prepare-eeeeeeeeeeee.tmp"
touch "$dir/6.12-debug-prepare-dddddddddddd.lock"
out2=$(build) || { cat "$tmp/build.log"; die "the seeded build failed"; }
[ "$out2" = "$out" ] || die "the seeded build went to $out2, not $out"
grep -q "seeding .* from 6.12-debug-prepare-000000000000" "$tmp/build.log" ||
	{ cat "$tmp/build.log"; die "not seeded from the finished build"; }
check_done "$out" seeded

log "heal: a file where the build should be, and a copy left half-made"
rm -rf "$out"
touch "$out"
mkdir "$out.tmp"
touch "$out.tmp/junk"
build > /dev/null || { cat "$tmp/build.log"; die "a broken entry was not healed"; }
check_done "$out" healed
[ ! -e "$out.tmp" ] || die "$out.tmp left behind"

log "heal: an interrupted build carries on"
rm "$out/.done"
build > /dev/null || { cat "$tmp/build.log"; die "an interrupted build did not finish"; }
check_done "$out" resumed
log "kernel cache: all cases passed"
