#ifndef GATEHOUSE_CCURL_SHIM_H
#define GATEHOUSE_CCURL_SHIM_H
#include <curl/curl.h>
/* curl_easy_setopt is variadic; Swift needs typed entry points. */
static inline CURLcode gh_curl_setopt_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_setopt_str(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_setopt_ptr(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
typedef size_t (*gh_curl_io_fn)(char *, size_t, size_t, void *);
static inline CURLcode gh_curl_setopt_fn(CURL *c, CURLoption o, gh_curl_io_fn v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_getinfo_long(CURL *c, CURLINFO i, long *v) { return curl_easy_getinfo(c, i, v); }
#endif
