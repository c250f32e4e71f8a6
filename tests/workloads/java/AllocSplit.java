import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * AllocSplit: threads split the bytes they allocate on the heap 60/30/10
 * between three methods, each allocating a class of its own:
 * AllocSplit.alloc60 long[] arrays, alloc30 int[] arrays, alloc10
 * AllocSplit$Box objects.
 *
 *   java AllocSplit [-t THREADS] [-g GOFILE -r ROUNDS]
 *
 * Each method measures what it allocated itself, by its thread's allocated
 * bytes (com.sun.management.ThreadMXBean) before and after: so the truth
 * holds whatever the objects' sizes in this JVM. Every object is stored in
 * a shared array, so none can be optimised away. It prints "ready" once
 * every thread runs, beats "alive N", and on SIGTERM prints the truth:
 * "alloc60 <bytes>", "alloc30 <bytes>", "alloc10 <bytes>", summed over
 * threads, and "objects10 <Box objects>".
 *
 * With -g and -r, a fixed amount of work at a moment a test chooses: the
 * threads wait until GOFILE exists, run ROUNDS rounds each, and once all
 * are done the truth is printed at once, with "elapsed_ns <ns>" from the
 * first thread's start to the last one's end, then "done"; the JVM then
 * only beats until stopped.
 */
public final class AllocSplit {
	private static final String USAGE = "java AllocSplit [-t THREADS] [-g GOFILE -r ROUNDS]";
	private static final com.sun.management.ThreadMXBean THREADS =
			(com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
	/* Per round: 60 arrays of 126 longs (1 KiB each with a 16-byte header), 60 of 124 ints, 160 Boxes. */
	private static final int LONGS = 126, INTS = 124, N60 = 60, N30 = 60, N10 = 160;
	private static final Object[] SINK = new Object[1 << 12];
	private static final AtomicLong bytes60 = new AtomicLong(), bytes30 = new AtomicLong(),
			bytes10 = new AtomicLong(), objects10 = new AtomicLong(), startNs = new AtomicLong();

	private AllocSplit() {
	}

	/* Six longs: 64 bytes with a 12 or 16-byte header. */
	static final class Box {
		long a, b, c, d, e, f;

		Box(long seed) {
			a = seed;
			f = seed + 1;
		}
	}

	private static long allocated() {
		return THREADS.getCurrentThreadAllocatedBytes();
	}

	static void alloc60(int slot) {
		long before = allocated();

		for (int i = 0; i < N60; i++)
			SINK[(slot + i) & (SINK.length - 1)] = new long[LONGS];
		bytes60.addAndGet(allocated() - before);
	}

	static void alloc30(int slot) {
		long before = allocated();

		for (int i = 0; i < N30; i++)
			SINK[(slot + i) & (SINK.length - 1)] = new int[INTS];
		bytes30.addAndGet(allocated() - before);
	}

	static void alloc10(int slot) {
		long before = allocated();

		for (int i = 0; i < N10; i++)
			SINK[(slot + i) & (SINK.length - 1)] = new Box(slot + i);
		bytes10.addAndGet(allocated() - before);
		objects10.addAndGet(N10);
	}

	static void work(long rounds) {
		int slot = 0;

		for (long r = 0; rounds == 0 || r < rounds; r++, slot += N10) {
			alloc60(slot);
			alloc30(slot);
			alloc10(slot);
		}
	}

	private static Map<String, Long> truth() {
		Map<String, Long> truth = new LinkedHashMap<>();
		truth.put("alloc60", bytes60.get());
		truth.put("alloc30", bytes30.get());
		truth.put("alloc10", bytes10.get());
		truth.put("objects10", objects10.get());
		return truth;
	}

	public static void main(String[] args) throws Exception {
		int threads = 1;
		long rounds = 0;
		String go = null;

		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("-t")) {
				threads = Workload.positiveArg(USAGE, i + 1 < args.length ? args[++i] : "");
			} else if (args[i].equals("-r")) {
				rounds = Workload.positiveArg(USAGE, i + 1 < args.length ? args[++i] : "");
			} else if (args[i].equals("-g") && i + 1 < args.length) {
				go = args[++i];
			} else {
				System.err.println("usage: " + USAGE);
				System.exit(2);
			}
		}
		if (!THREADS.isThreadAllocatedMemorySupported())
			throw new IllegalStateException("this JVM cannot measure a thread's allocated bytes");
		THREADS.setThreadAllocatedMemoryEnabled(true);
		if ((go == null) != (rounds == 0)) {
			System.err.println("usage: " + USAGE);
			System.exit(2);
		}
		Workload.onStop(AllocSplit::truth);
		final String goFile = go;
		final long n = rounds;
		CountDownLatch running = new CountDownLatch(threads), finished = new CountDownLatch(threads);
		for (int i = 0; i < threads; i++) {
			Workload.start("alloc-" + i, running, () -> {
				if (goFile != null)
					while (!Files.exists(Path.of(goFile)))
						Thread.sleep(5);
				startNs.compareAndSet(0, System.nanoTime());
				work(n);
				finished.countDown();
			});
		}
		running.await();
		Workload.ready();
		if (goFile != null) {
			new Thread(() -> {
				try {
					finished.await();
				} catch (InterruptedException e) {
					return;
				}
				long elapsed = System.nanoTime() - startNs.get();
				StringBuilder out = new StringBuilder();
				truth().forEach((name, value) -> out.append(name).append(' ').append(value).append('\n'));
				out.append("elapsed_ns ").append(elapsed).append('\n');
				System.out.print(out.append("done\n"));
				System.out.flush();
			}, "alloc-done").start();
		}
		Workload.heartbeat();
	}
}
