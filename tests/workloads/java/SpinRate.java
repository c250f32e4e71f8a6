/*
 * SpinRate: one thread that does a fixed unit of work over and over, each
 * unit under DEPTH frames of Java recursion, and reports how many units it
 * did in every 100 ms.
 *
 *   java SpinRate [DEPTH]    (default 60: about as deep as a servlet's stack)
 *
 * It prints "ready" once the work runs, then one line per 100 ms:
 * "<System.nanoTime in ms> <units>". Pinned to one CPU (taskset), the rate
 * falls by exactly the share of that CPU taken from it by anything else:
 * timer interrupts, BPF programs, signals and their handlers
 * (bench/sample_floor.sh).
 */
public final class SpinRate {
	private static volatile long sink;

	/* About 20 us of integer work below depth frames of recursion. */
	private static long unit(int depth, long seed) {
		if (depth > 0)
			return unit(depth - 1, seed) + 1;
		long x = seed;
		for (int i = 0; i < 20_000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	public static void main(String[] args) {
		int depth = args.length > 0 ? Integer.parseInt(args[0]) : 60;
		long last = System.nanoTime(), units = 0;

		System.out.println("ready");
		System.out.flush();
		for (;;) {
			sink += unit(depth, units);
			units++;
			long now = System.nanoTime();
			if (now - last >= 100_000_000L) {
				System.out.println(now / 1_000_000 + " " + units);
				System.out.flush();
				units = 0;
				last = now;
			}
		}
	}
}
