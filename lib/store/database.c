/*
 * database.c — one SQLite file opened safely: created, configured,
 * migrated, or read without writing; transactions, statements, errors.
 */
#define _GNU_SOURCE
#include "database.h"
#include "capture.h"
#include "ctx.h"
#include "home.h"
#include "schema.h"
#include "testvfs.h"
#include "../base/util.h"
#include "wal.h"
#include "walvfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
db_relaxed(bakery_ctx *ctx, sqlite3 *db, int relaxed)
{
	/* A replicated home's records are numbered by its files' commits:
	 * a commit lost to a power cut would give its number to another
	 * (capture.h). */
	if (ctx->sync_normal || ctx->replica ||
	    strcmp(wal_journal_mode(), "wal") != 0)
		return;
	sqlite3_exec(db, relaxed ? "PRAGMA synchronous=NORMAL"
				 : "PRAGMA synchronous=FULL", NULL, NULL, NULL);
}

static void
set_busy(bakery_ctx *ctx, sqlite3 *db)
{
	/* The timeout itself, not ctx: a connection may outlive its ctx. */
	sqlite3_busy_handler(db, db_busy_wait,
	    (void *)(intptr_t)ctx->busy_timeout_ms);
}

/* A file of the home is a regular file of its own: a symlink (which
 * SQLite would follow) or a FIFO (whose open would hang) at its name is
 * refused, never opened. SQLITE_OPEN_NOFOLLOW keeps the refusal when a
 * symlink appears between this check and the open. */
int
db_refuse_odd_file(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return bakery_fail(EX_CONFIG, "'%s': not a regular file (%s): "
		    "refused", path, S_ISLNK(st.st_mode) ? "a symlink"
		    : S_ISFIFO(st.st_mode) ? "a FIFO" : "another kind");
	return 0;
}

/* Opens path's database and sets its pragmas: an SQLite code. */
static int
open_configured(bakery_ctx *ctx, const char *path, const schema_def *schema,
    int create, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	ctx->files_opened++;
	if (rc == SQLITE_OK) {
		set_busy(ctx, *db);
		wal_keep(ctx, *db);
		/* foreign_keys=ON and trusted_schema=OFF, without parsing
		 * their pragmas at every open. */
		sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_FKEY, 1, NULL);
		sqlite3_db_config(*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
		rc = sqlite3_exec(*db, ctx->sync_normal
		    ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL",
		    NULL, NULL, NULL);
	}
	/* The journal mode, but not on a file migrate refuses (an empty one
	 * this call may not give a schema, one of a version this bakery does
	 * not know or no release wrote): journal_mode=WAL would write its
	 * first page. */
	int version = rc == SQLITE_OK ? schema_version(*db) : 0;
	if (rc == SQLITE_OK && (version == 0 ? create
	    : version >= schema->oldest && version <= schema->count)) {
		char *mode = bakery_xasprintf("PRAGMA journal_mode=%s",
		    wal_journal_mode());
		rc = sqlite3_exec(*db, mode, NULL, NULL, NULL);
		free(mode);
	}
	return rc;
}

int
db_open_making(bakery_ctx *ctx, const char *path, const schema_def *schema,
    int keep_open, sqlite3 **out)
{
	walvfs_register();
	testvfs_register();
	int rc = open_configured(ctx, path, schema, 1, out);
	if (rc != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot open '%s'", path);
		rc = db_fail(*out, rc, what);
		free(what);
		return rc;
	}
	rc = schema_migrate(*out, schema, path, 1, keep_open);
	return rc ? rc : capture_attach(ctx, *out, path, 0);
}

