/*
 * queue.c — picks the driver from the URL (sqlite: or nats://) and
 * forwards to it.
 */
#include "queue-internal.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* EX_CONFIG unless a sqlite: URL's path names a file the way a home is
 * named: absolute, printable, and no query (SQLite's ?mode=memory, which
 * a URI open would take, is no file at all). */
static int
sqlite_path_check(const char *url)
{
	const char *path = url + 7;
	if (path[0] == '/' && !strchr(path, '?') && !home_path_valid(path))
		return 0;
	return bakery_fail(EX_CONFIG, "bad queue URL: '%s': %s", url,
	    "want sqlite:/ABSOLUTE/PATH, printable, without a query");
}

int
queue_url_check(const char *url)
{
	if (!url)
		return 0;
	if (strncmp(url, "sqlite:", 7) == 0 && url[7])
		return sqlite_path_check(url);
	/* nats://HOST:PORT[,HOST:PORT...]: no empty member, no spaces. */
	if (strncmp(url, "nats://", 7) == 0 && url[7] && url[7] != ',' &&
	    !strstr(url, ",,") && url[strlen(url) - 1] != ',' &&
	    !strpbrk(url, " \t\n"))
		return 0;
	return bakery_fail(EX_CONFIG, "bad queue URL: '%s': %s", url,
	    "want sqlite:PATH or nats://HOST:PORT[,HOST:PORT...]");
}

/* The file a sqlite: URL names is missing: EX_CONFIG. */
static int
no_queue_at(const char *path)
{
	return bakery_fail(EX_CONFIG, "no queue at '%s' (--queue, "
	    "BAKERY_QUEUE; bakery-queue init makes one)", path);
}

int
queue_config_check(bakery_ctx *ctx, int may_be_missing)
{
	const char *url = ctx->queue_url;
	if (url && !may_be_missing && strncmp(url, "sqlite:", 7) == 0 &&
	    access(url + 7, F_OK) != 0)
		return no_queue_at(url + 7);
	return 0;
}

char *
queue_file(bakery_ctx *ctx)
{
	const char *url = ctx->queue_url;
	if (url && strncmp(url, "sqlite:", 7) != 0)
		return NULL;
	return url ? bakery_xstrdup(url + 7)
		   : bakery_xasprintf("%s/queue.db", ctx->home);
}

/* How a queue is opened: made when missing (queue_make), read as it is
 * (queue_get_existing), or written and made only when it is the home's
 * own (queue_get). */
enum { QUEUE_MAKE, QUEUE_LOOK, QUEUE_NAMED };

/* The embedded queue's file, opened as how says:
 * made when missing (bakery-queue init), read as it is (the readers:
 * nothing made, nothing migrated), or written but made only when it is
 * the home's own (the producers and the consumers): a file --queue or
 * BAKERY_QUEUE names must be there already, since a typo made into a new
 * file would take every event sent and keep it from every consumer. */
static int
open_sqlite(bakery_ctx *ctx, int how, bakery_queue **q)
{
	const char *url = ctx->queue_url;
	char *path = queue_file(ctx);
	int rc;
	if (how != QUEUE_MAKE && (url || how == QUEUE_LOOK) &&
	    access(path, F_OK) != 0)
		rc = url ? no_queue_at(path)
			 : bakery_fail(EX_NOINPUT, "no queue yet");
	else
		rc = queue_sqlite_open(ctx, path, how == QUEUE_LOOK, q);
	free(path);
	return rc;
}

static int
open_nats(bakery_ctx *ctx, int how, bakery_queue **q)
{
	(void)how;
	return queue_nats_open(ctx, ctx->queue_url, q);
}

/* The drivers, by the URL's scheme (none: the home's queue.db). A queue
 * is opened through this table as it is used through its handle's
 * queue_ops: what is above queue.h reaches a driver only through them.
 * The URL was checked by ctx_init (queue_url_check). */
static const struct {
	const char *scheme;
	int (*open)(bakery_ctx *, int how, bakery_queue **);
} drivers[] = {
	{ "nats://", open_nats },
	{ "sqlite:", open_sqlite },
};

