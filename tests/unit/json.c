/*
 * json.c — json_dump writes what jv_dump_string(v, 0) writes, byte for
 * byte: the state, the envelopes and the result lines bakery writes with
 * it read back the same. json_parse reads what libjq reads, and refuses a
 * repeated key, an escaped NUL and invalid UTF-8 wherever they are.
 */
#include "tap.h"

#include <math.h>
#include <stdlib.h>

#include "../../lib/base/json.h"
#include "../../lib/base/util.h"

/* Whether json_dump and libjq write v (consumed) the same. */
static int
same(jv v, const char *what)
{
	jv want = jv_dump_string(jv_copy(v), 0);
	size_t len;
	char *got = json_dump(v, &len);
	int eq = len == (size_t)jv_string_length_bytes(jv_copy(want)) &&
	    memcmp(got, jv_string_value(want), len) == 0 && got[len] == '\0';
	if (!eq)
		printf("# %s: got %s, want %s\n", what, got, jv_string_value(want));
	free(got);
	jv_free(want);
	return eq;
}

/* json_parse's exit code for text. */
static int
parsed(const char *text)
{
	jv v;
	int rc = json_parse(text, strlen(text), &v);
	jv_free(v);
	return rc;
}

static int
same_text(const char *json)
{
	jv v = jv_parse(json);
	return jv_is_valid(v) ? same(v, json) : (jv_free(v), 0);
}

/* Whether json_buf_str writes s as libjq writes jv_string(s). */
static int
same_str(const char *s)
{
	json_buf b = { 0 };
	json_buf_put(&b, "[", 1);
	json_buf_str(&b, s);
	json_buf_put(&b, "]", 1);
	char *got = json_buf_take(&b, NULL);
	jv want = jv_dump_string(JV_ARRAY(jv_string(s)), 0);
	int eq = strcmp(got, jv_string_value(want)) == 0 && b.p == NULL &&
	    b.n == 0;
	if (!eq)
		printf("# got %s, want %s\n", got, jv_string_value(want));
	free(got);
	jv_free(want);
	return eq;
}

/* The buffer written piece by piece: many pieces, the buffer moved as it
 * grew, taken, then written again from empty. */
static void
json_buf_pieces(void)
{
	ok(same_str("") && same_str("plain") &&
	    same_str("q\" b\\ \x01\x1f\x7f\n\t\r\b\f") &&
	    same_str("é ✓ 😀"),
	    "json_buf_str: escapes and UTF-8 written as libjq writes them");
	ok(same_str("bad \xff byte") && same_str("\xc3") &&
	    same_str("over\xc0\xaflong") && same_str("\xed\xa0\x80 half") &&
	    same_str("é then \xe2\x9c"),
	    "json_buf_str: invalid UTF-8 made a string as jv_string makes it");
	json_buf b = { 0 };
	jv want = jv_array();
	for (int i = 0; i < 5000; i++) {
		json_buf_put(&b, i ? ",[" : "[[", 2);
		json_buf_int(&b, (int64_t)i * 1000003 - 2500000000LL);
		json_buf_put(&b, ",", 1);
		json_buf_str(&b, i % 2 ? "odd\"" : "even");
		json_buf_put(&b, "]", 1);
		want = jv_array_append(want, JV_ARRAY(
		    jv_number((double)((int64_t)i * 1000003 - 2500000000LL)),
		    jv_string(i % 2 ? "odd\"" : "even")));
	}
	json_buf_put(&b, "]", 1);
	size_t len;
	char *text = json_buf_take(&b, &len);
	jv w = jv_dump_string(want, 0);
	ok(len == strlen(text) && strcmp(text, jv_string_value(w)) == 0,
	    "json_buf: 5000 pieces, the buffer grown many times, read back "
	    "as libjq writes the same");
	free(text);
	jv_free(w);
	ok(b.p == NULL && b.n == 0 && b.cap == 0,
	    "json_buf_take leaves the buffer empty");
	json_buf_put(&b, "{}", 2);
	text = json_buf_take(&b, &len);
	ok(len == 2 && strcmp(text, "{}") == 0,
	    "a buffer taken is written again from empty");
	free(text);
	json_buf_int(&b, INT64_MIN);
	json_buf_put(&b, " ", 1);
	json_buf_int(&b, INT64_MAX);
	json_buf_put(&b, " ", 1);
	json_buf_int(&b, 0);
	text = json_buf_take(&b, NULL);
	is_str(text, "-9223372036854775808 9223372036854775807 0",
	    "json_buf_int: the smallest, the largest, 0");
	free(text);
	text = json_buf_take(&b, &len);
	ok(len == 0 && text[0] == '\0', "an empty buffer taken is \"\"");
	free(text);
	json_buf_str(&b, "x");
	json_buf_free(&b);
	ok(b.p == NULL && b.n == 0 && b.cap == 0, "json_buf_free empties it");
}

