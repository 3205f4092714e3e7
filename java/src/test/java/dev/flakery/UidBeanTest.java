package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.flakery.compat.uid.CachedUidGenerator;
import dev.flakery.compat.uid.DefaultUidGenerator;
import dev.flakery.compat.uid.UidGenerator;
import dev.flakery.compat.uid.WorkerIdAssigner;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.xml.XmlBeanDefinitionReader;
import org.springframework.core.io.ByteArrayResource;

/**
 * uid-generator's bean shape (docs/java.md#uid-generator): {@link DefaultUidGenerator} and
 * {@link CachedUidGenerator} set up as uid-generator's are (a no-argument constructor, setters,
 * {@code afterPropertiesSet()}), by hand and by Spring from uid-generator's own README bean
 * definitions with the class name changed (CompatTest checks its parseUID against the vectors
 * uid-generator's code made).
 */
class UidBeanTest {
    /** An assigner of uid-generator's shape that is not flakery's interface, as its DisposableWorkerIdAssigner. */
    public static final class BaiduShapedAssigner {
        /**
         * As uid-generator's.
         *
         * @return worker 4, the README's
         */
        public long assignWorkerId() {
            return 4;
        }
    }

    /** uid-generator's README (Quick Start, step 3), the class names alone changed. */
    private static final String README_BEANS = """
            <?xml version="1.0" encoding="UTF-8"?>
            <beans xmlns="http://www.springframework.org/schema/beans"
                   xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                   xsi:schemaLocation="http://www.springframework.org/schema/beans
                   http://www.springframework.org/schema/beans/spring-beans.xsd">
            <bean id="defaultUidGenerator" class="dev.flakery.compat.uid.DefaultUidGenerator" lazy-init="false">
                <property name="workerIdAssigner" ref="disposableWorkerIdAssigner"/>
                <property name="timeBits" value="29"/>
                <property name="workerBits" value="21"/>
                <property name="seqBits" value="13"/>
                <property name="epochStr" value="2016-09-20"/>
            </bean>
            <bean id="cachedUidGenerator" class="dev.flakery.compat.uid.CachedUidGenerator">
                <property name="workerIdAssigner" ref="disposableWorkerIdAssigner" />
                <property name="timeBits" value="29"/>
                <property name="workerBits" value="21"/>
                <property name="seqBits" value="13"/>
                <property name="epochStr" value="2016-09-20"/>
                <property name="boostPower" value="3"></property>
                <property name="paddingFactor" value="50"></property>
                <property name="scheduleInterval" value="60"></property>
            </bean>
            <bean id="disposableWorkerIdAssigner" class="dev.flakery.UidBeanTest$BaiduShapedAssigner" />
            </beans>
            """;

    private static DefaultListableBeanFactory beans(String xml) {
        DefaultListableBeanFactory factory = new DefaultListableBeanFactory();
        new XmlBeanDefinitionReader(factory).loadBeanDefinitions(new ByteArrayResource(xml.getBytes(StandardCharsets.UTF_8)));
        return factory;
    }

    private static DefaultUidGenerator made(int timeBits, int workerBits, int seqBits, String epochStr, long worker) {
        DefaultUidGenerator uids = new DefaultUidGenerator();
        uids.setTimeBits(timeBits);
        uids.setWorkerBits(workerBits);
        uids.setSeqBits(seqBits);
        uids.setEpochStr(epochStr);
        uids.setWorkerIdAssigner((WorkerIdAssigner) () -> worker);
        return uids;
    }

    @Test
    void readmeBeansWithTheClassNameChangedMakeAndParseTheReadmesIds() throws Throwable {
        CompatTest.inZone("Asia/Shanghai", () -> {
            DefaultListableBeanFactory factory = beans(README_BEANS);
            factory.preInstantiateSingletons();
            for (String name : List.of("defaultUidGenerator", "cachedUidGenerator")) {
                UidGenerator uids = factory.getBean(name, UidGenerator.class);
                // The README's ID and what its parseUID printed (tests/vectors/decode.json).
                assertEquals("{\"UID\":\"180363646902239241\",\"timestamp\":\"2017-01-19 12:15:46\",\"workerId\":\"4\","
                        + "\"sequence\":\"9\"}", uids.parseUID(180363646902239241L));
                long uid = uids.getUID();
                assertTrue(uids.parseUID(uid).contains("\"workerId\":\"4\""), uids.parseUID(uid));
            }
            UidGenerator uids = factory.getBean("defaultUidGenerator", UidGenerator.class);
            factory.destroySingletons(); // DisposableBean: the generator is closed
            assertEquals("lease_lost", assertThrows(FlakeryException.class, uids::getUID).code());
        });
    }

