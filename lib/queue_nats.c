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
 *             unanswered is asked again (see unanswered()).
 *   retry     Nak, with the delay when there is one. JetStream keeps no
 *             error with a Nak: last_error is known only in the DLQ.
 *   dead_letter  publishes to the DLQ and waits for its ack, then deletes
 *             and Terms the original: a crash between sends it twice.
 *   wipe_sandbox  writes the fence to BAKERY_FENCES, then purges the
 *             sandbox's subjects from both streams. A send reads the fence
 *             and drops items recorded before it; one that slips between
 *             its read and a wipe is dropped by the subscribers, which read
 *             the fence again (status 205).
 */
#include "faults.h"
#include "queue-internal.h"
#include "util.h"

#include "lazy_nats.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_EVENTS "BAKERY_EVENTS"
#define STREAM_DLQ "BAKERY_EVENTS_DLQ"
#define FENCE_BUCKET "BAKERY_FENCES"
#define FETCH_TIMEOUT_MS 250
#define PUBLISH_WAIT_MS 5000
#define MAX_SUBS 4
#define UNANSWERED_WAIT_MS 30000 /* see unanswered() */
#define ASK_AGAIN_PAUSE_MS 250

struct held {
	natsMsg *msg;
	uint64_t seq;
	unsigned generation; /* n->generation when received */
};

struct sub {
	char *key; /* queue|sandbox|visibility */
	natsSubscription *sub;
	const char *stream;
	char name[120], filter[200];
	int64_t ack_wait;
};

typedef struct nats_queue {
	natsConnection *nc;
	jsCtx *js;
	kvStore *fences;
	pthread_mutex_t mu;
	queue_item *batch; /* the send waiting for its acks */
	size_t batch_n;
	char pub_error[256];
	int replicas;            /* for assets this process creates */
	const char *created[3];  /* what open found or made, for init */
	struct sub subs[MAX_SUBS];
	struct held *held; /* received, not yet answered: handle = index */
	size_t held_n;
	int64_t unanswered_until; /* see unanswered() */
	int reconnected;          /* set by the client's thread: check again */
	unsigned generation;      /* of the consumers; see heal_behind() */
	uint64_t stale_above;     /* the stream's end when one was healed */
} nats_queue;

#define NQ(q) ((nats_queue *)(q)->impl)

static int
nats_failed(int code, const char *what, natsStatus s, jsErrCode jerr)
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

static const char *
stream_of(const char *queue)
{
	return strcmp(queue, QUEUE_DLQ) == 0 ? STREAM_DLQ : STREAM_EVENTS;
}

static const char *
prefix_of(const char *queue)
{
	return strcmp(queue, QUEUE_DLQ) == 0 ? "bakery.dlq" : "bakery.events";
}

/* A subject token: '.' (allowed in sandbox names) becomes '~'; anything a
 * subject cannot hold becomes '_'. */
static void
token(const char *s, char *buf, size_t size)
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
	token(sandbox, sb, sizeof sb);
	token(jv_is_valid(type) && jv_get_kind(type) == JV_KIND_STRING
	    ? jv_string_value(type) : NULL, ty, sizeof ty);
	jv_free(type);
	jv_free(env);
	return bakery_xasprintf("%s.%s.%s", prefix_of(queue), sb, ty);
}

/* Header values are one line. */
static void
one_line(const char *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s", s ? s : "");
	for (char *p = buf; *p; p++)
		if (*p == '\r' || *p == '\n')
			*p = ' ';
}

/* ---- assets ---- */

