/*
 * fcgi-baseline: the performance floor for Gatehouse's benchmarks.
 *
 * A deliberately small, conventional, threaded libfcgi responder that does
 * the same kind of work as Gatehouse on its two hot paths:
 *
 *   /page    a static ~2 KB sign-in-like HTML page
 *   /page-large  the same page with its country list padded to the size of
 *            Gatehouse's hosted phone page (~14 KB; a control for the cost of
 *            moving the bytes, not a target)
 *   /verify  RS256 JWT check of one cookie (nginx auth_request style):
 *            200 + X-Auth-User-Id on success, 401 otherwise
 *   other    404
 *
 * Usage:  fcgi-baseline SOCKET [THREADS]
 *   SOCKET   unix socket path, or ":PORT" / "HOST:PORT" (libfcgi syntax)
 *   THREADS  worker threads (else $BASELINE_THREADS, else 2 x online CPUs)
 *
 *         fcgi-baseline            (no arguments, started by a CGI server)
 *   CGI mode (RFC 3875): when GATEWAY_INTERFACE is set and fd 0 is not a
 *   FastCGI listening socket, answers the one request described by the
 *   environment on stdout and exits.
 *
 * Environment:
 *   BASELINE_PUBKEY   PEM file with the RSA public key (SubjectPublicKeyInfo,
 *                     "-----BEGIN PUBLIC KEY-----"); required for /verify
 *   BASELINE_COOKIE   name of the cookie carrying the JWT
 *                     (default "__Host-gatehouse")
 *   BASELINE_THREADS  worker thread count (overridden by argv[2])
 *   BASELINE_BACKLOG  listen(2) backlog (default 1024)
 *   BASELINE_LARGE_PAGE_BYTES  body size of /page-large (default 14336)
 *
 * SIGTERM / SIGINT stop it cleanly (the unix socket is unlinked).
 */

#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */
/* ------------------------------------------------------------------------ */

#define MAX_TOKEN_LEN   8192    /* whole cookie value */
#define MAX_HEADER_LEN  1024    /* decoded JOSE header */
#define MAX_PAYLOAD_LEN 4096    /* decoded claims */
#define MAX_SIG_LEN     1024    /* decoded signature (RSA up to 8192 bits) */
#define MAX_SUB_LEN     255
#define MAX_THREADS     1024

/* ------------------------------------------------------------------------ */
/* Static page                                                              */
/* ------------------------------------------------------------------------ */

