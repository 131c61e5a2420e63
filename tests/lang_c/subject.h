/* The subject program's structures that tests/lang_c/all.vgl describes. */
#ifndef LANG_C_SUBJECT_H
#define LANG_C_SUBJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "vigil/vigil.h"

struct Account {
	uint64_t number;
	const char *owner;
};

struct Session {
	unsigned id; /* another integer type than the description's: converted */
	char user[16];
	struct Account *account;
};

struct Conn {
	int fd;
	const char *peer;
	const uint8_t *key;
	uint32_t key_len;
	bool secure;
	double rtt;
	struct Session *session;
	struct Session backup;
	struct Session *spare;
	vg_entity owner;
	vg_entity *helper;
};

#endif
