import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/*
 * What the Java workloads share, in the shape the C harness reads
 * (tests/integration/harness.h): "ready" on stdout once the work runs, and on
 * SIGTERM or SIGINT the truth, one "NAME VALUE" line per quantity, printed
 * by a shutdown hook. The JVM then exits with status 143 (SIGTERM) or 130
 * (SIGINT), as a JVM does; the truth lines show the hook ran.
 */
final class Workload {
	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private Workload() {
	}

	/* Prints "ready" (call once every worker thread runs). */
	static void ready() {
		System.out.println("ready");
		System.out.flush();
	}

	/* What a workload thread runs. */
	interface Body {
		void run() throws Exception;
	}

	/*
	 * Starts a thread named name that counts running down, then runs body;
	 * if body fails, the JVM ends with status 1, so a live JVM means every
	 * such thread still runs.
	 */
	static void start(String name, CountDownLatch running, Body body) {
		new Thread(() -> {
			running.countDown();
			try {
				body.run();
			} catch (Throwable e) {
				System.err.println("thread " + name + " failed:");
				e.printStackTrace();
				Runtime.getRuntime().halt(1);
			}
		}, name).start();
	}

	/* Registers truth to be printed, in its iteration order, when the JVM shuts down. */
	static void onStop(Supplier<Map<String, Long>> truth) {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			StringBuilder out = new StringBuilder();

			truth.get().forEach((name, value) -> out.append(name).append(' ').append(value).append('\n'));
			System.out.print(out);
			System.out.flush();
		}, "print-truth"));
	}

	/*
	 * Prints "alive N" every 100 ms, N counting from 1, forever: a test
	 * reads these to see the JVM still runs Java code and answers.
	 */
	static void heartbeat() throws InterruptedException {
		for (long n = 1;; n++) {
			Thread.sleep(100);
			System.out.println("alive " + n);
			System.out.flush();
		}
	}

	/* The calling thread's CPU time in ns (clock_gettime of its thread CPU clock). */
	static long threadCpuNs() {
		return THREADS.getCurrentThreadCpuTime();
	}

	/* Fails unless the JVM measures per-thread CPU time; every JVM the tests use does. */
	static void requireThreadCpuTime() {
		if (!THREADS.isCurrentThreadCpuTimeSupported())
			throw new IllegalStateException("this JVM cannot measure thread CPU time");
		THREADS.setThreadCpuTimeEnabled(true);
	}

	/* Parses a positive int argument, or exits with status 2 and a message. */
	static int positiveArg(String usage, String arg) {
		try {
			int n = Integer.parseInt(arg);
			if (n > 0)
				return n;
		} catch (NumberFormatException e) {
			// falls through to the usage message
		}
		System.err.println("usage: " + usage);
		System.exit(2);
		return 0;
	}

	/* The options from args[from] on: only "-t THREADS" (default 2); else exits with status 2 and usage. */
	static int threadsOption(String usage, String[] args, int from) {
		int threads = 2;

		for (int i = from; i < args.length; i++) {
			if (args[i].equals("-t"))
				threads = positiveArg(usage, i + 1 < args.length ? args[++i] : "");
			else
				positiveArg(usage, "");
		}
		return threads;
	}

	/*
	 * Runs body on threads named prefix-0, prefix-1, ..., says "ready" once
	 * all run, reports "rounds N" at the stop, and beats until then.
	 */
	static void runThreads(String prefix, int threads, Body body, AtomicLong rounds) throws InterruptedException {
		onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			truth.put("rounds", rounds.get());
			return truth;
		});
		CountDownLatch running = new CountDownLatch(threads);
		for (int i = 0; i < threads; i++)
			start(prefix + "-" + i, running, body);
		running.await();
		ready();
		heartbeat();
	}
}
