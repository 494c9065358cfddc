/*
 * external.c — run a subscriber's program, or POST to its URL, signed.
 */
#define _GNU_SOURCE
#include "external.h"
#include "../lazy/lazy_crypto.h"
#include "../lazy/lazy_curl.h"
#include "secret.h"
#include "span.h"
#include "url.h"
#include "../base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The length of the UTF-8 sequence starting s (at most n bytes), or 0
 * when it is not one. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t k = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2
	    : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (k == 0 || k > n)
		return 0;
	return bakery_utf8_valid((const char *)s, k) ? k : 0;
}

void
external_last_word(const char *s, size_t len, int last, char *out,
    size_t size)
{
	size_t a = 0, b = len;
	if (last) {
		while (b > 0 && (s[b - 1] == '\n' || s[b - 1] == '\r' ||
		    s[b - 1] == ' ' || s[b - 1] == '\t'))
			b--;
		a = b;
		while (a > 0 && s[a - 1] != '\n')
			a--;
	} else {
		while (a < len && (s[a] == '\n' || s[a] == '\r'))
			a++;
		b = a;
		while (b < len && s[b] != '\n')
			b++;
	}
	size_t o = 0;
	while (a < b && o + 1 < size) {
		const unsigned char *p = (const unsigned char *)s + a;
		size_t k = utf8_len(p, b - a);
		if (k == 0 || (k == 1 && (*p < ' ' || *p == 0x7f))) {
			out[o++] = '?';
			a += k ? k : 1;
		} else if (o + k < size) {
			memcpy(out + o, p, k);
			o += k;
			a += k;
		} else {
			break;
		}
	}
	out[o] = '\0';
}

static void
answer(external_answer *a, int status, int final, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
answer(external_answer *a, int status, int final, const char *fmt, ...)
{
	a->status = status;
	a->final = final;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->why, sizeof a->why, fmt, ap);
	va_end(ap);
}

static long long
mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The child's side: never returns. Only async-signal-safe calls. */
static void __attribute__((noreturn))
child(const char *prog, int in, int out, int err, char **envp)
{
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	if (close_range(3, ~0U, 0) < 0)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	if (chdir("/") < 0)
		_exit(126);
	char *const argv[] = { (char *)prog, NULL };
	execve(prog, argv, envp);
	_exit(127);
}

/* The delivery's trace in *t and tp (0: the event has none): a child of
 * the event's, or its delivery's span's own while spans are exported. */
static int
delivery_trace(const external_event *ev, trace_ctx *t,
    char tp[TRACEPARENT_SIZE])
{
	if (!ev->trace)
		return 0;
	*t = *ev->trace; /* a span that exists: the subscriber's one's parent */
	if (!span_on())
		tracectx_child(ev->trace, t);
	tracectx_format(t, tp);
	return 1;
}

/* The program's environment: see external.h. */
static char **
child_env(const external_event *ev, size_t *n)
{
	size_t cap = 8, k = 0;
	char **envp = bakery_xmalloc(cap * sizeof *envp);
	envp[k++] = bakery_xstrdup("PATH=" EXTERNAL_PATH);
	envp[k++] = bakery_xasprintf("BAKERY_EVENT_ID=%s", ev->id);
	envp[k++] = bakery_xasprintf("BAKERY_EVENT_TYPE=%s", ev->type);
	envp[k++] = bakery_xasprintf("BAKERY_SANDBOX=%s", ev->sandbox);
	char tp[TRACEPARENT_SIZE];
	trace_ctx t;
	if (delivery_trace(ev, &t, tp)) {
		envp[k++] = bakery_xasprintf("TRACEPARENT=%s", tp);
		if (t.state[0])
			envp[k++] = bakery_xasprintf("TRACESTATE=%s", t.state);
	}
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "BAKERY_SUBSCRIBER_", 18) != 0 &&
		    strncmp(*e, "TZ=", 3) != 0 && strncmp(*e, "LANG=", 5) != 0 &&
		    strncmp(*e, "LC_ALL=", 7) != 0)
			continue;
		if (k + 2 > cap)
			envp = bakery_xrealloc(envp, (cap *= 2) * sizeof *envp);
		envp[k++] = bakery_xstrdup(*e);
	}
	envp[k] = NULL;
	*n = k;
	return envp;
}

/* One run of a program: its pipes, what is left to write, the tail of
 * its stderr, and how it ended. */
struct run {
	pid_t pid;
	int fds[3]; /* its stdin (ours to write), stdout, stderr */
	char *body;
	size_t sent, total;
	char *tail; /* the last EXTERNAL_OUTPUT_CAP bytes of stderr */
	size_t tlen;
	int status, reaped, timed_out;
};

static void
close_pipes(int in[2], int out[2], int err[2])
{
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
}

