/*
 * testvfs.c — a SQLite VFS for the tests of what a full or failing disk and
 * a power cut do (docs/reliability.md). Storage layer: it knows SQLite and
 * nothing of bakery above it.
 *
 * One VFS wrapped around the default one, registered as the default before
 * the first open, and only when a variable below is set: without them it is
 * never registered and nothing here runs.
 *
 * BAKERY_FAIL_SYNC_OF=TEXT makes bakery's own syncs of the files it
 * writes outside SQLite (testvfs_synced) fail when their path contains
 * TEXT, as a disk failing there would (read without registering the VFS).
 *
 * BAKERY_FAIL_WRITE_AT=N makes the N-th write or sync of this process
 * (xWrite or xSync, any file) fail, SQLITE_FULL for a write and
 * SQLITE_IOERR_FSYNC for a sync, as a full or failing disk would;
 * BAKERY_FAIL_WRITE_AT=N+ fails the N-th and every one after it.
 *
 * BAKERY_POWERCUT_AT=N cuts the power at the N-th xSync of this process
 * (before that sync takes effect); =exit at the process's exit; =NAME or
 * NAME:N at a crash point (crash.h). Until then it remembers, per path (not
 * per handle: a file closed unsynced is rolled back too), every change since
 * that file's last sync — the old bytes under each write or truncation, and
 * the size before the first — and which files were created since their
 * folder's last sync. At the cut every unsynced change of every file is
 * undone, newest first, each file gets its old size back, and each file
 * created since its folder's last sync is removed; then the process dies
 * with SIGKILL. BAKERY_POWERCUT_MODE=torn: the last 512-byte sector each
 * file wrote is left torn, the first half of what that write put there new,
 * the rest old.
 * BAKERY_POWERCUT_LOG=FILE appends a line per sync ("sync K PATH") and the
 * cut ("cut K"); BAKERY_POWERCUT_SKIP=TEXT makes the syncs of paths
 * containing TEXT do nothing, a disk that lies (to prove a test can fail).
 *
 * Folders: as SQLite's unix VFS does, the first sync of a journal or WAL
 * opened with SQLITE_OPEN_CREATE syncs its folder, and so does xDelete with
 * dirSync; bakery creates its object files itself (db_open), and says so
 * with testvfs_created(), and syncs a file or folder of its own with
 * testvfs_synced() (a sync point as SQLite's are). A rename is modelled as
 * the new name created (testvfs_created) once what it names was synced.
 * Not modelled: folders made by mkdir, links and unlinks (a removal is
 * never undone), and what bakery writes outside SQLite before its sync.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "testvfs.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTOR 512

/* One file's changes since its last sync; undo records newest first. */
typedef struct pc_undo {
	struct pc_undo *next;
	sqlite3_int64 off;
	int n;
	unsigned char old[];
} pc_undo;

typedef struct pc_path {
	struct pc_path *next;
	char *path;
	sqlite3_int64 base_size; /* before the first unsynced change; -1 none */
	pc_undo *undo;
	sqlite3_int64 last_off, last_end; /* the last unsynced write; 0 none */
	int created;             /* its folder entry is not synced yet */
} pc_path;

typedef struct test_file {
	sqlite3_file base;
	pc_path *pc;             /* NULL unless a power cut is armed */
	int dirsync;             /* its first sync syncs the folder */
	sqlite3_file *real;      /* follows this struct in the same allocation */
} test_file;

static sqlite3_vfs test_vfs;
static sqlite3_io_methods test_methods;
static long fail_at, fail_count;
static int fail_sticky;
static int pc_on, pc_torn, pc_at_exit;
static long pc_at, pc_syncs;
static const char *pc_log, *pc_skip;
static pc_path *pc_paths;

#define REAL(f) (((test_file *)(f))->real)

static int
fail_now(void)
{
	if (fail_at < 1)
		return 0;
	fail_count++;
	return fail_count == fail_at || (fail_sticky && fail_count > fail_at);
}

static void
pc_note(const char *what, long k, const char *path)
{
	if (!pc_log)
		return;
	FILE *f = fopen(pc_log, "a");
	if (!f)
		return;
	fprintf(f, "%s %ld%s%s\n", what, k, path ? " " : "", path ? path : "");
	fclose(f);
}

/* The record of a path, made on first use; the key is its real path. */
static pc_path *
pc_find(const char *name)
{
	char *real = realpath(name, NULL);
	const char *key = real ? real : name;
	pc_path *p = pc_paths;
	while (p && strcmp(p->path, key) != 0)
		p = p->next;
	if (!p) {
		p = calloc(1, sizeof *p);
		if (!p || !(p->path = strdup(key)))
			abort();
		p->base_size = -1;
		p->next = pc_paths;
		pc_paths = p;
	}
	free(real);
	return p;
}

static void
pc_forget(pc_path *p)
{
	while (p->undo) {
		pc_undo *u = p->undo;
		p->undo = u->next;
		free(u);
	}
	p->base_size = -1;
	p->last_off = p->last_end = 0;
}

