/*
 * external.c — the pure parts of subscribers outside bakery: Standard
 * Webhooks signatures, the last word kept of a program's stderr; and the
 * exit statuses of real programs.
 */
#define _GNU_SOURCE
#include "tap.h"

#include "../../lib/net/external.h"
#include "../../lib/base/util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void
signs(void)
{
	/* The test vector of the Standard Webhooks specification. */
	const char *body = "{\"test\": 2432232314}";
	char sig[64];
	is_int(external_sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	    "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body), sig,
	    sizeof sig), 0, "signs the specification's example");
	is_str(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
	    "  with the specification's signature");
	is_int(external_sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "m", 1, "b", 1,
	    sig, sizeof sig), EX_CONFIG, "a secret without whsec_ is EX_CONFIG");
	is_int(external_sign("whsec_not*base64", "m", 1, "b", 1, sig,
	    sizeof sig), EX_CONFIG, "a secret that is not base64 is EX_CONFIG");
	is_int(external_sign("whsec_", "m", 1, "b", 1, sig, sizeof sig),
	    EX_CONFIG, "an empty key is EX_CONFIG");
}

static void
word(const char *in, size_t len, int last, size_t size, const char *want,
    const char *what)
{
	char out[256];
	external_last_word(in, len, last, out, size);
	is_str(out, want, "%s", what);
}

static void
last_words(void)
{
	const char *s = "first\nsecond line\n\n  \n";
	word(s, strlen(s), 1, 256, "second line", "the last nonblank line");
	word(s, strlen(s), 0, 256, "first", "the first line");
	word("a\x1b[1mb\r", 7, 1, 256, "a?[1mb", "control bytes as '?'");
	word("caf\xc3\xa9 \xff!", 8, 1, 256, "caf\xc3\xa9 ?!",
	    "UTF-8 kept, a byte that is not as '?'");
	word("abcdef", 6, 1, 4, "abc", "cut to the room given");
	word("ab\xc3\xa9", 4, 1, 4, "ab", "never half a character");
	word("", 0, 1, 256, "", "nothing: empty");
}

static void
exits(void)
{
	external_event ev = { "evt_1", "OrderPaid", "default", "{}", 2, NULL };
	external_answer a;
	external_exec("/bin/true", &ev, 5, &a);
	ok(a.status == 200 && !a.final && !a.why[0], "exit 0 is 200 (%d %s)",
	    a.status, a.why);
	external_exec("/bin/false", &ev, 5, &a);
	ok(a.status == 500 && !a.final && strcmp(a.why, "exit 1") == 0,
	    "exit 1 is 500, retried (%d %s)", a.status, a.why);
	/* A program that reads nothing of an envelope larger than a pipe
	 * holds: the write meets EPIPE, and with SIGPIPE at its default (as
	 * here) that must not kill the caller. */
	size_t big = 1 << 20;
	char *body = bakery_xmalloc(big);
	memset(body, 'x', big);
	external_event large = { "evt_2", "OrderPaid", "default", body, big, NULL };
	signal(SIGPIPE, SIG_DFL);
	external_exec("/bin/true", &large, 5, &a);
	ok(a.status == 200, "a program that reads nothing of 1 MiB: 200, and "
	    "the caller lives (%d %s)", a.status, a.why);
	free(body);
	external_exec("/nonexistent/program", &ev, 5, &a);
	ok(a.status == 500 && strcmp(a.why, "exit 127: cannot run the program") == 0,
	    "a missing program is 500, retried (%d %s)", a.status, a.why);
}

int
main(void)
{
	signs();
	last_words();
	exits();
	return done_testing();
}
