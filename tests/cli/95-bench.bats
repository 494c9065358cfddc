#!/usr/bin/env bats
# The benchmark harness runs and writes its figures as JSON. Tiny sizes and
# no peers: nothing here depends on timing, only on the harness working.

load helpers
bats_require_minimum_version 1.5.0

@test "make bench's harness runs at tiny sizes and writes valid JSON" {
	BENCH_QUICK=1 BENCH_RUNS=1 BENCH_PEERS=0 TMPDIR="$BATS_TEST_TMPDIR" \
		BENCH_JSON="$BATS_TEST_TMPDIR/bench.json" \
		run "$TOP/tests/bench/run.sh"
	assert_success
	assert_line --partial "machine:"
	run jq -e '["b1_ratio", "b2_vs_plainjob_full", "b2_vs_plainjob_normal",
		"b3_ratio_floor", "b3_p50_ms", "b3_p99_ms", "b4_ratio",
		"b5_backlog_ratio", "b5_alarm_ratio", "b5_rss_mib",
		"b6_vs_raw_nats", "b8_ratio", "b4_fsyncs_place", "b4_fsyncs_pay", "b2_fsyncs",
		"b10_seq_ms", "b10_writeback_ms", "b10_ratio"]
		- keys == [] and (.b1_ratio | type) == "number" and (.b8_ratio | type) == "number"
		and (.b10_ratio | type) == "number"
		and ([.b4_fsyncs_place, .b4_fsyncs_pay, .b2_fsyncs]
			| all(type == "number" and . > 0))' \
		"$BATS_TEST_TMPDIR/bench.json"
	assert_success
}

@test "one run writes both the page's table (BENCH_MD) and the JSON, the same run's" {
	printf '%s\n' '# What it costs' '' 'Intro.' '' '## The run of 2026-12-03 (abc)' '' 'Old.' >"$BATS_TEST_TMPDIR/costs.md"
	BENCH_QUICK=1 BENCH_RUNS=1 BENCH_PEERS=0 BENCH_PARTS=1 TMPDIR="$BATS_TEST_TMPDIR" \
		BENCH_JSON="$BATS_TEST_TMPDIR/costs.json" BENCH_MD="$BATS_TEST_TMPDIR/costs.md" \
		run --separate-stderr "$TOP/tests/bench/run.sh"
	assert_success
	date=$(jq -r .date "$BATS_TEST_TMPDIR/costs.json")
	# The new section first, before the runs the page held, the table the
	# one printed; the JSON's figures are the table's.
	assert_equal "$(grep '^## ' "$BATS_TEST_TMPDIR/costs.md" | sed 's/ (.*//')" \
		"$(printf '%s\n' "## The run of $date" '## The run of 2026-12-03')"
	assert_equal "$(sed -n '/^```$/,/^```$/p' "$BATS_TEST_TMPDIR/costs.md" | sed '1d;$d')" "$output"
	[[ "$output" == "bakery bench, $date, 1 runs"* ]]
	b1=$(awk '$1 == "B1" && $2 == "commands" { print $6 }' <<<"$output")
	# The same number: the table prints 1200.0 where the JSON has 1200.
	jq -e --argjson b1 "$b1" '.b1 == $b1' "$BATS_TEST_TMPDIR/costs.json"
	grep -q "its figures as JSON in \`costs.json\` by the same run" "$BATS_TEST_TMPDIR/costs.md"
	assert_equal "$(tail -3 "$BATS_TEST_TMPDIR/costs.md")" "$(printf '%s\n' '## The run of 2026-12-03 (abc)' '' 'Old.')"
}

@test "make bench's B7 counts the consumer's instructions an event, off and with tracing on in the same run, and gives the ratio" {
	if ldd "$TOP/bin/bakery-consume" | grep -q libasan; then
		skip "a sanitizer build: valgrind cannot run it"
	fi
	BENCH_QUICK=1 BENCH_RUNS=1 BENCH_PEERS=0 BENCH_PARTS=7 \
		TMPDIR="$BATS_TEST_TMPDIR" BENCH_JSON="$BATS_TEST_TMPDIR/bench.json" \
		run "$TOP/tests/bench/run.sh"
	assert_success
	assert_line --regexp '^B7 consumer instructions an event +[0-9.]+ M \(10 orders\), target ≤ 1 M$'
	assert_line --regexp '^B7 the same, tracing on \(OTLP to a local sink\) +[0-9.]+ M$'
	assert_line --regexp '^B7 b7_traced_ratio \(on ÷ off\) +[0-9.]+ target ≤ 1.15$'
	run jq -e '(.b7_instructions_per_event | type == "number" and . > 0)
		and (.b7_traced_instructions_per_event | type == "number" and . > 0)
		and .b7_traced_ratio == ((.b7_traced_instructions_per_event / .b7_instructions_per_event) * 1000 | round / 1000)' \
		"$BATS_TEST_TMPDIR/bench.json"
	assert_success
}

@test "make bench's B11 measures a replicated home on a real cluster, each way's home taking the lease the last one held" {
	BENCH_QUICK=1 BENCH_RUNS=1 BENCH_PARTS=11 TMPDIR="$BATS_TEST_TMPDIR" \
		BENCH_JSON="$BATS_TEST_TMPDIR/bench.json" \
		run --separate-stderr "$TOP/tests/bench/run.sh"
	assert_success
	assert_line --regexp '^B11 b11_batch_ratio \(replicated ÷ plain\) +[0-9.]+ target ≥ 0.5$'
	run jq -e '.b11_state == "measured" and ([.b11_place_ratio, .b11_pay_ratio,
		.b11_batch_ratio, .b11_apart_batch_ratio] | all(type == "number" and . > 0))' \
		"$BATS_TEST_TMPDIR/bench.json"
	assert_success
}
