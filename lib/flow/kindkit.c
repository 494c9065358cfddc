/*
 * kindkit.c — what a kind's apply may call on its state and its event
 * (kindkit.h).
 */
#include "kindkit.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <stdlib.h>

#include <string.h>

jv
kindkit_state(jv state, const char *const *arrays)
{
	if (jv_get_kind(state) != JV_KIND_OBJECT) {
		jv_free(state);
		state = jv_object();
	}
	for (int i = 0; arrays && arrays[i]; i++)
		if (!jv_object_has(jv_copy(state), jv_string(arrays[i])))
			state = jv_object_set(state, jv_string(arrays[i]),
			    jv_array());
	return state;
}

jv
kindkit_data(jv env, const char *field)
{
	jv data = envelope_field(env, "data");
	jv v = envelope_field(data, field);
	jv_free(data);
	if (jv_is_valid(v))
		return v;
	jv_free(v);
	return jv_null();
}

jv
kindkit_pick(jv env, const char *const *fields)
{
	jv data = envelope_field(env, "data");
	jv out = jv_object();
	for (int i = 0; fields[i]; i++) {
		jv v = envelope_field(data, fields[i]);
		if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL)
			out = jv_object_set(out, jv_string(fields[i]), v);
		else
			jv_free(v);
	}
	jv_free(data);
	return out;
}

int
kindkit_list_remove(bakery_object *o, const char *list, const char *order)
{
	char *sql = bakery_xasprintf("DELETE FROM \"%s\" WHERE order_id = ?1",
	    list);
	const char *kept = db_intern(sql);
	free(sql);
	return object_exec(o, kept, JV_ARRAY(jv_string(order)), NULL);
}

int
kindkit_append_once(bakery_object *o, const char *key_field,
    const char *list, jv record)
{
	/* The state holds the key alone, written once. */
	jv key = envelope_field(o->state, key_field);
	int keyed = jv_get_kind(key) == JV_KIND_STRING &&
	    strcmp(jv_string_value(key), o->key) == 0;
	jv_free(key);
	if (!keyed)
		object_set_state(o, jv_object_set(kindkit_state(
		    jv_copy(o->state), NULL), jv_string(key_field),
		    jv_string(o->key)));
	const char *order = envelope_str(record, "order");
	int rc = 0;
	if (order) {
		char *sql = bakery_xasprintf("INSERT INTO \"%s\"(order_id, json)"
		    " VALUES (?1, ?2) ON CONFLICT (order_id) DO NOTHING", list);
		const char *kept = db_intern(sql);
		free(sql);
		rc = object_exec(o, kept, JV_ARRAY(jv_string(order),
		    jv_copy(record)), NULL);
	}
	jv_free(record);
	return rc ? ANSWER_UNAVAILABLE : ANSWER_APPLIED;
}
