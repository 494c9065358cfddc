/*
 * replica_status.h — a replicated home as bakery-status and
 * bakery-doctor show it: its role, its host and epoch, who holds the lease
 * and until when, and each standby's lag (records its durable consumer
 * has not acknowledged, and the age of the oldest), read from the stream
 * without writing anything.
 */
#ifndef BAKERY_REPLICA_STATUS_H
#define BAKERY_REPLICA_STATUS_H

#include <jv.h>
#include <stdint.h>

#include "replica.h"

/* {"role", "host", "epoch", "lease": {"host", "epoch", "until"} or null,
 * "standbys": [{"host", "records", "seconds"}], "error" when the stream
 * did not answer}, or null for a home that is not replicated. What needs
 * an operator is appended to *attention: the stream unreachable, a
 * primary whose lease another host holds, a lease no primary renews, a
 * standby more than max_age_s behind. */
jv replica_status(bakery_ctx *ctx, int64_t max_age_s, jv *attention);
/* replica_status's value (consumed) as Prometheus text: the home's role,
 * the lease's seconds left by its host, each standby's lag in records and
 * seconds; "" for null. */
char *replica_prometheus(jv replica);

#endif
