#!/usr/bin/env bats
# The kitchen's cards and the CRM's customers are rows (schema version 2),
# and the outbox is the events not relayed yet (version 3): a home written
# by a bakery of schema version 1, where cards and customers were inside
# the state document and the outbox was a table of its own, migrates when
# an object is opened, shows the same, goes on applying events and still
# owes what its outbox owed.
load helpers
bats_require_minimum_version 1.5.0

ITEMS='[{"item":"rye","qty":1,"price_cents":450}]'

# db ADDRESS: the object's file in sandbox default.
db() {
	echo "$BAKERY_HOME/sandboxes/default/$1.db"
}

# v1_object ADDRESS STATE: an object file as a bakery of schema version 1
# wrote it: the version 1 tables, the state row, user_version 1.
v1_object() {
	local file
	file=$(db "$1")
	mkdir -p "$(dirname "$file")"
	sqlite3 "$file" <<-EOF
		CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1),
		  address TEXT NOT NULL, json TEXT NOT NULL);
		CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
		  type TEXT NOT NULL, envelope TEXT NOT NULL,
		  recorded_at INTEGER NOT NULL, relayed_at INTEGER);
		CREATE TABLE outbox(seq INTEGER PRIMARY KEY,
		  event_id TEXT NOT NULL UNIQUE, envelope TEXT NOT NULL,
		  attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
		  last_error TEXT);
		CREATE TABLE seen(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,
		  applied_at INTEGER NOT NULL);
		CREATE TABLE commands_seen(key TEXT PRIMARY KEY, result TEXT NOT NULL,
		  at INTEGER NOT NULL);
		CREATE TABLE alarm(id INTEGER PRIMARY KEY CHECK (id = 1),
		  fire_at INTEGER,
		  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);
		CREATE TABLE tickets(order_id TEXT PRIMARY KEY,
		  event_id TEXT NOT NULL, items TEXT NOT NULL,
		  created_at INTEGER NOT NULL);
		INSERT INTO state VALUES (1, '$1', '${2//\'/\'\'}');
		PRAGMA user_version = 1;
	EOF
}

# order_paid ORDER CUSTOMER ID: an OrderPaid envelope of 450 cents.
order_paid() {
	jq -nc --arg o "$1" --arg c "$2" --arg id "$3" --arg day "$DAY" \
		--argjson items "$ITEMS" '{specversion: "1.0", id: $id,
		type: "OrderPaid", source: "bakery:default/order/\($o)",
		subject: "order/\($o)", time: "2026-11-30T09:00:00.000Z",
		datacontenttype: "application/json", sandbox: "default",
		data: {order: $o, customer: $c, day: $day, items: $items,
		total_cents: 450, currency: "eur"}}'
}

# A home of schema version 1: a board with a confirmed card (and its
# ticket) before a placed one, a CRM with two customers, zed first, and a
# schedule, which has nothing to move.
v1_home() {
	T0=$(($(date -u -d "$DAY" +%s) * 1000))
	CARDS='[{"order":"ord_b","day":"'$DAY'","items":'$ITEMS',"status":"confirmed"},{"order":"ord_a","day":"'$DAY'","items":'$ITEMS',"status":"placed"}]'
	CUSTOMERS='{"zed":{"orders":2,"total_cents":900,"last_order":"ord_b"},"ada":{"orders":1,"total_cents":450,"last_order":"ord_x"}}'
	SCHEDULE='{"day":"'$DAY'","holds":[{"order":"ord_a","customer":"ada"}],"reservations":[]}'
	v1_object kitchen/board '{"cards":'"$CARDS"'}'
	sqlite3 "$(db kitchen/board)" \
		"INSERT INTO tickets VALUES ('ord_b', 'evt_b', '$ITEMS', $T0);
		INSERT INTO seen VALUES ('evt_b', 'OrderPaid', $T0)"
	v1_object crm/customers '{"customers":'"$CUSTOMERS"'}'
	sqlite3 "$(db crm/customers)" \
		"INSERT INTO seen VALUES ('evt_b', 'OrderPaid', $T0)"
	v1_object "schedule/$DAY" "$SCHEDULE"
	# ord_b's order, which recorded evt_b (bakery-trace starts there).
	v1_object order/ord_b '{"id":"ord_b","status":"paid","customer":"zed"}'
	local env
	env=$(order_paid ord_b zed evt_b)
	sqlite3 "$(db order/ord_b)" \
		"INSERT INTO events VALUES (1, 'evt_b', 'OrderPaid', '$env', $T0, $T0)"
	# The queue that took evt_b.
	bakery-queue init >/dev/null
}

version() {
	sqlite3 "$(db "$1")" "PRAGMA user_version"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "bakery-status and bakery-trace read a version 1 home as it is" {
	v1_home
	run --separate-stderr bakery-status --json
	assert_success
	assert_equal "$(jq -c '[.ok, .attention]' <<<"$output")" '[true,[]]'
	run --separate-stderr bakery-trace --json evt_b
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -c '[.subscribers[] | select(.applied_at != null) | .address]' <<<"$output")" \
		'["kitchen/board","crm/customers"]'
	assert_equal "$(version kitchen/board)" 1
	assert_equal "$(version crm/customers)" 1
}

