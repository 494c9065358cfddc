/*
 * kinds.c — every kind of object bakery has, one line each: the only
 * list of kinds (kind.h). A kind is its file lib/objects/KIND.c, which
 * defines KIND_kind, and its line here.
 */
#include "../core/kind.h"

#define EACH_KIND(X) \
	X(order) \
	X(billing) \
	X(schedule) \
	X(kitchen) \
	X(crm) \
	X(customer) \
	X(inbox) \
	X(dispatch) \
	X(external)

#define DECLARE(k) extern const object_kind k##_kind;
EACH_KIND(DECLARE)

#define ADDRESS(k) &k##_kind,
const object_kind *const object_kinds[] = { EACH_KIND(ADDRESS) NULL };