static int
open_queue(bakery_ctx *ctx, int how, bakery_queue **q)
{
	if (ctx->queue) {
		*q = ctx->queue;
		return 0;
	}
	const char *url = ctx->queue_url;
	size_t i = url ? 0 : 1;
	while (i < sizeof drivers / sizeof *drivers - 1 &&
	    strncmp(url, drivers[i].scheme, strlen(drivers[i].scheme)) != 0)
		i++;
	int rc = drivers[i].open(ctx, how, q);
	if (!rc)
		ctx->queue = *q;
	return rc;
}

int
queue_get(bakery_ctx *ctx, bakery_queue **q)
{
	return open_queue(ctx, QUEUE_NAMED, q);
}

int
queue_get_existing(bakery_ctx *ctx, bakery_queue **q)
{
	return open_queue(ctx, QUEUE_LOOK, q);
}

int
queue_make(bakery_ctx *ctx, bakery_queue **q)
{
	return open_queue(ctx, QUEUE_MAKE, q);
}

jv
queue_empty_stats(void)
{
	return jv_parse("{\"" QUEUE_EVENTS "\":{\"ready\":0,\"leased\":0,"
	    "\"delayed\":0},\"" QUEUE_DLQ "\":{\"ready\":0,\"leased\":0,"
	    "\"delayed\":0}}");
}

void
queue_close(bakery_queue *q)
{
	if (q)
		q->ops->close(q);
}

void
queue_message_free(queue_message *m)
{
	free(m->id);
	free(m->sandbox);
	free(m->body);
	free(m->last_error);
	memset(m, 0, sizeof *m);
}

int
queue_send(bakery_queue *q, const char *queue, queue_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		items[i].accepted = 0;
	return n ? q->ops->send(q, queue, items, n) : 0;
}

int
queue_receive(bakery_queue *q, const char *queue, const char *sandbox,
    size_t max, int visibility_s, queue_message *out, size_t *got)
{
	*got = 0;
	return q->ops->receive(q, queue, sandbox, max, visibility_s, out, got);
}

int
queue_ack(bakery_queue *q, const char *queue, queue_message *m)
{
	return q->ops->ack(q, queue, m);
}

int
queue_ack_many(bakery_queue *q, const char *queue, queue_message **m,
    size_t n, int *rcs)
{
	if (n == 0)
		return 0;
	if (q->ops->ack_many)
		return q->ops->ack_many(q, queue, m, n, rcs);
	for (size_t i = 0; i < n; i++) {
		rcs[i] = q->ops->ack(q, queue, m[i]);
		if (rcs[i] && rcs[i] != EX_TEMPFAIL)
			return rcs[i];
	}
	return 0;
}

int
queue_retry(bakery_queue *q, const char *queue, queue_message *m,
    int delay_s, const char *error)
{
	return q->ops->retry(q, queue, m, delay_s, error);
}

int
queue_dead_letter(bakery_queue *q, queue_message *m, const char *error)
{
	return q->ops->dead_letter(q, m, error);
}

int
queue_stats(bakery_queue *q, jv *out)
{
	return q->ops->stats(q, out);
}

int
queue_peek(bakery_queue *q, const char *queue, size_t max, jv *out)
{
	return q->ops->peek(q, queue, max, out);
}

int
queue_peek_event(bakery_queue *q, const char *queue, const char *sandbox,
    const char *id, const char *type, jv *out, int *complete)
{
	*complete = 1;
	return q->ops->peek_event(q, queue, sandbox, id, type, out, complete);
}

int
queue_wipe_sandbox(bakery_queue *q, const char *sandbox, int64_t fence_ms)
{
	return q->ops->wipe_sandbox(q, sandbox, fence_ms);
}

int
queue_init(bakery_queue *q, int replicas, jv *out)
{
	return q->ops->init(q, replicas, out);
}

int64_t
queue_fence(bakery_queue *q, const char *sandbox)
{
	return q->ops->fence(q, sandbox);
}
