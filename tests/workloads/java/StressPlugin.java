import java.util.Arrays;
import java.util.Comparator;

/*
 * StressPlugin: the code Stress loads again and again, each time into a
 * class loader of its own that it then drops, so that these classes are
 * unloaded and their compiled code thrown away. Stress never runs this class
 * from its own class loader.
 *
 * run() makes HotSpot compile total() and then throw the compiled code away:
 *
 *  1. total() adds up circles only, long enough for C2 to compile it. Circle
 *     is then the only loaded subclass of Shape, and C2 inlines Circle.area
 *     into total() on that assumption (class hierarchy analysis).
 *  2. The first Square is made: loading Square breaks the assumption, and
 *     total() is deoptimised.
 *  3. Triangles join: the call site sees a third receiver class and turns
 *     megamorphic, which deoptimises total() again.
 *
 * Shapes other than circles are made by their own classes (Square.mix,
 * Triangle.mix), so that verifying StressPlugin does not load them early.
 * The sort by area adds a lambda, a hidden class that goes with its loader.
 */
public final class StressPlugin {
	private StressPlugin() {
	}

	abstract static class Shape {
		abstract double area();
	}

	static final class Circle extends Shape {
		private final double r;

		Circle(double r) {
			this.r = r;
		}

		@Override
		double area() {
			return Math.PI * r * r;
		}

		static Shape[] row(int n) {
			Shape[] shapes = new Shape[n];
			for (int i = 0; i < n; i++)
				shapes[i] = new Circle(1 + i % 7);
			return shapes;
		}
	}

	static final class Square extends Shape {
		private final double side;

		Square(double side) {
			this.side = side;
		}

		@Override
		double area() {
			return side * side;
		}

		/* A copy of shapes with every third one a square. */
		static Shape[] mix(Shape[] shapes) {
			Shape[] mixed = shapes.clone();
			for (int i = 0; i < mixed.length; i += 3)
				mixed[i] = new Square(1 + i % 5);
			return mixed;
		}
	}

	static final class Triangle extends Shape {
		private final double base, height;

		Triangle(double base, double height) {
			this.base = base;
			this.height = height;
		}

		@Override
		double area() {
			return base * height / 2;
		}

		/* A copy of shapes with every third one, from the second, a triangle. */
		static Shape[] mix(Shape[] shapes) {
			Shape[] mixed = shapes.clone();
			for (int i = 1; i < mixed.length; i += 3)
				mixed[i] = new Triangle(1 + i % 3, 2);
			return mixed;
		}
	}

	static double total(Shape[] shapes) {
		double sum = 0;

		for (Shape s : shapes)
			sum += s.area();
		return sum;
	}

	/* Calls total(shapes) for ns of wall time. */
	static double spin(Shape[] shapes, long ns) {
		long end = System.nanoTime() + ns;
		double sum = 0;

		while (System.nanoTime() < end)
			sum += total(shapes);
		return sum;
	}

	/* One round: warm-up on circles for warmupNs, then a quarter of that for each step above. */
	public static long run(long warmupNs) {
		Shape[] circles = Circle.row(64);
		double sum = spin(circles, warmupNs);
		Shape[] two = Square.mix(circles);

		sum += spin(two, warmupNs / 4);
		Shape[] three = Triangle.mix(two);
		sum += spin(three, warmupNs / 4);
		Arrays.sort(three, Comparator.comparingDouble(Shape::area));
		return (long) sum + (long) three[0].area();
	}
}