static const char PAGE_HTML[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<meta name=\"referrer\" content=\"no-referrer\">\n"
    "<title>Sign in</title>\n"
    "<style>\n"
    "body{margin:0;font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,"
    "sans-serif;background:#f4f5f7;color:#1d2330}\n"
    "main{max-width:22rem;margin:4rem auto;padding:2rem;background:#fff;"
    "border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}\n"
    "h1{font-size:1.4rem;margin:0 0 .25rem}\n"
    "p{margin:0 0 1.25rem;color:#5b6472}\n"
    "label{display:block;font-weight:600;margin:.75rem 0 .25rem}\n"
    "select,input,button{box-sizing:border-box;width:100%;font:inherit;"
    "padding:.6rem .7rem;border:1px solid #c4c9d2;border-radius:.4rem}\n"
    "button{margin-top:1.25rem;background:#2454d6;border-color:#2454d6;"
    "color:#fff;font-weight:600;cursor:pointer}\n"
    "small{display:block;margin-top:1rem;color:#7a8290}\n"
    "</style>\n"
    "</head>\n"
    "<body>\n"
    "<main>\n"
    "<h1>Sign in</h1>\n"
    "<p>We will text you a one-time code. No password needed.</p>\n"
    "<form method=\"post\" action=\"/start\" autocomplete=\"on\">\n"
    "<input type=\"hidden\" name=\"csrf\" "
    "value=\"Qm9vdHN0cmFwLXRva2VuLWZvci1iZW5jaG1hcmtz\">\n"
    "<label for=\"country\">Country</label>\n"
    "<select id=\"country\" name=\"country\" autocomplete=\"tel-country-code\">\n"
    "<option value=\"US\" selected>United States (+1)</option>\n"
    "<option value=\"GB\">United Kingdom (+44)</option>\n"
    "<option value=\"DE\">Germany (+49)</option>\n"
    "<option value=\"FR\">France (+33)</option>\n"
    "<option value=\"NL\">Netherlands (+31)</option>\n"
    "<option value=\"IN\">India (+91)</option>\n"
    "<option value=\"BR\">Brazil (+55)</option>\n"
    "<option value=\"JP\">Japan (+81)</option>\n"
    "</select>\n"
    "<label for=\"phone\">Phone number</label>\n"
    "<input id=\"phone\" name=\"phone\" type=\"tel\" inputmode=\"tel\" "
    "autocomplete=\"tel-national\" placeholder=\"555 123 4567\" "
    "required maxlength=\"20\" pattern=\"[0-9 ()+.-]{4,20}\">\n"
    "<button type=\"submit\">Send code</button>\n"
    "</form>\n"
    "<small>By continuing you agree to receive one text message. "
    "Standard rates may apply.</small>\n"
    "</main>\n"
    "</body>\n"
    "</html>\n";

_Static_assert(sizeof(PAGE_HTML) - 1 >= 1900 && sizeof(PAGE_HTML) - 1 <= 2200,
               "static page must be between 1900 and 2200 bytes");

static const char RESP_401[] =
    "Status: 401 Unauthorized\r\n"
    "Cache-Control: no-store\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

static const char RESP_404[] =
    "Status: 404 Not Found\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

/* Full /page response (headers + body), built once at start-up. */
static char *page_response;
static int page_response_len;

/* /page-large: the same page, its <select> padded with options to this many bytes. */
#define LARGE_PAGE_DEFAULT 14336
#define LARGE_PAGE_MAX     (1 << 20)
static char *large_response;
static int large_response_len;

/* ------------------------------------------------------------------------ */
/* Global state                                                             */
/* ------------------------------------------------------------------------ */

static int listen_sock = -1;
static pthread_mutex_t accept_mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stopping;              /* set by main, read by workers */
static atomic_int fatal_error;           /* a worker (or start-up) failed */

static EVP_PKEY *pubkey;                 /* NULL: /verify always answers 401 */
static const char *cookie_name = "__Host-gatehouse";
static size_t cookie_name_len;

/* ------------------------------------------------------------------------ */
/* base64url (RFC 4648 section 5, no padding, strict)                        */
/* ------------------------------------------------------------------------ */

static signed char b64url_value[256];

static void b64url_init(void)
{
    const char *alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    memset(b64url_value, -1, sizeof(b64url_value));
    for (int i = 0; i < 64; i++)
        b64url_value[(unsigned char)alphabet[i]] = (signed char)i;
}

/*
 * Decodes len characters of in into out (capacity cap).  Returns the number
 * of bytes written, or -1 on any invalid character, impossible length,
 * non-zero trailing bits or insufficient capacity.
 */
static long b64url_decode(const char *in, size_t len, unsigned char *out,
                          size_t cap)
{
    size_t rem = len % 4;
    if (rem == 1)
        return -1;
    size_t need = (len / 4) * 3 + (rem ? rem - 1 : 0);
    if (need > cap)
        return -1;

    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value[(unsigned char)in[i]];
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0)       /* leftover bits must be zero (canonical encoding) */
        return -1;
    return (long)o;
}

/* ------------------------------------------------------------------------ */
/* Minimal JSON: walk the members of one top-level object                    */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *p;
    const char *end;
} json_cur;

static void json_ws(json_cur *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Skips a string starting at the opening quote; c->p ends after the close. */
static int json_skip_string(json_cur *c)
{
    if (c->p >= c->end || *c->p != '"')
        return -1;
    c->p++;
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '"') {
            c->p++;
            return 0;
        }
        if (ch < 0x20)
            return -1;
        if (ch == '\\') {
            c->p++;
            if (c->p >= c->end)
                return -1;
        }
        c->p++;
    }
    return -1;
}

/* Skips any value (string, object, array, number, literal). */
static int json_skip_value(json_cur *c)
{
    if (c->p >= c->end)
        return -1;
    char ch = *c->p;
    if (ch == '"')
        return json_skip_string(c);
    if (ch == '{' || ch == '[') {
        int depth = 0;
        while (c->p < c->end) {
            ch = *c->p;
            if (ch == '"') {
                if (json_skip_string(c) < 0)
                    return -1;
                continue;
            }
            if (ch == '{' || ch == '[') {
                if (++depth > 32)
                    return -1;
            } else if (ch == '}' || ch == ']') {
                if (--depth == 0) {
                    c->p++;
                    return 0;
                }
            }
            c->p++;
        }
        return -1;
    }
    /* number / true / false / null */
    const char *start = c->p;
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']' &&
           *c->p != ' ' && *c->p != '\t' && *c->p != '\n' && *c->p != '\r')
        c->p++;
    return c->p > start ? 0 : -1;
}

