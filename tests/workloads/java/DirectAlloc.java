import java.nio.ByteBuffer;

/*
 * DirectAlloc: threads that allocate direct byte buffers, whose memory the
 * JVM takes from the C library's malloc (Unsafe.allocateMemory), for the
 * native memory profile (-e nativemem): a Java method above the native
 * allocation.
 *
 *   java -XX:MaxDirectMemorySize=64m DirectAlloc [-t THREADS]
 *
 * Each thread keeps its last RING buffers and drops the older ones, which
 * the garbage collector frees (a direct buffer's cleaner calls free). It
 * prints "ready" once every thread runs, and "alive N" every 100 ms from a
 * thread of its own, until stopped.
 */
public final class DirectAlloc {
	private static final int SIZE = 64 << 10, RING = 32;

	private static void direct(ByteBuffer[] ring, int i) {
		ByteBuffer b = ByteBuffer.allocateDirect(SIZE);

		b.put(0, (byte) i);
		ring[i % RING] = b;
	}

	private static void work() {
		ByteBuffer[] ring = new ByteBuffer[RING];

		for (int i = 0;; i++)
			direct(ring, i);
	}

	public static void main(String[] args) throws Exception {
		int threads = 2;

		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("-t") && i + 1 < args.length)
				threads = Integer.parseInt(args[++i]);
			else
				throw new IllegalArgumentException("usage: java DirectAlloc [-t THREADS]");
		}
		for (int t = 0; t < threads; t++) {
			Thread w = new Thread(DirectAlloc::work, "direct-" + t);

			w.setDaemon(true);
			w.start();
		}
		System.out.println("ready");
		System.out.flush();
		for (long n = 1;; n++) {
			Thread.sleep(100);
			System.out.println("alive " + n);
			System.out.flush();
		}
	}
}
