/*
 * store.c — the object's schema, its kinds and addresses, and opening an
 * object's file.
 */
#include "store.h"
#include "ctx.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const object_migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  address TEXT NOT NULL, json TEXT NOT NULL);"
	"CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
	"  type TEXT NOT NULL, envelope TEXT NOT NULL,"
	"  recorded_at INTEGER NOT NULL, relayed_at INTEGER);"
	"CREATE TABLE outbox(seq INTEGER PRIMARY KEY,"
	"  event_id TEXT NOT NULL UNIQUE, envelope TEXT NOT NULL,"
	"  attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,"
	"  last_error TEXT);"
	"CREATE TABLE seen(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,"
	"  applied_at INTEGER NOT NULL);"
	"CREATE TABLE commands_seen(key TEXT PRIMARY KEY, result TEXT NOT NULL,"
	"  at INTEGER NOT NULL);"
	"CREATE TABLE alarm(id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  fire_at INTEGER,"
	"  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);"
	/* The kitchen's oven tickets: one row per order, written with the
	 * OrderPaid that caused it. Empty in every other kind. */
	"CREATE TABLE tickets(order_id TEXT PRIMARY KEY,"
	"  event_id TEXT NOT NULL, items TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL);",
	/* 1 -> 2: the kitchen's cards and the CRM's customers become rows,
	 * so that an event changes one row instead of rewriting a document
	 * that grows with every order. seq keeps the order they came in
	 * (bakery-show lists them in it); order_id and customer are their
	 * keys. Empty in every other kind. What a kitchen's or a CRM's state
	 * held moves over, in document order, and leaves the state. */
	"CREATE TABLE cards(seq INTEGER PRIMARY KEY,"
	"  order_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, day TEXT,"
	"  items TEXT);"
	"CREATE TABLE crm_customers(seq INTEGER PRIMARY KEY,"
	"  customer TEXT NOT NULL UNIQUE, orders INTEGER NOT NULL,"
	"  total_cents NUMERIC NOT NULL, last_order TEXT);"
	"INSERT OR IGNORE INTO cards(order_id, status, day, items)"
	"  SELECT json_extract(e.value, '$.order'),"
	"    coalesce(json_extract(e.value, '$.status'), 'placed'),"
	"    json_extract(e.value, '$.day'), json_extract(e.value, '$.items')"
	"  FROM state, json_each(state.json, '$.cards') e"
	"  WHERE state.address LIKE 'kitchen/%' AND json_valid(state.json)"
	"    AND json_type(state.json, '$.cards') = 'array'"
	"    AND json_type(e.value, '$.order') = 'text'"
	"  ORDER BY e.id;"
	"INSERT INTO crm_customers(customer, orders, total_cents, last_order)"
	"  SELECT e.key, coalesce(json_extract(e.value, '$.orders'), 0),"
	"    coalesce(json_extract(e.value, '$.total_cents'), 0),"
	"    json_extract(e.value, '$.last_order')"
	"  FROM state, json_each(state.json, '$.customers') e"
	"  WHERE state.address LIKE 'crm/%' AND json_valid(state.json)"
	"    AND json_type(state.json, '$.customers') = 'object'"
	"  ORDER BY e.id;"
	"UPDATE state SET json = json_remove(json, '$.cards')"
	"  WHERE address LIKE 'kitchen/%' AND json_valid(json);"
	"UPDATE state SET json = json_remove(json, '$.customers')"
	"  WHERE address LIKE 'crm/%' AND json_valid(json);",
	/* 2 -> 3: the outbox is the events the queue has not accepted yet
	 * (relayed_at NULL), no longer a second copy of each envelope in a
	 * table of its own. A command writes one row where it wrote two, and
	 * a relay updates the row it reads. The outbox stays as a view, the
	 * shape status and trace read in every version. Rows keyed by text
	 * alone (seen, commands_seen) are stored by that key, one b-tree
	 * instead of a table and its index. */
	"ALTER TABLE events ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE events ADD COLUMN last_error TEXT;"
	"UPDATE events SET relayed_at = NULL, attempts = o.attempts,"
	"  last_error = o.last_error FROM outbox o WHERE o.event_id = events.id;"
	"UPDATE events SET relayed_at = recorded_at WHERE relayed_at IS NULL"
	"  AND id NOT IN (SELECT event_id FROM outbox);"
	"DROP TABLE outbox;"
	"CREATE INDEX events_unrelayed ON events(seq) WHERE relayed_at IS NULL;"
	"CREATE VIEW outbox(seq, event_id, envelope, attempts, created_at,"
	"  last_error) AS SELECT seq, id, envelope, attempts, recorded_at,"
	"  last_error FROM events WHERE relayed_at IS NULL;"
	"CREATE TABLE seen3(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,"
	"  applied_at INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO seen3 SELECT event_id, type, applied_at FROM seen;"
	"DROP TABLE seen;"
	"ALTER TABLE seen3 RENAME TO seen;"
	"CREATE TABLE commands_seen3(key TEXT PRIMARY KEY,"
	"  result TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO commands_seen3 SELECT key, result, at FROM commands_seen;"
	"DROP TABLE commands_seen;"
	"ALTER TABLE commands_seen3 RENAME TO commands_seen;",
};
/* status and trace read what every version has (events, outbox, seen,
 * alarm), so a file not migrated yet is still theirs to read. */
