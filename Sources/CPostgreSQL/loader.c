/* Loads libpq.so.5 on first use (see include/CPostgreSQL.h). */
#include "CPostgreSQL.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The soname of Debian's libpq5 (libpq-dev links against it). */
#define GH_PQ_SONAME "libpq.so.5"

static struct {
    PGconn *(*connectdb)(const char *);
    ConnStatusType (*status)(const PGconn *);
    char *(*error_message)(const PGconn *);
    void (*finish)(PGconn *);
    int (*server_version)(const PGconn *);
    PGresult *(*prepare)(PGconn *, const char *, const char *, int, const Oid *);
    PGresult *(*exec_prepared)(PGconn *, const char *, int, const char *const *, const int *, const int *, int);
    PGresult *(*exec)(PGconn *, const char *);
    PGresult *(*exec_params)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *, int);
    ExecStatusType (*result_status)(const PGresult *);
    char *(*result_error_field)(const PGresult *, int);
    char *(*result_error_message)(const PGresult *);
    void (*clear)(PGresult *);
    int (*ntuples)(const PGresult *);
    int (*getisnull)(const PGresult *, int, int);
    char *(*getvalue)(const PGresult *, int, int);
    int (*getlength)(const PGresult *, int, int);
    Oid (*ftype)(const PGresult *, int);
    char *(*cmd_tuples)(PGresult *);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char error[512];

#define FIND(field, name)                                                                   \
    if (!(*(void **)&fn.field = dlsym(lib, name))) {                                        \
        snprintf(error, sizeof error, "%s has no symbol %s", GH_PQ_SONAME, name);           \
        return;                                                                             \
    }

static void load(void) {
    void *lib = dlopen(GH_PQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "cannot load %s (Debian package libpq5): %s", GH_PQ_SONAME, why ? why : "unknown error");
        return;
    }
    FIND(connectdb, "PQconnectdb")
    FIND(status, "PQstatus")
    FIND(error_message, "PQerrorMessage")
    FIND(finish, "PQfinish")
    FIND(server_version, "PQserverVersion")
    FIND(prepare, "PQprepare")
    FIND(exec_prepared, "PQexecPrepared")
    FIND(exec, "PQexec")
    FIND(exec_params, "PQexecParams")
    FIND(result_status, "PQresultStatus")
    FIND(result_error_field, "PQresultErrorField")
    FIND(result_error_message, "PQresultErrorMessage")
    FIND(clear, "PQclear")
    FIND(ntuples, "PQntuples")
    FIND(getisnull, "PQgetisnull")
    FIND(getvalue, "PQgetvalue")
    FIND(getlength, "PQgetlength")
    FIND(ftype, "PQftype")
    FIND(cmd_tuples, "PQcmdTuples")
    loaded = 1;
}

int gh_pq_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *gh_pq_load_error(void) { return error; }

PGconn *gh_pq_connectdb(const char *c) { return fn.connectdb(c); }
ConnStatusType gh_pq_status(const PGconn *c) { return fn.status(c); }
char *gh_pq_error_message(const PGconn *c) { return fn.error_message(c); }
void gh_pq_finish(PGconn *c) { fn.finish(c); }
int gh_pq_server_version(const PGconn *c) { return fn.server_version(c); }
PGresult *gh_pq_prepare(PGconn *c, const char *name, const char *q, int n, const Oid *t) { return fn.prepare(c, name, q, n, t); }
PGresult *gh_pq_exec_prepared(PGconn *c, const char *name, int n, const char *const *v, const int *l, const int *f, int r) {
    return fn.exec_prepared(c, name, n, v, l, f, r);
}
PGresult *gh_pq_exec(PGconn *c, const char *q) { return fn.exec(c, q); }
PGresult *gh_pq_exec_binary(PGconn *c, const char *q) { return fn.exec_params(c, q, 0, NULL, NULL, NULL, NULL, 1); }
ExecStatusType gh_pq_result_status(const PGresult *r) { return fn.result_status(r); }
char *gh_pq_result_error_field(const PGresult *r, int f) { return fn.result_error_field(r, f); }
char *gh_pq_result_error_message(const PGresult *r) { return fn.result_error_message(r); }
void gh_pq_clear(PGresult *r) { fn.clear(r); }
int gh_pq_ntuples(const PGresult *r) { return fn.ntuples(r); }
int gh_pq_getisnull(const PGresult *r, int row, int col) { return fn.getisnull(r, row, col); }
char *gh_pq_getvalue(const PGresult *r, int row, int col) { return fn.getvalue(r, row, col); }
int gh_pq_getlength(const PGresult *r, int row, int col) { return fn.getlength(r, row, col); }
Oid gh_pq_ftype(const PGresult *r, int col) { return fn.ftype(r, col); }
char *gh_pq_cmd_tuples(PGresult *r) { return fn.cmd_tuples(r); }
