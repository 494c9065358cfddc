/*
 * subscriber_show.c — an object shown through its kind (subscriber.h,
 * subscriber_show), beside the delivery engine of subscriber.c.
 */
#include "subscriber.h"
#include "kindkit.h"

int
subscriber_show(bakery_ctx *ctx, const char *address, jv *out)
{
	bakery_object *o;
	int rc = object_open(ctx, NULL, address, 0, &o);
	if (!rc)
		rc = object_show(o, out);
	if (!rc) {
		const object_kind *sub = subscriber_find(o->kind);
		if (sub && sub->arrays) {
			jv state = jv_object_get(jv_copy(*out), jv_string("state"));
			*out = jv_object_set(*out, jv_string("state"),
			    kindkit_state(state, sub->arrays));
		}
	}
	object_close(o);
	return rc;
}
