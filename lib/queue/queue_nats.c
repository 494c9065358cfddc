/*
 * queue_nats.c — the queue on NATS JetStream, for more than one machine.
 *
 * Selected by nats://HOST:PORT[,HOST:PORT...]. It owns three JetStream
 * assets, created when missing (bakery-queue init creates or checks them):
 *
 *   BAKERY_EVENTS      stream, subjects bakery.events.SANDBOX.TYPE.ID
 *   BAKERY_EVENTS_DLQ  stream, subjects bakery.dlq.SANDBOX.TYPE.ID
 *   BAKERY_FENCES      key-value bucket: sandbox -> its last wipe (ms)
 *
 * Both streams: file storage, limits retention with no age limit (nothing
 * is dropped by waiting), 1 GiB with discard-new (a full stream refuses the
 * send, so the rows stay in their outbox), 1 MiB messages, a 10-minute
 * duplicate window, direct get allowed (peek), one replica per server in
 * the URL up to three (init --replicas N sets the streams' count). A '.' in a sandbox name becomes
 * '~' in subjects and consumer names.
 *
 * A message is the envelope, with headers Bakery-Id and Bakery-Sandbox
 * (and in the DLQ Bakery-Last-Error and Bakery-Attempts). What it promises,
 * as queue.h asks:
 *   send      publishes asynchronously with Nats-Msg-Id = event id; an item
 *             is accepted only when its publish ack came back (a duplicate
 *             ack counts). A redrive uses ID.redrive.RANDOM so the duplicate
 *             window does not swallow it.
 *   receive   fetches from a durable pull consumer, one per filter:
 *             bakery-all (bakery.events.>) or bakery-s-SANDBOX
 *             (bakery.events.SANDBOX.>); AckWait is the visibility; the
 *             delivery count is JetStream's.
 *   ack       deletes the message from the stream, then acks it, so the
 *             stream holds what is still owed and a second consumer with an
 *             overlapping filter does not get it later (if it already had
 *             it, the subscribers' seen tables absorb it). A delete left
 *             unanswered is asked again (queue_nats_stream.c,
 *             unanswered()).
 *   retry     Nak, with the delay when there is one. JetStream keeps no
 *             error with a Nak: last_error is known only in the DLQ.
 *   dead_letter  publishes to the DLQ and waits for its ack, then deletes
 *             and Terms the original: a crash between sends it twice.
 *   wipe_sandbox  writes the fence to BAKERY_FENCES, then purges the
 *             sandbox's subjects from both streams. A send reads the fence
 *             and drops items recorded before it; one that slips between
 *             its read and a wipe is dropped by the subscribers, which read
 *             the fence again (status 205).
 *   peek_event  reads the event's own subject (SANDBOX.TYPE.ID), then, for
 *             messages bakery 0.1.0 queued on SANDBOX.TYPE, that subject up
 *             to QUEUE_SCAN_MAX messages (queue_nats_peek.c).
 *
 * This file holds the connection, send and the fences;
 * queue_nats_receive.c receive and the answers to one message (the
 * consumers, ack, retry, dead letter); queue_nats_stream.c the streams'
 * administration (the assets, a stream healed, the deletes, stats, the
 * wipe's purge); queue_nats_peek.c peek, of all or of one event; what
 * they share is in queue_nats-internal.h.
 */
#include "../core/faults.h"
#include "queue_nats-internal.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
queue_nats_failed(int code, const char *what, natsStatus s, jsErrCode jerr)
{
	const char *text = nats_GetLastError(NULL);
	if (text && !*text)
		text = NULL;
	if (jerr)
		return bakery_fail(code, "nats: %s: %s (jetstream error %d)", what,
		    text ? text : natsStatus_GetText(s), (int)jerr);
	return bakery_fail(code, "nats: %s: %s", what,
	    text ? text : natsStatus_GetText(s));
}

const char *
queue_nats_stream_of(const char *queue)
{
	return strcmp(queue, QUEUE_DLQ) == 0 ? STREAM_DLQ : STREAM_EVENTS;
}

const char *
queue_nats_prefix_of(const char *queue)
{
	return strcmp(queue, QUEUE_DLQ) == 0 ? "bakery.dlq" : "bakery.events";
}

/* A subject token: '.' (allowed in sandbox names) becomes '~'; anything a
 * subject cannot hold becomes '_'. */
void
queue_nats_token(const char *s, char *buf, size_t size)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = c == '.' ? '~' : (c <= ' ' || c == '*' || c == '>' ||
		    c >= 0x7f) ? '_' : (char)c;
	}
	buf[i] = '\0';
	if (i == 0)
		snprintf(buf, size, "unknown");
}

/* PREFIX.SANDBOX.TYPE.ID: the event's own subject, which peek_event
 * reads (queue_nats_peek.c). */
