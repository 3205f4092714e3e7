package dev.flakery.hibernate;

import dev.flakery.Flakery;
import dev.flakery.Generator;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.util.EnumSet;
import org.hibernate.MappingException;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.generator.BeforeExecutionGenerator;
import org.hibernate.generator.EventType;
import org.hibernate.generator.EventTypeSets;
import org.hibernate.id.factory.spi.CustomIdGeneratorCreationContext;

/**
 * The generator behind {@link FlakeryId}: each insert's identifier is the
 * {@link Generator#nextId()} of the Hibernate setting {@value #GENERATOR_SETTING} (the Spring
 * Boot starter sets it to the application's {@code Generator} bean), else
 * {@link Flakery#nextId()}, the process-wide generator's. A refusal of the core (a lost lease, a clock stepped back) is a
 * {@link dev.flakery.FlakeryException} with its code, and the insert does not happen.
 */
public class FlakeryIdGenerator implements BeforeExecutionGenerator {
    /**
     * The Hibernate setting whose value, a {@link Generator} object, makes every
     * {@link FlakeryId} of the session factory (unset: the process-wide generator).
     */
    public static final String GENERATOR_SETTING = "dev.flakery.generator";

    /** The setting's generator, or null for the process-wide one. */
    private final Generator generator;

    /**
     * Made by Hibernate for an identifier marked {@link FlakeryId}.
     *
     * @param config the annotation
     * @param member the identifier's field or getter
     * @param context Hibernate's context
     * @throws MappingException when the identifier is not a {@code Long} or {@code long}, or
     *     the setting {@value #GENERATOR_SETTING} holds something else than a {@link Generator}
     */
    public FlakeryIdGenerator(FlakeryId config, Member member, CustomIdGeneratorCreationContext context) {
        Class<?> type = member instanceof Field field ? field.getType()
                : member instanceof Method method ? method.getReturnType() : null;
        if (type != Long.class && type != long.class) {
            throw new MappingException("@FlakeryId needs a Long or long identifier; "
                    + member.getDeclaringClass().getName() + "." + member.getName() + " is "
                    + (type == null ? "neither a field nor a getter" : type.getName()));
        }
        Object setting = context.getServiceRegistry().requireService(ConfigurationService.class).getSettings()
                .get(GENERATOR_SETTING);
        if (setting != null && !(setting instanceof Generator)) {
            throw new MappingException("the Hibernate setting " + GENERATOR_SETTING
                    + " must be a dev.flakery.Generator object, not a " + setting.getClass().getName());
        }
        this.generator = (Generator) setting;
    }

    @Override
    public Object generate(SharedSessionContractImplementor session, Object owner, Object currentValue,
            EventType eventType) {
        return generator != null ? generator.nextId() : Flakery.nextId();
    }

    @Override
    public EnumSet<EventType> getEventTypes() {
        return EventTypeSets.INSERT_ONLY;
    }
}
