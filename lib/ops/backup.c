/*
 * backup.c — copy a home while it runs: a first pass unheld, a second
 * with the home held still by the sandboxes' locks and the queue's write
 * lock (backup_hold.c), each SQLite file copied with VACUUM INTO, the
 * copy renamed into place when whole.
 */
#define _GNU_SOURCE
#include "backup.h"
#include "backup-internal.h"
#include "../store/file.h"
#include "../queue/queue.h"
#include "../store/store.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What a SQLite file looked like when it was copied: its file's, its
 * -wal's and its journal's inode, size and modification time. Any write
 * to any of them sets the modification time to a tick of the file
 * system's clock at least as late as the write; so when every one was
 * older than a tick before the look, the same stamp later says no write
 * came between. (Not the change time: SQLite, run as root, chowns a WAL
 * to its database's owner on every open, readers' too, which changes
 * it.) Nothing in bakery sets a time back. */
struct stamp {
	char *rel;
	struct { ino_t ino; off_t size; struct timespec mtime; } f[3];
	int quiet; /* every time a safe margin before the look */
};

struct copy {
	bakery_ctx *ctx;
	const char *to;   /* the unfinished copy's folder */
	const char *queue; /* the queue's file, copied first */
	int held;         /* 0: the first pass, unheld; 1: the home held */
	const struct hold *hold; /* the sandboxes held: the copy's */
	struct stamp *stamps; /* the first pass's, sorted by rel */
	size_t n_stamps;
	long files, databases, recopied;
	long long bytes;
	int rc;
};

static void
stamp_of(const char *path, struct stamp *s)
{
	static const char *const suffix[3] = { "", "-wal", "-journal" };
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	s->quiet = 1;
	for (int i = 0; i < 3; i++) {
		char *p = bakery_xasprintf("%s%s", path, suffix[i]);
		struct stat st;
		memset(&s->f[i], 0, sizeof s->f[i]);
		if (stat(p, &st) == 0) {
			s->f[i].ino = st.st_ino;
			s->f[i].size = st.st_size;
			s->f[i].mtime = st.st_mtim;
			/* 2 s: far more than a tick of the file system's
			 * coarse clock */
			s->quiet &= st.st_mtim.tv_sec < now.tv_sec - 2;
		}
		free(p);
	}
}

static int
stamp_equal(const struct stamp *a, const struct stamp *b)
{
	for (int i = 0; i < 3; i++)
		if (a->f[i].ino != b->f[i].ino || a->f[i].size != b->f[i].size ||
		    a->f[i].mtime.tv_sec != b->f[i].mtime.tv_sec ||
		    a->f[i].mtime.tv_nsec != b->f[i].mtime.tv_nsec)
			return 0;
	return 1;
}

static int
compare_stamps(const void *a, const void *b)
{
	return strcmp(((const struct stamp *)a)->rel,
	    ((const struct stamp *)b)->rel);
}

/* nftw takes no argument: the copy under way. */
static struct copy *copying;


static int
copy_bytes(const char *from, const char *to)
{
	int rc = 0, in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	const char *failed = in < 0 ? from : to;
	char buf[65536];
	ssize_t n = 0;
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			failed = to;
			n = -1;
			break;
		}
	}
	if (in < 0 || out < 0 || n < 0)
		rc = bakery_fail(db_errno_code(errno ? errno : EIO),
		    "cannot copy '%s': %s", failed, strerror(errno ? errno : EIO));
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* VACUUM INTO from a read-only connection: the file's committed state,
 * its -wal folded in, in one read transaction. */
