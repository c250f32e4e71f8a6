import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/*
 * ThreadNames: Java threads whose names the kernel cannot hold, for the
 * profiler's thread names read from the JVM's memory.
 *
 *   java ThreadNames [-r RENAME_MS]
 *
 * Each thread spins in ThreadNames.spin, named longer than the kernel's 15
 * bytes (so the kernel's name is a cut one):
 *
 *   worker-pool-alpha-long-name-1     Latin-1, ASCII
 *   Prüfungs-Überwacher-Faden-lang    Latin-1 beyond ASCII (a compact String of coder 0)
 *   計算スレッド-utf16-worker-ひらがな  UTF-16 (coder 1)
 *   renamed-generation-N-of-many      renamed every RENAME_MS (default 300)
 *                                     to the next N, from 0; prints "renamed N"
 *   huge-name-xxx...                  5000 characters, more than the profiler
 *                                     reads of a name (1 KiB): a name it must
 *                                     refuse, keeping the kernel's
 *
 * and garbage-maker-thread-long allocates, and collects every 50 ms
 * (System.gc), so that the collector's own threads, which have no Java
 * names, run too. Prints the names one a line
 * as "name NAME" (UTF-8), then "ready" once every thread runs; on SIGTERM
 * the truth: "renames N".
 */
public final class ThreadNames {
	/* Escaped: the source is compiled whatever javac's default encoding. */
	static final String[] NAMES = { "worker-pool-alpha-long-name-1", "Pr\u00fcfungs-\u00dcberwacher-Faden-lang",
			"\u8a08\u7b97\u30b9\u30ec\u30c3\u30c9-utf16-worker-\u3072\u3089\u304c\u306a" };
	static final String RENAMED = "renamed-generation-%d-of-many";
	static final String HUGE = "huge-name-" + "x".repeat(4990);
	private static volatile long sink;
	private static volatile int renames;

	private ThreadNames() {
	}

	static long spin(long x) {
		for (int i = 0; i < 100_000; i++) {
			x ^= x >>> 33;
			x *= 0xff51afd7ed558ccdL;
			x ^= x >>> 29;
		}
		return x;
	}

	public static void main(String[] args) throws Exception {
		long renameMs = 300;

		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("-r") && i + 1 < args.length)
				renameMs = Long.parseLong(args[++i]);
			else
				throw new IllegalArgumentException("java ThreadNames [-r RENAME_MS]");
		}
		final long period = renameMs;
		CountDownLatch running = new CountDownLatch(NAMES.length + 3);
		List<Thread> threads = new ArrayList<>();

		List<String> spinning = new ArrayList<>(List.of(NAMES));
		spinning.add(HUGE);
		for (String name : spinning) {
			threads.add(new Thread(() -> {
				running.countDown();
				for (long x = 1;; x = spin(x))
					sink = x;
			}, name));
		}
		threads.add(new Thread(() -> {
			running.countDown();
			long next = System.nanoTime() + period * 1_000_000L;
			for (long x = 1;; x = spin(x)) {
				sink = x;
				if (System.nanoTime() >= next) {
					int n = ++renames;
					Thread.currentThread().setName(String.format(RENAMED, n));
					System.out.println("renamed " + n);
					next += period * 1_000_000L;
				}
			}
		}, String.format(RENAMED, 0)));
		threads.add(new Thread(() -> {
			running.countDown();
			List<byte[]> kept = new ArrayList<>();
			long nextCollection = System.nanoTime();
			for (long i = 0;; i++) {
				kept.add(new byte[4096]);
				if (kept.size() > 4096)
					kept.clear();
				if (i % 1024 == 0) {
					Thread.yield();
					/* A whole collection now and then, so the collector's threads run whatever the heap's size. */
					if (System.nanoTime() >= nextCollection) {
						System.gc();
						nextCollection = System.nanoTime() + 50_000_000L;
					}
				}
			}
		}, "garbage-maker-thread-long"));
		for (Thread t : threads) {
			t.setDaemon(true);
			t.start();
		}
		running.await();
		Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("renames " + renames)));
		java.io.PrintStream out = new java.io.PrintStream(System.out, true, "UTF-8");
		for (String name : NAMES)
			out.println("name " + name);
		System.out.println("ready");
		for (;;)
			Thread.sleep(1000);
	}
}
