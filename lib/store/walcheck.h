/*
 * walcheck.h — a file's WAL read as SQLite's recovery reads it, to find
 * commits no reader will see.
 *
 * SQLite reads a -wal up to its first frame whose checksum (or salt) does
 * not follow from the frames before it, and takes what precedes it as
 * the WAL: every frame after a damaged one is dropped in silence, and
 * PRAGMA quick_check passes the older file it then sees. A reader that
 * finds the -shm of a writer that saw those frames reads them through
 * the -shm instead. So two readers of one file can disagree, and one of
 * them is missing commits (a subscriber's seen ids, an outbox's events).
 *
 * wal_check reads the -wal and -shm beside a file with plain reads (no
 * SQLite, nothing opened for writing, nothing created) and says when:
 *   - the -shm, written by a writer for this very WAL (its salts), counts
 *     more committed frames than the checksums allow; or
 *   - a commit frame of this WAL (its salts) lies after the first broken
 *     frame.
 * A WAL whose last, unsynced transaction was torn by a power cut is not
 * flagged: nothing of it was committed, and nothing follows it.
 */
#ifndef BAKERY_WALCHECK_H
#define BAKERY_WALCHECK_H

#include <stddef.h>

/* 0 when path's WAL (path-wal) holds no commit a reader would drop, or
 * there is none; 1 with the reason in why (of size bytes) when it does. */
int wal_check(const char *path, char *why, size_t size);

#endif
