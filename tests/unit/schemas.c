/*
 * schemas.c — every file's schema and the versions it is read from: a
 * file of each version a release wrote (0.1.0's, made here as 0.1.0 made
 * it) is brought to the schema a new file gets, its rows kept; a file of
 * a version only a bakery before 0.1.0 made is refused and left as it is.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include <sys/stat.h>

#include "../../lib/store/store.h"
#include "../../lib/core/alarm.h"
#include "../../lib/core/kind.h"
#include "../../lib/core/object.h"
#include "../../lib/ops/wipe.h"
#include "../../lib/orders/refunds.h"
#include "../../lib/queue/queue-internal.h"
#include "../../lib/web/account.h"
#include "../../lib/base/util.h"

/* What a schema is, as one line (tests/unit/kind.c's, with a filter):
 * every table's columns, keys and rowid, every index's and view's SQL.
 * Tables are compared by their columns, as ALTER TABLE changes the text
 * SQLite keeps. Only the names in names (a list of quoted names), when
 * given. */
static const char *
describe(sqlite3 *db, const char *names, char *buf, size_t size)
{
	char *sql = bakery_xasprintf(
	    "SELECT group_concat(x, ' | ') FROM (SELECT m.type || ' ' || m.name"
	    "  || CASE WHEN m.type = 'table' THEN ' rowid=' ||"
	    "    (m.sql NOT LIKE '%%WITHOUT ROWID') || ' (' || (SELECT"
	    "    group_concat(p.name || ' ' || p.type || ' ' || p.\"notnull\""
	    "    || ' ' || coalesce(p.dflt_value, '-') || ' ' || p.pk, ', ')"
	    "    FROM pragma_table_xinfo(m.name) p) || ') keys [' || coalesce(("
	    "    SELECT group_concat(l.\"unique\" || l.origin || l.partial ||"
	    "    ' ' || (SELECT group_concat(i.name) FROM"
	    "    pragma_index_info(l.name) i), ', ') FROM"
	    "    pragma_index_list(m.name) l), '') || ']'"
	    "  ELSE ': ' || m.sql END"
	    "  AS x FROM sqlite_master m WHERE m.name NOT LIKE 'sqlite_%%'"
	    "  AND (%s OR m.name IN (%s)) ORDER BY m.type, m.name)",
	    names ? "0" : "1", names ? names : "''");
	sql_text(db, sql, buf, size);
	free(sql);
	return buf;
}

/* Every schema of the home's files, ending with NULL; the kinds'
 * follow (kind_schema). */
static const schema_def *const home_schemas[] = {
	&object_schema, &home_sandbox_schema, &alarms_schema, &queue_schema,
	&wipe_schema, &refunds_schema, &console_schema, NULL
};

/* What schema.h says of a schema's fields. */
static void
rules(const schema_def *s)
{
	ok(s->oldest >= 1 && s->oldest <= s->count, "%s: the oldest version "
	    "a release wrote (%d) is from 1 to this bakery's (%d)", s->name,
	    s->oldest, s->count);
	ok(s->read_from >= s->oldest && s->read_from <= s->count,
	    "  read_from (%d) is from it to this bakery's", s->read_from);
	/* wal.c makes a new file by replaying the migrations from 0 when
	 * there is no create: every one must be there. */
	ok(s->create || s->oldest == 1, "  %s", s->create ? "a create"
	    : "no create: every migration kept (oldest 1)");
	int kept = 1, dropped = 1;
	for (int v = s->create ? s->oldest : 0; v < s->count; v++)
		kept &= s->migrations && s->migrations[v] != NULL;
	for (int v = 1; v < s->oldest; v++)
		dropped &= !s->migrations || !s->migrations[v];
	ok(kept, "  the migrations from %d on are kept",
	    s->create ? s->oldest : 0);
	if (s->oldest > 1)
		ok(dropped, "  none from a version no release wrote (1 to "
		    "%d)", s->oldest - 1);
}

/* A file as 0.1.0 made it, with rows, and what must read the same once
 * a bakery of today has opened it. */
typedef struct released {
	const char *file; /* below the home */
	const schema_def *schema;
	int version;
	const char *sql, *rows, *kept, *want;
} released;

/* Object files of 0.1.0 (store.c's object_schema_3): every kind's
 * file had the kitchen's and the CRM's tables. */
