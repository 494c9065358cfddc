/*
 * relay.h — sending outboxes: one object on demand, or every object whose
 * alarm is due.
 *
 * An alarm run (relay_due) takes the due entries of the alarm index, earliest
 * first, and for each object: sends what its outbox holds; when rows remain
 * it re-arms the alarm ctx->alarm_delay_s out. Re-arms are counted per
 * object per UTC day (REARM_GUARD, 100): the 101st of a day is refused, logged
 * as alarm_guard with the object and its row count, and the alarm is
 * disarmed; the rows wait for the object's next command (which may always
 * arm) or for the wipe. The count starts again at 00:00 UTC.
 *
 * Each object's line on stdout: {"address","sandbox","sent","left",
 * "alarm"} where alarm is "rearmed", "guard", "disarmed", "not-due" or
 * "gone" (the object was wiped), plus "rearms_today".
 */
#ifndef BAKERY_RELAY_H
#define BAKERY_RELAY_H

#include <stdint.h>

#include <jv.h>

#include "../store/store.h"

#define REARM_GUARD 100

typedef void (*relay_report_fn)(void *arg, jv line);

/* Sends one object's outbox; reports {"address","sandbox","sent","left"}. */
int relay_object(bakery_ctx *ctx, const char *sandbox, const char *address,
    relay_report_fn report, void *arg);

/* Fires every alarm due at now. *objects counts the objects opened. */
int relay_due(bakery_ctx *ctx, int64_t now, relay_report_fn report,
    void *arg, int *objects);

#endif
