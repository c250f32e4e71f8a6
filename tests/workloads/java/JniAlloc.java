import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * JniAlloc: heap allocations made by native code, for
 * tests/integration/test_alloc.c. One thread, jnialloc-0, allocates the
 * same 4 KiB byte arrays two ways, turn by turn: from Java
 * (JniAlloc.javaArrays) and from C through JNI (JniAlloc.nativeArrays,
 * whose C side, LIBJNIALLOC, tests/workloads/jni/jnialloc.c, calls
 * jnialloc_arrays, which calls NewByteArray).
 *
 *   java JniAlloc LIBJNIALLOC
 *
 * "ready" once the thread runs, then "alive N" heartbeats; at the stop
 * "rounds N" (Workload.runThreads).
 */
final class JniAlloc {
	static final int ARRAYS = 64, BYTES = 4096;
	static final Object[] SINK = new Object[ARRAYS];

	private JniAlloc() {
	}

	/* ARRAYS arrays of BYTES bytes from C, into SINK. */
	static native void nativeArrays(Object[] sink, int bytes);

	static void javaArrays(Object[] sink, int bytes) {
		for (int i = 0; i < sink.length; i++)
			sink[i] = new byte[bytes];
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 1) {
			System.err.println("usage: java JniAlloc LIBJNIALLOC");
			System.exit(2);
		}
		System.load(args[0]);
		AtomicLong rounds = new AtomicLong();
		CountDownLatch running = new CountDownLatch(1);

		Workload.onStop(() -> Map.of("rounds", rounds.get()));
		Workload.start("jnialloc-0", running, () -> {
			for (;;) {
				nativeArrays(SINK, BYTES);
				javaArrays(SINK, BYTES);
				rounds.incrementAndGet();
			}
		});
		running.await();
		Workload.ready();
		Workload.heartbeat();
	}
}
