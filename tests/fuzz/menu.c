/*
 * menu.c — libFuzzer harness: the menu file parser (menu_parse) and the
 * ITEM=QTY argument parser (menu_parse_line_item). The input is split at
 * its first NUL byte: the menu text, then an item argument.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/core/menu.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	size_t mlen = nul ? (size_t)(nul - (const char *)data) : size;
	menu m;
	if (menu_parse((const char *)data, mlen, &m) != 0)
		return 0;
	for (size_t i = 0; i < m.n; i++)
		if (menu_find(&m, m.items[i].name) == NULL)
			__builtin_trap();
	if (nul) {
		size_t alen = size - mlen - 1;
		char *arg = malloc(alen + 1);
		if (arg) {
			memcpy(arg, nul + 1, alen);
			arg[alen] = '\0';
			const menu_item *it;
			int qty;
			if (menu_parse_line_item(&m, arg, &it, &qty) == 0 &&
			    (qty < 1 || qty > MENU_MAX_QTY || !it))
				__builtin_trap();
			free(arg);
		}
	}
	menu_free(&m);
	return 0;
}
