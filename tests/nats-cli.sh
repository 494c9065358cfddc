#!/bin/bash
# The CLI suite a second time, on NATS JetStream: one nats-server on a free
# loopback port with a temporary store, BAKERY_QUEUE=nats://... for every
# test (tests/cli/helpers.bash), stopped by pid at the end.
set -eu
cd "$(dirname "$0")/.."
. tests/nats.bash
dir=$(mktemp -d)
trap 'nats_stop "$NATS_PID"; rm -rf "$dir"' EXIT
nats_start "$dir"
export BAKERY_TEST_NATS="$NATS_URL"
[ $# -gt 0 ] || set -- tests/cli/0*.bats tests/cli/1*.bats tests/cli/2*.bats \
	tests/cli/30-*.bats tests/cli/31-*.bats tests/cli/51-trace.bats
# prove's summary, then one line that says which suite it was (make check
# shows a stage by its last line).
prove -f "$@" 2>&1 | tee "$dir/prove.out"
rc=${PIPESTATUS[0]}
echo "the CLI suite on NATS: $(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 files, \2 tests/p' "$dir/prove.out"), $(tail -1 "$dir/prove.out")"
exit "$rc"
