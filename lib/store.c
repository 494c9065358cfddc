/*
 * store.c — the home folder, paths, and opening SQLite files safely.
 */
#define _GNU_SOURCE
#include "store.h"
#include "file.h"
#include "ctx.h"
#include "testvfs.h"
#include "util.h"
#include "walvfs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
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
const store_schema store_sandbox_schema = {
	"sandbox", sandbox_migrations, 2, 1, NULL
};

static const char *const alarms_migrations[] = {
	/* An entry says "this object may have an alarm due at fire_at". The
	 * object's own alarm row is the truth; a stale entry costs one open. */
	"CREATE TABLE alarms(sandbox TEXT NOT NULL, address TEXT NOT NULL,"
	"  fire_at INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 1,"
	"  PRIMARY KEY (sandbox, address));"
	"CREATE INDEX alarms_due ON alarms(fire_at);",
	/* When the entry was written: one written later than now was written
	 * before the wall clock went back (alarm_due). */
	"ALTER TABLE alarms ADD COLUMN armed_at INTEGER;",
};
const store_schema store_alarms_schema = {
	"alarms", alarms_migrations, 2, 1, NULL
};

#ifndef BAKERY_SHAREDIR
#define BAKERY_SHAREDIR "/usr/local/share/bakery"
#endif

char *
store_share_path(const char *name)
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

int store_look_only;

int
store_errno_code(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
	case EIO:
		return EX_IOERR;
	case EACCES:
	case EPERM:
	case EROFS:
		return EX_NOPERM;
	default:
		return EX_CANTCREAT;
	}
}

/*
 * The home's layout. Sandboxes live in HOME/sandboxes/NAME, apart from
 * the home's own files (queue.db and its journal, alarms.db, wipe.db,
 * webhook-secret), so that no sandbox name can be one of them. A home of
 * before kept them at HOME/NAME; the first program that may write moves
 * them, crash-safely and under HOME/.layout.lock:
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
	return bakery_fail(store_errno_code(err),
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
			rc = store_lock_sandbox(ctx, e->d_name, 1, 1, &lock);
			if (!rc && rename(old, to) != 0)
				rc = layout_fail(ctx, "move", old);
			store_unlock_sandbox(lock);
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
store_layout_init(bakery_ctx *ctx)
{
	ctx->sandboxes = bakery_xasprintf("%s/sandboxes", ctx->home);
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
	char *mark = bakery_xasprintf("%s/" LAYOUT_MARK, ctx->home);
	char *fresh = bakery_xasprintf("%s/" SANDBOXES_NEW, ctx->home);
	int marked = access(mark, F_OK) == 0;
	int done = marked && !is_dir(fresh);
	int rc = 0;
	if (!done && store_look_only) {
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
	free(mark);
	free(fresh);
	return rc;
}

int
store_make_home(bakery_ctx *ctx)
{
	if (!ctx->home_pending)
		return 0;
	ctx->home_pending = 0; /* the migration takes sandbox locks */
	int rc = store_mkdirs(ctx->home);
	if (!rc)
		rc = layout_migrate(ctx);
	if (rc)
		ctx->home_pending = 1;
	return rc;
}

int
store_home_exists(bakery_ctx *ctx)
{
	if (ctx->home_pending)
		return bakery_fail(EX_CONFIG, "no such home: '%s' (-H, "
		    "BAKERY_HOME)", ctx->home);
	return 0;
}

char *
store_default_home(void)
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
store_remove_tree(const char *path)
{
	if (access(path, F_OK) != 0)
		return 0;
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return bakery_fail(EX_IOERR, "cannot remove '%s': %s", path,
		    strerror(errno));
	return 0;
}

