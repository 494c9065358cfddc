/*
 * otlp.c — OTLP/HTTP with JSON: settings, sampler, one request of spans,
 * the count of those not sent (otlp.h).
 */
#include "otlp.h"
#include "url.h"
#include "../store/file.h"
#include "../store/home.h"
#include "../base/json.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#define OTLP_TIMEOUT_MS 2000

enum sampler { ALWAYS_ON, ALWAYS_OFF, RATIO };

static struct {
	int read, on;
	char *url;
	const char *url_var; /* the variable that gave it */
	int url_checked;     /* by url_check_http (libcurl's parser) */
	char **header;       /* "Name: value", from OTEL_EXPORTER_OTLP_HEADERS */
	size_t nheader;
	jv resource;         /* OTLP/JSON attributes, while read */
	char *head;          /* a request's text up to its spans */
	size_t head_len;
	int curl;            /* libcurl loaded and set up for the sends */
	struct curl_slist *headers;
	long timeout_ms;
	enum sampler root;
	int parent_based;
	double ratio;
	char *home;
	int gone; /* a send failed: the rest are counted, not tried */
} otlp = { .resource = { 0 } };

void
otlp_home(const char *home)
{
	free(otlp.home);
	otlp.home = home ? bakery_xstrdup(home) : NULL;
}

static void
off(const char *var, const char *why)
{
	bakery_log(LOG_WARN, "otlp_off", "variable", var, "error", why,
	    (char *)NULL);
}

/* n bytes of s, trimmed of blanks and percent-decoded, into a new
 * string; NULL when a %XX is broken or it decodes to a control byte. */
static char *
decoded(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	size_t k;
	char *out = bakery_percent_decode(s, n, 0, &k);
	for (size_t i = 0; out && i < k; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f) {
			free(out);
			return NULL;
		}
	return out;
}

/* A header's name: an HTTP token. */
static int
token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("!#$%&'*+-.^_`|~", *s) &&
		    !((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
			(*s >= 'A' && *s <= 'Z')))
			return 0;
	return 1;
}

/* "k=v,k2=v2" (W3C Baggage's list, percent-decoded) handed pair by pair
 * to each; -1 when malformed or each refuses. */
