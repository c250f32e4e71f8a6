/*
 * switch_floor: attaches one of bench/switch_floor.bpf.c's empty programs
 * to sched_switch for a while, for bench/pingpong.sh's floor modes.
 *
 *   switch_floor OBJECT tp|raw SECONDS
 *
 * Prints "jbpfprof: sampling" once attached (the line the bench waits for,
 * as it does for the profiler), then sleeps SECONDS and exits, detaching.
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	const char *name;

	if (argc != 4 || (strcmp(argv[2], "tp") && strcmp(argv[2], "raw"))) {
		fprintf(stderr, "usage: switch_floor OBJECT tp|raw SECONDS\n");
		return 2;
	}
	name = strcmp(argv[2], "tp") ? "floor_raw" : "floor_tp";
	/* A tracepoint program's id is read from tracefs, which a fresh machine has not mounted. */
	struct stat st;
	if (stat("/sys/kernel/tracing/events", &st))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "switch_floor: cannot open %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, strcmp(bpf_program__name(prog), name) == 0);
	prog = bpf_object__find_program_by_name(obj, name);
	if (!prog || bpf_object__load(obj) || !bpf_program__attach(prog)) {
		fprintf(stderr, "switch_floor: cannot load and attach %s\n", name);
		return 1;
	}
	fprintf(stderr, "jbpfprof: sampling (an empty %s program on sched_switch)\n", argv[2]);
	sleep((unsigned)atoi(argv[3]));
	bpf_object__close(obj);
	return 0;
}