/* Starts prog in a process group of its own with the envelope to write
 * to its stdin; EX_OSERR with a 503 answer when it cannot. */
static int
spawn(const char *prog, const external_event *ev, struct run *r,
    external_answer *a)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
	    pipe2(err, O_CLOEXEC)) {
		answer(a, ANSWER_UNAVAILABLE, 0, "cannot make pipes: %s",
		    strerror(errno));
		close_pipes(in, out, err);
		return EX_OSERR;
	}
	size_t nenv;
	char **envp = child_env(ev, &nenv);
	pid_t pid = fork();
	if (pid == 0)
		child(prog, in[0], out[1], err[1], envp);
	for (size_t i = 0; i < nenv; i++)
		free(envp[i]);
	free(envp);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		answer(a, ANSWER_UNAVAILABLE, 0, "cannot start it: %s",
		    strerror(errno));
		close(in[1]);
		close(out[0]);
		close(err[0]);
		return EX_OSERR;
	}
	setpgid(pid, pid); /* as the child does: no race on the kill */
	r->pid = pid;
	r->fds[0] = in[1];
	r->fds[1] = out[0];
	r->fds[2] = err[0];
	/* The envelope and its newline; then stdin is closed. */
	r->body = bakery_xmalloc(ev->len + 1);
	memcpy(r->body, ev->body, ev->len);
	r->body[ev->len] = '\n';
	r->total = ev->len + 1;
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	r->tail = bakery_xmalloc(EXTERNAL_OUTPUT_CAP);
	return 0;
}

static void
close_fd(struct run *r, int i)
{
	close(r->fds[i]);
	r->fds[i] = -1;
}

/* One ready pipe: write more of the body, or read (stdout is dropped,
 * stderr's tail kept). */
static void
pump_fd(struct run *r, int i)
{
	char chunk[8192];
	_Static_assert(sizeof chunk < EXTERNAL_OUTPUT_CAP, "chunk < tail");
	if (i == 0) {
		ssize_t w = write(r->fds[0], r->body + r->sent,
		    r->total - r->sent);
		if (w > 0)
			r->sent += (size_t)w;
		if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
		    r->sent == r->total)
			close_fd(r, 0);
		return;
	}
	ssize_t n = read(r->fds[i], chunk, sizeof chunk);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			close_fd(r, i);
		return;
	}
	if (i == 2) {
		/* chunk is smaller than the tail kept. */
		size_t k = (size_t)n;
		if (r->tlen + k > EXTERNAL_OUTPUT_CAP) {
			size_t drop = r->tlen + k - EXTERNAL_OUTPUT_CAP;
			memmove(r->tail, r->tail + drop, r->tlen - drop);
			r->tlen -= drop;
		}
		memcpy(r->tail + r->tlen, chunk, k);
		r->tlen += k;
	}
}

/* Feeds and drains the program's pipes until it has ended and they are
 * closed, it ended and only something else holds them, the deadline
 * passes, or poll fails. */
static void
pump(struct run *r, int timeout_s)
{
	long long deadline = mono_ms() + (long long)timeout_s * 1000;
	while (r->fds[1] >= 0 || r->fds[2] >= 0 || !r->reaped) {
		long long left = deadline - mono_ms();
		if (left <= 0) {
			r->timed_out = 1;
			break;
		}
		if (!r->reaped && waitpid(r->pid, &r->status, WNOHANG) == r->pid)
			r->reaped = 1;
		if (r->reaped && r->fds[1] < 0 && r->fds[2] < 0)
			break;
		struct pollfd p[3];
		nfds_t np = 0;
		int which[3];
		for (int i = 0; i < 3; i++) {
			if (r->fds[i] < 0)
				continue;
			p[np].fd = r->fds[i];
			p[np].events = i == 0 ? POLLOUT : POLLIN;
			which[np++] = i;
		}
		/* Wake now and then to reap: a grandchild may hold the
		 * pipes open after the program itself has ended. */
		int wait_ms = left < 50 ? (int)left : 50;
		int got = 0;
		if (np)
			got = poll(p, np, wait_ms);
		else
			usleep((useconds_t)wait_ms * 1000);
		if (got < 0 && errno != EINTR)
			break;
		if (r->reaped && got == 0)
			break; /* it ended; whatever holds the pipes is not it */
		for (nfds_t j = 0; got > 0 && j < np; j++)
			if (p[j].revents)
				pump_fd(r, which[j]);
	}
}

/* Past the timeout, or bakery's own poll failed, or the program ended:
 * the whole group goes, so nothing of it (a child left in the
 * background) writes on, or runs on, after its answer. */
static void
reap(struct run *r)
{
	kill(-r->pid, SIGKILL);
	if (!r->reaped)
		while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
			;
	for (int i = 0; i < 3; i++)
		if (r->fds[i] >= 0)
			close_fd(r, i);
}

