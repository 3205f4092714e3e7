package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The text forms, with the known values tests/python/test_text.py and tests/node/text.test.mjs check. */
class TextTest {
    static final long MAX = Long.MAX_VALUE;

    static List<Long> sampleIds() {
        List<Long> ids = new ArrayList<>(List.of(0L, 1L, MAX, MAX - 1));
        for (int bits = 1; bits < 63; bits++) {
            long p = 1L << bits;
            ids.addAll(List.of(p - 1, p, p + 1));
        }
        Random random = new Random(15);
        for (int i = 0; i < 500; i++) {
            ids.add(random.nextLong() >>> (1 + i % 63));
        }
        return ids;
    }

    @Test
    void knownValues() {
        assertEquals("0000000000000", Flakery.toBase32(0));
        assertEquals("7ZZZZZZZZZZZZ", Flakery.toBase32(MAX));
        assertEquals("04W86BB0G4007", Flakery.toBase32(175928847299117063L));
        assertEquals("00000000000", Flakery.toBase62(0));
        assertEquals("AzL8n0Y58m7", Flakery.toBase62(MAX));
        assertEquals("0Czks0tP37X", Flakery.toBase62(175928847299117063L));
    }

    @Test
    void roundTripAndLength() {
        for (long id : sampleIds()) {
            String b32 = Flakery.toBase32(id);
            String b62 = Flakery.toBase62(id);
            assertEquals(13, b32.length());
            assertEquals(11, b62.length());
            assertEquals(id, Flakery.fromBase32(b32), b32);
            assertEquals(id, Flakery.fromBase62(b62), b62);
        }
    }

    @Test
    void textSortsAsTheIds() {
        List<Long> ids = sampleIds();
        try (Generator generator = Generator.builder().workerId(1).build()) {
            for (long id : generator.nextIds(1000)) {
                ids.add(id);
            }
        }
        for (boolean base62 : new boolean[] {false, true}) {
            String[] texts = ids.stream().sorted().map(id -> base62 ? Flakery.toBase62(id) : Flakery.toBase32(id))
                    .toArray(String[]::new);
            String[] sorted = texts.clone();
            Arrays.sort(sorted);
            assertEquals(Arrays.asList(sorted), Arrays.asList(texts));
        }
    }

    @Test
    void base32ReadsAnyCaseAndAliases() {
        assertEquals(MAX, Flakery.fromBase32("7zzzzzzzzzzzz"));
        assertEquals(175928847299117063L, Flakery.fromBase32("O4W86BBOG4OO7"));
        assertEquals(1, Flakery.fromBase32("000000000000I"));
        assertEquals(1, Flakery.fromBase32("000000000000l"));
        assertEquals(61, Flakery.fromBase62("0000000000z"));
        assertEquals(35, Flakery.fromBase62("0000000000Z"));
    }
}
