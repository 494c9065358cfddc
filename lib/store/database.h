/*
 * database.h — one SQLite file of the home, opened safely.
 *
 * Owns: opening a file that is there (migrated, or read without
 * writing; one that is not is made by birth.h), the
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

/* Opens path, a file that is there, with schema (a missing one is made
 * by birth.h): EX_NOINPUT if missing or empty (no schema: a creation
 * that failed or is under way), EX_DATAERR when it is not SQLite's, and a
 * file of an older schema is migrated. In a context that only looks
 * (ctx->look_only): read-only, as db_open_readonly, when the file has the
 * current schema. A symlink or a FIFO at path is EX_CONFIG, here and in
 * the readers: never followed, never waited on (SQLITE_OPEN_NOFOLLOW).
 * Test hook: BAKERY_FAIL_WRITE_AT (lib/store/testvfs.h) is registered
 * here, before the first open. */
int db_open(bakery_ctx *ctx, const char *path, const schema_def *schema,
    sqlite3 **db);
/* For birth.h: opens path, which its maker made or found, its schema
 * given when it has none (keep_open: in a write transaction left open,
 * sqlite3_get_autocommit() 0, so that the caller's first change commits
 * with it). On a failure *db is left to the caller, who removes a file it
 * made (the connection's lock is how) and closes it. */
int db_open_making(bakery_ctx *ctx, const char *path,
    const schema_def *schema, int keep_open, sqlite3 **db);
/* EX_CONFIG when something is at path that is not a regular file (a
 * symlink, which SQLite would follow; a FIFO, whose open would hang). */
int db_refuse_odd_file(const char *path);
/* Opens an existing file for reading only, for tools that look and must
 * not touch (bakery-status, bakery-trace): nothing is created, no journal
 * mode is set, no schema is migrated, and the connection is query_only.
 * EX_NOINPUT when the file is missing or has no schema yet (a file being
 * created); EX_CONFIG when its schema version is not between
 * schema->read_from and schema->count (one no release wrote is named so,
 * schema_refuse_unreleased). */
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
#endif
