/*
 * birth.c — a file's birth: which file is made how, the folders, the
 * removal of a file never born, and an object's file from its making to
 * its first commit (birth.h says the protocol step by step; the bytes
 * are birth_copy.c's).
 */
#define _GNU_SOURCE
#include "birth-internal.h"
#include "ctx.h"
#include "database.h"
#include "home.h"
#include "sql.h"
#include "testvfs.h"
#include "wal.h"
#include "walvfs.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file in WAL that nothing was ever committed to since this process
 * made it whole (birth_make_whole): its -wal holds no frame (empty, or its
 * 32-byte header alone, written by a first commit that failed at the
 * header's sync) and the file is as it was made (a TRUNCATE checkpoint
 * empties a WAL too, but writes the file first). */
static int
unborn_wal(const char *path)
{
	char *wal = bakery_xasprintf("%s-wal", path);
	struct stat sb;
	int empty = stat(wal, &sb) == 0 && sb.st_size <= 32;
	free(wal);
	return empty && walvfs_as_made(path);
}

/* Removes path, and its journals, when it is still empty (in WAL: when
 * nothing was ever committed to its -wal, the file holding its schema
 * alone): a file made by this process whose first transaction failed is
 * not left to look like an object. Locked by another: left alone. Any
 * open transaction on db ends. */
