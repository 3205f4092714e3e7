package dev.flakery.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.flakery.Flakery;
import dev.flakery.FlakeryException;
import dev.flakery.Generator;
import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.HealthComponent;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.context.ConfigurableApplicationContext;

class FlakeryAutoConfigurationTest {
    /** An application as a user writes one: the starter on its class path, nothing else. */
    @SpringBootApplication
    static class App {}

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(App.class).web(org.springframework.boot.WebApplicationType.NONE)
                .properties("management.endpoint.health.show-details=always", "spring.main.banner-mode=off",
                        "spring.main.log-startup-info=false",
                        // No database here: JPA and H2 are on the test class path for FlakeryIdTest.
                        "spring.autoconfigure.exclude=org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration")
                .properties(properties).run();
    }

    @Test
    void propertiesHaveOnePropertyPerOptionOfTheCoresTable() throws Exception {
        Set<String> properties = new TreeSet<>();
        for (PropertyDescriptor p : Introspector.getBeanInfo(FlakeryProperties.class, Object.class)
                .getPropertyDescriptors()) {
            if (p.getWriteMethod() != null) {
                properties.add(p.getName());
            }
        }
        assertEquals(new TreeSet<>(Flakery.optionNames()), properties);
    }

    @Test
    void anApplicationGetsTheGeneratorOfItsPropertiesAndItsLeaseHealth() {
        Generator generator;
        try (ConfigurableApplicationContext context = start("flakery.layout=vesta-max-peak", "flakery.worker-id=1022",
                "flakery.fields.method=2", "flakery.sequence-policy=borrow")) {
            generator = context.getBean(Generator.class);
            long id = generator.nextId();
            assertEquals(1022, generator.decode(id).workerId());
            assertEquals(2, generator.decode(id).fields().get("method"));
            assertEquals("vesta-max-peak", generator.layout().toString());
            HealthEndpoint health = context.getBean(HealthEndpoint.class);
            HealthComponent flakery = health.healthForPath("flakery");
            assertEquals(Status.UP, flakery.getStatus());
            assertEquals("held", ((org.springframework.boot.actuate.health.Health) flakery).getDetails().get("lease"));
            generator.close();
            assertEquals(Status.DOWN, health.healthForPath("flakery").getStatus());
        }
    }

    @Test
    void theContextClosesTheGenerator() {
        Generator generator;
        try (ConfigurableApplicationContext context = start("flakery.worker-id=4", "flakery.datacenter-id=2")) {
            generator = context.getBean(Generator.class);
            generator.nextId();
        }
        FlakeryException e = org.junit.jupiter.api.Assertions.assertThrows(FlakeryException.class, generator::nextId);
        assertEquals("lease_lost", e.code());
    }

    @Test
    void aRefusedConfigurationStopsTheStartWithItsCode() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FlakeryAutoConfiguration.class))
                .withPropertyValues("flakery.layout=twitter", "flakery.worker-id=32", "flakery.datacenter-id=0")
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    while (failure != null && !(failure instanceof FlakeryException)) {
                        failure = failure.getCause();
                    }
                    FlakeryException e = assertInstanceOf(FlakeryException.class, failure);
                    assertEquals("invalid_argument", e.code());
                    assertTrue(e.getMessage().contains("workerId"), e.getMessage());
                });
    }

    @Test
    void anApplicationsOwnGeneratorWins() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FlakeryAutoConfiguration.class))
                .withBean(Generator.class, () -> Generator.builder().workerId(9).datacenterId(0).build())
                .withPropertyValues("flakery.worker-id=1")
                .run(context -> assertEquals(9, context.getBean(Generator.class).workerId()));
    }
}
