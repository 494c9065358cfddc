/*
 * home.h — where bakery keeps state: the home folder and its layout.
 *
 * Owns: the home folder (BAKERY_HOME), the layout below it and its
 * migration, name checks on every path it builds, folder modes, the
 * sandboxes' locks.
 *
 * Layout under HOME (docs/design.md, "The home's layout"):
 *   sandboxes/SANDBOX/KIND/KEY.db  one object (order/ord_1 ->
 *                         sandboxes/default/order/ord_1.db)
 *   sandboxes/SANDBOX/sandbox.db   faults and dead letters of the sandbox
 *   queue.db              the embedded queue (sqlite: driver)
 *   alarms.db             the alarm index: which objects may have a due alarm
 *   wipe.db, webhook-secret  the wipe's progress, the test gateway's secret
 *   .SANDBOX.lock         the sandbox's lock against the wipe (home_lock_sandbox)
 *   .layout               says sandboxes/ holds the sandboxes (a home of
 *                         before had them at HOME/SANDBOX: migrated once)
 * A sandbox's name never meets the home's own files: they live in
 * different folders, and the dot files are not names.
 *
 * Promises: a bad name never becomes a path (EX_USAGE); folders are 0700.
 */
#ifndef BAKERY_HOME_H
#define BAKERY_HOME_H

#include <jv.h>
#include <sqlite3.h>
#include <stdint.h>

#include "database.h"
#include "schema.h"

typedef struct bakery_ctx bakery_ctx;

extern const schema_def home_sandbox_schema;

/* Checks ctx->home: a home that is not a folder, or cannot be looked
 * at, is EX_CONFIG; a missing one is made, with its layout mark, before
 * the first file in it (home_make). Its layout is not looked at yet.
 * Called by ctx_init. */
int home_init(bakery_ctx *ctx);
/* The home's layout, found when it is first needed (by a sandbox's path,
 * its lock, its names): sets ctx->sandboxes, and moves a home of the old
 * layout (sandboxes at HOME/SANDBOX) to HOME/sandboxes/SANDBOX, once,
 * unless ctx->look_only or the home cannot be written (then it is read
 * as it is); a crash midway is finished by the next program. Once found,
 * 0 at once; a failure is tried again by the next call. The home's own
 * files (the queue, the alarm index, the wipe's) never need it. */
int home_layout(bakery_ctx *ctx);

/* The home folder: -H, else BAKERY_HOME, else $STATE_DIRECTORY,
 * else $XDG_STATE_HOME/bakery, else ~/.local/state/bakery. */
char *home_default(void);

/* A file of share/ (caller frees): share/NAME of the source tree when the
 * program runs from an uninstalled build (beside bin/, or two up from
 * build/tests/), else SHAREDIR/NAME, which need not exist. */
char *home_share_path(const char *name);

/* EX_USAGE unless *sandbox (NULL: ctx->sandbox, set in *sandbox) is a
 * sandbox name; then the home's layout (home_layout). */
int home_check_sandbox(bakery_ctx *ctx, const char **sandbox);
int home_open_sandbox(bakery_ctx *ctx, const char *sandbox,
    enum db_open_mode mode, sqlite3 **db);
/* The sandbox's lock: HOME/.SANDBOX.lock, outside the folder the wipe
 * renames aside. object_open holds it shared until object_close; the wipe
 * holds it exclusively from setting its fence until its folder is aside,
 * so no object of the sandbox is open across the two: an object opened
 * before the fence closed before it, one opened after opens in the new
 * folder. Waits up to ctx->busy_timeout_ms (then EX_TEMPFAIL). create=0
 * and no HOME: *fd is -1 and nothing is locked, since there is nothing
 * to open; likewise when the lock file is missing and cannot be made. */
int home_lock_sandbox(bakery_ctx *ctx, const char *sandbox, int exclusive,
    int create, int *fd);
void home_unlock_sandbox(int fd); /* -1: nothing */
/* The wipe's clock floor kept in the lock file fd (a home_lock_sandbox
 * fd), 0 if none: see wipe.h, "The clock floor". */
int64_t home_lock_floor(int lock_fd);
/* The sandbox whose lock file is named base (".default.lock" ->
 * "default"; caller frees), or NULL when base is not one. */
char *home_lock_file_sandbox(const char *base);
/* HOME/.SANDBOX.lock; it also holds the sandbox's clock floor (wipe.h). */
char *home_sandbox_lock_path(bakery_ctx *ctx, const char *sandbox);
/* Makes HOME (0700) and its layout mark when there was no HOME. */
int home_make(bakery_ctx *ctx);
/* EX_CONFIG unless HOME is an existing folder: for the programs that
 * look at the whole home, where a missing one is a mistake, not empty;
 * then the home's layout (home_layout). */
int home_exists(bakery_ctx *ctx);
/* Caller frees. The layout is found first if it was not (home_layout);
 * should that fail, the caller's next gate says so. */
char *home_sandbox_file(bakery_ctx *ctx, const char *sandbox);
char *home_object_path(bakery_ctx *ctx, const char *sandbox,
    const char *address);
char *home_sandbox_dir(bakery_ctx *ctx, const char *sandbox);
/* The names of the sandbox folders, sorted (jv array of strings); dot
 * files and names that are not sandbox names are left out. */
jv home_sandbox_names(bakery_ctx *ctx);
int home_mkdirs(const char *dir);
/* Removes path and everything under it, links not followed; a missing
 * path is 0 (the wipe's aside folder, a backup's unfinished copy). */
int home_remove_tree(const char *path);

#endif
