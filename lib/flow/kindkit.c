/*
 * kindkit.c — what a kind's apply may call on its state and its event
 * (kindkit.h).
 */
#include "kindkit.h"
#include "../core/envelope.h"

#include <string.h>

int
kindkit_find_order(jv arr, const char *order)
{
	if (jv_get_kind(arr) != JV_KIND_ARRAY)
		return -1;
	int n = jv_array_length(jv_copy(arr));
	for (int i = 0; i < n; i++) {
		jv el = jv_array_get(jv_copy(arr), i);
		const char *o = envelope_str(el, "order");
		int match = o && strcmp(o, order) == 0;
		jv_free(el);
		if (match)
			return i;
	}
	return -1;
}

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

jv
kindkit_remove_at(jv arr, int i)
{
	jv out = jv_array();
	jv_array_foreach(arr, j, el) {
		if (j != i)
			out = jv_array_append(out, el);
		else
			jv_free(el);
	}
	jv_free(arr);
	return out;
}

int
kindkit_append_once(bakery_object *o, const char *key_field,
    const char *array, jv record)
{
	const char *const arrays[] = { array, NULL };
	jv state = kindkit_state(jv_copy(o->state), arrays);
	state = jv_object_set(state, jv_string(key_field), jv_string(o->key));
	jv list = jv_object_get(jv_copy(state), jv_string(array));
	const char *order = envelope_str(record, "order");
	if (order && kindkit_find_order(list, order) < 0)
		list = jv_array_append(list, jv_copy(record));
	jv_free(record);
	state = jv_object_set(state, jv_string(array), list);
	object_set_state(o, state);
	return ANSWER_APPLIED;
}