static int
vacuum_into(bakery_ctx *ctx, const char *from, const char *to)
{
	sqlite3 *db;
	int rc = db_open_reader(ctx, from, &db);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	/* query_only would refuse the copy's own writes; the connection is
	 * SQLITE_OPEN_READONLY, so the file copied is never written. */
	int src = sqlite3_exec(db, "PRAGMA query_only=OFF", NULL, NULL, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(db, "VACUUM INTO ?1", -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, to, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
		sqlite3_finalize(st);
		src = src == SQLITE_DONE ? SQLITE_OK : src;
	}
	if (src != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot copy '%s'", from);
		rc = db_fail(db, src, what);
		free(what);
	}
	sqlite3_close(db);
	return rc;
}

static int
copy_file(struct copy *c, const char *from, const char *to,
    const struct stat *st)
{
	if (bakery_ends_with(from, ".db") && st->st_size > 0)
		return vacuum_into(c->ctx, from, to);
	return copy_bytes(from, to);
}

/* A SQLite file: copied in the first pass with its stamp; copied again
 * while the home is held unless its stamp says it has not changed. */
static int
copy_database(struct copy *c, const char *path, const char *rel,
    const char *to, const struct stat *st)
{
	struct stamp now = { .rel = (char *)rel };
	stamp_of(path, &now);
	if (!c->held) {
		c->stamps = bakery_xrealloc(c->stamps, (c->n_stamps + 1) *
		    sizeof *c->stamps);
		now.rel = bakery_xstrdup(rel);
		c->stamps[c->n_stamps++] = now;
		int rc = copy_file(c, path, to, st);
		if (rc) /* gone meanwhile, or anything else: again, held */
			c->stamps[c->n_stamps - 1].quiet = 0;
		return rc;
	}
	struct stamp *then = c->n_stamps ? bsearch(&now, c->stamps,
	    c->n_stamps, sizeof now, compare_stamps) : NULL;
	if (then && then->quiet && stamp_equal(then, &now))
		return 0;
	c->recopied++;
	if (unlink(to) != 0 && errno != ENOENT)
		return bakery_fail(db_errno_code(errno), "cannot replace "
		    "'%s': %s", to, strerror(errno));
	return copy_file(c, path, to, st);
}

/* Whether rel is a sandbox's folder or lock file that the home did not
 * hold: one made after the queue was held, left out of the copy. */
static int
not_held(const struct copy *c, const char *rel, int level)
{
	if (!c->held)
		return 0;
	if (level == 2 && strncmp(rel, "sandboxes/", 10) == 0)
		return !backup_holds(c->hold, rel + 10);
	char *name = level == 1 ? home_lock_file_sandbox(rel) : NULL;
	int out = name && !backup_holds(c->hold, name);
	free(name);
	return out;
}

static int
copy_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct copy *c = copying;
	const char *base = path + ftw->base;
	if (ftw->level == 0)
		return FTW_CONTINUE;
	if (not_held(c, path + strlen(c->ctx->home) + 1, ftw->level))
		return flag == FTW_D ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
	/* A wipe's folder aside is removed by the wipe; a WAL, its index and
	 * a journal are folded into VACUUM INTO's copy; .new- and .new.
	 * are files being made (wal.c). */
	if (strncmp(base, ".wipe-", 6) == 0)
		return FTW_SKIP_SUBTREE;
	if (bakery_ends_with(base, "-wal") || bakery_ends_with(base, "-shm") ||
	    bakery_ends_with(base, "-journal") || strncmp(base, ".new", 4) == 0)
		return FTW_CONTINUE;
	const char *rel = path + strlen(c->ctx->home) + 1;
	char *to = bakery_xasprintf("%s/%s", c->to, rel);
	if (flag == FTW_D) {
		if (mkdir(to, 0700) != 0 && !(c->held && errno == EEXIST))
			c->rc = bakery_fail(db_errno_code(errno), "cannot "
			    "create folder '%s': %s", to, strerror(errno));
	} else if (flag == FTW_F && S_ISREG(st->st_mode)) {
		/* The queue is copied while the home is held (copy_held). */
		if (ftw->level == 1 && strcmp(base, "queue.db") == 0)
			;
		else if (bakery_ends_with(base, ".db"))
			c->rc = copy_database(c, path, rel, to, st);
		else if (!c->held || unlink(to) == 0 || errno == ENOENT)
			c->rc = copy_bytes(path, to);
	} else if ((flag == FTW_DNR || flag == FTW_NS) && c->held) {
		c->rc = bakery_fail(db_errno_code(errno), "cannot read "
		    "'%s': %s", path, strerror(errno));
	} else if (!c->held && flag != FTW_DNR && flag != FTW_NS) {
		bakery_log(LOG_WARN, "backup_skipped", "path", path, "why",
		    "not a file or a folder", (char *)NULL);
	}
	free(to);
	/* The first pass only prepares: a file that went or failed is
	 * copied while the home is held, and fails there if it must. */
	if (!c->held)
		c->rc = 0;
	return c->rc ? FTW_STOP : FTW_CONTINUE;
}

