/* The one place the version is written. */
#ifndef JBPF_VERSION_H
#define JBPF_VERSION_H
#define JBPFPROF_VERSION "0.1.0"
#endif