static void
drop_unborn(sqlite3 *db, const char *path)
{
	db_rollback(db);
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

/* The home (its mark, before any file a program writes in it) and the
 * folders a missing path lies in; *missing is set when path is missing.
 * A file that is there is in its folder: no folder to make. */
static int
make_folders(bakery_ctx *ctx, const char *path, int *missing)
{
	int rc = home_make_for(ctx, path);
	*missing = !rc && access(path, F_OK) != 0;
	char *dir = bakery_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (*missing && slash && slash != dir) {
		*slash = '\0';
		rc = home_mkdirs(dir);
	}
	free(dir);
	return rc;
}

/* Makes path's missing file for birth_open: whole in WAL, else empty.
 * *made is set when this call made it. */
static int
make_file(const char *path, const schema_def *schema, int *made)
{
	int rc = strcmp(wal_journal_mode(), "wal") == 0
	    ? birth_make_whole(path, schema, made) : 0;
	if (rc)
		return rc;
	/* Created here, not by SQLite, so that it is 0600 whatever the
	 * umask; SQLite gives journals the same mode. */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	/* A file the power-cut VFS must know of: made here, its name synced
	 * by SQLite's first journal sync. One made whole had its folder
	 * synced already. */
	if (fd >= 0)
		testvfs_created(path);
	*made |= fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bakery_fail(db_errno_code(errno),
		    "cannot create '%s': %s", path, strerror(errno));
	close(fd);
	return 0;
}

/* A file made whole above is as new as one given its schema as it is
 * opened: its first change is the caller's (the transaction is left
 * open; drop_unborn removes it if that fails). Its first page is
 * rewritten (the version it has), so that the transaction writes the
 * file even when the change is rolled back and the schema kept alone
 * (birth_rolled_back): then it commits as one given its schema would. */
static int
begin_made(sqlite3 *db, const schema_def *schema)
{
	int rc = db_begin(db);
	return rc ? rc : schema_upgrade(db, NULL, schema->count);
}

/* birth_open, and with keep_open the first transaction of a file this
 * call made (or gave its schema) left open. */
static int
open_made(bakery_ctx *ctx, const char *path, const schema_def *schema,
    int keep_open, sqlite3 **out)
{
	*out = NULL;
	int odd = db_refuse_odd_file(path); /* a dangling symlink */
	if (odd)
		return odd;
	int missing, made = 0; /* this call made the file: removed if it fails */
	int rc = make_folders(ctx, path, &missing);
	if (!rc && missing)
		rc = make_file(path, schema, &made);
	if (rc)
		return rc;
	sqlite3 *db;
	rc = db_open_making(ctx, path, schema, keep_open, &db);
	if (!rc && made && keep_open && sqlite3_get_autocommit(db))
		rc = begin_made(db, schema);
	if (rc) {
		/* A file this call made and could not give its schema is
		 * removed: no empty file is left to look like an object. */
		if (made)
			drop_unborn(db, path);
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int
birth_open(bakery_ctx *ctx, const char *path, const schema_def *schema,
    sqlite3 **db)
{
	return open_made(ctx, path, schema, 0, db);
}

int
birth_open_sandbox(bakery_ctx *ctx, const char *sandbox, int create,
    sqlite3 **db)
{
	*db = NULL;
	int rc = home_check_sandbox(ctx, &sandbox);
	if (rc)
		return rc;
	char *path = home_sandbox_file(ctx, sandbox);
	rc = create ? birth_open(ctx, path, &home_sandbox_schema, db)
		    : db_open(ctx, path, &home_sandbox_schema, db);
	free(path);
	return rc;
}

int
birth_object_open(bakery_ctx *ctx, const char *path,
    const schema_def *schema, birth *b, sqlite3 **db, db_stmts *stmts)
{
	b->state = BIRTH_NONE;
	b->copy = NULL;
	b->ctx = ctx;
	*db = NULL;
	int missing = access(path, F_OK) != 0, rc = 0;
	/* In WAL a missing file is made with its first transaction. */
	if (missing && strcmp(wal_journal_mode(), "wal") == 0) {
		rc = db_refuse_odd_file(path); /* a dangling symlink */
		if (!rc)
			rc = make_folders(ctx, path, &missing);
		if (!rc && missing) {
			walvfs_register();
			rc = birth_copy_begin(ctx, path, schema, &b->copy, db,
			    stmts);
			if (!rc && b->copy)
				ctx->files_opened++;
		}
		if (rc)
			return rc;
	}
	if (!b->copy) {
		/* One that exists (most opens) is opened as any file; one
		 * made meanwhile, or in a rollback journal, is given its
		 * schema in the first transaction if it has none. */
		rc = missing ? open_made(ctx, path, schema, 1, db)
			     : db_open(ctx, path, schema, db);
		if (rc == EX_NOINPUT && !missing)
			/* There but empty: a creation a killed process left. */
			rc = open_made(ctx, path, schema, 1, db);
	}
	if (!rc && !sqlite3_get_autocommit(*db)) {
		b->state = BIRTH_FIRST;
		rc = db_exec(*db, "SAVEPOINT schema");
	}
	return rc;
}

int
birth_begun(const birth *b, sqlite3 *db)
{
	return b->state == BIRTH_FIRST && db && !sqlite3_get_autocommit(db);
}

int
birth_unborn(const birth *b)
{
	return b->state == BIRTH_FIRST || b->state == BIRTH_SCHEMA;
}

void
birth_rolled_back(birth *b, sqlite3 *db, const char *what)
{
	/* A file that holds nothing but its schema is still unborn:
	 * birth_close removes one made whole in WAL (nothing in its -wal)
	 * and keeps one given its schema here. */
	if (birth_begun(b, db) && (db_exec(db, "ROLLBACK TO schema") ||
	    db_commit(db)))
		bakery_log(LOG_WARN, "schema_error", "object", what,
		    "error", bakery_error(), (char *)NULL);
	if (b->state == BIRTH_FIRST)
		b->state = BIRTH_SCHEMA;
}

struct birth_group {
	birth_copy *copies[BIRTH_GROUP_MAX];
	size_t n;
	int ordered;
};

int
birth_group_begin(bakery_ctx *ctx, int ordered)
{
	if (ctx->births)
		return 0;
	ctx->births = bakery_xmalloc(sizeof *ctx->births);
	ctx->births->n = 0;
	ctx->births->ordered = ordered;
	return 1;
}

int
birth_group_before_commit(bakery_ctx *ctx)
{
	struct birth_group *g = ctx->births;
	return g && g->ordered && g->n ? birth_group_settle(ctx) : 0;
}

int
birth_group_settle(bakery_ctx *ctx)
{
	struct birth_group *g = ctx->births;
	if (!g || g->n == 0)
		return 0;
	birth_copies_settle(g->copies, g->n);
	birth_copies_record(ctx, g->copies, g->n);
	size_t bad = g->n;
	for (size_t i = 0; i < g->n && bad == g->n; i++)
		if (birth_copy_outcome(g->copies[i]))
			bad = i;
	int rc = bad < g->n ? birth_copy_outcome(g->copies[bad]) : 0;
	for (size_t i = 0; i < g->n; i++)
		birth_release(g->copies[i]);
	g->n = 0;
	return rc;
}

void
birth_group_wants(bakery_ctx *ctx, const char *path)
{
	struct birth_group *g = ctx->births;
	for (size_t i = 0; g && i < g->n; i++)
		if (strcmp(birth_copy_path(g->copies[i]), path) == 0) {
			/* Its failure is its birth's (birth_settled). */
			(void)birth_group_settle(ctx);
			return;
		}
}

int
birth_group_end(bakery_ctx *ctx)
{
	int rc = birth_group_settle(ctx);
	free(ctx->births);
	ctx->births = NULL;
	return rc;
}

int
birth_committed(birth *b, sqlite3 **db, db_stmts *stmts)
{
	if (!b->copy) {
		if (birth_unborn(b))
			b->state = BIRTH_NONE;
		return 0;
	}
	int rc = birth_copy_committed(b->copy, db, stmts);
	if (rc) {
		/* Its bytes are not in the copy: nothing is named. */
		birth_release(b->copy);
		b->copy = NULL;
		b->state = BIRTH_MADE;
		return rc;
	}
	struct birth_group *g = b->ctx ? b->ctx->births : NULL;
	if (g) {
		if (g->n == BIRTH_GROUP_MAX)
			(void)birth_group_settle(b->ctx); /* each its own */
		g->copies[g->n++] = birth_copy_hold(b->copy);
		b->state = BIRTH_PENDING;
		return 0;
	}
	birth_copies_settle(&b->copy, 1);
	birth_copies_record(b->ctx, &b->copy, 1);
	b->state = BIRTH_PENDING;
	return birth_settled(b);
}

int
birth_settled(birth *b)
{
	if (b->state != BIRTH_PENDING)
		return 0;
	if (!birth_copy_done(b->copy))
		(void)birth_group_settle(b->ctx);
	int rc = birth_copy_outcome(b->copy);
	birth_release(b->copy);
	b->copy = NULL;
	/* Given its name, or not: either way the file is opened again when
	 * next used, and one not there is no object. */
	b->state = BIRTH_MADE;
	return rc;
}

void
birth_close(birth *b, sqlite3 **db, db_stmts *stmts, const char *path)
{
	if (b->state == BIRTH_PENDING) {
		/* Committed: its group names it. */
		birth_release(b->copy);
		b->copy = NULL;
	} else if (b->copy) {
		/* Never committed: the copy goes, nothing was at its name. */
		birth_copy_abandon(b->copy, db, stmts);
		birth_release(b->copy);
		b->copy = NULL;
	}
	db_stmts_free(stmts);
	if (*db) {
		db_rollback(*db);
		/* Its first commit failed (a full disk): no empty file is
		 * left to be listed as an object. */
		if (birth_unborn(b))
			drop_unborn(*db, path);
		sqlite3_close(*db);
		*db = NULL;
	}
	b->state = BIRTH_NONE;
}
