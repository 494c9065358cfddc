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
 * Owns: the -wal and -shm kept for good and the checkpoint policy
 * (docs/design.md, "WAL"). A new file in WAL is made by birth.h.
 */
#ifndef BAKERY_WAL_H
#define BAKERY_WAL_H

#include <sqlite3.h>

typedef struct bakery_ctx bakery_ctx;

/* Whether SQLite version (as sqlite3_libversion_number()) has the fix. */
int wal_reset_fixed(int version);
/* "truncate" or "wal", chosen from sqlite3_libversion_number(). */
const char *wal_journal_mode(void);
/* A connection that may write: its -wal and -shm kept, no checkpoint on
 * close, a checkpoint by policy after a commit that leaves the WAL long. */
void wal_keep(bakery_ctx *ctx, sqlite3 *db);

#endif
