/*
 * wipe.h — the daily wipe: every sandbox, or one, reset to nothing.
 *
 * A wipe run has a scope, recorded with it: one sandbox, or every
 * sandbox (the daily wipe). It resets each sandbox of its scope in turn: its queued messages go and its
 * fence is set (queue.h), so an event recorded before the wipe can neither
 * be queued again by a relay that read it earlier nor applied by a consumer
 * that leased it earlier; its alarm index entries go; then its folder —
 * every object, its dead letters and its faults — is renamed aside and
 * removed. Files are deleted, never read: the wipe does not read an outbox.
 *
 * Progress is recorded in HOME/wipe.db, a row per sandbox, so a run that
 * was killed resumes where it stopped (`bakery-wipe --resume`, which does
 * nothing when no run is unfinished), within the scope it began with: the
 * sandboxes it listed when it started, no other. An order placed in a sandbox while
 * the wipe is removing it is removed with it: the wipe resets the sandbox.
 * On a terminal, a progress line counts the sandboxes on stderr (progress.h).
 */
#ifndef BAKERY_WIPE_H
#define BAKERY_WIPE_H

#include <stdint.h>

#include <jv.h>

#include "../store/store.h"

typedef void (*wipe_report_fn)(void *arg, jv line);

/*
 * The clock floor. The fence is a time, and an event recorded before it is
 * dropped; so a wall clock stepped back after a wipe (NTP steps an hour)
 * would stamp the sandbox's new events before the fence, and the queue
 * and the subscribers would drop them: orders lost. The wipe writes the
 * fence into the sandbox's lock file (HOME/.SANDBOX.lock) before it
 * removes the folder, under the exclusive lock; an object reads it once,
 * under its shared lock, and stamps no event earlier (object_record).
 * The next wipe's fence is later than the floor, so an event stamped at
 * the floor is still dropped by the wipe after it. The lock file is the
 * store's: home_lock_floor reads the floor.
 */


enum wipe_mode {
	WIPE_START,	/* a new run, unless one is unfinished */
	WIPE_RESUME,	/* an unfinished run only */
	/* The timer's: a new run unless one started this UTC day or a later
	 * one. A wall clock stepped back an hour after the 10:00 wipe reaches
	 * 10:00 again: that is not a second wipe that day. One stepped forward
	 * a day wipes once, for the day it lands on. */
	WIPE_DAILY,
};

typedef struct wipe_request {
	enum wipe_mode mode;
	const char *sandbox;	/* the one sandbox; NULL: every sandbox */
	int dry_run;		/* say what would go, change nothing */
} wipe_request;

/* HOME/wipe.db's schema: the runs and their steps. */
extern const schema_def wipe_schema;

/* Finishes the unfinished runs within the request's scope (with a
 * sandbox, only runs of that sandbox: never one of every sandbox), then
 * starts a run of that scope as mode allows (none when one of the same
 * scope was unfinished: that was this wipe) and finishes it; *ran says
 * whether a run happened. Reports {"sandbox","run","wiped_at"} per
 * sandbox wiped; a dry run reports {"sandbox","run","objects"} per
 * sandbox that would be (run null for a run not yet started) and
 * changes no file. */
int wipe_run(bakery_ctx *ctx, const wipe_request *req,
    wipe_report_fn report, void *arg, int *ran);

#endif