#define OBJECT_3 \
	"CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1)," \
	"  address TEXT NOT NULL, json TEXT NOT NULL);" \
	"CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE," \
	"  type TEXT NOT NULL, envelope TEXT NOT NULL," \
	"  recorded_at INTEGER NOT NULL, relayed_at INTEGER," \
	"  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT);" \
	"CREATE INDEX events_unrelayed ON events(seq) WHERE relayed_at IS NULL;" \
	"CREATE VIEW outbox(seq, event_id, envelope, attempts, created_at," \
	"  last_error) AS SELECT seq, id, envelope, attempts, recorded_at," \
	"  last_error FROM events WHERE relayed_at IS NULL;" \
	"CREATE TABLE seen(event_id TEXT PRIMARY KEY, type TEXT NOT NULL," \
	"  applied_at INTEGER NOT NULL) WITHOUT ROWID;" \
	"CREATE TABLE commands_seen(key TEXT PRIMARY KEY," \
	"  result TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;" \
	"CREATE TABLE alarm(id INTEGER PRIMARY KEY CHECK (id = 1)," \
	"  fire_at INTEGER," \
	"  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);" \
	"CREATE TABLE tickets(order_id TEXT PRIMARY KEY," \
	"  event_id TEXT NOT NULL, items TEXT NOT NULL," \
	"  created_at INTEGER NOT NULL);" \
	"CREATE TABLE cards(seq INTEGER PRIMARY KEY," \
	"  order_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, day TEXT," \
	"  items TEXT);" \
	"CREATE TABLE crm_customers(seq INTEGER PRIMARY KEY," \
	"  customer TEXT NOT NULL UNIQUE, orders INTEGER NOT NULL," \
	"  total_cents NUMERIC NOT NULL, last_order TEXT);"
#define OBJECT_ROWS \
	"INSERT INTO state VALUES (1, 'order/ord_1', '{\"id\":\"ord_1\"}');" \
	"INSERT INTO events VALUES (1, 'evt_1', 'OrderPlaced', '{}', 5, 6, 0," \
	"  NULL), (2, 'evt_2', 'OrderPaid', '{}', 7, NULL, 2, 'queue down');" \
	"INSERT INTO seen VALUES ('evt_0', 'PaymentSucceeded', 4);" \
	"INSERT INTO commands_seen VALUES ('key_1', '{}', 3);" \
	"INSERT INTO alarm VALUES (1, 9, 1, '1970-01-01');"
#define OBJECT_KEPT \
	"SELECT (SELECT json FROM state) || ' ' || (SELECT group_concat(" \
	"  event_id || ':' || attempts || ':' || last_error) FROM outbox)" \
	"  || ' ' || (SELECT group_concat(event_id) FROM seen) || ' ' ||" \
	"  (SELECT group_concat(key) FROM commands_seen) || ' ' ||" \
	"  (SELECT fire_at FROM alarm)"
#define OBJECT_WANT "{\"id\":\"ord_1\"} evt_2:2:queue down evt_0 key_1 9"

