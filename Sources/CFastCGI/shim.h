#ifndef GATEHOUSE_CFASTCGI_SHIM_H
#define GATEHOUSE_CFASTCGI_SHIM_H
#include <fcgiapp.h>
#include <fcgios.h>
#endif
