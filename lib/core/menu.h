/*
 * menu.h — what the bakery sells and at what price (share/menu.tsv).
 *
 * One item a line: NAME<TAB>PRICE_CENTS<TAB>TITLE; blank lines and lines
 * starting with '#' are skipped. NAME follows the rule of every bakery
 * name; a price is a whole number of cents from 1 to 1,000,000.
 */
#ifndef BAKERY_MENU_H
#define BAKERY_MENU_H

#include <stddef.h>

#include "../base/util.h"

#define MENU_CURRENCY "eur"
#define MENU_MAX_QTY 99
#define MENU_MAX_PRICE 1000000 /* cents */

typedef struct menu_item {
	char name[BAKERY_NAME_SIZE];
	long price_cents;
	char title[128];
} menu_item;

typedef struct menu {
	menu_item *items;
	size_t n;
} menu;

/* Parses text (len bytes). EX_DATAERR with the line number when bad. */
int menu_parse(const char *text, size_t len, menu *m);
/* Loads the menu from BAKERY_MENU, share/ beside the program, or the
 * installed share folder. */
int menu_load(menu *m);
void menu_free(menu *m);
const menu_item *menu_find(const menu *m, const char *name);

/* Parses "ITEM=QTY" against the menu. */
int menu_parse_line_item(const menu *m, const char *arg,
    const menu_item **item, int *qty);

#endif
