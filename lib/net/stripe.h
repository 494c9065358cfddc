/*
 * stripe.h — Stripe's webhook signatures (the Stripe-Signature header).
 *
 *   Stripe-Signature: t=1764496800,v1=5257a8…,v1=…,v0=…
 *
 * A v1 is hex(HMAC-SHA256(secret, "T.BODY")). Several v1 appear while a
 * secret is rolled; any one matching is enough. v0 (the old scheme) is
 * ignored. The timestamp must be within a tolerance of now, both ways.
 */
#ifndef BAKERY_STRIPE_H
#define BAKERY_STRIPE_H

#include <stddef.h>
#include <stdint.h>

#define STRIPE_TOLERANCE_S 300
#define STRIPE_MAX_V1 8

typedef struct stripe_signature {
	int64_t t;
	char v1[STRIPE_MAX_V1][65];
	int n_v1;
} stripe_signature;

/* Parses the header; EX_NOPERM with the reason when it is malformed. */
int stripe_signature_parse(const char *header, stripe_signature *sig);

/* "t=T,v1=HEX" for body signed with secret at time t. buf >= 96. */
void stripe_signature_make(const char *secret, int64_t t, const char *body,
    size_t len, char *buf, size_t size);

/* 0 when header carries a valid v1 for body within tolerance of now;
 * EX_NOPERM with the reason otherwise. Compares in constant time. */
int stripe_signature_verify(const char *header, const char *body, size_t len,
    const char *secret, int64_t now_s, int tolerance_s);

/* Lowercase hex of SHA-256(data), first `digits` digits (<= 64). */
void stripe_hash_hex(const char *data, size_t len, char *out, int digits);

#endif
