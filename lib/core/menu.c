/*
 * menu.c — the menu file.
 */
#define _GNU_SOURCE
#include "menu.h"
#include "../store/file.h"
#include "../store/store.h"
#include "../base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


void
menu_free(menu *m)
{
	free(m->items);
	m->items = NULL;
	m->n = 0;
}

static int
parse_line(char *line, menu_item *it, const char **why)
{
	char *tab1 = strchr(line, '\t');
	char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
	if (!tab1 || !tab2) {
		*why = "want NAME<TAB>PRICE_CENTS<TAB>TITLE";
		return -1;
	}
	*tab1 = *tab2 = '\0';
	if (!bakery_name_valid(line)) {
		*why = "bad item name";
		return -1;
	}
	long long price;
	if (bakery_parse_number(tab1 + 1, 1, MENU_MAX_PRICE, &price)) {
		*why = "price must be 1 to " DIGITS_OF(MENU_MAX_PRICE)
		    " cents";
		return -1;
	}
	if (strlen(tab2 + 1) >= sizeof it->title || !tab2[1]) {
		*why = "title empty or longer than 127 bytes";
		return -1;
	}
	snprintf(it->name, sizeof it->name, "%s", line);
	it->price_cents = price;
	snprintf(it->title, sizeof it->title, "%s", tab2 + 1);
	return 0;
}

int
menu_parse(const char *text, size_t len, menu *m)
{
	m->items = NULL;
	m->n = 0;
	size_t pos = 0;
	long lineno = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		lineno++;
		if (memchr(text + pos, '\0', n)) {
			menu_free(m);
			return bakery_fail(EX_DATAERR, "menu line %ld: NUL byte",
			    lineno);
		}
		char *line = bakery_xmalloc(n + 1);
		memcpy(line, text + pos, n);
		line[n] = '\0';
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		pos += n + 1;
		if (!line[0] || line[0] == '#') {
			free(line);
			continue;
		}
		menu_item it;
		const char *why;
		int bad = parse_line(line, &it, &why);
		free(line);
		if (!bad && menu_find(m, it.name)) {
			bad = 1;
			why = "item listed twice";
		}
		if (bad) {
			menu_free(m);
			return bakery_fail(EX_DATAERR, "menu line %ld: %s", lineno,
			    why);
		}
		m->items = bakery_xrealloc(m->items, (m->n + 1) * sizeof *m->items);
		m->items[m->n++] = it;
	}
	if (m->n == 0)
		return bakery_fail(EX_DATAERR, "menu has no items");
	return 0;
}

static char *
find_menu(void)
{
	const char *env = getenv("BAKERY_MENU");
	if (env && *env)
		return bakery_xstrdup(env);
	return home_share_path("menu.tsv");
}

int
menu_load(menu *m)
{
	char *path = find_menu();
	int fd = file_open_regular(path, 0, NULL);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		int rc = fd == FILE_NOT_REGULAR
		    ? bakery_fail(EX_CONFIG, "menu '%s': not a file", path)
		    : bakery_fail(EX_CONFIG, "cannot open menu '%s': %s", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return rc;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	char buf[4096];
	size_t r;
	while (mem && (r = fread(buf, 1, sizeof buf, f)) > 0 && len < 1 << 20)
		fwrite(buf, 1, r, mem);
	fclose(f);
	if (mem)
		fclose(mem);
	int rc = menu_parse(text ? text : "", len, m);
	if (rc == EX_DATAERR)
		rc = bakery_fail(EX_CONFIG, "bad menu '%s': %s", path,
		    bakery_error());
	free(text);
	free(path);
	return rc;
}

const menu_item *
menu_find(const menu *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->items[i].name, name) == 0)
			return &m->items[i];
	return NULL;
}

int
menu_parse_line_item(const menu *m, const char *arg, const menu_item **item,
    int *qty)
{
	const char *eq = strchr(arg, '=');
	char name[BAKERY_NAME_SIZE];
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name)
		return bakery_fail(EX_USAGE, "bad item: '%s': want ITEM=QTY",
		    arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	if (!(*item = menu_find(m, name)))
		return bakery_fail(EX_USAGE, "unknown item: '%s'", name);
	long long q;
	if (bakery_parse_number(eq + 1, 1, MENU_MAX_QTY, &q))
		return bakery_fail(EX_USAGE, "bad quantity: '%s': want 1 to %d",
		    arg, MENU_MAX_QTY);
	*qty = (int)q;
	return 0;
}