static const released releases[] = {
	{ "sandboxes/default/sandbox.db", &home_sandbox_schema, 1,
	  "CREATE TABLE faults(name TEXT PRIMARY KEY, set_at INTEGER NOT NULL);"
	  "CREATE TABLE dead_letters(event_id TEXT PRIMARY KEY,"
	  "  type TEXT NOT NULL, envelope TEXT NOT NULL, error TEXT NOT NULL,"
	  "  attempts INTEGER NOT NULL, times INTEGER NOT NULL DEFAULT 1,"
	  "  stored_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
	  "CREATE TABLE redrives(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,"
	  "  times INTEGER NOT NULL DEFAULT 1, last_at INTEGER NOT NULL);",
	  "INSERT INTO faults VALUES ('queue-refuses', 5);"
	  "INSERT INTO dead_letters VALUES ('evt_d', 'OrderPaid', '{}', 'boom',"
	  "  3, 2, 10, 11);"
	  "INSERT INTO redrives VALUES ('evt_r', 'OrderPlaced', 2, 12);",
	  "SELECT (SELECT group_concat(name || ':' || set_at) FROM faults)"
	  "  || ' ' || (SELECT group_concat(event_id || ':' || error || ':' ||"
	  "  attempts || ':' || times) FROM dead_letters) || ' ' || (SELECT"
	  "  group_concat(event_id || ':' || times || ':' || last_at || ':' ||"
	  "  coalesce(dead_error, 'none')) FROM redrives)",
	  "queue-refuses:5 evt_d:boom:3:2 evt_r:2:12:none" },
	{ "alarms.db", &alarms_schema, 2,
	  "CREATE TABLE alarms(sandbox TEXT NOT NULL, address TEXT NOT NULL,"
	  "  fire_at INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 1,"
	  "  PRIMARY KEY (sandbox, address));"
	  "CREATE INDEX alarms_due ON alarms(fire_at);"
	  "ALTER TABLE alarms ADD COLUMN armed_at INTEGER;",
	  "INSERT INTO alarms VALUES ('default', 'order/ord_1', 1000, 4, 900),"
	  "  ('s2', 'order/ord_2', 2000, 1, NULL);",
	  "SELECT group_concat(sandbox || ' ' || address || ' ' || fire_at ||"
	  "  ' ' || gen || ' ' || coalesce(armed_at, '-'), ', ') || ' boot rows '"
	  "  || (SELECT count(*) FROM boot) FROM (SELECT * FROM alarms"
	  "  ORDER BY fire_at)",
	  "default order/ord_1 1000 4 900, s2 order/ord_2 2000 1 - "
	  "boot rows 0" },
	{ "queue.db", &queue_schema, 2,
	  "CREATE TABLE messages(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	  "  queue TEXT NOT NULL, id TEXT NOT NULL, sandbox TEXT NOT NULL,"
	  "  body TEXT NOT NULL, deliveries INTEGER NOT NULL DEFAULT 0,"
	  "  visible_at INTEGER NOT NULL, lease TEXT, last_error TEXT,"
	  "  enqueued_at INTEGER NOT NULL,"
	  "  attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (queue, id));"
	  "CREATE INDEX messages_ready ON messages(queue, visible_at, seq);"
	  "CREATE TABLE fences(sandbox TEXT PRIMARY KEY,"
	  "  wiped_at INTEGER NOT NULL);"
	  "ALTER TABLE messages ADD COLUMN held_at INTEGER;",
	  "INSERT INTO messages(queue, id, sandbox, body, deliveries,"
	  "  visible_at, lease, last_error, enqueued_at, attempts, held_at)"
	  "  VALUES ('bakery-events', 'evt_q', 'default', '{}', 1, 50, 'l1',"
	  "  'late', 40, 0, 45);"
	  "INSERT INTO fences VALUES ('s2', 30);",
	  "SELECT group_concat(queue || ' ' || id || ' ' || deliveries || ' ' ||"
	  "  visible_at || ' ' || lease || ' ' || held_at) || ' fence ' ||"
	  "  (SELECT group_concat(sandbox || ':' || wiped_at) FROM fences)"
	  "  FROM messages",
	  "bakery-events evt_q 1 50 l1 45 fence s2:30" },
	{ "wipe.db", &wipe_schema, 1,
	  "CREATE TABLE runs(id INTEGER PRIMARY KEY,"
	  "  started_at INTEGER NOT NULL, finished_at INTEGER);"
	  "CREATE TABLE steps(run INTEGER NOT NULL, sandbox TEXT NOT NULL,"
	  "  done_at INTEGER, PRIMARY KEY (run, sandbox));",
	  "INSERT INTO runs VALUES (1, 1, NULL);"
	  "INSERT INTO steps VALUES (1, 'default', 1), (1, 's2', NULL);",
	  "SELECT (SELECT group_concat(id || ':' || started_at || ':' ||"
	  "  coalesce(finished_at, '-') || ':' || coalesce(sandbox, 'every'))"
	  "  FROM runs) || ' ' || (SELECT group_concat(sandbox || ':' ||"
	  "  coalesce(done_at, '-')) FROM (SELECT * FROM steps ORDER BY"
	  "  sandbox))",
	  "1:1:-:every default:1,s2:-" },
	{ "refunds.db", &refunds_schema, 1,
	  "CREATE TABLE refunds(payment_intent TEXT PRIMARY KEY,"
	  "  sandbox TEXT NOT NULL, order_id TEXT NOT NULL, flag TEXT NOT NULL,"
	  "  reason TEXT NOT NULL, amount_cents INTEGER, currency TEXT,"
	  "  wiped_at INTEGER, refunded_at INTEGER);",
	  "INSERT INTO refunds VALUES ('pi_1', 'default', 'ord_1', 'disputed',"
	  "  'fraudulent', 450, 'eur', 8, NULL);",
	  "SELECT group_concat(payment_intent || ' ' || order_id || ' ' ||"
	  "  amount_cents || ' ' || wiped_at) FROM refunds",
	  "pi_1 ord_1 450 8" },
};

