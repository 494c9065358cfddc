/*
 * state.c — an object's state is written at commit only when it changed:
 * a state set to what it holds writes nothing.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include "../../lib/core/object.h"
#include "../../lib/base/util.h"

/* Sets the state to json in a transaction of its own; returns the rows
 * the commit changed (-1 when it failed). */
static int
commit_state(bakery_object *o, const char *json)
{
	if (object_begin(o))
		return -1;
	object_set_state(o, jv_parse(json));
	int before = sqlite3_total_changes(OBJECT_DB(o));
	if (object_commit(o))
		return -1;
	return sqlite3_total_changes(OBJECT_DB(o)) - before;
}

static char stored[256];
static const char *
stored_state(bakery_object *o)
{
	sqlite3_stmt *st;
	stored[0] = '\0';
	if (sqlite3_prepare_v2(OBJECT_DB(o), "SELECT json FROM state", -1, &st,
		NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		snprintf(stored, sizeof stored, "%s",
		    (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return stored;
}

int
main(void)
{
	char *home = tmp_home();
	unsetenv("BAKERY_QUEUE");
	bakery_ctx ctx;
	ctx_init(&ctx, home, NULL, NULL);
	bakery_object *o;
	if (!is_int(object_open(&ctx, NULL, "customer/c1", 1, &o), 0,
		"open customer/c1"))
		return done_testing();

	/* In WAL a new file is made by its first commit, on a connection of
	 * its own: the changes are counted on the file's connection after. */
	is_int(object_begin(o) || object_commit(o), 0,
	    "a first commit, with no state, makes the file");
	is_int(commit_state(o, "{\"orders\":[{\"order\":\"o1\"}]}"), 1,
	    "a new state is written");
	is_int(commit_state(o, "{\"orders\": [ {\"order\": \"o1\"} ]}"), 0,
	    "the same state, set again, writes nothing");
	is_int(commit_state(o, "{\"orders\":[{\"order\":\"o2\"}]}"), 1,
	    "a changed state is written");
	is_str(stored_state(o), "{\"orders\":[{\"order\":\"o2\"}]}",
	    "  and the file holds it");

	/* Changed, then changed again in the same transaction. */
	object_begin(o);
	object_set_state(o, jv_parse("{\"orders\":[]}"));
	object_set_state(o, jv_parse("{\"orders\":[{\"order\":\"o3\"}]}"));
	object_set_state(o, jv_parse("{\"orders\":[{\"order\":\"o3\"}]}"));
	is_int(object_commit(o), 0, "a state changed twice, then set to "
	    "what it holds, commits");
	is_str(stored_state(o), "{\"orders\":[{\"order\":\"o3\"}]}",
	    "  and the file holds the last one");

	object_close(o);

	/* New files of one kind: the first transaction of each runs on the
	 * kind's one connection, its buffer given the image again each time
	 * (birth_copy.c); one begun while that connection is taken runs on
	 * a copy of its own. No state crosses from one file to another. */
	bakery_object *a, *b, *c, *d;
	ok(object_open(&ctx, NULL, "customer/c2", 1, &a) == 0 &&
	    object_open(&ctx, NULL, "customer/c3", 1, &b) == 0 &&
	    object_begin(a) == 0 && object_begin(b) == 0,
	    "two new customers begun at once");
	object_set_state(a, jv_parse("{\"customer\":\"c2\"}"));
	object_set_state(b, jv_parse("{\"customer\":\"c3\"}"));
	is_int(object_commit(b) || object_commit(a), 0, "  both commit");
	object_close(a);
	object_close(b);
	ok(object_open(&ctx, NULL, "customer/c4", 1, &c) == 0 &&
	    object_begin(c) == 0, "a third begun");
	object_set_state(c, jv_parse("{\"customer\":\"c4\"}"));
	object_rollback(c);
	object_close(c);
	ok(object_open(&ctx, NULL, "customer/c5", 1, &d) == 0 &&
	    object_begin(d) == 0, "a fourth begun after it was rolled back");
	is_str(stored_state(d), "", "  on a copy with no state in it");
	object_set_state(d, jv_parse("{\"customer\":\"c5\"}"));
	is_int(object_commit(d), 0, "  and commits");
	object_close(d);
	const char *want[][2] = { { "customer/c2", "{\"customer\":\"c2\"}" },
		{ "customer/c3", "{\"customer\":\"c3\"}" },
		{ "customer/c5", "{\"customer\":\"c5\"}" } };
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		ok(object_open(&ctx, NULL, want[i][0], 0, &o) == 0 &&
		    object_begin(o) == 0, "%s is there", want[i][0]);
		is_str(stored_state(o), want[i][1], "  with its own state");
		object_close(o);
	}
	is_int(object_open(&ctx, NULL, "customer/c4", 0, &o), EX_NOINPUT,
	    "customer/c4, rolled back, was never made");

	ctx_free(&ctx);
	rm_home(home);
	return done_testing();
}
