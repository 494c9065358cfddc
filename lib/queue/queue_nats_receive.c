/*
 * queue_nats_receive.c — the NATS driver's receive and its answers to one
 * message (queue_nats.c has the connection and send; what each promises
 * is in its opening comment and docs/nats.md): the durable pull
 * consumers, made or healed and checked again after a reconnect; a
 * received message held until it is answered; ack, retry, dead letter.
 */
#include "queue_nats-internal.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_TIMEOUT_MS 250

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

int
queue_nats_receive(bakery_queue *q, const char *queue, const char *sandbox,
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

int
queue_nats_ack(bakery_queue *q, const char *queue, queue_message *m)
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

int
queue_nats_retry(bakery_queue *q, const char *queue, queue_message *m,
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

int
queue_nats_dead_letter(bakery_queue *q, queue_message *m, const char *error)
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