/* Writes path with sql and rows at user_version version, as SQLite's
 * shell would: no bakery code, a rollback journal. */
static int
make_file(const char *path, const char *sql, const char *rows, int version)
{
	char *dir = bakery_xstrdup(path);
	*strrchr(dir, '/') = '\0';
	home_mkdirs(dir);
	free(dir);
	sqlite3 *db;
	char *bump = bakery_xasprintf("PRAGMA user_version = %d", version);
	int rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK && rows)
		rc = sqlite3_exec(db, rows, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, bump, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		printf("# %s: %s\n", path, sqlite3_errmsg(db));
	sqlite3_close(db);
	free(bump);
	return rc;
}

/* r's file made as 0.1.0 made it, opened by this bakery: at the newest
 * version, its rows kept, and of the schema a new file gets (for an
 * object, every table of a new file of its kind is there the same; the
 * tables of other kinds that 0.1.0 made in every file stay, unread). */
static void
migrates(const released *r, const char *kind)
{
	const schema_def *s = r->schema;
	char *home = tmp_home(), *fresh_home = tmp_home();
	char *path = bakery_xasprintf("%s/%s", home, r->file);
	char *fresh_path = bakery_xasprintf("%s/%s", fresh_home, r->file);
	bakery_ctx ctx, fresh_ctx;
	ctx_init(&ctx, home, NULL, NULL);
	ctx_init(&fresh_ctx, fresh_home, NULL, NULL);
	const char *name = kind ? kind : s->name;
	is_int(make_file(path, r->sql, r->rows, r->version), SQLITE_OK,
	    "%s: a file of version %d as 0.1.0 made it", name, r->version);
	sqlite3 *db = NULL, *fresh = NULL;
	if (!is_int(db_open(&ctx, path, s, &db), 0,
	    "  opened by this bakery"))
		printf("# %s\n", bakery_error());
	is_int(db ? sql_int(db, "PRAGMA user_version") : -1, s->count,
	    "  at version %d", s->count);
	char got[512];
	is_str(db ? sql_text(db, r->kept, got, sizeof got) : "", r->want,
	    "  its rows kept");
	is_int(birth_open(&fresh_ctx, fresh_path, s, &fresh), 0,
	    "  a new file of it made");
	char names[1024], a[8192], b[8192];
	sql_text(fresh, "SELECT group_concat(quote(name)) FROM sqlite_master"
	    " WHERE name NOT LIKE 'sqlite_%'", names, sizeof names);
	describe(fresh, NULL, a, sizeof a);
	describe(db, kind ? names : NULL, b, sizeof b);
	ok(strlen(a) > 50, "  its schema described (%zu bytes)", strlen(a));
	is_str(b, a, kind ? "  every table of a new file is there the same"
	    : "  the same schema as the new file");
	sqlite3_close(db);
	sqlite3_close(fresh);
	ctx_free(&ctx);
	ctx_free(&fresh_ctx);
	free(path);
	free(fresh_path);
	rm_home(home);
	rm_home(fresh_home);
}

/* An alarm index 0.1.0 wrote, through the alarm calls: it has no boot
 * row, so this bakery takes it for one that may lack entries (the next
 * alarm run writes them back from the objects), and its entries are
 * found due as they were. */
static void
alarm_index_of_0_1_0(void)
{
	setenv("BAKERY_BOOT_ID", "boot-1", 1);
	char *home = tmp_home();
	char *path = bakery_xasprintf("%s/alarms.db", home);
	bakery_ctx ctx;
	ctx_init(&ctx, home, NULL, NULL);
	const released *r = &releases[1];
	make_file(path, r->sql, r->rows, r->version);
	int lost = -1;
	is_int(alarm_index_boot(&ctx, &lost), 0, "alarm_index_boot on 0.1.0's "
	    "alarm index");
	is_int(lost, 1, "  which may lack entries: no boot row");
	alarm_entry e[4];
	size_t n = 0;
	is_int(alarm_index_due(&ctx, 1500, NULL, 4, e, &n), 0, "alarm_index_due");
	ok(n == 1 && strcmp(e[0].address, "order/ord_1") == 0 &&
	    e[0].fire_at == 1000 && e[0].gen == 4 && e[0].armed_at == 900,
	    "  finds its entry due at 1500, as it was");
	is_int(alarm_index_booted(&ctx), 0, "alarm_index_booted");
	is_int(alarm_index_boot(&ctx, &lost), 0, "alarm_index_boot again");
	is_int(lost, 0, "  now holds every entry of this boot");
	ctx_free(&ctx);
	free(path);
	rm_home(home);
	unsetenv("BAKERY_BOOT_ID");
}

