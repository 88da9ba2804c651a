# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the scripts in this directory.  Sourced, not run.

# Everything built or downloaded lives here, outside the repository, so a
# second run (or CI on the same machine) reuses it.
CACHE=${IPOIB_CM_CACHE:-/var/cache/ipoib_cm}
TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { echo "[$(date +%T)] $*" >&2; }
die() { echo "error: $*" >&2; exit 1; }
