/*
 * syncs.c — B10: the ways to make a group of new files durable, on this
 * disk (docs/adr/0009-a-group-of-births.md).
 *
 *   syncs DIR N ROUNDS
 *
 * Each round writes N new files of a new object's size (12 KB) in DIR,
 * makes them durable one way, syncs DIR once, and removes them. Prints
 * the milliseconds a file, the median of ROUNDS rounds, of each way:
 *   seq        write and fsync each file in turn (a birth at a time)
 *   each       write them all, then fsync each
 *   writeback  write them all, start each one's writeback
 *              (sync_file_range), then fsync each: what bakery does
 *   threads    write them all, then fsync each in a thread of its own
 *   syncfs     write them all, then one syncfs(2) of the filesystem
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES 256
#define FILE_BYTES 12288

enum { SEQ, EACH, WRITEBACK, THREADS, SYNCFS, WAYS };
static const char *const way_name[WAYS] = { "seq", "each", "writeback",
	"threads", "syncfs" };

static int fds[MAX_FILES];

static void
die(const char *what, const char *path)
{
	fprintf(stderr, "syncs: %s '%s': %s\n", what, path, strerror(errno));
	exit(1);
}

static void
must_sync(int fd)
{
	if (fsync(fd) != 0)
		die("cannot sync", "a file");
}

static void *
sync_one(void *arg)
{
	must_sync(fds[(long)arg]);
	return NULL;
}

static void
make_file(const char *dir, int round, long i, int sync_now)
{
	static unsigned char buf[FILE_BYTES];
	char path[4096];
	snprintf(path, sizeof path, "%s/f%d-%ld", dir, round, i);
	memset(buf, (int)(round + i), sizeof buf);
	fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fds[i] < 0)
		die("cannot create", path);
	if (write(fds[i], buf, sizeof buf) != (ssize_t)sizeof buf)
		die("cannot write", path);
	if (sync_now)
		must_sync(fds[i]);
}

static double
one_round(const char *dir, int way, int round, long n)
{
	double t0 = bench_now();
	for (long i = 0; i < n; i++)
		make_file(dir, round, i, way == SEQ);
	if (way == EACH || way == WRITEBACK) {
		for (long i = 0; way == WRITEBACK && i < n; i++)
			if (sync_file_range(fds[i], 0, 0,
			    SYNC_FILE_RANGE_WRITE) != 0)
				die("cannot write back", "a file");
		for (long i = 0; i < n; i++)
			must_sync(fds[i]);
	} else if (way == THREADS) {
		pthread_t t[MAX_FILES];
		for (long i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, sync_one, (void *)i))
				die("cannot start a thread for", dir);
		for (long i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	} else if (way == SYNCFS && syncfs(fds[0]) != 0) {
		die("cannot syncfs", dir);
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) != 0)
		die("cannot sync", dir);
	close(dfd);
	double ms = (bench_now() - t0) * 1e3;
	for (long i = 0; i < n; i++) {
		char path[4096];
		close(fds[i]);
		snprintf(path, sizeof path, "%s/f%d-%ld", dir, round, i);
		unlink(path);
	}
	return ms / (double)n;
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: syncs DIR N ROUNDS\n");
		return 64;
	}
	long n = bench_count(argv[2]), rounds = bench_count(argv[3]);
	if (n > MAX_FILES) {
		fprintf(stderr, "syncs: at most %d files\n", MAX_FILES);
		return 64;
	}
	double *ms = malloc((size_t)rounds * WAYS * sizeof *ms);
	if (!ms)
		return 70;
	/* The ways take turns, round after round, so that a change in the
	 * disk's load falls on all of them. */
	for (long r = 0; r < rounds; r++)
		for (int w = 0; w < WAYS; w++)
			ms[w * rounds + r] = one_round(argv[1], w, (int)r, n);
	for (int w = 0; w < WAYS; w++) {
		qsort(ms + w * rounds, (size_t)rounds, sizeof *ms, by_value);
		printf("%s %.4f\n", way_name[w], ms[w * rounds + rounds / 2]);
	}
	free(ms);
	return 0;
}