/* The subscriber's answer from how the program ended and the last line
 * of its stderr. */
static void
answer_run(const struct run *r, int timeout_s, external_answer *a)
{
	char word[160];
	external_last_word(r->tail, r->tlen, 1, word, sizeof word);
	const char *sep = word[0] ? ": " : "";
	int status = r->status;
	if (r->timed_out && !r->reaped)
		answer(a, ANSWER_TIMED_OUT, 0, "timed out after %d s%s%s",
		    timeout_s, sep, word);
	else if (WIFSIGNALED(status))
		answer(a, ANSWER_FAILED, 0, "killed by signal %d%s%s",
		    WTERMSIG(status), sep, word);
	else if (WEXITSTATUS(status) == 0)
		answer(a, ANSWER_APPLIED, 0, "%s", "");
	else if (WEXITSTATUS(status) == EX_TEMPFAIL)
		answer(a, ANSWER_UNAVAILABLE, 0, "exit 75%s%s", sep, word);
	else if (WEXITSTATUS(status) == EX_DATAERR)
		answer(a, ANSWER_MALFORMED, 1, "exit 65%s%s", sep, word);
	else if (WEXITSTATUS(status) == 127)
		answer(a, ANSWER_FAILED, 0, "exit 127: %s",
		    word[0] ? word : "cannot run the program");
	else
		answer(a, ANSWER_FAILED, 0, "exit %d%s%s", WEXITSTATUS(status),
		    sep, word);
}

int
external_exec(const char *prog, const external_event *ev, int timeout_s,
    external_answer *a)
{
	struct run r = { .fds = { -1, -1, -1 } };
	int rc = spawn(prog, ev, &r, a);
	if (rc)
		return rc;
	/* A program that closes its stdin unread answers by its exit status;
	 * the write gets EPIPE instead of killing this process, whatever the
	 * caller did with SIGPIPE (bakery's programs ignore it). */
	struct sigaction ignore = { .sa_handler = SIG_IGN }, old_pipe;
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGPIPE, &ignore, &old_pipe);
	pump(&r, timeout_s);
	reap(&r);
	sigaction(SIGPIPE, &old_pipe, NULL);
	answer_run(&r, timeout_s, a);
	free(r.body);
	free(r.tail);
	return 0;
}

/* RFC 4648 base64, with padding. out holds 4 * ceil(n / 3) + 1 bytes. */
static void
b64_encode(const unsigned char *in, size_t n, char *out)
{
	static const char t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

/* Decodes base64 (padding optional); -1 on a bad character. */
static long
b64_decode(const char *s, unsigned char *out, size_t size)
{
	unsigned v = 0;
	int bits = 0;
	size_t o = 0;
	for (; *s && *s != '='; s++) {
		const char *t =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *c = strchr(t, *s);
		if (!c)
			return -1;
		v = v << 6 | (unsigned)(c - t);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == size)
				return -1;
			out[o++] = (unsigned char)(v >> bits & 0xff);
		}
	}
	for (; *s == '='; s++)
		;
	return *s ? -1 : (long)o;
}

int
external_sign(const char *secret, const char *id, long long timestamp,
    const char *body, size_t len, char *out, size_t size)
{
	unsigned char key[256];
	long klen = strncmp(secret, "whsec_", 6) == 0
	    ? b64_decode(secret + 6, key, sizeof key) : -1;
	if (klen <= 0)
		return bakery_fail(EX_CONFIG, "a webhook secret wants whsec_ "
		    "and base64");
	int rc = lazy_crypto();
	if (rc)
		return rc;
	char head[200];
	int hn = snprintf(head, sizeof head, "%s.%lld.", id, timestamp);
	size_t mlen = (size_t)hn + len;
	unsigned char *msg = bakery_xmalloc(mlen);
	memcpy(msg, head, (size_t)hn);
	memcpy(msg + hn, body, len);
	unsigned char mac[32];
	unsigned int maclen = 0;
	int good = HMAC(EVP_sha256(), key, (int)klen, msg, mlen, mac,
	    &maclen) != NULL && maclen == 32;
	free(msg);
	explicit_bzero(key, sizeof key);
	if (!good || size < 48)
		return bakery_fail(EX_SOFTWARE, "HMAC-SHA256 failed");
	memcpy(out, "v1,", 3);
	b64_encode(mac, 32, out + 3);
	return 0;
}

struct body {
	char buf[EXTERNAL_OUTPUT_CAP];
	size_t n;
	int headers_ended; /* the blank line after the last answer's headers */
};

/* libcurl takes a status line and a closed connection for a whole
 * answer: only a blank line after the headers says they all came. A new
 * status line (after a 1xx) starts the count again. */