/* The bytes of path (caller frees), *size set; NULL when unreadable. */
static char *
slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = bakery_xmalloc(1 << 20);
	*size = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* A file of a version only a bakery before 0.1.0 made: refused by a
 * writer and by a reader, 78 naming it, and left byte for byte as it
 * was. */
static void
refused(const char *file, const schema_def *s, int version, const char *sql)
{
	char *home = tmp_home();
	char *path = bakery_xasprintf("%s/%s", home, file);
	bakery_ctx ctx;
	ctx_init(&ctx, home, NULL, NULL);
	is_int(make_file(path, sql, NULL, version), SQLITE_OK,
	    "%s: a file of version %d, made before 0.1.0", s->name, version);
	size_t size = 0, after = 0;
	char *before = slurp(path, &size);
	for (int i = 0; i < 3; i++) {
		sqlite3 *db = NULL;
		int rc = i == 0 ? db_open(&ctx, path, s, &db)
		    : i == 1 ? birth_open(&ctx, path, s, &db)
		    : db_open_readonly(&ctx, path, s, &db);
		const char *how = i == 0 ? "db_open" : i == 1
		    ? "birth_open" : "db_open_readonly";
		is_int(rc, EX_CONFIG, "  %s: EX_CONFIG", how);
		ok(db == NULL, "  and no handle");
		char *want = bakery_xasprintf("cannot use '%s': schema version "
		    "%d was made by a bakery before 0.1.0", path, version);
		ok(strstr(bakery_error(), want) != NULL, "  naming the file and "
		    "what made it (%s)", bakery_error());
		free(want);
		sqlite3_close(db);
	}
	char *now = slurp(path, &after);
	ok(before && now && after == size && memcmp(before, now, size) == 0,
	    "  the file is left byte for byte as it was (%zu bytes)", size);
	free(before);
	free(now);
	char *journal = bakery_xasprintf("%s-journal", path);
	char *wal = bakery_xasprintf("%s-wal", path);
	ok(access(journal, F_OK) != 0 && access(wal, F_OK) != 0,
	    "  and nothing beside it journals a write");
	free(journal);
	free(wal);
	ctx_free(&ctx);
	free(path);
	rm_home(home);
}

/* An object of version 1: what bakeries before 0.1.0 made. */
#define OBJECT_1 \
	"CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1)," \
	"  address TEXT NOT NULL, json TEXT NOT NULL);" \
	"CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE," \
	"  type TEXT NOT NULL, envelope TEXT NOT NULL," \
	"  recorded_at INTEGER NOT NULL, relayed_at INTEGER);" \
	"CREATE TABLE outbox(seq INTEGER PRIMARY KEY," \
	"  event_id TEXT NOT NULL UNIQUE, envelope TEXT NOT NULL," \
	"  attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL," \
	"  last_error TEXT);" \
	"CREATE TABLE seen(event_id TEXT PRIMARY KEY, type TEXT NOT NULL," \
	"  applied_at INTEGER NOT NULL);" \
	"CREATE TABLE commands_seen(key TEXT PRIMARY KEY, result TEXT NOT NULL," \
	"  at INTEGER NOT NULL);" \
	"CREATE TABLE alarm(id INTEGER PRIMARY KEY CHECK (id = 1)," \
	"  fire_at INTEGER," \
	"  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);" \
	"CREATE TABLE tickets(order_id TEXT PRIMARY KEY," \
	"  event_id TEXT NOT NULL, items TEXT NOT NULL," \
	"  created_at INTEGER NOT NULL);" \
	"INSERT INTO state VALUES (1, 'order/ord_1', '{}');"
/* Version 2 added the kitchen's cards and the CRM's customers. */
#define OBJECT_2 OBJECT_1 \
	"CREATE TABLE cards(seq INTEGER PRIMARY KEY," \
	"  order_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, day TEXT," \
	"  items TEXT);" \
	"CREATE TABLE crm_customers(seq INTEGER PRIMARY KEY," \
	"  customer TEXT NOT NULL UNIQUE, orders INTEGER NOT NULL," \
	"  total_cents NUMERIC NOT NULL, last_order TEXT);"

