/*
 * otlp.h — spans sent to an OpenTelemetry collector: OTLP over HTTP with
 * the JSON encoding (POST ENDPOINT/v1/traces), configured by
 * OpenTelemetry's standard variables.
 *
 * Owns: the exporter's settings (OTEL_EXPORTER_OTLP_ENDPOINT,
 * _TRACES_ENDPOINT, _HEADERS, _TIMEOUT, _TRACES_TIMEOUT, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED, OTEL_TRACES_SAMPLER and
 * _ARG), read once; the sampler's decision; one request of spans sent,
 * bounded in time; the count of spans that could not be sent, in
 * HOME/.spans-dropped.
 *
 * Promises: with no endpoint set, export is off at the cost of a getenv.
 * Every value is hostile: a URL that is not http(s) (url_check_http: http
 * to a loopback host only, no userinfo), a bad header list, timeout,
 * sampler or resource attribute turns export off with one warning
 * (otlp_off), and the program runs as it would have. A collector that is
 * gone, hangs or refuses holds a program at most the timeout (2000 ms by
 * default), and never changes its output or exit status: its spans are
 * counted as dropped.
 *
 * libcurl is loaded (and initialised, once for the process) at the first
 * send, not when the settings are read, when the endpoint is one
 * url_plain_http vouches for (the usual http://127.0.0.1:4318, an https://
 * host name): a program that records no span never loads it. Any other
 * endpoint is read by libcurl's parser at once, so that a bad one is
 * still refused, and warned of, before anything is recorded. Should the
 * parser refuse at the first send what url_plain_http took, or libcurl
 * not load, that send's spans are not sent and are counted.
 */
#ifndef BAKERY_OTLP_H
#define BAKERY_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "../base/tracectx.h"

/* The home where spans not sent are counted (ctx_init's); settings are
 * read on the first otlp_on(). */
void otlp_home(const char *home);
/* 1 when spans are exported. */
int otlp_on(void);
/* Whether a span whose parent is parent (NULL: a new trace with trace id
 * trace_id) is recorded and sampled, as the sampler says. */
int otlp_sample(const trace_ctx *parent, const char *trace_id);
/* Sends n spans in one request: spans, len bytes, is their OTLP/JSON
 * text, comma-separated (span.c writes it; borrowed); those not accepted
 * counted in HOME/.spans-dropped. */
void otlp_send(const char *spans, size_t len, size_t n);
/* The spans counted as not sent in home's count (0 when none). */
int64_t otlp_dropped(const char *home);

#endif
