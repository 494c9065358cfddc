/*
 * keep.h — connections kept open for the next use, in a long-running
 * program.
 *
 * Opening an object's file costs more than the work done in it: SQLite
 * reads and parses the file's schema, and every statement is prepared
 * again. A consumer applies event after event to the same few objects, so
 * a connection it closes is kept here instead, with its prepared
 * statements (db_stmts), and handed back on the next open of the same
 * file.
 *
 * Owns: the kept connections, at most max of them; the least recently
 * used is closed first when one more comes, and keep_idle closes those not
 * used for idle_ms (a long-running loop calls it when it idles).
 *
 * Promises: a connection is handed back only while the file at its path
 * is still the file it has open (the same device and inode, compared at
 * every keep_take; the open connection keeps the inode from being used
 * again), so a file moved aside, removed or replaced is never written
 * through a kept connection: the entry is closed and the caller opens the
 * path afresh. A kept connection holds no transaction and no lock of the
 * caller's (the sandbox's lock is the caller's to take and give back).
 */
#ifndef BAKERY_KEEP_H
#define BAKERY_KEEP_H

#include <sqlite3.h>

#include "sql.h"

typedef struct keep_pool keep_pool;

#define KEEP_MAX 64           /* connections kept at most */
#define KEEP_IDLE_MS 30000    /* closed when not used this long */

keep_pool *keep_new(int max, long idle_ms);
/* Closes every connection kept; NULL does nothing. */
void keep_free(keep_pool *k);
/* 1, *db and *stmts (its cache, moved out of the pool) when a connection
 * to the file at path is kept and the file is still there; else 0, and an
 * entry for a file gone or replaced is closed. */
int keep_take(keep_pool *k, const char *path, sqlite3 **db, db_stmts *stmts);
/* Keeps db (outside any transaction) and its statements for the next
 * keep_take of path; the pool owns both from here, and closes them at
 * once when the file at path cannot be looked at. */
void keep_put(keep_pool *k, const char *path, sqlite3 *db, db_stmts *stmts);
/* Closes the connections not used for the pool's idle time. */
void keep_idle(keep_pool *k);
/* Connections kept now. */
int keep_count(const keep_pool *k);

#endif
