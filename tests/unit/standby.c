/*
 * standby.c — a record of a commit applied to a standby's home
 * (lib/replica/standby.h): the file made as bakery makes it, the rows
 * the primary's file has, once, in order; a gap, a conflict and a newer
 * schema stop it with nothing applied; a hostile record is refused and
 * nothing is written outside the home. The records are made here as
 * the capture makes them: SQLite's session extension on a file of a
 * second home, its tables without a primary key recorded by rowid.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include <sys/stat.h>

#include "../../lib/core/alarm.h"
#include "../../lib/core/kind.h"
#include "../../lib/replica/standby.h"
#include "../../lib/web/account.h"
#include "../../lib/base/util.h"

#define EPOCH "00112233aabbccdd"
#define HOST "8899aabbccddeeff"

static bakery_ctx primary, stby;
static const standby_file files[] = {
	{ "alarms.db", &alarms_schema },
	{ "console.db", &console_schema },
	{ NULL, NULL },
};

/* The changes sql makes in the primary's file rel, made first with
 * schema when missing: a changeset in *cs (sqlite3_free), *n bytes. */
static void
capture(const char *rel, const schema_def *schema, const char *sql,
    void **cs, int *n)
{
	char *path = bakery_xasprintf("%s/%s", primary.home, rel);
	char *dir = bakery_xstrdup(path);
	*strrchr(dir, '/') = '\0';
	home_mkdirs(dir);
	sqlite3 *db = NULL;
	if (birth_open(&primary, path, schema, &db))
		printf("# cannot open %s: %s\n", path, bakery_error());
	sqlite3_session *s = NULL;
	int one = 1;
	sqlite3session_create(db, "main", &s);
	sqlite3session_object_config(s, SQLITE_SESSION_OBJCONFIG_ROWID, &one);
	sqlite3session_attach(s, NULL);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		printf("# %s: %s\n", sql, sqlite3_errmsg(db));
	sqlite3session_changeset(s, n, cs);
	sqlite3session_delete(s);
	sqlite3_close(db);
	free(dir);
	free(path);
}

/* Applies the record of rel (seq, version, changeset) as it would come
 * on its own subject; *outcome as standby_apply says. */
static int
apply(const char *rel, const char *seq, const char *version,
    const void *cs, int n, enum standby_outcome *outcome)
{
	char subject[512] = "bakery.replica.bad";
	replica_subject(EPOCH, rel, subject, sizeof subject);
	standby_record r = { .subject = subject, .file = rel, .seq = seq,
		.version = version, .host = HOST, .changeset = cs, .size = n,
		.stream_seq = 7 };
	return standby_apply(&stby, files, &r, outcome);
}

/* Every table but bakery_replica*, row by row, as text. */
static char *
dump(bakery_ctx *ctx, const char *rel)
{
	char *path = bakery_xasprintf("%s/%s", ctx->home, rel);
	sqlite3 *db = NULL;
	size_t size = 0;
	char *out = NULL;
	FILE *f = open_memstream(&out, &size);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK) {
		sqlite3_stmt *t, *st;
		fprintf(f, "version %lld\n", sql_int(db, "PRAGMA user_version"));
		sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_schema "
		    "WHERE name NOT LIKE 'bakery_replica%' ORDER BY name", -1,
		    &t, NULL);
		while (sqlite3_step(t) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(t, 0);
			fprintf(f, "%s\n", sqlite3_column_text(t, 1));
			char *q = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
			if (strncmp(name, "sqlite_", 7) &&
			    sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
				while (sqlite3_step(st) == SQLITE_ROW)
					for (int i = 0; i < sqlite3_column_count(st); i++)
						fprintf(f, "%s%c", sqlite3_column_text(st, i) ?
						    (const char *)sqlite3_column_text(st, i)
						    : "NULL", i + 1 <
						    sqlite3_column_count(st) ? '|' : '\n');
				sqlite3_finalize(st);
			}
			sqlite3_free(q);
		}
		sqlite3_finalize(t);
	}
	sqlite3_close(db);
	fclose(f);
	free(path);
	return out;
}

static long long
standby_int(const char *rel, const char *sql)
{
	char *path = bakery_xasprintf("%s/%s", stby.home, rel);
	sqlite3 *db = NULL;
	long long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		v = sql_int(db, sql);
	sqlite3_close(db);
	free(path);
	return v;
}

