/*
 * hop.c — B2, B5 and B6: the queue hop of N envelopes.
 *
 * Setup (not timed): N events recorded in order/hop, in one transaction.
 * Timed: the relay sends the outbox in batches of 100 (outbox_send), then
 * a consumer receives batches of 10, applies the batch at one subscriber
 * that records each id (inbox/hop, through subscriber_apply_batch, as
 * bakery-consume does for each object: open, BEGIN IMMEDIATE, a savepoint
 * per event with its seen check, apply and mark seen, one commit, close,
 * the connection kept open for the next batch as bakery-consume's loop
 * keeps it, lib/store/keep.h) and acks the batch, as bakery-consume does, until
 * N messages are acked.
 * Messages already in the queue (a backlog, B5) are taken first, oldest
 * first, like any consumer would.
 *
 *   hop N     prints msgs_per_s, relay_s, consume_s
 *
 * The queue is ctx->queue_url: the embedded queue, or NATS (B6).
 */
#include "bench.h"

#include "../../lib/core/envelope.h"
#include "../../lib/store/keep.h"
#include "../../lib/core/object.h"
#include "../../lib/core/outbox.h"
#include "../../lib/queue/queue.h"
#include "../../lib/flow/subscriber.h"

#include <string.h>

/* A 200-byte note makes the envelope's data about the size of an order's. */
#define NOTE "bench-payload-0123456789abcdefghijklmnopqrstuvwxyz"

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	if (argc != 2) {
		fprintf(stderr, "usage: hop N\n");
		return EX_USAGE;
	}
	long n = bench_count(argv[1]);
	bakery_ctx ctx;
	bench_context(&ctx);

	bakery_object *src;
	bench_check(object_open(&ctx, NULL, "order/hop", 1, &src), "open");
	bench_check(object_begin(src), "begin");
	for (long i = 0; i < n; i++) {
		jv data = jv_object();
		data = jv_object_set(data, jv_string("order"), jv_string("hop"));
		data = jv_object_set(data, jv_string("day"), jv_string("2026-12-01"));
		data = jv_object_set(data, jv_string("note"),
		    jv_string(NOTE NOTE NOTE NOTE));
		bench_check(object_record(src, "OrderPlaced", data, NULL), "record");
	}
	bench_check(object_commit(src), "commit");

	/* As bakery-consume keeps them, in every mode but --once. */
	ctx.kept = keep_new(KEEP_MAX, KEEP_IDLE_MS);
	double t0 = bench_now();
	int sent;
	bench_check(outbox_send(src, &sent), "relay");
	double t1 = bench_now();

	bakery_queue *q;
	bench_check(queue_get(&ctx, &q), "queue");
	queue_message msgs[10];
	long acked = 0;
	while (acked < n) {
		size_t got = 0;
		size_t want = n - acked < 10 ? (size_t)(n - acked) : 10;
		bench_check(queue_receive(q, QUEUE_EVENTS, NULL, want, 30, msgs,
		    &got), "receive");
		if (got == 0) {
			fprintf(stderr, "hop: error: queue empty after %ld of %ld\n",
			    acked, n);
			return EX_SOFTWARE;
		}
		queue_message *done[10];
		int rcs[10];
		jv envs[10];
		apply_result r[10];
		for (size_t i = 0; i < got; i++) {
			bench_check(envelope_parse(msgs[i].body,
			    strlen(msgs[i].body), &envs[i]), "parse");
			done[i] = &msgs[i];
		}
		subscriber_apply_batch(&ctx, "inbox/hop", envs, got, r);
		for (size_t i = 0; i < got; i++) {
			if (r[i].status != 200) {
				fprintf(stderr, "hop: error: %s\n", r[i].error);
				return EX_SOFTWARE;
			}
			jv_free(envs[i]);
		}
		/* Acked together, as bakery-consume does (consume_batch). */
		bench_check(queue_ack_many(q, QUEUE_EVENTS, done, got, rcs), "ack");
		for (size_t i = 0; i < got; i++) {
			bench_check(rcs[i], "ack");
			queue_message_free(&msgs[i]);
			acked++;
		}
	}
	double t2 = bench_now();
	printf("msgs_per_s %.1f\nrelay_s %.3f\nconsume_s %.3f\n",
	    (double)n / (t2 - t0), t1 - t0, t2 - t1);
	object_close(src);
	ctx_free(&ctx);
	return 0;
}
