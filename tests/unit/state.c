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
	ctx_free(&ctx);
	rm_home(home);
	return done_testing();
}