static int
same(const char *rel)
{
	char *a = dump(&primary, rel), *b = dump(&stby, rel);
	int eq = strcmp(a, b) == 0;
	if (!eq)
		printf("# primary:\n%s# standby:\n%s", a, b);
	free(a);
	free(b);
	return eq;
}

#define ORDER "sandboxes/default/order/ord_1.db"

/* An order's schema, and its version as a record's header says it. */
static const schema_def *
order_schema(char v[16])
{
	const schema_def *schema = kind_schema(kind_find("order"));
	snprintf(v, 16, "%d", schema->count);
	return schema;
}

static void
in_order(void)
{
	char v[16];
	const schema_def *schema = order_schema(v);
	enum standby_outcome o;
	void *cs;
	int n;
	capture(ORDER, schema, "INSERT INTO state VALUES (1, 'order/ord_1', "
	    "'{\"status\":\"placed\"}'); INSERT INTO events(id, type, envelope, "
	    "recorded_at) VALUES ('evt_1', 'OrderPlaced', '{}', 1)", &cs, &n);
	is_int(apply(ORDER, "1", v, cs, n, &o), 0, "a first record applies");
	is_int(o, STANDBY_APPLIED, "  applied");
	sqlite3_free(cs);
	char *path = bakery_xasprintf("%s/" ORDER, stby.home);
	struct stat st;
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
	    "  the object's file is made, 0600");
	free(path);
	ok(same(ORDER), "  its schema and rows are the primary's");
	is_int(standby_int(ORDER, "SELECT seq * 1000 + stream_seq FROM "
	    "bakery_replica WHERE epoch = '" EPOCH "'"), 1007,
	    "  bakery_replica holds its seq, epoch and stream sequence");

	capture(ORDER, schema, "UPDATE state SET json = '{\"status\":\"paid\"}';"
	    "UPDATE events SET relayed_at = 2", &cs, &n);
	is_int(apply(ORDER, "2", v, cs, n, &o), 0, "the next record applies");
	is_int(o, STANDBY_APPLIED, "  applied");
	ok(same(ORDER), "  the rows are the primary's again");
	is_int(apply(ORDER, "2", v, cs, n, &o), 0, "the same record again");
	is_int(o, STANDBY_SKIPPED, "  is skipped");
	is_int(apply(ORDER, "1", v, cs, n, &o), 0, "an older one");
	is_int(o, STANDBY_SKIPPED, "  is skipped");
	ok(same(ORDER), "  nothing changed");
	is_int(apply(ORDER, "4", v, cs, n, &o), EX_SOFTWARE,
	    "a record past the next is a gap");
	ok(strstr(bakery_error(), "record 3 is missing") != NULL,
	    "  which names the records missing: %s", bakery_error());
	sqlite3_free(cs);

	/* A change made on rows the standby does not have so: the
	 * primary's state was changed by a record the standby never had. */
	capture(ORDER, schema, "UPDATE state SET json = '{\"status\":\"y\"}'",
	    &cs, &n);
	sqlite3_free(cs);
	capture(ORDER, schema, "UPDATE events SET attempts = 5; UPDATE state "
	    "SET json = '{\"status\":\"x\"}'", &cs, &n);
	is_int(apply(ORDER, "3", v, cs, n, &o), EX_DATAERR,
	    "a record that conflicts stops the standby");
	ok(strstr(bakery_error(), "record 3 conflicts") &&
	    strstr(bakery_error(), "table state"), "  naming it: %s",
	    bakery_error());
	is_int(standby_int(ORDER, "SELECT attempts FROM events"), 0,
	    "  nothing of it is applied");
	is_int(standby_int(ORDER, "SELECT seq FROM bakery_replica"), 2,
	    "  the file's last record is the one before");
	sqlite3_free(cs);

	char newer[16];
	snprintf(newer, sizeof newer, "%d", schema->count + 1);
	capture(ORDER, schema, "UPDATE events SET attempts = 1", &cs, &n);
	is_int(apply(ORDER, "3", newer, cs, n, &o), EX_CONFIG,
	    "a record of a newer schema stops the standby");
	sqlite3_free(cs);
}

