/*
 * testvfs.h — a SQLite VFS that fails or loses power on purpose, registered
 * only when a test asks for it through the environment.
 *
 * BAKERY_FAIL_SYNC_OF=TEXT fails bakery's own syncs (testvfs_synced) of
 * paths containing TEXT.
 * BAKERY_FAIL_WRITE_AT=N fails the process's N-th SQLite write (SQLITE_FULL)
 * or sync (SQLITE_IOERR_FSYNC), any file; N+ fails that one and every later
 * one. BAKERY_POWERCUT_AT=N|exit|POINT[:N] loses every unsynced change at
 * the N-th sync, at exit or at a crash point, then SIGKILLs the process
 * (testvfs.c says what is modelled). See docs/reliability.md.
 */
#ifndef BAKERY_TESTVFS_H
#define BAKERY_TESTVFS_H

/* Registers the failing VFS as SQLite's default when the environment asks
 * for it; once per process, before the first open (db_open calls it). */
void testvfs_register(void);

/* A file bakery created itself, outside SQLite: removed at a power cut
 * unless its folder was synced since. Nothing unless a cut is armed. */
void testvfs_created(const char *path);

/* bakery syncs a file it wrote outside SQLite (folder: path's folder):
 * the power may go first, as at any sync; then what was written to it
 * (or made in the folder) is durable. Nothing unless a cut is armed.
 * 1 when the sync is to fail (BAKERY_FAIL_SYNC_OF=TEXT: the syncs of
 * paths containing TEXT, a disk failing there), its caller failing as if
 * fsync had failed with EIO. */
int testvfs_synced(const char *path, int folder);

/* bakery writes a file outside SQLite (a new file's copy): 1 when the
 * write is to fail, as BAKERY_FAIL_WRITE_AT counts writes (its caller
 * failing as if write had failed with ENOSPC). */
int testvfs_wrote(void);

/* Cuts the power now (a crash point named by BAKERY_POWERCUT_AT); returns
 * only when no cut is armed. */
void testvfs_cut_now(void);

#endif
