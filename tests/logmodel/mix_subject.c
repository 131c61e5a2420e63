/* Synthetic subject (c): an unmodified program (not linked with vigil) that logs through
 * syslog, one call site per request type, as a web application would; the injected
 * change is the request mix after one request type. Run under `vigil record`.
 *
 *   mix_subject run --n N --shift D --seed S
 *
 * The next request type follows a Markov chain over login, browse, search, cart and buy.
 * Baseline after login: browse 0.6, search 0.3, buy 0.1; --shift D moves D of the
 * probability from browse to buy (after login only). So the transition login -> buy
 * (and login -> browse) must rank first among transition probability differences. */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "subject_util.h"

enum { LOGIN, BROWSE, SEARCH, CART, BUY, NTYPES };

/* Each handler is its own log call site; not inlined into one another. */
__attribute__((noinline)) static void handle_login(int i)
{
	syslog(LOG_DEBUG, "login request %d", i);
}
__attribute__((noinline)) static void handle_browse(int i)
{
	syslog(LOG_DEBUG, "browse request %d", i);
}
__attribute__((noinline)) static void handle_search(int i)
{
	syslog(LOG_DEBUG, "search request %d: %s", i, "query");
}
__attribute__((noinline)) static void handle_cart(int i)
{
	syslog(LOG_INFO, "cart request %d", i);
}
__attribute__((noinline)) static void handle_buy(int i)
{
	syslog(LOG_NOTICE, "buy request %d", i);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "run") || argc % 2) {
		fprintf(stderr, "usage: mix_subject run --n N --shift D --seed S\n");
		return 2;
	}
	int n = (int)lm_arg(argc, argv, "--n", 20000);
	double shift = lm_arg(argc, argv, "--shift", 0);
	lm_seed((uint64_t)lm_arg(argc, argv, "--seed", 1));
	/* next[t]: cumulative probabilities of the next type after t */
	double p[NTYPES][NTYPES] = {
	    [LOGIN] = {0, 0.6 - shift, 0.3, 0, 0.1 + shift},
	    [BROWSE] = {0.1, 0.4, 0.3, 0.2, 0},
	    [SEARCH] = {0.1, 0.5, 0.2, 0.2, 0},
	    [CART] = {0.1, 0.2, 0.1, 0.2, 0.4},
	    [BUY] = {0.5, 0.3, 0.2, 0, 0},
	};
	void (*handler[NTYPES])(int) = {handle_login, handle_browse, handle_search, handle_cart,
	                                handle_buy};
	openlog("mix_subject", LOG_PID, LOG_USER);
	int t = LOGIN;
	for (int i = 0; i < n; i++) {
		handler[t](i);
		double u = lm_uniform(), c = 0;
		int next = NTYPES - 1;
		for (int k = 0; k < NTYPES; k++) {
			c += p[t][k];
			if (u < c) {
				next = k;
				break;
			}
		}
		t = next;
	}
	closelog();
	return 0;
}
