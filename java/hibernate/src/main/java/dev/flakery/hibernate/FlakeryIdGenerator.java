package dev.flakery.hibernate;

import dev.flakery.Flakery;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.util.EnumSet;
import org.hibernate.MappingException;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.generator.BeforeExecutionGenerator;
import org.hibernate.generator.EventType;
import org.hibernate.generator.EventTypeSets;
import org.hibernate.id.factory.spi.CustomIdGeneratorCreationContext;

/**
 * The generator behind {@link FlakeryId}: each insert's identifier is
 * {@link Flakery#nextId()}. A refusal of the core (a lost lease, a clock stepped back) is a
 * {@link dev.flakery.FlakeryException} with its code, and the insert does not happen.
 */
public class FlakeryIdGenerator implements BeforeExecutionGenerator {
    /**
     * Made by Hibernate for an identifier marked {@link FlakeryId}.
     *
     * @param config the annotation
     * @param member the identifier's field or getter
     * @param context Hibernate's context
     * @throws MappingException when the identifier is not a {@code Long} or {@code long}
     */
    public FlakeryIdGenerator(FlakeryId config, Member member, CustomIdGeneratorCreationContext context) {
        Class<?> type = member instanceof Field field ? field.getType()
                : member instanceof Method method ? method.getReturnType() : null;
        if (type != Long.class && type != long.class) {
            throw new MappingException("@FlakeryId needs a Long or long identifier; "
                    + member.getDeclaringClass().getName() + "." + member.getName() + " is "
                    + (type == null ? "neither a field nor a getter" : type.getName()));
        }
    }

    @Override
    public Object generate(SharedSessionContractImplementor session, Object owner, Object currentValue,
            EventType eventType) {
        return Flakery.nextId();
    }

    @Override
    public EnumSet<EventType> getEventTypes() {
        return EventTypeSets.INSERT_ONLY;
    }
}