int
store_mkdirs(const char *dir)
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
			int rc = bakery_fail(store_errno_code(err),
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

char *
store_sandbox_dir(bakery_ctx *ctx, const char *sandbox)
{
	return bakery_xasprintf("%s/%s", ctx->sandboxes,
	    sandbox ? sandbox : ctx->sandbox);
}

char *
store_sandbox_file(bakery_ctx *ctx, const char *sandbox)
{
	return bakery_xasprintf("%s/%s/sandbox.db", ctx->sandboxes,
	    sandbox ? sandbox : ctx->sandbox);
}

char *
store_object_path(bakery_ctx *ctx, const char *sandbox, const char *address)
{
	return bakery_xasprintf("%s/%s/%s.db", ctx->sandboxes,
	    sandbox ? sandbox : ctx->sandbox, address);
}

jv
store_column_time(sqlite3_stmt *st, int col)
{
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return jv_null();
	return bakery_time_jv(sqlite3_column_int64(st, col));
}

int
store_wal_reset_fixed(int version)
{
	/* Fixed in 3.51.3, and backported to 3.44.6 and 3.50.7. */
	return version >= 3051003 ||
	    (version >= 3044006 && version < 3045000) ||
	    (version >= 3050007 && version < 3051000);
}

const char *
store_journal_mode(void)
{
	/* A library with the WAL-reset race gets a rollback journal, which
	 * has no WAL to reset. */
	return store_wal_reset_fixed(sqlite3_libversion_number()) ? "wal"
								  : "truncate";
}

int
store_fail(sqlite3 *db, int rc, const char *what)
{
	int code;
	switch (rc & 0xff) {
	case SQLITE_FULL:
	case SQLITE_IOERR:
		code = EX_IOERR;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = EX_TEMPFAIL;
		break;
	case SQLITE_CANTOPEN:
		code = EX_CANTCREAT;
		break;
	case SQLITE_NOTADB:
		code = EX_DATAERR; /* a file that is not bakery's */
		break;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		code = EX_NOPERM;
		break;
	default:
		code = EX_SOFTWARE;
	}
	return bakery_fail(code, "%s: %s", what,
	    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

int
store_exec(sqlite3 *db, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : store_fail(db, rc, "cannot write");
}

int
store_run(sqlite3 *db, const char *what, int n, const char *const *sql,
    const char *types, ...)
{
	const char *text[8];
	int64_t num[8];
	int np = (int)strlen(types);
	if (np > 8)
		np = 8;
	va_list ap;
	va_start(ap, types);
	for (int k = 0; k < np; k++) {
		if (types[k] == 'i')
			num[k] = va_arg(ap, int64_t);
		else
			text[k] = va_arg(ap, const char *);
	}
	va_end(ap);
	int rc = store_begin(db);
	for (int i = 0; i < n && !rc; i++) {
		sqlite3_stmt *st;
		int src = sqlite3_prepare_v2(db, sql[i], -1, &st, NULL);
		if (src == SQLITE_OK) {
			for (int k = 0; k < np; k++) {
				if (types[k] == 'i')
					sqlite3_bind_int64(st, k + 1, num[k]);
				else
					sqlite3_bind_text(st, k + 1, text[k], -1,
					    SQLITE_STATIC);
			}
			src = sqlite3_step(st);
			sqlite3_finalize(st);
		}
		if (src != SQLITE_DONE)
			rc = store_fail(db, src, what);
	}
	if (!rc)
		rc = store_commit(db);
	store_rollback(db);
	return rc;
}

int
store_prepare(sqlite3 *db, store_stmts *c, const char *sql,
    sqlite3_stmt **st)
{
	size_t empty = STORE_STMTS;
	for (size_t i = 0; i < STORE_STMTS; i++) {
		sqlite3_stmt *s = c->slot[i].st;
		if (!s) {
			if (empty == STORE_STMTS)
				empty = i;
		} else if (c->slot[i].sql == sql && !sqlite3_stmt_busy(s) &&
		    strcmp(sqlite3_sql(s), sql) == 0) {
			*st = s;
			return SQLITE_OK;
		}
	}
	/* A full cache, or the same statement already stepping: one for
	 * this use only. */
	int rc = sqlite3_prepare_v3(db, sql, -1,
	    empty < STORE_STMTS ? SQLITE_PREPARE_PERSISTENT : 0, st, NULL);
	if (rc == SQLITE_OK && *st && empty < STORE_STMTS) {
		c->slot[empty].sql = sql;
		c->slot[empty].st = *st;
	}
	return rc;
}

void
store_release(store_stmts *c, sqlite3_stmt *st)
{
	for (size_t i = 0; st && i < STORE_STMTS; i++) {
		if (c->slot[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return;
		}
	}
	sqlite3_finalize(st);
}

void
store_stmts_free(store_stmts *c)
{
	for (size_t i = 0; i < STORE_STMTS; i++) {
		sqlite3_finalize(c->slot[i].st);
		c->slot[i].st = NULL;
		c->slot[i].sql = NULL;
	}
}

void
store_relaxed(bakery_ctx *ctx, sqlite3 *db, int relaxed)
{
	if (ctx->sync_normal || strcmp(store_journal_mode(), "wal") != 0)
		return;
	sqlite3_exec(db, relaxed ? "PRAGMA synchronous=NORMAL"
				 : "PRAGMA synchronous=FULL", NULL, NULL, NULL);
}

int
store_begin(sqlite3 *db)
{
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0
			       : store_fail(db, rc, "cannot begin a transaction");
}

int
store_commit(sqlite3 *db)
{
	int rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return 0;
	int code = store_fail(db, rc, "cannot commit");
	store_rollback(db);
	return code;
}

void
store_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* Runs sql and sets user_version to version, in the caller's transaction. */
static int
upgrade(sqlite3 *db, const char *sql, int version)
{
	char *bump = bakery_xasprintf("PRAGMA user_version = %d", version);
	int rc = store_exec(db, sql);
	if (!rc)
		rc = store_exec(db, bump);
	free(bump);
	return rc;
}

/* keep_open: when the schema was written, the transaction is left open
 * for the caller's first change. */
static int
migrate(sqlite3 *db, const store_schema *schema, const char *path,
    int create, int keep_open)
{
	sqlite3_stmt *st;
	int version = 0;
	int src = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0), src = SQLITE_OK;
	sqlite3_finalize(st);
	if (src != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot read '%s'", path);
		int rc = store_fail(db, src, what);
		free(what);
		return rc;
	}
	if (version == schema->count)
		return 0;
	/* Only a program that makes the file gives it its schema: an empty
	 * file (a creation that failed, or one under way) is not one. */
	if (version == 0 && !create)
		return bakery_fail(EX_NOINPUT, "'%s' is empty, not a bakery "
		    "file yet", path);
	if (version > schema->count)
		return bakery_fail(EX_CONFIG,
		    "cannot use '%s': schema version %d is newer than this "
		    "bakery knows (%d)", path, version, schema->count);
	int rc = store_begin(db);
	if (rc)
		return rc;
	/* Read again under the write lock: another process may have won. */
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	int wrote = version < schema->count;
	if (version == 0 && schema->create) {
		rc = upgrade(db, schema->create, schema->count);
		version = schema->count;
	}
	for (; !rc && version < schema->count; version++)
		rc = upgrade(db, schema->migrations[version], version + 1);
	if (rc) {
		store_rollback(db);
		return rc;
	}
	return keep_open && wrote ? 0 : store_commit(db);
}

/*
 * Waiting for a lock. SQLite's own busy timeout sleeps 1, 2, 5, 10, 15,
 * 20, 25, 25, 25, 50, 50, then 100 ms between tries: under steady
 * contention (commands sending to queue.db while a consumer receives and
 * acks) a waiter goes on sleeping long after the lock was freed, and a
 * commit of a millisecond waits tens. bakery tries again every
 * millisecond for the first 100, then every 5, up to the busy timeout.
 */
#define BUSY_FAST_TRIES 100
#define BUSY_SLOW_MS 5

static int
busy_wait(void *timeout_ms, int tries)
{
	long waited_ms = tries <= BUSY_FAST_TRIES ? tries
	    : BUSY_FAST_TRIES + (long)(tries - BUSY_FAST_TRIES) * BUSY_SLOW_MS;
	if (waited_ms >= (long)(intptr_t)timeout_ms)
		return 0;
	sqlite3_sleep(tries < BUSY_FAST_TRIES ? 1 : BUSY_SLOW_MS);
	return 1;
}

static void
set_busy(bakery_ctx *ctx, sqlite3 *db)
{
	/* The timeout itself, not ctx: a connection may outlive its ctx. */
	sqlite3_busy_handler(db, busy_wait,
	    (void *)(intptr_t)ctx->busy_timeout_ms);
}

/*
 * A new file in WAL is made whole before it has its name: its image (the
 * schema, built in memory, with the WAL mode's two bytes set in its
 * header, as journal_mode=WAL sets them) is written to a temporary file
 * beside it and synced; then, under an flock on the folder that every
 * maker takes, an empty -wal is created and the file renamed into place,
 * and the folder is synced once for both names. So a new file costs two
 * syncs where switching an empty one to WAL cost four (a rollback-journal
 * transaction for its first page) and its -wal's creation one more, and
 * no file is ever seen without its schema. A -wal or -shm beside a file
 * that does not exist is a leftover (of a file removed without them) and
 * is removed first: SQLite would replay such a WAL into the new file.
 * The flock keeps that from meeting another maker's fresh -wal.
 */
static int
make_fail(const char *what, const char *path, int err)
{
	return bakery_fail(store_errno_code(err), "cannot %s '%s': %s", what,
	    path, strerror(err));
}

static int
wal_image(const store_schema *schema, unsigned char **image,
    sqlite3_int64 *size)
{
	sqlite3 *db;
	int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	char *bump = bakery_xasprintf("PRAGMA user_version = %d",
	    schema->count);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK && schema->create)
		rc = sqlite3_exec(db, schema->create, NULL, NULL, NULL);
	for (int i = 0; rc == SQLITE_OK && !schema->create &&
	     i < schema->count; i++)
		rc = sqlite3_exec(db, schema->migrations[i], NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, bump, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	free(bump);
	*image = rc == SQLITE_OK ? sqlite3_serialize(db, "main", size, 0)
				 : NULL;
	int code = *image && *size >= 100 ? 0
	    : store_fail(db, rc == SQLITE_OK ? SQLITE_NOMEM : rc,
	    "cannot build a new file's schema");
	sqlite3_close(db);
	if (!code)
		(*image)[18] = (*image)[19] = 2; /* WAL */
	return code;
}

/* The files this process made whole, as they were then: one that no
 * checkpoint wrote into since, with an empty -wal, holds its schema alone
 * (unborn_wal). A few: a file is dropped, if at all, as its first
 * transaction fails, before the process makes many more. */
static struct made_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} made_files[8];
static unsigned made_next;

static int
made_match(const struct stat *sb, int record)
{
	for (size_t i = 0; !record && i < sizeof made_files / sizeof *made_files;
	     i++) {
		struct made_file *m = &made_files[i];
		if (m->ino && m->dev == sb->st_dev && m->ino == sb->st_ino &&
		    m->size == sb->st_size &&
		    m->mtime.tv_sec == sb->st_mtim.tv_sec &&
		    m->mtime.tv_nsec == sb->st_mtim.tv_nsec)
			return 1;
	}
	if (record)
		made_files[made_next++ % 8] = (struct made_file){ sb->st_dev,
			sb->st_ino, sb->st_size, sb->st_mtim };
	return 0;
}

static int
make_wal_file(const char *path, const store_schema *schema, int *made)
{
	unsigned char *image;
	sqlite3_int64 size;
	int rc = wal_image(schema, &image, &size);
	if (rc)
		return rc;
	char *dir = bakery_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char *tmp = bakery_xasprintf("%s/.new-XXXXXX", slash ? dir : ".");
	char *wal = bakery_xasprintf("%s-wal", path);
	char *shm = bakery_xasprintf("%s-shm", path);
	int fd = mkstemp(tmp); /* 0600 */
	if (fd < 0) {
		rc = make_fail("create", tmp, errno);
	} else {
		const unsigned char *p = image;
		for (sqlite3_int64 left = size; !rc && left > 0;) {
			ssize_t n = write(fd, p, (size_t)left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				rc = make_fail("write", tmp, n < 0 ? errno : ENOSPC);
			else
				p += n, left -= n;
		}
		if (!rc && fsync(fd) != 0)
			rc = make_fail("sync", tmp, errno);
		close(fd);
	}
	sqlite3_free(image);
	int dfd = rc ? -1 : open(slash ? dir : ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (!rc && dfd < 0)
		rc = make_fail("open", dir, errno);
	while (!rc && flock(dfd, LOCK_EX) != 0)
		if (errno != EINTR)
			rc = make_fail("lock", dir, errno);
	if (!rc && access(path, F_OK) != 0) {
		unlink(wal);
		unlink(shm);
		int wfd = open(wal, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (wfd < 0)
			rc = make_fail("create", wal, errno);
		else
			close(wfd);
		if (!rc && rename(tmp, path) != 0)
			rc = make_fail("create", path, errno);
		if (!rc && fsync(dfd) != 0)
			rc = make_fail("sync", dir, errno);
		struct stat sb;
		if (!rc && stat(path, &sb) == 0)
			made_match(&sb, 1);
		if (rc)
			unlink(wal);
		*made = !rc;
	}
	if (fd >= 0)
		unlink(tmp); /* another maker won, or this one failed */
	if (dfd >= 0)
		close(dfd); /* and its flock */
	free(dir);
	free(tmp);
	free(wal);
	free(shm);
	return rc;
}

/* PRAGMA user_version, 0 when it cannot be read (migrate says why). */
static int
user_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int version = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return version;
}

/*
 * WAL in short processes (docs/design.md, "WAL"). A file in WAL keeps its
 * -wal and -shm for good (SQLITE_FCNTL_PERSIST_WAL on every connection
 * that may write), so a reader that comes later finds them and creates
 * nothing (store_open_readonly), and a writer finds its WAL and syncs no
 * folder for it (walvfs.c). No connection checkpoints as it closes
 * (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): a process that wrote one
 * transaction would otherwise pay a checkpoint for it (the WAL and the
 * file synced). Instead a commit that leaves STORE_WAL_PAGES frames or more
 * in the WAL checkpoints it, whoever commits (a command, a consumer, a
 * relay; wal_full), with TRUNCATE: the WAL goes back to 0 bytes (PASSIVE
 * for a connection that wrote as much itself: see wal_full). A PASSIVE
 * checkpoint would not do in short processes: the next process to open
 * the file, alone, rebuilds the WAL's index from the file and counts every
 * frame as not copied yet (recovery sets nBackfill to 0), so the WAL
 * would never start over and would grow for ever, each process
 * checkpointing it all again. TRUNCATE waits for readers to leave the WAL
 * (at most STORE_CKPT_WAIT_MS); if one stays, it copies what it can as a
 * PASSIVE one would, and the next commit tries again. So a WAL stays
 * about STORE_WAL_PAGES pages (plus one transaction) long, and a process
 * that opens a file alone reads that much at most to rebuild its index.
 * Harmless in a rollback journal.
 */
#define STORE_WAL_PAGES 128
#define STORE_CKPT_WAIT_MS 20

static int
ckpt_wait(void *unused, int tries)
{
	(void)unused;
	if (tries >= STORE_CKPT_WAIT_MS)
		return 0;
	sqlite3_sleep(1);
	return 1;
}

static int
wal_full(void *timeout_ms, sqlite3 *db, const char *name, int frames)
{
	if (frames < STORE_WAL_PAGES)
		return SQLITE_OK;
	/* A connection that wrote that much itself is a long-lived writer
	 * (a consumer, a relay that follows, B1): a PASSIVE checkpoint
	 * lets its next commit start the WAL over in place, where TRUNCATE
	 * would make every commit after it grow the file again (a sync
	 * that must also write the file's size: B1 ran 4 to 8 times
	 * slower). Past twice the bound, TRUNCATE all the same. */
	int written = 0, high = 0;
	sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &written, &high, 0);
	int mode = written >= STORE_WAL_PAGES && frames < 2 * STORE_WAL_PAGES
	    ? SQLITE_CHECKPOINT_PASSIVE : SQLITE_CHECKPOINT_TRUNCATE;
	sqlite3_busy_handler(db, ckpt_wait, NULL);
	sqlite3_wal_checkpoint_v2(db, name, mode, NULL, NULL);
	sqlite3_busy_handler(db, busy_wait, timeout_ms);
	return SQLITE_OK; /* the commit stands whatever the checkpoint did */
}

static void
wal_keep(bakery_ctx *ctx, sqlite3 *db)
{
	int on = 1;
	sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	sqlite3_wal_hook(db, wal_full, (void *)(intptr_t)ctx->busy_timeout_ms);
}

/* A file of the home is a regular file of its own: a symlink (which
 * SQLite would follow) or a FIFO (whose open would hang) at its name is
 * refused, never opened. SQLITE_OPEN_NOFOLLOW keeps the refusal when a
 * symlink appears between this check and the open. */
static int
refuse_odd_file(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return bakery_fail(EX_CONFIG, "'%s': not a regular file (%s): "
		    "refused", path, S_ISLNK(st.st_mode) ? "a symlink"
		    : S_ISFIFO(st.st_mode) ? "a FIFO" : "another kind");
	return 0;
}

/* Makes path's file for store_open to create it: the home and folders
 * it lies in, and the file itself (made whole in WAL mode). *made is set
 * when this call made it. */
static int
create_file(bakery_ctx *ctx, const char *path, const store_schema *schema,
    int *made)
{
	size_t hl = strlen(ctx->home);
	int rc = strncmp(path, ctx->home, hl) == 0 && path[hl] == '/'
	    ? store_make_home(ctx) : 0;
	char *dir = bakery_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!rc && slash && slash != dir) {
		*slash = '\0';
		rc = store_mkdirs(dir);
	}
	free(dir);
	if (!rc && strcmp(store_journal_mode(), "wal") == 0 &&
	    access(path, F_OK) != 0)
		rc = make_wal_file(path, schema, made);
	if (rc)
		return rc;
	/* Created here, not by SQLite, so that it is 0600 whatever the
	 * umask; SQLite gives journals the same mode. */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	/* A file the power-cut VFS must know of: made here, its name synced
	 * by SQLite's first journal sync. One made by make_wal_file had its
	 * folder synced already. */
	if (fd >= 0)
		testvfs_created(path);
	*made |= fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bakery_fail(store_errno_code(errno),
		    "cannot create '%s': %s", path, strerror(errno));
	close(fd);
	return 0;
}

/* Opens path's database and sets its pragmas: an SQLite code. */
static int
open_configured(bakery_ctx *ctx, const char *path, int create, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	ctx->files_opened++;
	char *pragmas = bakery_xasprintf(
	    "PRAGMA synchronous=%s; PRAGMA foreign_keys=ON;"
	    "PRAGMA trusted_schema=OFF;", ctx->sync_normal ? "NORMAL" : "FULL");
	if (rc == SQLITE_OK) {
		set_busy(ctx, *db);
		wal_keep(ctx, *db);
		rc = sqlite3_exec(*db, pragmas, NULL, NULL, NULL);
	}
	free(pragmas);
	/* The journal mode, but not on an empty file this call may not give
	 * a schema (migrate refuses it): journal_mode=WAL would write its
	 * first page. */
	if (rc == SQLITE_OK && (create || user_version(*db) != 0)) {
		char *mode = bakery_xasprintf("PRAGMA journal_mode=%s",
		    store_journal_mode());
		rc = sqlite3_exec(*db, mode, NULL, NULL, NULL);
		free(mode);
	}
	return rc;
}

/* A file made whole above is as new as one given its schema here: its
 * first change is this caller's (the transaction is left open;
 * store_drop_unborn removes it if that fails). Its first page is
 * rewritten (the version it has), so that the transaction writes the
 * file even when the change is rolled back and the schema kept alone
 * (object_rollback): then it commits as one given its schema here
 * would. */
static int
begin_made(sqlite3 *db, const store_schema *schema)
{
	int rc = store_begin(db);
	char *bump = bakery_xasprintf("PRAGMA user_version = %d",
	    schema->count);
	if (!rc)
		rc = store_exec(db, bump);
	free(bump);
	return rc;
}

int
store_open(bakery_ctx *ctx, const char *path, const store_schema *schema,
    int create, sqlite3 **out)
{
	*out = NULL;
	int odd = refuse_odd_file(path);
	if (odd)
		return odd;
	walvfs_register();
	testvfs_register();
	if (!create && store_look_only) {
		/* A program that only looks (bakery-show) reads a file of the
		 * current schema read-only, as status and trace do: it writes
		 * nothing, not even the -shm. Anything else (missing, empty,
		 * foreign, an older schema to migrate) goes the usual way,
		 * with its usual message. */
		if (store_open_readonly(ctx, path, schema, out) == 0 &&
		    user_version(*out) == schema->count)
			return 0;
		sqlite3_close(*out);
		*out = NULL;
	}
	int made = 0; /* this call made the file: removed if it fails */
	if (create) {
		int rc = create_file(ctx, path, schema, &made);
		if (rc)
			return rc;
	} else if (access(path, F_OK) != 0) {
		return bakery_fail(EX_NOINPUT, "no such object: '%s'", path);
	}
	sqlite3 *db;
	int rc = open_configured(ctx, path, create, &db);
	if (rc != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot open '%s'", path);
		rc = store_fail(db, rc, what);
		free(what);
	} else {
		rc = migrate(db, schema, path, create, create == STORE_CREATE_BEGUN);
		if (!rc && made && create == STORE_CREATE_BEGUN &&
		    sqlite3_get_autocommit(db))
			rc = begin_made(db, schema);
	}
	if (rc) {
		/* A file this call made and could not give its schema is
		 * removed: no empty file is left to look like an object. */
		if (made)
			store_drop_unborn(db, path);
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/* A file in WAL that nothing was ever committed to since this process
 * made it whole (make_wal_file): its -wal is empty and the file is as it
 * was made (a TRUNCATE checkpoint empties a WAL too, but writes the file
 * first). */
static int
unborn_wal(const char *path)
{
	char *wal = bakery_xasprintf("%s-wal", path);
	struct stat sb;
	int empty = stat(wal, &sb) == 0 && sb.st_size == 0;
	free(wal);
	return empty && stat(path, &sb) == 0 && made_match(&sb, 0);
}

void
store_drop_unborn(sqlite3 *db, const char *path)
{
	store_rollback(db);
	/* Under SQLite's exclusive lock on the file, taken through its own
	 * file (a transaction would need the disk that just failed): a
	 * process that gave the file its schema meanwhile made it longer
	 * than 0 bytes, and it stays; one that opened it and writes later
	 * finds it unlinked (SQLITE_READONLY_DBMOVED) and fails rather than
	 * writing into a removed file. */
	sqlite3_file *f = NULL;
	if (!db || sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER,
	    &f) != SQLITE_OK || !f || !f->pMethods)
		return;
	sqlite3_int64 size = -1;
	if (f->pMethods->xLock(f, SQLITE_LOCK_SHARED) == SQLITE_OK) {
		if (f->pMethods->xLock(f, SQLITE_LOCK_RESERVED) == SQLITE_OK &&
		    f->pMethods->xLock(f, SQLITE_LOCK_EXCLUSIVE) == SQLITE_OK &&
		    f->pMethods->xFileSize(f, &size) == SQLITE_OK &&
		    (size == 0 || unborn_wal(path))) {
			const char *suffix[] = { "", "-journal", "-wal", "-shm" };
			for (size_t i = 0; i < sizeof suffix / sizeof *suffix;
			     i++) {
				char *p = bakery_xasprintf("%s%s", path, suffix[i]);
				unlink(p);
				free(p);
			}
		}
		f->pMethods->xUnlock(f, SQLITE_LOCK_NONE);
	}
}

/*
 * A reader writes nothing. A file in WAL has its -wal and -shm beside it
 * (wal_keep): the reader opens the -shm read-only (readonly_shm=1), so it
 * neither rebuilds the WAL index there nor takes a read mark in it; with
 * no writer open SQLite reads the WAL into memory instead (its "unreliable
 * shm" path, made for read-only media). Without a -shm (a file in a
 * rollback journal, or one whose WAL an operator's shell removed as it
 * closed) it opens as any connection does: SQLite then creates the -wal
 * and -shm of a file in WAL, since a WAL reader cannot read without them.
 */
static int
open_reader(const char *path, int ro_shm, sqlite3 **db)
{
	if (!ro_shm)
		return sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY |
		    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	/* As a URI, every byte outside [A-Za-z0-9/._-] escaped. */
	char *uri = bakery_xmalloc(strlen(path) * 3 + 32), *u = uri;
	u += sprintf(u, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-", *p))
			*u++ = (char)*p;
		else
			u += sprintf(u, "%%%02X", *p);
	}
	strcpy(u, "?readonly_shm=1");
	int rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, NULL);
	free(uri);
	return rc;
}

/* user_version through a new read-only connection, or an SQLite code. */
static int
read_version(bakery_ctx *ctx, const char *path, int ro_shm, sqlite3 **db,
    int *version)
{
	int rc = open_reader(path, ro_shm, db);
	ctx->files_opened++;
	if (rc == SQLITE_OK) {
		set_busy(ctx, *db);
		rc = sqlite3_exec(*db, "PRAGMA query_only=ON", NULL, NULL, NULL);
	}
	sqlite3_stmt *st = NULL;
	if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(*db,
		"PRAGMA user_version", -1, &st, NULL)) == SQLITE_OK) {
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			*version = sqlite3_column_int(st, 0);
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
	}
	return rc;
}

