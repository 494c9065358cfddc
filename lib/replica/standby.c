/*
 * standby.c — one record of the primary's commits applied to the
 * standby's file (standby.h); standby_pull.c has the consumer.
 */
#define _GNU_SOURCE
#include "standby.h"
#include "../core/kind.h"
#include "../store/file.h"
#include "../base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest path a record may name: sandboxes/NAME/KIND/KEY.db. */
#define RELPATH_MAX (10 + 3 * (BAKERY_NAME_MAX + 1) + 3)

static const char tables_sql[] =
    "CREATE TABLE IF NOT EXISTS bakery_replica(one INTEGER PRIMARY KEY "
    "CHECK (one = 1), seq INTEGER NOT NULL, epoch TEXT NOT NULL, "
    "stream_seq INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS bakery_replica_log(seq INTEGER PRIMARY KEY, "
    "version INTEGER NOT NULL, changeset BLOB NOT NULL);";

/* The file a record names, as bakery names and makes it. */
struct target {
	char *path;
	const schema_def *schema;
	char sandbox[BAKERY_NAME_SIZE]; /* "": a file of the home's own */
	int object;                     /* an object's: born with a change */
};

/* A record refused: said in bakery_error(), and 0 to go on. */
__attribute__((format(printf, 2, 3))) static int
refuse(enum standby_outcome *outcome, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	bakery_fail(EX_DATAERR, "%s", why);
	*outcome = STANDBY_REFUSED;
	return 0;
}

/* rel, checked as hostile, as the file bakery would make for it: 1, or 0
 * when it is none of the files a record may name. */
static int
target_of(bakery_ctx *ctx, const standby_file *files, const char *rel,
    struct target *t)
{
	*t = (struct target){ 0 };
	if (strlen(rel) > RELPATH_MAX)
		return 0;
	for (const standby_file *f = files; f->name; f++)
		if (strcmp(rel, f->name) == 0) {
			t->path = bakery_xasprintf("%s/%s", ctx->home, f->name);
			t->schema = f->schema;
			return 1;
		}
	if (strncmp(rel, "sandboxes/", 10) != 0)
		return 0;
	char copy[RELPATH_MAX + 1], *part[4];
	int n = 0;
	snprintf(copy, sizeof copy, "%s", rel + 10);
	for (char *save = NULL, *p = strtok_r(copy, "/", &save); p;
	    p = strtok_r(NULL, "/", &save)) {
		if (n == 3)
			return 0;
		part[n++] = p;
	}
	/* strtok_r would take "a//b" or a trailing '/' as two parts. */
	if (n < 2 || strstr(rel, "//") || rel[strlen(rel) - 1] == '/' ||
	    !bakery_name_valid(part[0]))
		return 0;
	snprintf(t->sandbox, sizeof t->sandbox, "%s", part[0]);
	if (n == 2) {
		if (strcmp(part[1], "sandbox.db") != 0)
			return 0;
		t->path = home_sandbox_file(ctx, t->sandbox);
		t->schema = &home_sandbox_schema;
		return 1;
	}
	size_t len = strlen(part[2]);
	if (len <= 3 || strcmp(part[2] + len - 3, ".db") != 0)
		return 0;
	part[2][len - 3] = '\0';
	const object_kind *k = kind_find(part[1]);
	if (!k || !bakery_name_valid(part[2]))
		return 0;
	char address[BAKERY_ADDRESS_SIZE];
	snprintf(address, sizeof address, "%s/%s", part[1], part[2]);
	t->path = home_object_path(ctx, t->sandbox, address);
	t->schema = kind_schema(k);
	t->object = 1;
	return 1;
}

/* The changeset read through to its end: the count of its changes, or
 * -1 when it does not parse or names a table no record may change. */
