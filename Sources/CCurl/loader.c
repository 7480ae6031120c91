/* Loads libcurl.so.4 on first use (see include/CCurl.h). */
#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The soname of Debian's libcurl4 (libcurl4-openssl-dev links against it). */
#define GH_CURL_SONAME "libcurl.so.4"

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char error[512];

#define FIND(field, name)                                                                   \
    if (!(*(void **)&fn.field = dlsym(lib, name))) {                                        \
        snprintf(error, sizeof error, "%s has no symbol %s", GH_CURL_SONAME, name);         \
        return;                                                                             \
    }

static void load(void) {
    void *lib = dlopen(GH_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "cannot load %s (Debian package libcurl4): %s", GH_CURL_SONAME, why ? why : "unknown error");
        return;
    }
    FIND(global_init, "curl_global_init")
    FIND(easy_init, "curl_easy_init")
    FIND(easy_cleanup, "curl_easy_cleanup")
    FIND(easy_perform, "curl_easy_perform")
    FIND(easy_strerror, "curl_easy_strerror")
    FIND(easy_setopt, "curl_easy_setopt")
    FIND(easy_getinfo, "curl_easy_getinfo")
    FIND(slist_append, "curl_slist_append")
    FIND(slist_free_all, "curl_slist_free_all")
    CURLcode rc = fn.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(error, sizeof error, "curl_global_init failed: %s", fn.easy_strerror(rc));
        return;
    }
    loaded = 1;
}

int gh_curl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *gh_curl_load_error(void) { return error; }

CURL *gh_curl_easy_init(void) { return fn.easy_init(); }
void gh_curl_easy_cleanup(CURL *c) { fn.easy_cleanup(c); }
CURLcode gh_curl_easy_perform(CURL *c) { return fn.easy_perform(c); }
const char *gh_curl_easy_strerror(CURLcode rc) { return fn.easy_strerror(rc); }
struct curl_slist *gh_curl_slist_append(struct curl_slist *l, const char *s) { return fn.slist_append(l, s); }
void gh_curl_slist_free_all(struct curl_slist *l) { fn.slist_free_all(l); }

CURLcode gh_curl_setopt_long(CURL *c, CURLoption o, long v) { return fn.easy_setopt(c, o, v); }
CURLcode gh_curl_setopt_str(CURL *c, CURLoption o, const char *v) { return fn.easy_setopt(c, o, v); }
CURLcode gh_curl_setopt_ptr(CURL *c, CURLoption o, void *v) { return fn.easy_setopt(c, o, v); }
CURLcode gh_curl_setopt_fn(CURL *c, CURLoption o, gh_curl_io_fn v) { return fn.easy_setopt(c, o, v); }
CURLcode gh_curl_getinfo_long(CURL *c, CURLINFO i, long *v) { return fn.easy_getinfo(c, i, v); }
