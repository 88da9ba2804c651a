#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a scenario with bash's trace on, each line stamped with the time,
# to see where its time goes:
#
#   scripts/vm-run.sh ... -- scripts/vm/xtrace.sh scripts/vm/tests/NAME.sh
#   scripts/xtrace-profile.py OUTDIR/xtrace
#
# The trace is written to the guest's tmpfs as it runs (writing each line
# over 9p would slow the scenario down) and copied to /tmp/vmout/xtrace
# when the scenario ends, however it ends.
set -u
trace=/tmp/xtrace
exec 19> "$trace"
status=0
bash -c 'BASH_XTRACEFD=19
	PS4='\''+${EPOCHREALTIME} ${BASH_SOURCE##*/}:${LINENO} '\''
	set -x
	. "$0"' "$@" || status=$?
cp "$trace" /tmp/vmout/xtrace
exit $status
