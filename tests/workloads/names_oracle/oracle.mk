# tests/workloads/names_oracle/oracle.mk: the JVMTI agent that test_hotspot_names
# compares hotspot/names.c with, $(OUTPUT)/workloads/libnames_oracle.so.
# Included by the top Makefile (OUTPUT, WARNINGS, Q, msg, JNI_HOME set).
# Plain flags, no sanitizers: the JVM loads it (see jvmti-stub/stub.mk).
NAMES_ORACLE := $(OUTPUT)/workloads/libnames_oracle.so
WORKLOADS += $(NAMES_ORACLE)

$(NAMES_ORACLE): tests/workloads/names_oracle/oracle.c tests/workloads/names_oracle/oracle.mk
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O1 -g -fPIC -shared -D_GNU_SOURCE $(WARNINGS) -isystem $(JNI_HOME)/include \
		-isystem $(JNI_HOME)/include/linux $< -pthread -o $@

# test_hotspot_names reads real JVMs with hotspot/ (names, layout, code cache)
# and the symbolizer readers hotspot_find__jvm calls.
HOTSPOT_NAMES_SRCS := hotspot/memory.c hotspot/vmstructs.c hotspot/find.c hotspot/layout.c hotspot/classes.c hotspot/codecache.c \
		      hotspot/names.c hotspot/names_layout.c hotspot/scopes.c hotspot/lines.c symbolizer/elf.c common/elf_limits.c common/refuse.c \
		      symbolizer/symtab.c symbolizer/proc.c symbolizer/procmaps.c symbolizer/lines.c
$(OUTPUT)/tests/test_hotspot_names: INTEGRATION_LINK = $(HOTSPOT_NAMES_SRCS) -lelf
$(OUTPUT)/tests/test_hotspot_names: $(HOTSPOT_NAMES_SRCS) $(wildcard hotspot/*.h symbolizer/*.h) bpf/hotspot.h