/* While held: what the copy has and the home no longer has goes (an
 * object removed, a sandbox wiped since the first pass). */
static int
prune_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	struct copy *c = copying;
	const char *rel = path + strlen(c->to) + 1;
	if (ftw->level == 0 || (ftw->level == 1 && !strcmp(rel, "queue.db")))
		return FTW_CONTINUE;
	char *home = bakery_xasprintf("%s/%s", c->ctx->home, rel);
	struct stat sb;
	if (lstat(home, &sb) != 0 && errno == ENOENT &&
	    (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0)
		c->rc = bakery_fail(db_errno_code(errno), "cannot remove "
		    "'%s': %s", path, strerror(errno));
	free(home);
	return c->rc ? FTW_STOP : FTW_CONTINUE;
}

/* Syncs every file and folder of the copy, and counts them. */
static int
sync_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	struct copy *c = copying;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    (flag == FTW_DP ? O_DIRECTORY : 0));
	int ok = fd >= 0 && fsync(fd) == 0;
	int err = errno;
	if (fd >= 0)
		close(fd);
	if (!ok) {
		c->rc = bakery_fail(db_errno_code(err), "cannot sync "
		    "'%s': %s", path, strerror(err));
		return FTW_STOP;
	}
	if (flag == FTW_F) {
		c->files++;
		c->databases += bakery_ends_with(path, ".db");
		c->bytes += st->st_size;
	}
	return FTW_CONTINUE;
}


/* The first pass, unheld: every file but the queue, with the stamps. */
static int
copy_first(struct copy *c)
{
	copying = c;
	nftw(c->ctx->home, copy_one, 16, FTW_PHYS | FTW_ACTIONRETVAL);
	copying = NULL;
	if (c->n_stamps)
		qsort(c->stamps, c->n_stamps, sizeof *c->stamps,
		    compare_stamps);
	return c->rc;
}

/* The second pass, the home held: the queue, then every file changed
 * since the first pass, then what went. */
static int
copy_held(struct copy *c)
{
	/* One outside the home (sqlite:PATH) becomes the copy's queue.db,
	 * in place of the home's own. */
	char *own = bakery_xasprintf("%s/queue.db", c->ctx->home);
	const char *queue = strcmp(c->queue, own) != 0 ? c->queue : own;
	char *to = bakery_xasprintf("%s/queue.db", c->to);
	struct stat sb;
	if (stat(queue, &sb) == 0)
		c->rc = copy_file(c, queue, to, &sb);
	free(to);
	free(own);
	c->held = 1;
	copying = c;
	if (!c->rc)
		nftw(c->ctx->home, copy_one, 16, FTW_PHYS | FTW_ACTIONRETVAL);
	if (!c->rc)
		nftw(c->to, prune_one, 16, FTW_PHYS | FTW_DEPTH |
		    FTW_ACTIONRETVAL);
	copying = NULL;
	return c->rc;
}

static int
check_target(bakery_ctx *ctx, const char *dir, char **parent)
{
	struct stat sb;
	if (lstat(dir, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode))
			return bakery_fail(EX_CANTCREAT, "'%s' exists and is not "
			    "a folder", dir);
		DIR *d = opendir(dir);
		struct dirent *e;
		int empty = d != NULL;
		while (d && empty && (e = readdir(d)))
			empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		if (d)
			closedir(d);
		if (!empty)
			return bakery_fail(EX_CANTCREAT, "'%s' exists and is not "
			    "empty", dir);
	}
	char *copy = bakery_xstrdup(dir), real[PATH_MAX], home[PATH_MAX];
	*parent = realpath(dirname(copy), NULL);
	free(copy);
	if (!*parent)
		return bakery_fail(EX_CANTCREAT, "cannot use '%s': %s", dir,
		    strerror(errno));
	snprintf(real, sizeof real, "%s/", *parent);
	if (realpath(ctx->home, home) && strlen(home) < sizeof home - 1 &&
	    strncmp(real, strcat(home, "/"), strlen(home)) == 0)
		return bakery_fail(EX_USAGE, "'%s' is inside the home", dir);
	return 0;
}