static int
ensure_stream(nats_queue *n, const char *name, const char *subject,
    int replicas, const char **status, jv *report)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetStreamInfo(&si, n->js, name, NULL, &jerr);
	if (s == NATS_OK && report && si->Config->Replicas != replicas) {
		/* init --replicas N on a stream with another count. */
		jsStreamConfig cfg = *si->Config;
		cfg.Replicas = replicas;
		jsStreamInfo *up = NULL;
		s = js_UpdateStream(&up, n->js, &cfg, NULL, &jerr);
		if (s == NATS_OK) {
			jsStreamInfo_Destroy(si);
			si = up;
			*status = "updated";
		}
	}
	if (s != NATS_OK && (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr)) {
		jsStreamConfig cfg;
		jsStreamConfig_Init(&cfg);
		cfg.Name = name;
		cfg.Subjects = &subject;
		cfg.SubjectsLen = 1;
		cfg.Storage = js_FileStorage;
		cfg.Retention = js_LimitsPolicy;
		cfg.Discard = js_DiscardNew;
		cfg.MaxBytes = 1LL << 30;
		cfg.MaxMsgSize = 1 << 20;
		cfg.Duplicates = 600LL * 1000000000LL;
		cfg.Replicas = replicas;
		cfg.AllowDirect = true;
		jerr = 0;
		s = js_AddStream(&si, n->js, &cfg, NULL, &jerr);
		*status = "created";
	}
	if (s != NATS_OK)
		return nats_failed(EX_UNAVAILABLE, name, s, jerr);
	if (report) {
		jv r = jv_object();
		r = jv_object_set(r, jv_string("stream"), jv_string(name));
		r = jv_object_set(r, jv_string("status"), jv_string(*status));
		r = jv_object_set(r, jv_string("subjects"), jv_string(
		    si->Config->SubjectsLen ? si->Config->Subjects[0] : ""));
		r = jv_object_set(r, jv_string("storage"), jv_string(
		    si->Config->Storage == js_FileStorage ? "file" : "memory"));
		r = jv_object_set(r, jv_string("replicas"),
		    jv_number((double)si->Config->Replicas));
		r = jv_object_set(r, jv_string("duplicate_window_s"),
		    jv_number((double)(si->Config->Duplicates / 1000000000LL)));
		r = jv_object_set(r, jv_string("max_bytes"),
		    jv_number((double)si->Config->MaxBytes));
		r = jv_object_set(r, jv_string("messages"),
		    jv_number((double)si->State.Msgs));
		*report = jv_array_append(*report, r);
	}
	jsStreamInfo_Destroy(si);
	return 0;
}

/* Creates what is missing (status "created"), or finds it ("exists"); with
 * a report (init), also sets the streams' replicas ("updated"). */
static int
ensure_assets(nats_queue *n, int replicas, jv *report)
{
	int rc;
	if ((rc = ensure_stream(n, STREAM_EVENTS, "bakery.events.>", replicas,
		 &n->created[0], report)) ||
	    (rc = ensure_stream(n, STREAM_DLQ, "bakery.dlq.>", replicas,
		 &n->created[1], report)))
		return rc;
	natsStatus s = n->fences ? NATS_OK
	    : js_KeyValue(&n->fences, n->js, FENCE_BUCKET);
	if (s != NATS_OK) {
		kvConfig cfg;
		kvConfig_Init(&cfg);
		cfg.Bucket = FENCE_BUCKET;
		cfg.History = 1;
		cfg.StorageType = js_FileStorage;
		cfg.Replicas = n->replicas;
		s = js_CreateKeyValue(&n->fences, n->js, &cfg);
		n->created[2] = "created";
	}
	if (s != NATS_OK)
		return nats_failed(EX_UNAVAILABLE, FENCE_BUCKET, s, 0);
	if (report) {
		jv r = jv_object();
		r = jv_object_set(r, jv_string("bucket"), jv_string(FENCE_BUCKET));
		r = jv_object_set(r, jv_string("status"), jv_string(n->created[2]));
		*report = jv_array_append(*report, r);
	}
	return 0;
}

/* ---- fences ---- */

static int64_t
nats_fence(bakery_queue *q, const char *sandbox)
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
		if (fault_is_set(q->ctx, items[i].sandbox, "queue-refuses"))
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
			fence = nats_fence(q, it->sandbox);
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

