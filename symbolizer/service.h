/*
 * service: what a fleet store calls the application a process belongs
 * to, and the container it runs in.
 *
 *   a JVM        its main class or jar as jps -l names it: the class
 *                ("com.example.Main"), the jar's file name
 *                ("/opt/app/app.jar" -> "app.jar"), the module's main
 *                class for -m MODULE/CLASS (the module for -m MODULE);
 *                read from /proc/PID/cmdline
 *   a script     an interpreter's (python, node, ruby, perl, php, lua, the
 *                shells; any version) first argument that is no option:
 *                the script's file name ("python3 /srv/app.py" ->
 *                "app.py"), python's -m module; none for code given with
 *                -c or -e
 *   otherwise    the executable's file name (/proc/PID/exe), or the
 *                process's comm when that cannot be read
 *   container    the 64-hex id in /proc/PID/cgroup, as docker
 *                (".../docker-ID.scope", "/docker/ID"), containerd and CRI
 *                ("cri-containerd-ID.scope", "/kubepods/.../ID"), CRI-O
 *                ("crio-ID.scope") and podman ("libpod-ID.scope") write it
 *
 * A service name is what Pyroscope's ingest API takes in one
 * (api/model/labelset in grafana/pyroscope: [A-Za-z0-9_.-/]); the
 * profiler's own root frames (-a) show the same name, so it is made here,
 * beside the rest of what is known of a process, and the fleet files
 * profiles under it.
 *
 * Everything read is the target's choice (its command line above all) and
 * is parsed as hostile input: lengths bounded, no NUL assumed. The parsers
 * are pure; service__of_process reads through symbolizer/proc.c.
 */
#ifndef JBPF_SERVICE_H
#define JBPF_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERVICE_NAME_MAX 127 /* bytes, without the NUL */

#define SERVICE_CONTAINER_ID_LEN 64
/* A java command line longer than this (a huge class path) is read no further: its service is then "java". */
#define SERVICE_CMDLINE_MAX (1u << 20)

struct service_info {
	char name[SERVICE_NAME_MAX + 1];                 /* sanitized (service__sanitize) */
	bool from_cmdline;                               /* name is the command line's program, not the executable's */
	char container_id[SERVICE_CONTAINER_ID_LEN + 1]; /* "" when none */
};

/*
 * in (NUL-terminated, from a target) as a service name: bytes outside
 * [A-Za-z0-9_.-/] become '_', cut to size - 1; "unknown" when empty.
 */
void service__sanitize(const char *in, char *out, size_t size);

/*
 * A NUL-separated command line (len bytes) to its program, as described
 * above: a java launcher's main class or jar, an interpreter's script, into
 * out. 1 when one was found, 0 otherwise (out untouched).
 */
int service__from_cmdline(const char *cmdline, size_t len, char *out, size_t size);

/*
 * The container id in a /proc/PID/cgroup text (len bytes), lowercase hex,
 * into out (at least SERVICE_CONTAINER_ID_LEN + 1 bytes). 1 when found, 0
 * when the process runs in no container this recognises.
 */
int service__container_id(const char *cgroup, size_t len, char *out, size_t size);

/*
 * Both for process tgid under proc_root; fallback (its comm, may be NULL)
 * names it when nothing can be read. Always fills out.
 */
void service__of_process(const char *proc_root, uint32_t tgid, const char *fallback, struct service_info *out);

#endif /* JBPF_SERVICE_H */