static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t k = size * n;
	if (k >= 5 && memcmp(p, "HTTP/", 5) == 0)
		b->headers_ended = 0;
	else if ((k == 2 && p[0] == '\r' && p[1] == '\n') ||
	    (k == 1 && p[0] == '\n'))
		b->headers_ended = 1;
	return k;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t k = size * n, room = sizeof b->buf - b->n;
	memcpy(b->buf + b->n, p, k < room ? k : room);
	b->n += k < room ? k : room;
	return k; /* the rest is read and dropped */
}

int
external_http(const char *url, const char *secret_file,
    const external_event *ev, int timeout_s, external_answer *a)
{
	char *secret;
	int rc = secret_read_file(secret_file, "a subscriber's webhook secret "
	    "file (secret=)", &secret);
	char sig[64];
	long long now = (long long)time(NULL);
	if (!rc) {
		rc = external_sign(secret, ev->id, now, ev->body, ev->len, sig,
		    sizeof sig);
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
	if (!rc && !(rc = lazy_curl()) &&
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		rc = bakery_fail(EX_UNAVAILABLE, "curl_global_init failed");
	if (rc) {
		answer(a, ANSWER_UNAVAILABLE, 0, "%s", bakery_error());
		return rc;
	}
	CURL *curl = curl_easy_init();
	if (!curl) {
		curl_global_cleanup();
		answer(a, ANSWER_UNAVAILABLE, 0, "curl_easy_init failed");
		return EX_UNAVAILABLE;
	}
	char h_id[200], h_ts[64], h_sig[100];
	snprintf(h_id, sizeof h_id, "webhook-id: %s", ev->id);
	snprintf(h_ts, sizeof h_ts, "webhook-timestamp: %lld", now);
	snprintf(h_sig, sizeof h_sig, "webhook-signature: %s", sig);
	struct curl_slist *headers = NULL;
	headers = curl_slist_append(headers, "Content-Type: application/json");
	headers = curl_slist_append(headers, h_id);
	headers = curl_slist_append(headers, h_ts);
	headers = curl_slist_append(headers, h_sig);
	/* Trace context: checked when the envelope was read
	 * (tracectx.h), so no header is forged; not signed. */
	char tp[TRACEPARENT_SIZE], h_tp[32 + TRACEPARENT_SIZE],
	    h_tstate[32 + TRACESTATE_MAX];
	trace_ctx t;
	if (delivery_trace(ev, &t, tp)) {
		snprintf(h_tp, sizeof h_tp, "traceparent: %s", tp);
		headers = curl_slist_append(headers, h_tp);
		if (t.state[0]) {
			snprintf(h_tstate, sizeof h_tstate, "tracestate: %s",
			    t.state);
			headers = curl_slist_append(headers, h_tstate);
		}
	}
	headers = curl_slist_append(headers, "Expect:");
	char errbuf[CURL_ERROR_SIZE] = "";
	struct body *b = bakery_xmalloc(sizeof *b);
	b->n = 0;
	b->headers_ended = 0;
	long connect_ms = timeout_s < 5 ? timeout_s * 1000L : 5000L;
	url_post_setopt(curl, &(url_post){ .url = url,
	    .connect_ms = connect_ms, .timeout_ms = timeout_s * 1000L,
	    .headers = headers, .body = ev->body, .len = ev->len,
	    .errbuf = errbuf, .on_body = on_body, .on_header = on_header,
	    .data = b });
	CURLcode c = curl_easy_perform(curl);
	long code = 0;
	if (c == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	char word[160];
	external_last_word(b->buf, b->n, 0, word, sizeof word);
	const char *sep = word[0] ? ": " : "";
	if (c == CURLE_OPERATION_TIMEDOUT)
		answer(a, ANSWER_TIMED_OUT, 0, "timed out after %d s",
		    timeout_s);
	else if (c != CURLE_OK)
		answer(a, ANSWER_UNAVAILABLE, 0, "%s", errbuf[0] ? errbuf
		    : curl_easy_strerror(c));
	else if (!b->headers_ended)
		answer(a, ANSWER_UNAVAILABLE, 0, "HTTP %ld: not a complete HTTP "
		    "response (its headers never ended)", code);
	else if (code >= 200 && code < 300)
		answer(a, ANSWER_APPLIED, 0, "%s", "");
	else if (code == 408 || code == 429 || code >= 500)
		answer(a, ANSWER_UNAVAILABLE, 0, "HTTP %ld%s%s", code, sep,
		    word);
	else if (code >= 400)
		answer(a, ANSWER_MALFORMED, 1, "HTTP %ld%s%s", code, sep, word);
	else
		answer(a, ANSWER_FAILED, 0, "HTTP %ld (redirects are not "
		    "followed)%s%s", code, sep, word);
	free(b);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	curl_global_cleanup();
	return 0;
}
