/*
 * store.c — names, addresses, opening files (modes, pragmas, schema), days.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include <sys/stat.h>

#include "../../lib/store/store.h"
#include "../../lib/core/kind.h"
#include "../../lib/base/util.h"

static int
mode_of(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

/* db_prepare keeps a statement and hands it out again only when it
 * is the same text and not stepping already. */
static void
statements(void)
{
	sqlite3 *db;
	is_int(sqlite3_open(":memory:", &db), SQLITE_OK, "an in-memory database");
	sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);",
	    NULL, NULL, NULL);
	db_stmts c;
	memset(&c, 0, sizeof c);
	const char *sel = "SELECT x FROM t WHERE x >= ? ORDER BY x";
	sqlite3_stmt *a, *b, *d;
	is_int(db_prepare(db, &c, sel, &a), SQLITE_OK, "db_prepare");
	sqlite3_bind_int(a, 1, 2);
	is_int(sqlite3_step(a), SQLITE_ROW, "  steps");
	is_int(sqlite3_column_int(a, 0), 2, "  with its binding");
	is_int(db_prepare(db, &c, sel, &b), SQLITE_OK, "the same text again,"
	    " while the first steps");
	ok(b != a, "  is another statement");
	db_release(&c, b); /* not kept: finalized, or valgrind sees a leak */
	db_release(&c, a);
	ok(!sqlite3_stmt_busy(a), "a released statement is reset");
	is_int(db_prepare(db, &c, sel, &b), SQLITE_OK, "the same text once"
	    " released");
	ok(b == a, "  is the kept statement");
	is_int(sqlite3_step(b), SQLITE_DONE, "  and its binding was cleared"
	    " (x >= NULL matches no row)");
	db_release(&c, b);

	/* The same address with another text is another statement. */
	char buf[64];
	snprintf(buf, sizeof buf, "SELECT 1");
	is_int(db_prepare(db, &c, buf, &a), SQLITE_OK, "a buffer's text");
	db_release(&c, a);
	snprintf(buf, sizeof buf, "SELECT 2");
	is_int(db_prepare(db, &c, buf, &b), SQLITE_OK, "the buffer changed");
	is_int(sqlite3_step(b), SQLITE_ROW, "  steps");
	is_int(sqlite3_column_int(b, 0), 2, "  the new text, not the kept one");
	db_release(&c, b);

	/* More texts than slots: the rest are used once and finalized. */
	char texts[DB_STMTS + 4][32];
	for (int i = 0; i < DB_STMTS + 4; i++) {
		snprintf(texts[i], sizeof texts[i], "SELECT %d", i);
		if (db_prepare(db, &c, texts[i], &d) != SQLITE_OK)
			break;
		db_release(&c, d);
	}
	ok(sqlite3_close(db) == SQLITE_BUSY, "kept statements hold the"
	    " connection open");
	db_stmts_free(&c);
	is_int(sqlite3_close(db), SQLITE_OK, "db_stmts_free lets it close");
}

