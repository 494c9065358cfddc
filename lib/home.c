/*
 * home.c — the home folder: where it is, its layout and the layout's
 * migration, the folders and paths below it, sandbox names and locks.
 */
#define _GNU_SOURCE
#include "home.h"
#include "ctx.h"
#include "database.h"
#include "file.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const sandbox_migrations[] = {
	"CREATE TABLE faults(name TEXT PRIMARY KEY, set_at INTEGER NOT NULL);"
	"CREATE TABLE dead_letters(event_id TEXT PRIMARY KEY,"
	"  type TEXT NOT NULL, envelope TEXT NOT NULL, error TEXT NOT NULL,"
	"  attempts INTEGER NOT NULL, times INTEGER NOT NULL DEFAULT 1,"
	"  stored_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
	/* What was redriven and when, for bakery-trace. */
	"CREATE TABLE redrives(event_id TEXT PRIMARY KEY, type TEXT NOT NULL,"
	"  times INTEGER NOT NULL DEFAULT 1, last_at INTEGER NOT NULL);",
	/* The dead letter a redrive removed, as it was, so that the trace
	 * still shows it and its last error: error, attempts, times,
	 * stored_at and updated_at of the dead_letters row. A reader of the
	 * first version (read_from 1) reads redrives by column name. */
	"ALTER TABLE redrives ADD COLUMN dead_error TEXT;"
	"ALTER TABLE redrives ADD COLUMN dead_attempts INTEGER;"
	"ALTER TABLE redrives ADD COLUMN dead_times INTEGER;"
	"ALTER TABLE redrives ADD COLUMN dead_stored_at INTEGER;"
	"ALTER TABLE redrives ADD COLUMN dead_updated_at INTEGER;",
};
const schema_def home_sandbox_schema = {
	"sandbox", sandbox_migrations, 2, 1, NULL
};


#ifndef BAKERY_SHAREDIR
#define BAKERY_SHAREDIR "/usr/local/share/bakery"
#endif

char *
home_share_path(const char *name)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
	if (slash) {
		*slash = '\0';
		for (int up = 1; up <= 2; up++) {
			char *p = bakery_xasprintf("%s/%s/share/%s", exe,
			    up == 1 ? ".." : "../..", name);
			if (access(p, R_OK) == 0)
				return p;
			free(p);
		}
	}
	return bakery_xasprintf("%s/%s", BAKERY_SHAREDIR, name);
}

/*
 * The home's layout. Sandboxes live in HOME/sandboxes/NAME, apart from
 * the home's own files (queue.db and its journal, alarms.db, wipe.db,
 * webhook-secret), so that no sandbox name can be one of them. A home of
 * before kept them at HOME/NAME; the first program that may write and
 * needs a sandbox (home_layout) moves them, crash-safely and under
 * HOME/.layout.lock:
 *   1. mkdir HOME/.sandboxes-new (not a name: a sandbox cannot have it);
 *   2. each folder HOME/NAME that is a name is renamed into it, holding
 *      the sandbox's lock (as the wipe does), so no object of it is open;
 *   3. HOME/.layout is written and synced: from here on the home is new;
 *   4. HOME/.sandboxes-new is renamed HOME/sandboxes.
 * A crash before 3 leaves a home without the mark: the next program does
 * 1 (already done) and moves what is left; after 3, it does 4. A new home
 * gets the mark when it is made, before anything in it.
 */
#define LAYOUT_MARK ".layout"
#define LAYOUT_LOCK ".layout.lock"
#define SANDBOXES_NEW ".sandboxes-new"

static int
is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int
layout_fail(bakery_ctx *ctx, const char *what, const char *path)
{
	int err = errno;
	return bakery_fail(db_errno_code(err),
	    "cannot move home '%s' to its new layout: cannot %s '%s': %s",
	    ctx->home, what, path, strerror(err));
}

