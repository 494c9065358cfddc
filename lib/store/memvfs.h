/*
 * memvfs.h — an SQLite VFS whose database files are buffers of this
 * process. Storage layer: it knows SQLite and nothing of bakery above it.
 *
 * A connection on a buffer keeps its parsed schema and its prepared
 * statements while the buffer's bytes are replaced under it between
 * transactions: at its next transaction SQLite sees the header's change
 * counter differ from the one it cached, drops its cached pages, and
 * keeps the schema when the schema cookie is the one it parsed (as with a
 * file another connection wrote). So one connection serves file after
 * file of one schema, each given the same image, without reading that
 * schema again (birth_copy.c).
 *
 * Only the main database file is a buffer: a connection on one must use
 * locking_mode=NORMAL (EXCLUSIVE would keep its cache over a replaced
 * buffer) and journal_mode=MEMORY or OFF (no journal on disk). Temporary
 * files go to the "unix" VFS. Not thread-safe: one thread of a process
 * uses these buffers.
 */
#ifndef BAKERY_MEMVFS_H
#define BAKERY_MEMVFS_H

#include <sqlite3.h>

typedef struct memvfs_buf memvfs_buf;

/* A connection on a new buffer holding size bytes of image (copied), or
 * an SQLite code (*db may need sqlite3_close all the same). */
int memvfs_open(const unsigned char *image, sqlite3_int64 size,
    sqlite3 **db, memvfs_buf **buf);
/* Replaces the buffer's bytes with size bytes of image: only between its
 * connection's transactions. Given the image it was given last, and the
 * image unchanged since, it copies back only the 4 KiB blocks written
 * since. */
void memvfs_set(memvfs_buf *buf, const unsigned char *image,
    sqlite3_int64 size);
/* Writes n bytes at off, as a write of its connection would. */
void memvfs_patch(memvfs_buf *buf, sqlite3_int64 off, const void *bytes,
    sqlite3_int64 n);
/* The buffer's bytes, as the last commit left them. */
const unsigned char *memvfs_bytes(const memvfs_buf *buf,
    sqlite3_int64 *size);
/* Frees the buffer after its connection was closed. */
void memvfs_free(memvfs_buf *buf);

#endif
