/*
 * signature.c — libFuzzer harness: the Stripe-Signature header parser and
 * the verifier, as bakery-webhook meets them (any header, any body).
 * The input is split at its first NUL byte: header, then body.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/net/stripe.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	size_t hlen = nul ? (size_t)(nul - (const char *)data) : size;
	char *header = malloc(hlen + 1);
	if (!header)
		return 0;
	memcpy(header, data, hlen);
	header[hlen] = '\0';
	const char *body = nul ? nul + 1 : "";
	size_t blen = nul ? size - hlen - 1 : 0;
	stripe_signature sig;
	if (stripe_signature_parse(header, &sig) == 0 &&
	    (sig.n_v1 < 1 || sig.n_v1 > STRIPE_MAX_V1))
		__builtin_trap();
	(void)stripe_signature_verify(header, body, blen, "whsec_fuzz",
	    1796115600, STRIPE_TOLERANCE_S);
	/* A header we make must verify. */
	char made[256];
	stripe_signature_make("whsec_fuzz", 1796115600, body, blen, made,
	    sizeof made);
	if (stripe_signature_verify(made, body, blen, "whsec_fuzz", 1796115600,
		STRIPE_TOLERANCE_S) != 0)
		__builtin_trap();
	free(header);
	return 0;
}