static long
changes_in(const standby_record *r, const char **why)
{
	static char empty[1];
	sqlite3_changeset_iter *it = NULL;
	long n = 0;
	int rc = sqlite3changeset_start(&it, r->size,
	    r->size ? (void *)r->changeset : empty);
	*why = "not a changeset";
	while (rc == SQLITE_OK && (rc = sqlite3changeset_next(it)) ==
	    SQLITE_ROW) {
		const char *table;
		int columns, op, indirect;
		rc = sqlite3changeset_op(it, &table, &columns, &op, &indirect);
		if (rc == SQLITE_OK && (strncmp(table, "sqlite_", 7) == 0 ||
		    strncmp(table, "bakery_replica", 14) == 0)) {
			*why = "a changeset of a table of SQLite's or of "
			    "bakery_replica";
			rc = SQLITE_ERROR;
		}
		n++;
	}
	int fin = sqlite3changeset_finalize(it);
	return rc == SQLITE_DONE && fin == SQLITE_OK ? n : -1;
}

/* The record's subject, bakery.replica.EPOCH.TOK: its EPOCH, and TOK
 * checked to name its file (replica_subject's). 0 when it is not so. */
static int
epoch_of(const standby_record *r, char epoch[REPLICA_ID_SIZE])
{
	size_t pl = strlen(REPLICA_PREFIX);
	const char *s = r->subject;
	if (strncmp(s, REPLICA_PREFIX ".", pl + 1) != 0 ||
	    strlen(s) < pl + REPLICA_ID_SIZE + 1 ||
	    s[pl + REPLICA_ID_SIZE] != '.')
		return 0;
	memcpy(epoch, s + pl + 1, REPLICA_ID_SIZE - 1);
	epoch[REPLICA_ID_SIZE - 1] = '\0';
	char want[RELPATH_MAX + 64];
	return replica_id_valid(epoch) &&
	    replica_subject(epoch, r->file, want, sizeof want) == 0 &&
	    strcmp(want, s) == 0;
}

/* Counts the changes the apply reaches: one it does not reach is of a
 * table the file does not have as the record has it, which SQLite skips
 * with a mere log line. */
struct applying {
	long reached;
	int conflict; /* SQLITE_CHANGESET_DATA, ..., 0: none */
	char table[128];
};

static int
reached(void *arg, sqlite3_changeset_iter *it)
{
	(void)it;
	((struct applying *)arg)->reached++;
	return 1;
}

static int
conflicted(void *arg, int why, sqlite3_changeset_iter *it)
{
	struct applying *a = arg;
	const char *table = NULL;
	int columns, op, indirect;
	if (!a->conflict) {
		a->conflict = why;
		if (why != SQLITE_CHANGESET_FOREIGN_KEY &&
		    sqlite3changeset_op(it, &table, &columns, &op, &indirect) ==
		    SQLITE_OK)
			snprintf(a->table, sizeof a->table, "%s", table);
	}
	return SQLITE_CHANGESET_ABORT;
}

static const char *
conflict_name(int why)
{
	switch (why) {
	case SQLITE_CHANGESET_DATA: return "a row not as the primary had it";
	case SQLITE_CHANGESET_NOTFOUND: return "a row the primary had is missing";
	case SQLITE_CHANGESET_CONFLICT: return "a row is there already";
	case SQLITE_CHANGESET_CONSTRAINT: return "a constraint fails";
	default: return "a foreign key fails";
	}
}

/* The file's last record applied (0: none), its tables made if missing;
 * in the caller's transaction. */
static int
local_seq(sqlite3 *db, long long *seq)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(db, tables_sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT seq FROM bakery_replica "
		    "WHERE one = 1", -1, &st, NULL);
	*seq = 0;
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		*seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
note_applied(sqlite3 *db, long long seq, const char *epoch,
    uint64_t stream_seq)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO bakery_replica(one, seq, "
	    "epoch, stream_seq) VALUES (1, ?1, ?2, ?3) ON CONFLICT (one) DO "
	    "UPDATE SET seq = ?1, epoch = ?2, stream_seq = ?3", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, seq);
		sqlite3_bind_text(st, 2, epoch, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)stream_seq);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Steps 3 to 5 on db, the file t names, its write transaction begun. */
