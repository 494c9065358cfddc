/*
 * memvfs.c — an SQLite VFS whose database files are buffers of this
 * process (memvfs.h). Storage layer: it knows SQLite and nothing of
 * bakery above it.
 *
 * A buffer is found by its name, "memvfs:N" (N its address), given to
 * sqlite3_open_v2 with this VFS; the name reaches xOpen as it is. Locks
 * are nothing (one connection a buffer), a sync is nothing (a buffer is
 * made durable by whoever writes it to a file), and a journal beside a
 * buffer never exists (xAccess).
 */
#include "memvfs.h"
#include "../base/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The blocks written since the buffer was last given its image: a
 * buffer given the same image again gets those back alone (a new file's
 * first commit writes a few pages of its image's many). */
#define BLOCK 4096
#define BLOCKS 64

struct memvfs_buf {
	unsigned char *data;
	sqlite3_int64 size, cap;
	const unsigned char *image; /* the last one given, NULL: unknown */
	sqlite3_int64 image_size;
	uint64_t dirty; /* a bit a block written since */
};

typedef struct {
	sqlite3_file base;
	memvfs_buf *buf;
} mem_file;

#define PREFIX "memvfs:"

static sqlite3_vfs mem_vfs;

static void
grow(memvfs_buf *b, sqlite3_int64 size)
{
	if (size <= b->cap)
		return;
	sqlite3_int64 cap = b->cap ? b->cap : 4096;
	while (cap < size)
		cap *= 2;
	b->data = bakery_xrealloc(b->data, (size_t)cap);
	b->cap = cap;
}

static void
mark(memvfs_buf *b, sqlite3_int64 off, sqlite3_int64 n)
{
	if (n <= 0)
		return;
	sqlite3_int64 last = (off + n - 1) / BLOCK;
	if (last >= BLOCKS) {
		b->image = NULL; /* beyond the map: all of it again */
		return;
	}
	for (sqlite3_int64 i = off / BLOCK; i <= last; i++)
		b->dirty |= (uint64_t)1 << i;
}

static int
mem_close(sqlite3_file *f)
{
	(void)f;
	return SQLITE_OK;
}

static int
mem_read(sqlite3_file *f, void *out, int n, sqlite3_int64 off)
{
	memvfs_buf *b = ((mem_file *)f)->buf;
	sqlite3_int64 have = off < b->size ? b->size - off : 0;
	if (have > n)
		have = n;
	if (have > 0)
		memcpy(out, b->data + off, (size_t)have);
	if (have == n)
		return SQLITE_OK;
	memset((char *)out + have, 0, (size_t)(n - have));
	return SQLITE_IOERR_SHORT_READ;
}

static int
mem_write(sqlite3_file *f, const void *in, int n, sqlite3_int64 off)
{
	memvfs_buf *b = ((mem_file *)f)->buf;
	sqlite3_int64 from = off < b->size ? off : b->size; /* a gap zeroed */
	grow(b, off + n);
	mark(b, from, off + n - from);
	if (off > b->size)
		memset(b->data + b->size, 0, (size_t)(off - b->size));
	memcpy(b->data + off, in, (size_t)n);
	if (off + n > b->size)
		b->size = off + n;
	return SQLITE_OK;
}

static int
mem_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	memvfs_buf *b = ((mem_file *)f)->buf;
	if (size < b->size)
		b->size = size;
	return SQLITE_OK;
}

static int
mem_sync(sqlite3_file *f, int flags)
{
	(void)f, (void)flags;
	return SQLITE_OK;
}

static int
mem_size(sqlite3_file *f, sqlite3_int64 *size)
{
	*size = ((mem_file *)f)->buf->size;
	return SQLITE_OK;
}

static int
mem_lock(sqlite3_file *f, int level)
{
	(void)f, (void)level;
	return SQLITE_OK;
}

static int
mem_reserved(sqlite3_file *f, int *out)
{
	(void)f;
	*out = 0;
	return SQLITE_OK;
}

static int
mem_control(sqlite3_file *f, int op, void *arg)
{
	(void)f, (void)op, (void)arg;
	return SQLITE_NOTFOUND;
}

static int
mem_sector(sqlite3_file *f)
{
	(void)f;
	return 512;
}