    @Test
    void getUidIncreasesAndParsesToItsBitsAcrossThreads() throws Exception {
        // 31/12/20: a million IDs a second, so that the threads never wait for the next second.
        DefaultUidGenerator uids = made(31, 12, 20, "2025-01-01", 3000);
        uids.afterPropertiesSet();
        List<List<Long>> taken = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            List<Long> ids = new ArrayList<>();
            taken.add(ids);
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 25_000; i++) {
                    ids.add(uids.getUID());
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        Set<Long> all = new HashSet<>();
        for (List<Long> ids : taken) {
            for (int i = 1; i < ids.size(); i++) {
                assertTrue(ids.get(i) > ids.get(i - 1), "a thread's IDs increase");
            }
            all.addAll(ids);
        }
        assertEquals(100_000, all.size(), "no duplicate across threads");
        // parseUID: the fields as uid-generator's bits say (sign, 31 s, 12 worker, 20 sequence).
        long epochSeconds = java.time.LocalDate.parse("2025-01-01").atStartOfDay(ZoneId.systemDefault()).toEpochSecond();
        DateTimeFormatter format = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.systemDefault());
        for (long uid : List.of(taken.get(0).get(0), taken.get(3).get(24_999))) {
            String time = format.format(Instant.ofEpochSecond(epochSeconds + (uid >>> 32)));
            assertEquals("{\"UID\":\"" + uid + "\",\"timestamp\":\"" + time + "\",\"workerId\":\"3000\",\"sequence\":\""
                    + (uid & 0xFFFFF) + "\"}", uids.parseUID(uid));
        }
        uids.close();
    }

    @Test
    void badSettingsAreRefusedWithTheirReason() {
        DefaultUidGenerator uids = new DefaultUidGenerator();
        for (Executable bad : List.<Executable>of(() -> uids.setTimeBits(0), () -> uids.setWorkerBits(-1),
                () -> uids.setSeqBits(0))) {
            FlakeryException e = assertThrows(FlakeryException.class, bad);
            assertEquals("invalid_argument", e.code());
            assertTrue(e.getMessage().contains("must be a positive number of bits"), e.getMessage());
        }
        FlakeryException epoch = assertThrows(FlakeryException.class, () -> uids.setEpochStr("2016/05/20"));
        assertTrue(epoch.getMessage().contains("yyyy-MM-dd, not '2016/05/20'"), epoch.getMessage());
        assertThrows(FlakeryException.class, () -> uids.setEpochStr(null));
        FlakeryException notAnAssigner = assertThrows(FlakeryException.class, () -> uids.setWorkerIdAssigner("7"));
        assertTrue(notAnAssigner.getMessage().contains("not java.lang.String"), notAnAssigner.getMessage());

        FlakeryException before = assertThrows(FlakeryException.class, uids::getUID);
        assertTrue(before.getMessage().contains("call afterPropertiesSet()"), before.getMessage());
        FlakeryException noAssigner = assertThrows(FlakeryException.class, uids::afterPropertiesSet);
        assertTrue(noAssigner.getMessage().contains("workerIdAssigner is not set"), noAssigner.getMessage());

        DefaultUidGenerator wide = made(28, 22, 14, "2025-01-01", 1);
        FlakeryException bits = assertThrows(FlakeryException.class, wide::afterPropertiesSet);
        assertEquals("invalid_argument", bits.code());
        assertTrue(bits.getMessage().contains("make 65 bits, not uid-generator's 64"), bits.getMessage());

        DefaultUidGenerator past = made(29, 21, 13, "2025-01-01", 1L << 21);
        FlakeryException worker = assertThrows(FlakeryException.class, past::afterPropertiesSet);
        assertEquals("invalid_argument", worker.code());
        assertTrue(worker.getMessage().contains("2097152"), worker.getMessage());

        DefaultUidGenerator ready = made(29, 21, 13, "2025-01-01", 5);
        ready.afterPropertiesSet();
        FlakeryException late = assertThrows(FlakeryException.class, () -> ready.setSeqBits(12));
        assertTrue(late.getMessage().contains("set up already"), late.getMessage());
        assertThrows(FlakeryException.class, ready::afterPropertiesSet);
        ready.close();
    }

    @Test
    void uidGeneratorsDefaultsRanOutAsTheyDid() {
        // 28 time bits from 2016-05-20 ran out on 2024-11-20: uid-generator threw "Timestamp bits
        // is exhausted" from getUID; so does this, with the code time_exhausted.
        DefaultUidGenerator uids = new DefaultUidGenerator();
        uids.setWorkerIdAssigner(new BaiduShapedAssigner());
        uids.afterPropertiesSet();
        assertEquals("time_exhausted", assertThrows(FlakeryException.class, uids::getUID).code());
        uids.close();
    }

    @Test
    void cachedUidGeneratorChecksItsBufferSettingsAsUidGeneratorDid() {
        CachedUidGenerator uids = new CachedUidGenerator();
        assertEquals("invalid_argument", assertThrows(FlakeryException.class, () -> uids.setBoostPower(0)).code());
        assertThrows(FlakeryException.class, () -> uids.setPaddingFactor(100));
        assertThrows(FlakeryException.class, () -> uids.setScheduleInterval(0));
        // A bad bean stops the context's start, with the reason.
        BeanCreationException e = assertThrows(BeanCreationException.class, () -> beans(README_BEANS.replace(
                "name=\"seqBits\" value=\"13\"/>", "name=\"seqBits\" value=\"12\"/>")).preInstantiateSingletons());
        assertTrue(e.getMostSpecificCause().getMessage().contains("make 63 bits"), e.getMostSpecificCause().getMessage());
    }
}