/* The stream's last sequence below what the consumer has delivered: a
 * nats-server 2.9 SIGKILLed between emptying its last block and rewriting
 * its index comes back with a lower last sequence, and new messages take
 * numbers the consumer has passed, never to be delivered. Found at start
 * and after a reconnect (a restarted server), the consumer is made again,
 * delivering all the stream holds: what is still owed, and what a 2.9
 * server brought back, which the subscribers absorb. Messages held from
 * before lie above the stream's end: they were deleted, so their answers
 * are dropped (see held_is_stale()). Returns 1 when the consumer went. */
static int
heal_behind(nats_queue *n, const char *stream, const char *name,
    jsConsumerInfo *ci)
{
	jsStreamInfo *si = NULL;
	if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) != NATS_OK)
		return 0;
	uint64_t last = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	if (ci->Delivered.Stream <= last)
		return 0;
	char l[24], d[24];
	snprintf(l, sizeof l, "%llu", (unsigned long long)last);
	snprintf(d, sizeof d, "%llu", (unsigned long long)ci->Delivered.Stream);
	bakery_log(LOG_WARN, "stream_behind_consumer", "stream", stream,
	    "consumer", name, "last_seq", l, "delivered_seq", d, (char *)NULL);
	if (js_DeleteConsumer(n->js, stream, name, NULL, NULL) != NATS_OK)
		return 0;
	n->generation++;
	if (!n->stale_above || last < n->stale_above)
		n->stale_above = last ? last : 1;
	return 1;
}

/* The durable consumer name on stream, made when missing (or healed, see
 * heal_behind()), its AckWait the visibility asked. */