/* Its folder was synced: every entry made in it is durable. */
static void
pc_dir_synced(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return;
	size_t dl = (size_t)(slash - path);
	for (pc_path *p = pc_paths; p; p = p->next)
		if (strncmp(p->path, path, dl) == 0 && p->path[dl] == '/' &&
		    !strchr(p->path + dl + 1, '/'))
			p->created = 0;
}

/* Before a change at [off, end) (end < 0: a truncation to off): keeps the
 * size and the bytes the change will overwrite or cut off. */
static void
pc_remember(sqlite3_file *f, sqlite3_int64 off, sqlite3_int64 end)
{
	pc_path *p = ((test_file *)f)->pc;
	sqlite3_int64 size;
	if (!p || REAL(f)->pMethods->xFileSize(REAL(f), &size) != SQLITE_OK)
		return;
	if (p->base_size < 0)
		p->base_size = size;
	if (end < 0 || end > size)
		end = size;
	if (off >= end)
		return;
	int n = (int)(end - off);
	pc_undo *u = malloc(sizeof *u + (size_t)n);
	if (!u)
		abort();
	u->off = off;
	u->n = n;
	if (REAL(f)->pMethods->xRead(REAL(f), u->old, n, off) != SQLITE_OK) {
		free(u);
		return;
	}
	u->next = p->undo;
	p->undo = u;
}

/* The power goes: every unsynced change undone, then SIGKILL. */
static void
pc_cut(void)
{
	pc_note("cut", pc_syncs, NULL);
	for (pc_path *p = pc_paths; p; p = p->next) {
		if (p->base_size < 0 && !p->created)
			continue;
		int fd = open(p->path, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			/* Torn: the first half of what the last write put
			 * in its last sector survives. */
			unsigned char torn[SECTOR / 2];
			sqlite3_int64 at = ((p->last_end - 1) / SECTOR) * SECTOR;
			if (at < p->last_off)
				at = p->last_off;
			ssize_t got = pc_torn && p->last_end > 0
			    ? pread(fd, torn, (size_t)(p->last_end - at) / 2, at)
			    : 0;
			for (pc_undo *u = p->undo; u; u = u->next)
				if (pwrite(fd, u->old, (size_t)u->n, u->off) != u->n)
					break;
			if (p->base_size >= 0 && ftruncate(fd, p->base_size) != 0)
				p->base_size = -1;
			if (got > 0 && pwrite(fd, torn, (size_t)got, at) != got)
				got = 0;
			close(fd);
		}
		if (p->created)
			unlink(p->path);
	}
	raise(SIGKILL);
}

static void
pc_exit(void)
{
	if (!pc_at_exit)
		return;
	fflush(NULL); /* the process finished: its answer was given */
	pc_cut();
}

