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
 * In a rollback journal nothing here is used.
 */
#define _GNU_SOURCE
#include "walvfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sqlite3_vfs wal_vfs;

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
	if (name && (flags & SQLITE_OPEN_WAL) && (flags & SQLITE_OPEN_CREATE)) {
		if (access(name, F_OK) != 0 && errno == ENOENT)
			create_wal(name);
		int rc = real->xOpen(real, name, f, flags & ~SQLITE_OPEN_CREATE,
		    out_flags);
		if ((rc & 0xff) != SQLITE_CANTOPEN)
			return rc;
	}
	return real->xOpen(real, name, f, flags, out_flags);
}

void
walvfs_register(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);
	if (!real)
		return;
	wal_vfs = *real;
	wal_vfs.zName = "bakery-wal";
	wal_vfs.pAppData = real;
	wal_vfs.xOpen = wal_open;
	wal_vfs.pNext = NULL;
	sqlite3_vfs_register(&wal_vfs, 1);
}
