/*
 * lease.h — who is the primary, and until when: the lease in the key
 * "primary" of the bucket BAKERY_REPLICA_LEASE (replica.h), whose value
 * is {"host":"HOSTID","epoch":"EPOCH","until_ms":N}.
 *
 * The primary renews it well before until_ms (bakery-standby, every
 * third of the lease); a standby takes it only when it is free or its
 * until_ms has passed, and moves the stream to its new epoch, which
 * fences the old primary whatever it still believes. Every write is
 * conditional on the revision read (kvStore_Create, kvStore_Update): of
 * two hosts that read the same lease, one writes it and the other is
 * told the revision moved. Times are the hosts' wall clocks: they are
 * assumed to agree to well within a lease.
 *
 * Owns: the lease's value read and written, and what a failed write
 * means (held by another host, lost, unreachable).
 */
#ifndef BAKERY_LEASE_H
#define BAKERY_LEASE_H

#include <stdint.h>

#include "replica.h"

typedef struct lease {
	int held; /* 0: the key has no value, the lease is free */
	char host[REPLICA_ID_SIZE];
	char epoch[REPLICA_ID_SIZE];
	int64_t until_ms;
	uint64_t revision; /* the value's in the bucket; 0 when free */
} lease;

/* The bucket made when missing (replicas as replica_stream_epoch's):
 * a first primary takes the lease before it makes the stream. */
int lease_make_bucket(replica_nats *rn, int replicas);
/* The lease as the bucket has it: EX_UNAVAILABLE when there is no bucket
 * (no primary was made) or no answer, EX_DATAERR for a value bakery did
 * not write. */
int lease_read(replica_nats *rn, lease *l);
/* Whether l is held by a host other than host until after now. */
int lease_held_by_other(const lease *l, const char *host, int64_t now_ms);
/* l, as read, taken for host and epoch until until_ms: EX_TEMPFAIL,
 * naming the holder and when its lease ends, when another host holds it
 * until after now (or wrote it since it was read); else l is the lease
 * written. */
int lease_take(replica_nats *rn, lease *l, const char *host,
    const char *epoch, int64_t until_ms);
/* l, held by this host, renewed until until_ms: EX_UNAVAILABLE when it
 * was written since (the lease is lost: another host took it),
 * EX_TEMPFAIL when the bucket did not answer. */
int lease_renew(replica_nats *rn, lease *l, int64_t until_ms);
/* "HOST (epoch EPOCH) until TIME" for a message. */
void lease_describe(const lease *l, char *buf, size_t size);

#endif
