/*
 * lazy_curl.h — libcurl, loaded on first use (lazy.h).
 */
#ifndef BAKERY_LAZY_CURL_H
#define BAKERY_LAZY_CURL_H

/* curl_easy_setopt() and _getinfo() stay functions, not checking macros. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "lazy.h"

#ifndef LAZY_CURL_SONAME
#define LAZY_CURL_SONAME "libcurl.so.4"
#endif

#define LAZY_CURL_FUNCTIONS(X) X(curl_easy_cleanup) X(curl_easy_escape) \
	X(curl_easy_getinfo) X(curl_easy_init) X(curl_easy_perform)     \
	X(curl_easy_setopt) X(curl_easy_strerror) X(curl_free)          \
	X(curl_global_cleanup) X(curl_global_init) X(curl_slist_append) \
	X(curl_slist_free_all) X(curl_url) X(curl_url_cleanup)          \
	X(curl_url_get) X(curl_url_set) X(curl_version_info)
LAZY_CURL_FUNCTIONS(LAZY_EXTERN)
int lazy_curl(void);

/* curl.h makes these two macros that check their argument count. */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup (*lazy_curl_easy_cleanup)
#define curl_easy_escape (*lazy_curl_easy_escape)
#define curl_easy_getinfo (*lazy_curl_easy_getinfo)
#define curl_easy_init (*lazy_curl_easy_init)
#define curl_easy_perform (*lazy_curl_easy_perform)
#define curl_easy_setopt (*lazy_curl_easy_setopt)
#define curl_easy_strerror (*lazy_curl_easy_strerror)
#define curl_free (*lazy_curl_free)
#define curl_global_cleanup (*lazy_curl_global_cleanup)
#define curl_global_init (*lazy_curl_global_init)
#define curl_slist_append (*lazy_curl_slist_append)
#define curl_slist_free_all (*lazy_curl_slist_free_all)
#define curl_url (*lazy_curl_url)
#define curl_url_cleanup (*lazy_curl_url_cleanup)
#define curl_url_get (*lazy_curl_url_get)
#define curl_url_set (*lazy_curl_url_set)
#define curl_version_info (*lazy_curl_version_info)

#endif
