/*
 * home.h — where bakery keeps state: the home folder and its layout.
 *
 * Owns: the home folder (BAKERY_HOME) and what counts as one, the layout
 * below it, name checks on every path it builds, folder modes, the
 * sandboxes' locks.
 *
 * Layout under HOME (docs/design.md, "The home's layout"):
 *   sandboxes/SANDBOX/KIND/KEY.db  one object (order/ord_1 ->
 *                         sandboxes/default/order/ord_1.db)
 *   sandboxes/SANDBOX/sandbox.db   faults and dead letters of the sandbox
 *   queue.db              the embedded queue (sqlite: driver)
 *   alarms.db             the alarm index: which objects may have a due alarm
 *   wipe.db, webhook-secret  the wipe's progress, the test gateway's secret
 *   refunds.db            flagged payments kept past the wipe (refunds.h)
 *   .gateway, routes      the payment gateway chosen, the home's routes
 *   .SANDBOX.lock         the sandbox's lock against the wipe (home_lock_sandbox)
 *   .wipe-RUN-SANDBOX/    a sandbox's folder the wipe moved aside to remove
 *   .layout               bakery's mark: this folder is a home bakery made,
 *                         and the newest bakery that wrote it (home_mark.c)
 *   .layout.lock          held while the mark is rewritten
 * A sandbox's name never meets the home's own files: they live in
 * different folders, and the dot files are not names.
 *
 * Promises: a bad name never becomes a path (EX_USAGE); folders are 0700.
 * A folder is a home only when it holds the mark, or is empty, or holds
 * nothing but the files above (a home of 0.1.0 that only ever had its queue
 * or its gateway has no mark); any other folder is EX_CONFIG for every
 * program, before anything in it is read, moved or removed. A program
 * writes nothing in a home whose mark names a newer bakery (EX_CONFIG,
 * naming both), and a mark that is not one bakery wrote is EX_CONFIG for
 * every program.
 */
#ifndef BAKERY_HOME_H
#define BAKERY_HOME_H

#include <jv.h>
#include <sqlite3.h>
#include <stdint.h>

#include "ctx.h"
#include "schema.h"

typedef struct bakery_ctx bakery_ctx;

extern const schema_def home_sandbox_schema;

/* Checks ctx->home and sets ctx->sandboxes and ctx->home_written_by.
 * EX_CONFIG for a path that is not absolute or holds a control character,
 * a home that is not a folder or cannot be looked at, a folder that is not
 * bakery's (naming the first entry that is not), and a mark bakery did not
 * write; a missing home, or one without its mark, gets it before the
 * first file in it (home_make). A home a newer bakery wrote is read, not
 * written. Called by ctx_init. */
int home_init(bakery_ctx *ctx);
/* EX_CONFIG unless home is an absolute path of printable UTF-8. */
int home_path_valid(const char *home);
/* EX_CONFIG unless home is a folder bakery may take for a home, or missing
 * (a home to make), with a mark bakery wrote if any; *pending says what
 * home_make would make, written_by the bakery the mark names ("": none). */
int home_bakerys(const char *home, enum home_pending *pending,
    char written_by[HOME_VERSION_SIZE]);

/* The mark's name in the home. */
#define HOME_MARK ".layout"
/* Reads HOME/.layout (home_mark.c): *marked unless it is missing; the
 * version it records in written_by ("" none, or one this process cannot
 * read). EX_CONFIG when it is not a regular file, over 64 bytes, or not
 * the line "sandboxes" then "bakery MAJOR.MINOR.PATCH" (or the first
 * alone, or nothing: what 0.1.0 wrote). */
int home_mark_read(const char *home, char written_by[HOME_VERSION_SIZE],
    int *marked);
/* Records this bakery in the mark, under HOME/.layout.lock, when it
 * names an older one or none, and sets written_by to this bakery; the
 * mark is made first when unmarked (then without the lock, before any
 * other file). EX_CONFIG, writing nothing, when it names a newer one. */
int home_mark_record(const char *home, int unmarked,
    char written_by[HOME_VERSION_SIZE]);
/* For a long-running program, at the top of each turn: one lstat of the
 * mark, and when it is not the one last read (first call, or replaced),
 * a read of it. EX_CONFIG, as home_make says it, once it names a newer
 * bakery, and from then on home_make refuses too; EX_CONFIG when it is
 * no longer a mark bakery wrote. */
int home_recheck(bakery_ctx *ctx);
/* <0, 0, >0 as version a is older than b, the same, newer; "" (none) is
 * older than any. Versions home_mark_read gave, or BAKERY_VERSION. */
int home_version_compare(const char *a, const char *b);
/* EX_CONFIG: home was written by written_by, newer than this bakery. */
int home_refuse_newer(const char *home, const char *written_by);

/* The home folder: -H, else BAKERY_HOME, else $STATE_DIRECTORY,
 * else $XDG_STATE_HOME/bakery, else ~/.local/state/bakery. */
char *home_default(void);

/* A file of share/ (caller frees): share/NAME of the source tree when the
 * program runs from an uninstalled build (beside bin/, or two up from
 * build/tests/), else SHAREDIR/NAME, which need not exist. */
char *home_share_path(const char *name);

/* EX_USAGE unless *sandbox (NULL: ctx->sandbox, set in *sandbox) is a
 * sandbox name. */
int home_check_sandbox(bakery_ctx *ctx, const char **sandbox);
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
/* Before a program's first write in the home: makes HOME (0700) when
 * there was none, and its mark (.layout, synced) when it has none; records
 * this bakery in the mark when it names an older one or none. EX_CONFIG,
 * with nothing written, when a newer bakery wrote the home. Once it
 * passed, it costs nothing: call it before every write. */
int home_make(bakery_ctx *ctx);
/* EX_CONFIG when a newer bakery wrote the home, as home_make would say;
 * writes nothing: for a program that refuses before it reads its input. */
int home_may_write(bakery_ctx *ctx);
/* home_make when path lies in the home (a queue may lie outside it). */
int home_make_for(bakery_ctx *ctx, const char *path);
/* EX_CONFIG unless HOME is an existing folder: for the programs that
 * look at the whole home, where a missing one is a mistake, not empty. */
int home_exists(bakery_ctx *ctx);
/* Caller frees. */
char *home_sandbox_file(bakery_ctx *ctx, const char *sandbox);
char *home_object_path(bakery_ctx *ctx, const char *sandbox,
    const char *address);
char *home_sandbox_dir(bakery_ctx *ctx, const char *sandbox);
/* The names of the sandbox folders, sorted (jv array of strings); dot
 * files and names that are not sandbox names are left out. */
jv home_sandbox_names(bakery_ctx *ctx);
/* Makes the folder dir (0700) and its missing parents, each new one's
 * name synced in its parent; one that is there is left as it is (one
 * mkdir: EEXIST). */
int home_mkdirs(const char *dir);
/* Removes path and everything under it, links not followed; a missing
 * path is 0 (the wipe's aside folder, a backup's unfinished copy). */
int home_remove_tree(const char *path);

#endif
