/*
 * envelope.c — envelope_parse, envelope_new/dump, envelope_each_line.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/core/envelope.h"
#include "../../lib/base/util.h"

static const char *valid =
    "{\"specversion\":\"1.0\",\"id\":\"evt_1\",\"type\":\"OrderPlaced\","
    "\"source\":\"bakery:default/order/ord_1\",\"subject\":\"order/ord_1\","
    "\"time\":\"2026-11-30T10:00:00.000Z\","
    "\"datacontenttype\":\"application/json\",\"sandbox\":\"default\","
    "\"data\":{\"order\":\"ord_1\",\"day\":\"2026-11-30\"}}";

/* Parses text and expects EX_DATAERR with an error naming want. */
static void
rejects(const char *text, size_t len, const char *want, const char *what)
{
	jv env = jv_null();
	int rc = envelope_parse(text, len, &env);
	is_int(rc, EX_DATAERR, "rejects %s with EX_DATAERR", what);
	ok(strstr(bakery_error(), want) != NULL,
	    "error for %s says '%s' (%s)", what, want, bakery_error());
	ok(!jv_is_valid(env), "no envelope out for %s", what);
	jv_free(env);
}

/* The valid envelope with one field changed (value NULL: deleted). */
static char *
variant(const char *field, const char *json_value)
{
	jv e = jv_parse(valid);
	if (json_value)
		e = jv_object_set(e, jv_string(field), jv_parse(json_value));
	else
		e = jv_object_delete(e, jv_string(field));
	char *s = envelope_dump(e);
	jv_free(e);
	return s;
}

static void
rejects_variant(const char *field, const char *json_value, const char *want,
    const char *what)
{
	char *s = variant(field, json_value);
	rejects(s, strlen(s), want, what);
	free(s);
}

struct seen_lines {
	long lineno[8];
	char text[8][32];
	int n;
	int stop_at;
};

static int
collect(void *arg, const char *line, size_t len, long lineno)
{
	struct seen_lines *s = arg;
	if (s->n < 8) {
		s->lineno[s->n] = lineno;
		snprintf(s->text[s->n], sizeof s->text[0], "%.*s", (int)len, line);
	}
	s->n++;
	return s->stop_at && s->n == s->stop_at ? 42 : 0;
}