/* The object's own opening refuses it too, naming the file. */
static void
object_refused(void)
{
	char *home = tmp_home();
	bakery_ctx ctx;
	ctx_init(&ctx, home, NULL, NULL);
	char *path = home_object_path(&ctx, NULL, "order/ord_1");
	make_file(path, OBJECT_1, NULL, 1);
	bakery_object *o = NULL;
	is_int(object_open(&ctx, NULL, "order/ord_1", 1, &o), EX_CONFIG,
	    "object_open of an order of version 1: EX_CONFIG");
	ok(strstr(bakery_error(), path) && strstr(bakery_error(),
	    "before 0.1.0"), "  naming its file (%s)", bakery_error());
	object_close(o);
	free(path);
	ctx_free(&ctx);
	rm_home(home);
}

int
main(void)
{
	for (int i = 0; home_schemas[i]; i++)
		rules(home_schemas[i]);
	for (int i = 0; object_kinds[i]; i++)
		if (kind_schema(object_kinds[i]) != &object_schema)
			rules(kind_schema(object_kinds[i]));

	for (size_t i = 0; i < sizeof releases / sizeof *releases; i++)
		migrates(&releases[i], NULL);
	for (int i = 0; object_kinds[i]; i++) {
		char *file = bakery_xasprintf("sandboxes/default/%s/x.db",
		    object_kinds[i]->name);
		released r = { file, kind_schema(object_kinds[i]), 3, OBJECT_3,
			OBJECT_ROWS, OBJECT_KEPT, OBJECT_WANT };
		migrates(&r, object_kinds[i]->name);
		free(file);
	}

	/* A schedule 0.1.0 wrote: its lists move to their tables (version
	 * 4), in the order they had, and out of its state; a record without
	 * an order, which no bakery appended, goes. */
	released schedule = { "sandboxes/default/schedule/2026-12-01.db",
		kind_schema(kind_find("schedule")), 3, OBJECT_3,
		"INSERT INTO state VALUES (1, 'schedule/2026-12-01', '{\"holds\":"
		"[{\"order\":\"ord_b\",\"customer\":\"bo\"},{\"order\":"
		"\"ord_a\"},{\"no\":1}],\"reservations\":[{\"order\":\"ord_c\","
		"\"items\":[1]}],\"day\":\"2026-12-01\"}');",
		"SELECT (SELECT json FROM state) || ' ' || (SELECT group_concat("
		"  order_id || '=' || json, ' ') FROM (SELECT * FROM holds"
		"  ORDER BY seq)) || ' ' || (SELECT group_concat(json) FROM"
		"  reservations)",
		"{\"day\":\"2026-12-01\"} ord_b={\"order\":\"ord_b\",\"customer\":"
		"\"bo\"} ord_a={\"order\":\"ord_a\"} {\"order\":\"ord_c\","
		"\"items\":[1]}" };
	migrates(&schedule, "schedule");

	refused("sandboxes/default/order/ord_1.db", &object_schema, 1,
	    OBJECT_1);
	refused("sandboxes/default/kitchen/board.db",
	    kind_schema(kind_find("kitchen")), 2, OBJECT_2);
	refused("queue.db", &queue_schema, 1,
	    "CREATE TABLE messages(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	    "  queue TEXT NOT NULL, id TEXT NOT NULL, sandbox TEXT NOT NULL,"
	    "  body TEXT NOT NULL, deliveries INTEGER NOT NULL DEFAULT 0,"
	    "  visible_at INTEGER NOT NULL, lease TEXT, last_error TEXT,"
	    "  enqueued_at INTEGER NOT NULL,"
	    "  attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (queue, id));"
	    "CREATE INDEX messages_ready ON messages(queue, visible_at, seq);"
	    "CREATE TABLE fences(sandbox TEXT PRIMARY KEY,"
	    "  wiped_at INTEGER NOT NULL);");
	refused("alarms.db", &alarms_schema, 1,
	    "CREATE TABLE alarms(sandbox TEXT NOT NULL, address TEXT NOT NULL,"
	    "  fire_at INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 1,"
	    "  PRIMARY KEY (sandbox, address));"
	    "CREATE INDEX alarms_due ON alarms(fire_at);");
	object_refused();
	alarm_index_of_0_1_0();
	return done_testing();
}
