/*
 * webhook.c — libFuzzer harness: the webhook's receive path as Stripe would
 * drive it, on a body of any shape. Each input is a body; the harness
 * signs it with the endpoint's secret, as Stripe does, so that every input
 * passes the signature and reaches the JSON and the payment intent behind
 * it (billing_receive), in a home of its own. See docs/reliability.md,
 * "Fuzzing".
 *
 * Checks besides no crash (an abort is a crash: libjq asserts on a get from
 * a value of the wrong kind): every answer is 200, 400 or 503 with a
 * message; only a 200 hands back an object to send (always when it
 * recorded), and what that object recorded reads back as an envelope.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/orders/billing.h"
#include "../../lib/core/envelope.h"
#include "../../lib/net/stripe.h"
#include "../../lib/base/util.h"

#define SECRET "whsec_fuzz"

static bakery_ctx ctx;
static char home[] = "/tmp/bakery-fuzz-webhook.XXXXXX";

static int
remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The home goes when the run ends (libFuzzer exits through exit()). */
static void
remove_home(void)
{
	ctx_free(&ctx);
	nftw(home, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(home))
		abort();
	/* Speed over durability: the home is thrown away. */
	setenv("BAKERY_SYNC", "normal", 1);
	if (ctx_init(&ctx, home, "default", NULL))
		abort();
	atexit(remove_home);
	bakery_verbosity = LOG_ERROR;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	char sig[256];
	int64_t now_s = bakery_now_ms() / 1000;
	stripe_signature_make(SECRET, now_s, body, size, sig, sizeof sig);
	billing_options opt = { SECRET, STRIPE_TOLERANCE_S, BILLING_MAX_BODY };
	billing_answer a;
	bakery_object *o = NULL;
	int rc = billing_receive(&ctx, body, size, sig, &opt, &a, &o);
	if (a.http != 200 && a.http != 400 && a.http != 413 && a.http != 503)
		__builtin_trap();
	if (!a.message[0] || (a.http == 200) != (rc == 0))
		__builtin_trap();
	if (o && a.http != 200)
		__builtin_trap();
	if (a.recorded && !o)
		__builtin_trap();
	if (o) {
		/* What billing recorded must read back as an envelope. */
		jv events;
		if (object_events(o, &events) == 0) {
			jv_array_foreach(events, i, e) {
				char *text = envelope_dump(e);
				jv again;
				if (envelope_parse(text, strlen(text), &again))
					__builtin_trap();
				jv_free(again);
				free(text);
				jv_free(e);
			}
			jv_free(events);
		}
		object_close(o);
	}
	return 0;
}
