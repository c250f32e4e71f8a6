import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Wakers: threads that wait for one another in known ways, for
 * tests/integration/test_wakers.c (--wakers).
 *
 *   java Wakers queue   a thread "producer" computes (Wakers.work) and hands
 *                       each result to two threads "consumer-0" and
 *                       "consumer-1" through a fair SynchronousQueue
 *                       (Wakers.produceQueue, Wakers.consumeQueue)
 *   java Wakers pipe    the same through two OS pipes (java.nio Pipe), one
 *                       per consumer, the producer writing to each in turn
 *                       (Wakers.producePipe, Wakers.consumePipe)
 *   java Wakers sleep   a thread "sleeper" sleeps 20 ms at a time
 *                       (Wakers.sleepLoop): its own timer wakes it
 *
 * The consumers wait for the producer and for nothing else; each item
 * costs the producer about a millisecond of CPU. "ready" once every
 * thread runs, then "alive N" heartbeats; at the stop "items N", what
 * the consumers received.
 */
final class Wakers {
	private static final AtomicLong ITEMS = new AtomicLong();
	static volatile long sink;

	private Wakers() {
	}

	static long work(int n) {
		long x = 0;

		for (int i = 0; i < n; i++)
			x = x * 31 + i;
		return x;
	}

	static void produceQueue(SynchronousQueue<Long> queue) throws InterruptedException {
		for (;;)
			queue.put(work(1_000_000));
	}

	static void consumeQueue(SynchronousQueue<Long> queue) throws InterruptedException {
		for (;;) {
			sink += queue.take();
			ITEMS.incrementAndGet();
		}
	}

	static void producePipe(Pipe[] pipes) throws Exception {
		ByteBuffer one = ByteBuffer.allocate(8);

		for (;;) {
			for (Pipe p : pipes) {
				one.clear();
				one.putLong(work(1_000_000)).flip();
				while (one.hasRemaining())
					p.sink().write(one);
			}
		}
	}

	static void consumePipe(Pipe pipe) throws Exception {
		ByteBuffer one = ByteBuffer.allocate(8);

		for (;;) {
			one.clear();
			while (one.hasRemaining())
				if (pipe.source().read(one) < 0)
					return;
			sink += one.getLong(0);
			ITEMS.incrementAndGet();
		}
	}

	static void sleepLoop() throws InterruptedException {
		for (;;)
			Thread.sleep(20);
	}

	public static void main(String[] args) throws Exception {
		String mode = args.length == 1 ? args[0] : "";
		CountDownLatch running;

		Workload.onStop(() -> Map.of("items", ITEMS.get()));
		switch (mode) {
		case "queue": {
			/* Fair: the consumers take turns, so neither waits the whole recording for its turn. */
			SynchronousQueue<Long> queue = new SynchronousQueue<>(true);

			running = new CountDownLatch(3);
			Workload.start("consumer-0", running, () -> consumeQueue(queue));
			Workload.start("consumer-1", running, () -> consumeQueue(queue));
			Workload.start("producer", running, () -> produceQueue(queue));
			break;
		}
		case "pipe": {
			Pipe[] pipes = { Pipe.open(), Pipe.open() };

			running = new CountDownLatch(3);
			Workload.start("consumer-0", running, () -> consumePipe(pipes[0]));
			Workload.start("consumer-1", running, () -> consumePipe(pipes[1]));
			Workload.start("producer", running, () -> producePipe(pipes));
			break;
		}
		case "sleep":
			running = new CountDownLatch(1);
			Workload.start("sleeper", running, Wakers::sleepLoop);
			break;
		default:
			System.err.println("usage: java Wakers queue|pipe|sleep");
			System.exit(2);
			return;
		}
		running.await();
		Workload.ready();
		Workload.heartbeat();
	}
}
