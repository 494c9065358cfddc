/*
 * takeover.h — a home made the primary or a standby, a standby promoted,
 * and the loop that keeps each in its role (bakery-standby).
 *
 * The primary holds the lease (lease.h) and renews it every third of
 * its length; should it lose it (another host took it), it stops, and
 * its programs' writes already find no stream for its epoch. A standby
 * applies the stream (standby.h); promoted (--promote, or by the loop
 * with --auto once the lease has ended), it
 *   1. takes the lease, free or ended, with a new epoch (held by another
 *      host until later: EX_TEMPFAIL naming it and its end; with --auto,
 *      waits for that end and tries again);
 *   2. moves the stream to that epoch (replica_stream_epoch): from then
 *      on the old primary's records find no stream, and its programs
 *      stop (69) before answering;
 *   3. applies every record the stream holds (nothing more can come);
 *   4. renews the lease and writes HOME/.replica: role primary, the new
 *      epoch, its own host. Its programs' commits are recorded from then
 *      on, each file's records numbered on from the last applied.
 * A promotion killed midway is done again from the start: the lease it
 * took is its own, and its epoch is taken again.
 *
 * Owns: the order of those steps, what each role refuses, and the
 * loop's turns.
 */
#ifndef BAKERY_TAKEOVER_H
#define BAKERY_TAKEOVER_H

#include <jv.h>

#include "standby.h"

typedef struct takeover_opts {
	int lease_s;   /* the lease's length, in seconds */
	int replicas;  /* the stream's replicas; 0: a server each, up to 3 */
	int auto_take; /* a lease held by another: wait for its end */
	int once;      /* the loop's one turn */
	const standby_file *files; /* the home's own files (standby.h) */
	/* Each result line: a promotion, --once's counts (cli_report). */
	void (*report)(void *arg, jv v);
	void *arg;
} takeover_opts;

/* This home made the primary: a new host and epoch when it is not
 * replicated yet, its own again when it is the primary (the lease
 * renewed); the lease taken, then the stream moved to its epoch, then
 * HOME/.replica written. EX_CONFIG for a standby's home or a queue that
 * is not nats://, EX_TEMPFAIL while another host holds the lease,
 * EX_UNAVAILABLE for a primary another host has taken over from. */
int takeover_primary(bakery_ctx *ctx, const takeover_opts *o);
/* This home, empty or a standby already, made a standby: a new host,
 * epoch "none". EX_CONFIG for a home that holds files or is a primary. */
int takeover_standby(bakery_ctx *ctx, const takeover_opts *o);
/* This standby made the primary, as above; reported as
 * {"promoted":true,"host","epoch","applied","skipped","refused",
 * "seconds"}, seconds from the lease taken to the primary ready. */
int takeover_promote(bakery_ctx *ctx, const takeover_opts *o);
/* Until SIGTERM or SIGINT (loop.h): a primary renews its lease (lost:
 * EX_UNAVAILABLE); a standby applies records as they come and, with
 * auto_take, is promoted once the lease has ended, then goes on as the
 * primary. o->once: a standby applies what the stream holds now
 * ({"applied","skipped","refused"}), a primary renews once. */
int takeover_run(bakery_ctx *ctx, const takeover_opts *o);

#endif
