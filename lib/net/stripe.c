/*
 * stripe.c — HMAC-SHA256 webhook signatures with OpenSSL's libcrypto.
 */
#include "stripe.h"
#include "../base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lazy/lazy_crypto.h"

/* libcrypto is loaded when first needed (lazy.h); a bakery that cannot
 * load it cannot sign or hash at all, and says so. */
static void
need_crypto(void)
{
	if (lazy_crypto())
		bakery_die(EX_UNAVAILABLE, "%s", bakery_error());
}

void
stripe_hash_hex(const char *data, size_t len, char *out, int digits)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char hex[65];
	need_crypto();
	SHA256((const unsigned char *)data, len, md);
	bakery_hex(md, sizeof md, hex);
	memcpy(out, hex, (size_t)digits);
	out[digits] = '\0';
}

static void
sign_hex(const char *secret, int64_t t, const char *body, size_t len,
    char out[65])
{
	char prefix[32];
	need_crypto();
	int plen = snprintf(prefix, sizeof prefix, "%lld.", (long long)t);
	unsigned char *msg = bakery_xmalloc((size_t)plen + len);
	memcpy(msg, prefix, (size_t)plen);
	memcpy(msg + plen, body, len);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), msg,
		(size_t)plen + len, md, &mdlen))
		abort();
	free(msg);
	bakery_hex(md, mdlen, out);
}

void
stripe_signature_make(const char *secret, int64_t t, const char *body,
    size_t len, char *buf, size_t size)
{
	char hex[65];
	sign_hex(secret, t, body, len, hex);
	snprintf(buf, size, "t=%lld,v1=%s", (long long)t, hex);
}

int
stripe_signature_parse(const char *header, stripe_signature *sig)
{
	memset(sig, 0, sizeof *sig);
	sig->t = -1;
	if (!header || !*header)
		return bakery_fail(EX_NOPERM, "missing Stripe-Signature header");
	if (strlen(header) > 4096)
		return bakery_fail(EX_NOPERM, "Stripe-Signature header too long");
	char *copy = bakery_xstrdup(header), *save = NULL;
	int rc = 0;
	for (char *part = strtok_r(copy, ",", &save); part && !rc;
	     part = strtok_r(NULL, ",", &save)) {
		while (*part == ' ')
			part++;
		char *eq = strchr(part, '=');
		if (!eq) {
			rc = bakery_fail(EX_NOPERM, "malformed Stripe-Signature");
			break;
		}
		*eq = '\0';
		const char *v = eq + 1;
		if (strcmp(part, "t") == 0) {
			long long t = 0;
			if (bakery_parse_number(v, 0, LLONG_MAX, &t))
				rc = bakery_fail(EX_NOPERM,
				    "malformed Stripe-Signature timestamp");
			sig->t = t;
		} else if (strcmp(part, "v1") == 0) {
			if (strlen(v) != 64 || strspn(v, "0123456789abcdef") != 64)
				continue; /* cannot match: not a SHA-256 in hex */
			if (sig->n_v1 < STRIPE_MAX_V1)
				memcpy(sig->v1[sig->n_v1++], v, 65);
		}
		/* v0 and unknown schemes are ignored, as Stripe asks. */
	}
	free(copy);
	if (!rc && sig->t < 0)
		rc = bakery_fail(EX_NOPERM, "Stripe-Signature has no timestamp");
	if (!rc && sig->n_v1 == 0)
		rc = bakery_fail(EX_NOPERM, "Stripe-Signature has no v1 signature");
	return rc;
}

int
stripe_signature_verify(const char *header, const char *body, size_t len,
    const char *secret, int64_t now_s, int tolerance_s)
{
	stripe_signature sig;
	int rc = stripe_signature_parse(header, &sig);
	if (rc)
		return rc;
	char want[65];
	sign_hex(secret, sig.t, body, len, want);
	int match = 0;
	for (int i = 0; i < sig.n_v1; i++)
		match |= CRYPTO_memcmp(want, sig.v1[i], 64) == 0;
	if (!match)
		return bakery_fail(EX_NOPERM, "signature does not match");
	if (sig.t < now_s - tolerance_s || sig.t > now_s + tolerance_s)
		return bakery_fail(EX_NOPERM,
		    "timestamp outside the tolerance of %d s", tolerance_s);
	return 0;
}