/* Syncs the copy, renames it dir, syncs dir's folder. */
static int
finish(struct copy *c, const char *dir, const char *parent)
{
	copying = c;
	nftw(c->to, sync_one, 16, FTW_PHYS | FTW_DEPTH | FTW_ACTIONRETVAL);
	copying = NULL;
	if (c->rc)
		return c->rc;
	bakery_crash_point("backup.before_rename");
	if (rename(c->to, dir) != 0)
		return bakery_fail(errno == ENOTEMPTY || errno == EEXIST ||
		    errno == ENOTDIR ? EX_CANTCREAT : db_errno_code(errno),
		    "cannot rename the copy to '%s': %s", dir, strerror(errno));
	file_sync_dir(parent);
	return 0;
}

int
backup_run(bakery_ctx *ctx, const char *dir, jv *report)
{
	*report = jv_invalid();
	char *queue = queue_file(ctx), *parent = NULL;
	int rc = home_exists(ctx);
	if (!rc)
		rc = check_target(ctx, dir, &parent);
	if (!rc && !queue)
		rc = bakery_fail(EX_CONFIG, "the queue is on NATS: bakery-backup "
		    "copies an embedded queue (back up the stream with NATS's "
		    "tools)");
	char *base = bakery_xstrdup(dir);
	char *tmp = rc ? NULL : bakery_xasprintf("%s/.%s.partial-XXXXXX",
	    parent, basename(base));
	if (tmp && !mkdtemp(tmp))
		rc = bakery_fail(db_errno_code(errno), "cannot create a "
		    "folder beside '%s': %s", dir, strerror(errno));
	struct hold h = { 0 };
	struct copy c = { .ctx = ctx, .to = tmp, .queue = queue, .hold = &h };
	mode_t mask = umask(077);
	int64_t held = 0;
	jv out = jv_array();
	if (!rc) {
		rc = copy_first(&c);
		bakery_crash_point("backup.first_pass");
		int64_t start = bakery_monotonic_ms();
		if (!rc && !(rc = backup_hold_still(ctx, queue, &h))) {
			bakery_crash_point("backup.held");
			rc = copy_held(&c);
			jv_free(out);
			out = backup_left_out(ctx, &h);
		}
		backup_release(&h);
		held = bakery_monotonic_ms() - start;
	}
	for (size_t i = 0; i < c.n_stamps; i++)
		free(c.stamps[i].rel);
	free(c.stamps);
	if (!rc)
		rc = finish(&c, dir, parent);
	umask(mask);
	if (rc && tmp && access(tmp, F_OK) == 0)
		home_remove_tree(tmp);
	if (!rc) {
		jv r = jv_object();
		r = jv_object_set(r, jv_string("backup"), jv_string(dir));
		r = jv_object_set(r, jv_string("home"), jv_string(ctx->home));
		r = jv_object_set(r, jv_string("files"), jv_number(c.files));
		r = jv_object_set(r, jv_string("databases"),
		    jv_number(c.databases));
		r = jv_object_set(r, jv_string("bytes"), jv_number(c.bytes));
		r = jv_object_set(r, jv_string("copied_held"),
		    jv_number(c.recopied));
		r = jv_object_set(r, jv_string("held_ms"),
		    jv_number((double)held));
		*report = jv_object_set(r, jv_string("left_out"), out);
	} else {
		jv_free(out);
	}
	free(queue);
	free(parent);
	free(base);
	free(tmp);
	return rc;
}
