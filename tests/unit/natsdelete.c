/*
 * natsdelete.c — how the NATS driver reads JetStream's answer to a message
 * delete (queue_nats_delete_gone): gone (deleted now or before, so the
 * message is acked) or refused (it stays unacked and comes back).
 */
#include "tap.h"
#include "../../lib/queue/queue-internal.h"

#define ERR(code, rest) \
	"{\"type\":\"io.nats.jetstream.api.v1.stream_msg_delete_response\"," \
	"\"error\":{\"code\":" code ",\"err_code\":" rest "}}"

static const struct {
	const char *answer;
	int gone;
	const char *says;
} cases[] = {
	{ "{\"success\":true}", 1, "a delete that succeeded is gone" },
	{ ERR("404", "10037,\"description\":\"no message found\""), 1,
	    "10037 no message found is gone" },
	{ ERR("400", "10043,\"description\":\"sequence 7 not found\""), 1,
	    "10043 sequence not found (a delete asked twice mid-stream) is gone" },
	{ ERR("500", "10057,\"description\":\"no message found\""), 1,
	    "10057 described 'no message found' is gone" },
	{ ERR("500", "10057,\"description\":\"stream store EOF\""), 1,
	    "10057 described 'stream store EOF' (past the last sequence) is gone" },
	{ ERR("500", "10057,\"description\":\"store is closed\""), 0,
	    "10057 described 'store is closed' is tried again" },
	{ ERR("500", "10057,\"description\":\"snapshot in progress\""), 0,
	    "10057 described 'snapshot in progress' is tried again" },
	{ ERR("500", "10057,\"description\":\"error opening msg block file [\\\"/x/1.blk\\\"]: no such file\""), 0,
	    "10057 for a block that did not load is tried again" },
	{ ERR("500", "10057"), 0, "10057 without a description is tried again" },
	{ ERR("503", "10008,\"description\":\"JetStream system temporarily unavailable\""), 0,
	    "another error is tried again" },
	{ "{\"success\":false}", 0, "success false is tried again" },
	{ "not json", 0, "what is not JSON is tried again" },
	{ "[1]", 0, "what is not an object is tried again" },
};

int
main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		is_int(queue_nats_delete_gone(cases[i].answer,
			   (int)strlen(cases[i].answer)), cases[i].gone, "%s",
		    cases[i].says);
	return done_testing();
}