/* Steps 1 and 2 above. */
static int
layout_move_sandboxes(bakery_ctx *ctx, const char *fresh)
{
	if (mkdir(fresh, 0700) != 0 && errno != EEXIST)
		return layout_fail(ctx, "create", fresh);
	DIR *d = opendir(ctx->home);
	if (!d)
		return layout_fail(ctx, "read", ctx->home);
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		char *old = bakery_xasprintf("%s/%s", ctx->home, e->d_name);
		if (bakery_name_valid(e->d_name) && is_dir(old)) {
			char *to = bakery_xasprintf("%s/%s", fresh, e->d_name);
			int lock;
			rc = home_lock_sandbox(ctx, e->d_name, 1, 1, &lock);
			if (!rc && rename(old, to) != 0)
				rc = layout_fail(ctx, "move", old);
			home_unlock_sandbox(lock);
			free(to);
			if (!rc)
				bakery_crash_point("layout.after_move");
		}
		free(old);
	}
	closedir(d);
	file_sync_dir(fresh);
	file_sync_dir(ctx->home);
	return rc;
}

static int
layout_migrate(bakery_ctx *ctx)
{
	char *lock = bakery_xasprintf("%s/" LAYOUT_LOCK, ctx->home);
	char *mark = bakery_xasprintf("%s/" LAYOUT_MARK, ctx->home);
	char *fresh = bakery_xasprintf("%s/" SANDBOXES_NEW, ctx->home);
	int rc = 0, fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		rc = layout_fail(ctx, "create", lock);
	while (!rc && flock(fd, LOCK_EX) != 0)
		if (errno != EINTR)
			rc = layout_fail(ctx, "lock", lock);
	if (!rc && access(mark, F_OK) != 0) {
		rc = layout_move_sandboxes(ctx, fresh);
		int mfd = rc ? -1 : open(mark, O_WRONLY | O_CREAT | O_TRUNC |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (!rc && (mfd < 0 || write(mfd, "sandboxes\n", 10) != 10 ||
		    fsync(mfd) != 0))
			rc = layout_fail(ctx, "write", mark);
		if (mfd >= 0)
			close(mfd);
		if (rc)
			unlink(mark);
		file_sync_dir(ctx->home);
	}
	if (!rc && is_dir(fresh)) {
		if (rename(fresh, ctx->sandboxes) != 0)
			rc = layout_fail(ctx, "rename", fresh);
		file_sync_dir(ctx->home);
	}
	if (fd >= 0)
		close(fd);
	free(lock);
	free(mark);
	free(fresh);
	return rc;
}

int
home_init(bakery_ctx *ctx)
{
	struct stat sb;
	if (stat(ctx->home, &sb) != 0) {
		if (errno != ENOENT)
			return bakery_fail(EX_CONFIG, "cannot use home '%s': %s",
			    ctx->home, strerror(errno));
		ctx->home_pending = 1; /* made before its first file */
		return 0;
	}
	if (!S_ISDIR(sb.st_mode))
		return bakery_fail(EX_CONFIG, "home '%s' is not a folder",
		    ctx->home);
	return 0;
}

int
home_layout(bakery_ctx *ctx)
{
	if (ctx->sandboxes)
		return 0;
	/* Set first: the migration's own sandbox locks do not come back
	 * here. A home to make gets its mark as it is made (home_make). */
	ctx->sandboxes = bakery_xasprintf("%s/sandboxes", ctx->home);
	if (ctx->home_pending)
		return 0;
	char *mark = bakery_xasprintf("%s/" LAYOUT_MARK, ctx->home);
	char *fresh = bakery_xasprintf("%s/" SANDBOXES_NEW, ctx->home);
	int marked = access(mark, F_OK) == 0;
	int done = marked && !is_dir(fresh);
	int rc = 0;
	if (!done && ctx->look_only) {
		/* Read as it is: the old layout, or the last step not taken. */
		free(ctx->sandboxes);
		ctx->sandboxes = bakery_xstrdup(marked ? fresh : ctx->home);
	} else if (!done && (rc = layout_migrate(ctx)) == EX_NOPERM &&
	    !marked && access(ctx->home, W_OK) != 0) {
		/* A home this process cannot write: nothing was moved, and
		 * nothing will be written in it; read it as it is. */
		free(ctx->sandboxes);
		ctx->sandboxes = bakery_xstrdup(ctx->home);
		rc = 0;
	}
	if (rc) { /* tried again by the next that needs it */
		free(ctx->sandboxes);
		ctx->sandboxes = NULL;
	}
	free(mark);
	free(fresh);
	return rc;
}

int
home_make(bakery_ctx *ctx)
{
	if (!ctx->home_pending)
		return 0;
	int rc = home_layout(ctx); /* where layout_migrate puts sandboxes/ */
	if (rc)
		return rc;
	ctx->home_pending = 0; /* the migration takes sandbox locks */
	rc = home_mkdirs(ctx->home);
	if (!rc)
		rc = layout_migrate(ctx);
	if (rc)
		ctx->home_pending = 1;
	return rc;
}

int
home_exists(bakery_ctx *ctx)
{
	if (ctx->home_pending)
		return bakery_fail(EX_CONFIG, "no such home: '%s' (-H, "
		    "BAKERY_HOME)", ctx->home);
	return home_layout(ctx);
}

char *
home_default(void)
{
	const char *v;
	if ((v = getenv("BAKERY_HOME")) && *v)
		return bakery_xstrdup(v);
	if ((v = getenv("STATE_DIRECTORY")) && *v) {
		/* systemd may pass several folders separated by ':'. */
		char *home = bakery_xstrdup(v);
		char *colon = strchr(home, ':');
		if (colon)
			*colon = '\0';
		return home;
	}
	if ((v = getenv("XDG_STATE_HOME")) && *v)
		return bakery_xasprintf("%s/bakery", v);
	if ((v = getenv("HOME")) && *v)
		return bakery_xasprintf("%s/.local/state/bakery", v);
	return bakery_xstrdup(".bakery");
}

static int
remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	int r = flag == FTW_DP ? rmdir(path) : unlink(path);
	return r != 0 && errno != ENOENT ? -1 : 0;
}

