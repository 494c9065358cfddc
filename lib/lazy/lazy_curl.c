/*
 * lazy_curl.c — libcurl's table, loaded on first use (lazy_curl.h).
 */
#include "lazy_curl.h"

LAZY_TABLE(lazy_curl, LAZY_CURL_SONAME, LAZY_CURL_FUNCTIONS)
