/*
 * home_mark.c — the home's mark (HOME/.layout): that bakery made the
 * folder, and which bakery last moved it forward.
 *
 * The mark holds the line "sandboxes" (the layout) and, from 0.2.0 on,
 * "bakery VERSION": the newest bakery that wrote in the home. A mark
 * without that line (0.1.0 wrote "sandboxes" alone) records none. Every
 * program reads it once, with the home (home_bakerys); a program that is
 * about to write (home_make) refuses a home a newer bakery wrote, and
 * records itself when the mark names an older one or none: the mark is
 * rewritten only when the version changes, so a command pays nothing for
 * it but the read (docs/adr/0010-a-home-records-its-bakery.md). A
 * long-running program looks again at each turn (home_recheck): a stat.
 */
#define _GNU_SOURCE
#include "home.h"
#include "capture.h"
#include "ctx.h"
#include "file.h"
#include "sql.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LAYOUT_LINE "sandboxes\n"
#define BAKERY_WORD "bakery "
/* Longer than any mark bakery writes ("sandboxes", "bakery
 * 99999.99999.99999"): anything longer is not one. */
#define MARK_MAX 64

/* The three numbers of a version MAJOR.MINOR.PATCH, each 0 to 99999
 * without a leading zero, taking all n bytes of s; 0 when it is one. */
static int
version_parse(const char *s, size_t n, long v[3])
{
	size_t at = 0;
	for (int part = 0; part < 3; part++) {
		size_t start = at;
		long x = 0;
		while (at < n && s[at] >= '0' && s[at] <= '9' &&
		    at - start < 5)
			x = x * 10 + (s[at++] - '0');
		if (at == start || (s[start] == '0' && at - start > 1))
			return -1;
		v[part] = x;
		if (part < 2 && (at >= n || s[at++] != '.'))
			return -1;
	}
	return at == n ? 0 : -1;
}

int
home_version_compare(const char *a, const char *b)
{
	long va[3] = { 0, 0, 0 }, vb[3] = { 0, 0, 0 };
	/* Only versions home_mark_read checked, and this bakery's, come
	 * here; none (empty) is older than any. */
	if (!*a || !*b)
		return (*a != '\0') - (*b != '\0');
	(void)version_parse(a, strlen(a), va);
	(void)version_parse(b, strlen(b), vb);
	for (int i = 0; i < 3; i++)
		if (va[i] != vb[i])
			return va[i] < vb[i] ? -1 : 1;
	return 0;
}

static int
mark_bad(const char *home, const char *why)
{
	return bakery_fail(EX_CONFIG, "cannot use home '%s': its mark '%s/"
	    HOME_MARK "' %s: not a mark bakery wrote, left as it is (-H, "
	    "BAKERY_HOME)", home, home, why);
}

int
home_mark_read(const char *home, char written_by[HOME_VERSION_SIZE],
    int *marked)
{
	written_by[0] = '\0';
	*marked = 1;
	/* Read by every program: an open, a fstat, a read, a close. A
	 * symlink is not followed (ELOOP), a FIFO not waited on. */
	char *path = bakery_xasprintf("%s/" HOME_MARK, home);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int err = errno;
	free(path);
	struct stat st;
	if ((fd < 0 && err == ELOOP) || (fd >= 0 && (fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode)))) {
		if (fd >= 0)
			close(fd);
		return mark_bad(home, "is not a regular file");
	}
	if (fd < 0) {
		/* Missing: no mark. One this process cannot read is there,
		 * its record unknown: read-only, the home is read; a writer
		 * reads it again under the lock (home_mark_record) and fails
		 * then, before it writes. */
		*marked = err != ENOENT;
		return 0;
	}
	char buf[MARK_MAX + 1];
	size_t n = 0;
	err = 0;
	while (n < sizeof buf) {
		ssize_t r = read(fd, buf + n, sizeof buf - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? errno : 0;
			break;
		}
		/* A regular file reads short only at its end. */
		int end = (size_t)r < sizeof buf - n;
		n += (size_t)r;
		if (end)
			break;
	}
	close(fd);
	if (err)
		return bakery_fail(EX_CONFIG, "cannot read home '%s': its mark "
		    "'%s/" HOME_MARK "': %s", home, home, strerror(err));
	if (n > MARK_MAX)
		return mark_bad(home, "is too long (over " DIGITS_OF(MARK_MAX)
		    " bytes)");
	size_t ll = strlen(LAYOUT_LINE), bw = strlen(BAKERY_WORD);
	/* Empty: 0.1.0 left its mark so when it stopped before writing
	 * into it. */
	if (n == 0 || (n == ll && memcmp(buf, LAYOUT_LINE, ll) == 0))
		return 0;
	long v[3];
	if (n < ll + bw + 2 || memcmp(buf, LAYOUT_LINE, ll) != 0 ||
	    memcmp(buf + ll, BAKERY_WORD, bw) != 0 || buf[n - 1] != '\n' ||
	    version_parse(buf + ll + bw, n - ll - bw - 1, v) != 0)
		return mark_bad(home, "does not say which bakery wrote the "
		    "home: want the line 'sandboxes', then 'bakery "
		    "MAJOR.MINOR.PATCH'");
	snprintf(written_by, HOME_VERSION_SIZE, "%ld.%ld.%ld", v[0], v[1],
	    v[2]);
	return 0;
}

