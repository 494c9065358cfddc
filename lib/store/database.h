/*
 * database.h — one SQLite file of the home, opened safely.
 *
 * Owns: opening (created, migrated, or read without writing), the
 * connection's settings (busy handling, synchronous), BEGIN IMMEDIATE,
 * the statement cache, and the exit code of a SQLite or errno failure.
 *
 * Promises: files are 0600; every write transaction is BEGIN IMMEDIATE
 * with a busy timeout, so SQLITE_BUSY surfaces only after the timeout,
 * as EX_TEMPFAIL; a symlink or a FIFO is never opened.
 */
#ifndef BAKERY_DATABASE_H
#define BAKERY_DATABASE_H

#include <jv.h>
#include <sqlite3.h>

#include "schema.h"

typedef struct bakery_ctx bakery_ctx;
typedef struct wal_new wal_new;

/* How db_open treats a file that is missing or has no schema yet. */
enum db_open_mode {
	DB_OPEN_EXISTING,     /* neither is made: EX_NOINPUT */
	DB_OPEN_CREATE,       /* the file and its schema are made */
	DB_OPEN_CREATE_BEGUN, /* and its schema's transaction left open */
};
/* Opens path with schema; DB_OPEN_EXISTING in a context that only looks
 * (ctx->look_only): read-only, as db_open_readonly, when the file has
 * the current schema. DB_OPEN_EXISTING fails with EX_NOINPUT if missing
 * or empty (no schema: a creation that failed or is under way), and a file
 * that is not SQLite's is EX_DATAERR. A symlink or a FIFO at path is
 * EX_CONFIG, here and in db_open_readonly: never followed, never
 * waited on (SQLITE_OPEN_NOFOLLOW). In WAL a new file is made whole
 * under a temporary name and renamed into place (wal.c, "A new file in
 * WAL"); a missing one, in a rollback journal, is created empty and given
 * its schema in its first transaction.
 * DB_OPEN_CREATE_BEGUN: a file that needs its schema gets it in a
 * write transaction that is left open (sqlite3_get_autocommit() is 0), so
 * that the caller's first change commits with it: one commit, not two.
 * Test hook: BAKERY_FAIL_WRITE_AT (lib/store/testvfs.h) is registered here,
 * before the first open. */
int db_open(bakery_ctx *ctx, const char *path, const schema_def *schema,
    enum db_open_mode mode, sqlite3 **db);
/* DB_OPEN_CREATE_BEGUN, but in WAL a missing file is made with its first
 * transaction (wal_new_begin): *nf is then set, *db is a connection on
 * its private copy with the transaction begun, and the caller settles it
 * after its commit (wal_new_settle) or ends it (wal_new_end). */
int db_open_new(bakery_ctx *ctx, const char *path, const schema_def *schema,
    struct wal_new **nf, sqlite3 **db);
/* Opens an existing file for reading only, for tools that look and must
 * not touch (bakery-status, bakery-trace): nothing is created, no journal
 * mode is set, no schema is migrated, and the connection is query_only.
 * EX_NOINPUT when the file is missing or has no schema yet (a file being
 * created); EX_CONFIG when its schema version is not between
 * schema->read_from and schema->count. */
int db_open_readonly(bakery_ctx *ctx, const char *path,
    const schema_def *schema, sqlite3 **db);
/* The same reader for any SQLite file, whatever its schema (bakery-doctor's
 * quick_check, bakery-backup's VACUUM INTO): nothing created, nothing
 * written, query_only. EX_NOINPUT when the file is missing.
 * Both readers, in a context that writes nothing at all
 * (ctx->write_nothing, bakery-doctor), read a file whose -wal and -shm are
 * not there, not of the file's mode, or (as root) not of its owner, as the
 * file alone
 * (immutable=1), so that SQLite makes no -wal or -shm and gives none an
 * owner; what a -wal holds without its -shm is then not read. */
int db_open_reader(bakery_ctx *ctx, const char *path, sqlite3 **db);

/* The exit code for a failed file operation's errno: full disk or I/O
 * 74, permission or a read-only file system 77, else 73. */
int db_errno_code(int err);
/* Records "WHAT: sqlite's message" with the exit code for rc. */
int db_fail(sqlite3 *db, int rc, const char *what);
/* The busy handler (timeout_ms the timeout itself, as a pointer): tries
 * again every millisecond for the first 100, then every 5, up to it. */
int db_busy_wait(void *timeout_ms, int tries);

/* relaxed=1: the connection's next commits run at synchronous=NORMAL,
 * for a commit whose loss on a power cut loses and doubles nothing (the
 * work it records is done again, and absorbed: docs/design.md, "WAL");
 * relaxed=0: back to FULL. In WAL only: a rollback journal at NORMAL
 * may corrupt a file on an old filesystem, and stays FULL. Nothing with
 * BAKERY_SYNC=normal, where every commit is NORMAL already. */
void db_relaxed(bakery_ctx *ctx, sqlite3 *db, int relaxed);
int db_begin(sqlite3 *db);     /* BEGIN IMMEDIATE */
int db_commit(sqlite3 *db);
void db_rollback(sqlite3 *db); /* safe when no transaction is open */
int db_exec(sqlite3 *db, const char *sql);
/* Runs n statements in one write transaction of their own (BEGIN
 * IMMEDIATE, each stepped once, COMMIT), all bound to the same parameters:
 * types names them in order, 't' a string (const char *), 'i' an integer
 * (int64_t), bound to ?1, ?2, ... (at most 8); a statement with fewer
 * parameters leaves the rest. A failure rolls back every one and is
 * db_fail's "WHAT: sqlite's message". */
int db_run(sqlite3 *db, const char *what, int n, const char *const *sql,
    const char *types, ...);
/*
 * Prepared statements kept for the life of a connection. A command or a
 * consumer runs the same few statements for every event; preparing each
 * one again cost as much CPU as the rest of the work together. A
 * statement is found again by the address of its SQL text and its text
 * is compared before it is used, so any string is safe to pass; literals
 * are what hit. db_stmts_free before the connection closes.
 */
#define DB_STMTS 32
typedef struct db_stmts {
	struct {
		const char *sql; /* the caller's pointer: compared, not read */
		sqlite3_stmt *st;
	} slot[DB_STMTS];
} db_stmts;
/* An SQLite result code; *st is ready to bind and step. */
int db_prepare(sqlite3 *db, db_stmts *c, const char *sql,
    sqlite3_stmt **st);
/* Done with st: reset (and bindings cleared) when kept, else finalized. */
void db_release(db_stmts *c, sqlite3_stmt *st);
void db_stmts_free(db_stmts *c);

/* A time column (ms) as a JSON string, or null when the column is NULL. */
jv db_column_time(sqlite3_stmt *st, int col);

#endif