static char *
subject_for(const char *queue, const char *sandbox, const char *id,
    const char *body)
{
	char sb[80], ty[80], ev[160];
	jv env = jv_parse(body);
	jv type = jv_is_valid(env) && jv_get_kind(env) == JV_KIND_OBJECT
	    ? jv_object_get(jv_copy(env), jv_string("type")) : jv_invalid();
	queue_nats_token(sandbox, sb, sizeof sb);
	queue_nats_token(jv_is_valid(type) &&
	    jv_get_kind(type) == JV_KIND_STRING ? jv_string_value(type) : NULL,
	    ty, sizeof ty);
	queue_nats_token(id, ev, sizeof ev);
	jv_free(type);
	jv_free(env);
	return bakery_xasprintf("%s.%s.%s.%s", queue_nats_prefix_of(queue), sb,
	    ty, ev);
}

/* Header values are one line. */
void
queue_nats_one_line(const char *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s", s ? s : "");
	for (char *p = buf; *p; p++)
		if (*p == '\r' || *p == '\n')
			*p = ' ';
}

/* ---- fences ---- */

int64_t
queue_nats_fence(bakery_queue *q, const char *sandbox)
{
	kvEntry *e = NULL;
	int64_t at = 0;
	natsStatus s = kvStore_Get(&e, NQ(q)->fences, sandbox);
	if (s == NATS_OK) {
		at = strtoll(kvEntry_ValueString(e), NULL, 10);
		kvEntry_Destroy(e);
	} else if (s != NATS_NOT_FOUND) {
		bakery_log(LOG_WARN, "fence_unreadable", "sandbox", sandbox,
		    "error", natsStatus_GetText(s), (char *)NULL);
	}
	return at;
}

/* ---- send ---- */

