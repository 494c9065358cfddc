/*
 * walvfs.c — SQLite's "unix" VFS, with one change: how a WAL file is
 * opened. Storage layer: it knows SQLite and nothing of bakery above it.
 *
 * SQLite opens a WAL with SQLITE_OPEN_CREATE whether or not it exists, and
 * unixOpen marks every journal or WAL opened so to have its folder synced
 * at its first sync ("isNewJrnl" follows the flag, not the file). A
 * process that writes three files in WAL so pays three folder syncs, for
 * WALs that existed long before it. Here:
 *
 *   - a WAL that exists is opened without SQLITE_OPEN_CREATE: no folder
 *     sync (if it went away meanwhile, the open is tried again as asked);
 *   - a WAL that does not exist is created here, with its database's
 *     mode, and its folder synced at once, before SQLite opens it.
 *
 * So every WAL that exists has its name in its folder durably (created
 * here, or by wal.c's new files, whose folder is synced as they get
 * their names), and a commit to it needs the sync of the WAL alone. The
 * one WAL this does not cover is one made by another program (an
 * operator's sqlite3 shell syncs its folder at its own first sync).
 *
 * And one sync is left out: the header's of a WAL that never held a
 * frame. SQLite syncs a WAL's header before the first frames after it
 * (sqlite3WalFrames), so that when a WAL starts over, a disk that
 * reorders writes cannot leave the old header over new frames, or the
 * new header over some old ones that would then look valid and be
 * replayed over newer pages. A WAL made by this process beside a file
 * made with it (walvfs_made), that no checkpoint wrote into since
 * (walvfs_as_made: a WAL starts over only after one), has no old frame
 * anywhere: its header lost, its frames are read as nothing; its frames
 * lost, the header alone holds nothing. So the first commit into a new
 * file syncs its WAL once, header and frames, as any later commit does.
 * The test VFS is below this one: it sees the sync that was made, not
 * the one left out.
 *
 * In a rollback journal nothing here is used.
 */
#define _GNU_SOURCE
#include "walvfs.h"
#include "testvfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sqlite3_vfs wal_vfs;
static int below_size; /* the VFS below's file, rounded up */

/* The files this process made whole, as they were then, and their -wal:
 * the last 128, more than a group of bakery-order --batch (64) or a
 * consumer's batch makes before their -wal's first commits (the relayed
 * marks after the group's send); a file forgotten here only pays its
 * WAL header's sync. */
#define MADE_FILES 128
static struct made_file {
	dev_t dev;
	ino_t ino, wal_ino;
	off_t size;
	struct timespec mtime;
} made_files[MADE_FILES];
static unsigned made_next;

static struct made_file *
made_find(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof made_files / sizeof *made_files; i++) {
		struct made_file *m = &made_files[i];
		if (m->ino && m->dev == sb.st_dev && m->ino == sb.st_ino &&
		    m->size == sb.st_size &&
		    m->mtime.tv_sec == sb.st_mtim.tv_sec &&
		    m->mtime.tv_nsec == sb.st_mtim.tv_nsec)
			return m;
	}
	return NULL;
}

void
walvfs_made(const char *path)
{
	struct stat sb, wsb;
	char *wal = NULL;
	if (stat(path, &sb) != 0 || asprintf(&wal, "%s-wal", path) < 0)
		return;
	if (stat(wal, &wsb) == 0 && wsb.st_size == 0)
		made_files[made_next++ % MADE_FILES] = (struct made_file){ sb.st_dev,
			sb.st_ino, wsb.st_ino, sb.st_size, sb.st_mtim };
	free(wal);
}

int
walvfs_as_made(const char *path)
{
	return made_find(path) != NULL;
}

/* A WAL that never held a frame, opened: its sync method is the one
 * below's but for the header's sync (fresh_sync). Kept after the file
 * of the VFS below, in the same allocation. */
typedef struct fresh_wal {
	const sqlite3_io_methods *below;
	sqlite3_io_methods methods;
	const char *name; /* SQLite keeps it until xClose */
} fresh_wal;

#define FRESH(f) ((fresh_wal *)((char *)(f) + below_size))

/* The database file of a WAL's name, as made and with this -wal: NULL
 * when not. */
static struct made_file *
made_wal(const char *name, sqlite3_int64 size_at_most)
{
	size_t n = strlen(name);
	struct stat wsb;
	if (n < 5 || stat(name, &wsb) != 0 || wsb.st_size > size_at_most)
		return NULL;
	char *db = strndup(name, n - 4);
	struct made_file *m = db ? made_find(db) : NULL;
	free(db);
	return m && m->wal_ino == wsb.st_ino && m->dev == wsb.st_dev ? m
									: NULL;
}

