/*
 * takeover.c — the primary made, a standby made and promoted, and the
 * loop that keeps each in its role (takeover.h).
 */
#define _GNU_SOURCE
#include "takeover.h"
#include "lease.h"
#include "../core/loop.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PULL_BATCH 64
#define PULL_WAIT_MS 1000
/* How often at least a standby with --auto reads the lease (and at its
 * end, next_look), and how long a loop waits after the stream did not
 * answer. */
#define LEASE_LOOK_MS 1000
#define RETRY_MS 1000
/* A promotion NATS did not answer, or a lease it could not read, is
 * tried again this soon; and each JetStream request of the loop and of
 * a promotion waits this long, not the 5 s a record's publish waits:
 * while the cluster elects a leader after a node's loss, a request asked
 * again so soon is answered as soon as there is one. */
#define PROMOTE_RETRY_MS 100
#define REQUEST_WAIT_MS 500

static void
report(const takeover_opts *o, jv v)
{
	if (o->report)
		o->report(o->arg, v);
	else
		jv_free(v);
}

/* A failure the loop outlives, and --promote --auto too: NATS did not
 * answer or is away (a node killed, a leader being elected), another
 * process applies the home, another host took the lease first. */
static int
passing(int rc)
{
	return rc == EX_TEMPFAIL || rc == EX_UNAVAILABLE;
}

static jv
role_report(const replica_conf *c, const lease *l)
{
	jv v = jv_object();
	v = jv_object_set(v, jv_string("role"), jv_string(c->role ==
	    REPLICA_PRIMARY ? "primary" : "standby"));
	v = jv_object_set(v, jv_string("host"), jv_string(c->host));
	v = jv_object_set(v, jv_string("epoch"), jv_string(c->epoch));
	if (l)
		v = jv_object_set(v, jv_string("until_ms"),
		    jv_number((double)l->until_ms));
	return v;
}

static int
deposed(const replica_conf *c, const lease *l)
{
	char who[128];
	lease_describe(l, who, sizeof who);
	return bakery_fail(EX_UNAVAILABLE, "this home was the primary (host "
	    "%s, epoch %s) and is no more: the lease is %s; a deposed "
	    "primary starts again as an empty standby", c->host, c->epoch, who);
}

/* The lease taken for c (its epoch) until lease_s from now, then (move)
 * the stream moved to its epoch. A home that was the primary takes it
 * back only from itself or from nobody. */
static int
hold(replica_nats *rn, const replica_conf *c, const takeover_opts *o,
    int was_primary, int move, lease *l)
{
	int rc = lease_read(rn, l);
	if (!rc && was_primary && l->held && (strcmp(l->host, c->host) ||
	    strcmp(l->epoch, c->epoch)))
		rc = deposed(c, l);
	if (!rc)
		rc = lease_take(rn, l, c->host, c->epoch,
		    bakery_now_ms() + (int64_t)o->lease_s * 1000);
	return rc || !move ? rc : replica_stream_epoch(rn, c->epoch,
	    o->replicas);
}

int
takeover_primary(bakery_ctx *ctx, const takeover_opts *o)
{
	replica_conf c;
	int rc = replica_conf_read(ctx, &c);
	if (rc)
		return rc;
	if (c.role == REPLICA_STANDBY)
		return bakery_fail(EX_CONFIG, "'%s' is a standby: bakery-standby "
		    "--promote makes it the primary, with every record applied",
		    ctx->home);
	replica_nats *rn;
	if ((rc = replica_connect(ctx, &rn)))
		return rc;
	int was_primary = c.role == REPLICA_PRIMARY;
	if (!was_primary) {
		c.role = REPLICA_PRIMARY;
		replica_new_id(c.host);
		replica_new_id(c.epoch);
	}
	/* The bucket is made before the lease is read: the stream is moved
	 * only by the lease's holder. */
	lease l;
	rc = lease_make_bucket(rn, o->replicas);
	if (!rc)
		rc = hold(rn, &c, o, was_primary, 1, &l);
	if (!rc)
		rc = replica_conf_write(ctx, &c);
	replica_disconnect(rn);
	if (!rc)
		report(o, role_report(&c, &l));
	return rc;
}