typedef struct {
    const char *name;   /* member name (compared with the raw key bytes) */
    const char *val;    /* out: start of the raw value, NULL if absent */
    size_t val_len;     /* out */
} json_field;

/*
 * Parses buf as a single JSON object and fills in the raw value of each
 * requested member.  Duplicate requested members are rejected.
 * Returns 0 on success, -1 on malformed input.
 */
static int json_object_fields(const char *buf, size_t len, json_field *fields,
                              int nfields)
{
    json_cur c = { buf, buf + len };
    for (int i = 0; i < nfields; i++)
        fields[i].val = NULL;

    json_ws(&c);
    if (c.p >= c.end || *c.p != '{')
        return -1;
    c.p++;
    json_ws(&c);
    if (c.p < c.end && *c.p == '}') {
        c.p++;
        goto done;
    }
    for (;;) {
        const char *key = c.p + 1;
        if (json_skip_string(&c) < 0)
            return -1;
        size_t key_len = (size_t)(c.p - 1 - key);
        json_ws(&c);
        if (c.p >= c.end || *c.p != ':')
            return -1;
        c.p++;
        json_ws(&c);
        const char *val = c.p;
        if (json_skip_value(&c) < 0)
            return -1;
        for (int i = 0; i < nfields; i++) {
            if (strlen(fields[i].name) == key_len &&
                memcmp(fields[i].name, key, key_len) == 0) {
                if (fields[i].val != NULL)
                    return -1;              /* duplicate member */
                fields[i].val = val;
                fields[i].val_len = (size_t)(c.p - val);
            }
        }
        json_ws(&c);
        if (c.p >= c.end)
            return -1;
        if (*c.p == ',') {
            c.p++;
            json_ws(&c);
            continue;
        }
        if (*c.p == '}') {
            c.p++;
            break;
        }
        return -1;
    }
done:
    json_ws(&c);
    return c.p == c.end ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Cookie lookup                                                             */
/* ------------------------------------------------------------------------ */

/* Finds cookie `cookie_name` in a Cookie header; first occurrence wins. */
static int find_cookie(const char *header, const char **val, size_t *val_len)
{
    const char *p = header;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ';')
            p++;
        if (!*p)
            break;
        const char *name = p;
        while (*p && *p != '=' && *p != ';')
            p++;
        size_t name_len = (size_t)(p - name);
        while (name_len > 0 &&
               (name[name_len - 1] == ' ' || name[name_len - 1] == '\t'))
            name_len--;
        if (*p != '=')
            continue;                       /* attribute without value */
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        const char *v = p;
        while (*p && *p != ';')
            p++;
        size_t vlen = (size_t)(p - v);
        while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            vlen--;
        if (name_len == cookie_name_len &&
            memcmp(name, cookie_name, name_len) == 0) {
            if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
                v++;
                vlen -= 2;
            }
            *val = v;
            *val_len = vlen;
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* JWT verification                                                          */
/* ------------------------------------------------------------------------ */

typedef struct {
    EVP_PKEY *pkey;     /* this thread's reference to the shared key */
    EVP_MD_CTX *mdctx;  /* reused for every request on this thread */
    EVP_MD *sha256;     /* explicitly fetched once per thread */
} verifier;

/* Parses a JSON NumericDate; only the integer part is used. */
static int parse_numeric_date(const char *v, size_t len, long long *out)
{
    size_t i = 0;
    long long n = 0;
    if (len == 0 || v[0] < '0' || v[0] > '9')
        return -1;
    for (; i < len && v[i] >= '0' && v[i] <= '9'; i++) {
        if (n > (LLONG_MAX - 9) / 10)
            return -1;
        n = n * 10 + (v[i] - '0');
    }
    if (i < len) {                          /* optional fraction */
        if (v[i] != '.' || i + 1 == len)
            return -1;
        for (i++; i < len; i++)
            if (v[i] < '0' || v[i] > '9')
                return -1;
    }
    *out = n;
    return 0;
}

/*
 * Verifies token (len bytes, not NUL-terminated).  On success copies the
 * subject (NUL-terminated, <= MAX_SUB_LEN) into sub and returns 0.
 */
static int verify_jwt(verifier *vf, const char *tok, size_t len, char *sub)
{
    if (vf->pkey == NULL || len == 0 || len > MAX_TOKEN_LEN)
        return -1;

    const char *dot1 = memchr(tok, '.', len);
    if (dot1 == NULL)
        return -1;
    const char *dot2 = memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - tok));
    if (dot2 == NULL)
        return -1;
    const char *end = tok + len;
    if (memchr(dot2 + 1, '.', (size_t)(end - dot2 - 1)) != NULL)
        return -1;

    unsigned char hdr[MAX_HEADER_LEN];
    unsigned char pl[MAX_PAYLOAD_LEN];
    unsigned char sig[MAX_SIG_LEN];

    long hdr_len = b64url_decode(tok, (size_t)(dot1 - tok), hdr, sizeof(hdr));
    if (hdr_len <= 0)
        return -1;

    /* Header: alg must be exactly RS256. */
    json_field hf[1] = { { "alg", NULL, 0 } };
    if (json_object_fields((const char *)hdr, (size_t)hdr_len, hf, 1) < 0 ||
        hf[0].val == NULL || hf[0].val_len != 7 ||
        memcmp(hf[0].val, "\"RS256\"", 7) != 0)
        return -1;

    long sig_len = b64url_decode(dot2 + 1, (size_t)(end - dot2 - 1), sig,
                                 sizeof(sig));
    if (sig_len <= 0)
        return -1;

    /* Signature over the ASCII "header.payload". */
    if (EVP_DigestVerifyInit(vf->mdctx, NULL, vf->sha256, NULL, vf->pkey) != 1 ||
        EVP_DigestVerify(vf->mdctx, sig, (size_t)sig_len,
                         (const unsigned char *)tok,
                         (size_t)(dot2 - tok)) != 1) {
        ERR_clear_error();
        return -1;
    }

    long pl_len = b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), pl,
                                sizeof(pl));
    if (pl_len <= 0)
        return -1;

    json_field pf[2] = { { "exp", NULL, 0 }, { "sub", NULL, 0 } };
    if (json_object_fields((const char *)pl, (size_t)pl_len, pf, 2) < 0 ||
        pf[0].val == NULL || pf[1].val == NULL)
        return -1;

    long long exp;
    if (parse_numeric_date(pf[0].val, pf[0].val_len, &exp) < 0 ||
        exp <= (long long)time(NULL))
        return -1;

    /* sub: a plain string of visible ASCII (it goes into a header). */
    const char *s = pf[1].val;
    size_t slen = pf[1].val_len;
    if (slen < 3 || s[0] != '"' || s[slen - 1] != '"' ||
        slen - 2 > MAX_SUB_LEN)
        return -1;
    for (size_t i = 1; i < slen - 1; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '\\' || ch == '"')
            return -1;
    }
    memcpy(sub, s + 1, slen - 2);
    sub[slen - 2] = '\0';
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Request handling                                                         */
/* ------------------------------------------------------------------------ */

