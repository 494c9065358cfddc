/*
 * kind.c — the kinds' descriptors read: finding one, an address, and the
 * schema of a kind's file (the shared schema and the kind's own tables).
 */
#include "kind.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

/* The shared schema, for a new file: version 3's, the one 0.1.0 wrote
 * and the oldest a release wrote (the migrations to it, from files only
 * bakeries before 0.1.0 made, are not kept: schema.h), which version 4
 * left as it was. */
static const char shared_create[] =
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
	"  rearms_today INTEGER NOT NULL DEFAULT 0, rearm_day TEXT);";

/* Version 4 moved the lists of the kinds' states into tables (kind.h,
 * .arrays): a kind without lists has nothing to move. */
static const char *const shared_migrations[] = { NULL, NULL, NULL, "" };

/* Files of version 3 are read as they are by the read-only tools
 * (bakery-status, bakery-trace), which read no list. */
const schema_def object_schema = {
	.name = "object",
	.migrations = shared_migrations,
	.count = OBJECT_SCHEMA_VERSION,
	.read_from = 3,
	.oldest = 3,
	.create = shared_create,
};

int
kind_records(const object_kind *k, const char *type)
{
	for (size_t i = 0; i < sizeof k->records / sizeof *k->records &&
	    k->records[i]; i++)
		if (strcmp(k->records[i], type) == 0)
			return 1;
	return 0;
}

const object_kind *
kind_recording(const char *type)
{
	for (int i = 0; object_kinds[i]; i++)
		if (kind_records(object_kinds[i], type))
			return object_kinds[i];
	return NULL;
}

const object_kind *
kind_find(const char *name)
{
	for (int i = 0; object_kinds[i]; i++)
		if (strcmp(object_kinds[i]->name, name) == 0)
			return object_kinds[i];
	return NULL;
}

/* A kind's schema, built on first use and kept for the process: the
 * shared one with the kind's tables and its lists' in its create, and
 * version 4's step, which moves each list of a state of version 3 into its
 * table, in the order it had, and out of the state. */
struct built {
	const object_kind *kind;
	schema_def schema;
	const char *migrations[OBJECT_SCHEMA_VERSION];
};

/* The table of the list name: one row a record, keyed by its order. */
#define LIST_TABLE "CREATE TABLE \"%s\"(seq INTEGER PRIMARY KEY," \
	" order_id TEXT NOT NULL UNIQUE, json TEXT NOT NULL);"

static const schema_def *
build(struct built *b, const object_kind *k)
{
	b->kind = k;
	b->schema = object_schema;
	b->schema.name = k->name;
	char *lists = bakery_xstrdup(""), *moves = bakery_xstrdup("");
	for (size_t i = 0; k->arrays && k->arrays[i]; i++) {
		const char *a = k->arrays[i];
		char *table = bakery_xasprintf(LIST_TABLE, a);
		char *l = bakery_xasprintf("%s%s", lists, table);
		char *m = bakery_xasprintf("%s%s"
		    "INSERT OR IGNORE INTO \"%s\"(order_id, json)"
		    " SELECT json_extract(e.value, '$.order'), e.value"
		    " FROM state, json_each(state.json, '$.%s') e"
		    " WHERE e.type = 'object'"
		    " AND json_type(e.value, '$.order') = 'text' ORDER BY e.key;"
		    "UPDATE state SET json = json_remove(json, '$.%s');",
		    moves, table, a, a, a);
		free(table);
		free(lists);
		free(moves);
		lists = l;
		moves = m;
	}
	b->schema.create = bakery_xasprintf("%s%s%s", shared_create,
	    k->tables ? k->tables : "", lists);
	for (int v = 0; v < OBJECT_SCHEMA_VERSION; v++)
		b->migrations[v] = shared_migrations[v];
	b->migrations[3] = moves;
	b->schema.migrations = b->migrations;
	free(lists);
	return &b->schema;
}

const schema_def *
kind_schema(const object_kind *k)
{
	if (!k->tables && !k->arrays)
		return &object_schema;
	static struct built built[16];
	size_t i = 0;
	for (; i < sizeof built / sizeof *built && built[i].kind; i++)
		if (built[i].kind == k)
			return &built[i].schema;
	if (i == sizeof built / sizeof *built)
		bakery_die(EX_SOFTWARE, "more than %zu kinds with tables of "
		    "their own", i);
	return build(&built[i], k);
}

int
kind_parse_address(const char *address, char *kind, char *key,
    const object_kind **k)
{
	const char *slash = strchr(address, '/');
	if (!slash || slash - address > 64 || strlen(slash + 1) > 64)
		return bakery_fail(EX_USAGE, "bad address: '%s': %s", address,
		    "want KIND/KEY");
	memcpy(kind, address, (size_t)(slash - address));
	kind[slash - address] = '\0';
	strcpy(key, slash + 1);
	const object_kind *found = kind_find(kind);
	if (!found)
		return bakery_fail(EX_USAGE, "bad address: '%s': %s", address,
		    "unknown kind");
	if (!bakery_name_valid(key))
		return bakery_fail(EX_USAGE, "bad address: '%s': %s", address,
		    "bad key, want [a-z0-9][a-z0-9_.-]{0,63} without '..'");
	if (k)
		*k = found;
	return 0;
}

int
kind_apply(const object_kind *k, struct bakery_object *o, jv env,
    const trace_ctx *trace, const char *type, char *error, size_t size)
{
	trace_ctx before;
	int had = tracectx_current(&before);
	tracectx_set(trace);
	int status = k->apply(o, env, type, error, size);
	tracectx_set(had ? &before : NULL);
	return status;
}
