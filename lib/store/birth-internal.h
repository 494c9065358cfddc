/*
 * birth-internal.h — what birth.c asks of birth_copy.c: the bytes of a
 * file's birth (birth.h says the protocol). Private to lib/store/.
 */
#ifndef BAKERY_BIRTH_INTERNAL_H
#define BAKERY_BIRTH_INTERNAL_H

#include "birth.h"
#include "sql.h"

#include <stddef.h>

/* SQLite's file header: the file format's write and read versions, at
 * bytes 18 and 19, are 1 and 1 in a rollback journal, 2 and 2 in WAL. */
#define HEADER_VERSIONS 18
#define VERSIONS_ROLLBACK "\1\1"
#define VERSIONS_WAL "\2\2"

/* An object's copy and the making's lock (birth_copy.c); named by
 * birth_name.c. */
struct birth_copy {
	int fd;      /* .new.NAME */
	int err;     /* errno of its open, when it failed */
	int locked;  /* its flock taken, that file still of that name */
	int settled; /* given path's name */
	int refs;    /* its birth's, and its group's until it settles */
	int done;    /* birth_copies_settle ran for it: rc and error hold */
	int rc;
	char *error;
	char *tmp, *path;
	struct birth_kin *kin; /* the kind's connection its commit ran on */
	const schema_def *schema;
};

/* Records "cannot WHAT 'PATH': strerror(err)" with err's exit code. */
int birth_fail(const char *what, const char *path, int err);
/* Syncs fd, of path (its folder when folder is set), as the power-cut VFS
 * counts it: a sync where the power may go. */
int birth_sync_counted(int fd, const char *path, int folder);
/* Gives tmp, synced, path's name beside an empty -wal and -shm under the
 * folder's flock, and syncs the folder: 1 when path is there already
 * (another maker's); *named is set once tmp has the name. */
int birth_name_new_file(const char *tmp, const char *path, int *named);
/* Makes path whole with schema (steps 2 and 3 of a home's file): *made
 * is set when this call made it, not when another maker won. */
int birth_make_whole(const char *path, const schema_def *schema,
    int *made);
/* Takes the making of path (steps 2 and 3 of an object's file): its
 * folder must exist. *copy is NULL when path exists (made meanwhile:
 * open it as usual). Else *db is a connection on a private copy of
 * schema's image, a transaction begun in it, *stmts its statements, and
 * nothing is at path until birth_copies_settle. Another maker of path
 * waits (up to ctx's busy timeout, then EX_TEMPFAIL) until this one has
 * settled or ended. */
int birth_copy_begin(bakery_ctx *ctx, const char *path,
    const schema_def *schema, birth_copy **copy, sqlite3 **db,
    db_stmts *stmts);
/* After the commit on *db (step 4): the copy's bytes are in .new.NAME,
 * and *db and *stmts are given up (NULL and empty). */
int birth_copy_committed(birth_copy *c, sqlite3 **db, db_stmts *stmts);
/* A copy never committed: its transaction ends, and *db and *stmts are
 * given up. */
void birth_copy_abandon(birth_copy *c, sqlite3 **db, db_stmts *stmts);
/* After their commits, their connections closed (steps 4 and 5): gives
 * each copy, synced, its path's name beside an empty -wal and -shm. The
 * copies' data is written back at once and then synced one by one; each
 * folder is synced once for all the names given in it. Each copy's
 * outcome is kept (birth_copy_outcome); birth_release after, whatever it
 * was. */
void birth_copies_settle(birth_copy **c, size_t n);
/* 1 once birth_copies_settle ran for c; then 0 or its failure, raised
 * again (bakery_error()). */
int birth_copy_done(const birth_copy *c);
int birth_copy_outcome(const birth_copy *c);
const char *birth_copy_path(const birth_copy *c);
/* In a replicated home, the copies c[0..n) that were given their names
 * are opened as any file is, which sends their first records
 * (capture.h): a failure is the copy's outcome, though it is named (a
 * command that made it answers the failure; its retry finds the file and
 * sends the record first). */
void birth_copies_record(bakery_ctx *ctx, birth_copy **c, size_t n);
/* One more holder of c: each birth_release lets one go. */
birth_copy *birth_copy_hold(birth_copy *c);

#endif
