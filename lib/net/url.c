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

/* The length of a number 0 to max at s, decimal without a leading zero,
 * its value in *v; 0 when there is none. */
static size_t
decimal(const char *s, long max, long *v)
{
	size_t n = 0;
	*v = 0;
	while (s[n] >= '0' && s[n] <= '9' && n < 6) {
		*v = *v * 10 + (s[n] - '0');
		n++;
	}
	return n && (n == 1 || s[0] != '0') && *v <= max ? n : 0;
}

/* The length of a loopback host at s: 127.N.N.N, localhost, [::1]. */
static size_t
plain_loopback(const char *s)
{
	if (strncmp(s, "localhost", 9) == 0)
		return 9;
	if (strncmp(s, "[::1]", 5) == 0)
		return 5;
	size_t n = 0;
	for (int i = 0; i < 4; i++) {
		long v;
		size_t k = decimal(s + n, 255, &v);
		if (!k || (i == 0 && v != 127) || (i < 3 && s[n + k] != '.'))
			return 0;
		n += k + (i < 3);
	}
	return n;
}

/* The length of a host name at s: labels of letters, digits and inner
 * hyphens, 1 to 63 bytes each, between single dots, the last beginning
 * with a letter (so that no parser reads it as an IPv4 address: 127.1,
 * 0x7f.1). */
static size_t
plain_name(const char *s)
{
	size_t n = 0, label = 0, last = 0;
	for (;; n++) {
		char c = s[n];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9');
		if (alnum || (c == '-' && label > 0)) {
			if (++label > 63)
				return 0;
			continue;
		}
		if (label == 0 || s[n - 1] == '-')
			return 0;
		if (c != '.')
			break;
		label = 0;
		last = n + 1;
	}
	int letter = (s[last] >= 'a' && s[last] <= 'z') ||
	    (s[last] >= 'A' && s[last] <= 'Z');
	return n <= 253 && letter ? n : 0;
}

int
url_plain_http(const char *url)
{
	const char *p;
	size_t host;
	if (strncmp(url, "http://", 7) == 0)
		host = plain_loopback(p = url + 7);
	else if (strncmp(url, "https://", 8) == 0)
		host = plain_name(p = url + 8);
	else
		return 0;
	if (!host)
		return 0;
	p += host;
	long port;
	if (*p == ':') {
		size_t k = decimal(p + 1, 65535, &port);
		if (!k || port == 0)
			return 0;
		p += 1 + k;
	}
	if (*p && *p != '/')
		return 0;
	for (; *p; p++)
		if (!strchr("-._~/", *p) && !((*p >= 'a' && *p <= 'z') ||
		    (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
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