/* The reader of path and its user_version, or an SQLite code. */
static int
open_version(bakery_ctx *ctx, const char *path, sqlite3 **db, int *version)
{
	walvfs_register();
	char *shm = bakery_xasprintf("%s-shm", path);
	int ro_shm = access(shm, F_OK) == 0;
	free(shm);
	int rc = read_version(ctx, path, ro_shm, db, version);
	if (ro_shm && (rc & 0xff) == SQLITE_CANTOPEN) {
		/* The -shm went away since (a shell's close): as without. */
		sqlite3_close(*db);
		rc = read_version(ctx, path, 0, db, version);
	}
	return rc;
}

/* 0 when path is there to read as an SQLite file: 66 when it is not
 * there, 78 when it is not a regular file (refuse_odd_file). */
static int
reader_path_ok(const char *path)
{
	if (access(path, F_OK) != 0)
		return bakery_fail(EX_NOINPUT, "no such file: '%s'", path);
	return refuse_odd_file(path);
}

int
store_open_reader(bakery_ctx *ctx, const char *path, sqlite3 **out)
{
	*out = NULL;
	int bad = reader_path_ok(path);
	if (bad)
		return bad;
	int version = -1;
	int rc = open_version(ctx, path, out, &version);
	if (rc != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot read '%s'", path);
		rc = store_fail(*out, rc, what);
		free(what);
		sqlite3_close(*out);
		*out = NULL;
	}
	return rc;
}

