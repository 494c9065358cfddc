/*
 * capture.c — a replicated home's commits captured and recorded
 * (capture.h).
 */
#define _GNU_SOURCE
#include "capture-internal.h"
#include "capture.h"
#include "ctx.h"
#include "dberr.h"
#include "../base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAPTURE_KEY "bakery.capture"

/* A connection's capture is its client data (SQLite 3.44): a library
 * older than that (SQLITE=system, Debian 12's 3.40.1) replicates
 * nothing, and a replicated home refuses it (capture_attach). */
#if SQLITE_VERSION_NUMBER >= 3044000
#define CAPTURED 1
#define set_capture(db, c, free) \
	sqlite3_set_clientdata((db), CAPTURE_KEY, (c), (free))
#define get_capture(db) sqlite3_get_clientdata((db), CAPTURE_KEY)
#else
#define CAPTURED 0
static inline int
set_capture(sqlite3 *db, void *c, void (*destroy)(void *))
{
	(void)db;
	(void)c;
	(void)destroy;
	return SQLITE_ERROR;
}
static inline void *
get_capture(sqlite3 *db)
{
	(void)db;
	return NULL;
}
#endif
#ifndef SQLITE_SESSION_OBJCONFIG_ROWID
#define SQLITE_SESSION_OBJCONFIG_ROWID 2
#endif

const char capture_tables_sql[] =
    "CREATE TABLE IF NOT EXISTS bakery_replica(one INTEGER PRIMARY KEY "
    "CHECK (one = 1), seq INTEGER NOT NULL, epoch TEXT NOT NULL, "
    "stream_seq INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS bakery_replica_log(seq INTEGER PRIMARY KEY, "
    "version INTEGER NOT NULL, changeset BLOB NOT NULL);"
    "INSERT OR IGNORE INTO bakery_replica VALUES (1, 0, 'none', 0);";

/* The capture's own tables are not the file's changes. */
static int
not_ours(void *arg, const char *table)
{
	(void)arg;
	return strncmp(table, "bakery_replica", 14) != 0;
}