int
home_remove_tree(const char *path)
{
	if (access(path, F_OK) != 0)
		return 0;
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return bakery_fail(EX_IOERR, "cannot remove '%s': %s", path,
		    strerror(errno));
	return 0;
}

int
home_mkdirs(const char *dir)
{
	char *path = bakery_xstrdup(dir);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		int made = mkdir(path, 0700) == 0;
		if (!made && errno != EEXIST) {
			int err = errno;
			int rc = bakery_fail(db_errno_code(err),
			    "cannot create folder '%s': %s", path,
			    strerror(err));
			free(path);
			return rc;
		}
		/* A new folder's name is in its parent: synced, so that the
		 * files synced inside it do not vanish with it on a power
		 * cut. */
		char *slash = made ? strrchr(path, '/') : NULL;
		if (slash && slash > path) {
			*slash = '\0';
			file_sync_dir(path);
			*slash = '/';
		} else if (slash) {
			file_sync_dir("/");
		}
		*p = c;
		if (!c)
			break;
	}
	free(path);
	return 0;
}

/* SANDBOXES/SANDBOX/rest, the layout found first if it was not. Should
 * that fail, the path is where the sandboxes will be (HOME/sandboxes),
 * and the failure is the caller's next gate's (home_check_sandbox,
 * home_exists, home_layout). */
static char *
sandbox_path(bakery_ctx *ctx, const char *sandbox, const char *rest)
{
	if (!ctx->sandboxes)
		home_layout(ctx);
	return ctx->sandboxes
	    ? bakery_xasprintf("%s/%s%s", ctx->sandboxes,
		  sandbox ? sandbox : ctx->sandbox, rest)
	    : bakery_xasprintf("%s/sandboxes/%s%s", ctx->home,
		  sandbox ? sandbox : ctx->sandbox, rest);
}

char *
home_sandbox_dir(bakery_ctx *ctx, const char *sandbox)
{
	return sandbox_path(ctx, sandbox, "");
}

char *
home_sandbox_file(bakery_ctx *ctx, const char *sandbox)
{
	return sandbox_path(ctx, sandbox, "/sandbox.db");
}

char *
home_object_path(bakery_ctx *ctx, const char *sandbox, const char *address)
{
	char *rest = bakery_xasprintf("/%s.db", address);
	char *path = sandbox_path(ctx, sandbox, rest);
	free(rest);
	return path;
}

int
home_check_sandbox(bakery_ctx *ctx, const char **sandbox)
{
	if (!*sandbox)
		*sandbox = ctx->sandbox;
	if (!bakery_name_valid(*sandbox))
		return bakery_fail(EX_USAGE, "bad sandbox name: '%s': %s",
		    *sandbox, "want [a-z0-9][a-z0-9_.-]{0,63} without '..'");
	return ctx->sandboxes ? 0 : home_layout(ctx);
}

