/*
 * natsdelete.c — how the NATS driver reads JetStream's answer to a message
 * delete (queue_nats_delete_gone): gone (deleted now or before, so the
 * message is acked) or refused (it stays unacked and comes back).
 */
#include "tap.h"
#include "../../lib/queue-internal.h"

static int
gone(const char *answer)
{
	return queue_nats_delete_gone(answer, (int)strlen(answer));
}

#define ERR(code, text) \
	"{\"type\":\"io.nats.jetstream.api.v1.stream_msg_delete_response\"," \
	"\"error\":{\"code\":" code ",\"err_code\":" text "}}"

int
main(void)
{
	is_int(gone("{\"success\":true}"), 1, "a delete that succeeded is gone");
	is_int(gone(ERR("404", "10037,\"description\":\"no message found\"")),
	    1, "10037 no message found is gone");
	is_int(gone(ERR("400", "10043,\"description\":\"sequence 7 not found\"")),
	    1, "10043 sequence not found (a delete asked twice mid-stream) is gone");
	is_int(gone(ERR("500", "10057,\"description\":\"no message found\"")),
	    1, "10057 described 'no message found' is gone");
	is_int(gone(ERR("500", "10057,\"description\":\"stream store EOF\"")),
	    1, "10057 described 'stream store EOF' (past the last sequence) is gone");
	is_int(gone(ERR("500", "10057,\"description\":\"store is closed\"")),
	    0, "10057 described 'store is closed' is tried again");
	is_int(gone(ERR("500", "10057,\"description\":\"snapshot in progress\"")),
	    0, "10057 described 'snapshot in progress' is tried again");
	is_int(gone(ERR("500", "10057,\"description\":\"error opening msg block file [\\\"/x/1.blk\\\"]: no such file\"")),
	    0, "10057 for a block that did not load is tried again");
	is_int(gone(ERR("500", "10057")), 0,
	    "10057 without a description is tried again");
	is_int(gone(ERR("503", "10008,\"description\":\"JetStream system temporarily unavailable\"")),
	    0, "another error is tried again");
	is_int(gone("{\"success\":false}"), 0, "success false is tried again");
	is_int(gone("not json"), 0, "what is not JSON is tried again");
	is_int(gone("[1]"), 0, "what is not an object is tried again");
	return done_testing();
}
