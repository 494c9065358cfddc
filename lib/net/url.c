/*
 * url.c — an http(s) URL checked with curl_url(): scheme, host, no
 * userinfo.
 */
#define _GNU_SOURCE
#include "url.h"
#include "../lazy/lazy_curl.h"
#include "../base/util.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

/* Whether host, as CURLUPART_HOST gives it, is this machine: an IPv4
 * address in 127.0.0.0/8, [::1], or localhost. Only these spellings:
 * libcurl has already turned 127.1 and its kin into dotted quads. */
static int
loopback_host(const char *host)
{
	struct in_addr v4;
	struct in6_addr v6;
	if (strcasecmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	size_t n = strlen(host);
	if (n < 3 || n > 64 || host[0] != '[' || host[n - 1] != ']')
		return 0;
	char inner[64];
	memcpy(inner, host + 1, n - 2);
	inner[n - 2] = '\0';
	return inet_pton(AF_INET6, inner, &v6) == 1 &&
	    IN6_IS_ADDR_LOOPBACK(&v6);
}

/* Whether part of h is there at all (an empty user is there). */
static int
has_part(CURLU *h, CURLUPart part)
{
	char *v = NULL;
	int there = curl_url_get(h, part, &v, 0) == CURLUE_OK && v;
	curl_free(v);
	return there;
}

/* The checks on a parsed URL; *why for the first that fails. */
static const char *
refusal(CURLU *h)
{
	char *scheme = NULL, *host = NULL;
	const char *why = NULL;
	if (curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0))
		why = "want an https:// or http:// URL";
	else if (has_part(h, CURLUPART_USER) ||
	    has_part(h, CURLUPART_PASSWORD) || has_part(h, CURLUPART_OPTIONS))
		why = "a URL with userinfo (USER[:PASSWORD]@) is refused";
	else if (curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    !host || !*host)
		why = "a URL without a host";
	else if (strcmp(scheme, "http") == 0 && !loopback_host(host))
		why = "http:// is for 127.0.0.0/8, localhost or [::1] only: "
		      "use https://";
	curl_free(scheme);
	curl_free(host);
	return why;
}

int
url_check_http(const char *url, const char **why)
{
	*why = NULL;
	/* libcurl reads http:///x as host x: an empty authority is no host,
	 * whatever a lenient parser makes of it. */
	const char *colon = strchr(url, ':');
	if (!colon || strncmp(colon, "://", 3) != 0 || colon[3] == '/' ||
	    !colon[3]) {
		*why = "a URL without a host";
		return EX_CONFIG;
	}
	int rc = lazy_curl();
	if (rc)
		return rc;
	CURLU *h = curl_url();
	if (!h)
		return bakery_fail(EX_OSERR, "out of memory");
	if (curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK)
		*why = "not a URL libcurl can parse";
	else
		*why = refusal(h);
	curl_url_cleanup(h);
	return *why ? EX_CONFIG : 0;
}

void
url_post_setopt(CURL *curl, const url_post *p)
{
	curl_easy_setopt(curl, CURLOPT_URL, p->url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR,
	    strncasecmp(p->url, "https:", 6) == 0 ? "https" : "http");
	curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, p->connect_ms);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "bakery/" BAKERY_VERSION);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, p->errbuf);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, p->on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, p->data);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, p->on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, p->data);
}
