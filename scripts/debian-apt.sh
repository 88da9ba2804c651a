# SPDX-License-Identifier: GPL-2.0
# The private apt configuration through which the scripts fetch Debian
# packages (linux-source-*, Debian 12's stock kernel, busybox-static).
# Sourced after lib.sh, not run.
#
# It lives in $CACHE/apt and lists bookworm (with its updates and security
# suites), trixie and sid from the Debian mirrors that the machine's own
# apt sources already use: the system's sources are read, never changed.
#
#   apt_private_setup              write the configuration, refresh its lists
#                                  (at most once a day, or when it changed)
#   apt_private ARGS...            apt-get with the private configuration
#   apt_cache_private ARGS...      apt-cache with the private configuration
#   apt_newest PKG SUITE_REGEX     the newest version of PKG in the suites
#                                  matching SUITE_REGEX (an ERE, anchored)
#   apt_fetch DIR PKG=VERSION...   download the .debs DIR lacks into DIR

aptdir=$CACHE/apt
debian_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# system_mirror [archive|security]: the first URI of the main Debian
# archive (default), or of its security archive, in the system's apt
# sources: deb822 *.sources files or one-line sources.list and *.list
# files.  Besides http(s):// it accepts the mirror-list forms Debian's
# cloud images use (mirror+file:, mirror+http:), which the private
# configuration passes to apt unchanged.  IPOIB_CM_APT_ETC (default
# /etc/apt) is where to look; the mirror tests point it at samples.
system_mirror() {
	local want=${1:-archive} etc=${IPOIB_CM_APT_ETC:-/etc/apt} f
	local uris=() looked=()

	for f in "$etc"/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		looked+=("$f")
		# Each stanza's URIs, when its Types include deb.
		mapfile -t -O ${#uris[@]} uris < <(awk '
			function flush() { if (deb) print uris; deb = 0; uris = "" }
			/^[ \t]*$/ { flush(); next }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			/^URIs:/ { for (i = 2; i <= NF; i++) uris = uris " " $i }
			END { flush() }' "$f" | tr ' ' '\n' | grep .)
	done
	for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		looked+=("$f")
		mapfile -t -O ${#uris[@]} uris < <(sed -e 's/#.*//' \
			-e 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" { print $2 }')
	done
	for f in "${uris[@]}"; do
		case $want:$f in
		archive:*security*)
			continue ;;
		archive:http://*/debian|archive:http://*/debian/|\
		archive:https://*/debian|archive:https://*/debian/|\
		archive:mirror+*debian*|archive:mirror://*debian*|\
		security:http://*security*|security:https://*security*|\
		security:mirror+*security*|security:mirror://*security*)
			echo "${f%/}"
			return 0 ;;
		esac
	done
	echo "error: no Debian $([ "$want" = archive ] || echo "security ")archive" \
		"found in the apt sources;" \
		"looked at: ${looked[*]:-nothing under $etc}" \
		"(URIs seen: ${uris[*]:-none})" >&2
	return 1
}

apt_private_opts=(
	-o Dir::Etc::SourceList="$aptdir/sources.list"
	-o Dir::Etc::SourceParts="$aptdir/parts"
	-o Dir::State::Lists="$aptdir/lists"
	-o Dir::Cache::Archives="$aptdir/archives"
	-o Dir::Cache::pkgcache="$aptdir/pkgcache.bin"
	-o Dir::Cache::srcpkgcache="$aptdir/srcpkgcache.bin"
	-o APT::Get::List-Cleanup=false
	-o APT::Sandbox::User=root
)

apt_private() {
	apt-get -q "${apt_private_opts[@]}" "$@"
}

apt_cache_private() {
	apt-cache "${apt_private_opts[@]}" "$@"
}

apt_private_setup() {
	local mirror security suite list

	mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial" \
		"$aptdir/parts"
	mirror=$(system_mirror archive) || return 1
	# Debian 12's kernel updates reach the security archive first.
	security=$(system_mirror security 2>/dev/null) ||
		log "no security archive in the apt sources: bookworm-security left out"
	list=$(
		for suite in bookworm bookworm-updates; do
			echo "deb [signed-by=$debian_keyring] $mirror $suite main"
		done
		if [ -n "$security" ]; then
			echo "deb [signed-by=$debian_keyring] $security bookworm-security main"
		fi
		for suite in trixie sid; do
			echo "deb [signed-by=$debian_keyring] $mirror $suite main"
		done
	)

	# One writer at a time: the scripts may run side by side.
	exec 7> "$aptdir/.lock"
	flock 7
	# Refresh the lists at most once a day, and at once when the
	# configuration changed (a suite added, another mirror).
	local stamp=$aptdir/lists/.updated
	if [ "$list" != "$(cat "$aptdir/sources.list" 2>/dev/null)" ]; then
		echo "$list" > "$aptdir/sources.list.tmp"
		mv "$aptdir/sources.list.tmp" "$aptdir/sources.list"
		rm -f "$stamp"
	fi
	if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440)" ]; then
		log "updating the private apt lists" \
			"($(awk '{ printf "%s%s", sep, $4; sep = ", " }' \
			"$aptdir/sources.list"))"
		apt_private update >&2 || { exec 7>&-; return 1; }
		touch "$stamp"
	fi
	exec 7>&-
}

apt_newest() {
	local pkg=$1 suites=$2 v best=""

	# madison: "pkg | version | URI suite/component arch Packages"
	while read -r v; do
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done < <(apt_cache_private madison "$pkg" 2>/dev/null |
		awk -F ' [|] ' -v re="^($suites)$" '{
			split($3, w, " "); suite = w[2]; sub("/.*", "", suite)
			if (suite ~ re) print $2 }')
	[ -n "$best" ] || { echo "error: no $pkg in $suites" >&2; return 1; }
	echo "$best"
}

apt_fetch() {
	local dir=$1 want=() p name ver tmp
	shift

	for p in "$@"; do
		name=${p%%=*}
		ver=${p#*=}
		# apt names the file pkg_version_arch.deb, the epoch's colon
		# encoded as %3a.
		compgen -G "$dir/${name}_${ver/:/%3a}_*.deb" > /dev/null ||
			want+=("$p")
	done
	[ ${#want[@]} -gt 0 ] || return 0
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.download.XXXXXX")
	log "downloading ${want[*]}"
	if ! (cd "$tmp" && apt_private download "${want[@]}" >&2); then
		rm -rf "$tmp"
		return 1
	fi
	mv "$tmp"/*.deb "$dir/"
	rm -rf "$tmp"
}
