#!/usr/bin/env bats
# The kitchen's cards and the CRM's customers are rows, and the outbox is
# the events not relayed yet: schema version 3, the one 0.1.0 wrote; the
# kinds' lists (the schedule's holds and reservations, the dispatch's
# stops, a customer's orders and receipts) are rows since version 4. A
# home 0.1.0 wrote, where every object's file had the kitchen's and the
# CRM's tables and the lists were arrays of the state, is read by the
# read-only tools as it is, shows the same, goes on applying events and
# still owes what its outbox owed. An object file of an older version,
# which only bakeries before 0.1.0 made, is refused and left as it is.
load helpers
bats_require_minimum_version 1.5.0

ITEMS='[{"item":"rye","qty":1,"price_cents":450}]'

# db ADDRESS: the object's file in sandbox default.
db() {
	echo "$BAKERY_HOME/sandboxes/default/$1.db"
}

# v3_object ADDRESS STATE: an object file as 0.1.0 made it (lib/store.c's
# object_schema_3 then): every kind's file with the tickets, cards and
# customers tables, the state row, user_version 3.
v3_object() {
	local file
	file=$(db "$1")
	mkdir -p "$(dirname "$file")"
	sqlite3 "$file" <<-EOF
		CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1),
		  address TEXT NOT NULL, json TEXT NOT NULL);
		CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
		  type TEXT NOT NULL, envelope TEXT NOT NULL,
		  recorded_at INTEGER NOT NULL, relayed_at INTEGER,
		  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT);
		CREATE INDEX events_unrelayed ON events(seq) WHERE relayed_at IS NULL;
		CREATE VIEW outbox(seq, event_id, envelope, attempts, created_at,
		  last_error) AS SELECT seq, id, envelope, attempts, recorded_at,
		  last_error FROM events WHERE relayed_at IS NULL;
		CREATE TABLE seen(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,
		  applied_at INTEGER NOT NULL) WITHOUT ROWID;
		CREATE TABLE commands_seen(key TEXT PRIMARY KEY,
		  result TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
		CREATE TABLE alarm(id INTEGER PRIMARY KEY CHECK (id = 1),
		  fire_at INTEGER,
		  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);
		CREATE TABLE tickets(order_id TEXT PRIMARY KEY,
		  event_id TEXT NOT NULL, items TEXT NOT NULL,
		  created_at INTEGER NOT NULL);
		CREATE TABLE cards(seq INTEGER PRIMARY KEY,
		  order_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, day TEXT,
		  items TEXT);
		CREATE TABLE crm_customers(seq INTEGER PRIMARY KEY,
		  customer TEXT NOT NULL UNIQUE, orders INTEGER NOT NULL,
		  total_cents NUMERIC NOT NULL, last_order TEXT);
		INSERT INTO state VALUES (1, '$1', '${2//\'/\'\'}');
		PRAGMA user_version = 3;
	EOF
}

# v1_object ADDRESS: an object file of schema version 1, as bakeries
# before 0.1.0 made it: the outbox a table, no cards or customers.
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
		INSERT INTO state VALUES (1, '$1', '{"cards":[]}');
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

# A home 0.1.0 wrote: a board with a confirmed card (and its ticket)
# before a placed one, a CRM with two customers, zed first, and a
# schedule, which has no rows of its own.
v3_home() {
	T0=$(($(date -u -d "$DAY" +%s) * 1000))
	CARDS='[{"order":"ord_b","day":"'$DAY'","items":'$ITEMS',"status":"confirmed"},{"order":"ord_a","day":"'$DAY'","items":'$ITEMS',"status":"placed"}]'
	CUSTOMERS='{"zed":{"orders":2,"total_cents":900,"last_order":"ord_b"},"ada":{"orders":1,"total_cents":450,"last_order":"ord_x"}}'
	SCHEDULE='{"day":"'$DAY'","holds":[{"order":"ord_a","customer":"ada"}],"reservations":[]}'
	v3_object kitchen/board '{}'
	sqlite3 "$(db kitchen/board)" \
		"INSERT INTO cards(order_id, status, day, items) VALUES
		  ('ord_b', 'confirmed', '$DAY', '$ITEMS'),
		  ('ord_a', 'placed', '$DAY', '$ITEMS');
		INSERT INTO tickets VALUES ('ord_b', 'evt_b', '$ITEMS', $T0);
		INSERT INTO seen VALUES ('evt_b', 'OrderPaid', $T0)"
	v3_object crm/customers '{}'
	sqlite3 "$(db crm/customers)" \
		"INSERT INTO crm_customers(customer, orders, total_cents, last_order)
		  VALUES ('zed', 2, 900, 'ord_b'), ('ada', 1, 450, 'ord_x');
		INSERT INTO seen VALUES ('evt_b', 'OrderPaid', $T0)"
	v3_object "schedule/$DAY" "$SCHEDULE"
	# ord_b's order, which recorded evt_b (bakery-trace starts there).
	v3_object order/ord_b '{"id":"ord_b","status":"paid","customer":"zed"}'
	local env
	env=$(order_paid ord_b zed evt_b)
	sqlite3 "$(db order/ord_b)" \
		"INSERT INTO events VALUES (1, 'evt_b', 'OrderPaid', '$env', $T0, $T0, 0, NULL)"
	# The queue that took evt_b.
	bakery-queue init >/dev/null
}

