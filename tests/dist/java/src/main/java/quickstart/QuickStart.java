package quickstart;

import dev.flakery.Flakery;
import dev.flakery.FlakeryException;
import dev.flakery.Generator;

/** The Java quick start, built offline against the installed jar (tests/dist/run.sh). */
public final class QuickStart {
    private QuickStart() {}

    public static void main(String[] args) {
        long a = Flakery.nextId();
        long b = Flakery.nextId();
        check(0 < a && a < b, "the process-wide generator: " + a + ", " + b);
        try (Generator generator = Generator.builder().workerId(7).build()) {
            long[] ids = generator.nextIds(100);
            for (int i = 1; i < ids.length; i++) {
                check(ids[i] > ids[i - 1], "IDs repeat or do not increase");
            }
            check(generator.decode(ids[99]).workerId() == 7, "the worker ID");
        }
        try {
            Flakery.toBase32(-1);
            check(false, "a negative ID was written as text");
        } catch (FlakeryException error) {
            check(error.code().equals("invalid_argument"), error.code());
        }
        System.out.println("java quickstart " + Flakery.version() + ": " + b + " from "
                + Flakery.class.getProtectionDomain().getCodeSource().getLocation().getPath());
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
