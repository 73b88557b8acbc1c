/* profiling.h: the OpenSHMEM profiling interface (docs/design.md,
 * "Profiling interface"). Every API function is defined as pshmem_NAME and
 * SHOAL_WEAK_ALIAS(shmem_NAME), just above the definition, makes shmem_NAME a
 * weak alias of it: a tool that defines shmem_NAME itself (a preloaded
 * library, or an object linked before libshoal.a) takes the program's calls
 * and forwards them to pshmem_NAME. GCC and Clang want an alias in the file
 * that defines its target, hence one line per definition. Shoal's own calls
 * between API functions use the pshmem_ names, so a tool sees each call the
 * program makes once. */
#ifndef SHOAL_API_PROFILING_H
#define SHOAL_API_PROFILING_H

#include <pshmem.h>

/* The type comes from pshmem.h, so the alias cannot drift from shmem.h's
 * declaration of the same name (the compiler compares the two). */
#define SHOAL_WEAK_ALIAS(name) extern __typeof__(p##name) name __attribute__((weak, alias("p" #name)))

#endif
