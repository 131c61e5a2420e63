/* Is a program statically linked (docs/net.md, "Not seen at all")? No preload reaches
 * such a program: `vigil record` and the runtime's exec hooks say so. Shared by the
 * runtime and the vigil command; libc only. Not installed. */
#ifndef VIGIL_RUNTIME_EXE_STATIC_H
#define VIGIL_RUNTIME_EXE_STATIC_H

/* 1 if `file` (a path, or a name looked up in PATH as execvp does) is an ELF executable
 * with no program interpreter (static, static-pie); 0 otherwise (dynamic, a script,
 * not found, unreadable). Keeps errno. */
int vg_exe_is_static(const char *file);

#endif
