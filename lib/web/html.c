/*
 * html.c — HTML written so that no value can become markup (html.h).
 */
#include "html.h"
#include "../base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
put(html *h, const char *s, size_t n)
{
	if (h->len + n + 1 > h->cap) {
		size_t cap = h->cap ? h->cap : 4096;
		while (cap < h->len + n + 1)
			cap *= 2;
		h->buf = bakery_xrealloc(h->buf, cap);
		h->cap = cap;
	}
	memcpy(h->buf + h->len, s, n);
	h->len += n;
	h->buf[h->len] = '\0';
}

void
html_raw(html *h, const char *markup)
{
	put(h, markup, strlen(markup));
}

/* The length of the valid UTF-8 sequence at s (len bytes left), or 0. */
static size_t
sequence_at(const char *s, size_t len)
{
	unsigned char c = (unsigned char)s[0];
	size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	return n <= len && bakery_utf8_valid(s, n) ? n : 0;
}

void
html_text(html *h, const char *s)
{
	if (!s)
		return;
	size_t len = strlen(s);
	for (size_t i = 0, n; i < len; i += n) {
		unsigned char c = (unsigned char)s[i];
		n = 1;
		switch (c) {
		case '&': put(h, "&amp;", 5); continue;
		case '<': put(h, "&lt;", 4); continue;
		case '>': put(h, "&gt;", 4); continue;
		case '"': put(h, "&quot;", 6); continue;
		case '\'': put(h, "&#39;", 5); continue;
		case '\t': case '\n': put(h, s + i, 1); continue;
		}
		if (c < ' ' || c == 0x7f || !(n = sequence_at(s + i, len - i))) {
			n = 1;
			put(h, "\xef\xbf\xbd", 3); /* U+FFFD */
			continue;
		}
		put(h, s + i, n);
	}
}

void
html_f(html *h, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char num[32];
	for (const char *p = fmt; *p; p++) {
		const char *pct = strchr(p, '%');
		if (!pct) {
			put(h, p, strlen(p));
			break;
		}
		put(h, p, (size_t)(pct - p));
		p = pct + 1;
		if (*p == 's') {
			html_text(h, va_arg(ap, const char *));
		} else if (*p == 'd') {
			put(h, num, (size_t)snprintf(num, sizeof num, "%d",
			    va_arg(ap, int)));
		} else if (p[0] == 'l' && p[1] == 'd') {
			p++;
			put(h, num, (size_t)snprintf(num, sizeof num, "%ld",
			    va_arg(ap, long)));
		} else if (p[0] == 'l' && p[1] == 'l' && p[2] == 'd') {
			p += 2;
			put(h, num, (size_t)snprintf(num, sizeof num, "%lld",
			    va_arg(ap, long long)));
		} else if (p[0] == 'z' && p[1] == 'u') {
			p++;
			put(h, num, (size_t)snprintf(num, sizeof num, "%zu",
			    va_arg(ap, size_t)));
		} else if (*p == '%') {
			put(h, "%", 1);
		} else {
			abort(); /* a conversion html_f does not know: a bug */
		}
	}
	va_end(ap);
}

void
html_money(html *h, double cents)
{
	long long c = cents < 0 ? 0 : cents > 1e15 ? (long long)1e15
	    : (long long)cents;
	char num[32];
	put(h, num, (size_t)snprintf(num, sizeof num, "%lld.%02lld", c / 100,
	    c % 100));
}

void
html_free(html *h)
{
	free(h->buf);
	*h = (html){ 0 };
}
