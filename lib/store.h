/*
 * store.h — where bakery keeps state, and how it opens a SQLite file.
 *
 * Owns: the home folder (BAKERY_HOME), the layout below it, name checks on
 * every path it builds, file modes, connection settings (busy timeout,
 * synchronous, journal mode), BEGIN IMMEDIATE, schema versions.
 *
 * Layout under HOME (docs/design.md, "The home's layout"):
 *   sandboxes/SANDBOX/KIND/KEY.db  one object (order/ord_1 ->
 *                         sandboxes/default/order/ord_1.db)
 *   sandboxes/SANDBOX/sandbox.db   faults and dead letters of the sandbox
 *   queue.db              the embedded queue (sqlite: driver)
 *   alarms.db             the alarm index: which objects may have a due alarm
 *   wipe.db, webhook-secret  the wipe's progress, the test gateway's secret
 *   .SANDBOX.lock         the sandbox's lock against the wipe (store_lock_sandbox)
 *   .layout               says sandboxes/ holds the sandboxes (a home of
 *                         before had them at HOME/SANDBOX: migrated once)
 * A sandbox's name never meets the home's own files: they live in
 * different folders, and the dot files are not names.
 *
 * Promises: a bad name never becomes a path (EX_USAGE); files are 0600 and
 * folders 0700; every write transaction is BEGIN IMMEDIATE with a busy
 * timeout, so SQLITE_BUSY surfaces only after the timeout, as EX_TEMPFAIL;
 * schemas move forward by PRAGMA user_version.
 *
 * Journal mode. SQLite 3.7.0 to 3.51.2 carry a WAL-reset race that can
 * corrupt a database when a checkpoint and a commit that resets the WAL
 * race (fixed in 3.51.3, backported to 3.44.6 and 3.50.7). On an affected
 * library (Debian 12 ships 3.40.1) bakery uses a rollback journal
 * (journal_mode=TRUNCATE), which has no WAL; on a fixed one it uses WAL.
 * See docs/adr/0002-journal-mode.md.
 */
#ifndef BAKERY_STORE_H
#define BAKERY_STORE_H

#include <jv.h>
#include <sqlite3.h>

/* The context (home, sandbox, settings, open handles) is lib/ctx.h's:
 * the storage layer reads its settings and knows nothing of the handles. */
typedef struct bakery_ctx bakery_ctx;

/* A file's schema: migrations[i] takes user_version i to i + 1. A file
 * of read_from or later is read by store_open_readonly as it is: the
 * migrations after read_from add only what the read-only tools do not
 * read. */
typedef struct store_schema {
	const char *name;
	const char *const *migrations;
	int count;
	int read_from;
	/* The newest schema in one go, for a new file (version 0), so that
	 * it is not built by replaying every migration; NULL: replay them.
	 * tests/unit/store.c checks it equals what the migrations build. */
	const char *create;
} store_schema;

extern const store_schema store_sandbox_schema;
extern const store_schema store_alarms_schema;

/* Set by a program that only looks (bakery-status, bakery-trace,
 * bakery-show, bakery-queue stats and peek) before ctx_init: it
 * never moves an old home to the new layout, it reads it as it is. */
extern int store_look_only;

/* Sets ctx->sandboxes from ctx->home, and moves a home of the old layout
 * (sandboxes at HOME/SANDBOX) to HOME/sandboxes/SANDBOX, once, unless
 * store_look_only or the home cannot be written (then it is read as it
 * is); a crash midway is finished by the next program. A home that is
 * not a folder is EX_CONFIG. Called by ctx_init. */
int store_layout_init(bakery_ctx *ctx);

/* The home folder: -H, else BAKERY_HOME, else $STATE_DIRECTORY,
 * else $XDG_STATE_HOME/bakery, else ~/.local/state/bakery. */
char *store_default_home(void);

