package dev.flakery.spring;

import dev.flakery.Generator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@link Generator} bean made of the {@code flakery.*} properties (unless the application
 * defines its own), closed with the context (its lease released), and the health of its lease
 * as {@code flakery} on the actuator's health endpoint where the actuator is present.
 */
@AutoConfiguration
@EnableConfigurationProperties(FlakeryProperties.class)
public class FlakeryAutoConfiguration {
    /** Made by Spring. */
    public FlakeryAutoConfiguration() {}

    /**
     * The generator. A configuration flakery refuses stops the application's start with the
     * {@link dev.flakery.FlakeryException} and its code.
     *
     * @param properties the {@code flakery.*} properties
     * @return the generator
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Generator flakeryGenerator(FlakeryProperties properties) {
        return properties.builder().build();
    }

    /**
     * Where flakery's Hibernate generator is on the class path: {@code @FlakeryId} takes its
     * IDs from the context's {@link Generator} (the application's own, else the one of the
     * {@code flakery.*} properties), not from the process-wide one.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"dev.flakery.hibernate.FlakeryIdGenerator",
            "org.springframework.boot.autoconfigure.orm.jpa.HibernatePropertiesCustomizer"})
    static class Hibernate {
        @Bean
        org.springframework.boot.autoconfigure.orm.jpa.HibernatePropertiesCustomizer flakeryIdGeneratorSetting(
                Generator generator) {
            return settings -> settings.put(dev.flakery.hibernate.FlakeryIdGenerator.GENERATOR_SETTING, generator);
        }
    }

    /** The lease's health, only where the actuator is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
    static class Health {
        @Bean
        @ConditionalOnMissingBean(name = "flakeryHealthIndicator")
        FlakeryHealthIndicator flakeryHealthIndicator(Generator generator) {
            return new FlakeryHealthIndicator(generator);
        }
    }
}
