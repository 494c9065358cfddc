/*
 * envelope.c — libFuzzer harness: envelope_parse on any bytes, then what a
 * consumer does next with a parsed envelope (its fields, its time, its
 * routes, its dump). See docs/reliability.md, "Fuzzing".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/core/envelope.h"
#include "../../lib/flow/routing.h"

/* The routes of the search (routing.h), loaded on the first input. */
static bakery_ctx ctx;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jv env;
	if (envelope_parse((const char *)data, size, &env) == 0) {
		(void)envelope_str(env, "id");
		(void)envelope_data_str(env, "order");
		(void)envelope_time_ms(env);
		/* A trace context read is a valid one, or none: a bad one
		 * was replaced, never passed on. */
		trace_ctx t;
		const char *tp = envelope_str(env, "traceparent");
		const char *ts = envelope_str(env, "tracestate");
		if ((tp && tracectx_parse(tp, &t)) ||
		    (ts && (!tp || tracectx_state_check(ts))) ||
		    envelope_trace(env, &t) != (tp != NULL))
			__builtin_trap();
		char addresses[ROUTING_MAX_SUBSCRIBERS][BAKERY_ADDRESS_SIZE];
		size_t n;
		(void)routing_subscribers(&ctx, env, addresses, &n);
		char *text = envelope_dump(env);
		jv again;
		/* What we dump we must read back. */
		if (envelope_parse(text, strlen(text), &again) != 0)
			__builtin_trap();
		jv_free(again);
		free(text);
		jv_free(env);
	}
	return 0;
}
