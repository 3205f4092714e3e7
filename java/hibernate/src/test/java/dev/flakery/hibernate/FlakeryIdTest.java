package dev.flakery.hibernate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.flakery.Generator;
import dev.flakery.Layout;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code @FlakeryId} entities persisted to a real PostgreSQL. */
class FlakeryIdTest {
    /** An entity as a user writes one. */
    @Entity
    @Table(name = "orders")
    static class Order {
        @Id
        @FlakeryId
        Long id;

        String item;

        Order() {}

        Order(String item) {
            this.item = item;
        }
    }

    /** A mistake: a String identifier. */
    @Entity
    static class Misnamed {
        @Id
        @FlakeryId
        String id;
    }

    private static PostgresServer db;

    @BeforeAll
    static void startDatabase() throws Exception {
        db = PostgresServer.start();
    }

    @AfterAll
    static void stopDatabase() throws Exception {
        if (db != null) {
            db.stop();
        }
    }

    private static Configuration configuration(Class<?> entity) {
        return new Configuration().addAnnotatedClass(entity)
                .setProperty("hibernate.connection.url", db.jdbcUrl)
                .setProperty("hibernate.connection.username", "flakery")
                .setProperty("hibernate.connection.password", db.password)
                .setProperty("hibernate.hbm2ddl.auto", "create-drop")
                .setProperty("hibernate.connection.pool_size", "4");
    }

    @Test
    void entitiesArePersistedWithNewIncreasingIds() throws Exception {
        long before = System.currentTimeMillis();
        try (SessionFactory sessions = configuration(Order.class).buildSessionFactory()) {
            Order first = new Order("first");
            sessions.inTransaction(session -> session.persist(first));
            Order second = new Order("second");
            sessions.inTransaction(session -> session.persist(second));
            assertTrue(second.id > first.id, first.id + " then " + second.id);
            // The process-wide generator's layout (FLAKERY_LAYOUT, else twitter) dates the ID.
            Layout layout = Layout.parse(System.getenv().getOrDefault("FLAKERY_LAYOUT", "twitter"));
            assertTrue(layout.decode(first.id).timestampMs() >= before - layout.unitMs());

            // Many threads, many sessions: every row its own ID (the primary key would refuse a
            // duplicate; the count says none was lost).
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<Long>> futures = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                int n = i;
                futures.add(pool.submit(() -> sessions.fromTransaction(session -> {
                    Order order = new Order("order " + n);
                    session.persist(order);
                    return order.id;
                })));
            }
            Set<Long> ids = new HashSet<>();
            for (Future<Long> future : futures) {
                ids.add(future.get());
            }
            pool.shutdown();
            assertEquals(200, ids.size());
            Long rows = sessions.fromTransaction(session -> session
                    .createNativeQuery("SELECT count(DISTINCT id) FROM orders", Long.class).getSingleResult());
            assertEquals(202, rows);
            Long stored = sessions.fromTransaction(session -> session
                    .createNativeQuery("SELECT id FROM orders WHERE item = 'second'", Long.class).getSingleResult());
            assertEquals(second.id, stored);
        }
    }

    @Test
    void theGeneratorOfTheSettingMakesTheIds() {
        try (Generator generator = Generator.builder().layout("twitter").datacenterId(29).workerId(28).build()) {
            Configuration configuration = configuration(Order.class);
            configuration.getProperties().put(FlakeryIdGenerator.GENERATOR_SETTING, generator);
            try (SessionFactory sessions = configuration.buildSessionFactory()) {
                Order order = new Order("setting");
                sessions.inTransaction(session -> session.persist(order));
                assertEquals(29, generator.decode(order.id).datacenterId());
                assertEquals(28, generator.decode(order.id).workerId());
            }
        }
        Configuration wrong = configuration(Order.class);
        wrong.getProperties().put(FlakeryIdGenerator.GENERATOR_SETTING, "twitter");
        Exception e = assertThrows(Exception.class, () -> wrong.buildSessionFactory().close());
        assertTrue(causes(e).contains("must be a dev.flakery.Generator object, not a java.lang.String"), causes(e));
    }

    private static String causes(Throwable e) {
        StringBuilder messages = new StringBuilder();
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            messages.append(cause.getMessage()).append(" / ");
        }
        return messages.toString();
    }

    @Test
    void aNonLongIdentifierIsRefusedAtStart() {
        Exception e = assertThrows(Exception.class, () -> configuration(Misnamed.class).buildSessionFactory().close());
        assertTrue(causes(e).contains("@FlakeryId needs a Long"), causes(e));
    }
}
