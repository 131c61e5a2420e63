/* A shared library with an SDT probe, loaded by tests/usdt/sdt_dlopen.c with dlopen
 * through its caller's RUNPATH ($ORIGIN/lib): vigil arms its site when it is mapped. */
#include <stdio.h>
#include <sys/sdt.h>

long vl_call(long x)
{
	DTRACE_PROBE2(vl, call, x, x * 2);
	printf("vl.call %ld %ld\n", x, x * 2);
	return x * 2;
}
