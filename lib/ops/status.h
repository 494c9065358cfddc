/*
 * status.h — what an operator needs to see, on one screen.
 *
 * For each sandbox (or the one asked for): every object's outbox depth and
 * the age of its oldest row, its alarm (armed, re-arms today, whether the
 * re-arm guard tripped), and the sandbox's dead letters; for the queue, the
 * depth of bakery-events and bakery-events-dlq (ready, leased, delayed).
 *
 * Promises: nothing is written. Object and sandbox files are opened
 * read-only (db_open_readonly: no journal mode, no migration); the
 * queue is asked for its stats through its driver, and the embedded
 * queue's file is not created when it does not exist yet. A file that
 * cannot be read is reported as needing attention; the rest is still read.
 *
 * Something needs attention (status_collect's "attention", a list of
 * sentences) when a sandbox holds dead letters, bakery-events-dlq holds
 * messages not yet drained (a line for the queue, and one for each
 * sandbox they are of: status-internal.h), a re-arm guard tripped today, an object's
 * alarm is armed with no entry in the alarm index (alarm_index_has: no
 * alarm run would fire it), an entry of the alarm index is due more than
 * max_age_s ago (status_alarms_overdue: no alarm run could fire it), an
 * outbox row is older than max_age_s, a file could not be read, or Billing holds a
 * flagged payment (billing.h: a second payment of an order, or one that
 * is not its order's), which an operator refunds; when a dead letter is a
 * PaymentSucceeded Billing never counted (billing_counts: one made by
 * hand, which paid nothing); or when the home's disk is full (less than
 * 1 MiB free: every write fails).
 *
 * The shape (bakery-status(1) --json):
 *   {"time","home","gateway","max_age_s","disk_free_bytes","ok",
 *    "attention":[...],
 *    "queue":{"bakery-events":{"ready","leased","delayed"},
 *             "bakery-events-dlq":{...}},
 *    "sandboxes":[{"sandbox","objects","outbox_rows","oldest_age_s",
 *      "alarms_armed","rearms_today","guards_tripped","alarms_unfound",
 *      "alarms_overdue","dead_letters","undrained",
 *      "faults":[{"name","set_at"}],
 *      "flagged_payments","unbilled_payments",
 *      "busy":[{"address","outbox_rows","oldest_at","oldest_age_s",
 *               "alarm_at","alarm_indexed","rearms_today",
 *               "guard_tripped"}],
 *      "dead":[{"id","type","error","attempts","times","updated_at"}],
 *      "flagged":[{"address","order","payment_intent","flag","reason",
 *                  "amount_cents","currency"}]}]}
 * where "gateway" is the home's payment gateway (gateway.h), null when
 * none is chosen, and
 * "busy" lists the objects with outbox rows, an armed alarm or
 * re-arms today.
 */
#ifndef BAKERY_STATUS_H
#define BAKERY_STATUS_H

#include <stdint.h>

#include <jv.h>

#include "../store/store.h"

/* sandbox NULL: every sandbox under HOME. */
int status_collect(bakery_ctx *ctx, const char *sandbox, int64_t max_age_s,
    jv *out);

/* The Prometheus text exposition format of a status. Caller frees. */
char *status_prometheus(jv status);

/* Writes text to path atomically for node_exporter's textfile collector:
 * PATH.tmp is written, fsynced and renamed over path (mode 0644). */
int status_write_file(const char *path, const char *text);

#endif
