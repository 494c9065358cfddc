/*
 * menu.c — parsing the menu and ITEM=QTY arguments.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <stdlib.h>
#include <unistd.h>

#include "../../lib/core/menu.h"
#include "../../lib/base/util.h"

static const char good[] =
    "# The bakery's menu\n"
    "\n"
    "cardamom-bun\t450\tCardamom bun\n"
    "country-loaf\t900\tCountry loaf\r\n"
    "rye-sourdough\t1000000\tRye sourdough, the big one\n"
    "seeded-baguette\t1\tSeeded baguette";

static void
bad_menu(const char *text, size_t len, int line, const char *want,
    const char *what)
{
	menu m = { (menu_item *)1, 99 };
	char where[32];
	snprintf(where, sizeof where, "line %d", line);
	is_int(menu_parse(text, len, &m), EX_DATAERR, "%s is EX_DATAERR", what);
	ok(strstr(bakery_error(), where) != NULL &&
		strstr(bakery_error(), want) != NULL,
	    "  says '%s' and '%s' (%s)", where, want, bakery_error());
	ok(m.items == NULL && m.n == 0, "  and leaves no items");
	menu_free(&m);
}

static void
bad_item(const menu *m, const char *arg, const char *want)
{
	const menu_item *it = NULL;
	int qty = -1;
	is_int(menu_parse_line_item(m, arg, &it, &qty), EX_USAGE,
	    "'%s' is EX_USAGE", arg);
	ok(strstr(bakery_error(), want) != NULL, "  says '%s' (%s)", want,
	    bakery_error());
}

int
main(void)
{
	menu m;
	is_int(menu_parse(good, strlen(good), &m), 0, "a good menu parses");
	is_int((long long)m.n, 4, "  four items (comments and blanks skipped)");
	is_str(m.items[0].name, "cardamom-bun", "  first name");
	is_int(m.items[0].price_cents, 450, "  first price");
	is_str(m.items[0].title, "Cardamom bun", "  first title");
	is_str(m.items[1].title, "Country loaf", "  a CR before the newline is dropped");
	is_int(m.items[2].price_cents, 1000000, "  the highest price");
	is_int(m.items[3].price_cents, 1, "  the lowest price, last line unterminated");
	ok(menu_find(&m, "country-loaf") == &m.items[1], "menu_find finds an item");
	ok(menu_find(&m, "croissant") == NULL, "  and not a missing one");

	/* ITEM=QTY. */
	const menu_item *it = NULL;
	int qty = 0;
	is_int(menu_parse_line_item(&m, "cardamom-bun=2", &it, &qty), 0,
	    "'cardamom-bun=2' parses");
	ok(it == &m.items[0], "  the item");
	is_int(qty, 2, "  quantity 2");
	is_int(menu_parse_line_item(&m, "country-loaf=99", &it, &qty), 0,
	    "'country-loaf=99' (the most) parses");
	is_int(qty, 99, "  quantity 99");
	bad_item(&m, "x=1", "unknown item");
	bad_item(&m, "cardamom-bun=0", "bad quantity");
	bad_item(&m, "=1", "want ITEM=QTY");
	bad_item(&m, "cardamom-bun=100", "bad quantity");
	bad_item(&m, "cardamom-bun", "want ITEM=QTY");
	bad_item(&m, "cardamom-bun=", "bad quantity");
	bad_item(&m, "cardamom-bun=2x", "bad quantity");
	bad_item(&m, "cardamom-bun=-1", "bad quantity");
	bad_item(&m, "cardamom-bun=99999999999999999999", "bad quantity");
	menu_free(&m);
	ok(m.items == NULL && m.n == 0, "menu_free empties the menu");

	/* Bad menus. */
	static const char no_tab[] = "cardamom-bun\t450\tCardamom bun\n"
	    "country-loaf 900 Country loaf\n";
	bad_menu(no_tab, strlen(no_tab), 2, "want NAME<TAB>", "a line without tabs");
	static const char one_tab[] = "# menu\ncardamom-bun\t450\n";
	bad_menu(one_tab, strlen(one_tab), 2, "want NAME<TAB>", "a line with one tab");
	static const char bad_price[] = "\n\ncardamom-bun\t4.50\tCardamom bun\n";
	bad_menu(bad_price, strlen(bad_price), 3, "price", "a price in euros");
	static const char zero[] = "cardamom-bun\t0\tCardamom bun\n";
	bad_menu(zero, strlen(zero), 1, "price", "a zero price");
	static const char big[] = "cardamom-bun\t1000001\tCardamom bun\n";
	bad_menu(big, strlen(big), 1, "price", "a price over 1000000");
	static const char neg[] = "cardamom-bun\t-450\tCardamom bun\n";
	bad_menu(neg, strlen(neg), 1, "price", "a negative price");
	static const char dup[] = "cardamom-bun\t450\tCardamom bun\n"
	    "country-loaf\t900\tCountry loaf\n"
	    "cardamom-bun\t500\tCardamom bun again\n";
	bad_menu(dup, strlen(dup), 3, "twice", "an item listed twice");
	static const char badname[] = "Cardamom-Bun\t450\tCardamom bun\n";
	bad_menu(badname, strlen(badname), 1, "bad item name", "an upper-case name");
	static const char notitle[] = "cardamom-bun\t450\t\n";
	bad_menu(notitle, strlen(notitle), 1, "title", "an empty title");
	{
		static const char nul[] = "cardamom-bun\t450\tCardamom bun\n"
		    "country-loaf\t900\tCountry\0loaf\n";
		bad_menu(nul, sizeof nul - 1, 2, "NUL byte", "a NUL byte");
	}
	{
		menu e;
		is_int(menu_parse("# only a comment\n\n", 18, &e), EX_DATAERR,
		    "a menu without items is EX_DATAERR");
		menu_free(&e);
	}

	/* The shipped menu parses (BAKERY_MENU points at it): share/menu.tsv
	 * of the tree this test was built in, two folders above
	 * build/tests/menu.t, from wherever it runs. */
	char shipped[4096];
	ssize_t len = readlink("/proc/self/exe", shipped,
	    sizeof shipped - sizeof "/share/menu.tsv");
	char *up = NULL;
	if (len > 0) {
		shipped[len] = '\0';
		for (int i = 0; i < 3 && (up = strrchr(shipped, '/')); i++)
			*up = '\0';
	}
	if (up) {
		strcat(shipped, "/share/menu.tsv");
		setenv("BAKERY_MENU", shipped, 1);
		is_int(menu_load(&m), 0, "share/menu.tsv loads");
		ok(menu_find(&m, "cardamom-bun") != NULL, "  and sells cardamom buns");
		menu_free(&m);
	} else {
		skip(2, "no /proc/self/exe to find share/menu.tsv from");
	}
	setenv("BAKERY_MENU", "/nonexistent/menu.tsv", 1);
	is_int(menu_load(&m), EX_CONFIG, "a missing menu file is EX_CONFIG");

	/* A bad file's error wraps the parser's, which it is formatted from. */
	char bad[] = "/tmp/bakery-menu-XXXXXX";
	int fd = mkstemp(bad);
	if (fd >= 0) {
		FILE *f = fdopen(fd, "w");
		fputs("cardamom-bun\t450\tCardamom bun\nno tabs here\n", f);
		fclose(f);
		setenv("BAKERY_MENU", bad, 1);
		is_int(menu_load(&m), EX_CONFIG, "a bad menu file is EX_CONFIG");
		char want[128];
		snprintf(want, sizeof want, "bad menu '%s': menu line 2", bad);
		ok(strncmp(bakery_error(), want, strlen(want)) == 0 &&
			strstr(bakery_error(), "want NAME<TAB>") != NULL,
		    "  says where, then the parser's error (%s)",
		    bakery_error());
		unlink(bad);
	}
	unsetenv("BAKERY_MENU");
	return done_testing();
}
