#!/usr/bin/env bats
# make install and make uninstall: programs, pages, completions, units and
# share files in their conventional places, and the installed programs work.
#
# The build installs under a scratch PREFIX rather than a scratch DESTDIR:
# the menu's installed place is compiled in (BAKERY_SHAREDIR, from PREFIX),
# and with DESTDIR it would point outside the scratch folder. With PREFIX
# the installed bakery-order finds its installed menu with BAKERY_MENU
# unset, as a user's would. It builds in a copy of the tree, so the tree's
# own build/ and bin/ are left alone.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SRC="$BATS_FILE_TMPDIR/src" ROOT="$BATS_FILE_TMPDIR/root"
	mkdir -p "$SRC"
	cp -r "$TOP"/Makefile "$TOP"/mk "$TOP"/cmd "$TOP"/lib "$TOP"/docs "$TOP"/share \
		"$TOP"/completions "$SRC"
	# The tree's SQLite cache, so that a linked build is not fetched again.
	make -C "$SRC" -j2 install PREFIX="$ROOT/usr" SQLITE_CACHE="$TOP/.cache/sqlite" \
		>"$BATS_FILE_TMPDIR/make.log" 2>&1
}

@test "the installed programs run: -h, and a real place, pay and consume with the installed menu" {
	for p in "$ROOT"/usr/bin/bakery*; do
		run --separate-stderr "$p" -h
		assert_success
		assert_line --index 0 --partial "usage: $(basename "$p")"
	done
	[ "$(ls "$ROOT/usr/bin" | wc -l)" -eq "$(ls "$TOP/cmd" | wc -l)" ]
	unset BAKERY_MENU
	export PATH="$ROOT/usr/bin:/usr/bin:/bin"
	# The installed menu is the one read: an item only it has can be ordered.
	printf 'install-loaf\t450\tInstall loaf\n' >>"$ROOT/usr/share/bakery/menu.tsv"
	id=$(bakery-order place --customer ada --day "$DAY" install-loaf=2 | jq -r .id)
	assert_equal "$(bakery-order show "$id" | jq .total_cents)" 900
	bakery-order pay "$id" >/dev/null
	run --separate-stderr bakery consume
	assert_success
	assert_equal "$(bakery-order show "$id" | jq -r .status)" paid
	assert_effects_once "$id"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "every installed page renders with man -l" {
	local n=0
	for page in "$ROOT"/usr/share/man/man[157]/*; do
		run --separate-stderr env MANPAGER=cat MANWIDTH=80 man -l "$page"
		assert_success
		assert_equal "$stderr" ""
		assert_line --regexp '^NAME$'
		n=$((n + 1))
	done
	[ "$n" -eq $(($(ls "$TOP/cmd" | wc -l) + 3)) ]
}

@test "completions are installed where bash, zsh and fish look, one name per program" {
	local bc="$ROOT/usr/share/bash-completion/completions"
	local fc="$ROOT/usr/share/fish/vendor_completions.d"
	for src in "$TOP"/cmd/*.c; do
		p=$(basename "$src" .c)
		[ -e "$bc/$p" ]
		[ -e "$fc/$p.fish" ] || [ "$p" = bakery ]
		run bash -c "source '$bc/$p'; complete -p $p"
		assert_output "complete -F _bakery $p"
	done
	[ -e "$fc/bakery.fish" ]
	zsh -n "$ROOT/usr/share/zsh/vendor-completions/_bakery"
	fish -n "$fc/bakery-order.fish"
}

@test "units, lighttpd, sysusers and tmpfiles name the installed places; share files are in place" {
	grep -q "ExecStart=$ROOT/usr/bin/bakery-relay" "$ROOT/usr/lib/systemd/system/bakery-relay.service"
	grep -qx "EnvironmentFile=-$ROOT/usr/etc/bakery/bakery.env" "$ROOT/usr/lib/systemd/system/bakery-consume.service"
	grep -q "ExecStart=.* -f $ROOT/usr/share/bakery/lighttpd/bakery-webhook.conf" "$ROOT/usr/lib/systemd/system/bakery-webhook.service"
	grep -qx "var.bakery_webhook *= \"$ROOT/usr/bin/bakery-webhook\"" "$ROOT/usr/share/bakery/lighttpd/bakery-webhook.conf"
	grep -qx "var.bakery_console *= \"$ROOT/usr/bin/bakery-console\"" "$ROOT/usr/share/bakery/lighttpd/bakery-webhook.conf"
	grep -qx 'BAKERY_CONSOLE_ORIGIN=' "$ROOT/usr/etc/bakery/bakery.env"
	grep -qx "u bakery - .* /var/lib/bakery" "$ROOT/usr/lib/sysusers.d/bakery.conf"
	grep -qx "L /var/lib/bakery/routes - - - - $ROOT/usr/etc/bakery/routes" "$ROOT/usr/lib/tmpfiles.d/bakery.conf"
	cmp "$ROOT/usr/share/bakery/routes" "$ROOT/usr/etc/bakery/routes"
	grep -qx 'BAKERY_QUEUE=' "$ROOT/usr/etc/bakery/bakery.env"
	# grep's 1: nothing is left with a placeholder (2 would be an error).
	run grep -rlE '@(BINDIR|SHAREDIR|SYSCONFDIR)@' "$ROOT/usr/lib" "$ROOT/usr/share/bakery" "$ROOT/usr/etc"
	assert_failure 1
	assert_output ""
	[ -f "$ROOT/usr/share/bakery/cron/bakery.crontab" ]
	[ -f "$ROOT/usr/share/bakery/lighttpd/bakery-webhook.conf" ]
	# The default routes, read by the installed consumer of a home without
	# its own; the examples they name, runnable.
	run env -u BAKERY_ROUTES BAKERY_HOME="$BATS_TEST_TMPDIR/h" "$ROOT/usr/bin/bakery-consume" --routes
	assert_success
	assert_equal "${#lines[@]}" 9
	[ -x "$ROOT/usr/share/bakery/examples/receipt-mailer" ]
	[ -x "$ROOT/usr/share/bakery/examples/dedupe-receiver" ]
}

@test "every program the installed routes' examples run is installed where they name it" {
	routes="$ROOT/usr/share/bakery/routes"
	run grep -c '@SHAREDIR@' "$routes"
	assert_output 0
	# The example lines, uncommented, are a routes file the consumer takes.
	sed -n 's/^#   \([A-Z][A-Za-z]* \)/\1/p' "$routes" >"$BATS_TEST_TMPDIR/examples"
	[ -s "$BATS_TEST_TMPDIR/examples" ]
	run --separate-stderr "$ROOT/usr/bin/bakery-consume" --routes-file "$BATS_TEST_TMPDIR/examples" --routes
	assert_success
	n=0
	for prog in $(grep -o 'exec:[^ ]*' "$BATS_TEST_TMPDIR/examples" | cut -d: -f2-); do
		[ -x "$prog" ] || { echo "not installed: $prog" >&2; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

@test "make install keeps an edited configuration file, and make uninstall keeps it too" {
	local conf="$ROOT/usr/etc/bakery/routes"
	echo 'OrderPaid  exec:/bin/true  name=edited' >>"$conf"
	make -C "$SRC" -o all install PREFIX="$ROOT/usr" >/dev/null
	grep -q 'name=edited' "$conf"
	make -C "$SRC" uninstall PREFIX="$ROOT/usr" >/dev/null
	run find "$ROOT" ! -type d
	assert_output "$conf"
	rm "$conf"
}

# The package's layout (PREFIX=/usr: the configuration in /etc) under a
# DESTDIR, from the programs built above (-o all: install copies them as
# they are; the compiled-in SHAREDIR does not matter to what goes where).
@test "make uninstall leaves a DESTDIR as empty as before make install: no file, no folder" {
	local dest="$BATS_TEST_TMPDIR/dest"
	mkdir "$dest"
	make -C "$SRC" -o all install DESTDIR="$dest" PREFIX=/usr >/dev/null
	[ -f "$dest/etc/bakery/bakery.env" ]
	[ -f "$dest/usr/lib/systemd/system/bakery-consume.service" ]
	[ -f "$dest/usr/lib/sysusers.d/bakery.conf" ]
	make -C "$SRC" uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null
	run find "$dest" -mindepth 1
	assert_output ""
}

@test "make uninstall removes every file and folder it installed under PREFIX" {
	make -C "$SRC" uninstall PREFIX="$ROOT/usr" >/dev/null
	run find "$ROOT" -mindepth 1
	assert_output ""
}
