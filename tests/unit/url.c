/*
 * url.c — url_plain_http: what it vouches for without libcurl,
 * url_check_http (libcurl's parser) takes, each one; what it does not
 * vouch for is left to libcurl, never refused by it.
 */
#include "tap.h"

#include <stdio.h>

#include "../../lib/net/url.h"
#include "../../lib/base/util.h"

int
main(void)
{
	static const struct {
		const char *url;
		int plain;
	} cases[] = {
		{ "http://127.0.0.1:4318/v1/traces", 1 },
		{ "http://127.0.0.1/v1/traces", 1 },
		{ "http://127.255.255.254:9/hook", 1 },
		{ "http://127.0.0.1:65535", 1 },
		{ "http://localhost:4318/v1/traces", 1 },
		{ "http://[::1]:4318/v1/traces", 1 },
		{ "https://otel.example.com/v1/traces", 1 },
		{ "https://otel-collector.internal:4318/a_b/c~d.e/v1/traces", 1 },
		{ "https://x1.example:443/v1/traces", 1 },
		{ "HTTP://127.0.0.1/x", 0 },
		{ "http://LOCALHOST/x", 0 },
		{ "http://127.1/x", 0 },
		{ "http://127.000.0.1/x", 0 },
		{ "http://127.0.0.01/x", 0 },
		{ "http://127.0.0.256/x", 0 },
		{ "http://127.0.0/x", 0 },
		{ "http://[0:0:0:0:0:0:0:1]/x", 0 },
		{ "http://%6c%6fcalhost/x", 0 },
		{ "http://127.0.0.1:0/x", 0 },
		{ "http://127.0.0.1:08080/x", 0 },
		{ "http://127.0.0.1:65536/x", 0 },
		{ "http://127.0.0.1:99999/", 0 },
		{ "http://127.0.0.1:/x", 0 },
		{ "http://127.0.0.1:80@example.com/hook", 0 },
		{ "http://u:p@127.0.0.1/", 0 },
		{ "http://@127.0.0.1/", 0 },
		{ "http://127.0.0.1\\@evil/", 0 },
		{ "http://127.0.0.1.example.com/", 0 },
		{ "http://localhost.evil/", 0 },
		{ "http://localhostx/", 0 },
		{ "http://[::1]@evil/", 0 },
		{ "http://example.com/", 0 },
		{ "http://0.0.0.0/", 0 },
		{ "http://128.0.0.1/", 0 },
		{ "http:///hook", 0 },
		{ "http://", 0 },
		{ "http:example.com", 0 },
		{ "https://user@h.example/", 0 },
		{ "https:///x", 0 },
		{ "https://h.example./x", 0 },
		{ "https://-h.example/x", 0 },
		{ "https://h-.example/x", 0 },
		{ "https://h..example/x", 0 },
		{ "https://1.2.3.4/x", 0 },
		{ "https://0x7f.1/x", 0 },
		{ "https://h.example/x?y=1", 0 },
		{ "https://h.example/x#y", 0 },
		{ "https://h.example/%2e%2e", 0 },
		{ "https://h.example/a b", 0 },
		{ "https://h.example\\x/", 0 },
		{ "ftp://127.0.0.1/", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *u = cases[i].url, *why;
		int plain = url_plain_http(u);
		is_int(plain, cases[i].plain, "url_plain_http: %s", u);
		if (plain)
			is_int(url_check_http(u, &why), 0,
			    "  and url_check_http takes it");
	}
	/* A label of 63 is a name, of 64 is not one it vouches for. */
	char name[128];
	snprintf(name, sizeof name, "https://%.63s.example/x",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	ok(url_plain_http(name), "a label of 63 letters is plain");
	snprintf(name, sizeof name, "https://%.64s.example/x",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	ok(!url_plain_http(name), "a label of 64 is left to libcurl");
	return done_testing();
}
