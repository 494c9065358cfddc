/*
 * lines.c — libFuzzer harness: the stdin readers. envelope_each_line over
 * any bytes (through fmemopen, as bakery-consume --stdin, bakery-queue send
 * and bakery-redrive read stdin), each line parsed as an envelope and, as
 * bakery-redrive does, as an id or a JSON object with an id.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/core/envelope.h"
#include "../../lib/base/util.h"

static int
one_line(void *arg, const char *line, size_t len, long lineno)
{
	(void)lineno;
	size_t *count = arg;
	/* The reader hands out NUL-terminated lines of the given length. */
	if (strlen(line) > len)
		__builtin_trap();
	jv env;
	if (envelope_parse(line, len, &env) == 0)
		jv_free(env);
	else if (line[0] != '{')
		(void)bakery_name_valid(line);
	return ++*count > 10000;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in)
		return 0;
	size_t count = 0;
	(void)envelope_each_line(in, one_line, &count);
	fclose(in);
	return 0;
}
