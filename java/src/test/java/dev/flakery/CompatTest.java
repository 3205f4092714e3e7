package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.flakery.compat.leaf.FlakeryIDGen;
import dev.flakery.compat.leaf.IDGen;
import dev.flakery.compat.leaf.Result;
import dev.flakery.compat.leaf.Status;
import dev.flakery.compat.uid.DefaultUidGenerator;
import dev.flakery.compat.uid.FlakeryUidGenerator;
import dev.flakery.compat.uid.UidGenerator;
import dev.flakery.compat.uid.WorkerIdAssigner;
import dev.flakery.compat.vesta.FlakeryIdService;
import dev.flakery.compat.vesta.Id;
import dev.flakery.compat.vesta.IdService;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The one-line switches of docs/java.md against the vectors their own code made
 * (tests/vectors/README.md): uid-generator's parseUID, Vesta's IdService, Leaf's Result.
 */
class CompatTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> file(String name) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(Vectors.dir().resolve(name)));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object value) {
        return (List<Map<String, Object>>) value;
    }

    /** Runs {@code body} with the JVM's default time zone set to {@code zone}, then restores it. */
    static void inZone(String zone, Executable body) throws Throwable {
        TimeZone saved = TimeZone.getDefault();
        TimeZone.setDefault(TimeZone.getTimeZone(zone));
        try {
            body.execute();
        } finally {
            TimeZone.setDefault(saved);
        }
    }

    @Test
    void parseUidIsUidGeneratorsByteForByte() throws Throwable {
        List<Map<String, Object>> vectors = list(file("uid_generator.json").get("vectors"));
        assertTrue(vectors.size() >= 30);
        for (Map<String, Object> v : vectors) {
            long uid = Long.parseLong((String) v.get("uid"));
            inZone((String) v.get("tz"), () -> {
                // The vectors' driver (uid_generator.json's made_by), with the bean of flakery's
                // for uid-generator's; and a FlakeryUidGenerator of the vector's layout.
                DefaultUidGenerator bean = new DefaultUidGenerator();
                bean.setWorkerIdAssigner((WorkerIdAssigner) () -> 0L);
                if (v.get("epochStr") != null) {
                    bean.setEpochStr((String) v.get("epochStr"));
                }
                bean.afterPropertiesSet();
                try (bean; FlakeryUidGenerator uids = new FlakeryUidGenerator(
                        Generator.builder().layout((String) v.get("layout")).workerId(0).build())) {
                    for (UidGenerator each : List.of(bean, uids)) {
                        if (v.get("flakery") instanceof Map<?, ?> refusal) {
                            FlakeryException e = assertThrows(FlakeryException.class, () -> each.parseUID(uid));
                            assertEquals(refusal.get("error_code"), e.code(), v.toString());
                        } else {
                            assertEquals(v.get("parseUID"), each.parseUID(uid), v + " " + each.getClass());
                        }
                    }
                }
            });
        }
    }

    @Test
    void uidGeneratorMakesIdsItsParseUidReads() {
        try (Generator generator = Generator.builder().layout("baidu;epoch=2025-01-01T00:00:00+08:00").workerId(77)
                .build()) {
            UidGenerator uids = new FlakeryUidGenerator(generator);
            long first = uids.getUID();
            long second = uids.getUID();
            assertTrue(second > first);
            assertTrue(uids.parseUID(second).contains("\"workerId\":\"77\""), uids.parseUID(second));
        }
    }

    @Test
    void uidGeneratorRefusesALayoutOfOtherFields() {
        try (Generator twitter = Generator.builder().layout("twitter").datacenterId(1).workerId(1).build()) {
            FlakeryException e = assertThrows(FlakeryException.class, () -> new FlakeryUidGenerator(twitter));
            assertEquals("invalid_layout", e.code());
        }
    }

    private static long[] arguments(String call) {
        String[] parts = call.split(":");
        return Arrays.stream(parts, 1, parts.length).mapToLong(Long::parseLong).toArray();
    }

    /** Calls the IdService method that compat_routes.json's {@code vesta_api_call} names. */
    private static String callVesta(IdService service, String call) {
        long[] a = arguments(call);
        String method = call.split(":")[0];
        return switch (method) {
            case "genId" -> Long.toString(service.genId());
            case "expId" -> idJson(service.expId(a[0]));
            case "transTime" -> service.transTime(a[0]).toString();
            case "makeId2" -> Long.toString(service.makeId(a[0], a[1]));
            case "makeId3" -> Long.toString(service.makeId(a[0], a[1], a[2]));
            case "makeId4" -> Long.toString(service.makeId(a[0], a[1], a[2], a[3]));
            case "makeId5" -> Long.toString(service.makeId(a[0], a[1], a[2], a[3], a[4]));
            case "makeId6" -> Long.toString(service.makeId(a[0], a[1], a[2], a[3], a[4], a[5]));
            default -> throw new AssertionError("unknown call " + call);
        };
    }

    /** The {@code Id} as json-lib's {@code JSONObject.fromObject} wrote it (properties sorted). */
    private static String idJson(Id id) {
        return "{\"genMethod\":" + id.getGenMethod() + ",\"machine\":" + id.getMachine() + ",\"seq\":" + id.getSeq()
                + ",\"time\":" + id.getTime() + ",\"type\":" + id.getType() + ",\"version\":" + id.getVersion() + "}";
    }

    /** A generator as the vector's {@code server} arguments configure flakery serve. */
    private static Generator vestaGenerator(List<?> server) {
        Generator.Builder builder = Generator.builder();
        for (int i = 0; i < server.size(); i += 2) {
            String flag = (String) server.get(i);
            String value = (String) server.get(i + 1);
            switch (flag) {
                case "--layout" -> builder.layout(value);
                case "--worker-id" -> builder.workerId(Long.parseLong(value));
                case "--field" -> builder.field(value.split("=")[0], Long.parseLong(value.split("=")[1]));
                default -> throw new AssertionError("unknown flag " + flag);
            }
        }
        return builder.build();
    }

    @Test
    void idServiceAnswersAsVestasJavaApi() throws Throwable {
        List<String> checked = new ArrayList<>();
        for (Map<String, Object> v : list(file("compat_routes.json").get("vesta"))) {
            String call = (String) v.get("vesta_api_call");
            if (call == null) {
                continue; // a route with no Java API call (a REST-only answer)
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> flakery = (Map<String, Object>) v.get("flakery");
            try (FlakeryIdService service = new FlakeryIdService(vestaGenerator((List<?>) v.get("server")))) {
                inZone("UTC", () -> {
                    if (flakery.get("error_code") != null) {
                        FlakeryException e = assertThrows(FlakeryException.class, () -> callVesta(service, call),
                                call);
                        assertEquals(flakery.get("error_code"), e.code(), call);
                    } else if ("decimal".equals(flakery.get("shape"))) {
                        assertTrue(Long.parseLong(callVesta(service, call)) > 0, call);
                    } else {
                        assertTrue(((List<?>) flakery.get("same_as")).contains("vesta_api"), call);
                        assertEquals(v.get("vesta_api"), callVesta(service, call), call);
                    }
                });
            }
            checked.add(call.split(":")[0]);
        }
        assertTrue(checked.containsAll(
                List.of("genId", "expId", "transTime", "makeId2", "makeId3", "makeId5", "makeId6")), checked.toString());
        // Every vector with a Java API call was checked (11 recorded): none lost its call.
        assertEquals(11, checked.size(), checked.toString());
    }

    @Test
    void idServiceRefusesWhatVestaNeverStamps() {
        try (Generator minGranularity = Generator.builder().layout("vesta-min-granularity").workerId(5).build()) {
            FlakeryIdService service = new FlakeryIdService(minGranularity);
            long id = service.genId();
            Id parts = service.expId(id);
            assertEquals(1, parts.getType());
            assertEquals(5, parts.getMachine());
            assertEquals(id, service.makeId(parts.getTime(), parts.getSeq()));
            assertEquals("invalid_argument",
                    assertThrows(FlakeryException.class, () -> service.makeId(2, 0, 0, 1, 0, 5)).code());
            assertEquals("invalid_argument",
                    assertThrows(FlakeryException.class, () -> service.transTime(-1)).code());
        }
        try (Generator twitter = Generator.builder().layout("twitter").datacenterId(0).workerId(0).build()) {
            assertEquals("invalid_layout", assertThrows(FlakeryException.class, () -> new FlakeryIdService(twitter))
                    .code());
        }
        try (Generator wrongType = Generator.builder().layout("vesta-max-peak").field("type", 1).workerId(0).build()) {
            assertEquals("invalid_argument",
                    assertThrows(FlakeryException.class, () -> new FlakeryIdService(wrongType)).code());
        }
    }

    @Test
    void leafResultPrintsAsLeafs() throws Exception {
        List<Map<String, Object>> vectors = list(file("leaf_result.json").get("vectors"));
        assertEquals(4, vectors.size(), "the four vectors of Leaf's own Result.java");
        for (Map<String, Object> v : vectors) {
            Result result = v.get("status") == null ? new Result()
                    : new Result(Long.parseLong((String) v.get("id")), Status.valueOf((String) v.get("status")));
            assertEquals(v.get("toString"), result.toString());
        }
    }

    @Test
    void leafGetGivesIdsThenLeafsErrorNumber() {
        FlakeryIDGen leaf = new FlakeryIDGen(Generator.builder().layout(FlakeryIDGen.LEAF_LAYOUT).workerId(39).build());
        IDGen idGen = leaf;
        assertTrue(idGen.init());
        Result first = idGen.get("leaf-segment-test");
        Result second = idGen.get("any key");
        assertEquals(Status.SUCCESS, first.getStatus());
        assertTrue(second.getId() > first.getId());
        assertEquals(39, Layout.parse(FlakeryIDGen.LEAF_LAYOUT).decode(second.getId()).workerId());
        leaf.close();
        Result refused = idGen.get("leaf-segment-test");
        assertEquals(Status.EXCEPTION, refused.getStatus());
        assertEquals(-1, refused.getId());
        assertEquals("lease_lost", assertThrows(FlakeryException.class, leaf::nextId).code());
    }
}
