/*
 * kind.c — the kinds' descriptors: addresses, the schema of each kind's
 * file, and the rows bakery-show puts back into the state. A file of
 * each kind 0.1.0 wrote is opened by tests/unit/schemas.c.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include "../../lib/store/store.h"
#include "../../lib/core/envelope.h"
#include "../../lib/core/kind.h"
#include "../../lib/core/object.h"
#include "../../lib/base/util.h"

static void
bad_address(const char *address, const char *want)
{
	char kind[BAKERY_NAME_SIZE], key[BAKERY_NAME_SIZE];
	is_int(kind_parse_address(address, kind, key, NULL), EX_USAGE,
	    "address '%s' is a usage error", address);
	ok(strstr(bakery_error(), want) != NULL, "  and says '%s' (%s)", want,
	    bakery_error());
}

static void
addresses(void)
{
	char kind[BAKERY_NAME_SIZE], key[BAKERY_NAME_SIZE], n65[66];
	const object_kind *k = NULL;
	is_int(kind_parse_address("order/ord_1", kind, key, &k), 0,
	    "order/ord_1 parses");
	is_str(kind, "order", "kind");
	is_str(key, "ord_1", "key");
	ok(k && strcmp(k->name, "order") == 0, "  and names its descriptor");
	is_int(kind_parse_address("kitchen/board", kind, key, NULL), 0,
	    "kitchen/board parses");
	bad_address("oven/x", "unknown kind");
	bad_address("order/../x", "bad key");
	bad_address("order/", "bad key");
	bad_address("order/Ord", "bad key");
	bad_address("order/a/b", "bad key");
	bad_address("order", "want KIND/KEY");
	bad_address("/x", "unknown kind");
	memset(n65, 'a', 65);
	n65[65] = '\0';
	char addr[80];
	snprintf(addr, sizeof addr, "order/%s", n65);
	bad_address(addr, "want KIND/KEY");
	ok(kind_find("dispatch") && !kind_find("dispatches"),
	    "kind_find knows the kinds and no other name");
}

/* What a schema is, as one line: every table's columns (name, type, not
 * null, default, key), its keys and whether it has a rowid, every index's and
 * view's SQL. The text SQLite keeps for a table changes with ALTER TABLE,
 * so tables are compared by their columns. */
static const char describe_sql[] =
	"SELECT group_concat(x, ' | ') FROM (SELECT m.type || ' ' || m.name"
	"  || CASE WHEN m.type = 'table' THEN ' rowid=' ||"
	"    (m.sql NOT LIKE '%WITHOUT ROWID') || ' (' || (SELECT"
	"    group_concat(p.name || ' ' || p.type || ' ' || p.\"notnull\""
	"    || ' ' || coalesce(p.dflt_value, '-') || ' ' || p.pk, ', ')"
	"    FROM pragma_table_xinfo(m.name) p) || ') keys [' || coalesce((SELECT"
	"    group_concat(l.\"unique\" || l.origin || l.partial || ' ' ||"
	"    (SELECT group_concat(i.name) FROM pragma_index_info(l.name) i),"
	"    ', ') FROM pragma_index_list(m.name) l), '') || ']'"
	"  ELSE ': ' || m.sql END"
	"  AS x FROM sqlite_master m WHERE m.name NOT LIKE 'sqlite_%'"
	"  ORDER BY m.type, m.name)";

/* A new file of kind k gets its schema in one go (create), and the
 * queries the kind shows its rows with run on it. */
static void
create_runs(const object_kind *k)
{
	const schema_def *s = kind_schema(k);
	sqlite3 *fresh;
	sqlite3_open(":memory:", &fresh);
	is_int(sqlite3_exec(fresh, s->create, NULL, NULL, NULL), SQLITE_OK,
	    "%s: the schema's create runs", k->name);
	char a[8192];
	sql_text(fresh, describe_sql, a, sizeof a);
	ok(strlen(a) > 100, "  the schema is described (%zu bytes)", strlen(a));
	/* Each query the kind shows its rows with runs on that schema. */
	for (size_t i = 0; i < sizeof k->rows / sizeof *k->rows &&
	     k->rows[i].field; i++) {
		sqlite3_stmt *st = NULL;
		is_int(sqlite3_prepare_v2(fresh, k->rows[i].sql, -1, &st, NULL),
		    SQLITE_OK, "  its rows %s are read from its own tables",
		    k->rows[i].field);
		ok(st && (size_t)sqlite3_column_count(st) ==
		    strlen(k->rows[i].types), "  a type letter a column");
		sqlite3_finalize(st);
	}
	sqlite3_close(fresh);
}

/* A kind's tables are in its own files only. */
static void
tables_of_their_own(void)
{
	const object_kind *kitchen = kind_find("kitchen");
	const object_kind *schedule = kind_find("schedule");
	ok(kitchen && kind_schema(kitchen) != &object_schema &&
	    strstr(kind_schema(kitchen)->create, "CREATE TABLE cards"),
	    "the kitchen's files have its table cards");
	ok(schedule && strstr(kind_schema(schedule)->create,
	    "CREATE TABLE \"holds\"") && strstr(kind_schema(schedule)->create,
	    "CREATE TABLE \"reservations\"") &&
	    !strstr(kind_schema(schedule)->create, "cards"),
	    "a schedule's file has its lists' tables and no table of another "
	    "kind");
	ok(kind_schema(kind_find("order")) == &object_schema,
	    "an order's file, which has neither, has the shared schema");
	ok(kind_schema(kitchen) == kind_schema(kitchen),
	    "a kind's schema is built once");
}

