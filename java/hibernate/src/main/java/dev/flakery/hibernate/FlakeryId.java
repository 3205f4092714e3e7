package dev.flakery.hibernate;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.hibernate.annotations.IdGeneratorType;

/**
 * The entity's {@code Long} (or {@code long}) identifier is a new flakery ID, made when
 * Hibernate inserts the entity by the Spring application's {@code Generator} bean where the
 * Spring Boot starter is present (or the {@code Generator} of the Hibernate setting
 * {@value FlakeryIdGenerator#GENERATOR_SETTING}), else by the process-wide generator
 * ({@link dev.flakery.Flakery#nextId()}, configured by the {@code FLAKERY_*} variables):
 *
 * <pre>{@code
 * @Entity
 * class Order {
 *     @Id @FlakeryId
 *     Long id;
 * }
 * }</pre>
 *
 * <p>The ID is made before the insert, so Hibernate batches inserts (no database round trip
 * per ID, unlike {@code IDENTITY}).
 */
@IdGeneratorType(FlakeryIdGenerator.class)
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface FlakeryId {}
