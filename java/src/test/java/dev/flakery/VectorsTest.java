package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** tests/vectors/decode.json and unsigned.json: the IDs the origins published, as every binding decodes them. */
class VectorsTest {
    static Stream<Map<String, Object>> decodeVectors() throws IOException {
        return Vectors.load("decode.json").stream();
    }

    static Stream<Map<String, Object>> unsignedVectors() throws IOException {
        return Vectors.load("unsigned.json").stream();
    }

    @Test
    void theVectorsAreThere() throws IOException {
        assertTrue(Vectors.load("decode.json").size() >= 20);
        assertTrue(Vectors.load("unsigned.json").size() >= 1);
    }

    @ParameterizedTest
    @MethodSource("decodeVectors")
    @SuppressWarnings("unchecked")
    void publishedVectors(Map<String, Object> vector) {
        long id = Vectors.number(vector.get("id"));
        Layout layout = Layout.parse((String) vector.get("layout"));
        DecodedId parts = layout.decode(id);
        assertEquals(id, parts.id());
        long published = Vectors.number(vector.get("timestamp_ms"));
        long tolerance = vector.get("timestamp_tolerance_ms") == null ? 0
                : Vectors.number(vector.get("timestamp_tolerance_ms"));
        long off = parts.timestampMs() - published;
        assertTrue(off >= 0 && off <= tolerance, "timestamp " + parts.timestampMs() + " vs " + published);
        if (vector.get("decoded_timestamp_ms") != null) {
            assertEquals(Vectors.number(vector.get("decoded_timestamp_ms")), parts.timestampMs());
        }
        List<String> kinds = layout.fields().stream().map(Layout.Field::kind).toList();
        for (String[] key : new String[][] {{"datacenter_id", "datacenter"}, {"worker_id", "worker"}}) {
            long got = key[1].equals("worker") ? parts.workerId() : parts.datacenterId();
            if (vector.get(key[0]) == null) {
                assertTrue(!kinds.contains(key[1]));
                assertEquals(0, got);
            } else {
                assertEquals(Vectors.number(vector.get(key[0])), got, key[0]);
            }
        }
        assertEquals(Vectors.number(vector.get("sequence")), parts.sequence());
        Map<String, Object> fields = (Map<String, Object>) vector.get("fields");
        for (Map.Entry<String, Object> field : fields.entrySet()) {
            assertEquals(Vectors.number(field.getValue()), parts.fields().get(field.getKey()), field.getKey());
        }
        // compose is the inverse of decode (as tests/python/test_vectors.py checks it).
        Map<String, Long> constants = new LinkedHashMap<>();
        boolean topConstantSet = false;
        for (Layout.Field field : layout.fields()) {
            if (field.kind().equals("constant")) {
                long value = parts.fields().get(field.name());
                constants.put(field.name(), value);
                topConstantSet |= field.shift() == 63 && value != 0;
            }
        }
        if (id >= 0 && !topConstantSet) {
            assertEquals(id, layout.compose(parts.timestampMs(), parts.datacenterId(), parts.workerId(),
                    parts.sequence(), constants));
        }
    }

    @ParameterizedTest
    @MethodSource("unsignedVectors")
    void discordIdsAreUnsigned(Map<String, Object> vector) {
        long id = Vectors.number(vector.get("id"));
        Layout layout = Layout.parse((String) vector.get("layout"));
        DecodedId parts = layout.decode(id);
        assertEquals(id, parts.id());
        assertEquals(Vectors.number(vector.get("timestamp_ms")), parts.timestampMs());
        assertEquals(Vectors.number(vector.get("datacenter_id")), parts.datacenterId());
        assertEquals(Vectors.number(vector.get("worker_id")), parts.workerId());
        assertEquals(Vectors.number(vector.get("sequence")), parts.sequence());
        assertEquals(id, layout.compose(parts.timestampMs(), parts.datacenterId(), parts.workerId(), parts.sequence()));
    }
}
