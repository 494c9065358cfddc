/*
 * sql.h — the SQLite calls every file of the store makes, below the
 * opening of a file (database.h): a failure's exit code, the busy wait,
 * transactions, several statements in one, and the statement cache.
 *
 * Promises: every write transaction is BEGIN IMMEDIATE; a failure is
 * recorded as "WHAT: sqlite's message" with the exit code its SQLite or
 * errno code means.
 */
#ifndef BAKERY_SQL_H
#define BAKERY_SQL_H

#include <jv.h>
#include <sqlite3.h>

#include "dberr.h"

/* The busy handler (timeout_ms the timeout itself, as a pointer): tries
 * again every millisecond for the first 100, then every 5, up to it. */
int db_busy_wait(void *timeout_ms, int tries);

int db_begin(sqlite3 *db);     /* BEGIN IMMEDIATE */
int db_commit(sqlite3 *db);
void db_rollback(sqlite3 *db); /* safe when no transaction is open */
/* Steps st, a write, once (reset after): in the caller's transaction, or,
 * outside one, in one of its own through db_commit, so that a replicated
 * home records it (capture.h; a write in autocommit is refused there).
 * 0, or db_fail's "WHAT: sqlite's message". */
int db_write_step(sqlite3 *db, sqlite3_stmt *st, const char *what);
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
/* The one copy of text kept for the process, equal texts one address:
 * SQL made at run time (a list's name put in) then hits the statements
 * kept. Only for texts of a fixed few (each is kept for ever). */
const char *db_intern(const char *text);
/* An SQLite result code; *st is ready to bind and step. */
int db_prepare(sqlite3 *db, db_stmts *c, const char *sql,
    sqlite3_stmt **st);
/* Done with st: reset (and bindings cleared) when kept, else finalized. */
void db_release(db_stmts *c, sqlite3_stmt *st);
void db_stmts_free(db_stmts *c);

/* A time column (ms) as a JSON string, or null when the column is NULL. */
jv db_column_time(sqlite3_stmt *st, int col);

#endif