static const char object_schema_3[] =
	"CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  address TEXT NOT NULL, json TEXT NOT NULL);"
	"CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
	"  type TEXT NOT NULL, envelope TEXT NOT NULL,"
	"  recorded_at INTEGER NOT NULL, relayed_at INTEGER,"
	"  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT);"
	"CREATE INDEX events_unrelayed ON events(seq) WHERE relayed_at IS NULL;"
	"CREATE VIEW outbox(seq, event_id, envelope, attempts, created_at,"
	"  last_error) AS SELECT seq, id, envelope, attempts, recorded_at,"
	"  last_error FROM events WHERE relayed_at IS NULL;"
	"CREATE TABLE seen(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,"
	"  applied_at INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE commands_seen(key TEXT PRIMARY KEY,"
	"  result TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE alarm(id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  fire_at INTEGER,"
	"  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);"
	"CREATE TABLE tickets(order_id TEXT PRIMARY KEY,"
	"  event_id TEXT NOT NULL, items TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL);"
	"CREATE TABLE cards(seq INTEGER PRIMARY KEY,"
	"  order_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, day TEXT,"
	"  items TEXT);"
	"CREATE TABLE crm_customers(seq INTEGER PRIMARY KEY,"
	"  customer TEXT NOT NULL UNIQUE, orders INTEGER NOT NULL,"
	"  total_cents NUMERIC NOT NULL, last_order TEXT);";
const schema_def store_object_schema = {
	"object", object_migrations, 3, 1, object_schema_3
};

static const char *const kinds[] = {
	"order", "billing", "schedule", "kitchen", "crm", "customer",
	"inbox", "dispatch", "external", NULL,
};

int
store_kind_valid(const char *kind)
{
	for (int i = 0; kinds[i]; i++)
		if (strcmp(kinds[i], kind) == 0)
			return 1;
	return 0;
}

int
store_parse_address(const char *address, char *kind, char *key)
{
	const char *slash = strchr(address, '/');
	if (!slash || slash - address > 64 || strlen(slash + 1) > 64)
		return bakery_fail(EX_USAGE, "bad address: '%s': %s", address,
		    "want KIND/KEY");
	memcpy(kind, address, (size_t)(slash - address));
	kind[slash - address] = '\0';
	strcpy(key, slash + 1);
	if (!store_kind_valid(kind))
		return bakery_fail(EX_USAGE, "bad address: '%s': %s", address,
		    "unknown kind");
	if (!bakery_name_valid(key))
		return bakery_fail(EX_USAGE, "bad address: '%s': %s", address,
		    "bad key, want [a-z0-9][a-z0-9_.-]{0,63} without '..'");
	return 0;
}

int
store_open_object(bakery_ctx *ctx, const char *sandbox, const char *address,
    int create, sqlite3 **db)
{
	char kind[65], key[65];
	int rc = home_check_sandbox(ctx, &sandbox);
	if (!rc)
		rc = store_parse_address(address, kind, key);
	if (rc)
		return rc;
	char *path = home_object_path(ctx, sandbox, address);
	rc = db_open(ctx, path, &store_object_schema, create, db);
	if (rc == EX_NOINPUT && access(path, F_OK) != 0)
		rc = bakery_fail(EX_NOINPUT, "no such object: '%s'", address);
	free(path);
	return rc;
}
