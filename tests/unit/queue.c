/*
 * queue.c — the embedded sqlite queue driver.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include "../../lib/core/faults.h"
#include "../../lib/queue/queue-internal.h"
#include "../../lib/base/util.h"

#define T0 1800000000LL

static char *qpath;

static void
at(long long secs)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", secs);
	setenv("BAKERY_NOW", buf, 1);
}

/* Counts rows in the queue file through a connection of its own. */
static long long
count(const char *where)
{
	sqlite3 *db;
	sqlite3_open(qpath, &db);
	char *sql = bakery_xasprintf("SELECT count(*) FROM messages WHERE %s",
	    where);
	long long n = sql_int(db, sql);
	free(sql);
	sqlite3_close(db);
	return n;
}

static int
send_one(bakery_queue *q, const char *id, const char *sandbox,
    const char *body, int *accepted)
{
	queue_item it = { .id = id, .sandbox = sandbox, .body = body };
	int rc = queue_send(q, QUEUE_EVENTS, &it, 1);
	if (accepted)
		*accepted = it.accepted;
	return rc;
}

static long long
stat_of(bakery_queue *q, const char *queue, const char *what)
{
	jv s;
	if (queue_stats(q, &s))
		return -1;
	jv v = jv_object_get(jv_object_get(s, jv_string(queue)),
	    jv_string(what));
	long long n = jv_get_kind(v) == JV_KIND_NUMBER
	    ? (long long)jv_number_value(v) : -1;
	jv_free(v);
	return n;
}

static void
free_all(queue_message *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		queue_message_free(&m[i]);
}