int
main(void)
{
	/* A valid envelope. */
	jv env = jv_null();
	int rc = envelope_parse(valid, strlen(valid), &env);
	is_int(rc, 0, "accepts a valid envelope");
	is_str(envelope_str(env, "id"), "evt_1", "id is read");
	is_str(envelope_str(env, "type"), "OrderPlaced", "type is read");
	is_str(envelope_data_str(env, "order"), "ord_1", "data.order is read");
	ok(envelope_str(env, "nope") == NULL, "a missing field is NULL");
	jv_free(env);

	/* Rejections. */
	rejects("{\"specversion\":", 15, "malformed JSON", "malformed JSON");
	rejects("", 0, "", "empty input");
	rejects("[1,2]", 5, "not a JSON object", "an array");
	rejects("\"evt\"", 5, "not a JSON object", "a string");
	rejects_variant("id", NULL, "missing 'id'", "missing id");
	rejects_variant("id", "\"\"", "missing 'id'", "empty id");
	rejects_variant("id", "7", "missing 'id'", "numeric id");
	rejects_variant("type", NULL, "missing 'type'", "missing type");
	rejects_variant("source", NULL, "missing 'source'", "missing source");
	rejects_variant("sandbox", NULL, "missing 'sandbox'", "missing sandbox");
	rejects_variant("specversion", NULL, "missing 'specversion'",
	    "missing specversion");
	rejects_variant("specversion", "\"0.3\"", "specversion '0.3'",
	    "specversion 0.3");
	rejects_variant("type", "\"OrderEaten\"", "unknown event type",
	    "an unknown type");
	rejects_variant("sandbox", "\"Bad\"", "bad sandbox name",
	    "an upper-case sandbox");
	rejects_variant("sandbox", "\"../etc\"", "bad sandbox name",
	    "a sandbox with a path");
	rejects_variant("data", "[1]", "'data' is not an object",
	    "data an array");
	rejects_variant("data", "\"x\"", "'data' is not an object",
	    "data a string");
	rejects_variant("data", NULL, "'data' is not an object",
	    "missing data");
	{
		/* The valid text with a NUL byte in the middle of a string. */
		size_t len = strlen(valid);
		char *buf = malloc(len);
		memcpy(buf, valid, len);
		char *at = strstr(buf, "evt_1");
		at[3] = '\0';
		rejects(buf, len, "NUL byte", "a NUL byte");
		free(buf);
	}
	{
		/* Two JSON values on one line are not one envelope. */
		char *two = malloc(2 * strlen(valid) + 2);
		sprintf(two, "%s %s", valid, valid);
		rejects(two, strlen(two), "malformed JSON", "two values");
		free(two);
	}

	/* envelope_new -> envelope_dump -> envelope_parse. */
	jv data = jv_object();
	data = jv_object_set(data, jv_string("order"), jv_string("ord_1"));
	data = jv_object_set(data, jv_string("total_cents"), jv_number(1350));
	jv made = envelope_new("default", "order/ord_1", "OrderPaid", data);
	const char *id = envelope_str(made, "id");
	ok(id && strncmp(id, "evt_", 4) == 0 && strlen(id) == 28,
	    "envelope_new gives an evt_ id of 24 hex digits (%s)", id);
	is_str(envelope_str(made, "source"), "bakery:default/order/ord_1",
	    "source names the sandbox and the address");
	is_str(envelope_str(made, "subject"), "order/ord_1", "subject is the address");
	is_str(envelope_str(made, "specversion"), "1.0", "specversion 1.0");
	char *line = envelope_dump(made);
	ok(strchr(line, '\n') == NULL, "the dump is one line");
	jv back = jv_null();
	rc = envelope_parse(line, strlen(line), &back);
	is_int(rc, 0, "the dump parses back");
	ok(jv_equal(jv_copy(made), jv_copy(back)),
	    "the parsed envelope equals the one made");
	jv other = envelope_new("default", "order/ord_1", "OrderPaid", jv_object());
	ok(strcmp(envelope_str(other, "id"), envelope_str(made, "id")) != 0,
	    "two envelopes get two ids");
	jv_free(other);
	jv_free(back);
	jv_free(made);
	free(line);

	/* envelope_each_line: line numbers count blank lines, which are skipped. */
	static char text[] = "one\n\n   \ntwo\r\n\t three\n\nfour";
	FILE *in = fmemopen(text, strlen(text), "r");
	struct seen_lines s = { .n = 0 };
	rc = envelope_each_line(in, collect, &s);
	fclose(in);
	is_int(rc, 0, "each_line returns 0 when every call does");
	is_int(s.n, 4, "four non-blank lines");
	is_int(s.lineno[0], 1, "'one' is line 1");
	is_str(s.text[0], "one", "line 1 text");
	is_int(s.lineno[1], 4, "'two' is line 4");
	is_str(s.text[1], "two", "line 4 text without CR");
	is_int(s.lineno[2], 5, "'three' is line 5");
	is_str(s.text[2], "three", "leading blanks are skipped");
	is_int(s.lineno[3], 7, "'four' without a newline is line 7");
	is_str(s.text[3], "four", "last line text");

	in = fmemopen(text, strlen(text), "r");
	struct seen_lines stop = { .n = 0, .stop_at = 2 };
	rc = envelope_each_line(in, collect, &stop);
	fclose(in);
	is_int(rc, 42, "each_line returns what the callback returned");
	is_int(stop.n, 2, "and stops there");

	/* The field getters with a placeholder (bakery-status, bakery-trace,
	 * payments): what is missing, of another kind, or no object at all. */
	jv doc = jv_parse("{\"n\":3,\"s\":\"x\",\"z\":\"a\\u0000b\"}");
	ok(envelope_number(doc, "n", -1) == 3, "envelope_number reads a number");
	ok(envelope_number(doc, "s", -1) == -1, "  a string is the placeholder");
	ok(envelope_number(doc, "none", 0) == 0, "  so is a missing field");
	jv arr = jv_parse("[1]");
	ok(envelope_number(arr, "n", 7) == 7, "  and an array");
	is_str(envelope_text(doc, "s", "-"), "x", "envelope_text reads a string");
	is_str(envelope_text(doc, "n", "-"), "-", "  a number is the placeholder");
	is_str(envelope_text(doc, "z", "-"), "-", "  so is a string with a NUL");
	is_str(envelope_text(arr, "s", ""), "", "  and an array");
	jv_free(arr);
	jv_free(doc);
	return done_testing();
}