static int
pairs(const char *list, int (*each)(char *k, char *v, void *), void *data)
{
	for (const char *p = list; *p; ) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		if (!eq)
			return -1;
		char *k = decoded(p, (size_t)(eq - p));
		char *v = decoded(eq + 1, (size_t)(p + n - eq - 1));
		int rc = k && v && *k ? each(k, v, data) : -1;
		free(k);
		free(v);
		if (rc)
			return -1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int
header(char *k, char *v, void *data)
{
	(void)data;
	if (!token(k) || strlen(k) + strlen(v) > 8192)
		return -1;
	otlp.header = bakery_xrealloc(otlp.header,
	    (otlp.nheader + 1) * sizeof *otlp.header);
	otlp.header[otlp.nheader++] = bakery_xasprintf("%s: %s", k, v);
	return 0;
}

static jv
attribute(const char *k, jv value)
{
	jv a = jv_object_set(jv_object(), jv_string("key"), jv_string(k));
	return jv_object_set(a, jv_string("value"), value);
}

static int
resource_attr(char *k, char *v, void *data)
{
	(void)data;
	if (strcmp(k, "service.name") == 0)
		return 0; /* OTEL_SERVICE_NAME's, or the program's */
	otlp.resource = jv_array_append(otlp.resource, attribute(k,
	    jv_object_set(jv_object(), jv_string("stringValue"),
		jv_string(v))));
	return 0;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static int
timeout(void)
{
	const char *var = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
	const char *t = env(var);
	if (!t)
		t = env(var = "OTEL_EXPORTER_OTLP_TIMEOUT");
	long long ms = OTLP_TIMEOUT_MS;
	if (t && bakery_parse_number(t, 1, 60000, &ms)) {
		off(var, "want 1 to 60000 milliseconds");
		return -1;
	}
	otlp.timeout_ms = (long)ms;
	return 0;
}

static int
sampler(void)
{
	const char *s = env("OTEL_TRACES_SAMPLER");
	if (!s)
		s = "parentbased_always_on";
	otlp.parent_based = strncmp(s, "parentbased_", 12) == 0;
	const char *root = otlp.parent_based ? s + 12 : s;
	otlp.ratio = 1.0;
	if (strcmp(root, "always_on") == 0) {
		otlp.root = ALWAYS_ON;
	} else if (strcmp(root, "always_off") == 0) {
		otlp.root = ALWAYS_OFF;
	} else if (strcmp(root, "traceidratio") == 0) {
		otlp.root = RATIO;
		const char *arg = env("OTEL_TRACES_SAMPLER_ARG");
		char *end = NULL;
		errno = 0;
		if (arg)
			otlp.ratio = strtod(arg, &end);
		if (arg && (errno || *end || end == arg || !(otlp.ratio >= 0) ||
			otlp.ratio > 1)) {
			off("OTEL_TRACES_SAMPLER_ARG", "want a ratio 0 to 1");
			return -1;
		}
	} else {
		off("OTEL_TRACES_SAMPLER", "want always_on, always_off, "
		    "traceidratio, or one of them after parentbased_");
		return -1;
	}
	return 0;
}

static int
endpoint(void)
{
	const char *var = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
	const char *u = env(var);
	if (u) {
		otlp.url = bakery_xstrdup(u);
	} else {
		u = env(var = "OTEL_EXPORTER_OTLP_ENDPOINT");
		if (!u)
			return -1;
		size_t n = strlen(u);
		while (n && u[n - 1] == '/')
			n--;
		otlp.url = bakery_xasprintf("%.*s/v1/traces", (int)n, u);
	}
	otlp.url_var = var;
	/* A URL too plain for libcurl to read otherwise is checked by it at
	 * the first send, when libcurl is loaded to send: a program that
	 * records no span never loads it. */
	if (url_plain_http(otlp.url))
		return 0;
	otlp.url_checked = 1;
	const char *why;
	int rc = url_check_http(otlp.url, &why);
	if (rc) {
		off(var, rc == EX_CONFIG ? why : bakery_error());
		return -1;
	}
	return 0;
}

static int
settings(void)
{
	if (endpoint())
		return -1;
	const char *h = env("OTEL_EXPORTER_OTLP_HEADERS");
	if (h && pairs(h, header, NULL)) {
		off("OTEL_EXPORTER_OTLP_HEADERS", "want key=value,... "
		    "(percent-encoded), a key an HTTP token");
		return -1;
	}
	const char *service = env("OTEL_SERVICE_NAME");
	if (service && !bakery_utf8_valid(service, strlen(service))) {
		off("OTEL_SERVICE_NAME", "not UTF-8");
		return -1;
	}
	otlp.resource = jv_array_append(jv_array(),
	    attribute("service.name", jv_object_set(jv_object(),
		jv_string("stringValue"),
		jv_string(service ? service : bakery_prog))));
	const char *ra = env("OTEL_RESOURCE_ATTRIBUTES");
	if (ra && pairs(ra, resource_attr, NULL)) {
		off("OTEL_RESOURCE_ATTRIBUTES", "want key=value,... "
		    "(percent-encoded)");
		return -1;
	}
	if (timeout() || sampler())
		return -1;
	/* Every request begins alike: written once. */
	json_buf b = { 0 };
	json_buf_lit(&b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":");
	size_t n;
	char *attrs = json_dump(otlp.resource, &n);
	otlp.resource = jv_invalid();
	json_buf_put(&b, attrs, n);
	free(attrs);
	json_buf_lit(&b, "},\"scopeSpans\":[{\"scope\":{\"name\":\"bakery\","
	    "\"version\":");
	json_buf_str(&b, BAKERY_VERSION);
	json_buf_lit(&b, "},\"spans\":[");
	otlp.head = json_buf_take(&b, &otlp.head_len);
	return 0;
}

int
otlp_on(void)
{
	if (otlp.read)
		return otlp.on;
	otlp.read = 1;
	if (!env("OTEL_EXPORTER_OTLP_ENDPOINT") &&
	    !env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
		return 0;
	const char *disabled = env("OTEL_SDK_DISABLED");
	if (disabled && strcasecmp(disabled, "true") == 0)
		return 0;
	otlp.on = settings() == 0;
	if (!otlp.on) {
		free(otlp.url);
		otlp.url = NULL;
		for (size_t i = 0; i < otlp.nheader; i++)
			free(otlp.header[i]);
		free(otlp.header);
		otlp.header = NULL;
		otlp.nheader = 0;
		jv_free(otlp.resource);
		otlp.resource = jv_invalid();
	}
	return otlp.on;
}

int
otlp_sample(const trace_ctx *parent, const char *trace_id)
{
	if (parent && otlp.parent_based)
		return (bakery_hex_value(parent->flags[1]) & 1) != 0;
	switch (otlp.root) {
	case ALWAYS_ON:
		return 1;
	case ALWAYS_OFF:
		return 0;
	default: {
		if (otlp.ratio >= 1 || otlp.ratio <= 0)
			return otlp.ratio >= 1;
		/* The trace id's last 16 hex digits against the ratio: every
		 * process decides alike for one trace. */
		unsigned long long v = strtoull(trace_id + 16, NULL, 16);
		return (double)v < otlp.ratio * 18446744073709551616.0;
	}
	}
}

static size_t
discard(char *p, size_t size, size_t n, void *data)
{
	(void)p;
	(void)data;
	return size * n;
}

/* Adds n to the count, under the flock of HOME/.spans-dropped.lock so
 * that two programs that failed together both count. */
static void
count_dropped(size_t n)
{
	if (!otlp.home || n == 0)
		return;
	/* Only in a home bakery made (its mark there): never in a folder
	 * that is not one. */
	char *mark = bakery_xasprintf("%s/" HOME_MARK, otlp.home);
	int home = access(mark, F_OK) == 0;
	free(mark);
	if (!home)
		return;
	char *path = bakery_xasprintf("%s/.spans-dropped", otlp.home);
	char *lock = bakery_xasprintf("%s.lock", path);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	int64_t had = otlp_dropped(otlp.home);
	char text[32];
	snprintf(text, sizeof text, "%lld\n", (long long)had + (long long)n);
	if (fd < 0 || file_put(path, text, 0644, 1, NULL))
		bakery_log(LOG_WARN, "spans_dropped", "error", fd < 0
		    ? "cannot open the count's lock" : bakery_error(),
		    (char *)NULL);
	if (fd >= 0)
		close(fd);
	free(lock);
	free(path);
}

/* libcurl loaded, the URL checked by its parser, and the request's
 * headers made, once, at the first send; else -1 and why in err.
 * curl_global_init once for the process and no cleanup: a cleanup and an
 * init again after it is what breaks (OpenSSL's state, freed, used). */
static int
start_curl(char err[CURL_ERROR_SIZE])
{
	if (otlp.curl)
		return 0;
	const char *why;
	int rc = lazy_curl();
	if (!rc && !otlp.url_checked && (rc = url_check_http(otlp.url, &why)))
		snprintf(err, CURL_ERROR_SIZE, "%s: %s", otlp.url_var,
		    rc == EX_CONFIG ? why : bakery_error());
	else if (rc)
		snprintf(err, CURL_ERROR_SIZE, "%s", bakery_error());
	else if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		snprintf(err, CURL_ERROR_SIZE, "curl_global_init failed");
	if (err[0])
		return -1;
	otlp.url_checked = 1;
	struct curl_slist *l = curl_slist_append(NULL,
	    "Content-Type: application/json");
	for (size_t i = 0; l && i < otlp.nheader; i++)
		l = curl_slist_append(l, otlp.header[i]);
	if (l)
		l = curl_slist_append(l, "Expect:");
	if (!l) {
		snprintf(err, CURL_ERROR_SIZE, "out of memory");
		return -1;
	}
	otlp.headers = l;
	otlp.curl = 1;
	return 0;
}

/* 0 when the collector took the request (2xx), else why not in err. */
static int
post(const char *body, size_t len, char err[CURL_ERROR_SIZE])
{
	err[0] = '\0';
	if (start_curl(err))
		return -1;
	CURL *curl = curl_easy_init();
	if (!curl) {
		snprintf(err, CURL_ERROR_SIZE, "curl_easy_init failed");
		return -1;
	}
	url_post_setopt(curl, &(url_post){ .url = otlp.url,
	    .connect_ms = otlp.timeout_ms, .timeout_ms = otlp.timeout_ms,
	    .headers = otlp.headers, .body = body, .len = len,
	    .errbuf = err, .on_body = discard, .on_header = discard });
	CURLcode c = curl_easy_perform(curl);
	long code = 0;
	if (c == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	if (c != CURLE_OK && !err[0])
		snprintf(err, CURL_ERROR_SIZE, "%s", curl_easy_strerror(c));
	else if (c == CURLE_OK && (code < 200 || code > 299))
		snprintf(err, CURL_ERROR_SIZE, "the collector answered %ld",
		    code);
	curl_easy_cleanup(curl);
	return c == CURLE_OK && code >= 200 && code <= 299 ? 0 : -1;
}

void
otlp_send(const char *spans, size_t len, size_t n)
{
	if (!otlp.on || n == 0)
		return;
	/* The request: its head, the spans, and what closes them. */
	static const char tail[] = "]}]}]}";
	size_t size = otlp.head_len + len + sizeof tail - 1;
	char *text = bakery_xmalloc(size + 1);
	memcpy(text, otlp.head, otlp.head_len);
	memcpy(text + otlp.head_len, spans, len);
	memcpy(text + otlp.head_len + len, tail, sizeof tail);
	char err[CURL_ERROR_SIZE] = "an earlier send failed";
	/* One failed send and the process tries no more: its whole export
	 * stays within one timeout. */
	if (otlp.gone || (otlp.gone = post(text, size, err) != 0)) {
		char count[24];
		snprintf(count, sizeof count, "%zu", n);
		bakery_log(LOG_WARN, "spans_not_sent", "spans", count,
		    "error", err, (char *)NULL);
		count_dropped(n);
	}
	free(text);
}

int64_t
otlp_dropped(const char *home)
{
	char *path = bakery_xasprintf("%s/.spans-dropped", home);
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return 0;
	char line[32] = "";
	long long v = 0;
	if (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (bakery_parse_number(line, 0, INT64_MAX, &v))
			v = 0;
	}
	fclose(f);
	return v;
}