int
main(void)
{
	char *home = tmp_home();
	bakery_ctx ctx;
	ctx_init(&ctx, home, NULL, NULL);
	qpath = bakery_xasprintf("%s/q.db", home);
	bakery_queue *q = NULL;
	is_int(queue_sqlite_open(&ctx, qpath, 0, &q), 0, "queue_sqlite_open");
	at(T0);

	queue_message m[4], m2[4];
	size_t got = 99;
	int accepted = 0;

	/* Send, and a repeat send of a pending id. */
	is_int(send_one(q, "evt_a", "default", "{\"n\":1}", &accepted), 0,
	    "send accepts");
	ok(accepted, "the item is marked accepted");
	is_int(send_one(q, "evt_a", "default", "{\"n\":2}", &accepted), 0,
	    "a repeat send of a pending id succeeds");
	ok(accepted, "  and is marked accepted");
	is_int(count("id = 'evt_a'"), 1, "  and there is still one row");
	is_int(count("id = 'evt_a' AND body = '{\"n\":1}'"), 1,
	    "  which keeps the first body");

	/* Receive leases. */
	is_int(queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m, &got), 0,
	    "receive");
	is_int((long long)got, 1, "receive gets the message");
	is_str(m[0].id, "evt_a", "  its id");
	is_str(m[0].body, "{\"n\":1}", "  its body");
	is_str(m[0].sandbox, "default", "  its sandbox");
	is_int(m[0].deliveries, 1, "  first delivery");
	ok(m[0].last_error == NULL, "  no last error");
	is_int(stat_of(q, QUEUE_EVENTS, "leased"), 1, "stats: one leased");
	is_int(queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m2, &got), 0,
	    "second receive");
	is_int((long long)got, 0, "second receive gets nothing while leased");
	at(T0 + 29);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m2, &got);
	is_int((long long)got, 0, "still nothing 29 s later");

	/* The lease expires: delivered again. */
	at(T0 + 31);
	is_int(queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m2, &got), 0,
	    "receive past the lease");
	is_int((long long)got, 1, "the message is deliverable again");
	is_int(m2[0].deliveries, 2, "  with deliveries 2");
	ok(strcmp(m[0].lease, m2[0].lease) != 0, "  under a new lease");

	/* Ack. */
	is_int(queue_ack(q, QUEUE_EVENTS, &m[0]), EX_TEMPFAIL,
	    "ack with the lost lease is EX_TEMPFAIL");
	is_int(count("id = 'evt_a'"), 1, "  and deletes nothing");
	is_int(queue_ack(q, QUEUE_EVENTS, &m2[0]), 0, "ack with the live lease");
	is_int(count("id = 'evt_a'"), 0, "  deletes the message");
	is_int(queue_ack(q, QUEUE_EVENTS, &m2[0]), EX_TEMPFAIL,
	    "a second ack is EX_TEMPFAIL");
	free_all(m, 1);
	free_all(m2, 1);

	/* Ack many: one transaction; a lost lease is reported for its own
	 * message and keeps it, the others go. */
	at(T0 + 40);
	send_one(q, "evt_m1", "default", "{}", NULL);
	send_one(q, "evt_m2", "default", "{}", NULL);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m, &got);
	is_int((long long)got, 2, "two messages to ack together");
	snprintf(m[1].lease, sizeof m[1].lease, "stale");
	queue_message *both[2] = { &m[0], &m[1] };
	int rcs[2] = { -1, -1 };
	is_int(queue_ack_many(q, QUEUE_EVENTS, both, 2, rcs), 0, "ack many");
	is_int(rcs[0], 0, "  the live lease is acked");
	is_int(rcs[1], EX_TEMPFAIL, "  the lost lease is EX_TEMPFAIL");
	is_int(count("id = 'evt_m1'"), 0, "  its message is deleted");
	is_int(count("id = 'evt_m2'"), 1, "  the other stays");
	free_all(m, 2);
	at(T0 + 80);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m, &got);
	queue_ack(q, QUEUE_EVENTS, &m[0]);
	free_all(m, got);

	/* Retry. */
	at(T0 + 100);
	send_one(q, "evt_b", "default", "{}", NULL);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m, &got);
	is_int((long long)got, 1, "receive evt_b");
	is_int(queue_retry(q, QUEUE_EVENTS, &m[0], 0, "Kitchen answered 503"),
	    0, "retry with delay 0");
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m2, &got);
	is_int((long long)got, 1, "the retried message is ready at once");
	is_str(m2[0].last_error, "Kitchen answered 503", "  with its last error");
	is_int(m2[0].deliveries, 2, "  and deliveries 2");
	is_int(queue_retry(q, QUEUE_EVENTS, &m[0], 0, "x"), EX_TEMPFAIL,
	    "retry with an old lease is EX_TEMPFAIL");
	free_all(m, 1);

	/* Dead letter: one step, with attempts = deliveries. */
	is_int(queue_dead_letter(q, &m2[0], "Kitchen answered 503"), 0,
	    "dead_letter");
	is_int(count("queue = 'bakery-events' AND id = 'evt_b'"), 0,
	    "  leaves bakery-events");
	is_int(count("queue = 'bakery-events-dlq' AND id = 'evt_b'"), 1,
	    "  and is in bakery-events-dlq");
	is_int(queue_dead_letter(q, &m2[0], "again"), EX_TEMPFAIL,
	    "dead_letter with a spent lease is EX_TEMPFAIL");
	is_int(count("queue = 'bakery-events-dlq' AND id = 'evt_b'"
		" AND last_error = 'Kitchen answered 503'"), 1,
	    "  and changes nothing in the DLQ");
	free_all(m2, 1);
	queue_receive(q, QUEUE_DLQ, NULL, 4, 30, m, &got);
	is_int((long long)got, 1, "receive from the DLQ");
	is_str(m[0].id, "evt_b", "  the same id");
	is_str(m[0].body, "{}", "  the same body");
	is_int(m[0].attempts, 2, "  attempts = deliveries on bakery-events");
	is_str(m[0].last_error, "Kitchen answered 503", "  its last error");
	is_int(queue_ack(q, QUEUE_DLQ, &m[0]), 0, "ack on the DLQ");
	free_all(m, 1);

	/* A message whose lease was lost cannot be dead-lettered twice. */
	send_one(q, "evt_c", "default", "{}", NULL);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m, &got);
	at(T0 + 200);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m2, &got);
	is_int(queue_dead_letter(q, &m[0], "stale"), EX_TEMPFAIL,
	    "dead_letter with a lost lease is EX_TEMPFAIL");
	is_int(count("queue = 'bakery-events-dlq'"), 0, "  nothing in the DLQ");
	is_int(count("queue = 'bakery-events' AND id = 'evt_c'"), 1,
	    "  the message stays");
	queue_ack(q, QUEUE_EVENTS, &m2[0]);
	free_all(m, 1);
	free_all(m2, 1);
	is_int(count("1"), 0, "the queue is empty");

	/* Stats: ready, leased, delayed. */
	at(T0 + 300);
	send_one(q, "evt_r1", "default", "{}", NULL);
	send_one(q, "evt_r2", "default", "{}", NULL);
	send_one(q, "evt_l", "default", "{}", NULL);
	send_one(q, "evt_d", "default", "{}", NULL);
	queue_receive(q, QUEUE_EVENTS, NULL, 4, 30, m, &got);
	is_int((long long)got, 4, "receive four");
	queue_retry(q, QUEUE_EVENTS, &m[0], 0, "e");
	queue_retry(q, QUEUE_EVENTS, &m[1], 0, "e");
	queue_retry(q, QUEUE_EVENTS, &m[3], 60, "e");
	is_int(stat_of(q, QUEUE_EVENTS, "ready"), 2, "stats: 2 ready");
	is_int(stat_of(q, QUEUE_EVENTS, "leased"), 1, "stats: 1 leased");
	is_int(stat_of(q, QUEUE_EVENTS, "delayed"), 1, "stats: 1 delayed");
	is_int(stat_of(q, QUEUE_DLQ, "ready"), 0, "stats: the DLQ is empty");
	free_all(m, got);
	at(T0 + 361);
	is_int(stat_of(q, QUEUE_EVENTS, "ready"), 4,
	    "stats: all four ready once the lease and the delay pass");

	/* Receive filters by sandbox; purge removes one sandbox. */
	send_one(q, "evt_o1", "other", "{}", NULL);
	send_one(q, "evt_o2", "other", "{}", NULL);
	queue_receive(q, QUEUE_EVENTS, "other", 4, 30, m, &got);
	is_int((long long)got, 2, "receive for sandbox 'other' gets its two");
	ok(strcmp(m[0].sandbox, "other") == 0 && strcmp(m[1].sandbox, "other") == 0,
	    "  both from 'other'");
	is_int(queue_dead_letter(q, &m[0], "x"), 0, "dead-letter one of them");
	free_all(m, got);
	is_int(queue_wipe_sandbox(q, "other", 1), 0, "wipe_sandbox other");
	is_int(count("sandbox = 'other'"), 0, "  removes 'other' from both queues");
	is_int(count("sandbox = 'default'"), 4, "  keeps the four of 'default'");

	/* The fault queue-refuses. */
	is_int(fault_set(&ctx, "default", "queue-refuses"), 0, "fault_set");
	accepted = 1;
	is_int(send_one(q, "evt_f", "default", "{}", &accepted), EX_UNAVAILABLE,
	    "send with queue-refuses is EX_UNAVAILABLE");
	ok(!accepted, "  the item is not accepted");
	is_int(count("id = 'evt_f'"), 0, "  and nothing is stored");
	ok(strstr(bakery_error(), "queue-refuses") != NULL,
	    "  the error names the fault (%s)", bakery_error());
	{
		queue_item two[2] = { { .id = "evt_g1", .sandbox = "other", .body = "{}", .accepted = 1 },
			{ .id = "evt_g2", .sandbox = "default", .body = "{}", .accepted = 1 } };
		is_int(queue_send(q, QUEUE_EVENTS, two, 2), EX_UNAVAILABLE,
		    "a batch with one refusing sandbox is refused");
		ok(!two[0].accepted && !two[1].accepted, "  nothing accepted");
		is_int(count("id LIKE 'evt_g%'"), 0, "  nothing stored");
	}
	is_int(send_one(q, "evt_h", "other", "{}", &accepted), 0,
	    "another sandbox still sends");
	is_int(fault_clear(&ctx, "default", "queue-refuses"), 0, "fault_clear");
	is_int(send_one(q, "evt_f", "default", "{}", &accepted), 0,
	    "send works again once cleared");

	queue_close(q);

	/* A consumer's acks lease its next batch in the same commit. */
	{
		char *p2 = bakery_xasprintf("%s/p.db", home);
		free(qpath);
		qpath = p2;
		is_int(queue_sqlite_open(&ctx, qpath, 0, &q), 0, "a second queue");
		at(T0 + 1000);
		char id[16];
		for (int i = 1; i <= 6; i++) {
			snprintf(id, sizeof id, "evt_p%d", i);
			send_one(q, id, "default", "{}", NULL);
		}
		queue_receive(q, QUEUE_EVENTS, NULL, 3, 30, m, &got);
		is_int((long long)got, 3, "receive 3 of 6");
		queue_message *three[3] = { &m[0], &m[1], &m[2] };
		int r3[3];
		is_int(queue_ack_many(q, QUEUE_EVENTS, three, 3, r3), 0,
		    "ack the 3");
		free_all(m, 3);
		is_int(count("lease IS NOT NULL"), 3,
		    "  the next 3 are leased by that commit");
		is_int(count("id IN ('evt_p1','evt_p2','evt_p3')"), 0,
		    "  and the 3 acked are gone");
		queue_receive(q, QUEUE_EVENTS, NULL, 3, 30, m, &got);
		is_int((long long)got, 3, "the next receive gets those 3");
		is_str(m[0].id, "evt_p4", "  oldest first");
		is_int(m[0].deliveries, 1, "  first delivery");
		is_int(count("lease IS NOT NULL"), 3, "  leased once, not twice");
		three[0] = &m[0], three[1] = &m[1], three[2] = &m[2];
		is_int(queue_ack_many(q, QUEUE_EVENTS, three, 3, r3), 0,
		    "ack them: nothing left to lease");
		free_all(m, 3);
		is_int(count("1"), 0, "  the queue is empty");

		/* A batch leased and not received is given back at close, as
		 * it was: ready, and its delivery not counted. */
		at(T0 + 1100);
		send_one(q, "evt_p7", "default", "{}", NULL);
		send_one(q, "evt_p8", "default", "{}", NULL);
		queue_receive(q, QUEUE_EVENTS, NULL, 1, 30, m, &got);
		three[0] = &m[0];
		queue_ack_many(q, QUEUE_EVENTS, three, 1, r3);
		free_all(m, 1);
		is_int(count("id = 'evt_p8' AND lease IS NOT NULL"), 1,
		    "evt_p8 leased for the next receive");
		/* A receive asking for something else does not get it. */
		queue_receive(q, QUEUE_EVENTS, NULL, 2, 30, m, &got);
		is_int((long long)got, 0, "  a receive of another size finds"
		    " nothing ready");
		queue_close(q);
		is_int(count("id = 'evt_p8' AND lease IS NULL AND deliveries = 0"
			" AND visible_at = 1800001100000"), 1,
		    "closing gives it back as it was");
	}
	ctx_free(&ctx);
	free(qpath);
	unsetenv("BAKERY_NOW");
	rm_home(home);
	return done_testing();
}
