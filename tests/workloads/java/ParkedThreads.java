import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/*
 * ParkedThreads: many Java threads that wait forever, the case where a
 * wall-clock profiler's cost must not grow with the number of threads
 * (bench/wall_idle_java.sh).
 *
 *   java ParkedThreads [N]   (default 1000)
 *
 * Starts N threads named "parked-<i>", each parked in LockSupport.park
 * (inside ParkedThreads.parkForever) until the JVM ends, and prints "ready"
 * once every one of them has reached it. The main thread then prints
 * "beat <n>" every second, so a reader can tell the JVM kept running.
 */
public final class ParkedThreads {
	private ParkedThreads() {
	}

	private static void parkForever(CountDownLatch started) {
		started.countDown();
		for (;;)
			LockSupport.park();
	}

	public static void main(String[] args) throws InterruptedException {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
		CountDownLatch started = new CountDownLatch(n);

		for (int i = 0; i < n; i++) {
			Thread t = new Thread(() -> parkForever(started), "parked-" + i);
			t.setDaemon(true);
			t.start();
		}
		started.await();
		/* Reached parkForever; the last few may still be on their way into park(). */
		Thread.sleep(200);
		System.out.println("ready");
		System.out.flush();
		for (long beat = 1;; beat++) {
			Thread.sleep(1000);
			System.out.println("beat " + beat);
			System.out.flush();
		}
	}
}