/* Whether the home holds no file of bakery's data yet. */
static int
home_empty(bakery_ctx *ctx)
{
	static const char *const files[] = { "queue.db", "alarms.db",
		"wipe.db", "refunds.db", "console.db", NULL };
	for (int i = 0; files[i]; i++) {
		char *p = bakery_xasprintf("%s/%s", ctx->home, files[i]);
		int there = access(p, F_OK) == 0;
		free(p);
		if (there)
			return 0;
	}
	DIR *d = opendir(ctx->sandboxes);
	if (!d)
		return errno == ENOENT;
	struct dirent *e;
	int empty = 1;
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

int
takeover_standby(bakery_ctx *ctx, const takeover_opts *o)
{
	replica_conf c;
	int rc = replica_conf_read(ctx, &c);
	if (rc)
		return rc;
	if (c.role == REPLICA_PRIMARY)
		return bakery_fail(EX_CONFIG, "'%s' is the primary (host %s): a "
		    "standby starts from an empty home", ctx->home, c.host);
	if (!ctx->queue_url || strncmp(ctx->queue_url, "nats://", 7) != 0)
		return bakery_fail(EX_CONFIG, "a replicated home's queue is "
		    "nats:// (BAKERY_QUEUE, --queue)");
	if (c.role == REPLICA_NONE) {
		if (!home_empty(ctx))
			return bakery_fail(EX_CONFIG, "'%s' holds bakery's files: "
			    "a standby starts from an empty home", ctx->home);
		c.role = REPLICA_STANDBY;
		replica_new_id(c.host);
		snprintf(c.epoch, sizeof c.epoch, "none");
		if ((rc = replica_conf_write(ctx, &c)))
			return rc;
	}
	report(o, role_report(&c, NULL));
	return 0;
}

/* Waits for the lease to be free or ended (auto_take), or says who
 * holds it until when. */
static int
wait_lease(replica_nats *rn, const replica_conf *c, const takeover_opts *o,
    lease *l)
{
	int rc;
	while (!(rc = lease_read(rn, l)) &&
	    lease_held_by_other(l, c->host, bakery_now_ms())) {
		char who[128];
		lease_describe(l, who, sizeof who);
		if (!o->auto_take)
			return bakery_fail(EX_TEMPFAIL, "the lease is held by %s: "
			    "the primary is alive (--auto waits for its end)",
			    who);
		bakery_log(LOG_INFO, "lease_wait", "holder", who, (char *)NULL);
		int64_t ms = l->until_ms - bakery_now_ms() + 1;
		loop_sleep_ms(ms < LEASE_LOOK_MS ? ms : LEASE_LOOK_MS);
		if (loop_stopping())
			return bakery_fail(EX_TEMPFAIL, "stopped while the lease "
			    "was held by %s", who);
	}
	return rc;
}

/* The standby c promoted on rn (takeover.h's steps). */
static int
promote(bakery_ctx *ctx, replica_nats *rn, replica_conf *c,
    const takeover_opts *o)
{
	lease l;
	char epoch[REPLICA_ID_SIZE];
	int rc;
	for (;;) {
		if ((rc = wait_lease(rn, c, o, &l)))
			return rc;
		/* A lease of this host's is a promotion begun before. */
		if (l.held && strcmp(l.host, c->host) == 0)
			memcpy(epoch, l.epoch, sizeof epoch);
		else
			replica_new_id(epoch);
		rc = lease_take(rn, &l, c->host, epoch,
		    bakery_now_ms() + (int64_t)o->lease_s * 1000);
		if (rc != EX_TEMPFAIL || !o->auto_take)
			break;
	}
	if (rc)
		return rc;
	int64_t t0 = bakery_monotonic_ms();
	bakery_log(LOG_INFO, "promoting", "host", c->host, "epoch", epoch,
	    (char *)NULL);
	standby *s = NULL;
	rc = replica_stream_epoch(rn, epoch, 0);
	if (!rc)
		rc = standby_open(ctx, rn, c, o->files, &s);
	if (!rc)
		rc = standby_drain(s);
	/* The drain may have taken a while: the lease is still this host's,
	 * or the promotion stops here. */
	if (!rc)
		rc = lease_renew(rn, &l, bakery_now_ms() +
		    (int64_t)o->lease_s * 1000);
	standby_tally t = s ? *standby_counts(s) : (standby_tally){ 0 };
	standby_close(s);
	if (rc)
		return rc;
	c->role = REPLICA_PRIMARY;
	memcpy(c->epoch, epoch, sizeof c->epoch);
	if ((rc = replica_conf_write(ctx, c)))
		return rc;
	jv v = jv_object();
	v = jv_object_set(v, jv_string("promoted"), jv_true());
	v = jv_object_set(v, jv_string("host"), jv_string(c->host));
	v = jv_object_set(v, jv_string("epoch"), jv_string(epoch));
	v = jv_object_set(v, jv_string("applied"), jv_number(t.applied));
	v = jv_object_set(v, jv_string("skipped"), jv_number(t.skipped));
	v = jv_object_set(v, jv_string("refused"), jv_number(t.refused));
	v = jv_object_set(v, jv_string("seconds"),
	    jv_number((double)(bakery_monotonic_ms() - t0) / 1000));
	report(o, v);
	bakery_log(LOG_INFO, "promoted", "host", c->host, "epoch", epoch,
	    (char *)NULL);
	return 0;
}

static int
not_a_standby(bakery_ctx *ctx, const replica_conf *c)
{
	return bakery_fail(EX_CONFIG, "'%s' is %s", ctx->home,
	    c->role == REPLICA_PRIMARY ? "the primary already"
	    : "not replicated: bakery-standby --standby makes it a standby");
}

/* rn's JetStream requests made to wait REQUEST_WAIT_MS. */
static int
quick(replica_nats *rn)
{
	jsOptions jo;
	jsOptions_Init(&jo);
	jo.Wait = REQUEST_WAIT_MS;
	jsCtx *js = NULL;
	natsStatus st = natsConnection_JetStream(&js, rn->nc, &jo);
	if (st != NATS_OK)
		return bakery_fail(EX_UNAVAILABLE, "nats: jetstream: %s",
		    natsStatus_GetText(st));
	jsCtx_Destroy(rn->js);
	rn->js = js;
	return 0;
}

int
takeover_promote(bakery_ctx *ctx, const takeover_opts *o)
{
	replica_conf c;
	int rc = replica_conf_read(ctx, &c);
	if (rc)
		return rc;
	if (c.role != REPLICA_STANDBY)
		return not_a_standby(ctx, &c);
	replica_nats *rn;
	if ((rc = replica_connect(ctx, &rn)))
		return rc;
	rc = quick(rn);
	while (!rc && (rc = promote(ctx, rn, &c, o)) && o->auto_take &&
	    passing(rc) && !loop_stopping()) {
		bakery_log(LOG_WARN, "promotion_retry", "error", bakery_error(),
		    (char *)NULL);
		loop_sleep_ms(RETRY_MS);
	}
	replica_disconnect(rn);
	return rc;
}

/* The primary's turns: the lease renewed every third of its length (the
 * stream took its epoch when it was made the primary). */
static int
run_primary(replica_nats *rn, const replica_conf *c, const takeover_opts *o)
{
	lease l;
	int rc = hold(rn, c, o, 1, 0, &l);
	if (rc || o->once) {
		if (!rc)
			report(o, role_report(c, &l));
		return rc;
	}
	bakery_log(LOG_INFO, "primary", "host", c->host, "epoch", c->epoch,
	    (char *)NULL);
	int64_t every = (int64_t)o->lease_s * 1000 / 3;
	while (!loop_stopping()) {
		loop_sleep_ms(every);
		if (loop_stopping())
			break;
		rc = lease_renew(rn, &l, bakery_now_ms() +
		    (int64_t)o->lease_s * 1000);
		if (rc == EX_UNAVAILABLE)
			return rc; /* lost: said by lease_renew */
		if (rc)
			bakery_log(LOG_WARN, "lease_unrenewed", "error",
			    bakery_error(), (char *)NULL);
	}
	return 0;
}

/* Whether the lease has ended (or is free), and a standby with --auto
 * takes over: 1, or 0 while another host holds it (*ends: until when),
 * or -1 when it could not be read (a leader being elected). */
static int
lease_ended(replica_nats *rn, const replica_conf *c, int64_t *ends)
{
	lease l;
	*ends = 0;
	if (lease_read(rn, &l))
		return -1;
	*ends = l.held ? l.until_ms : 0;
	return !lease_held_by_other(&l, c->host, bakery_now_ms());
}

/* When (a monotonic time) a standby with --auto looks at the lease
 * again, having looked at now: as it ends (ends, a time of the clock;
 * 0: not held), at least every LEASE_LOOK_MS; soon when it could not be
 * read, so that the end of an election is met within a request's wait. */
static int64_t
next_look(int64_t now, int ended, int64_t ends)
{
	if (ended < 0)
		return now + PROMOTE_RETRY_MS;
	int64_t left = ends ? ends - bakery_now_ms() + 1 : LEASE_LOOK_MS;
	return now + (left < LEASE_LOOK_MS ? left : LEASE_LOOK_MS);
}

/* How long the standby's pull may wait for records: until its next look
 * at the lease (next; 0: none), so that a lease that is not renewed is
 * taken over as it ends, not a pull's wait later. */
static int
pull_wait(int64_t next)
{
	int64_t left = next ? next - bakery_monotonic_ms() : PULL_WAIT_MS;
	return left < 10 ? 10 : left < PULL_WAIT_MS ? (int)left : PULL_WAIT_MS;
}

static jv
counts(const standby_tally *t)
{
	jv v = jv_object();
	v = jv_object_set(v, jv_string("applied"), jv_number(t->applied));
	v = jv_object_set(v, jv_string("skipped"), jv_number(t->skipped));
	return jv_object_set(v, jv_string("refused"), jv_number(t->refused));
}

/* The loop's promotion, once the lease has ended: 0 when promoted (*s
 * closed, c the primary), or a failure, this home still a standby. A
 * promotion stopped midway is taken up again by the next: the lease it
 * took is this host's, and its epoch is taken again. */
static int
take_over(bakery_ctx *ctx, replica_nats *rn, replica_conf *c,
    const takeover_opts *o, standby **s)
{
	standby_close(*s);
	*s = NULL;
	takeover_opts now = *o;
	now.auto_take = 0; /* another host's new lease: follow it */
	return promote(ctx, rn, c, &now);
}

/* The standby's turns: records applied as they come; with auto_take,
 * promoted when the lease has ended (c is the primary after). What
 * passes is logged and tried again a second later; a gap, a conflict, a
 * newer schema or a file that cannot be written stop it. */
static int
run_standby(bakery_ctx *ctx, replica_nats *rn, replica_conf *c,
    const takeover_opts *o)
{
	standby *s = NULL;
	int rc;
	if (o->once) {
		rc = standby_open(ctx, rn, c, o->files, &s);
		if (!rc)
			rc = standby_drain(s);
		if (!rc)
			report(o, counts(standby_counts(s)));
		standby_close(s);
		return rc;
	}
	bakery_log(LOG_INFO, "standby", "host", c->host, (char *)NULL);
	int64_t next = 0, ends, pause;
	rc = 0;
	while (c->role == REPLICA_STANDBY && !loop_stopping()) {
		/* With --auto, the lease is looked at again soon whatever
		 * failed meanwhile. */
		pause = o->auto_take ? PROMOTE_RETRY_MS : RETRY_MS;
		if (o->auto_take && bakery_monotonic_ms() >= next) {
			int ended = lease_ended(rn, c, &ends);
			next = next_look(bakery_monotonic_ms(), ended, ends);
			/* A promotion that failed is tried again after the
			 * loop's pause: the cluster may be electing a leader. */
			if (ended > 0 && (rc = take_over(ctx, rn, c, o, &s)) != 0)
				next = 0;
		}
		if (!rc && !s && c->role == REPLICA_STANDBY)
			rc = standby_open(ctx, rn, c, o->files, &s);
		if (!rc && s)
			rc = standby_pull(s, PULL_BATCH, o->auto_take ?
			    pull_wait(next) : PULL_WAIT_MS);
		if (rc && !passing(rc))
			break;
		if (rc) {
			bakery_log(LOG_WARN, "standby_retry", "error",
			    bakery_error(), (char *)NULL);
			loop_sleep_ms(pause);
			rc = 0;
		}
	}
	standby_close(s);
	return rc;
}

int
takeover_run(bakery_ctx *ctx, const takeover_opts *o)
{
	replica_conf c;
	int rc = replica_conf_read(ctx, &c);
	if (rc)
		return rc;
	if (c.role == REPLICA_NONE)
		return bakery_fail(EX_CONFIG, "'%s' is not replicated: "
		    "bakery-standby --primary or --standby first", ctx->home);
	replica_nats *rn;
	if ((rc = replica_connect(ctx, &rn)))
		return rc;
	loop_catch_signals();
	rc = quick(rn);
	if (!rc && c.role == REPLICA_STANDBY)
		rc = run_standby(ctx, rn, &c, o);
	/* Promoted by the loop: it goes on as the primary. */
	if (!rc && c.role == REPLICA_PRIMARY && !loop_stopping())
		rc = run_primary(rn, &c, o);
	replica_disconnect(rn);
	return rc;
}