/* A file of share/ (caller frees): share/NAME of the source tree when the
 * program runs from an uninstalled build (beside bin/, or two up from
 * build/tests/), else SHAREDIR/NAME, which need not exist. */
char *store_share_path(const char *name);


/* Opens path with schema; create=0 and store_look_only: read-only, as
 * store_open_readonly, when the file has the current schema.
 * create=0 fails with EX_NOINPUT if missing or
 * empty (no schema: a creation that failed or is under way), and a file
 * that is not SQLite's is EX_DATAERR. A symlink or a FIFO at path is
 * EX_CONFIG, here and in store_open_readonly: never followed, never
 * waited on (SQLITE_OPEN_NOFOLLOW). In WAL a new file is made whole
 * under a temporary name and renamed into place (store.c, "A new file in
 * WAL"); a missing one, in a rollback journal, is created empty and given
 * its schema in its first transaction.
 * create=STORE_CREATE_BEGUN: a file that needs its schema gets it in a
 * write transaction that is left open (sqlite3_get_autocommit() is 0), so
 * that the caller's first change commits with it: one commit, not two.
 * Test hook: BAKERY_FAIL_WRITE_AT (lib/testvfs.h) is registered here,
 * before the first open. */
#define STORE_CREATE_BEGUN 2
int store_open(bakery_ctx *ctx, const char *path, const store_schema *schema,
    int create, sqlite3 **db);
/* Removes path, and its journals, when it is still empty (in WAL: when
 * nothing was ever committed to its -wal, the file holding its schema
 * alone): a file made by this process whose first transaction failed is
 * not left to look like an object. Checked and removed under SQLite's exclusive lock on it;
 * locked by another: left alone. Any open transaction on db ends. */
void store_drop_unborn(sqlite3 *db, const char *path);
/* Opens an existing file for reading only, for tools that look and must
 * not touch (bakery-status, bakery-trace): nothing is created, no journal
 * mode is set, no schema is migrated, and the connection is query_only.
 * EX_NOINPUT when the file is missing or has no schema yet (a file being
 * created); EX_CONFIG when its schema version is not between
 * schema->read_from and schema->count. */
int store_open_readonly(bakery_ctx *ctx, const char *path,
    const store_schema *schema, sqlite3 **db);
/* The same reader for any SQLite file, whatever its schema (bakery-doctor's
 * quick_check, bakery-backup's VACUUM INTO): nothing created, nothing
 * written, query_only. EX_NOINPUT when the file is missing. */
int store_open_reader(bakery_ctx *ctx, const char *path, sqlite3 **db);
int store_open_sandbox(bakery_ctx *ctx, const char *sandbox, int create,
    sqlite3 **db);
/* The sandbox's lock: HOME/.SANDBOX.lock, outside the folder the wipe
 * renames aside. object_open holds it shared until object_close; the wipe
 * holds it exclusively from setting its fence until its folder is aside,
 * so no object of the sandbox is open across the two: an object opened
 * before the fence closed before it, one opened after opens in the new
 * folder. Waits up to ctx->busy_timeout_ms (then EX_TEMPFAIL). create=0
 * and no HOME: *fd is -1 and nothing is locked, since there is nothing
 * to open; likewise when the lock file is missing and cannot be made. */
int store_lock_sandbox(bakery_ctx *ctx, const char *sandbox, int exclusive,
    int create, int *fd);
void store_unlock_sandbox(int fd); /* -1: nothing */
/* The wipe's clock floor kept in the lock file fd (a store_lock_sandbox
 * fd), 0 if none: see wipe.h, "The clock floor". */
int64_t store_lock_floor(int lock_fd);
/* The sandbox whose lock file is named base (".default.lock" ->
 * "default"; caller frees), or NULL when base is not one. */
