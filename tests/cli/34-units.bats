#!/usr/bin/env bats
# The systemd units, their user and folders, the webhook's lighttpd file,
# and the crontab that run the alarms and the wipe. make boot starts them
# under a real systemd (tests/boot.sh).
load helpers
bats_require_minimum_version 1.5.0

# subst FILE: FILE with the placeholders make install fills.
subst() {
	sed -e "s|@BINDIR@|$TOP/bin|g" -e "s|@SHAREDIR@|$TOP/share|g" \
		-e "s|@SYSCONFDIR@|/etc|g" "$1"
}

@test "the purge acts under DPKG_ROOT for every path, and nowhere else" {
	local root=$BATS_TEST_TMPDIR/root bin=$BATS_TEST_TMPDIR/bin c real
	mkdir -p "$root/var/lib/bakery/sandboxes" "$root/etc/bakery" "$bin" \
		"$root/etc/systemd/system/multi-user.target.wants" "$root/etc/systemd/system/timers.target.wants"
	wants=$root/etc/systemd/system
	ln -s /usr/lib/systemd/system/bakery-consume.service "$wants/multi-user.target.wants/bakery-consume.service"
	ln -s /lib/systemd/system/bakery-relay.timer "$wants/timers.target.wants/bakery-relay.timer"
	ln -s /opt/other/bakery-mine.service "$wants/multi-user.target.wants/bakery-mine.service"
	# rm and rmdir that act only under the root, and say what else they
	# were asked to remove.
	for c in rm rmdir; do
		real=$(command -v "$c")
		printf '#!/bin/sh
for a; do case $a in -*) ;; %s/*) ;; *) echo "%s $a" >>%s/outside; exit 0 ;; esac; done
exec %s "$@"
' \
			"$root" "$c" "$BATS_TEST_TMPDIR" "$real" >"$bin/$c"
		chmod +x "$bin/$c"
	done
	run env PATH="$bin:$PATH" DPKG_ROOT="$root" BAKERY_PURGE_HOME=yes sh "$TOP/debian/bakery.postrm" purge
	assert_success
	[ ! -e "$BATS_TEST_TMPDIR/outside" ] || { cat "$BATS_TEST_TMPDIR/outside" >&2; false; }
	[ ! -e "$root/var/lib/bakery" ]
	[ ! -e "$root/etc/bakery" ]
	[ ! -L "$wants/multi-user.target.wants/bakery-consume.service" ]
	[ ! -L "$wants/timers.target.wants/bakery-relay.timer" ]
	[ -L "$wants/multi-user.target.wants/bakery-mine.service" ]
	# Without BAKERY_PURGE_HOME the root's home is kept, and said so.
	mkdir -p "$root/var/lib/bakery"
	run --separate-stderr env PATH="$bin:$PATH" DPKG_ROOT="$root" sh "$TOP/debian/bakery.postrm" purge
	assert_success
	[ -d "$root/var/lib/bakery" ]
	# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
	assert_equal "$stderr" "bakery: kept $root/var/lib/bakery (the home); BAKERY_PURGE_HOME=yes removes it on purge"
}

@test "systemd-analyze verify passes on every unit" {
	units="$BATS_TEST_TMPDIR/units"
	mkdir -p "$units"
	for f in "$TOP"/share/systemd/*; do
		subst "$f" >"$units/$(basename "$f")"
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
}

@test "every service runs as the one bakery user on one home, hardened, reading the environment file" {
	cd "$TOP/share/systemd"
	for s in *.service; do
		for key in User=bakery Group=bakery StateDirectory=bakery \
			StateDirectoryMode=0750 UMask=0077 \
			'EnvironmentFile=-@SYSCONFDIR@/bakery/bakery.env' \
			ProtectSystem=strict NoNewPrivileges=yes PrivateTmp=yes \
			ProtectHome=yes CapabilityBoundingSet=; do
			grep -qx -- "$key" "$s" || { echo "$s lacks $key" >&2; return 1; }
		done
		# A dynamic user per unit would take the home from the others.
		! grep -q '^DynamicUser=' "$s" || { echo "$s has DynamicUser=" >&2; return 1; }
	done
}

@test "the webhook unit runs lighttpd on the shipped file, which names no fixed program path" {
	local unit=$TOP/share/systemd/bakery-webhook.service conf=$TOP/share/lighttpd/bakery-webhook.conf
	grep -qx 'ExecStart=/usr/sbin/lighttpd -D -f @SHAREDIR@/lighttpd/bakery-webhook.conf' "$unit"
	grep -qx 'var.bakery_webhook *= "@BINDIR@/bakery-webhook"' "$conf"
	grep -qx 'var.bakery_console *= "@BINDIR@/bakery-console"' "$conf"
	# The unit sets every variable the file reads, so that a bakery.env
	# kept from before the console (a conffile) still starts it.
	for var in $(sed -n 's/.*= *env\.\([A-Z_]*\)$/\1/p' "$conf"); do
		grep -Eq "^Environment=(.* )?$var=" "$unit" || fail "the unit does not set $var"
	done
	grep -qx 'server.username *= "bakery"' "$conf"
	run grep -n '/usr/local' "$conf"
	assert_failure 1
	# The substituted file parses, with the environment the unit gives it
	# (and without the user, which exists where the package is installed).
	subst "$conf" | sed '/^server\.\(user\|group\)name /d' >"$BATS_TEST_TMPDIR/conf"
	# shellcheck disable=SC2046 # the unit's assignments, split on purpose
	run env $(sed -n 's/^Environment=//p' "$unit") lighttpd -tt -f "$BATS_TEST_TMPDIR/conf"
	assert_success
}

@test "sysusers.d makes the bakery user, tmpfiles.d its home 0750 and the link to the routes" {
	local root=$BATS_TEST_TMPDIR/root
	mkdir -p "$root/etc"
	subst "$TOP/share/sysusers/bakery.conf" >"$BATS_TEST_TMPDIR/sysusers.conf"
	subst "$TOP/share/tmpfiles/bakery.conf" >"$BATS_TEST_TMPDIR/tmpfiles.conf"
	systemd-sysusers --root="$root" "$BATS_TEST_TMPDIR/sysusers.conf" 2>/dev/null
	run grep '^bakery:' "$root/etc/passwd"
	assert_output --regexp '^bakery:x:([0-9]+):([0-9]+):[^:]*:/var/lib/bakery:/usr/sbin/nologin$'
	local uid
	uid=$(cut -d: -f3 "$root/etc/passwd")
	systemd-tmpfiles --root="$root" --create "$BATS_TEST_TMPDIR/tmpfiles.conf"
	assert_equal "$(stat -c '%a %u' "$root/var/lib/bakery")" "750 $uid"
	assert_equal "$(readlink "$root/var/lib/bakery/routes")" /etc/bakery/routes
	assert_equal "$(stat -c '%a %u' "$root/etc/bakery")" "755 0"
	# A file a command run as root left in the home goes back to bakery.
	install -m 600 /dev/null "$root/var/lib/bakery/left-by-root"
	systemd-tmpfiles --root="$root" --create "$BATS_TEST_TMPDIR/tmpfiles.conf"
	assert_equal "$(stat -c '%a %u' "$root/var/lib/bakery/left-by-root")" "600 $uid"
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
