/*
 * birth.h — a file's birth: how a file of the home that is not there
 * comes to be at its name, never seen half made.
 *
 * Owns: every file bakery makes for SQLite (the home's own files, a
 * sandbox's, an object's), the folders they lie in, the making's lock,
 * the removal of a file whose first transaction failed, and the state of
 * an object's file from its making to its first commit. Opening a file
 * that is there is database.h's: nothing here runs for it.
 *
 * A home's file (queue.db, alarms.db, ..., SANDBOX/sandbox.db):
 * birth_open. In WAL (wal.h: the library has the WAL-reset fix):
 *   1. the home is made (home_make: its mark written and synced) and the
 *      folders the file lies in (home_mkdirs, each folder synced);
 *   2. the schema's image (built once in the process, in memory, with
 *      WAL's two bytes in its header) is written to .new-XXXXXX beside
 *      the file: sync 1 holds the image;
 *   3. under the folder's flock every maker takes, a -wal or -shm left
 *      beside no file goes, an empty -wal and -shm are made, and the
 *      image is renamed into place: sync 2, of the folder, holds both
 *      names. Another maker who won keeps its file; the image goes.
 *   4. the file is opened as any file (database.h).
 * In a rollback journal the file is created empty (0600, O_EXCL) and
 * SQLite gives it its schema in its first transaction, whose journal's
 * syncs hold it; a file made so that fails there is removed.
 *
 * An object's file (order/ID at a place, billing/ID at a pay, a
 * subscriber's file at its first event): birth_object_open. In WAL it is
 * born with the change that makes it:
 *   1. the folders, as above;
 *   2. the making's lock: .new.NAME beside it, opened (made 0600 when
 *      missing, whatever the umask) and flocked, then checked to be the
 *      file of that name still; a file at the name by then was made
 *      meanwhile and is opened as any file;
 *   3. the first transaction runs on a private copy of the image, as a
 *      file in a rollback journal (the header's two bytes 1),
 *      journal_mode=MEMORY, synchronous=OFF: no sync, nobody else reads
 *      it, and a copy half written is no object. The copy is a buffer
 *      under the kind's one connection (memvfs.h: its schema parsed and
 *      its statements prepared once in a process), or, when that one is
 *      taken, .new.NAME itself under a connection of its own;
 *   4. at its commit (birth_committed) the copy's bytes are in .new.NAME
 *      and get WAL's two bytes: sync 1 holds the schema and the first
 *      change; crash point make.before_rename;
 *   5. under the folder's flock, an empty -wal and -shm and the rename:
 *      sync 2, of the folder, holds both names. The copy's connection is
 *      given up; the file is opened again when next used (BIRTH_MADE).
 *      When sync 2 fails, the names are taken back (the file, its -wal
 *      and -shm removed, still under both locks) before the failure is
 *      answered: a commit answered as failed is at no name.
 * So a command pays 2 syncs for the file it makes and the change in it.
 * A file that never had a change committed is never seen. A maker killed
 * midway leaves a .new.NAME the next maker writes again (one bakery made:
 * a regular file of one link, of this user, 0600; anything else has its
 * name removed, never the file it links to; a folder there is EX_CONFIG),
 * and the daily wipe takes it with its folder. In a rollback journal an
 * object's file is made as a home's file is, its first transaction left
 * open for the first change.
 *
 * Promises: files are 0600; a file is at its name only whole, with its
 * schema (in WAL, with its first change too); what is acknowledged was
 * synced as above; the making's lock is held from before a maker writes
 * its alarm's index entry (object.h) until its file has its name.
 */
#ifndef BAKERY_BIRTH_H
#define BAKERY_BIRTH_H

#include <sqlite3.h>

#include "schema.h"
#include "sql.h"

typedef struct bakery_ctx bakery_ctx;
typedef struct birth_copy birth_copy;

/* Opens path with schema, made first when it is not there (a file there
 * is opened as database.h's db_open opens it, its schema given when it
 * has none yet: a creation a killed process left). */
int birth_open(bakery_ctx *ctx, const char *path, const schema_def *schema,
    sqlite3 **db);
/* The sandbox's own file (SANDBOX/sandbox.db; NULL: the context's
 * sandbox): made when create, else as db_open. */
int birth_open_sandbox(bakery_ctx *ctx, const char *sandbox, int create,
    sqlite3 **db);

/* Where an object's file stands, from its making to its first commit. */
enum birth_state {
	BIRTH_NONE,   /* it was there when opened: opened as any file */
	BIRTH_FIRST,  /* made by this open, its first transaction (savepoint
		       * "schema", then the first change) begun, not
		       * committed; in WAL nothing is at its name yet */
	BIRTH_SCHEMA, /* made by this open, its first change rolled back:
		       * its schema alone, removed at close while it is so */
	BIRTH_MADE,   /* its first commit gave it its name; the connection
		       * closed, the file opened again when next used */
	BIRTH_PENDING, /* its first commit is in its copy, which its group
			* names (birth_group_settle); then BIRTH_MADE */
};
typedef struct birth {
	enum birth_state state;
	birth_copy *copy; /* in WAL, before the first commit: the copy */
	bakery_ctx *ctx;
} birth;

