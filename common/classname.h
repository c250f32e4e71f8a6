/*
 * classname: a JVM class signature and a method name to the frame name the
 * profile shows, "package.Class.method"; a class signature to the name of
 * the type an allocation made, "byte[]".
 *
 * Hidden classes (lambdas, method handles) carry their address in their
 * name, which would make every run, and every JVM, name them differently:
 * "com/x/Foo$$Lambda$14/0x0000000800066840" (JDK 17) and
 * "com/x/Foo$$Lambda/0x000001c0010c8c58" (JDK 21+) both become
 * "com.x.Foo$$Lambda". The "/0x..." suffix is removed, then a "$NN"
 * counter right before it. The JVM's internal name, which JVMTI returns,
 * writes that suffix ".0x..." (JDK 17: "LFoo$$Lambda$14.0x0000000800066840;");
 * both spellings are removed. A '.' cannot otherwise occur in an internal
 * class name, where packages are separated by '/'.
 *
 * Pure string handling: no JNI, no allocation, no locks.
 */
#ifndef JBPF_CLASSNAME_H
#define JBPF_CLASSNAME_H

#include <stddef.h>

/*
 * Writes "<class>.<method>" into out (cap bytes, at least 1) from a class
 * signature as GetClassSignature returns it ("Lcom/x/Foo;"; NULL gives
 * "[unknown class]") and a method name (NULL gives "[unknown]"). Returns the
 * length; the result is NUL-terminated and cut to cap - 1 bytes at a UTF-8
 * character boundary.
 */
size_t classname__format(const char *class_sig, const char *method, char *out, size_t cap);

/*
 * Writes the type a class signature names, as Java writes it, into out
 * (same rules): "Ljava/lang/String;" gives "java.lang.String", "[B"
 * "byte[]", "[[Ljava/lang/Object;" "java.lang.Object[][]"; a hidden
 * class loses its suffix as above. NULL or "" gives "[unknown class]".
 */
size_t classname__type(const char *class_sig, char *out, size_t cap);

#endif /* JBPF_CLASSNAME_H */
