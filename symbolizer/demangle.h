/*
 * demangle: C++ (Itanium ABI) symbol names to their source form, through
 * libstdc++'s __cxa_demangle.
 *
 * Only names starting with "_Z" are tried: plain C names pass through, and
 * a name that fails to demangle is kept as it is. Allocates internally;
 * thread-safe as __cxa_demangle is.
 */
#ifndef JBPF_DEMANGLE_H
#define JBPF_DEMANGLE_H

#include <stddef.h>

/*
 * Writes the demangled form of name into buf (always NUL-terminated,
 * truncated to size). Returns 1 if buf holds a demangled name, 0 if name
 * was not a mangled C++ name (buf untouched), -ENOMEM on allocation failure.
 */
int demangle__cxx(const char *name, char *buf, size_t size);

#endif /* JBPF_DEMANGLE_H */
