/* libFuzzer target: the TQuel front end (lexer, parser, printer). Any input parses
 * without crashing; each error points inside the text; what parses prints as canonical
 * TQuel that parses back to the same text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tquel/tquel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tquel_query *q = tquel_parse("fuzz", (const char *)data, size);
	for (size_t i = 0; i < q->nerrors; i++)
		if (q->errors[i].loc.line < 1 || q->errors[i].loc.col < 1 ||
		    q->errors[i].loc.off > size || !q->errors[i].message[0])
			abort();
	char *errors = tquel_errors_string(q);
	char *printed = tquel_print_string(q);
	if (!errors || !printed)
		abort();
	struct tquel_query *q2 = tquel_parse("printed", printed, strlen(printed));
	if (q2->nerrors || q2->nstmts != q->nstmts)
		abort();
	char *again = tquel_print_string(q2);
	if (!again || strcmp(again, printed))
		abort();
	free(again);
	free(printed);
	free(errors);
	tquel_free(q2);
	tquel_free(q);
	return 0;
}