char *store_lock_file_sandbox(const char *base);
/* HOME/.SANDBOX.lock; it also holds the sandbox's clock floor (wipe.h). */
char *store_sandbox_lock_path(bakery_ctx *ctx, const char *sandbox);
/* Makes HOME (0700) and its layout mark when there was no HOME. */
int store_make_home(bakery_ctx *ctx);
/* EX_CONFIG unless HOME is an existing folder: for the programs that
 * look at the whole home, where a missing one is a mistake, not empty. */
int store_home_exists(bakery_ctx *ctx);
/* The exit code for a failed file operation's errno: full disk or I/O
 * 74, permission or a read-only file system 77, else 73. */
int store_errno_code(int err);
/* Caller frees. */
char *store_sandbox_file(bakery_ctx *ctx, const char *sandbox);
char *store_object_path(bakery_ctx *ctx, const char *sandbox,
    const char *address);
char *store_sandbox_dir(bakery_ctx *ctx, const char *sandbox);
/* The names of the sandbox folders, sorted (jv array of strings); dot
 * files and names that are not sandbox names are left out. */
jv store_sandbox_names(bakery_ctx *ctx);
int store_mkdirs(const char *dir);
/* Removes path and everything under it, links not followed; a missing
 * path is 0 (the wipe's aside folder, a backup's unfinished copy). */
int store_remove_tree(const char *path);

/* relaxed=1: the connection's next commits run at synchronous=NORMAL,
 * for a commit whose loss on a power cut loses and doubles nothing (the
 * work it records is done again, and absorbed: docs/design.md, "WAL");
 * relaxed=0: back to FULL. In WAL only: a rollback journal at NORMAL
 * may corrupt a file on an old filesystem, and stays FULL. Nothing with
 * BAKERY_SYNC=normal, where every commit is NORMAL already. */
void store_relaxed(bakery_ctx *ctx, sqlite3 *db, int relaxed);
int store_begin(sqlite3 *db);     /* BEGIN IMMEDIATE */
int store_commit(sqlite3 *db);
void store_rollback(sqlite3 *db); /* safe when no transaction is open */
int store_exec(sqlite3 *db, const char *sql);
/* Runs n statements in one write transaction of their own (BEGIN
 * IMMEDIATE, each stepped once, COMMIT), all bound to the same parameters:
 * types names them in order, 't' a string (const char *), 'i' an integer
 * (int64_t), bound to ?1, ?2, ... (at most 8); a statement with fewer
 * parameters leaves the rest. A failure rolls back every one and is
 * store_fail's "WHAT: sqlite's message". */
int store_run(sqlite3 *db, const char *what, int n, const char *const *sql,
    const char *types, ...);
/*
 * Prepared statements kept for the life of a connection. A command or a
 * consumer runs the same few statements for every event; preparing each
 * one again cost as much CPU as the rest of the work together. A
 * statement is found again by the address of its SQL text and its text
 * is compared before it is used, so any string is safe to pass; literals
 * are what hit. store_stmts_free before the connection closes.
 */
#define STORE_STMTS 32
typedef struct store_stmts {
	struct {
		const char *sql; /* the caller's pointer: compared, not read */
		sqlite3_stmt *st;
	} slot[STORE_STMTS];
} store_stmts;
/* An SQLite result code; *st is ready to bind and step. */
int store_prepare(sqlite3 *db, store_stmts *c, const char *sql,
    sqlite3_stmt **st);
/* Done with st: reset (and bindings cleared) when kept, else finalized. */
void store_release(store_stmts *c, sqlite3_stmt *st);
void store_stmts_free(store_stmts *c);

/* Records "WHAT: sqlite's message" with the exit code for rc. */
int store_fail(sqlite3 *db, int rc, const char *what);

/* A time column (ms) as a JSON string, or null when the column is NULL. */
jv store_column_time(sqlite3_stmt *st, int col);
/* Whether SQLite version (as sqlite3_libversion_number()) has the fix. */
int store_wal_reset_fixed(int version);
/* "truncate" or "wal", chosen from sqlite3_libversion_number(). */
const char *store_journal_mode(void);

#endif
