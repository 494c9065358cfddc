/*
 * queue_nats.c — the queue on NATS JetStream, for more than one machine.
 *
 * Selected by nats://HOST:PORT[,HOST:PORT...]. It owns three JetStream
 * assets, created when missing (bakery-queue init creates or checks them):
 *
 *   BAKERY_EVENTS      stream, subjects bakery.events.SANDBOX.TYPE
 *   BAKERY_EVENTS_DLQ  stream, subjects bakery.dlq.SANDBOX.TYPE
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
 *
 * This file holds the connection, send, receive and the answers to one
 * message; queue_nats_stream.c the streams' administration (the assets,
 * a stream healed, the deletes, stats, peek, the wipe's purge); what they
 * share is in queue_nats-internal.h.
 */
#include "../core/faults.h"
#include "queue_nats-internal.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_TIMEOUT_MS 250

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

static char *
subject_for(const char *queue, const char *sandbox, const char *body)
{
	char sb[80], ty[80];
	jv env = jv_parse(body);
	jv type = jv_is_valid(env) && jv_get_kind(env) == JV_KIND_OBJECT
	    ? jv_object_get(jv_copy(env), jv_string("type")) : jv_invalid();
	queue_nats_token(sandbox, sb, sizeof sb);
	queue_nats_token(jv_is_valid(type) &&
	    jv_get_kind(type) == JV_KIND_STRING ? jv_string_value(type) : NULL,
	    ty, sizeof ty);
	jv_free(type);
	jv_free(env);
	return bakery_xasprintf("%s.%s.%s", queue_nats_prefix_of(queue), sb,
	    ty);
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
		char *subject = subject_for(queue, it->sandbox, it->body);
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
	po.MaxWait = PUBLISH_WAIT_MS;
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

/* ---- receive and answers ---- */

/* The durable consumer name on stream, made when missing (or healed, see
 * queue_nats_heal_behind()), its AckWait the visibility asked. */
static natsStatus
ensure_consumer(nats_queue *n, const char *stream, const char *name,
    const char *filter, int64_t ack_wait)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetConsumerInfo(&ci, n->js, stream, name, NULL, &jerr);
	if (s == NATS_OK && queue_nats_heal_behind(n, stream, name, ci)) {
		jsConsumerInfo_Destroy(ci);
		ci = NULL;
		s = NATS_NOT_FOUND;
	}
	if (s == NATS_OK && ci->Config->AckWait != ack_wait) {
		/* The visibility is the consumer's AckWait: follow the caller. */
		jsConsumerConfig cfg = *ci->Config;
		cfg.AckWait = ack_wait;
		jsConsumerInfo *up = NULL;
		s = js_UpdateConsumer(&up, n->js, stream, &cfg, NULL, &jerr);
		jsConsumerInfo_Destroy(up);
	} else if (s != NATS_OK && (s == NATS_NOT_FOUND ||
		       jerr == JSConsumerNotFoundErr)) {
		jsConsumerConfig cfg;
		jsConsumerConfig_Init(&cfg);
		cfg.Durable = name;
		cfg.AckPolicy = js_AckExplicit;
		cfg.DeliverPolicy = js_DeliverAll;
		cfg.AckWait = ack_wait;
		cfg.MaxDeliver = -1; /* consume.c counts and dead-letters */
		cfg.FilterSubject = filter;
		jsConsumerInfo *made = NULL;
		jerr = 0;
		s = js_AddConsumer(&made, n->js, stream, &cfg, NULL, &jerr);
		jsConsumerInfo_Destroy(made);
	}
	jsConsumerInfo_Destroy(ci);
	if (s != NATS_OK)
		queue_nats_failed(EX_TEMPFAIL, name, s, jerr);
	return s;
}