int
main(void)
{
	ok(same_text("null") && same_text("true") && same_text("false") &&
	    same_text("[]") && same_text("{}") && same_text("\"\""),
	    "the constants and empty containers are written as libjq writes them");
	ok(same_text("[0,1,-1,450,999999999999999,-999999999999999,"
		  "1000000000000000,100000000000000000,123456789012345678,"
		  "1e15,1e16,1e17,1e300,-1e300]"),
	    "whole numbers, small and past 10^15, are written as libjq writes them");
	ok(same_text("[0.1,1.5,-2.25,1e-7,3.141592653589793,0.30000000000000004]"),
	    "fractions are written as libjq writes them");
	ok(same(JV_ARRAY(jv_number(-0.0), jv_number(NAN), jv_number(INFINITY),
		    jv_number(-INFINITY)), "-0, nan, inf"),
	    "-0, NaN and the infinities are written as libjq writes them");
	char ctl[32 * 6 + 64] = "\"";
	for (int c = 1; c < 32; c++)
		snprintf(ctl + strlen(ctl), 8, "\\u%04x", c);
	strcat(ctl, "\\u0000 \\u007f \\\" \\\\ / é ✓ 😀 \\u2028 end\"");
	ok(same_text(ctl), "every control byte, NUL, DEL, quote, backslash "
	    "and UTF-8 in a string are written as libjq writes them");
	ok(same_text("{\"b\":1,\"a\":{\"z\":[1,{\"y\":null}],\"\\n\":\"x\"},"
		  "\"c\":[[],[{}]],\"d\":\"q\\\"\"}"),
	    "nested objects and arrays keep libjq's key order");
	jv o = jv_object();
	char key[16];
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof key, "k%d", (i * 37) % 200);
		o = jv_object_set(o, jv_string(key), jv_number(i));
	}
	for (int i = 0; i < 200; i += 3) {
		snprintf(key, sizeof key, "k%d", i);
		o = jv_object_delete(o, jv_string(key));
	}
	o = jv_object_set(o, jv_string("k0"), jv_string("back"));
	ok(same(o, "200 keys"), "an object grown past its first size, keys "
	    "deleted and set again, keeps libjq's key order");
	jv deep = jv_number(1);
	for (int i = 0; i < 200; i++)
		deep = i % 2 ? JV_ARRAY(deep) : JV_OBJECT(jv_string("d"), deep);
	ok(same(deep, "deep"), "200 levels deep are written as libjq writes them");
	ok(same_text("{\"day\":\"2026-12-01\",\"holds\":[],\"reservations\":"
		  "[{\"order\":\"ord_0123456789abcdef01234567\",\"customer\":"
		  "\"c1\",\"items\":[{\"item\":\"cardamom-bun\",\"qty\":1,"
		  "\"price_cents\":450}]}]}"),
	    "a schedule's state is written as libjq writes it");

	ok(parsed("{\"a\":1,\"b\":[{\"a\":1},{\"a\":2}],\"c\":{\"a\":{}}}")
	    == 0, "json_parse: the same key in different objects is no repeat");
	ok(parsed("{\"a\":\"b\\\":c\",\"d\":[\"e:\",\"\\\\\",\"f\"] , \"g\" :1}")
	    == 0, "json_parse: a colon or an escaped quote inside a string is "
	    "no key");
	ok(parsed("{\"cmd\":\"show\",\"cmd\":\"place\"}") == EX_DATAERR,
	    "json_parse: a key named twice is refused");
	ok(parsed("[1,{\"x\":{\"y\":1,\"z\":2,\"y\":3}}]") == EX_DATAERR,
	    "json_parse: a key named twice deep inside is refused");
	ok(parsed("{\"key\":\"a\", \"k\\u0065y\" : \"b\"}") == EX_DATAERR,
	    "json_parse: a key named twice, once escaped, is refused");
	ok(parsed("{\"a\":{\"x\":1},\"a\":{\"y\":2}}") == EX_DATAERR,
	    "json_parse: a repeated key whose values are objects is refused");
	ok(parsed("{\"key\":\"order-42\\u0000\"}") == EX_DATAERR &&
	    parsed("{\"k\\u0000\":1}") == EX_DATAERR &&
	    parsed("[[\"cardamom-bun=1\\u0000junk\"]]") == EX_DATAERR,
	    "json_parse: an escaped NUL in a value, a key or deep in an array "
	    "is refused");
	ok(parsed("\"\xff\"") == EX_DATAERR && parsed("{\"a\":1") == EX_DATAERR,
	    "json_parse: invalid UTF-8 and unfinished text are refused");
	ok(parsed("\"\\u00e9\\ud83d\\ude00\"") == 0,
	    "json_parse: escaped UTF-16 pairs are text");
	json_buf_pieces();
	return done_testing();
}
