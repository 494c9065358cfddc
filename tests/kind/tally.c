/*
 * tally.c — how many orders the sandbox has seen placed and paid, in one
 * object (tally/all): a row per event type heard (table tallies) with
 * the events of that type applied. bakery-show shows them as
 * state.heard, {"TYPE":{"events"}}.
 *
 * No kind of bakery's own: bakery built with one kind more, exactly as
 * docs/design.md's "How to add a kind" says (make extra-kind), so that
 * the recipe is a build that must pass. This file stands in for
 * lib/objects/tally.c and is compiled as that.
 */
#include "../flow/subscriber.h"
#include "../core/envelope.h"

static int
tally_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	(void)error;
	(void)size;
	/* Its key is fixed, yet an event without its order is none this
	 * kind counts: refused as any kind would. */
	if (!envelope_data_str(env, "order"))
		return ANSWER_MALFORMED;
	/* One more of its type: the seen check before this call keeps a
	 * repeat from counting twice. */
	if (object_exec(o, "INSERT INTO tallies(type, events) VALUES (?1, 1)"
		" ON CONFLICT (type) DO UPDATE SET events = events + 1",
		JV_ARRAY(jv_string(type)), NULL))
		return ANSWER_UNAVAILABLE;
	return ANSWER_APPLIED;
}

#define TALLIES \
	"CREATE TABLE tallies(type TEXT PRIMARY KEY," \
	"  events INTEGER NOT NULL) WITHOUT ROWID;"

const object_kind tally_kind = {
	.name = "tally",
	.key = "all",
	.hears = { "OrderPlaced", "PaymentSucceeded" },
	.apply = tally_apply,
	.create = 1,
	.tables = TALLIES,
	.rows = {
		{ "heard", "kv", "SELECT type, events FROM tallies"
		  " ORDER BY type" },
	},
};