/* Takes c out of its sink's list of files to note. */
void
capture_unlist(struct capture *c)
{
	if (!c->listed)
		return;
	for (struct capture **pp = &c->sink->batched; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->listed = 0;
}

static void
capture_free(void *p)
{
	struct capture *c = p;
	capture_unlist(c);
	if (c->session)
		sqlite3session_delete(c->session);
	free(c->relpath);
	free(c);
}

/* A new session, empty, on every table but ours. */
static int
session_start(struct capture *c)
{
	if (c->session)
		sqlite3session_delete(c->session);
	c->session = NULL;
	int rc = sqlite3session_create(c->db, "main", &c->session);
	if (rc == SQLITE_OK) {
		int one = 1;
		/* Tables without a primary key of their own are recorded by
		 * their rowid. */
		sqlite3session_object_config(c->session,
		    SQLITE_SESSION_OBJCONFIG_ROWID, &one);
		sqlite3session_table_filter(c->session, not_ours, NULL);
		rc = sqlite3session_attach(c->session, NULL);
	}
	return rc == SQLITE_OK ? 0 : db_fail(c->db, rc,
	    "cannot capture the changes of a replicated home");
}

/* A commit that holds changes the session has not made a record of did
 * not come through db_commit (a statement in autocommit): it would leave
 * the host unrecorded, so it is turned into a rollback. */
static int
unrecorded_commit(void *arg)
{
	struct capture *c = arg;
	return c->session && !sqlite3session_isempty(c->session);
}

struct capture *
capture_of(sqlite3 *db)
{
	return db ? get_capture(db) : NULL;
}

int
capture_attach(bakery_ctx *ctx, sqlite3 *db, const char *path, int copy)
{
	if (!db)
		return 0;
	if (!ctx->replica) {
		/* A birth's connection kept for the next birth may carry the
		 * capture of another context's home. */
		if (copy && get_capture(db)) {
			sqlite3_commit_hook(db, NULL, NULL);
			set_capture(db, NULL, NULL);
		}
		return 0;
	}
	if (!CAPTURED)
		return bakery_fail(EX_CONFIG, "a replicated home needs SQLite "
		    "3.44 or later: this bakery runs %s", sqlite3_libversion());
	size_t hl = strlen(ctx->home);
	if (strncmp(path, ctx->home, hl) != 0 || path[hl] != '/')
		return bakery_fail(EX_SOFTWARE, "'%s' is not in the home '%s'",
		    path, ctx->home);
	/* The embedded queue's file is not the home's state: a replicated
	 * home's queue is NATS (replica.h). */
	if (strcmp(path + hl + 1, "queue.db") == 0)
		return 0;
	struct capture *c = bakery_xmalloc(sizeof *c);
	*c = (struct capture){ .db = db, .sink = ctx->replica, .ctx = ctx,
		.relpath = bakery_xstrdup(path + hl + 1), .copy = copy };
	/* The one before, if any, is freed by SQLite. */
	if (set_capture(db, c, capture_free) != SQLITE_OK) {
		capture_free(c);
		return bakery_fail(EX_SOFTWARE, "cannot attach the capture");
	}
	int rc = session_start(c);
	sqlite3_commit_hook(db, unrecorded_commit, c);
	if (rc || copy)
		return rc;
	/* What another process left unsent may be a late file's commits,
	 * never synced: synced before they are sent (capture_sync_log). */
	c->unsynced = 1;
	rc = capture_send_pending(db);
	c->unsynced = 0;
	return rc;
}

void
capture_rolled_back(sqlite3 *db)
{
	struct capture *c = capture_of(db);
	if (c)
		session_start(c);
}

void
capture_sync_late(sqlite3 *db)
{
	struct capture *c = capture_of(db);
	if (!c || c->copy)
		return;
	/* The connection's own journal: only a WAL's commits are found
	 * whole by a later sync of it. */
	sqlite3_stmt *st = NULL;
	const char *mode = NULL;
	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		mode = (const char *)sqlite3_column_text(st, 0);
	int wal = mode && strcmp(mode, "wal") == 0;
	sqlite3_finalize(st);
	if (!wal)
		return;
	c->late = 1;
	sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
}

/* The connection's synchronous as it was before a note of records sent
 * (unsynced): FULL, as a replicated home's connections are (replica.c
 * refuses BAKERY_SYNC=normal, db_relaxed leaves them), or a late one's
 * NORMAL. */
void
capture_sync_back(struct capture *c)
{
	sqlite3_exec(c->db, c->late ? "PRAGMA synchronous=NORMAL"
	    : "PRAGMA synchronous=FULL", NULL, NULL, NULL);
}

/* The file's WAL synced (through its VFS, as SQLite's own commit would
 * sync it) when records may be sent that a sync has not made durable: a
 * late file's (always: every commit there is, another process's too,
 * before records are sent under the file's write lock; else when it
 * committed since), or what another process left (c->unsynced). */
int
capture_sync_log(struct capture *c, int always)
{
	if (!c->unsynced && !(c->late && always))
		return 0;
	sqlite3_file *wal = NULL;
	int rc = sqlite3_file_control(c->db, "main",
	    SQLITE_FCNTL_JOURNAL_POINTER, &wal);
	if (rc == SQLITE_OK && wal && wal->pMethods)
		rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
	if (rc != SQLITE_OK)
		return db_fail(c->db, rc, "cannot sync commits before their "
		    "records are sent");
	c->unsynced = 0;
	return 0;
}

int
capture_before_commit(sqlite3 *db)
{
	struct capture *c = capture_of(db);
	if (!c || !c->session)
		return 0;
	/* The changeset, even of a session that looks empty: one that met
	 * an error records nothing more, and says so only here. */
	int n = 0;
	void *p = NULL;
	int rc = sqlite3session_changeset(c->session, &n, &p);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "cannot read a commit's changes");
	if (n == 0) { /* what changed was put back */
		sqlite3_free(p);
		return session_start(c);
	}
	/* Made once a connection: no program drops them. */
	rc = c->tables ? SQLITE_OK
	    : sqlite3_exec(db, capture_tables_sql, NULL, NULL, NULL);
	c->tables = rc == SQLITE_OK;
	/* Plain statements: an INSERT ... SELECT ... RETURNING would step
	 * through a statement journal and a table of its results, the most
	 * costly part of a commit here. */
	sqlite3_stmt *st = NULL;
	long long seq = 0;
	int version = 0;
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "UPDATE bakery_replica SET seq = seq + 1",
		    NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT seq, (SELECT user_version "
		    "FROM pragma_user_version) FROM bakery_replica", -1, &st,
		    NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		seq = sqlite3_column_int64(st, 0);
		version = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_ROW)
		rc = sqlite3_prepare_v2(db, "INSERT INTO bakery_replica_log "
		    "VALUES (?1, ?2, ?3)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, seq);
		sqlite3_bind_int(st, 2, version);
		sqlite3_bind_blob(st, 3, p, n, SQLITE_STATIC);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK && c->ctx->replica_batched)
		capture_hold(c, seq, version, p, n);
	sqlite3_free(p);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "cannot keep a commit's record");
	c->unsynced |= c->late;
	return session_start(c);
}

