/*
 * stripe.c — Stripe-Signature: make, parse, verify.
 */
#define _GNU_SOURCE
#include "tap.h"

#include "../../lib/lazy/lazy.h"
#include "../../lib/net/stripe.h"
#include "../../lib/base/util.h"

#ifdef LAZY_CRYPTO_SONAME
#define LAZY_TEST_CRYPTO LAZY_CRYPTO_SONAME
#else
#define LAZY_TEST_CRYPTO "libcrypto.so.3"
#endif
#define NOW 1764496800LL
#define SECRET "whsec_test_secret"

static const char body[] = "{\"id\":\"evt_1\",\"type\":\"payment_intent.succeeded\"}";

static void
refused(const char *header, const char *b, const char *secret, long long now,
    const char *want, const char *what)
{
	is_int(stripe_signature_verify(header, b, b ? strlen(b) : 0, secret, now,
	    STRIPE_TOLERANCE_S), EX_NOPERM, "%s is EX_NOPERM", what);
	ok(strstr(bakery_error(), want) != NULL, "  says '%s' (%s)", want,
	    bakery_error());
}

int
main(void)
{
	char h[256], h2[256], other[256];
	stripe_signature_make(SECRET, NOW, body, strlen(body), h, sizeof h);
	ok(strncmp(h, "t=1764496800,v1=", 16) == 0 && strlen(h) == 16 + 64,
	    "make gives t=T,v1=HEX (%s)", h);
	is_int(stripe_signature_verify(h, body, strlen(body), SECRET, NOW,
	    STRIPE_TOLERANCE_S), 0, "verify accepts its own signature");
	is_int(stripe_signature_verify(h, body, strlen(body), SECRET,
	    NOW + STRIPE_TOLERANCE_S, STRIPE_TOLERANCE_S), 0,
	    "verify accepts it at the edge of the tolerance (300 s late)");
	is_int(stripe_signature_verify(h, body, strlen(body), SECRET,
	    NOW - STRIPE_TOLERANCE_S, STRIPE_TOLERANCE_S), 0,
	    "  and 300 s early");

	/* A known vector: HMAC-SHA256("whsec_test_secret", "1764496800." body). */
	stripe_signature_make("key", 1, "x", 1, other, sizeof other);
	is_str(other, "t=1,v1="
	    "fc4913c41a7bf793267e2a384f3261c9436ec2cd097bd745e7b0d99113f510ec",
	    "HMAC of '1.x' under 'key' (openssl dgst checks this)");

	refused(h, body, "whsec_other", NOW, "does not match", "a wrong secret");
	refused(h, "{\"id\":\"evt_2\"}", SECRET, NOW, "does not match",
	    "a changed body");
	{
		/* A body changed in its last byte. */
		char b2[sizeof body];
		memcpy(b2, body, sizeof body);
		b2[sizeof body - 2] = ']';
		refused(h, b2, SECRET, NOW, "does not match", "a changed last byte");
	}
	snprintf(h2, sizeof h2, "t=%lld,%s", NOW + 10, strstr(h, "v1="));
	refused(h2, body, SECRET, NOW, "does not match",
	    "a signature moved to another timestamp");
	refused(h, body, SECRET, NOW + STRIPE_TOLERANCE_S + 1, "tolerance",
	    "a stale timestamp (301 s old)");
	refused(h, body, SECRET, NOW - STRIPE_TOLERANCE_S - 1, "tolerance",
	    "a future timestamp (301 s ahead)");

	/* v0 only: ignored, so no signature. */
	stripe_signature_make(SECRET, NOW, body, strlen(body), other, sizeof other);
	snprintf(h2, sizeof h2, "t=%lld,v0=%s", NOW, strstr(other, "v1=") + 3);
	refused(h2, body, SECRET, NOW, "no v1", "a v0-only header");
	refused(NULL, body, SECRET, NOW, "missing", "a missing header");
	refused("", body, SECRET, NOW, "missing", "an empty header");

	/* Rotation: two v1, the second matches. */
	char oldsig[256];
	stripe_signature_make("whsec_old", NOW, body, strlen(body), oldsig,
	    sizeof oldsig);
	snprintf(h2, sizeof h2, "t=%lld,v1=%s,v1=%s", NOW,
	    strstr(oldsig, "v1=") + 3, strstr(h, "v1=") + 3);
	is_int(stripe_signature_verify(h2, body, strlen(body), SECRET, NOW,
	    STRIPE_TOLERANCE_S), 0, "two v1 where the second matches: accepted");
	is_int(stripe_signature_verify(h2, body, strlen(body), "whsec_old", NOW,
	    STRIPE_TOLERANCE_S), 0, "  and the first matches its own secret");
	refused(h2, body, "whsec_third", NOW, "does not match",
	    "two v1 where neither matches");
	snprintf(h2, sizeof h2, "t=%lld, v0=abc, v1=%s", NOW, strstr(h, "v1=") + 3);
	is_int(stripe_signature_verify(h2, body, strlen(body), SECRET, NOW,
	    STRIPE_TOLERANCE_S), 0, "spaces after commas and a v0 are fine");

	/* Malformed headers. */
	refused("garbage", body, SECRET, NOW, "malformed", "a header without '='");
	snprintf(h2, sizeof h2, "t=abc,%s", strstr(h, "v1="));
	refused(h2, body, SECRET, NOW, "timestamp", "a non-numeric timestamp");
	snprintf(h2, sizeof h2, "t=-5,%s", strstr(h, "v1="));
	refused(h2, body, SECRET, NOW, "timestamp", "a negative timestamp");
	snprintf(h2, sizeof h2, "%s", strstr(h, "v1="));
	refused(h2, body, SECRET, NOW, "no timestamp", "a header without t");
	snprintf(h2, sizeof h2, "t=%lld", NOW);
	refused(h2, body, SECRET, NOW, "no v1", "a header without v1");
	snprintf(h2, sizeof h2, "t=%lld,v1=%.63s", NOW, strstr(h, "v1=") + 3);
	refused(h2, body, SECRET, NOW, "no v1", "a truncated v1");
	{
		/* Upper-case hex is not what Stripe sends: it cannot match. */
		snprintf(h2, sizeof h2, "%s", h);
		for (char *p = strstr(h2, "v1=") + 3; *p; p++)
			if (*p >= 'a' && *p <= 'f')
				*p = (char)(*p - 'a' + 'A');
		refused(h2, body, SECRET, NOW, "no v1", "an upper-case v1");
	}

	/* Parse. */
	stripe_signature sig;
	snprintf(h2, sizeof h2, "t=%lld,v1=%s,v1=%s", NOW,
	    strstr(oldsig, "v1=") + 3, strstr(h, "v1=") + 3);
	is_int(stripe_signature_parse(h2, &sig), 0, "parse a good header");
	is_int(sig.t, NOW, "  its t");
	is_int(sig.n_v1, 2, "  two v1");
	is_str(sig.v1[1], strstr(h, "v1=") + 3, "  the second v1");

	char hex[65];
	stripe_hash_hex("abc", 3, hex, 64);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "stripe_hash_hex: SHA-256 of 'abc'");
	stripe_hash_hex("abc", 3, hex, 8);
	is_str(hex, "ba7816bf", "  first 8 digits");

	/* A library that cannot be loaded is a clear EX_UNAVAILABLE. */
	{
		static const char *const names[] = { "HMAC" };
		static void *slot;
		static void **const ptrs[] = { &slot };
		lazy_lib missing = { "libbakery-missing.so.1", names, ptrs, 1,
			NULL };
		is_int(lazy_load(&missing), EX_UNAVAILABLE,
		    "lazy_load of a missing library is EX_UNAVAILABLE");
		ok(strstr(bakery_error(), "cannot load libbakery-missing.so.1")
		    != NULL, "  naming it (%s)", bakery_error());
		lazy_lib crypto = { LAZY_TEST_CRYPTO, names, ptrs, 1, NULL };
		is_int(lazy_load(&crypto), 0, "lazy_load of libcrypto");
		ok(slot != NULL, "  resolves HMAC");
		static const char *const bad[] = { "no_such_function_here" };
		lazy_lib nofn = { LAZY_TEST_CRYPTO, bad, ptrs, 1, NULL };
		is_int(lazy_load(&nofn), EX_UNAVAILABLE,
		    "a function the library lacks is EX_UNAVAILABLE");
		ok(strstr(bakery_error(), "no no_such_function_here") != NULL,
		    "  naming it (%s)", bakery_error());
	}
	return done_testing();
}