typedef enum { ROUTE_NONE, ROUTE_PAGE, ROUTE_PAGE_LARGE, ROUTE_VERIFY } route;

static route route_of(const char *path, size_t len)
{
    if (len == 5 && memcmp(path, "/page", 5) == 0)
        return ROUTE_PAGE;
    if (len == 11 && memcmp(path, "/page-large", 11) == 0)
        return ROUTE_PAGE_LARGE;
    if (len == 7 && memcmp(path, "/verify", 7) == 0)
        return ROUTE_VERIFY;
    return ROUTE_NONE;
}

static route request_route(FCGX_ParamArray envp)
{
    const char *p = FCGX_GetParam("DOCUMENT_URI", envp);
    if (p == NULL || *p == '\0')
        p = FCGX_GetParam("SCRIPT_NAME", envp);
    if (p != NULL && *p != '\0')
        return route_of(p, strlen(p));
    p = FCGX_GetParam("REQUEST_URI", envp);
    if (p == NULL)
        return ROUTE_NONE;
    return route_of(p, strcspn(p, "?"));
}

/* Where a response goes: a FastCGI stream, or stdout in CGI mode. */
typedef struct {
    FCGX_Stream *fcgi;      /* NULL in CGI mode */
} sink;

static void sink_put(sink *out, const char *buf, int len)
{
    if (out->fcgi != NULL)
        FCGX_PutStr(buf, len, out->fcgi);
    else
        fwrite(buf, 1, (size_t)len, stdout);
}

