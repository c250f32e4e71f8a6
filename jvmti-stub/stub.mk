# jvmti-stub/stub.mk: the JVMTI agent, $(OUTPUT)/libjbpfagent.so.
#
# Included by the top Makefile (which defines OUTPUT, WARNINGS, Q and msg);
# also usable alone from the top of the tree: make -f jvmti-stub/stub.mk
#
# The agent runs inside someone else's JVM, so:
#   -fvisibility=hidden   exports only Agent_OnLoad/OnAttach/OnUnload (JNIEXPORT);
#   -z defs               no undefined symbol left for the JVM to resolve;
#   -z nodelete           never unmapped: HotSpot dlcloses an agent whose
#                         Agent_OnAttach fails, and our signal handler and
#                         agent thread must outlive any one attach;
#   -static-libgcc        no libgcc_s the JVM may not have;
#   no sanitizers         the JVM does not load their runtimes first.
# It links nothing from user/ or libbpf: jvmti-stub/stream.h is the interface.
# It shares one file with the profiler, common/classname.c (includes nothing):
# the agent and the BPF walk name Java frames by the same rule.

OUTPUT ?= build
JAVA_HOME ?= /usr/lib/jvm/java-17-openjdk-amd64
WARNINGS ?= -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	    -Wmissing-prototypes -Wformat=2 -Wvla -Wno-unused-parameter

AGENT_SRCS := $(wildcard jvmti-stub/*.c) common/classname.c
AGENT_HDRS := $(wildcard jvmti-stub/*.h) common/classname.h
AGENT_CFLAGS = -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -fno-omit-frame-pointer -D_GNU_SOURCE \
	       $(WARNINGS) -Ijvmti-stub -I. -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux $(EXTRA_CFLAGS)
AGENT_LDFLAGS = -shared -Wl,-z,defs -Wl,-z,nodelete -Wl,-z,now -static-libgcc -pthread -ldl

$(OUTPUT)/libjbpfagent.so: $(AGENT_SRCS) $(AGENT_HDRS) jvmti-stub/stub.mk
	$(call msg,CC-AGENT,$@)
	$(Q)test -r $(JAVA_HOME)/include/jvmti.h || \
		{ echo "error: no JNI headers in $(JAVA_HOME)/include; set JAVA_HOME=<a JDK>" >&2; exit 1; }
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(AGENT_CFLAGS) $(AGENT_SRCS) $(AGENT_LDFLAGS) -o $@

# What the signal handler may call: jvmti-stub/handler.c lists each function
# with the reason it is async-signal-safe in every state of the interrupted
# thread. check-handler compiles handler.c alone and fails on any other
# undefined symbol in its object, on any undefined symbol at all in
# lastjava.c's (the handler's fallback walk) or codewalk.c's (the frame
# kinds walk), and on any thread-local storage in the
# agent (a first access to a dlopen'ed library's __thread variable can call
# malloc).
HANDLER_CALLS := __errno_location clock_gettime gettid pthread_getspecific write \
		 ring__claim ring__nr_slots ring__publish ring__used \
		 lastjava__begin lastjava__next lastjava__top codewalk__kinds

.PHONY: check-handler
check-handler: $(OUTPUT)/libjbpfagent.so
	$(Q)mkdir -p $(OUTPUT)/check
	$(Q)$(CC) $(AGENT_CFLAGS) -c jvmti-stub/handler.c -o $(OUTPUT)/check/handler.o
	$(Q)extra=$$(nm -u --format=just-symbols $(OUTPUT)/check/handler.o | \
		grep -vxF $(foreach f,$(HANDLER_CALLS),-e $(f))); \
	if [ -n "$$extra" ]; then \
		echo "error: jvmti-stub/handler.c calls what is not on its list of signal-safe functions:" $$extra >&2; \
		exit 1; \
	fi
	$(Q)$(CC) $(AGENT_CFLAGS) -c jvmti-stub/lastjava.c -o $(OUTPUT)/check/lastjava.o
	$(Q)extra=$$(nm -u --format=just-symbols $(OUTPUT)/check/lastjava.o); \
	if [ -n "$$extra" ]; then \
		echo "error: jvmti-stub/lastjava.c, which the handler calls, calls out:" $$extra >&2; \
		exit 1; \
	fi
	$(Q)$(CC) $(AGENT_CFLAGS) -c jvmti-stub/codewalk.c -o $(OUTPUT)/check/codewalk.o
	$(Q)extra=$$(nm -u --format=just-symbols $(OUTPUT)/check/codewalk.o); \
	if [ -n "$$extra" ]; then \
		echo "error: jvmti-stub/codewalk.c, which the handler calls, calls out:" $$extra >&2; \
		exit 1; \
	fi
	$(Q)if readelf -lW $(OUTPUT)/libjbpfagent.so | grep -qw TLS; then \
		echo "error: $(OUTPUT)/libjbpfagent.so has thread-local storage; the handler must not touch any" >&2; \
		exit 1; \
	fi; echo "handler: calls only its listed signal-safe functions; the agent has no thread-local storage"