static int
fresh_sync(sqlite3_file *f, int flags)
{
	fresh_wal *w = FRESH(f);
	sqlite3_int64 size = -1;
	/* Nothing, or the 32-byte header alone, in a WAL that never held
	 * a frame: a capture's sync before it sends a born file's first
	 * record (capture_sync_log) finds it empty. */
	if (w->below->xFileSize(f, &size) == SQLITE_OK && size >= 0 &&
	    size <= 32 && made_wal(w->name, 32))
		return SQLITE_OK;
	return w->below->xSync(f, flags);
}

static void
create_wal(const char *name)
{
	size_t n = strlen(name);
	if (n < 5 || strcmp(name + n - 4, "-wal") != 0)
		return;
	char *db = strndup(name, n - 4), *dir = strdup(name);
	if (!db || !dir) {
		free(db);
		free(dir);
		return;
	}
	struct stat sb;
	mode_t mode = stat(db, &sb) == 0 ? sb.st_mode & 0777 : 0600;
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode);
	/* Made by another process just now: its folder sync may not have
	 * happened yet, and this one's commit must not wait on it. */
	if (fd >= 0 || errno == EEXIST) {
		if (fd >= 0 && geteuid() == 0 && stat(db, &sb) == 0 &&
		    fchown(fd, sb.st_uid, sb.st_gid) != 0) {
			/* as SQLite: a journal that cannot be given its
			 * database's owner is kept */
		}
		if (fd >= 0)
			close(fd);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	free(db);
	free(dir);
}

static int
wal_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out_flags)
{
	sqlite3_vfs *real = vfs->pAppData;
	int rc = SQLITE_CANTOPEN;
	if (name && (flags & SQLITE_OPEN_WAL) && (flags & SQLITE_OPEN_CREATE)) {
		if (access(name, F_OK) != 0 && errno == ENOENT)
			create_wal(name);
		rc = real->xOpen(real, name, f, flags & ~SQLITE_OPEN_CREATE,
		    out_flags);
	}
	if ((rc & 0xff) == SQLITE_CANTOPEN)
		rc = real->xOpen(real, name, f, flags, out_flags);
	if (rc == SQLITE_OK && f->pMethods && name &&
	    (flags & SQLITE_OPEN_WAL) && made_wal(name, 0)) {
		fresh_wal *w = FRESH(f);
		w->below = f->pMethods;
		w->methods = *f->pMethods;
		w->methods.xSync = fresh_sync;
		w->name = name;
		f->pMethods = &w->methods;
	}
	return rc;
}

/* A name SQLite needs no help with: absolute, no "." or ".." part, no
 * empty one. */
static int
plain_name(const char *name)
{
	if (name[0] != '/')
		return 0;
	for (const char *p = name; *p; p++)
		if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0' || (p[2] == '.' &&
		    (p[3] == '/' || p[3] == '\0'))))))
			return 0;
	return 1;
}

/*
 * The unix VFS makes a name full by looking at each of its folders in
 * turn (lstat), to follow symlinks: seven to nine calls each time a
 * program opens a file of a home, most of them for folders above it.
 * bakery's names are full already (the home is made absolute once,
 * home_init). A symlink in a folder above the file changes nothing SQLite
 * does with the name: the journal, the -wal and the -shm go beside the
 * file in the same folder either way, and locks are taken on the file,
 * not its name. A file that is itself a symlink (an operator's link to
 * a queue.db elsewhere) is the one case that matters, for its -wal must
 * be beside the file it links to, as any SQLite would look for it: one
 * lstat of the name tells, and such a name goes to the unix VFS.
 */
static int
wal_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	size_t len = strlen(name);
	struct stat sb;
	if (len < (size_t)n && plain_name(name) &&
	    (lstat(name, &sb) == 0 ? !S_ISLNK(sb.st_mode) : errno == ENOENT)) {
		memcpy(out, name, len + 1);
		return SQLITE_OK;
	}
	return real->xFullPathname(real, name, n, out);
}

void
walvfs_register(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	testvfs_register();
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);
	if (!real)
		return;
	below_size = (real->szOsFile + 7) & ~7;
	wal_vfs = *real;
	wal_vfs.szOsFile = below_size + (int)sizeof(fresh_wal);
	wal_vfs.zName = "bakery-wal";
	wal_vfs.pAppData = real;
	wal_vfs.xOpen = wal_open;
	wal_vfs.xFullPathname = wal_full_pathname;
	wal_vfs.pNext = NULL;
	sqlite3_vfs_register(&wal_vfs, 1);
}
