/*
 * LineLoops: two hot methods whose time is spent in loops on known lines,
 * for the test of --lines (tests/integration/test_lines.c), which reads
 * this file to find them: each loop's lines run from the line that holds
 * "loop-begin NAME" to the one that holds "loop-end NAME".
 *
 *   java LineLoops
 *
 * The main thread calls alpha and beta in turn, forever; it prints "ready"
 * once it has started. Both loops are long (some milliseconds a call), so
 * almost all of each method's time is inside its loop.
 */
public final class LineLoops {
	private static volatile long sink;

	private LineLoops() {
	}

	static long alpha(long seed) {
		long x = seed;

		for (int i = 0; i < 2_000_000; i++) { // loop-begin alpha
			x ^= x >>> 31;
			x *= 0x9e3779b97f4a7c15L;
			x += i;
		} // loop-end alpha
		return x;
	}

	static double beta(long seed) {
		double y = seed & 0xffff;

		for (int i = 1; i < 1_000_000; i++) { // loop-begin beta
			y = y * 1.0000001 + 1.0 / i;
			if (y > 1e12)
				y -= 1e12;
		} // loop-end beta
		return y;
	}

	public static void main(String[] args) {
		long seed = System.nanoTime();

		System.out.println("ready");
		System.out.flush();
		for (;;) {
			seed = alpha(seed);
			sink = seed + (long) beta(seed);
		}
	}
}
