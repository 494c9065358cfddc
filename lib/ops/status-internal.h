/*
 * status-internal.h — what status.c takes from the other files of the
 * status (status_alarms.c, status_held.c) and nobody else needs: the
 * alarms no run fired, and what a sandbox holds back that the rest of the
 * status does not count, its messages in bakery-events-dlq not yet
 * drained and the faults set in it (status.h).
 */
#ifndef BAKERY_STATUS_INTERNAL_H
#define BAKERY_STATUS_INTERNAL_H

#include <stdint.h>

#include <jv.h>

#include "../store/store.h"

/*
 * The alarms of sandbox that no alarm run fired: the entries of the
 * index (read-only, NULL: it cannot tell) due more than max_age_s before
 * now. Every entry a run fires is moved or removed, so these are ones a
 * run could not fire (an object file the relay's user cannot open, such
 * as one a command run as root made) or no run looked at. Returns how
 * many; when any, one sentence naming the oldest goes on *attention.
 */
long status_alarms_overdue(sqlite3 *index, const char *sandbox, int64_t now,
    int64_t max_age_s, jv *attention);

/* The most messages of bakery-events-dlq status peeks at to count them
 * by sandbox. */
#define STATUS_PEEK_MAX 10000

/* {SANDBOX: n}: the messages of each sandbox in bakery-events-dlq, not
 * yet drained, when its stats count undrained (> 0) of them: one peek of
 * at most STATUS_PEEK_MAX. {} when there are none; a failed peek is a
 * line appended to *attention. */
jv status_undrained(bakery_ctx *ctx, double undrained, jv *attention);

/* s, the status of sandbox, with "undrained" (its count in by, from
 * status_undrained; a count over 0 needs attention: a line appended to
 * *attention) and "faults" (the faults set in it, fault_list's
 * [{"name","set_at"}], read read-only). */
jv status_held(bakery_ctx *ctx, const char *sandbox, jv by, jv s,
    jv *attention);

#endif
