/*
 * The libjvm.so of tests/workloads/hostile_jvm.c: the variables through
 * which HotSpot describes itself (src/hotspot/share/runtime/vmStructs.cpp),
 * exported as HotSpot exports them, and nothing else.
 *
 * The profiler takes a process that maps a file named libjvm.so for a JVM,
 * finds these symbols in that file's .dynsym and reads their values from
 * the process's memory. Their values are not known when this library is
 * built (the tables point at objects the workload makes), so they start
 * as 0 and hostile_jvm fills them in through dlsym before it says "ready".
 */
#include <stdint.h>

/* The four tables: each variable holds the address of the first entry. */
void *gHotSpotVMStructs = 0;
void *gHotSpotVMTypes = 0;
void *gHotSpotVMIntConstants = 0;
void *gHotSpotVMLongConstants = 0;

/* Each table's stride and where each member sits in an entry. */
uint64_t gHotSpotVMStructEntryArrayStride = 0;
uint64_t gHotSpotVMStructEntryTypeNameOffset = 0;
uint64_t gHotSpotVMStructEntryFieldNameOffset = 0;
uint64_t gHotSpotVMStructEntryTypeStringOffset = 0;
uint64_t gHotSpotVMStructEntryIsStaticOffset = 0;
uint64_t gHotSpotVMStructEntryOffsetOffset = 0;
uint64_t gHotSpotVMStructEntryAddressOffset = 0;

uint64_t gHotSpotVMTypeEntryArrayStride = 0;
uint64_t gHotSpotVMTypeEntryTypeNameOffset = 0;
uint64_t gHotSpotVMTypeEntrySuperclassNameOffset = 0;
uint64_t gHotSpotVMTypeEntrySizeOffset = 0;

uint64_t gHotSpotVMIntConstantEntryArrayStride = 0;
uint64_t gHotSpotVMIntConstantEntryNameOffset = 0;
uint64_t gHotSpotVMIntConstantEntryValueOffset = 0;

uint64_t gHotSpotVMLongConstantEntryArrayStride = 0;
uint64_t gHotSpotVMLongConstantEntryNameOffset = 0;
uint64_t gHotSpotVMLongConstantEntryValueOffset = 0;
