/*
 * external.c — a subscriber outside bakery (external/NAME): its file
 * holds the ids of the events it answered 2xx to, so that a repeat is
 * not sent again (lib/flow/subscriber.c). Routed to by the routes file, not
 * by a built-in route: it names no event here.
 */
#include "../core/kind.h"

const object_kind external_kind = {
	.name = "external",
};
