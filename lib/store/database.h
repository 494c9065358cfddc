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
#include "sql.h"

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
/* relaxed=1: the connection's next commits run at synchronous=NORMAL,
 * for a commit whose loss on a power cut loses and doubles nothing (the
 * work it records is done again, and absorbed: docs/design.md, "WAL");
 * relaxed=0: back to FULL. In WAL only: a rollback journal at NORMAL
 * may corrupt a file on an old filesystem, and stays FULL. Nothing with
 * BAKERY_SYNC=normal, where every commit is NORMAL already. */
void db_relaxed(bakery_ctx *ctx, sqlite3 *db, int relaxed);
/* The sandbox's own file (HOME/sandboxes/SANDBOX/sandbox.db, NULL: the
 * context's sandbox) with its schema, as db_open opens any. */
int db_open_sandbox(bakery_ctx *ctx, const char *sandbox,
    enum db_open_mode mode, sqlite3 **db);

#endif