int
home_refuse_newer(const char *home, const char *written_by)
{
	return bakery_fail(EX_CONFIG, "home '%s' was written by bakery %s, "
	    "newer than this one (%s), which writes nothing in it: run "
	    "bakery %s or newer", home, written_by, BAKERY_VERSION,
	    written_by);
}

/* The mark with this bakery's record. */
static const char mark_text[] = LAYOUT_LINE BAKERY_WORD BAKERY_VERSION "\n";

/* Replaces the mark under HOME/.layout.lock, once read again under it:
 * a program of another bakery may have recorded itself meanwhile. */
static int
mark_replace(const char *home, char written_by[HOME_VERSION_SIZE])
{
	char *lock = bakery_xasprintf("%s/" HOME_MARK ".lock", home);
	int rc = 0, fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		rc = bakery_fail(db_errno_code(errno), "cannot open '%s': %s",
		    lock, strerror(errno));
	while (!rc && flock(fd, LOCK_EX) != 0)
		if (errno != EINTR)
			rc = bakery_fail(EX_IOERR, "cannot lock '%s': %s", lock,
			    strerror(errno));
	int marked;
	if (!rc)
		rc = home_mark_read(home, written_by, &marked);
	if (!rc && marked && !*written_by) {
		/* Not readable by this process (home_mark_read): nothing
		 * says this bakery may write here. */
		char *mark = bakery_xasprintf("%s/" HOME_MARK, home);
		if (access(mark, R_OK) != 0)
			rc = bakery_fail(db_errno_code(errno), "cannot read "
			    "'%s': %s", mark, strerror(errno));
		free(mark);
	}
	int cmp = rc ? 0 : home_version_compare(written_by, BAKERY_VERSION);
	if (cmp > 0)
		rc = home_refuse_newer(home, written_by);
	if (!rc && cmp < 0) {
		char *mark = bakery_xasprintf("%s/" HOME_MARK, home);
		rc = file_put(mark, mark_text, 0600, 1, NULL);
		free(mark);
	}
	if (!rc)
		snprintf(written_by, HOME_VERSION_SIZE, "%s", BAKERY_VERSION);
	if (fd >= 0)
		close(fd);
	free(lock);
	return rc;
}

int
home_mark_record(const char *home, int unmarked,
    char written_by[HOME_VERSION_SIZE])
{
	if (unmarked) {
		/* The mark first, before any other file in the home, made
		 * only when there is none: when another program made it
		 * meanwhile, its record is read and weighed as any other. */
		char *mark = bakery_xasprintf("%s/" HOME_MARK, home);
		int existed;
		int rc = file_put(mark, mark_text, 0600, 0, &existed);
		free(mark);
		if (rc || !existed) {
			if (!rc)
				snprintf(written_by, HOME_VERSION_SIZE, "%s",
				    BAKERY_VERSION);
			return rc;
		}
	}
	return mark_replace(home, written_by);
}

int
home_recheck(bakery_ctx *ctx)
{
	/* A primary that lost its place goes no further (capture.h). */
	if (ctx->replica && ctx->replica->fenced)
		return bakery_fail(EX_UNAVAILABLE, "'%s' is no longer the "
		    "primary of its replicated home: stopping", ctx->home);
	char *mark = bakery_xasprintf("%s/" HOME_MARK, ctx->home);
	struct stat st;
	int there = lstat(mark, &st) == 0;
	free(mark);
	if (!there) /* a home still to mark: home_make weighs it */
		return 0;
	long long ino = (long long)st.st_ino;
	long long mtime = (long long)st.st_mtim.tv_sec * 1000000000LL +
	    st.st_mtim.tv_nsec;
	if (ino == ctx->home_mark_ino && mtime == ctx->home_mark_mtime_ns)
		return 0;
	ctx->home_mark_ino = ino;
	ctx->home_mark_mtime_ns = mtime;
	char by[HOME_VERSION_SIZE];
	int marked, rc = home_mark_read(ctx->home, by, &marked);
	if (rc || home_version_compare(by, BAKERY_VERSION) <= 0)
		return rc;
	snprintf(ctx->home_written_by, sizeof ctx->home_written_by, "%s", by);
	ctx->home_pending = HOME_NEWER;
	return home_refuse_newer(ctx->home, by);
}
