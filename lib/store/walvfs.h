/*
 * walvfs.h — the VFS every bakery connection opens through: SQLite's
 * "unix" one, but for how a WAL file is opened (walvfs.c).
 */
#ifndef BAKERY_WALVFS_H
#define BAKERY_WALVFS_H

/* Registers it as SQLite's default, once per process, before the first
 * open (db_open and db_open_readonly call it); over the test VFS, which
 * it registers first, so that a sync it leaves out is none there. */
void walvfs_register(void);

/* path, a file in WAL, was just made whole by this process with a new,
 * empty -wal (birth_make_whole): recorded as it is. */
void walvfs_made(const char *path);
/* 1 when path is a file this process made and nothing was written to
 * since (no checkpoint: its -wal, the one made with it, never started
 * over). */
int walvfs_as_made(const char *path);

#endif