static int
apply_in(sqlite3 *db, const struct target *t, const standby_record *r,
    long long seq, const char *epoch, long changes,
    enum standby_outcome *outcome)
{
	long long local;
	int src = local_seq(db, &local);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot read the file's last record");
	if (seq <= local) {
		*outcome = STANDBY_SKIPPED;
		return 0;
	}
	if (seq != local + 1 && seq == local + 2)
		return bakery_fail(EX_SOFTWARE, "'%s': record %lld comes after "
		    "record %lld: record %lld is missing from the stream",
		    t->path, seq, local, local + 1);
	if (seq != local + 1)
		return bakery_fail(EX_SOFTWARE, "'%s': record %lld comes after "
		    "record %lld: records %lld to %lld are missing from the "
		    "stream", t->path, seq, local, local + 1, seq - 1);
	struct applying a = { 0 };
#if SQLITE_VERSION_NUMBER >= 3050000
	src = sqlite3changeset_apply_v3(db, r->size,
	    r->size ? (void *)r->changeset : (void *)"", reached, conflicted,
	    &a, NULL, NULL, 0);
#else
	/* A library without apply_v3 (SQLITE=system) has no capture either
	 * (capture.c): no home it runs is replicated. */
	(void)reached;
	(void)conflicted;
	return bakery_fail(EX_CONFIG, "a standby needs SQLite 3.50 or later: "
	    "this bakery runs %s", sqlite3_libversion());
#endif
	if (a.conflict)
		return bakery_fail(EX_DATAERR, "'%s': record %lld conflicts "
		    "with the file (%s%s%s): nothing of it applied, nothing "
		    "replaced; this standby no longer follows the primary",
		    t->path, seq, conflict_name(a.conflict),
		    *a.table ? ", table " : "", a.table);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot apply a record");
	if (a.reached != changes)
		return bakery_fail(EX_DATAERR, "'%s': record %lld changes a "
		    "table this file does not have as the record has it: "
		    "nothing of it applied", t->path, seq);
	src = note_applied(db, seq, epoch, r->stream_seq);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot note the record applied");
	*outcome = STANDBY_APPLIED;
	return 0;
}

/* Opens (or makes) the file, applies, commits. */
static int
apply_to(bakery_ctx *ctx, const struct target *t, const standby_record *r,
    long long seq, const char *epoch, long changes,
    enum standby_outcome *outcome)
{
	sqlite3 *db = NULL;
	db_stmts stmts;
	birth b = { 0 };
	int lock = -1, rc = 0;
	memset(&stmts, 0, sizeof stmts);
	/* As an object's writer does: no wipe moves the folder aside
	 * meanwhile. */
	if (*t->sandbox)
		rc = home_lock_sandbox(ctx, t->sandbox, 0, 1, &lock);
	if (!rc && t->object)
		rc = birth_object_open(ctx, t->path, t->schema, &b, &db, &stmts);
	else if (!rc && *t->sandbox)
		rc = birth_open_sandbox(ctx, t->sandbox, 1, &db);
	else if (!rc)
		rc = birth_open(ctx, t->path, t->schema, &db);
	if (!rc && !birth_begun(&b, db))
		rc = db_begin(db);
	if (!rc)
		rc = apply_in(db, t, r, seq, epoch, changes, outcome);
	if (!rc && *outcome == STANDBY_APPLIED) {
		rc = db_commit(db);
		if (!rc && t->object)
			rc = birth_committed(&b, &db, &stmts);
	}
	if (t->object || b.state != BIRTH_NONE)
		birth_close(&b, &db, &stmts, t->path);
	if (db) {
		db_rollback(db);
		sqlite3_close(db);
	}
	home_unlock_sandbox(lock);
	return rc;
}

