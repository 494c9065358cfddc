#!/usr/bin/env bats
# Completions for bash, zsh and fish: every program, subcommand and option;
# order ids, dead-letter ids and object addresses from the programs.
load helpers
bats_require_minimum_version 1.5.0

COMP="$TOP/completions"
COMMON="--help --home --queue --quiet --sandbox --verbose --version"

# The long options of cmd/PROG.c's table, with the common ones, sorted.
long_options() {
	{ grep -o '{ "[a-z-]*", [a-z_]*_argument' "$TOP/cmd/$1.c" | cut -d'"' -f2 | sed 's/^/--/'
	  printf '%s\n' $COMMON; } | sort -u
}

# complete_bash WORD...: the candidates bash offers for the last word.
complete_bash() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _bakery; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP/bakery.bash" "$@"
}

programs() { for src in "$TOP"/cmd/bakery-*.c; do basename "$src" .c; done; }

@test "bash: every program is completed by _bakery" {
	run bash -c "source '$COMP/bakery.bash'; complete -p"
	assert_success
	for p in bakery $(programs); do
		assert_line "complete -F _bakery $p"
	done
}

@test "bash: every long option of every program, from its option table" {
	for p in $(programs); do
		[ "$p" = bakery ] && continue
		run complete_bash "$p" --
		assert_success
		got=$(printf '%s\n' "${lines[@]}" | grep '^--' | sort -u)
		assert_equal "$got" "$(long_options "$p")"
	done
	run complete_bash bakery-status --m
	assert_output "--max-age"
}

@test "bash: programs of bakery, subcommands, faults" {
	run complete_bash bakery st
	assert_output "$(printf '%s\n' status standby)"
	run complete_bash bakery ""
	for c in order relay consume dlq redrive queue fault show status trace wipe webhook doctor backup standby; do
		assert_line "$c"
	done
	run complete_bash bakery-order ""
	assert_equal "$(echo $output)" "place pay gateway show list events refunded"
	run complete_bash bakery-dlq ""
	assert_equal "$(echo $output)" "drain list show"
	run complete_bash bakery-queue --limit 5 ""
	assert_equal "$(echo $output)" "init send peek stats"
	run complete_bash bakery fault set ""
	assert_equal "$(echo $output)" "refuses:crm refuses:customer refuses:dispatch refuses:inbox refuses:kitchen refuses:order refuses:schedule queue-refuses"
	run complete_bash bakery-order place ""
	assert_line "cardamom-bun="
}

@test "bash: order ids, dead-letter ids and addresses come from the programs" {
	id=$(place ada)
	run complete_bash bakery-order pay ""
	assert_output "$id"
	run complete_bash bakery-order --card 4242424242424242 show ord_
	assert_output "$id"
	run complete_bash bakery-show o
	assert_output "order/$id"
	run complete_bash bakery relay --all order/
	assert_output "order/$id"
	bakery-fault set refuses:kitchen
	place bo >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	run complete_bash bakery-redrive ""
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort)" "$(bakery-dlq list | jq -r .id | sort)"
	assert_equal "${#lines[@]}" 2
	run complete_bash bakery dlq show ""
	assert_equal "${#lines[@]}" 2
	# The home typed on the line is the one asked: here, an empty one.
	run complete_bash bakery-order -H "$BATS_TEST_TMPDIR/empty" pay ""
	assert_output ""
}

@test "zsh parses its completion, which names every long option" {
	run zsh -n "$COMP/_bakery"
	assert_success
	head -1 "$COMP/_bakery" | grep -q '^#compdef bakery '
	for p in $(programs); do
		grep -q "^#compdef.* $p\\b" "$COMP/_bakery" || { echo "zsh: no $p" >&2; return 1; }
		for opt in $(long_options "$p"); do
			grep -q -- "$opt" "$COMP/_bakery" || { echo "zsh: $p lacks $opt" >&2; return 1; }
		done
	done
}

@test "fish parses its completion and offers every long option and order ids" {
	run fish -n "$COMP/bakery.fish"
	assert_success
	for p in $(programs); do
		[ "$p" = bakery ] && continue
		got=$(fish -c "source '$COMP/bakery.fish'; complete -C'$p --'" | cut -f1 | sort -u)
		assert_equal "$got" "$(long_options "$p")"
	done
	id=$(place ada)
	run fish -c "source '$COMP/bakery.fish'; complete -C'bakery-order pay '"
	assert_output "$id"
}

@test "bash: bakery help completes the commands" {
	run complete_bash bakery he
	assert_output help
	run complete_bash bakery help sta
	assert_output "$(printf '%s\n' status standby)"
}

@test "bash: bakery-trace completes dead-letter ids and order ids" {
	id=$(place ada)
	run complete_bash bakery-trace ord_
	assert_output "$id"
	bakery-fault set refuses:kitchen
	place bo >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	run complete_bash bakery-trace evt_
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort)" "$(bakery-dlq list | jq -r .id | sort)"
}

@test "bash: bakery-console completes user, its commands, and the home's accounts" {
	run complete_bash bakery-console ""
	assert_output user
	run complete_bash bakery-console user ""
	assert_equal "$(echo $output)" "add passwd del list"
	echo 'a-long-password' | bakery-console user add ada >/dev/null
	run complete_bash bakery console user del ""
	assert_output ada
	run fish -c "source '$COMP/bakery.fish'; complete -C'bakery-console user passwd '"
	assert_output ada
}
