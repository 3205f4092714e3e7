package dev.flakery.jpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.flakery.DecodedId;
import dev.flakery.Generator;
import dev.flakery.hibernate.FlakeryId;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * {@code @FlakeryId} in a Spring Boot application with JPA (Hibernate, an in-memory H2): the
 * IDs come from the context's {@link Generator}, the application's own bean where it has one,
 * else the starter's of the {@code flakery.*} properties; never from the process-wide
 * generator (whose node comes from a host lease in the tests' FLAKERY_LEASE_DIR).
 */
class FlakeryIdTest {
    /** An entity as a user writes one. */
    @Entity(name = "orders")
    public static class Order {
        @Id
        @FlakeryId
        Long id;

        String item;
    }

    // Applications without a component scan (which would find each other); their package, a
    // sibling of the starter's tests, holds the entity.

    /** An application with JPA and the starter, and no Generator bean of its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    /** The same, with a Generator bean of its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class AppWithItsGenerator {
        @Bean(destroyMethod = "close")
        Generator ordersGenerator() {
            return Generator.builder().layout("twitter").datacenterId(31).workerId(30).build();
        }
    }

    private static ConfigurableApplicationContext start(Class<?> app, String... properties) {
        return new SpringApplicationBuilder(app).web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off", "spring.main.log-startup-info=false",
                        "spring.datasource.url=jdbc:h2:mem:" + app.getSimpleName(),
                        "spring.jpa.hibernate.ddl-auto=create-drop", "spring.jpa.open-in-view=false")
                .properties(properties).run();
    }

    /** Persists two orders; returns their IDs, decoded by the context's generator. */
    private static DecodedId[] persistTwo(ConfigurableApplicationContext context) {
        EntityManagerFactory factory = context.getBean(EntityManagerFactory.class);
        Generator generator = context.getBean(Generator.class);
        long before = generator.nextId();
        EntityManager em = factory.createEntityManager();
        Order first = new Order();
        Order second = new Order();
        try {
            em.getTransaction().begin();
            first.item = "tea";
            second.item = "milk";
            em.persist(first);
            em.persist(second);
            em.getTransaction().commit();
            em.clear();
            assertEquals("tea", em.find(Order.class, first.id).item);
        } finally {
            em.close();
        }
        // Issued by this very generator: after the ID it gave before, in order.
        assertTrue(before < first.id && first.id < second.id, before + ", " + first.id + ", " + second.id);
        return new DecodedId[] {generator.decode(first.id), generator.decode(second.id)};
    }

    @Test
    void theApplicationsOwnGeneratorMakesTheIds() {
        try (ConfigurableApplicationContext context = start(AppWithItsGenerator.class)) {
            for (DecodedId id : persistTwo(context)) {
                assertEquals(31, id.datacenterId());
                assertEquals(30, id.workerId());
            }
        }
    }

    @Test
    void elseTheGeneratorOfTheFlakeryProperties() {
        try (ConfigurableApplicationContext context = start(App.class, "flakery.layout=instagram",
                "flakery.worker-id=4242")) {
            for (DecodedId id : persistTwo(context)) {
                assertEquals(4242, id.workerId());
            }
        }
    }
}