int
db_open(bakery_ctx *ctx, const char *path, const schema_def *schema,
    sqlite3 **out)
{
	*out = NULL;
	int odd = db_refuse_odd_file(path);
	if (odd)
		return odd;
	walvfs_register();
	testvfs_register();
	if (ctx->look_only) {
		/* A program that only looks (bakery-show) reads a file of the
		 * current schema read-only, as status and trace do: it writes
		 * nothing, not even the -shm. Anything else (missing, empty,
		 * foreign, an older schema to migrate) goes the usual way,
		 * with its usual message. */
		if (db_open_readonly(ctx, path, schema, out) == 0 &&
		    schema_version(*out) == schema->count)
			return 0;
		sqlite3_close(*out);
		*out = NULL;
	}
	if (access(path, F_OK) != 0)
		return bakery_fail(EX_NOINPUT, "no such object: '%s'", path);
	/* Opened to write: not in a home a newer bakery wrote, and this
	 * bakery recorded in it first (once a program). */
	int rc = home_make_for(ctx, path);
	if (rc)
		return rc;
	sqlite3 *db;
	rc = open_configured(ctx, path, schema, 0, &db);
	if (rc != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot open '%s'", path);
		rc = db_fail(db, rc, what);
		free(what);
	} else {
		rc = schema_migrate(db, schema, path, 0, 0);
	}
	/* In a replicated home: its commits recorded, and what it holds
	 * unsent sent first. */
	if (!rc)
		rc = capture_attach(ctx, db, path, 0);
	if (rc) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
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
enum reader_mode {
	READ_PLAIN,    /* as any connection: SQLite makes the -wal and -shm */
	READ_SHM,      /* readonly_shm=1: the -shm read, never written */
	READ_FILE,     /* immutable=1: the file alone, no lock, no -wal */
};

static int
open_reader(const char *path, enum reader_mode how, sqlite3 **db)
{
	if (how == READ_PLAIN)
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
	strcpy(u, how == READ_SHM ? "?readonly_shm=1" : "?immutable=1");
	int rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, NULL);
	free(uri);
	return rc;
}

/* user_version through a new read-only connection, or an SQLite code. */
static int
read_version(bakery_ctx *ctx, const char *path, enum reader_mode how,
    sqlite3 **db, int *version)
{
	int rc = open_reader(path, how, db);
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

/* Whether a reader of path through its -shm (READ_SHM) writes nothing:
 * the -wal and -shm are there, of the file's mode (SQLite gives an empty
 * one the file's mode as it opens it) and, for root, of its owner and
 * group (SQLite run as root gives them the file's on every open). */
static int
shm_reads_still(const char *path, const char *wal, const char *shm)
{
	struct stat f, w, s;
	if (stat(path, &f) != 0 || stat(wal, &w) != 0 || stat(shm, &s) != 0 ||
	    (w.st_mode & 0777) != (f.st_mode & 0777) ||
	    (s.st_mode & 0777) != (f.st_mode & 0777))
		return 0;
	return geteuid() != 0 || (w.st_uid == f.st_uid && w.st_gid == f.st_gid
	    && s.st_uid == f.st_uid && s.st_gid == f.st_gid);
}

/* The reader of path and its user_version, or an SQLite code. A context
 * that writes nothing (ctx->write_nothing) reads a file whose -shm it
 * cannot read still as the file alone: what a -wal without its -shm
 * holds is not read (walcheck.h checks its frames). */
static int
open_version(bakery_ctx *ctx, const char *path, sqlite3 **db, int *version)
{
	walvfs_register();
	char *shm = bakery_xasprintf("%s-shm", path);
	char *wal = bakery_xasprintf("%s-wal", path);
	enum reader_mode how = access(shm, F_OK) == 0 ? READ_SHM : READ_PLAIN;
	if (ctx->write_nothing && !shm_reads_still(path, wal, shm))
		how = READ_FILE;
	free(shm);
	free(wal);
	int rc = read_version(ctx, path, how, db, version);
	if (how == READ_SHM && (rc & 0xff) == SQLITE_CANTOPEN) {
		/* The -shm went away since (a shell's close): as without. */
		sqlite3_close(*db);
		rc = read_version(ctx, path, ctx->write_nothing ? READ_FILE
		    : READ_PLAIN, db, version);
	}
	return rc;
}

/* 0 when path is there to read as an SQLite file: 66 when it is not
 * there, 78 when it is not a regular file (db_refuse_odd_file). */
static int
reader_path_ok(const char *path)
{
	if (access(path, F_OK) != 0)
		return bakery_fail(EX_NOINPUT, "no such file: '%s'", path);
	return db_refuse_odd_file(path);
}

int
db_open_reader(bakery_ctx *ctx, const char *path, sqlite3 **out)
{
	*out = NULL;
	int bad = reader_path_ok(path);
	if (bad)
		return bad;
	int version = -1;
	int rc = open_version(ctx, path, out, &version);
	if (rc != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot read '%s'", path);
		rc = db_fail(*out, rc, what);
		free(what);
		sqlite3_close(*out);
		*out = NULL;
	}
	return rc;
}

int
db_open_readonly(bakery_ctx *ctx, const char *path,
    const schema_def *schema, sqlite3 **out)
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
		rc = db_fail(db, rc, what);
	else if (version == 0)
		rc = bakery_fail(EX_NOINPUT, "%s: no schema yet", what);
	else if ((rc = schema_refuse_unreleased(schema, path, version)))
		;
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