static natsStatus
ensure_consumer(nats_queue *n, const char *stream, const char *name,
    const char *filter, int64_t ack_wait)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetConsumerInfo(&ci, n->js, stream, name, NULL, &jerr);
	if (s == NATS_OK && heal_behind(n, stream, name, ci)) {
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
		nats_failed(EX_TEMPFAIL, name, s, jerr);
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
	const char *stream = stream_of(queue);
	const char *base = strcmp(queue, QUEUE_DLQ) == 0 ? "bakery-dlq" : "bakery";
	if (sandbox) {
		token(sandbox, sb, sizeof sb);
		snprintf(name, sizeof name, "%s-s-%s", base, sb);
		snprintf(filter, sizeof filter, "%s.%s.>", prefix_of(queue), sb);
	} else {
		snprintf(name, sizeof name, "%s-all", base);
		snprintf(filter, sizeof filter, "%s.>", prefix_of(queue));
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
		return nats_failed(EX_TEMPFAIL, name, s, jerr);
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

static char *
header_dup(natsMsg *msg, const char *key)
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
 * restarted server, whose stream may have moved back (heal_behind()). */
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
		return nats_failed(EX_TEMPFAIL, "fetch", s, jerr);
	for (int i = 0; i < list.Count && *got < max; i++) {
		natsMsg *msg = list.Msgs[i];
		jsMsgMetaData *meta = NULL;
		if (natsMsg_GetMetaData(&meta, msg) != NATS_OK)
			continue; /* not a JetStream message */
		queue_message *m = &out[*got];
		memset(m, 0, sizeof *m);
		m->id = header_dup(msg, "Bakery-Id");
		m->sandbox = header_dup(msg, "Bakery-Sandbox");
		if (!m->id)
			m->id = bakery_xstrdup("unknown");
		if (!m->sandbox)
			m->sandbox = bakery_xstrdup("default");
		m->body = bakery_xmalloc((size_t)natsMsg_GetDataLength(msg) + 1);
		memcpy(m->body, natsMsg_GetData(msg),
		    (size_t)natsMsg_GetDataLength(msg));
		m->body[natsMsg_GetDataLength(msg)] = '\0';
		m->last_error = header_dup(msg, "Bakery-Last-Error");
		char *attempts = header_dup(msg, "Bakery-Attempts");
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

static struct held *
held_of(nats_queue *n, queue_message *m)
{
	if (m->handle < 0 || (size_t)m->handle >= n->held_n ||
	    !n->held[m->handle].msg) {
		bakery_fail(EX_SOFTWARE, "nats: '%s' is not held", m->id);
		return NULL;
	}
	return &n->held[m->handle];
}

/* A message held from before its consumer was made again, above the
 * stream's end then: deleted already (heal_behind()), and its number may
 * now be another message's, which a delete would remove unapplied. */
static int
held_is_stale(nats_queue *n, struct held *h, const char *id)
{
	if (h->generation == n->generation || h->seq <= n->stale_above)
		return 0;
	char sq[24];
	snprintf(sq, sizeof sq, "%llu", (unsigned long long)h->seq);
	bakery_log(LOG_WARN, "stale_lease_dropped", "id", id, "seq", sq,
	    (char *)NULL);
	return 1;
}

static void
release(struct held *h)
{
	natsMsg_Destroy(h->msg);
	h->msg = NULL;
}

/* A delete with no answer in time may have been applied all the same: a
 * stream leader that commits it and dies before answering (SIGKILL, a
 * failover). Reported as failed, it would be lease-lost, said to come
 * again, and never come. So an unanswered delete is asked again until an
 * answer settles it: deleted now, or nothing there (the first one did
 * it). A process waits for that up to UNANSWERED_WAIT_MS from its first
 * unanswered delete, longer than a cluster takes to elect a new leader;
 * once that has run out, a delete is asked once, until one is answered. */
static void
unanswered(nats_queue *n)
{
	if (!n->unanswered_until)
		n->unanswered_until = nats_Now() + UNANSWERED_WAIT_MS;
}

static int
still_waiting(nats_queue *n)
{
	return n->unanswered_until && nats_Now() < n->unanswered_until;
}

/* One delete: 0 when the message is gone, deleted now or before (another
 * consumer, a purge); EX_TEMPFAIL when refused or not answered. The same
 * request as nats_ack_many's, its answer read by queue_nats_delete_gone().
 *
 * A plain delete, not an erase. nats-server 2.9 keeps a delete of a message
 * inside a block only in the block's index, written lazily, so a SIGKILLed
 * server can bring a deleted message back: it was applied and acked, it
 * lies below the consumer's ack floor and is not delivered again to that
 * consumer, but it shows in stats and peek (and a new consumer would
 * deliver it, absorbed). An erase stays erased, but under the soak's
 * server kills 2.9.10 then lost track of live messages in the block being
 * written ("no message found" for a message on disk): retried events were
 * never delivered again, lost. 2.10 writes a tombstone for each delete:
 * nothing comes back. See docs/nats.md. */
static int
delete_once(nats_queue *n, const char *queue, uint64_t seq)
{
	char subject[80], body[64];
	snprintf(subject, sizeof subject, "$JS.API.STREAM.MSG.DELETE.%s",
	    stream_of(queue));
	snprintf(body, sizeof body, "{\"seq\":%llu,\"no_erase\":true}",
	    (unsigned long long)seq);
	natsMsg *answer = NULL;
	natsStatus s = natsConnection_RequestString(&answer, n->nc, subject,
	    body, PUBLISH_WAIT_MS);
	if (s == NATS_OK) {
		int gone = queue_nats_delete_gone(natsMsg_GetData(answer),
		    natsMsg_GetDataLength(answer));
		char why[200];
		one_line(natsMsg_GetData(answer), why, sizeof why);
		natsMsg_Destroy(answer);
		if (gone) {
			n->unanswered_until = 0;
			return 0;
		}
		return bakery_fail(EX_TEMPFAIL, "nats: delete of %llu refused: %s",
		    (unsigned long long)seq, why);
	}
	if (s == NATS_TIMEOUT)
		unanswered(n);
	return nats_failed(EX_TEMPFAIL, "delete", s, 0);
}

/* After a delete went unanswered: asked again while the process waits. */
static int
ask_again(nats_queue *n, const char *queue, uint64_t seq)
{
	char sq[24];
	snprintf(sq, sizeof sq, "%llu", (unsigned long long)seq);
	bakery_log(LOG_WARN, "delete_asked_again", "stream", stream_of(queue),
	    "seq", sq, (char *)NULL);
	int rc;
	do {
		nats_Sleep(ASK_AGAIN_PAUSE_MS);
		rc = delete_once(n, queue, seq);
	} while (rc && still_waiting(n));
	return rc;
}

/* Removes an answered message from the stream: what stays is what is owed.
 * This comes before the ack: a delete that fails leaves the message
 * unacked, to come back and be absorbed; an ack first could leave an acked
 * message in the stream that no consumer of that filter would ever deliver
 * again. */
static int
forget(nats_queue *n, const char *queue, uint64_t seq)
{
	int rc = delete_once(n, queue, seq);
	if (rc && still_waiting(n))
		rc = ask_again(n, queue, seq);
	return rc;
}

/* 10057 (message delete failed) carries the store's error as its
 * description: these say the message is not there; any other (the store
 * closed, a snapshot in progress, a block that did not load) is a refusal,
 * to be tried again. */
static const char *const gone_descriptions[] = {
	"no message found", "stream store EOF", "deleted message", NULL,
};

/* Gone: deleted now (success), or before: 10037 no message found, 10043
 * sequence not found (a delete asked again of a message in the middle of
 * the stream), or a 10057 whose description says so. */
int
queue_nats_delete_gone(const char *answer, int len)
{
	jv r = jv_parse_sized(answer, len);
	if (jv_get_kind(r) != JV_KIND_OBJECT) {
		jv_free(r);
		return 0;
	}
	jv ok = jv_object_get(jv_copy(r), jv_string("success"));
	jv error = jv_object_get(r, jv_string("error"));
	int code = 0;
	const char *text = "";
	if (jv_get_kind(error) == JV_KIND_OBJECT) {
		jv c = jv_object_get(jv_copy(error), jv_string("err_code"));
		code = jv_get_kind(c) == JV_KIND_NUMBER ? (int)jv_number_value(c) : 0;
		jv_free(c);
		jv d = jv_object_get(jv_copy(error), jv_string("description"));
		if (jv_get_kind(d) == JV_KIND_STRING)
			text = jv_string_value(d);
		jv_free(error);
		error = d; /* keeps text alive */
	}
	int gone = jv_get_kind(ok) == JV_KIND_TRUE ||
	    code == JSNoMessageFoundErr || code == JSSequenceNotFoundErr;
	for (int i = 0; !gone && code == JSStreamMsgDeleteFailed &&
	     gone_descriptions[i]; i++)
		gone = strcmp(text, gone_descriptions[i]) == 0;
	jv_free(ok);
	jv_free(error);
	return gone;
}

static int
nats_ack(bakery_queue *q, const char *queue, queue_message *m)
{
	nats_queue *n = NQ(q);
	struct held *h = held_of(n, m);
	if (!h)
		return EX_SOFTWARE;
	if (held_is_stale(n, h, m->id)) {
		release(h); /* its ack would reach the consumer made again */
		return 0;
	}
	int rc = forget(n, queue, h->seq);
	if (rc) {
		release(h); /* unacked: it comes back after AckWait */
		return rc;
	}
	/* Deleted is done; the ack only spares the server a redelivery
	 * attempt, which would find nothing. */
	jsErrCode jerr = 0;
	if (natsMsg_AckSync(h->msg, NULL, &jerr) != NATS_OK)
		bakery_log(LOG_WARN, "ack_failed", "id", m->id, (char *)NULL);
	release(h);
	return 0;
}

/* The deletes of a batch go out together as requests on one inbox, and
 * their answers are read after: about one round trip for the batch, where
 * nats_ack takes two per message (the delete, then a synchronous ack). A
 * message whose delete was answered (or found it gone) is acked without
 * waiting: the ack only spares the server a redelivery attempt. One whose
 * delete was refused stays unacked and comes back; one not answered is
 * asked again (see unanswered()). */
static int
nats_ack_many(bakery_queue *q, const char *queue, queue_message **m,
    size_t n, int *rcs)
{
	nats_queue *nq = NQ(q);
	struct held **held = bakery_xmalloc(n * sizeof *held);
	natsInbox *inbox = NULL;
	natsSubscription *replies = NULL;
	char *wildcard = NULL;
	natsStatus s = natsInbox_Create(&inbox);
	if (s == NATS_OK) {
		wildcard = bakery_xasprintf("%s.*", (const char *)inbox);
		s = natsConnection_SubscribeSync(&replies, nq->nc, wildcard);
	}
	char *subject = bakery_xasprintf("$JS.API.STREAM.MSG.DELETE.%s",
	    stream_of(queue));
	size_t asked = 0;
	for (size_t i = 0; i < n; i++) {
		rcs[i] = EX_TEMPFAIL;
		held[i] = held_of(nq, m[i]);
		if (held[i] && held_is_stale(nq, held[i], m[i]->id)) {
			rcs[i] = 0; /* its ack would reach the consumer made again */
			release(held[i]);
			held[i] = NULL;
			continue;
		}
		if (!held[i] || s != NATS_OK)
			continue;
		char reply[128], body[64];
		snprintf(reply, sizeof reply, "%s.%zu", (const char *)inbox, i);
		snprintf(body, sizeof body, "{\"seq\":%llu,\"no_erase\":true}",
		    (unsigned long long)held[i]->seq);
		if (natsConnection_PublishRequestString(nq->nc, subject, reply,
			body) == NATS_OK) {
			rcs[i] = -1; /* asked, not answered yet */
			asked++;
		}
	}
	while (asked > 0) {
		natsMsg *answer = NULL;
		if (natsSubscription_NextMsg(&answer, replies,
			PUBLISH_WAIT_MS) != NATS_OK)
			break;
		const char *dot = strrchr(natsMsg_GetSubject(answer), '.');
		size_t i = dot ? (size_t)strtoull(dot + 1, NULL, 10) : n;
		if (i < n && rcs[i] == -1) {
			rcs[i] = queue_nats_delete_gone(natsMsg_GetData(answer),
			    natsMsg_GetDataLength(answer)) ? 0 : EX_TEMPFAIL;
			if (rcs[i] == 0)
				nq->unanswered_until = 0;
			asked--;
		}
		natsMsg_Destroy(answer);
	}
	for (size_t i = 0; i < n; i++) {
		if (rcs[i] == -1) {
			unanswered(nq);
			rcs[i] = still_waiting(nq)
			    ? ask_again(nq, queue, held[i]->seq)
			    : bakery_fail(EX_TEMPFAIL, "nats: the delete of"
				  " '%s' was not answered", m[i]->id);
		}
		if (!held[i])
			continue;
		if (rcs[i] == 0 && natsMsg_Ack(held[i]->msg, NULL) != NATS_OK)
			bakery_log(LOG_WARN, "ack_failed", "id", m[i]->id,
			    (char *)NULL);
		release(held[i]); /* an unacked one comes back after AckWait */
	}
	natsSubscription_Destroy(replies);
	natsInbox_Destroy(inbox);
	free(wildcard);
	free(subject);
	free(held);
	return 0;
}

static int
nats_retry(bakery_queue *q, const char *queue, queue_message *m,
    int delay_s, const char *error)
{
	(void)queue;
	(void)error; /* a Nak carries no text */
	struct held *h = held_of(NQ(q), m);
	if (!h)
		return EX_SOFTWARE;
	natsStatus s = delay_s > 0
	    ? natsMsg_NakWithDelay(h->msg, (int64_t)delay_s * 1000, NULL)
	    : natsMsg_Nak(h->msg, NULL);
	release(h);
	return s == NATS_OK ? 0 : nats_failed(EX_TEMPFAIL, "nak", s, 0);
}

static int
nats_dead_letter(bakery_queue *q, queue_message *m, const char *error)
{
	nats_queue *n = NQ(q);
	struct held *h = held_of(n, m);
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
	one_line(error, err, sizeof err);
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
		release(h);
		return nats_failed(EX_UNAVAILABLE, "dead-letter", s, jerr);
	}
	bakery_crash_point("nats.after_dlq_publish");
	int stale = held_is_stale(n, h, m->id);
	int rc = stale ? 0 : forget(n, QUEUE_EVENTS, h->seq);
	if (!rc && !stale)
		natsMsg_Term(h->msg, NULL);
	release(h);
	return rc;
}

/* ---- stats, peek ---- */

static int
nats_stats(bakery_queue *q, jv *out)
{
	nats_queue *n = NQ(q);
	const char *queues[] = { QUEUE_EVENTS, QUEUE_DLQ };
	const char *consumers[] = { "bakery-all", "bakery-dlq-all" };
	*out = jv_object();
	for (int i = 0; i < 2; i++) {
		jsStreamInfo *si = NULL;
		jsErrCode jerr = 0;
		natsStatus s = js_GetStreamInfo(&si, n->js, stream_of(queues[i]),
		    NULL, &jerr);
		if (s != NATS_OK) {
			jv_free(*out);
			*out = jv_invalid();
			return nats_failed(EX_UNAVAILABLE, "stats", s, jerr);
		}
		int64_t msgs = (int64_t)si->State.Msgs, leased = 0;
		jsStreamInfo_Destroy(si);
		jsConsumerInfo *ci = NULL;
		if (js_GetConsumerInfo(&ci, n->js, stream_of(queues[i]),
			consumers[i], NULL, NULL) == NATS_OK) {
			leased = ci->NumAckPending;
			jsConsumerInfo_Destroy(ci);
		}
		if (leased > msgs)
			leased = msgs;
		jv st = jv_object();
		st = jv_object_set(st, jv_string("ready"),
		    jv_number((double)(msgs - leased)));
		st = jv_object_set(st, jv_string("leased"), jv_number((double)leased));
		st = jv_object_set(st, jv_string("delayed"), jv_number(0));
		*out = jv_object_set(*out, jv_string(queues[i]), st);
	}
	return 0;
}

/* The stream's messages, oldest first, by direct get: what is still owed.
 * deliveries is 0 for a message the all-sandbox consumer has not reached
 * and null when JetStream has delivered it (its count is per consumer). */
static int
nats_peek(bakery_queue *q, const char *queue, size_t max, jv *out)
{
	nats_queue *n = NQ(q);
	const char *stream = stream_of(queue);
	uint64_t delivered = 0;
	jsConsumerInfo *ci = NULL;
	if (js_GetConsumerInfo(&ci, n->js, stream, strcmp(queue, QUEUE_DLQ) == 0
		? "bakery-dlq-all" : "bakery-all", NULL, NULL) == NATS_OK) {
		delivered = ci->Delivered.Stream;
		jsConsumerInfo_Destroy(ci);
	}
	char filter[40];
	snprintf(filter, sizeof filter, "%s.>", prefix_of(queue));
	*out = jv_array();
	uint64_t seq = 1;
	for (size_t i = 0; i < max; i++) {
		jsDirectGetMsgOptions dg;
		jsDirectGetMsgOptions_Init(&dg);
		dg.Sequence = seq;
		dg.NextBySubject = filter;
		natsMsg *msg = NULL;
		natsStatus s = js_DirectGetMsg(&msg, n->js, stream, NULL, &dg);
		if (s == NATS_NOT_FOUND)
			break;
		if (s != NATS_OK) {
			jv_free(*out);
			*out = jv_invalid();
			return nats_failed(EX_UNAVAILABLE, "peek", s, 0);
		}
		const char *v = NULL;
		uint64_t at = natsMsgHeader_Get(msg, "Nats-Sequence", &v) == NATS_OK
		    ? strtoull(v, NULL, 10) : seq;
		seq = at + 1;
		char *id = header_dup(msg, "Bakery-Id");
		char *sandbox = header_dup(msg, "Bakery-Sandbox");
		char *err = header_dup(msg, "Bakery-Last-Error");
		char *body = bakery_xmalloc((size_t)natsMsg_GetDataLength(msg) + 1);
		memcpy(body, natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg));
		body[natsMsg_GetDataLength(msg)] = '\0';
		const char *stamp = NULL;
		natsMsgHeader_Get(msg, "Nats-Time-Stamp", &stamp);
		jv m = jv_object();
		m = jv_object_set(m, jv_string("id"), jv_string(id ? id : "unknown"));
		m = jv_object_set(m, jv_string("queue"), jv_string(queue));
		m = jv_object_set(m, jv_string("sandbox"),
		    sandbox ? jv_string(sandbox) : jv_null());
		m = jv_object_set(m, jv_string("deliveries"),
		    at > delivered ? jv_number(0) : jv_null());
		m = jv_object_set(m, jv_string("visible_at"),
		    stamp ? jv_string(stamp) : jv_null());
		m = jv_object_set(m, jv_string("leased"), jv_bool(at <= delivered));
		m = jv_object_set(m, jv_string("last_error"),
		    err ? jv_string(err) : jv_null());
		jv env = jv_parse(body);
		m = jv_object_set(m, jv_string("envelope"),
		    jv_is_valid(env) ? env : (jv_free(env), jv_string(body)));
		*out = jv_array_append(*out, m);
		free(id);
		free(sandbox);
		free(err);
		free(body);
		natsMsg_Destroy(msg);
	}
	return 0;
}

/* ---- wipe ---- */

static int
nats_wipe_sandbox(bakery_queue *q, const char *sandbox, int64_t fence_ms)
{
	nats_queue *n = NQ(q);
	/* The fence first: a send after it drops the sandbox's old events,
	 * so the purge below cannot be undone by a relay. */
	int64_t was = nats_fence(q, sandbox);
	if (fence_ms > was) {
		char v[24];
		snprintf(v, sizeof v, "%lld", (long long)fence_ms);
		natsStatus s = kvStore_PutString(NULL, n->fences, sandbox, v);
		if (s != NATS_OK)
			return nats_failed(EX_UNAVAILABLE, "fence", s, 0);
	}
	const char *queues[] = { QUEUE_EVENTS, QUEUE_DLQ };
	char sb[80], filter[200];
	token(sandbox, sb, sizeof sb);
	for (int i = 0; i < 2; i++) {
		jsOptions o;
		jsOptions_Init(&o);
		snprintf(filter, sizeof filter, "%s.%s.>", prefix_of(queues[i]), sb);
		o.Stream.Purge.Subject = filter;
		jsErrCode jerr = 0;
		natsStatus s = js_PurgeStream(n->js, stream_of(queues[i]), &o, &jerr);
		if (s != NATS_OK)
			return nats_failed(EX_UNAVAILABLE, "purge", s, jerr);
	}
	return 0;
}

static int
nats_init(bakery_queue *q, int replicas, jv *out)
{
	*out = jv_array();
	return ensure_assets(NQ(q), replicas, out);
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
	.ack_many = nats_ack_many,
	.retry = nats_retry,
	.dead_letter = nats_dead_letter,
	.stats = nats_stats,
	.peek = nats_peek,
	.wipe_sandbox = nats_wipe_sandbox,
	.fence = nats_fence,
	.init = nats_init,
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
		rc = s == NATS_OK ? ensure_assets(n, n->replicas, NULL)
		    : nats_failed(EX_UNAVAILABLE, "jetstream", s, 0);
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
