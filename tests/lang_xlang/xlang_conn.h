/* The subject structure xlang.vgl's payload refers to, for the C driver. */
#ifndef XLANG_CONN_H
#define XLANG_CONN_H
#include <stdint.h>
struct Conn {
	int32_t fd;
	const char *peer;
	uint16_t port;
};
#endif
