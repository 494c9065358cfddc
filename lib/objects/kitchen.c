/*
 * kitchen.c — the kitchen board: a card per order, placed then confirmed,
 * and an oven ticket for each paid order. Both are rows of the board's
 * file (tables cards and tickets), one touched per event; bakery-show
 * shows them as state.cards ({"order","day","items","status"}, in the
 * order they came) and state.tickets.
 *
 * An OrderPaid for an order without a card is not applicable yet (409):
 * the board must learn of the order before it bakes it.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

static int
kitchen_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	const char *order = envelope_data_str(env, "order");
	if (!order)
		return ANSWER_MALFORMED;
	if (strcmp(type, "OrderPlaced") == 0) {
		/* A card that is there already (placed or confirmed) stays. */
		jv args = JV_ARRAY(jv_string(order), kindkit_data(env, "day"),
		    kindkit_data(env, "items"));
		if (object_exec(o, "INSERT INTO cards(order_id, status, day,"
			" items) VALUES (?1, 'placed', ?2, ?3)"
			" ON CONFLICT (order_id) DO NOTHING", args, NULL))
			return ANSWER_UNAVAILABLE;
	} else if (strcmp(type, "OrderPaid") == 0) {
		int changed = 0;
		if (object_exec(o, "UPDATE cards SET status = 'confirmed'"
			" WHERE order_id = ?1", JV_ARRAY(jv_string(order)),
			&changed))
			return ANSWER_UNAVAILABLE;
		if (!changed) {
			snprintf(error, size, "no card for order '%s' yet", order);
			return ANSWER_NOT_YET;
		}
		jv items = kindkit_data(env, "items");
		jv args = JV_ARRAY(jv_string(order),
		    jv_string(envelope_str(env, "id")),
		    jv_dump_string(items, 0), jv_number(bakery_now_ms()));
		if (object_exec(o, "INSERT OR IGNORE INTO tickets(order_id,"
			" event_id, items, created_at) VALUES (?1, ?2, ?3, ?4)",
			args, NULL))
			return ANSWER_UNAVAILABLE;
	}
	return ANSWER_APPLIED;
}

const object_kind kitchen_kind = {
	.name = "kitchen",
	.key = "board",
	.hears = { "OrderPlaced", "OrderPaid" },
	.apply = kitchen_apply,
	.create = 1,
	/* The oven tickets, one row per order, written with the OrderPaid
	 * that caused it; the cards, rows rather than a document in the
	 * state, so that an event changes one row instead of rewriting a
	 * document that grows with every order. seq keeps the order the
	 * cards came in (bakery-show lists them in it). */
	.tables =
	    "CREATE TABLE tickets(order_id TEXT PRIMARY KEY,"
	    "  event_id TEXT NOT NULL, items TEXT NOT NULL,"
	    "  created_at INTEGER NOT NULL);"
	    "CREATE TABLE cards(seq INTEGER PRIMARY KEY,"
	    "  order_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, day TEXT,"
	    "  items TEXT);",
	.rows = {
		{ "cards", "vvjv", "SELECT order_id AS \"order\", day, items,"
		  " status FROM cards ORDER BY seq" },
		{ "tickets", "vvjt", "SELECT order_id AS \"order\", event_id AS"
		  " event, items, created_at FROM tickets"
		  " ORDER BY created_at, order_id" },
	},
};