static void handle_verify(verifier *vf, FCGX_ParamArray envp, sink *out)
{
    char sub[MAX_SUB_LEN + 1];
    const char *cookies = FCGX_GetParam("HTTP_COOKIE", envp);
    const char *tok;
    size_t tok_len;

    if (cookies != NULL && find_cookie(cookies, &tok, &tok_len) == 0 &&
        verify_jwt(vf, tok, tok_len, sub) == 0) {
        char buf[MAX_SUB_LEN + 128];
        int n = snprintf(buf, sizeof(buf),
                         "Status: 200 OK\r\n"
                         "X-Auth-User-Id: %s\r\n"
                         "Cache-Control: no-store\r\n"
                         "Content-Length: 0\r\n"
                         "\r\n", sub);
        sink_put(out, buf, n);
        return;
    }
    sink_put(out, RESP_401, (int)sizeof(RESP_401) - 1);
}

static void handle_request(verifier *vf, FCGX_ParamArray envp, sink *out)
{
    switch (request_route(envp)) {
    case ROUTE_PAGE:
        sink_put(out, page_response, page_response_len);
        break;
    case ROUTE_PAGE_LARGE:
        sink_put(out, large_response, large_response_len);
        break;
    case ROUTE_VERIFY:
        handle_verify(vf, envp, out);
        break;
    default:
        sink_put(out, RESP_404, (int)sizeof(RESP_404) - 1);
        break;
    }
}