static void
on_publish_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae,
    void *closure)
{
	(void)js;
	nats_queue *n = closure;
	const char *id = NULL;
	natsMsgHeader_Get(msg, "Bakery-Id", &id);
	pthread_mutex_lock(&n->mu);
	for (size_t i = 0; id && i < n->batch_n; i++) {
		if (n->batch[i].accepted || strcmp(n->batch[i].id, id) != 0)
			continue;
		if (pa && !pae)
			n->batch[i].accepted = 1;
		break;
	}
	if (pae && !n->pub_error[0])
		snprintf(n->pub_error, sizeof n->pub_error, "%s",
		    pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
	pthread_mutex_unlock(&n->mu);
	natsMsg_Destroy(msg);
}

static int
nats_send(bakery_queue *q, const char *queue, queue_item *items, size_t count)
{
	nats_queue *n = NQ(q);
	for (size_t i = 0; i < count; i++) {
		if (i > 0 && strcmp(items[i].sandbox, items[i - 1].sandbox) == 0)
			continue;
		if (fault_is_set(q->ctx, items[i].sandbox, FAULT_QUEUE_REFUSES))
			return bakery_fail(EX_UNAVAILABLE,
			    "queue refused the send: sandbox '%s' has the "
			    "fault queue-refuses", items[i].sandbox);
	}
	pthread_mutex_lock(&n->mu);
	n->batch = items;
	n->batch_n = count;
	n->pub_error[0] = '\0';
	pthread_mutex_unlock(&n->mu);
	natsStatus s = NATS_OK;
	int64_t fence = 0;
	for (size_t i = 0; i < count && s == NATS_OK; i++) {
		queue_item *it = &items[i];
		if (i == 0 || strcmp(it->sandbox, items[i - 1].sandbox) != 0)
			fence = queue_nats_fence(q, it->sandbox);
		if (it->recorded_at > 0 && it->recorded_at < fence) {
			/* Recorded before its sandbox's wipe: dropped. */
			pthread_mutex_lock(&n->mu);
			it->accepted = 1;
			pthread_mutex_unlock(&n->mu);
			continue;
		}
		char *subject = subject_for(queue, it->sandbox, it->id,
		    it->body);
		char msg_id[160];
		if (it->redrive) {
			char r[24];
			bakery_random_id("", r, sizeof r);
			snprintf(msg_id, sizeof msg_id, "%s.redrive.%s", it->id, r);
		} else {
			snprintf(msg_id, sizeof msg_id, "%s", it->id);
		}
		natsMsg *msg = NULL;
		s = natsMsg_Create(&msg, subject, NULL, it->body,
		    (int)strlen(it->body));
		if (s == NATS_OK)
			s = natsMsgHeader_Set(msg, "Nats-Msg-Id", msg_id);
		if (s == NATS_OK)
			s = natsMsgHeader_Set(msg, "Bakery-Id", it->id);
		if (s == NATS_OK)
			s = natsMsgHeader_Set(msg, "Bakery-Sandbox", it->sandbox);
		if (s == NATS_OK)
			s = js_PublishMsgAsync(n->js, &msg, NULL);
		natsMsg_Destroy(msg); /* NULL once the library took it */
		free(subject);
	}
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MaxWait = q->ctx->queue_wait_ms > 0 ? q->ctx->queue_wait_ms
	    : PUBLISH_WAIT_MS;
	natsStatus done = js_PublishAsyncComplete(n->js, &po);
	if (done != NATS_OK) {
		/* No ack in time: those are not accepted; a later send may be
		 * a duplicate, which the window absorbs. */
		natsMsgList pending = { NULL, 0 };
		if (js_PublishAsyncGetPendingList(&pending, n->js) == NATS_OK)
			natsMsgList_Destroy(&pending);
	}
	pthread_mutex_lock(&n->mu);
	size_t accepted = 0;
	for (size_t i = 0; i < count; i++)
		accepted += items[i].accepted != 0;
	n->batch = NULL;
	n->batch_n = 0;
	char why[256];
	snprintf(why, sizeof why, "%s", n->pub_error[0] ? n->pub_error
	    : s != NATS_OK ? natsStatus_GetText(s)
	    : natsStatus_GetText(done));
	pthread_mutex_unlock(&n->mu);
	if (accepted < count)
		return bakery_fail(EX_UNAVAILABLE,
		    "nats accepted %zu of %zu messages: %s", accepted, count, why);
	return 0;
}

/* Called on the client's thread when a connection came back: perhaps a
 * restarted server, whose stream may have moved back
 * (queue_nats_heal_behind()); the next receive checks its consumers
 * again (queue_nats_receive.c). */
static void
on_reconnected(natsConnection *nc, void *closure)
{
	(void)nc;
	nats_queue *n = closure;
	pthread_mutex_lock(&n->mu);
	n->reconnected = 1;
	pthread_mutex_unlock(&n->mu);
}

static void
nats_close(bakery_queue *q)
{
	nats_queue *n = NQ(q);
	for (size_t i = 0; i < n->held_n; i++)
		natsMsg_Destroy(n->held[i].msg);
	free(n->held);
	for (int i = 0; i < MAX_SUBS; i++) {
		natsSubscription_Destroy(n->subs[i].sub);
		free(n->subs[i].key);
	}
	kvStore_Destroy(n->fences);
	jsCtx_Destroy(n->js);
	if (n->nc) {
		/* Naks and Terms are plain publishes: see them out. */
		natsConnection_FlushTimeout(n->nc, 2000);
		natsConnection_Destroy(n->nc);
	}
	pthread_mutex_destroy(&n->mu);
	free(n);
	free(q);
	nats_CloseAndWait(2000);
}

static const struct queue_ops nats_ops = {
	.send = nats_send,
	.receive = queue_nats_receive,
	.ack = queue_nats_ack,
	.ack_many = queue_nats_ack_many,
	.retry = queue_nats_retry,
	.dead_letter = queue_nats_dead_letter,
	.stats = queue_nats_stats,
	.peek = queue_nats_peek,
	.peek_event = queue_nats_peek_event,
	.wipe_sandbox = queue_nats_wipe_sandbox,
	.fence = queue_nats_fence,
	.init = queue_nats_init,
	.close = nats_close,
};

int
queue_nats_open(bakery_ctx *ctx, const char *url, bakery_queue **out)
{
	nats_queue *n = calloc(1, sizeof *n);
	if (!n)
		bakery_die(EX_OSERR, "out of memory");
	pthread_mutex_init(&n->mu, NULL);
	for (int i = 0; i < 3; i++)
		n->created[i] = "exists";
	int k = 0;
	int rc = lazy_nats_connect(url, on_reconnected, n, &n->nc, &k);
	/* Assets made here get one replica per listed server, up to three. */
	n->replicas = k < 3 ? k : 3;
	if (!rc) {
		jsOptions jo;
		jsOptions_Init(&jo);
		jo.Wait = ctx->queue_wait_ms; /* 0: nats.c's 5 s */
		jo.PublishAsync.AckHandler = on_publish_ack;
		jo.PublishAsync.AckHandlerClosure = n;
		jo.PublishAsync.MaxPending = 256;
		natsStatus s = natsConnection_JetStream(&n->js, n->nc, &jo);
		rc = s == NATS_OK
		    ? queue_nats_ensure_assets(n, n->replicas, NULL)
		    : queue_nats_failed(EX_UNAVAILABLE, "jetstream", s, 0);
	}
	bakery_queue *q = bakery_xmalloc(sizeof *q);
	q->ops = &nats_ops;
	q->ctx = ctx;
	q->impl = n;
	if (rc) {
		nats_close(q);
		return rc;
	}
	*out = q;
	return 0;
}
