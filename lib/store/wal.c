/*
 * wal.c — the journal mode, and the files in WAL: their WAL kept,
 * checkpointed by policy (a file in WAL is made by birth.c).
 */
#define _GNU_SOURCE
#include "wal.h"
#include "ctx.h"
#include "sql.h"

#include <stdint.h>

int
wal_reset_fixed(int version)
{
	/* Fixed in 3.51.3, and backported to 3.44.6 and 3.50.7. */
	return version >= 3051003 ||
	    (version >= 3044006 && version < 3045000) ||
	    (version >= 3050007 && version < 3051000);
}

const char *
wal_journal_mode(void)
{
	/* A library with the WAL-reset race gets a rollback journal, which
	 * has no WAL to reset. */
	return wal_reset_fixed(sqlite3_libversion_number()) ? "wal"
								  : "truncate";
}

/*
 * WAL in short processes (docs/design.md, "WAL"). A file in WAL keeps its
 * -wal and -shm for good (SQLITE_FCNTL_PERSIST_WAL on every connection
 * that may write), so a reader that comes later finds them and creates
 * nothing (db_open_readonly), and a writer finds its WAL and syncs no
 * folder for it (walvfs.c). No connection checkpoints as it closes
 * (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): a process that wrote one
 * transaction would otherwise pay a checkpoint for it (the WAL and the
 * file synced). Instead a commit that leaves WAL_PAGES frames or more
 * in the WAL checkpoints it, whoever commits (a command, a consumer, a
 * relay; wal_full), with TRUNCATE: the WAL goes back to 0 bytes (PASSIVE
 * for a connection that wrote as much itself: see wal_full). A PASSIVE
 * checkpoint would not do in short processes: the next process to open
 * the file, alone, rebuilds the WAL's index from the file and counts every
 * frame as not copied yet (recovery sets nBackfill to 0), so the WAL
 * would never start over and would grow for ever, each process
 * checkpointing it all again. TRUNCATE waits for readers to leave the WAL
 * (at most WAL_CKPT_WAIT_MS); if one stays, it copies what it can as a
 * PASSIVE one would, and the next commit tries again. So a WAL stays
 * about WAL_PAGES pages (plus one transaction) long, and a process
 * that opens a file alone reads that much at most to rebuild its index.
 * Harmless in a rollback journal.
 */
#define WAL_PAGES 128
#define WAL_CKPT_WAIT_MS 20

static int
ckpt_wait(void *unused, int tries)
{
	(void)unused;
	if (tries >= WAL_CKPT_WAIT_MS)
		return 0;
	sqlite3_sleep(1);
	return 1;
}

static int
wal_full(void *timeout_ms, sqlite3 *db, const char *name, int frames)
{
	if (frames < WAL_PAGES)
		return SQLITE_OK;
	/* A connection that wrote that much itself is a long-lived writer
	 * (a consumer, a relay that follows, B1): a PASSIVE checkpoint
	 * lets its next commit start the WAL over in place, where TRUNCATE
	 * would make every commit after it grow the file again (a sync
	 * that must also write the file's size: B1 ran 4 to 8 times
	 * slower). Past twice the bound, TRUNCATE all the same. */
	int written = 0, high = 0;
	sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &written, &high, 0);
	int mode = written >= WAL_PAGES && frames < 2 * WAL_PAGES
	    ? SQLITE_CHECKPOINT_PASSIVE : SQLITE_CHECKPOINT_TRUNCATE;
	sqlite3_busy_handler(db, ckpt_wait, NULL);
	sqlite3_wal_checkpoint_v2(db, name, mode, NULL, NULL);
	sqlite3_busy_handler(db, db_busy_wait, timeout_ms);
	return SQLITE_OK; /* the commit stands whatever the checkpoint did */
}

void
wal_keep(bakery_ctx *ctx, sqlite3 *db)
{
	int on = 1;
	sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	sqlite3_wal_hook(db, wal_full, (void *)(intptr_t)ctx->busy_timeout_ms);
}