static int test_close(sqlite3_file *f)
{ return REAL(f)->pMethods->xClose(REAL(f)); }
static int test_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{ return REAL(f)->pMethods->xRead(REAL(f), buf, n, off); }
static int
test_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	if (fail_now())
		return SQLITE_FULL;
	pc_remember(f, off, off + n);
	int rc = REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
	pc_path *p = ((test_file *)f)->pc;
	if (p && n > 0) {
		p->last_off = off;
		p->last_end = off + n;
	}
	return rc;
}
static int
test_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	pc_remember(f, size, -1);
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int
test_sync(sqlite3_file *f, int flags)
{
	test_file *tf = (test_file *)f;
	if (fail_now())
		return SQLITE_IOERR_FSYNC;
	if (!tf->pc)
		return REAL(f)->pMethods->xSync(REAL(f), flags);
	pc_syncs++;
	pc_note("sync", pc_syncs, tf->pc->path);
	if (pc_syncs == pc_at)
		pc_cut();
	if (pc_skip && strstr(tf->pc->path, pc_skip))
		return SQLITE_OK;
	int rc = REAL(f)->pMethods->xSync(REAL(f), flags);
	if (rc == SQLITE_OK) {
		pc_forget(tf->pc);
		if (tf->dirsync)
			pc_dir_synced(tf->pc->path);
		tf->dirsync = 0;
	}
	return rc;
}
static int test_size(sqlite3_file *f, sqlite3_int64 *size)
{ return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int test_lock(sqlite3_file *f, int level)
{ return REAL(f)->pMethods->xLock(REAL(f), level); }
static int test_unlock(sqlite3_file *f, int level)
{ return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int test_reserved(sqlite3_file *f, int *out)
{ return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int
test_control(sqlite3_file *f, int op, void *arg)
{
	if (op == SQLITE_FCNTL_SIZE_HINT) /* may grow the file */
		pc_remember(f, 0, 0);
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int test_sector(sqlite3_file *f)
{ return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int test_device(sqlite3_file *f)
{ return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int test_shm_map(sqlite3_file *f, int i, int size, int extend,
    void volatile **p)
{ return REAL(f)->pMethods->xShmMap(REAL(f), i, size, extend, p); }
static int test_shm_lock(sqlite3_file *f, int off, int n, int flags)
{ return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags); }
static void test_shm_barrier(sqlite3_file *f)
{ REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int test_shm_unmap(sqlite3_file *f, int del)
{ return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
static int test_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{ return REAL(f)->pMethods->xFetch(REAL(f), off, n, p); }
static int test_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{ return REAL(f)->pMethods->xUnfetch(REAL(f), off, p); }

static int
test_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out_flags)
{
	sqlite3_vfs *real = vfs->pAppData;
	test_file *tf = (test_file *)f;
	tf->real = (sqlite3_file *)(tf + 1);
	tf->base.pMethods = NULL;
	tf->pc = NULL;
	tf->dirsync = 0;
	int existed = name && access(name, F_OK) == 0;
	int rc = real->xOpen(real, name, tf->real, flags, out_flags);
	if (!tf->real->pMethods)
		return rc;
	/* Same version as the real file: SQLite checks iVersion before it
	 * calls the WAL and mmap methods. */
	test_methods.iVersion = tf->real->pMethods->iVersion;
	tf->base.pMethods = &test_methods;
	if (rc == SQLITE_OK && pc_on && name) {
		int create = (flags & SQLITE_OPEN_CREATE) != 0;
		tf->pc = pc_find(name);
		if (create && !existed) { /* a new file: nothing to undo */
			pc_forget(tf->pc);
			tf->pc->created = 1;
		}
		/* As unixOpen: a journal or WAL opened to create syncs its
		 * folder with its first sync. */
		tf->dirsync = create && (flags & (SQLITE_OPEN_MAIN_JOURNAL |
		    SQLITE_OPEN_SUPER_JOURNAL | SQLITE_OPEN_WAL));
	}
	return rc;
}

static int
test_delete(sqlite3_vfs *vfs, const char *name, int dirsync)
{
	sqlite3_vfs *real = vfs->pAppData;
	pc_path *p = pc_on ? pc_find(name) : NULL;
	int rc = real->xDelete(real, name, dirsync);
	if (p && rc == SQLITE_OK) {
		pc_forget(p); /* gone: its old contents are not brought back */
		p->created = 0;
		if (dirsync)
			pc_dir_synced(p->path);
	}
	return rc;
}

void
testvfs_created(const char *path)
{
	if (pc_on)
		pc_find(path)->created = 1;
}

int
testvfs_wrote(void)
{
	testvfs_register();
	return fail_now();
}

int
testvfs_synced(const char *path, int folder)
{
	static const char *fail_of;
	static int looked;
	if (!looked) {
		looked = 1;
		fail_of = getenv("BAKERY_FAIL_SYNC_OF");
		if (fail_of && !*fail_of)
			fail_of = NULL;
	}
	if (fail_of && strstr(path, fail_of))
		return 1;
	if (!pc_on)
		return 0;
	pc_syncs++;
	pc_note("sync", pc_syncs, path);
	if (pc_syncs == pc_at)
		pc_cut();
	if (pc_skip && strstr(path, pc_skip))
		return 0;
	if (folder)
		pc_dir_synced(pc_find(path)->path);
	else
		pc_forget(pc_find(path));
	return 0;
}

void
testvfs_cut_now(void)
{
	testvfs_register();
	if (pc_on)
		pc_cut();
}

void
testvfs_register(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	const char *at = getenv("BAKERY_FAIL_WRITE_AT");
	if (at && *at) {
		char *end;
		fail_at = strtol(at, &end, 10);
		fail_sticky = *end == '+';
	}
	const char *cut = getenv("BAKERY_POWERCUT_AT");
	pc_log = getenv("BAKERY_POWERCUT_LOG");
	if ((cut && *cut) || (pc_log && *pc_log)) {
		const char *mode = getenv("BAKERY_POWERCUT_MODE");
		pc_on = 1;
		pc_torn = mode && strcmp(mode, "torn") == 0;
		pc_skip = getenv("BAKERY_POWERCUT_SKIP");
		if (pc_skip && !*pc_skip)
			pc_skip = NULL;
		if (pc_log && !*pc_log)
			pc_log = NULL;
		if (cut && strcmp(cut, "exit") == 0)
			pc_at_exit = 1;
		else if (cut && *cut >= '1' && *cut <= '9')
			pc_at = strtol(cut, NULL, 10);
		atexit(pc_exit);
	}
	if (fail_at < 1 && !pc_on)
		return;
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);
	test_vfs = *real;
	test_vfs.zName = "bakery-test";
	test_vfs.pAppData = real;
	test_vfs.szOsFile = (int)sizeof(test_file) + real->szOsFile;
	test_vfs.xOpen = test_open;
	test_vfs.xDelete = test_delete;
	test_methods = (sqlite3_io_methods){ 3, test_close, test_read,
		test_write, test_truncate, test_sync, test_size, test_lock,
		test_unlock, test_reserved, test_control, test_sector,
		test_device, test_shm_map, test_shm_lock, test_shm_barrier,
		test_shm_unmap, test_fetch, test_unfetch };
	sqlite3_vfs_register(&test_vfs, 1);
}
