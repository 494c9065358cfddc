/*
 * gateway.h — which gateway a home pays through: a choice made once and
 * recorded in the home.
 *
 *   HOME/.gateway   one line, "test" or "stripe" (0600)
 *
 * `bakery-order gateway NAME` writes it; `pay` reads it and refuses (78)
 * while no choice is recorded, so no home pays through the test gateway
 * because a key went missing. A home may move from the test gateway to
 * Stripe (a trial home going live), never back: "test" is only ever
 * written by creating the file, so a home that records "stripe" keeps it,
 * even against a race. The file name begins with a dot, which no sandbox
 * name can (store.h), so it never collides with a sandbox's folder.
 */
#ifndef BAKERY_GATEWAY_H
#define BAKERY_GATEWAY_H

#include "../store/store.h"

typedef enum gateway_kind {
	GATEWAY_NONE,   /* no choice recorded yet */
	GATEWAY_TEST,   /* the built-in test gateway: no money moves */
	GATEWAY_STRIPE, /* Stripe's API */
} gateway_kind;

/* "test", "stripe", or NULL for GATEWAY_NONE. */
const char *gateway_name(gateway_kind g);
/* GATEWAY_NONE when name is neither. */
gateway_kind gateway_parse(const char *name);

/* The home's recorded choice, GATEWAY_NONE when there is none (also when
 * the home does not exist); creates nothing. EX_CONFIG for a file that
 * holds anything else or cannot be read. */
int gateway_read(const char *home, gateway_kind *g);

/* Records g as the home's gateway (creating the home). *was is the choice
 * before. EX_NOPERM when the home pays through Stripe and g is the test
 * gateway. */
int gateway_choose(bakery_ctx *ctx, gateway_kind g, gateway_kind *was);

#endif