static void
home_files(void)
{
	enum standby_outcome o;
	void *cs;
	int n;
	capture("alarms.db", &alarms_schema, "INSERT INTO alarms(sandbox, "
	    "address, fire_at) VALUES ('default', 'order/ord_1', 5)", &cs, &n);
	is_int(apply("alarms.db", "1", "3", cs, n, &o), 0, "alarms.db");
	is_int(o, STANDBY_APPLIED, "  applied");
	ok(same("alarms.db"), "  made with its schema, and the primary's rows");
	sqlite3_free(cs);
	/* signin_failures has no primary key: recorded by its rowid. */
	capture("console.db", &console_schema, "INSERT INTO signin_failures "
	    "VALUES ('ada', 1); INSERT INTO signin_failures VALUES ('ada', 2);"
	    "DELETE FROM signin_failures WHERE at = 1", &cs, &n);
	char v[16];
	snprintf(v, sizeof v, "%d", console_schema.count);
	is_int(apply("console.db", "1", v, cs, n, &o), 0,
	    "console.db, a table without a primary key");
	ok(o == STANDBY_APPLIED && standby_int("console.db", "SELECT rowid * "
	    "10 + at FROM signin_failures") == 22, "  applied by rowid");
	sqlite3_free(cs);
	capture("sandboxes/default/sandbox.db", &home_sandbox_schema,
	    "INSERT INTO faults VALUES ('queue-refuses', 1)", &cs, &n);
	snprintf(v, sizeof v, "%d", home_sandbox_schema.count);
	is_int(apply("sandboxes/default/sandbox.db", "1", v, cs, n, &o), 0,
	    "a sandbox's own file");
	ok(o == STANDBY_APPLIED && same("sandboxes/default/sandbox.db"),
	    "  made and applied");
	sqlite3_free(cs);
}

static void
hostile(void)
{
	static const char *const paths[] = {
		"../../etc/passwd", "/etc/passwd", "queue.db", "wipe.db",
		"sandboxes/default/nokind/x.db", "sandboxes/../x.db",
		"sandboxes/default/order/../../../x.db",
		"sandboxes/default/order/ord_1.db/x", "sandboxes/default/x.db",
		"sandboxes/default/order/.db", "sandboxes/default/order/ord_1",
		"sandboxes//order/ord_1.db", "sandboxes/Default/order/o.db",
		"sandboxes/default/order//ord_1.db", "alarms.db/",
		"sandboxes/default/order/ord_1.db\n", "",
	};
	enum standby_outcome o;
	void *cs;
	int n;
	capture("x.db", &alarms_schema, "INSERT INTO alarms(sandbox, address, "
	    "fire_at) VALUES ('a', 'b', 1)", &cs, &n);
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		int rc = apply(paths[i], "1", "3", cs, n, &o);
		ok(rc == 0 && o == STANDBY_REFUSED, "'%.*s' is refused",
		    (int)strcspn(paths[i], "\n"), paths[i]);
	}
	char *outside = bakery_xasprintf("%s/../x.db", stby.home);
	ok(access(outside, F_OK) != 0, "nothing is made outside the home");
	free(outside);
	ok(access("/etc/passwd", F_OK) == 0, "  nor is anything changed");

	/* A good path on another subject than its own. */
	standby_record r = { .subject = "bakery.replica." EPOCH ".alarms~dbx",
		.file = "alarms.db", .seq = "2", .version = "3", .host = HOST,
		.changeset = cs, .size = n };
	ok(standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "a subject that is not the file's");
	r.subject = "bakery.replica.NOTANEPOCHATALL0.alarms~db";
	ok(standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "an epoch that is no id");
	r.subject = "bakery.replica." EPOCH ".alarms~db";
	r.host = "nobody";
	ok(standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "a host that is no id");
	r.host = HOST;
	static const char *const seqs[] = { "0", "-1", "1x", "", " 2",
		"99999999999999999999" };
	for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
		r.seq = seqs[i];
		ok(standby_apply(&stby, files, &r, &o) == 0 &&
		    o == STANDBY_REFUSED, "Bakery-Seq '%s' is refused", seqs[i]);
	}
	r.seq = "2";
	r.version = NULL;
	ok(standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "a record without Bakery-Version");
	r.version = "3";
	r.changeset = "garbage, not a changeset";
	r.size = 24;
	ok(standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "a body that is no changeset: %s",
	    bakery_error());
	unsigned char cut[64];
	memcpy(cut, cs, n < 64 ? (size_t)n : 64);
	r.changeset = cut;
	r.size = n / 2;
	ok(standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "a changeset cut short");
	sqlite3_free(cs);

	/* Changes to the replica's own table, or to a table SQLite's. */
	capture("y.db", &alarms_schema, "CREATE TABLE bakery_replica(one "
	    "INTEGER PRIMARY KEY, seq INTEGER); INSERT INTO bakery_replica "
	    "VALUES (1, 99)", &cs, &n);
	r.changeset = cs;
	r.size = n;
	ok(n > 0 && standby_apply(&stby, files, &r, &o) == 0 &&
	    o == STANDBY_REFUSED, "a changeset of bakery_replica: %s",
	    bakery_error());
	sqlite3_free(cs);
	is_int(standby_int("alarms.db", "SELECT seq FROM bakery_replica"), 1,
	    "  alarms.db's last record is still 1");

	/* A table alarms.db does not have: SQLite would skip it. */
	capture("z.db", &alarms_schema, "CREATE TABLE nope(id INTEGER PRIMARY "
	    "KEY); INSERT INTO nope VALUES (1)", &cs, &n);
	r.changeset = cs;
	r.size = n;
	is_int(standby_apply(&stby, files, &r, &o), EX_DATAERR,
	    "a table the file does not have stops the standby");
	sqlite3_free(cs);
	is_int(standby_int("alarms.db", "SELECT seq FROM bakery_replica"), 1,
	    "  with nothing applied");
}

