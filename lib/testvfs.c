/*
 * testvfs.c — SQLite VFSes that fail on purpose, for the tests of what a
 * full or failing disk does (docs/reliability.md). Storage layer: it knows
 * SQLite and nothing of bakery above it.
 */
#include "testvfs.h"

#include <sqlite3.h>
#include <stdlib.h>

/*
 * A test hook: BAKERY_FAIL_WRITE_AT=N makes the N-th write or sync of this
 * process (xWrite or xSync, any file) fail, SQLITE_FULL for a write and
 * SQLITE_IOERR_FSYNC for a sync, as a full or failing disk would;
 * BAKERY_FAIL_WRITE_AT=N+ fails the N-th and every one after it. A VFS
 * wrapped around the default one, registered as the default before the
 * first open; without the variable it is never registered.
 */
typedef struct fail_file {
	sqlite3_file base;
	sqlite3_file *real; /* follows this struct in the same allocation */
} fail_file;

static sqlite3_vfs fail_vfs;
static sqlite3_io_methods fail_methods;
static long fail_at, fail_count;
static int fail_sticky;

#define REAL(f) (((fail_file *)(f))->real)

static int
fail_now(void)
{
	fail_count++;
	return fail_count == fail_at || (fail_sticky && fail_count > fail_at);
}

static int fail_close(sqlite3_file *f)
{ return REAL(f)->pMethods->xClose(REAL(f)); }
static int fail_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{ return REAL(f)->pMethods->xRead(REAL(f), buf, n, off); }
static int
fail_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	if (fail_now())
		return SQLITE_FULL;
	return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}
static int fail_truncate(sqlite3_file *f, sqlite3_int64 size)
{ return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int
fail_sync(sqlite3_file *f, int flags)
{
	if (fail_now())
		return SQLITE_IOERR_FSYNC;
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int fail_size(sqlite3_file *f, sqlite3_int64 *size)
{ return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int fail_lock(sqlite3_file *f, int level)
{ return REAL(f)->pMethods->xLock(REAL(f), level); }
static int fail_unlock(sqlite3_file *f, int level)
{ return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int fail_reserved(sqlite3_file *f, int *out)
{ return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int fail_control(sqlite3_file *f, int op, void *arg)
{ return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int fail_sector(sqlite3_file *f)
{ return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int fail_device(sqlite3_file *f)
{ return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int fail_shm_map(sqlite3_file *f, int i, int size, int extend,
    void volatile **p)
{ return REAL(f)->pMethods->xShmMap(REAL(f), i, size, extend, p); }
static int fail_shm_lock(sqlite3_file *f, int off, int n, int flags)
{ return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags); }
static void fail_shm_barrier(sqlite3_file *f)
{ REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int fail_shm_unmap(sqlite3_file *f, int del)
{ return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
static int fail_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{ return REAL(f)->pMethods->xFetch(REAL(f), off, n, p); }
static int fail_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{ return REAL(f)->pMethods->xUnfetch(REAL(f), off, p); }

static int
fail_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out_flags)
{
	sqlite3_vfs *real = vfs->pAppData;
	fail_file *ff = (fail_file *)f;
	ff->real = (sqlite3_file *)(ff + 1);
	ff->base.pMethods = NULL;
	int rc = real->xOpen(real, name, ff->real, flags, out_flags);
	if (ff->real->pMethods) {
		/* Same version as the real file: SQLite checks iVersion
		 * before it calls the WAL and mmap methods. */
		fail_methods.iVersion = ff->real->pMethods->iVersion;
		ff->base.pMethods = &fail_methods;
	}
	return rc;
}

void
testvfs_register(void)
{
	static int done;
	const char *at = getenv("BAKERY_FAIL_WRITE_AT");
	if (done || !at || !*at)
		return;
	done = 1;
	char *end;
	fail_at = strtol(at, &end, 10);
	fail_sticky = *end == '+';
	if (fail_at < 1)
		return;
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);
	fail_vfs = *real;
	fail_vfs.zName = "bakery-fail-write";
	fail_vfs.pAppData = real;
	fail_vfs.szOsFile = (int)sizeof(fail_file) + real->szOsFile;
	fail_vfs.xOpen = fail_open;
	fail_methods = (sqlite3_io_methods){ 3, fail_close, fail_read,
		fail_write, fail_truncate, fail_sync, fail_size, fail_lock,
		fail_unlock, fail_reserved, fail_control, fail_sector,
		fail_device, fail_shm_map, fail_shm_lock, fail_shm_barrier,
		fail_shm_unmap, fail_fetch, fail_unfetch };
	sqlite3_vfs_register(&fail_vfs, 1);
}
