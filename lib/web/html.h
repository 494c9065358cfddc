/*
 * html.h — HTML written so that no value can become markup.
 *
 * A page is built in a growing buffer. The format strings are the page's
 * own markup, literals of the program; every value handed to them goes
 * through html_text, which writes & < > " ' as entities (so a value is
 * text inside an element and inside a quoted attribute alike), a control
 * character (but tab and newline) or a byte of invalid UTF-8 as U+FFFD.
 * There is no way to put a value in unescaped but html_raw, which takes
 * markup the program wrote itself.
 *
 * html_f is a printf of its own: %s (escaped text; NULL writes nothing),
 * %d, %ld, %lld and %zu, and %%. The compiler checks the arguments as it
 * would printf's; a conversion outside that set aborts, since it is a
 * mistake in the program, never in its input.
 */
#ifndef BAKERY_HTML_H
#define BAKERY_HTML_H

#include <stddef.h>

typedef struct html {
	char *buf; /* NUL-terminated; NULL until the first write */
	size_t len, cap;
} html;

/* Markup the program wrote: appended as it is. */
void html_raw(html *h, const char *markup);
/* A value: appended as text (the escaping above). */
void html_text(html *h, const char *s);
void html_f(html *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Cents as "12.50" (cents from 0 to 10^15). */
void html_money(html *h, double cents);
void html_free(html *h);

#endif
