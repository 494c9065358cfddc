/*
 * helpers.h — what several unit tests share: a temporary BAKERY_HOME that is
 * removed at the end, and one-value SQL queries. Include after tap.h, in a
 * file that defines _GNU_SOURCE before any header (for nftw).
 */
#ifndef BAKERY_TEST_HELPERS_H
#define BAKERY_TEST_HELPERS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

/* An object's connection, opened again if its first commit made its file
 * (object_connect, lib/core/object.h). */
#define OBJECT_DB(o) (object_connect(o), (o)->db)

/* A fresh folder under $TMPDIR (or /tmp); caller frees. */
static inline char *tmp_home(void)
{
	const char *base = getenv("TMPDIR");
	char *dir = malloc(4096);
	snprintf(dir, 4096, "%s/bakery-unit.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	return dir;
}

static inline int rm_one_(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes dir and everything below it, then frees it. */
static inline void rm_home(char *dir)
{
	if (dir)
		nftw(dir, rm_one_, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* The first column of the first row of sql, as an integer (-1 on error). */
static inline long long sql_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("# sql error: %s: %s\n", sql, sqlite3_errmsg(db));
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The same as text, copied into buf ("" when NULL or no row). */
static inline const char *sql_text(sqlite3 *db, const char *sql, char *buf,
    size_t size)
{
	sqlite3_stmt *st;
	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("# sql error: %s: %s\n", sql, sqlite3_errmsg(db));
		return buf;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

#endif
