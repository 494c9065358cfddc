/*
 * walvfs.h — the VFS every bakery connection opens through: SQLite's
 * "unix" one, but for how a WAL file is opened (walvfs.c).
 */
#ifndef BAKERY_WALVFS_H
#define BAKERY_WALVFS_H

/* Registers it as SQLite's default, once per process, before the first
 * open (db_open and db_open_readonly call it; before the test VFS,
 * which then wraps it). */
void walvfs_register(void);

#endif