static int
consumer_for(nats_queue *n, const char *queue, const char *sandbox,
    int visibility_s, natsSubscription **out)
{
	char key[200], sb[80], name[120], filter[200];
	snprintf(key, sizeof key, "%s|%s|%d", queue, sandbox ? sandbox : "",
	    visibility_s);
	int free_slot = -1;
	for (int i = 0; i < MAX_SUBS; i++) {
		if (n->subs[i].key && strcmp(n->subs[i].key, key) == 0) {
			*out = n->subs[i].sub;
			return 0;
		}
		if (!n->subs[i].key && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return bakery_fail(EX_SOFTWARE, "nats: too many consumers");
	const char *stream = queue_nats_stream_of(queue);
	const char *base = strcmp(queue, QUEUE_DLQ) == 0 ? "bakery-dlq" : "bakery";
	if (sandbox) {
		queue_nats_token(sandbox, sb, sizeof sb);
		snprintf(name, sizeof name, "%s-s-%s", base, sb);
		snprintf(filter, sizeof filter, "%s.%s.>",
		    queue_nats_prefix_of(queue), sb);
	} else {
		snprintf(name, sizeof name, "%s-all", base);
		snprintf(filter, sizeof filter, "%s.>",
		    queue_nats_prefix_of(queue));
	}
	int64_t ack_wait = (int64_t)visibility_s * 1000000000LL;
	natsStatus s = ensure_consumer(n, stream, name, filter, ack_wait);
	if (s != NATS_OK)
		return EX_TEMPFAIL; /* ensure_consumer said why */
	jsErrCode jerr = 0;
	jsSubOptions so;
	jsSubOptions_Init(&so);
	so.Stream = stream;
	so.Consumer = name;
	natsSubscription *sub = NULL;
	jerr = 0;
	s = js_PullSubscribe(&sub, n->js, filter, name, NULL, &so, &jerr);
	if (s != NATS_OK)
		return queue_nats_failed(EX_TEMPFAIL, name, s, jerr);
	struct sub *slot = &n->subs[free_slot];
	slot->key = bakery_xstrdup(key);
	slot->sub = sub;
	slot->stream = stream;
	snprintf(slot->name, sizeof slot->name, "%s", name);
	snprintf(slot->filter, sizeof slot->filter, "%s", filter);
	slot->ack_wait = ack_wait;
	*out = sub;
	return 0;
}

char *
queue_nats_header_dup(natsMsg *msg, const char *key)
{
	const char *v = NULL;
	return natsMsgHeader_Get(msg, key, &v) == NATS_OK && v
	    ? bakery_xstrdup(v) : NULL;
}

static int
hold(nats_queue *n, natsMsg *msg, uint64_t seq)
{
	for (size_t i = 0; i < n->held_n; i++)
		if (!n->held[i].msg) {
			n->held[i] = (struct held){ msg, seq, n->generation };
			return (int)i;
		}
	struct held *grown = realloc(n->held, (n->held_n + 16) * sizeof *grown);
	if (!grown)
		bakery_die(EX_OSERR, "out of memory");
	memset(grown + n->held_n, 0, 16 * sizeof *grown);
	n->held = grown;
	n->held[n->held_n] = (struct held){ msg, seq, n->generation };
	return (int)n->held_n++;
}

/* Called on the client's thread when a connection came back: perhaps a
 * restarted server, whose stream may have moved back
 * (queue_nats_heal_behind()). */
static void
on_reconnected(natsConnection *nc, void *closure)
{
	(void)nc;
	nats_queue *n = closure;
	pthread_mutex_lock(&n->mu);
	n->reconnected = 1;
	pthread_mutex_unlock(&n->mu);
}

/* After a reconnect, the consumers this process uses are checked again
 * before the next fetch; a pull subscription follows its consumer's name,
 * so one made again serves it. */
static void
recheck_consumers(nats_queue *n)
{
	pthread_mutex_lock(&n->mu);
	int again = n->reconnected;
	n->reconnected = 0;
	pthread_mutex_unlock(&n->mu);
	for (int i = 0; again && i < MAX_SUBS; i++)
		if (n->subs[i].key)
			ensure_consumer(n, n->subs[i].stream, n->subs[i].name,
			    n->subs[i].filter, n->subs[i].ack_wait);
}

static int
nats_receive(bakery_queue *q, const char *queue, const char *sandbox,
    size_t max, int visibility_s, queue_message *out, size_t *got)
{
	nats_queue *n = NQ(q);
	natsSubscription *sub;
	recheck_consumers(n);
	int rc = consumer_for(n, queue, sandbox, visibility_s, &sub);
	if (rc)
		return rc;
	natsMsgList list = { NULL, 0 };
	jsErrCode jerr = 0;
	natsStatus s = natsSubscription_Fetch(&list, sub, (int)max,
	    FETCH_TIMEOUT_MS, &jerr);
	if (s == NATS_TIMEOUT)
		return 0; /* nothing ready */
	if (s != NATS_OK)
		return queue_nats_failed(EX_TEMPFAIL, "fetch", s, jerr);
	for (int i = 0; i < list.Count && *got < max; i++) {
		natsMsg *msg = list.Msgs[i];
		jsMsgMetaData *meta = NULL;
		if (natsMsg_GetMetaData(&meta, msg) != NATS_OK)
			continue; /* not a JetStream message */
		queue_message *m = &out[*got];
		memset(m, 0, sizeof *m);
		m->id = queue_nats_header_dup(msg, "Bakery-Id");
		m->sandbox = queue_nats_header_dup(msg, "Bakery-Sandbox");
		if (!m->id)
			m->id = bakery_xstrdup("unknown");
		if (!m->sandbox)
			m->sandbox = bakery_xstrdup("default");
		m->body = bakery_xmalloc((size_t)natsMsg_GetDataLength(msg) + 1);
		memcpy(m->body, natsMsg_GetData(msg),
		    (size_t)natsMsg_GetDataLength(msg));
		m->body[natsMsg_GetDataLength(msg)] = '\0';
		m->last_error = queue_nats_header_dup(msg, "Bakery-Last-Error");
		char *attempts = queue_nats_header_dup(msg, "Bakery-Attempts");
		m->attempts = attempts ? atoi(attempts) : 0;
		free(attempts);
		m->deliveries = (int)meta->NumDelivered;
		snprintf(m->lease, sizeof m->lease, "%llu",
		    (unsigned long long)meta->Sequence.Stream);
		m->handle = hold(n, msg, meta->Sequence.Stream);
		list.Msgs[i] = NULL;
		jsMsgMetaData_Destroy(meta);
		(*got)++;
	}
	natsMsgList_Destroy(&list);
	return 0;
}

struct held *
queue_nats_held_of(nats_queue *n, queue_message *m)
{
	if (m->handle < 0 || (size_t)m->handle >= n->held_n ||
	    !n->held[m->handle].msg) {
		bakery_fail(EX_SOFTWARE, "nats: '%s' is not held", m->id);
		return NULL;
	}
	return &n->held[m->handle];
}

/* A message held from before its consumer was made again, above the
 * stream's end then: deleted already (queue_nats_heal_behind()), and its
 * number may now be another message's, which a delete would remove
 * unapplied. */
int
queue_nats_held_is_stale(nats_queue *n, struct held *h, const char *id)
{
	if (h->generation == n->generation || h->seq <= n->stale_above)
		return 0;
	char sq[24];
	snprintf(sq, sizeof sq, "%llu", (unsigned long long)h->seq);
	bakery_log(LOG_WARN, "stale_lease_dropped", "id", id, "seq", sq,
	    (char *)NULL);
	return 1;
}

void
queue_nats_release(struct held *h)
{
	natsMsg_Destroy(h->msg);
	h->msg = NULL;
}

static int
nats_ack(bakery_queue *q, const char *queue, queue_message *m)
{
	nats_queue *n = NQ(q);
	struct held *h = queue_nats_held_of(n, m);
	if (!h)
		return EX_SOFTWARE;
	if (queue_nats_held_is_stale(n, h, m->id)) {
		/* its ack would reach the consumer made again */
		queue_nats_release(h);
		return 0;
	}
	int rc = queue_nats_forget(n, queue, h->seq);
	if (rc) {
		queue_nats_release(h); /* unacked: back after AckWait */
		return rc;
	}
	/* Deleted is done; the ack only spares the server a redelivery
	 * attempt, which would find nothing. */
	jsErrCode jerr = 0;
	if (natsMsg_AckSync(h->msg, NULL, &jerr) != NATS_OK)
		bakery_log(LOG_WARN, "ack_failed", "id", m->id, (char *)NULL);
	queue_nats_release(h);
	return 0;
}
static int
nats_retry(bakery_queue *q, const char *queue, queue_message *m,
    int delay_s, const char *error)
{
	(void)queue;
	(void)error; /* a Nak carries no text */
	struct held *h = queue_nats_held_of(NQ(q), m);
	if (!h)
		return EX_SOFTWARE;
	natsStatus s = delay_s > 0
	    ? natsMsg_NakWithDelay(h->msg, (int64_t)delay_s * 1000, NULL)
	    : natsMsg_Nak(h->msg, NULL);
	queue_nats_release(h);
	return s == NATS_OK ? 0 : queue_nats_failed(EX_TEMPFAIL, "nak", s, 0);
}

static int
nats_dead_letter(bakery_queue *q, queue_message *m, const char *error)
{
	nats_queue *n = NQ(q);
	struct held *h = queue_nats_held_of(n, m);
	if (!h)
		return EX_SOFTWARE;
	const char *orig = natsMsg_GetSubject(h->msg);
	const char *rest = strncmp(orig, "bakery.events.", 14) == 0 ? orig + 14
	    : "unknown.unknown";
	char *subject = bakery_xasprintf("bakery.dlq.%s", rest);
	char msg_id[200], err[512], attempts[16];
	/* The same delivery dead-lettered twice (a crash before the Term) is
	 * one DLQ message; a redriven one that fails again is a new one. */
	snprintf(msg_id, sizeof msg_id, "dlq.%s.%llu", m->id,
	    (unsigned long long)h->seq);
	queue_nats_one_line(error, err, sizeof err);
	snprintf(attempts, sizeof attempts, "%d", m->deliveries);
	natsMsg *msg = NULL;
	jsPubAck *pa = NULL;
	jsErrCode jerr = 0;
	natsStatus s = natsMsg_Create(&msg, subject, NULL, m->body,
	    (int)strlen(m->body));
	if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Nats-Msg-Id", msg_id);
	if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Bakery-Id", m->id);
	if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Bakery-Sandbox", m->sandbox);
	if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Bakery-Last-Error", err);
	if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Bakery-Attempts", attempts);
	if (s == NATS_OK) s = js_PublishMsg(&pa, n->js, msg, NULL, &jerr);
	natsMsg_Destroy(msg);
	jsPubAck_Destroy(pa);
	free(subject);
	if (s != NATS_OK) {
		/* Not in the DLQ: leave the original to come back. */
		natsMsg_Nak(h->msg, NULL);
		queue_nats_release(h);
		return queue_nats_failed(EX_UNAVAILABLE, "dead-letter", s,
		    jerr);
	}
	bakery_crash_point("nats.after_dlq_publish");
	int stale = queue_nats_held_is_stale(n, h, m->id);
	int rc = stale ? 0 : queue_nats_forget(n, QUEUE_EVENTS, h->seq);
	if (!rc && !stale)
		natsMsg_Term(h->msg, NULL);
	queue_nats_release(h);
	return rc;
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
	.receive = nats_receive,
	.ack = nats_ack,
	.ack_many = queue_nats_ack_many,
	.retry = nats_retry,
	.dead_letter = nats_dead_letter,
	.stats = queue_nats_stats,
	.peek = queue_nats_peek,
	.wipe_sandbox = queue_nats_wipe_sandbox,
	.fence = queue_nats_fence,
	.init = queue_nats_init,
	.close = nats_close,
};

int
queue_nats_open(bakery_ctx *ctx, const char *url, bakery_queue **out)
{
	int lrc = lazy_nats();
	if (lrc)
		return lrc;
	/* nats://A:1,B:2 -> { "nats://A:1", "nats://B:2" } */
	const char *list = url + strlen("nats://");
	char *copy = bakery_xstrdup(list);
	size_t count = 1;
	for (const char *p = list; *p; p++)
		count += *p == ',';
	char **servers = bakery_xmalloc(count * sizeof *servers);
	size_t k = 0;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
	    tok = strtok_r(NULL, ",", &save))
		servers[k++] = bakery_xasprintf("nats://%s", tok);
	free(copy);
	if (k == 0) {
		free(servers);
		return bakery_fail(EX_CONFIG, "bad queue URL: '%s': %s", url,
		    "want nats://HOST:PORT[,HOST:PORT...]");
	}
	nats_queue *n = calloc(1, sizeof *n);
	if (!n)
		bakery_die(EX_OSERR, "out of memory");
	pthread_mutex_init(&n->mu, NULL);
	for (int i = 0; i < 3; i++)
		n->created[i] = "exists";
	/* Assets made here get one replica per listed server, up to three. */
	n->replicas = k < 3 ? (int)k : 3;
	natsOptions *opts = NULL;
	natsStatus s = natsOptions_Create(&opts);
	if (s == NATS_OK)
		s = natsOptions_SetServers(opts, (const char **)servers, (int)k);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(opts, 2000);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(opts, 100);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(opts, 100);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(opts, on_reconnected, n);
	if (s == NATS_OK)
		s = natsConnection_Connect(&n->nc, opts);
	natsOptions_Destroy(opts);
	for (size_t i = 0; i < k; i++)
		free(servers[i]);
	free(servers);
	int rc = 0;
	if (s != NATS_OK) {
		rc = bakery_fail(EX_UNAVAILABLE, "nats: cannot connect to '%s': %s",
		    url, natsStatus_GetText(s));
	} else {
		jsOptions jo;
		jsOptions_Init(&jo);
		jo.PublishAsync.AckHandler = on_publish_ack;
		jo.PublishAsync.AckHandlerClosure = n;
		jo.PublishAsync.MaxPending = 256;
		s = natsConnection_JetStream(&n->js, n->nc, &jo);
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