@test "a version 1 board, CRM and schedule migrate on opening and show the same state" {
	v1_home
	run --separate-stderr bakery-show kitchen/board crm/customers "schedule/$DAY"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -c .state.cards <<<"${lines[0]}")" "$CARDS"
	assert_equal "$(jq -c '[.state.tickets[] | {order, event, created_at}]' <<<"${lines[0]}")" \
		'[{"order":"ord_b","event":"evt_b","created_at":"'$DAY'T00:00:00.000Z"}]'
	assert_equal "$(jq -c 'del(.state.tickets) | .state' <<<"${lines[0]}")" "{\"cards\":$CARDS}"
	assert_equal "$(jq -c .state <<<"${lines[1]}")" "{\"customers\":$CUSTOMERS}"
	assert_equal "$(jq -c .state <<<"${lines[2]}")" "$SCHEDULE"
	for a in kitchen/board crm/customers "schedule/$DAY"; do
		assert_equal "$(version "$a")" 3
	done
	# The rows moved out of the state documents, in their order.
	assert_equal "$(sqlite3 "$(db kitchen/board)" \
		"SELECT json FROM state; SELECT group_concat(order_id) FROM (SELECT order_id FROM cards ORDER BY seq)")" \
		$'{}\nord_b,ord_a'
	assert_equal "$(sqlite3 "$(db crm/customers)" \
		"SELECT json FROM state; SELECT group_concat(customer || ':' || orders) FROM (SELECT * FROM crm_customers ORDER BY seq)")" \
		$'{}\nzed:2,ada:1'
	# A schedule's file gets no table of another kind.
	assert_equal "$(sqlite3 "$(db "schedule/$DAY")" \
		"SELECT count(*) FROM sqlite_master WHERE name IN ('cards', 'crm_customers')")" 0
	# Opening again migrates nothing twice.
	run --separate-stderr bakery-show kitchen/board crm/customers
	assert_equal "$(jq -c .state.cards <<<"${lines[0]}")" "$CARDS"
	assert_equal "$(jq -c .state.customers <<<"${lines[1]}")" "$CUSTOMERS"
}

@test "a migrated board and CRM go on applying events, one row each" {
	v1_home
	# ord_a's OrderPaid, straight to its subscribers: its migrated card is
	# confirmed, ada's migrated row counts it.
	paid=$(order_paid ord_a ada evt_a)
	run bakery-consume --stdin <<<"$paid"
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" applied
	# And a new order, placed and paid: a card after the migrated ones.
	id=$(paid_order ada)
	bakery-consume >/dev/null
	board=$(bakery-show kitchen/board)
	assert_equal "$(jq -c '[.state.cards[] | [.order, .status]]' <<<"$board")" \
		"[[\"ord_b\",\"confirmed\"],[\"ord_a\",\"confirmed\"],[\"$id\",\"confirmed\"]]"
	assert_equal "$(jq -c '[.state.tickets[].order] | sort' <<<"$board")" \
		"$(jq -nc --arg id "$id" '["ord_a", "ord_b", $id] | sort')"
	crm=$(bakery-show crm/customers)
	assert_equal "$(jq -c '.state.customers | keys_unsorted' <<<"$crm")" '["zed","ada"]'
	assert_equal "$(jq -c '.state.customers.ada | [.orders, .last_order]' <<<"$crm")" "[3,\"$id\"]"
	assert_equal "$(jq -c '.state.customers.zed' <<<"$crm")" \
		'{"orders":2,"total_cents":900,"last_order":"ord_b"}'
	assert_equal "$(sqlite3 "$(db kitchen/board)" "SELECT json FROM state")" '{}'
	# The same OrderPaid again changes nothing.
	run bakery-consume --stdin <<<"$paid"
	assert_success
	assert_equal "$(bakery-show crm/customers | jq .state.customers.ada.orders)" 3
}

@test "a new home's board and CRM keep no state document, only rows" {
	paid_order ada >/dev/null
	paid_order bob >/dev/null
	bakery-consume >/dev/null
	assert_equal "$(sqlite3 "$(db kitchen/board)" \
		"SELECT (SELECT count(*) FROM state), (SELECT count(*) FROM cards), (SELECT count(*) FROM tickets)")" '0|2|2'
	assert_equal "$(sqlite3 "$(db crm/customers)" \
		"SELECT (SELECT count(*) FROM state), (SELECT group_concat(customer) FROM crm_customers)")" '0|ada,bob'
	run "$TOP/build/tests/checker" --drained "$BAKERY_HOME"
	assert_success
}

@test "a version 1 order's outbox is still owed after migrating, and only it" {
	T0=$(($(date -u -d "$DAY" +%s) * 1000))
	v1_object order/ord_c '{"id":"ord_c","status":"paid","customer":"zed"}'
	local sent unsent
	sent=$(order_paid ord_c zed evt_sent)
	unsent=$(order_paid ord_c zed evt_owed)
	sqlite3 "$(db order/ord_c)" \
		"INSERT INTO events VALUES (1, 'evt_sent', 'OrderPaid', '$sent', $T0, $T0);
		INSERT INTO events VALUES (2, 'evt_owed', 'OrderPaid', '$unsent', $T0, NULL);
		INSERT INTO outbox VALUES (7, 'evt_owed', '$unsent', 2, $T0, 'queue down')"
	run --separate-stderr bakery-show order/ord_c
	assert_success
	assert_equal "$(version order/ord_c)" 3
	assert_equal "$(jq -c '[.outbox[] | [.id, .attempts, .last_error]]' <<<"$output")" \
		'[["evt_owed",2,"queue down"]]'
	assert_equal "$(sqlite3 "$(db order/ord_c)" \
		"SELECT count(*) FROM sqlite_master WHERE name = 'outbox' AND type = 'view'")" 1
	run --separate-stderr bakery-relay order/ord_c
	assert_success
	assert_equal "$(bakery-queue peek | jq -r .id)" evt_owed
	assert_equal "$(bakery-show order/ord_c | jq -c .outbox)" '[]'
	# The view reads empty: both events are relayed.
	assert_equal "$(sqlite3 "$(db order/ord_c)" \
		"SELECT count(*) FROM outbox; SELECT count(*) FROM events WHERE relayed_at IS NOT NULL")" \
		$'0\n2'
}
