/*
 * tracectx.c — W3C Trace Context: traceparent and tracestate
 * (tracectx.h).
 */
#include "tracectx.h"
#include "log.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

static int
lower_hex(const char *s, size_t n, int *nonzero)
{
	*nonzero = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
		*nonzero |= c != '0';
	}
	return 1;
}

int
tracectx_parse(const char *s, trace_ctx *t)
{
	int nz_trace, nz_span, nz;
	if (!s || strlen(s) != TRACEPARENT_LEN || strncmp(s, "00-", 3) != 0 ||
	    s[35] != '-' || s[52] != '-' ||
	    !lower_hex(s + 3, 32, &nz_trace) || !nz_trace ||
	    !lower_hex(s + 36, 16, &nz_span) || !nz_span ||
	    !lower_hex(s + 53, 2, &nz))
		return -1;
	memcpy(t->trace_id, s + 3, 32);
	t->trace_id[32] = '\0';
	memcpy(t->span_id, s + 36, 16);
	t->span_id[16] = '\0';
	memcpy(t->flags, s + 53, 2);
	t->flags[2] = '\0';
	return 0;
}

static int
lcalpha(char c)
{
	return c >= 'a' && c <= 'z';
}

static int
key_char(char c)
{
	return lcalpha(c) || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	    c == '*' || c == '/';
}

/* W3C's key: simple-key, or tenant-id "@" system-id. */
static int
key_valid(const char *k, size_t n)
{
	const char *at = memchr(k, '@', n);
	if (!at) {
		if (n < 1 || n > 256 || !lcalpha(k[0]))
			return 0;
		for (size_t i = 1; i < n; i++)
			if (!key_char(k[i]))
				return 0;
		return 1;
	}
	size_t tn = (size_t)(at - k), sn = n - tn - 1;
	if (tn < 1 || tn > 241 || sn < 1 || sn > 14 || !lcalpha(at[1]) ||
	    !(lcalpha(k[0]) || (k[0] >= '0' && k[0] <= '9')))
		return 0;
	for (size_t i = 1; i < tn; i++)
		if (!key_char(k[i]))
			return 0;
	for (size_t i = 2; i <= sn; i++)
		if (!key_char(at[i]))
			return 0;
	return 1;
}

/* W3C's value: 0 to 255 printable ASCII but ',' and '=', the last not a
 * space. */
static int
value_valid(const char *v, size_t n)
{
	if (n < 1 || n > 256 || v[n - 1] == ' ')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
			return 0;
	return 1;
}

_Static_assert(TRACESTATE_MAX == 512 && TRACESTATE_MEMBERS == 32,
    "tracectx_state_check's messages name the limits");

