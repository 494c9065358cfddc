/*
 * url.h — an http(s) URL bakery will send to, checked by libcurl's own
 * parser (curl_url()), the one that will send to it.
 *
 * A string prefix is not a host: `http://127.0.0.1:80@example.com/hook`
 * starts like a loopback URL, but 127.0.0.1:80 is its userinfo and
 * example.com its host, where a signed body (or the Stripe key) would
 * travel in clear. So the URL is parsed as libcurl parses it, and the
 * decision is made on CURLUPART_HOST: https:// may name any host; http://
 * only a loopback one (an IPv4 address in 127.0.0.0/8, ::1, or localhost),
 * as libcurl normalised it (127.1, 0x7f.1, %31%32%37.0.0.1 and
 * [0:0:0:0:0:0:0:1] are loopback; 127.0.0.1.example.com and localhost.evil
 * are not). A URL with userinfo (user[:password]@, even empty) is refused
 * outright: bakery never sends credentials in a URL, and userinfo is how a
 * URL is made to look like it goes elsewhere. The routes file
 * (routing.c) and BAKERY_STRIPE_API (stripe_api.c) both check through it.
 */
#ifndef BAKERY_URL_H
#define BAKERY_URL_H

#include <stddef.h>

#include "../lazy/lazy_curl.h"

/* 0 when url may be sent to. Otherwise EX_CONFIG with *why a fixed
 * message that does not repeat the URL (its userinfo may be a password),
 * or EX_UNAVAILABLE when libcurl cannot be loaded (bakery_fail). */
int url_check_http(const char *url, const char **why);

/* 1 when url is so plain that libcurl's parser cannot read it otherwise,
 * and url_check_http takes it: "http://" and 127.N.N.N (decimal, no
 * leading zero), localhost or [::1]; or "https://" and a host name of
 * letters, digits and hyphens between dots; then an optional port 1 to
 * 65535, and a path of letters, digits, "-._~/" only. Decided without
 * libcurl, for one who wants to know before loading it (otlp.c); 0 means
 * ask url_check_http, not that it refuses. */
int url_plain_http(const char *url);

/* A POST bakery sends (to a subscriber outside bakery, to Stripe's API). */
typedef struct url_post {
	const char *url;         /* checked by url_check_http */
	long connect_ms, timeout_ms;
	struct curl_slist *headers;
	const char *body;
	size_t len;
	char *errbuf;            /* CURL_ERROR_SIZE bytes: libcurl's message */
	curl_write_callback on_body, on_header;
	void *data;              /* for both callbacks */
} url_post;

/* The options every POST of bakery's is sent with, on curl: to p->url by
 * its own scheme only (an https URL never falls back to http), the
 * peer's certificate and name verified, no redirect followed, no signal
 * used for the timeouts, bakery's User-Agent. */
void url_post_setopt(CURL *curl, const url_post *p);

#endif