static int
removal(const char *file, const char *op, const void *body, int n)
{
	enum standby_outcome o;
	char subject[512] = "bakery.replica.bad";
	replica_subject(EPOCH, file, subject, sizeof subject);
	standby_record r = { .subject = subject, .file = file, .host = HOST,
		.op = op, .changeset = body, .size = n };
	int rc = standby_apply(&stby, files, &r, &o);
	return rc ? -rc : (int)o;
}

static void
wiped(void)
{
	char *dir = bakery_xasprintf("%s/sandboxes/default", stby.home);
	char *other = bakery_xasprintf("%s/sandboxes/other", stby.home);
	home_mkdirs(other);
	is_int(removal("sandboxes/../sandboxes/other", "remove", NULL, 0),
	    STANDBY_REFUSED, "a removal of a path that is no sandbox");
	is_int(removal("sandboxes/default/order", "remove", NULL, 0),
	    STANDBY_REFUSED, "  nor of a folder in one");
	is_int(removal("sandboxes/default", "drop", NULL, 0), STANDBY_REFUSED,
	    "  an unknown Bakery-Op");
	is_int(removal("sandboxes/default", "remove", "x", 1), STANDBY_REFUSED,
	    "  a removal with a body");
	ok(access(dir, F_OK) == 0 && access(other, F_OK) == 0,
	    "  every sandbox is still there");
	is_int(removal("sandboxes/default", "remove", NULL, 0), STANDBY_APPLIED,
	    "a sandbox wiped on the primary");
	ok(access(dir, F_OK) != 0 && access(other, F_OK) == 0,
	    "  is removed here, and it alone");
	is_int(removal("sandboxes/default", "remove", NULL, 0), STANDBY_APPLIED,
	    "  a second time is nothing to do");
	char *aside = bakery_xasprintf("%s/.wipe-standby-default", stby.home);
	ok(access(aside, F_OK) != 0, "  nothing is left aside");
	free(aside);

	/* Made again on the primary: its records start from 1. */
	char *pdir = bakery_xasprintf("%s/sandboxes/default", primary.home);
	home_remove_tree(pdir);
	free(pdir);
	char v[16];
	const schema_def *schema = order_schema(v);
	enum standby_outcome o;
	void *cs;
	int n;
	capture(ORDER, schema, "INSERT INTO state VALUES (1, 'order/ord_1', "
	    "'{\"status\":\"again\"}')", &cs, &n);
	is_int(apply(ORDER, "1", v, cs, n, &o), 0,
	    "the first record of a file made again");
	ok(o == STANDBY_APPLIED && same(ORDER), "  applies");
	sqlite3_free(cs);
	free(dir);
	free(other);
}

int
main(void)
{
	char *p = tmp_home(), *s = tmp_home();
	unsetenv("BAKERY_QUEUE");
	ctx_init(&primary, p, NULL, NULL);
	ctx_init(&stby, s, NULL, NULL);
	stby.replica_applying = 1;
	in_order();
	home_files();
	hostile();
	wiped();
	ctx_free(&primary);
	ctx_free(&stby);
	rm_home(p);
	rm_home(s);
	return done_testing();
}