/* Opens path for a command that writes, made with the first change when
 * it is not there (b->state BIRTH_FIRST: *db has the first transaction
 * begun, and the caller's change commits with the schema). *stmts, empty
 * when called, are the statements the caller keeps for *db: a copy's
 * connection may come with some prepared (birth_copy.c). */
int birth_object_open(bakery_ctx *ctx, const char *path,
    const schema_def *schema, birth *b, sqlite3 **db, db_stmts *stmts);
/* 1 when the open's transaction is still begun (BIRTH_FIRST): the first
 * change is made in it, not in one of its own. */
int birth_begun(const birth *b, sqlite3 *db);
/* 1 while no change of the file was committed since this open made it. */
int birth_unborn(const birth *b);
/* The first change rolled back: the schema is kept (committed alone, or,
 * in WAL, in the copy), as it would have been had it been committed on
 * its own. */
void birth_rolled_back(birth *b, sqlite3 *db, const char *what);
/* After a commit on *db: the copy's connection is given up (*db NULL,
 * *stmts empty) and the copy given its name (steps 4 and 5): BIRTH_MADE;
 * in a group, named when the group settles: BIRTH_PENDING. Else the file
 * is born: BIRTH_NONE. */
int birth_committed(birth *b, sqlite3 **db, db_stmts *stmts);
/* BIRTH_PENDING: its group settled first if it has not yet, then 0 when
 * the copy has its name, or the failure that kept it from it (the
 * commit is lost: nothing is at the name); either way BIRTH_MADE after.
 * Any other state: 0. */
int birth_settled(birth *b);
/* Ends what this open made and closes *db (*stmts finalized first, the
 * transaction rolled back): a copy never committed goes (nothing was at
 * the name), and a file made here that holds its schema alone is
 * removed. */
void birth_close(birth *b, sqlite3 **db, db_stmts *stmts, const char *path);

/*
 * A group of births. A process that makes several objects' files before
 * it answers (bakery-order --batch's group of lines, a consumer's batch)
 * settles them together: from birth_group_begin, a first commit in a
 * copy leaves it BIRTH_PENDING, its making's lock held, until
 * birth_group_settle, which writes back every copy's data at once, then
 * syncs each (the syncs find their data already on its way), names them
 * all, and syncs each folder once for every name given in it. What a
 * group made is acknowledged only after it settled: a failure, or a
 * power cut at any point before, leaves no file at a name and nothing
 * answered (docs/adr/0009-a-group-of-births.md). A group holds at most
 * BIRTH_GROUP_MAX copies: one more settles those first.
 */
#define BIRTH_GROUP_MAX 64
/* 1 when it began one, 0 when ctx is in a group already. ordered: a
 * commit to a file that is there (birth_group_before_commit) waits until
 * the group's births have their names, so that no change is durable
 * before one the same process made earlier (a command that makes one
 * file, then changes another, as bakery-order --batch's commands may);
 * a consumer's deliveries, each acknowledged only after all of them,
 * need no such order. */
int birth_group_begin(bakery_ctx *ctx, int ordered);
/* Before a commit to a file that is there: an ordered group settles
 * first, and its failure is the commit's (0 else). */
int birth_group_before_commit(bakery_ctx *ctx);
/* Names what the group holds: 0, or the first of its failures (each
 * birth has its own, birth_settled). The group goes on, empty. */
int birth_group_settle(bakery_ctx *ctx);
/* Settles the group first when path is one of its copies' (a command of
 * the group opens it again). */
void birth_group_wants(bakery_ctx *ctx, const char *path);
/* Settles and ends the group: birth_group_settle's answer. */
int birth_group_end(bakery_ctx *ctx);

/*
 * The making's lock of path, taken by one who makes nothing: the alarm run
 * that finds an entry whose object has no file. A maker holds it from
 * before it writes its alarm's index entry until its file has its name,
 * so while it is held here no maker is between the two, and none starts.
 * 0 when path does not exist: *held holds the lock until birth_release
 * (NULL when path's folder does not exist either: no maker is past its
 * lock there). BIRTH_HOLD_MADE when path exists (made meanwhile, or, in a
 * rollback journal, being made: its file is created first), and
 * BIRTH_HOLD_MAKING when a maker holds the lock: nothing held. Or a
 * failure. Never waits.
 */
enum { BIRTH_HOLD_MADE = 1, BIRTH_HOLD_MAKING = 2 };
int birth_hold(const char *path, birth_copy **held);
void birth_release(birth_copy *held);

#endif