static void *worker(void *arg)
{
    (void)arg;
    verifier vf = { NULL, NULL, NULL };
    FCGX_Request req;
    int consecutive_errors = 0;

    if (pubkey != NULL) {
        if (EVP_PKEY_up_ref(pubkey) != 1)
            goto fatal;
        vf.pkey = pubkey;
        vf.mdctx = EVP_MD_CTX_new();
        vf.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
        if (vf.mdctx == NULL || vf.sha256 == NULL)
            goto fatal;
    }

    if (FCGX_InitRequest(&req, listen_sock, 0) != 0)
        goto fatal;

    while (!stopping) {
        /*
         * Only a new connection needs the accept mutex.  When nginx keeps
         * the connection (fastcgi_keep_conn on), FCGX_Accept_r waits for the
         * next request on it; doing that under the mutex would stop every
         * other thread from accepting meanwhile.
         */
        int fresh = req.ipcFd < 0;
        if (fresh)
            pthread_mutex_lock(&accept_mutex);
        int rc = stopping ? -1 : FCGX_Accept_r(&req);
        if (fresh)
            pthread_mutex_unlock(&accept_mutex);

        if (rc < 0) {
            if (stopping)
                break;
            fprintf(stderr, "fcgi-baseline: accept failed: %s\n",
                    strerror(errno));
            if (++consecutive_errors >= 1000) {
                FCGX_Free(&req, 1);
                goto fatal;
            }
            struct timespec ts = { 0, 1000000 };    /* 1 ms */
            nanosleep(&ts, NULL);
            continue;
        }
        consecutive_errors = 0;

        sink out = { req.out };
        handle_request(&vf, req.envp, &out);
        FCGX_Finish_r(&req);
    }

    FCGX_Free(&req, 1);
    EVP_MD_free(vf.sha256);
    EVP_MD_CTX_free(vf.mdctx);
    EVP_PKEY_free(vf.pkey);
    return NULL;

fatal:
    fprintf(stderr, "fcgi-baseline: worker thread giving up\n");
    EVP_MD_free(vf.sha256);
    EVP_MD_CTX_free(vf.mdctx);
    EVP_PKEY_free(vf.pkey);
    fatal_error = 1;
    kill(getpid(), SIGTERM);        /* wake the main thread's sigwait */
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Start-up                                                                 */
/* ------------------------------------------------------------------------ */

static long parse_count(const char *s, const char *what, long max)
{
    char *endp;
    errno = 0;
    long v = strtol(s, &endp, 10);
    if (errno != 0 || endp == s || *endp != '\0' || v < 1 || v > max) {
        fprintf(stderr, "fcgi-baseline: invalid %s: %s\n", what, s);
        exit(2);
    }
    return v;
}

/* Same rule as libfcgi: "something:<non-zero port>" is TCP, else a path. */
static int is_unix_path(const char *bind_path)
{
    const char *colon = strchr(bind_path, ':');
    return colon == NULL || atoi(colon + 1) == 0;
}

static EVP_PKEY *load_pubkey(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "fcgi-baseline: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    EVP_PKEY *k = PEM_read_PUBKEY(f, NULL, NULL, NULL);
    fclose(f);
    if (k == NULL) {
        fprintf(stderr, "fcgi-baseline: %s: not a PEM public key\n", path);
        ERR_print_errors_fp(stderr);
        return NULL;
    }
    if (!EVP_PKEY_is_a(k, "RSA")) {
        fprintf(stderr, "fcgi-baseline: %s: not an RSA key\n", path);
        EVP_PKEY_free(k);
        return NULL;
    }
    return k;
}

/* Head (Status, Content-Type, Cache-Control, Content-Length) + body, malloc'd. */
static int build_response(const char *body, size_t body_len, char **resp, int *resp_len)
{
    static const char fmt[] =
        "Status: 200 OK\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        "Cache-Control: no-store\r\n"
        "Content-Length: %zu\r\n"
        "\r\n";
    size_t cap = sizeof(fmt) + 32 + body_len;
    *resp = malloc(cap);
    if (*resp == NULL)
        return -1;
    int n = snprintf(*resp, cap, fmt, body_len);
    if (n < 0 || (size_t)n + body_len >= cap)
        return -1;
    memcpy(*resp + n, body, body_len);
    *resp_len = n + (int)body_len;
    return 0;
}

static int build_page_response(void)
{
    return build_response(PAGE_HTML, sizeof(PAGE_HTML) - 1, &page_response, &page_response_len);
}

/* PAGE_HTML with option lines inserted before </select> up to exactly `size`
 * bytes (the last gap filled with newlines). Built once at start-up. */
static int build_large_response(size_t size)
{
    static const char option[] = "<option value=\"ZZ\">Somewhere far away (+999)</option>\n";
    const char *cut = strstr(PAGE_HTML, "</select>");
    size_t head = (size_t)(cut - PAGE_HTML), tail = sizeof(PAGE_HTML) - 1 - head;
    if (size < head + tail)
        size = head + tail;
    char *body = malloc(size);
    if (body == NULL)
        return -1;
    memcpy(body, PAGE_HTML, head);
    size_t at = head, room = size - tail;
    while (at + sizeof(option) - 1 <= room) {
        memcpy(body + at, option, sizeof(option) - 1);
        at += sizeof(option) - 1;
    }
    memset(body + at, '\n', room - at);
    memcpy(body + room, cut, tail);
    int rc = build_response(body, size, &large_response, &large_response_len);
    free(body);
    return rc;
}

/* Cookie name, base64url table, page and public key: shared by both modes. */
static int init_common(void)
{
    const char *env;
    if ((env = getenv("BASELINE_COOKIE")) != NULL && *env)
        cookie_name = env;
    cookie_name_len = strlen(cookie_name);

    b64url_init();
    size_t large = LARGE_PAGE_DEFAULT;
    if ((env = getenv("BASELINE_LARGE_PAGE_BYTES")) != NULL && *env) {
        long v = strtol(env, NULL, 10);
        if (v > 0 && v <= LARGE_PAGE_MAX)
            large = (size_t)v;
    }
    if (build_page_response() < 0 || build_large_response(large) < 0) {
        fprintf(stderr, "fcgi-baseline: out of memory\n");
        return -1;
    }

    if ((env = getenv("BASELINE_PUBKEY")) != NULL && *env) {
        pubkey = load_pubkey(env);
        if (pubkey == NULL)
            return -1;
    } else {
        fprintf(stderr, "fcgi-baseline: BASELINE_PUBKEY not set; "
                        "/verify will always answer 401\n");
    }
    return 0;
}

/* CGI mode: one request from the environment, the response on stdout. */
static int serve_cgi(void)
{
    extern char **environ;
    if (init_common() < 0)
        return 1;
    verifier vf = { pubkey, NULL, NULL };
    if (pubkey != NULL) {
        vf.mdctx = EVP_MD_CTX_new();
        vf.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
        if (vf.mdctx == NULL || vf.sha256 == NULL) {
            fprintf(stderr, "fcgi-baseline: out of memory\n");
            return 1;
        }
    }
    sink out = { NULL };
    handle_request(&vf, environ, &out);
    int rc = fflush(stdout) == 0 ? 0 : 1;
    EVP_MD_free(vf.sha256);
    EVP_MD_CTX_free(vf.mdctx);
    EVP_PKEY_free(pubkey);
    free(page_response);
    free(large_response);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 1 && getenv("GATEWAY_INTERFACE") != NULL && FCGX_IsCGI())
        return serve_cgi();
    if (argc < 2 || argc > 3 || argv[1][0] == '\0' ||
        strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr,
                "usage: %s SOCKET [THREADS]\n"
                "       %s            (CGI mode: GATEWAY_INTERFACE set)\n"
                "  SOCKET   unix socket path, \":PORT\" or \"HOST:PORT\"\n"
                "  THREADS  default $BASELINE_THREADS or 2 x online CPUs\n"
                "env: BASELINE_PUBKEY (PEM public key), BASELINE_COOKIE,\n"
                "     BASELINE_THREADS, BASELINE_BACKLOG\n",
                argv[0], argv[0]);
        return 2;
    }
    const char *bind_path = argv[1];

    long nthreads;
    const char *env;
    if (argc == 3) {
        nthreads = parse_count(argv[2], "thread count", MAX_THREADS);
    } else if ((env = getenv("BASELINE_THREADS")) != NULL && *env) {
        nthreads = parse_count(env, "BASELINE_THREADS", MAX_THREADS);
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = 2 * (cpus > 0 ? cpus : 1);
        if (nthreads > MAX_THREADS)
            nthreads = MAX_THREADS;
    }
    long backlog = 1024;
    if ((env = getenv("BASELINE_BACKLOG")) != NULL && *env)
        backlog = parse_count(env, "BASELINE_BACKLOG", 65535);

    if (init_common() < 0)
        return 1;

    /*
     * SIGINT/SIGTERM are blocked in every thread and collected by the main
     * thread with sigwait(); SIGPIPE is ignored so a vanished peer only
     * fails the write.
     */
    signal(SIGPIPE, SIG_IGN);
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    if (FCGX_Init() != 0) {
        fprintf(stderr, "fcgi-baseline: FCGX_Init failed\n");
        return 1;
    }
    int unix_sock = is_unix_path(bind_path);
    listen_sock = FCGX_OpenSocket(bind_path, (int)backlog);
    if (listen_sock < 0) {
        fprintf(stderr, "fcgi-baseline: cannot listen on %s\n", bind_path);
        return 1;
    }
    if (unix_sock && chmod(bind_path, 0666) != 0) {
        fprintf(stderr, "fcgi-baseline: chmod %s: %s\n", bind_path,
                strerror(errno));
        unlink(bind_path);
        return 1;
    }

    pthread_t *threads = calloc((size_t)nthreads, sizeof(*threads));
    if (threads == NULL) {
        fprintf(stderr, "fcgi-baseline: out of memory\n");
        return 1;
    }
    long started = 0;
    for (; started < nthreads; started++) {
        int err = pthread_create(&threads[started], NULL, worker, NULL);
        if (err != 0) {
            fprintf(stderr, "fcgi-baseline: pthread_create: %s\n",
                    strerror(err));
            fatal_error = 1;
            break;
        }
    }
    if (!fatal_error)
        fprintf(stderr, "fcgi-baseline: listening on %s, %ld threads, "
                        "cookie %s\n", bind_path, nthreads, cookie_name);

    int sig = 0;
    while (!fatal_error && sigwait(&sigs, &sig) != 0)
        ;

    /*
     * Stop: no thread may start another accept; shutdown() makes a worker
     * blocked in accept() return (EINVAL on Linux); requests in progress
     * are completed.
     */
    stopping = 1;
    FCGX_ShutdownPending();
    shutdown(listen_sock, SHUT_RDWR);
    for (long i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    close(listen_sock);
    if (unix_sock)
        unlink(bind_path);

    free(threads);
    free(page_response);
    free(large_response);
    EVP_PKEY_free(pubkey);
    if (!fatal_error)
        fprintf(stderr, "fcgi-baseline: stopped (signal %d)\n", sig);
    return fatal_error ? 1 : 0;
}
