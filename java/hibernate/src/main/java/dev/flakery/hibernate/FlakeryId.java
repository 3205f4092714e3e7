package dev.flakery.hibernate;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.hibernate.annotations.IdGeneratorType;

/**
 * The entity's {@code Long} (or {@code long}) identifier is a new flakery ID, made by the
 * process-wide generator ({@link dev.flakery.Flakery#nextId()}, configured by the
 * {@code FLAKERY_*} variables) when Hibernate inserts the entity:
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
