/*
 * secret.c — a secret's file: read once, its mode checked, never named.
 */
#define _GNU_SOURCE
#include "secret.h"
#include "../store/file.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
secret_read_file(const char *path, const char *what, char **secret)
{
	*secret = NULL;
	struct stat st;
	int fd = file_open_regular(path, 0, &st);
	if (fd == FILE_NOT_REGULAR)
		return bakery_fail(EX_CONFIG, "cannot read %s: not a regular "
		    "file", what);
	if (fd < 0)
		return bakery_fail(EX_CONFIG, "cannot read %s: %s", what,
		    strerror(errno));
	if (st.st_mode & 077) {
		char mode[8];
		snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 0777));
		bakery_log(LOG_WARN, "secret_file_mode", "file", what, "mode",
		    mode, "hint", "group or others can read it: chmod 600",
		    (char *)NULL);
	}
	char buf[512];
	size_t n = 0;
	ssize_t r = 0;
	while (n < sizeof buf - 1 &&
	    ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0 ||
		(r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	int err = errno;
	close(fd);
	int rc = 0;
	if (r < 0) {
		rc = bakery_fail(EX_CONFIG, "cannot read %s: %s", what,
		    strerror(err));
	} else {
		buf[n] = '\0';
		n = strcspn(buf, "\r\n");
		while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
			n--;
		buf[n] = '\0';
		if (n == 0)
			rc = bakery_fail(EX_CONFIG, "%s is empty", what);
		else
			*secret = bakery_xstrdup(buf);
	}
	explicit_bzero(buf, sizeof buf);
	return rc;
}
