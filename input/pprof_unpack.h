/*
 * pprof_unpack: a pprof file's bytes to its protobuf message, the first
 * two of the reader's three stages (input/pprof_read.c reads the
 * meaning).
 *
 *   the bytes    gzip (by its magic) inflated, to at most
 *                PPROF_MAX_CONTENT_BYTES; anything else taken as it is
 *   the message  protobuf-c's unpacker checks the wire format, and
 *                allocates within a budget
 *
 * The budget. protobuf-c gives every submessage a struct of its own: an
 * empty sample is two bytes on the wire and some 100 bytes unpacked, and
 * gzip multiplies the wire bytes by up to a thousand before that, so a
 * 39 KB file could ask for gigabytes. What unpacking may allocate is
 * bounded by the size of the file as given (compressed, if it is):
 * UNPACK_BYTES_PER_INPUT_BYTE times it, at least UNPACK_MIN_BYTES. A
 * profile this tool writes unpacks to some 40 to 45 times its gzipped size
 * (measured on -a CPU and --threads wall recordings of 60 to 90 KB), well
 * inside the budget.
 */
#ifndef JBPF_PPROF_UNPACK_H
#define JBPF_PPROF_UNPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/profile.pb-c.h"

/* What unpacking may allocate, per byte of the file, and at least (see above). */
#define UNPACK_BYTES_PER_INPUT_BYTE 256u
#define UNPACK_MIN_BYTES (64u << 20)

/* A message unpacked, and the allocator it must be freed with. Not to be moved while open. */
struct pprof_unpacked {
	Perftools__Profiles__Profile *msg;
	struct {
		size_t left;
		bool exceeded;
	} budget;
	ProtobufCAllocator allocator;
};

/* The message in data[0..len) into u->msg: 0, or -1 with one line of why in err. */
int pprof_unpack__open(struct pprof_unpacked *u, const uint8_t *data, size_t len, char *err, size_t err_size);
/* Frees the message; safe on one that failed to open. */
void pprof_unpack__close(struct pprof_unpacked *u);

#endif /* JBPF_PPROF_UNPACK_H */
