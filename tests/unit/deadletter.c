/*
 * deadletter.c — invariant 5: a dead letter is stored, then its DLQ
 * message acked (deadletter_take, what bakery-dlq drain runs per message).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"
#include "../../lib/core/deadletter.h"
#include "../../lib/base/util.h"

#define T0 1800000000LL

static void
at(long long secs)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", secs);
	setenv("BAKERY_NOW", buf, 1);
}

/* Sends id to bakery-events, receives it and dead-letters it with error:
 * the queue's own move to bakery-events-dlq. */
static int
to_dlq(bakery_queue *q, const char *id, const char *sandbox,
    const char *body, const char *error)
{
	queue_item it = { .id = id, .sandbox = sandbox, .body = body };
	queue_message m;
	size_t got = 0;
	int rc = queue_send(q, QUEUE_EVENTS, &it, 1);
	if (!rc)
		rc = queue_receive(q, QUEUE_EVENTS, NULL, 1, 30, &m, &got);
	if (!rc && got != 1)
		rc = -1;
	if (!rc) {
		rc = queue_dead_letter(q, &m, error);
		queue_message_free(&m);
	}
	return rc;
}

/* Messages in bakery-events-dlq, leased or not, read from the file. */
static long long
dlq_rows(const char *home)
{
	char *path = bakery_xasprintf("%s/queue.db", home);
	sqlite3 *db;
	long long n = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		n = sql_int(db, "SELECT count(*) FROM messages"
		    " WHERE queue = '" QUEUE_DLQ "'");
	sqlite3_close(db);
	free(path);
	return n;
}

static const char *
field(jv o, const char *k, char *buf, size_t size)
{
	jv v = jv_object_get(jv_copy(o), jv_string(k));
	if (jv_get_kind(v) == JV_KIND_STRING)
		snprintf(buf, size, "%s", jv_string_value(v));
	else if (jv_get_kind(v) == JV_KIND_NUMBER)
		snprintf(buf, size, "%g", jv_number_value(v));
	else
		snprintf(buf, size, "(%s)", jv_kind_name(jv_get_kind(v)));
	jv_free(v);
	return buf;
}

int
main(void)
{
	char *home = tmp_home();
	bakery_ctx ctx;
	char b[256];
	at(T0);
	is_int(ctx_init(&ctx, home, NULL, NULL), 0, "ctx_init");
	bakery_queue *q;
	is_int(queue_get(&ctx, &q), 0, "the home's queue");
	const char *body = "{\"id\":\"evt_d1\",\"type\":\"OrderPlaced\"}";

	/* Stored, then acked. */
	is_int(to_dlq(q, "evt_d1", "default", body, "boom"), 0,
	    "a message dead-lettered by the queue");
	queue_message d[2];
	size_t got = 0;
	is_int(queue_receive(q, QUEUE_DLQ, NULL, 1, 30, &d[0], &got), 0,
	    "received from the DLQ");
	is_int((long long)got, 1, "  one");
	jv line = jv_null();
	is_int(deadletter_take(&ctx, q, &d[0], &line), 0, "deadletter_take");
	is_str(field(line, "id", b, sizeof b), "evt_d1", "  its line's id");
	is_str(field(line, "type", b, sizeof b), "OrderPlaced", "  type");
	is_str(field(line, "sandbox", b, sizeof b), "default", "  sandbox");
	is_str(field(line, "error", b, sizeof b), "boom", "  error");
	is_str(field(line, "attempts", b, sizeof b), "1", "  attempts");
	jv_free(line);
	queue_message_free(&d[0]);
	is_int(dlq_rows(home), 0,
	    "the DLQ message is acked");
	jv row;
	is_int(deadletter_get(&ctx, NULL, "evt_d1", &row), 0,
	    "the dead letter is stored");
	is_str(field(row, "error", b, sizeof b), "boom", "  with its error");
	is_str(field(row, "times", b, sizeof b), "1", "  once");
	jv_free(row);

	/* Two drainers of one message (a lease that expired): both store,
	 * the same row; the ack of the lost lease is not an error. */
	is_int(to_dlq(q, "evt_d1", "default", body, "boom again"), 0,
	    "the same event dead-lettered again");
	queue_receive(q, QUEUE_DLQ, NULL, 1, 30, &d[0], &got);
	at(T0 + 31);
	queue_receive(q, QUEUE_DLQ, NULL, 1, 30, &d[1], &got);
	is_int((long long)got, 1, "redelivered past its lease");
	line = jv_null();
	is_int(deadletter_take(&ctx, q, &d[0], &line), 0,
	    "the first drainer's lost lease is not an error");
	jv_free(line);
	line = jv_null();
	is_int(deadletter_take(&ctx, q, &d[1], &line), 0,
	    "the second drainer stores and acks");
	jv_free(line);
	queue_message_free(&d[0]);
	queue_message_free(&d[1]);
	is_int(dlq_rows(home), 0,
	    "  and the DLQ is empty");
	jv all;
	is_int(deadletter_list(&ctx, NULL, &all), 0, "list");
	is_int(jv_array_length(jv_copy(all)), 1, "  one row for the one id");
	jv first = jv_array_get(all, 0);
	is_str(field(first, "times", b, sizeof b), "3",
	    "  stored three times");
	is_str(field(first, "error", b, sizeof b), "boom again",
	    "  with the last error");
	jv_free(first);

	/* A store that fails acks nothing: the message stays in the DLQ. */
	is_int(to_dlq(q, "evt_d2", "Bad!", body, "boom"), 0,
	    "a message of a sandbox whose name cannot be a file");
	queue_receive(q, QUEUE_DLQ, NULL, 1, 30, &d[0], &got);
	is_int((long long)got, 1, "  received from the DLQ");
	line = jv_null();
	ok(deadletter_take(&ctx, q, &d[0], &line) != 0,
	    "deadletter_take fails when the store fails");
	ok(jv_get_kind(line) == JV_KIND_NULL, "  and gives no line");
	queue_message_free(&d[0]);
	is_int(dlq_rows(home), 1, "  and leaves the message in the DLQ");

	ctx_free(&ctx);
	rm_home(home);
	return done_testing();
}