int
main(void)
{
	/* Names. */
	const char *good[] = { "a", "default", "ord_9f2c", "2026-11-30",
		"a.b", "a-b_c.d", "0", NULL };
	for (int i = 0; good[i]; i++)
		ok(bakery_name_valid(good[i]), "name '%s' is valid", good[i]);
	char n64[65], n65[66];
	memset(n64, 'a', 64);
	n64[64] = '\0';
	memset(n65, 'a', 65);
	n65[65] = '\0';
	ok(bakery_name_valid(n64), "a name of 64 characters is valid");
	ok(!bakery_name_valid(n65), "a name of 65 characters is not");
	const char *bad[] = { "", "A", "a/b", "..", "a..b", "-a", "_a", ".a",
		"a b", "a\n", "\xc3\xa9", NULL };
	const char *label[] = { "", "A", "a/b", "..", "a..b", "-a", "_a", ".a",
		"a b", "a NEWLINE", "e-acute", NULL };
	for (int i = 0; bad[i]; i++)
		ok(!bakery_name_valid(bad[i]), "name '%s' is invalid", label[i]);

	/* Opening a file. */
	char *home = tmp_home();
	bakery_ctx ctx;
	unsetenv("BAKERY_SYNC");
	is_int(ctx_init(&ctx, home, NULL, NULL), 0, "ctx_init");
	is_str(ctx.sandbox, "default", "the sandbox defaults to 'default'");
	char *path = home_object_path(&ctx, NULL, "order/ord_1");
	char want_path[4200];
	snprintf(want_path, sizeof want_path, "%s/sandboxes/default/order/ord_1.db", home);
	is_str(path, want_path, "object path is HOME/sandboxes/SANDBOX/KIND/KEY.db");

	sqlite3 *db = NULL;
	is_int(db_open(&ctx, path, &object_schema, &db), EX_NOINPUT,
	    "db_open on a missing file is EX_NOINPUT");
	ok(db == NULL, "  and gives no handle");
	ok(access(path, F_OK) != 0, "  and creates no file");

	mode_t old = umask(0);
	int rc = birth_open(&ctx, path, &object_schema, &db);
	umask(old);
	is_int(rc, 0, "birth_open creates the file");
	is_int(mode_of(path), 0600, "the file is 0600 (umask 0)");
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/sandboxes/default", home);
	is_int(mode_of(dir), 0700, "the sandbox folder is 0700");
	snprintf(dir, sizeof dir, "%s/sandboxes/default/order", home);
	is_int(mode_of(dir), 0700, "the kind folder is 0700");
	is_int(sql_int(db, "PRAGMA user_version"), OBJECT_SCHEMA_VERSION,
	    "user_version is %d", OBJECT_SCHEMA_VERSION);
	char buf[64];
	is_str(sql_text(db, "PRAGMA journal_mode", buf, sizeof buf),
	    wal_journal_mode(), "journal mode is wal_journal_mode()");
	ok(strcmp(wal_journal_mode(), "wal") == 0
		? sqlite3_libversion_number() >= 3051003
		: strcmp(wal_journal_mode(), "truncate") == 0 &&
		    sqlite3_libversion_number() < 3051003,
	    "journal mode %s fits SQLite %s", wal_journal_mode(),
	    sqlite3_libversion());
	is_int(sql_int(db, "PRAGMA synchronous"), 2, "synchronous is FULL");
	is_int(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN"
		" ('state','events','outbox','seen','commands_seen','alarm')"), 6,
	    "the object schema's tables exist");
	sqlite3_close(db);

	/* Opening again: no migration runs twice, db_open now works. */
	db = NULL;
	is_int(db_open(&ctx, path, &object_schema, &db), 0,
	    "db_open opens an existing file");
	is_int(sql_int(db, "PRAGMA user_version"), OBJECT_SCHEMA_VERSION,
	    "user_version still %d", OBJECT_SCHEMA_VERSION);
	sqlite3_close(db);

	/* The read-only tools read a file of version 3, the one 0.1.0
	 * wrote, and 4, this bakery's, as they are; versions 1 and 2 only
	 * bakeries before 0.1.0 wrote (tests/unit/schemas.c), 5 none yet. */
	for (int v = 1; v <= 5; v++) {
		char pragma[40];
		snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v);
		sqlite3_open(path, &db);
		sqlite3_exec(db, pragma, NULL, NULL, NULL);
		sqlite3_close(db);
		db = NULL;
		int got = db_open_readonly(&ctx, path, &object_schema,
		    &db);
		int read = v == 3 || v == 4;
		is_int(got, read ? 0 : EX_CONFIG,
		    "db_open_readonly on a version %d file: %s", v,
		    read ? "read" : "EX_CONFIG");
		if (db)
			is_int(sql_int(db, "PRAGMA user_version"), v,
			    "  and left at version %d", v);
		sqlite3_close(db);
	}
	sqlite3_open(path, &db);
	sqlite3_exec(db, "PRAGMA user_version = 3", NULL, NULL, NULL);
	sqlite3_close(db);

	/* A schema newer than this bakery is refused. */
	sqlite3_open(path, &db);
	sqlite3_exec(db, "PRAGMA user_version = 9", NULL, NULL, NULL);
	sqlite3_close(db);
	db = NULL;
	is_int(db_open(&ctx, path, &object_schema, &db), EX_CONFIG,
	    "a newer schema version is EX_CONFIG");
	ok(db == NULL, "  and gives no handle");
	free(path);

	/* BAKERY_SYNC=normal trades durability on power loss. */
	bakery_ctx ctx2;
	setenv("BAKERY_SYNC", "normal", 1);
	is_int(ctx_init(&ctx2, home, "other", NULL), 0,
	    "ctx_init with BAKERY_SYNC=normal");
	unsetenv("BAKERY_SYNC");
	ok(birth_open_sandbox(&ctx2, NULL, 1, &db) == 0, "open a sandbox file");
	is_int(sql_int(db, "PRAGMA synchronous"), 1, "synchronous is NORMAL");
	sqlite3_close(db);
	ctx_free(&ctx2);

	setenv("BAKERY_SYNC", "sometimes", 1);
	is_int(ctx_init(&ctx2, home, NULL, NULL), EX_CONFIG,
	    "a bad BAKERY_SYNC is EX_CONFIG");
	ctx_free(&ctx2);
	unsetenv("BAKERY_SYNC");
	is_int(ctx_init(&ctx2, home, "Bad", NULL), EX_USAGE,
	    "a bad sandbox name is EX_USAGE");
	ctx_free(&ctx2);
	ctx_free(&ctx);

	/* A bad sandbox name never becomes a path (store.h's promise), even
	 * when it reaches birth_open_sandbox directly.
	 * HOME is a folder inside the temporary one, so an escape lands in it. */
	char *inner = bakery_xasprintf("%s/home", home);
	ctx_init(&ctx, inner, NULL, NULL);
	char *escaped = bakery_xasprintf("%s/escape", home);
	db = NULL;
	rc = birth_open_sandbox(&ctx, "../escape", 1, &db);
	is_int(rc, EX_USAGE, "birth_open_sandbox refuses sandbox '../escape'");
	if (db)
		sqlite3_close(db);
	ok(access(escaped, F_OK) != 0, "  and creates nothing outside HOME");
	free(escaped);
	free(inner);
	ctx_free(&ctx);
	rm_home(home);

	/* Kept statements. */
	statements();

	/* Days. */
	ok(bakery_day_valid("2026-11-30"), "2026-11-30 is a day");
	ok(!bakery_day_valid("2026-02-29"), "2026-02-29 is not (2026 is not leap)");
	ok(bakery_day_valid("2028-02-29"), "2028-02-29 is (leap year)");
	ok(!bakery_day_valid("2026-02-31"), "2026-02-31 is not");
	ok(!bakery_day_valid("2026-13-01"), "month 13 is not");
	ok(!bakery_day_valid("2026-1-01"), "a short month is not");
	ok(!bakery_day_valid("2026-11-30x"), "trailing text is not");
	ok(!bakery_day_valid(""), "empty is not");
	return done_testing();
}
