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
 *
 * An object the run cannot fire (its file cannot be opened or written:
 * one a sandbox made by root holds, a file locked past the busy timeout,
 * a full disk) keeps its entry where it was, is logged as alarm_error and
 * reported as {"address","sandbox","alarm":"failed","status","error"},
 * and the run goes on: it reads the due entries a page at a time, each
 * page from past the last entry of the one before (alarm_index_due), so
 * every due entry is visited once and none that fails hides the others.
 */
#ifndef BAKERY_RELAY_H
#define BAKERY_RELAY_H

#include <stdint.h>

#include <jv.h>

#include "../core/alarm.h"
#include "../store/store.h"

#define REARM_GUARD 100

typedef void (*relay_report_fn)(void *arg, jv line);

/* Sends one object's outbox; reports {"address","sandbox","sent","left"}. */
int relay_object(bakery_ctx *ctx, const char *sandbox, const char *address,
    relay_report_fn report, void *arg);

/* What an alarm run did: the due entries it visited, those it could not
 * fire, and the first of those: its entry, exit status and error. */
typedef struct relay_tally {
	int objects, failed;
	alarm_entry first;
	int status;
	char error[512];
} relay_tally;

/* Fires every alarm due at now. Returns a failure of the run itself (the
 * index cannot be read or restored); an object that cannot be fired is
 * counted in *tally, not returned. */
int relay_due(bakery_ctx *ctx, int64_t now, relay_report_fn report,
    void *arg, relay_tally *tally);

#endif
