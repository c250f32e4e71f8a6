# Java workloads (tests/workloads/java/) and the Java demo (examples/),
# compiled into $(OUTPUT)/java for the integration tests (test_java),
# bench/java_overhead.sh and examples/demo.sh. Included from the top
# Makefile, after OUTPUT and msg are set:
#
#   $(JAVA_CLASSES_STAMP)   every class file up to date; add it to `all`
#
# One javac run compiles every source: the classes are in the default
# package, so `java -cp $(OUTPUT)/java CpuSplit` runs one. --release 17
# makes them run on JDK 17 and every later JDK. The directory is emptied
# first, so a deleted source leaves no stale class behind. No -Werror: a
# class that uses a JDK-internal API gets a warning javac cannot silence.
# CpuSplit is packed into cpusplit.jar too, for a JVM run with -jar.

JAVAC ?= javac
JAR ?= jar
JAVA_SRCS := $(wildcard tests/workloads/java/*.java) $(wildcard examples/*.java)
JAVA_CLASSES_STAMP := $(OUTPUT)/java/.stamp

$(JAVA_CLASSES_STAMP): $(JAVA_SRCS) tests/workloads/java/java.mk
	$(call msg,JAVAC,$(OUTPUT)/java)
	$(Q)rm -rf $(OUTPUT)/java
	$(Q)mkdir -p $(OUTPUT)/java
	$(Q)$(JAVAC) --release 17 -Xlint:all -d $(OUTPUT)/java $(JAVA_SRCS)
	$(Q)cd $(OUTPUT)/java && $(JAR) --create --file cpusplit.jar --main-class CpuSplit CpuSplit*.class Workload*.class
	$(Q)touch $@

.PHONY: java-classes
java-classes: $(JAVA_CLASSES_STAMP)
