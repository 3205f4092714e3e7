package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every refusal is a FlakeryException with its stable code and a message: never a crash, never a bare exception. */
class BadInputTest {
    static FlakeryException refused(String code, Executable call) {
        FlakeryException e = assertThrows(FlakeryException.class, call);
        assertEquals(code, e.code(), e.getMessage());
        assertFalse(e.getMessage().isBlank());
        return e;
    }

    @Test
    void badLayouts() {
        for (String spec : new String[] {"", "nonesuch", "time:41,worker:10", "time:99,sequence:12",
                "time:41,worker:10,sequence:12;epoch=yesterday", "twitter;unit=0ms", "\u0000"}) {
            refused("invalid_layout", () -> Layout.parse(spec));
            refused("invalid_layout", () -> Generator.builder().layout(spec).workerId(1).build());
        }
        refused("invalid_argument", () -> Layout.parse(null));
    }

    @Test
    void nodeIdsOutOfRange() {
        FlakeryException e = refused("invalid_argument",
                () -> Generator.builder().layout("twitter").datacenterId(1).workerId(32).build());
        assertTrue(e.getMessage().contains("workerId"), e.getMessage());
        e = refused("invalid_argument", () -> Generator.builder().datacenterId(1).workerId(-1).build());
        assertTrue(e.getMessage().contains("workerId"), e.getMessage());
        refused("invalid_argument", () -> Generator.builder().datacenterId(32).workerId(1).build());
        refused("invalid_argument", () -> Generator.builder().workerId(1).maxBorrowMs(-5).build());
    }

    @Test
    void badOptions() {
        refused("invalid_argument", () -> Generator.builder().workerId(1).field("nonesuch", 1).build());
        refused("invalid_argument", () -> Generator.builder().layout("vesta-max-peak").workerId(1)
                .field("version", 2).build());
        refused("invalid_argument", () -> Generator.builder().workerId(1).field("version", -1).build());
        refused("invalid_argument", () -> Generator.builder().namespace("no spaces").leaseDir(Path.of("/nonexistent")).build());
        refused("invalid_argument", () -> Generator.builder().databaseMode("bogus").build());
        FlakeryException e = refused("invalid_argument",
                () -> Generator.builder().databaseUrl("ftp://user:s3cret@host/db").build());
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }

    @Test
    void badCounts() {
        try (Generator generator = Generator.builder().workerId(1).build()) {
            FlakeryException e = refused("invalid_argument", () -> generator.nextIds(-1));
            assertTrue(e.getMessage().contains("-1"), e.getMessage());
            refused("invalid_argument", () -> generator.nextIds(Integer.MIN_VALUE));
            assertEquals(0, generator.nextIds(0).length);
        }
        refused("invalid_argument", () -> Flakery.nextIds(-3));
    }

    @Test
    void badText() {
        for (String text : new String[] {"", "0", "00000000000000", "8000000000000", "000000000000U", "é"}) {
            refused("invalid_argument", () -> Flakery.fromBase32(text));
        }
        for (String text : new String[] {"", "0", "000000000000", "AzL8n0Y58m8", "0000000000-"}) {
            refused("invalid_argument", () -> Flakery.fromBase62(text));
        }
        refused("invalid_argument", () -> Flakery.fromBase32(null));
        refused("invalid_argument", () -> Flakery.toBase32(-1));
        refused("invalid_argument", () -> Flakery.toBase62(Long.MIN_VALUE));
    }

    @Test
    void badDecodeAndCompose() {
        Layout twitter = Layout.parse("twitter");
        refused("invalid_argument", () -> twitter.decode(-1));
        refused("invalid_argument", () -> twitter.compose(0, 0, 0, 0));
        FlakeryException e = refused("invalid_argument",
                () -> twitter.compose(System.currentTimeMillis(), 0, 32, 0));
        assertTrue(e.getMessage().contains("workerId"), e.getMessage());
        refused("invalid_argument", () -> twitter.compose(System.currentTimeMillis(), -1, 0, 0));
        refused("invalid_argument", () -> twitter.compose(System.currentTimeMillis(), 0, 0, 4096));
        refused("invalid_argument", () -> Layout.parse("vesta-max-peak")
                .compose(System.currentTimeMillis(), 0, 0, 0, Map.of("nonesuch", 1L)));
    }
}