/* object_open names the address and the sandbox it refuses. */
static void
opening(void)
{
	char *home = tmp_home();
	bakery_ctx ctx;
	is_int(ctx_init(&ctx, home, NULL, NULL), 0, "ctx_init");
	bakery_object *o = NULL;
	is_int(object_open(&ctx, NULL, "order/..", 1, &o), EX_USAGE,
	    "object_open refuses a bad key");
	is_int(object_open(&ctx, NULL, "order/nope", 0, &o), EX_NOINPUT,
	    "object_open create=0 on a missing object is EX_NOINPUT");
	is_str(bakery_error(), "no such object: 'order/nope'",
	    "  and names the object");
	is_int(object_open(&ctx, "../escape", "order/o1", 1, &o), EX_USAGE,
	    "object_open refuses sandbox '../escape'");
	char *escaped = bakery_xasprintf("%s/escape", home);
	ok(access(escaped, F_OK) != 0, "  and creates nothing outside HOME");
	free(escaped);
	is_int(object_open(&ctx, NULL, "kitchen/board", 1, &o), 0,
	    "object_open makes kitchen/board");
	is_int(object_begin(o), 0, "  begins");
	is_int(object_exec(o, "INSERT INTO cards(order_id, status) VALUES"
	    " ('o1', 'placed')", jv_array(), NULL), 0, "  writes a card");
	is_int(object_commit(o), 0, "  commits");
	jv shown;
	is_int(object_show(o, &shown), 0, "  shows it");
	jv order = jv_getpath(shown, JV_ARRAY(jv_string("state"),
	    jv_string("cards"), jv_number(0), jv_string("order")));
	is_str(jv_is_valid(order) && jv_get_kind(order) == JV_KIND_STRING
	    ? jv_string_value(order) : "", "o1",
	    "  with the card inside its state (state.cards[0].order)");
	jv_free(order);
	/* A kind records only the types its descriptor names. */
	is_int(object_begin(o), 0, "kitchen/board begins again");
	is_int(object_record(o, "OrderPaid", jv_object(), NULL), EX_SOFTWARE,
	    "  and may not record an OrderPaid: .records does not name it");
	ok(strstr(bakery_error(), ".records") != NULL, "  which it says (%s)",
	    bakery_error());
	object_rollback(o);
	object_close(o);
	ctx_free(&ctx);
	rm_home(home);
}

/* Every event type is recorded by exactly one kind, the one .records
 * names: where bakery-trace looks and the routes say it comes from. */
static void
recording(void)
{
	for (int i = 0; envelope_types[i]; i++) {
		int n = 0;
		for (int j = 0; object_kinds[j]; j++)
			n += kind_records(object_kinds[j], envelope_types[i]);
		is_int(n, 1, "%s is recorded by one kind", envelope_types[i]);
	}
	const object_kind *k = kind_recording("PaymentSucceeded");
	is_str(k ? k->name : "", "billing", "PaymentSucceeded: billing");
	k = kind_recording("OrderPaid");
	is_str(k ? k->name : "", "order", "OrderPaid: order");
	ok(kind_recording("NoSuchEvent") == NULL, "an unknown type: none");
}

/* Two new files of one kind made in one process: the second from the image
 * built for the first (wal.c), as whole as it. */
static void
made_from_one_image(void)
{
	char *home = tmp_home();
	bakery_ctx ctx;
	is_int(ctx_init(&ctx, home, NULL, NULL), 0, "ctx_init");
	const char *names[] = { "inbox/ada", "inbox/bo" };
	char desc[2][8192];
	for (int i = 0; i < 2; i++) {
		bakery_object *o = NULL;
		is_int(object_open(&ctx, NULL, names[i], 1, &o), 0,
		    "object_open makes %s", names[i]);
		is_int(o ? object_begin(o) : -1, 0, "  begins");
		if (o)
			object_set_state(o, jv_parse("{\"receipts\": []}"));
		is_int(o ? object_commit(o) : -1, 0, "  commits");
		object_close(o);
		char *path = bakery_xasprintf("%s/sandboxes/default/%s.db",
		    home, names[i]);
		sqlite3 *db;
		sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
		sql_text(db, describe_sql, desc[i], sizeof desc[i]);
		is_int(sql_int(db, "SELECT count(*) FROM state"), 1,
		    "  its state is in its file");
		is_int(sql_int(db, "PRAGMA user_version"),
		    kind_schema(kind_find("inbox"))->count,
		    "  at the schema's version");
		sqlite3_close(db);
		free(path);
	}
	ok(strlen(desc[0]) > 100, "the first file's schema is described");
	is_str(desc[1], desc[0], "the second has the same schema");
	ctx_free(&ctx);
	rm_home(home);
}

int
main(void)
{
	addresses();
	for (int i = 0; object_kinds[i]; i++)
		create_runs(object_kinds[i]);
	tables_of_their_own();
	opening();
	recording();
	made_from_one_image();
	return done_testing();
}
