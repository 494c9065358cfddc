/*
 * queue_nats_peek.c — what the NATS driver shows of its streams without
 * taking anything: every message (peek), or one event's (peek_event).
 * Both read with direct gets, one message at a time: what is kept is
 * what is shown.
 *
 * One event's messages are found by subject. A message bakery sends is on
 * bakery.events.SANDBOX.TYPE.ID (the DLQ: bakery.dlq.SANDBOX.TYPE.ID), so
 * the event's own subject holds its messages and nothing else, and the
 * server finds them by its index of subjects: the messages of other
 * events, of its sandbox or another, are never read. bakery 0.1.0 sent on
 * bakery.events.SANDBOX.TYPE, with no id; messages it queued are found by
 * reading that subject, which other events of the same sandbox and type
 * share, up to QUEUE_SCAN_MAX messages, and the search says when it
 * stopped there (*complete = 0).
 */
#include "queue_nats-internal.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stream sequence the all-sandbox consumer of queue has delivered up
 * to: a message above it was never delivered. */
static uint64_t
delivered_of(nats_queue *n, const char *queue)
{
	uint64_t delivered = 0;
	jsConsumerInfo *ci = NULL;
	if (js_GetConsumerInfo(&ci, n->js, queue_nats_stream_of(queue),
		strcmp(queue, QUEUE_DLQ) == 0 ? "bakery-dlq-all" : "bakery-all",
		NULL, NULL) == NATS_OK) {
		delivered = ci->Delivered.Stream;
		jsConsumerInfo_Destroy(ci);
	}
	return delivered;
}

/* The first message of queue's stream at seq or after on subject filter:
 * NATS_OK with *msg and *at its sequence, NATS_NOT_FOUND past the last. */
static natsStatus
next_on(nats_queue *n, const char *queue, const char *filter, uint64_t seq,
    natsMsg **msg, uint64_t *at)
{
	jsDirectGetMsgOptions dg;
	jsDirectGetMsgOptions_Init(&dg);
	dg.Sequence = seq;
	dg.NextBySubject = filter;
	*msg = NULL;
	natsStatus s = js_DirectGetMsg(msg, n->js, queue_nats_stream_of(queue),
	    NULL, &dg);
	if (s == NATS_OK) {
		const char *v = NULL;
		*at = natsMsgHeader_Get(*msg, "Nats-Sequence", &v) == NATS_OK
		    ? strtoull(v, NULL, 10) : seq;
	}
	return s;
}

/* A message as peek shows it. deliveries is 0 for a message the
 * all-sandbox consumer has not reached and null when JetStream has
 * delivered it (its count is per consumer). */
static jv
message_json(natsMsg *msg, const char *queue, uint64_t at,
    uint64_t delivered)
{
	char *id = queue_nats_header_dup(msg, "Bakery-Id");
	char *sandbox = queue_nats_header_dup(msg, "Bakery-Sandbox");
	char *err = queue_nats_header_dup(msg, "Bakery-Last-Error");
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
	free(id);
	free(sandbox);
	free(err);
	free(body);
	return m;
}

static int
peek_failed(jv *out, const char *what, natsStatus s)
{
	jv_free(*out);
	*out = jv_invalid();
	return queue_nats_failed(EX_UNAVAILABLE, what, s, 0);
}

/* The stream's messages, oldest first: what is still owed. */
int
queue_nats_peek(bakery_queue *q, const char *queue, size_t max, jv *out)
{
	nats_queue *n = NQ(q);
	uint64_t delivered = delivered_of(n, queue);
	char filter[40];
	snprintf(filter, sizeof filter, "%s.>", queue_nats_prefix_of(queue));
	*out = jv_array();
	uint64_t seq = 1;
	for (size_t i = 0; i < max; i++) {
		natsMsg *msg;
		uint64_t at;
		natsStatus s = next_on(n, queue, filter, seq, &msg, &at);
		if (s == NATS_NOT_FOUND)
			break;
		if (s != NATS_OK)
			return peek_failed(out, "peek", s);
		seq = at + 1;
		*out = jv_array_append(*out, message_json(msg, queue, at,
		    delivered));
		natsMsg_Destroy(msg);
	}
	return 0;
}

/* 1 when msg's headers name event id of sandbox. */
static int
is_event(natsMsg *msg, const char *sandbox, const char *id)
{
	const char *mid = NULL, *msb = NULL;
	return natsMsgHeader_Get(msg, "Bakery-Id", &mid) == NATS_OK && mid &&
	    strcmp(mid, id) == 0 &&
	    natsMsgHeader_Get(msg, "Bakery-Sandbox", &msb) == NATS_OK && msb &&
	    strcmp(msb, sandbox) == 0;
}

/* The messages of event id on subject filter, oldest first, appended to
 * *out; reads at most QUEUE_SCAN_MAX messages (*complete = 0 when it
 * stopped there with more to read). */
static int
read_subject(nats_queue *n, const char *queue, const char *filter,
    const char *sandbox, const char *id, uint64_t delivered, jv *out,
    int *complete)
{
	uint64_t seq = 1;
	for (size_t read = 0;; read++) {
		natsMsg *msg;
		uint64_t at;
		natsStatus s = next_on(n, queue, filter, seq, &msg, &at);
		if (s == NATS_NOT_FOUND)
			return 0;
		if (s != NATS_OK)
			return peek_failed(out, "peek", s);
		if (read == QUEUE_SCAN_MAX) {
			natsMsg_Destroy(msg);
			*complete = 0;
			return 0;
		}
		seq = at + 1;
		if (is_event(msg, sandbox, id))
			*out = jv_array_append(*out, message_json(msg, queue, at,
			    delivered));
		natsMsg_Destroy(msg);
	}
}

int
queue_nats_peek_event(bakery_queue *q, const char *queue,
    const char *sandbox, const char *id, const char *type, jv *out,
    int *complete)
{
	nats_queue *n = NQ(q);
	char sb[80], ty[80], ev[160], filter[400];
	queue_nats_token(sandbox, sb, sizeof sb);
	queue_nats_token(id, ev, sizeof ev);
	if (type)
		queue_nats_token(type, ty, sizeof ty);
	else
		snprintf(ty, sizeof ty, "*"); /* unknown: any type */
	uint64_t delivered = delivered_of(n, queue);
	*out = jv_array();
	*complete = 1;
	/* Its own subject: its messages alone, a redrive's among them. */
	snprintf(filter, sizeof filter, "%s.%s.%s.%s",
	    queue_nats_prefix_of(queue), sb, ty, ev);
	int rc = read_subject(n, queue, filter, sandbox, id, delivered, out,
	    complete);
	/* The subject of bakery 0.1.0's messages, without the id. */
	snprintf(filter, sizeof filter, "%s.%s.%s",
	    queue_nats_prefix_of(queue), sb, ty);
	if (!rc)
		rc = read_subject(n, queue, filter, sandbox, id, delivered, out,
		    complete);
	return rc;
}
