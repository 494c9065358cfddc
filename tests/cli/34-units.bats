#!/usr/bin/env bats
# The systemd units and the crontab that run the alarms and the wipe.
load helpers

@test "systemd-analyze verify passes on every unit" {
	units="$BATS_TEST_TMPDIR/units"
	mkdir -p "$units"
	for f in "$TOP"/share/systemd/*; do
		sed "s|@BINDIR@|$TOP/bin|g" "$f" >"$units/$(basename "$f")"
	done
	run systemd-analyze verify --man=no "$units"/*
	assert_success
	assert_output ""
}

@test "the units run the programs the way the design says" {
	cd "$TOP/share/systemd"
	grep -qx 'ExecStart=@BINDIR@/bakery-relay --due' bakery-relay.service
	grep -qx 'OnUnitActiveSec=30s' bakery-relay.timer
	grep -qx 'AccuracySec=1s' bakery-relay.timer
	grep -qx 'ExecStart=@BINDIR@/bakery-relay --watch' bakery-relay-watch.service
	grep -qx 'OnCalendar=\*-\*-\* 10:00:00 UTC' bakery-wipe.timer
	grep -qx 'Persistent=true' bakery-wipe.timer
	grep -qx 'ExecStart=@BINDIR@/bakery-wipe --all --daily' bakery-wipe.service
	grep -qx 'ExecStart=@BINDIR@/bakery-wipe --all --resume' bakery-wipe-retry.service
	for s in bakery-consume bakery-dlq bakery-relay-watch; do
		grep -qx 'Restart=always' $s.service
	done
	for s in *.service; do
		for key in DynamicUser=yes StateDirectory=bakery ProtectSystem=strict \
			NoNewPrivileges=yes PrivateTmp=yes; do
			grep -qx "$key" "$s" || { echo "$s lacks $key" >&2; return 1; }
		done
	done
}

@test "every crontab entry runs a real program with options it accepts" {
	crontab=$TOP/share/cron/bakery.crontab
	grep -qx 'CRON_TZ=UTC' "$crontab"
	# The 30 s alarm is two entries a minute, one of them 30 s late.
	assert_equal "$(grep -c 'bakery-relay --due' "$crontab")" 2
	grep -q 'sleep 30; bakery-relay --due' "$crontab"
	grep -Eq '^0 10 \* \* \*[[:space:]]+bakery-wipe --all --daily' "$crontab"
	grep -Eq '^\*/15 \* \* \* \*[[:space:]]+bakery-wipe --all --resume' "$crontab"
	# Each command, run as written against an empty home, succeeds.
	grep -Ev '^(#|[A-Z_]+=|$)' "$crontab" | cut -f2- | sed 's/ >\/dev\/null$//' |
	while read -r cmd; do
		cmd=${cmd#sleep 30; }
		run bash -c "$cmd"
		[ "$status" -eq 0 ] || { echo "'$cmd' exited $status: $output" >&2; return 1; }
	done
}
