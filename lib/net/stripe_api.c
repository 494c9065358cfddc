/*
 * stripe_api.c — one POST to Stripe, tried again with the same key.
 */
#define _GNU_SOURCE
#include "stripe_api.h"
#include "../base/json.h"
#include "secret.h"
#include "url.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../lazy/lazy_curl.h"

#define MAX_ANSWER (1024 * 1024)
#define MAX_BACKOFF_MS 8000L

static int
key_valid(const char *key)
{
	size_t n = strlen(key);
	if (n < 8 || n > 255 || (strncmp(key, "sk_", 3) != 0 &&
	    strncmp(key, "rk_", 3) != 0))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(key[i] == '_' || (key[i] >= '0' && key[i] <= '9') ||
		    (key[i] >= 'a' && key[i] <= 'z') ||
		    (key[i] >= 'A' && key[i] <= 'Z')))
			return 0;
	return 1;
}

static int
env_long(const char *name, long dflt, long min, long max, long *out)
{
	const char *v = getenv(name);
	*out = dflt;
	if (!v || !*v)
		return 0;
	long long n;
	if (bakery_parse_number(v, min, max, &n))
		return bakery_fail(EX_CONFIG, "bad %s: '%s': want %ld to %ld",
		    name, v, min, max);
	*out = (long)n;
	return 0;
}

int
stripe_api_open(stripe_api *api, const char *key_file)
{
	memset(api, 0, sizeof *api);
	long retries;
	int rc = env_long("BAKERY_STRIPE_TIMEOUT_MS", 30000, 100, 600000,
	    &api->timeout_ms);
	if (!rc)
		rc = env_long("BAKERY_STRIPE_RETRIES", 3, 0, 20, &retries);
	if (!rc)
		rc = env_long("BAKERY_STRIPE_BACKOFF_MS", 500, 0, 60000,
		    &api->backoff_ms);
	if (rc)
		return rc;
	api->retries = (int)retries;
	api->connect_timeout_ms = api->timeout_ms < 10000 ? api->timeout_ms
							   : 10000;
	const char *base = getenv("BAKERY_STRIPE_API");
	/* https://, or http:// to a loopback host: the key never travels in
	 * clear beyond this machine (url.h). The URL is not repeated: its
	 * userinfo, refused, may be a password. Stripe's own base needs no
	 * check, and a pay through the test gateway loads no libcurl. */
	const char *why;
	if (!base || !*base)
		base = STRIPE_API_BASE;
	else if ((rc = url_check_http(base, &why)) == EX_CONFIG)
		return bakery_fail(EX_CONFIG, "bad BAKERY_STRIPE_API: %s: %s",
		    why, "want https://, or http:// to a loopback host");
	if (rc)
		return rc;
	api->base = bakery_xstrdup(base);
	size_t n = strlen(api->base);
	while (n > 0 && api->base[n - 1] == '/')
		api->base[--n] = '\0';

	const char *env = getenv("BAKERY_STRIPE_KEY");
	if (key_file)
		rc = secret_read_file(key_file,
		    "the Stripe key file (--stripe-key-file)", &api->key);
	else if (env && *env)
		api->key = bakery_xstrdup(env);
	if (!rc && api->key && !key_valid(api->key))
		rc = bakery_fail(EX_CONFIG, "%s does not hold a Stripe secret "
		    "key: want sk_… or rk_…", key_file ? "the key file"
						       : "BAKERY_STRIPE_KEY");
	if (rc)
		stripe_api_free(api);
	return rc;
}

void
stripe_api_free(stripe_api *api)
{
	if (api->key) {
		explicit_bzero(api->key, strlen(api->key));
		free(api->key);
	}
	free(api->base);
	api->key = api->base = NULL;
}

const char *
stripe_api_error(jv body, const char *field)
{
	if (jv_get_kind(body) != JV_KIND_OBJECT)
		return NULL;
	jv err = jv_object_get(jv_copy(body), jv_string("error"));
	const char *s = NULL;
	if (jv_get_kind(err) == JV_KIND_OBJECT) {
		jv v = jv_object_get(jv_copy(err), jv_string(field));
		/* The string lives as long as body does: body holds it too. */
		if (jv_get_kind(v) == JV_KIND_STRING)
			s = jv_string_value(v);
		jv_free(v);
	}
	jv_free(err);
	return s;
}

struct answer {
	char *data;
	size_t len;
	int too_big;
	int replayed;
};

static size_t
on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct answer *a = arg;
	size_t n = size * nmemb;
	if (a->len + n > MAX_ANSWER) {
		a->too_big = 1;
		return 0;
	}
	a->data = bakery_xrealloc(a->data, a->len + n + 1);
	memcpy(a->data + a->len, ptr, n);
	a->len += n;
	a->data[a->len] = '\0';
	return n;
}

static size_t
on_header(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct answer *a = arg;
	size_t n = size * nmemb;
	static const char name[] = "idempotent-replayed:";
	if (n > sizeof name && strncasecmp(ptr, name, sizeof name - 1) == 0) {
		const char *v = ptr + sizeof name - 1;
		while (*v == ' ')
			v++;
		a->replayed = strncasecmp(v, "true", 4) == 0;
	}
	return n;
}

/* Errors no retry can mend: the request or the TLS setup is wrong. */
static int
curl_retryable(CURLcode c)
{
	switch (c) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_TOO_MANY_REDIRECTS:
		return 0;
	default:
		return 1;
	}
}

static int
http_retryable(long status)
{
	return status == 409 || status == 429 || status >= 500;
}