int
capture_after_commit(sqlite3 *db)
{
	struct capture *c = capture_of(db);
	/* A --batch group's record waits for the settle (capture_hold). */
	return c && !c->copy && !c->ctx->replica_batched
	    ? capture_send_pending(db) : 0;
}

/* The log's first record in *r (its data sqlite's, valid until st is
 * stepped again): SQLITE_ROW, SQLITE_DONE, or a failure. */
int
capture_next_record(sqlite3_stmt *st, capture_record *r)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r->seq = sqlite3_column_int64(st, 0);
		r->version = sqlite3_column_int(st, 1);
		r->data = sqlite3_column_blob(st, 2);
		r->len = sqlite3_column_bytes(st, 2);
	}
	return rc;
}

/* Whether the file holds a record unsent: a read, no lock taken. */
static int
any_pending(sqlite3 *db)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM bakery_replica_log LIMIT 1",
	    -1, &st, NULL) != SQLITE_OK)
		return 0; /* no such table: never written here */
	int any = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return any;
}

/* Sends the log's records in order; the file's write lock is held. */
static int
send_log(struct capture *c)
{
	sqlite3 *db = c->db;
	struct capture_sink *sink = c->sink;
	sqlite3_stmt *state = NULL, *log = NULL;
	uint64_t expect = 0;
	int rc = sqlite3_prepare_v2(db, "SELECT epoch, stream_seq FROM "
	    "bakery_replica", -1, &state, NULL);
	if (rc == SQLITE_OK && sqlite3_step(state) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(state, 0),
	    sink->epoch) == 0)
		expect = (uint64_t)sqlite3_column_int64(state, 1);
	sqlite3_finalize(state);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT seq, version, changeset "
		    "FROM bakery_replica_log ORDER BY seq", -1, &log, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "cannot read the records to send");
	int sent = 0, code = 0;
	long long last = 0;
	capture_record r = { .relpath = c->relpath };
	while ((rc = capture_next_record(log, &r)) == SQLITE_ROW) {
		r.expect = expect;
		code = sink->send(sink, &r, &expect);
		if (code)
			break;
		last = r.seq;
		sent++;
	}
	sqlite3_finalize(log);
	if (!code && rc != SQLITE_DONE)
		code = db_fail(db, rc, "cannot read the records to send");
	if (sent == 0)
		return code;
	/* What was taken is kept as taken, unsynced: should a power cut
	 * lose it, the records go again, and the stream knows them. */
	char *sql = sqlite3_mprintf("DELETE FROM bakery_replica_log WHERE "
	    "seq <= %lld; UPDATE bakery_replica SET epoch = %Q, "
	    "stream_seq = %llu;", last, sink->epoch,
	    (unsigned long long)expect);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK && !code)
		code = db_fail(db, rc, "cannot note the records sent");
	return code;
}

int
capture_send_pending(sqlite3 *db)
{
	struct capture *c = capture_of(db);
	if (!c || c->copy || !any_pending(db))
		return 0;
	if (c->ctx->replica_batched)
		return capture_publish_log(c);
	if (!sqlite3_get_autocommit(db))
		return bakery_fail(EX_SOFTWARE, "'%s': records sent inside a "
		    "transaction", c->relpath);
	/* Committed here, not yet recorded: the next writer sends it. */
	bakery_crash_point("replica.before_send");
	/* The note of the records sent is not synced (below): the pragma
	 * cannot change inside a transaction. */
	sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		capture_sync_back(c);
		return db_fail(db, rc, "cannot send the records");
	}
	int code = capture_sync_log(c, 1);
	if (!code)
		code = send_log(c);
	/* Recorded, not yet noted as such, nor answered. */
	if (!code)
		bakery_crash_point("replica.after_send");
	/* Committed whatever was sent, failed or not: the records the
	 * stream took are not sent again. The connection goes back to its
	 * synchronous (capture_sync_back). */
	rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	capture_sync_back(c);
	if (rc != SQLITE_OK && !code)
		code = db_fail(db, rc, "cannot note the records sent");
	return code;
}

int
capture_removal(bakery_ctx *ctx, const char *path, long long run)
{
	if (!ctx->replica)
		return 0;
	size_t hl = strlen(ctx->home);
	if (strncmp(path, ctx->home, hl) != 0 || path[hl] != '/')
		return bakery_fail(EX_SOFTWARE, "'%s' is not in the home '%s'",
		    path, ctx->home);
	capture_record r = { .relpath = path + hl + 1, .remove = 1,
		.run = run };
	uint64_t seq;
	return ctx->replica->send(ctx->replica, &r, &seq);
}
