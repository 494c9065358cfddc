/*
 * birth_name.c — the names a birth gives (birth.h, steps 4 and 5): a file
 * synced and renamed into place beside an empty -wal and -shm under its
 * folder's flock, and a group's copies written back together, synced one
 * by one and named with one sync of each folder
 * (docs/adr/0009-a-group-of-births.md).
 */
#define _GNU_SOURCE
#include "birth-internal.h"
#include "capture.h"
#include "ctx.h"
#include "database.h"
#include "sql.h"
#include "testvfs.h"
#include "walvfs.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int
birth_sync_counted(int fd, const char *path, int folder)
{
	if (testvfs_synced(path, folder))
		return birth_fail("sync", path, EIO);
	return fsync(fd) == 0 ? 0 : birth_fail("sync", path, errno);
}

/* Opens path's folder (*dir its name) and takes the flock every maker
 * takes before it names a file there. */
static int
folder_lock(const char *path, char **dir, int *dfd)
{
	*dir = bakery_xstrdup(path);
	char *slash = strrchr(*dir, '/');
	if (slash)
		*slash = '\0';
	*dfd = open(slash ? *dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = *dfd < 0 ? birth_fail("open", *dir, errno) : 0;
	while (!rc && flock(*dfd, LOCK_EX) != 0)
		if (errno != EINTR)
			rc = birth_fail("lock", *dir, errno);
	return rc;
}

/* Gives tmp, synced, path's name beside a new empty -wal and -shm, under
 * its folder's flock (folder_lock), the folder not synced yet. 1 when
 * path is there already (another maker's, tmp left as it is); *named is
 * set once tmp has the name. */
static int
name_file(const char *tmp, const char *path, int *named)
{
	*named = 0;
	char *wal = bakery_xasprintf("%s-wal", path);
	char *shm = bakery_xasprintf("%s-shm", path);
	int rc = access(path, F_OK) == 0;
	if (!rc) {
		unlink(wal);
		unlink(shm);
		/* The -shm too: a reader that comes before any writer
		 * opens it read-only and writes nothing (db_open_readonly). */
		for (int i = 0; !rc && i < 2; i++) {
			const char *f = i ? shm : wal;
			int wfd = open(f, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
			if (wfd < 0)
				rc = birth_fail("create", f, errno);
			else
				close(wfd);
		}
	}
	if (!rc) {
		testvfs_created(wal);
		if (rename(tmp, path) != 0) {
			rc = birth_fail("create", path, errno);
			unlink(wal);
			unlink(shm);
		} else {
			testvfs_created(path);
			*named = 1;
		}
	}
	free(wal);
	free(shm);
	return rc;
}

/* Gives tmp, synced, path's name (name_file) and syncs the folder once
 * for both names. 1 when path is there already; *named is set once tmp
 * has the name, whatever fails after. */
int
birth_name_new_file(const char *tmp, const char *path, int *named)
{
	*named = 0;
	char *dir;
	int dfd;
	int rc = folder_lock(path, &dir, &dfd);
	if (!rc)
		rc = name_file(tmp, path, named);
	if (!rc)
		rc = birth_sync_counted(dfd, path, 1);
	if (!rc)
		walvfs_made(path);
	if (dfd >= 0)
		close(dfd); /* and its flock */
	free(dir);
	return rc;
}

/* The outcome of c's settle (rc, and bakery_error() when it failed). */
static void
outcome(birth_copy *c, int rc)
{
	/* Its maker alone makes path: another program made it. */
	if (rc == 1)
		rc = bakery_fail(EX_TEMPFAIL, "'%s' was made by another "
		    "program meanwhile", c->path);
	c->done = 1;
	c->rc = rc;
	if (rc)
		c->error = bakery_xstrdup(bakery_error());
}

/* Names the copies c[from..n) that lie in c[from]'s folder and are synced
 * (done unset), under the folder's flock, then syncs the folder once. */
static size_t
folder_len(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? (size_t)(slash - path) : 0;
}

static int
same_folder(const char *a, const char *b)
{
	size_t l = folder_len(a);
	return folder_len(b) == l && strncmp(a, b, l) == 0;
}

/* The folder's sync failed after the names were given: an answer of
 * failure must leave no file behind (a script retries the line, and a
 * second order would be made), so each name of c[from..n) in that folder
 * goes again, with its -wal and -shm, still under the folder's flock and
 * the makings' locks, and the folder is synced once more for the
 * removals (best effort: the first sync's failure is the answer). An
 * alarm's index entry the maker wrote finds no file and is dropped
 * (relay.c, drop_if_unborn). */
static void
take_back(birth_copy **c, size_t from, size_t n, int dfd)
{
	for (size_t i = from; i < n; i++) {
		birth_copy *x = c[i];
		if (x->done || !x->settled ||
		    !same_folder(x->path, c[from]->path))
			continue;
		char *wal = bakery_xasprintf("%s-wal", x->path);
		char *shm = bakery_xasprintf("%s-shm", x->path);
		if (unlink(x->path) != 0 && errno != ENOENT)
			bakery_log(LOG_ERROR, "birth_take_back_failed", "path",
			    x->path, "error", strerror(errno), (char *)NULL);
		unlink(wal);
		unlink(shm);
		free(wal);
		free(shm);
		x->settled = 0;
	}
	if (!testvfs_synced(c[from]->path, 1))
		(void)fsync(dfd);
}

static void
name_in_folder(birth_copy **c, size_t from, size_t n)
{
	char *dir;
	int dfd, named = 0;
	int rc = folder_lock(c[from]->path, &dir, &dfd);
	size_t i;
	for (i = from; !rc && i < n; i++) {
		birth_copy *x = c[i];
		if (x->done || !same_folder(x->path, c[from]->path))
			continue;
		int one = name_file(x->tmp, x->path, &x->settled);
		named += x->settled;
		if (one)
			outcome(x, one);
	}
	/* Named, the folder not synced: a power cut now takes the names. */
	if (!rc && named)
		bakery_crash_point("make.before_folder_sync");
	if (!rc && named)
		rc = birth_sync_counted(dfd, c[from]->path, 1);
	if (rc && named)
		take_back(c, from, n, dfd);
	for (i = from; i < n; i++) {
		birth_copy *x = c[i];
		if (x->done || !same_folder(x->path, c[from]->path))
			continue;
		if (!rc && x->settled)
			walvfs_made(x->path);
		outcome(x, rc);
	}
	if (dfd >= 0)
		close(dfd); /* and its flock */
	free(dir);
}

void
birth_copies_settle(birth_copy **c, size_t n)
{
	/* Each copy's data written back at once, then each synced: the
	 * syncs find their data on its way (docs/adr/0009). */
	int any = 0;
	for (size_t i = 0; i < n; i++) {
		birth_copy *x = c[i];
		if (pwrite(x->fd, VERSIONS_WAL, 2, HEADER_VERSIONS) != 2)
			outcome(x, birth_fail("write", x->tmp, errno));
		else
			(void)sync_file_range(x->fd, 0, 0,
			    SYNC_FILE_RANGE_WRITE);
	}
	for (size_t i = 0; i < n; i++) {
		birth_copy *x = c[i];
		int rc = x->done ? 0 : birth_sync_counted(x->fd, x->tmp, 0);
		if (rc)
			outcome(x, rc);
		any |= !x->done;
	}
	/* Their alarms' index entries, if any, are written: a stop here is
	 * a maker between its entry and its rename (relay.c,
	 * drop_if_unborn). */
	if (any)
		bakery_crash_point("make.before_rename");
	for (size_t i = 0; i < n; i++)
		if (!c[i]->done)
			name_in_folder(c, i, n);
}

void
birth_copies_record(bakery_ctx *ctx, birth_copy **c, size_t n)
{
	for (size_t i = 0; ctx && ctx->replica && i < n; i++) {
		if (!c[i]->done || c[i]->rc)
			continue;
		/* A --batch group's: the record kept from the copy's commit,
		 * published with the group's (capture_settle). */
		if (ctx->replica_batched) {
			capture_born(ctx, c[i]->path);
			continue;
		}
		sqlite3 *db = NULL;
		int rc = db_open(ctx, c[i]->path, c[i]->schema, &db);
		sqlite3_close(db);
		if (rc) {
			c[i]->rc = rc;
			c[i]->error = bakery_xstrdup(bakery_error());
		}
	}
}
