/* The SDT note reader (src/common/sdt.c), compiled into libvigil for the sites it arms
 * (usdt.c): one reader for `vigil usdt list` and the runtime; hidden like the rest of the
 * runtime (-fvisibility=hidden), so it never clashes with a program's symbols. */
#include "common/sdt.c"
