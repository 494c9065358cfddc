/*
 * file.c — a small file put in place whole, and a file read only when it
 * is a regular file (file.h).
 */
#define _GNU_SOURCE /* mkostemp */
#include "file.h"
#include "sql.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int
io_fail(const char *what, const char *path)
{
	int err = errno;
	return bakery_fail(db_errno_code(err), "cannot %s '%s': %s", what,
	    path, strerror(err));
}

void
file_sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int
file_put(const char *path, const char *text, mode_t mode, int replace,
    int *existed)
{
	if (existed)
		*existed = 0;
	char *tmp = bakery_xasprintf("%s.XXXXXX", path);
	int rc = 0;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = io_fail("create", tmp);
		free(tmp);
		return rc;
	}
	if (fchmod(fd, mode) != 0)
		rc = io_fail("create", tmp);
	size_t len = strlen(text), off = 0;
	while (off < len && !rc) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			rc = io_fail("write", tmp);
		else
			off += (size_t)w;
	}
	if (!rc && fsync(fd) != 0)
		rc = io_fail("sync", tmp);
	if (close(fd) != 0 && !rc)
		rc = io_fail("close", tmp);
	if (!rc && replace && rename(tmp, path) != 0)
		rc = io_fail("rename onto", path);
	if (!rc && !replace && link(tmp, path) != 0) {
		if (errno == EEXIST && existed)
			*existed = 1;
		else
			rc = io_fail("create", path);
	}
	/* After a rename the name is gone already; after a link it is the
	 * second name of the file in place. */
	unlink(tmp);
	if (!rc && !(existed && *existed)) {
		char *dir = bakery_xstrdup(path);
		file_sync_dir(dirname(dir));
		free(dir);
	}
	free(tmp);
	return rc;
}

int
file_open_regular(const char *path, int flags, struct stat *st)
{
	struct stat own;
	if (!st)
		st = &own;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
	if (fd < 0)
		return (flags & O_NOFOLLOW) && errno == ELOOP ? FILE_NOT_REGULAR
							       : -1;
	if (fstat(fd, st)) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return FILE_NOT_REGULAR;
	}
	/* A regular file never blocks; reads after this are plain ones. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* "NAME (pid N)", NAME from /proc/PID/comm ("process" when it cannot be
 * read: the process ended, or is another user's under hidepid). */
static char *
process_name(long pid)
{
	char path[64], comm[64] = "process";
	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	return bakery_xasprintf("%s (pid %ld)", comm[0] ? comm : "process",
	    pid);
}

char *
file_lock_holders(int fd)
{
	struct stat st;
	FILE *f = fstat(fd, &st) == 0 ? fopen("/proc/locks", "re") : NULL;
	if (!f)
		return NULL;
	char want[64], line[256], *out = NULL;
	snprintf(want, sizeof want, "%02x:%02x:%lu", major(st.st_dev),
	    minor(st.st_dev), (unsigned long)st.st_ino);
	while (fgets(line, sizeof line, f)) {
		/* "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"; a
		 * waiter's line has "->" after its number. */
		char kind[16], mode[16], dev[64];
		long pid;
		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %*s %15s %ld %63s", kind, mode,
		    &pid, dev) != 4 || strcmp(kind, "FLOCK") != 0 ||
		    strcmp(dev, want) != 0 || pid == (long)getpid())
			continue;
		char *who = process_name(pid);
		if (out && strstr(out, who)) {
			free(who);
			continue;
		}
		char *joined = out ? bakery_xasprintf("%s, %s", out, who) : who;
		if (out) {
			free(out);
			free(who);
		}
		out = joined;
	}
	fclose(f);
	return out;
}
