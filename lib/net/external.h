/*
 * external.h — subscribers outside bakery: a program, or a signed POST.
 *
 * Each answers like a built-in: status 200 applied; 503 try again; 422
 * refused for good (final: the consumer dead-letters the event at once);
 * 500 or 504 a failure, retried. why holds the subscriber's own last word
 * (its last line of stderr, or the first line of the response body),
 * capped and made printable.
 *
 * exec: the program runs with no arguments, in /, in a new process group,
 * with the envelope (one JSON line) on stdin, stdout discarded, and only
 * descriptors 0-2 open. Its environment is clean: PATH (EXTERNAL_PATH),
 * BAKERY_EVENT_ID, BAKERY_EVENT_TYPE, BAKERY_SANDBOX, TRACEPARENT (and
 * TRACESTATE when the event has one: the delivery's trace context, as
 * OpenTelemetry reads it from a process's environment), and, from bakery's
 * own environment, TZ, LANG, LC_ALL and every variable whose name starts
 * with BAKERY_SUBSCRIBER_. Exit 0: 200; 75: 503; 65: 422 final; any other
 * exit or a signal: 500; past the timeout its process group is killed
 * (SIGKILL): 504. When it exits, its group is killed too: a child it
 * left in the background does not run on after its answer. Past EXTERNAL_OUTPUT_CAP bytes, its output is read and
 * dropped, so a program that writes without end neither blocks nor fills
 * memory.
 *
 * http(s): one POST of the envelope, signed per Standard Webhooks 1.0
 * (webhook-id, webhook-timestamp, webhook-signature: v1,BASE64 of
 * HMAC-SHA256 of "ID.TIMESTAMP.BODY" keyed with the base64 after whsec_
 * of the secret file), and the delivery's traceparent (and tracestate)
 * headers beside them, not signed. No redirect followed (3xx: 500), connect timeout
 * the lesser of 5 s and the timeout; 2xx: 200; 408, 429, 5xx and timeouts:
 * 503; other 4xx: 422 final; an answer that is not a complete HTTP
 * response (its headers never ended: a bare status line, then the
 * connection closed) 503. At most EXTERNAL_OUTPUT_CAP bytes of the
 * answer are kept. libcurl and libcrypto are loaded on first use.
 */
#ifndef BAKERY_EXTERNAL_H
#define BAKERY_EXTERNAL_H

#include <stddef.h>

#include "../base/tracectx.h"
#include "../core/answer.h"

#define EXTERNAL_PATH "/usr/local/bin:/usr/bin:/bin"
#define EXTERNAL_OUTPUT_CAP 65536
#define EXTERNAL_DEFAULT_TIMEOUT_S 30
#define EXTERNAL_MAX_TIMEOUT_S 3600

typedef struct external_answer {
	int status;
	int final; /* refused for good: no retry helps */
	char why[200];
} external_answer;

/* The event a subscriber is called with. */
typedef struct external_event {
	const char *id;
	const char *type;
	const char *sandbox;
	const char *body; /* the envelope, one line, no newline */
	size_t len;
	/* The event's trace (checked already), or NULL: the delivery is a
	 * child of it, a span id of its own. */
	const trace_ctx *trace;
} external_event;

/* Runs prog for ev (see above). Fills a; returns 0 unless bakery itself
 * could not start it (then a says 503 too). */
int external_exec(const char *prog, const external_event *ev,
    int timeout_s, external_answer *a);

/* POSTs ev to url, signed with the secret of secret_file. Fills a. */
int external_http(const char *url, const char *secret_file,
    const external_event *ev, int timeout_s, external_answer *a);

/* Standard Webhooks' signature "v1,BASE64" of id.timestamp.body with the
 * key secret ("whsec_" + base64). EX_CONFIG when secret is not of that
 * form. out holds at least 64 bytes. */
int external_sign(const char *secret, const char *id, long long timestamp,
    const char *body, size_t len, char *out, size_t size);

/* s (len bytes) as one printable line of at most size - 1 bytes: its last
 * nonblank line when last, else its first; control bytes and bytes that
 * are not UTF-8 become '?'. */
void external_last_word(const char *s, size_t len, int last, char *out,
    size_t size);

#endif
