/*
 * backup.c — copy a home while it runs: held still by the sandboxes'
 * locks and the queue's write lock, copied with VACUUM INTO, renamed into
 * place when whole.
 */
#define _GNU_SOURCE
#include "backup.h"
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

struct hold;

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
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sandboxes: folders under HOME/sandboxes and the home's .NAME.lock
 * files (a wiped sandbox keeps its lock file and its clock floor). */
static size_t
sandbox_names(bakery_ctx *ctx, char ***out)
{
	char **names = NULL;
	size_t n = 0;
	const char *dirs[2] = { ctx->sandboxes, ctx->home };
	for (int i = 0; i < 2; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char *name = i == 0 ? bakery_xstrdup(e->d_name)
					    : home_lock_file_sandbox(e->d_name);
			int seen = 0;
			for (size_t j = 0; name && j < n && !seen; j++)
				seen = strcmp(names[j], name) == 0;
			if (!name || seen || !bakery_name_valid(name) || (i == 0
			    && e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)) {
				free(name);
				continue;
			}
			names = bakery_xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = name;
		}
		if (d)
			closedir(d);
	}
	if (n)
		qsort(names, n, sizeof *names, compare_names);
	*out = names;
	return n;
}

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

static int holds(const struct hold *h, const char *name);

/* Whether rel is a sandbox's folder or lock file that the home did not
 * hold: one made after the queue was held, left out of the copy. */
static int
not_held(const struct copy *c, const char *rel, int level)
{
	if (!c->held)
		return 0;
	if (level == 2 && strncmp(rel, "sandboxes/", 10) == 0)
		return !holds(c->hold, rel + 10);
	char *name = level == 1 ? home_lock_file_sandbox(rel) : NULL;
	int out = name && !holds(c->hold, name);
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

/* Held still: every sandbox's lock, then the queue's write lock. */
struct hold {
	char **names; /* the sandboxes held */
	int *locks;
	size_t n;
	sqlite3 *queue;
};

static void
release_queue(struct hold *h)
{
	if (h->queue) {
		sqlite3_exec(h->queue, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(h->queue);
		h->queue = NULL;
	}
}

static void
release(struct hold *h)
{
	release_queue(h);
	for (size_t i = 0; i < h->n; i++) {
		home_unlock_sandbox(h->locks[i]);
		free(h->names[i]);
	}
	free(h->names);
	free(h->locks);
	memset(h, 0, sizeof *h);
}

static int
holds(const struct hold *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->names[i], name) == 0)
			return 1;
	return 0;
}

/* Takes the lock of every sandbox there is that h does not hold yet,
 * waiting for each (wait), or trying each once: then 1 when one was
 * busy. No process holds two sandboxes' locks, so waiting for one while
 * holding others waits for no one who waits for these. */
static int
hold_sandboxes(bakery_ctx *ctx, struct hold *h, int wait)
{
	char **names;
	size_t n = sandbox_names(ctx, &names);
	int rc = 0, saved = ctx->busy_timeout_ms;
	if (!wait)
		ctx->busy_timeout_ms = 1; /* one try, and one a millisecond on */
	for (size_t i = 0; i < n; i++) {
		int fd = -1;
		if (!rc && !holds(h, names[i])) {
			rc = home_lock_sandbox(ctx, names[i], 1, 0, &fd);
			/* No lock file and none can be made: not held, so
			 * refused. */
			if (!rc && fd < 0)
				rc = bakery_fail(EX_NOPERM, "cannot lock sandbox "
				    "'%s': no lock file, and none can be made",
				    names[i]);
			if (rc == EX_TEMPFAIL && !wait)
				rc = 1;
		}
		if (fd >= 0) {
			h->names = bakery_xrealloc(h->names, (h->n + 1) *
			    sizeof *h->names);
			h->locks = bakery_xrealloc(h->locks, (h->n + 1) *
			    sizeof *h->locks);
			h->names[h->n] = names[i];
			h->locks[h->n++] = fd;
		} else {
			free(names[i]);
		}
	}
	free(names);
	ctx->busy_timeout_ms = saved;
	return rc;
}

/* The queue's write lock, on a connection of its own. */
static int
hold_queue(bakery_ctx *ctx, const char *queue, struct hold *h)
{
	int src = sqlite3_open_v2(queue, &h->queue, SQLITE_OPEN_READWRITE, NULL);
	if (src == SQLITE_OK) {
		sqlite3_busy_timeout(h->queue, ctx->busy_timeout_ms);
		src = sqlite3_exec(h->queue, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	}
	return src == SQLITE_OK ? 0
	    : db_fail(h->queue, src, "cannot hold the queue still");
}

/* How many times the sandboxes are listed again under the queue's lock
 * before a home whose sandboxes are made faster than it can be held is
 * given up on (75). */
#define HOLD_ROUNDS 20

/*
 * Every sandbox's lock, then the queue's. A sandbox made between the
 * listing and the queue's lock could have sent events the queue's copy
 * would hold while its files were not held: so under the queue's lock the
 * sandboxes are listed again, and one made meanwhile is taken at once if
 * it is free, else the queue let go, that sandbox waited for, and the
 * queue taken again. The list under the queue's lock is the copy's: a
 * sandbox made after it sent nothing the queue's copy holds, and is left
 * out of the copy whole (copy_one).
 */
static int
hold_still(bakery_ctx *ctx, const char *queue, struct hold *h)
{
	memset(h, 0, sizeof *h);
	int rc = hold_sandboxes(ctx, h, 1);
	if (rc || access(queue, F_OK) != 0)
		return rc;
	for (int round = 0; !(rc = hold_queue(ctx, queue, h)); round++) {
		rc = hold_sandboxes(ctx, h, 0);
		if (rc != 1)
			return rc;
		release_queue(h);
		if (round + 1 == HOLD_ROUNDS)
			return bakery_fail(EX_TEMPFAIL, "sandboxes were made "
			    "faster than the backup could hold them: try again");
		if ((rc = hold_sandboxes(ctx, h, 1)))
			return rc;
	}
	return rc;
}

/* The sandboxes made since the home was held, left out of the copy. */
static jv
left_out(bakery_ctx *ctx, const struct hold *h)
{
	char **now;
	size_t n = sandbox_names(ctx, &now);
	jv out = jv_array();
	for (size_t i = 0; i < n; i++) {
		if (!holds(h, now[i])) {
			bakery_log(LOG_INFO, "backup_left_out", "sandbox", now[i],
			    "why", "made after the home was held", (char *)NULL);
			out = jv_array_append(out, jv_string(now[i]));
		}
		free(now[i]);
	}
	free(now);
	return out;
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
		if (!rc && !(rc = hold_still(ctx, queue, &h))) {
			bakery_crash_point("backup.held");
			rc = copy_held(&c);
			jv_free(out);
			out = left_out(ctx, &h);
		}
		release(&h);
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
