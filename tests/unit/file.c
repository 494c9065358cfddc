/*
 * file.c — file_open_regular: a regular file opened, anything else
 * refused without blocking.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/store/file.h"

static char dir[] = "/tmp/bakery-file-XXXXXX";

static char *
in_dir(const char *name)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static double
now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(void)
{
	if (!mkdtemp(dir))
		return 1;
	FILE *f = fopen(in_dir("plain"), "w");
	fputs("whsec_x\n", f);
	fclose(f);
	struct stat st;
	int fd = file_open_regular(in_dir("plain"), 0, &st);
	ok(fd >= 0, "a regular file is opened");
	is_int(st.st_size, 8, "  its stat filled");
	ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK),
	    "  the descriptor back in blocking mode");
	char buf[16] = "";
	ok(fd >= 0 && read(fd, buf, sizeof buf) == 8 &&
		strncmp(buf, "whsec_x\n", 8) == 0, "  and read whole");
	if (fd >= 0)
		close(fd);

	mkfifo(in_dir("fifo"), 0600);
	double t0 = now_s();
	is_int(file_open_regular(in_dir("fifo"), 0, NULL), FILE_NOT_REGULAR,
	    "a FIFO nobody writes is FILE_NOT_REGULAR");
	ok(now_s() - t0 < 1, "  at once, not waited on");
	is_int(file_open_regular(dir, 0, NULL), FILE_NOT_REGULAR,
	    "a folder is FILE_NOT_REGULAR");
	is_int(file_open_regular("/dev/null", 0, NULL), FILE_NOT_REGULAR,
	    "a device is FILE_NOT_REGULAR");

	char target[256];
	snprintf(target, sizeof target, "%s", in_dir("plain"));
	is_int(symlink(target, in_dir("link")), 0, "a symlink made");
	fd = file_open_regular(in_dir("link"), 0, NULL);
	ok(fd >= 0, "a symlink to a regular file is followed by default");
	if (fd >= 0)
		close(fd);
	is_int(file_open_regular(in_dir("link"), O_NOFOLLOW, NULL),
	    FILE_NOT_REGULAR, "  and refused with O_NOFOLLOW");
	errno = 0;
	is_int(file_open_regular(in_dir("missing"), 0, NULL), -1,
	    "a missing file is -1");
	is_int(errno, ENOENT, "  with errno ENOENT");

	unlink(in_dir("link"));
	unlink(in_dir("fifo"));
	unlink(in_dir("plain"));
	rmdir(dir);
	return done_testing();
}