version() {
	sqlite3 "$(db "$1")" "PRAGMA user_version"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "bakery-status and bakery-trace read a home 0.1.0 wrote" {
	v3_home
	run --separate-stderr bakery-status --json
	assert_success
	assert_equal "$(jq -c '[.ok, .attention]' <<<"$output")" '[true,[]]'
	run --separate-stderr bakery-trace --json evt_b
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -c '[.subscribers[] | select(.applied_at != null) | .address]' <<<"$output")" \
		'["kitchen/board","crm/customers"]'
}

@test "a board, CRM, schedule, dispatch and customer 0.1.0 wrote show the same, their lists now rows (version 4)" {
	v3_home
	DISPATCH='{"stops":[{"order":"ord_b","customer":"zed","address":"1 Mill Lane","status":"confirmed"},{"order":"ord_a","customer":"ada","address":"2 Mill Lane","status":"confirmed"}],"day":"'$DAY'"}'
	INBOX='{"receipts":[{"order":"ord_b","day":"'$DAY'","total_cents":450,"currency":"eur"}],"customer":"zed"}'
	v3_object "dispatch/$DAY" "$DISPATCH"
	v3_object inbox/zed "$INBOX"
	run --separate-stderr bakery-show kitchen/board crm/customers "schedule/$DAY" "dispatch/$DAY" inbox/zed
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -c .state.cards <<<"${lines[0]}")" "$CARDS"
	assert_equal "$(jq -c '[.state.tickets[] | {order, event, created_at}]' <<<"${lines[0]}")" \
		'[{"order":"ord_b","event":"evt_b","created_at":"'$DAY'T00:00:00.000Z"}]'
	assert_equal "$(jq -c 'del(.state.tickets) | .state' <<<"${lines[0]}")" "{\"cards\":$CARDS}"
	assert_equal "$(jq -c .state <<<"${lines[1]}")" "{\"customers\":$CUSTOMERS}"
	# The same JSON as 0.1.0's state, its lists in the order they had.
	assert_equal "$(jq -cS .state <<<"${lines[2]}")" "$(jq -cS . <<<"$SCHEDULE")"
	assert_equal "$(jq -cS .state <<<"${lines[3]}")" "$(jq -cS . <<<"$DISPATCH")"
	assert_equal "$(jq -cS .state <<<"${lines[4]}")" "$(jq -cS . <<<"$INBOX")"
	for a in kitchen/board crm/customers "schedule/$DAY" "dispatch/$DAY" inbox/zed; do
		assert_equal "$(version "$a")" 4
	done
	# The lists left the state document for rows.
	assert_equal "$(sqlite3 "$(db "dispatch/$DAY")" "SELECT json FROM state;
		SELECT group_concat(order_id) FROM (SELECT order_id FROM stops ORDER BY seq)")" \
		$'{"day":"'$DAY$'"}\nord_b,ord_a'
	assert_equal "$(sqlite3 "$(db "schedule/$DAY")" "SELECT json FROM state;
		SELECT order_id FROM holds; SELECT count(*) FROM reservations")" \
		$'{"day":"'$DAY$'"}\nord_a\n0'
	# The tables of other kinds 0.1.0 made in every file stay, unread.
	assert_equal "$(sqlite3 "$(db "schedule/$DAY")" \
		"SELECT count(*) FROM sqlite_master WHERE name IN ('cards', 'crm_customers', 'tickets')")" 3
}

