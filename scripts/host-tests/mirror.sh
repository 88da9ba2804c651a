#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-source.sh finds the Debian archive in every form of apt sources a
# Debian 12 image may have, skips the security archive and other
# repositories, and names what it looked at when there is none.  It also
# finds the security archive (Debian 12's stock kernel updates are there).

set -euo pipefail
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect NAME WANTED [--security-mirror]: WANTED is the mirror (or with
# --security-mirror the security archive), or "error" for a failure whose
# message names the files looked at.
expect() {
	local name=$1 wanted=$2 what=${3:---mirror} got rc=0

	got=$(IPOIB_CM_APT_ETC=$tmp/$name bash "$TOPDIR/scripts/debian-source.sh" \
		"$what" 2> "$tmp/$name.err") || rc=$?
	if [ "$wanted" = error ]; then
		if [ $rc != 0 ] && grep -q "looked at: .*$name" "$tmp/$name.err"; then
			echo "ok   $name $what: $(cat "$tmp/$name.err")"
			return
		fi
	elif [ $rc = 0 ] && [ "$got" = "$wanted" ]; then
		echo "ok   $name $what: $got"
		return
	fi
	echo "FAIL $name $what: wanted '$wanted', got '$got' (status $rc): $(cat "$tmp/$name.err")"
	failures=$((failures + 1))
}

# sample NAME FILE: FILE's text (standard input) in sample NAME.
sample() {
	mkdir -p "$(dirname "$tmp/$1/$2")"
	cat > "$tmp/$1/$2"
}

sample deb822 sources.list.d/debian.sources <<'END'
Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
END
expect deb822 http://mirror.example/debian
expect deb822 http://mirror.example/debian-security --security-mirror

# The security stanza first, and a deb-src stanza: neither is the archive.
sample deb822-order sources.list.d/debian.sources <<'END'
Types: deb
URIs: https://mirror.example/debian-security/
Suites: bookworm-security

Types: deb-src
URIs: https://src.example/debian/
Suites: bookworm

Types: deb
URIs: https://mirror.example/debian/
Suites: bookworm
END
expect deb822-order https://mirror.example/debian
expect deb822-order https://mirror.example/debian-security --security-mirror

# Debian's cloud images: apt's mirror method with a list file.
sample mirror-file sources.list.d/debian.sources <<'END'
Types: deb deb-src
URIs: mirror+file:///etc/apt/mirrors/debian.list
Suites: bookworm bookworm-updates bookworm-backports
Components: main

Types: deb deb-src
URIs: mirror+file:///etc/apt/mirrors/debian-security.list
Suites: bookworm-security
Components: main
END
expect mirror-file mirror+file:///etc/apt/mirrors/debian.list
expect mirror-file mirror+file:///etc/apt/mirrors/debian-security.list \
	--security-mirror

sample mirror-http sources.list <<'END'
deb mirror+http://mirror.example/debian bookworm main
deb mirror+http://mirror.example/debian-security bookworm-security main
END
expect mirror-http mirror+http://mirror.example/debian
expect mirror-http mirror+http://mirror.example/debian-security \
	--security-mirror

# One-line format with options, comments and another repository first.
sample one-line sources.list <<'END'
# deb http://old.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/other.gpg] https://repo.example/apt stable main
deb-src http://src.example/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian/ bookworm main
END
expect one-line http://mirror.example/debian
# No security archive: the stock kernel then comes from bookworm alone.
expect one-line error --security-mirror

sample list-d sources.list.d/debian.list <<'END'
deb http://mirror.example/debian bookworm main contrib
END
expect list-d http://mirror.example/debian

sample none sources.list.d/other.sources <<'END'
Types: deb
URIs: https://repo.example/apt
Suites: stable
END
expect none error

mkdir -p "$tmp/empty"
expect empty error

[ $failures = 0 ]