static void
backoff(const stripe_api *api, int retry)
{
	long ms = api->backoff_ms;
	for (int i = 1; i < retry && ms < MAX_BACKOFF_MS; i++)
		ms *= 2;
	if (ms > MAX_BACKOFF_MS)
		ms = MAX_BACKOFF_MS;
	unsigned int r = 0;
	if (ms > 1 && getrandom(&r, sizeof r, 0) == (ssize_t)sizeof r)
		ms += (long)(r % (unsigned long)(ms / 2 + 1));
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* name=value&… with both sides escaped. */
static char *
form_encode(CURL *curl, const stripe_param *params, int n)
{
	size_t len = 0, cap = 256;
	char *out = bakery_xmalloc(cap);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		char *k = curl_easy_escape(curl, params[i].name, 0);
		char *v = curl_easy_escape(curl, params[i].value, 0);
		if (!k || !v)
			abort();
		size_t need = len + strlen(k) + strlen(v) + 3;
		if (need > cap) {
			cap = need * 2;
			out = bakery_xrealloc(out, cap);
		}
		len += (size_t)sprintf(out + len, "%s%s=%s", i ? "&" : "", k, v);
		curl_free(k);
		curl_free(v);
	}
	return out;
}

/* The request's headers: the key, the idempotency key and the API
 * version; Expect: off so that a small form goes in one round trip. */
static struct curl_slist *
post_headers(const char *auth, const char *idem)
{
	struct curl_slist *headers = NULL;
	headers = curl_slist_append(headers, auth);
	headers = curl_slist_append(headers, idem);
	headers = curl_slist_append(headers,
	    "Content-Type: application/x-www-form-urlencoded");
	headers = curl_slist_append(headers, "Accept: application/json");
	headers = curl_slist_append(headers,
	    "Stripe-Version: " STRIPE_API_VERSION);
	headers = curl_slist_append(headers, "Expect:");
	return headers;
}

/* Performs the request set up on curl, again with a backoff while the
 * failure is one a retry can mend, up to api->retries more times. */
static int
post_tries(CURL *curl, const stripe_api *api, char *errbuf, struct answer *a,
    stripe_response *resp)
{
	char reason[CURL_ERROR_SIZE + 64] = "";
	int rc = EX_UNAVAILABLE, retry = 1;
	for (int try = 0; try <= api->retries && retry; try++) {
		if (try > 0) {
			char n[12];
			snprintf(n, sizeof n, "%d", try + 1);
			bakery_log(LOG_WARN, "stripe_retry", "try", n, "reason",
			    reason, (char *)NULL);
			backoff(api, try);
		}
		free(a->data);
		memset(a, 0, sizeof *a);
		errbuf[0] = '\0';
		resp->tries = try + 1;
		CURLcode c = curl_easy_perform(curl);
		if (c != CURLE_OK) {
			snprintf(reason, sizeof reason, "%s", errbuf[0] ? errbuf
			    : curl_easy_strerror(c));
			retry = curl_retryable(c) && !a->too_big;
			continue;
		}
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp->status);
		/* Read as any JSON from outside (json.h): a repeated key or
		 * an escaped NUL is no answer. */
		jv body = jv_invalid();
		if (a->data && json_parse(a->data, a->len, &body))
			body = jv_invalid();
		int is_json = jv_get_kind(body) == JV_KIND_OBJECT;
		if (http_retryable(resp->status)) {
			const char *code = is_json ? stripe_api_error(body, "code")
						   : NULL;
			snprintf(reason, sizeof reason, "HTTP %ld%s%s",
			    resp->status, code ? " " : "", code ? code : "");
			jv_free(body);
			continue;
		}
		retry = 0;
		if (!is_json) {
			jv_free(body);
			snprintf(reason, sizeof reason,
			    "HTTP %ld without a JSON answer", resp->status);
			continue;
		}
		resp->body = body;
		resp->replayed = a->replayed;
		rc = 0;
	}
	if (rc)
		bakery_fail(EX_UNAVAILABLE, "stripe unreachable after %d %s: %s",
		    resp->tries, resp->tries == 1 ? "try" : "tries", reason);
	return rc;
}

int
stripe_api_post(const stripe_api *api, const char *path,
    const char *idempotency_key, const stripe_param *params, int n_params,
    stripe_response *resp)
{
	memset(resp, 0, sizeof *resp);
	resp->body = jv_null();
	if (!api->key)
		return bakery_fail(EX_CONFIG, "no Stripe key configured");
	if (lazy_curl())
		return EX_UNAVAILABLE;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return bakery_fail(EX_SOFTWARE, "cannot initialise libcurl");
	CURL *curl = curl_easy_init();
	if (!curl) {
		curl_global_cleanup();
		return bakery_fail(EX_SOFTWARE, "cannot initialise libcurl");
	}
	char *url = bakery_xasprintf("%s%s", api->base, path);
	char *form = form_encode(curl, params, n_params);
	char *auth = bakery_xasprintf("Authorization: Bearer %s", api->key);
	char *idem = bakery_xasprintf("Idempotency-Key: %s", idempotency_key);
	struct curl_slist *headers = post_headers(auth, idem);
	char errbuf[CURL_ERROR_SIZE];
	struct answer a = { 0 };
	url_post_setopt(curl, &(url_post){ .url = url,
	    .connect_ms = api->connect_timeout_ms, .timeout_ms = api->timeout_ms,
	    .headers = headers, .body = form, .len = strlen(form),
	    .errbuf = errbuf, .on_body = on_body, .on_header = on_header,
	    .data = &a });
	int rc = post_tries(curl, api, errbuf, &a, resp);
	free(a.data);
	for (struct curl_slist *h = headers; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(headers);
	explicit_bzero(auth, strlen(auth));
	free(auth);
	free(idem);
	free(form);
	free(url);
	curl_easy_cleanup(curl);
	curl_global_cleanup();
	return rc;
}
