/*
 * StubProbe: the JVM tests/integration/test_stub.c profiles through the
 * agent (jvmti-stub/).
 *
 * A thread named "StubSpin" spins in StubProbe.spin, a known method that
 * never returns; one named "StubSleep" sleeps in StubProbe.doze, forever.
 * The main thread prints, in this order:
 *
 *   tid N       the Linux thread id of StubSpin (from /proc/thread-self),
 *               the thread the test signals
 *   sleeptid N  the same for StubSleep, whose stack the test asks for
 *   ready       the harness's start line
 *   tick N      every 50 ms, so the test can see the JVM still runs
 *
 * It runs until SIGTERM (exit status 143 after the JVM's shutdown).
 */
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;

public final class StubProbe {
	static volatile long sink;
	static volatile String spinTid;
	static volatile String sleepTid;

	/*
	 * No branch in the loop: a rarely taken one becomes an uncommon trap in
	 * C2's code, and the deoptimisations while the JIT settles would make
	 * AsyncGetCallTrace answer "deoptimizing" (-9) instead of a stack.
	 */
	static void spin() {
		long x = 1;
		for (;;) {
			x = x * 6364136223846793005L + 1442695040888963407L;
			sink = x;
		}
	}

	/* Blocked in Thread.sleep under a known frame, as a thread off CPU is. */
	static void doze() {
		for (;;) {
			try {
				Thread.sleep(60_000);
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	/* This thread's Linux tid, "-1" if /proc cannot tell. */
	static String selfTid() {
		try {
			String self = Files.readSymbolicLink(Paths.get("/proc/thread-self")).toString();
			return self.substring(self.lastIndexOf('/') + 1);
		} catch (Exception e) {
			return "-1";
		}
	}

	public static void main(String[] args) throws Exception {
		CountDownLatch started = new CountDownLatch(2);
		Thread spinner = new Thread(() -> {
			spinTid = selfTid();
			started.countDown();
			spin();
		}, "StubSpin");
		Thread sleeper = new Thread(() -> {
			sleepTid = selfTid();
			started.countDown();
			doze();
		}, "StubSleep");
		spinner.setDaemon(true);
		sleeper.setDaemon(true);
		spinner.start();
		sleeper.start();
		started.await();
		System.out.println("tid " + spinTid);
		System.out.println("sleeptid " + sleepTid);
		System.out.println("ready");
		System.out.flush();
		for (long tick = 0;; tick++) {
			Thread.sleep(50);
			System.out.println("tick " + tick);
			System.out.flush();
		}
	}
}
