/*
 * fanout.c — B3: the latency of an order from its commit to every
 * subscriber (run.sh feeds B3's paid orders through bakery-order --batch).
 *
 *   fanout steady N RATE CONSUMER [ARG...]
 *       starts CONSUMER (bakery-consume --follow), places N orders at RATE
 *       a second, and reads the consumer's result lines: the latency of an
 *       order is from its commit to the line that acks its OrderPlaced,
 *       that is, applied at every subscriber. Prints p50_ms, p99_ms, max_ms
 *       and unapplied (orders still not applied two minutes after the
 *       last was placed; their latency is the time waited).
 */
#include "bench.h"

#include "../../lib/core/envelope.h"
#include "../../lib/orders/order.h"
#include "../../lib/core/outbox.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *items[] = { "cardamom-bun=2", "country-loaf=1" };

static void
place(bakery_ctx *ctx, long i, char *id, size_t idsize, char *event,
    size_t eventsize, double *committed)
{
	char customer[32], day[16];
	snprintf(customer, sizeof customer, "c%ld", i % 50);
	snprintf(day, sizeof day, "2026-12-%02ld", 1 + i % 7);
	order_request req = { customer, day, NULL, NULL, items, 2 };
	jv out;
	bakery_object *o;
	bench_check(order_place(ctx, &req, &out, &o), "place");
	if (committed)
		*committed = bench_now();
	snprintf(id, idsize, "%s", envelope_str(out, "id"));
	jv_free(out);
	if (event) {
		jv evs;
		bench_check(object_events(o, &evs), "events");
		jv last = jv_array_get(jv_copy(evs),
		    jv_array_length(jv_copy(evs)) - 1);
		snprintf(event, eventsize, "%s", envelope_str(last, "id"));
		jv_free(last);
		jv_free(evs);
	}
	outbox_send(o, NULL);
	object_close(o);
}

typedef struct pending {
	char event[64];
	double t0;
	double latency; /* < 0 until acked */
} pending;

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * The consumer's acked lines, stamped by a thread of their own the moment
 * they arrive: the producer's loop may be busy placing when a line comes,
 * and a line it read late would count its wait as the consumer's.
 */
typedef struct arrival {
	char event[64];
	double at;
} arrival;

typedef struct reader {
	int fd;
	pthread_mutex_t mu;
	arrival *a;
	size_t n, cap;
} reader;

static void *
read_lines(void *arg)
{
	reader *r = arg;
	static char buf[1 << 16];
	size_t len = 0;
	ssize_t got;
	while ((got = read(r->fd, buf + len, sizeof buf - len - 1)) > 0) {
		double now = bench_now();
		len += (size_t)got;
		buf[len] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			jv res = jv_parse(line);
			const char *id = jv_is_valid(res) ? envelope_str(res, "id")
							  : NULL;
			const char *outcome = id ? envelope_str(res, "outcome")
						 : NULL;
			if (outcome && strcmp(outcome, "acked") == 0) {
				pthread_mutex_lock(&r->mu);
				if (r->n == r->cap) {
					r->cap = r->cap ? r->cap * 2 : 1024;
					r->a = bakery_xrealloc(r->a,
					    r->cap * sizeof *r->a);
				}
				snprintf(r->a[r->n].event, sizeof r->a[r->n].event,
				    "%s", id);
				r->a[r->n++].at = now;
				pthread_mutex_unlock(&r->mu);
			}
			jv_free(res);
			line = nl + 1;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (len == sizeof buf - 1)
			len = 0; /* a line longer than the buffer: not ours */
	}
	return NULL;
}

/* Matches the arrivals not seen yet to the orders placed so far. */
static void
match(reader *r, size_t *seen, pending *p, long placed, long *matched)
{
	pthread_mutex_lock(&r->mu);
	for (; *seen < r->n; (*seen)++) {
		arrival *a = &r->a[*seen];
		for (long i = placed - 1; i >= 0; i--) {
			if (p[i].latency < 0 && strcmp(p[i].event, a->event) == 0) {
				p[i].latency = a->at - p[i].t0;
				(*matched)++;
				break;
			}
		}
	}
	pthread_mutex_unlock(&r->mu);
}

static int
steady(bakery_ctx *ctx, long n, long rate, char **consumer)
{
	int fds[2];
	if (pipe(fds) != 0)
		bench_check(EX_OSERR, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp(consumer[0], consumer);
		_exit(127);
	}
	close(fds[1]);
	reader r = { .fd = fds[0], .mu = PTHREAD_MUTEX_INITIALIZER };
	pthread_t thread;
	if (pthread_create(&thread, NULL, read_lines, &r) != 0)
		bench_check(EX_OSERR, "pthread_create");
	pending *p = bakery_xmalloc((size_t)n * sizeof *p);
	size_t seen = 0;
	long matched = 0;
	double start = bench_now();
	for (long i = 0; i < n; i++) {
		double due = start + (double)i / (double)rate;
		double now = bench_now();
		if (now < due) {
			struct timespec ts = { (time_t)(due - now),
				(long)((due - now - (double)(time_t)(due - now)) *
				    1e9) };
			nanosleep(&ts, NULL);
		}
		char id[64];
		p[i].latency = -1;
		place(ctx, i, id, sizeof id, p[i].event, sizeof p[i].event,
		    &p[i].t0);
	}
	/* A consumer that fell behind gets two minutes to catch up; an order
	 * still not applied then counts the time waited, a lower bound. */
	double deadline = bench_now() + 120;
	for (match(&r, &seen, p, n, &matched);
	     matched < n && bench_now() < deadline;
	     match(&r, &seen, p, n, &matched)) {
		struct timespec ts = { 0, 100 * 1000000L };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	pthread_join(thread, NULL); /* the pipe's writer is gone: EOF */
	close(fds[0]);
	free(r.a);
	double end = bench_now();
	double *lat = bakery_xmalloc((size_t)n * sizeof *lat);
	for (long i = 0; i < n; i++)
		lat[i] = (p[i].latency < 0 ? end - p[i].t0 : p[i].latency) * 1000;
	qsort(lat, (size_t)n, sizeof *lat, by_value);
	printf("p50_ms %.1f\np99_ms %.1f\nmax_ms %.1f\nunapplied %ld\n",
	    lat[(n - 1) / 2], lat[(long)((double)(n - 1) * 0.99)], lat[n - 1],
	    n - matched);
	free(lat);
	free(p);
	return 0;
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	signal(SIGPIPE, SIG_IGN);
	bakery_ctx ctx;
	int rc;
	if (argc >= 5 && strcmp(argv[1], "steady") == 0) {
		bench_context(&ctx);
		rc = steady(&ctx, bench_count(argv[2]), bench_count(argv[3]),
		    argv + 4);
	} else {
		fprintf(stderr, "usage: fanout steady N RATE CONSUMER "
		    "[ARG...]\n");
		return EX_USAGE;
	}
	ctx_free(&ctx);
	return rc;
}
