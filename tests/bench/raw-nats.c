/*
 * raw-nats.c — B6's reference: the B2 workload written straight on the
 * NATS C client, with nothing of bakery's between.
 *
 * Publishes N messages of 200 bytes asynchronously to a JetStream stream
 * (with Nats-Msg-Id, as a deduplicating sender must), waits for every
 * publish acknowledgement, then pulls them with a durable consumer in
 * fetches of 10 and acks each one.
 *
 *   raw-nats URL N     prints msgs_per_s, publish_s, consume_s
 */
#include <nats/nats.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
check(natsStatus s, const char *what)
{
	if (s != NATS_OK) {
		fprintf(stderr, "raw-nats: error: %s: %s\n", what,
		    natsStatus_GetText(s));
		exit(69);
	}
}

int
main(int argc, char **argv)
{
	if (argc != 3 || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: raw-nats URL N\n");
		return 64;
	}
	long n = atol(argv[2]);
	natsConnection *nc;
	jsCtx *js;
	check(natsConnection_ConnectTo(&nc, argv[1]), "connect");
	jsOptions jo;
	jsOptions_Init(&jo);
	jo.PublishAsync.MaxPending = 4096;
	/* A server that syncs every write (sync_interval: always) acks slower
	 * than this publishes: wait for room rather than fail. */
	jo.PublishAsync.StallWait = 60000;
	check(natsConnection_JetStream(&js, nc, &jo), "jetstream");

	jsStreamConfig sc;
	jsStreamConfig_Init(&sc);
	sc.Name = "RAWBENCH";
	const char *subjects[] = { "rawbench" };
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	js_DeleteStream(js, "RAWBENCH", NULL, NULL);
	check(js_AddStream(NULL, js, &sc, NULL, NULL), "add stream");

	char body[201];
	memset(body, 'x', 200);
	body[200] = '\0';
	double t0 = now();
	for (long i = 0; i < n; i++) {
		natsMsg *m;
		char id[32];
		snprintf(id, sizeof id, "raw-%ld", i);
		check(natsMsg_Create(&m, "rawbench", NULL, body, 200), "message");
		natsMsgHeader_Set(m, "Nats-Msg-Id", id);
		check(js_PublishMsgAsync(js, &m, NULL), "publish");
	}
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MaxWait = 60000;
	check(js_PublishAsyncComplete(js, &po), "publish complete");
	double t1 = now();

	natsSubscription *sub;
	jsSubOptions so;
	jsSubOptions_Init(&so);
	so.Stream = "RAWBENCH";
	so.Config.AckPolicy = js_AckExplicit;
	check(js_PullSubscribe(&sub, js, "rawbench", "rawbench", NULL, &so,
	    NULL), "subscribe");
	long acked = 0;
	while (acked < n) {
		natsMsgList list = { 0 };
		check(natsSubscription_Fetch(&list, sub, 10, 5000, NULL), "fetch");
		for (int i = 0; i < list.Count; i++) {
			check(natsMsg_AckSync(list.Msgs[i], NULL, NULL), "ack");
			acked++;
		}
		natsMsgList_Destroy(&list);
	}
	double t2 = now();
	printf("msgs_per_s %.1f\npublish_s %.3f\nconsume_s %.3f\n",
	    (double)n / (t2 - t0), t1 - t0, t2 - t1);
	natsSubscription_Destroy(sub);
	js_DeleteStream(js, "RAWBENCH", NULL, NULL);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_Close();
	return 0;
}
