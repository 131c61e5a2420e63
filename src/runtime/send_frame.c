/* The collector protocol's frame codec (src/collector/frame.c), compiled into libvigil
 * for the sender (send.c): one source for both ends; hidden like the rest of the
 * runtime (-fvisibility=hidden), so it never clashes with a program's symbols. */
#include "collector/frame.c"