/* A sandbox wiped on the primary: its folder moved aside, as the wipe
 * moves it, then removed; its files' records start again from 1. */
static int
remove_sandbox(bakery_ctx *ctx, const char *sandbox,
    enum standby_outcome *outcome)
{
	int lock, rc = home_lock_sandbox(ctx, sandbox, 1, 1, &lock);
	if (rc)
		return rc;
	char *live = home_sandbox_dir(ctx, sandbox);
	char *aside = bakery_xasprintf("%s/.wipe-standby-%s", ctx->home,
	    sandbox);
	/* What a removal killed midway left aside goes first. */
	rc = home_remove_tree(aside);
	if (!rc && rename(live, aside) != 0 && errno != ENOENT)
		rc = bakery_fail(db_errno_code(errno), "cannot move '%s' aside: "
		    "%s", live, strerror(errno));
	home_unlock_sandbox(lock);
	if (!rc) {
		file_sync_dir(ctx->sandboxes);
		rc = home_remove_tree(aside);
	}
	free(live);
	free(aside);
	if (!rc)
		*outcome = STANDBY_APPLIED;
	return rc;
}

/* A record of Bakery-Op remove: sandboxes/S, and nothing in its body. */
static int
removal(bakery_ctx *ctx, const standby_record *r,
    enum standby_outcome *outcome)
{
	const char *sandbox = r->file + 10;
	char epoch[REPLICA_ID_SIZE];
	if (strcmp(r->op, "remove") != 0)
		return refuse(outcome, "a record of '%.*s' with an unknown "
		    "Bakery-Op", (int)RELPATH_MAX, r->file);
	if (strncmp(r->file, "sandboxes/", 10) != 0 ||
	    !bakery_name_valid(sandbox))
		return refuse(outcome, "a removal of '%.*s', which is no "
		    "sandbox", (int)RELPATH_MAX, r->file);
	if (!epoch_of(r, epoch) || r->size != 0)
		return refuse(outcome, "a removal of '%s' on another subject "
		    "than its own, or with a body", r->file);
	return remove_sandbox(ctx, sandbox, outcome);
}

int
standby_apply(bakery_ctx *ctx, const standby_file *files,
    const standby_record *r, enum standby_outcome *outcome)
{
	*outcome = STANDBY_REFUSED;
	char epoch[REPLICA_ID_SIZE];
	long long seq, version;
	const char *why;
	struct target t;
	if (!r->subject || !r->file || !r->host || !replica_id_valid(r->host))
		return refuse(outcome, "a record without Bakery-File, or "
		    "without a Bakery-Host that is a host's id");
	if (r->op)
		return removal(ctx, r, outcome);
	if (!target_of(ctx, files, r->file, &t))
		return refuse(outcome, "a record of '%.*s', which is no file "
		    "a record may name", (int)RELPATH_MAX, r->file);
	int rc = 0;
	long changes = 0;
	if (!epoch_of(r, epoch))
		rc = refuse(outcome, "a record of '%s' on another subject than "
		    "its file's", r->file);
	else if (!r->seq || !r->version ||
	    bakery_parse_number(r->seq, 1, LLONG_MAX, &seq) ||
	    bakery_parse_number(r->version, 1, INT_MAX, &version))
		rc = refuse(outcome, "a record of '%s' without a Bakery-Seq "
		    "and a Bakery-Version that are numbers from 1", r->file);
	else if ((changes = changes_in(r, &why)) < 0)
		rc = refuse(outcome, "a record of '%s': %s", r->file, why);
	else if (version > t.schema->count)
		rc = bakery_fail(EX_CONFIG, "'%s': record %lld was written by "
		    "a newer bakery (schema %lld, this one's %d): upgrade this "
		    "host first", t.path, seq, version, t.schema->count);
	else
		rc = apply_to(ctx, &t, r, seq, epoch, changes, outcome);
	free(t.path);
	return rc;
}
