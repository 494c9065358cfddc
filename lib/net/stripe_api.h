/*
 * stripe_api.h — talking to Stripe's API over HTTPS (libcurl).
 *
 * Owns: the secret key, the base URL, timeouts, and the retry loop of one
 * POST. bakery makes one kind of call, POST /v1/payment_intents
 * (payments.c); this module knows nothing of orders.
 *
 *   POST BASE/v1/payment_intents
 *   Authorization: Bearer sk_test_…
 *   Idempotency-Key: ord_…
 *   Stripe-Version: 2024-06-20
 *   Content-Type: application/x-www-form-urlencoded
 *
 *   amount=1150&currency=eur&confirm=true&payment_method=pm_card_visa&…
 *
 * Promises:
 * - Every try of one call carries the same Idempotency-Key and the same
 *   body. A network error, a timeout, a 5xx, a 429 or a 409
 *   idempotency_key_in_use is tried again after a backoff; Stripe replays
 *   the first answer for a key it has seen, so a retry never charges twice.
 * - TLS certificates and host names are verified. Plain http:// is
 *   accepted only for a loopback host (a local stand-in); redirects are
 *   not followed.
 * - The key is read from a file or BAKERY_STRIPE_KEY, never from argv,
 *   and appears in no log line or error message; its memory is wiped on
 *   stripe_api_free().
 *
 * Configuration (environment):
 *   BAKERY_STRIPE_KEY          the secret key (sk_… or rk_…)
 *   BAKERY_STRIPE_API          base URL, default https://api.stripe.com
 *   BAKERY_STRIPE_TIMEOUT_MS   one try's total time, default 30000; the
 *                              connect timeout is the smaller of it and 10 s
 *   BAKERY_STRIPE_RETRIES      tries after the first, default 3
 *   BAKERY_STRIPE_BACKOFF_MS   first wait, default 500; doubled each
 *                              retry, plus up to half again of jitter,
 *                              at most 8 s
 */
#ifndef BAKERY_STRIPE_API_H
#define BAKERY_STRIPE_API_H

#include <jv.h>

#define STRIPE_API_BASE "https://api.stripe.com"
/* Sent as Stripe-Version, so answers keep the shape this code reads. */
#define STRIPE_API_VERSION "2024-06-20"

typedef struct stripe_api {
	char *key;          /* NULL: no key configured */
	char *base;         /* no trailing slash */
	long timeout_ms;
	long connect_timeout_ms;
	int retries;
	long backoff_ms;
} stripe_api;

typedef struct stripe_param {
	const char *name;
	const char *value;
} stripe_param;

typedef struct stripe_response {
	long status;  /* the HTTP status of the last try */
	jv body;      /* the JSON object Stripe answered */
	int tries;
	int replayed; /* Idempotent-Replayed: true */
} stripe_response;

/* Reads the key from key_file (a path; NULL: BAKERY_STRIPE_KEY) and the
 * settings above. With no key_file and no BAKERY_STRIPE_KEY it returns 0
 * and api->key is NULL. EX_CONFIG for an unreadable or malformed key, a
 * bad setting or a base URL that is neither https:// nor loopback http://. */
int stripe_api_open(stripe_api *api, const char *key_file);
void stripe_api_free(stripe_api *api);

/* POSTs params form-encoded to BASE + path with the idempotency key,
 * trying again as above. 0 when Stripe gave a definite answer (2xx or a
 * 4xx other than 409 and 429): resp->status and resp->body, which the
 * caller frees. EX_UNAVAILABLE when the tries ran out or the answer was
 * not Stripe's JSON; resp->body is then jv_null(). */
int stripe_api_post(const stripe_api *api, const char *path,
    const char *idempotency_key, const stripe_param *params, int n_params,
    stripe_response *resp);

/* error.type, error.code and error.message of an error answer, or NULL. */
const char *stripe_api_error(jv body, const char *field);

#endif