static int
mem_caps(sqlite3_file *f)
{
	(void)f;
	return SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

static const sqlite3_io_methods mem_methods = {
	.iVersion = 1,
	.xClose = mem_close,
	.xRead = mem_read,
	.xWrite = mem_write,
	.xTruncate = mem_truncate,
	.xSync = mem_sync,
	.xFileSize = mem_size,
	.xLock = mem_lock,
	.xUnlock = mem_lock,
	.xCheckReservedLock = mem_reserved,
	.xFileControl = mem_control,
	.xSectorSize = mem_sector,
	.xDeviceCharacteristics = mem_caps,
};

static int
is_ours(const char *name)
{
	return name && strncmp(name, PREFIX, sizeof PREFIX - 1) == 0;
}

static int
mem_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out_flags)
{
	sqlite3_vfs *real = vfs->pAppData;
	if (!(flags & SQLITE_OPEN_MAIN_DB))
		return real->xOpen(real, name, f, flags, out_flags);
	void *p = NULL;
	if (!is_ours(name) || sscanf(name + sizeof PREFIX - 1, "%p", &p) != 1
	    || !p)
		return SQLITE_CANTOPEN;
	((mem_file *)f)->buf = p;
	f->pMethods = &mem_methods;
	if (out_flags)
		*out_flags = flags;
	return SQLITE_OK;
}

static int
mem_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	if (is_ours(name)) {
		*out = 0; /* no journal, WAL or -shm beside a buffer */
		return SQLITE_OK;
	}
	return real->xAccess(real, name, flags, out);
}

static int
mem_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	if (!is_ours(name))
		return real->xFullPathname(real, name, n, out);
	if ((int)strlen(name) >= n)
		return SQLITE_CANTOPEN;
	strcpy(out, name);
	return SQLITE_OK;
}

static sqlite3_vfs *
mem_register(void)
{
	if (mem_vfs.zName)
		return &mem_vfs;
	sqlite3_vfs *real = sqlite3_vfs_find("unix");
	if (!real)
		return NULL;
	mem_vfs = *real;
	if (mem_vfs.szOsFile < (int)sizeof(mem_file))
		mem_vfs.szOsFile = (int)sizeof(mem_file);
	mem_vfs.zName = "bakery-mem";
	mem_vfs.pAppData = real;
	mem_vfs.xOpen = mem_open;
	mem_vfs.xAccess = mem_access;
	mem_vfs.xFullPathname = mem_full_pathname;
	mem_vfs.pNext = NULL;
	sqlite3_vfs_register(&mem_vfs, 0);
	return &mem_vfs;
}

int
memvfs_open(const unsigned char *image, sqlite3_int64 size, sqlite3 **db,
    memvfs_buf **buf)
{
	*db = NULL;
	*buf = NULL;
	if (!mem_register())
		return SQLITE_ERROR;
	memvfs_buf *b = bakery_xmalloc(sizeof *b);
	memset(b, 0, sizeof *b);
	memvfs_set(b, image, size);
	char name[64];
	snprintf(name, sizeof name, PREFIX "%p", (void *)b);
	int rc = sqlite3_open_v2(name, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, mem_vfs.zName);
	*buf = b;
	return rc;
}

void
memvfs_set(memvfs_buf *buf, const unsigned char *image, sqlite3_int64 size)
{
	grow(buf, size);
	if (buf->image == image && buf->image_size == size) {
		for (sqlite3_int64 i = 0; i < BLOCKS && buf->dirty; i++) {
			if (!(buf->dirty & ((uint64_t)1 << i)))
				continue;
			buf->dirty &= ~((uint64_t)1 << i);
			sqlite3_int64 off = i * BLOCK, n = BLOCK;
			if (off + n > size)
				n = size > off ? size - off : 0;
			memcpy(buf->data + off, image + off, (size_t)n);
		}
	} else {
		memcpy(buf->data, image, (size_t)size);
	}
	buf->size = size;
	buf->image = image;
	buf->image_size = size;
	buf->dirty = 0;
}

void
memvfs_patch(memvfs_buf *buf, sqlite3_int64 off, const void *bytes,
    sqlite3_int64 n)
{
	grow(buf, off + n);
	mark(buf, off, n);
	memcpy(buf->data + off, bytes, (size_t)n);
	if (off + n > buf->size)
		buf->size = off + n;
}

const unsigned char *
memvfs_bytes(const memvfs_buf *buf, sqlite3_int64 *size)
{
	*size = buf->size;
	return buf->data;
}

void
memvfs_free(memvfs_buf *buf)
{
	if (!buf)
		return;
	free(buf->data);
	free(buf);
}
