/*
 * bench.h — what the benchmark programs share: a clock and a context.
 *
 * The programs in tests/bench/ print figures only, one "name value" pair
 * per line on stdout, for run.sh to collect; errors go to stderr.
 */
#ifndef BAKERY_BENCH_H
#define BAKERY_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../lib/store/store.h"
#include "../../lib/base/util.h"

static inline double
bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline long
bench_count(const char *arg)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (!*arg || *end || n < 1) {
		fprintf(stderr, "%s: error: bad count: '%s'\n", bakery_prog, arg);
		exit(EX_USAGE);
	}
	return n;
}

static inline void
bench_check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "%s: error: %s: %s\n", bakery_prog, what,
		    bakery_error());
		exit(rc);
	}
}

/* The context of BAKERY_HOME, BAKERY_SYNC and BAKERY_QUEUE. */
static inline void
bench_context(bakery_ctx *ctx)
{
	bench_check(ctx_init(ctx, NULL, NULL, NULL), "context");
}

#endif
