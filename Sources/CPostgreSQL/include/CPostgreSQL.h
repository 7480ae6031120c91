/*
 * CPostgreSQL: libpq (libpq.so.5) loaded on first use with dlopen, so a process on the embedded
 * SQLite store (and every CGI request) never maps libpq and the TLS, Kerberos and LDAP
 * libraries it brings. libpq's own header gives the types and constants; only the gh_pq_*
 * functions below may be called (they go through pointers found with dlsym).
 */
#ifndef GATEHOUSE_CPOSTGRESQL_H
#define GATEHOUSE_CPOSTGRESQL_H
#include <postgresql/libpq-fe.h>

/* Loads libpq once (thread-safe). Returns 1 when usable; else 0 with the reason in
   gh_pq_load_error(). Every other gh_pq_* function needs it to be 1. */
int gh_pq_load(void);
const char *gh_pq_load_error(void);

PGconn *gh_pq_connectdb(const char *conninfo);
ConnStatusType gh_pq_status(const PGconn *conn);
char *gh_pq_error_message(const PGconn *conn);
void gh_pq_finish(PGconn *conn);
int gh_pq_server_version(const PGconn *conn);
PGresult *gh_pq_prepare(PGconn *conn, const char *name, const char *query, int n, const Oid *types);
PGresult *gh_pq_exec_prepared(PGconn *conn, const char *name, int n, const char *const *values, const int *lengths,
                              const int *formats, int result_format);
PGresult *gh_pq_exec(PGconn *conn, const char *query);
/* One statement without parameters, results in binary (for statements that cannot be prepared). */
PGresult *gh_pq_exec_binary(PGconn *conn, const char *query);
ExecStatusType gh_pq_result_status(const PGresult *res);
char *gh_pq_result_error_field(const PGresult *res, int field);
char *gh_pq_result_error_message(const PGresult *res);
void gh_pq_clear(PGresult *res);
int gh_pq_ntuples(const PGresult *res);
int gh_pq_getisnull(const PGresult *res, int row, int column);
char *gh_pq_getvalue(const PGresult *res, int row, int column);
int gh_pq_getlength(const PGresult *res, int row, int column);
Oid gh_pq_ftype(const PGresult *res, int column);
char *gh_pq_cmd_tuples(PGresult *res);
#endif
