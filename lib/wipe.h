/*
 * wipe.h — the daily wipe: every sandbox reset to nothing.
 *
 * A wipe run resets each sandbox in turn: its queued messages go and its
 * fence is set (queue.h), so an event recorded before the wipe can neither
 * be queued again by a relay that read it earlier nor applied by a consumer
 * that leased it earlier; its alarm index entries go; then its folder —
 * every object, its dead letters and its faults — is renamed aside and
 * removed. Files are deleted, never read: the wipe does not read an outbox.
 *
 * Progress is recorded in HOME/wipe.db, a row per sandbox, so a run that
 * was killed resumes where it stopped (`bakery-wipe --resume`, which does
 * nothing when no run is unfinished). An order placed in a sandbox while
 * the wipe is removing it is removed with it: the wipe resets the sandbox.
 * On a terminal, a progress line counts the sandboxes on stderr (progress.h).
 */
#ifndef BAKERY_WIPE_H
#define BAKERY_WIPE_H

#include <stdint.h>

#include <jv.h>

#include "ctx.h"

typedef void (*wipe_report_fn)(void *arg, jv line);

/* Starts a run (or resumes an unfinished one) and finishes it. With
 * resume_only, does nothing unless a run is unfinished; *ran says whether a
 * run happened. Reports {"sandbox","run","wiped_at"} per sandbox. */
int wipe_run(bakery_ctx *ctx, int resume_only, wipe_report_fn report,
    void *arg, int *ran);

#endif
