# jbpfprof build.
#
#   make                  build/jbpfprof (release: -O2, BPF skeletons embedded)
#   make test             unit tests under ASan+UBSan, then root integration tests
#   make check-unit       unit tests only
#   make check-integration  integration tests only (root; skip with a reason otherwise)
#   make bench            the benchmarks in bench/ (see docs/benchmarks.md)
#   make install PREFIX=/usr/local DESTDIR=
#   make check-headers    compile every header on its own
#
# vmlinux.h is generated from the build machine's kernel BTF (VMLINUX_BTF);
# CO-RE relocations make the result run on any kernel with BTF.

.DEFAULT_GOAL := all
OUTPUT ?= build
PREFIX ?= /usr/local
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
V ?= 0

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ifeq ($(filter x86 arm64,$(ARCH)),)
$(error unsupported architecture $(ARCH): only x86_64 and aarch64 are built)
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	    -Wmissing-prototypes -Wformat=2 -Wvla -Wno-unused-parameter
BASE_CFLAGS := -std=gnu11 -g -fno-omit-frame-pointer -D_GNU_SOURCE $(WARNINGS) \
	       -I. -I$(OUTPUT) $(EXTRA_CFLAGS)
RELEASE_CFLAGS := $(BASE_CFLAGS) -O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong
ASAN_CFLAGS := $(BASE_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
LIBS := -lbpf -lelf -lz -lstdc++ -lm -lpthread $(EXTRA_LDFLAGS)

# Code shared by the profiler and the unit tests: everything but main().
# The symbolizer is a library of its own (libsymbolizer.a, API in
# symbolizer/symbolizer.h); the rest is linked as objects.
SYMBOLIZER_SRCS := $(wildcard symbolizer/*.c)
LIB_SRCS := $(SYMBOLIZER_SRCS) $(wildcard output/*.c) \
	    $(filter-out user/main.c,$(wildcard user/*.c))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
# Files pulled into objects with .incbin (the flame graph page).
EMBEDDED := $(wildcard output/*.html)

RELEASE_LIB_OBJS := $(patsubst %.c,$(OUTPUT)/release/%.o,$(filter-out $(SYMBOLIZER_SRCS),$(LIB_SRCS))) \
		    $(OUTPUT)/release/libsymbolizer.a
ASAN_LIB_OBJS := $(patsubst %.c,$(OUTPUT)/asan/%.o,$(filter-out $(SYMBOLIZER_SRCS),$(LIB_SRCS))) \
		 $(OUTPUT)/asan/libsymbolizer.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/asan/tests/%,$(UNIT_SRCS))
INTEGRATION_SRCS := $(wildcard tests/integration/test_*.c)
INTEGRATION_TESTS := $(patsubst tests/integration/%.c,$(OUTPUT)/tests/%,$(INTEGRATION_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst %.c,$(OUTPUT)/workloads/%,$(notdir $(WORKLOAD_SRCS)))

# The JVMTI agent, embedded into the profiler (user/agent_image.c), and the
# Java workloads and demo.
AGENT := $(OUTPUT)/libjbpfagent.so
include jvmti-stub/stub.mk
include tests/workloads/java/java.mk

# Fixtures built at test time (ELF files for the symbolizer tests).
FIXTURES :=
-include tests/fixtures/fixtures.mk

# clang's own system include directories, appended after vmlinux.h so that
# asm/ headers pulled in by libbpf's headers are found on multiarch Debian.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

.PHONY: all test check-unit check-integration check-headers bench install clean workloads fixtures
.DELETE_ON_ERROR:
.SECONDARY:

all: $(OUTPUT)/jbpfprof $(AGENT) $(WORKLOADS) $(JAVA_CLASSES_STAMP)

$(OUTPUT)/release/user/agent_image.o $(OUTPUT)/asan/user/agent_image.o: $(AGENT)
$(OUTPUT)/release/user/agent_image.o: RELEASE_CFLAGS += -DJBPF_AGENT_IMAGE='"$(AGENT)"'
$(OUTPUT)/asan/user/agent_image.o: ASAN_CFLAGS += -DJBPF_AGENT_IMAGE='"$(AGENT)"'

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)test -r $(VMLINUX_BTF) || { echo "error: no kernel BTF at $(VMLINUX_BTF); set VMLINUX_BTF=<file with BTF>" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(OUTPUT) -Ibpf $(CLANG_BPF_SYS_INCLUDES) -c $< -o $(@:.o=.tmp.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.o=.tmp.o)

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)/release/%.o: %.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(RELEASE_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/asan/%.o: %.c $(SKELS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@

# The flame graph page is embedded with .incbin: rebuild when it changes.
$(filter $(OUTPUT)/release/output/%,$(RELEASE_LIB_OBJS)) \
$(filter $(OUTPUT)/asan/output/%,$(ASAN_LIB_OBJS)): $(EMBEDDED)

$(OUTPUT)/release/libsymbolizer.a: $(patsubst %.c,$(OUTPUT)/release/%.o,$(SYMBOLIZER_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/asan/libsymbolizer.a: $(patsubst %.c,$(OUTPUT)/asan/%.o,$(SYMBOLIZER_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/jbpfprof: $(OUTPUT)/release/user/main.o $(RELEASE_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(RELEASE_CFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/asan/jbpfprof: $(OUTPUT)/asan/user/main.o $(ASAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ASAN_CFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/asan/tests/%: $(OUTPUT)/asan/tests/unit/%.o $(ASAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) $^ $(LIBS) -lcmocka -o $@

# The integration tests drive the ASan build of the profiler; they are built
# plainly themselves, since a failed assertion leaves through longjmp.
$(OUTPUT)/tests/%: tests/integration/%.c $(wildcard tests/integration/*.h) tests/integration/harness.c \
		   tests/integration/jvm.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -O1 -Itests/integration $< tests/integration/harness.c tests/integration/jvm.c \
		-lcmocka -lm -o $@

# test_stub drives pieces of the agent directly, compiled into it.
$(OUTPUT)/tests/test_stub: $(AGENT_SRCS) $(AGENT_HDRS)

# Workloads: plain C, frame pointers kept in every function, calls
# not inlined, so that the profile names the functions the source names.
# clang, because GCC 12 leaves the frame pointer out of leaf functions that
# need no stack even when told -mno-omit-leaf-frame-pointer.
WORKLOAD_CC ?= $(CLANG)
WORKLOAD_CFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls \
		   -D_GNU_SOURCE -Wall -Wextra -Werror -pthread
$(OUTPUT)/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) $< -o $@ -lm
$(OUTPUT):
	$(Q)mkdir -p $@

workloads: $(WORKLOADS)
fixtures: $(FIXTURES)

check-unit: $(UNIT_TESTS) $(FIXTURES)
	$(Q)FIXTURE_DIR=$(OUTPUT)/fixtures tests/run-suite.sh unit $(UNIT_TESTS)

check-integration: $(OUTPUT)/asan/jbpfprof $(INTEGRATION_TESTS) $(WORKLOADS) $(JAVA_CLASSES_STAMP)
	$(Q)JBPFPROF=$(OUTPUT)/asan/jbpfprof WORKLOAD_DIR=$(OUTPUT)/workloads \
		JAVA_CLASSES=$(OUTPUT)/java AGENT=$(AGENT) \
		tests/run-suite.sh integration $(INTEGRATION_TESTS)

# Unit tests first: they are fast and say more precisely what broke. Both
# suites run even if the first fails; the last line is the total.
test: all $(UNIT_TESTS) $(FIXTURES) $(OUTPUT)/asan/jbpfprof $(INTEGRATION_TESTS)
	$(Q)FIXTURE_DIR=$(OUTPUT)/fixtures JBPFPROF=$(OUTPUT)/asan/jbpfprof WORKLOAD_DIR=$(OUTPUT)/workloads \
		JAVA_CLASSES=$(OUTPUT)/java AGENT=$(AGENT) \
		tests/run-suite.sh all $(UNIT_TESTS) $(INTEGRATION_TESTS)

check-headers: $(SKELS)
	$(Q)for h in $(wildcard user/*.h symbolizer/*.h output/*.h); do \
		printf '#include "%s"\n#include "%s"\n' $$h $$h | \
		$(CC) $(RELEASE_CFLAGS) -x c -fsyntax-only - || exit 1; \
	done
	$(Q)for h in $(wildcard jvmti-stub/*.h); do \
		printf '#include "%s"\n#include "%s"\n' $$h $$h | \
		$(CC) $(AGENT_CFLAGS) -x c -fsyntax-only - || exit 1; \
	done; echo "headers: each compiles on its own"

bench: all
	$(Q)bash bench/run.sh

install: $(OUTPUT)/jbpfprof
	install -m 0755 -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(OUTPUT)/jbpfprof $(DESTDIR)$(PREFIX)/bin/jbpfprof

clean:
	rm -rf $(OUTPUT)

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
