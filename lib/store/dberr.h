/*
 * dberr.h — the exit code of a failed SQLite or file operation, and its
 * message: for every file of the store, the capture's included.
 */
#ifndef BAKERY_DBERR_H
#define BAKERY_DBERR_H

#include <sqlite3.h>

/* The exit code for a failed file operation's errno: full disk or I/O
 * 74, permission or a read-only file system 77, else 73. */
int db_errno_code(int err);
/* Records "WHAT: sqlite's message" with the exit code for rc. */
int db_fail(sqlite3 *db, int rc, const char *what);

#endif
