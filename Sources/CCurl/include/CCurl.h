/*
 * CCurl: libcurl (libcurl.so.4) loaded on first use with dlopen, so a process that never sends
 * an SMS, an email or a siteverify request never maps libcurl and its TLS/LDAP/SSH chain.
 * curl's own header gives the types and constants; only the gh_curl_* functions below may be
 * called (they go through pointers found with dlsym). curl_easy_setopt and curl_easy_getinfo are
 * variadic, so they get one typed entry point per argument kind.
 */
#ifndef GATEHOUSE_CCURL_H
#define GATEHOUSE_CCURL_H
#include <curl/curl.h>

/* Loads libcurl once (thread-safe) and runs curl_global_init. Returns 1 when usable; else 0
 * with the reason in gh_curl_load_error(). Every other gh_curl_* function needs it to be 1. */
int gh_curl_load(void);
const char *gh_curl_load_error(void);

CURL *gh_curl_easy_init(void);
void gh_curl_easy_cleanup(CURL *c);
CURLcode gh_curl_easy_perform(CURL *c);
const char *gh_curl_easy_strerror(CURLcode rc);
struct curl_slist *gh_curl_slist_append(struct curl_slist *list, const char *s);
void gh_curl_slist_free_all(struct curl_slist *list);

CURLcode gh_curl_setopt_long(CURL *c, CURLoption o, long v);
CURLcode gh_curl_setopt_str(CURL *c, CURLoption o, const char *v);
CURLcode gh_curl_setopt_ptr(CURL *c, CURLoption o, void *v);
typedef size_t (*gh_curl_io_fn)(char *, size_t, size_t, void *);
CURLcode gh_curl_setopt_fn(CURL *c, CURLoption o, gh_curl_io_fn v);
CURLcode gh_curl_getinfo_long(CURL *c, CURLINFO i, long *v);
#endif
