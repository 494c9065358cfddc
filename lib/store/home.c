/*
 * home.c — the home folder: where it is, its layout and the layout's
 * migration, the folders and paths below it, sandbox names and locks.
 */
#define _GNU_SOURCE
#include "home.h"
#include "ctx.h"
#include "sql.h"
#include "file.h"
#include "../base/util.h"

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
const schema_def home_sandbox_schema = SCHEMA_REPLAYED("sandbox", sandbox_migrations, 1);


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
 * webhook-secret), so that no sandbox name can be one of them. HOME/.layout
 * is bakery's mark: written, synced, when bakery makes the home or first
 * writes in a folder it was given empty (home_make), before any other
 * file. A folder is a home only when it holds the mark, or is empty, or
 * holds nothing but bakery's own files (a home of 0.1.0 made by a program
 * that reached only the queue or the gateway has no mark): anything else
 * is not bakery's, and no program reads, moves or removes anything in it
 * (docs/adr/0007-a-home-is-what-bakery-made.md).
 */
#define LAYOUT_MARK HOME_MARK

/* Whether name[at] is sep and the 6 characters of a mkstemp name end
 * name after it: the fresh names of file_put (".") and birth_make_whole
 * ("-"). */
static int
fresh_tail(const char *name, size_t at, char sep)
{
	if (name[at] != sep || strlen(name + at + 1) != 6)
		return 0;
	for (const char *p = name + at + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

/* Whether an entry of a folder without the mark is one bakery makes in a
 * home: its files (and the journals SQLite puts beside them), their fresh
 * names while they are put in place, the sandboxes' folder and locks, a
 * wipe's folder aside; and lost+found, a file system's own, for a home on
 * a volume of its own. */
static int
home_own_entry(const char *name)
{
	static const char *const files[] = { "queue.db", "alarms.db",
		"wipe.db", "refunds.db", "console.db", NULL };
	static const char *const others[] = { "webhook-secret", ".gateway",
		"routes", "sandboxes", LAYOUT_MARK, ".layout.lock",
		".spans-dropped", ".spans-dropped.lock", ".replica", "lost+found",
		NULL };
	static const char *const journals[] = { "", "-wal", "-shm",
		"-journal", NULL };
	for (int i = 0; files[i]; i++) {
		size_t n = strlen(files[i]);
		if (strncmp(name, files[i], n) != 0)
			continue;
		for (int j = 0; journals[j]; j++)
			if (strcmp(name + n, journals[j]) == 0)
				return 1;
	}
	for (int i = 0; others[i]; i++) {
		size_t n = strlen(others[i]);
		if (strncmp(name, others[i], n) == 0 &&
		    (!name[n] || fresh_tail(name, n, '.')))
			return 1;
	}
	char *lock = home_lock_file_sandbox(name);
	free(lock);
	return lock != NULL || strncmp(name, ".wipe-", 6) == 0 ||
	    (strncmp(name, ".new", 4) == 0 && fresh_tail(name, 4, '-'));
}

/* The first entry of home (in name order) that bakery does not make, or
 * NULL (caller frees); *empty when it has no entry at all. A folder that
 * cannot be listed has none this process could move or remove. */
static char *
home_foreign_entry(const char *home, int *empty)
{
	*empty = 1;
	DIR *d = opendir(home);
	if (!d)
		return NULL;
	char *first = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		*empty = 0;
		if (!home_own_entry(e->d_name) &&
		    (!first || strcmp(e->d_name, first) < 0)) {
			free(first);
			first = bakery_xstrdup(e->d_name);
		}
	}
	closedir(d);
	return first;
}

/* EX_CONFIG unless path is absolute, printable text: checked as a
 * sandbox's name is, since a home ending in a newline is another home. */
int
home_path_valid(const char *home)
{
	int printable = 1;
	for (const unsigned char *p = (const unsigned char *)home; *p; p++)
		printable &= *p >= ' ' && *p != 0x7f;
	if (home[0] == '/' && printable &&
	    bakery_utf8_valid(home, strlen(home)))
		return 0;
	return bakery_fail(EX_CONFIG, "bad home: '%s': want an absolute path "
	    "of printable UTF-8 (-H, BAKERY_HOME)", home);
}

int
home_bakerys(const char *home, enum home_pending *pending,
    char written_by[HOME_VERSION_SIZE])
{
	*pending = HOME_MADE;
	written_by[0] = '\0';
	struct stat sb;
	if (stat(home, &sb) != 0) {
		if (errno != ENOENT)
			return bakery_fail(EX_CONFIG, "cannot use home '%s': %s",
			    home, strerror(errno));
		*pending = HOME_MISSING; /* made before its first file */
		return 0;
	}
	if (!S_ISDIR(sb.st_mode))
		return bakery_fail(EX_CONFIG, "home '%s' is not a folder", home);
	int marked, rc = home_mark_read(home, written_by, &marked);
	if (rc)
		return rc;
	if (marked) {
		int cmp = home_version_compare(written_by, BAKERY_VERSION);
		*pending = cmp > 0 ? HOME_NEWER : cmp < 0 ? HOME_UNRECORDED
							  : HOME_MADE;
		return 0;
	}
	int empty;
	char *foreign = home_foreign_entry(home, &empty);
	if (foreign)
		rc = bakery_fail(EX_CONFIG, "'%s' is not a bakery home: it holds "
		    "'%s', which bakery did not make (-H, BAKERY_HOME)", home,
		    foreign);
	free(foreign);
	*pending = HOME_UNMARKED;
	return rc;
}

int
home_init(bakery_ctx *ctx)
{
	int rc = home_path_valid(ctx->home);
	if (rc)
		return rc;
	ctx->sandboxes = bakery_xasprintf("%s/sandboxes", ctx->home);
	return home_bakerys(ctx->home, &ctx->home_pending,
	    ctx->home_written_by);
}

/* A standby's home is written by bakery-standby alone (replica.h). */
static int
refuse_standby(bakery_ctx *ctx)
{
	if (ctx->replica_unread)
		return bakery_fail(EX_NOPERM, "'%s/.replica' cannot be read: "
		    "whether this home is replicated is not known, and nothing "
		    "is written", ctx->home);
	return ctx->replica_standby && !ctx->replica_applying
	    ? bakery_fail(EX_UNAVAILABLE, "'%s' is a standby's home: "
	    "nothing but bakery-standby writes it (bakery-standby --promote "
	    "makes it the primary)", ctx->home) : 0;
}

int
home_make(bakery_ctx *ctx)
{
	int standby = refuse_standby(ctx);
	if (standby)
		return standby;
	if (ctx->home_pending == HOME_MADE)
		return 0;
	if (ctx->home_pending == HOME_NEWER)
		return home_refuse_newer(ctx->home, ctx->home_written_by);
	int rc = ctx->home_pending == HOME_MISSING ? home_mkdirs(ctx->home)
						   : 0;
	if (!rc)
		rc = home_mark_record(ctx->home,
		    ctx->home_pending != HOME_UNRECORDED, ctx->home_written_by);
	if (!rc)
		ctx->home_pending = HOME_MADE;
	return rc;
}

int
home_may_write(bakery_ctx *ctx)
{
	return ctx->home_pending == HOME_NEWER
	    ? home_refuse_newer(ctx->home, ctx->home_written_by)
	    : refuse_standby(ctx);
}

int
home_make_for(bakery_ctx *ctx, const char *path)
{
	size_t hl = strlen(ctx->home);
	return strncmp(path, ctx->home, hl) == 0 && path[hl] == '/'
	    ? home_make(ctx) : 0;
}

int
home_exists(bakery_ctx *ctx)
{
	if (ctx->home_pending == HOME_MISSING)
		return bakery_fail(EX_CONFIG, "no such home: '%s' (-H, "
		    "BAKERY_HOME)", ctx->home);
	return 0;
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

/* home_mkdirs on a path without a trailing '/': mkdir first, so that a
 * folder that is there costs one call; only when a parent is missing
 * (ENOENT) is the parent made, the same way, and then dir. */
static int
mkdirs(char *dir)
{
	int err = mkdir(dir, 0700) == 0 ? 0 : errno;
	char *slash = strrchr(dir, '/');
	if (err == ENOENT && slash && slash > dir) {
		*slash = '\0';
		int rc = mkdirs(dir);
		*slash = '/';
		if (rc)
			return rc;
		err = mkdir(dir, 0700) == 0 ? 0 : errno;
	}
	if (err == EEXIST)
		return 0;
	if (err)
		return bakery_fail(db_errno_code(err),
		    "cannot create folder '%s': %s", dir, strerror(err));
	/* A new folder's name is in its parent: synced, so that the files
	 * synced inside it do not vanish with it on a power cut. */
	if (slash && slash > dir) {
		*slash = '\0';
		file_sync_dir(dir);
		*slash = '/';
	} else {
		file_sync_dir("/");
	}
	return 0;
}

int
home_mkdirs(const char *dir)
{
	char *path = bakery_xstrdup(dir);
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	int rc = mkdirs(path);
	free(path);
	return rc;
}

/* SANDBOXES/SANDBOX/rest. */
static char *
sandbox_path(bakery_ctx *ctx, const char *sandbox, const char *rest)
{
	return bakery_xasprintf("%s/%s%s", ctx->sandboxes,
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
	return 0;
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
		/* Named from /proc/locks when it can be: a wipe or a backup
		 * holds it whole, the programs at work in the sandbox share
		 * it. */
		char *who = busy ? file_lock_holders(lfd) : NULL;
		char *why = !busy ? bakery_xstrdup(strerror(err))
		    : bakery_xasprintf("held past the busy timeout by %s", who
		    ? who : exclusive ? "the programs at work in the sandbox"
		    : "a wipe or a backup");
		rc = bakery_fail(busy ? EX_TEMPFAIL : EX_IOERR,
		    "cannot lock '%s': %s", path, why);
		free(who);
		free(why);
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

jv
home_sandbox_names(bakery_ctx *ctx)
{
	jv names = jv_array();
	DIR *d = opendir(ctx->sandboxes);
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
		qsort(v, n, sizeof *v, bakery_compare_strings);
	for (size_t i = 0; i < n; i++) {
		names = jv_array_append(names, jv_string(v[i]));
		free(v[i]);
	}
	free(v);
	return names;
}