@test "a board and CRM 0.1.0 wrote go on applying events, one row each" {
	v3_home
	# ord_a's OrderPaid, straight to its subscribers: its card is
	# confirmed, ada's row counts it.
	paid=$(order_paid ord_a ada evt_a)
	run bakery-consume --stdin <<<"$paid"
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" applied
	# And a new order, placed and paid: a card after the others.
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

@test "an order 0.1.0 wrote still owes its outbox, and only it" {
	T0=$(($(date -u -d "$DAY" +%s) * 1000))
	v3_object order/ord_c '{"id":"ord_c","status":"paid","customer":"zed"}'
	local sent unsent
	sent=$(order_paid ord_c zed evt_sent)
	unsent=$(order_paid ord_c zed evt_owed)
	sqlite3 "$(db order/ord_c)" \
		"INSERT INTO events VALUES (1, 'evt_sent', 'OrderPaid', '$sent', $T0, $T0, 0, NULL);
		INSERT INTO events VALUES (2, 'evt_owed', 'OrderPaid', '$unsent', $T0, NULL, 2, 'queue down')"
	run --separate-stderr bakery-show order/ord_c
	assert_success
	assert_equal "$(jq -c '[.outbox[] | [.id, .attempts, .last_error]]' <<<"$output")" \
		'[["evt_owed",2,"queue down"]]'
	run --separate-stderr bakery-relay order/ord_c
	assert_success
	assert_equal "$(bakery-queue peek | jq -r .id)" evt_owed
	assert_equal "$(bakery-show order/ord_c | jq -c .outbox)" '[]'
	assert_equal "$(sqlite3 "$(db order/ord_c)" \
		"SELECT count(*) FROM outbox; SELECT count(*) FROM events WHERE relayed_at IS NOT NULL")" \
		$'0\n2'
	assert_equal "$(version order/ord_c)" 4
}

@test "an object file of version 1 or 2, made before 0.1.0, is refused with 78 naming it, and left as it is" {
	v1_object kitchen/board
	v1_object order/ord_d
	sqlite3 "$(db order/ord_d)" "PRAGMA user_version = 2"
	before=$(sha256sum "$(db kitchen/board)" "$(db order/ord_d)")
	for a in kitchen/board order/ord_d; do
		run --separate-stderr bakery-show "$a"
		assert_failure 78
		[[ "$stderr" == *"cannot use '$(db "$a")': schema version "[12]" was made by a bakery before 0.1.0"* ]]
	done
	run --separate-stderr bakery-relay order/ord_d
	assert_failure 78
	[[ "$stderr" == *"'$(db order/ord_d)': schema version 2 was made by a bakery before 0.1.0"* ]]
	# An OrderPlaced for the board is refused there, not applied.
	run --separate-stderr bakery-consume --stdin <<<"$(order_paid ord_d ada evt_d | jq -c '.type = "OrderPlaced"')"
	assert_failure 75
	assert_equal "$(jq -r .outcome <<<"$output")" refused
	[[ "$(jq -r .error <<<"$output")" == *"'$(db kitchen/board)': schema version 1 was made by a bakery before 0.1.0"* ]]
	# bakery-status reads the rest, and says which files need attention.
	run --separate-stderr bakery-status --json
	assert_failure 1
	jq -e '.attention | any(test("kitchen/board.db.*made by a bakery before 0.1.0"))' <<<"$output"
	jq -e '.attention | any(test("order/ord_d.db.*made by a bakery before 0.1.0"))' <<<"$output"
	assert_equal "$(sha256sum "$(db kitchen/board)" "$(db order/ord_d)")" "$before"
	assert_equal "$(version kitchen/board)" 1
	assert_equal "$(version order/ord_d)" 2
}

@test "bakery-order list on a read-only home names an order 0.1.0 wrote, which it cannot migrate there, lists the rest, and exits 77" {
	need_ro
	v3_object order/ord_c '{"id":"ord_c","status":"paid","customer":"zed","placed_at":"2026-11-30T09:00:00.000Z"}'
	id=$(place ada)
	run --separate-stderr ro bakery-order list
	assert_failure 77
	assert_equal "$(jq -r .id <<<"$output")" "$id"
	assert_equal "$(wc -l <<<"$stderr")" 1
	[[ "$stderr" == "bakery-order: error: "*"'$(db order/ord_c)'"* ]]
	assert_equal "$(version order/ord_c)" 3
	# Writable, the same list migrates it and lists both.
	run --separate-stderr bakery-order list
	assert_success
	assert_equal "$(jq -r .id <<<"$output" | tr '\n' ' ')" "ord_c $id "
}
