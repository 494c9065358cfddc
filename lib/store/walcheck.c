/*
 * walcheck.c — a file's WAL read as SQLite's recovery reads it
 * (walcheck.h). The format is SQLite's (https://sqlite.org/fileformat2.html,
 * "The Write-Ahead Log"): a 32-byte header, then frames of a 24-byte
 * header and a page, each checksummed over everything before it.
 */
#define _GNU_SOURCE
#include "walcheck.h"
#include "../base/util.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAL_HEADER 32
#define FRAME_HEADER 24
#define SHM_HEADER 48 /* one copy of the WAL-index header */

static uint32_t
get_be(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static uint32_t
get_le(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[1] << 8 | p[0];
}

/* SQLite's WAL checksum over n bytes (a multiple of 8), from s[2]: the
 * words big-endian when the header's magic says so, else little-endian. */
static void
checksum(int big, const unsigned char *p, size_t n, uint32_t s[2])
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		s[0] += (big ? get_be(p + i) : get_le(p + i)) + s[1];
		s[1] += (big ? get_be(p + i + 4) : get_le(p + i + 4)) + s[0];
	}
}

/* The frames the -shm says are committed, when it is a writer's index of
 * this WAL (its two header copies agree, it is initialised, and its salts
 * are salt): else 0. Its words are in the host's order. */
static uint32_t
shm_frames(const char *path, const unsigned char *salt)
{
	char *shm = bakery_xasprintf("%s-shm", path);
	int fd = open(shm, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(shm);
	unsigned char h[2 * SHM_HEADER];
	struct stat st;
	int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h;
	if (fd >= 0)
		close(fd);
	uint32_t frames;
	if (!ok || memcmp(h, h + SHM_HEADER, SHM_HEADER) != 0 || h[12] != 1 ||
	    memcmp(h + 32, salt, 8) != 0)
		return 0;
	memcpy(&frames, h + 16, sizeof frames);
	return frames;
}

int
wal_check(const char *path, char *why, size_t size)
{
	char *wal = bakery_xasprintf("%s-wal", path);
	int fd = open(wal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(wal);
	struct stat st;
	unsigned char hdr[WAL_HEADER];
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr) {
		if (fd >= 0)
			close(fd);
		return 0; /* no WAL, or an empty one: nothing to drop */
	}
	uint32_t magic = get_be(hdr), page = get_be(hdr + 8);
	int big = magic & 1;
	if (page == 1)
		page = 65536;
	uint32_t s[2] = { 0, 0 };
	checksum(big, hdr, 24, s);
	/* A header SQLite would not take makes the whole WAL nothing. */
	int valid = (magic & ~1u) == 0x377f0682 && page >= 512 &&
	    page <= 65536 && !(page & (page - 1)) && s[0] == get_be(hdr + 24) &&
	    s[1] == get_be(hdr + 28);
	uint32_t shm = shm_frames(path, hdr + 16);
	size_t frame = FRAME_HEADER + (size_t)(valid ? page : 0);
	unsigned char *buf = valid ? bakery_xmalloc(frame) : NULL;
	uint32_t n = 0, committed = 0, broken = 0, after = 0;
	for (off_t at = WAL_HEADER; valid && at + (off_t)frame <= st.st_size;
	     at += (off_t)frame) {
		if (pread(fd, buf, frame, at) != (ssize_t)frame)
			break;
		n++;
		int ours = memcmp(buf + 8, hdr + 16, 8) == 0;
		if (!broken) {
			checksum(big, buf, 8, s);
			checksum(big, buf + FRAME_HEADER, page, s);
			if (ours && s[0] == get_be(buf + 16) &&
			    s[1] == get_be(buf + 20)) {
				if (get_be(buf + 4))
					committed = n;
				continue;
			}
			broken = n;
		} else if (ours && get_be(buf + 4)) {
			after++; /* a commit of this WAL past the break */
		}
	}
	free(buf);
	close(fd);
	if (shm > committed)
		snprintf(why, size, "'%s': frame %u of its WAL is broken or "
		    "missing: its "
		    "-shm counts %u frames committed, a reader that rebuilds the "
		    "WAL's index %u, and loses the commits between", path,
		    broken ? broken : committed + 1, shm, committed);
	else if (after)
		snprintf(why, size, "'%s': %u commits of its WAL lie past frame "
		    "%u, which is broken: no reader sees them", path, after,
		    broken);
	return shm > committed || after;
}
