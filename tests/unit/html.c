/*
 * html.c — values written into a page stay text; forms and cookies are
 * read strictly (lib/web/html.h, lib/web/form.h).
 */
#include "tap.h"

#include <stdlib.h>

#include "../../lib/web/form.h"
#include "../../lib/web/html.h"
#include "../../lib/base/util.h"

static void
escaped(const char *value, const char *want, const char *what)
{
	html h = { 0 };
	html_f(&h, "<td title=\"%s\">%s</td>", value, value);
	char *expect = bakery_xasprintf("<td title=\"%s\">%s</td>", want, want);
	is_str(h.buf, expect, "%s", what);
	free(expect);
	html_free(&h);
}

static void
malformed(const char *text, const char *what)
{
	form f;
	is_int(form_parse(text, strlen(text), &f), EX_DATAERR,
	    "%s is malformed", what);
	ok(f.n == 0, "  and gives no field");
	form_free(&f);
}

int
main(void)
{
	escaped("<script>alert(1)</script>",
	    "&lt;script&gt;alert(1)&lt;/script&gt;", "a script is text");
	escaped("\"><img src=x onerror=alert(1)>",
	    "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;",
	    "a quote cannot end an attribute");
	escaped("1 'Main' St & Co", "1 &#39;Main&#39; St &amp; Co",
	    "an apostrophe and an ampersand are entities");
	escaped("a\x01" "b\x7f" "c", "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c",
	    "control characters become U+FFFD");
	escaped("\xc3\x28 \xe2\x82\xac", "\xef\xbf\xbd( \xe2\x82\xac",
	    "invalid UTF-8 becomes U+FFFD, valid stays");
	html h = { 0 };
	html_f(&h, "%d %ld %lld %zu %% %s", -1, 2L, 3LL, (size_t)4,
	    getenv("BAKERY_TEST_UNSET_VARIABLE"));
	is_str(h.buf, "-1 2 3 4 % ", "numbers are written, NULL is nothing");
	html_free(&h);
	html_money(&h, 1800);
	is_str(h.buf, "18.00", "cents as euros");
	html_free(&h);

	form f;
	const char *v;
	is_int(form_parse("a=1&b=x+y%21&c=&&d=%C3%A9", 25, &f), 0,
	    "a good form is read");
	ok(form_one(&f, "b", &v) == 1 && strcmp(v, "x y!") == 0,
	    "  '+' is a space and %%21 is '!'");
	ok(form_one(&f, "c", &v) == 1 && *v == '\0', "  an empty value is empty");
	ok(form_one(&f, "d", &v) == 1 && strcmp(v, "\xc3\xa9") == 0,
	    "  UTF-8 is decoded");
	ok(form_one(&f, "z", &v) == 0 && v == NULL, "  an absent field is 0");
	form_free(&f);
	is_int(form_parse("id=a&id=b&csrf=1&csrf=2", 23, &f), 0,
	    "repeated fields are read");
	ok(form_nth(&f, "id", 0) && strcmp(form_nth(&f, "id", 1), "b") == 0 &&
	    !form_nth(&f, "id", 2), "  in the order sent");
	is_int(form_one(&f, "csrf", &v), -1, "  a field that must come once "
	    "and comes twice is refused");
	ok(v == NULL, "  with no value");
	form_free(&f);
	malformed("a=%4", "a cut escape");
	malformed("a=%zz", "a bad escape");
	malformed("a=%00", "a NUL byte");
	malformed("a=%C3%28", "invalid UTF-8");
	malformed("=1", "a field without a name");
	malformed("a", "a field without '='");
	char many[FORM_MAX_FIELDS * 4 + 8] = "";
	for (int i = 0; i <= FORM_MAX_FIELDS; i++)
		strcat(many, "a=1&");
	malformed(many, "more than FORM_MAX_FIELDS fields");
	is_int(form_parse("a=1\0b=2", 7, &f), EX_DATAERR, "a raw NUL is malformed");
	form_free(&f);

	char c[65];
	is_int(form_cookie("x=1; bakery_session=abc; y=2", "bakery_session", c,
	    sizeof c), 1, "a cookie is found among others");
	is_str(c, "abc", "  with its value");
	is_int(form_cookie("x=1", "bakery_session", c, sizeof c), 0,
	    "an absent cookie is 0");
	is_int(form_cookie("bakery_session=a; bakery_session=b",
	    "bakery_session", c, sizeof c), -1, "a cookie sent twice is refused");
	is_int(form_cookie("xbakery_session=a", "bakery_session", c, sizeof c),
	    0, "a cookie whose name ends with ours is not ours");
	is_int(form_cookie("bakery_session=0123456789", "bakery_session", c, 5),
	    -1, "a cookie too long is refused");

	/* The one percent decoder, a form's ('+' a blank) and a header's. */
	size_t n;
	char *d = bakery_percent_decode("a+b%2Bc%C3%A9", 13, 1, &n);
	is_str(d, "a b+c\xc3\xa9", "a form's '+' is a blank, %%2B a plus");
	is_int((long)n, 7, "  its length");
	free(d);
	d = bakery_percent_decode("a+b", 3, 0, &n);
	is_str(d, "a+b", "a header's '+' is a plus");
	free(d);
	ok(!bakery_percent_decode("a%2", 3, 0, &n), "a cut %%XX is refused");
	ok(!bakery_percent_decode("a%zz", 4, 0, &n), "a %%XX not hex is refused");
	ok(!bakery_percent_decode("a%00b", 5, 0, &n), "a NUL is refused");
	ok(!bakery_percent_decode("%C3%28", 6, 0, &n), "bad UTF-8 is refused");
	return done_testing();
}
