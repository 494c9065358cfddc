/*
 * outbox.c — B1: N commands recorded in one object, one process.
 *
 * Each command is what bakery-order place writes in one BEGIN IMMEDIATE
 * transaction: the event row (its outbox entry), the new state and the
 * command's key (and, on the first, the alarm and its index entry). The
 * outbox is not sent: this measures the cost of the record alone.
 *
 *   outbox N     prints commits_per_s and seconds
 */
#include "bench.h"

#include "../../lib/core/object.h"

#include <string.h>

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	if (argc != 2) {
		fprintf(stderr, "usage: outbox N\n");
		return EX_USAGE;
	}
	long n = bench_count(argv[1]);
	bakery_ctx ctx;
	bench_context(&ctx);
	bakery_object *o;
	bench_check(object_open(&ctx, NULL, "order/bench", 1, &o), "open");
	double t0 = bench_now();
	for (long i = 0; i < n; i++) {
		char key[32];
		snprintf(key, sizeof key, "cmd-%ld", i);
		bench_check(object_begin(o), "begin");
		jv seen;
		if (object_command_result(o, key, &seen)) {
			jv_free(seen);
			object_rollback(o);
			continue;
		}
		jv_free(seen);
		jv data = jv_object();
		data = jv_object_set(data, jv_string("order"), jv_string("bench"));
		data = jv_object_set(data, jv_string("customer"), jv_string("c1"));
		data = jv_object_set(data, jv_string("day"), jv_string("2026-12-01"));
		data = jv_object_set(data, jv_string("n"), jv_number((double)i));
		jv state = jv_object_set(jv_copy(data), jv_string("status"),
		    jv_string("placed"));
		bench_check(object_record(o, "OrderPlaced", data, NULL), "record");
		object_set_state(o, state);
		bench_check(object_remember_command(o, key,
		    jv_string("ok")), "remember");
		bench_check(object_commit(o), "commit");
	}
	double s = bench_now() - t0;
	printf("commits_per_s %.1f\nseconds %.3f\n", (double)n / s, s);
	object_close(o);
	ctx_free(&ctx);
	return 0;
}