char *
home_sandbox_lock_path(bakery_ctx *ctx, const char *sandbox)
{
	return bakery_xasprintf("%s/.%s.lock", ctx->home, sandbox);
}

char *
home_lock_file_sandbox(const char *base)
{
	size_t n = strlen(base);
	if (n <= 6 || base[0] != '.' || !bakery_ends_with(base, ".lock"))
		return NULL;
	char *name = bakery_xasprintf("%.*s", (int)(n - 6), base + 1);
	if (bakery_name_valid(name))
		return name;
	free(name);
	return NULL;
}

int
home_lock_sandbox(bakery_ctx *ctx, const char *sandbox, int exclusive,
    int create, int *fd)
{
	*fd = -1;
	int rc = home_check_sandbox(ctx, &sandbox);
	if (!rc && create)
		rc = home_make(ctx);
	if (rc)
		return rc;
	char *path = home_sandbox_lock_path(ctx, sandbox);
	int lfd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 && !create)
		lfd = open(path, O_RDONLY | O_CLOEXEC);
	if (lfd < 0) {
		/* Without create, a home with no lock file that this process
		 * cannot make (none yet, or read-only) is read unlocked. */
		int err = errno;
		rc = !create ? 0 : bakery_fail(db_errno_code(err),
		    "cannot open '%s': %s", path, strerror(err));
		free(path);
		return rc;
	}
	/* Polled as a SQLite lock is waited for (db_busy_wait), up to the
	 * same busy timeout. */
	int err = 0;
	for (int tries = 0;; tries++) {
		if (flock(lfd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) {
			err = 0;
			break;
		}
		err = errno;
		if ((err != EWOULDBLOCK && err != EINTR) ||
		    !db_busy_wait((void *)(intptr_t)ctx->busy_timeout_ms, tries))
			break;
	}
	if (err) {
		int busy = err == EWOULDBLOCK || err == EINTR;
		rc = bakery_fail(busy ? EX_TEMPFAIL : EX_IOERR,
		    "cannot lock '%s': %s", path, busy
		    ? "held past the busy timeout (by a wipe)" : strerror(err));
		close(lfd);
		free(path);
		return rc;
	}
	free(path);
	*fd = lfd;
	return 0;
}

int64_t
home_lock_floor(int lock_fd)
{
	char buf[24];
	ssize_t n = lock_fd < 0 ? -1 : pread(lock_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Anything else in the file (a hand edit, a torn write, a time past
	 * the last bakery stamps) is no floor. */
	char *nl = strchr(buf, '\n');
	long long ms;
	if (!nl)
		return 0;
	*nl = '\0';
	return bakery_parse_number(buf, 1, BAKERY_TIME_MAX_MS, &ms) ? 0
	    : (int64_t)ms;
}

void
home_unlock_sandbox(int fd)
{
	if (fd >= 0)
		close(fd);
}

int
home_open_sandbox(bakery_ctx *ctx, const char *sandbox,
    enum db_open_mode mode, sqlite3 **db)
{
	int rc = home_check_sandbox(ctx, &sandbox);
	if (rc)
		return rc;
	char *path = home_sandbox_file(ctx, sandbox);
	rc = db_open(ctx, path, &home_sandbox_schema, mode, db);
	free(path);
	return rc;
}

static int
compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

jv
home_sandbox_names(bakery_ctx *ctx)
{
	jv names = jv_array();
	DIR *d = home_layout(ctx) ? NULL : opendir(ctx->sandboxes);
	if (!d)
		return names;
	char **v = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!bakery_name_valid(e->d_name))
			continue;
		struct stat sb;
		char *path = bakery_xasprintf("%s/%s", ctx->sandboxes, e->d_name);
		int dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
		free(path);
		if (!dir)
			continue;
		v = bakery_xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = bakery_xstrdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, compare_strings);
	for (size_t i = 0; i < n; i++) {
		names = jv_array_append(names, jv_string(v[i]));
		free(v[i]);
	}
	free(v);
	return names;
}
