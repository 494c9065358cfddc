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
#include <sys/stat.h>
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
