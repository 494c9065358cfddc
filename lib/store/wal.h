/*
 * wal.h — the journal mode, and files in WAL.
 *
 * Journal mode. SQLite 3.7.0 to 3.51.2 carry a WAL-reset race that can
 * corrupt a database when a checkpoint and a commit that resets the WAL
 * race (fixed in 3.51.3, backported to 3.44.6 and 3.50.7). On an affected
 * library (Debian 12 ships 3.40.1) bakery uses a rollback journal
 * (journal_mode=TRUNCATE), which has no WAL; on a fixed one it uses WAL.
 * See docs/adr/0002-journal-mode.md.
 *
 * Owns: a new file in WAL made whole before it has its name (wal.c, "A
 * new file in WAL"), the -wal and -shm kept for good, the checkpoint
 * policy (docs/design.md, "WAL"), and the removal of a file this process
 * made whose first transaction failed.
 */
#ifndef BAKERY_WAL_H
#define BAKERY_WAL_H

#include <sqlite3.h>

#include "schema.h"

typedef struct bakery_ctx bakery_ctx;

/* Whether SQLite version (as sqlite3_libversion_number()) has the fix. */
int wal_reset_fixed(int version);
/* "truncate" or "wal", chosen from sqlite3_libversion_number(). */
const char *wal_journal_mode(void);
/* Makes path whole with schema, under a temporary name renamed into
 * place beside an empty -wal; *made is set when this call made it (not
 * when another maker won). */
int wal_make_file(const char *path, const schema_def *schema,
    int *made);
/* A new object file made whole with its first transaction (wal.c, "A
 * new file and its first transaction"). */
typedef struct wal_new wal_new;
/* Takes the making of path: its folder must exist. *nf is NULL when path
 * exists (made meanwhile): open it as usual. Else *db is a connection on
 * a private copy of schema's image beside path, a transaction begun in
 * it, and nothing is at path until wal_new_settle. Another maker of path
 * waits (up to ctx's busy timeout, then EX_TEMPFAIL) until this one has
 * settled or ended. */
int wal_new_begin(bakery_ctx *ctx, const char *path, const schema_def *schema,
    wal_new **nf, sqlite3 **db);
/* After a commit on *db: closes *db (its statements finalized first) and
 * gives the copy, synced, path's name beside an empty -wal, the folder
 * synced once for both. Then path holds the committed transaction. */
int wal_new_settle(wal_new *nf, sqlite3 **db);
/*
 * The making's lock of path, taken by one who makes nothing: the alarm run
 * that finds an entry whose object has no file. A maker holds it from
 * before it writes its alarm's index entry until its file has its name,
 * so while it is held here no maker is between the two, and none starts.
 * 0 when path does not exist: *nf holds the lock until wal_new_end (NULL
 * when path's folder does not exist either: no maker is past its lock
 * there). WAL_NEW_MADE when path exists (made meanwhile, or, in a
 * rollback journal, being made: its file is created first), and
 * WAL_NEW_MAKING when a maker holds the lock: nothing held. Or a failure.
 * Never waits.
 */
enum { WAL_NEW_MADE = 1, WAL_NEW_MAKING = 2 };
int wal_new_hold(const char *path, wal_new **nf);
/* Ends the making (settled or given up, or held by wal_new_hold): a copy
 * not settled is removed and the making let go. */
void wal_new_end(wal_new *nf);
/* A connection that may write: its -wal and -shm kept, no checkpoint on
 * close, a checkpoint by policy after a commit that leaves the WAL long. */
void wal_keep(bakery_ctx *ctx, sqlite3 *db);
/* Removes path, and its journals, when it is still empty (in WAL: when
 * nothing was ever committed to its -wal, the file holding its schema
 * alone): a file made by this process whose first transaction failed is
 * not left to look like an object. Checked and removed under SQLite's exclusive lock on it;
 * locked by another: left alone. Any open transaction on db ends. */
void wal_drop_unborn(sqlite3 *db, const char *path);

#endif
