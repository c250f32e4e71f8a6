/*
 * convert: the commands that work on recordings rather than processes.
 *
 *   jbpfprof convert IN.pb.gz [-o FORMAT] [-f FILE] [view options]
 *   jbpfprof diff BEFORE.pb.gz AFTER.pb.gz [-f FILE] [view options]
 *
 * convert re-renders a pprof recording in any output format, seen through
 * a view (user/view.h): --state, --threads, --annotate, --include,
 * --exclude, --reverse. diff draws AFTER's flame graph coloured by how each
 * frame's share changed since BEFORE, both seen through the same view.
 *
 * Each returns the process's exit status: 0, 1 when the work failed (one
 * line on stderr says why), 2 for a mistake on the command line.
 */
#ifndef JBPF_CONVERT_H
#define JBPF_CONVERT_H

/* argv[0] is the command's name ("convert", "diff"). */
int convert__main(int argc, char **argv);
int convert__diff_main(int argc, char **argv);

#endif /* JBPF_CONVERT_H */