const char *
tracectx_state_check(const char *s)
{
	size_t len = strlen(s);
	if (len > TRACESTATE_MAX)
		return "over 512 bytes";
	const char *keys[TRACESTATE_MEMBERS];
	size_t key_len[TRACESTATE_MEMBERS];
	int members = 0;
	for (const char *p = s; ; p++) {
		size_t n = strcspn(p, ",");
		const char *m = p, *end = p + n;
		while (m < end && (*m == ' ' || *m == '\t'))
			m++;
		while (end > m && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (m < end) { /* an empty member is allowed, and not counted */
			const char *eq = memchr(m, '=', (size_t)(end - m));
			if (!eq || !key_valid(m, (size_t)(eq - m)) ||
			    !value_valid(eq + 1, (size_t)(end - eq - 1)))
				return "a list member not key=value";
			if (members == TRACESTATE_MEMBERS)
				return "more than 32 list members";
			for (int i = 0; i < members; i++)
				if (key_len[i] == (size_t)(eq - m) &&
				    memcmp(keys[i], m, key_len[i]) == 0)
					return "a key twice";
			keys[members] = m;
			key_len[members++] = (size_t)(eq - m);
		}
		p += n;
		if (!*p)
			break;
	}
	return NULL;
}

void
tracectx_new(trace_ctx *t)
{
	unsigned char raw[24];
	do
		bakery_random_bytes(raw, sizeof raw);
	while (!memcmp(raw, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) ||
	    !memcmp(raw + 16, "\0\0\0\0\0\0\0\0", 8));
	bakery_hex(raw, 16, t->trace_id);
	bakery_hex(raw + 16, 8, t->span_id);
	memcpy(t->flags, "01", 3);
	t->state[0] = '\0';
}

void
tracectx_child(const trace_ctx *parent, trace_ctx *child)
{
	unsigned char raw[8];
	do
		bakery_random_bytes(raw, sizeof raw);
	while (!memcmp(raw, "\0\0\0\0\0\0\0\0", 8));
	if (child != parent)
		*child = *parent;
	bakery_hex(raw, 8, child->span_id);
}

int
tracectx_read(const char *traceparent, const char *tracestate, trace_ctx *t)
{
	if (tracectx_parse(traceparent, t)) {
		tracectx_new(t);
		return 0;
	}
	t->state[0] = '\0';
	if (tracestate && !tracectx_state_check(tracestate))
		memcpy(t->state, tracestate, strlen(tracestate) + 1);
	return 1;
}

void
tracectx_format(const trace_ctx *t, char out[TRACEPARENT_SIZE])
{
	memcpy(out, "00-", 3);
	memcpy(out + 3, t->trace_id, 32);
	out[35] = '-';
	memcpy(out + 36, t->span_id, 16);
	out[52] = '-';
	memcpy(out + 53, t->flags, 2);
	out[55] = '\0';
}

static void
dropped(const char *field, const char *why, const char *from,
    const char *id)
{
	bakery_log(LOG_WARN, "trace_dropped", "field", field, "from", from,
	    "error", why, id ? "id" : (char *)NULL, id, (char *)NULL);
}

int
tracectx_from(const char *traceparent, const char *tracestate,
    const char *from, const char *id, trace_ctx *t)
{
	int drop = 0;
	if (!traceparent || tracectx_parse(traceparent, t)) {
		if (traceparent) {
			dropped("traceparent", "not 00-TRACEID-PARENTID-FLAGS "
			    "(W3C Trace Context): a new trace instead", from, id);
			drop = 1;
		}
		tracectx_new(t);
		if (tracestate && !drop) {
			dropped("tracestate", "no traceparent with it", from,
			    id);
			drop = 1;
		}
		return drop;
	}
	t->state[0] = '\0';
	if (tracestate) {
		const char *why = tracectx_state_check(tracestate);
		if (why) {
			dropped("tracestate", why, from, id);
			drop = 1;
		} else {
			memcpy(t->state, tracestate, strlen(tracestate) + 1);
		}
	}
	return drop;
}

static _Thread_local struct {
	int set;
	trace_ctx t;
} current;

int
tracectx_environment(trace_ctx *t)
{
	static int read, given;
	static trace_ctx env;
	if (!read) {
		read = 1;
		const char *p = getenv("TRACEPARENT");
		if (p) {
			tracectx_from(p, getenv("TRACESTATE"), "TRACEPARENT",
			    NULL, &env);
			given = 1;
		}
	}
	if (given)
		*t = env;
	return given;
}

void
tracectx_set(const trace_ctx *t)
{
	current.set = t != NULL;
	if (t)
		current.t = *t;
}

int
tracectx_current(trace_ctx *t)
{
	if (current.set)
		*t = current.t;
	return current.set;
}

static int own;

void
tracectx_own(int on)
{
	own = on;
}

void
tracectx_next(trace_ctx *t)
{
	if (current.set && own)
		*t = current.t;
	else if (current.set)
		tracectx_child(&current.t, t);
	else if (tracectx_environment(t))
		tracectx_child(t, t);
	else
		tracectx_new(t);
}

int
tracectx_set_request(void)
{
	trace_ctx t;
	const char *p = getenv("HTTP_TRACEPARENT");
	tracectx_from(p, getenv("HTTP_TRACESTATE"), "header", NULL, &t);
	tracectx_set(&t);
	/* A tracestate dropped leaves the header's traceparent. */
	trace_ctx check;
	return p && tracectx_parse(p, &check) == 0;
}