int
store_open_readonly(bakery_ctx *ctx, const char *path,
    const store_schema *schema, sqlite3 **out)
{
	*out = NULL;
	int bad = reader_path_ok(path);
	if (bad)
		return bad;
	sqlite3 *db;
	int version = -1;
	int rc = open_version(ctx, path, &db, &version);
	char *what = bakery_xasprintf("cannot read '%s'", path);
	if (rc != SQLITE_OK)
		rc = store_fail(db, rc, what);
	else if (version == 0)
		rc = bakery_fail(EX_NOINPUT, "%s: no schema yet", what);
	else if (version < schema->read_from || version > schema->count)
		rc = bakery_fail(EX_CONFIG, "%s: schema version %d, this bakery "
		    "reads %d to %d", what, version, schema->read_from,
		    schema->count);
	free(what);
	if (rc) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

static int
check_sandbox(bakery_ctx *ctx, const char **sandbox)
{
	if (!*sandbox)
		*sandbox = ctx->sandbox;
	if (!bakery_name_valid(*sandbox))
		return bakery_fail(EX_USAGE, "bad sandbox name: '%s': %s",
		    *sandbox, "want [a-z0-9][a-z0-9_.-]{0,63} without '..'");
	return 0;
}

char *
store_sandbox_lock_path(bakery_ctx *ctx, const char *sandbox)
{
	return bakery_xasprintf("%s/.%s.lock", ctx->home, sandbox);
}

char *
store_lock_file_sandbox(const char *base)
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
store_lock_sandbox(bakery_ctx *ctx, const char *sandbox, int exclusive,
    int create, int *fd)
{
	*fd = -1;
	int rc = check_sandbox(ctx, &sandbox);
	if (!rc && create)
		rc = store_make_home(ctx);
	if (rc)
		return rc;
	char *path = store_sandbox_lock_path(ctx, sandbox);
	int lfd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 && !create)
		lfd = open(path, O_RDONLY | O_CLOEXEC);
	if (lfd < 0) {
		/* Without create, a home with no lock file that this process
		 * cannot make (none yet, or read-only) is read unlocked. */
		int err = errno;
		rc = !create ? 0 : bakery_fail(store_errno_code(err),
		    "cannot open '%s': %s", path, strerror(err));
		free(path);
		return rc;
	}
	/* Polled as a SQLite lock is waited for (busy_wait), up to the
	 * same busy timeout. */
	int err = 0;
	for (int tries = 0;; tries++) {
		if (flock(lfd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) {
			err = 0;
			break;
		}
		err = errno;
		if ((err != EWOULDBLOCK && err != EINTR) ||
		    !busy_wait((void *)(intptr_t)ctx->busy_timeout_ms, tries))
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
store_lock_floor(int lock_fd)
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
store_unlock_sandbox(int fd)
{
	if (fd >= 0)
		close(fd);
}

int
store_open_sandbox(bakery_ctx *ctx, const char *sandbox, int create,
    sqlite3 **db)
{
	int rc = check_sandbox(ctx, &sandbox);
	if (rc)
		return rc;
	char *path = store_sandbox_file(ctx, sandbox);
	rc = store_open(ctx, path, &store_sandbox_schema, create, db);
	free(path);
	return rc;
}

static int
compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

jv
store_sandbox_names(bakery_ctx *ctx)
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
		qsort(v, n, sizeof *v, compare_strings);
	for (size_t i = 0; i < n; i++) {
		names = jv_array_append(names, jv_string(v[i]));
		free(v[i]);
	}
	free(v);
	return names;
}
