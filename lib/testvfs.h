/*
 * testvfs.h — SQLite VFSes that fail on purpose, registered only when a
 * test asks for one through the environment.
 *
 * BAKERY_FAIL_WRITE_AT=N fails the process's N-th SQLite write (SQLITE_FULL)
 * or sync (SQLITE_IOERR_FSYNC), any file; N+ fails that one and every later
 * one. See docs/reliability.md.
 */
#ifndef BAKERY_TESTVFS_H
#define BAKERY_TESTVFS_H

/* Registers the failing VFS as SQLite's default when the environment asks
 * for it; once per process, before the first open (store_open calls it). */
void testvfs_register(void);

#endif
