/*
 * status_held.c — what a sandbox holds back: its messages in
 * bakery-events-dlq not yet drained, and its faults (status-internal.h).
 */
#define _GNU_SOURCE
#include "status-internal.h"
#include "../core/envelope.h"
#include "../core/faults.h"
#include "../queue/queue.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>

jv
status_undrained(bakery_ctx *ctx, double undrained, jv *attention)
{
	jv by = jv_object();
	if (undrained <= 0)
		return by;
	bakery_queue *q;
	jv peeked = jv_invalid();
	int rc = queue_get_existing(ctx, &q);
	if (!rc)
		rc = queue_peek(q, QUEUE_DLQ, undrained < STATUS_PEEK_MAX
		    ? (size_t)undrained : STATUS_PEEK_MAX, &peeked);
	if (rc) {
		char *s = bakery_xasprintf("%s: cannot count its messages by "
		    "sandbox: %s", QUEUE_DLQ, bakery_error());
		*attention = jv_array_append(*attention, jv_string(s));
		free(s);
		jv_free(peeked);
		return by;
	}
	jv_array_foreach(peeked, i, m) {
		const char *sandbox = envelope_str(m, "sandbox");
		if (sandbox) {
			jv n = jv_object_get(jv_copy(by), jv_string(sandbox));
			double k = jv_get_kind(n) == JV_KIND_NUMBER
			    ? jv_number_value(n) : 0;
			jv_free(n);
			by = jv_object_set(by, jv_string(sandbox),
			    jv_number(k + 1));
		}
		jv_free(m);
	}
	jv_free(peeked);
	return by;
}

/* The faults set in sandbox, its file read read-only (status writes
 * nothing); none when it has no file yet. A file that cannot be read is
 * already under "needs attention" (status.c reads its dead letters). */
static jv
faults_of(bakery_ctx *ctx, const char *sandbox)
{
	sqlite3 *db;
	char *path = home_sandbox_file(ctx, sandbox);
	int rc = db_open_readonly(ctx, path, &home_sandbox_schema, &db);
	free(path);
	jv set = jv_array();
	if (!rc) {
		jv_free(set);
		if (fault_read(db, &set)) {
			jv_free(set);
			set = jv_array();
		}
	}
	sqlite3_close(db);
	return set;
}

jv
status_held(bakery_ctx *ctx, const char *sandbox, jv by, jv s,
    jv *attention)
{
	double n = envelope_number(by, sandbox, 0);
	if (n > 0) {
		char *line = bakery_xasprintf("sandbox %s: %.0f messages in %s "
		    "not yet drained (bakery-dlq -s %s drain)", sandbox, n,
		    QUEUE_DLQ, sandbox);
		*attention = jv_array_append(*attention, jv_string(line));
		free(line);
	}
	s = jv_object_set(s, jv_string("undrained"), jv_number(n));
	return jv_object_set(s, jv_string("faults"), faults_of(ctx, sandbox));
}
