import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * CpuSplit: the Java twin of tests/workloads/cpu_split.c. Threads split their
 * CPU time 50/30/20 between three methods, CpuSplit.share50, share30 and
 * share20, in cycles of CYCLE_MS.
 *
 *   java CpuSplit [-t THREADS] [-c CYCLE_MS] [-p] [-w] [-b] [-n PREFIX]
 *
 * Phases are measured by each thread's own CPU clock, so the split holds
 * however the scheduler or the profiler slows the thread. With -w they follow
 * the wall clock instead: a cycle starts at every multiple of CYCLE_MS of
 * System.nanoTime, which on Linux is CLOCK_MONOTONIC, the clock the kernel's
 * sampling timer runs on, so a sampler with a fixed period of CYCLE_MS sees
 * the same phase every time. -p pins thread i to CPU i (with taskset, on the
 * thread's own tid). -b prints "alive N" every 100 ms.
 *
 * Threads are named split-0, split-1, ... (-n: PREFIX0, PREFIX1, ..., names
 * longer than the kernel's 15-byte thread names). It prints "ready" once every thread
 * runs and, on SIGTERM, the truth: "share50 <thread CPU ns>" and so on,
 * summed over threads.
 */
public final class CpuSplit {
	private static final String USAGE = "java CpuSplit [-t THREADS] [-c CYCLE_MS] [-p] [-w] [-b] [-n PREFIX]";
	/* Mixing rounds between two clock reads: about 4 us of work. */
	private static final int SPINS = 256;

	private static long cycleNs = 10_000_000L;
	private static boolean wallPhases;
	private static final AtomicLong cpuNs50 = new AtomicLong(), cpuNs30 = new AtomicLong(),
			cpuNs20 = new AtomicLong();
	private static volatile long sink;

	private CpuSplit() {
	}

	private static long phaseNow() {
		return wallPhases ? System.nanoTime() : Workload.threadCpuNs();
	}

	/*
	 * The three shares. Each owns its loop, and its body is over 325 bytes of
	 * bytecode (HotSpot's FreqInlineSize, the limit for inlining a hot
	 * method), so C2 compiles it as a method of its own and never inlines it
	 * into work(): a sample in it has it as a compiled frame of its own. The
	 * loop body is murmur3's 64-bit finaliser, unrolled.
	 */
	static long share50(long start) {
		long deadline = start + cycleNs * 50 / 100, cpuStart = Workload.threadCpuNs(), x = start;

		while (phaseNow() < deadline) {
			for (int i = 0; i < SPINS; i++) {
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x += i;
			}
		}
		sink = x;
		cpuNs50.addAndGet(Workload.threadCpuNs() - cpuStart);
		return deadline;
	}

	static long share30(long start) {
		long deadline = start + cycleNs * 30 / 100, cpuStart = Workload.threadCpuNs(), x = start;

		while (phaseNow() < deadline) {
			for (int i = 0; i < SPINS; i++) {
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x += i;
			}
		}
		sink = x;
		cpuNs30.addAndGet(Workload.threadCpuNs() - cpuStart);
		return deadline;
	}

	static long share20(long start) {
		long deadline = start + cycleNs * 20 / 100, cpuStart = Workload.threadCpuNs(), x = start;

		while (phaseNow() < deadline) {
			for (int i = 0; i < SPINS; i++) {
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x ^= x >>> 33; x *= 0xff51afd7ed558ccdL; x ^= x >>> 33; x *= 0xc4ceb9fe1a85ec53L; x ^= x >>> 33;
				x += i;
			}
		}
		sink = x;
		cpuNs20.addAndGet(Workload.threadCpuNs() - cpuStart);
		return deadline;
	}

	/* One worker: the phases in turn, each deadline following from the last, so there is no drift. */
	static void work() {
		long t = phaseNow();
		if (wallPhases)
			t -= Math.floorMod(t, cycleNs);
		for (int phase = 0;; phase = phase == 2 ? 0 : phase + 1) {
			switch (phase) {
			case 0:
				t = share50(t);
				break;
			case 1:
				t = share30(t);
				break;
			default:
				t = share20(t);
				break;
			}
		}
	}

	/* Pins the calling thread to cpu: taskset on its tid, read from /proc/thread-self. */
	private static void pin(int cpu) {
		try {
			String tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
			Process p = new ProcessBuilder("taskset", "-p", "-c", Integer.toString(cpu), tid)
					.redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
			if (p.waitFor() != 0)
				throw new IllegalStateException("taskset -p -c " + cpu + " " + tid + " failed");
		} catch (Exception e) {
			System.err.println("CpuSplit: cannot pin a thread to CPU " + cpu + ": " + e);
			System.exit(1);
		}
	}

	public static void main(String[] args) throws Exception {
		int threads = 1;
		boolean pinned = false, heartbeat = false;
		String prefix = "split-";

		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
			case "-t":
				threads = Workload.positiveArg(USAGE, i + 1 < args.length ? args[++i] : "");
				break;
			case "-c":
				cycleNs = Workload.positiveArg(USAGE, i + 1 < args.length ? args[++i] : "") * 1_000_000L;
				break;
			case "-p":
				pinned = true;
				break;
			case "-w":
				wallPhases = true;
				break;
			case "-b":
				heartbeat = true;
				break;
			case "-n":
				prefix = i + 1 < args.length ? args[++i] : prefix;
				break;
			default:
				System.err.println("usage: " + USAGE);
				System.exit(2);
			}
		}
		Workload.requireThreadCpuTime();
		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			truth.put("share50", cpuNs50.get());
			truth.put("share30", cpuNs30.get());
			truth.put("share20", cpuNs20.get());
			return truth;
		});
		int cpus = Runtime.getRuntime().availableProcessors();
		CountDownLatch running = new CountDownLatch(threads);
		for (int i = 0; i < threads; i++) {
			int cpu = pinned ? i % cpus : -1;
			new Thread(() -> {
				if (cpu >= 0)
					pin(cpu);
				running.countDown();
				work();
			}, prefix + i).start();
		}
		running.await();
		Workload.ready();
		if (heartbeat)
			Workload.heartbeat();
	}
}
